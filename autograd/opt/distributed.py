"""DistOpt: data-parallel training, SINGA's ``opt.DistOpt``, over MPI (or NCCL).

Every process (rank) holds the whole model and trains on its own shard of each batch. After
its backward, the gradients are summed across the ranks and divided by the number of ranks, so
every rank applies the same averaged gradient and the models stay equal: with equal shards
and a loss that is a mean over the batch, K steps give the parameters that one process would
reach on the concatenated batches. The reduction overlaps backward: a non-blocking all-reduce
starts as soon as ``autograd.backward`` yields a gradient, small gradients fused into buckets
of up to ``bucket_bytes`` (one message instead of many), flushed in the order they come.

    mpiexec -n 2 python train.py            # in train.py:
    sgd = opt.DistOpt(opt.SGD(0.05, momentum=0.9))
    loader = data.DataLoader(x, y, batch_size=64, shuffle=True, seed=0,
                             rank=sgd.rank, world_size=sgd.world_size)
    sgd.broadcast_parameters(model)         # after the lazy layers exist (one forward)
    for xb, yb in loader:
        sgd.backward_and_update(model.loss(xb, yb))

Outside ``mpiexec`` (or without mpi4py) it trains with world size 1 and says so once:

>>> import warnings, autograd
>>> from autograd import opt
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     sgd = opt.DistOpt(opt.SGD(lr=0.1), communicator=opt.LocalCommunicator())
>>> w = autograd.Tensor(data=[1.0, -2.0], stores_grad=True)
>>> sgd(autograd.sum(w * w))
>>> w.to_numpy(), sgd.world_size, sgd.step_counter
(array([ 0.8, -1.6], dtype=float32), 1, 1)
"""
import time

import numpy as np

from ..device import get_array_module
from ..graph import backward
from ..tensor import Tensor
from .base import Optimizer
from .clipping import clip_grad_norm
from .communicators import Communicator, default_communicator

__all__ = ["DistOpt"]

DEFAULT_BUCKET_BYTES = 4 * 1024 * 1024


class DistOpt:
    """``DistOpt(optimizer=SGD(), communicator=None, bucket_bytes=4 MiB, max_norm=None,
    overlap=True)`` wraps an autograd optimizer for data-parallel training.

    - ``communicator``: a :mod:`~autograd.opt.communicators` Communicator; None picks MPI
      inside ``mpiexec``, else a world of one (with a warning).
    - ``bucket_bytes``: gradients smaller than this are fused into buckets of about this size
      before they are sent; 0 sends each gradient alone.
    - ``max_norm``: clip the AVERAGED gradients to this global L2 norm before the update
      (``last_norm`` then holds the norm, a 0-d Tensor).
    - ``overlap=False`` starts the reductions only after the whole backward (for measuring
      what overlapping saves).

    ``optimizer`` (SINGA's keyword ``opt=`` too) defaults to SINGA's ``SGD()``.
    ``rank`` (SINGA's ``global_rank``), ``world_size`` and ``local_rank`` come from the
    communicator. The learning rate, schedules, ``step_counter``, per-parameter state and
    ``state_dict`` are the wrapped optimizer's (``self.opt``, SINGA's name, or
    ``self.optimizer``); reading any other attribute reads the wrapped optimizer's.
    ``last_times`` holds the seconds of the last step spent in backward (with the reductions
    started inside it), waiting for the reductions, and updating.

    SINGA's names: ``backward_and_update(loss, threshold=None)`` (``threshold`` in elements,
    as SINGA's, overrides ``bucket_bytes`` for the call), ``all_reduce``,
    ``fused_all_reduce``, ``wait``, ``update(param, grad)`` (for a gradient already summed
    across ranks: divides by the world size and updates). Not implemented, and raising
    NotImplementedError that says so: SINGA's experimental ``backward_and_update_half`` (FP16
    messages: MPI has no half-precision sum), ``backward_and_partial_update`` and
    ``backward_and_sparse_update`` (asynchronous and sparsified research variants).
    """

    def __init__(self, optimizer=None, communicator=None, bucket_bytes=DEFAULT_BUCKET_BYTES,
                 max_norm=None, overlap=True, *, opt=None):
        if opt is not None:             # SINGA's keyword
            if optimizer is not None:
                raise TypeError("DistOpt: give the optimizer once (optimizer or opt), not both")
            optimizer = opt
        if optimizer is None:           # SINGA's default, DistOpt(opt=SGD())
            from .sgd import SGD
            optimizer = SGD()
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"DistOpt: expected an autograd optimizer to wrap (opt.SGD(...)), "
                            f"got {type(optimizer).__name__}")
        if isinstance(bucket_bytes, bool) or not isinstance(bucket_bytes, int) \
                or bucket_bytes < 0:
            raise ValueError(f"DistOpt: bucket_bytes must be an int >= 0, got {bucket_bytes!r}")
        if max_norm is not None and not max_norm > 0:
            raise ValueError(f"DistOpt: max_norm must be positive or None, got {max_norm!r}")
        if communicator is None:
            communicator = default_communicator()
        elif not isinstance(communicator, Communicator):
            raise TypeError(f"DistOpt: communicator must be a Communicator, got "
                            f"{type(communicator).__name__}")
        self.optimizer = self.opt = optimizer
        self.communicator = communicator
        self.bucket_bytes = bucket_bytes
        self.max_norm = max_norm
        self.overlap = bool(overlap)
        self.last_norm = None
        self.last_times = {}

    rank = property(lambda self: self.communicator.rank, doc="This process's rank.")
    global_rank = rank
    world_size = property(lambda self: self.communicator.world_size,
                          doc="The number of processes.")
    local_rank = property(lambda self: self.communicator.local_rank,
                          doc="The rank among this machine's processes (picks the GPU).")

    @property
    def step_counter(self):
        """The wrapped optimizer's step counter."""
        return self.optimizer.step_counter

    @step_counter.setter
    def step_counter(self, value):
        self.optimizer.step_counter = value

    def __getattr__(self, name):
        # Only reached for names DistOpt itself lacks: lr, lr_value, states, values(), ...
        if name in ("optimizer", "opt") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.optimizer, name)

    # ------------------------------------------------------------ one training step
    def __call__(self, loss, dy=None):
        """Backward, all-reduce and update: :meth:`backward_and_update`."""
        self.backward_and_update(loss, dy)

    def backward_and_update(self, loss, dy=None, threshold=None):
        """Run the backward of ``loss``; reduce each gradient across ranks as it is yielded
        (fused into buckets); wait; average; clip if ``max_norm``; update every parameter
        with the wrapped optimizer; ``step()``. Each gradient is checked (shape, dtype,
        device) before it is sent, so a bad one raises before any parameter changes."""
        bucket_bytes = self.bucket_bytes if threshold is None else int(threshold) * 4
        buckets = GradientBuckets(self.communicator, bucket_bytes)
        check = self.optimizer._checked_gradient
        started = time.perf_counter()
        pending = []
        for param, grad in backward(loss, dy):
            grad = check(param, grad)
            if self.overlap:
                buckets.add(param, grad)
            else:
                pending.append((param, grad))
        for param, grad in pending:
            buckets.add(param, grad)
        buckets.flush()
        waiting = time.perf_counter()
        pairs = buckets.wait_and_average()
        updating = time.perf_counter()
        self._apply(pairs)
        self.last_times = {"backward": waiting - started, "wait": updating - waiting,
                           "update": time.perf_counter() - updating}

    def _apply(self, pairs):
        if self.max_norm is not None:
            pairs, self.last_norm = clip_grad_norm(pairs, self.max_norm)
        optimizer = self.optimizer
        checked = [(param, grad, optimizer._state_for(param)) for param, grad in pairs]
        for param, grad, state in checked:
            optimizer._apply(param, grad, state)
        optimizer.step()

    def update(self, param, grad):
        """SINGA's ``update``: ``grad`` is already summed over the ranks (``all_reduce``);
        divide it by the world size and update ``param`` with the wrapped optimizer."""
        array = grad.data if isinstance(grad, Tensor) else grad
        self.optimizer.update(param, array / array.dtype.type(self.world_size))

    def step(self):
        """Advance the wrapped optimizer's step counter."""
        self.optimizer.step()

    # ------------------------------------------------------------ collective helpers
    def all_reduce(self, tensor):
        """Sum ``tensor`` (a Tensor or an array) across ranks, in place; returns it. As in
        SINGA this is a SUM: divide by ``world_size`` for the mean."""
        array = tensor.data if isinstance(tensor, Tensor) else tensor
        buffer = _contiguous_writable(array)
        self.communicator.all_reduce(buffer)
        if buffer is not array:
            array[...] = buffer
        return tensor

    def fused_all_reduce(self, tensors, send=True):
        """Sum each of ``tensors`` across ranks in place, through one fused message (SINGA's
        ``send`` is accepted; every call sends)."""
        buckets = GradientBuckets(self.communicator, bucket_bytes=1 << 62)
        arrays = [t.data if isinstance(t, Tensor) else t for t in tensors]
        for array in arrays:
            buckets.add(array, array)
        buckets.flush()
        for (array, _), reduced in zip(buckets.entries(), buckets.wait_and_sum()):
            array[...] = reduced

    def wait(self):
        """SINGA's ``wait``: every reduction here completes before its call returns."""

    def barrier(self):
        """Return once every rank has called it (e.g. before reading a checkpoint rank 0
        wrote)."""
        self.communicator.barrier()

    def backward_and_update_half(self, loss, threshold=None, clipping=False, clip_Value=100):
        raise NotImplementedError(
            "DistOpt.backward_and_update_half (SINGA's experimental FP16 messages) is not "
            "implemented: MPI has no half-precision sum; use backward_and_update")

    def backward_and_partial_update(self, loss, threshold=None):
        raise NotImplementedError(
            "DistOpt.backward_and_partial_update (SINGA's experimental asynchronous partial "
            "averaging) is not implemented; use backward_and_update")

    def backward_and_sparse_update(self, loss, threshold=None, spars=0.05, topK=False,
                                   corr=True):
        raise NotImplementedError(
            "DistOpt.backward_and_sparse_update (SINGA's experimental sparsified gradients) is "
            "not implemented; use backward_and_update")

    # ------------------------------------------------------------ every rank starts equal
    def broadcast_parameters(self, model, root=0):
        """Copy root's parameters and buffers (BatchNorm running statistics) into every
        rank's ``model`` (a Layer, or a dict ``{name: Tensor}``), in place.

        Every rank first shares the names, shapes and dtypes: a model that differs is a
        ValueError on every rank naming the first parameter that differs and the ranks, before
        anything is copied. A Layer whose parameters are created by its first call (a
        ``Linear`` without ``in_features``) must have run once (``model.compile([x])``)."""
        named = _named_tensors(model)
        layout = [(name, tuple(t.shape), str(t.dtype)) for name, t in named]
        layouts = self.communicator.all_gather_object(layout)
        _check_same_layout(layouts, root)
        for name, tensor in named:
            buffer = _contiguous_writable(tensor.data)
            self.communicator.broadcast(buffer, root)
            if buffer is not tensor.data:
                tensor.data[...] = buffer

    # ------------------------------------------------------------ saving
    def state_dict(self, params=None):
        """The wrapped optimizer's :meth:`~autograd.opt.Optimizer.state_dict`."""
        return self.optimizer.state_dict(params)

    def load_state_dict(self, state_dict, params=None):
        """The wrapped optimizer's :meth:`~autograd.opt.Optimizer.load_state_dict`."""
        self.optimizer.load_state_dict(state_dict, params)

    def get_states(self):
        return self.optimizer.state_dict()

    def set_states(self, states, params=None):
        self.optimizer.load_state_dict(states, params)

    def __repr__(self):
        return (f"DistOpt({self.optimizer!r}, rank={self.rank}, world_size={self.world_size}, "
                f"bucket_bytes={self.bucket_bytes})")


class GradientBuckets:
    """Gradients on their way through all-reduce, shared by every communicator.

    ``add(key, array)`` copies a gradient into a flat buffer (backward's arrays are read-only
    and may be shared): one of its own when it is at least ``bucket_bytes``, else the open
    bucket, which is sent once it holds ``bucket_bytes``. A bucket holds one dtype on one
    device. ``wait_and_average()`` returns ``(key, averaged array)`` in the order added.
    """

    def __init__(self, communicator, bucket_bytes):
        self.communicator = communicator
        self.bucket_bytes = bucket_bytes
        self.sent = []          # (flat buffer, handle, [(key, shape, offset, size)])
        self.open = []          # [(key, array)] not yet sent
        self.open_bytes = 0

    def add(self, key, array):
        if self.open and (array.dtype != self.open[0][1].dtype
                          or get_array_module(array) is not get_array_module(self.open[0][1])):
            self.flush()
        if array.nbytes >= self.bucket_bytes:
            self.flush()                        # what came before goes first
            self._send([(key, array)])
        else:
            self.open.append((key, array))
            self.open_bytes += array.nbytes
            if self.open_bytes >= self.bucket_bytes:
                self.flush()
        self.communicator.progress([handle for _, handle, _ in self.sent])

    def flush(self):
        if self.open:
            self._send(self.open)
        self.open, self.open_bytes = [], 0

    def _send(self, items):
        xp = get_array_module(items[0][1])
        total = sum(int(array.size) for _, array in items)
        flat = xp.empty(total, dtype=items[0][1].dtype)
        layout, offset = [], 0
        for key, array in items:
            flat[offset:offset + array.size] = array.reshape(-1)
            layout.append((key, array.shape, offset, int(array.size)))
            offset += array.size
        self.sent.append((flat, self.communicator.start_all_reduce(flat), layout))

    def entries(self):
        return [(key, shape) for _, _, layout in self.sent for key, shape, _, _ in layout]

    def wait_and_sum(self):
        self.flush()
        self.communicator.wait([handle for _, handle, _ in self.sent])
        return [flat[offset:offset + size].reshape(shape)
                for flat, _, layout in self.sent for _, shape, offset, size in layout]

    def wait_and_average(self):
        self.flush()
        self.communicator.wait([handle for _, handle, _ in self.sent])
        world = self.communicator.world_size
        pairs = []
        for flat, _, layout in self.sent:
            if world > 1:
                flat /= flat.dtype.type(world)
            pairs.extend((key, flat[offset:offset + size].reshape(shape))
                         for key, shape, offset, size in layout)
        return pairs


def _contiguous_writable(array):
    # CuPy's flags have no ``writeable``: its arrays always are
    if array.flags.c_contiguous and getattr(array.flags, "writeable", True):
        return array
    return get_array_module(array).ascontiguousarray(array).copy()


def _named_tensors(model):
    if isinstance(model, dict):
        named = list(model.items())
    elif hasattr(model, "named_parameters"):
        from ..layers.base import Layer
        if isinstance(model, Layer):
            for name, layer in [("", model)] + list(model.named_layers()):
                if _unbuilt(layer, Layer):
                    raise RuntimeError(
                        f"DistOpt.broadcast_parameters: layer {name or type(layer).__name__!r} "
                        "creates its parameters at its first call; run the model once "
                        "(model.compile([x]) or a forward pass) before broadcasting")
        named = list(model.named_parameters()) + list(model.named_buffers())
    else:
        raise TypeError(f"DistOpt.broadcast_parameters: expected a Layer or a dict of Tensors, "
                        f"got {type(model).__name__}")
    for name, tensor in named:
        if not isinstance(tensor, Tensor):
            raise TypeError(f"DistOpt.broadcast_parameters: {name!r} is "
                            f"{type(tensor).__name__}, not a Tensor")
    return named


class _AnyState(dict):
    """A state that offers a weight for every name: a lazy layer not yet built answers it
    with the parameters it would create (``Layer._lazy_parameters``), a built one with none."""

    def get(self, key, default=None):
        return np.zeros((1, 1, 1, 1), np.float32)


def _unbuilt(layer, Layer):
    if not layer._initialized and type(layer).initialize is not Layer.initialize:
        return True
    return bool(layer._lazy_parameters("", _AnyState()))


def _check_same_layout(layouts, root):
    reference = layouts[root]
    for rank, layout in enumerate(layouts):
        if layout == reference:
            continue
        names, root_names = [e[0] for e in layout], [e[0] for e in reference]
        if names != root_names:
            missing = [n for n in root_names if n not in names]
            extra = [n for n in names if n not in root_names]
            raise ValueError(
                f"DistOpt.broadcast_parameters: rank {rank} has different parameters than "
                f"rank {root}: missing {missing}, unexpected {extra}")
        for (name, shape, dtype), (_, root_shape, root_dtype) in zip(layout, reference):
            if (shape, dtype) != (root_shape, root_dtype):
                raise ValueError(
                    f"DistOpt.broadcast_parameters: parameter {name!r} is {root_shape} "
                    f"{root_dtype} on rank {root} but {shape} {dtype} on rank {rank}")
