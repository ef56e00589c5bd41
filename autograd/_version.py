"""The version of autograd (distribution tapegrad): the one place it is written; the build
reads it from here (pyproject.toml: tool.setuptools.dynamic)."""
__version__ = "0.1.0"
