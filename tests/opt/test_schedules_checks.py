"""The schedules' argument checks (each message names the schedule, the argument and what it
got), their repr and equality, and the value at step 0 that SINGA's optimizers read
(``init_value``). Mutation testing found these unchecked (docs/testing.md)."""
import pytest

from autograd import opt
from autograd.opt.schedules import FunctionSchedule, as_schedule, schedule_from_config

BAD_NUMBERS = [
    (lambda v: opt.Constant(v), "Constant: init_value"),
    (lambda v: opt.ExponentialDecay(v, 10, 0.5), "ExponentialDecay: init_value"),
    (lambda v: opt.ExponentialDecay(1.0, 10, v), "ExponentialDecay: decay_rate"),
    (lambda v: opt.StepDecay(1.0, 3, v), "StepDecay: gamma"),
    (lambda v: opt.CosineDecay(1.0, 10, v), "CosineDecay: final"),
]


@pytest.mark.parametrize("make,prefix", BAD_NUMBERS, ids=[p for _, p in BAD_NUMBERS])
@pytest.mark.parametrize("value,kind", [("0.1", "str"), (True, "bool"), (None, "NoneType")])
def test_a_value_that_is_not_a_number_is_a_type_error_naming_it(make, prefix, value, kind):
    with pytest.raises(TypeError, match=f"^{prefix} must be a number, got {kind}$"):
        make(value)


BAD_COUNTS = [
    (lambda v: opt.ExponentialDecay(1.0, v, 0.5), "ExponentialDecay: decay_steps"),
    (lambda v: opt.StepDecay(1.0, v), "StepDecay: step_size"),
    (lambda v: opt.CosineDecay(1.0, v), "CosineDecay: total_steps"),
    (lambda v: opt.LinearWarmup(1.0, v), "LinearWarmup: warmup_steps"),
]


@pytest.mark.parametrize("make,prefix", BAD_COUNTS, ids=[p for _, p in BAD_COUNTS])
@pytest.mark.parametrize("value", [0, -2, True, "3"])
def test_a_count_that_is_not_positive_is_a_value_error_naming_it(make, prefix, value):
    with pytest.raises(ValueError, match=f"^{prefix} must be a positive number, "
                                         f"got {value!r}$"):
        make(value)


def test_linear_warmup_refuses_a_schedule_that_is_not_one():
    with pytest.raises(TypeError, match="^LinearWarmup: schedule must be a number, a schedule "
                                        "or a function of the step, got str$"):
        opt.LinearWarmup("0.1", 3)
    with pytest.raises(TypeError, match="^SGD: lr must be a number, a schedule or a function "
                                        "of the step, got list$"):
        as_schedule([0.1], "SGD", "lr")


def test_init_value_is_the_value_at_step_0():
    assert opt.LinearWarmup(opt.StepDecay(0.8, 1, gamma=0.5), 4).init_value == 0.8 / 4
    assert opt.LinearWarmup(0.6, 3).init_value == pytest.approx(0.2)
    assert FunctionSchedule(lambda step: 3.0 - step).init_value == 3.0


def test_a_subclass_without_call_says_so():
    class Half(opt.DecayScheduler):
        pass

    with pytest.raises(NotImplementedError, match=r"^Half.call\(step\) is not implemented$"):
        Half(1.0)(3)


def test_repr_lists_the_arguments():
    assert repr(opt.ExponentialDecay(0.5, 10, 0.9, staircase=True)) == (
        "ExponentialDecay(init_value=0.5, decay_steps=10, decay_rate=0.9, staircase=True)")
    assert repr(opt.Constant(2)) == "Constant(init_value=2.0)"

    def halving(step):
        return 0.5 ** step

    assert repr(FunctionSchedule(halving)) == "FunctionSchedule('halving')"

    class Callable:
        def __call__(self, step):
            return 1.0

        def __repr__(self):
            return "a callable"

    assert repr(FunctionSchedule(Callable())) == "FunctionSchedule(a callable)"


def test_equality_needs_the_same_type_and_arguments():
    assert opt.StepDecay(1.0, 3) == opt.StepDecay(1.0, 3)
    assert opt.StepDecay(1.0, 3) != opt.StepDecay(1.0, 4)
    assert opt.Constant(1.0) != opt.StepDecay(1.0, 3, gamma=1.0)
    assert opt.Constant(0.1) != 0.1

    def f(step):
        return 1.0

    def g(step):
        return 1.0

    assert FunctionSchedule(f) == FunctionSchedule(f)
    assert FunctionSchedule(f) != FunctionSchedule(g)
    assert FunctionSchedule(f) != f


@pytest.mark.parametrize("config,message", [
    ("StepDecay", "got 'StepDecay'"),
    ({"type": "Linear"}, "got {'type': 'Linear'}"),
    ({"init_value": 1.0}, "got {'init_value': 1.0}"),
])
def test_schedule_from_config_refuses_a_description_that_is_not_one(config, message):
    with pytest.raises(ValueError, match=r"^SGD.load_state_dict: expected a schedule description "
                                         r"with a 'type' among \['Constant', 'CosineDecay', "
                                         r"'ExponentialDecay', 'LinearWarmup', 'StepDecay'\], "
                                         + message.replace("{", r"\{").replace("}", r"\}")
                                         .replace("[", r"\[") + "$"):
        schedule_from_config(config, "SGD.load_state_dict")


def test_schedule_from_config_names_bad_arguments_and_rebuilds_nested_ones():
    with pytest.raises(ValueError, match="^Adam.load_state_dict: bad arguments for StepDecay: "):
        schedule_from_config({"type": "StepDecay", "init_value": 1.0, "steps": 2},
                             "Adam.load_state_dict")
    nested = {"type": "LinearWarmup", "warmup_steps": 2,
              "schedule": {"type": "StepDecay", "init_value": 1.0, "step_size": 3, "gamma": 0.5}}
    rebuilt = schedule_from_config(nested)
    assert rebuilt == opt.LinearWarmup(opt.StepDecay(1.0, 3, 0.5), 2)
    with pytest.raises(ValueError, match="^SGD.load_state_dict: expected a schedule description"):
        schedule_from_config({**nested, "schedule": {"type": "Nope"}}, "SGD.load_state_dict")
    plain = schedule_from_config({"type": "LinearWarmup", "warmup_steps": 2, "schedule": 0.5})
    assert [plain(s) for s in range(3)] == [0.25, 0.5, 0.5]


def test_defaults_are_singas():
    """ExponentialDecay is continuous unless staircase; StepDecay's gamma is 0.1."""
    assert opt.ExponentialDecay(1.0, 10, 0.5)(5) == pytest.approx(0.5 ** 0.5, rel=1e-12)
    assert opt.StepDecay(1.0, 2)(2) == pytest.approx(0.1, rel=1e-12)
    with pytest.raises(ValueError, match="^schedule_from_config: expected a schedule"):
        schedule_from_config({"type": "Nope"})
