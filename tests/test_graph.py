"""The tape: backward, gradients, retain_graph, errors, no_grad, autograd.training, debug mode."""
import inspect
import os
import threading
import types
import weakref

import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor, Operation


def _param(array, dtype=np.float64):
    return Tensor(data=np.asarray(array, dtype), stores_grad=True)


def _data(array, dtype=np.float64):
    return Tensor(data=np.asarray(array, dtype), requires_grad=False)


class Logged(Operation):
    """y = x, and backward appends a note to ``log`` when it runs (to see when things happen)."""

    def __init__(self, log, note):
        super().__init__()
        self.log, self.note = log, note

    def forward(self, x):
        return x.copy()

    def backward(self, dy):
        self.log.append(self.note)
        return dy


# ---------------------------------------------------------------- backward yields pairs

def test_backward_is_a_generator_of_param_grad_tensor_pairs():
    w = _param([1.0, 2.0, 3.0])
    pairs = autograd.backward(autograd.sum(w * w))
    assert isinstance(pairs, types.GeneratorType)
    ((p, g),) = list(pairs)
    assert p is w and isinstance(g, Tensor)
    np.testing.assert_array_equal(g.data, [2.0, 4.0, 6.0])
    assert g.dtype == np.float64 and g.shape == w.shape and g.device is w.device


def test_each_stored_gradient_is_yielded_once_and_only_stored_ones():
    rng = np.random.default_rng(0)
    x = _data(rng.standard_normal((4, 3)))
    w = _param(rng.standard_normal((3, 3)))
    b = _param(rng.standard_normal(3))
    hidden = Tensor(data=rng.standard_normal((3, 3)))            # requires_grad, no store
    y = autograd.sum(autograd.tanh((x @ w + b) @ w @ hidden) * b)  # w and b used twice
    params = [p for p, _ in autograd.backward(y)]
    assert len(params) == 2 and {id(p) for p in params} == {id(w), id(b)}


def test_pairs_are_yielded_as_soon_as_complete():
    # `late` only feeds the last op, `early` feeds the first: late's pair must come out before
    # the backward of the ops near the input has even run.
    log = []
    x = _data(np.ones((2, 3)))
    early = _param(np.full((3, 3), 0.5))
    late = _param(np.full((2, 3), 2.0))
    h = Logged(log, "middle backward")(autograd.tanh(x @ early))
    y = autograd.sum(h * late)
    for param, _ in autograd.backward(y):
        log.append("early" if param is early else "late" if param is late else "other")
    assert log == ["late", "middle backward", "early"]


def test_gradients_returns_the_pairs_as_a_dict():
    rng = np.random.default_rng(1)
    a, b = _param(rng.standard_normal(3)), _param(rng.standard_normal(3))
    grads = autograd.gradients(autograd.sum(a * b))
    assert isinstance(grads, dict) and set(map(id, grads)) == {id(a), id(b)}
    np.testing.assert_allclose(grads[a].data, b.data)
    np.testing.assert_allclose(grads[b].data, a.data)


# ---------------------------------------------------------------- dy

def test_dy_defaults_to_ones_for_a_scalar():
    w = _param([1.0, -2.0])
    (g,) = autograd.gradients(autograd.sum(w * 3.0)).values()
    np.testing.assert_array_equal(g.data, [3.0, 3.0])
    # a one-element tensor of any rank counts as a scalar
    (g,) = autograd.gradients(autograd.sum(w * 3.0, keepdims=True)).values()
    np.testing.assert_array_equal(g.data, [3.0, 3.0])


def test_dy_given_as_array_or_tensor_is_honoured():
    w = _param([1.0, 2.0])
    dy = np.array([5.0, -1.0])
    for upstream in (dy, Tensor(data=dy)):
        (g,) = autograd.gradients(w * 2.0, upstream).values()
        np.testing.assert_array_equal(g.data, 2.0 * dy)


def test_non_scalar_without_dy_is_runtime_error():
    w = _param([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"\(2,\)"):
        list(autograd.backward(w * 2.0))


def test_dy_of_wrong_shape_is_runtime_error():
    w = _param([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"\(3,\).*\(2,\)"):
        list(autograd.backward(w * 2.0, np.ones(3)))


def test_backward_of_unrecorded_tensor_is_runtime_error():
    with pytest.raises(RuntimeError, match="recorded"):
        list(autograd.backward(_param([1.0])))
    x = _data([1.0, 2.0])
    with pytest.raises(RuntimeError, match="recorded"):
        list(autograd.backward(autograd.sum(x * 2.0)))


# ---------------------------------------------------------------- freeing and retaining

def test_backward_twice_through_a_freed_graph_is_runtime_error():
    w = _param([1.0, 2.0])
    h = autograd.tanh(w)
    y = autograd.sum(h * h)
    list(autograd.backward(y))
    with pytest.raises(RuntimeError, match="freed"):
        list(autograd.backward(y))
    # a new op on top of a freed intermediate fails the same way
    with pytest.raises(RuntimeError, match="freed"):
        list(autograd.backward(autograd.sum(h)))


def test_retain_graph_allows_a_second_backward_with_the_same_result():
    rng = np.random.default_rng(2)
    w = _param(rng.standard_normal((3, 3)))
    x = _data(rng.standard_normal((2, 3)))
    y = autograd.sum(autograd.tanh(x @ w) * autograd.exp(x @ w))
    first = autograd.gradients(y, retain_graph=True)[w].to_numpy().copy()
    second = autograd.gradients(y, retain_graph=True)[w].to_numpy()
    third = autograd.gradients(y)[w].to_numpy()
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, third)
    with pytest.raises(RuntimeError, match="freed"):
        autograd.gradients(y)


# ---------------------------------------------------------------- sums of reused tensors

def test_tensor_used_three_times_gets_the_sum():
    x_np = np.array([0.5, -1.5, 2.0])
    x = _param(x_np)
    (g,) = autograd.gradients(autograd.sum(x * x * x)).values()
    np.testing.assert_allclose(g.data, 3 * x_np ** 2)
    (g,) = autograd.gradients(autograd.sum(x + x + x)).values()
    np.testing.assert_array_equal(g.data, [3.0, 3.0, 3.0])


def test_intermediate_used_several_times_gets_the_sum():
    x_np = np.array([0.3, -0.7])
    x = _param(x_np)
    h = autograd.sin(x)
    (g,) = autograd.gradients(autograd.sum(h * h + h + 2.0 * h)).values()
    np.testing.assert_allclose(g.data, (2 * np.sin(x_np) + 3) * np.cos(x_np))


def test_parameter_that_is_also_an_intermediate_is_yielded_once_with_the_full_sum():
    # SINGA lets a user mark an intermediate to get its gradient: it must still flow on.
    x = _param([1.0, 2.0])
    h = x * 3.0
    h.stores_grad = True
    pairs = list(autograd.backward(autograd.sum(h * h)))
    grads = {id(p): g.to_numpy() for p, g in pairs}
    assert len(pairs) == 2
    np.testing.assert_allclose(grads[id(h)], [6.0, 12.0])
    np.testing.assert_allclose(grads[id(x)], [18.0, 36.0])


def test_accumulate_sums_what_flowed_and_never_writes_into_either_array():
    from autograd.graph import accumulate
    a, b = np.array([1.0, 2.0]), np.array([10.0, 20.0])
    assert accumulate(None, None) is None
    assert accumulate(a, None) is a and accumulate(None, b) is b
    total = accumulate(a, b)
    np.testing.assert_array_equal(total, [11.0, 22.0])
    assert total is not a and total is not b
    np.testing.assert_array_equal(a, [1.0, 2.0])
    np.testing.assert_array_equal(b, [10.0, 20.0])


def test_gradients_meeting_at_each_output_of_a_several_output_op_are_summed():
    # y1 = a + b and y2 = a * b are each used twice, and y2 once more through an op whose
    # backward gives nothing: every path's gradient must meet in the right output's sum.
    from tests.operations.test_base import Pair      # (a + b, a * b)

    class Nothing(Operation):
        def forward(self, x):
            return x * 0.0

        def backward(self, dy):
            return None

    a_np, b_np = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    a, b = _param(a_np), _param(b_np)
    y1, y2 = Pair()(a, b)
    loss = autograd.sum(y1 * y1 + 3.0 * y1 + y2 * y2 + Nothing()(y2) + 2.0 * y2)
    grads = autograd.gradients(loss)
    d1 = 2 * (a_np + b_np) + 3.0          # d loss / d y1
    d2 = 2 * (a_np * b_np) + 2.0          # d loss / d y2
    np.testing.assert_allclose(grads[a].data, d1 + b_np * d2)
    np.testing.assert_allclose(grads[b].data, d1 + a_np * d2)


# ---------------------------------------------------------------- deep and odd graphs

def test_ten_thousand_op_chain_backward_is_iterative():
    x = _param([0.5])
    y = x
    for _ in range(10000):
        y = y * 1.0001
    (g,) = autograd.gradients(autograd.sum(y)).values()
    np.testing.assert_allclose(g.data, [1.0001 ** 10000], rtol=1e-9)


def test_deleting_a_ten_thousand_op_graph_without_backward():
    x = _param([0.5])
    y = autograd.tanh(x)
    first_op = weakref.ref(y.creator)
    for _ in range(9999):
        y = autograd.tanh(y)
    del y          # deallocating the chain must not overflow the C stack
    assert first_op() is None, "the graph outlived its last tensor"


def test_fifty_op_chain_matches_finite_differences():
    def chain(x, w):
        h = x
        for i in range(10):       # 5 ops per round
            h = autograd.tanh(h @ w) * 0.9 + h * 0.1
        return h

    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 3)), rng.standard_normal((3, 3)) * 0.5
    y = chain(_param(x), _param(w))
    depth, stack, seen = 0, [y.creator], set()
    while stack:
        op = stack.pop()
        if id(op) not in seen:
            seen.add(id(op))
            stack.extend(e[0] for e in op.input_edges if e is not None and e[0] is not None)
    assert len(seen) >= 50
    assert autograd.gradcheck(chain, [x, w])


def test_diamond_graph_matches_finite_differences_and_formula():
    def diamond(x):
        a = autograd.tanh(x)
        b = autograd.exp(x)
        return a * b + a

    x_np = np.array([[-0.5, 0.2, 1.1]])
    assert autograd.gradcheck(diamond, [x_np])
    x = _param(x_np)
    dy = np.array([[1.0, -2.0, 0.5]])
    (g,) = autograd.gradients(diamond(x), dy).values()
    da = 1 - np.tanh(x_np) ** 2
    expected = dy * (da * np.exp(x_np) + np.tanh(x_np) * np.exp(x_np) + da)
    np.testing.assert_allclose(g.data, expected, rtol=1e-12)


# Every op maps [-1, 1] into [-1, 1], so values and derivatives stay moderate at any depth
# (repeated squaring of sums would overflow, and sin of a huge value defeats finite differences).
_BINARY = [lambda a, b: (a + b) * 0.5, lambda a, b: (a - b) * 0.5, autograd.mul]
_UNARY = [autograd.tanh, autograd.sin, lambda t: t * 0.5]


@st.composite
def _programs(draw):
    """A random DAG: each step applies an op to earlier values (params or results), so values
    are reused at different depths and some params feed only late or only early steps."""
    parameters = draw(st.integers(1, 3))
    steps = []
    for step in range(draw(st.integers(1, 8))):
        available = parameters + step
        if draw(st.booleans()):
            steps.append((draw(st.sampled_from(range(len(_BINARY)))),
                          draw(st.integers(0, available - 1)), draw(st.integers(0, available - 1))))
        else:
            steps.append((draw(st.sampled_from(range(len(_UNARY)))),
                          draw(st.integers(0, available - 1))))
    return parameters, steps


def _run(steps, *params):
    values = list(params)
    for step in steps:
        if len(step) == 3:
            values.append(_BINARY[step[0]](values[step[1]], values[step[2]]))
        else:
            values.append(_UNARY[step[0]](values[step[1]]))
    return values[-1]


@given(_programs(), st.integers(0, 2 ** 32 - 1))
def test_random_graphs_match_finite_differences_and_yield_each_param_once(program, seed):
    count, steps = program
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1, 1, (2, 3)) for _ in range(count)]
    assert autograd.gradcheck(lambda *ts: _run(steps, *ts), arrays)
    params = [_param(a) for a in arrays]
    y = _run(steps, *params)
    reached = [p for p in params if _depends_on(y, p)]
    yielded = [p for p, _ in autograd.backward(y, np.ones((2, 3)))]
    assert sorted(map(id, yielded)) == sorted(map(id, reached))


def _depends_on(y, param):
    stack, seen = [y.creator], set()
    while stack:
        op = stack.pop()
        if op is None or id(op) in seen:
            continue
        seen.add(id(op))
        for edge in op.input_edges:
            if edge is not None:
                if edge[2] is param:
                    return True
                stack.append(edge[0])
    return False


# ---------------------------------------------------------------- no_grad and training

def test_no_grad_context_manager_stops_recording_and_restores():
    w = _param([1.0])
    assert autograd.is_recording()
    with autograd.no_grad():
        assert not autograd.is_recording()
        y = w * 2.0
        with autograd.enable_grad():
            z = w * 2.0
    assert y.creator is None and y.requires_grad is False
    assert z.creator is not None
    assert autograd.is_recording() and (w * 2.0).creator is not None


def test_no_grad_restores_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with autograd.no_grad():
            1 / 0
    assert autograd.is_recording()


def test_no_grad_as_decorator():
    @autograd.no_grad()
    def evaluate(t):
        """Doc kept."""
        return t * 2.0

    w = _param([1.0])
    assert evaluate(w).creator is None
    assert evaluate.__doc__ == "Doc kept."
    assert (w * 2.0).creator is not None


def test_no_grad_as_decorator_without_parentheses():
    @autograd.no_grad
    def evaluate(t):
        return t * 2.0

    w = _param([1.0])
    y = evaluate(w)
    assert y.creator is None
    np.testing.assert_array_equal(y.data, [2.0])
    assert autograd.is_recording()


def test_no_grad_is_thread_local():
    w = _param([1.0, 2.0])
    inside_no_grad, entered, recorded = [], threading.Barrier(2), threading.Barrier(2)
    results = {}

    def quiet():
        with autograd.no_grad():
            entered.wait(5)           # the other thread computes while this one is in no_grad
            recorded.wait(5)
            results["quiet"] = w * 2.0

    def busy():
        entered.wait(5)
        results["busy"] = w * 2.0
        recorded.wait(5)

    threads = [threading.Thread(target=quiet), threading.Thread(target=busy)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results["busy"].creator is not None
    assert results["quiet"].creator is None
    (g,) = autograd.gradients(autograd.sum(results["busy"])).values()
    np.testing.assert_array_equal(g.data, [2.0, 2.0])


def test_no_thread_in_no_grad_flag_follows_nested_no_grad_and_enable_grad():
    from autograd.graph import config
    w = _param([1.0])
    assert config.no_thread_in_no_grad
    with autograd.no_grad():
        assert not config.no_thread_in_no_grad and (w * 2.0).creator is None
        with autograd.no_grad():
            assert (w * 2.0).creator is None
        with autograd.enable_grad():
            assert config.no_thread_in_no_grad and (w * 2.0).creator is not None
        assert not config.no_thread_in_no_grad and (w * 2.0).creator is None
    assert config.no_thread_in_no_grad
    with pytest.raises(ZeroDivisionError):
        with autograd.no_grad():
            1 / 0
    assert config.no_thread_in_no_grad and (w * 2.0).creator is not None
    autograd.training = False
    try:
        assert config.no_thread_in_no_grad and (w * 2.0).creator is None
        with autograd.enable_grad():      # enable_grad does not override the training switch
            assert (w * 2.0).creator is None and not autograd.is_recording()
    finally:
        autograd.training = True
    assert (w * 2.0).creator is not None


def test_threads_run_independent_graphs_at_once():
    errors, start = [], threading.Barrier(4)

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            w_np = rng.standard_normal((3, 3))
            w = _param(w_np)
            start.wait(5)
            for _ in range(20):
                (g,) = autograd.gradients(autograd.sum((w @ w) * 0.5)).values()
                expected = 0.5 * (np.ones((3, 3)) @ w_np.T + w_np.T @ np.ones((3, 3)))
                np.testing.assert_allclose(g.data, expected)
        except Exception as error:          # reported in the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert not errors, errors


@pytest.fixture
def restore_training():
    yield
    autograd.training = True


def test_training_flag_stops_recording_and_reads_back(restore_training):
    w = _param([1.0])
    assert autograd.training is True
    autograd.training = False
    assert autograd.training is False
    assert not autograd.is_recording()
    assert (w * 2.0).creator is None
    autograd.training = True
    assert autograd.training is True and (w * 2.0).creator is not None


def test_training_is_a_plain_attribute_of_the_package_read_live(restore_training):
    from autograd.graph import config
    assert type(autograd) is types.ModuleType            # no class swap on the module
    assert "training" in vars(autograd)
    w = _param([1.0])
    x = Tensor(data=np.array([1.0, 2.0]))
    autograd.training = False
    assert config.training is False
    assert (w * 2.0).creator is None and autograd.add(w, x).creator is None
    config.training = True               # what Model.train() and layers set: the same flag
    assert autograd.training is True
    assert (w * 2.0).creator is not None and autograd.add(w, x).creator is not None


def test_training_flag_switches_layers_to_evaluation(restore_training):
    drop = autograd.Dropout(0.5)
    x = Tensor(data=np.ones((4, 64), np.float32))
    autograd.training = False
    np.testing.assert_array_equal(drop(x).data, x.data)     # evaluation: identity
    autograd.training = True
    assert (drop(x).data == 0).any()


# ---------------------------------------------------------------- debug mode

@pytest.fixture
def debug_mode():
    autograd.set_debug(True)
    try:
        yield
    finally:
        autograd.set_debug(False)


def test_debug_nan_in_forward_names_the_op_and_the_line(debug_mode):
    x = _param([1.0, -1.0])
    line = inspect.currentframe().f_lineno + 3
    with pytest.raises(FloatingPointError) as info:
        with np.errstate(invalid="ignore"):
            autograd.log(x)
    message = str(info.value)
    assert "Log" in message and "forward" in message
    assert f"{os.path.basename(__file__)}:{line}" in message


def test_debug_inf_in_forward_raises_too(debug_mode):
    with pytest.raises(FloatingPointError, match="Exp.*forward produced NaN or inf"):
        with np.errstate(over="ignore"):
            autograd.exp(_param([1000.0]))


def test_debug_records_where_each_op_was_created(debug_mode):
    line = inspect.currentframe().f_lineno + 1
    y = _param([1.0]) * 2.0
    assert y.creator.created_at.startswith(f"{__file__}:{line}")


def test_debug_nan_in_backward_names_the_op_and_the_line(debug_mode):
    x = _param([0.0, 4.0])
    line = inspect.currentframe().f_lineno + 1
    y = autograd.sqrt(x)                         # finite forward, d sqrt(x)/dx = inf at 0
    with pytest.raises(FloatingPointError) as info:
        with np.errstate(divide="ignore"):
            list(autograd.backward(autograd.sum(y)))
    message = str(info.value)
    assert "Sqrt" in message and "backward" in message
    assert f"{os.path.basename(__file__)}:{line}" in message


def test_debug_off_lets_nan_through():
    autograd.set_debug(False)
    with np.errstate(invalid="ignore"):
        y = autograd.log(_param([-1.0]))
    assert np.isnan(y.data).all()


# ---------------------------------------------------------------- devices

def test_gpu_without_cupy_is_a_clear_runtime_error():
    try:
        import cupy  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("CuPy is installed here")
    with pytest.raises(RuntimeError, match="CuPy is not installed"):
        autograd.device.gpu()
    with pytest.raises(RuntimeError, match="CuPy is not installed"):
        autograd.device.create_cuda_gpu()
    assert Tensor(data=[1.0]).device is autograd.device.cpu()   # the CPU still works


def test_default_device_is_the_cpu_and_must_be_a_device():
    assert autograd.device.get_default_device() is autograd.device.cpu()
    with pytest.raises(TypeError, match="Device.*str"):
        autograd.device.set_default_device("gpu")
    with pytest.raises(TypeError, match="Device.*str"):
        Tensor(shape=(2,), device="cpu")
    assert autograd.device.get_default_device() is autograd.device.cpu()


def test_misuse_raises_at_the_call_not_at_the_first_iteration():
    leaf = Tensor(data=[1.0], stores_grad=True)
    with pytest.raises(RuntimeError, match="not produced by a recorded operation"):
        autograd.backward(leaf)                      # no next(): the call itself raises
    y = leaf * 2.0
    with pytest.raises(RuntimeError, match="non-scalar|dy"):
        autograd.backward(Tensor(data=[1.0, 2.0], stores_grad=True) * 2.0)
    list(autograd.backward(y))
    with pytest.raises(RuntimeError, match="already freed"):
        autograd.backward(y)


def test_backward_runs_with_the_gradients_device_current():
    from autograd.graph import _backward_on_device_of
    entered = []

    class Device:                       # what a CuPy array's .device is: a context manager
        def __enter__(self):
            entered.append("in")

        def __exit__(self, *exc):
            entered.append("out")

    class GpuArray:
        device = Device()

    class Op:
        def backward(self, dy):
            entered.append("backward")
            return dy

    gradient = GpuArray()
    assert _backward_on_device_of(gradient, Op(), (gradient,)) is gradient
    assert entered == ["in", "backward", "out"]
    entered.clear()
    host = np.ones(2)                   # NumPy's .device is the string "cpu": nothing entered
    assert _backward_on_device_of(host, Op(), (host,)) is host and entered == ["backward"]
