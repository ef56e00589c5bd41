"""The ``singa`` fixture: the import hook installed for one test (``import singa`` resolves to
this package), then removed, with the training flag a SINGA program may have switched off
set back."""
import pytest

import autograd
import autograd.singa

# programs/ holds SINGA-style programs that import `singa`: they run only through
# `python -m autograd.singa` (test_programs.py), never as test modules or doctests.
collect_ignore = ["programs"]


@pytest.fixture
def singa():
    autograd.singa.install()
    import singa as module
    yield module
    autograd.singa.uninstall()
    autograd.training = True
