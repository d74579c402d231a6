"""Tests of the errors for refused input: public facts only, no value of X.

Every entry point's bad inputs are in tests/test_bad_input.py; these call
:func:`~dpcov.utils._input_errors.input_error` directly.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pytest
from scipy import sparse

from dpcov.covariance import GaussianCovariance
from dpcov.utils._input_errors import input_error

SECRET = "SSN-123-45-6789"


def _error(X, **kwargs):
    params = {
        "reset": True,
        "ensure_min_samples": 1,
        "n_columns": None,
        "method": "fit",
        "accept_sparse": False,
        **kwargs,
    }
    return input_error(GaussianCovariance(data_norm=1.0), X, **params)


def test_a_column_that_is_not_numeric_is_named_by_position():
    X = [[1.0, SECRET, 2.0], [3.0, "4", 5.0]]
    error = _error(X)
    assert isinstance(error, ValueError)
    message = str(error)
    assert "GaussianCovariance.fit" in message and "column 1 (of 3)" in message
    assert SECRET not in message and "SSN" not in message


def test_non_finite_entries_are_named_not_shown():
    X = np.array([[1234.5678, np.nan], [np.inf, 2.0]])
    message = str(_error(X))
    assert message.startswith("Input X contains NaN and infinity: ")
    assert "1234" not in message
    assert "infinity" in str(_error(X, allow_nan=True))


def test_too_few_rows_and_a_wrong_number_of_features():
    assert "a minimum of 3 is required" in str(
        _error(np.ones((2, 2)), ensure_min_samples=3)
    )
    fitted = GaussianCovariance(data_norm=1.0)
    fitted.n_features_in_ = 3
    error = input_error(
        fitted,
        np.ones((4, 2)),
        reset=False,
        ensure_min_samples=1,
        n_columns=None,
        method="transform",
        accept_sparse=False,
    )
    assert str(error) == (
        "X has 2 features, but GaussianCovariance is expecting 3 features as input."
    )


def test_sparse_input():
    X = sparse.csr_matrix(np.array([[1234.5678, np.nan], [0.0, 2.0]]))
    refused = _error(X)
    assert isinstance(refused, TypeError) and "X.toarray()" in str(refused)
    error = _error(X, accept_sparse="csr")
    assert str(error).startswith("Input X contains NaN: ")
    assert "1234" not in str(error)


@pytest.mark.parametrize(
    "X, expected",
    [
        (np.ones(3), "Expected 2D array, got 1D array"),
        (np.ones((2, 2), dtype=complex), "Complex data not supported"),
    ],
)
def test_shape_and_dtype(X, expected):
    assert str(_error(X)).startswith(expected)
