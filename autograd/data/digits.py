"""The embedded dataset: 1,797 handwritten digits as 8x8 images, shipped inside the package.

The data is the UCI optical recognition of handwritten digits set (Alpaydin & Kaynak, 1998,
CC BY 4.0) as scikit-learn redistributes it; see DIGITS_LICENSE.txt beside this file for the
source, licences and how ``digits.npz`` was made.

>>> images, labels = load_digits("test")
>>> images.shape, images.dtype, labels.shape, labels.dtype
((360, 1, 8, 8), dtype('float32'), (360,), dtype('int64'))
"""
from __future__ import annotations

import os

import numpy as np

__all__ = ["load_digits", "DIGITS_PATH"]

DIGITS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "digits.npz")
"""Where the embedded archive lives: images uint8 (1797, 8, 8), labels uint8, is_test bool."""

_SPLITS = ("train", "test", "all")


def load_digits(split: str = "train",
                normalize: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The embedded 8x8 digits: ``(images, labels)`` for ``split`` "train", "test" or "all".

    ``images`` is float32 of shape (N, 1, 8, 8) (NCHW, one channel), scaled to [0, 1] when
    ``normalize`` is true, else the raw pixel counts 0..16; ``labels`` is int64 in 0..9.
    The split is fixed and stored in the archive: "test" is 36 images of each digit (360),
    "train" the other 1,437, disjoint; both keep the archive's order. Each call returns new
    arrays.

    >>> images, labels = load_digits("train")
    >>> len(images), float(images.min()), float(images.max()), np.bincount(labels).tolist()[:3]
    (1437, 0.0, 1.0, [142, 146, 141])
    """
    if split not in _SPLITS:
        raise ValueError(f"load_digits: split must be one of {_SPLITS}, got {split!r}")
    with np.load(DIGITS_PATH, allow_pickle=False) as archive:
        images, labels, is_test = archive["images"], archive["labels"], archive["is_test"]
    if split != "all":
        keep = is_test if split == "test" else ~is_test
        images, labels = images[keep], labels[keep]
    images = images.astype(np.float32)[:, None, :, :]
    if normalize:
        images /= np.float32(16.0)
    return images, labels.astype(np.int64)
