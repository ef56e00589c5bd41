"""``python -m autograd``: what is installed and whether it works, for bug reports and for the
first five minutes (the import-name clash with HIPS autograd is the usual first problem).

Exit status 0 when autograd imports and a tiny training step runs, 1 otherwise.
"""
import importlib
import importlib.metadata
import platform
import sys

from autograd._install_check import clash_message


def _version(distribution):
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _optional(lines, module, extra=None):
    try:
        found = importlib.import_module(module)
        lines.append(f"  {module:<11}{getattr(found, '__version__', 'installed')}")
    except ImportError:
        fix = "required: pip install tapegrad" if extra is None else \
            f"pip install \"tapegrad[{extra}]\""
        lines.append(f"  {module:<11}not installed ({fix})")


def _gpu_line():
    try:
        import cupy
    except ImportError:
        return "  GPU        none: CuPy is not installed (pip install \"tapegrad[gpu]\")"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:          # no driver: CuPy raises its own runtime error
        return f"  GPU        CuPy {cupy.__version__}, but CUDA is unusable: {error}"
    return f"  GPU        CuPy {cupy.__version__}, {count} CUDA device(s)"


def _smoke_test(autograd):
    """One step of gradient descent on a tiny least-squares problem; the loss must fall."""
    import numpy as np
    w = autograd.Tensor(data=np.zeros((3, 1), np.float32), stores_grad=True)
    x = autograd.Tensor(data=np.eye(3, dtype=np.float32), requires_grad=False)
    target = autograd.Tensor(data=np.ones((3, 1), np.float32), requires_grad=False)
    sgd = autograd.opt.SGD(lr=0.5)
    losses = []
    for _ in range(2):
        loss = autograd.mse_loss(autograd.matmul(x, w), target)
        losses.append(float(loss.item()))
        for param, grad in autograd.backward(loss):
            sgd.update(param, grad)
        sgd.step()
    return losses[1] < losses[0]


def main():
    import autograd
    problem = clash_message(autograd)
    lines = ["autograd (distribution tapegrad) diagnostics",
             f"  tapegrad   {_version('tapegrad') or 'not installed as a distribution'}",
             f"  location   {getattr(autograd, '__file__', None)}",
             f"  Python     {platform.python_version()} on {platform.platform()}"]
    for module in ("numpy", "scipy", "tqdm"):
        _optional(lines, module)
    _optional(lines, "matplotlib", "examples")
    lines.append(_gpu_line())
    healthy = problem is None
    if hasattr(autograd, "Tensor"):
        lines.append(f"  threads    {autograd.get_num_threads()} (autograd.set_num_threads)")
        try:
            works = _smoke_test(autograd)
        except Exception as error:      # report, do not crash: this is a diagnostic
            works = False
            lines.append(f"  check      FAILED: {type(error).__name__}: {error}")
        else:
            lines.append("  check      a training step runs" if works
                         else "  check      FAILED: a gradient step did not lower the loss")
        healthy = healthy and works
    print("\n".join(lines))
    if problem:
        print("\n" + problem)
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
