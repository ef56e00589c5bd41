"""DataLoader(rank=, world_size=): every rank's loader built in this process, compared with
the sharding rule written here (disjoint, complete, the same number of steps everywhere)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from autograd.data import DataLoader


def shards(n, batch_size, world_size, **options):
    loaders = [DataLoader(np.arange(n), np.arange(n) * 10, batch_size=batch_size,
                          rank=rank, world_size=world_size, **options)
               for rank in range(world_size)]
    return loaders, [[(x.tolist(), y.tolist()) for x, y in loader] for loader in loaders]


@given(world_size=st.integers(1, 4), batch_size=st.integers(1, 6), extra=st.integers(0, 30),
       shuffle=st.booleans(), drop_last=st.booleans(), epochs=st.integers(1, 2))
def test_ranks_see_disjoint_rows_and_together_each_row_once(world_size, batch_size, extra,
                                                           shuffle, drop_last, epochs):
    n = world_size + extra
    loaders = [DataLoader(np.arange(n), batch_size=batch_size, shuffle=shuffle, seed=3,
                          rank=rank, world_size=world_size, drop_last=drop_last)
               for rank in range(world_size)]
    for _ in range(epochs):
        per_rank = [[b.tolist() for (b,) in loader] for loader in loaders]
        steps = {len(batches) for batches in per_rank} | {len(loader) for loader in loaders}
        assert len(steps) == 1                                  # nobody waits for a missing step
        seen = [i for batches in per_rank for b in batches for i in b]
        assert len(seen) == len(set(seen))                      # disjoint
        step = batch_size * world_size
        if drop_last:
            assert len(seen) == n // step * step
        else:
            assert sorted(seen) == list(range(n))               # every row once
        for batches in zip(*per_rank):
            sizes = [len(b) for b in batches]
            assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


@given(n=st.integers(0, 30), batch_size=st.integers(1, 7), shuffle=st.booleans(),
       drop_last=st.booleans())
def test_one_rank_is_the_plain_loader(n, batch_size, shuffle, drop_last):
    plain = DataLoader(np.arange(n), batch_size=batch_size, shuffle=shuffle, seed=5,
                       drop_last=drop_last)
    single = DataLoader(np.arange(n), batch_size=batch_size, shuffle=shuffle, seed=5,
                        drop_last=drop_last, rank=0, world_size=1)
    assert [b.tolist() for (b,) in plain] == [b.tolist() for (b,) in single]


def test_unshuffled_parts_are_consecutive_and_the_rows_stay_paired():
    _, per_rank = shards(10, batch_size=2, world_size=2)
    assert per_rank[0] == [([0, 1], [0, 10]), ([4, 5], [40, 50]), ([8], [80])]
    assert per_rank[1] == [([2, 3], [20, 30]), ([6, 7], [60, 70]), ([9], [90])]


def test_a_remainder_shorter_than_the_world_joins_the_last_step():
    loaders, per_rank = shards(13, batch_size=2, world_size=3)   # 12 + 1 left over
    assert [len(loader) for loader in loaders] == [2, 2, 2]
    assert [len(steps[-1][0]) for steps in per_rank] == [3, 2, 2]


def test_bad_ranks_are_clear_errors():
    with pytest.raises(ValueError, match="0 <= rank < world_size, got rank=2, world_size=2"):
        DataLoader(np.arange(4), batch_size=1, rank=2, world_size=2)
    with pytest.raises(ValueError, match="needs a seed"):
        DataLoader(np.arange(4), batch_size=1, shuffle=True, rank=0, world_size=2)
    with pytest.raises(ValueError, match="3 samples cannot be shared by 4 ranks"):
        DataLoader(np.arange(3), batch_size=1, rank=0, world_size=4)
    with pytest.raises(TypeError, match="world_size must be an int"):
        DataLoader(np.arange(3), batch_size=1, world_size=2.0)
