"""Linear algebra: matmul (2-D, batched, broadcast batch dimensions), add_bias, gemm.

>>> import numpy as np
>>> from autograd import Tensor
>>> matmul(Tensor(data=np.ones((2, 3))), Tensor(data=np.ones((3, 4)))).shape
(2, 4)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

from ..backend import kernels_for
from ..device import get_array_module
from .base import Operation
from .utils import unbroadcast, as_tensor_like, normalize_axis

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["matmul", "add_bias", "gemm", "einsum", "tensordot"]


class MatMul(Operation):
    """y = a @ b; a (..., n, k), b (..., k, m), batch dimensions broadcast; 1-D operands as in
    NumPy.   da = dy @ b^T, db = a^T @ dy, summed over broadcast batch dimensions"""

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return kernels_for(a).matmul(a, b)

    def backward(self, dy):
        a, b = self.saved
        product = kernels_for(dy).matmul
        need_a, need_b = self.needs_input_grad
        # A 1-D a is a row (1, k) and a 1-D b a column (k, 1) whose extra axis y dropped.
        a2 = a if a.ndim > 1 else a[None, :]
        b2 = b if b.ndim > 1 else b[:, None]
        if b.ndim == 1:
            dy = dy[..., None]
        if a.ndim == 1:
            dy = dy[..., None, :]
        da = (unbroadcast(product(dy, b2.swapaxes(-1, -2)), a2.shape).reshape(a.shape)
              if need_a else None)
        db = (unbroadcast(product(a2.swapaxes(-1, -2), dy), b2.shape).reshape(b.shape)
              if need_b else None)
        return da, db


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """Matrix product of a and b with NumPy's rules (batched, broadcast batch dimensions).

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> matmul(Tensor(data=np.ones((3, 4))), Tensor(data=np.ones((5, 6))))
    Traceback (most recent call last):
    ...
    ValueError: matmul: cannot multiply (3, 4) by (5, 6)
    """
    sa, sb = a.shape, b.shape
    if len(sa) == 0 or len(sb) == 0:
        raise ValueError(f"matmul: operands must have at least 1 dimension, got {sa} and {sb}")
    inner_a = sa[-1]
    inner_b = sb[-2] if len(sb) > 1 else sb[0]
    if inner_a != inner_b:
        raise ValueError(f"matmul: cannot multiply {tuple(sa)} by {tuple(sb)}")
    if len(sa) > 2 and len(sb) > 2:
        try:
            np.broadcast_shapes(sa[:-2], sb[:-2])
        except ValueError:
            raise ValueError(f"matmul: batch dimensions of {tuple(sa)} and {tuple(sb)} do not "
                             "broadcast") from None
    return MatMul()(*_floating(a, b))


class AddBias(Operation):
    """y = x + b along ``axis`` of a 2-D x (N, D): axis=0 adds b (D values) to every row,
    axis=1 adds b (N values) to every column.   dx = dy, db = dy summed over that axis"""

    def __init__(self, axis=0):
        self.axis = axis

    def forward(self, x, b):
        self.b_shape = b.shape
        return kernels_for(x).add(x, b.reshape(1, -1) if self.axis == 0 else b.reshape(-1, 1))

    def backward(self, dy):
        need_x, need_b = self.needs_input_grad
        db = None
        if need_b:
            db = kernels_for(dy).sum_rows(dy) if self.axis == 0 else dy.sum(axis=1)
            db = db.reshape(self.b_shape)
        return (dy if need_x else None), db


def add_bias(x: Tensor, b: Tensor, axis: int = 0) -> Tensor:
    """SINGA's AddBias: x (N, D) plus b (D values) on each row for axis=0, or plus b (N values)
    on each column for axis=1. b may be 1-D or shaped like (1, D).

    >>> from autograd import Tensor
    >>> add_bias(Tensor(data=[[1.0, 2.0]]), Tensor(data=[10.0, 20.0])).to_numpy()
    array([[11., 22.]], dtype=float32)
    """
    if x.ndim != 2:
        raise ValueError(f"add_bias: expected a 2-D x, got shape {x.shape}")
    if axis not in (0, 1):
        raise ValueError(f"add_bias: axis must be 0 or 1, got {axis}")
    expected = x.shape[1 - axis]
    if b.size != expected:
        raise ValueError(f"add_bias: with axis={axis} b needs {expected} values for x of shape "
                         f"{x.shape}, got shape {b.shape}")
    return AddBias(axis)(*_floating(x, b))


class Gemm(Operation):
    """y = alpha * A' @ B' + beta * C, A' = A^T if transA, B' = B^T if transB; A' (M, K),
    B' (K, N), C broadcast to (M, N).   dA' = alpha dy B'^T, dB' = alpha A'^T dy, dC = beta dy"""

    def __init__(self, alpha, beta, transA, transB):
        self.alpha, self.beta = alpha, beta
        self.transA, self.transB = transA, transB

    def forward(self, A, B, C=None):
        self.save_for_backward(A, B)
        a = A.T if self.transA else A
        b = B.T if self.transB else B
        kernels = kernels_for(a)
        if C is not None:
            self.c_shape = C.shape
            if self.alpha == 1 and self.beta == 1:       # PyTorch's addmm: one fused GEMM
                return kernels.matmul_add(a, b, C)
        y = kernels.matmul(a, b)
        if self.alpha != 1:
            y *= self.alpha
        if C is not None:
            y += self.beta * C if self.beta != 1 else C
        return y

    def forward_plan(self, A, B, C=None):
        if C is None or self.transA or self.transB or self.alpha != 1 or self.beta != 1:
            return None
        return kernels_for(A).matmul_add_plan(A, B, C)

    def forward_plan_key(self):
        return self.alpha, self.beta, self.transA, self.transB

    def backward(self, dy):
        A, B = self.saved
        needs = self.needs_input_grad
        product = kernels_for(dy).matmul
        a = A.T if self.transA else A
        b = B.T if self.transB else B
        dA = dB = None
        if needs[0]:
            da = product(dy, b.T)
            if self.alpha != 1:
                da *= self.alpha
            dA = da.T if self.transA else da
        if needs[1]:
            db = product(a.T, dy)
            if self.alpha != 1:
                db *= self.alpha
            dB = db.T if self.transB else db
        if len(needs) == 2:
            return dA, dB
        if not needs[2]:
            return dA, dB, None
        return dA, dB, unbroadcast(self.beta * dy if self.beta != 1 else dy, self.c_shape)


def gemm(A: Tensor, B: Tensor, C: Optional[Tensor] = None, alpha: float = 1.0,
         beta: float = 1.0, transA: Union[bool, int] = False,
         transB: Union[bool, int] = False) -> Tensor:
    """ONNX/SINGA Gemm: alpha * op(A) @ op(B) + beta * C, op transposing when asked; C
    broadcasts to the (M, N) result.

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> A, B = Tensor(data=np.ones((3, 2), np.float32)), Tensor(data=np.ones((3, 4), np.float32))
    >>> gemm(A, B, Tensor(data=[1.0, 2.0, 3.0, 4.0]), alpha=0.5, transA=True).to_numpy()
    array([[2.5, 3.5, 4.5, 5.5],
           [2.5, 3.5, 4.5, 5.5]], dtype=float32)
    """
    # Python floats take the arrays' dtype; a NumPy float64 alpha would upcast float32 grads.
    op = Gemm(float(alpha), float(beta), bool(transA), bool(transB))
    operands = (A, B) if C is None else (A, B, C)
    try:
        key = (A.shape, B.shape, None if C is None else C.shape, op.transA, op.transB)
    except AttributeError:              # not Tensors: the Operation names what it got
        return op(*operands)
    if key not in _checked_shapes:
        _check_gemm_shapes(A, B, C, transA, transB)
        if len(_checked_shapes) < _MOST_CHECKED:
            _checked_shapes.add(key)
    return op(*_floating(*operands))


# The operands' shapes (and transpositions) that passed gemm's checks: the checks took 0.5
# of a batch-1 linear layer's 6 us.
_checked_shapes: set = set()
_MOST_CHECKED = 1024


def _check_gemm_shapes(A, B, C, transA, transB):
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError(f"gemm: A and B must be 2-D, got {A.shape} and {B.shape}")
    m, k = A.shape[::-1] if transA else A.shape
    k2, n = B.shape[::-1] if transB else B.shape
    if k != k2:
        raise ValueError(f"gemm: cannot multiply {(m, k)} by {(k2, n)} "
                         f"(A {A.shape}, transA={transA}; B {B.shape}, transB={transB})")
    if C is not None and not _broadcasts_to(C.shape, (m, n)):
        raise ValueError(f"gemm: C of shape {C.shape} does not broadcast to {(m, n)}")


def _broadcasts_to(shape, target):
    """Whether an array of ``shape`` broadcasts to ``target`` unchanged (NumPy's rule, in a
    few comparisons: ``np.broadcast_shapes`` took 5 us of a batch-1 linear layer's 20)."""
    if len(shape) > len(target):
        return False
    for size, wanted in zip(reversed(shape), reversed(target)):
        if size != wanted and size != 1:
            return False
    return True


def _floating(*tensors):
    """Integer or bool operands converted to the floating operands' dtype, as elementwise ops
    do: an int64 batch times float32 weights stays float32 (NumPy would give float64)."""
    dtype = None
    mixed = False
    for t in tensors:          # a plain loop: two generators cost ~3 us of a ~20 us small op
        # t.dtype, not t.data.dtype: an ndarray given where a Tensor belongs must reach the
        # Operation, whose error names it (an ndarray's .data is a memoryview)
        t_dtype = t.dtype
        if t_dtype.kind != "f":
            mixed = True
        elif dtype is None:
            dtype = t_dtype
    if dtype is None or not mixed:
        return tensors
    return [t if t.dtype.kind == "f" else as_tensor_like(t.data.astype(dtype), t, "")
            for t in tensors]


def _parse_einsum(subscripts, count):
    """Explicit input and output subscripts of an einsum; implicit output as NumPy does it
    (the letters used once, in alphabetical order)."""
    subscripts = subscripts.replace(" ", "")
    if "." in subscripts:
        raise ValueError("einsum: ellipsis ('...') is not supported; name every axis")
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != count:
        raise ValueError(f"einsum: {subscripts!r} names {len(terms)} operand(s), got {count}")
    if not arrow:
        letters = "".join(terms)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    for term in terms:
        if len(set(term)) != len(term):
            raise ValueError(f"einsum: repeated letters within one operand ({term!r}, a "
                             "diagonal or trace) are not supported")
    return terms, output


class Einsum(Operation):
    """y = einsum(subscripts, *xs).   dxi = einsum(dy with the other operands -> xi's
    subscripts), broadcast over letters only xi had"""

    def __init__(self, terms, output):
        self.terms, self.output = terms, output

    def forward(self, *xs):
        self.save_for_backward(*xs)
        spec = ",".join(self.terms) + "->" + self.output
        return get_array_module(xs[0]).einsum(spec, *xs, optimize=len(xs) > 2)

    def backward(self, dy):
        xs = self.saved
        xp = get_array_module(dy)
        grads = []
        for i, (term, x) in enumerate(zip(self.terms, xs)):
            if not self.needs_input_grad[i]:
                grads.append(None)
                continue
            others = [(t, o) for j, (t, o) in enumerate(zip(self.terms, xs)) if j != i]
            available = set(self.output).union(*[set(t) for t, _ in others])
            kept = "".join(c for c in term if c in available)
            spec = ",".join([self.output] + [t for t, _ in others]) + "->" + kept
            grad = xp.einsum(spec, dy, *[o for _, o in others], optimize=len(others) > 1)
            if kept != term:     # letters summed away inside x alone: every element got dy
                grad = xp.broadcast_to(
                    grad.reshape([x.shape[k] if c in available else 1
                                  for k, c in enumerate(term)]), x.shape)
            grads.append(xp.ascontiguousarray(grad.astype(x.dtype, copy=False)))
        return tuple(grads)


def einsum(subscripts: str, *operands: Tensor) -> Tensor:
    """Einstein summation over Tensors, as ``numpy.einsum`` (explicit or implicit output; no
    ellipsis, no repeated letter inside one operand).

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> einsum("ij,jk->ik", Tensor(data=np.ones((2, 3))), Tensor(data=np.ones((3, 4)))).shape
    (2, 4)
    """
    terms, output = _parse_einsum(subscripts, len(operands))
    sizes: dict = {}
    for term, x in zip(terms, operands):
        if len(term) != x.ndim:
            raise ValueError(f"einsum: operand {term!r} has {len(term)} letters but the tensor "
                             f"has shape {x.shape}")
        for c, n in zip(term, x.shape):
            if sizes.setdefault(c, n) != n:
                raise ValueError(f"einsum: axis {c!r} has sizes {sizes[c]} and {n} in "
                                 f"{subscripts!r}")
    return Einsum(terms, output)(*operands)


def tensordot(a: Tensor, b: Tensor, axes: Any = 2) -> Tensor:
    """Sum of products over the given axes, as ``numpy.tensordot``: ``axes`` is an int (the
    last axes of a with the first of b) or a pair of axis lists."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    if isinstance(axes, int):
        axes_a, axes_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        axes_a, axes_b = ([axes[0]] if isinstance(axes[0], int) else list(axes[0]),
                          [axes[1]] if isinstance(axes[1], int) else list(axes[1]))
    axes_a = [normalize_axis(x, a.ndim, "tensordot") for x in axes_a]
    axes_b = [normalize_axis(x, b.ndim, "tensordot") for x in axes_b]
    if len(axes_a) != len(axes_b):
        raise ValueError(f"tensordot: {len(axes_a)} axes of a against {len(axes_b)} of b")
    term_a = list(letters[:a.ndim])
    term_b = list(letters[a.ndim:a.ndim + b.ndim])
    for i, j in zip(axes_a, axes_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: cannot contract axis {i} of {a.shape} with axis {j} "
                             f"of {b.shape}")
        term_b[j] = term_a[i]
    output = [c for k, c in enumerate(term_a) if k not in axes_a] + \
             [c for k, c in enumerate(term_b) if k not in axes_b]
    return einsum("".join(term_a) + "," + "".join(term_b) + "->" + "".join(output), a, b)
