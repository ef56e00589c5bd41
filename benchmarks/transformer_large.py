"""A larger transformer block training step: one pre-norm causal block 256 wide with 4 heads,
batch 16 x context 256, between a token embedding and the tied output projection (vocabulary
65), SGD update. The same three implementations as benchmarks/transformer.py; here the
(T, T) attention matrices (16 x 4 x 256 x 256) and the GEMMs dominate, not per-op overhead.
"""
from .transformer import build_autograd, build_floor, build_torch, make_data   # noqa: F401

NAME = "transformer_large"
DESCRIPTION = "one causal block 256 wide, 4 heads, batch 16 x context 256, SGD step"
UNIT = "ms"


def sizes(quick):
    if quick:
        return {"batch": 2, "context": 16, "width": 32, "heads": 4, "layers": 1,
                "vocabulary": 65}
    return {"batch": 16, "context": 256, "width": 256, "heads": 4, "layers": 1,
            "vocabulary": 65}
