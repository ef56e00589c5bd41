"""PyTorch's spellings of debug mode: detect_anomaly() and set_detect_anomaly()."""
import numpy as np
import pytest

import autograd
from autograd.graph import config


@pytest.fixture(autouse=True)
def debug_off():
    autograd.set_debug(False)
    yield
    autograd.set_debug(False)


@pytest.mark.filterwarnings("ignore:divide by zero")
def test_detect_anomaly_names_the_op_in_a_backward_and_restores_the_mode():
    x = autograd.Tensor(data=[0.0, 4.0], stores_grad=True)
    with pytest.raises(FloatingPointError, match=r"Sqrt \(created at .*test_anomaly.py.*\): "
                                                 r"backward produced NaN or inf"):
        with autograd.detect_anomaly():
            loss = autograd.sum(autograd.sqrt(x))      # d sqrt(x)/dx at 0 is inf
            list(autograd.backward(loss))
    assert config.debug is False
    # outside the block the same backward runs and yields the inf
    (_, grad), = autograd.backward(autograd.sum(autograd.sqrt(x)))
    assert np.isinf(grad.to_numpy()[0])


def test_detect_anomaly_nested_inside_debug_mode_leaves_it_on():
    autograd.set_debug(True)
    with autograd.detect_anomaly():
        pass
    assert config.debug is True


def test_set_detect_anomaly_is_set_debug():
    autograd.set_detect_anomaly(True)
    assert config.debug is True
    autograd.set_detect_anomaly(False)
    assert config.debug is False
