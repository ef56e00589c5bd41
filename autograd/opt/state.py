"""Saving and restoring an optimizer's state: the format is documented at
:meth:`autograd.opt.Optimizer.state_dict` and the matching rules at ``load_state_dict``."""
import numbers

import numpy as np

from ..device import cpu, move_array
from ..tensor import Tensor
from .schedules import Constant, schedule_config, schedule_from_config

__all__ = []

_REQUIRED = ("optimizer", "step_counter", "hyperparameters", "parameters")


def describe(param):
    """``parameter 'name' of shape (2, 3)`` (or ``unnamed parameter of shape ...``)."""
    if getattr(param, "name", None) is not None:
        return f"parameter {param.name!r} of shape {tuple(param.shape)}"
    return f"unnamed parameter of shape {tuple(param.shape)}"


# ------------------------------------------------------------------ saving
def state_dict(optimizer, params):
    entries = []
    named = _named_parameters(type(optimizer).__name__ + ".state_dict", optimizer, params)
    for name, param in named:
        state = optimizer.states.get(param)
        if state is None and name is not None and name in optimizer._pending:
            state = optimizer._pending[name]["state"]        # loaded, not adopted yet
        entries.append({"name": name, "shape": tuple(param.shape), "dtype": str(param.dtype),
                        "state": None if state is None else _host_copy(state)})
    if params is None:          # keep loaded states that no parameter has claimed yet
        for entry in optimizer._pending.values():
            entries.append({**entry, "state": _host_copy(entry["state"])})
    hyperparameters = {name: _saved_schedule(optimizer._schedules[name])
                       for name in optimizer.hyperparameter_names()}
    return {"optimizer": type(optimizer).__name__, "step_counter": int(optimizer.step_counter),
            "hyperparameters": hyperparameters, "options": dict(optimizer.options()),
            "parameters": entries}


def _saved_schedule(schedule):
    if type(schedule) is Constant:
        return schedule.init_value
    return schedule_config(schedule)


def _host_copy(state):
    return _copied_state(state, cpu())


def _named_parameters(owner, optimizer, params):
    if params is None:
        return [(param.name, param) for param in optimizer.states]
    if isinstance(params, dict):
        named = list(params.items())
    else:
        named = [(getattr(param, "name", None), param) for param in params]
    for name, param in named:
        if not isinstance(param, Tensor):
            raise TypeError(f"{owner}: params must hold parameter Tensors, got "
                            f"{type(param).__name__}" + (f" for {name!r}" if name else ""))
    return named


# ------------------------------------------------------------------ loading
def load_state_dict(optimizer, saved, params):
    owner = f"{type(optimizer).__name__}.load_state_dict"
    if not isinstance(saved, dict):
        raise TypeError(f"{owner}: expected a dict from state_dict(), got {type(saved).__name__}")
    missing = [key for key in _REQUIRED if key not in saved]
    if missing:
        raise ValueError(f"{owner}: the state is missing {missing}")
    if saved["optimizer"] != type(optimizer).__name__:
        raise ValueError(f"{owner}: the state was saved by {saved['optimizer']}, not by "
                         f"{type(optimizer).__name__}")
    step_counter = _integer(owner, "step_counter", saved["step_counter"])
    schedules = _loaded_schedules(owner, optimizer, saved["hyperparameters"])
    options = dict(saved.get("options") or {})
    optimizer.check_options(options, {**optimizer._schedules, **schedules})
    entries = _loaded_entries(owner, optimizer, saved["parameters"])
    states, pending = _matched_states(owner, optimizer, entries, params)

    # Everything fits: assign.
    optimizer.step_counter = step_counter
    optimizer._schedules.update(schedules)
    optimizer._cached_values = None
    optimizer.set_options(options)
    optimizer.states = states
    optimizer._pending = pending


def _integer(owner, what, value):
    if hasattr(value, "ndim") and value.ndim == 0:      # a 0-d array read back from a file
        value = value.item() if value.dtype.kind in "iu" else value
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{owner}: {what} must be a non-negative integer, got {value!r}")
    return int(value)


def _loaded_schedules(owner, optimizer, saved):
    if not isinstance(saved, dict):
        raise TypeError(f"{owner}: hyperparameters must be a dict, got {type(saved).__name__}")
    names = optimizer.hyperparameter_names()
    unknown = sorted(set(saved) - set(names))
    if unknown:
        raise ValueError(f"{owner}: unknown hyperparameters {unknown}; "
                         f"{type(optimizer).__name__} has {names}")
    schedules = {}
    for name, value in saved.items():
        if value is None:
            continue                # a user function: keep this optimizer's own schedule
        if hasattr(value, "ndim") and value.ndim == 0:
            value = value.item()
        if isinstance(value, dict):
            schedules[name] = schedule_from_config(value, owner)
        elif isinstance(value, numbers.Real) and not isinstance(value, bool):
            getattr(type(optimizer), name).check(owner, float(value))
            schedules[name] = Constant(float(value))
        else:
            raise TypeError(f"{owner}: hyperparameter {name!r} must be a number, a schedule "
                            f"description or None, got {type(value).__name__}")
    return schedules


def _loaded_entries(owner, optimizer, saved):
    if not isinstance(saved, (list, tuple)):
        raise TypeError(f"{owner}: parameters must be a list, got {type(saved).__name__}")
    entries = []
    for index, entry in enumerate(saved):
        where = f"parameter entry {index}"
        if not isinstance(entry, dict) or not {"name", "shape", "dtype", "state"} <= set(entry):
            raise ValueError(f"{owner}: {where} must be a dict with name, shape, dtype, state")
        name = entry["name"]
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{owner}: {where} has a name of type {type(name).__name__}")
        if name is not None:
            where = f"parameter {name!r}"
        shape = tuple(int(n) for n in entry["shape"])
        dtype = np.dtype(entry["dtype"])
        state = entry["state"]
        if state is not None:
            state = _loaded_state(owner, optimizer, where, state, shape, dtype)
        entries.append({"name": name, "shape": shape, "dtype": str(dtype), "state": state})
    return entries


def _loaded_state(owner, optimizer, where, state, shape, dtype):
    if not isinstance(state, dict):
        raise TypeError(f"{owner}: the state of {where} must be a dict, got "
                        f"{type(state).__name__}")
    unknown = sorted(set(state) - set(optimizer.state_slots))
    if unknown:
        raise ValueError(f"{owner}: the state of {where} has unknown entries {unknown}; "
                         f"{type(optimizer).__name__} keeps {list(optimizer.state_slots)}")
    checked = {}
    for slot, value in state.items():
        if isinstance(value, Tensor):
            value = value.data
        is_count = isinstance(value, numbers.Integral) or (
            hasattr(value, "dtype") and value.dtype.kind in "iu" and value.ndim == 0)
        if is_count:
            checked[slot] = _integer(owner, f"{slot} of {where}", value)
            continue
        if not (hasattr(value, "shape") and hasattr(value, "dtype")):
            raise TypeError(f"{owner}: {slot} of {where} must be an array, got "
                            f"{type(value).__name__}")
        if tuple(value.shape) != shape or value.dtype != dtype:
            raise ValueError(f"{owner}: {slot} of {where} is {value.dtype} of shape "
                             f"{tuple(value.shape)}, expected {dtype} of shape {shape}")
        checked[slot] = value
    return checked


def _matched_states(owner, optimizer, entries, params):
    if params is None:
        pending = {}
        for index, entry in enumerate(entries):
            if entry["state"] is None:
                continue
            if entry["name"] is None:
                raise ValueError(f"{owner}: parameter entry {index} has no name; pass the "
                                 "parameters (load_state_dict(state, params)) to match it")
            if entry["name"] in pending:
                raise ValueError(f"{owner}: two saved entries are named {entry['name']!r}")
            pending[entry["name"]] = entry
        return {}, pending
    named = _named_parameters(owner, optimizer, params)
    names = [name for name, _ in named]
    saved_names = [entry["name"] for entry in entries]
    by_name = (None not in names and None not in saved_names
               and len(set(names)) == len(names) and len(set(saved_names)) == len(saved_names))
    if by_name:
        lookup = dict(named)
        absent = [name for name in saved_names if name not in lookup]
        if absent:
            raise ValueError(f"{owner}: saved state for {absent} but no parameter of that name "
                             f"among {names}")
        pairs = [(entry, lookup[entry["name"]]) for entry in entries]
    else:
        if len(named) != len(entries):
            raise ValueError(f"{owner}: {len(entries)} saved parameter entries but "
                             f"{len(named)} parameters given (matching by position, since "
                             "some names are missing or repeated)")
        pairs = [(entry, param) for entry, (_, param) in zip(entries, named)]
    states = {}
    for entry, param in pairs:
        check_entry_fits(owner, entry, param)
    for entry, param in pairs:
        if entry["state"] is not None:
            states[param] = state_on_device(entry["state"], param)
    return states, {}


def check_entry_fits(owner, entry, param):
    """Raise ValueError if a saved entry's shape or dtype differs from ``param``'s."""
    if tuple(param.shape) != tuple(entry["shape"]) or str(param.dtype) != entry["dtype"]:
        saved = f"saved state for {entry['name']!r}" if entry["name"] else "saved state"
        target = f"parameter {param.name!r}" if param.name is not None else "the parameter"
        raise ValueError(f"{owner}: {saved} is {entry['dtype']} of shape "
                         f"{tuple(entry['shape'])}, but {target} is {param.dtype} of shape "
                         f"{tuple(param.shape)}")


def state_on_device(state, param):
    """Fresh copies of a saved state's arrays on ``param``'s device (counts stay ints)."""
    return _copied_state(state, param.device)


def _copied_state(state, device):
    # Always fresh arrays: a saved or loaded state must not alias the live one.
    copied = {}
    with device.activate():
        for slot, value in state.items():
            if hasattr(value, "shape"):
                moved = move_array(value, device)
                value = moved.copy() if moved is value else moved
            copied[slot] = value
    return copied
