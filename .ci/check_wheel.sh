#!/usr/bin/env bash
# The release artefacts: `python -m build` makes a wheel and an sdist that pass `twine check`,
# and the wheel installs into a fresh virtual environment and works outside the source tree
# (the bundled digits and the licences inside). Quick: no build isolation, and the venv reuses
# the installed NumPy/SciPy/tqdm instead of downloading them.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python -m build --no-isolation --outdir "$work/dist" . >"$work/build.log" 2>&1 \
    || { cat "$work/build.log"; exit 1; }
python -m twine check --strict "$work"/dist/*
python -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-deps --no-index "$work"/dist/*.whl
cd "$work"
"$work/venv/bin/python" - "$work/venv" <<'PY'
import importlib.metadata, pathlib, sys
import autograd
from autograd.data import load_digits
venv = pathlib.Path(sys.argv[1]).resolve()
where = pathlib.Path(autograd.__file__).resolve()
assert venv in where.parents, f"imported {where}, not the wheel in {venv}"
assert autograd.__version__ == importlib.metadata.version("tapegrad")
images, labels = load_digits("train")
files = {str(f) for f in importlib.metadata.files("tapegrad")}
for needed in ("autograd/py.typed", "autograd/data/digits.npz"):
    assert needed in files, needed
assert any(f.endswith("licenses/LICENSE") for f in files), sorted(files)
assert any(f.endswith("DIGITS_LICENSE.txt") for f in files)
from autograd.backend import native
assert native.available(), "the wheel was built without its compiled kernels"
print(f"wheel OK: tapegrad {autograd.__version__} from {where.parent}, digits {images.shape}, "
      f"kernels {native.instruction_set()}")
PY
"$work/venv/bin/python" -m autograd >/dev/null
