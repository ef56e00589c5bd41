"""Layers: the Layer base (parameters, buffers, train/eval, state_dict) and the built-in layers.

Everything listed here is exported from ``autograd`` itself (``autograd.Linear``, ...). The
initialisation schemes live in :mod:`autograd.layers.init`.
"""
from .base import Layer
from .linear import Linear, Embedding, Flatten
from .container import Sequential
from .activation import ReLU, Sigmoid, Tanh, Softmax, Dropout
from .conv import Conv2d, MaxPool2d, AvgPool2d, GlobalAvgPool2d
from .normalization import BatchNorm2d, BatchNorm1d, LayerNorm
from .recurrent import RNN, LSTM, GRU
from .conv1d import Conv1d, MaxPool1d, AvgPool1d
from .singa import Gemm, SeparableConv2d, Pooling2d, SoftMax
from .combine import Add, Cat, Reshape
from .loss import SoftMaxCrossEntropy, MeanSquareError, CrossEntropy, BinaryCrossEntropy
from .summary import summary
from .attention import (MultiHeadAttention, TransformerBlock, TransformerEncoderLayer,
                        PositionalEmbedding)

__all__ = ["Layer", "Linear", "Embedding", "Flatten", "Sequential", "ReLU", "Sigmoid", "Tanh",
           "Softmax", "Dropout", "Conv2d", "MaxPool2d", "AvgPool2d", "GlobalAvgPool2d",
           "BatchNorm2d", "BatchNorm1d", "LayerNorm", "RNN", "LSTM", "GRU", "Conv1d", "MaxPool1d",
           "AvgPool1d", "Gemm", "SeparableConv2d", "Pooling2d", "SoftMax", "Add", "Cat",
           "Reshape", "SoftMaxCrossEntropy", "MeanSquareError", "CrossEntropy",
           "BinaryCrossEntropy", "summary", "MultiHeadAttention", "TransformerBlock",
           "TransformerEncoderLayer", "PositionalEmbedding"]
