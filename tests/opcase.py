"""The shared op-test helper: one declarative ``OpCase`` line per op.

``check_case(case, data)`` (inside a hypothesis test given ``st.data()``) draws a shape and
values, and a storage layout for each input and for the upstream gradient dy, then checks
  1. forward against the NumPy reference written in the test (float64), with every input and
     dy in C order, then batch-last (4-D inputs) and strided; the gradients (one random dy)
     in each layout equal those in C order,
  2. gradients with ``autograd.gradcheck`` (float64 finite differences, random upstream dy),
     inputs and dy in the drawn layouts,
  3. dtypes: float32 inputs give float32 outputs and float32 gradients (drawn layouts).

Layouts (``LAYOUTS``): an op must not assume C order (DESIGN.md), so inputs reach the op as
C order, batch-last (an (N, C, H, W) view of a C-contiguous (C, H, W, N) array, as conv2d
returns images), reversed axes (Fortran order), or strided (a view with gaps and a negative
step into a NaN-filled reversed-axes buffer). The layouts are drawn inside the existing
examples, as Chainer parametrizes contiguity, and the sweep in 1 costs one forward and backward
per layout, so every example sees every layout for about 1.5x the harness's former time.
An identity op (``_StoredAs``) lays the arrays out between the tensors and the op (Tensor()
and gradcheck copy their inputs, which would compact them), and its backward hands the op
under test a dy in the drawn layout. tests/test_opcase.py checks that the op receives them.

Values come from a NumPy generator seeded by hypothesis, not from hypothesis' float strategy,
so they are spread evenly in [low, high) and can be kept away from kinks (``avoid``) where a
finite difference would straddle a non-differentiable point.
"""
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np
from hypothesis import strategies as st

import autograd
from autograd import Operation, Tensor
from tests.layouts import stored_batch_last


@dataclass
class Floats:
    """A floating input: values in [low, high), optional fixed shape or broadcast variant."""
    low: float = -2.0
    high: float = 2.0
    shape: Optional[tuple] = None       # fixed shape; None = the case's drawn shape
    broadcast: bool = False             # draw a shape that broadcasts against the case's
    avoid: Sequence[float] = ()         # keep values at least `margin` away from these
    margin: float = 1e-2
    requires_grad: bool = True          # False: passed as a constant and not gradchecked
    distinct: bool = False              # no two values within `margin` (for max/min/sort)


@dataclass
class Integers:
    """An integer input (labels, indices): values in [low, high)."""
    low: int = 0
    high: int = 3
    shape: Optional[tuple] = None


def floats(low=-2.0, high=2.0, **options):
    return Floats(low, high, **options)


def integers(low=0, high=3, shape=None):
    return Integers(low, high, shape)


@dataclass
class OpCase:
    fn: Callable                          # takes Tensors (and kwargs), returns a Tensor
    reference: Callable                   # the same on float64 NumPy arrays
    inputs: list
    kwargs: dict = field(default_factory=dict)
    name: Optional[str] = None
    min_dims: int = 0
    max_dims: int = 3
    min_side: int = 1
    max_side: int = 4
    shape: Optional[tuple] = None         # one fixed shape for the whole case
    rtol: float = 1e-6                    # forward tolerance in float64
    atol: float = 1e-8
    grad: bool = True
    float32_rtol: float = 1e-4

    def __str__(self):
        return self.name or getattr(self.fn, "__name__", "op")


def _broadcast_variant(shape, rng):
    """A shape that broadcasts against ``shape``: some leading axes dropped, some set to 1."""
    drop = rng.integers(0, len(shape) + 1)
    variant = [1 if rng.random() < 0.5 else n for n in shape[drop:]]
    return tuple(variant)


def _values(spec, shape, rng):
    if isinstance(spec, Integers):
        return rng.integers(spec.low, spec.high, size=shape)
    if spec.distinct:
        count = int(np.prod(shape))
        grid = np.linspace(spec.low, spec.high, num=max(count, 1) * 4 + 1)[:-1]
        values = rng.permutation(grid)[:count]
        return values.reshape(shape)
    values = rng.uniform(spec.low, spec.high, size=shape)
    for kink in spec.avoid:
        near = np.abs(values - kink) < spec.margin
        values[near] = kink + np.where(values[near] >= kink, 2, -2) * spec.margin
    return values


def draw_arrays(case, data):
    """Draw the case's input arrays (float64 / int64) with hypothesis ``data``."""
    if case.shape is not None:
        base = case.shape
    else:
        base = data.draw(st.lists(st.integers(case.min_side, case.max_side),
                                  min_size=case.min_dims, max_size=case.max_dims).map(tuple),
                         label="shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    arrays = []
    for spec in case.inputs:
        shape = spec.shape if spec.shape is not None else base
        if isinstance(spec, Floats) and spec.broadcast and spec.shape is None:
            shape = _broadcast_variant(base, rng)
        arrays.append(_values(spec, shape, rng))
    return arrays


def _reversed_axes(a):
    """The same values stored with the axes reversed (Fortran order): a transposed view."""
    return np.ascontiguousarray(a.transpose()).transpose()


def _strided(a):
    """The same values as a view with gaps and a negative step on the first axis, into a
    reversed-axes buffer whose other elements are NaN (or a huge int): an op that reads past its
    view shows it, and arrays allocated "like" it (order K) come out in Fortran order."""
    fill = np.nan if a.dtype.kind == "f" else np.iinfo(a.dtype).max if a.dtype.kind in "iu" else 0
    buffer = np.full(tuple(2 * n for n in a.shape), fill, a.dtype, order="F")
    view = buffer[(slice(None, None, -2),) + (slice(None, None, 2),) * (a.ndim - 1)]
    view[...] = a
    return view


LAYOUTS = {
    "C": lambda a: a,
    "batch_last": stored_batch_last,        # (N, C, H, W) as a view of a (C, H, W, N) array
    "reversed_axes": _reversed_axes,
    "strided": _strided,
}


def layouts_for(ndim):
    """The layouts that differ for an array of ``ndim`` axes ("C" first, so that hypothesis
    shrinks a failure to C order when C order fails too)."""
    names = ["C"]
    if ndim == 4:
        names.append("batch_last")
    if ndim >= 2:
        names.append("reversed_axes")
    if ndim >= 1:
        names.append("strided")
    return names


def stored_as(array, layout):
    """``array``'s values (a copy) stored in ``layout``, one of ``LAYOUTS``."""
    return LAYOUTS[layout](np.asarray(array))


class _StoredAs(Operation):
    """Identity whose output is stored in one layout and whose backward passes the gradient on
    stored in another: y = x, dx = dy.  It stands between the harness's tensors and the op
    under test, so that the op receives exactly these layouts (gradcheck and Tensor() copy
    their inputs, which may compact them)."""

    def __init__(self, layout, grad_layout="C"):
        super().__init__()
        self.layout, self.grad_layout = layout, grad_layout

    def forward(self, x):
        return stored_as(x, self.layout)

    def backward(self, dy):
        return stored_as(dy, self.grad_layout)


def draw_layouts(arrays, data):
    """One layout per input array and one for dy (C where it does not fit the output's ndim)."""
    *layouts, dy_layout = data.draw(            # one draw: each costs hypothesis ~1 ms
        st.tuples(*[st.sampled_from(layouts_for(np.ndim(a))) for a in arrays],
                  st.sampled_from(list(LAYOUTS))), label="layouts of the inputs and dy")
    return layouts, dy_layout


def every_layout(arrays):
    """(input layouts, dy layout) pairs: all inputs and dy in C order, then batch-last (where an
    input is 4-D) and strided, each where it fits. Reversed axes is left to the draw: strided
    views are stored with axes reversed too, and each pass costs a forward and a backward."""
    sweeps = []
    for name in ("C", "batch_last", "strided"):
        layouts = [name if name in layouts_for(np.ndim(a)) else "C" for a in arrays]
        if name == "C" or any(layout != "C" for layout in layouts):
            sweeps.append((layouts, name))
    return sweeps


def laid_out(fn, layouts, dy_layout, **kwargs):
    """``fn(*tensors, **kwargs)`` with the tensors' arrays stored in ``layouts`` (one each) when
    fn's op receives them, and its output's dy stored in ``dy_layout`` when the op's backward
    receives it (C order where that layout does not fit the output)."""
    def call(*tensors):
        laid = [t if layout == "C" else _StoredAs(layout)(t)
                for t, layout in zip(tensors, layouts)]
        out = fn(*laid, **kwargs)
        if dy_layout == "C" or dy_layout not in layouts_for(out.ndim):
            return out
        return _StoredAs("C", dy_layout)(out)
    return call


def _tensors(case, arrays, dtype):
    tensors = []
    for spec, a in zip(case.inputs, arrays):
        if isinstance(spec, Integers):
            tensors.append(Tensor(data=a))
        else:
            tensors.append(Tensor(data=a.astype(dtype), requires_grad=spec.requires_grad,
                                  stores_grad=spec.requires_grad))
    return tensors


def _assert_close(actual, desired, rtol, atol, err_msg):
    """``np.testing.assert_allclose``, with a fast path where the arrays are close (its
    bookkeeping was a fifth of the harness's time on these small arrays)."""
    actual, desired = np.asarray(actual), np.asarray(desired)
    if (actual.shape == desired.shape and actual.dtype.kind in "fiu" and desired.dtype.kind in "fiu"
            and np.all(np.abs(actual - desired) <= atol + rtol * np.abs(desired))):
        return
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, err_msg=err_msg)


def check_case(case, data):
    arrays = draw_arrays(case, data)
    drawn = draw_layouts(arrays, data)
    expected = case.reference(*arrays, **case.kwargs)

    # 1. forward against the NumPy reference, in float64, with all inputs in C order, then in
    #    each other layout; the gradients (one random dy) agree with C order's. Cheap (a forward
    #    and a backward each), so every example sees every layout; 2 and 3 use the drawn ones.
    dy = np.asarray(np.random.default_rng(1).standard_normal(np.shape(expected)))
    first = None
    for layouts, dy_layout in every_layout(arrays):
        where = f"inputs stored {layouts}, dy stored {dy_layout}"
        inputs = _tensors(case, arrays, np.float64)
        out = laid_out(case.fn, layouts, dy_layout, **case.kwargs)(*inputs)
        _assert_close(out.to_numpy(), expected, rtol=case.rtol, atol=case.atol,
                      err_msg=f"{case}: forward differs from the NumPy reference ({where})")
        assert out.shape == np.shape(expected), f"{case}: shape {out.shape} != {np.shape(expected)}"
        if case.grad and out.creator is not None:
            grads = autograd.gradients(out, dy)
            grads = [grads[t].to_numpy() if t in grads else None for t in inputs]
            if first is None:
                first = grads, where
            for position, (grad, reference) in enumerate(zip(grads, first[0])):
                if reference is not None:
                    _assert_close(grad, reference, rtol=1e-9, atol=1e-12,
                                  err_msg=f"{case}: gradient of input {position} with {where} "
                                          f"differs from that with {first[1]}")

    # 2. gradients against finite differences, in float64, with a random upstream gradient,
    #    inputs and dy in the drawn layouts
    call = laid_out(case.fn, *drawn, **case.kwargs)
    if case.grad:
        inputs = _tensors(case, arrays, np.float64)
        autograd.gradcheck(call, inputs)

    # 3. float32 stays float32, forward and backward
    inputs32 = _tensors(case, arrays, np.float32)
    out32 = call(*inputs32)
    assert out32.dtype == np.float32, f"{case}: float32 inputs gave a {out32.dtype} output"
    _assert_close(out32.to_numpy(), expected, rtol=case.float32_rtol, atol=case.float32_rtol,
                  err_msg=f"{case}: float32 forward")
    if case.grad and out32.creator is not None:
        dy = np.ones(out32.shape, np.float32)
        for param, grad in autograd.backward(out32, dy):
            assert grad.dtype == np.float32, f"{case}: a float32 input got a {grad.dtype} grad"
            assert grad.shape == param.shape


def value_and_grad(fn, values, dtype=np.float64):
    """fn's output and the gradient of its input under dy = 0.5 everywhere, as NumPy arrays."""
    x = Tensor(data=np.array(values, dtype), stores_grad=True)
    y = fn(x)
    dy = np.full(y.shape, 0.5, dtype)
    (grad,) = [g for _, g in autograd.backward(y, dy)]
    return y.to_numpy(), grad.to_numpy()
