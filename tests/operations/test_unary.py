"""Unary math ops: forward against NumPy, float64 gradcheck, float32 kept (tests/opcase.py)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, check_case

positive = floats(0.2, 3.0)
CASES = [
    OpCase(autograd.negative, np.negative, [floats()]),
    OpCase(autograd.exp, np.exp, [floats()]),
    OpCase(autograd.log, np.log, [positive]),
    OpCase(autograd.sqrt, np.sqrt, [positive]),
    OpCase(autograd.abs, np.abs, [floats(avoid=[0.0])]),
    OpCase(autograd.sign, np.sign, [floats(avoid=[0.0])]),
    OpCase(autograd.reciprocal, np.reciprocal, [floats(0.5, 2.0)]),
    OpCase(autograd.clip, np.clip, [floats(avoid=[-1.0, 0.5])], kwargs=dict(min=-1.0, max=0.5)),
    OpCase(autograd.ceil, np.ceil, [floats(-3, 3, avoid=[-2, -1, 0, 1, 2])]),
    OpCase(autograd.floor, np.floor, [floats(-3, 3, avoid=[-2, -1, 0, 1, 2])]),
    OpCase(autograd.rounde, np.rint, [floats(-3, 3, avoid=[-2.5, -1.5, -.5, .5, 1.5, 2.5])]),
    OpCase(autograd.round, lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
           [floats(-3, 3, avoid=[-2.5, -1.5, -.5, .5, 1.5, 2.5])]),
    OpCase(autograd.identity, lambda x: x, [floats()]),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)


def test_round_halves_away_from_zero_and_rounde_to_even():
    x = Tensor(data=[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])
    np.testing.assert_array_equal(autograd.round(x).to_numpy(), [-3, -2, -1, 1, 2, 3])
    np.testing.assert_array_equal(autograd.rounde(x).to_numpy(), [-2, -2, 0, 0, 2, 2])


def test_clip_needs_a_bound():
    with pytest.raises(ValueError, match="clip"):
        autograd.clip(Tensor(data=[1.0]))


def test_identity_is_a_new_array_in_the_graph():
    x = Tensor(data=[1.0, 2.0], stores_grad=True)
    y = autograd.identity(x)
    assert y.data is not x.data and y.creator is not None
