"""Tests for autograd/layers/loss.py: each loss layer gives the value and gradients of its loss
function and of the NumPy formula, and checks its input shapes with errors naming the layer."""
import numpy as np
import pytest

import autograd
from autograd import BinaryCrossEntropy, CrossEntropy, MeanSquareError, SoftMaxCrossEntropy
from autograd import Tensor

rng = np.random.default_rng(0)
LOGITS = rng.standard_normal((4, 3))
PROBABILITIES = np.exp(LOGITS) / np.exp(LOGITS).sum(axis=1, keepdims=True)
LABELS = np.array([0, 2, 1, 2])
ONE_HOT = np.eye(3)[LABELS]
TARGETS = rng.uniform(0, 1, (4, 3))


def _log_softmax(x):
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


CASES = [
    (SoftMaxCrossEntropy, autograd.softmax_cross_entropy, LOGITS, LABELS,
     -_log_softmax(LOGITS)[np.arange(4), LABELS].mean()),
    # SINGA's programs pass integer labels as a column (N, 1) (char_rnn.py)
    (SoftMaxCrossEntropy, autograd.softmax_cross_entropy, LOGITS, LABELS.reshape(4, 1),
     -_log_softmax(LOGITS)[np.arange(4), LABELS].mean()),
    (CrossEntropy, autograd.cross_entropy, PROBABILITIES, LABELS.reshape(4, 1),
     -np.log(PROBABILITIES[np.arange(4), LABELS]).mean()),
    (SoftMaxCrossEntropy, autograd.softmax_cross_entropy, LOGITS, ONE_HOT,
     -(ONE_HOT * _log_softmax(LOGITS)).sum() / 4),
    (CrossEntropy, autograd.cross_entropy, PROBABILITIES, LABELS,
     -np.log(PROBABILITIES[np.arange(4), LABELS]).mean()),
    (MeanSquareError, autograd.mse_loss, LOGITS, TARGETS, ((LOGITS - TARGETS) ** 2).mean()),
    (BinaryCrossEntropy, autograd.binary_cross_entropy, PROBABILITIES, TARGETS,
     -(TARGETS * np.log(PROBABILITIES) + (1 - TARGETS) * np.log(1 - PROBABILITIES)).mean()),
]


@pytest.mark.parametrize("layer_type, function, x, t, formula", CASES)
def test_loss_layer_equals_its_loss_function_and_formula(layer_type, function, x, t, formula):
    through_layer = Tensor(data=x, stores_grad=True)
    through_function = Tensor(data=x, stores_grad=True)
    loss = layer_type()(through_layer, t)
    expected = function(through_function, t)
    assert loss.shape == () == layer_type().output_shape(x.shape, t.shape)
    assert loss.item() == expected.item() == pytest.approx(formula, rel=1e-12)
    np.testing.assert_array_equal(autograd.gradients(loss)[through_layer].to_numpy(),
                                  autograd.gradients(expected)[through_function].to_numpy())


@pytest.mark.parametrize("layer_type, function, x, t, formula", CASES)
def test_loss_layer_gradients_pass_gradcheck(layer_type, function, x, t, formula):
    assert autograd.gradcheck(lambda p: layer_type()(p, t), [x])


def test_loss_layers_take_labels_as_lists_and_float32():
    loss = SoftMaxCrossEntropy()(Tensor(data=LOGITS.astype(np.float32)), [0, 2, 1, 2])
    assert loss.dtype == np.float32
    assert loss.item() == pytest.approx(CASES[0][4], rel=1e-5)


@pytest.mark.parametrize("layer, x_shape, t_shape, message", [
    (SoftMaxCrossEntropy(), (4,), (4,), r"SoftMaxCrossEntropy\(\): expected input logits "
                                        r"\(N, C\), got \(4,\)"),
    (SoftMaxCrossEntropy(), (4, 3), (3,), r"SoftMaxCrossEntropy\(\): expected targets of shape "
                                          r"\(4, 3\) or labels of shape \(4,\) for logits of "
                                          r"shape \(4, 3\), got \(3,\)"),
    (CrossEntropy(), (4, 3, 2), (4,), r"CrossEntropy\(\): expected input probabilities "
                                      r"\(N, C\), got \(4, 3, 2\)"),
    (MeanSquareError(), (4, 3), (4,), r"MeanSquareError\(\): expected targets of the input's "
                                      r"shape \(4, 3\), got \(4,\)"),
    (BinaryCrossEntropy(), (4,), (4, 1), r"BinaryCrossEntropy\(\): expected targets of the "
                                         r"input's shape \(4,\), got \(4, 1\)"),
])
def test_loss_layers_check_shapes_and_name_themselves(layer, x_shape, t_shape, message):
    t = np.zeros(t_shape, dtype=np.int64 if len(t_shape) == 1 and
                 isinstance(layer, (SoftMaxCrossEntropy, CrossEntropy)) else np.float32)
    with pytest.raises(ValueError, match=message):
        layer(Tensor(data=np.full(x_shape, 0.5, np.float32)), t)
