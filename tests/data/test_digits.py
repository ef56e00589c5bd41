"""The embedded digits: the archive as shipped, and load_digits' shapes, range and fixed split."""
import os

import numpy as np
import pytest

from autograd.data import load_digits, DIGITS_PATH


def test_archive_is_small_pickle_free_and_documented():
    assert os.path.getsize(DIGITS_PATH) < 100_000
    with np.load(DIGITS_PATH, allow_pickle=False) as archive:
        assert archive["images"].shape == (1797, 8, 8) and archive["images"].dtype == np.uint8
        assert archive["labels"].shape == (1797,) and archive["labels"].dtype == np.uint8
        assert archive["is_test"].dtype == np.bool_
        assert int(archive["images"].max()) == 16
    licence = os.path.join(os.path.dirname(DIGITS_PATH), "DIGITS_LICENSE.txt")
    text = open(licence).read()
    for words in ("Alpaydin", "Kaynak", "CC BY 4.0", "scikit-learn", "BSD"):
        assert words in text


@pytest.mark.parametrize("split, size", [("train", 1437), ("test", 360), ("all", 1797)])
def test_shapes_dtypes_and_range(split, size):
    images, labels = load_digits(split)
    assert images.shape == (size, 1, 8, 8) and images.dtype == np.float32
    assert labels.shape == (size,) and labels.dtype == np.int64
    assert images.min() == 0.0 and images.max() == 1.0
    assert set(np.unique(labels).tolist()) == set(range(10))
    # values are counts 0..16 divided by 16
    np.testing.assert_array_equal(images * 16, np.round(images * 16))


def test_raw_counts_without_normalize():
    normalized, _ = load_digits("train")
    raw, _ = load_digits("train", normalize=False)
    assert raw.dtype == np.float32 and raw.max() == 16.0
    np.testing.assert_allclose(raw / 16, normalized)


def test_classes_are_roughly_balanced():
    for split in ("train", "test"):
        _, labels = load_digits(split)
        counts = np.bincount(labels, minlength=10)
        assert counts.min() >= 0.8 * counts.mean() and counts.max() <= 1.2 * counts.mean()
    _, test_labels = load_digits("test")
    assert np.bincount(test_labels).tolist() == [36] * 10


def _rows(images):
    return {row.tobytes() for row in images.reshape(len(images), -1)}


def test_split_is_disjoint_covers_everything_and_is_fixed():
    train, train_labels = load_digits("train")
    test, test_labels = load_digits("test")
    everything, all_labels = load_digits("all")
    # the two splits together are exactly the whole set, as a multiset of (image, label) rows
    combined = np.concatenate([train.reshape(len(train), -1), train_labels[:, None]], axis=1)
    combined = np.concatenate(
        [combined, np.concatenate([test.reshape(len(test), -1), test_labels[:, None]], axis=1)])
    whole = np.concatenate([everything.reshape(len(everything), -1), all_labels[:, None]], axis=1)
    assert sorted(map(bytes, combined.astype(np.float32))) == \
        sorted(map(bytes, whole.astype(np.float32)))
    # no image of the test split appears in the training split (the data has no duplicates
    # across the split boundary)
    assert not _rows(train) & _rows(test)
    again, _ = load_digits("test")
    np.testing.assert_array_equal(again, test)


def test_matches_the_scikit_learn_csv_layout():
    """The first row of sklearn's digits.csv.gz is a 0; its pixels, written out here."""
    first_row = [0, 0, 5, 13, 9, 1, 0, 0, 0, 0, 13, 15, 10, 15, 5, 0, 0, 3, 15, 2, 0, 11, 8, 0,
                 0, 4, 12, 0, 0, 8, 8, 0, 0, 5, 8, 0, 0, 9, 8, 0, 0, 4, 11, 0, 1, 12, 7, 0,
                 0, 2, 14, 5, 10, 12, 0, 0, 0, 0, 6, 13, 10, 0, 0, 0]
    images, labels = load_digits("all", normalize=False)
    np.testing.assert_array_equal(images[0, 0].ravel(), first_row)
    assert labels[0] == 0


def test_bad_split_is_an_error():
    with pytest.raises(ValueError, match="split must be one of"):
        load_digits("validation")
