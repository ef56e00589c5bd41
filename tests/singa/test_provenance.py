"""What the hook notes for sonnx.to_onnx (autograd/singa/provenance.py): freed outputs do not
pile up, intermediate arrays are not held, and uninstall restores Operation.__call__."""
import gc
import weakref

import numpy as np

import autograd
import autograd.singa
from autograd.operations.base import Operation
from autograd.singa import provenance


def test_freed_outputs_are_swept_and_activations_not_held():
    original = Operation.__dict__["__call__"]
    autograd.singa.install()
    try:
        x = autograd.Tensor(data=np.ones((4, 4), np.float32))
        outputs = [autograd.relu(x) for _ in range(3000)]
        assert len(provenance._made) >= 3000
        del outputs
        gc.collect()
        sweep_at = provenance._sweep_at[0]
        assert sweep_at >= 4096                 # the table doubled past its live entries
        provenance._sweep_at[0] = 0             # the next call sweeps, as at the doubling
        autograd.relu(x)
        assert len(provenance._made) <= 10 and provenance._sweep_at[0] == 1024
        hidden = autograd.relu(x)
        reference = weakref.ref(hidden)
        y = autograd.tanh(hidden)
        del hidden
        gc.collect()
        assert reference() is None                  # y's record does not keep its input alive
        calls, _ = provenance.calls_between([x], [y])
        assert [type(op).__name__ for op, _, _ in calls] == ["ReLU", "Tanh"]
    finally:
        autograd.singa.uninstall()
    assert Operation.__dict__["__call__"] is original and not provenance._made
