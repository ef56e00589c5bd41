"""GPU tests (issue 6): every test in this package is marked ``gpu``; tests/conftest.py skips
them with a clear reason where CuPy or a CUDA GPU is missing. CuPy is never imported at module
level here, so the package collects on any machine.

The helpers below run one function on the CPU and on the GPU with the same inputs and the same
random upstream gradient, and compare forward values, gradients and dtypes: the CPU result is
the independent reference (the design's "the same op on the other device").
"""
import numpy as np

import autograd
from autograd import Tensor
from autograd.device import device_of_array

TOLERANCES = {
    np.dtype(np.float32): dict(rtol=1e-4, atol=1e-5),
    np.dtype(np.float64): dict(rtol=1e-10, atol=1e-12),
}
BOTH_DTYPES = (np.float32, np.float64)


def device_under_test():
    """The GPU the tests run on (gpu:0)."""
    return autograd.device.gpu(0)


def assert_on(device, *tensors):
    """Each Tensor (or raw array) lives on ``device``, as an array of that device's module."""
    for t in tensors:
        array = t.data if isinstance(t, Tensor) else t
        assert type(array) is device.xp.ndarray, f"a {type(array)} where {device} was expected"
        where = device_of_array(array)
        assert where is device, f"an array on {where}, not {device}"
        if isinstance(t, Tensor):
            assert t.device is device, f"a Tensor on {t.device}, not {device}"


class Result:
    """What one device computed: the forward outputs and the gradients, as NumPy arrays."""

    def __init__(self, outputs, dtypes, grads):
        self.outputs, self.dtypes, self.grads = outputs, dtypes, grads


def run_on(device, fn, arrays, dtype, wants_grad, seed=0):
    """``fn`` on Tensors made on ``device`` from ``arrays`` (floating ones cast to ``dtype``,
    others kept as labels/indices); backward with a random dy drawn from ``seed``, so both
    devices get the same dy. ``fn`` may return a Tensor or a tuple of Tensors (then the dy of
    each output is drawn in turn and the gradient is that of the weighted sum)."""
    tensors = []
    for array, grad in zip(arrays, wants_grad):
        if array.dtype.kind == "f":
            tensors.append(Tensor(data=array.astype(dtype), device=device, requires_grad=grad,
                                  stores_grad=grad))
        else:
            tensors.append(Tensor(data=array, device=device))
    outputs = fn(*tensors)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    assert_on(device, *outputs)
    rng = np.random.default_rng(seed)
    recorded = [o for o in outputs if o.creator is not None and o.dtype.kind == "f"]
    grads = {}
    if recorded:
        dys = [Tensor(data=rng.standard_normal(o.shape).astype(o.dtype), device=device,
                      requires_grad=False) for o in recorded]
        if len(recorded) == 1:
            pairs = autograd.gradients(recorded[0], dys[0])
        else:
            pairs = autograd.gradients(autograd.sum(*[autograd.sum(autograd.mul(o, dy))
                                                      for o, dy in zip(recorded, dys)]))
        for position, t in enumerate(tensors):
            if t in pairs:
                assert_on(device, pairs[t])
                grads[position] = pairs[t].to_numpy()
    return Result([o.to_numpy() for o in outputs], [o.dtype for o in outputs], grads)


def assert_results_match(cpu, gpu, what):
    """Forward values, dtypes and gradients agree within the tolerance of their dtype."""
    assert gpu.dtypes == cpu.dtypes, \
        f"{what}: dtypes {gpu.dtypes} on the GPU, {cpu.dtypes} on the CPU"
    for index, (c, g, dtype) in enumerate(zip(cpu.outputs, gpu.outputs, cpu.dtypes)):
        assert g.shape == c.shape, f"{what}: output {index} shape {g.shape} != {c.shape}"
        np.testing.assert_allclose(g, c, **TOLERANCES.get(np.dtype(dtype), dict(rtol=0)),
                                   err_msg=f"{what}: output {index} differs")
    assert sorted(gpu.grads) == sorted(cpu.grads), \
        f"{what}: gradients of inputs {sorted(gpu.grads)} on the GPU, {sorted(cpu.grads)} on CPU"
    for position, c in cpu.grads.items():
        g = gpu.grads[position]
        assert g.dtype == c.dtype and g.shape == c.shape, \
            f"{what}: gradient {position} is {g.dtype} {g.shape} on the GPU, {c.dtype} {c.shape}"
        np.testing.assert_allclose(g, c, **TOLERANCES[np.dtype(c.dtype)],
                                   err_msg=f"{what}: gradient of input {position} differs")


def compare_devices(fn, arrays, wants_grad=None, seed=0, dtypes=BOTH_DTYPES, what="op",
                    device=None):
    """Run ``fn`` on the CPU and on the GPU (``device``, gpu:0 by default) for each dtype and
    assert that they agree."""
    arrays = [np.asarray(a) for a in arrays]
    if wants_grad is None:
        wants_grad = [a.dtype.kind == "f" for a in arrays]
    gpu = device or device_under_test()
    for dtype in dtypes:
        cpu_result = run_on(autograd.device.cpu(), fn, arrays, dtype, wants_grad, seed)
        gpu_result = run_on(gpu, fn, arrays, dtype, wants_grad, seed)
        assert_results_match(cpu_result, gpu_result, f"{what} [{np.dtype(dtype).name}]")
