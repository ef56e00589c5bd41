"""detect_anomaly's mode inside the block, without reading the creating frame (survivors of the
full mutation run: test_anomaly.py's backward test reads the frame that created the op, which
is mutmut's trampoline there, so it is deselected under mutmut and nothing else entered the
block with NaN checks on)."""
import numpy as np
import pytest

import autograd
from autograd.recording import config


@pytest.fixture(autouse=True)
def debug_off():
    autograd.set_debug(False)
    yield
    autograd.set_debug(False)


def test_detect_anomaly_turns_debug_mode_on_by_default_and_raises_on_an_inf():
    # catches check_nan's default False, `bool(None)` and set_debug(None) in __enter__
    x = autograd.Tensor(data=np.array([np.inf], np.float32), stores_grad=True)
    with autograd.detect_anomaly() as block:
        assert block.check_nan is True and config.debug is True
        with pytest.raises(FloatingPointError, match=r"^ReLU .*forward produced NaN or inf"):
            autograd.relu(x)
    assert config.debug is False
    assert np.isinf(autograd.relu(x).to_numpy()[0])          # off again after the block


def test_detect_anomaly_with_check_nan_false_turns_it_off_for_the_block_only():
    autograd.set_debug(True)
    with autograd.detect_anomaly(check_nan=0) as block:
        assert block.check_nan is False and config.debug is False
    assert config.debug is True
