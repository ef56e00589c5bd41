"""The head's softmax cross-entropy kernels against the NumPy formulas (float64 references),
split over forced threads, from reused (dirty) buffers, and on the GPU against the CPU."""
import numpy as np
import pytest

from autograd.backend import cross_entropy, kernels_for

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")


def reference(rows, targets, weight):
    rows = rows.astype(np.float64)
    shifted = rows - rows.max(axis=1, keepdims=True)
    log_probabilities = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    picked = np.arange(len(rows)), targets
    losses = -log_probabilities[picked]
    probabilities = np.exp(log_probabilities)
    onehot = np.zeros_like(rows)
    onehot[picked] = 1
    return losses, probabilities, (probabilities - onehot) * weight[:, None]


@pytest.mark.parametrize("dtype, tolerance", [(np.float64, 1e-12), (np.float32, 2e-6)])
@pytest.mark.parametrize("shape", [(1, 5), (7, 3), (300, 1000)])
def test_softmax_rows_and_backward_match_the_formulas(thread_count, shape, dtype, tolerance):
    rng = np.random.default_rng(shape[0])
    rows = (5 * rng.standard_normal(shape)).astype(dtype)
    rows[0, 0] = 80                        # a large logit: the row's maximum must be removed
    targets = rng.integers(0, shape[1], shape[0])
    weight = rng.standard_normal(shape[0]).astype(dtype)
    before = rows.copy()
    for _ in range(2):                     # the second pass gets the first pass's buffers back
        losses, probabilities = kernels_for(rows).softmax_rows(rows, targets)
        dx = kernels_for(rows).softmax_rows_backward(probabilities, targets, weight)
        expected = reference(rows, targets, weight)
        for got, want in zip((losses, probabilities, dx), expected):
            assert got.dtype == dtype
            np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
        probabilities.fill(np.nan), dx.fill(np.nan)        # dirty, then released
        del losses, probabilities, dx
    np.testing.assert_array_equal(rows, before)             # the logits are not written


def test_large_rows_come_from_the_buffer_cache():
    rows = np.zeros((512, 1024), np.float32)                # 2 MiB: kept buffers
    _, first = cross_entropy.softmax_rows(rows, np.zeros(512, np.int64))
    address = first.ctypes.data
    del first
    _, again = cross_entropy.softmax_rows(rows, np.zeros(512, np.int64))
    assert again.ctypes.data == address


@pytest.mark.gpu
def test_gpu_kernels_match_the_cpu_ones():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    rng = np.random.default_rng(0)
    rows, targets = rng.standard_normal((9, 11)), rng.integers(0, 11, 9)
    weight = rng.standard_normal(9)
    losses, probabilities = cross_entropy.softmax_rows(rows, targets)
    gpu = kernels_for(cupy.asarray(rows))
    gpu_losses, gpu_probabilities = gpu.softmax_rows(cupy.asarray(rows), cupy.asarray(targets))
    np.testing.assert_allclose(gpu_losses.get(), losses, rtol=1e-12)
    np.testing.assert_allclose(gpu_probabilities.get(), probabilities, rtol=1e-12)
    dx = gpu.softmax_rows_backward(gpu_probabilities, cupy.asarray(targets),
                                   cupy.asarray(weight))
    np.testing.assert_allclose(dx.get(), cross_entropy.softmax_rows_backward(
        probabilities, targets, weight), rtol=1e-12)
