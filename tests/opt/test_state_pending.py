"""A state loaded without parameters waits, by name, for its parameter. Saving again before
that parameter's first update must keep it (a checkpoint written right after resuming)."""
import copy

import numpy as np
import pytest

from autograd import opt
from tests.opt.quadratic import make_params
from tests.opt.test_state import MAKERS, fresh_params_like, train

NAMES = ("w1", "w2")


def _states(saved):
    return {entry["name"]: entry["state"] for entry in saved["parameters"]}


def _assert_same_states(got, expected):
    assert set(got) == set(expected)
    for name, state in expected.items():
        assert set(got[name]) == set(state), name
        for slot, value in state.items():
            np.testing.assert_array_equal(np.asarray(got[name][slot]), np.asarray(value),
                                          err_msg=f"{name}.{slot}")


@pytest.mark.parametrize("given", ["list", "dict", "none"])
@pytest.mark.parametrize("name", MAKERS)
def test_state_dict_before_the_first_update_keeps_a_pending_state(name, given):
    optimizer = MAKERS[name]()
    params = make_params(np.float32, names=NAMES)
    train(optimizer, params, 3)
    saved = copy.deepcopy(optimizer.state_dict())
    assert all(entry["state"] for entry in saved["parameters"])       # something to lose

    resumed = MAKERS[name]()
    resumed.load_state_dict(saved)                                     # pending by name
    fresh = fresh_params_like(params, NAMES)
    if given == "list":
        again = resumed.state_dict(fresh)
    elif given == "dict":
        again = resumed.state_dict(dict(zip(NAMES, fresh)))
    else:
        again = resumed.state_dict()
    assert again["step_counter"] == 3
    _assert_same_states(_states(again), _states(saved))


@pytest.mark.parametrize("name", MAKERS)
def test_a_checkpoint_written_right_after_resuming_resumes_bit_identically(name):
    optimizer = MAKERS[name]()
    params = make_params(np.float32, names=NAMES)
    train(optimizer, params, 4)
    saved = copy.deepcopy(optimizer.state_dict())
    first = fresh_params_like(params, NAMES)
    train(optimizer, params, 3)                                      # uninterrupted

    middle = MAKERS[name]()
    middle.load_state_dict(saved)
    resaved = copy.deepcopy(middle.state_dict(first))                # before any update
    last = MAKERS[name]()
    last.load_state_dict(resaved, first)
    train(last, first, 3)
    for a, b in zip(params, first):
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


def test_plain_sgd_without_state_saves_none_for_a_named_parameter():
    """The counterpart: nothing pending and nothing updated gives state None, not {}."""
    sgd = opt.SGD(lr=0.1, momentum=0.9)
    params = make_params(np.float32, names=NAMES)
    assert [entry["state"] for entry in sgd.state_dict(params)["parameters"]] == [None, None]
