"""load_digits paths the mutation run found untested (issue 22): the default split, and the
archive read without unpickling (a tampered archive holding an object array is refused)."""
import importlib

import numpy as np
import pytest

from autograd.data import load_digits

digits_module = importlib.import_module("autograd.data.digits")


def test_the_default_split_is_train():
    """Kills a mutated default ("XXtrainXX", "TRAIN": an error, not the 1,437 images)."""
    images, labels = load_digits()
    train_images, train_labels = load_digits("train")
    assert len(images) == 1437
    np.testing.assert_array_equal(images, train_images)
    np.testing.assert_array_equal(labels, train_labels)


def test_an_archive_holding_pickled_objects_is_refused(tmp_path, monkeypatch):
    """Kills `allow_pickle=True`: loading the archive must never run a pickle (a replaced
    digits.npz could carry code)."""
    tampered = tmp_path / "digits.npz"
    np.savez(tampered, images=np.array([object()], dtype=object), labels=np.zeros(1, np.uint8),
             is_test=np.zeros(1, bool))
    monkeypatch.setattr(digits_module, "DIGITS_PATH", str(tampered))
    with pytest.raises(ValueError, match="allow_pickle=False"):
        load_digits("all")
