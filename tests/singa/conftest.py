# programs/ holds SINGA-style programs that import `singa`: they run only through
# `python -m autograd.singa` (test_programs.py), never as test modules or doctests.
collect_ignore = ["programs"]
