"""SINGA's ``singa.layer`` spelling: ``from autograd import layer; layer.Conv2d(...)``.

The layers live in ``autograd.layers`` and are exported from ``autograd`` itself; this module
only gives SINGA users the name they import.
"""
from .layers import *              # noqa: F401,F403
from .layers import __all__        # noqa: F401
