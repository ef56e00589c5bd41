"""SINGA's tensor-module functions and Tensor methods (issue 7 item 4)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import autograd
from autograd import Tensor, tensor


def test_zeros_ones_likes_and_random():
    assert np.array_equal(tensor.zeros((2, 3)).to_numpy(), np.zeros((2, 3), np.float32))
    ones = tensor.ones((2, 3), dtype=tensor.float64)
    assert ones.dtype == np.float64 and ones.to_numpy().sum() == 6
    like = tensor.ones_like(Tensor(shape=(4,), dtype=np.int32))
    assert like.dtype == np.int32 and like.to_numpy().tolist() == [1, 1, 1, 1]
    assert tensor.zeros_like(ones).dtype == np.float64
    autograd.manual_seed(3)
    r = tensor.random((20000,)).to_numpy()
    autograd.manual_seed(3)
    assert r.dtype == np.float32 and 0 <= r.min() and r.max() < 1
    np.testing.assert_array_equal(r, tensor.random((20000,)).to_numpy())
    assert abs(r.mean() - 0.5) < 0.01 and abs(r.var() - 1 / 12) < 0.005


@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                    elements=st.floats(-2, 2)),
       repeats=st.integers(1, 3), data=st.data())
def test_repeat_matches_numpy_and_gradchecks(x, repeats, data):
    axis = data.draw(st.sampled_from([None] + list(range(x.ndim))))
    out = tensor.repeat(Tensor(data=x), repeats, axis)
    np.testing.assert_array_equal(out.to_numpy(), np.repeat(x, repeats, axis))
    assert autograd.gradcheck(lambda t: t.repeat(repeats, axis), [Tensor(data=x)])


def test_repeat_with_per_element_counts_sums_the_copies_gradients():
    x = Tensor(data=[1.0, 2.0, 3.0], stores_grad=True)
    grads = autograd.gradients(autograd.sum(x.repeat([0, 2, 3]) * 2.0))
    np.testing.assert_array_equal(grads[x].to_numpy(), [0.0, 4.0, 6.0])


def test_concatenate_einsum_tensordot_are_the_recorded_ops():
    a = Tensor(data=np.ones((2, 3)), stores_grad=True)
    joined = tensor.concatenate([a, a], axis=0)
    assert joined.shape == (4, 3) and joined.creator is not None
    np.testing.assert_allclose(tensor.einsum("ij->j", a).to_numpy(), [2.0, 2.0, 2.0])
    assert tensor.tensordot(a, a, ([0, 1], [0, 1])).to_numpy() == 6.0


def test_comparison_methods_and_operators():
    x = Tensor(data=[1.0, 2.0, 3.0])
    for result, expected in [(x < 2, [1, 0, 0]), (x <= 2, [1, 1, 0]), (x > 2, [0, 0, 1]),
                             (x >= 2, [0, 1, 1]), (x.eq(2), [0, 1, 0]), (x.ne(2), [1, 0, 1]),
                             (x.lt(Tensor(data=[3.0, 2.0, 1.0])), [1, 0, 0])]:
        np.testing.assert_array_equal(result.to_numpy(), expected)
        assert result.dtype == np.float32 and result.creator is None
    # == and != are elementwise (SINGA, PyTorch), 0.0/1.0 float Tensors outside the graph
    for result, expected in [(x == 2, [0, 1, 0]), (x != 2, [1, 0, 1]),
                             (x == Tensor(data=[1.0, 0.0, 3.0]), [1, 0, 1]),
                             (x == np.array([0.0, 2.0, 3.0]), [0, 1, 1])]:
        np.testing.assert_array_equal(result.to_numpy(), expected)
        assert result.dtype == np.float32 and result.creator is None


def test_tensors_stay_hashable_by_identity_and_ambiguous_truth_is_an_error():
    a, b = Tensor(data=[1.0, 2.0]), Tensor(data=[1.0, 2.0])
    table = {a: "a", b: "b"}                     # equal values, two keys
    assert table[a] == "a" and table[b] == "b" and len({a, b, a}) == 2
    assert a in [a] and (a == None) is False and (a != "text") is True   # noqa: E711
    with pytest.raises(ValueError, match=r"Tensor: the truth value of a Tensor of shape \(2,\) "
                                         r"is ambiguous"):
        bool(a == b)
    assert bool(Tensor(data=[3.0]) == 3.0) and not bool(Tensor(data=[3.0]) != 3.0)


def test_int32_tensors_for_indices_and_labels():
    labels = Tensor(data=np.array([0, 2, 1], np.int32))
    assert labels.dtype == np.int32 and not labels.requires_grad
    logits = Tensor(data=np.eye(3, dtype=np.float32) * 5, stores_grad=True)
    loss = autograd.softmax_cross_entropy(logits, labels)
    assert np.isfinite(loss.item())
    picked = autograd.gather(logits, 1, labels)
    assert picked.shape == (3, 3)


def test_new_tensors_go_to_the_device_asked_for():
    # a stand-in second device: zeros, ones, random and the *_like functions must pass the
    # device on, not fall back to the default one (the CPU)
    from tests.foreign_device import FOREIGN_DEVICE, tensor_on_a_foreign_device
    made = [tensor.zeros((2, 3), FOREIGN_DEVICE), tensor.ones((2, 3), FOREIGN_DEVICE),
            tensor.random((2, 3), device=FOREIGN_DEVICE)]
    foreign = tensor_on_a_foreign_device([[1.0, 2.0]], np.float64)
    made += [tensor.zeros_like(foreign), tensor.ones_like(foreign)]
    assert [t.device for t in made] == [FOREIGN_DEVICE] * 5
    np.testing.assert_array_equal(made[1].data, np.ones((2, 3)))      # the stand-in's arrays
    np.testing.assert_array_equal(made[4].data, [[1.0, 1.0]])         # are NumPy's
    assert made[3].dtype == made[4].dtype == np.float64


def test_concatenate_joins_along_the_axis_given():
    a, b = np.arange(6.0).reshape(2, 3), -np.arange(4.0).reshape(2, 2)
    joined = tensor.concatenate([Tensor(data=a), Tensor(data=b)], axis=1)
    np.testing.assert_array_equal(joined.to_numpy(), np.concatenate([a, b], axis=1))


def test_reflected_matmul_names_its_operands_in_order_and_transpose_takes_axes():
    rng = np.random.default_rng(0)
    a, w = rng.standard_normal((2, 3)), Tensor(data=rng.standard_normal((3, 4)))
    # matmul takes Tensors only (unlike +, which wraps an array as a constant): ndarray @ Tensor
    # reaches Tensor.__rmatmul__, whose error lists the operands as written
    with pytest.raises(TypeError, match=r"^MatMul: expected Tensor inputs, got "
                                        r"\(ndarray, Tensor\)"):
        a @ w
    x = rng.standard_normal((2, 3, 4))
    np.testing.assert_array_equal(Tensor(data=x).transpose((1, 2, 0)).to_numpy(),
                                  x.transpose(1, 2, 0))
    np.testing.assert_array_equal(Tensor(data=x).transpose().to_numpy(), x.transpose())


def test_sum_and_mean_methods_keep_or_drop_the_axis():
    x = np.arange(6.0).reshape(2, 3)
    t = Tensor(data=x)
    assert t.sum(axis=0, keepdims=True).shape == (1, 3) and t.sum(axis=0).shape == (3,)
    assert t.mean(axis=1).shape == (2,) and t.mean(axis=1, keepdims=True).shape == (2, 1)
    np.testing.assert_allclose(t.mean(axis=1).to_numpy(), x.mean(axis=1))


def test_repeat_method_takes_the_axis():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(Tensor(data=x).repeat(2, axis=1).to_numpy(),
                                  np.repeat(x, 2, axis=1))
    np.testing.assert_array_equal(Tensor(data=x).repeat(2, 0).to_numpy(), np.repeat(x, 2, 0))


def test_concatenate_defaults_to_the_first_axis():
    a, b = np.ones((1, 2)), np.zeros((2, 2))
    np.testing.assert_array_equal(tensor.concatenate([Tensor(data=a), Tensor(data=b)]).to_numpy(),
                                  np.concatenate([a, b]))
