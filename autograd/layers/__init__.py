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
from .summary import summary

__all__ = ["Layer", "Linear", "Embedding", "Flatten", "Sequential", "ReLU", "Sigmoid", "Tanh",
           "Softmax", "Dropout", "Conv2d", "MaxPool2d", "AvgPool2d", "GlobalAvgPool2d",
           "BatchNorm2d", "BatchNorm1d", "LayerNorm", "RNN", "LSTM", "GRU", "summary"]
