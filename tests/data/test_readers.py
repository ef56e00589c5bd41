"""MNIST IDX and CIFAR-10 binary readers, on small files written here in those formats."""
import gzip
import os
import struct

import numpy as np
import pytest

from autograd.data import load_mnist, load_cifar10


# ------------------------------------------------------------------ writers (the references)
def _idx_bytes(array):
    """The IDX encoding written out from the format's description: two zero bytes, the type
    code 0x08 (unsigned byte), the number of dimensions, each dimension as a big-endian
    32-bit integer, then the data row-major."""
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(struct.pack(">I", d) for d in array.shape)
    return header + array.astype(np.uint8).tobytes()


def _write(path, content, compress=False):
    if compress:
        with gzip.open(path, "wb") as stream:
            stream.write(content)
    else:
        with open(path, "wb") as stream:
            stream.write(content)
    return path


def _mnist_sample(rng, n, rows=28, cols=28):
    return rng.integers(0, 256, (n, rows, cols), dtype=np.uint8), \
        rng.integers(0, 10, n, dtype=np.uint8)


def _write_mnist(directory, prefix, images, labels, compress=False, separator="-"):
    suffix = ".gz" if compress else ""
    images_path = os.path.join(directory, f"{prefix}-images{separator}idx3-ubyte{suffix}")
    labels_path = os.path.join(directory, f"{prefix}-labels{separator}idx1-ubyte{suffix}")
    _write(images_path, _idx_bytes(images), compress)
    _write(labels_path, _idx_bytes(labels), compress)
    return images_path, labels_path


def _cifar_bytes(images, labels):
    records = [bytes([int(label)]) + image.tobytes() for image, label in zip(images, labels)]
    return b"".join(records)


def _cifar_sample(rng, n):
    return rng.integers(0, 256, (n, 3, 32, 32), dtype=np.uint8), \
        rng.integers(0, 10, n, dtype=np.uint8)


# ------------------------------------------------------------------ MNIST
@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("split, prefix", [("train", "train"), ("test", "t10k")])
def test_mnist_round_trip(tmp_path, compress, split, prefix):
    rng = np.random.default_rng(0)
    images, labels = _mnist_sample(rng, 5)
    _write_mnist(tmp_path, prefix, images, labels, compress)
    got_images, got_labels = load_mnist(str(tmp_path), split)
    assert got_images.shape == (5, 1, 28, 28) and got_images.dtype == np.float32
    assert got_labels.dtype == np.int64
    np.testing.assert_allclose(got_images[:, 0], images / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(got_labels, labels)
    assert 0.0 <= got_images.min() and got_images.max() <= 1.0


def test_mnist_other_image_size_and_dotted_file_names(tmp_path):
    rng = np.random.default_rng(1)
    images, labels = _mnist_sample(rng, 3, rows=4, cols=6)
    _write_mnist(tmp_path, "train", images, labels, separator=".")
    got_images, got_labels = load_mnist(tmp_path)
    assert got_images.shape == (3, 1, 4, 6)
    np.testing.assert_allclose(got_images[:, 0] * 255, images, atol=1e-4)
    np.testing.assert_array_equal(got_labels, labels)


def test_mnist_missing_file_names_the_path(tmp_path):
    rng = np.random.default_rng(2)
    images, labels = _mnist_sample(rng, 2)
    _, labels_path = _write_mnist(tmp_path, "train", images, labels)
    os.remove(labels_path)
    with pytest.raises(FileNotFoundError, match=r"train-labels-idx1-ubyte") as info:
        load_mnist(tmp_path)
    assert str(tmp_path) in str(info.value)
    with pytest.raises(FileNotFoundError, match="no such directory"):
        load_mnist(tmp_path / "absent")


def _corrupt_variants(images, labels):
    good_images, good_labels = _idx_bytes(images), _idx_bytes(labels)
    return {
        "bad image magic": (b"\x00\x00\x08\x01" + good_images[4:], good_labels,
                            "magic number 0x00000801, expected 0x00000803"),
        "bad label type": (good_images, b"\x00\x00\x0d\x01" + good_labels[4:],
                           "magic number 0x00000d01"),
        "truncated images": (good_images[:-10], good_labels, "truncated"),
        "truncated header": (good_images[:9], good_labels, "shorter than the 16-byte"),
        "too long": (good_images + b"\x00", good_labels, "too long"),
        "count mismatch": (good_images, _idx_bytes(labels[:-1]), "3 images but .* 2 labels"),
    }


@pytest.mark.parametrize("variant", ["bad image magic", "bad label type", "truncated images",
                                     "truncated header", "too long", "count mismatch"])
@pytest.mark.parametrize("compress", [False, True])
def test_mnist_corrupt_files_are_errors_naming_the_path(tmp_path, variant, compress):
    rng = np.random.default_rng(3)
    images, labels = _mnist_sample(rng, 3, rows=5, cols=5)
    image_bytes, label_bytes, message = _corrupt_variants(images, labels)[variant]
    suffix = ".gz" if compress else ""
    images_path = _write(str(tmp_path / f"train-images-idx3-ubyte{suffix}"), image_bytes, compress)
    labels_path = _write(str(tmp_path / f"train-labels-idx1-ubyte{suffix}"), label_bytes, compress)
    with pytest.raises(ValueError, match=message) as info:
        load_mnist(tmp_path)
    bad_path = labels_path if variant == "bad label type" else images_path
    assert bad_path in str(info.value)


def test_mnist_truncated_or_fake_gzip_names_the_path(tmp_path):
    rng = np.random.default_rng(4)
    images, labels = _mnist_sample(rng, 4)
    images_path, _ = _write_mnist(tmp_path, "train", images, labels, compress=True)
    with open(images_path, "rb") as stream:
        content = stream.read()
    _write(images_path, content[: len(content) // 2])
    with pytest.raises(ValueError, match="not a readable gzip file") as info:
        load_mnist(tmp_path)
    assert images_path in str(info.value)
    _write(images_path, b"this is not gzip at all")
    with pytest.raises(ValueError, match="not a readable gzip file"):
        load_mnist(tmp_path)


def test_mnist_bad_split():
    with pytest.raises(ValueError, match=r"split must be one of \('train', 'test'\)"):
        load_mnist(".", "validation")


# ------------------------------------------------------------------ CIFAR-10
def _write_cifar(directory, split_sizes, rng):
    written = {}
    for name, n in split_sizes.items():
        images, labels = _cifar_sample(rng, n)
        _write(os.path.join(directory, name), _cifar_bytes(images, labels))
        written[name] = (images, labels)
    return written


TRAIN_SIZES = {f"data_batch_{i}.bin": i for i in range(1, 6)}     # 1 + 2 + ... + 5 records


def test_cifar_train_concatenates_the_five_batches_in_order(tmp_path):
    written = _write_cifar(tmp_path, TRAIN_SIZES, np.random.default_rng(5))
    images, labels = load_cifar10(tmp_path, "train")
    assert images.shape == (15, 3, 32, 32) and images.dtype == np.float32
    assert labels.shape == (15,) and labels.dtype == np.int64
    expected_images = np.concatenate([written[name][0] for name in TRAIN_SIZES])
    expected_labels = np.concatenate([written[name][1] for name in TRAIN_SIZES])
    np.testing.assert_allclose(images * 255, expected_images, atol=1e-4)
    np.testing.assert_array_equal(labels, expected_labels)
    assert 0.0 <= images.min() and images.max() <= 1.0


def test_cifar_channel_planes_are_red_green_blue_row_major(tmp_path):
    record = np.zeros(3073, np.uint8)
    record[0] = 7
    record[1 + 0 * 1024 + 2 * 32 + 5] = 255          # red plane, row 2, column 5
    record[1 + 2 * 1024 + 31 * 32 + 0] = 51          # blue plane, row 31, column 0
    _write(os.path.join(tmp_path, "test_batch.bin"), record.tobytes())
    images, labels = load_cifar10(tmp_path, "test")
    assert labels.tolist() == [7]
    assert images[0, 0, 2, 5] == 1.0 and images[0, 2, 31, 0] == np.float32(0.2)
    assert np.count_nonzero(images) == 2


def test_cifar_reads_the_extracted_folder(tmp_path):
    nested = tmp_path / "cifar-10-batches-bin"
    nested.mkdir()
    written = _write_cifar(nested, {"test_batch.bin": 3}, np.random.default_rng(6))
    images, labels = load_cifar10(tmp_path, "test")
    np.testing.assert_array_equal(labels, written["test_batch.bin"][1])


def test_cifar_missing_batch_names_the_path(tmp_path):
    sizes = dict(TRAIN_SIZES)
    del sizes["data_batch_4.bin"]
    _write_cifar(tmp_path, sizes, np.random.default_rng(7))
    with pytest.raises(FileNotFoundError, match="data_batch_4.bin") as info:
        load_cifar10(tmp_path)
    assert str(tmp_path) in str(info.value)


@pytest.mark.parametrize("content, message", [
    (b"", "0 bytes"),
    (bytes(3073 * 2 - 1), "6145 bytes, not a positive multiple of the 3073-byte record"),
    (bytes([10]) + bytes(3072), "record 0 has label 10"),
    (bytes(3073) + bytes([200]) + bytes(3072), "record 1 has label 200"),
])
def test_cifar_corrupt_batch_is_an_error_naming_the_path(tmp_path, content, message):
    path = _write(os.path.join(tmp_path, "test_batch.bin"), content)
    with pytest.raises(ValueError, match=message) as info:
        load_cifar10(tmp_path, "test")
    assert path in str(info.value)


def test_cifar_bad_split():
    with pytest.raises(ValueError, match="split must be one of"):
        load_cifar10(".", "all")
