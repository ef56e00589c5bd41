"""The embedded Shakespeare corpus: the file as shipped (size, checksum, licence), the
nanoGPT split, the vocabulary round trip and the batch windows."""
import hashlib
import os

import numpy as np
import pytest

from autograd.data import (load_shakespeare, load_shakespeare_text, CharVocabulary,
                           random_windows, SHAKESPEARE_PATH)


def test_archive_is_small_checksummed_and_documented():
    assert os.path.getsize(SHAKESPEARE_PATH) < 400_000
    text = load_shakespeare_text()
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == (
        "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed")
    licence = open(os.path.join(os.path.dirname(SHAKESPEARE_PATH),
                                "SHAKESPEARE_LICENSE.txt")).read()
    for words in ("karpathy/char-rnn", "public domain", "MIT"):
        assert words in licence


def test_split_is_the_first_ninety_percent_and_the_rest():
    text = load_shakespeare_text()
    train, vocabulary = load_shakespeare("train")
    val, vocabulary_val = load_shakespeare("val")
    every, _ = load_shakespeare("all")
    assert len(train) == int(len(text) * 0.9) and len(train) + len(val) == len(text)
    assert vocabulary.chars == vocabulary_val.chars and len(vocabulary) == 65
    np.testing.assert_array_equal(np.r_[train, val], every)
    assert vocabulary.decode(val[:200]) == text[len(train):len(train) + 200]
    np.testing.assert_array_equal(vocabulary.encode(text[:500]), train[:500])
    with pytest.raises(ValueError, match="split must be one of"):
        load_shakespeare("test")


def test_vocabulary_rejects_unknown_characters():
    with pytest.raises(ValueError, match=r"characters \['z'\] are not in the vocabulary"):
        CharVocabulary("abc").encode("abz")


def test_windows_are_shifted_by_one_and_inside_the_data():
    ids = np.arange(50) * 3
    x, y = random_windows(ids, 8, 10, np.random.default_rng(1))
    assert x.shape == y.shape == (8, 10)
    np.testing.assert_array_equal(y[:, :-1], x[:, 1:])
    np.testing.assert_array_equal(y - x, 3)
    with pytest.raises(ValueError, match="need more than context=50"):
        random_windows(ids, 1, 50, np.random.default_rng(0))
