"""DataLoader: mini-batches over arrays that share their first dimension.

>>> import numpy as np
>>> x, y = np.arange(10.0).reshape(5, 2), np.arange(5)
>>> [b[1].tolist() for b in DataLoader(x, y, batch_size=2)]
[[0, 1], [2, 3], [4]]
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from ..device import Device
from ..tensor import Tensor

__all__ = ["DataLoader"]


class DataLoader:
    """``DataLoader(*arrays, batch_size, shuffle=False, seed=None, drop_last=False, device=None,
    rank=0, world_size=1)``

    Iterating yields one tuple per batch, holding the matching rows of each array (a tuple even
    for a single array). ``len(loader)`` is the number of batches of one epoch.

    - ``shuffle=True`` draws a new permutation each time iteration starts (each epoch) from a
      generator created once from ``seed``: epoch 2 differs from epoch 1, and the same seed gives
      the same sequence of epochs in every run. ``seed=None`` seeds from the operating system.
    - ``drop_last=True`` leaves out a last batch smaller than ``batch_size``.
    - ``device=None`` yields NumPy arrays (without shuffling they are views of ``arrays``: copy
      before writing into them). With a ``Device`` (``autograd.device.gpu(0)``, ``cpu()``) each
      batch is copied there and yielded as Tensors with ``requires_grad=False`` (data batches
      need no gradient), keeping each array's dtype; the arrays themselves stay on the host.

    ``arrays`` are NumPy arrays (or anything ``numpy.asarray`` takes: lists, CPU Tensors) with the
    same length; they are not copied.

    Data-parallel training (``rank``, ``world_size``, e.g. from ``opt.DistOpt``): every rank
    draws the same permutation (give the same ``seed`` everywhere), cuts it into global
    batches of ``batch_size * world_size`` rows and takes its own contiguous part of each, so
    in each epoch the ranks see disjoint rows and together every row once, in the same number
    of steps. In the last step the parts may differ by a row (a remainder shorter than
    ``world_size`` joins the step before); ``drop_last=True`` drops an incomplete last step.

    ``state_dict()``/``load_state_dict()`` save and restore where the loader is, for exact
    resumes: the generator, and inside an epoch (while its iterator is alive) the batches
    already yielded, so that the next iteration after a load yields the rest of that epoch.
    After an epoch ends (or its loop breaks) the state says to start a new one.

    >>> loader = DataLoader(np.arange(6), batch_size=4, shuffle=True, seed=0)
    >>> len(loader), sorted(np.concatenate([b for (b,) in loader]).tolist())
    (2, [0, 1, 2, 3, 4, 5])
    >>> [[b.tolist() for (b,) in DataLoader(np.arange(7), batch_size=2, rank=r, world_size=2)]
    ...  for r in (0, 1)]
    [[[0, 1], [4, 5]], [[2, 3], [6]]]
    >>> state = loader.state_dict(); first = [b.tolist() for (b,) in loader]
    >>> loader.load_state_dict(state); first == [b.tolist() for (b,) in loader]
    True
    """

    def __init__(self, *arrays: Any, batch_size: int, shuffle: bool = False,
                 seed: int | None = None, drop_last: bool = False,
                 device: Device | None = None, rank: int = 0, world_size: int = 1) -> None:
        if not arrays:
            raise ValueError("DataLoader: expected at least one array, got none")
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
            raise TypeError(f"DataLoader: batch_size must be an int, got "
                            f"{type(batch_size).__name__}")
        if batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be at least 1, got {batch_size}")
        if device is not None and not isinstance(device, Device):
            raise TypeError(f"DataLoader: device must be an autograd Device or None, got "
                            f"{type(device).__name__}")
        arrays = tuple(_as_host_array(a, i) for i, a in enumerate(arrays))
        lengths = tuple(len(a) for a in arrays)
        if len(set(lengths)) != 1:
            raise ValueError(f"DataLoader: arrays must have the same length (first dimension), "
                             f"got lengths {lengths}")
        self.arrays = arrays
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.seed = seed
        self.drop_last = bool(drop_last)
        self.device = device
        self.rank, self.world_size = _checked_rank(rank, world_size, shuffle, seed,
                                                   self.num_samples)
        self._generator = np.random.default_rng(seed)
        # while an epoch's iterator is alive: its start state and position
        self._epoch: dict[str, Any] | None = None
        # after load_state_dict inside an epoch: (generator state, position) to carry on from
        self._resume: tuple[dict, int] | None = None

    @property
    def num_samples(self) -> int:
        """The number of rows in each array."""
        return len(self.arrays[0])

    def __len__(self) -> int:
        return len(self._global_batches())

    def _global_batches(self):
        """``[(start, stop)]``: the slices of the epoch's order that the ranks share, one
        per step. A last slice too short to give every rank a row joins the one before."""
        step = self.batch_size * self.world_size
        full, rest = divmod(self.num_samples, step)
        bounds = [(i * step, (i + 1) * step) for i in range(full)]
        if rest and not self.drop_last:
            if rest < self.world_size and bounds:
                bounds[-1] = (bounds[-1][0], self.num_samples)
            else:
                bounds.append((full * step, self.num_samples))
        return bounds

    def __iter__(self) -> Iterator[tuple]:
        if self._resume is not None:
            self._generator.bit_generator.state, first = self._resume
            self._resume = None
        else:
            first = 0
        epoch = {"generator": self._generator.bit_generator.state, "position": first}
        # The permutation is drawn here, not lazily inside the loop, so that each started epoch
        # consumes the generator exactly once whether or not it is run to the end.
        order = self._generator.permutation(self.num_samples) if self.shuffle else None
        return self._batches(order, epoch)

    def _batches(self, order, epoch):
        self._epoch = epoch
        try:
            batches = self._global_batches()
            for batch in range(epoch["position"], len(batches)):
                start, stop = batches[batch]
                if self.world_size > 1:     # this rank's part: sizes differ by at most a row
                    part, extra = divmod(stop - start, self.world_size)
                    start, stop = (start + self.rank * part + min(self.rank, extra),
                                   start + (self.rank + 1) * part + min(self.rank + 1, extra))
                rows = slice(start, stop) if order is None else order[start:stop]
                epoch["position"] = batch + 1
                yield tuple(self._place(array[rows]) for array in self.arrays)
        finally:
            # the epoch is over (or its loop broke off): a checkpoint now starts a new epoch
            if self._epoch is epoch:
                self._epoch = None

    def state_dict(self) -> dict[str, Any]:
        """``{"generator": bit generator state, "position": batches of the current epoch
        already yielded}``: plain dicts and ints, for ``autograd.io.save``."""
        if self._epoch is not None:
            return {"generator": self._epoch["generator"], "position": self._epoch["position"]}
        if self._resume is not None:
            return {"generator": self._resume[0], "position": self._resume[1]}
        return {"generator": self._generator.bit_generator.state, "position": 0}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned; the next iteration carries on from it."""
        if not isinstance(state, dict) or set(state) != {"generator", "position"}:
            raise ValueError("DataLoader.load_state_dict: expected the dict state_dict() "
                             f"returned ({{'generator', 'position'}}), got {state!r:.80}")
        position = state["position"]
        if isinstance(position, bool) or not isinstance(position, (int, np.integer)) \
                or not 0 <= position <= len(self):
            raise ValueError(f"DataLoader.load_state_dict: position must be an int in "
                             f"[0, {len(self)}], got {position!r}")
        probe = np.random.default_rng()
        try:
            probe.bit_generator.state = state["generator"]
        except (TypeError, ValueError, KeyError) as error:
            raise ValueError(f"DataLoader.load_state_dict: not a generator state of this "
                             f"loader ({error})") from None
        if position:
            self._resume = (state["generator"], int(position))
        else:
            self._resume = None
            self._generator.bit_generator.state = state["generator"]
        self._epoch = None

    def _place(self, batch):
        if self.device is None:
            return batch
        return Tensor(data=batch, device=self.device, requires_grad=False)

    def __repr__(self):
        return (f"DataLoader({self.num_samples} samples, batch_size={self.batch_size}, "
                f"shuffle={self.shuffle}, drop_last={self.drop_last}, device={self.device})")


def _checked_rank(rank, world_size, shuffle, seed, num_samples):
    for name, value in (("rank", rank), ("world_size", world_size)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"DataLoader: {name} must be an int, got {type(value).__name__}")
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"DataLoader: expected 0 <= rank < world_size, got rank={rank}, "
                         f"world_size={world_size}")
    if world_size > 1 and shuffle and seed is None:
        raise ValueError("DataLoader: shuffling for several ranks needs a seed (the same on "
                         "every rank), or the ranks' shards would overlap; got seed=None")
    if world_size > 1 and num_samples < world_size:
        raise ValueError(f"DataLoader: {num_samples} samples cannot be shared by "
                         f"{world_size} ranks")
    return int(rank), int(world_size)


def _as_host_array(array, position):
    if hasattr(array, "to_numpy"):          # a Tensor
        array = array.to_numpy()
    elif type(array).__module__.split(".")[0] == "cupy":
        raise TypeError(f"DataLoader: array {position} is a CuPy array; give host (NumPy) "
                        "arrays and device= to move the batches")
    array = np.asarray(array)
    if array.ndim == 0:
        raise ValueError(f"DataLoader: array {position} is a scalar (shape ()); expected an "
                         "array whose first dimension indexes the samples")
    return array
