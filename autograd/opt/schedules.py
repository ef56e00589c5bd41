"""Schedules: a hyperparameter as a function of the optimizer's step counter.

A schedule is called with the step (a Python int, ``schedule(step)``) and returns a Python
float. Any hyperparameter of an optimizer (``lr``, ``momentum``, ``weight_decay``, ...) may be a
number (wrapped in :class:`Constant`), one of the schedules here, or a plain Python function of
the step. SINGA calls its schedules with a one-element step Tensor and gets a Tensor back; here
the step is an int and the value a float, so evaluating a schedule never touches a device.

>>> lr = ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5, staircase=True)
>>> [lr(step) for step in range(5)]
[0.1, 0.1, 0.05, 0.05, 0.025]
"""
import math
import numbers

__all__ = ["DecayScheduler", "Constant", "ExponentialDecay", "StepDecay", "CosineDecay",
           "LinearWarmup"]


class DecayScheduler:
    """Base of the schedules (SINGA's name). ``schedule(step)`` calls :meth:`call`.

    Subclasses set ``init_value`` (the value at step 0, which SINGA's optimizers read) and
    implement ``call(step) -> float``. ``get_config() -> dict`` gives the constructor's
    arguments, so that an optimizer's ``state_dict`` can record and rebuild the schedule: by
    default the attributes named in ``config_names``, which a subclass lists or overrides.
    """

    config_names: tuple[str, ...] = ("init_value",)

    def __init__(self, init_value):
        self.init_value = _number(init_value, type(self).__name__, "init_value")

    def __call__(self, step):
        return float(self.call(step))

    def call(self, step):
        raise NotImplementedError(f"{type(self).__name__}.call(step) is not implemented")

    def get_config(self):
        return {name: getattr(self, name) for name in self.config_names}

    def __repr__(self):
        arguments = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({arguments})"

    def __eq__(self, other):
        return type(self) is type(other) and self.get_config() == other.get_config()

    __hash__ = object.__hash__


class Constant(DecayScheduler):
    """The same value at every step.

    >>> Constant(0.1)(1000)
    0.1
    """

    def call(self, step):
        return self.init_value


class ExponentialDecay(DecayScheduler):
    """``init_value * decay_rate ** (step / decay_steps)`` (SINGA's), with ``step //
    decay_steps`` as the exponent when ``staircase`` is true.

    >>> round(ExponentialDecay(1.0, 10, 0.5)(5), 6)
    0.707107
    """

    config_names = ("init_value", "decay_steps", "decay_rate", "staircase")

    def __init__(self, init_value, decay_steps, decay_rate, staircase=False):
        super().__init__(init_value)
        self.decay_steps = _positive(decay_steps, "ExponentialDecay", "decay_steps")
        self.decay_rate = _number(decay_rate, "ExponentialDecay", "decay_rate")
        self.staircase = bool(staircase)

    def call(self, step):
        exponent = step // self.decay_steps if self.staircase else step / self.decay_steps
        return self.init_value * self.decay_rate ** exponent


class StepDecay(DecayScheduler):
    """``init_value * gamma ** (step // step_size)``: multiplied by ``gamma`` every
    ``step_size`` steps (PyTorch's StepLR).

    >>> [StepDecay(1.0, step_size=2, gamma=0.1)(s) for s in (0, 1, 2, 4)]
    [1.0, 1.0, 0.1, 0.010000000000000002]
    """

    config_names = ("init_value", "step_size", "gamma")

    def __init__(self, init_value, step_size, gamma=0.1):
        super().__init__(init_value)
        self.step_size = _positive(step_size, "StepDecay", "step_size")
        self.gamma = _number(gamma, "StepDecay", "gamma")

    def call(self, step):
        return self.init_value * self.gamma ** (step // self.step_size)


class CosineDecay(DecayScheduler):
    """Half a cosine from ``init_value`` at step 0 down to ``final`` at ``total_steps``, then
    ``final``: ``final + (init_value - final) * (1 + cos(pi * min(step, total_steps) /
    total_steps)) / 2``.

    >>> [CosineDecay(1.0, total_steps=4)(s) for s in (0, 2, 4, 9)]
    [1.0, 0.5, 0.0, 0.0]
    """

    config_names = ("init_value", "total_steps", "final")

    def __init__(self, init_value, total_steps, final=0.0):
        super().__init__(init_value)
        self.total_steps = _positive(total_steps, "CosineDecay", "total_steps")
        self.final = _number(final, "CosineDecay", "final")

    def call(self, step):
        progress = min(step, self.total_steps) / self.total_steps
        cosine = 0.5 * (1.0 + math.cos(math.pi * progress))
        return self.final + (self.init_value - self.final) * cosine


class LinearWarmup(DecayScheduler):
    """Ramp a value or schedule up linearly over ``warmup_steps`` steps:
    ``schedule(step) * min(1, (step + 1) / warmup_steps)``.

    The first step already uses ``1 / warmup_steps`` of the value (a zero learning rate would
    waste it) and step ``warmup_steps - 1`` the full value. The wrapped schedule is evaluated at
    the same, unshifted step.

    >>> [LinearWarmup(1.0, warmup_steps=4)(s) for s in range(6)]
    [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]
    """

    def __init__(self, schedule, warmup_steps):
        self.schedule = as_schedule(schedule, "LinearWarmup", "schedule")
        self.warmup_steps = _positive(warmup_steps, "LinearWarmup", "warmup_steps")
        self.init_value = self.schedule(0) / self.warmup_steps

    def call(self, step):
        return self.schedule(step) * min(1.0, (step + 1) / self.warmup_steps)

    def get_config(self):
        return {"schedule": schedule_config(self.schedule), "warmup_steps": self.warmup_steps}


class FunctionSchedule(DecayScheduler):
    """A plain Python function of the step, wrapped so that every schedule looks alike."""

    def __init__(self, function):
        self.function = function
        self.init_value = float(function(0))

    def call(self, step):
        return self.function(step)

    def get_config(self):
        return None             # code, not data: a state_dict cannot record it

    def __repr__(self):
        return f"FunctionSchedule({getattr(self.function, '__name__', self.function)!r})"

    def __eq__(self, other):
        return type(other) is FunctionSchedule and other.function is self.function

    __hash__ = object.__hash__


_BUILT_IN = {cls.__name__: cls for cls in
             (Constant, ExponentialDecay, StepDecay, CosineDecay, LinearWarmup)}


def as_schedule(value, owner, name):
    """``value`` as a schedule: a number becomes :class:`Constant`, a schedule stays, a
    callable is wrapped; anything else is a TypeError naming ``owner`` and ``name``."""
    if isinstance(value, DecayScheduler):
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return Constant(value)
    if callable(value):
        return FunctionSchedule(value)
    raise TypeError(f"{owner}: {name} must be a number, a schedule or a function of the step, "
                    f"got {type(value).__name__}")


def schedule_config(schedule):
    """A JSON-friendly description of a built-in schedule, or None for a user function or a
    user subclass (which only code can rebuild)."""
    if _BUILT_IN.get(type(schedule).__name__) is not type(schedule):
        return None
    config = schedule.get_config()
    if any(value is None for value in config.values()):    # wraps a user function
        return None
    return {"type": type(schedule).__name__, **config}


def schedule_from_config(config, owner="schedule_from_config"):
    """The schedule that :func:`schedule_config` described; ValueError for a bad description."""
    if not isinstance(config, dict) or config.get("type") not in _BUILT_IN:
        raise ValueError(f"{owner}: expected a schedule description with a 'type' among "
                         f"{sorted(_BUILT_IN)}, got {config!r}")
    arguments = {k: v for k, v in config.items() if k != "type"}
    if "schedule" in arguments:
        inner = arguments["schedule"]
        arguments["schedule"] = schedule_from_config(inner, owner) if isinstance(inner, dict) \
            else inner
    try:
        return _BUILT_IN[config["type"]](**arguments)
    except TypeError as error:
        raise ValueError(f"{owner}: bad arguments for {config['type']}: {error}") from None


def _number(value, owner, name):
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{owner}: {name} must be a number, got {type(value).__name__}")
    return float(value)


def _positive(value, owner, name):
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not value > 0:
        raise ValueError(f"{owner}: {name} must be a positive number, got {value!r}")
    return value
