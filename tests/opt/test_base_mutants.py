"""The Optimizer base's messages where the first mutation run of opt/base.py found the suite
blind (docs/testing.md): a non-Tensor parameter, a gradient that is no array, an unknown
option in a loaded state; each names the optimizer, what it expected and what it got."""
import copy
import pathlib
import warnings
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor, opt


def exactly(message):
    return f"^{re.escape(message)}$"


def test_a_parameter_that_is_no_tensor_is_named():
    with pytest.raises(TypeError, match=exactly("SGD: expected a parameter Tensor, got ndarray")):
        opt.SGD(lr=0.1).update(np.ones(2), np.ones(2))


def test_a_gradient_that_is_no_array_is_named():
    w = Tensor(data=np.ones(2, np.float32), stores_grad=True)
    message = ("SGD: the gradient of unnamed parameter of shape (2,) must be a Tensor or an "
               "array, got str")
    with pytest.raises(TypeError, match=exactly(message)):
        opt.SGD(lr=0.1).update(w, "ab")
    np.testing.assert_array_equal(w.to_numpy(), [1.0, 1.0])


def test_an_unknown_option_in_a_state_is_refused_by_name():
    sgd = opt.SGD(lr=0.1)
    state = copy.deepcopy(sgd.state_dict())
    state["options"]["bogus"] = 1
    with pytest.raises(ValueError, match=exactly("SGD.load_state_dict: unknown options "
                                                 "['bogus']")):
        sgd.load_state_dict(state)


def scaled_class():
    """A user's optimizer declared as the base class documents: p -= lr * factor * g. Made
    inside the test, not at import: under mutmut the class body must run in the mutant's
    process, and hyperparameter_names must meet a class it has not cached yet."""

    class Scaled(opt.Optimizer):
        factor = opt.Hyperparameter(low=0.0, high=1.0)

        def __init__(self, lr, factor):
            super().__init__(lr)
            self.factor = factor

        def update_array(self, data, grad, state, values):
            data -= values["lr"] * values["factor"] * grad
    return Scaled


def test_a_subclass_declares_hyperparameters_with_an_inclusive_upper_bound_by_default():
    """Hyperparameter's defaults and __set_name__ run only when a class body is executed (the
    built-in optimizers' at import): a new subclass is the only way a test sees them."""
    Scaled = scaled_class()
    assert Scaled.hyperparameter_names() == ["lr", "factor"]
    scaled = Scaled(lr=0.5, factor=1.0)                 # the bound itself is accepted
    w = Tensor(data=np.array([3.0]), stores_grad=True)
    scaled.update(w, np.array([2.0]))
    np.testing.assert_array_equal(w.to_numpy(), [3.0 - 0.5 * 1.0 * 2.0])
    assert scaled.values() == {"lr": 0.5, "factor": 1.0}
    with pytest.raises(ValueError, match=exactly("Scaled: factor must be in [0.0, 1.0], got 1.5")):
        Scaled(lr=0.5, factor=1.5)


def test_repr_names_every_hyperparameter_and_the_step():
    assert repr(opt.AdaGrad(lr=0.5)) == (
        "AdaGrad(lr=Constant(init_value=0.5), epsilon=Constant(init_value=1e-08), "
        "weight_decay=Constant(init_value=0.0), step_counter=0)")


def _updates_warn(sgd, w, count):
    """Whether ``count`` more updates of ``w`` without a step() warn."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(count):
            sgd.update(w, np.ones(1, np.float32))
    return [str(w.message) for w in caught]


def test_the_forgotten_step_warning_comes_at_exactly_100_updates_per_parameter():
    """The count of updates since the last step() starts at 0, and step() sets it back to 0:
    one parameter warns at its 100th update without a step, not at its 99th."""
    sgd = opt.SGD(lr=opt.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5))
    w = Tensor(data=np.ones(1, np.float32), stores_grad=True)
    assert _updates_warn(sgd, w, 99) == []
    sgd.step()
    assert _updates_warn(sgd, w, 99) == []
    assert _updates_warn(sgd, w, 1) == [
        "SGD: 100 updates since step_counter last advanced (it is 1), so the schedule of lr has "
        "not moved; call sgd.step() once after each batch's updates (opt(loss) does both). "
        "This warning is shown once."]


@pytest.mark.parametrize("name", ["all_reduce", "fused_all_reduce", "wait"])
def test_a_distopt_method_on_a_plain_optimizer_says_to_wrap_it(name):
    """SINGA's DistOpt methods asked of a plain optimizer: the message names opt.DistOpt,
    which has them (it said autograd had no DistOpt yet, long after DistOpt was added)."""
    message = (f"SGD.{name}: a method of DistOpt (SINGA's distributed training), not of a plain "
               "optimizer: wrap this one, opt.DistOpt(sgd), and start the processes with "
               "mpiexec (see docs/singa.md); with one process call opt(loss), i.e. "
               "dist_option='plain'")
    with pytest.raises(AttributeError, match=exactly(message)):
        getattr(opt.SGD(lr=0.1), name)


@pytest.mark.parametrize("name", ["backward_and_update_half", "backward_and_partial_update",
                                  "backward_and_sparse_update", "all_reduce_half",
                                  "fused_all_reduce_half", "sparsification",
                                  "fused_sparsification"])
def test_a_singa_experimental_distopt_method_is_named_as_not_implemented(name):
    """SINGA's experimental DistOpt methods, which autograd's DistOpt lacks too: wrapping would
    not help (DistOpt forwards the four it does not define to its optimizer, whose message
    must not send the user back to DistOpt)."""
    message = (f"Adam.{name}: a method of SINGA's DistOpt (experimental), which autograd does "
               "not implement, in DistOpt either (see docs/singa.md); use opt(loss), or "
               "DistOpt's backward_and_update with several processes")
    with pytest.raises(AttributeError, match=exactly(message)):
        getattr(opt.Adam(), name)
    if not name.startswith("backward_and_"):
        with pytest.raises(AttributeError, match=exactly(message)):
            getattr(opt.DistOpt(opt.Adam(), opt.LocalCommunicator()), name)


def test_any_other_missing_attribute_is_the_usual_error():
    with pytest.raises(AttributeError, match=exactly("'SGD' object has no attribute 'momentun'")):
        opt.SGD().momentun


def test_a_pending_state_is_dropped_once_its_parameter_adopts_it():
    """A state loaded without params waits by name; at the parameter's first update it is
    adopted and must leave the pending list, or state_dict() saves it twice (the stale copy
    after the live one)."""
    def named(values):
        w = Tensor(data=np.array(values), stores_grad=True)
        w.name = "w"
        return w

    w, first = named([2.0, -1.0]), opt.Adam(lr=0.1)
    first(autograd.sum(w * w))
    second, copy = opt.Adam(lr=0.1), named(w.to_numpy().copy())
    second.load_state_dict(first.state_dict())
    for optimizer, param in ((first, w), (second, copy)):
        optimizer(autograd.sum(param * param))
    saved, expected = second.state_dict(), first.state_dict()
    assert [entry["name"] for entry in saved["parameters"]] == ["w"]
    for slot in ("m", "v", "step"):
        np.testing.assert_array_equal(saved["parameters"][0]["state"][slot],
                                      expected["parameters"][0]["state"][slot])


_USER_LOOP = compile(
    "def loop(sgd, w, gradient):\n"
    "    for _ in range(100):\n"
    "        sgd.update(w, gradient)\n", "user_training_loop.py", "exec")


@pytest.mark.skipif("mutants" in pathlib.Path(autograd.__file__).parts,
                    reason="under mutmut its trampoline adds frames between the user and "
                           "the warning (tools/mutate.py deselects the other location test)")
def test_the_forgotten_step_warning_points_at_the_users_update_call():
    """stacklevel 4 names the line that called update(); 5 would name that function's caller,
    which test_forgotten_step.py cannot tell apart (its loop and caller share a file)."""
    namespace = {}
    exec(_USER_LOOP, namespace)     # noqa: S102 (a loop in a file of its own name)
    sgd = opt.SGD(lr=opt.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5))
    w = Tensor(data=np.ones(1, np.float32), stores_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        namespace["loop"](sgd, w, np.ones(1, np.float32))
    assert [(w.category, w.filename, w.lineno) for w in caught] == [
        (UserWarning, "user_training_loop.py", 3)]


def test_an_optimizer_without_update_array_says_so():
    with pytest.raises(NotImplementedError, match=exactly("Optimizer.update_array is not "
                                                          "implemented")):
        opt.Optimizer(lr=0.1).update(Tensor(data=np.ones(1), stores_grad=True), np.ones(1))


def test_a_gradient_with_a_shape_but_no_dtype_is_refused_by_name():
    w = Tensor(data=np.ones(2, np.float32), stores_grad=True)
    message = ("SGD: the gradient of unnamed parameter of shape (2,) must be a Tensor or an "
               "array, got ShapeOnly")
    with pytest.raises(TypeError, match=exactly(message)):
        opt.SGD(lr=0.1).update(w, type("ShapeOnly", (), {"shape": (2,)})())


def test_an_integer_parameter_is_refused_by_name():
    w = Tensor(data=np.array([1, 2]))
    w.name = "steps"
    with pytest.raises(TypeError, match=exactly("SGD: parameter 'steps' of shape (2,) is int64; "
                                                "only floating parameters can be updated")):
        opt.SGD(lr=0.1).update(w, np.ones(2, np.int64))


def test_a_numpy_scalar_gradient_of_a_0d_parameter_is_applied():
    w = Tensor(data=np.array(2.0), stores_grad=True)
    opt.SGD(lr=0.5).update(w, np.float64(3.0))
    np.testing.assert_array_equal(w.to_numpy(), 2.0 - 0.5 * 3.0)


def test_a_pending_state_that_does_not_fit_names_the_optimizer():
    saved = Tensor(data=np.ones(2), stores_grad=True)
    saved.name = "w"
    first = opt.Adam(lr=0.1)
    first(autograd.sum(saved * saved))
    second = opt.Adam(lr=0.1)
    second.load_state_dict(first.state_dict())
    other = Tensor(data=np.ones(3), stores_grad=True)
    other.name = "w"
    with pytest.raises(ValueError, match=exactly(
            "Adam: saved state for 'w' is float64 of shape (2,), but parameter 'w' is float64 "
            "of shape (3,)")):
        second.update(other, np.ones(3))
