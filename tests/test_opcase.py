"""The op-test harness itself (tests/opcase.py): its layouts store the values they are given,
reach the op under test unchanged (inputs and dy), and catch an op that assumes C order,
which C-order inputs alone do not."""
import numpy as np
import pytest
from hypothesis import Phase, given, settings, strategies as st

from autograd import Operation
from tests import opcase
from tests.opcase import OpCase, floats, check_case, stored_as, layouts_for


def layout_of(a):
    """Which of the harness's layouts ``a`` (all sides >= 2) is stored in, read from its strides
    with NumPy alone."""
    if a.flags.c_contiguous:
        return "C"
    if a.ndim == 4 and a.transpose(1, 2, 3, 0).flags.c_contiguous:
        return "batch_last"
    if a.flags.f_contiguous:
        return "reversed_axes"
    if a.strides[0] < 0 and not a.flags.contiguous:
        return "strided"
    return "unknown"


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 4), (2, 3, 4, 5)], ids=str)
def test_each_layout_keeps_the_values_in_its_own_storage(shape):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    for layout in layouts_for(len(shape)):
        stored = stored_as(a, layout)
        np.testing.assert_array_equal(stored, a)
        assert layout_of(stored) == layout
        assert not np.shares_memory(stored, a) or layout == "C"
    assert stored_as(np.arange(3), "strided").dtype == np.arange(3).dtype


def test_layouts_for_offers_batch_last_only_to_images():
    assert layouts_for(0) == ["C"]
    assert layouts_for(1) == ["C", "strided"]
    assert "batch_last" in layouts_for(4) and "batch_last" not in layouts_for(3)


class _Probe(Operation):
    """y = 2 x, dx = 2 dy, recording the layouts it is handed."""
    seen_x, seen_dy = set(), set()

    def forward(self, x):
        _Probe.seen_x.add(layout_of(x))
        return 2 * x

    def backward(self, dy):
        _Probe.seen_dy.add(layout_of(dy))
        return 2 * dy


def test_the_op_under_test_receives_every_layout_of_inputs_and_dy():
    case = OpCase(lambda x: _Probe()(x), lambda x: 2 * x, [floats()], shape=(2, 3, 2, 2),
                  name="probe")
    _Probe.seen_x.clear(), _Probe.seen_dy.clear()

    @settings(max_examples=30, database=None, derandomize=True)   # deterministic: never flaky
    @given(data=st.data())
    def run(data):
        check_case(case, data)

    run()
    assert _Probe.seen_x == set(layouts_for(4))
    assert _Probe.seen_dy == set(layouts_for(4))


class _ForwardWritesThroughReshape(Operation):
    """A planted bug: y = 2 x written through ``y.reshape(-1)``, which is a copy (and the write
    is lost) unless y, allocated in x's layout, is C-contiguous."""

    def forward(self, x):
        y = np.zeros_like(x)
        y.reshape(-1)[:] = 2 * x.reshape(-1)
        return y

    def backward(self, dy):
        return 2 * dy


class _BackwardWritesThroughReshape(Operation):
    """A planted bug in backward: dx = 2 dy written through a reshape of an array in dy's
    layout."""

    def forward(self, x):
        return 2 * x

    def backward(self, dy):
        dx = np.zeros_like(dy)
        dx.reshape(-1)[:] = 2 * dy.reshape(-1)
        return dx


@pytest.mark.parametrize("buggy", [_ForwardWritesThroughReshape, _BackwardWritesThroughReshape],
                         ids=lambda cls: cls.__name__)
def test_an_op_that_assumes_c_order_fails_only_with_the_other_layouts(buggy, monkeypatch):
    case = OpCase(lambda x: buggy()(x), lambda x: 2 * x, [floats()], min_dims=2, max_dims=4,
                  min_side=2, max_side=3, name=buggy.__name__)

    @settings(max_examples=20, database=None, derandomize=True, phases=[Phase.generate])
    @given(data=st.data())
    def run(data):
        check_case(case, data)

    with pytest.raises(AssertionError):
        run()
    monkeypatch.setattr(opcase, "layouts_for", lambda ndim: ["C"])
    run()            # C order alone: the bug goes unseen
