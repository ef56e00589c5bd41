"""The reductions' argument messages where the sampled mutation run found the suite blind
(docs/testing.md): an axis past the end of a 1-d tensor, and mean's own name in the
several-tensor form's messages."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor

X = Tensor(data=np.array([0.25, 0.5, 1.0], np.float32))


@pytest.mark.parametrize("reduce", [autograd.sum, autograd.mean])
def test_axis_one_of_a_one_d_tensor_is_out_of_range(reduce):
    name = reduce.__name__
    with pytest.raises(ValueError, match=f"^{name}: axis 1 is out of range for a 1-d tensor$"):
        reduce(X, axis=1)
    # the last axis, counted from the end, is the only one
    np.testing.assert_allclose(reduce(X, axis=-1).to_numpy(),
                               getattr(np, name)(X.to_numpy(), axis=-1), rtol=1e-6)


def test_mean_of_several_tensors_names_itself():
    message = "mean: axis applies to one tensor; got 2 tensors and axis=0"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        autograd.mean(X, X, axis=0)
    with pytest.raises(TypeError, match="^mean: expected at least one tensor$"):
        autograd.mean()
