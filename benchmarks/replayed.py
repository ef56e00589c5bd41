"""Graph mode beside eager mode: any workload's autograd step captured with ``autograd.capture``
and replayed, against the same PyTorch eager step and NumPy floor. ``Replayed(workload)`` is a
workload (the interface of a benchmark module) named ``<workload>_replay``."""
from .common import Bench, Missing

__all__ = ["Replayed"]


class Replayed:
    """``workload``'s autograd step, captured once and replayed; its floor and torch as they
    are."""

    def __init__(self, workload):
        self.base = workload
        self.NAME = f"{workload.NAME}_replay"
        self.DESCRIPTION = f"{workload.DESCRIPTION}; autograd captured and replayed"
        self.UNIT = workload.UNIT

    def sizes(self, quick):
        return self.base.sizes(quick)

    def build_autograd(self, size):
        import autograd
        if not hasattr(autograd, "capture"):
            raise Missing("capture")
        eager = self.base.build_autograd(size)
        step = autograd.capture(eager.step)
        return Bench(step=step, ops_per_step=eager.ops_per_step, check=eager.check,
                     outcome=eager.outcome)

    def build_floor(self, size):
        return self.base.build_floor(size)

    def build_torch(self, size, torch):
        return self.base.build_torch(size, torch)
