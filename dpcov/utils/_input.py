"""The one guard every public entry point passes its rows through.

dpcov counts every error message as something an adversary sees (see the
user guide's privacy model), and the validation messages of scikit-learn,
NumPy and pandas print data: ``Expected 2D array, got 1D array instead:
array=[...]`` lists a whole column, ``could not convert string to float:
'...'`` prints a cell. :func:`validate_rows` calls scikit-learn's validation
and, when it fails, raises an error of its own instead, built from public
facts only (:mod:`dpcov.utils._input_errors`): the shape, the dtype, which
columns (by position, or by the DataFrame's own column names, which the user
declared) are not numeric, whether NaN or infinity is present, and how many
rows are needed. It is raised outside the ``except`` block, so no chained
exception (``__context__`` or ``__cause__``) carries the original text either.

A NumPy (or array-like) input is validated by scikit-learn's
:func:`~sklearn.utils.validation.validate_data`, and so is a SciPy sparse
matrix where the entry point accepts one (``accept_sparse``; it stays sparse).
A ``dask.array.Array`` is not
loaded: its shape, dtype and the number of features are checked here, and its
entries (NaN, infinity) during the estimator's first pass over the data,
before anything is released or recorded. The covariance estimators and PCA
check in-memory entries the same way (``defer_finite``): in their first pass,
not in a read of their own.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np
from sklearn import config_context
from sklearn.utils.validation import check_array, validate_data

from ._array_api import array_api_input, float_dtype, is_dask_array
from ._input_errors import VALIDATION_ERRORS, holds_dates, input_error
from ._input_messages import NonFiniteInput
from ._private_count import fewest_units

FLOAT_DTYPES = (np.float64, np.float32)


def validate_rows(
    estimator,
    X,
    *,
    reset=True,
    ensure_min_samples=None,
    dtype=FLOAT_DTYPES,
    accept_dask=False,
    accept_sparse=False,
    n_columns=None,
    method="fit",
    allow_nan=False,
    defer_finite=False,
    accept_array_api=False,
):
    """Validate the rows an entry point reads, with messages free of data.

    Parameters
    ----------
    estimator : estimator instance
        Records (``reset=True``) or checks ``n_features_in_`` and the feature
        names, as scikit-learn's ``validate_data`` does.
    X : array-like or dask.array.Array of shape (n_samples, n_features)
        Input rows.
    reset : bool, default=True
        Whether this is a fit (record the number of features).
    ensure_min_samples : int or None, default=None
        Fewest rows accepted. None: one, but none for the fit
        (``reset=True``) of an estimator under add/remove neighbours, where
        an empty table is a neighbour like any other (see
        :func:`~dpcov.utils._private_count.fewest_units`).
    dtype : tuple of dtypes or None, default=(float64, float32)
        Accepted dtypes (others are converted to the first); None keeps any
        numeric dtype (bool and integers included).
    accept_dask : bool, default=False
        Whether a Dask array stays lazy (the estimator reduces it by Dask);
        otherwise it is loaded, as any array-like.
    accept_sparse : False, str or tuple of str, default=False
        The SciPy sparse formats that stay sparse, as scikit-learn's
        ``accept_sparse`` (a sparse input in another format is converted to
        the first, a copy of its nonzeros). False refuses sparse input with a
        TypeError that says to convert it.
    n_columns : int or None, default=None
        For inputs that are not rows of the training space (coordinates given
        to ``inverse_transform``): the number of columns required. The
        estimator's ``n_features_in_`` and feature names are then neither
        recorded nor checked.
    method : str, default="fit"
        The entry point, named in messages.
    allow_nan : bool, default=False
        Whether NaN (a missing cell) is accepted; infinity never is. Only the
        imputer accepts it: the other estimators refuse NaN with a message
        that names the imputer.
    defer_finite : bool, default=False
        Leave NaN and infinity to the caller's first pass over the rows,
        which checks each chunk as it reads it (``check_finite`` of
        :func:`~dpcov.utils._gram.row_statistics`, raising
        :class:`~dpcov.utils._input_messages.NonFiniteInput`) before
        anything is spent: a check here would be one more read of every
        entry (0.045 s of a 0.25 s fit at n = 1e6, d = 100).
    accept_array_api : bool, default=False
        Whether an array of another namespace (PyTorch, CuPy,
        array-api-strict) stays where it lives under scikit-learn's
        ``array_api_dispatch`` (see :mod:`dpcov.utils._array_api`); otherwise
        such an array is refused with a TypeError that says to convert it.

    Returns
    -------
    X : ndarray, sparse matrix or dask.array.Array
        The validated rows; a Dask array stays lazy when ``accept_dask``
        (integers are cast lazily to float64), a sparse matrix stays sparse
        when ``accept_sparse``.

    Raises
    ------
    ValueError or TypeError
        With a message that names what is wrong (shape, dtype, the non-numeric
        columns, NaN or infinity, too few rows, the number of features) and
        no value of ``X``.
    """
    if ensure_min_samples is None:
        relation = getattr(estimator, "neighbours", "replace") if reset else None
        ensure_min_samples = fewest_units(relation)
    if accept_dask and is_dask_array(X):
        return _validate_dask(
            estimator, X, reset=reset, ensure_min_samples=ensure_min_samples
        )
    namespace = array_api_input(X)
    if namespace is not None:
        name = f"{type(estimator).__name__}.{method}"
        if not accept_array_api:
            raise TypeError(
                f"{name} does not read arrays of the {namespace[0].__name__} "
                "namespace (scikit-learn's array_api_dispatch is on): convert X "
                "to a NumPy array first (for a torch tensor, X.cpu().numpy()). "
                "PCA, the covariance estimators and StandardScaler read such "
                "arrays where they live."
            )
        return _validate_array_api(
            estimator,
            X,
            *namespace,
            reset=reset,
            ensure_min_samples=ensure_min_samples,
            check_finite=not (defer_finite or allow_nan),
            method=method,
            n_columns=n_columns,
        )
    checked = None
    if not holds_dates(X):
        checked = _validated_by_sklearn(
            estimator,
            X,
            reset=reset,
            dtype="numeric" if dtype is None else list(dtype),
            accept_sparse=accept_sparse,
            ensure_min_samples=ensure_min_samples,
            finite="allow-nan" if allow_nan else not defer_finite,
            n_columns=n_columns,
        )
    if checked is None:
        # Raised here, outside the except block: the original exception, whose
        # text may quote the data, is not chained to ours.
        raise input_error(
            estimator,
            X,
            reset=reset,
            ensure_min_samples=ensure_min_samples,
            n_columns=n_columns,
            method=method,
            accept_sparse=accept_sparse,
            allow_nan=allow_nan,
        )
    if n_columns is not None and checked.shape[1] != n_columns:
        raise ValueError(
            f"X has {checked.shape[1]} columns, but {type(estimator).__name__}."
            f"{method} is expecting {n_columns} (its n_components_)."
        )
    return checked


def _validated_by_sklearn(
    estimator,
    X,
    *,
    reset,
    dtype,
    accept_sparse,
    ensure_min_samples,
    finite,
    n_columns,
):
    # scikit-learn's validation of X (validate_data, or check_array for
    # coordinates with n_columns), or None when it refuses X: the caller
    # raises its own error, built from public facts, outside this except
    # block.
    try:
        # scikit-learn's finiteness test sums X first: entries of +-1e308 make
        # that sum inf - inf, and NumPy would warn about it on such data only.
        # scikit-learn's assume_finite=True would skip the test: a private
        # estimator refuses NaN and infinity whatever that setting (a NaN
        # would otherwise reach a release, or fail on such data only).
        with (
            np.errstate(over="ignore", invalid="ignore"),
            config_context(assume_finite=False),
        ):
            if n_columns is None:
                return validate_data(
                    estimator,
                    X,
                    reset=reset,
                    dtype=dtype,
                    accept_sparse=accept_sparse,
                    ensure_min_samples=ensure_min_samples,
                    ensure_all_finite=finite,
                )
            return check_array(
                X,
                dtype=dtype,
                accept_sparse=accept_sparse,
                ensure_min_samples=ensure_min_samples,
                ensure_all_finite=finite,
            )
    except VALIDATION_ERRORS:
        return None


def quiet_float_errors():
    """Float arithmetic of a scoring method, with no data-dependent warning.

    Rows with entries near the largest float64 overflow in squares and
    products; NumPy would warn on such data only, which tells the adversary
    that the scored rows hold extreme values. Under this context an overflow
    gives ``inf`` and an undefined result (``inf - inf``) gives NaN, silently;
    each scoring method then states what such a row scores (``-inf``
    log-likelihood, ``inf`` distance).

    Returns
    -------
    context : numpy.errstate
        The context manager.
    """
    return np.errstate(over="ignore", invalid="ignore", divide="ignore")


def _validate_array_api(
    estimator,
    X,
    xp,
    device,
    *,
    reset,
    ensure_min_samples,
    check_finite,
    method,
    n_columns=None,
):
    # An array of another namespace: shape, dtype, rows and features checked
    # here, as for a Dask array; integers and booleans become the device's
    # widest float. Its entries are checked here only if the caller does not
    # check them in its first pass.
    name = type(estimator).__name__
    if len(X.shape) != 2:
        raise ValueError(
            f"Expected 2D array, got {len(X.shape)}D array instead (an array of "
            f"shape (n_samples, n_features) is needed by {name})."
        )
    if xp.isdtype(X.dtype, "real floating"):
        pass
    elif xp.isdtype(X.dtype, ("integral", "bool")):
        X = xp.astype(X, float_dtype(xp, device))
    else:
        # (The dtype is not printed: a string dtype's width is the longest
        # cell's length.)
        raise ValueError(
            "dpcov needs real numeric rows (floats, integers or booleans); X "
            "has another dtype."
        )
    n_samples, n_features = (int(size) for size in X.shape)
    if n_samples < ensure_min_samples:
        raise ValueError(
            f"Found array with {n_samples} sample(s) (shape={(n_samples, n_features)}) "
            f"while a minimum of {ensure_min_samples} is required by {name}."
        )
    if n_features < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={(n_samples, n_features)}) while "
            f"a minimum of 1 is required by {name}."
        )
    if n_columns is not None:
        if n_features != n_columns:
            raise ValueError(
                f"X has {n_features} columns, but {name}.{method} is expecting "
                f"{n_columns} (its n_components_)."
            )
    elif reset:
        estimator.n_features_in_ = n_features
        if hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
    elif n_features != estimator.n_features_in_:
        raise ValueError(
            f"X has {n_features} features, but {name} is expecting "
            f"{estimator.n_features_in_} features as input."
        )
    if check_finite and not bool(xp.all(xp.isfinite(X))):
        raise NonFiniteInput(f"{name}.{method}")
    return X


def _validate_dask(estimator, X, *, reset, ensure_min_samples):
    name = type(estimator).__name__
    if X.ndim != 2:
        raise ValueError(
            f"Expected 2D array, got {X.ndim}D array instead (a dask array of "
            f"shape (n_samples, n_features) is needed by {name})."
        )
    if any(math.isnan(size) for size in X.shape):
        raise ValueError(
            "The dask array has unknown chunk sizes; call X.compute_chunk_sizes() "
            "(the number of rows is public, the fit needs it) before fit."
        )
    if X.dtype.kind not in "biuf":
        raise ValueError(
            "dpcov needs numeric rows (floats, integers or booleans); the dask "
            "array has another dtype."
        )
    if X.dtype not in FLOAT_DTYPES:
        X = X.astype(np.float64)
    if X.shape[0] < ensure_min_samples:
        raise ValueError(
            f"Found array with {X.shape[0]} sample(s) (shape={X.shape}) while a "
            f"minimum of {ensure_min_samples} is required by {name}."
        )
    if X.shape[1] < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={X.shape}) while a minimum "
            f"of 1 is required by {name}."
        )
    try:
        validate_data(estimator, X, reset=reset, skip_check_array=True)
    except VALIDATION_ERRORS:
        failed = True
    else:
        failed = False
    if failed:
        raise ValueError(
            f"X has {X.shape[1]} features, but {name} is expecting "
            f"{estimator.n_features_in_} features as input."
        )
    return X
