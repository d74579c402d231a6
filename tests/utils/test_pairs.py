"""Tests of the pair differences."""

import numpy as np
import pytest

from dpcov.utils._pairs import pair_differences


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pair_differences(dtype):
    X = np.arange(14.0).reshape(7, 2).astype(dtype) ** 2
    D = pair_differences(X)
    np.testing.assert_array_equal(D, X[1:6:2] - X[0:6:2])  # the last row unpaired
    assert D.dtype == dtype


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_overflowing_pairs_are_halved_without_warning(dtype):
    # Finite rows whose difference overflows (warnings are errors in this
    # suite): the pair gives half its difference, on the same line; the
    # other pairs are untouched.
    big = float(np.finfo(dtype).max) * 0.75
    X = np.array(
        [[big, -big, 1.0], [-big, big, 0.0], [1.0, 2.0, 3.0], [2.0, 2.0, 5.0]],
        dtype=dtype,
    )
    D = pair_differences(X)
    assert np.all(np.isfinite(D))
    np.testing.assert_array_equal(D[0], np.array([-big, big, -0.5], dtype=dtype))
    np.testing.assert_array_equal(D[1], [1.0, 0.0, 2.0])
