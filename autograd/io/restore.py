"""Taking states out of a model and an optimizer for a checkpoint, and putting them back.

Duck-typed: a model or optimizer is anything with ``state_dict()``/``load_state_dict()``, or a
plain dict. Two conventions of autograd's own classes are used when present:

- a model with ``get_params()`` (a Layer: ``{dotted name: parameter}``) and an optimizer whose
  ``state_dict(params)``/``load_state_dict(state, params)`` take the parameters (autograd.opt):
  the optimizer's per-parameter state is saved under the model's parameter names and matched to
  them again on load, so it does not depend on ``Tensor.name`` being set;
- a ``load_state_dict(state, strict=...)`` (a Layer) checks the model's state itself; for one
  without ``strict`` and for a plain dict, names, shapes and dtypes are checked here.
"""
import contextlib
import copy
import inspect
from collections.abc import Mapping, MutableMapping

import numpy as np

from .state_tree import is_array

__all__ = ["CheckpointError", "states_to_save", "check_targets", "restore"]


class CheckpointError(ValueError):
    """A checkpoint that is corrupt, truncated or not a checkpoint, or that does not fit the model
    or optimizer it is loaded into. The message names the file."""


# ------------------------------------------------------------------ saving
def states_to_save(model, optimizer):
    """``(model state or None, optimizer state or None)`` as the checkpoint will hold them."""
    model_state = None if model is None else _state_of(model, "model")
    optimizer_state = None
    if optimizer is not None:
        params = _parameters_of(model)
        if params is not None and _takes_positional(getattr(optimizer, "state_dict", None), 1):
            optimizer_state = optimizer.state_dict(params)
        else:
            optimizer_state = _state_of(optimizer, "optimizer")
    return model_state, optimizer_state


def _state_of(target, role):
    if hasattr(target, "state_dict"):
        return target.state_dict()
    if isinstance(target, Mapping):
        return target
    raise TypeError(f"save: {role} must have a state_dict() method or be a dict, got "
                    f"{type(target).__name__}")


# ------------------------------------------------------------------ loading
def check_targets(model, optimizer, caller="load"):
    """TypeError, naming ``caller``, for a model or optimizer that cannot take a state (before
    the file is read)."""
    for role, target in (("model", model), ("optimizer", optimizer)):
        if target is not None and not (hasattr(target, "load_state_dict")
                                       or isinstance(target, MutableMapping)):
            raise TypeError(f"{caller}: {role} must have a load_state_dict() method or be a dict, "
                            f"got {type(target).__name__}")


def restore(path, content, model, optimizer, strict):
    """Put ``content`` (what ``read`` returned) into ``model`` and ``optimizer``, all or nothing.

    The model goes first (a lazy Layer creates its parameters from the state, and the optimizer
    is matched to those parameters); if the optimizer then rejects its state, the model gets
    its previous state back.
    """
    for role, target in (("model", model), ("optimizer", optimizer)):
        if target is not None and content[role] is None:
            raise CheckpointError(f"load: {path} holds no {role} state (it was saved without "
                                  f"{role}=)")
    previous = _snapshot(model) if model is not None and optimizer is not None else None
    if model is not None:
        _restore_model(path, model, content["model"], strict)
    if optimizer is not None:
        try:
            _restore_optimizer(path, optimizer, content["optimizer"], _parameters_of(model))
        except BaseException:
            if previous is not None:
                _put_back(model, previous)
            raise


def _restore_model(path, model, state, strict):
    if not isinstance(state, Mapping):
        raise CheckpointError(f"load: {path} holds a model state of type "
                              f"{type(state).__name__}, expected a dict")
    loader = getattr(model, "load_state_dict", None)
    if loader is not None and _takes_keyword(loader, "strict"):
        _reworded(path, "model", lambda: loader(state, strict=strict))
        return
    checked = _checked_model_state(model, state, strict, path)
    _reworded(path, "model", lambda: _assign(model, checked))


def _restore_optimizer(path, optimizer, state, params):
    loader = getattr(optimizer, "load_state_dict", None)
    if loader is None:
        if not isinstance(state, Mapping):
            raise CheckpointError(f"load: {path} holds an optimizer state of type "
                                  f"{type(state).__name__}, which a dict cannot take")
        _reworded(path, "optimizer", lambda: _assign(optimizer, state))
    elif params is not None and _takes_positional(loader, 2):
        _reworded(path, "optimizer", lambda: loader(state, params))
    else:
        _reworded(path, "optimizer", lambda: loader(state))


def _reworded(path, role, action):
    """Run ``action``; a ValueError or TypeError from the target's own checks (a crafted file
    may hold any structure) is re-raised naming the file."""
    try:
        action()
    except CheckpointError:
        raise
    except (ValueError, TypeError) as error:
        raise CheckpointError(f"load: {path} does not fit the {role}: {error}") from error


def _checked_model_state(model, state, strict, path):
    """The state to hand to a model without its own checks, after checking keys, shapes and
    dtypes against what it holds now."""
    current = model.state_dict() if hasattr(model, "load_state_dict") else model
    missing = [key for key in current if key not in state]
    unexpected = [key for key in state if key not in current]
    if strict and (missing or unexpected):
        parts = ([f"missing keys {missing}"] if missing else []) + \
                ([f"unexpected keys {unexpected}"] if unexpected else [])
        raise CheckpointError(f"load: {path} does not match the model: {', '.join(parts)} "
                              "(strict=False loads the keys both have)")
    mismatches = []
    for key, expected in current.items():
        if key not in state or not is_array(expected):
            continue
        found = state[key]
        if not is_array(found):
            mismatches.append(f"{key!r}: the model has an array of shape {tuple(expected.shape)}, "
                              f"the file a {type(found).__name__}")
        elif (tuple(found.shape) != tuple(expected.shape)
              or np.dtype(found.dtype) != np.dtype(expected.dtype)):
            mismatches.append(f"{key!r}: the model has {np.dtype(expected.dtype)} "
                              f"{tuple(expected.shape)}, the file {found.dtype} {found.shape}")
    if mismatches:
        raise CheckpointError(f"load: {path} does not fit the model: {'; '.join(mismatches)}")
    if strict:
        return dict(state)
    # a loader without strict= may insist on every key: hand it the current value of the others
    return {key: state.get(key, value) for key, value in current.items()}


def _assign(target, state):
    if hasattr(target, "load_state_dict"):
        target.load_state_dict(state)
        return
    for key, value in state.items():
        existing = target.get(key)
        if (isinstance(existing, np.ndarray) and is_array(value) and existing.flags.writeable
                and existing.shape == value.shape and existing.dtype == value.dtype):
            existing[...] = value
        else:
            target[key] = value


def _snapshot(model):
    """A deep copy of the model's state to restore, or None if it cannot be copied."""
    try:
        return copy.deepcopy(model.state_dict() if hasattr(model, "state_dict") else dict(model))
    except Exception:       # an exotic state that cannot be copied: no rollback, still loads
        return None


def _put_back(model, state):
    # Best effort on the way out of a failure: the caller re-raises the original error.
    with contextlib.suppress(Exception):
        loader = getattr(model, "load_state_dict", None)
        if loader is not None and _takes_keyword(loader, "strict"):
            loader(state, strict=False)
        else:
            _assign(model, state)


# ------------------------------------------------------------------ conventions
def _parameters_of(model):
    get_params = getattr(model, "get_params", None)
    return get_params() if callable(get_params) else None


def _signature(function):
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):
        return None


def _takes_positional(function, count):
    """Whether ``function`` accepts ``count`` positional arguments."""
    signature = _signature(function) if callable(function) else None
    if signature is None:
        return False
    kinds = [p.kind for p in signature.parameters.values()]
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return True
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(kind in positional for kind in kinds) >= count


def _takes_keyword(function, name):
    signature = _signature(function)
    if signature is None:
        return False
    parameters = signature.parameters
    return name in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD
                                     for p in parameters.values())
