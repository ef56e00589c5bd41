"""Batch-last images (autograd/operations/layout.py): conv2d returns them, and the ops after it
keep that layout through forward and backward, with the same values and gradients as C order."""
import numpy as np

import autograd
from autograd import Tensor
from autograd.backend.layout import batch_last, from_batch_last, is_batch_last
from tests.layouts import stored_batch_last


def test_batch_last_views_and_copies():
    stored = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5, 2)
    images = from_batch_last(stored)
    assert images.shape == (2, 3, 4, 5) and is_batch_last(images)
    assert np.shares_memory(batch_last(images), stored)
    nchw = np.ascontiguousarray(images)
    assert not is_batch_last(nchw)
    np.testing.assert_array_equal(batch_last(nchw), stored)
    assert not np.shares_memory(batch_last(nchw), nchw)


def _small_cnn(x, W1, b1, scale, bias, W2, W3, seen):
    """conv - relu - max pool - batch norm - avg pool - conv - flatten - linear, noting each
    image array's layout."""
    h = autograd.conv2d(x, W1, b1, padding=1)
    for op in (autograd.relu, lambda t: autograd.max_pool2d(t, 2, 1, padding=1),
               lambda t: autograd.batch_norm(t, scale, bias, None, None, training=True),
               lambda t: autograd.avg_pool2d(t, 2),
               lambda t: autograd.conv2d(t, W2, stride=2, padding=1)):
        seen.append(is_batch_last(h.data))
        h = op(h)
    seen.append(is_batch_last(h.data))
    return autograd.matmul(autograd.reshape(h, (h.shape[0], -1)), W3)


def test_a_small_cnn_keeps_batch_last_images_and_passes_gradcheck():
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, shape) for shape in
              [(3, 2, 6, 6), (4, 2, 3, 3), (4,), (4,), (4,), (5, 4, 2, 2), (5 * 2 * 2, 3)]]
    arrays[3] += 1.5                                    # batch norm scale away from zero
    seen = []
    expected = _small_cnn(*[Tensor(data=a) for a in arrays], seen).to_numpy()
    assert seen == [True] * 6, seen           # every image array after the first conv

    # the same network on a batch-last input, and its gradients, including every image
    # array's through the layout-keeping ops, against finite differences
    arrays[0] = stored_batch_last(arrays[0])
    inputs = [Tensor(data=a, stores_grad=True) for a in arrays]
    np.testing.assert_allclose(_small_cnn(*inputs, []).to_numpy(), expected, rtol=1e-12,
                               atol=1e-12)
    autograd.gradcheck(lambda *t: _small_cnn(*t, []), inputs)
    loss = autograd.sum(_small_cnn(*inputs, []))
    grads = dict(autograd.backward(loss))
    assert is_batch_last(grads[inputs[0]].data)         # dx of the first conv keeps x's layout


def test_winograd_between_column_convolutions_keeps_batch_last_and_passes_gradcheck(
        monkeypatch):
    """A Winograd convolution (forced on small shapes) given batch-last x returns batch-last y,
    and its db comes from a batch-last dy."""
    from autograd.backend import winograd
    monkeypatch.setattr(winograd, "MIN_CHANNELS", 1)
    monkeypatch.setattr(winograd, "MIN_TILES", 1)
    rng = np.random.default_rng(1)
    arrays = [rng.uniform(-1, 1, shape) for shape in
              [(2, 2, 7, 6), (3, 2, 1, 1), (3, 3, 3, 3), (3,), (2, 3, 2, 2)]]
    inputs = [Tensor(data=a, stores_grad=True) for a in arrays]

    def network(x, W1, W2, b2, W3, layouts=None):
        h = autograd.relu(autograd.conv2d(x, W1))                 # 1x1: the column path
        middle = autograd.conv2d(h, W2, b2, padding=1)
        if layouts is not None:       # (gradcheck's finite differences record no graph)
            layouts += [is_batch_last(h.data), middle.creator.saved[0].winograd,
                        is_batch_last(middle.data)]
        return autograd.conv2d(autograd.relu(middle), W3, stride=2)

    layouts = []
    network(*inputs, layouts)
    assert layouts == [True, True, True]
    autograd.gradcheck(network, inputs)
