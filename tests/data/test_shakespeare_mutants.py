"""Shakespeare corpus paths the mutation run found untested (issue 22): the default split,
the bounds of val_fraction, int64 ids (also for an empty string), decoding a 2-D batch, and
the window starts compared with a generator seeded here."""
import numpy as np
import pytest

from autograd.data import load_shakespeare, CharVocabulary, random_windows


def test_the_default_split_is_train_and_ids_are_int64():
    """Kills a mutated default split and a float lookup table (`np.zeros(128)` without
    int64 gives float64 ids)."""
    ids, vocabulary = load_shakespeare()
    train, _ = load_shakespeare("train")
    assert ids.dtype == np.int64 and train.dtype == np.int64
    np.testing.assert_array_equal(ids, train)
    assert len(ids) == 1003854 and len(vocabulary) == 65


@pytest.mark.parametrize("fraction", [0.0, 1.0, 1.5, -0.1])
def test_val_fraction_outside_zero_one_is_refused_word_for_word(fraction):
    """Kills `0.0 <= val_fraction`, `val_fraction <= 1.0`, `< 2.0` and the message."""
    with pytest.raises(ValueError) as info:
        load_shakespeare("val", val_fraction=fraction)
    assert str(info.value) == f"load_shakespeare: val_fraction must be in (0, 1), got {fraction!r}"


def test_an_empty_string_encodes_to_empty_int64():
    """Kills `np.array(ids)` without int64 (an empty list would become float64)."""
    ids = CharVocabulary("abc").encode("")
    assert ids.dtype == np.int64 and ids.shape == (0,)


def test_decode_reads_a_batch_of_rows_in_order():
    """Kills `reshape(None)` for `reshape(-1)`: a (batch, context) array is decoded row after
    row."""
    vocabulary = CharVocabulary("abcd")
    assert vocabulary.decode(np.array([[3, 0], [1, 2]])) == "dabc"


def test_window_starts_are_drawn_from_zero():
    """Kills `rng.integers(1, ...)`: the starts are the generator's integers in
    [0, len - context), and with one possible window it starts at 0."""
    ids = np.arange(40) * 7
    x, y = random_windows(ids, 6, 4, np.random.default_rng(3))
    starts = np.random.default_rng(3).integers(0, 40 - 4, 6)
    np.testing.assert_array_equal(x, ids[starts[:, None] + np.arange(4)])
    np.testing.assert_array_equal(y, ids[starts[:, None] + np.arange(4) + 1])
    x, y = random_windows(np.arange(6), 3, 5, np.random.default_rng(0))
    np.testing.assert_array_equal(x, np.tile(np.arange(5), (3, 1)))
    np.testing.assert_array_equal(y, np.tile(np.arange(1, 6), (3, 1)))
