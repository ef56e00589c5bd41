"""Weights in safetensors, the Hugging Face format: a JSON header and raw little-endian arrays,
nothing executable. Through the ``safetensors`` package (``pip install -e ".[interop]"``).

Names and orientation. autograd's own names are the model's dotted parameter names
(``0.W``, ``bn.scale``). PyTorch names the same parameters after its modules' attributes
(``0.weight``, ``bn.weight``) and stores a Linear weight as (out, in), the transpose of
autograd's ``W`` (in, out) (SINGA computes ``x @ W``, PyTorch ``x @ weight.T``).
``save_safetensors(..., layout="torch")`` writes PyTorch's names and orientation, so
``torch_model.load_state_dict(safetensors.torch.load_file(path))`` takes the file as it is;
``load_safetensors`` reads either: a name whose last part is PyTorch's (``weight``,
``running_mean``) is translated for the layer at that path, transposing where the layer's
convention differs. The translated layers:

    layer                 autograd        PyTorch
    Linear                W (in, out)     weight (out, in)      transposed
                          b               bias
    Conv1d, Conv2d        W, b            weight, bias          same (out, in/groups, k...)
    Embedding             W               weight                same
    BatchNorm1d/2d        scale, bias     weight, bias          running_mean, running_var
                                                                too; num_batches_tracked
                                                                is written as 0, ignored on load
    LayerNorm             scale, bias     weight, bias
    Gemm (SINGA)          W, b            weight, bias          transposed unless transB

Recurrent layers keep autograd's names (their gate layout differs from PyTorch's). Module paths
that differ (``features.0`` here, ``conv1`` there) are mapped by ``rename``.

>>> import os, tempfile, numpy as np, autograd
>>> model = autograd.Sequential(autograd.Linear(3, 2))
>>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
>>> save_safetensors(model, path, layout="torch")
>>> from safetensors.numpy import load_file
>>> {k: v.shape for k, v in load_file(path).items()}
{'0.bias': (2,), '0.weight': (2, 3)}
>>> copy = autograd.Sequential(autograd.Linear(3, 2))
>>> load_safetensors(copy, path)
{'format': 'pt'}
>>> bool(np.array_equal(copy[0].W.to_numpy(), model[0].W.to_numpy()))
True
"""
import os
import re
from collections.abc import Mapping

import numpy as np

from .checkpoint import _write_atomically
from .restore import CheckpointError, check_targets, _restore_model
from .state_tree import as_host_array, is_array

__all__ = ["save_safetensors", "load_safetensors"]

_LAYOUTS = ("autograd", "torch")
# safetensors' dtype names that NumPy can hold; BF16 and the F8 kinds it cannot.
_DTYPES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "U16": "uint16", "I16": "int16",
           "U32": "uint32", "I32": "int32", "U64": "uint64", "I64": "int64", "F16": "float16",
           "F32": "float32", "F64": "float64"}
_IGNORED_ON_LOAD = "num_batches_tracked"       # PyTorch's BatchNorm counter: autograd has none


def _safetensors(function):
    try:
        import safetensors.numpy
    except ImportError as error:
        raise ImportError(f"{function}: the safetensors package is not installed; install the "
                          "interop extra (pip install -e \".[interop]\") or `pip install "
                          "safetensors`") from error
    return safetensors


# ------------------------------------------------------------------ layer conventions
def torch_names(layer):
    """``{autograd name: (PyTorch name, transposed)}`` for ``layer``'s own parameters and
    buffers (empty for a layer kept in autograd's names)."""
    from ..layers import Linear, Embedding, BatchNorm2d, LayerNorm, Gemm
    from ..layers.conv import _Convolution
    if isinstance(layer, Linear):
        return {"W": ("weight", True), "b": ("bias", False)}
    if isinstance(layer, Gemm):
        return {"W": ("weight", not layer.transB), "b": ("bias", False)}
    if isinstance(layer, (_Convolution, Embedding)):
        return {"W": ("weight", False), "b": ("bias", False)}
    if isinstance(layer, BatchNorm2d):         # BatchNorm1d too
        return {"scale": ("weight", False), "bias": ("bias", False),
                "running_mean": ("running_mean", False), "running_var": ("running_var", False)}
    if isinstance(layer, LayerNorm):
        return {"scale": ("weight", False), "bias": ("bias", False)}
    return {}


def _layers_of(model):
    named = getattr(model, "named_layers", None)
    return dict(named(), **{"": model}) if callable(named) else {}


def _split(name):
    prefix, _, leaf = name.rpartition(".")
    return prefix, leaf


def _join(prefix, leaf):
    return f"{prefix}.{leaf}" if prefix else leaf


def _renamer(rename, function):
    """``rename`` (None, a callable, or ``{regex: replacement}`` applied in order with
    ``re.sub``) as a callable; a name renamed to None or "" is dropped."""
    if rename is None:
        return lambda name: name
    if callable(rename):
        return rename
    if isinstance(rename, Mapping):
        try:
            patterns = [(re.compile(pattern), replacement) for pattern, replacement
                        in rename.items()]
        except (re.error, TypeError) as error:
            raise ValueError(f"{function}: rename holds an invalid pattern ({error})") from None

        def apply(name):
            for pattern, replacement in patterns:
                name = pattern.sub(replacement, name)
            return name
        return apply
    raise TypeError(f"{function}: rename must be None, a callable or a dict of regex patterns, "
                    f"got {type(rename).__name__}")


# ------------------------------------------------------------------ saving
def save_safetensors(model, path, metadata=None, layout="autograd", rename=None):
    """Write the parameters and buffers of ``model`` (a Layer or Model, or a dict of arrays)
    to exactly ``path`` as safetensors, atomically (a temporary file, fsynced, renamed).

    ``layout="autograd"`` keeps autograd's names and orientation; ``layout="torch"`` writes
    PyTorch's (see the module docstring) and adds ``{"format": "pt"}`` to the metadata, as
    Hugging Face's loaders expect. ``rename`` (a callable or ``{regex: replacement}``) then
    maps the names; a name renamed to None or "" is left out. ``metadata`` is a dict of strings
    stored in the header (``load_safetensors`` returns it).
    """
    st = _safetensors("save_safetensors")
    if layout not in _LAYOUTS:
        raise ValueError(f"save_safetensors: layout must be one of {_LAYOUTS}, got {layout!r}")
    metadata = _checked_metadata(metadata)
    if hasattr(model, "state_dict"):
        state = model.state_dict()
    elif isinstance(model, Mapping):
        state = dict(model)
    else:
        raise TypeError("save_safetensors: model must have a state_dict() method or be a dict, "
                        f"got {type(model).__name__}")
    layers = _layers_of(model) if layout == "torch" else {}
    renamed = _renamer(rename, "save_safetensors")
    tensors = {}
    for name, value in state.items():
        array = as_host_array(value)
        prefix, leaf = _split(name)
        layer = layers.get(prefix)
        if layer is not None:
            table = torch_names(layer)
            if leaf in table:
                torch_leaf, transposed = table[leaf]
                name, array = _join(prefix, torch_leaf), (array.T if transposed else array)
            if "running_mean" in table and leaf == "running_mean":   # torch's strict load
                counter = _join(prefix, _IGNORED_ON_LOAD)                # wants it present
                _add(tensors, renamed(counter), np.zeros((), np.int64), counter)
        _add(tensors, renamed(name), array, name)
    if layout == "torch":
        metadata.setdefault("format", "pt")
    data = st.numpy.save(tensors, metadata=metadata or None)
    _write_atomically(os.fspath(path), lambda stream: stream.write(data))


def _add(tensors, name, array, original):
    if not name:
        return
    if array.dtype.name not in _DTYPES.values():
        raise TypeError(f"save_safetensors: cannot store {original!r} of dtype {array.dtype}; "
                        f"safetensors (through NumPy) holds {sorted(set(_DTYPES.values()))}")
    if name in tensors:
        raise ValueError(f"save_safetensors: two arrays would be saved as {name!r} "
                         f"(the second from {original!r}): fix rename")
    # ascontiguousarray alone makes a 0-d array (1,): a scalar's file would not fit it back
    tensors[name] = np.ascontiguousarray(array).reshape(array.shape)


def _checked_metadata(metadata):
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise TypeError("save_safetensors: metadata must be a dict of str to str (safetensors "
                        f"stores nothing else), got {metadata!r:.200}")
    return dict(metadata)


# ------------------------------------------------------------------ loading
def load_safetensors(model, path, strict=True, rename=None):
    """Load the safetensors file at ``path`` into ``model`` (a Layer or Model, or a dict of
    arrays) and return the file's metadata (a dict of strings).

    ``rename`` (a callable or ``{regex: replacement}`` applied in order) first maps each name
    in the file to this model's name; a name renamed to None or "" is skipped. Names ending in
    PyTorch's parameter names are then translated for the layer at that path, transposing a
    Linear weight (see the module docstring); autograd's own names are taken as they are.

    As with checkpoints, nothing is half-loaded: the file is checked by the safetensors
    library (header size, offsets, dtypes); shapes and dtypes are compared with the model's
    from the header, before any array is read; then every name, shape and dtype is checked
    against the model before anything is assigned. With ``strict`` (the default) a parameter missing
    from the file or a name the model lacks is an error naming them. Every problem is a
    CheckpointError naming the path; a missing file is a FileNotFoundError.
    """
    st = _safetensors("load_safetensors")
    path = os.fspath(path)
    check_targets(model, None, "load_safetensors")
    renamed = _renamer(rename, "load_safetensors")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"load_safetensors: no file at {path}")
    state, metadata = _read(st, path, renamed, _layers_of(model), _expected(model))
    _restore_model(path, model, state, strict)
    return metadata


def _expected(model):
    """``{name: (shape, dtype)}`` the model holds now (a lazy layer's future parameters are
    not known yet: the full check after reading covers them)."""
    get_states = getattr(model, "get_states", None)
    states = get_states() if callable(get_states) else model if isinstance(model, Mapping) else {}
    return {name: (tuple(value.shape), np.dtype(value.dtype))
            for name, value in states.items() if is_array(value)}


def _read(st, path, renamed, layers, expected):
    """``({model name: NumPy array}, metadata)`` from the file, names mapped and arrays
    transposed. Dtypes NumPy cannot hold, and shapes and dtypes that differ from ``expected``,
    are refused from the header, before any array is read."""
    try:
        with st.safe_open(path, framework="numpy") as archive:
            metadata = archive.metadata() or {}
            plan, sources, mismatches = {}, {}, []
            for name in archive.keys():
                target = _target(renamed(name), layers)
                if target is None:
                    continue
                model_name, transposed = target
                dtype = archive.get_slice(name).get_dtype()
                if dtype not in _DTYPES:
                    raise CheckpointError(
                        f"load_safetensors: {path} holds {name!r} as {dtype}, which NumPy "
                        f"cannot hold; save it as float32 (in PyTorch: tensor.float())")
                if model_name in plan:
                    raise CheckpointError(
                        f"load_safetensors: {path}: {sources[model_name]!r} and {name!r} both "
                        f"map to {model_name!r}: fix rename")
                plan[model_name], sources[model_name] = (name, transposed), name
                shape = tuple(archive.get_slice(name).get_shape())
                found = (shape[::-1] if transposed else shape, np.dtype(_DTYPES[dtype]))
                if model_name in expected and found != expected[model_name]:
                    mismatches.append(f"{name!r} (for {model_name!r}): the model has "
                                      f"{expected[model_name][1]} {expected[model_name][0]}, "
                                      f"the file {found[1]} {found[0]}")
            if mismatches:
                raise CheckpointError(f"load_safetensors: {path} does not fit the model: "
                                      + "; ".join(mismatches))
            state = {}
            for model_name, (name, transposed) in plan.items():
                array = archive.get_tensor(name)
                state[model_name] = array.T if transposed else array
    except CheckpointError:
        raise
    except Exception as error:       # SafetensorError, OSError, a bad header: all say "corrupt"
        raise CheckpointError(f"load_safetensors: {path} is not a valid safetensors file "
                              f"({type(error).__name__}: {error})") from error
    return state, dict(metadata)


def _target(name, layers):
    """``(model name, transposed)`` for a (renamed) file name, or None to skip it."""
    if not name:
        return None
    prefix, leaf = _split(name)
    layer = layers.get(prefix)
    if layer is None:
        return name, False
    table = torch_names(layer)
    if leaf == _IGNORED_ON_LOAD and "running_mean" in table:
        return None
    for ours, (theirs, transposed) in table.items():
        if leaf == theirs and leaf != ours:
            return _join(prefix, ours), transposed
    return name, False
