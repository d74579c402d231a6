"""Validation of the rows a fit reads: NumPy arrays eagerly, Dask arrays lazily.

A NumPy (or array-like) input is validated by scikit-learn's
:func:`~sklearn.utils.validation.validate_data`. A ``dask.array.Array`` is not
loaded: its shape, dtype and the number of features are checked here, and its
entries (NaN, infinity) during the estimator's first pass over the data,
before anything is released or recorded.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np
from sklearn.utils.validation import validate_data

from ._gram import is_dask_array

FLOAT_DTYPES = (np.float64, np.float32)


def validate_rows(estimator, X, *, reset=True, ensure_min_samples=1):
    """Validate the input of ``fit`` (NumPy or Dask).

    Parameters
    ----------
    estimator : estimator instance
        Records (``reset=True``) or checks ``n_features_in_``.
    X : array-like or dask.array.Array of shape (n_samples, n_features)
        Input rows.
    reset : bool, default=True
        Whether this is a fit (record the number of features).
    ensure_min_samples : int, default=1
        Fewest rows accepted.

    Returns
    -------
    X : ndarray or dask.array.Array
        float64 or float32 rows; a Dask array stays lazy (integers are cast
        lazily to float64).
    """
    if not is_dask_array(X):
        return validate_data(
            estimator,
            X,
            reset=reset,
            dtype=list(FLOAT_DTYPES),
            ensure_min_samples=ensure_min_samples,
        )
    if X.ndim != 2:
        raise ValueError(
            f"Expected 2D array, got {X.ndim}D array instead (a dask array of "
            f"shape (n_samples, n_features) is needed by "
            f"{type(estimator).__name__})."
        )
    if any(math.isnan(size) for size in X.shape):
        raise ValueError(
            "The dask array has unknown chunk sizes; call X.compute_chunk_sizes() "
            "(the number of rows is public, the fit needs it) before fit."
        )
    if X.dtype.kind not in "biuf":
        raise ValueError(
            f"dpcov needs numeric rows; the dask array has dtype {X.dtype}."
        )
    if X.dtype not in FLOAT_DTYPES:
        X = X.astype(np.float64)
    if X.shape[0] < ensure_min_samples:
        raise ValueError(
            f"Found array with {X.shape[0]} sample(s) (shape={X.shape}) while a "
            f"minimum of {ensure_min_samples} is required."
        )
    if X.shape[1] < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={X.shape}) while a minimum "
            "of 1 is required."
        )
    validate_data(estimator, X, reset=reset, skip_check_array=True)
    return X
