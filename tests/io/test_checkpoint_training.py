"""Checkpoints with autograd's own Layers and optimizers: resuming is bit-identical."""
import numpy as np
import pytest

import autograd
from autograd import opt
from autograd.io import save, load, CheckpointError


def _network(hidden=8, lazy_head=False, seed=0):
    autograd.manual_seed(seed)
    head = autograd.Linear(3) if lazy_head else autograd.Linear(hidden, 3)
    return autograd.Sequential(autograd.Linear(4, hidden), autograd.ReLU(), head)


def _batches():
    rng = np.random.default_rng(0)
    return [(autograd.Tensor(data=rng.normal(size=(6, 4)).astype(np.float32),
                             requires_grad=False),
             autograd.Tensor(data=rng.normal(size=(6, 3)).astype(np.float32),
                             requires_grad=False)) for _ in range(6)]


def _train(model, optimizer, batches):
    for x, y in batches:
        optimizer(autograd.mse_loss(model(x), y))


def _arrays(model):
    return {name: value.copy() for name, value in model.state_dict().items()}


@pytest.mark.parametrize("make_optimizer", [
    lambda: opt.Adam(lr=0.01),
    lambda: opt.SGD(lr=opt.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5), momentum=0.9),
])
@pytest.mark.parametrize("lazy_head", [False, True])
def test_resume_from_a_checkpoint_is_bit_identical(tmp_path, make_optimizer, lazy_head):
    batches = _batches()
    model, optimizer = _network(), make_optimizer()
    _train(model, optimizer, batches[:3])
    save(tmp_path / "run.ckpt", model, optimizer, epoch=1)
    _train(model, optimizer, batches[3:])
    uninterrupted = _arrays(model)

    # a fresh model (other initial values; its head may not even exist yet) and optimizer
    resumed, resumed_optimizer = _network(lazy_head=lazy_head, seed=1), make_optimizer()
    assert load(tmp_path / "run.ckpt", resumed, resumed_optimizer) == {"epoch": 1}
    assert resumed_optimizer.step_counter == 3
    _train(resumed, resumed_optimizer, batches[3:])
    after = _arrays(resumed)
    assert list(after) == list(uninterrupted)
    for name in after:
        assert after[name].tobytes() == uninterrupted[name].tobytes(), name


def test_a_model_of_another_shape_is_refused_and_left_unchanged(tmp_path):
    model, optimizer = _network(), opt.Adam(lr=0.01)
    _train(model, optimizer, _batches()[:2])
    save(tmp_path / "run.ckpt", model, optimizer)
    other, other_optimizer = _network(hidden=5, seed=3), opt.Adam(lr=0.5)
    before = _arrays(other)
    with pytest.raises(CheckpointError, match=r"run\.ckpt does not fit the model: .*0\.W") as info:
        load(tmp_path / "run.ckpt", other, other_optimizer)
    assert "(4, 5)" in str(info.value) and "(4, 8)" in str(info.value)
    for name, value in _arrays(other).items():
        np.testing.assert_array_equal(value, before[name])
    assert other_optimizer.step_counter == 0 and other_optimizer.lr_value == 0.5


def test_another_optimizer_class_is_refused_and_the_model_put_back(tmp_path):
    model, optimizer = _network(), opt.Adam(lr=0.01)
    _train(model, optimizer, _batches()[:2])
    save(tmp_path / "run.ckpt", model, optimizer)
    target = _network(seed=4)
    before = _arrays(target)
    with pytest.raises(CheckpointError, match="saved by Adam, not by SGD"):
        load(tmp_path / "run.ckpt", target, opt.SGD(lr=0.1))
    for name, value in _arrays(target).items():
        np.testing.assert_array_equal(value, before[name])


def test_strict_key_check_is_the_layers_own(tmp_path):
    save(tmp_path / "run.ckpt", _network())
    bigger = autograd.Sequential(autograd.Linear(4, 8), autograd.ReLU(), autograd.Linear(8, 3),
                                 autograd.Linear(3, 2))
    with pytest.raises(CheckpointError, match=r"missing keys \['3.W', '3.b'\]"):
        load(tmp_path / "run.ckpt", bigger)
    before = _arrays(bigger)["3.W"]
    load(tmp_path / "run.ckpt", bigger, strict=False)
    np.testing.assert_array_equal(_arrays(bigger)["3.W"], before)
    np.testing.assert_array_equal(_arrays(bigger)["0.W"], _network().state_dict()["0.W"])
