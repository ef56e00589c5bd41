"""The ``tape`` chain captured once with ``autograd.capture`` and replayed: forward and
backward of tanh(x * 1.01 + 0.1) links on a (4,) tensor, per recorded op, beside PyTorch eager
and the bare NumPy forward. What is left per op is the replay's own cost: one call of each
forward and backward and a local variable per array, no Tensor, tape or graph walk."""
from . import tape
from .common import Bench, Missing, as_numpy, float32_problems

NAME = "tape_replay"
DESCRIPTION = "the tape chain, captured once and replayed (autograd.capture)"
UNIT = tape.UNIT
OPS_PER_LINK = tape.OPS_PER_LINK
sizes = tape.sizes
build_floor = tape.build_floor
build_torch = tape.build_torch


def build_autograd(size):
    import autograd
    if not hasattr(autograd, "capture"):
        raise Missing("capture")
    backward, tanh, x, dy = tape.chain_parts(size)
    links = size["links"]
    last = {}

    def chain():
        y = x
        for _ in range(links):
            y = tanh(y * 1.01 + 0.1)
        (pair,) = backward(y, dy)
        return y, pair[1]

    step = autograd.capture(chain)

    def run():
        last["y"], last["dx"] = step()

    def check():
        for _ in range(3):                     # two recorded calls, then a replay
            y, dx = step()
        return float32_problems({"y": y}, [(x, dx)], {"x": x})

    return Bench(step=run, ops_per_step=OPS_PER_LINK * links, check=check,
                 outcome=lambda: {name: as_numpy(v) for name, v in last.items()})
