"""Readers for the image datasets a user downloads: MNIST-style IDX files and CIFAR-10 binaries.

Both return ``(images, labels)``: float32 images in NCHW layout scaled to [0, 1], int64 labels.
Nothing is downloaded; point them at the folder holding the files. A missing file is a
FileNotFoundError and a corrupt one (bad magic number, wrong sizes, truncated, bad gzip) a
ValueError; both name the path.
"""
import gzip
import os
import zlib

import numpy as np

__all__ = ["load_mnist", "load_cifar10"]

_MNIST_PREFIX = {"train": "train", "test": "t10k"}
_IDX_UBYTE = 0x08                  # the IDX type code of unsigned bytes, the only one MNIST uses
_CIFAR_RECORD = 1 + 3 * 32 * 32    # one label byte, then the red, green and blue 32x32 planes
_CIFAR_FILES = {"train": [f"data_batch_{i}.bin" for i in range(1, 6)], "test": ["test_batch.bin"]}
_CIFAR_CLASSES = 10


def load_mnist(directory, split="train"):
    """MNIST or Fashion-MNIST from the IDX files in ``directory``, raw or gzipped.

    Reads ``train-images-idx3-ubyte`` and ``train-labels-idx1-ubyte`` for ``split="train"``,
    ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte`` for ``"test"``; each may end in
    ``.gz``, and the spelling ``train-images.idx3-ubyte`` is accepted too. Returns images float32
    (N, 1, rows, cols) in [0, 1] and labels int64 (N,).
    """
    prefix = _split_key(_MNIST_PREFIX, split, "load_mnist")
    images_path = _find_idx_file(directory, prefix, "images", "idx3")
    labels_path = _find_idx_file(directory, prefix, "labels", "idx1")
    images = _read_idx(images_path, ndim=3)
    labels = _read_idx(labels_path, ndim=1)
    if len(images) != len(labels):
        raise ValueError(f"load_mnist: {images_path} holds {len(images)} images but "
                         f"{labels_path} holds {len(labels)} labels")
    images = images[:, None, :, :].astype(np.float32)
    images /= np.float32(255.0)
    return images, labels.astype(np.int64)


def load_cifar10(directory, split="train"):
    """CIFAR-10 from its binary version (``cifar-10-binary.tar.gz``, extracted) in ``directory``.

    Reads ``data_batch_1.bin`` .. ``data_batch_5.bin`` (all five) for ``split="train"`` and
    ``test_batch.bin`` for ``"test"``, from ``directory`` or from its ``cifar-10-batches-bin``
    folder. Each record is one label byte (0..9) and 3,072 pixel bytes (red, green, blue planes
    of 32x32, row-major). Returns images float32 (N, 3, 32, 32) in [0, 1] and labels int64 (N,).
    """
    names = _split_key(_CIFAR_FILES, split, "load_cifar10")
    nested = os.path.join(directory, "cifar-10-batches-bin")
    if not os.path.exists(os.path.join(directory, names[0])) and os.path.isdir(nested):
        directory = nested
    images, labels = [], []
    for name in names:
        path = os.path.join(directory, name)
        records = _read_cifar_file(path)
        labels.append(records[:, 0])
        images.append(records[:, 1:])
    labels = np.concatenate(labels).astype(np.int64)
    images = np.concatenate(images).reshape(-1, 3, 32, 32).astype(np.float32)
    images /= np.float32(255.0)
    return images, labels


def _split_key(table, split, caller):
    if split not in table:
        raise ValueError(f"{caller}: split must be one of {tuple(table)}, got {split!r}")
    return table[split]


def _find_idx_file(directory, prefix, kind, idx_type):
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"load_mnist: no such directory: {directory}")
    candidates = []
    for separator in ("-", "."):
        name = f"{prefix}-{kind}{separator}{idx_type}-ubyte"
        for suffix in ("", ".gz"):
            path = os.path.join(directory, name + suffix)
            if os.path.isfile(path):
                return path
            candidates.append(path)
    raise FileNotFoundError(f"load_mnist: no {prefix} {kind} file in {directory}: looked for "
                            f"{candidates[0]} or {candidates[1]}")


def _read_file(path, caller):
    """The bytes of ``path``, gunzipped when it ends in .gz; errors name the path."""
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as stream:
                return stream.read()
        with open(path, "rb") as stream:
            return stream.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"{caller}: no such file: {path}") from None
    except (OSError, EOFError, zlib.error) as error:   # gzip's BadGzipFile is an OSError
        raise ValueError(f"{caller}: {path} is not a readable gzip file ({error})") from error


def _read_idx(path, ndim):
    """An IDX file of unsigned bytes with ``ndim`` dimensions, as a uint8 array, checked."""
    content = _read_file(path, "load_mnist")
    header_size = 4 + 4 * ndim
    if len(content) < header_size:
        raise ValueError(f"load_mnist: {path} is truncated: {len(content)} bytes, shorter than "
                         f"the {header_size}-byte IDX header")
    magic = bytes(content[:4])
    expected = bytes([0, 0, _IDX_UBYTE, ndim])
    if magic != expected:
        raise ValueError(f"load_mnist: {path} has magic number 0x{magic.hex()}, expected "
                         f"0x{expected.hex()} (an IDX file of unsigned bytes with {ndim} "
                         f"dimension{'s' if ndim > 1 else ''})")
    shape = tuple(int(d) for d in np.frombuffer(content, ">u4", count=ndim, offset=4))
    expected_size = header_size + int(np.prod(shape, dtype=np.int64))
    if len(content) != expected_size:
        state = "truncated" if len(content) < expected_size else "too long"
        raise ValueError(f"load_mnist: {path} is {state}: its header gives shape {shape}, "
                         f"{expected_size} bytes, but the file has {len(content)}")
    return np.frombuffer(content, np.uint8, offset=header_size).reshape(shape)


def _read_cifar_file(path):
    """The records of one CIFAR-10 binary batch as a uint8 array (N, 3073), checked."""
    content = _read_file(path, "load_cifar10")
    if len(content) == 0 or len(content) % _CIFAR_RECORD:
        raise ValueError(f"load_cifar10: {path} has {len(content)} bytes, not a positive "
                         f"multiple of the {_CIFAR_RECORD}-byte record: truncated or not a "
                         "CIFAR-10 binary batch")
    records = np.frombuffer(content, np.uint8).reshape(-1, _CIFAR_RECORD)
    labels = records[:, 0]
    if labels.max() >= _CIFAR_CLASSES:
        bad = int(np.flatnonzero(labels >= _CIFAR_CLASSES)[0])
        raise ValueError(f"load_cifar10: {path} record {bad} has label {int(labels[bad])}, "
                         f"expected 0..{_CIFAR_CLASSES - 1}: not a CIFAR-10 binary batch "
                         "(CIFAR-100's has two label bytes)")
    return records
