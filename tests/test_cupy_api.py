"""Only CuPy's API in device code (issue 23): every call on the array module in autograd/
(``xp.name(...)``, ``x.device.xp.name(...)``, ``get_array_module(x).name(...)``, and a
device's generator ``device.random.name(...)``) must be a CuPy 14 function called with
arguments its documented signature accepts. NumPy-only keywords (``indices(sparse=True)``)
otherwise pass every CPU test and fail only on a GPU, which CI does not have.

The table below was written by hand from CuPy's reference pages (docs.cupy.dev, latest = 14);
a function that is not in it fails with a message asking to add it after checking the docs.
"""
import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "autograd"

# Documented CuPy ufunc call: inputs, then out= and dtype= (cupy.ufunc.__call__).
UFUNC = "*args, out=None, dtype=None"

# name (relative to the cupy module) -> its documented parameter list, as written in CuPy's
# reference. "**kwargs" functions list the keywords their docs describe in PASSED_THROUGH.
CUPY_SIGNATURES = {
    # creation
    "arange": "start, stop=None, step=1, dtype=None",
    "array_equal": "a1, a2, equal_nan=False",
    "array": "obj, dtype=None, copy=True, order='K', subok=False, ndmin=0, *, blocking=False",
    "asarray": "a, dtype=None, order=None, *, blocking=False",
    "ascontiguousarray": "a, dtype=None",
    "empty": "shape, dtype=float, order='C'",
    "eye": "N, M=None, k=0, dtype=float, order='C'",
    "full": "shape, fill_value, dtype=None, order='C'",
    "ones": "shape, dtype=float, order='C'",
    "ones_like": "a, dtype=None, order='K', subok=None, shape=None",
    "zeros": "shape, dtype=float, order='C'",
    "zeros_like": "a, dtype=None, order='K', subok=None, shape=None",
    "empty_like": "prototype, dtype=None, order='K', subok=None, shape=None",
    "tri": "N, M=None, k=0, dtype=float",
    "triu": "m, k=0",
    "tril": "m, k=0",
    "copyto": "dst, src, casting='same_kind', where=None",
    "indices": "dimensions, dtype=int",
    "ix_": "*args",
    "from_dlpack": "array, *, device=None, copy=None",
    # manipulation
    "broadcast_to": "array, shape",
    "concatenate": "tup, axis=0, out=None, *, dtype=None, casting='same_kind'",
    "stack": "tup, axis=0, out=None, *, dtype=None, casting='same_kind'",
    "flip": "a, axis=None",
    "moveaxis": "a, source, destination",
    "repeat": "a, repeats, axis=None",
    "tile": "A, reps",
    "diagonal": "a, offset=0, axis1=0, axis2=1",
    "pad": "array, pad_width, mode='constant', **kwargs",
    "lib.stride_tricks.as_strided": "x, shape=None, strides=None",
    # indexing, sums, linear algebra
    "take": "a, indices, axis=None, out=None",
    "where": "condition, x=None, y=None",
    "sum": "a, axis=None, dtype=None, out=None, keepdims=False",
    "clip": "a, a_min, a_max, out=None",
    "round": "a, decimals=0, out=None",
    "einsum": "subscripts, *operands, dtype=None, optimize=False",
    "linalg.qr": "a, mode='reduced'",
    # random and devices
    "random.default_rng": "seed=None",
    "cuda.Device": "device=None",
    # cupy.random.Generator methods (what Device.random is on a GPU)
    "Generator.random": "size=None, dtype=float, out=None",
    "Generator.standard_normal": "size=None, dtype=float, out=None",
}
for _ufunc in ("abs add subtract multiply maximum minimum matmul sqrt exp expm1 log log1p "
               "sign rint ceil floor isfinite sin cos tan sinh cosh tanh arcsin arccos arctan "
               "arcsinh arccosh arctanh reciprocal negative copysign divide").split():
    CUPY_SIGNATURES[_ufunc] = UFUNC

# The keywords that CuPy's docs describe for a "**kwargs" parameter.
PASSED_THROUGH = {
    "pad": {"constant_values", "end_values", "reflect_type", "stat_length"},
}


def _parameters(signature):
    """(positional names, has *args, keyword-accepted names, has **kwargs) of a signature."""
    args = ast.parse(f"def f({signature}): pass").body[0].args
    positional = [a.arg for a in args.posonlyargs + args.args]
    keywords = {a.arg for a in args.args + args.kwonlyargs}
    return positional, args.vararg is not None, keywords, args.kwarg is not None


def _module_call_name(func):
    """The CuPy name a call's function refers to when it is an attribute of the array module
    (``xp.a.b``, ``<...>.xp.a``, ``get_array_module(...).a``) or of a device's generator
    (``<...>.device.random.a``, ``device.random.a``): else None."""
    parts = []
    node = func
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    parts.reverse()
    if isinstance(node, ast.Name):
        parts.insert(0, node.id)
    elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "get_array_module":
        parts.insert(0, "xp")
    else:
        parts.insert(0, "")                 # a call's or subscript's result: not a module
    for i in range(len(parts) - 1):
        if parts[i] == "xp":
            return ".".join(parts[i + 1:])
        if parts[i] == "device" and parts[i + 1] == "random" and i + 2 < len(parts):
            return "Generator." + ".".join(parts[i + 2:])
    return None


def violations(source, filename):
    """What in ``source`` calls the array module outside CuPy's documented API."""
    problems = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call):
            continue
        name = _module_call_name(node.func)
        if name is None:
            continue
        where = f"{filename}:{node.lineno}: xp.{name}"
        if name not in CUPY_SIGNATURES:
            problems.append(f"{where} is not in this test's table of CuPy functions: check "
                            f"CuPy 14's docs (docs.cupy.dev) that cupy.{name} exists with the "
                            f"arguments used, then add its signature to CUPY_SIGNATURES")
            continue
        positional, varargs, keywords, kwargs = _parameters(CUPY_SIGNATURES[name])
        count = len(node.args)
        if any(isinstance(a, ast.Starred) for a in node.args):
            count = None if varargs else count - 1
        if count is not None and not varargs and count > len(positional):
            problems.append(f"{where} is given {count} positional arguments; CuPy's takes "
                            f"({CUPY_SIGNATURES[name]})")
        taken = set(positional[:len(node.args)])
        for keyword in node.keywords:
            if keyword.arg is None:
                problems.append(f"{where} passes **mapping: its keywords cannot be checked "
                                f"against CuPy's ({CUPY_SIGNATURES[name]})")
            elif keyword.arg in taken:
                problems.append(f"{where} gives {keyword.arg} twice")
            elif keyword.arg not in keywords and not (
                    kwargs and keyword.arg in PASSED_THROUGH.get(name, ())):
                problems.append(f"{where} passes {keyword.arg}=, which cupy.{name} does not "
                                f"take (CuPy 14: {name}({CUPY_SIGNATURES[name]})); it works "
                                f"in NumPy only")
    return problems


def _device_code():
    return sorted(PACKAGE.rglob("*.py"))


def test_the_package_has_device_code_to_check():
    names = {_module_call_name(node.func) for path in _device_code()
             for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Call)}
    assert {"zeros", "einsum", "where", "asarray"} <= names       # the walk finds calls


@pytest.mark.parametrize("path", _device_code(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_device_code_calls_only_cupys_documented_api(path):
    problems = violations(path.read_text(), str(path.relative_to(PACKAGE.parent)))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("source, expected", [
    ("xp.indices(shape, sparse=True)", "sparse=, which cupy.indices does not take"),
    ("get_array_module(x).indices(s, sparse=True)", "sparse=, which cupy.indices"),
    ("x.device.xp.einsum('i->', a, out=b)", "out=, which cupy.einsum does not take"),
    ("xp.take(a, i, axis=0, mode='wrap')", "mode=, which cupy.take"),
    ("xp.nanmean(a)", "xp.nanmean is not in this test's table"),
    ("xp.add.at(a, i, b)", "xp.add.at is not in this test's table"),
    ("xp.broadcast_to(a, s, True)", "given 3 positional arguments"),
    ("xp.zeros(s, **options)", "passes **mapping"),
    ("xp.pad(a, w, mode='constant', constant_value=0)", "constant_value="),
    ("self.device.random.integers(0, 3)", "xp.Generator.integers is not in"),
])
def test_numpy_only_calls_are_caught(source, expected):
    problems = violations(source, "planted.py")
    assert len(problems) == 1 and expected in problems[0], problems


def test_documented_calls_pass():
    source = "\n".join([
        "xp.einsum('ij->i', a, optimize=True)", "xp.pad(a, w, mode='edge')",
        "xp.pad(a, w, 'constant', constant_values=1)", "xp.maximum(a, 0, out=a)",
        "np.indices(s, sparse=True)",       # NumPy named as such is host code, not device code
        "device.random.random(s, dtype=d)", "xp.ix_(*axes)", "xp.lib.stride_tricks.as_strided("
        "a, shape=s, strides=t)", "xp.concatenate(parts, axis=1)"])
    assert violations(source, "fine.py") == []
