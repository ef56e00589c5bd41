"""Checkpoints: atomic, pickle-free save and load of a model, its optimizer and extras.

>>> import os, tempfile, numpy as np, autograd
>>> path = os.path.join(tempfile.mkdtemp(), "model.ckpt")
>>> autograd.io.save(path, model={"b": np.arange(3.0)}, step=10)
>>> state = {"b": np.zeros(3)}
>>> autograd.io.load(path, model=state), state["b"].tolist()
({'step': 10}, [0.0, 1.0, 2.0])
"""
from .checkpoint import save, load, read, CheckpointError
from .safetensors_weights import save_safetensors, load_safetensors

__all__ = ["save", "load", "read", "CheckpointError", "save_safetensors", "load_safetensors"]
