"""Shape ops' paths the mutation run of issue 22 found unchecked (autograd/operations/shape.py
and joining.py): messages pinned word for word (the design: the op, what it expected, what it
got), axis bounds at exactly -ndim and ndim, int shapes, 1-D split/squeeze, each against NumPy
or a hand-derived value (cat's and split's other cases: test_joining.py)."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor

X23 = Tensor(shape=(2, 3))


@pytest.mark.parametrize("call, error, message", [
    # a negative size other than -1 is refused by reshape itself, not left to NumPy
    # (`n < -2` survived)
    (lambda: autograd.reshape(X23, (-2, -1)), ValueError,
     "reshape: cannot reshape (2, 3) (6 elements) into (-2, -1)"),
    (lambda: autograd.reshape(X23, (-2, -3)), ValueError,
     "reshape: cannot reshape (2, 3) (6 elements) into (-2, -3)"),
    # squeeze of a 0-d tensor with an axis (the message emptied survived)
    (lambda: autograd.squeeze(Tensor(data=2.0), 0), ValueError,
     "squeeze: a 0-d tensor has no axis 0"),
    # transpose: an axis at exactly ndim is out of range, not axis 0 (`a <= ndim` survived),
    # and an out-of-range axis is shown as given, not reduced mod ndim (`or True` survived)
    (lambda: autograd.transpose(X23, (2, 1)), ValueError,
     "transpose: axes (2, 1) are not a permutation of the 2 axes of shape (2, 3)"),
    (lambda: autograd.transpose(X23, (0, 2)), ValueError,
     "transpose: axes (0, 2) are not a permutation of the 2 axes of shape (2, 3)"),
    # broadcast_to where NumPy itself refuses the shapes (`fits = True` on the error survived)
    (lambda: autograd.broadcast_to(X23, (4,)), ValueError,
     "broadcast_to: cannot broadcast (2, 3) to (4,)"),
    (lambda: autograd.expand(X23, 4), ValueError, "expand: cannot broadcast (2, 3) to (4,)"),
    # cat's messages (each matched only by a prefix before)
    (lambda: autograd.cat([]), ValueError, "cat: expected at least one tensor, got none"),
    (lambda: autograd.cat([Tensor(shape=(2,)), np.ones(2), 3]), TypeError,
     "cat: expected Tensors, got (Tensor, ndarray, int)"),
    (lambda: autograd.cat([Tensor(data=1.0)]), ValueError,
     "cat: cannot join 0-d tensors; unsqueeze them first"),
    (lambda: autograd.cat([X23, Tensor(shape=(2, 3), dtype=np.float64)]), TypeError,
     "cat: cannot join float32 and float64 tensors; cast one with as_type()"),
    # split's messages: 0-d, no parts at all, zero parts (`parts < 0` would divide by zero)
    (lambda: autograd.split(Tensor(data=1.0), 0, [1]), ValueError,
     "split: cannot split a 0-d tensor"),
    (lambda: autograd.split(X23, 1, None), ValueError,
     "split: give parts (a list of sizes or a count)"),
    (lambda: autograd.split(X23, 1, 0), ValueError,
     "split: cannot split axis 1 of length 3 (shape (2, 3)) into 0 equal parts"),
])
def test_shape_messages_are_exact(call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()


def test_transpose_takes_minus_ndim_as_the_first_axis():
    """`-ndim < a` would refuse axis -ndim, a valid axis (NumPy takes it)."""
    data = np.arange(24.0).reshape(2, 3, 4)
    y = autograd.transpose(Tensor(data=data), (-3, -1, 1))
    np.testing.assert_array_equal(y.to_numpy(), np.transpose(data, (-3, -1, 1)))


def test_reshape_takes_an_int_shape():
    """reshape(x, 6) is reshape(x, (6,)) (the int branch dropped would iterate over an int)."""
    data = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(autograd.reshape(Tensor(data=data), 6).to_numpy(),
                                  data.reshape(6))


@pytest.mark.parametrize("fn", [autograd.expand, autograd.broadcast_to])
def test_expand_and_broadcast_to_take_an_int_shape(fn):
    """An int shape is one axis (the int branch dropped would iterate over an int)."""
    x = Tensor(data=[[1.0], [2.0]], stores_grad=True)
    y = fn(x, 3) if fn is autograd.expand else fn(Tensor(data=[5.0]), 3)
    expected = (np.broadcast_to([[1.0], [2.0]], (2, 3)) if fn is autograd.expand
                else np.full(3, 5.0))
    np.testing.assert_array_equal(y.to_numpy(), expected)


def test_squeeze_and_split_of_a_one_d_tensor():
    """A 1-D tensor is not 0-d (`ndim == 1` in squeeze's and split's 0-d checks survived)."""
    y = autograd.squeeze(Tensor(data=[7.0]), 0)
    assert y.shape == () and float(y.to_numpy()) == 7.0
    pieces = autograd.split(Tensor(data=np.arange(5.0)), 0, [2, 3])
    np.testing.assert_array_equal(pieces[0].to_numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(pieces[1].to_numpy(), [2.0, 3.0, 4.0])


def test_reshapes_checked_target_is_kept_per_input_shape_and_sizes_asked():
    """The same sizes asked of inputs of other shapes (a 0 copies the input's size, a -1 takes
    the rest) give each its own target, and a refused one is refused every time."""
    for shape, asked, want in [((2, 3, 4), (0, -1), (2, 12)), ((5, 3, 4), (0, -1), (5, 12)),
                               ((2, 3, 4), (0, -1), (2, 12)), ((6, 4), (0, -1), (6, 4)),
                               ((6, 4), [3, -1], (3, 8)), ((6, 4), (3, -1), (3, 8))]:
        x = Tensor(data=np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
        y = autograd.reshape(x, asked)
        np.testing.assert_array_equal(y.to_numpy(), x.to_numpy().reshape(want))
    for _ in range(2):
        with pytest.raises(ValueError, match=r"reshape: cannot reshape \(2, 3\)"):
            autograd.reshape(X23, (4, -1))
