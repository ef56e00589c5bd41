"""Data: the DataLoader, the embedded digits and Shakespeare text, MNIST/CIFAR-10 readers.

>>> import autograd
>>> images, labels = autograd.data.load_digits("train")
>>> loader = autograd.data.DataLoader(images, labels, batch_size=64, shuffle=True, seed=0)
>>> x, y = next(iter(loader))
>>> len(loader), x.shape, y.dtype
(23, (64, 1, 8, 8), dtype('int64'))
"""
from .loader import DataLoader
from .digits import load_digits, DIGITS_PATH
from .readers import load_mnist, load_cifar10
from .shakespeare import (load_shakespeare, load_shakespeare_text, CharVocabulary,
                          random_windows, SHAKESPEARE_PATH)

__all__ = ["DataLoader", "load_digits", "DIGITS_PATH", "load_mnist", "load_cifar10",
           "load_shakespeare", "load_shakespeare_text", "CharVocabulary", "random_windows",
           "SHAKESPEARE_PATH"]
