"""The Optimizer base: checking a (param, grad) pair, per-parameter state, the step counter.

Three ways to drive an optimizer, as in SINGA:

- ``opt.update(param, grad)`` for each pair of ``autograd.backward(loss)``, then ``opt.step()``;
- ``opt(loss)`` (or SINGA's ``opt.backward_and_update(loss)``): the whole backward, every pair
  checked, then every update applied, then ``step()``;
- ``opt.step()`` alone advances ``step_counter``, the step that schedules are evaluated at.

>>> import numpy as np, autograd
>>> from autograd import opt
>>> w = autograd.Tensor(data=[1.0, -2.0], stores_grad=True)
>>> sgd = opt.SGD(lr=0.1)
>>> sgd(autograd.sum(w * w))                  # gradient 2w
>>> w.to_numpy(), sgd.step_counter
(array([ 0.8, -1.6], dtype=float32), 1)
"""
import warnings

import numpy as np

from ..device import device_of_array, get_array_module
from ..graph import backward
from ..tensor import Tensor
from .schedules import Constant, as_schedule
from . import state as _state
from .state import describe

__all__ = ["Optimizer", "Hyperparameter"]

# updates of every parameter without a step() before a moving schedule is called stuck
_FORGOTTEN_STEP_UPDATES = 100


class Hyperparameter:
    """A class attribute of an optimizer that holds a schedule.

    Assigning a number, a schedule or a function of the step stores a schedule (a number is
    range-checked); reading gives the schedule. ``optimizer.values()`` evaluates them all at
    the current ``step_counter``.
    """

    def __init__(self, low=None, high=None, high_inclusive=True):
        self.low, self.high, self.high_inclusive = low, high, high_inclusive
        self.name = None

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, optimizer, owner=None):
        if optimizer is None:
            return self
        return optimizer._schedules[self.name]

    def __set__(self, optimizer, value):
        schedule = as_schedule(value, type(optimizer).__name__, self.name)
        if isinstance(schedule, Constant):
            self.check(type(optimizer).__name__, schedule.init_value)
        optimizer._schedules[self.name] = schedule
        optimizer._cached_values = None

    def check(self, owner, value):
        """Raise ValueError naming ``owner`` if the constant ``value`` is out of range."""
        too_low = self.low is not None and not value >= self.low
        too_high = self.high is not None and not (
            value <= self.high if self.high_inclusive else value < self.high)
        if too_low or too_high or value != value:
            low = "-inf" if self.low is None else self.low
            high = "inf" if self.high is None else self.high
            bracket = "]" if self.high_inclusive else ")"
            raise ValueError(f"{owner}: {self.name} must be in [{low}, {high}{bracket}, "
                             f"got {value!r}")


_HYPERPARAMETER_NAMES: dict = {}     # class -> its hyperparameter names (read at every step)


class Optimizer:
    """``Optimizer(lr)``: the base of every optimizer (SINGA's ``opt.Optimizer``).

    Subclasses declare their hyperparameters as :class:`Hyperparameter` class attributes,
    list the names of their per-parameter state in ``state_slots``, and implement
    :meth:`update_array`. Per-parameter state lives in ``self.states``, a dict keyed by the
    parameter Tensor itself (hashed by identity), in the order parameters were first updated;
    its arrays are created lazily with the parameter's dtype, on its device.

    Attributes: ``step_counter`` (an int, advanced by :meth:`step`), ``lr`` (the learning
    rate schedule; ``lr_value`` its value now) and one schedule per hyperparameter.
    """

    lr = Hyperparameter(low=0.0)
    state_slots: tuple[str, ...] = ()

    def __init__(self, lr, dtype=None):
        # SINGA's dtype sets the type of its optimizer's own scalar tensors (for float16
        # training); here the state always takes each parameter's dtype, so it is only checked.
        if dtype is not None and np.dtype(dtype).kind != "f":
            raise TypeError(f"{type(self).__name__}: dtype must be a floating dtype, got "
                            f"{np.dtype(dtype)}")
        self._schedules = {}
        self._cached_values = None
        self.lr = lr
        self.step_counter = 0
        self.states = {}
        self._pending = {}      # name -> saved entry, from load_state_dict(d) without params
        self._updates_since_step = 0
        self._warned_no_step = False

    # SINGA's DistOpt methods, which SINGA models call from train_one_batch for their
    # distributed dist_option values: asked for on a plain optimizer, they get an error that
    # says what they are (a plain AttributeError would suggest a typo). opt.DistOpt has the
    # first ones; the experimental rest it lacks too (DistOpt forwards the names it does not
    # define to its optimizer, so their message must not send the user back to DistOpt).
    _DIST_OPT_METHODS = ("all_reduce", "fused_all_reduce", "wait")
    _DIST_OPT_EXPERIMENTAL = ("backward_and_update_half", "backward_and_partial_update",
                              "backward_and_sparse_update", "all_reduce_half",
                              "fused_all_reduce_half", "sparsification", "fused_sparsification")

    def __getattr__(self, name):
        owner = type(self).__name__
        if name in Optimizer._DIST_OPT_METHODS:
            raise AttributeError(
                f"{owner}.{name}: a method of DistOpt (SINGA's distributed training), not of a "
                f"plain optimizer: wrap this one, opt.DistOpt({owner.lower()}), and start the "
                "processes with mpiexec (see docs/singa.md); with one process call opt(loss), "
                "i.e. dist_option='plain'")
        if name in Optimizer._DIST_OPT_EXPERIMENTAL:
            raise AttributeError(
                f"{owner}.{name}: a method of SINGA's DistOpt (experimental), which autograd "
                "does not implement, in DistOpt either (see docs/singa.md); use opt(loss), or "
                "DistOpt's backward_and_update with several processes")
        raise AttributeError(f"{owner!r} object has no attribute {name!r}")

    # ------------------------------------------------------------ hyperparameters
    @classmethod
    def hyperparameter_names(cls):
        """The names of this optimizer's hyperparameters, base class first."""
        names = _HYPERPARAMETER_NAMES.get(cls)
        if names is None:
            names = []
            for klass in reversed(cls.__mro__):
                for name, value in vars(klass).items():
                    if isinstance(value, Hyperparameter) and name not in names:
                        names.append(name)
            _HYPERPARAMETER_NAMES[cls] = names
        return list(names)

    def values(self):
        """``{name: float}``: every hyperparameter evaluated at the current ``step_counter``."""
        cached = self._cached_values
        step = self.step_counter
        if cached is not None and cached[0] == step:
            return cached[1]
        values = {name: float(self._schedules[name](step))
                  for name in self.hyperparameter_names()}
        self._cached_values = (step, values)
        return values

    @property
    def lr_value(self):
        """The learning rate at the current step (SINGA's attribute, here a float)."""
        return self.values()["lr"]

    # ------------------------------------------------------------ the three driving styles
    def update(self, param, grad):
        """Update ``param.data`` in place from ``grad`` (a Tensor or a raw array).

        Everything is checked first: a grad of the wrong shape, dtype or device raises
        ValueError/TypeError naming this optimizer and the parameter, and nothing changes.
        ``grad`` itself is never written to (backward may share one array between gradients).
        """
        grad = self._checked_gradient(param, grad)
        state = self._state_for(param)
        self._apply(param, grad, state)

    def apply(self, param_name, param, grad):
        """SINGA's spelling of ``update(param, grad)``. State is keyed by the parameter
        object, not by ``param_name`` (which is accepted and not used)."""
        self.update(param, grad)

    def __call__(self, loss, dy=None):
        """Run the whole backward of ``loss``, check every (param, grad) pair, then update
        them all and :meth:`step`. If backward or a check fails, no parameter changes."""
        pairs = list(backward(loss, dy))
        checked = [(param, self._checked_gradient(param, grad), self._state_for(param))
                   for param, grad in pairs]
        del pairs
        for param, grad, state in checked:
            self._apply(param, grad, state)
        self.step()

    def backward_and_update(self, loss, dy=None):
        """SINGA's older spelling of ``opt(loss)``."""
        self(loss, dy)

    def step(self):
        """Advance ``step_counter`` by one; schedules are read at the new step."""
        self.step_counter += 1
        self._updates_since_step = 0

    def update_array(self, data, grad, state, values):
        """Update the array ``data`` in place. ``grad`` is a checked array of the same shape,
        dtype and device; ``state`` this parameter's dict (empty at its first update);
        ``values`` the hyperparameters as floats. Never write into ``grad``."""
        raise NotImplementedError(f"{type(self).__name__}.update_array is not implemented")

    # ------------------------------------------------------------ checking, then writing
    def _checked_gradient(self, param, grad):
        owner = type(self).__name__
        if not isinstance(param, Tensor):
            raise TypeError(f"{owner}: expected a parameter Tensor, got {type(param).__name__}")
        data = param.data
        if isinstance(grad, Tensor):
            grad = grad.data
        elif not (hasattr(grad, "shape") and hasattr(grad, "dtype")):
            raise TypeError(f"{owner}: the gradient of {describe(param)} must be a Tensor or an "
                            f"array, got {type(grad).__name__}")
        if data.dtype.kind != "f":
            raise TypeError(f"{owner}: {describe(param)} is {data.dtype}; only floating parameters "
                            "can be updated")
        if tuple(grad.shape) != tuple(data.shape):
            raise ValueError(f"{owner}: {describe(param)} got a gradient of shape "
                             f"{tuple(grad.shape)}")
        if grad.dtype != data.dtype:
            raise TypeError(f"{owner}: {describe(param)} is {data.dtype} but its gradient is "
                            f"{grad.dtype}; cast the gradient explicitly")
        if not _same_device(grad, data):
            raise TypeError(f"{owner}: {describe(param)} is on {param.device} but its gradient is "
                            f"on {device_of_array(grad)}")
        if isinstance(grad, np.generic):        # a NumPy scalar (0-d gradient): an array
            grad = np.asarray(grad)
        return grad

    def _state_for(self, param):
        """This parameter's state dict; a saved state waiting for it by name is adopted
        (checked, copied to its device) without being recorded yet."""
        state = self.states.get(param)
        if state is not None:
            return state
        if param.name is not None and param.name in self._pending:
            entry = self._pending[param.name]
            _state.check_entry_fits(type(self).__name__, entry, param)
            return _state.state_on_device(entry["state"], param)
        return {}

    def _apply(self, param, grad, state):
        with param.device.activate():
            self.update_array(param.data, grad, state, self.values())
        if param not in self.states:
            self.states[param] = state
            if param.name is not None:
                self._pending.pop(param.name, None)
        self._updates_since_step += 1
        if (self._updates_since_step >= _FORGOTTEN_STEP_UPDATES * len(self.states)
                and not self._warned_no_step):
            self._warn_if_a_schedule_is_stuck()

    def _warn_if_a_schedule_is_stuck(self):
        """A loop of ``update(p, g)`` without ``step()`` leaves every schedule at its first
        value; nothing would say so (SINGA and PyTorch users alike expect a step each batch)."""
        moving = [name for name in self.hyperparameter_names()
                  if not isinstance(self._schedules[name], Constant)]
        if not moving:
            return
        self._warned_no_step = True
        owner = type(self).__name__
        warnings.warn(
            f"{owner}: {self._updates_since_step} updates since step_counter last advanced "
            f"(it is {self.step_counter}), so the schedule of {', '.join(moving)} has not "
            f"moved; call {owner.lower()}.step() once after each batch's updates "
            f"(opt(loss) does both). This warning is shown once.", UserWarning, stacklevel=4)

    # ------------------------------------------------------------ saving and resuming
    def options(self):
        """Settings that are not hyperparameters (e.g. SGD's ``nesterov``), for state_dict."""
        return {}

    def set_options(self, options):
        """Apply what :meth:`options` returned (checked by :meth:`check_options` first)."""

    def check_options(self, options, schedules=None):
        """Raise ValueError if ``options`` (from a state_dict) do not suit this optimizer with
        ``schedules`` (``{name: schedule}``, default: its current ones)."""
        unknown = set(options) - set(self.options())
        if unknown:
            raise ValueError(f"{type(self).__name__}.load_state_dict: unknown options "
                             f"{sorted(unknown)}")

    def parameters(self):
        """The parameters this optimizer holds state for, in the order of their first update."""
        return list(self.states)

    def state_dict(self, params=None):
        """Everything needed to resume exactly: the optimizer's class name, ``step_counter``,
        the hyperparameters (a float for a constant, a description for a built-in schedule,
        None for a user function, which only code can rebuild), ``options()`` and one entry
        per parameter ``{"name", "shape", "dtype", "state"}`` with host (NumPy) copies of its
        state arrays.

        Which parameters and in what order: with ``params`` None, those updated so far, in the
        order of their first update, named by their ``name`` attribute (None if unset); with a
        list of parameters, exactly those in that order (``state`` None for one never
        updated); with a dict ``{name: param}`` (SINGA's ``model.get_params()``), those, named
        by the keys. See :meth:`load_state_dict` for how entries find their parameters again.
        """
        return _state.state_dict(self, params)

    def load_state_dict(self, state_dict, params=None):
        """Restore what :meth:`state_dict` returned; everything is checked before anything
        is assigned (ValueError/TypeError naming what does not fit; nothing changes then).

        ``params`` says which parameters the saved entries belong to:

        - a dict ``{name: param}`` or a list of parameters whose ``name`` is set: entries are
          matched by name when every saved entry and every given parameter has a name (a saved
          name with no parameter is an error naming it; a parameter with no saved entry simply
          starts fresh);
        - otherwise a list matched by position: entry ``i`` belongs to ``params[i]`` (save with
          ``state_dict(params)`` and load with the same list to use this);
        - None: entries wait, by name, for the parameter of that name; each is checked and
          adopted at that parameter's first ``update`` (SINGA's behaviour: its optimizers key
          state by parameter name).

        Constant hyperparameters and built-in schedules are restored; a hyperparameter saved as
        None (a user function) keeps this optimizer's current schedule.
        """
        _state.load_state_dict(self, state_dict, params)

    def get_states(self):
        """SINGA's spelling of :meth:`state_dict`."""
        return self.state_dict()

    def set_states(self, states, params=None):
        """SINGA's spelling of :meth:`load_state_dict`."""
        self.load_state_dict(states, params)

    def __repr__(self):
        settings = ", ".join(f"{name}={self._schedules[name]!r}"
                             for name in self.hyperparameter_names())
        return f"{type(self).__name__}({settings}, step_counter={self.step_counter})"


def _same_device(a, b):
    xp = get_array_module(a)
    if xp is not get_array_module(b):
        return False
    return xp.__name__ == "numpy" or a.device.id == b.device.id
