"""state_dict / load_state_dict: resuming gives bit-identical parameters; loading checks all
before it assigns anything."""
import copy

import numpy as np
import pytest

from autograd import Tensor, opt
from tests.opt.quadratic import loss_of, make_params

MAKERS = {
    "SGD": lambda: opt.SGD(lr=opt.ExponentialDecay(0.05, 3, 0.7), momentum=0.9, nesterov=True,
                           weight_decay=0.01),
    "Adam": lambda: opt.Adam(lr=opt.LinearWarmup(opt.CosineDecay(0.05, 20), 4),
                             weight_decay=0.01),
    "AdamW": lambda: opt.AdamW(lr=0.05, betas=(0.8, 0.95)),
    "RMSProp": lambda: opt.RMSProp(lr=0.01, rho=0.8),
    "AdaGrad": lambda: opt.AdaGrad(lr=opt.StepDecay(0.1, 2, 0.9)),
}


def train(optimizer, params, steps):
    for _ in range(steps):
        optimizer(loss_of(params))


def fresh_params_like(params, names):
    fresh = []
    for param, name in zip(params, names):
        tensor = Tensor(data=param.to_numpy().copy(), stores_grad=True)
        tensor.name = name
        fresh.append(tensor)
    return fresh


LOADINGS = ["by name", "by dict", "by position", "pending by name"]


@pytest.mark.parametrize("loading", LOADINGS)
@pytest.mark.parametrize("name", MAKERS)
def test_resume_is_bit_identical(name, loading):
    dtype_names = ("w1", "w2") if loading != "by position" else (None, None)
    optimizer = MAKERS[name]()
    params = make_params(np.float32, names=dtype_names)
    train(optimizer, params, 5)

    if loading == "by dict":
        saved = optimizer.state_dict({"a": params[0], "b": params[1]})
    elif loading == "by position":
        saved = optimizer.state_dict(params)
    else:
        saved = optimizer.state_dict()
    saved = copy.deepcopy(saved)
    resumed_params = fresh_params_like(params, dtype_names)
    train(optimizer, params, 5)                                # the uninterrupted run

    resumed = MAKERS[name]()
    if loading == "by dict":
        resumed.load_state_dict(saved, {"a": resumed_params[0], "b": resumed_params[1]})
    elif loading == "pending by name":
        resumed.load_state_dict(saved)
    else:
        resumed.load_state_dict(saved, resumed_params)
    assert resumed.step_counter == 5
    train(resumed, resumed_params, 5)

    assert resumed.step_counter == optimizer.step_counter == 10
    for a, b in zip(params, resumed_params):
        assert b.dtype == np.float32
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


def test_state_dict_holds_host_copies_and_describes_everything():
    sgd = opt.SGD(lr=0.1, momentum=0.9)
    params = make_params()
    train(sgd, params, 2)
    saved = sgd.state_dict()
    assert saved["optimizer"] == "SGD" and saved["step_counter"] == 2
    assert saved["hyperparameters"] == {"lr": 0.1, "momentum": 0.9, "dampening": 0.0,
                                        "weight_decay": 0.0}
    assert saved["options"] == {"nesterov": False}
    assert [(e["name"], e["shape"], e["dtype"]) for e in saved["parameters"]] == \
        [(p.name, p.shape, "float64") for p in sgd.parameters()]
    buffer = saved["parameters"][0]["state"]["momentum_buffer"]
    kept = buffer.copy()
    train(sgd, params, 1)
    np.testing.assert_array_equal(buffer, kept)                  # not the live array
    assert sgd.get_states()["step_counter"] == 3                 # SINGA's spelling


def test_hyperparameters_are_restored_except_user_functions():
    source = opt.SGD(lr=opt.StepDecay(0.2, 2, 0.5), momentum=lambda step: 0.3)
    source.weight_decay = 0.05
    saved = source.state_dict()
    assert saved["hyperparameters"]["momentum"] is None
    target = opt.SGD(lr=0.1, momentum=lambda step: 0.6)
    target.set_states(saved)
    assert target.lr == opt.StepDecay(0.2, 2, 0.5)
    assert target.values()["weight_decay"] == 0.05
    assert target.values()["momentum"] == 0.6                    # its own function kept


def snapshot(optimizer):
    return (optimizer.step_counter, dict(optimizer._schedules), dict(optimizer.states),
            dict(optimizer._pending))


def entry(saved, name):
    return next(e for e in saved["parameters"] if e["name"] == name)


def trained_adam():
    adam = opt.Adam(lr=0.05)
    params = make_params()
    train(adam, params, 2)
    return adam, params


@pytest.mark.parametrize("corrupt, error, message", [
    (lambda d: d.update(optimizer="SGD"), ValueError, "saved by SGD, not by Adam"),
    (lambda d: d.pop("step_counter"), ValueError, "missing \\['step_counter'\\]"),
    (lambda d: d.update(step_counter=-1), ValueError, "step_counter must be a non-negative"),
    (lambda d: d["hyperparameters"].update(lr=-2.0), ValueError, "lr must be in"),
    (lambda d: d["hyperparameters"].update(rho=0.9), ValueError, "unknown hyperparameters"),
    (lambda d: entry(d, "w2")["state"].update(m=np.zeros((3, 3))), ValueError,
     "m of parameter 'w2' is float64 of shape \\(3, 3\\), expected float64 of shape \\(2, 2\\)"),
    (lambda d: entry(d, "w2")["state"].update(momentum_buffer=np.zeros((2, 2))),
     ValueError, "unknown entries \\['momentum_buffer'\\]"),
    (lambda d: entry(d, "w1").update(name="w9"), ValueError,
     "saved state for \\['w9'\\] but no parameter of that name"),
    (lambda d: entry(d, "w1").update(shape=(4,), state=dict(m=np.zeros(4), v=np.zeros(4),
                                                             step=2)), ValueError,
     "saved state for 'w1' is float64 of shape \\(4,\\), but parameter 'w1' is float64 of "
     "shape \\(3,\\)"),
])
def test_a_bad_state_raises_and_changes_nothing(corrupt, error, message):
    adam, params = trained_adam()
    saved = copy.deepcopy(adam.state_dict())
    corrupt(saved)
    target, target_params = trained_adam()
    target.step()
    before = snapshot(target)
    with pytest.raises(error, match=message):
        target.load_state_dict(saved, target_params)
    assert snapshot(target) == before


def test_position_matching_needs_as_many_parameters():
    sgd = opt.SGD(lr=0.1, momentum=0.9)
    params = make_params(names=(None, None))
    train(sgd, params, 1)
    with pytest.raises(ValueError, match="2 saved parameter entries but 1 parameters given"):
        opt.SGD(lr=0.1, momentum=0.9).load_state_dict(sgd.state_dict(), params[:1])
    with pytest.raises(ValueError, match="entry 0 has no name; pass the parameters"):
        opt.SGD(lr=0.1, momentum=0.9).load_state_dict(sgd.state_dict())


def test_a_pending_state_that_does_not_fit_is_rejected_at_update():
    sgd = opt.SGD(lr=0.1, momentum=0.9)
    train(sgd, make_params(), 1)
    target = opt.SGD(lr=0.1, momentum=0.9)
    target.load_state_dict(sgd.state_dict())
    impostor = Tensor(data=np.zeros(5), stores_grad=True)
    impostor.name = "w1"
    with pytest.raises(ValueError, match="saved state for 'w1' is float64 of shape \\(3,\\), "
                                         "but parameter 'w1' is float64 of shape \\(5,\\)"):
        target.update(impostor, np.ones(5))
    np.testing.assert_array_equal(impostor.to_numpy(), np.zeros(5))
    assert target.states == {} and set(target._pending) == {"w1", "w2"}
    assert len(target.state_dict()["parameters"]) == 2          # still saved while pending


def test_options_are_checked_with_the_loaded_hyperparameters():
    nesterov = opt.SGD(lr=0.1, momentum=0.9, nesterov=True)
    train(nesterov, make_params(), 1)
    plain = opt.SGD(lr=0.1)                     # momentum 0 until the state says 0.9
    plain.load_state_dict(nesterov.state_dict(), make_params())
    assert plain.nesterov and plain.values()["momentum"] == 0.9
    saved = nesterov.state_dict()
    saved["hyperparameters"]["dampening"] = 0.5
    with pytest.raises(ValueError, match="SGD: Nesterov momentum needs"):
        opt.SGD(lr=0.1).load_state_dict(saved, make_params())


def test_state_survives_json_metadata_and_npz_arrays():
    """The format suits a checkpoint file: arrays go to .npz, the rest to JSON (shapes come
    back as lists, counts as 0-d int arrays)."""
    import io
    import json

    adam = opt.Adam(lr=opt.CosineDecay(0.05, 10))
    params = make_params(np.float32)
    train(adam, params, 3)
    saved = adam.state_dict()
    arrays, metadata = {}, copy.deepcopy({k: v for k, v in saved.items() if k != "parameters"})
    metadata["parameters"] = []
    for index, entry in enumerate(saved["parameters"]):
        slots = {}
        for slot, value in entry["state"].items():
            arrays[f"{index}/{slot}"] = np.asarray(value)
            slots[slot] = f"{index}/{slot}"
        metadata["parameters"].append({**entry, "state": slots})
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    buffer.seek(0)
    loaded_arrays = dict(np.load(buffer))
    loaded = json.loads(json.dumps(metadata))
    for entry in loaded["parameters"]:
        entry["state"] = {slot: loaded_arrays[key] for slot, key in entry["state"].items()}

    resumed_params = fresh_params_like(params, ("w1", "w2"))
    resumed = opt.Adam(lr=0.5)
    resumed.load_state_dict(loaded, resumed_params)
    assert resumed.lr == opt.CosineDecay(0.05, 10)
    train(adam, params, 3)
    train(resumed, resumed_params, 3)
    for a, b in zip(params, resumed_params):
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
