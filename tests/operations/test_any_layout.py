"""The ops without an OpCase table (convolutions, pooling, normalization, resampling, einsum,
...) give the same outputs and gradients whatever the layout of their inputs and of dy: C order,
batch-last, reversed axes, strided (tests/opcase.py's LAYOUTS). The C-order results are checked
against NumPy references in each op's own test module; here every other layout must equal them,
as another device must (tests/gpu)."""
import numpy as np
import pytest

import autograd
from autograd import Tensor
from tests.opcase import LAYOUTS, layouts_for, laid_out

rng = np.random.default_rng(0)
images, sequences = rng.standard_normal((2, 3, 5, 4)), rng.standard_normal((2, 3, 6))

CASES = {
    "conv2d": (lambda x, w, b: autograd.conv2d(x, w, b, padding=1),
               [images, rng.standard_normal((4, 3, 3, 3)), rng.standard_normal(4)]),
    "conv2d_stride2": (lambda x, w: autograd.conv2d(x, w, stride=2),
                       [images, rng.standard_normal((4, 3, 3, 3))]),
    "conv2d_groups": (lambda x, w: autograd.conv2d(x, w, groups=3, padding=1),
                      [images, rng.standard_normal((3, 1, 3, 3))]),
    "conv2d_3x3_8_channels": (lambda x, w: autograd.conv2d(x, w, padding=1),
                              [rng.standard_normal((2, 8, 6, 6)),
                               rng.standard_normal((8, 8, 3, 3))]),
    "conv1d": (lambda x, w, b: autograd.conv1d(x, w, b, padding=1),
               [sequences, rng.standard_normal((4, 3, 3)), rng.standard_normal(4)]),
    "max_pool2d": (lambda x: autograd.max_pool2d(x, 2), [images]),
    "max_pool2d_padded": (lambda x: autograd.max_pool2d(x, 3, 1, 1), [images]),
    "avg_pool2d": (lambda x: autograd.avg_pool2d(x, 2, 1, 1), [images]),
    "global_avg_pool2d": (autograd.global_avg_pool2d, [images]),
    "max_pool1d": (lambda x: autograd.max_pool1d(x, 2), [sequences]),
    "avg_pool1d": (lambda x: autograd.avg_pool1d(x, 2), [sequences]),
    "batch_norm_images": (lambda x, s, b: autograd.batch_norm(x, s, b, np.zeros(3), np.ones(3)),
                          [images, rng.standard_normal(3), rng.standard_normal(3)]),
    "batch_norm_features": (lambda x, s, b: autograd.batch_norm(x, s, b, np.zeros(3), np.ones(3)),
                            [rng.standard_normal((4, 3)), rng.standard_normal(3),
                             rng.standard_normal(3)]),
    "layer_norm": (lambda x, s, b: autograd.layer_norm(x, (4,), s, b),
                   [rng.standard_normal((2, 3, 4)), rng.standard_normal(4),
                    rng.standard_normal(4)]),
    "embedding": (autograd.embedding, [rng.integers(0, 5, (2, 3)), rng.standard_normal((5, 4))]),
    "upsample": (lambda x: autograd.upsample(x, scales=[1, 1, 2, 2]), [images]),
    "depth_to_space": (lambda x: autograd.depth_to_space(x, 2),
                       [rng.standard_normal((2, 8, 2, 3))]),
    "space_to_depth": (lambda x: autograd.space_to_depth(x, 2),
                       [rng.standard_normal((2, 2, 4, 6))]),
    "einsum_batched": (lambda a, b: autograd.einsum("bij,bjk->bik", a, b),
                       [rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 2))]),
    "tensordot": (lambda a, b: autograd.tensordot(a, b, 1),
                  [rng.standard_normal((3, 4)), rng.standard_normal((4, 2))]),
    "cat": (lambda a, b: autograd.cat([a, b], 1), [images, images[:, :2]]),
    "gemm": (autograd.gemm, [rng.standard_normal((3, 4)), rng.standard_normal((4, 2)),
                             rng.standard_normal((3, 2))]),
}


def _results(fn, arrays, layouts, dy_layout):
    """fn's output and the gradients of its floating inputs under one random dy."""
    tensors = [Tensor(data=a, stores_grad=True) if a.dtype.kind == "f" else Tensor(data=a)
               for a in arrays]
    out = laid_out(fn, layouts, dy_layout)(*tensors)
    dy = np.random.default_rng(1).standard_normal(out.shape)
    grads = autograd.gradients(out, dy)
    return [out.to_numpy()] + [grads[t].to_numpy() for t in tensors if t in grads]


@pytest.mark.parametrize("name", CASES)
def test_outputs_and_gradients_are_the_same_in_every_layout(name):
    fn, arrays = CASES[name]
    expected = _results(fn, arrays, ["C"] * len(arrays), "C")
    for layout in LAYOUTS:
        layouts = [layout if layout in layouts_for(np.ndim(a)) else "C" for a in arrays]
        for dy_layout in {layout, "strided"}:
            got = _results(fn, arrays, layouts, dy_layout)
            for position, (g, e) in enumerate(zip(got, expected)):
                np.testing.assert_allclose(
                    g, e, rtol=1e-9, atol=1e-12,
                    err_msg=f"{name}: inputs stored {layouts}, dy stored {dy_layout}: "
                            f"{'output' if position == 0 else f'gradient {position}'} differs")
