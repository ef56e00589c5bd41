"""Graph mode: a captured step replays to the same bits as the eager step, for tens of steps.

Each test trains two copies of one model from the same initial parameters and the same random
generator state, one eagerly and one through ``autograd.capture`` (or ``Model.compile(...,
use_graph=True)``), on the same batches, and compares losses, outputs, parameters, BatchNorm
statistics and optimizer state exactly after every step.
"""
import copy

import numpy as np
import pytest

import autograd
from autograd import Tensor, opt

STEPS = 12


def batches(shape, classes, count, seed=0, integer_input=None):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        if integer_input is not None:
            x = rng.integers(0, integer_input, size=shape)
        else:
            x = rng.standard_normal(shape).astype(np.float32)
        yield x, rng.integers(0, classes, size=shape[:1] if integer_input is None
                              else shape).astype(np.int64)


def mlp():
    autograd.manual_seed(3)
    return autograd.Sequential(autograd.Linear(6, 16), autograd.ReLU(), autograd.Linear(16, 4))


class SeedCNN(autograd.Layer):
    """Conv, BatchNorm, ReLU, max pooling, concatenation, Dropout and a Linear head."""

    def __init__(self):
        super().__init__()
        self.conv = autograd.Conv2d(2, 4, 3, padding=1)
        self.side = autograd.Conv2d(2, 2, 1)
        self.norm = autograd.BatchNorm2d(6)
        self.pool = autograd.MaxPool2d(2, 2)
        self.drop = autograd.Dropout(0.3)
        self.head = autograd.Linear(6 * 3 * 3, 3)

    def forward(self, x):
        y = autograd.cat([self.conv(x), self.side(x)], axis=1)
        y = self.pool(autograd.relu(self.norm(y)))
        return self.head(self.drop(autograd.flatten(y)))


class LanguageModel(autograd.Layer):
    def __init__(self):
        super().__init__()
        self.embed = autograd.Embedding(11, 5)
        self.lstm = autograd.LSTM(5, 7, return_sequences=True)
        self.head = autograd.Linear(7, 11)

    def forward(self, ids):
        x = autograd.transpose(self.embed(ids), (1, 0, 2))       # (T, N, E)
        y, _ = self.lstm(x)
        return self.head(autograd.reshape(y, (-1, 7)))


def twin(make):
    """Two models with identical parameters and buffers."""
    model = make()
    return model, copy.deepcopy(model)


def state_of(model, optimizer):
    arrays = [t.to_numpy().copy() for _, t in model.named_parameters()]
    arrays += [t.to_numpy().copy() for _, t in model.named_buffers()]
    for state in optimizer.states.values():
        arrays += [np.asarray(v).copy() for v in state.values()]
    return arrays + [np.asarray(optimizer.step_counter)]


def assert_same_bits(a, b, what):
    assert len(a) == len(b), what
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y, err_msg=what)


def train_step(model, optimizer, loss_of, clip=None):
    def step(x, y):
        out = model(Tensor(data=x) if x.dtype.kind == "f" else Tensor(data=x))
        loss = loss_of(out, y)
        pairs = autograd.backward(loss)
        if clip is not None:
            pairs, _ = opt.clip_grad_norm(pairs, clip)
        for p, g in pairs:
            optimizer.update(p, g)
        optimizer.step()
        return out, loss
    return step


def run_both(make, make_optimizer, loss_of, data, clip=None, seed=7):
    eager_model, captured_model = twin(make)
    eager_opt, captured_opt = make_optimizer(), make_optimizer()
    eager = train_step(eager_model, eager_opt, loss_of, clip)
    captured = autograd.capture(train_step(captured_model, captured_opt, loss_of, clip))
    for index, (x, y) in enumerate(data):
        autograd.manual_seed(seed + index)
        out_e, loss_e = eager(x, Tensor(data=y))
        autograd.manual_seed(seed + index)
        out_c, loss_c = captured(x, Tensor(data=y))
        what = f"step {index}"
        assert_same_bits([out_e.to_numpy(), loss_e.to_numpy()],
                         [out_c.to_numpy(), loss_c.to_numpy()], what)
        assert_same_bits(state_of(eager_model, eager_opt), state_of(captured_model, captured_opt),
                         what)
    return captured


def cross_entropy(out, y):
    return autograd.softmax_cross_entropy(out, y)


def momentum_with_schedule():
    return opt.SGD(lr=opt.ExponentialDecay(0.1, decay_steps=3, decay_rate=0.5), momentum=0.9)


def test_mlp_with_momentum_and_a_schedule_replays_bit_for_bit():
    step = run_both(mlp, momentum_with_schedule, cross_entropy, batches((8, 6), 4, STEPS))
    assert (step.captures, step.replays) == (1, STEPS - 2)   # two recorded calls


def test_cnn_with_batchnorm_and_dropout_replays_bit_for_bit():
    step = run_both(SeedCNN, lambda: opt.Adam(lr=0.01), cross_entropy,
                    batches((4, 2, 6, 6), 3, STEPS))
    assert step.replays == STEPS - 2


def test_lstm_language_model_with_adam_and_clipping_replays_bit_for_bit():
    def loss_of(out, y):
        return autograd.softmax_cross_entropy(out, autograd.reshape(y, (-1,)))

    step = run_both(LanguageModel, lambda: opt.Adam(lr=0.01), loss_of,
                    batches((3, 5), 11, STEPS, integer_input=11), clip=0.5)
    assert step.replays == STEPS - 2


def test_dropout_draws_fresh_masks_on_every_replay():
    layer = autograd.Dropout(0.5)

    @autograd.capture
    def step(x):
        return layer(x)

    x = Tensor(data=np.ones((64,), np.float32))
    masks = [step(x).to_numpy().copy() for _ in range(5)]
    assert step.replays == 3
    assert len({m.tobytes() for m in masks}) == 5


def test_a_last_partial_batch_is_captured_separately_and_kept():
    data = list(batches((8, 6), 4, 4)) + list(batches((3, 6), 4, 2, seed=1))
    data += list(batches((8, 6), 4, 2, seed=2))
    step = run_both(mlp, momentum_with_schedule, cross_entropy, data)
    assert (step.captures, step.replays) == (2, 4)


def test_recapture_false_refuses_another_shape():
    model = mlp()
    step = autograd.capture(lambda x: model(x), recapture=False)
    step(Tensor(data=np.ones((2, 6), np.float32)))
    with pytest.raises(autograd.CaptureError,
                       match=r"captured for .*\(2, 6\).*now gets .*\(3, 6\).*recapture=False"):
        step(Tensor(data=np.ones((3, 6), np.float32)))


def test_switching_training_off_captures_the_eval_step_separately():
    model = SeedCNN()
    step = autograd.capture(lambda x: model(x))
    x = Tensor(data=np.random.default_rng(0).standard_normal((2, 2, 6, 6)).astype(np.float32))
    step(x)
    model.eval()
    with autograd.no_grad():
        results = [step(x).to_numpy().copy() for _ in range(3)]
        expected = model(x).to_numpy()
    for result in results:
        np.testing.assert_array_equal(result, expected)
    assert (step.captures, step.replays) == (1, 1)    # the eval step; training ran once


def test_inputs_are_copied_into_the_capture_so_later_batches_are_seen():
    def double(x):
        return x * 2.0

    step = autograd.capture(double)
    step(Tensor(data=[1.0, 2.0]))
    step(Tensor(data=[3.0, 2.0]))
    np.testing.assert_array_equal(step(Tensor(data=[5.0, 7.0])).to_numpy(), [10.0, 14.0])
    np.testing.assert_array_equal(step(Tensor(data=[1.5, 0.5])).to_numpy(), [3.0, 1.0])
    assert (step.captures, step.replays) == (1, 2)
