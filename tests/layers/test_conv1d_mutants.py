"""Conv1d and the 1-D pooling layers (autograd/layers/conv1d.py): the argument messages the
mutation run of issue 22 (docs/testing.md) found unpinned, word for word: each names the
layer, the argument and the forms it takes."""
import re

import numpy as np
import pytest

import autograd


@pytest.mark.parametrize("make, message", [
    (lambda: autograd.Conv1d(2, 4, 3, padding="full"),
     "Conv1d: padding must be an int, 'same' or 'valid', got 'full'"),
    (lambda: autograd.Conv1d(2, 4, 3, padding=-1),
     "Conv1d: padding must be a non-negative int, got -1"),
    (lambda: autograd.MaxPool1d(3, padding=1.5),
     "MaxPool1d: padding must be a non-negative int, got 1.5"),
    (lambda: autograd.AvgPool1d(3, padding=(1, 2)),
     "AvgPool1d: padding must be a non-negative int, got (1, 2)"),
    (lambda: autograd.MaxPool1d(3, padding=-1),
     "MaxPool1d: padding must be a non-negative int, got -1"),
])
def test_conv1d_and_pool1d_padding_messages_word_for_word(make, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        make()


def test_a_one_element_sequence_is_its_int_and_two_are_refused():
    """PyTorch's 1-tuples are taken as their int (mutant: `!= 1`), a pair is refused, not read
    as its first element (mutant: `== 2`)."""
    assert autograd.Conv1d(2, 4, (3,), stride=[2]).describe() == (
        "Conv1d(2->4, kernel_size=3, stride=2)")
    assert autograd.MaxPool1d([2]).describe() == "MaxPool1d(kernel_size=2, stride=2)"
    with pytest.raises(ValueError, match=re.escape(
            "Conv1d: kernel_size must be a positive int, got (3, 5)") + "$"):
        autograd.Conv1d(2, 4, (3, 5))


@pytest.mark.parametrize("make, message", [
    (lambda: autograd.Conv1d(2, 4, True), "Conv1d: kernel_size must be a positive int, got True"),
    (lambda: autograd.MaxPool1d(3, padding=False),
     "MaxPool1d: padding must be a non-negative int, got False"),
    (lambda: autograd.Conv1d(2, 4, 3, stride=0), "Conv1d: stride must be a positive int, got 0"),
])
def test_a_bool_is_not_an_int_argument(make, message):
    """mutant: `and` for the first `or` let True through as 1 and False as 0."""
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        make()


@pytest.mark.parametrize("include", [True, False])
def test_avg_pool1d_of_singa_four_d_layout_keeps_count_include_pad(include):
    """SINGA's (N, C, 1, L) input is pooled as an image: `count_include_pad` must reach that
    path too (the whole-package run of layers/ found it dropped unnoticed)."""
    x = np.array([1.0, 2.0, 4.0, 8.0])
    layer = autograd.AvgPool1d(3, stride=1, padding=1, count_include_pad=include)
    y = layer(autograd.Tensor(data=x.reshape(1, 1, 1, 4))).to_numpy().reshape(-1)
    padded = np.concatenate([[0.0], x, [0.0]])
    sums = np.array([padded[i:i + 3].sum() for i in range(4)])
    counts = np.full(4, 3.0) if include else np.array([2.0, 3.0, 3.0, 2.0])
    np.testing.assert_allclose(y, sums / counts, rtol=1e-6)
