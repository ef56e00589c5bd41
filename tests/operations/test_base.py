"""Operation subclassing: what a user-defined op is told, what is kept, and what is checked."""
import gc
import weakref

import numpy as np
import pytest

import autograd
from autograd import Tensor, Operation
from autograd.device import get_array_module


def _param(array):
    return Tensor(data=np.asarray(array, np.float64), stores_grad=True)


class Square(Operation):
    """y = x^2.   dx = 2 x dy"""

    def forward(self, x):
        self.save_for_backward(x)
        return x * x

    def backward(self, dy):
        (x,) = self.saved
        return 2 * x * dy


class SharedGradientAdd(Operation):
    """y = a + b, and backward returns the SAME array object for both inputs."""

    def forward(self, a, b):
        return a + b

    def backward(self, dy):
        self.returned = dy * 1.0                  # a fresh array, then shared
        self.snapshot = self.returned.copy()
        return self.returned, self.returned


class NeedsRecorder(Operation):
    """y = sum of the inputs; remembers needs_input_grad as forward saw it."""

    def forward(self, *arrays):
        self.seen_in_forward = self.needs_input_grad
        return sum(arrays[1:], arrays[0].copy())

    def backward(self, dy):
        self.seen_in_backward = self.needs_input_grad
        return tuple(dy if need else None for need in self.needs_input_grad)


class FreshSave(Operation):
    """y = 3 x; saves a fresh array (so a weakref to it tracks only the graph's reference)."""

    def forward(self, x):
        self.save_for_backward(x * 3.0)
        return x * 3.0

    def backward(self, dy):
        assert len(self.saved) == 1
        return dy * 3.0


class SumAndDifference(Operation):
    """(a + b, a - b).   da = ds + dd, db = ds - dd"""

    def forward(self, a, b):
        return a + b, a - b

    def backward(self, d_sum, d_difference):
        self.received = d_sum.copy(), d_difference.copy()
        return d_sum + d_difference, d_sum - d_difference


class BadShape(Operation):
    def forward(self, x):
        return x * 2.0

    def backward(self, dy):
        return dy.sum(axis=0)


class BadCount(Operation):
    def forward(self, a, b):
        return a + b

    def backward(self, dy):
        return dy


class OneOff(Operation):
    """y = x^2 with a backward that is 1% off (gradcheck must catch it)."""

    def forward(self, x):
        self.save_for_backward(x)
        return x * x

    def backward(self, dy):
        (x,) = self.saved
        return 2.02 * x * dy


# ---------------------------------------------------------------- calling an op

def test_custom_op_forward_backward_and_gradcheck():
    x_np = np.array([[1.0, -2.0], [0.5, 3.0]])
    x = _param(x_np)
    y = Square()(x)
    assert isinstance(y, Tensor) and isinstance(y.creator, Square)
    np.testing.assert_array_equal(y.data, x_np ** 2)
    dy = np.array([[1.0, 2.0], [3.0, 4.0]])
    (g,) = autograd.gradients(y, dy).values()
    np.testing.assert_array_equal(g.data, 2 * x_np * dy)
    assert autograd.gradcheck(lambda t: Square()(t), [x_np])


def test_float32_custom_op_keeps_float32():
    x = Tensor(data=[1.0, 2.0], stores_grad=True)
    y = Square()(x)
    assert y.dtype == np.float32
    (g,) = autograd.gradients(autograd.sum(y)).values()
    assert g.dtype == np.float32


@pytest.mark.parametrize("recording", [True, False])
def test_op_called_on_non_tensors_is_type_error(recording):
    t = Tensor(data=[1.0, 2.0], stores_grad=True)
    with autograd.enable_grad() if recording else autograd.no_grad():
        with pytest.raises(TypeError, match=r"Square: expected Tensor inputs, got \(ndarray\)"):
            Square()(np.ones(2, np.float32))
        with pytest.raises(TypeError, match=r"expected Tensor inputs, got \(Tensor, ndarray\)"):
            SharedGradientAdd()(t, np.ones(2, np.float32))
        with pytest.raises(TypeError, match=r"expected Tensor inputs, got \(ndarray, Tensor\)"):
            SharedGradientAdd()(np.ones(2, np.float32), t)
        with pytest.raises(TypeError, match=r"expected Tensor inputs, got \(\)"):
            Square()()


class Pair(Operation):
    """(y1, y2) = (a + b, a * b).   da = dy1 + b dy2, db = dy1 + a dy2"""

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a + b, a * b

    def backward(self, dy1, dy2):
        a, b = self.saved
        return dy1 + b * dy2, dy1 + a * dy2


def test_one_input_and_several_inputs_record_the_same_edges():
    w = _param([[1.0, 2.0]])
    h = w * 2.0
    data = Tensor(data=np.ones((1, 2)), requires_grad=False)
    expected_h = (h.creator, 0, None, (1, 2), np.dtype(np.float64))
    expected_w = (None, 0, w, (1, 2), np.dtype(np.float64))
    one = Square()
    one(h)
    assert tuple(one.input_edges) == (expected_h,)
    several = Pair()
    y1, y2 = several(w, h)
    assert tuple(several.input_edges) == (expected_w, expected_h)
    assert several.needs_input_grad == (True, True)
    assert several.output_shapes == [((1, 2), np.dtype(np.float64))] * 2
    assert (y1.creator, y1.output_index, y2.creator, y2.output_index) == \
        (several, 0, several, 1)
    mixed = Pair()
    mixed(data, w)
    assert tuple(mixed.input_edges) == (None, expected_w)
    assert mixed.needs_input_grad == (False, True)


def test_several_outputs_unrecorded_are_plain_tensors_of_the_input_class():
    a, b = Tensor(data=[1.0, 2.0]), Tensor(data=[3.0, 4.0])
    with autograd.no_grad():
        op = Pair()
        s, p = op(_param([1.0, 2.0]), _param([3.0, 4.0]))
    assert op.input_edges is None and op.saved == ()
    assert s.creator is None and p.creator is None and not s.requires_grad
    np.testing.assert_array_equal(s.data, [4.0, 6.0])
    np.testing.assert_array_equal(p.data, [3.0, 8.0])
    s, p = Pair()(a, b)          # inputs that need no gradient: nothing recorded either
    assert s.creator is None and type(p) is Tensor


def test_op_without_forward_or_backward_says_so():
    class Empty(Operation):
        pass

    with pytest.raises(NotImplementedError, match="Empty"):
        Empty()(_param([1.0]))


def test_mixed_float_dtypes_name_the_op_and_both_dtypes():
    a = Tensor(data=np.ones(2, np.float32))
    b = Tensor(data=np.ones(2, np.float64))
    with pytest.raises(TypeError, match="SharedGradientAdd.*float32.*float64"):
        SharedGradientAdd()(a, b)


# ---------------------------------------------------------------- needs_input_grad

def test_needs_input_grad_per_kind_of_input():
    data = Tensor(data=[1.0, 2.0], requires_grad=False)       # a data batch
    leaf = Tensor(data=[1.0, 2.0])                             # requires_grad, stores nothing
    param = Tensor(data=[1.0, 2.0], stores_grad=True)
    intermediate = param * 2.0
    op = NeedsRecorder()
    y = op(data, leaf, param, intermediate)
    expected = (False, False, True, True)
    assert op.seen_in_forward == expected
    (g,) = [g for p, g in autograd.backward(autograd.sum(y)) if p is param]
    assert op.seen_in_backward == expected
    np.testing.assert_array_equal(g.data, [3.0, 3.0])       # direct + via the intermediate


def test_no_input_needing_a_gradient_means_nothing_is_recorded():
    data = Tensor(data=[1.0], requires_grad=False)
    y = NeedsRecorder()(data, Tensor(data=[2.0]))
    assert y.creator is None and y.requires_grad is False
    np.testing.assert_array_equal(y.data, [3.0])


def test_none_gradient_for_an_input_that_needs_one_counts_as_zero():
    class OnlyFirst(Operation):
        def forward(self, a, b):
            return a * 2.0 + b

        def backward(self, dy):
            return dy * 2.0, None

    a, b = _param([1.0]), _param([1.0])
    grads = autograd.gradients(autograd.sum(OnlyFirst()(a, b)))
    np.testing.assert_array_equal(grads[a].data, [2.0])
    np.testing.assert_array_equal(grads[b].data, [0.0])


def test_parameter_reached_only_through_none_gradients_gets_zeros_without_backward_calls():
    class OnlyFirst(Operation):
        def forward(self, a, b):
            return a + b

        def backward(self, dy):
            return dy, None

    class MustNotRun(Square):
        def backward(self, dy):
            raise AssertionError("backward ran although no gradient reached it")

    a, p = _param([1.0, 2.0]), _param([3.0, 4.0])
    grads = autograd.gradients(autograd.sum(OnlyFirst()(a, MustNotRun()(p))))
    np.testing.assert_array_equal(grads[a].data, [1.0, 1.0])
    np.testing.assert_array_equal(grads[p].data, [0.0, 0.0])
    assert grads[p].dtype == p.dtype


# ---------------------------------------------------------------- no aliasing when summing

def test_shared_gradient_for_the_same_parameter_twice_is_summed_without_mutation():
    p = _param([1.0, 2.0])
    op = SharedGradientAdd()
    (g,) = autograd.gradients(autograd.sum(op(p, p) * 5.0)).values()
    np.testing.assert_array_equal(g.data, [10.0, 10.0])
    np.testing.assert_array_equal(op.returned, op.snapshot)


@pytest.mark.parametrize("other_first", [False, True])
def test_shared_gradient_for_two_parameters_is_not_corrupted(other_first):
    # p also feeds a second op, so its gradient is a sum; q's (the shared array) must not
    # change when p's sum is formed, whichever branch the walk reaches first.
    p, q = _param([1.0, 2.0]), _param([3.0, 4.0])
    op = SharedGradientAdd()
    shared = op(p, q) * 1.0
    other = p * 3.0
    y = autograd.sum(other + shared if other_first else shared + other)
    grads = {id(param): g.to_numpy().copy() for param, g in autograd.backward(y)}
    np.testing.assert_array_equal(grads[id(q)], [1.0, 1.0])
    np.testing.assert_array_equal(grads[id(p)], [4.0, 4.0])
    np.testing.assert_array_equal(op.returned, op.snapshot)


def test_shared_gradient_for_an_intermediate_used_twice():
    p = _param([1.0, -1.0])
    h = p * 2.0
    op = SharedGradientAdd()
    (g,) = autograd.gradients(autograd.sum(op(h, h) + h)).values()
    np.testing.assert_array_equal(g.data, [6.0, 6.0])
    np.testing.assert_array_equal(op.returned, op.snapshot)


# ---------------------------------------------------------------- checks on what backward returns

def test_wrong_shape_gradient_names_the_op_class():
    with pytest.raises(RuntimeError, match=r"BadShape.*\(3,\).*\(2, 3\)"):
        autograd.gradients(autograd.sum(BadShape()(_param(np.ones((2, 3))))))


def test_wrong_number_of_gradients_names_the_op_class():
    with pytest.raises(RuntimeError, match="BadCount.*1.*2"):
        autograd.gradients(autograd.sum(BadCount()(_param([1.0]), _param([2.0]))))


def test_wrong_dtype_gradient_names_the_op_class():
    class Upcasts(Operation):
        def forward(self, x):
            return x * 2.0

        def backward(self, dy):
            return dy.astype(np.float64) * 2.0

    with pytest.raises(RuntimeError, match="Upcasts.*float64.*float32"):
        autograd.gradients(autograd.sum(Upcasts()(Tensor(data=[1.0], stores_grad=True))))


def test_non_array_gradient_names_the_op_class():
    class ReturnsNumber(Operation):
        def forward(self, x):
            return x * 2.0

        def backward(self, dy):
            return 2.0

    with pytest.raises(RuntimeError, match=r"ReturnsNumber.*float.*\(1,\)"):
        autograd.gradients(autograd.sum(ReturnsNumber()(_param([1.0]))))


# ---------------------------------------------------------------- several outputs

def test_multi_output_op_returns_a_tuple_with_right_gradients():
    a_np, b_np = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    a, b = _param(a_np), _param(b_np)
    s, d = SumAndDifference()(a, b)
    assert s.creator is d.creator and s.creator is not None
    np.testing.assert_array_equal(s.data, a_np + b_np)
    np.testing.assert_array_equal(d.data, a_np - b_np)
    grads = autograd.gradients(autograd.sum(s * 2.0 + d * 3.0))
    np.testing.assert_array_equal(grads[a].data, [5.0, 5.0])
    np.testing.assert_array_equal(grads[b].data, [-1.0, -1.0])
    assert autograd.gradcheck(lambda x, y: SumAndDifference()(x, y), [a_np, b_np])


@pytest.mark.parametrize("used", [0, 1])
def test_multi_output_op_with_one_output_used_gets_zeros_for_the_other(used):
    a, b = _param([1.0, 2.0]), _param([3.0, 4.0])
    op = SumAndDifference()
    outputs = op(a, b)
    dy = np.array([2.0, -5.0])
    grads = autograd.gradients(outputs[used], dy)
    d_sum, d_difference = op.received
    np.testing.assert_array_equal(d_sum, dy if used == 0 else np.zeros(2))
    np.testing.assert_array_equal(d_difference, dy if used == 1 else np.zeros(2))
    np.testing.assert_array_equal(grads[a].data, dy)
    np.testing.assert_array_equal(grads[b].data, dy if used == 0 else -dy)


# ---------------------------------------------------------------- what is kept

def test_saved_arrays_are_released_by_backward():
    p = _param([1.0, 2.0])
    op = FreshSave()
    y = autograd.sum(Square()(op(p)))
    saved = weakref.ref(op.saved[0])
    del op                           # only the graph holds the op and its saved array now
    autograd.gradients(y)
    gc.collect()
    assert saved() is None, "an intermediate op's saved array outlived backward"


class FreshGradient(FreshSave):
    """FreshSave that remembers weak references to the gradients its backward returns."""

    def __init__(self, returned):
        super().__init__()
        self.returned = returned

    def backward(self, dy):
        gradient = super().backward(dy)
        self.returned.append(weakref.ref(gradient))
        return gradient


def test_saved_arrays_and_gradients_are_released_as_soon_as_consumed():
    returned = []
    p = _param([1.0, 2.0])
    near, far = FreshGradient(returned), FreshGradient(returned)
    y = autograd.sum(far(near(p)))
    saved = [weakref.ref(near.saved[0]), weakref.ref(far.saved[0])]
    del near, far
    for param, grad in autograd.backward(y):
        # while the walk is paused at p's pair: both ops' saved arrays are gone, and so is the
        # gradient `far` passed to `near`; only the one being yielded is alive
        assert [r() is None for r in saved] == [True, True]
        assert returned[0]() is None
        assert returned[1]() is grad.data
        np.testing.assert_array_equal(grad.data, [9.0, 9.0])


def test_saved_arrays_survive_retain_graph_then_are_released():
    p = _param([1.0, 2.0])
    op = FreshSave()
    y = autograd.sum(op(p) * 2.0)
    saved = weakref.ref(op.saved[0])
    del op
    first = autograd.gradients(y, retain_graph=True)[p].to_numpy().copy()
    assert saved() is not None
    np.testing.assert_array_equal(autograd.gradients(y)[p].data, first)
    gc.collect()
    assert saved() is None


def test_graph_is_freed_when_its_output_is_dropped_without_backward():
    p = _param([1.0, 2.0])
    op = FreshSave()
    y = autograd.sum(op(p))
    saved, op_ref = weakref.ref(op.saved[0]), weakref.ref(op)
    del op, y
    assert op_ref() is None and saved() is None      # no cycle: freed without gc


def test_nothing_is_saved_under_no_grad():
    op = FreshSave()
    with autograd.no_grad():
        y = op(_param([1.0]))
    assert op.saved == () and y.creator is None


def test_nothing_is_saved_with_training_off():
    op = FreshSave()
    autograd.training = False
    try:
        y = op(_param([1.0]))
    finally:
        autograd.training = True
    assert op.saved == () and y.creator is None


def test_nothing_is_saved_when_no_input_needs_a_gradient():
    op = FreshSave()
    op(Tensor(data=[1.0], requires_grad=False))
    assert op.saved == ()


# ---------------------------------------------------------------- gradcheck catches bugs

def test_gradcheck_catches_a_custom_backward_one_percent_off():
    with pytest.raises(autograd.GradcheckError):
        autograd.gradcheck(lambda t: OneOff()(t), [np.array([0.5, 1.0, 2.0])])


def test_array_module_of_numpy_inputs_is_numpy():
    assert get_array_module(np.ones(2)) is np


def test_singa_style_subclass_passing_a_name_to_the_base():
    class Double(autograd.Operator):
        def __init__(self):
            super().__init__("double")

        def forward(self, x):
            return x * 2

        def backward(self, dy):
            return dy * 2

    op = Double()
    assert op.name == "double"
    assert autograd.gradcheck(lambda t: Double()(t), [Tensor(data=[1.0, 2.0])])
