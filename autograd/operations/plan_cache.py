"""The forward plans Operations keep (the plans themselves: backend/forward_plans.py): a call
that records nothing (under ``no_grad``, in
eval passes) runs through its op's plan (``Operation.forward_plan``: the kernel its forward
would call, with the per-call decisions made once) once the plan has given forward's outputs
bit for bit; graph mode's replays use the same check (graph_mode/recorder.py).

In eager mode the plans are kept per op class, settings (``forward_plan_key``), compiled
kernels switch, and the arrays' shapes, strides and dtypes: the first such call runs forward
and checks the plan against it; later ones run the plan. A batch-1 CNN's no_grad forward spent
as long deciding per call (the op's and the backend's Python) as computing (benchmarks/
NOTES.md, twenty-first session).
"""
import numpy as np

from ..backend import native
from ..recording import config

__all__ = []     # used by Operation.__call__ and graph mode

_MOST_PLANS = 4096          # kept (a fixed model has a few per layer); past it, forward runs
_UNSEEN = object()
_plans: dict = {}       # key -> the plan, or None where forward runs


def forward(op, arrays):
    """``op.forward(*arrays)``, for a call that records nothing, through the plan kept for
    these arrays' layouts and op's settings where there is one."""
    settings = op.forward_plan_key()
    if settings is None or config.recorder is not None or config.debug:
        return op.forward(*arrays)
    # written out for one to three arrays: the list and loop of the general case took 0.4 of
    # a batch-1 linear layer's 6 us
    count = len(arrays)
    if count == 1:
        a = arrays[0]
        key = (type(op), settings, native.enabled(), a.shape, a.strides, a.dtype)
    elif count == 3:
        a, b, c = arrays
        key = (type(op), settings, native.enabled(), a.shape, a.strides, a.dtype,
               b.shape, b.strides, b.dtype, c.shape, c.strides, c.dtype)
    elif count == 2:
        a, b = arrays
        key = (type(op), settings, native.enabled(), a.shape, a.strides, a.dtype,
               b.shape, b.strides, b.dtype)
    else:
        parts = [type(op), settings, native.enabled()]
        for a in arrays:
            parts += (a.shape, a.strides, a.dtype)
        key = tuple(parts)
    plan = _plans.get(key, _UNSEEN)
    if plan is _UNSEEN:
        outputs = op.forward(*arrays)
        if len(_plans) < _MOST_PLANS:
            _plans[key] = verified_plan(op, arrays, outputs)
        return outputs
    if plan is None:
        return op.forward(*arrays)
    return plan(*arrays)


def verified_plan(op, arrays, result):
    """``op.forward_plan`` for these arrays where it gives ``result`` (forward's outputs for
    them) again bit for bit: the same shapes, dtypes, strides and bytes; else None."""
    try:
        plan = op.forward_plan(*arrays)
        again = None if plan is None else plan(*arrays)
    except Exception:           # noqa: BLE001 (a plan that fails is not used; forward runs)
        return None
    if plan is None or type(again) is not type(result):
        return None
    pairs = zip(again, result) if type(result) is tuple else ((again, result),)
    for planned, computed in pairs:
        if not (isinstance(planned, np.ndarray) and isinstance(computed, np.ndarray)
                and planned.shape == computed.shape and planned.dtype == computed.dtype
                and planned.strides == computed.strides
                and planned.tobytes() == computed.tobytes()):
            return None
    return plan


def clear():
    """Forget the kept plans (each is made again on its next call)."""
    _plans.clear()
