"""Eager calls through forward plans (operations/plan_cache.py): under no_grad, an op with
plans runs its forward the first time for a layout and its plan afterwards, with the same bits
as the forward; a new layout, other settings, the compiled kernels switched off, debug mode, a
recorded call or a plan that disagrees all run the forward; the kept plans are bounded."""
import numpy as np
import pytest

import autograd
from autograd import Operation, Tensor
from autograd.backend import native
from autograd.operations import activation, conv, linalg, plan_cache, pooling
from tests.backend import native_helpers
from tests.graph_mode.test_forward_plans import Doubled

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")


@pytest.fixture
def forwards(monkeypatch):
    """{op class name: forward calls}, counting the four planned ops' forwards."""
    counts = {}
    for cls in (conv.Conv2d, activation.ReLU, pooling.MaxPool2d, linalg.Gemm):
        real = cls.forward

        def counted(self, *arrays, real=real, name=cls.__name__):
            counts[name] = counts.get(name, 0) + 1
            return real(self, *arrays)
        monkeypatch.setattr(cls, "forward", counted)
    plan_cache.clear()
    yield counts
    plan_cache.clear()


def cnn_forward(x, p):
    h = autograd.max_pool2d(autograd.relu(autograd.conv2d(x, p["W1"], p["b1"], padding=1)), 2)
    h = autograd.max_pool2d(autograd.relu(autograd.conv2d(h, p["W2"], p["b2"], padding=1)), 2)
    return autograd.gemm(autograd.reshape(h, (x.shape[0], -1)), p["W3"], p["b3"])


def parameters(rng):
    shapes = {"W1": (32, 1, 3, 3), "b1": (32,), "W2": (64, 32, 3, 3), "b2": (64,),
              "W3": (256, 10), "b3": (10,)}
    return {name: Tensor(data=rng.standard_normal(shape).astype(np.float32) * 0.3,
                         stores_grad=True) for name, shape in shapes.items()}


def without_plans(monkeypatch, function, *arguments):
    """``function(*arguments)`` with every op's forward run as it is."""
    with monkeypatch.context() as patch:
        patch.setattr(Operation, "forward_plan_key", None)
        for cls in (conv.Conv2d, activation.ReLU, pooling.MaxPool2d, linalg.Gemm):
            patch.setattr(cls, "forward_plan_key", None)
        return function(*arguments)


@pytest.mark.parametrize("batch", [1, 8])
def test_a_cnns_no_grad_forwards_run_their_plans_after_the_first(batch, forwards,
                                                                  monkeypatch):
    rng = np.random.default_rng(batch)
    p = parameters(rng)
    with autograd.no_grad():
        for step in range(4):
            x = rng.standard_normal((batch, 1, 8, 8)).astype(np.float32)
            x[0, 0, 0, :2] = (np.nan, -0.0) if step == 2 else (1.0, 2.0)
            y = cnn_forward(Tensor(data=x), p).to_numpy()
            expected = without_plans(monkeypatch, cnn_forward, Tensor(data=x), p).to_numpy()
            np.testing.assert_array_equal(y, expected)
            assert y.tobytes() == expected.tobytes()
    # each op's forward: once for its layout, then once per unplanned reference call (4);
    # at batch 8 the product is OpenBLAS's and an add (no plan), its forward every call
    planned = {"Conv2d": 2 + 8, "ReLU": 2 + 8, "MaxPool2d": 2 + 8}
    planned["Gemm"] = 1 + 4 if batch == 1 else 4 + 4
    assert forwards == planned


def test_a_new_layout_or_setting_runs_the_forward_again(forwards):
    x = Tensor(data=np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32))
    transposed = Tensor(data=np.ascontiguousarray(x.data.transpose(1, 2, 3, 0))
                        .transpose(3, 0, 1, 2))
    with autograd.no_grad():
        for _ in range(2):
            autograd.relu(x)
            autograd.relu(transposed)                  # batch-last: its own plan
            autograd.max_pool2d(x, 2)
            autograd.max_pool2d(x, 3, stride=1)        # other windows
    assert forwards == {"ReLU": 2, "MaxPool2d": 2}


def test_a_product_of_another_layout_runs_the_forward_again(forwards, monkeypatch):
    rng = np.random.default_rng(3)
    W = Tensor(data=rng.standard_normal((64, 40)).astype(np.float32), stores_grad=True)
    b = Tensor(data=rng.standard_normal(40).astype(np.float32), stores_grad=True)
    rows = rng.standard_normal((64, 4)).astype(np.float32)
    with autograd.no_grad():
        for x in [rows.T.copy(), rows.T.copy(), rows.T, rows.T]:     # C order, then strided
            y = autograd.gemm(Tensor(data=x), W, b).to_numpy()
            expected = without_plans(monkeypatch, autograd.gemm, Tensor(data=x), W, b)
            np.testing.assert_array_equal(y, expected.to_numpy())
    strided_plan = native.product(rows.T, W.data, np.empty((4, 40), np.float32), b.data)
    # 4 unplanned references; the C-order product's forward once, the strided one's once
    # with a plan of its own, twice without
    assert forwards["Gemm"] == 4 + 1 + (1 if strided_plan else 2)


def test_switched_off_kernels_debug_mode_and_recorded_calls_run_the_forward(forwards):
    x = Tensor(data=np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 12))
    with autograd.no_grad():
        autograd.relu(x)
        autograd.relu(x)
        assert forwards == {"ReLU": 1}
        previous = native.set_enabled(False)
        try:
            autograd.relu(x)
            autograd.relu(x)
        finally:
            native.set_enabled(previous)
        assert forwards == {"ReLU": 3}                 # no plan without the kernels
        autograd.set_debug(True)
        try:
            autograd.relu(x)
        finally:
            autograd.set_debug(False)
        assert forwards == {"ReLU": 4}
    w = Tensor(data=x.data.copy(), stores_grad=True)
    autograd.relu(w)
    autograd.relu(w)                                   # recorded: forward, saving y
    assert forwards == {"ReLU": 6}


@pytest.mark.parametrize("plan", [lambda x: 3 * x, lambda x: (2 * x).astype(np.float64),
                                  lambda x: np.asfortranarray(2 * x), None])
def test_a_plan_that_is_not_the_forwards_is_never_run(plan):
    plan_cache.clear()
    rng = np.random.default_rng(1)
    with autograd.no_grad():
        for _ in range(3):
            x = rng.standard_normal((3, 4)).astype(np.float32)
            np.testing.assert_array_equal(Doubled(plan)(Tensor(data=x)).to_numpy(), 2 * x)


def test_only_the_ops_with_plans_ask_for_them(monkeypatch):
    """Average pooling has no plan of its own (no_grad calls run its forward, never a max
    pooling kernel, not even for a check) and the kept plans are the planned ops' only."""
    calls = native_helpers.record_calls(monkeypatch, ("max_pool_forward",))
    plan_cache.clear()
    x = Tensor(data=np.random.default_rng(2).standard_normal((2, 3, 8, 8)).astype(np.float32))
    with autograd.no_grad():
        for _ in range(2):
            y = autograd.avg_pool2d(x, 2)
    np.testing.assert_allclose(y.to_numpy(), x.data.reshape(2, 3, 4, 2, 4, 2).mean(axis=(3, 5)),
                               rtol=1e-5, atol=1e-6)
    assert calls == [] and plan_cache._plans == {}


def test_the_kept_plans_are_bounded(forwards, monkeypatch):
    monkeypatch.setattr(plan_cache, "_MOST_PLANS", 1)
    with autograd.no_grad():
        for _ in range(2):
            autograd.relu(Tensor(data=np.ones((2, 3), np.float32)))
            autograd.relu(Tensor(data=np.ones((3, 3), np.float32)))    # not kept
    assert forwards == {"ReLU": 3}


@pytest.mark.parametrize("with_bias", [False, True])
def test_a_convolution_whose_weights_or_bias_change_layout_runs_the_forward_again(
        with_bias, forwards, monkeypatch):
    """The weights' and the bias's strides are in the key: a plan made for C-order weights
    and a dense bias (which the kernel reads as they are) is not run on a transposed copy's
    view nor on a strided bias (the shifted products take a dense one only: a strided bias
    made their binding raise, and now takes the columns path)."""
    rng = np.random.default_rng(7)
    x = Tensor(data=rng.standard_normal((2, 3, 6, 6)).astype(np.float32))
    weights = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    spread = rng.standard_normal(8).astype(np.float32)
    layouts = [(weights, spread[::2].copy()), (np.asfortranarray(weights), spread[::2].copy()),
               (weights, spread[::2])]
    with autograd.no_grad():
        for W, b in layouts + layouts:
            bias = Tensor(data=b)
            bias.data = b               # as it is (Tensor(data=) makes a strided one dense)
            arguments = (x, Tensor(data=W), bias if with_bias else None)
            y = autograd.conv2d(*arguments, padding=1).to_numpy()
            expected = without_plans(monkeypatch, autograd.conv2d, *arguments, 1, 1)
            assert y.tobytes() == expected.to_numpy().tobytes()
    # 6 unplanned; once for the layout with a plan; every call for the transposed weights and
    # the strided bias (the kernel reads them dense: no plan, the columns path)
    assert forwards["Conv2d"] == 6 + 1 + 2 + (2 if with_bias else 0)
