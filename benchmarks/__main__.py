"""``python -m benchmarks``: run the suite (see ``benchmarks/run.py``)."""
from benchmarks.run import main

if __name__ == "__main__":
    raise SystemExit(main())
