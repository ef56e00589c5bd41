"""einsum and tensordot (autograd/operations/linalg.py) against NumPy, with gradcheck."""
import numpy as np
import pytest

import autograd
from autograd import Tensor

rng = np.random.default_rng(0)
CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("i,j->ij", [(3,), (2,)]),
    ("ijk,k->i", [(2, 3, 4), (4,)]),       # j summed inside the first operand alone
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
    ("ij,jk", [(2, 3), (3, 4)]),            # implicit output: "ik"
]


@pytest.mark.parametrize("spec, shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_numpy_and_gradchecks(spec, shapes):
    arrays = [rng.standard_normal(s) for s in shapes]
    out = autograd.einsum(spec, *[Tensor(data=a) for a in arrays])
    np.testing.assert_allclose(out.to_numpy(), np.einsum(spec, *arrays), rtol=1e-12)
    assert autograd.gradcheck(lambda *ts: autograd.einsum(spec, *ts),
                              [Tensor(data=a) for a in arrays])


@pytest.mark.parametrize("axes", [1, 2, ([0], [1]), ([1, 0], [0, 1])])
def test_tensordot_matches_numpy_and_gradchecks(axes):
    a, b = rng.standard_normal((3, 2, 2)), rng.standard_normal((2, 3, 2))
    if axes == 1:
        b = rng.standard_normal((2, 4))
    if axes == 2:
        b = rng.standard_normal((2, 2, 3))
    out = autograd.tensordot(Tensor(data=a), Tensor(data=b), axes)
    np.testing.assert_allclose(out.to_numpy(), np.tensordot(a, b, axes), rtol=1e-12)
    assert autograd.gradcheck(lambda x, y: autograd.tensordot(x, y, axes),
                              [Tensor(data=a), Tensor(data=b)])


def test_einsum_float32_stays_float32():
    x = Tensor(data=np.ones((2, 3), np.float32), stores_grad=True)
    y = autograd.einsum("ij->i", x)
    (param, grad), = autograd.backward(y, np.ones(2, np.float32))
    assert y.dtype == np.float32 and grad.dtype == np.float32


def test_einsum_errors_name_the_problem():
    with pytest.raises(ValueError, match=r"axis 'j' has sizes 3 and 4"):
        autograd.einsum("ij,jk->ik", Tensor(shape=(2, 3)), Tensor(shape=(4, 2)))
    with pytest.raises(ValueError, match="names 2 operand"):
        autograd.einsum("ij,jk->ik", Tensor(shape=(2, 3)))
    with pytest.raises(ValueError, match="repeated letters"):
        autograd.einsum("ii->i", Tensor(shape=(2, 2)))
    with pytest.raises(ValueError, match=r"cannot contract axis 1 of \(2, 3\)"):
        autograd.tensordot(Tensor(shape=(2, 3)), Tensor(shape=(4, 2)), 1)


def test_tensordot_axis_out_of_range_is_named():
    a, b = Tensor(shape=(2, 3)), Tensor(shape=(3, 4))
    with pytest.raises(ValueError, match=r"tensordot: axis 5 is out of range for a 2-d tensor"):
        autograd.tensordot(a, b, axes=([5], [0]))
