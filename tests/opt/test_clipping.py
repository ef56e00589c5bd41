"""clip_grad_norm against the global L2 norm computed in NumPy."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor, opt
from tests.opt.quadratic import loss_of, make_params


@given(st.integers(0, 2**32 - 1), st.floats(0.01, 20.0), st.sampled_from([np.float32,
                                                                          np.float64]))
def test_clip_matches_numpy(seed, max_norm, dtype):
    rng = np.random.default_rng(seed)
    shapes = [(3,), (2, 4), ()]
    grads = [rng.standard_normal(shape).astype(dtype) for shape in shapes]
    params = [Tensor(data=np.zeros(shape, dtype), stores_grad=True) for shape in shapes]
    pairs = [(p, Tensor(data=g)) for p, g in zip(params, grads)]
    kept = [g.copy() for g in grads]

    clipped, norm = opt.clip_grad_norm(pairs, max_norm)

    expected_norm = np.sqrt(sum(np.sum(g.astype(np.float64) ** 2) for g in grads))
    scale = min(1.0, max_norm / (expected_norm + 1e-6))
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    assert norm.shape == () and norm.dtype == dtype
    np.testing.assert_allclose(norm.to_numpy(), expected_norm, rtol=tolerance)
    for (param, grad), original, (p, _) in zip(clipped, grads, pairs):
        assert param is p and isinstance(grad, Tensor) and grad.dtype == dtype
        np.testing.assert_allclose(grad.to_numpy(), original * scale, rtol=tolerance,
                                   atol=1e-12)
    for pair, k in zip(pairs, kept):               # the given gradients are untouched
        np.testing.assert_array_equal(pair[1].to_numpy(), k)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["c", "transposed"])
def test_large_gradients_norm_and_scale(dtype, layout, thread_count):
    """Gradients over the block size of the one-pass norm (and a non-contiguous one), on one
    thread and split over three."""
    rng = np.random.default_rng(3)
    grads = [rng.standard_normal(shape).astype(dtype) for shape in [(700, 300), (65537,)]]
    if layout == "transposed":
        grads[0] = np.ascontiguousarray(grads[0].T).T
    pairs = [(Tensor(data=np.zeros(g.shape, dtype), stores_grad=True), g) for g in grads]
    clipped, norm = opt.clip_grad_norm(pairs, 5.0)
    expected_norm = np.sqrt(sum(np.sum(g.astype(np.float64) ** 2) for g in grads))
    tolerance = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(norm.to_numpy(), expected_norm, rtol=tolerance)
    for (_, grad), original in zip(clipped, grads):
        assert grad is not original and grad.shape == original.shape
        np.testing.assert_allclose(grad, original * (5.0 / (expected_norm + 1e-6)),
                                   rtol=4 * tolerance)


def test_the_float32_norm_and_clipped_gradients_have_the_same_bits_at_any_thread_count():
    rng = np.random.default_rng(4)
    grads = [(rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3, shape)).astype(np.float32)
             for shape in [(700, 300), (65537,), (5,)]]
    pairs = [(Tensor(data=np.zeros(g.shape, np.float32), stores_grad=True), g) for g in grads]
    previous = autograd.get_num_threads()
    results = []
    try:
        for threads in (1, 2, 3):
            autograd.set_num_threads(threads)
            clipped, norm = opt.clip_grad_norm(pairs, 1.0)
            results.append((norm.to_numpy(), [grad.copy() for _, grad in clipped]))
    finally:
        autograd.set_num_threads(previous)
    for norm, clipped in results[1:]:
        assert norm.tobytes() == results[0][0].tobytes()
        for ours, first in zip(clipped, results[0][1]):
            np.testing.assert_array_equal(ours.view(np.int32), first.view(np.int32))


def test_small_gradients_are_unchanged_and_raw_arrays_stay_arrays():
    param = Tensor(data=[0.0, 0.0], stores_grad=True)
    grad = np.array([0.3, 0.4], np.float32)
    (pair,), norm = opt.clip_grad_norm([(param, grad)], max_norm=1.0)
    assert isinstance(pair[1], np.ndarray)
    np.testing.assert_allclose(pair[1], grad, rtol=1e-6)
    assert norm.item() == pytest.approx(0.5)


def test_clipped_pairs_drive_an_optimizer():
    params = make_params()
    pairs, norm = opt.clip_grad_norm(autograd.backward(loss_of(params)), max_norm=0.5)
    sgd = opt.SGD(lr=1.0)
    for param, grad in pairs:
        sgd.update(param, grad)
    moved = np.sqrt(sum(np.sum((p.to_numpy() - q) ** 2)
                        for p, q in zip(params, [np.array([1.0, -2.0, 0.5]),
                                                 np.array([[0.3, -0.7], [1.2, 0.1]])])))
    assert norm.item() > 0.5
    assert moved == pytest.approx(0.5, rel=1e-5)


def test_bad_arguments():
    with pytest.raises(ValueError, match="clip_grad_norm: max_norm must be a positive"):
        opt.clip_grad_norm([], 0.0)
    with pytest.raises(TypeError, match="clip_grad_norm: expected \\(param, grad\\) pairs"):
        opt.clip_grad_norm([np.ones(3)], 1.0)
    pairs, norm = opt.clip_grad_norm([], 1.0)
    assert pairs == [] and norm.item() == 0.0
