"""MNIST/CIFAR-10 reader paths the mutation run found untested (issue 22): every error
message word for word (the caller named, the candidates listed, the plural of "dimension"),
an IDX file that is exactly its header, and a batch both beside and inside the extracted
folder. Files are written here from the formats' descriptions."""
import gzip
import os
import struct

import numpy as np
import pytest

from autograd.data import load_mnist, load_cifar10


def _idx(array):
    """IDX: 0, 0, type 0x08 (unsigned byte), ndim, the dimensions as big-endian uint32, data."""
    return bytes([0, 0, 0x08, array.ndim]) + b"".join(struct.pack(">I", d) for d in array.shape) \
        + array.astype(np.uint8).tobytes()


def _write(path, content, compress=False):
    with (gzip.open(path, "wb") if compress else open(path, "wb")) as stream:
        stream.write(content)
    return str(path)


def _mnist(directory, n=3, rows=2, cols=2, images=None, labels=None):
    rng = np.random.default_rng(0)
    image_bytes = images if images is not None else _idx(rng.integers(0, 256, (n, rows, cols)))
    label_bytes = labels if labels is not None else _idx(rng.integers(0, 10, n))
    return (_write(directory / "train-images-idx3-ubyte", image_bytes),
            _write(directory / "train-labels-idx1-ubyte", label_bytes))


def _message(error, call, *args):
    with pytest.raises(error) as info:
        call(*args)
    return str(info.value)


# ------------------------------------------------------------------ MNIST
def test_an_empty_idx_file_is_exactly_its_header_and_loads(tmp_path):
    """Kills `len(content) <= header_size`: zero images of 28x28 are a 16-byte file and zero
    labels an 8-byte one, both complete."""
    _mnist(tmp_path, images=_idx(np.zeros((0, 28, 28))), labels=_idx(np.zeros(0)))
    images, labels = load_mnist(tmp_path)
    assert images.shape == (0, 1, 28, 28) and labels.shape == (0,)


def test_a_missing_mnist_file_lists_the_first_two_candidates(tmp_path):
    """Kills `candidates[1] or candidates[1]` and `candidates[0] or candidates[2]`."""
    folder = str(tmp_path)
    assert _message(FileNotFoundError, load_mnist, folder, "test") == (
        f"load_mnist: no t10k images file in {folder}: looked for "
        f"{os.path.join(folder, 't10k-images-idx3-ubyte')} or "
        f"{os.path.join(folder, 't10k-images-idx3-ubyte.gz')}")


def test_a_bad_magic_number_message_says_dimension_or_dimensions(tmp_path):
    """Kills every mutant of the plural in the magic-number message (ndim 1 has no "s",
    ndim 3 has one)."""
    images_path, labels_path = _mnist(tmp_path, labels=b"\x00\x00\x09\x01" + bytes(4 + 3))
    assert _message(ValueError, load_mnist, tmp_path) == (
        f"load_mnist: {labels_path} has magic number 0x00000901, expected 0x00000801 (an IDX "
        "file of unsigned bytes with 1 dimension)")
    _mnist(tmp_path, images=b"\x00\x00\x08\x02" + bytes(8 + 12))
    assert _message(ValueError, load_mnist, tmp_path) == (
        f"load_mnist: {images_path} has magic number 0x00000802, expected 0x00000803 (an IDX "
        "file of unsigned bytes with 3 dimensions)")


def test_truncated_and_too_long_messages_word_for_word(tmp_path):
    """Kills the mutated "truncated" and "too long" words."""
    good = _idx(np.zeros((3, 2, 2)))                  # 16 + 12 bytes
    images_path, _ = _mnist(tmp_path, images=good[:-1])
    assert _message(ValueError, load_mnist, tmp_path) == (
        f"load_mnist: {images_path} is truncated: its header gives shape (3, 2, 2), 28 bytes, "
        "but the file has 27")
    _mnist(tmp_path, images=good + b"\x00\x00")
    assert _message(ValueError, load_mnist, tmp_path) == (
        f"load_mnist: {images_path} is too long: its header gives shape (3, 2, 2), 28 bytes, "
        "but the file has 30")


def test_a_bad_gzip_mnist_file_names_load_mnist(tmp_path):
    """Kills the caller passed to _read_file as None or a mutated "load_mnist"."""
    _write(tmp_path / "t10k-labels-idx1-ubyte", _idx(np.zeros(2)))
    bad = _write(tmp_path / "t10k-images-idx3-ubyte.gz", b"not gzip")
    message = _message(ValueError, load_mnist, tmp_path, "test")
    assert message.startswith(f"load_mnist: {bad} is not a readable gzip file (")


def test_a_bad_mnist_split_names_load_mnist():
    assert _message(ValueError, load_mnist, ".", "val") == \
        "load_mnist: split must be one of ('train', 'test'), got 'val'"


# ------------------------------------------------------------------ CIFAR-10
def _record(label, fill):
    return bytes([label]) + bytes([fill]) * 3072


def test_a_batch_beside_the_extracted_folder_wins(tmp_path):
    """Kills `or` for `and` and the file looked up without its folder: the extracted folder
    is read only when `directory` itself lacks the batch."""
    nested = tmp_path / "cifar-10-batches-bin"
    nested.mkdir()
    _write(tmp_path / "test_batch.bin", _record(3, 255))
    _write(nested / "test_batch.bin", _record(5, 0) + _record(6, 0))
    images, labels = load_cifar10(str(tmp_path), "test")
    assert labels.tolist() == [3] and images.shape == (1, 3, 32, 32)
    assert (images == 1.0).all()


def test_cifar_messages_name_load_cifar10_word_for_word(tmp_path):
    """Kills the mutated caller names (missing file, bad split) and the mutated words of the
    size and label messages (a CIFAR-100 record has two label bytes)."""
    folder = str(tmp_path)
    missing = os.path.join(folder, "test_batch.bin")
    assert _message(FileNotFoundError, load_cifar10, folder, "test") == \
        f"load_cifar10: no such file: {missing}"
    assert _message(ValueError, load_cifar10, folder, "all") == \
        "load_cifar10: split must be one of ('train', 'test'), got 'all'"
    _write(missing, bytes(100))
    assert _message(ValueError, load_cifar10, folder, "test") == (
        f"load_cifar10: {missing} has 100 bytes, not a positive multiple of the 3073-byte "
        "record: truncated or not a CIFAR-10 binary batch")
    _write(missing, _record(2, 0) + _record(57, 0))
    assert _message(ValueError, load_cifar10, folder, "test") == (
        f"load_cifar10: {missing} record 1 has label 57, expected 0..9: not a CIFAR-10 binary "
        "batch (CIFAR-100's has two label bytes)")
