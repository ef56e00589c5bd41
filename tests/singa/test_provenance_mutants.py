"""What the hook notes for sonnx.to_onnx (autograd/singa/provenance.py): survivors of the full
mutation run killed here: the records of one call (sources, per-output shapes and indices),
calls under a graph-mode capture left out, the sweep's threshold, made_by on a reused id, and
calls_between's order, its stops and its error message word for word."""
import gc

import numpy as np
import pytest

import autograd
import autograd.singa
from autograd import Tensor
from autograd.recording import config
from autograd.singa import provenance
from autograd.singa.provenance import Made, Value, calls_between, made_by


@pytest.fixture
def noted():
    autograd.singa.install()
    yield
    autograd.singa.uninstall()


def test_value_keeps_shape_as_a_tuple_dtype_and_ndim():
    v = Value([2, 3, 4], np.float32)
    assert v.shape == (2, 3, 4) and v.dtype is np.float32 and v.ndim == 3
    assert Value((), np.int64).ndim == 0
    record = Made("op", ("s",), ((1,), "d"))
    assert (record.op, record.sources, record.outputs) == ("op", ("s",), ((1,), "d"))


def test_one_call_is_noted_with_its_sources_and_each_output(noted):
    x = Tensor(data=np.arange(10, dtype=np.float64).reshape(5, 2))
    first = autograd.relu(x)
    pieces = autograd.split(first, 0, [2, 3])
    assert len(pieces) == 2
    for index, piece in enumerate(pieces):
        record, at = made_by(piece)
        assert at == index and type(record.op).__name__ == "Split"
        assert record.outputs == (((2, 2), np.dtype(np.float64)), ((3, 2), np.dtype(np.float64)))
        assert record.sources == (made_by(first),)          # made by ReLU, index 0
    relu_record, at = made_by(first)
    assert at == 0 and relu_record.sources[0] is x            # a Tensor no op made: itself
    assert relu_record.outputs == (((5, 2), np.dtype(np.float64)),)
    assert made_by(x) is None
    assert made_by(pieces[0])[0] is made_by(pieces[1])[0]     # one record for the call


def test_calls_under_a_graph_capture_are_not_noted(noted, monkeypatch):
    x = Tensor(data=np.ones(3))
    out = Tensor(data=np.zeros(3))
    noting = provenance._noting_call(lambda op, *inputs: out)
    assert noting.__wrapped__ is not None
    monkeypatch.setattr(config, "recorder", object())
    assert noting("op", x) is out and made_by(out) is None
    monkeypatch.setattr(config, "recorder", None)
    assert noting("op", x) is out and made_by(out)[0].op == "op"


def test_made_by_refuses_a_reused_id(noted):
    x = Tensor(data=np.ones(2))
    y = autograd.relu(x)
    key = id(y)
    stranger = Tensor(data=np.ones(2))
    provenance._made[id(stranger)] = provenance._made[key]     # an id reused by another Tensor
    assert made_by(stranger) is None and made_by(y) is not None


def test_the_sweep_keeps_live_entries_and_doubles_past_them(noted):
    x = Tensor(data=np.ones(2))
    keep = [autograd.relu(x) for _ in range(700)]
    dropped = [autograd.relu(x) for _ in range(50)]
    del dropped
    gc.collect()
    provenance._sweep()
    live = len(provenance._made)
    assert 700 <= live < 750
    assert provenance._sweep_at[0] == 2 * live                   # more than 1024: twice the live
    assert all(made_by(t) is not None for t in keep)
    del keep
    gc.collect()
    provenance._sweep()
    assert provenance._sweep_at[0] == 1024 and len(provenance._made) <= 2


def test_the_table_is_swept_only_past_its_threshold(noted):
    """Only live entries (a freed Tensor's id may be reused at once, which would hide an entry):
    a sweep shows as the threshold reset to 1024."""
    x = Tensor(data=np.ones(2))
    alive = [autograd.relu(x) for _ in range(3)]
    count = len(provenance._made)
    assert count + 1 < 1024
    provenance._sweep_at[0] = count + 1
    try:
        alive.append(autograd.relu(x))                    # count + 1 entries: not past it
        assert len(provenance._made) == count + 1 and provenance._sweep_at[0] == count + 1
        alive.append(autograd.relu(x))                    # count + 2 > count + 1: swept
        assert provenance._sweep_at[0] == 1024 and len(provenance._made) == count + 2
    finally:
        provenance._sweep_at[0] = 1024


def test_install_twice_wraps_once_and_uninstall_forgets(noted):
    from autograd.operations.base import Operation
    wrapped = Operation.__call__
    provenance.install_provenance()
    assert Operation.__call__ is wrapped and len(provenance._restore) == 1
    autograd.relu(Tensor(data=np.ones(2)))
    provenance.uninstall_provenance()
    assert not provenance._made and not provenance._restore
    assert Operation.__call__ is wrapped.__wrapped__
    provenance.uninstall_provenance()                      # harmless twice
    provenance.install_provenance()


def test_calls_between_orders_each_call_after_its_sources(noted):
    x = Tensor(data=np.array([[1.0, -2.0]]))
    w = Tensor(data=np.array([[0.5], [0.25]]))
    a = autograd.relu(x)
    b = autograd.tanh(x)
    c = autograd.matmul(a + b, w)
    calls, values = calls_between([x], [c])
    kinds = [type(op).__name__ for op, _, _ in calls]
    assert kinds.index("ReLU") < kinds.index("Add") and kinds.index("Tanh") < kinds.index("Add")
    assert kinds[-1] == "MatMul" and len(kinds) == 4
    add_inputs = calls[kinds.index("Add")][1]
    assert add_inputs[0] is calls[kinds.index("ReLU")][2][0]     # one Value per output
    assert add_inputs[1] is calls[kinds.index("Tanh")][2][0]
    assert calls[-1][1][1] is w and calls[0][1][0] is x
    assert isinstance(values[0], Value) and values[0].shape == (1, 1)
    assert values[0] is calls[-1][2][0]


def test_calls_between_stops_at_an_input_some_op_made(noted):
    x = Tensor(data=np.array([1.0, -2.0]))
    hidden = autograd.relu(x)
    y = autograd.tanh(hidden)
    calls, values = calls_between([hidden], [y])
    assert [type(op).__name__ for op, _, _ in calls] == ["Tanh"]
    assert calls[0][1][0] is hidden
    calls, values = calls_between([hidden], [hidden])         # an output that is an input
    assert calls == [] and values == [hidden]
    z = autograd.relu(hidden) * autograd.relu(hidden)
    calls, _ = calls_between([x], [z, y])                     # shared sources visited once
    kinds = [type(op).__name__ for op, _, _ in calls]
    assert sorted(kinds) == ["Mul", "ReLU", "ReLU", "ReLU", "Tanh"]


def test_an_output_no_noted_op_made_is_named_word_for_word(noted):
    x = Tensor(data=np.ones(2))
    y = autograd.relu(x)
    with pytest.raises(ValueError) as info:
        calls_between([x], [y, Tensor(data=np.ones(2))])
    assert str(info.value) == (
        "sonnx.to_onnx: output 1 was not made by an operation run eagerly while the SINGA hook "
        "was installed: run the forward under python -m autograd.singa, outside a graph-mode "
        "training step (model.eval(); y = model(x) runs eagerly, as in SINGA), then export")


def test_a_deep_chain_is_walked_without_recursion(noted):
    y = x = Tensor(data=np.ones(2))
    for _ in range(3000):
        y = autograd.relu(y)
    calls, _ = calls_between([x], [y])
    assert len(calls) == 3000 and calls[0][1][0] is x


def test_an_output_that_is_a_plain_input_stands_for_itself(noted):
    x = Tensor(data=np.ones(2))
    calls, values = calls_between([x], [x])
    assert calls == [] and values[0] is x
