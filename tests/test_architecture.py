"""docs/architecture.md stays true: every path it names exists, every kernel it lists is in
both backends, and the README points to it rather than outside the repository."""
import pathlib
import re

from autograd.backend import cupy_kernels, numpy_kernels

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCUMENT = (ROOT / "docs" / "architecture.md").read_text()


def test_every_path_the_document_names_exists():
    paths = set(re.findall(r"`((?:autograd|tests|docs|benchmarks)/[\w./]*)`", DOCUMENT))
    assert len(paths) > 20
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert missing == []


def test_every_kernel_the_document_lists_is_in_both_backends():
    table = DOCUMENT.split("| kernel | what it computes |")[1].split("What the CPU backend")[0]
    names = set(re.findall(r"`(\w+)\(", table))
    assert {"relu", "conv2d_forward", "batch_norm_backward", "as_layout"} <= names
    for kernels in (numpy_kernels, cupy_kernels):
        assert sorted(n for n in names if not callable(getattr(kernels, n, None))) == []


def test_the_readme_links_the_architecture_and_nothing_outside_the_repository():
    readme = (ROOT / "README.md").read_text()
    assert "docs/architecture.md" in readme
    assert "../shared" not in readme
