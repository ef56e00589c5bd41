"""DataLoader paths the mutation run found untested (issue 22): state_dict/load_state_dict and
the resume inside an epoch, the rank split of an uneven last step, the host-array checks, and
the error messages word for word. References: a NumPy generator seeded here, the batches of an
uninterrupted loader, and the sharding rule worked out by hand in the comments."""
import numpy as np
import pytest

import autograd
from autograd.data import DataLoader

N, BATCH, SEED = 10, 3, 11         # 4 batches per epoch: 3 + 3 + 3 + 1


def _loader(**options):
    return DataLoader(np.arange(N), np.arange(N) * 10, batch_size=BATCH, shuffle=True,
                      seed=SEED, **options)


def _epoch(batches):
    return [(x.tolist(), y.tolist()) for x, y in batches]


def _message(error, call, *args, **kwargs):
    with pytest.raises(error) as info:
        call(*args, **kwargs)
    return str(info.value)


# ------------------------------------------------------------------ state_dict
def test_a_fresh_loader_state_is_the_seeded_generator_at_position_zero():
    """Kills a fresh `_epoch` that is not None, and a wrong key or position 1 in the last
    branch of state_dict."""
    assert _loader().state_dict() == {
        "generator": np.random.default_rng(SEED).bit_generator.state, "position": 0}


def test_inside_an_epoch_the_state_is_the_epoch_start_and_the_batches_yielded():
    """Kills a wrong or missing `position` count (batch - 1, batch + 2, None), the epoch not
    being recorded, and mistyped keys in the epoch record."""
    loader = _loader()
    iterator = iter(loader)
    start = np.random.default_rng(SEED).bit_generator.state     # before the permutation
    for yielded in (1, 2, 3, 4):
        next(iterator)
        assert loader.state_dict() == {"generator": start, "position": yielded}


def test_after_an_epoch_ends_the_state_starts_the_next_one():
    """Kills the end-of-epoch reset (`is not epoch`, or "" instead of None): the state must
    then be the generator after one permutation, at position 0."""
    loader = _loader()
    list(loader)
    reference = np.random.default_rng(SEED)
    reference.permutation(N)
    assert loader.state_dict() == {"generator": reference.bit_generator.state, "position": 0}


def test_resuming_inside_an_epoch_yields_the_rest_and_then_the_next_epochs():
    """Kills a load that drops the position (`_resume = None`, `range(len(batches))`), a
    resume that does not restore the generator, and a resume left pending after use."""
    original = _loader()
    list(original)                                       # epoch 1
    iterator = iter(original)
    head = [next(iterator), next(iterator)]              # epoch 2, two batches
    state = original.state_dict()
    rest = list(iterator)
    later = [_epoch(original) for _ in range(2)]         # epochs 3 and 4

    resumed = _loader()
    resumed.load_state_dict(state)
    assert resumed.state_dict() == state                 # not yet iterated: the loaded state
    assert _epoch(resumed) == _epoch(rest)
    assert [_epoch(resumed) for _ in range(2)] == later
    assert len(head) + len(rest) == len(original) == 4


def test_loading_a_state_at_position_zero_sets_the_generator():
    """Kills a position-0 load that leaves the generator as it was or sets None."""
    original = _loader()
    list(original)
    state = original.state_dict()                        # between epochs 1 and 2
    expected = [_epoch(original) for _ in range(2)]
    fresh = _loader()
    fresh.load_state_dict(state)
    assert fresh.state_dict() == state
    assert [_epoch(fresh) for _ in range(2)] == expected


def test_loading_while_an_epoch_runs_replaces_its_state():
    """Kills `_epoch = ""` after a load: the state must be the loaded one at once."""
    loader = _loader()
    saved = loader.state_dict()
    iterator = iter(loader)
    next(iterator)
    loader.load_state_dict(saved)
    assert loader.state_dict() == saved
    assert _epoch(loader) == _epoch(_loader())


def test_the_end_of_an_epoch_is_a_valid_position():
    """Kills `position < len(self)`: a state saved after the last batch, before the loop
    ended, must load; it yields nothing more of that epoch, then the next epoch."""
    original = _loader()
    iterator = iter(original)
    for _ in range(len(original)):
        next(iterator)
    state = original.state_dict()
    assert state["position"] == len(original)
    iterator.close()
    following = _epoch(original)
    resumed = _loader()
    resumed.load_state_dict(state)
    assert _epoch(resumed) == []
    assert _epoch(resumed) == following


def test_a_numpy_integer_position_is_accepted():
    """Kills `isinstance(position, (int, np.integer))` negated (every int refused)."""
    loader = _loader()
    state = dict(loader.state_dict(), position=np.int64(1))
    loader.load_state_dict(state)
    assert loader.state_dict()["position"] == 1
    assert _epoch(loader) == _epoch(_loader())[1:]


# ------------------------------------------------------------------ load_state_dict errors
def test_a_state_that_is_not_the_dict_state_dict_returned_is_refused_word_for_word():
    """Kills `and` for `or` (a dict with wrong keys then fails with a KeyError) and mutated
    messages."""
    loader = _loader()
    expected = ("DataLoader.load_state_dict: expected the dict state_dict() returned "
                "({'generator', 'position'}), got ")
    assert _message(ValueError, loader.load_state_dict, [1, 2]) == expected + "[1, 2]"
    assert _message(ValueError, loader.load_state_dict, {"position": 0}) \
        == expected + "{'position': 0}"
    extra = dict(loader.state_dict(), epoch=3)
    assert _message(ValueError, loader.load_state_dict, extra).startswith(expected)


@pytest.mark.parametrize("position", [True, 1.0, -1, 5, None])
def test_a_position_outside_the_epoch_is_refused_word_for_word(position):
    """Kills the range and type checks joined by `and`, and a mutated message (4 batches:
    positions 0..4 are valid)."""
    loader = _loader()
    state = dict(loader.state_dict(), position=position)
    assert _message(ValueError, loader.load_state_dict, state) == (
        f"DataLoader.load_state_dict: position must be an int in [0, 4], got {position!r}")


def test_a_foreign_generator_state_is_refused_naming_the_loader():
    loader = _loader()
    message = _message(ValueError, loader.load_state_dict,
                       {"generator": {"bit_generator": "NoSuchGenerator"}, "position": 0})
    assert message.startswith("DataLoader.load_state_dict: not a generator state of this "
                              "loader (")
    assert loader.state_dict() == _loader().state_dict()        # nothing changed


# ------------------------------------------------------------------ ranks
def test_an_uneven_last_step_gives_the_extra_rows_to_the_first_ranks():
    """Kills `min(rank + 2, extra)`: 8 rows, batch 2, 3 ranks: one global step of 6 and a
    remainder of 2 (< 3 ranks) joins it: 8 = 3 + 3 + 2 rows, contiguous."""
    parts = [[b.tolist() for (b,) in DataLoader(np.arange(8), batch_size=2, rank=r,
                                                 world_size=3)] for r in range(3)]
    assert parts == [[[0, 1, 2]], [[3, 4, 5]], [[6, 7]]]


def test_a_remainder_joins_the_last_of_several_steps():
    """Kills `bounds[+1]` for `bounds[-1]` (two mutants): 19 rows, batch 2, 3 ranks: steps
    0..6, 6..12 and 12..19 (the one row left joins the third step: 3 + 2 + 2)."""
    parts = [[b.tolist() for (b,) in DataLoader(np.arange(19), batch_size=2, rank=r,
                                                 world_size=3)] for r in range(3)]
    assert parts == [[[0, 1], [6, 7], [12, 13, 14]],
                     [[2, 3], [8, 9], [15, 16]],
                     [[4, 5], [10, 11], [17, 18]]]


def test_one_rank_may_shuffle_without_a_seed():
    """Kills `world_size >= 1` in the seed check: only several ranks need a seed."""
    loader = DataLoader(np.arange(7), batch_size=3, shuffle=True)
    assert sorted(np.concatenate([b for (b,) in loader]).tolist()) == list(range(7))


def test_two_ranks_need_two_samples():
    """Kills `world_size > 2` in the sample-count check."""
    assert _message(ValueError, DataLoader, np.arange(1), batch_size=1, rank=0,
                    world_size=2) == "DataLoader: 1 samples cannot be shared by 2 ranks"


def test_rank_errors_word_for_word():
    assert _message(TypeError, DataLoader, np.arange(4), batch_size=1, rank=1.0,
                    world_size=2) == "DataLoader: rank must be an int, got float"
    assert _message(ValueError, DataLoader, np.arange(4), batch_size=1, shuffle=True,
                    world_size=2) == (
        "DataLoader: shuffling for several ranks needs a seed (the same on every rank), or "
        "the ranks' shards would overlap; got seed=None")


# ------------------------------------------------------------------ arrays, devices, messages
class _HostOnlyThroughToNumpy:
    """Stands for a GPU Tensor: `to_numpy()` copies to the host, `np.asarray` refuses (as
    Tensor.__array__ does off the CPU)."""

    def __init__(self, array):
        self.array = array

    def to_numpy(self):
        return self.array.copy()

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Tensor on gpu:0: call to_numpy() to copy it to the host")


def test_a_tensor_off_the_host_is_read_through_to_numpy():
    """Kills `hasattr(None/array, <mutated name>)`: only the CPU Tensor (whose np.asarray
    works) was tried before."""
    (batch,), = list(DataLoader(_HostOnlyThroughToNumpy(np.arange(4.0)), batch_size=4))
    np.testing.assert_array_equal(batch, np.arange(4.0))


@pytest.mark.parametrize("module", ["cupy", "cupy._core.core"])
def test_a_cupy_array_is_refused_word_for_word(module):
    """Kills the module test on `type(None)`, `split(None)` / a mutated separator (a class in
    a submodule of cupy), a mutated "cupy", and a mutated message."""
    fake = type("ndarray", (), {"__module__": module, "__len__": lambda self: 4})()
    assert _message(TypeError, DataLoader, np.arange(4), fake, batch_size=2) == (
        "DataLoader: array 1 is a CuPy array; give host (NumPy) arrays and device= to move "
        "the batches")


def test_argument_errors_word_for_word():
    assert _message(ValueError, DataLoader, batch_size=2) == \
        "DataLoader: expected at least one array, got none"
    assert _message(ValueError, DataLoader, np.arange(3), 1.0, batch_size=2) == (
        "DataLoader: array 1 is a scalar (shape ()); expected an array whose first "
        "dimension indexes the samples")
    assert _message(TypeError, DataLoader, np.arange(3), batch_size=2, device="gpu") == \
        "DataLoader: device must be an autograd Device or None, got str"


def test_the_seed_is_kept_and_device_batches_need_no_gradient():
    """Kills `self.seed = None` and `requires_grad=None` (a bool is documented)."""
    assert _loader().seed == SEED
    (x, y), = list(DataLoader(np.arange(3.0), np.arange(3), batch_size=3,
                              device=autograd.device.cpu()))
    assert x.requires_grad is False and y.requires_grad is False
