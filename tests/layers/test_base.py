"""Tests for autograd/layers/base.py: discovery, names, buffers, state_dict, train/eval."""
import numpy as np
import pytest

import autograd
from autograd import Layer, Linear, Sequential, Tensor


class Block(Layer):
    """Two Linears and a buffer, in a known definition order."""

    def __init__(self, n=3):
        super().__init__()
        self.first = Linear(n, n)
        self.register_buffer("count", Tensor(data=np.zeros(2, np.float32), requires_grad=False))
        self.second = Linear(n, n, bias=False)

    def forward(self, x):
        return self.second(self.first(x))


class Net(Layer):
    def __init__(self):
        super().__init__()
        self.scale = Tensor(data=np.ones(3, np.float32), stores_grad=True)
        self.constant = Tensor(data=np.ones(3, np.float32), requires_grad=False)  # neither
        self.blocks = [Block(), Block()]
        self.head = Sequential(Linear(3, 4), autograd.ReLU(), Sequential(Linear(4, 2)))

    def forward(self, x):
        for block in self.blocks:
            x = block(x) * self.scale
        return self.head(x)


def test_parameters_are_found_in_definition_order_with_dotted_names():
    net = Net()
    names = [name for name, _ in net.named_parameters()]
    assert names == ["scale", "blocks.0.first.W", "blocks.0.first.b", "blocks.0.second.W",
                     "blocks.1.first.W", "blocks.1.first.b", "blocks.1.second.W",
                     "head.0.W", "head.0.b", "head.2.0.W", "head.2.0.b"]
    assert net.parameters()[1] is net.blocks[0].first.W
    assert [name for name, _ in net.named_buffers()] == ["blocks.0.count", "blocks.1.count"]
    assert list(net.state_dict()) == [
        "scale", "blocks.0.first.W", "blocks.0.first.b", "blocks.0.count", "blocks.0.second.W",
        "blocks.1.first.W", "blocks.1.first.b", "blocks.1.count", "blocks.1.second.W",
        "head.0.W", "head.0.b", "head.2.0.W", "head.2.0.b"]


def test_a_shared_parameter_is_listed_once():
    layer = Linear(3, 3)
    model = Sequential(layer, layer)
    assert [n for n, _ in model.named_parameters()] == ["0.W", "0.b"]


def test_parameters_are_the_tensors_that_receive_gradients():
    net = Net()
    x = Tensor(data=np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32),
               requires_grad=False)
    grads = autograd.gradients(autograd.sum(net(x)))
    assert set(grads) == set(net.parameters())


def _fill(model, seed):
    rng = np.random.default_rng(seed)
    for t in model.parameters() + model.buffers():
        t.data[...] = rng.standard_normal(t.shape)


def test_state_dict_round_trip_gives_identical_outputs():
    source, target = Net(), Net()
    _fill(source, 1)
    _fill(target, 2)
    x = Tensor(data=np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32))
    state = source.state_dict()
    assert all(isinstance(v, np.ndarray) for v in state.values())
    result = target.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(target(x).to_numpy(), source(x).to_numpy())
    for name, value in target.state_dict().items():
        np.testing.assert_array_equal(value, state[name])


def test_state_dict_is_a_copy():
    net = Net()
    state = net.state_dict()
    state["scale"][...] = 42.0
    assert not np.any(net.scale.to_numpy() == 42.0)


def test_load_keeps_the_parameter_objects_and_accepts_tensors():
    net = Net()
    W = net.blocks[0].first.W
    state = {name: Tensor(data=value + 1) for name, value in net.state_dict().items()}
    net.load_state_dict(state)
    assert net.blocks[0].first.W is W
    np.testing.assert_array_equal(W.to_numpy(), state["blocks.0.first.W"].to_numpy())


@pytest.mark.parametrize("change, message", [
    (lambda s: s.pop("head.0.b"), "missing keys ['head.0.b']"),
    (lambda s: s.update(extra=np.zeros(1, np.float32)), "unexpected keys ['extra']"),
    (lambda s: s.update({"head.0.W": np.zeros((4, 3), np.float32)}),
     "head.0.W: expected shape (3, 4), got (4, 3)"),
    (lambda s: s.update({"scale": np.zeros(3, np.float64)}),
     "scale: expected dtype float32, got float64"),
])
def test_load_state_dict_errors_name_the_problem_and_change_nothing(change, message):
    net = Net()
    before = net.state_dict()
    state = {name: value + 1 for name, value in before.items()}
    change(state)
    with pytest.raises(ValueError) as info:
        net.load_state_dict(state)
    assert message in str(info.value)
    for name, value in net.state_dict().items():     # not one tensor was assigned
        np.testing.assert_array_equal(value, before[name])


def test_load_state_dict_reports_every_problem_at_once():
    net = Net()
    state = net.state_dict()
    state.pop("scale")
    state["head.0.W"] = np.zeros((4, 3), np.float32)
    with pytest.raises(ValueError, match=r"missing keys \['scale'\].*head\.0\.W: expected"):
        net.load_state_dict(state)


def test_non_strict_load_skips_missing_and_unexpected_but_still_checks_shapes():
    net = Net()
    state = {"head.0.b": np.full(4, 7.0, np.float32), "nothing": np.zeros(2)}
    result = net.load_state_dict(state, strict=False)
    assert result.unexpected_keys == ["nothing"] and "scale" in result.missing_keys
    np.testing.assert_array_equal(net.head[0].b.to_numpy(), np.full(4, 7.0))
    with pytest.raises(ValueError, match="expected shape"):
        net.load_state_dict({"head.0.b": np.zeros(5, np.float32)}, strict=False)


def test_singa_get_and_set_params_and_states():
    net = Net()
    params, states = net.get_params(), net.get_states()
    assert params["head.0.W"] is net.head[0].W and "blocks.0.count" not in params
    assert states["blocks.0.count"] is net.blocks[0].count
    net.set_states({"blocks.0.count": np.array([1.0, 2.0], np.float32)})
    np.testing.assert_array_equal(net.blocks[0].count.to_numpy(), [1.0, 2.0])
    net.set_params({"scale": np.full(3, 2.0, np.float32)})
    np.testing.assert_array_equal(net.scale.to_numpy(), [2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="unknown parameters"):
        net.set_params({"blocks.0.count": np.zeros(2, np.float32)})


def test_train_and_eval_reach_every_sub_layer():
    net = Net()
    layers = [layer for _, layer in net.named_layers()]
    assert len(layers) == 11 and all(layer.training for layer in layers)
    assert net.eval() is net
    assert not net.training and not any(layer.training for layer in layers)
    net.train()
    assert net.training and all(layer.training for layer in layers)
    net.head.eval()
    assert net.training and not net.head[2][0].training and net.blocks[0].training


def test_is_training_needs_the_layer_flag_and_the_global_flag():
    layer = Linear(2, 2)
    assert layer.is_training
    try:
        autograd.training = False
        assert not layer.is_training
    finally:
        autograd.training = True
    assert not layer.eval().is_training


def test_to_device_moves_parameters_and_buffers_in_place():
    net = Net()
    W = net.head[0].W
    assert net.to_device(autograd.device.cpu()) is net
    assert net.head[0].W is W and all(t.device.kind == "cpu" for t in net.get_states().values())


def test_initialize_runs_once_before_the_first_forward():
    calls = []

    class Lazy(Layer):
        def initialize(self, x):
            calls.append(x.shape)
            self.W = Tensor(data=np.ones(x.shape[1:], np.float32), stores_grad=True)

        def forward(self, x):
            return x * self.W

    layer = Lazy()
    assert layer.parameters() == []
    layer(Tensor(data=np.ones((2, 3), np.float32)))
    layer(Tensor(data=np.ones((4, 3), np.float32)))
    assert calls == [(2, 3)] and [n for n, _ in layer.named_parameters()] == ["W"]


def test_register_buffer_needs_a_tensor_and_repr_nests():
    with pytest.raises(TypeError, match="must be a Tensor"):
        Layer().register_buffer("stats", np.zeros(3))
    text = repr(Sequential(Linear(3, 4), Sequential(autograd.ReLU())))
    assert text == ("Sequential(\n  (0): Linear(3->4)\n  (1): Sequential(\n    (0): ReLU()\n"
                    "  )\n)")


def test_a_layer_without_output_shape_says_so():
    with pytest.raises(NotImplementedError, match="Block does not implement output_shape"):
        Block().output_shape((2, 3))


def test_discovery_works_without_super_init_and_inside_lists_and_dicts():
    class Bare(Layer):
        def __init__(self):                      # no super().__init__()
            self.weights = [Tensor(data=np.ones(2, np.float32), stores_grad=True)]
            self.heads = {"left": Linear(2, 1), "right": Linear(2, 1, bias=False)}
            self.register_buffer("steps", Tensor(data=np.zeros(1, np.float32)))

    bare = Bare()
    assert [n for n, _ in bare.named_parameters()] == [
        "weights.0", "heads.left.W", "heads.left.b", "heads.right.W"]
    assert [n for n, _ in bare.named_buffers()] == ["steps"]
    assert bare.training and not bare.eval().heads["left"].training


def test_register_layers_makes_unheld_layers_sub_layers_with_singa_names():
    from collections import OrderedDict
    import autograd as ag

    class Stack(ag.Layer):
        def __init__(self, named):
            super().__init__()
            blocks = [ag.Linear(3, 3), ag.ReLU(), ag.Linear(3, 2)]
            self.run = lambda x: blocks[2](blocks[1](blocks[0](x)))     # a closure holds them
            if named:
                self.register_layers(OrderedDict(first=blocks[0], last=blocks[2]))
            else:
                self.register_layers(*blocks)

        def forward(self, x):
            return self.run(x)

    assert list(Stack(False).get_params()) == ["Linear_0.W", "Linear_0.b", "Linear_2.W",
                                                "Linear_2.b"]
    stack = Stack(True)
    assert list(stack.get_params()) == ["first.W", "first.b", "last.W", "last.b"]
    stack.eval()
    assert not stack.first.training            # train/eval reaches registered layers
    x = ag.Tensor(data=np.ones((2, 3), np.float32))
    assert {p for p, _ in ag.backward(ag.sum(stack(x)))} == set(stack.parameters())


def test_register_layers_rejects_non_layers_and_a_taken_name():
    import autograd as ag
    layer = ag.Layer()
    with pytest.raises(TypeError, match=r"Layer.register_layers: 'function_0' must be a Layer, "
                                        r"got function"):
        layer.register_layers(lambda x: x)
    layer.register_layers(ag.ReLU())
    with pytest.raises(ValueError, match=r"register_layers: the attribute 'ReLU_0' already"):
        layer.register_layers(ag.ReLU())


def test_layer_messages_name_the_layer_and_the_method_exactly():
    import re

    class Bare(autograd.Layer):
        pass

    with pytest.raises(NotImplementedError, match=r"^Bare does not define forward$"):
        Bare()(Tensor(data=[1.0]))
    with pytest.raises(ValueError, match=r"^Linear.set_params: unknown parameters \['Q'\]$"):
        Linear(2, 3).set_params({"Q": np.zeros(2)})
    message = "Linear.load_state_dict: missing keys ['W', 'b']; unexpected keys ['Q', 'R']"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        Linear(2, 3).load_state_dict({"Q": np.zeros(2), "R": np.zeros(1)})


def test_a_layer_that_skipped_layer_init_lists_parameters_not_plain_tensors():
    class NoInit(Layer):
        def __init__(self):                      # no super().__init__(): no buffer list yet
            self.w = Tensor(data=[1.0], stores_grad=True)
            self.t = Tensor(data=[2.0], requires_grad=False)

    layer = NoInit()
    assert [name for name, _ in layer.named_parameters()] == ["w"]
    assert list(layer.state_dict()) == ["w"]
