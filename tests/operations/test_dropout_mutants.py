"""dropout where the mutation run of issue 22 (docs/testing.md, chunk 5) found the suite blind:
a ratio of 0 and eval mode return x itself (no op recorded), an integer x is refused only when
dropout would act, a bool is no ratio, and the messages word for word."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor


def exactly(message):
    return f"^{re.escape(message)}$"


def test_a_zero_ratio_in_training_returns_x_itself():
    x = Tensor(data=np.arange(4, dtype=np.float32), stores_grad=True)
    assert autograd.dropout(x, 0.0, training=True) is x
    assert autograd.dropout(x, 0, training=True) is x


def test_training_none_follows_autograd_training():
    x = Tensor(data=np.ones(2000, np.float32), stores_grad=True)
    autograd.manual_seed(4)
    assert autograd.training is True                  # the default
    y = autograd.dropout(x, 0.5)
    assert y is not x and type(y.creator).__name__ == "Dropout"
    assert 0 < (y.to_numpy() == 0).sum() < 2000


def test_an_integer_x_is_refused_only_when_dropout_acts():
    x = Tensor(data=np.array([1, 2, 3]))
    assert autograd.dropout(x, 0.5, training=False) is x
    assert autograd.dropout(x, 0.0, training=True) is x
    with pytest.raises(TypeError, match=exactly("dropout: expected a floating x, got int64")):
        autograd.dropout(x, 0.5, training=True)


@pytest.mark.parametrize("ratio, shown", [(True, "True"), (False, "False"), (1, "1"),
                                          (1.0, "1.0"), (-0.25, "-0.25"), ("0.5", "'0.5'"),
                                          (None, "None"), (float("nan"), "nan")])
def test_ratio_messages_are_exact(ratio, shown):
    with pytest.raises(ValueError, match=exactly(f"dropout: ratio must be in [0, 1), got {shown}")):
        autograd.dropout(Tensor(data=[1.0, 2.0]), ratio, training=True)


def test_a_numpy_ratio_is_a_float_and_scales_exactly():
    x = Tensor(data=np.ones(1000))                        # float64
    autograd.manual_seed(9)
    y = autograd.dropout(x, np.float32(0.25), training=True).to_numpy()
    kept = y != 0
    np.testing.assert_array_equal(y[kept], np.full(kept.sum(), 1 / (1 - float(np.float32(0.25)))))
    assert 0 < kept.sum() < 1000


def test_the_default_ratio_is_one_half():
    x = Tensor(data=np.ones(4000, np.float32))
    autograd.manual_seed(5)
    y = autograd.dropout(x, training=True).to_numpy()
    autograd.manual_seed(5)
    np.testing.assert_array_equal(y, autograd.dropout(x, 0.5, training=True).to_numpy())
    assert set(np.unique(y).tolist()) == {0.0, 2.0}
