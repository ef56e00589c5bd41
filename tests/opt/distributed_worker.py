"""The program that tests/opt/test_distributed.py starts under ``mpiexec -n N``.

Every rank runs the same checks in the same order (so a failed comparison on one rank never
leaves another waiting in a collective); each check compares with a reference this process
computes alone. At the end rank 0 prints ``RESULTS {json}``: per check, per rank, None or the
failure message. ``--raise`` instead makes the last rank raise while the others are inside a
reduction: the run must end with an error, not hang.
"""
import json
import os
import sys
import tempfile
import traceback

import numpy as np

import autograd
from autograd import Tensor, opt
from autograd.data import DataLoader

STEPS, BATCH, FEATURES, CLASSES = 3, 4, 5, 3


class Net(autograd.Model):
    """linear-tanh-linear, no BatchNorm: batch statistics would differ per shard."""

    def __init__(self):
        super().__init__()
        self.fc1 = autograd.Linear(FEATURES, 7)
        self.fc2 = autograd.Linear(7, CLASSES)

    def forward(self, x):
        return self.fc2(autograd.tanh(self.fc1(x)))

    def train_one_batch(self, x, y):
        loss = autograd.softmax_cross_entropy(self.forward(x), y)
        self.optimizer(loss)
        return loss


def batches(world_size):
    """The same global batches on every rank: STEPS of BATCH rows per rank."""
    generator = np.random.default_rng(123)
    x = generator.standard_normal((STEPS, BATCH * world_size, FEATURES)).astype(np.float32)
    y = generator.integers(0, CLASSES, (STEPS, BATCH * world_size))
    return x, y


def trained(dist, make_optimizer, max_norm=None, device=None, communicator=None,
            **dist_options):
    """(parameters after data-parallel training, parameters of one process on the
    concatenated batches), both starting from rank 0's initial weights."""
    rank, world = dist.rank, dist.world_size
    device = device or autograd.device.cpu()
    autograd.manual_seed(rank)                 # ranks start different: broadcast must fix it
    model, reference = Net(), Net()
    model.to_device(device)
    reference.to_device(device)
    distributed = opt.DistOpt(make_optimizer(), communicator=communicator or dist.communicator,
                              max_norm=max_norm, **dist_options)
    distributed.broadcast_parameters(model)
    for (_, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
        q.data[...] = p.data
    alone = make_optimizer()
    x, y = batches(world)
    for step in range(STEPS):
        rows = slice(rank * BATCH, (rank + 1) * BATCH)
        xb = Tensor(data=x[step, rows], device=device, requires_grad=False)
        distributed(autograd.softmax_cross_entropy(model.forward(xb), y[step, rows]))
        xs = Tensor(data=x[step], device=device, requires_grad=False)
        loss = autograd.softmax_cross_entropy(reference.forward(xs), y[step])
        pairs = list(autograd.backward(loss))
        if max_norm is not None:
            pairs, _ = opt.clip_grad_norm(pairs, max_norm)
        for param, grad in pairs:
            alone.update(param, grad)
        alone.step()
    return ([p.to_numpy() for _, p in model.named_parameters()],
            [p.to_numpy() for _, p in reference.named_parameters()])


def assert_close(actual, expected, rtol=2e-5, atol=2e-6):
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def check_sgd_momentum_equals_one_process(dist):
    assert_close(*trained(dist, lambda: opt.SGD(lr=0.5, momentum=0.9)))


def check_adam_equals_one_process(dist):
    assert_close(*trained(dist, lambda: opt.Adam(lr=0.05), bucket_bytes=0))


def check_clipping_applies_to_the_averaged_gradient(dist):
    assert_close(*trained(dist, lambda: opt.SGD(lr=0.5, momentum=0.9), max_norm=0.05))


def check_bucketing_equals_no_bucketing(dist):
    make = lambda: opt.SGD(lr=0.5, momentum=0.9)          # noqa: E731
    unbucketed, _ = trained(dist, make, bucket_bytes=0)
    polled = opt.MpiCommunicator(progress_thread=True, poll_seconds=1e-4)
    for options in ({"bucket_bytes": 64}, {"bucket_bytes": 1 << 20}, {"overlap": False},
                    {"bucket_bytes": 64, "communicator": polled}):
        assert_close(trained(dist, make, **options)[0], unbucketed, rtol=1e-6, atol=1e-7)


def check_ranks_end_equal(dist):
    params, _ = trained(dist, lambda: opt.SGD(lr=0.5, momentum=0.9), bucket_bytes=64)
    everyone = dist.communicator.all_gather_object(params)
    for other in everyone:
        for a, b in zip(other, params):
            np.testing.assert_array_equal(a, b)


def check_batchnorm_statistics_are_broadcast(dist):
    bn = autograd.BatchNorm2d(3)
    bn.running_mean.data[...] = dist.rank + 1.0
    bn.running_var.data[...] = 10.0 * (dist.rank + 1)
    bn.scale.data[...] = -dist.rank
    dist.broadcast_parameters(bn, root=dist.world_size - 1)
    last = dist.world_size - 1
    np.testing.assert_array_equal(bn.running_mean.to_numpy(), np.full(3, last + 1.0))
    np.testing.assert_array_equal(bn.running_var.to_numpy(), np.full(3, 10.0 * (last + 1)))
    np.testing.assert_array_equal(bn.scale.to_numpy(), np.full(3, -float(last)))


def check_mismatched_shapes_are_an_error_naming_the_parameter(dist):
    last = dist.rank == dist.world_size - 1
    model = {"fc.b": Tensor(shape=(3,)), "fc.W": Tensor(shape=(4, 5 if last else 3))}
    try:
        dist.broadcast_parameters(model)
    except ValueError as error:
        message = str(error)
        assert "'fc.W'" in message and f"rank {dist.world_size - 1}" in message, message
    else:
        raise AssertionError("broadcast_parameters accepted different shapes")


def check_sharded_loader_covers_every_sample_once(dist):
    rank, world = dist.rank, dist.world_size
    for samples, batch_size, drop_last in ((23, 4, False), (2 * world * 3 + 1, 3, False),
                                           (30, 4, True)):
        loader = DataLoader(np.arange(samples), batch_size=batch_size, shuffle=True, seed=7,
                            rank=rank, world_size=world, drop_last=drop_last)
        for epoch in range(2):
            mine = [b.tolist() for (b,) in loader]
            everyone = dist.communicator.all_gather_object(mine)
            assert len({len(steps) for steps in everyone}) == 1, "ranks take different steps"
            assert all(len(b) > 0 for steps in everyone for b in steps), "an empty batch"
            seen = sorted(i for steps in everyone for b in steps for i in b)
            if drop_last:
                full = samples // (batch_size * world) * batch_size * world
                assert len(seen) == full == len(set(seen)), (epoch, seen)
            else:
                assert seen == list(range(samples)), (samples, batch_size, epoch, seen)


def check_all_reduce_sums(dist):
    tensor = Tensor(data=np.full((2, 3), dist.rank + 1.0, np.float32))
    dist.all_reduce(tensor)
    total = dist.world_size * (dist.world_size + 1) / 2
    np.testing.assert_array_equal(tensor.to_numpy(), np.full((2, 3), total, np.float32))
    pieces = [np.full(4, dist.rank, np.float64), np.full((2, 2), 1.0, np.float64)]
    dist.fused_all_reduce(pieces)
    np.testing.assert_array_equal(pieces[0], np.full(4, total - dist.world_size))
    np.testing.assert_array_equal(pieces[1], np.full((2, 2), float(dist.world_size)))


def check_model_trains_and_only_rank_zero_writes_checkpoints(dist):
    model = Net()
    distributed = opt.DistOpt(opt.SGD(lr=0.1), communicator=dist.communicator)
    model.set_optimizer(distributed)
    x, y = batches(dist.world_size)
    model.compile([Tensor(data=x[0, :2], requires_grad=False)], is_train=True)
    distributed.broadcast_parameters(model)
    for step in range(STEPS):
        model(Tensor(data=x[step, :BATCH], requires_grad=False), y[step, :BATCH])
    assert distributed.step_counter == STEPS
    folder = dist.communicator.all_gather_object(tempfile.mkdtemp() if dist.rank == 0
                                                 else None)[0]
    path = os.path.join(folder, f"rank{dist.rank}.ckpt")
    model.save_states(path, aux_states={"step": STEPS})
    assert os.path.exists(path) == (dist.rank == 0), f"rank {dist.rank} wrote {path}"
    distributed.barrier()
    restored = Net()
    restored.set_optimizer(opt.DistOpt(opt.SGD(lr=0.1), communicator=dist.communicator))
    restored.compile([Tensor(data=x[0, :2], requires_grad=False)], is_train=True)
    assert restored.load_states(os.path.join(folder, "rank0.ckpt")) == {"step": STEPS}
    for (_, a), (_, b) in zip(model.named_parameters(), restored.named_parameters()):
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


CHECKS = [value for name, value in sorted(globals().items()) if name.startswith("check_")]


def nccl_sgd_momentum_equals_one_process(dist):
    gpu = autograd.device.gpu(dist.local_rank)
    assert_close(*trained(dist, lambda: opt.SGD(lr=0.5, momentum=0.9), device=gpu,
                          bucket_bytes=64), rtol=1e-4, atol=1e-5)


def nccl_all_reduce_and_broadcast(dist):
    gpu = autograd.device.gpu(dist.local_rank)
    tensor = Tensor(data=np.full(5, dist.rank + 1.0, np.float32), device=gpu)
    dist.all_reduce(tensor)
    total = dist.world_size * (dist.world_size + 1) / 2
    np.testing.assert_array_equal(tensor.to_numpy(), np.full(5, total, np.float32))
    bn = autograd.BatchNorm2d(3)
    bn.to_device(gpu)
    bn.running_mean.data[...] = dist.rank + 1.0
    dist.broadcast_parameters(bn)
    np.testing.assert_array_equal(bn.running_mean.to_numpy(), np.ones(3, np.float32))


NCCL_CHECKS = [nccl_sgd_momentum_equals_one_process, nccl_all_reduce_and_broadcast]


def main(argv):
    if "--nccl" in argv:
        communicator, checks = opt.NcclCommunicator(), NCCL_CHECKS
    else:
        communicator, checks = opt.MpiCommunicator(), CHECKS
    dist = opt.DistOpt(opt.SGD(lr=0.1), communicator=communicator)
    if "--raise" in argv:
        return planted_failure(dist)
    results = {}
    for check in checks:
        try:
            check(dist)
            results[check.__name__] = None
        except AssertionError:
            results[check.__name__] = traceback.format_exc(limit=3)
    everyone = dist.communicator.all_gather_object(results)
    if dist.rank == 0:
        merged = {name: [r[name] for r in everyone] for name in results}
        print("RESULTS " + json.dumps({"world_size": dist.world_size, "checks": merged}))
        sys.stdout.flush()


def planted_failure(dist):
    """The last rank raises; the others are already waiting in a gradient reduction."""
    if dist.rank == dist.world_size - 1:
        raise ValueError(f"planted failure on rank {dist.rank}")
    w = Tensor(data=np.ones(3, np.float32), stores_grad=True)
    dist(autograd.sum(w * w))
    print("UNREACHABLE: a reduction completed without the failed rank")


if __name__ == "__main__":
    main(sys.argv[1:])
