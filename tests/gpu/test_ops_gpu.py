"""Every operation on the GPU equals the same operation on the CPU, forward and backward, in
float32 and float64 (issue 6, item 2): the OpCase tables of tests/operations/ drive the families
that have one; the others (conv, pooling, normalization, dropout, embedding, indexing, shape,
einsum, resampling, comparisons, conversions) have explicit cases here."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd
from autograd import Tensor
from tests.gpu import (compare_devices, device_under_test, assert_on, run_on,
                       assert_results_match, BOTH_DTYPES)
from tests.opcase import Integers, draw_arrays
from tests.operations import (test_activation, test_elementwise, test_indexing, test_joining,
                              test_linalg, test_loss, test_padding, test_reduction, test_shape,
                              test_similarity, test_softmax, test_trigonometry, test_unary)
from tests.operations.test_conv import conv_settings, _arrays as conv_arrays, _kwargs as conv_kwargs
from tests.operations.test_einsum import CASES as EINSUM_CASES
from tests.operations.test_pooling import pool_settings, _distinct

pytestmark = pytest.mark.gpu

FEW = settings(max_examples=5, deadline=None)


def _table_cases():
    cases = []
    for module in (test_elementwise, test_unary, test_trigonometry, test_activation,
                   test_softmax, test_linalg, test_reduction, test_shape, test_joining,
                   test_padding, test_indexing, test_loss, test_similarity):
        # with_one_hot builds its targets as CPU Tensors inside the case: one-hot targets on
        # the GPU are covered by test_softmax_cross_entropy_targets below instead.
        cases += [c for c in module.CASES if not str(c).endswith("_one_hot")]
    return cases


@pytest.mark.parametrize("case", _table_cases(), ids=str)
@FEW
@given(data=st.data())
def test_table_case_on_gpu_equals_cpu(case, data):
    arrays = draw_arrays(case, data)
    wants_grad = [not isinstance(spec, Integers) and spec.requires_grad for spec in case.inputs]
    seed = data.draw(st.integers(0, 2 ** 32 - 1), label="dy seed")
    fn = (lambda *ts: case.fn(*ts, **case.kwargs)) if case.grad else \
        (lambda *ts: case.fn(*ts, **case.kwargs).detach())
    compare_devices(fn, arrays, wants_grad, seed=seed, what=str(case))


@pytest.mark.parametrize("spec, shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_on_gpu_equals_cpu(spec, shapes):
    rng = np.random.default_rng(len(spec))
    arrays = [rng.uniform(-1, 1, shape) for shape in shapes]
    compare_devices(lambda *xs: autograd.einsum(spec, *xs), arrays, what=f"einsum {spec}")


@pytest.mark.parametrize("axes", [1, 2, ([0], [1]), ([1, 0], [0, 1])], ids=str)
def test_tensordot_on_gpu_equals_cpu(axes):
    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, (3, 2, 2)), rng.uniform(-1, 1, (2, 3, 2))
    if axes == 1:
        b = rng.uniform(-1, 1, (2, 4))
    if axes == 2:
        b = rng.uniform(-1, 1, (2, 2, 3))
    compare_devices(lambda x, y: autograd.tensordot(x, y, axes), [a, b], what=f"tensordot {axes}")


# ---------------------------------------------------------------- images

@FEW
@given(conv_settings(), st.booleans())
def test_conv2d_on_gpu_equals_cpu(s, input_needs_grad):
    x, W, b = conv_arrays(s)
    arrays = [x, W] + ([b] if b is not None else [])
    kwargs = conv_kwargs(s)
    compare_devices(lambda x, W, *b: autograd.conv2d(x, W, b[0] if b else None, **kwargs),
                    arrays, [input_needs_grad] + [True] * (len(arrays) - 1), seed=s["seed"],
                    what=f"conv2d {s}")


@pytest.mark.parametrize("padding, pad_mode", [("same", "NOTSET"), (0, "SAME_LOWER"),
                                               ("valid", "NOTSET")])
def test_conv2d_padding_modes_on_gpu(padding, pad_mode):
    rng = np.random.default_rng(4)
    x, W = rng.uniform(-1, 1, (2, 4, 7, 6)), rng.uniform(-1, 1, (6, 2, 3, 2))
    compare_devices(lambda x, W: autograd.conv2d(x, W, stride=2, padding=padding, groups=2,
                                                 pad_mode=pad_mode), [x, W],
                    what=f"conv2d padding={padding} pad_mode={pad_mode}")


@FEW
@given(pool_settings())
def test_pooling_on_gpu_equals_cpu(s):
    x = _distinct(s["shape"], s["seed"])       # distinct values: one maximum per window
    compare_devices(lambda x: autograd.max_pool2d(x, s["kernel"], s["stride"], s["pad"],
                                                  s["ceil_mode"]), [x], what=f"max_pool2d {s}")
    compare_devices(lambda x: autograd.avg_pool2d(x, s["kernel"], s["stride"], s["pad"],
                                                  s["ceil_mode"], s["count_include_pad"]),
                    [x], what=f"avg_pool2d {s}")


def test_max_pool_ties_and_global_avg_pool_on_gpu():
    x = np.array([[[[1.0, 1.0, 0.0], [1.0, 1.0, 2.0], [2.0, 2.0, 2.0]]]])
    compare_devices(lambda x: autograd.max_pool2d(x, 2, 1), [x], what="max_pool2d ties")
    x = np.random.default_rng(5).uniform(-1, 1, (2, 3, 4, 5))
    compare_devices(autograd.global_avg_pool2d, [x], what="global_avg_pool2d")


# ---------------------------------------------------------------- normalization, dropout

@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 4, 5)], ids=str)
@pytest.mark.parametrize("training", [True, False], ids=["training", "eval"])
@pytest.mark.parametrize("dtype", BOTH_DTYPES, ids=lambda d: np.dtype(d).name)
def test_batch_norm_and_its_running_statistics_on_gpu(shape, training, dtype):
    rng = np.random.default_rng(6)
    channels = shape[1]
    arrays = [rng.normal(1.0, 2.0, shape), rng.uniform(0.5, 2, channels),
              rng.uniform(-1, 1, channels)]
    mean, var = rng.uniform(-1, 1, channels), rng.uniform(0.5, 2, channels)
    results, running = {}, {}
    for role, device in (("cpu", autograd.device.cpu()), ("gpu", device_under_test())):
        stats = [Tensor(data=v.astype(dtype), device=device, requires_grad=False)
                 for v in (mean, var)]
        results[role] = run_on(
            device, lambda x, s, b: autograd.batch_norm(x, s, b, stats[0], stats[1],
                                                        momentum=0.8, training=training),
            arrays, dtype, [True, True, True], seed=1)
        assert_on(device, *stats)
        running[role] = [t.to_numpy() for t in stats]
    assert_results_match(results["cpu"], results["gpu"], f"batch_norm {shape} {training}")
    for c, g in zip(running["cpu"], running["gpu"]):
        np.testing.assert_allclose(g, c, rtol=1e-5 if dtype == np.float32 else 1e-12)
    if not training:
        np.testing.assert_array_equal(running["gpu"][0], mean.astype(dtype))


@pytest.mark.parametrize("shape, dims, affine", [((4, 6), 1, True), ((2, 3, 4), 2, True),
                                                 ((2, 3, 4), 1, False)], ids=str)
def test_layer_norm_on_gpu_equals_cpu(shape, dims, affine):
    rng = np.random.default_rng(7)
    normalized = shape[len(shape) - dims:]
    arrays = [rng.normal(0.5, 2.0, shape)]
    if affine:
        arrays += [rng.uniform(0.5, 2, normalized), rng.uniform(-1, 1, normalized)]
    compare_devices(lambda x, *ab: autograd.layer_norm(x, normalized, *ab), arrays,
                    what=f"layer_norm {shape} {dims}")


def test_dropout_in_eval_mode_is_the_identity_on_gpu():
    x = np.random.default_rng(8).uniform(-1, 1, (4, 5))
    compare_devices(lambda x: autograd.dropout(x * 2.0, 0.5, training=False), [x],
                    what="dropout eval")


@pytest.mark.parametrize("ratio", [0.2, 0.5])
def test_dropout_in_training_keeps_its_own_mask_on_gpu(ratio):
    gpu = device_under_test()
    values = np.random.default_rng(9).uniform(0.5, 1.5, (64, 32)).astype(np.float32)
    x = Tensor(data=values, device=gpu, stores_grad=True)
    y = autograd.dropout(x, ratio, training=True)
    assert_on(gpu, y)
    out = y.to_numpy()
    kept = out != 0
    np.testing.assert_allclose(out[kept], values[kept] / (1 - ratio), rtol=1e-6)
    assert abs(1 - kept.mean() - ratio) < 0.05           # 2048 draws: about ratio dropped
    dy = np.random.default_rng(10).standard_normal(values.shape).astype(np.float32)
    grad = autograd.gradients(y, Tensor(data=dy, device=gpu))[x]
    assert_on(gpu, grad)
    np.testing.assert_allclose(grad.to_numpy(), np.where(kept, dy / (1 - ratio), 0), rtol=1e-6)


# ---------------------------------------------------------------- lookups and indexing

def test_embedding_on_gpu_equals_cpu():
    rng = np.random.default_rng(11)
    ids = np.array([[1, 4, 1], [0, 4, 4]])                     # repeats accumulate
    table = rng.uniform(-1, 1, (5, 3))
    compare_devices(autograd.embedding, [ids, table], what="embedding (int Tensor ids)")
    compare_devices(lambda W: autograd.embedding(ids, W), [table], what="embedding (host ids)")


@pytest.mark.parametrize("targets", ["int_tensor", "numpy_labels", "one_hot", "soft"])
def test_softmax_cross_entropy_targets_on_gpu(targets):
    rng = np.random.default_rng(12)
    logits = rng.normal(0, 3, (6, 4))
    labels = np.array([0, 3, 3, 1, 2, 0])
    if targets == "int_tensor":
        compare_devices(autograd.softmax_cross_entropy, [logits, labels], what=targets)
    elif targets == "numpy_labels":
        compare_devices(lambda x: autograd.softmax_cross_entropy(x, labels), [logits],
                        what=targets)
    else:
        t = np.eye(4)[labels] if targets == "one_hot" else rng.dirichlet(np.ones(4), size=6)
        compare_devices(autograd.softmax_cross_entropy, [logits, t], [True, False], what=targets)


def test_labels_outside_the_classes_are_value_errors_on_gpu():
    gpu = device_under_test()
    x = Tensor(data=np.zeros((2, 3), np.float32), device=gpu, stores_grad=True)
    for bad in (-1, 3):
        labels = Tensor(data=np.array([0, bad]), device=gpu)
        with pytest.raises(ValueError, match=rf"label {bad} is outside \[0, 3\)"):
            autograd.softmax_cross_entropy(x, labels)


def test_huge_logits_stay_finite_on_gpu():
    logits = np.array([[1000.0, 0.0, -1000.0], [0.0, 1000.0, 0.0]])
    compare_devices(autograd.softmax_cross_entropy, [logits, np.array([1, 1])], what="huge")


@pytest.mark.parametrize("index", [np.array([2, 0, 2, 2]), np.array([[1, -1], [0, 1]]),
                                   (np.array([0, 2, 2]), np.array([1, 1, 3]))], ids=str)
def test_getitem_with_device_integer_arrays(index):
    x = np.random.default_rng(13).uniform(-1, 1, (3, 4, 2))

    def on_device(t):
        parts = index if isinstance(index, tuple) else (index,)
        return t[tuple(t.device.xp.asarray(p) for p in parts)]
    compare_devices(on_device, [x], what=f"getitem {index}")


def test_gather_split_where_on_gpu():
    rng = np.random.default_rng(14)
    x = rng.uniform(-1, 1, (3, 5, 2))
    compare_devices(lambda x, i: autograd.gather(x, 1, i), [x, np.array([[4, -1], [0, 4]])],
                    what="gather")

    def split_and_join(x):
        pieces = autograd.split(x, 1, [1, 3, 1])
        return autograd.cat([p * float(k + 1) for k, p in enumerate(pieces)][::-1], axis=1)
    compare_devices(split_and_join, [x], what="split")
    compare_devices(lambda x: autograd.split(x, 0, 3), [x], what="split outputs")
    y = rng.uniform(-1, 1, (5, 1))
    compare_devices(lambda x, y: autograd.where(condition=x.data > 0, x=x, y=y), [x, y],
                    what="where")


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_modes_on_gpu(mode):
    x = np.random.default_rng(15).uniform(-1, 1, (3, 4, 5))
    compare_devices(lambda x: autograd.pad(x, mode, [1, 2, 0, 2, 0, 3], 0.5), [x],
                    what=f"pad {mode}")


# ---------------------------------------------------------------- resampling, conversions

@pytest.mark.parametrize("scales", [[1, 1, 2, 3], [1, 1, 1.5, 2.5]], ids=str)
def test_upsample_on_gpu_equals_cpu(scales):
    x = np.random.default_rng(16).uniform(-1, 1, (2, 2, 3, 2))
    compare_devices(lambda x: autograd.upsample(x, "nearest", scales), [x], what="upsample")


def test_depth_and_space_rearrangements_on_gpu():
    x = np.random.default_rng(17).uniform(-1, 1, (2, 8, 3, 2))
    for mode in ("DCR", "CRD"):
        compare_devices(lambda x: autograd.depth_to_space(x, 2, mode), [x], what=mode)
    compare_devices(lambda x: autograd.space_to_depth(x, 2),
                    [np.random.default_rng(18).uniform(-1, 1, (2, 3, 4, 6))], what="s2d")


def test_comparisons_and_conversions_on_gpu():
    rng = np.random.default_rng(19)
    a, b = rng.integers(-2, 3, (4, 3)).astype(float), rng.integers(-2, 3, (3,)).astype(float)
    for name in ("greater", "less", "equal", "greater_equal", "less_equal", "not_equal",
                 "_and", "_or", "_xor"):
        compare_devices(getattr(autograd, name), [a, b], [False, False], what=name)
    compare_devices(autograd._not, [a], [False], what="_not")
    compare_devices(lambda x: autograd.cast(x, np.float64) * 2.0, [a], dtypes=[np.float32],
                    what="cast")
    compare_devices(lambda i: autograd.onehot(-1, i, 4), [np.array([[0, 3], [-1, 2]])],
                    what="onehot")
    compare_devices(autograd.nonzero, [a], [False], what="nonzero")
    compare_devices(autograd.shape, [a], [False], what="shape")
    compare_devices(lambda s: autograd.constant_of_shape(s, 2.5), [np.array([2, 3])],
                    what="constant_of_shape")
