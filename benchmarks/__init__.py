"""Side-by-side CPU benchmarks: autograd against a hand-written NumPy floor and PyTorch eager.

Run ``python -m benchmarks`` from the repository root (``--help`` for the options); see
``benchmarks/README.md`` for what each workload measures and ``benchmarks/NOTES.md`` for the
measured tables and profiles. Nothing here is imported by the ``autograd`` package.
"""
