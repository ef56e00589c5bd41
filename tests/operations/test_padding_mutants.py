"""pad where the whole mutation run of chunk 4 found the suite blind (docs/testing.md): a
reflect pad equal to the axis length on one side and 1 on the other, exact messages. Against
the axis-by-axis reference of tests/operations/test_padding.py, gradcheck and messages written
out word for word."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from tests.operations.test_padding import reflect_reference


@pytest.mark.parametrize("pads", [[3, 1], [1, 3], [3, 0], [0, 3], [3, 2]])
def test_reflect_copy_on_one_side_and_a_mirror_on_the_other(pads):
    # a begin equal to the axis length (a copy) with an end of 1: mirrored is [0, 1], which
    # _reflect_by_axis must still pad by reflection before adding the copy
    x = np.array([1.0, 2.0, 4.0])
    y = autograd.pad(Tensor(data=x), "reflect", pads).to_numpy()
    np.testing.assert_array_equal(y, reflect_reference(x, pads))
    assert autograd.gradcheck(lambda t: autograd.pad(t, "reflect", pads), [x])
