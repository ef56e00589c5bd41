"""DataLoader: batching, shuffling per epoch from a seed, drop_last, len, devices, errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd.data import DataLoader


def _dataset(n):
    features = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    labels = np.arange(n, dtype=np.int64)
    return features, labels


@given(n=st.integers(0, 40), batch_size=st.integers(1, 12), drop_last=st.booleans())
def test_unshuffled_batches_are_consecutive_slices(n, batch_size, drop_last):
    features, labels = _dataset(n)
    loader = DataLoader(features, labels, batch_size=batch_size, drop_last=drop_last)
    batches = list(loader)
    starts = list(range(0, n, batch_size))
    if drop_last and n % batch_size:
        starts = starts[:-1]
    assert len(loader) == len(batches) == len(starts)
    for (x, y), start in zip(batches, starts):
        stop = min(start + batch_size, n)
        np.testing.assert_array_equal(x, features[start:stop])
        np.testing.assert_array_equal(y, labels[start:stop])
        assert x.dtype == np.float32 and y.dtype == np.int64


@given(n=st.integers(1, 40), batch_size=st.integers(1, 12), drop_last=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_shuffled_epoch_is_a_permutation_with_rows_kept_together(n, batch_size, drop_last, seed):
    features, labels = _dataset(n)
    loader = DataLoader(features, labels, batch_size=batch_size, shuffle=True, seed=seed,
                        drop_last=drop_last)
    batches = list(loader)
    assert len(batches) == len(loader)
    assert all(len(y) == batch_size for _, y in batches[:-1])
    seen = np.concatenate([y for _, y in batches]) if batches else np.array([], np.int64)
    for x, y in batches:                       # each feature row travels with its label
        np.testing.assert_array_equal(x, features[y])
    assert len(set(seen.tolist())) == len(seen)
    expected_count = (n // batch_size) * batch_size if drop_last else n
    assert len(seen) == expected_count
    if not drop_last:
        assert sorted(seen.tolist()) == list(range(n))


def _epoch_orders(loader, epochs):
    return [np.concatenate([y for _, y in loader]).tolist() for _ in range(epochs)]


def test_each_epoch_draws_a_new_permutation_and_the_seed_repeats_the_sequence():
    features, labels = _dataset(50)
    first_run = _epoch_orders(DataLoader(features, labels, batch_size=8, shuffle=True, seed=7), 3)
    second_run = _epoch_orders(DataLoader(features, labels, batch_size=8, shuffle=True, seed=7), 3)
    assert first_run == second_run
    assert first_run[0] != first_run[1] != first_run[2]
    # independent reference: one generator seeded once, one permutation per epoch
    generator = np.random.default_rng(7)
    assert first_run == [generator.permutation(50).tolist() for _ in range(3)]
    other_seed = _epoch_orders(DataLoader(features, labels, batch_size=8, shuffle=True, seed=8), 1)
    assert other_seed[0] != first_run[0]


def test_len_counts_batches():
    features, labels = _dataset(10)
    assert len(DataLoader(features, labels, batch_size=3)) == 4
    assert len(DataLoader(features, labels, batch_size=3, drop_last=True)) == 3
    assert len(DataLoader(features, labels, batch_size=5, drop_last=True)) == 2
    assert len(DataLoader(features, labels, batch_size=20)) == 1
    assert len(DataLoader(features, labels, batch_size=20, drop_last=True)) == 0


def test_single_array_still_yields_tuples_and_lists_are_accepted():
    batches = list(DataLoader([[1, 2], [3, 4], [5, 6]], batch_size=2))
    assert [len(b) for b in batches] == [1, 1]
    np.testing.assert_array_equal(batches[0][0], [[1, 2], [3, 4]])


def test_device_yields_tensors_that_need_no_gradient():
    features, labels = _dataset(7)
    loader = DataLoader(features, labels, batch_size=4, device=autograd.device.cpu())
    (x, y), (x2, y2) = list(loader)
    assert isinstance(x, autograd.Tensor) and isinstance(y, autograd.Tensor)
    assert x.device == autograd.device.cpu()
    assert not x.requires_grad and not y.requires_grad and not x.stores_grad
    assert x.dtype == np.float32 and y.dtype == np.int64
    np.testing.assert_array_equal(x.to_numpy(), features[:4])
    np.testing.assert_array_equal(y2.to_numpy(), labels[4:])
    x.data[...] = -1                             # a copy: the dataset is unchanged
    assert features.min() >= 0


def test_cpu_tensors_are_accepted_as_arrays():
    features, labels = _dataset(4)
    loader = DataLoader(autograd.Tensor(data=features), labels, batch_size=4)
    (x, y), = list(loader)
    np.testing.assert_array_equal(x, features)


def test_different_lengths_are_an_error_naming_them():
    with pytest.raises(ValueError, match=r"\(5, 4\)"):
        DataLoader(np.zeros((5, 2)), np.zeros(4), batch_size=2)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(batch_size=0), ValueError, "batch_size must be at least 1, got 0"),
    (dict(batch_size=2.0), TypeError, "batch_size must be an int, got float"),
    (dict(batch_size=2, device="gpu"), TypeError, "device must be an autograd Device"),
])
def test_bad_arguments_are_clear_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        DataLoader(np.zeros(4), **kwargs)


def test_no_arrays_or_a_scalar_is_an_error():
    with pytest.raises(ValueError, match="at least one array"):
        DataLoader(batch_size=2)
    with pytest.raises(ValueError, match=r"array 1 is a scalar"):
        DataLoader(np.zeros(3), np.float32(1.0), batch_size=2)
