"""Tests written from the surviving mutants of autograd/layers/loss.py (issue 22): CrossEntropy
checks its targets' shape itself, with a message naming the layer (test_loss.py checked only
SoftMaxCrossEntropy's)."""
import re

import numpy as np
import pytest

from autograd import CrossEntropy, Tensor


@pytest.mark.parametrize("t_shape, got", [((3,), "(3,)"), ((4, 2), "(4, 2)"), ((2, 3), "(2, 3)")])
def test_cross_entropy_refuses_targets_of_another_shape_by_name(t_shape, got):
    """CrossEntropy.forward calling output_shape(p.shape, None) (or _shape(None)) skips the
    target check: the loss op would fail later, or not at all, without naming the layer."""
    p = Tensor(data=np.full((4, 3), 1 / 3))
    t = np.zeros(t_shape, np.int64 if len(t_shape) == 1 else np.float64)
    message = ("CrossEntropy(): expected targets of shape (4, 3) or labels of shape (4,) for "
               f"probabilities of shape (4, 3), got {got}")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        CrossEntropy()(p, t)
