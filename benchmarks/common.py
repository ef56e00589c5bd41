"""What every workload module shares: the Bench record, resolving autograd's pieces, and the
float32 check.

A workload module defines ``NAME``, ``DESCRIPTION``, ``UNIT`` (``"ms"`` per step or ``"us"`` per
recorded op), ``sizes(quick)`` and three builders, ``build_autograd(size)``, ``build_floor(size)``
and ``build_torch(size, torch)``, each returning a :class:`Bench` whose ``step()`` is one timed
unit of work with all inputs prepared beforehand.
"""
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

import numpy as np

__all__ = ["Bench", "Missing", "require", "float32_problems", "random_state", "as_numpy",
           "named_gradients", "forward_backward_bench"]


class Missing(Exception):
    """autograd does not (yet) provide a piece that a workload needs; the message names it."""


@dataclass
class Bench:
    """One implementation of one workload, ready to time.

    ``step``         runs one unit of work (one training step, one forward+backward, one chain);
    ``ops_per_step`` what a step's time is divided by (recorded ops for the tape workload);
    ``check``        autograd only: runs one step and returns a list of the values that are not
                     float32 (empty when the loss and every gradient kept float32);
    ``outcome``      what the last step computed, as NumPy arrays by name (updated parameters,
                     or gradients): the tests check that all implementations agree.
    """
    step: Callable[[], object]
    ops_per_step: int = 1
    check: Optional[Callable[[], List[str]]] = None
    outcome: Optional[Callable[[], Dict[str, np.ndarray]]] = None


def require(*names):
    """The named public functions of ``autograd``, or :class:`Missing` naming those absent."""
    import autograd
    absent = [name for name in names if not hasattr(autograd, name)]
    if absent:
        raise Missing(", ".join(absent))
    return tuple(getattr(autograd, name) for name in names)


def float32_problems(outputs, pairs, params=()):
    """Descriptions of every array among ``outputs`` (name -> Tensor), the gradients of
    ``pairs`` ((param, grad) from autograd.backward) and ``params`` (name -> Tensor, checked
    after the update) that is not float32; also flags a parameter that received no gradient."""
    problems = []
    for name, tensor in outputs.items():
        if tensor.data.dtype != np.float32:
            problems.append(f"output {name} is {tensor.data.dtype}")
    names = {id(p): name for name, p in params.items()} if params else {}
    seen = set()
    for index, (param, grad) in enumerate(pairs):
        seen.add(id(param))
        label = names.get(id(param), f"parameter #{index}")
        if grad.data.dtype != np.float32:
            problems.append(f"gradient of {label} is {grad.data.dtype}")
    for name, param in (params.items() if params else ()):
        if id(param) not in seen:
            problems.append(f"{name} received no gradient")
        if param.data.dtype != np.float32:
            problems.append(f"parameter {name} became {param.data.dtype}")
    return problems


def random_state(seed=0):
    """One seeded generator per builder, so every implementation sees the same data."""
    return np.random.default_rng(seed)


def as_numpy(value):
    """A NumPy copy of an autograd Tensor, a torch tensor or an array (for ``outcome``)."""
    if hasattr(value, "to_numpy"):           # autograd (checked first: it has detach() too)
        return np.array(value.to_numpy())
    if hasattr(value, "detach"):             # torch
        return value.detach().numpy().copy()
    return np.array(value)


def named_gradients(pairs, params):
    """{name: gradient as NumPy} for the (param, grad) pairs of autograd.backward."""
    names = {id(p): name for name, p in params.items()}
    return {names[id(p)]: as_numpy(g) for p, g in pairs if id(p) in names}


def forward_backward_bench(forward, dy, params, backward):
    """The autograd Bench of a forward+backward workload: a step is ``y = forward()`` and the
    walk of ``backward(y, dy)``; checked for float32, compared by y and the gradients of
    ``params`` (name -> Tensor)."""
    last = {}

    def run():
        y = forward()
        last["y"], last["pairs"] = y, list(backward(y, dy))
        return y, last["pairs"]

    def check():
        y, pairs = run()
        return float32_problems({"y": y}, pairs, params)

    def outcome():
        return {"y": as_numpy(last["y"]), **named_gradients(last["pairs"], params)}

    return Bench(step=run, check=check, outcome=outcome)


def plain_sgd(pairs, learning_rate):
    """``p -= learning_rate * g`` in place for each (param, grad) pair: the update of the
    workloads' autograd steps (PyTorch's side does the same under no_grad, by ``p.add_(g,
    alpha=-lr)``: one fused pass, as the backend's ``axpy`` where autograd has it)."""
    try:
        from autograd.backend import kernels_for
    except ImportError:
        kernels_for = None
    for param, grad in pairs:
        kernels = kernels_for(param.data) if kernels_for is not None else None
        if hasattr(kernels, "axpy"):
            kernels.axpy(-learning_rate, grad.data, param.data)
        else:
            param.data -= learning_rate * grad.data


def replayable_sgd():
    """:func:`plain_sgd`, marked ``autograd.replayable`` where autograd has graph mode, so that
    a captured step replays the update (an update on ``.data`` is otherwise refused)."""
    import autograd
    mark = getattr(autograd, "replayable", None)
    return plain_sgd if mark is None else mark(plain_sgd)
