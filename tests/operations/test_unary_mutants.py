"""clip where the whole run of operations/ (chunk 1, own tests) found the suite blind
(docs/testing.md): one bound alone, a value exactly at a bound (its gradient passes, as
PyTorch's clamp), and the message when no bound is given."""
import numpy as np
import pytest

import autograd
from autograd import Tensor

X = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])


@pytest.mark.parametrize("low,high", [(-1.0, 1.0), (-1.0, None), (None, 1.0)])
def test_clip_and_its_gradient_at_and_beyond_the_bounds(low, high):
    x = Tensor(data=X, stores_grad=True)
    y = autograd.clip(x, low, high)
    np.testing.assert_array_equal(y.to_numpy(), np.clip(X, low, high))
    grad = autograd.gradients(autograd.sum(y * Tensor(data=np.arange(1.0, 8.0))))[x]
    inside = np.ones(X.shape, bool)
    if low is not None:
        inside &= X >= low
    if high is not None:
        inside &= X <= high
    np.testing.assert_array_equal(grad.to_numpy(), np.arange(1.0, 8.0) * inside)


def test_clip_without_bounds_says_so():
    with pytest.raises(ValueError, match=r"^clip: give min, max or both$"):
        autograd.clip(Tensor(data=X))
