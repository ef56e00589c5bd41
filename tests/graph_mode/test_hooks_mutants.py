"""graph_mode/hooks.py where the mutation run of graph_mode/ found the suite blind
(docs/testing.md): the copy a replay makes for ``Tensor(data=a)`` of a step's array (its dtype,
and that it is a copy), and the in-place-written Tensors the recorder pins so that no later
object takes their id. References: the eager step's values and dtypes, by hand."""
import numpy as np

import autograd
from autograd import Tensor


def test_a_replayed_tensor_copy_keeps_its_dtype_and_is_a_copy():
    """Tensor(data=x, dtype=float64) of a float32 input: float64 in every replay; and each
    result keeps its own values after later replays refill the input buffer."""
    captured = autograd.capture(lambda x: Tensor(data=x, dtype=np.float64))
    results = [captured(np.full(2, value, np.float32)) for value in (1.0, 2.0, 3.0, 4.0)]
    assert captured.replays == 2
    assert [r.dtype for r in results] == [np.float64] * 4
    np.testing.assert_array_equal(np.stack([r.to_numpy() for r in results]),
                                  [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]])


def test_a_replayed_copy_of_the_same_dtype_does_not_share_the_input_buffer():
    captured = autograd.capture(lambda x: Tensor(data=x))
    results = [captured(np.full(3, value, np.float32)) for value in (1.0, 2.0, 3.0, 4.0)]
    assert captured.replays == 2 and results[2].data is not results[3].data
    np.testing.assert_array_equal(np.stack([r.to_numpy() for r in results]),
                                  np.repeat([[1.0], [2.0], [3.0], [4.0]], 3, axis=1))


def test_a_tensor_freed_after_an_in_place_write_does_not_taint_a_later_one():
    """A Tensor written in place (gaussian) is pinned by the recorder: were it freed, the next
    Tensor made could take its id (CPython reuses the freed slot at once when nothing else is
    allocated in between) and be refused as written in place, though it holds fixed data."""
    w = Tensor(data=np.array([[1.0], [2.0]], np.float32), stores_grad=True)

    def step(x):
        total = autograd.sum(autograd.matmul(x, w))
        scratch = Tensor(data=np.zeros(2, np.float32))
        scratch.gaussian(0.0, 1.0)              # written in place, then dropped
        data = np.ones(1, np.float32)
        del scratch
        fixed = Tensor(data=data)               # the first object allocated after the free
        return total + autograd.sum(fixed)

    captured = autograd.capture(step)
    x = Tensor(data=np.ones((3, 2), np.float32))
    assert [float(captured(x).to_numpy()) for _ in range(3)] == [10.0] * 3
    assert captured.replays == 1


def test_a_replayed_copy_of_a_computed_tensor_is_recomputed():
    """Tensor(data=t) of a Tensor t the step computed copies t's array: the copy is a line of
    the program, recomputed in every replay (not the first call's values kept)."""
    w = Tensor(data=np.array([2.0, 3.0], np.float32), stores_grad=True)
    captured = autograd.capture(lambda x: Tensor(data=x * w))
    results = [captured(Tensor(data=np.full(2, value, np.float32))).to_numpy()
               for value in (1.0, 2.0, 3.0, 4.0)]
    assert captured.replays == 2
    np.testing.assert_array_equal(results, [[2.0, 3.0], [4.0, 6.0], [6.0, 9.0], [8.0, 12.0]])


def test_tensor_arguments_given_by_position_reach_the_tensor():
    """Tensor(shape, data, device, dtype) by position inside a step: the dtype is kept."""
    captured = autograd.capture(lambda x: Tensor(None, x, None, np.float64))
    results = [captured(np.full(2, value, np.float32)) for value in (1.0, 2.0, 3.0)]
    assert [r.dtype for r in results] == [np.float64] * 3
    np.testing.assert_array_equal([r.to_numpy() for r in results], [[1.0] * 2, [2.0] * 2,
                                                                     [3.0] * 2])
