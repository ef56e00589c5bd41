"""Tests written from the surviving mutants of autograd/layers/base.py (issue 22): the Layer
messages word for word, loading a state given as nested lists, and the state helpers."""
import re

import numpy as np
import pytest

import autograd
from autograd import Layer, Linear, Tensor


def _exact(message):
    return f"^{re.escape(message)}$"


class Pair(Layer):
    """One float64 parameter and one float64 buffer."""

    def __init__(self):
        super().__init__()
        self.w = Tensor(data=np.zeros(2), stores_grad=True)
        self.register_buffer("steps", Tensor(data=np.zeros(3), requires_grad=False))


def test_register_layers_names_a_taken_attribute_exactly():
    layer = Layer()
    layer.register_layers(autograd.ReLU())
    with pytest.raises(ValueError, match=_exact(
            "Layer.register_layers: the attribute 'ReLU_0' already holds another value; "
            "register each name once")):
        layer.register_layers(autograd.ReLU())


def test_set_states_names_the_method_and_the_unknown_states_exactly():
    """set_states passing its method name or "states" mutated."""
    with pytest.raises(ValueError, match=_exact("Linear.set_states: unknown states ['Q']")):
        Linear(2, 3).set_states({"Q": np.zeros(2)})
    with pytest.raises(ValueError, match=_exact("Pair.set_states: unknown states ['w2', 'x']")):
        Pair().set_states({"w2": np.zeros(2), "steps": np.zeros(3), "x": 1.0})


def test_output_shape_says_that_summary_traces_instead():
    with pytest.raises(NotImplementedError, match=_exact(
            "Pair does not implement output_shape; summary() traces a forward pass for such "
            "layers instead")):
        Pair().output_shape((2,))


def test_load_state_dict_takes_nested_lists_and_numbers():
    """_host_array's last branch, `np.asarray(value)`, for values that are no arrays (and, with
    `shape or dtype`, a memoryview, which has a shape but no dtype)."""
    layer = Pair()
    layer.load_state_dict({"w": [1.5, -2.0], "steps": (1.0, 2.0, 3.0)})
    np.testing.assert_array_equal(layer.w.to_numpy(), [1.5, -2.0])
    np.testing.assert_array_equal(layer.steps.to_numpy(), [1.0, 2.0, 3.0])
    layer.load_state_dict({"w": memoryview(np.array([0.5, 0.25])), "steps": np.zeros(3)})
    np.testing.assert_array_equal(layer.w.to_numpy(), [0.5, 0.25])   # a shape but no dtype
    scalar = Layer()
    scalar.v = Tensor(data=np.float64(0.0), stores_grad=True)
    scalar.load_state_dict({"v": 4.0})
    assert scalar.v.to_numpy() == 4.0


class Child(Layer):
    def __init__(self, owner):
        super().__init__()
        self.owner = owner                      # a back-reference to the layer that holds it
        self.fc = Linear(2, 2)


class Owner(Layer):
    def __init__(self):
        super().__init__()
        self.child = Child(self)
        self.scale = Tensor(data=np.ones(2, np.float32), stores_grad=True)


def test_named_layers_takes_a_prefix():
    """named_layers(prefix) passing None instead of the prefix to the walk."""
    owner = Owner()
    assert [n for n, _ in owner.named_layers("net")] == ["net.child", "net.child.fc"]
    assert [n for n, _ in owner.named_layers()] == ["child", "child.fc"]


def test_a_back_reference_to_the_owner_is_not_a_sub_layer():
    """The walk starts with the layer itself seen (`{id(self)}`): a child that refers back to
    its owner must not list the owner, nor name the owner's own parameter "child.owner.scale"
    (the same for _named_tensors' walk)."""
    owner = Owner()
    assert [layer for _, layer in owner.named_layers()] == [owner.child, owner.child.fc]
    assert [n for n, _ in owner.named_parameters()] == ["child.fc.W", "child.fc.b", "scale"]
    assert list(owner.state_dict()) == ["child.fc.W", "child.fc.b", "scale"]


def test_register_buffer_names_the_layer_and_the_wrong_type_exactly():
    with pytest.raises(TypeError, match=_exact(
            "Pair.register_buffer: 'stats' must be a Tensor, got ndarray")):
        Pair().register_buffer("stats", np.zeros(3))


def test_the_walk_goes_on_after_a_shared_layer():
    """A member met again is skipped (`continue`), not the end of the walk (`break`)."""
    shared = Linear(2, 2)
    last = Linear(2, 1)
    model = autograd.Sequential(shared, shared, last)
    assert [n for n, _ in model.named_parameters()] == ["0.W", "0.b", "2.W", "2.b"]
    assert [layer for _, layer in model.named_layers()] == [shared, last]
    assert model.parameters()[2] is last.W


def test_initialize_receives_the_keyword_arguments_of_the_first_call():
    """__call__ passing only *args to initialize would drop `scale=`."""
    seen = []

    class Lazy(Layer):
        def initialize(self, x, scale=1.0):
            seen.append(scale)
            self.w = Tensor(data=np.full(x.shape[1:], scale), stores_grad=True)

        def forward(self, x, scale=1.0):
            return x * self.w

    layer = Lazy()
    y = layer(Tensor(data=np.ones((2, 3))), scale=3.0)
    layer(Tensor(data=np.ones((1, 3))), scale=5.0)
    assert seen == [3.0]
    np.testing.assert_array_equal(y.to_numpy(), np.full((2, 3), 3.0))
