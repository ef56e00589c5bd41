"""The public API's type hints say what users call it with: mypy accepts a program that uses
Tensor, the operation functions and the layers as documented, infers Tensors, and rejects the
misuses the hints exist for (mypy is the ``typing`` extra; skipped without it)."""
import pathlib
import textwrap

import pytest

mypy_api = pytest.importorskip("mypy.api", reason="the typing extra (mypy) is not installed")

ROOT = pathlib.Path(__file__).resolve().parent.parent

GOOD = '''
import numpy as np
import autograd
from autograd import Tensor

x = Tensor(data=np.ones((2, 3, 4, 4), np.float32))
conv = autograd.Conv2d(3, 8, 3, padding=1)
pool = autograd.MaxPool2d(2, 2, pad_mode="SAME_UPPER")
y = autograd.globalaveragepool(pool(conv(x)), "channels_first")
z = autograd.prelu(autograd.flatten(y), Tensor(data=np.full((8,), 0.1, np.float32)))
loss = autograd.softmax_cross_entropy(z, np.array([1, 2]))
w = (z * 2.0 + 1) @ Tensor(shape=(8, 2))
padded = autograd.pad(x, "reflect", [0, 0, 4, 4, 0, 0, 4, 4])
reveal_type(z)
reveal_type(w.sum(axis=1))
reveal_type(x.shape)
reveal_type(autograd.split(w, 1, 2))
'''

BAD = '''
import autograd
from autograd import Tensor

autograd.relu("text")
autograd.pad(Tensor(shape=(2,)), "reflect", 3)
Tensor(shape=(2,)).sum(axis="rows")
autograd.Linear(4, 2).forward(None)
'''


def test_mypy_accepts_documented_use_and_rejects_misuse(tmp_path, monkeypatch):
    # this checkout's package (an editable install is an import hook mypy does not follow)
    monkeypatch.setenv("MYPYPATH", str(ROOT))
    (tmp_path / "good.py").write_text(textwrap.dedent(GOOD))
    (tmp_path / "bad.py").write_text(textwrap.dedent(BAD))
    out, err, status = mypy_api.run([
        str(tmp_path / "good.py"), str(tmp_path / "bad.py"), "--follow-imports=silent",
        "--ignore-missing-imports", "--no-error-summary",
        # the project's cache (the options of [tool.mypy]): CI's own mypy run reuses it
        "--cache-dir", str(ROOT / ".mypy_cache")])
    lines = out.splitlines()
    good = [line for line in lines if line.split(":")[0].endswith("good.py")]
    bad = [line for line in lines if line.split(":")[0].endswith("bad.py")]
    assert [line for line in good if ": error:" in line] == [], out + err
    revealed = [line.split("Revealed type is ")[1].replace("builtins.", "")    # older mypy
                for line in good if "Revealed type" in line]
    assert revealed == ['"autograd.tensor.Tensor"', '"autograd.tensor.Tensor"', '"tuple[int, ...]"',
                        '"tuple[autograd.tensor.Tensor, ...]"'], out
    # one error per misuse, each on its own line (5, 6, 7, 8 of BAD after dedent)
    errors = sorted({int(line.split(":")[1]) for line in bad if ": error:" in line})
    assert errors == [5, 6, 7, 8], out
    assert status == 1
