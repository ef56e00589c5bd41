"""The compiled kernels (autograd/backend/csrc): an optional extension. Where it cannot be built
(no C compiler), the package installs without it and runs the portable NumPy code; everything
else about the build is in pyproject.toml."""
import glob
import sys

from setuptools import Extension, setup

if sys.platform == "win32":
    arguments = ["/O2"]
else:
    # -fno-trapping-math lets the compiler evaluate both sides of a select (the loops'
    # branches), which is what vectorizes them; unlike -ffast-math it changes no state of the
    # process that loads the module (no flush-to-zero).
    arguments = ["-O3", "-fno-trapping-math", "-fno-math-errno"]

setup(ext_modules=[Extension(
    "autograd.backend._native",
    sources=["autograd/backend/csrc/_native.c"],
    depends=sorted(glob.glob("autograd/backend/csrc/*.h")),
    extra_compile_args=arguments,
    optional=True,
)])
