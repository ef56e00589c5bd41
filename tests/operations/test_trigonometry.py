"""Trigonometric and hyperbolic ops: forward against NumPy, float64 gradcheck, float32 kept."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from tests.opcase import OpCase, floats, check_case

CASES = [
    OpCase(autograd.sin, np.sin, [floats()]),
    OpCase(autograd.cos, np.cos, [floats()]),
    OpCase(autograd.tan, np.tan, [floats(-1.2, 1.2)]),
    OpCase(autograd.asin, np.arcsin, [floats(-0.9, 0.9)]),
    OpCase(autograd.acos, np.arccos, [floats(-0.9, 0.9)]),
    OpCase(autograd.atan, np.arctan, [floats()]),
    OpCase(autograd.sinh, np.sinh, [floats()]),
    OpCase(autograd.cosh, np.cosh, [floats()]),
    OpCase(autograd.asinh, np.arcsinh, [floats()]),
    OpCase(autograd.acosh, np.arccosh, [floats(1.1, 3.0)]),
    OpCase(autograd.atanh, np.arctanh, [floats(-0.9, 0.9)]),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)
