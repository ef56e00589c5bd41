"""Losses on the paths the op table (test_loss.py) does not take, found by mutation testing
(docs/testing.md, issue 22): the elementwise losses' messages word for word, targets that are
not Tensors, and the clamped logs of binary_cross_entropy without a NumPy warning."""
import re
import warnings

import numpy as np
import pytest

import autograd
from autograd import Tensor
from tests.foreign_device import ForeignArray

ELEMENTWISE = [(autograd.mse_loss, "input"), (autograd.binary_cross_entropy, "probabilities"),
               (autograd.binary_cross_entropy_with_logits, "logits")]


@pytest.mark.parametrize("fn,what", ELEMENTWISE, ids=lambda v: getattr(v, "__name__", v))
def test_elementwise_shape_message_names_what_the_input_is(fn, what):
    """The noun of each loss's input ("logits" mutated to None or "XXlogitsXX" survived: the
    old test matched it with `.*`)."""
    message = (f"{fn.__name__}: {what} has shape (3, 2) but targets have shape (3,); they "
               "must match")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        fn(Tensor(data=np.full((3, 2), 0.5, np.float32)), Tensor(data=np.zeros(3, np.float32)))


def _elementwise_references(x, t):
    sig = 1 / (1 + np.exp(-x))
    return {
        autograd.mse_loss: np.mean((x - t) ** 2),
        autograd.binary_cross_entropy: -np.mean(t * np.log(x) + (1 - t) * np.log(1 - x)),
        autograd.binary_cross_entropy_with_logits:
            -np.mean(t * np.log(sig) + (1 - t) * np.log(1 - sig)),
    }


@pytest.mark.parametrize("fn", [f for f, _ in ELEMENTWISE], ids=lambda f: f.__name__)
@pytest.mark.parametrize("kind", ["list", "float64_array", "int_array", "bool_array"])
def test_elementwise_losses_take_targets_that_are_not_tensors(fn, kind):
    """A list or array target is converted like x (`_target_operand(t, None, ...)` survived:
    every elementwise test passed Tensors). Lists of floats take x's dtype, integer and bool
    arrays become x's floating dtype."""
    x_values = np.array([[0.25, 0.75], [0.5, 0.125]])
    t_values = np.array([[0.0, 1.0], [1.0, 0.0]])
    target = {"list": t_values.tolist(), "float64_array": t_values,
              "int_array": t_values.astype(np.int64), "bool_array": t_values.astype(bool)}[kind]
    x = Tensor(data=x_values, dtype=np.float64, stores_grad=True)
    loss = fn(x, target)
    assert loss.dtype == np.float64
    np.testing.assert_allclose(loss.item(), _elementwise_references(x_values, t_values)[fn],
                               rtol=1e-12)
    assert list(autograd.gradients(loss)) == [x]


def test_float32_input_with_a_list_of_floats_stays_float32():
    x = Tensor(data=np.array([0.25, 0.5], np.float32), stores_grad=True)
    loss = autograd.mse_loss(x, [0.0, 1.0])
    assert loss.dtype == np.float32
    np.testing.assert_allclose(loss.item(), (0.25 ** 2 + 0.5 ** 2) / 2, rtol=1e-6)


def test_binary_cross_entropy_at_zero_and_one_raises_no_numpy_warning():
    """log(0) in the clamped forward is silenced (`ignore_float_warnings(None)`, which is a
    no-op context, survived): p of exactly 0 and 1 must not warn, and give the clamped loss
    and the 1e-12-clamped gradient."""
    p_values = np.array([0.0, 1.0, 0.0, 1.0])
    t_values = np.array([0.0, 1.0, 1.0, 0.0])
    p = Tensor(data=p_values, stores_grad=True)
    t = Tensor(data=t_values, stores_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = autograd.binary_cross_entropy(p, t)
        grads = autograd.gradients(loss)
    # the two wrong answers each cost the clamped -log 0 = 100; the right ones log 1 = 0
    assert loss.item() == pytest.approx(200.0 / 4, rel=1e-12)
    np.testing.assert_allclose(grads[p].to_numpy(), (p_values - t_values) / 1e-12 / 4,
                               rtol=1e-12)
    # dt = (log(1 - p) - log p) / size with both logs clamped at -100
    np.testing.assert_allclose(grads[t].to_numpy(), [100 / 4, -100 / 4, 100 / 4, -100 / 4],
                               rtol=1e-12)


@pytest.mark.parametrize("fn", [f for f, _ in ELEMENTWISE], ids=lambda f: f.__name__)
@pytest.mark.parametrize("target", [np.array([[False, True], [True, False]]),
                                    np.array([[0, 1], [1, 0]], np.int32)], ids=["bool", "int"])
def test_float32_input_with_bool_or_int_targets_stays_float32(fn, target):
    """Bool and integer targets take x's dtype (`astype(None)`, float64, survived: it is the
    same as x's dtype for the float64 inputs of the test above; with float32 x it would mix
    float32 with float64 and be refused)."""
    x_values = np.array([[0.25, 0.75], [0.5, 0.125]], np.float32)
    loss = fn(Tensor(data=x_values), target)
    assert loss.dtype == np.float32
    reference = _elementwise_references(x_values.astype(np.float64), target.astype(np.float64))
    np.testing.assert_allclose(loss.item(), reference[fn], rtol=1e-6)


def test_a_numpy_float_scalar_target_acts_as_the_number_it_holds():
    """A NumPy scalar target is a number, as in PyTorch: it takes x's dtype (it was refused as
    an array 'to move', though nothing was anywhere else)."""
    loss = autograd.mse_loss(Tensor(data=np.float32(0.25)), np.float64(0.5))
    assert loss.dtype == np.float32
    assert loss.item() == np.float32(0.0625)


def test_a_target_array_of_another_kind_is_refused_naming_the_loss():
    """`as_tensor_like(t, x, None)` in `_target_operand` survived: a floating array that is
    not the Tensor's kind of array is refused there, and the message starts with the loss."""
    with pytest.raises(TypeError, match=r"^mse_loss: a tests\.foreign_device\.ForeignArray "
                                        r"cannot be combined with a Tensor on cpu"):
        autograd.mse_loss(Tensor(data=np.float32(0.25)),
                          np.float32(0.5).reshape(1).view(ForeignArray))


@pytest.mark.parametrize("fn", [f for f, _ in ELEMENTWISE], ids=lambda f: f.__name__)
@pytest.mark.parametrize("target,dtype", [(np.array([1 + 2j, 0j]), "complex128"),
                                          (np.array(["a", "b"]), "<U1")])
def test_elementwise_target_of_another_kind_is_refused_by_name(fn, target, dtype):
    """`_target_operand(t, x, None)` in `_same_shape_operands` survived: the message must name
    the loss."""
    message = f"{fn.__name__}: expected floating targets or integer labels, got dtype {dtype}"
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        fn(Tensor(data=[0.25, 0.5]), target)


# ---------------------------------------------------------------- classification, exactly

CLASSIFICATION = [(autograd.softmax_cross_entropy, "logits"),
                  (autograd.cross_entropy, "probabilities"),
                  (autograd.nll_loss, "log-probabilities")]
X43 = np.full((4, 3), 0.25, np.float32)


def _raises(error, message, fn, *args):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        fn(*args)


@pytest.mark.parametrize("fn,what", CLASSIFICATION, ids=lambda v: getattr(v, "__name__", v))
def test_classification_messages_word_for_word(fn, what):
    """Each message names the loss, what its input is, and both shapes (test_loss.py matches
    them with `.*`, so a wrong noun or shape in the middle went unseen)."""
    name, x = fn.__name__, Tensor(data=X43)
    _raises(ValueError, f"{name}: expected integer labels of shape (4,) for {what} of shape "
            "(4, 3), got labels of shape (5,)", fn, x, np.zeros(5, np.int64))
    _raises(TypeError, f"{name}: labels of shape (4,) must be integers, got float32 (cast "
            f"them: labels.astype(int)); floating targets must have the {what}' shape (4, 3)",
            fn, x, np.zeros(4, np.float32))
    _raises(ValueError, f"{name}: expected targets of shape (4, 3) like the {what}, or integer "
            "labels of shape (4,), got (4, 2) (float32)", fn, x, np.zeros((4, 2), np.float32))
    _raises(ValueError, f"{name}: expected {what} of shape (N, C), got (2, 3, 4)",
            fn, Tensor(data=np.zeros((2, 3, 4), np.float32)), np.zeros(2, np.int64))
    _raises(ValueError, f"{name}: expected a non-empty batch, got {what} of shape (0, 3)",
            fn, Tensor(data=np.zeros((0, 3), np.float32)), np.zeros(0, np.int64))
    _raises(ValueError, f"{name}: expected a non-empty batch, got {what} of shape (2, 0)",
            fn, Tensor(data=np.zeros((2, 0), np.float32)), np.zeros(2, np.int64))
    _raises(TypeError, f"{name}: expected {what} as a Tensor, got ndarray", fn, X43,
            np.zeros(4, np.int64))
    _raises(TypeError, f"{name}: expected floating {what}, got dtype int64",
            fn, Tensor(data=np.zeros((4, 3), np.int64)), np.zeros(4, np.int64))
    _raises(TypeError, f"{name}: expected floating targets or integer labels, got dtype "
            "complex128", fn, x, np.zeros((4, 3), np.complex128))


@pytest.mark.parametrize("fn", [f for f, _ in CLASSIFICATION], ids=lambda f: f.__name__)
@pytest.mark.parametrize("as_tensor", [False, True])
def test_out_of_range_label_in_a_column_is_named(fn, as_tensor):
    """SINGA's (N, 1) column of labels is checked like (N,) labels, host or Tensor."""
    labels = np.array([[0], [2], [5], [-1]])
    labels = Tensor(data=labels) if as_tensor else labels
    _raises(ValueError, f"{fn.__name__}: label 5 is outside [0, 3) for 3 classes", fn,
            Tensor(data=X43), labels)



def test_cross_entropy_target_gradient_is_minus_log_p_also_where_the_target_is_zero():
    """A bug this file found: dt was 0 wherever t = 0, while the loss -sum(t log p) / N is
    linear in t with slope -log p / N there too (p > 0). Compared with central differences."""
    p_values = np.array([[0.125, 0.25, 0.625], [0.5, 0.5, 0.0 + 1e-3]])
    t_values = np.array([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
    t = Tensor(data=t_values, stores_grad=True)
    loss = autograd.cross_entropy(Tensor(data=p_values), t)
    dt = autograd.gradients(loss)[t].to_numpy()

    def loss_at(targets):
        return autograd.cross_entropy(Tensor(data=p_values), Tensor(data=targets)).item()

    h = 1e-6
    numeric = np.zeros_like(t_values)
    for index in np.ndindex(t_values.shape):
        step = np.zeros_like(t_values)
        step[index] = h
        numeric[index] = (loss_at(t_values + step) - loss_at(t_values - step)) / (2 * h)
    np.testing.assert_allclose(dt, numeric, rtol=1e-6)
    np.testing.assert_allclose(dt, -np.log(p_values) / 2, rtol=1e-12)


def test_cross_entropy_with_zero_probabilities_where_the_target_is_zero():
    """0 log 0 counts as 0: a class with p = 0 and no target weight adds nothing to the loss
    or the gradient, and NumPy's log(0) / 0-division warnings stay silenced."""
    p_values = np.array([[0.0, 0.25, 0.75], [0.5, 0.5, 0.0]])
    t_values = np.array([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
    p = Tensor(data=p_values, stores_grad=True)
    t = Tensor(data=t_values, stores_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = autograd.cross_entropy(p, t)
        grads = autograd.gradients(loss)
    expected = -(0.5 * np.log(0.25) + 0.5 * np.log(0.75) + np.log(0.5)) / 2
    assert loss.item() == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(grads[p].to_numpy(),
                               [[0.0, -0.5 / 0.25 / 2, -0.5 / 0.75 / 2], [-1 / 0.5 / 2, 0, 0]],
                               rtol=1e-12)
    # dt = -log p / N: +inf where p = 0 (the loss is infinite for any t > 0 there)
    np.testing.assert_allclose(grads[t].to_numpy(),
                               [[np.inf, -np.log(0.25) / 2, -np.log(0.75) / 2],
                                [-np.log(0.5) / 2, -np.log(0.5) / 2, np.inf]], rtol=1e-12)
