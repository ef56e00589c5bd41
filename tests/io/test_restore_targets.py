"""Loading a checkpoint into targets off the main path: a plain-dict optimizer state, and a
lazy SINGA layer (SeparableConv2d with biases) that builds its parameters from the file."""
import numpy as np
import pytest

import autograd
from autograd import SeparableConv2d, Tensor


def test_a_plain_dict_optimizer_state_is_loaded_into_a_plain_dict(tmp_path):
    path = tmp_path / "dicts.ckpt"
    saved_model = {"w": np.arange(6.0).reshape(2, 3)}
    saved_optimizer = {"momentum": np.linspace(-1.0, 1.0, 6).reshape(2, 3), "lr": 0.25,
                       "step": 7}
    autograd.io.save(path, model=saved_model, optimizer=saved_optimizer)

    model = {"w": np.zeros((2, 3))}
    buffer = np.zeros((2, 3))
    optimizer = {"momentum": buffer, "lr": 0.1, "step": 0}
    autograd.io.load(path, model=model, optimizer=optimizer)
    np.testing.assert_array_equal(model["w"], saved_model["w"])
    np.testing.assert_array_equal(optimizer["momentum"], saved_optimizer["momentum"])
    assert optimizer["momentum"] is buffer                 # a writable array is filled in place
    assert optimizer["lr"] == 0.25 and optimizer["step"] == 7


@pytest.mark.parametrize("channels,out_channels", [(3, 5), (4, 2)])
def test_lazy_separable_conv_with_biases_loads_an_eager_ones_state(tmp_path, channels,
                                                                    out_channels):
    autograd.manual_seed(0)
    eager = SeparableConv2d(channels, out_channels, 3, padding=1, bias=True)
    rng = np.random.default_rng(1)
    for _, param in eager.named_parameters():               # biases that are not zero
        param.data[...] = rng.standard_normal(param.shape)
    path = tmp_path / "separable.ckpt"
    autograd.io.save(path, model=eager)

    lazy = SeparableConv2d(out_channels, 3, padding=1, bias=True)   # SINGA's lazy form
    autograd.io.load(path, model=lazy)
    shapes = {name: p.shape for name, p in lazy.named_parameters()}
    assert shapes == {"depthwise_conv.W": (channels, 1, 3, 3), "depthwise_conv.b": (channels,),
                      "point_conv.W": (out_channels, channels, 1, 1),
                      "point_conv.b": (out_channels,)}
    x = rng.standard_normal((2, channels, 4, 4)).astype(np.float32)
    # reference: the depthwise then pointwise convolution written with NumPy
    state = eager.state_dict()
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
    depthwise = np.einsum("nchwij,cij->nchw", windows, state["depthwise_conv.W"][:, 0]) \
        + state["depthwise_conv.b"].reshape(1, -1, 1, 1)
    expected = np.einsum("nchw,oc->nohw", depthwise, state["point_conv.W"][:, :, 0, 0]) \
        + state["point_conv.b"].reshape(1, -1, 1, 1)
    got = lazy(Tensor(data=x, requires_grad=False)).to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
