"""Exact resume: a checkpoint holds everything that decides the rest of a run (model and buffers,
optimizer state, step and schedule, the DataLoader's position and generator, the dropout
generator), so resuming gives the same parameters, bit for bit, as never stopping."""
import numpy as np
import pytest

import autograd
from autograd import opt
from autograd.data import DataLoader
from autograd.io import save, load

EPOCHS, SAMPLES, BATCH = 3, 40, 8


def _data():
    rng = np.random.default_rng(5)
    return (rng.normal(size=(SAMPLES, 6)).astype(np.float32),
            rng.integers(0, 3, size=SAMPLES))


def _setup(seed):
    """Model (BatchNorm buffers, Dropout), optimizer with a decaying schedule, shuffling loader;
    ``seed`` decides every initial value and generator."""
    autograd.manual_seed(seed)
    model = autograd.Sequential(autograd.Linear(6, 16), autograd.BatchNorm1d(16),
                                autograd.ReLU(), autograd.Dropout(0.3), autograd.Linear(16, 3))
    optimizer = opt.SGD(lr=opt.ExponentialDecay(0.2, decay_steps=3, decay_rate=0.8),
                        momentum=0.9)
    loader = DataLoader(*_data(), batch_size=BATCH, shuffle=True, seed=seed)
    return model, optimizer, loader


def _train_step(model, optimizer, x, y):
    x = autograd.Tensor(data=x, requires_grad=False)
    loss = autograd.softmax_cross_entropy(model(x), y)
    for param, grad in autograd.backward(loss):
        optimizer.update(param, grad)
    optimizer.step()


def _checkpoint(path, model, optimizer, loader, **extras):
    save(path, model, optimizer, loader=loader.state_dict(), rng=autograd.get_rng_state(),
         **extras)


def _resume(path, seed):
    """A fresh process's view: everything built from another seed, then loaded."""
    model, optimizer, loader = _setup(seed)
    extras = load(path, model, optimizer)
    loader.load_state_dict(extras["loader"])
    autograd.set_rng_state(extras["rng"])
    return model, optimizer, loader, extras


def _parameters(model):
    return {name: np.array(value).tobytes() for name, value in model.state_dict().items()}


def _uninterrupted():
    model, optimizer, loader = _setup(seed=0)
    for _ in range(EPOCHS):
        for x, y in loader:
            _train_step(model, optimizer, x, y)
    return _parameters(model), optimizer.step_counter


@pytest.mark.parametrize("stop_after_epoch", [0, 1])
def test_resuming_after_an_epoch_is_bit_identical(tmp_path, stop_after_epoch):
    expected, steps = _uninterrupted()
    model, optimizer, loader = _setup(seed=0)
    for epoch in range(stop_after_epoch + 1):
        for x, y in loader:
            _train_step(model, optimizer, x, y)
    _checkpoint(tmp_path / "run.ckpt", model, optimizer, loader, epoch=stop_after_epoch)

    model, optimizer, loader, extras = _resume(tmp_path / "run.ckpt", seed=7)
    for epoch in range(extras["epoch"] + 1, EPOCHS):
        for x, y in loader:
            _train_step(model, optimizer, x, y)
    assert optimizer.step_counter == steps
    assert _parameters(model) == expected


def test_resuming_inside_an_epoch_is_bit_identical(tmp_path):
    expected, _ = _uninterrupted()
    model, optimizer, loader = _setup(seed=0)
    for epoch in range(2):
        for batch, (x, y) in enumerate(loader):
            _train_step(model, optimizer, x, y)
            if epoch == 1 and batch == 2:         # a checkpoint in the middle of epoch 2
                _checkpoint(tmp_path / "mid.ckpt", model, optimizer, loader, epoch=epoch)
    model, optimizer, loader, extras = _resume(tmp_path / "mid.ckpt", seed=3)
    for epoch in range(extras["epoch"], EPOCHS):  # the rest of epoch 2 first
        for x, y in loader:
            _train_step(model, optimizer, x, y)
    assert _parameters(model) == expected


def test_without_the_loader_and_generator_states_the_run_differs(tmp_path):
    """The states matter: this is what the resume above would give without them."""
    expected, _ = _uninterrupted()
    model, optimizer, loader = _setup(seed=0)
    for x, y in loader:
        _train_step(model, optimizer, x, y)
    save(tmp_path / "run.ckpt", model, optimizer)
    model, optimizer, loader = _setup(seed=0)         # the same seed, as the example had
    load(tmp_path / "run.ckpt", model, optimizer)
    for _ in range(1, EPOCHS):
        for x, y in loader:
            _train_step(model, optimizer, x, y)
    assert _parameters(model) != expected


def test_a_loop_that_breaks_off_ends_its_epoch():
    loader = DataLoader(np.arange(10), batch_size=2, shuffle=True, seed=1)
    reference = DataLoader(np.arange(10), batch_size=2, shuffle=True, seed=1)
    for (batch,) in loader:
        break
    state = loader.state_dict()
    assert state["position"] == 0
    next(iter(reference))                              # the same epoch, abandoned
    assert state == reference.state_dict()
    loader.load_state_dict(state)
    assert [b.tolist() for (b,) in loader] == [b.tolist() for (b,) in reference]


@pytest.mark.parametrize("state, message", [
    ({"generator": {}, "position": 0}, "not a generator state"),
    ({"generator": None, "position": -1}, "position must be an int in"),
    ({"position": 0}, "expected the dict state_dict"),
])
def test_a_wrong_loader_state_is_refused_naming_the_loader(state, message):
    loader = DataLoader(np.arange(10), batch_size=2, shuffle=True, seed=1)
    before = loader.state_dict()
    with pytest.raises(ValueError, match=f"DataLoader.load_state_dict: {message}"):
        loader.load_state_dict(state)
    assert loader.state_dict() == before


def test_rng_state_round_trip_and_bad_device():
    state = autograd.get_rng_state()
    first = autograd.dropout(autograd.Tensor(data=np.ones(50)), 0.5, training=True).to_numpy()
    autograd.set_rng_state(state)
    again = autograd.dropout(autograd.Tensor(data=np.ones(50)), 0.5, training=True).to_numpy()
    np.testing.assert_array_equal(first, again)
    with pytest.raises(ValueError, match="set_rng_state: no device 'gpu:7'"):
        autograd.set_rng_state({"gpu:7": {}})
