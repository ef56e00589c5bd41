"""recording.py: tests written from its mutants that the suite let through (issue 22). Debug
mode's finiteness check is called directly here, on an op whose creation line is set by hand
(no frame is read, so these hold under mutmut too), and its message is checked word for word."""
import numpy as np
import pytest

from autograd import recording


class Scale:
    """Stands for an Operation: check_finite reads only its class name and created_at."""


def _op(created_at=None):
    op = Scale()
    if created_at is not None:
        op.created_at = created_at
    return op


def test_check_finite_names_the_op_its_line_and_the_phase():
    with pytest.raises(FloatingPointError) as info:
        recording.check_finite(_op("/home/me/train.py:3 in step"),
                               (np.ones(2), np.array([1.0, np.inf])), "backward")
    assert str(info.value) == ("Scale (created at /home/me/train.py:3 in step): backward "
                               "produced NaN or inf")


def test_check_finite_without_a_creation_line_names_the_op_alone():
    for op in (_op(), _op("")):                 # never recorded, or recorded as empty
        with pytest.raises(FloatingPointError) as info:
            recording.check_finite(op, (np.array([np.nan]),), "forward")
        assert str(info.value) == "Scale: forward produced NaN or inf"


def test_check_finite_checks_complex_arrays_and_skips_missing_gradients():
    """A None (an input that takes no gradient) is skipped; complex NaN is caught ("fc")."""
    recording.check_finite(_op(), (None, np.ones(3), np.arange(3), np.array([1 + 2j])), "forward")
    with pytest.raises(FloatingPointError, match=r"\AScale: forward produced NaN or inf\Z"):
        recording.check_finite(_op(), (None, np.array([complex(0.0, np.nan)])), "forward")
    with pytest.raises(FloatingPointError):
        recording.check_finite(_op(), (np.ones(1, np.float32), np.array([np.inf], np.float16)),
                               "forward")


# ---------------------------------------------------------------- graph mode's hooks, outside a capture
def test_a_fresh_config_captures_nothing_and_replayable_runs_the_function(monkeypatch):
    """A new _Config holds no recorder (mutant `recorder = ""`, which a replayable function
    then read as a capture in progress and failed on)."""
    fresh = recording._Config()
    assert fresh.recorder is None and fresh.debug is False and fresh.no_thread_in_no_grad
    monkeypatch.setattr(recording, "config", fresh)

    @recording.replayable
    def clip(values, bound=1.0):
        return np.minimum(values, bound)

    np.testing.assert_array_equal(clip(np.array([0.5, 3.0])), [0.5, 1.0])
    assert clip.__name__ == "clip"


def test_not_replayable_outside_a_capture_does_nothing(monkeypatch):
    """No recorder: nothing to refuse (mutant `or`, which read the depth of None)."""
    monkeypatch.setattr(recording, "config", recording._Config())
    assert recording.not_replayable("a shape that depends on values") is None


def test_not_replayable_inside_a_nested_call_of_a_capture_does_nothing(monkeypatch):
    """A recorder at depth > 0 (inside a replayable call) is not refused; at depth 0 it is,
    with the reason in graph mode's words."""
    class Recorder:
        def __init__(self, depth):
            self.depth, self.refused = depth, []

        def refuse(self, reason):
            self.refused.append(reason)

    config = recording._Config()
    monkeypatch.setattr(recording, "config", config)
    config.recorder = Recorder(depth=1)
    recording.not_replayable("nonzero")
    assert config.recorder.refused == []
    config.recorder = Recorder(depth=0)
    recording.not_replayable("nonzero")
    assert config.recorder.refused == ["graph mode: nonzero; a replay would keep the captured "
                                       "shape"]
