"""DistOpt's collective helpers, checked in one process with a stand-in world (the mutation
run of opt/distributed.py: tests/opt/test_distributed.py reaches most of them only under
mpiexec, in processes mutmut does not follow). References: sums, averages and messages worked
out by hand for a world whose every rank holds this rank's arrays."""
import re
import types

import numpy as np
import pytest

import autograd
from autograd import Tensor, opt
from autograd.opt import communicators
from autograd.opt import distributed
from autograd.opt.distributed import GradientBuckets, _check_same_layout


def exactly(message):
    return f"^{re.escape(message)}$"


class World(communicators.Communicator):
    """``world_size`` ranks that all hold this rank's arrays (a sum is world_size times the
    array); ``root_values`` are what a broadcast from the root writes, in call order."""

    def __init__(self, world_size, rank=0, layouts=None, root_values=()):
        self.world_size, self.rank = world_size, rank
        self.messages, self.broadcasts, self.barriers = [], [], 0
        self.layouts, self.root_values = layouts, list(root_values)
        self.gathered, self.progressed, self.waited = [], [], []

    def start_all_reduce(self, array):
        self.messages.append(array.size)
        array *= self.world_size
        return "handle"

    def broadcast(self, array, root=0):
        self.broadcasts.append(root)
        array[...] = self.root_values.pop(0)
        return array

    def progress(self, handles):
        self.progressed.append(list(handles))

    def wait(self, handles):
        self.waited.append(list(handles))

    def all_gather_object(self, value):
        self.gathered.append(value)
        return self.layouts if self.layouts is not None else [value] * self.world_size

    def barrier(self):
        self.barriers += 1


def dist_sgd(world, lr=1.0, **options):
    return opt.DistOpt(opt.SGD(lr=lr), world, **options)


def test_all_reduce_sums_in_place_also_through_a_non_contiguous_view():
    world = World(3)
    tensor = Tensor(data=np.array([1.0, 2.0]))
    assert dist_sgd(world).all_reduce(tensor) is tensor
    np.testing.assert_array_equal(tensor.to_numpy(), [3.0, 6.0])
    base = np.arange(6.0).reshape(2, 3)
    view = base.T                                    # not contiguous: reduced in a copy
    assert dist_sgd(world).all_reduce(view) is view
    np.testing.assert_array_equal(base, 3 * np.arange(6.0).reshape(2, 3))


def test_fused_all_reduce_sends_one_message_and_writes_each_sum_back():
    world = World(2)
    first, second = Tensor(data=np.array([1.0, 2.0])), np.array([[3.0]])
    dist_sgd(world).fused_all_reduce([first, second], send=False)
    assert world.messages == [3]
    np.testing.assert_array_equal(first.to_numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(second, [[6.0]])


@pytest.mark.parametrize("as_tensor", [False, True])
def test_update_divides_an_already_summed_gradient_by_the_world_size(as_tensor):
    w = Tensor(data=np.array([1.0, 1.0]), stores_grad=True)
    summed = np.array([4.0, 8.0])
    dist_sgd(World(4)).update(w, Tensor(data=summed) if as_tensor else summed)
    np.testing.assert_array_equal(w.to_numpy(), [0.0, -1.0])      # 1 - (4, 8) / 4


def two_parameters():
    w = Tensor(data=np.array([1.0, 2.0, 3.0], np.float32), stores_grad=True)
    b = Tensor(data=np.array([1.0], np.float32), stores_grad=True)
    return w, b, autograd.sum(w * w) + autograd.sum(b * b)


@pytest.mark.parametrize("threshold, sizes", [(None, [4]), (2, [1, 3]), (0, [1, 3]), (3, [1, 3]),
                                              (4, [4])])
def test_threshold_counts_elements_of_four_bytes(threshold, sizes):
    """SINGA's threshold is in float32 elements: 2 means buckets of 8 bytes, so the 12-byte
    gradient of w goes alone; None keeps bucket_bytes (here 4 MiB: one message)."""
    world = World(1)
    w, b, loss = two_parameters()
    dist_sgd(world).backward_and_update(loss, threshold=threshold)
    assert sorted(world.messages) == sizes


def test_a_step_updates_with_the_average_and_times_its_phases():
    world = World(2)
    w, b, loss = two_parameters()
    dist = dist_sgd(world, lr=0.5)
    dist(loss)
    # every rank's gradient is (2w, 2b): the sum over 2 ranks, halved, is 2w again
    np.testing.assert_allclose(w.to_numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_allclose(b.to_numpy(), [0.0])
    assert dist.step_counter == 1 and set(dist.last_times) == {"backward", "wait", "update"}
    assert all(seconds >= 0 for seconds in dist.last_times.values())


def test_step_barrier_and_step_counter_reach_the_wrapped_optimizer():
    world = World(1)
    dist = dist_sgd(world)
    dist.step()
    dist.barrier()
    assert (dist.opt.step_counter, world.barriers) == (1, 1)
    dist.step_counter = 7
    assert dist.opt.step_counter == 7 and dist.lr_value == 1.0
    with pytest.raises(AttributeError):
        dist.__nothing_here__


def test_saving_and_loading_go_through_the_wrapped_optimizer():
    w, _, loss = two_parameters()
    w.name = "w"
    first = opt.DistOpt(opt.Adam(lr=0.1), World(1))
    first(autograd.sum(w * w))
    second = opt.DistOpt(opt.Adam(lr=0.1), World(1))
    second.set_states(first.get_states())
    assert repr(second.state_dict()) == repr(first.state_dict()) == repr(first.opt.state_dict())
    third = opt.DistOpt(opt.Adam(lr=0.1), World(1))
    third.load_state_dict(first.state_dict({"w": w}), {"w": w})
    assert repr(third.state_dict([w])) == repr(first.state_dict([w]))


def test_repr_names_the_optimizer_rank_world_and_bucket():
    world = World(4, rank=2)
    assert repr(dist_sgd(world, lr=0.5, bucket_bytes=64)) == (
        "DistOpt(SGD(lr=Constant(init_value=0.5), momentum=Constant(init_value=0.0), "
        "dampening=Constant(init_value=0.0), weight_decay=Constant(init_value=0.0), "
        "step_counter=0), rank=2, world_size=4, bucket_bytes=64)")


def test_broadcast_parameters_copies_roots_values_into_parameters_and_buffers():
    model = autograd.BatchNorm2d(2)
    names = [name for name, _ in model.named_parameters()] + [
        name for name, _ in model.named_buffers()]
    values = [np.full(2, float(i + 10), np.float32) for i in range(len(names))]
    world = World(2, root_values=values)
    dist_sgd(world).broadcast_parameters(model, root=1)
    assert world.broadcasts == [1] * len(names)
    got = dict(model.named_parameters()) | dict(model.named_buffers())
    for name, value in zip(names, values):
        np.testing.assert_array_equal(got[name].to_numpy(), value)


def test_broadcast_parameters_writes_back_into_a_non_contiguous_parameter():
    w = Tensor(data=np.ones((2, 3)), stores_grad=True)
    w.data = np.zeros((3, 2)).T
    root = np.arange(6.0).reshape(2, 3)
    dist_sgd(World(2, root_values=[root])).broadcast_parameters({"w": w})
    np.testing.assert_array_equal(w.to_numpy(), root)


def test_broadcast_parameters_refuses_what_it_cannot_copy_by_name():
    dist = dist_sgd(World(1))
    with pytest.raises(TypeError, match=exactly("DistOpt.broadcast_parameters: expected a Layer "
                                                "or a dict of Tensors, got list")):
        dist.broadcast_parameters([Tensor(data=np.ones(2))])
    with pytest.raises(TypeError, match=exactly("DistOpt.broadcast_parameters: 'w' is ndarray, "
                                                "not a Tensor")):
        dist.broadcast_parameters({"w": np.ones(2)})
    lazy = autograd.Sequential(autograd.Linear(3))
    with pytest.raises(RuntimeError, match=exactly(
            "DistOpt.broadcast_parameters: layer '0' creates its parameters at its first "
            "call; run the model once (model.compile([x]) or a forward pass) before "
            "broadcasting")):
        dist.broadcast_parameters(lazy)


def test_layouts_that_differ_between_ranks_are_named_with_both_ranks():
    root_layout = [("a", (2,), "float32"), ("b", (1,), "float32")]
    with pytest.raises(ValueError, match=exactly(
            "DistOpt.broadcast_parameters: rank 0 has different parameters than rank 1: "
            "missing ['b'], unexpected ['c']")):
        _check_same_layout([[("a", (2,), "float32"), ("c", (1,), "float32")], root_layout], 1)
    with pytest.raises(ValueError, match=exactly(
            "DistOpt.broadcast_parameters: parameter 'b' is (1,) float32 on rank 1 but (1,) "
            "float64 on rank 2")):
        _check_same_layout([root_layout, root_layout,
                            [("a", (2,), "float32"), ("b", (1,), "float64")]], 1)
    _check_same_layout([root_layout, list(root_layout)], 0)        # equal: no error
    w = Tensor(data=np.ones(2, np.float32), stores_grad=True)
    world = World(2, layouts=[[("w", (2,), "float32")], [("w", (3,), "float32")]])
    with pytest.raises(ValueError, match="parameter 'w' is"):
        dist_sgd(world).broadcast_parameters({"w": w})
    assert world.broadcasts == []                   # checked before anything is copied


def test_constructor_messages_are_exact():
    world = World(1)
    for options, message in [
            ({"max_norm": 0}, "DistOpt: max_norm must be positive or None, got 0"),
            ({"bucket_bytes": True}, "DistOpt: bucket_bytes must be an int >= 0, got True"),
            ({"bucket_bytes": 1.5}, "DistOpt: bucket_bytes must be an int >= 0, got 1.5")]:
        with pytest.raises(ValueError, match=exactly(message)):
            opt.DistOpt(opt.SGD(), world, **options)
    with pytest.raises(TypeError, match=exactly("DistOpt: expected an autograd optimizer to "
                                                "wrap (opt.SGD(...)), got str")):
        opt.DistOpt("sgd", world)
    with pytest.raises(TypeError, match=exactly("DistOpt: communicator must be a "
                                                "Communicator, got object")):
        opt.DistOpt(opt.SGD(), object())
    with pytest.raises(TypeError, match=exactly("DistOpt: give the optimizer once (optimizer "
                                                "or opt), not both")):
        opt.DistOpt(opt.SGD(), world, opt=opt.SGD())
    assert opt.DistOpt(opt.SGD(), world, bucket_bytes=0, max_norm=0.5).max_norm == 0.5


@pytest.mark.parametrize("method, message", [
    ("backward_and_partial_update", "DistOpt.backward_and_partial_update (SINGA's experimental "
     "asynchronous partial averaging) is not implemented; use backward_and_update"),
    ("backward_and_sparse_update", "DistOpt.backward_and_sparse_update (SINGA's experimental "
     "sparsified gradients) is not implemented; use backward_and_update"),
    ("backward_and_update_half", "DistOpt.backward_and_update_half (SINGA's experimental FP16 "
     "messages) is not implemented: MPI has no half-precision sum; use backward_and_update")])
def test_singas_experimental_updates_say_they_are_not_implemented(method, message):
    with pytest.raises(NotImplementedError, match=exactly(message)):
        getattr(dist_sgd(World(1)), method)(None)


def test_buckets_flush_when_the_dtype_changes_and_sum_without_averaging():
    world = World(2)
    buckets = GradientBuckets(world, bucket_bytes=1 << 20)
    arrays = [np.array([1.0], np.float32), np.array([2.0, 3.0], np.float32),
              np.array([4.0], np.float64)]
    for key, array in enumerate(arrays):
        buckets.add(key, array)
    sums = buckets.wait_and_sum()
    assert world.messages == [3, 1]          # the float64 gradient starts a bucket of its own
    assert [shape for _, shape in buckets.entries()] == [(1,), (2,), (1,)]
    for got, array in zip(sums, arrays):
        np.testing.assert_array_equal(got, 2 * array)
        assert got.dtype == array.dtype


def test_defaults_and_the_state_before_any_step():
    dist = dist_sgd(World(1))
    assert (dist.overlap, dist.last_norm, dist.last_times) == (True, None, {})
    assert dist.bucket_bytes == 4 * 1024 * 1024


def test_an_object_not_yet_initialised_has_no_optimizer_to_forward_to():
    """Before __init__ (copy, pickle) reading any attribute is a plain AttributeError naming
    it, not an endless forward to a missing optimizer."""
    bare = opt.DistOpt.__new__(opt.DistOpt)
    for name in ("optimizer", "opt", "lr"):
        with pytest.raises(AttributeError, match="^(optimizer|opt)$"):
            getattr(bare, name)
    with pytest.raises(AttributeError, match="^__nothing_here__$"):
        dist_sgd(World(1)).__nothing_here__


@pytest.mark.parametrize("call", ["__call__", "backward_and_update"])
def test_dy_reaches_the_backward(call):
    w = Tensor(data=np.array([2.0]), stores_grad=True)
    getattr(dist_sgd(World(1), lr=0.1), call)(autograd.sum(w * w), Tensor(data=np.array(3.0)))
    np.testing.assert_allclose(w.to_numpy(), [2.0 - 0.1 * 3.0 * 4.0])


def test_the_phases_times_are_the_clock_differences_between_the_phases(monkeypatch):
    """A fake clock (no timing assertion): read at the start, before waiting, before updating
    and at the end, at 1, 3, 7 and 15 s, the phases last 2, 4 and 8 s."""
    readings = iter([1.0, 3.0, 7.0, 15.0])
    clock = types.SimpleNamespace(perf_counter=lambda: next(readings))
    monkeypatch.setattr(distributed, "time", clock)       # this module's clock only
    w, b, loss = two_parameters()
    dist = dist_sgd(World(1))
    dist(loss)
    assert dist.last_times == {"backward": 2.0, "wait": 4.0, "update": 8.0}


def test_each_step_lets_reductions_progress_and_waits_for_every_bucket():
    world = World(1)
    w, b, loss = two_parameters()
    dist_sgd(world, bucket_bytes=0)(loss)           # each gradient alone: two buckets
    assert world.progressed[-1] == ["handle", "handle"]
    assert world.waited == [["handle", "handle"]]


@pytest.mark.parametrize("bucket_bytes, sizes, expected", [
    (9, [1] * 6, [3, 3]),           # 12 bytes >= 9 flushes; counting restarts from 0
    (8, [1, 1, 1], [2, 1]),         # exactly full is full
    (8, [1, 2], [1, 2]),            # an array of exactly bucket_bytes goes alone, after
])
def test_bucket_filling_is_exact(bucket_bytes, sizes, expected):
    world = World(1)
    buckets = GradientBuckets(world, bucket_bytes)
    for key, size in enumerate(sizes):
        buckets.add(key, np.ones(size, np.float32))
    shapes = [got.shape for got in buckets.wait_and_sum()]
    assert world.messages == expected and shapes == [(size,) for size in sizes]


def test_broadcast_parameters_shares_the_layout_and_uses_root_zero_by_default():
    w = Tensor(data=np.ones(2, np.float32), stores_grad=True)
    world = World(2, root_values=[np.full(2, 5.0, np.float32)])
    dist_sgd(world).broadcast_parameters({"w": w})
    assert world.gathered == [[("w", (2,), "float32")]] and world.broadcasts == [0]


def test_a_lazy_top_level_layer_is_named_by_its_type():
    with pytest.raises(RuntimeError, match="^DistOpt.broadcast_parameters: layer 'Linear' "
                                           "creates its parameters"):
        dist_sgd(World(1)).broadcast_parameters(autograd.Linear(3))


def test_saving_with_params_passes_them_on():
    w, unused = (Tensor(data=np.ones(2), stores_grad=True) for _ in range(2))
    first = opt.DistOpt(opt.Adam(lr=0.1), World(1))
    first(autograd.sum(w * w))
    saved = first.state_dict([w, unused])
    assert [entry["state"] is None for entry in saved["parameters"]] == [False, True]
    for load in ("load_state_dict", "set_states"):
        second = opt.DistOpt(opt.Adam(lr=0.1), World(1))
        copy = Tensor(data=w.to_numpy().copy(), stores_grad=True)
        getattr(second, load)(first.state_dict([w]), [copy])    # by position: adopted now
        assert list(second.states) == [copy]


def test_contiguous_writable_copies_views_and_read_only_arrays():
    from autograd.opt.distributed import _contiguous_writable
    array = np.arange(6.0).reshape(2, 3)
    assert _contiguous_writable(array) is array
    view = _contiguous_writable(array.T)
    assert view.flags.c_contiguous and np.array_equal(view, array.T)
    array.flags.writeable = False
    copy = _contiguous_writable(array)
    assert copy is not array and copy.flags.writeable and np.array_equal(copy, array)
