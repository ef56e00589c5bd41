"""Optimizer.load_state_dict / state_dict: each refusal's whole message (the optimizer and the
method, what it expected, what it got), and the values a file gives back as NumPy scalars.
Mutation testing found these unchecked (docs/testing.md)."""
import copy
import re

import numpy as np
import pytest

from autograd import Tensor, opt
from tests.opt.quadratic import make_params
from tests.opt.test_state import entry, snapshot, train


def trained_adam():
    adam = opt.Adam(lr=0.05)
    params = make_params()
    train(adam, params, 2)
    return adam, params


P = "Adam.load_state_dict: "
CASES = [
    (lambda d: d.update(hyperparameters=[0.1]), TypeError,
     P + "hyperparameters must be a dict, got list"),
    (lambda d: d["hyperparameters"].update(rho=0.9), ValueError,
     P + "unknown hyperparameters ['rho']; Adam has ['lr', 'beta_1', 'beta_2', 'epsilon', "
         "'weight_decay']"),
    (lambda d: d["hyperparameters"].update(lr=True), TypeError,
     P + "hyperparameter 'lr' must be a number, a schedule description or None, got bool"),
    (lambda d: d["hyperparameters"].update(lr={"type": "Nope"}), ValueError,
     P + "expected a schedule description with a 'type' among"),
    (lambda d: d["hyperparameters"].update(lr=-1.0), ValueError,
     P + "lr must be in [0.0, inf], got -1.0"),
    (lambda d: d.update(step_counter=np.float64(2.0)), ValueError,
     P + "step_counter must be a non-negative integer, got np.float64(2.0)"),
    (lambda d: d.update(step_counter=True), ValueError,
     P + "step_counter must be a non-negative integer, got True"),
    (lambda d: d.update(parameters={"w1": 1}), TypeError,
     P + "parameters must be a list, got dict"),
    (lambda d: d["parameters"].append([1, 2]), ValueError,
     P + "parameter entry 2 must be a dict with name, shape, dtype, state"),
    (lambda d: d["parameters"].append({"name": "w3", "shape": (1,)}), ValueError,
     P + "parameter entry 2 must be a dict with name, shape, dtype, state"),
    (lambda d: entry(d, "w1").update(name=7), TypeError,
     P + "parameter entry 1 has a name of type int"),
    (lambda d: entry(d, "w1").update(state=[1]), TypeError,
     P + "the state of parameter 'w1' must be a dict, got list"),
    (lambda d: entry(d, "w1")["state"].update(momentum=1), ValueError,
     P + "the state of parameter 'w1' has unknown entries ['momentum']; Adam keeps"),
    (lambda d: entry(d, "w1")["state"].update(step=-1), ValueError,
     P + "step of parameter 'w1' must be a non-negative integer, got -1"),
    (lambda d: entry(d, "w1")["state"].update(m="zeros"), TypeError,
     P + "m of parameter 'w1' must be an array, got str"),
    (lambda d: entry(d, "w1")["state"].update(m=type("Shaped", (), {"shape": (3,)})()),
     TypeError, P + "m of parameter 'w1' must be an array, got Shaped"),
]


@pytest.mark.parametrize("corrupt, error, message", CASES)
def test_a_bad_state_names_everything_and_changes_nothing(corrupt, error, message):
    adam, params = trained_adam()
    saved = copy.deepcopy(adam.state_dict())
    corrupt(saved)
    target, target_params = trained_adam()
    before = snapshot(target)
    with pytest.raises(error, match="^" + re.escape(message)):
        target.load_state_dict(saved, target_params)
    assert snapshot(target) == before


def test_a_state_that_is_not_a_dict_and_params_that_are_not_tensors():
    with pytest.raises(TypeError, match=r"^SGD.load_state_dict: expected a dict from "
                                        r"state_dict\(\), got list$"):
        opt.SGD(lr=0.1).load_state_dict([1])
    with pytest.raises(TypeError, match=r"^SGD.state_dict: params must hold parameter Tensors, "
                                        r"got ndarray for 'w'$"):
        opt.SGD(lr=0.1).state_dict({"w": np.zeros(2)})
    with pytest.raises(TypeError, match=r"^SGD.load_state_dict: params must hold parameter "
                                        r"Tensors, got int$"):
        opt.SGD(lr=0.1).load_state_dict(opt.SGD(lr=0.1).state_dict(), [3])


def test_values_read_back_from_a_file_as_numpy_scalars_are_accepted():
    adam, params = trained_adam()
    saved = copy.deepcopy(adam.state_dict())
    saved["step_counter"] = np.array(2)                           # 0-d arrays, as from npz
    saved["hyperparameters"]["lr"] = np.array(0.05)
    for e in saved["parameters"]:                                 # the count first
        state = e["state"]
        e["state"] = {"step": np.array(state["step"]), "m": Tensor(data=state["m"]),
                      "v": state["v"]}                             # a Tensor is taken too
    target, target_params = trained_adam()
    target.load_state_dict(saved, target_params)
    assert target.step_counter == 2 and type(target.step_counter) is int
    assert target.values()["lr"] == 0.05
    state = target.states[target_params[0]]
    assert type(state["step"]) is int and state["step"] == 2
    np.testing.assert_array_equal(state["m"], adam.states[params[0]]["m"])
    np.testing.assert_array_equal(state["v"], adam.states[params[0]]["v"])


def test_a_mismatch_names_the_saved_entry_and_the_parameter_or_says_unnamed():
    sgd = opt.SGD(lr=0.1, momentum=0.9)
    params = make_params(names=(None, None))
    train(sgd, params, 1)
    saved = sgd.state_dict(params)
    wrong = [Tensor(data=np.zeros(4), stores_grad=True), params[1]]
    with pytest.raises(ValueError, match=r"^SGD.load_state_dict: saved state is float64 of "
                                         r"shape \(3,\), but the parameter is float64 of "
                                         r"shape \(4,\)$"):
        opt.SGD(lr=0.1, momentum=0.9).load_state_dict(saved, wrong)
    with pytest.raises(ValueError, match=r"^SGD.load_state_dict: 2 saved parameter entries but "
                                         r"1 parameters given \(matching by position, since "
                                         r"some names are missing or repeated\)$"):
        opt.SGD(lr=0.1, momentum=0.9).load_state_dict(saved, params[:1])


def test_pending_entries_skip_stateless_ones_and_refuse_repeated_names():
    sgd = opt.SGD(lr=0.1, momentum=0.9)
    params = make_params()
    fresh = Tensor(data=np.zeros(2), stores_grad=True)
    fresh.name = "never_updated"
    train(sgd, params, 1)
    saved = sgd.state_dict([fresh] + params)                      # a None state comes first
    target = opt.SGD(lr=0.1, momentum=0.9)
    target.load_state_dict(saved)
    assert set(target._pending) == {"w1", "w2"}
    saved["parameters"].append(copy.deepcopy(entry(saved, "w1")))
    with pytest.raises(ValueError, match=r"^SGD.load_state_dict: two saved entries are named "
                                         r"'w1'$"):
        opt.SGD(lr=0.1, momentum=0.9).load_state_dict(saved)


def test_a_saved_pending_state_is_a_copy():
    sgd = opt.SGD(lr=0.1, momentum=0.9)
    params = make_params()
    train(sgd, params, 1)
    target = opt.SGD(lr=0.1, momentum=0.9)
    target.load_state_dict(copy.deepcopy(sgd.state_dict()))
    saved = target.state_dict()
    entry(saved, "w1")["state"]["momentum_buffer"][...] = 99.0
    pending = target._pending["w1"]["state"]["momentum_buffer"]
    np.testing.assert_array_equal(pending, sgd.states[params[0]]["momentum_buffer"])


@pytest.mark.parametrize("saved_names,given_names", [((None, None), ("w1", "w2")),
                                                     (("a", "b"), ("w", "w"))])
def test_names_match_only_when_both_sides_have_unique_ones(saved_names, given_names):
    """Otherwise entries go by position, even where one side's names are fine."""
    sgd = opt.SGD(lr=0.1, momentum=0.9)
    params = make_params(names=saved_names)
    train(sgd, params, 1)
    saved = sgd.state_dict(params)
    target_params = make_params(names=given_names)
    target = opt.SGD(lr=0.1, momentum=0.9)
    target.load_state_dict(saved, target_params)
    for source, param in zip(params, target_params):
        np.testing.assert_array_equal(target.states[param]["momentum_buffer"],
                                      sgd.states[source]["momentum_buffer"])
