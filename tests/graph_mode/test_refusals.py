"""Graph mode refuses, at capture, every step whose replay could differ from eager mode, and the
refused step still runs to its end eagerly (nothing half-updated)."""
import numpy as np
import pytest

import autograd
from autograd import Operation, Tensor, opt


def weight():
    return Tensor(data=np.array([[1.0], [2.0]], np.float32), stores_grad=True)


def data(value=1.0):
    return Tensor(data=np.full((3, 2), value, np.float32))


def refused(step, *args, match):
    with pytest.raises(autograd.CaptureError, match=match):
        step(*args)


@pytest.mark.parametrize("read", [
    lambda t: t.item(), lambda t: t.to_numpy(), lambda t: bool(t), lambda t: t.tolist(),
    lambda t: np.asarray(t), lambda t: repr(t)])
def test_a_host_read_inside_the_step_is_refused(read):
    w = weight()

    def step(x):
        loss = autograd.sum(autograd.matmul(x, w))
        read(loss)
        return loss

    refused(autograd.capture(step), data(), match="reads a value on the host")


def test_python_control_flow_on_a_value_is_refused():
    w = weight()

    def step(x):
        y = autograd.sum(autograd.matmul(x, w))
        if y > 0:                       # bool(Tensor): a branch a replay would not retake
            y = y * 2.0
        return y

    refused(autograd.capture(step), data(), match="Tensor.__bool__ reads a value")


def test_refused_step_runs_to_its_end_and_updates_every_parameter_once():
    w, v = weight(), weight()
    sgd = opt.SGD(lr=0.1)

    def step(x):
        loss = autograd.sum(autograd.matmul(x, w)) + autograd.sum(autograd.matmul(x, v))
        sgd(loss)
        loss.item()
        return loss

    refused(autograd.capture(step), data(), match="item")
    expected = np.array([[1.0 - 0.3], [2.0 - 0.3]], np.float32)     # one step, both updated
    np.testing.assert_allclose(w.to_numpy(), expected)
    np.testing.assert_allclose(v.to_numpy(), expected)
    assert sgd.step_counter == 1


def test_an_update_written_on_data_is_refused():
    w = weight()

    def step(x):
        for p, g in autograd.backward(autograd.sum(autograd.matmul(x, w))):
            p.data -= 0.1 * g.data
    refused(autograd.capture(step), data(), match=r"p.data -= lr \* g.data")


def test_a_gradient_computed_from_data_is_refused():
    w = weight()
    sgd = opt.SGD(lr=0.1)

    def step(x):
        for p, g in autograd.backward(autograd.sum(autograd.matmul(x, w))):
            sgd.update(p, g.data * 0.5)
    refused(autograd.capture(step), data(), match="no recorded call computed")


def test_a_replayable_function_on_gradients_is_replayed():
    w = weight()
    sgd = opt.SGD(lr=0.1)

    @autograd.replayable
    def halve(pairs):
        return [(p, g.data * 0.5) for p, g in pairs]

    def step(x):
        for p, g in halve(autograd.backward(autograd.sum(autograd.matmul(x, w)))):
            sgd.update(p, g)

    captured = autograd.capture(step)
    for value in (1.0, 2.0, 3.0, 4.0):
        captured(data(value))
    # each step: dW = 0.5 * (3 * value) per row, times lr 0.1
    np.testing.assert_allclose(w.to_numpy()[:, 0], [1.0 - 1.5, 2.0 - 1.5], rtol=1e-6)
    assert captured.replays == 2


@pytest.mark.parametrize("write", [
    lambda t: t.gaussian(0.0, 1.0), lambda t: t.uniform(), lambda t: t.set_value(2.0),
    lambda t: t.copy_from_numpy(np.full(t.shape, 3.0, np.float32))])
def test_a_tensor_written_in_place_then_read_is_refused(write):
    w = weight()

    def step(x):
        noise = Tensor(shape=(3, 2))
        write(noise)
        return autograd.sum(autograd.matmul(x + noise, w))

    refused(autograd.capture(step), data(), match="written in place inside the step")


def test_writing_a_value_the_step_already_used_is_refused():
    def step(x):
        y = x * 2.0
        y += x
        return y

    refused(autograd.capture(step), data(), match=r"__iadd__ writes in place")


def test_an_operation_keeping_a_computed_array_is_refused():
    class Shift(Operation):
        def __init__(self, offset):
            self.offset = offset

        def forward(self, x):
            return x + self.offset

        def backward(self, dy):
            return dy

    def step(x):
        offset = (x * 3.0).data          # computed in the step, then handed over as an attribute
        return Shift(offset)(x)

    refused(autograd.capture(step), data(), match=r"Shift holds an array in .offset")


def test_on_refusal_eager_warns_once_and_runs_eagerly():
    w = weight()

    def step(x):
        loss = autograd.sum(autograd.matmul(x, w))
        return loss, loss.item()

    captured = autograd.capture(step, on_refusal="eager")
    with pytest.warns(RuntimeWarning, match="every later call runs eagerly"):
        assert captured(data(1.0))[1] == 9.0
    assert captured(data(2.0))[1] == 18.0
    assert (captured.captures, captured.replays) == (0, 0)


def test_hooks_are_removed_after_a_capture_even_when_the_step_raises():
    call, item = Operation.__call__, Tensor.item

    def step(x):
        raise KeyError("boom")

    with pytest.raises(KeyError):
        autograd.capture(step)(data())
    assert Operation.__call__ is call and Tensor.item is item
    assert autograd.graph.config.recorder is None
    assert Tensor(data=[4.0]).item() == 4.0


def test_bad_arguments_name_capture():
    with pytest.raises(TypeError, match="capture: expected a function"):
        autograd.capture(3)
    with pytest.raises(ValueError, match="max_captures"):
        autograd.capture(lambda: None, max_captures=0)
    with pytest.raises(ValueError, match="on_refusal"):
        autograd.capture(lambda: None, on_refusal="ignore")
    with pytest.raises(autograd.CaptureError, match="hashable"):
        autograd.capture(lambda x, options: x)(data(), {1, 2})
