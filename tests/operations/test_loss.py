"""Losses: forward against NumPy formulas, float64 gradcheck with random dy, float32 kept
(tests/opcase.py), with labels as int Tensors, int NumPy arrays and one-hot targets; label-range
and shape errors; stability for huge logits."""
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, integers, check_case


def log_softmax_reference(x):
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


def one_hot(labels, classes):
    return np.eye(classes)[labels]


def picked(values, labels):
    return np.array([values[i, c] for i, c in enumerate(labels)])


def with_numpy_labels(fn):
    """fn taking labels as an int NumPy array instead of an int Tensor."""
    return lambda x, t: fn(x, t.to_numpy())


def with_one_hot(fn):
    """fn taking one-hot float targets built from the int labels."""
    def call(x, t):
        target = one_hot(t.to_numpy(), x.shape[1]).astype(x.dtype)
        return fn(x, Tensor(data=target, requires_grad=False))
    return call


LABEL_REFERENCES = {
    autograd.softmax_cross_entropy: lambda x, t: -np.mean(picked(log_softmax_reference(x), t)),
    autograd.cross_entropy: lambda p, t: -np.mean(np.log(picked(p, t))),
    autograd.nll_loss: lambda logp, t: -np.mean(picked(logp, t)),
}
SOFT_REFERENCES = {
    autograd.softmax_cross_entropy: lambda x, t: -np.sum(t * log_softmax_reference(x)) / len(x),
    autograd.cross_entropy: lambda p, t: -np.sum(t * np.log(p)) / len(p),
    autograd.nll_loss: lambda logp, t: -np.sum(t * logp) / len(logp),
}
FIRST_INPUT = {
    autograd.softmax_cross_entropy: floats(-3, 3),
    autograd.cross_entropy: floats(0.05, 1.0),
    autograd.nll_loss: floats(-4, -0.1),
}


def _classification_cases():
    cases = []
    for fn, first in FIRST_INPUT.items():
        name = fn.__name__
        label_reference = LABEL_REFERENCES[fn]
        for shape in [(5, 3), (1, 4), (3, 1)]:
            n, classes = shape
            first_fixed = floats(first.low, first.high, shape=shape)
            labels = integers(0, classes, shape=(n,))
            tag = f"{name}_{n}x{classes}"
            cases += [
                OpCase(fn, label_reference, [first_fixed, labels], shape=shape,
                       name=f"{tag}_int_tensor_labels"),
                OpCase(with_numpy_labels(fn), label_reference, [first_fixed, labels],
                       shape=shape, name=f"{tag}_numpy_labels"),
                OpCase(with_one_hot(fn), label_reference, [first_fixed, labels], shape=shape,
                       name=f"{tag}_one_hot"),
                # soft targets that also require a gradient: dt is checked too
                OpCase(fn, SOFT_REFERENCES[fn], [first_fixed, floats(0, 1, shape=shape)],
                       shape=shape, name=f"{tag}_soft_targets"),
            ]
    return cases


ELEMENTWISE_CASES = [
    OpCase(autograd.binary_cross_entropy,
           lambda p, t: -np.mean(t * np.log(p) + (1 - t) * np.log(1 - p)),
           [floats(0.05, 0.95), floats(0, 1, requires_grad=False)]),
    OpCase(autograd.binary_cross_entropy,
           lambda p, t: -np.mean(t * np.log(p) + (1 - t) * np.log(1 - p)),
           [floats(0.05, 0.95), floats(0, 1)], name="binary_cross_entropy_target_grad"),
    OpCase(autograd.binary_cross_entropy_with_logits,
           lambda x, t: -np.mean(t * np.log(1 / (1 + np.exp(-x)))
                                 + (1 - t) * np.log(1 - 1 / (1 + np.exp(-x)))),
           [floats(-4, 4), floats(0, 1)]),
    OpCase(autograd.mse_loss, lambda x, t: np.mean((x - t) ** 2), [floats(), floats()]),
    OpCase(autograd.mse_loss, lambda x, t: np.mean((x - t) ** 2),
           [floats(), floats(requires_grad=False)], name="mse_loss_constant_target"),
]


CASES = _classification_cases() + ELEMENTWISE_CASES


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)


# ---------------------------------------------------------------- the fused gradient

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_cross_entropy_gradient_is_softmax_minus_one_hot_over_n(dtype):
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(4, 5)).astype(dtype)
    labels = np.array([0, 4, 2, 2])
    x = Tensor(data=logits, stores_grad=True)
    loss = autograd.softmax_cross_entropy(x, labels)
    (grad,) = [g for _, g in autograd.backward(loss, np.array(2.5, dtype))]
    softmax = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    expected = (softmax - one_hot(labels, 5)) / 4 * 2.5
    assert loss.dtype == dtype and loss.shape == () and grad.dtype == dtype
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(grad.to_numpy(), expected, rtol=rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("targets", ["labels", "one_hot"])
def test_huge_logits_give_finite_loss_and_gradients(dtype, targets):
    logits = np.array([[1000.0, 0.0, -1000.0], [0.0, 1000.0, 0.0], [-1000.0, -1000.0, 1000.0]],
                      dtype)
    labels = np.array([1, 1, 0])
    t = labels if targets == "labels" else one_hot(labels, 3).astype(dtype)
    x = Tensor(data=logits, stores_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            loss = autograd.softmax_cross_entropy(x, t)
            grad = autograd.gradients(loss)[x].to_numpy()
    np.testing.assert_allclose(loss.item(), (1000.0 + 0.0 + 2000.0) / 3, rtol=1e-6)
    expected = (np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1]]) - one_hot(labels, 3)) / 3
    np.testing.assert_allclose(grad, expected, atol=1e-7)
    assert grad.dtype == dtype


def test_binary_cross_entropy_is_finite_at_the_extremes():
    x = Tensor(data=[1000.0, -1000.0, 1000.0], stores_grad=True)
    t = Tensor(data=[1.0, 0.0, 0.0], requires_grad=False)
    loss = autograd.binary_cross_entropy_with_logits(x, t)
    np.testing.assert_allclose(loss.item(), 1000.0 / 3, rtol=1e-6)
    np.testing.assert_allclose(autograd.gradients(loss)[x].to_numpy(), [0, 0, 1 / 3], atol=1e-7)
    p = Tensor(data=[1.0, 0.0, 1.0], stores_grad=True)
    loss = autograd.binary_cross_entropy(p, t)
    np.testing.assert_allclose(loss.item(), 100.0 / 3, rtol=1e-6)   # log 0 clamped at -100
    assert np.isfinite(autograd.gradients(loss)[p].to_numpy()).all()


def test_constant_targets_take_no_gradient_but_float_targets_that_want_one_do():
    x = Tensor(data=[[1.0, 2.0]], stores_grad=True)
    t = Tensor(data=[[0.5, -1.0]], requires_grad=False)
    assert list(autograd.gradients(autograd.mse_loss(x, t))) == [x]
    t = Tensor(data=[[0.5, -1.0]], stores_grad=True)
    grads = autograd.gradients(autograd.mse_loss(x, t))
    np.testing.assert_allclose(grads[x].to_numpy(), [[0.5, 3.0]])
    np.testing.assert_allclose(grads[t].to_numpy(), [[-0.5, -3.0]])


def test_targets_as_lists_and_int32_labels():
    x = Tensor(data=[[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    expected = -np.mean(picked(log_softmax_reference(x.to_numpy().astype(np.float64)), [2, 0]))
    for t in ([2, 0], np.array([2, 0], np.int32), Tensor(data=np.array([2, 0], np.uint8)),
              [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]):
        loss = autograd.softmax_cross_entropy(x, t)
        assert loss.dtype == np.float32
        np.testing.assert_allclose(loss.item(), expected, rtol=1e-6)


def test_mse_loss_of_the_issue_example():
    w = Tensor(data=np.full((2, 3), 0.5, np.float32), stores_grad=True)
    x = Tensor(data=np.array([[1.0, -2.0], [3.0, 0.5]], np.float32), requires_grad=False)
    y = autograd.relu(autograd.matmul(x, w))
    loss = autograd.mse_loss(y, Tensor(data=np.zeros((2, 3), np.float32)))
    y_ = np.maximum(x.to_numpy() @ w.to_numpy(), 0)
    np.testing.assert_allclose(loss.item(), np.mean(y_ ** 2), rtol=1e-6)
    expected = x.to_numpy().T @ (2 * y_ / y_.size * (y_ > 0))
    np.testing.assert_allclose(autograd.gradients(loss)[w].to_numpy(), expected, rtol=1e-6)


# ---------------------------------------------------------------- errors

CLASSIFICATION = [autograd.softmax_cross_entropy, autograd.cross_entropy, autograd.nll_loss]


@pytest.mark.parametrize("fn", CLASSIFICATION, ids=lambda f: f.__name__)
@pytest.mark.parametrize("bad", [-1, 3, 7])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_labels_outside_the_classes_are_value_errors(fn, bad, as_tensor):
    x = Tensor(data=np.full((2, 3), 0.5, np.float32), stores_grad=True)
    labels = np.array([0, bad])
    labels = Tensor(data=labels) if as_tensor else labels
    with pytest.raises(ValueError, match=rf"{fn.__name__}: label {bad} is outside \[0, 3\) "
                                         r"for 3 classes"):
        fn(x, labels)


@pytest.mark.parametrize("fn", CLASSIFICATION, ids=lambda f: f.__name__)
def test_wrong_shapes_name_both_shapes(fn):
    name = fn.__name__
    x = Tensor(data=np.full((4, 3), 0.5, np.float32))
    with pytest.raises(ValueError, match=rf"{name}: expected integer labels of shape \(4,\) "
                                         r".*\(4, 3\), got labels of shape \(5,\)"):
        fn(x, np.zeros(5, np.int64))
    with pytest.raises(ValueError, match=rf"{name}: expected integer labels of shape \(4,\) "
                                         r".*\(4, 3\), got labels of shape \(1, 4\)"):
        fn(x, np.zeros((1, 4), np.int64))
    with pytest.raises(ValueError, match=rf"{name}: expected targets of shape \(4, 3\).*"
                                         r"got \(4, 2\)"):
        fn(x, np.zeros((4, 2), np.float32))
    with pytest.raises(TypeError, match=rf"{name}: labels of shape \(4,\) must be integers, "
                                        r"got float32"):
        fn(x, np.zeros(4, np.float32))
    with pytest.raises(ValueError, match=rf"{name}: expected .* of shape \(N, C\), "
                                         r"got \(2, 3, 4\)"):
        fn(Tensor(shape=(2, 3, 4)), np.zeros(2, np.int64))
    with pytest.raises(ValueError, match=rf"{name}: expected a non-empty batch"):
        fn(Tensor(shape=(0, 3)), np.zeros(0, np.int64))


@pytest.mark.parametrize("fn", [autograd.mse_loss, autograd.binary_cross_entropy,
                                autograd.binary_cross_entropy_with_logits],
                         ids=lambda f: f.__name__)
def test_elementwise_losses_need_matching_shapes(fn):
    with pytest.raises(ValueError, match=rf"{fn.__name__}: .* has shape \(3, 2\) but targets "
                                         r"have shape \(3,\)"):
        fn(Tensor(data=np.full((3, 2), 0.5, np.float32)), Tensor(data=np.zeros(3, np.float32)))


def test_float64_targets_with_float32_logits_are_a_type_error():
    x = Tensor(data=np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match="float32.*float64"):
        autograd.softmax_cross_entropy(x, np.eye(3)[[0, 1]])


def test_inputs_must_be_floating_tensors():
    with pytest.raises(TypeError, match="softmax_cross_entropy: expected logits as a Tensor"):
        autograd.softmax_cross_entropy(np.zeros((2, 3)), np.array([0, 1]))
    with pytest.raises(TypeError, match="mse_loss: expected floating input, got dtype int64"):
        autograd.mse_loss(Tensor(data=np.array([1, 2])), Tensor(data=[1.0, 2.0]))


@pytest.mark.parametrize("fn", CLASSIFICATION, ids=lambda f: f.__name__)
@pytest.mark.parametrize("as_tensor", [False, True])
def test_singa_label_column_and_integer_one_hot(fn, as_tensor):
    # SINGA drivers feed labels as an (N, 1) column and one-hot targets as int32 (N, C).
    rng = np.random.default_rng(0)
    x = Tensor(data=rng.random((5, 3), dtype=np.float32))
    labels = np.array([0, 2, 1, 1, 0])
    reference = fn(x, labels).item()
    for target in (labels[:, None].astype(np.int32), np.eye(3, dtype=np.int32)[labels]):
        target = Tensor(data=target) if as_tensor else target
        assert fn(x, target).item() == pytest.approx(reference, rel=1e-6)


def test_loss_messages_name_what_is_empty():
    empty = Tensor(data=np.zeros((0,)))
    with pytest.raises(ValueError, match=r"^binary_cross_entropy: expected a non-empty "
                                         r"probabilities, got shape \(0,\)$"):
        autograd.binary_cross_entropy(empty, empty)
    with pytest.raises(ValueError, match=r"^mse_loss: expected a non-empty input, got shape "
                                         r"\(0,\)$"):
        autograd.mse_loss(empty, empty)
