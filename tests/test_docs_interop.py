"""docs/interop.md stays true: its Python blocks run, in order, in one namespace."""
import pathlib
import re

import pytest

PAGE = pathlib.Path(__file__).resolve().parent.parent / "docs" / "interop.md"


def test_every_python_block_of_the_interop_page_runs(tmp_path, monkeypatch):
    pytest.importorskip("safetensors")
    pytest.importorskip("tensorboard")
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 3
    namespace = {}
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)
