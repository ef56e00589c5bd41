"""Conveniences around training: ``SummaryWriter`` for TensorBoard.

Importing this package imports nothing optional: ``tensorboard`` is loaded when a
``SummaryWriter`` is created (``pip install -e ".[interop]"``).
"""
from .tensorboard import SummaryWriter

__all__ = ["SummaryWriter"]
