"""io.save/io.load with duck-typed and plain-dict targets: the exact errors (naming the file,
the role and what was found), all-or-nothing rollback of a plain-dict model, and which call
convention a model or optimizer gets. Mutation testing found each of these unchecked
(docs/testing.md)."""
import re
import types

import numpy as np
import pytest

import autograd
from autograd import opt
from autograd.io import CheckpointError


def _path(tmp_path, name="state.ckpt"):
    return str(tmp_path / name)


class ListState:
    """A target whose state is a list: it can be saved, but a dict cannot take it."""

    def state_dict(self):
        return [1.0, 2.0]


def test_save_names_a_model_or_optimizer_without_state(tmp_path):
    with pytest.raises(TypeError, match=r"^save: model must have a state_dict\(\) method or be "
                                        r"a dict, got int$"):
        autograd.io.save(_path(tmp_path), model=5)
    with pytest.raises(TypeError, match=r"^save: optimizer must have a state_dict\(\) method "
                                        r"or be a dict, got str$"):
        autograd.io.save(_path(tmp_path), optimizer="sgd")


def test_load_names_a_target_that_cannot_take_a_state(tmp_path):
    path = _path(tmp_path)
    autograd.io.save(path, model={"w": np.zeros(2)}, optimizer={"lr": 0.1})
    with pytest.raises(TypeError, match=r"^load: optimizer must have a load_state_dict\(\) "
                                        r"method or be a dict, got int$"):
        autograd.io.load(path, optimizer=5)
    with pytest.raises(TypeError, match=r"^load: model must have a load_state_dict\(\) "
                                        r"method or be a dict, got tuple$"):
        autograd.io.load(path, model=(1,))


def test_a_state_that_is_not_a_dict_cannot_go_into_a_dict(tmp_path):
    path = _path(tmp_path)
    autograd.io.save(path, model=ListState(), optimizer=ListState())
    with pytest.raises(CheckpointError, match=f"^load: {re.escape(path)} holds a model state "
                                              f"of type list, expected a dict$"):
        autograd.io.load(path, model={})
    with pytest.raises(CheckpointError, match=f"^load: {re.escape(path)} holds an optimizer "
                                              f"state of type list, which a dict cannot take$"):
        autograd.io.load(path, optimizer={})


def test_a_plain_dict_model_is_checked_key_by_key_in_one_message(tmp_path):
    path = _path(tmp_path)
    autograd.io.save(path, model={"step": 3, "w": np.zeros(3), "b": np.zeros(2, np.float32),
                                  "note": "text"})
    target = {"step": 0, "w": np.zeros(2), "b": np.zeros(2), "note": np.zeros(1)}
    expected = (f"load: {path} does not fit the model: 'w': the model has float64 (2,), the "
                f"file float64 (3,); 'b': the model has float64 (2,), the file float32 (2,); "
                f"'note': the model has an array of shape (1,), the file a str")
    with pytest.raises(CheckpointError, match=f"^{re.escape(expected)}$"):
        autograd.io.load(path, model=target)
    assert target["step"] == 0 and target["w"].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("saved,message", [
    ({"w": np.ones(2)}, "missing keys ['b']"),
    ({"w": np.ones(2), "b": np.ones(2), "c": 1}, "unexpected keys ['c']"),
    ({"w": np.ones(2), "c": 1}, "missing keys ['b'], unexpected keys ['c']")])
def test_strict_keys_of_a_plain_dict_model(tmp_path, saved, message):
    path = _path(tmp_path)
    autograd.io.save(path, model=saved)
    target = {"w": np.zeros(2), "b": np.zeros(2)}
    expected = (f"load: {path} does not match the model: {message} (strict=False loads the "
                "keys both have)")
    with pytest.raises(CheckpointError, match=f"^{re.escape(expected)}$"):
        autograd.io.load(path, model=target)
    autograd.io.load(path, model=target, strict=False)
    assert target["w"].tolist() == [1.0, 1.0]


def test_a_plain_dict_optimizer_takes_new_values_of_any_kind(tmp_path):
    path = _path(tmp_path)
    autograd.io.save(path, optimizer={"m": 7, "v": np.arange(3.0), "lr": np.float64(0.5)})
    optimizer = {"m": np.zeros(2), "v": np.zeros(2), "lr": 0.1}
    autograd.io.load(path, optimizer=optimizer)
    assert optimizer["m"] == 7 and not isinstance(optimizer["m"], np.ndarray)
    assert optimizer["v"].tolist() == [0.0, 1.0, 2.0] and optimizer["lr"] == 0.5


def test_a_layer_with_a_plain_dict_optimizer_round_trips(tmp_path):
    path = _path(tmp_path)
    layer = autograd.Linear(2, 3)
    autograd.io.save(path, model=layer, optimizer={"lr": 0.25})
    optimizer = {"lr": 0.1}
    autograd.io.load(path, model=autograd.Linear(2, 3), optimizer=optimizer)
    assert optimizer == {"lr": 0.25}


class OneArgumentOptimizer:
    """A duck-typed optimizer: state_dict() and load_state_dict(state), nothing else."""

    def __init__(self, lr):
        self.lr = lr

    def state_dict(self):
        return {"lr": self.lr}

    def load_state_dict(self, state):
        self.lr = float(state["lr"])


class ArgsOptimizer(OneArgumentOptimizer):
    """load_state_dict(*args): it is handed the model's parameters too."""

    def load_state_dict(self, *args):
        self.args = args
        super().load_state_dict(args[0])


def test_duck_typed_optimizers_get_the_call_their_signature_takes(tmp_path):
    path = _path(tmp_path)
    layer = autograd.Linear(2, 3)
    autograd.io.save(path, model=layer, optimizer=OneArgumentOptimizer(0.25))
    plain = OneArgumentOptimizer(0.1)
    autograd.io.load(path, model=autograd.Linear(2, 3), optimizer=plain)
    assert plain.lr == 0.25
    flexible = ArgsOptimizer(0.1)
    target = autograd.Linear(2, 3)
    autograd.io.load(path, model=target, optimizer=flexible)
    assert flexible.lr == 0.25 and len(flexible.args) == 2
    assert set(flexible.args[1]) == {"W", "b"} and flexible.args[1]["W"] is target.W


def test_a_model_whose_loader_has_no_signature_gets_checked_state_without_strict(tmp_path):
    """A C-implemented load_state_dict (here dict.update) cannot be introspected for strict=."""
    path = _path(tmp_path)
    autograd.io.save(path, model={"w": np.arange(2.0)})
    store = {"w": np.zeros(2)}
    model = types.SimpleNamespace(state_dict=lambda: dict(store), load_state_dict=store.update)
    autograd.io.load(path, model=model)
    assert set(store) == {"w"} and store["w"].tolist() == [0.0, 1.0]


def test_a_models_own_value_error_is_reworded_with_the_path(tmp_path):
    path = _path(tmp_path)
    autograd.io.save(path, model={"w": np.zeros(2)})

    class Refusing:
        def state_dict(self):
            return {"w": np.zeros(2)}

        def load_state_dict(self, state):
            raise ValueError("no thanks")

    with pytest.raises(CheckpointError, match=f"^load: {re.escape(path)} does not fit the "
                                              f"model: no thanks$"):
        autograd.io.load(path, model=Refusing())


def test_an_optimizer_that_rejects_its_state_puts_a_plain_dict_model_back(tmp_path):
    path = _path(tmp_path)
    w = autograd.Tensor(data=[1.0, 2.0], stores_grad=True)
    w.name = "w"
    adam = opt.Adam(lr=0.1)
    adam(autograd.sum(w * w))
    autograd.io.save(path, model={"w": np.arange(2.0)}, optimizer=adam)
    model = {"w": np.zeros(2)}
    array = model["w"]
    with pytest.raises(CheckpointError, match=f"^load: {re.escape(path)} does not fit the "
                                              f"optimizer: SGD.load_state_dict: the state was "
                                              f"saved by Adam, not by SGD$"):
        autograd.io.load(path, model=model, optimizer=opt.SGD(lr=0.1))
    assert model["w"] is array and array.tolist() == [0.0, 0.0]       # filled, then put back
    sgd_dict = {"lr": 0.1}
    autograd.io.load(path, model=model, optimizer=sgd_dict)          # a dict takes anything
    assert array.tolist() == [0.0, 1.0] and sgd_dict["optimizer"] == "Adam"


def test_an_optimizer_matched_to_a_layers_parameters_is_reworded_with_the_path(tmp_path):
    path = _path(tmp_path)
    layer = autograd.Linear(2, 3)
    sgd = opt.SGD(lr=0.1, momentum=0.9)
    x = autograd.Tensor(data=np.ones((1, 2), np.float32), requires_grad=False)
    sgd(autograd.sum(layer(x)))
    autograd.io.save(path, model=layer, optimizer=sgd)
    with pytest.raises(CheckpointError, match=f"^load: {re.escape(path)} does not fit the "
                                              f"optimizer: Adam.load_state_dict: the state was "
                                              f"saved by SGD, not by Adam$"):
        autograd.io.load(path, model=autograd.Linear(2, 3), optimizer=opt.Adam(lr=0.1))


class ReadOnlyState(dict):
    """A plain-dict optimizer state that refuses changes with a ValueError."""

    def __setitem__(self, key, value):
        raise ValueError(f"{key!r} is read-only")


def test_a_plain_dict_optimizers_own_value_error_is_reworded_with_the_path(tmp_path):
    path = _path(tmp_path)
    autograd.io.save(path, optimizer={"lr": 0.5})
    with pytest.raises(CheckpointError, match=f"^load: {re.escape(path)} does not fit the "
                                              f"optimizer: 'lr' is read-only$"):
        autograd.io.load(path, optimizer=ReadOnlyState(lr=0.1))
