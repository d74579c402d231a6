"""The one guard every public entry point passes its rows through.

dpcov counts every error message as something an adversary sees (see the
user guide's privacy model), and the validation messages of scikit-learn,
NumPy and pandas print data: ``Expected 2D array, got 1D array instead:
array=[...]`` lists a whole column, ``could not convert string to float:
'...'`` prints a cell. :func:`validate_rows` calls scikit-learn's validation
and, when it fails, raises an error of its own instead, built from public
facts only: the shape, the dtype, which columns (by position, or by the
DataFrame's own column names, which the user declared) are not numeric,
whether NaN or infinity is present, and how many rows are needed. It is
raised outside the ``except`` block, so no chained exception (``__context__``
or ``__cause__``) carries the original text either.

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
from scipy import sparse
from sklearn import config_context
from sklearn.utils.validation import check_array, validate_data

from ._array_api import array_api_input, float_dtype, is_dask_array
from ._input_messages import NON_FINITE_HINT, NonFiniteInput

FLOAT_DTYPES = (np.float64, np.float32)

# The failures of scikit-learn's, NumPy's and pandas' validation (pandas'
# errors derive from these). Anything else is not an input error and
# propagates.
_VALIDATION_ERRORS = (ValueError, TypeError, OverflowError)

_RESHAPE_HINT = (
    "Reshape your data either using array.reshape(-1, 1) if your data has a "
    "single feature or array.reshape(1, -1) if it contains a single sample."
)


def validate_rows(
    estimator,
    X,
    *,
    reset=True,
    ensure_min_samples=1,
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
    ensure_min_samples : int, default=1
        Fewest rows accepted.
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
    dtype = "numeric" if dtype is None else list(dtype)
    finite = "allow-nan" if allow_nan else not defer_finite
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
            checked = check_array(
                X,
                dtype=dtype,
                accept_sparse=accept_sparse,
                ensure_min_samples=ensure_min_samples,
                ensure_all_finite=finite,
            )
    except _VALIDATION_ERRORS:
        failed = True
    else:
        failed = False
    if failed:
        # Raised here, outside the except block: the original exception, whose
        # text may quote the data, is not chained to ours.
        raise _input_error(
            estimator,
            X,
            reset=reset,
            ensure_min_samples=ensure_min_samples,
            n_columns=n_columns,
            method=method,
            accept_sparse=accept_sparse,
            allow_nan=allow_nan,
        )
    if checked.shape[1] != n_columns:
        raise ValueError(
            f"X has {checked.shape[1]} columns, but {type(estimator).__name__}."
            f"{method} is expecting {n_columns} (its n_components_)."
        )
    return checked


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
        raise ValueError(f"dpcov needs real numeric rows; X has dtype {X.dtype}.")
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
            f"dpcov needs numeric rows; the dask array has dtype {X.dtype}."
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
    except _VALIDATION_ERRORS:
        failed = True
    else:
        failed = False
    if failed:
        raise ValueError(
            f"X has {X.shape[1]} features, but {name} is expecting "
            f"{estimator.n_features_in_} features as input."
        )
    return X


def _is_dataframe(X):
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _column_label(X, position):
    # A DataFrame's column names are the user's own declaration, not data;
    # anything else is named by its 0-based position.
    if _is_dataframe(X):
        return f"column {position} ({str(X.columns[position])!r})"
    return f"column {position}"


def _column_as_float(X, array, position):
    # One column as float64 (pandas' missing values as NaN); raises TypeError
    # or ValueError when it holds something that is not a number.
    if _is_dataframe(X):
        column = X.iloc[:, position]
        if getattr(column.dtype, "kind", "O") in "mM":
            raise TypeError("dates and durations are not numbers")
        return column.to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(array[:, position], dtype=np.float64)


def _columns_as_float(X, array):
    """The columns as float64, and the positions of those that do not convert.

    Returns
    -------
    columns : list of ndarray
        The converted columns (those that convert).
    bad : list of int
        Positions of the columns that do not convert.
    type_error : bool
        Whether some conversion failed with a TypeError (an object that is
        not a string or a number, rather than a string that is not a number).
    """
    columns, bad, type_error = [], [], False
    for position in range(array.shape[1]):
        try:
            with np.errstate(all="ignore"):
                columns.append(_column_as_float(X, array, position))
        except TypeError:
            bad.append(position)
            type_error = True
        except (ValueError, OverflowError):
            bad.append(position)
    return columns, bad, type_error


def _input_error(
    estimator,
    X,
    *,
    reset,
    ensure_min_samples,
    n_columns,
    method,
    accept_sparse,
    allow_nan=False,
):
    """The error to raise for an input that scikit-learn refused.

    Only public facts go in the message: the entry point, the shape, the
    dtype, the positions (or declared names) of the columns at fault, whether
    NaN or infinity is present, the rows needed.
    """
    name = type(estimator).__name__
    where = f"{name}.{method}"
    if sparse.issparse(X):
        if accept_sparse:
            return _sparse_input_error(
                estimator,
                X,
                reset=reset,
                ensure_min_samples=ensure_min_samples,
                n_columns=n_columns,
                where=where,
            )
        return TypeError(
            f"Sparse data was passed to {where}, but dense data is required: "
            "convert it with X.toarray() (dpcov clips and reduces dense rows)."
        )
    try:
        array = np.asarray(X)
    except _VALIDATION_ERRORS:
        return ValueError(
            f"{where} needs X as a 2-D array-like of shape (n_samples, "
            "n_features) with rows of equal length; it could not be made into "
            "an array (are some rows longer than others?)."
        )
    error = _array_error(array, where)
    if error is not None:
        return error
    columns, bad, type_error = _columns_as_float(X, array)
    if bad:
        return _non_numeric_error(X, bad, type_error, array.shape[1], where)
    error = _shape_error(
        estimator,
        array.shape,
        reset=reset,
        ensure_min_samples=ensure_min_samples,
        n_columns=n_columns,
    )
    if error is not None:
        return error
    error = _feature_names_error(
        estimator, X, reset=reset, n_columns=n_columns, where=where
    )
    if error is not None:
        return error
    error = _non_finite_error(columns, where, allow_nan)
    if error is not None:
        return error
    return ValueError(
        f"{where} could not validate X: it needs a finite, numeric 2-D "
        "array-like of shape (n_samples, n_features)."
    )


def _array_error(array, where):
    """The error for an array that is not 2-D or not real (public facts), or None."""
    if array.ndim != 2:
        return ValueError(
            f"Expected 2D array, got {array.ndim}D array of shape {array.shape} "
            f"instead in {where}. " + (_RESHAPE_HINT if array.ndim < 2 else "")
        )
    if array.dtype.kind == "c":
        return ValueError(
            f"Complex data not supported by {where}: X must be real-valued."
        )
    if array.dtype.kind in "mM":
        return ValueError(
            f"{where} needs numeric X; got dtype {array.dtype} (dates or "
            "durations): convert them to numbers first."
        )
    return None


def _non_numeric_error(X, bad, type_error, n_features, where):
    """The error for the columns at positions ``bad`` that are not numbers."""
    labels = ", ".join(_column_label(X, position) for position in bad[:10])
    more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
    verb = "holds" if len(bad) == 1 else "hold"
    message = (
        f"{where} needs numeric X, but {labels}{more} (of {n_features}) "
        f"{verb} values that are not numbers"
    )
    if type_error:
        # The wording of float()'s own TypeError, which scikit-learn's
        # common checks expect, without the offending object.
        return TypeError(
            message + " (a float() argument must be a string or a real "
            "number). Encode or drop these columns before fitting."
        )
    return ValueError(message + ". Encode or drop these columns before fitting.")


def _feature_names_error(estimator, X, *, reset, n_columns, where):
    """The error for a DataFrame whose column names differ from fit's, or None."""
    fitted_names = getattr(estimator, "feature_names_in_", None)
    if (
        n_columns is None
        and not reset
        and fitted_names is not None
        and _is_dataframe(X)
    ):
        names = [str(column) for column in X.columns]
        if names != list(fitted_names):
            # Column names are the user's declaration, not data.
            return ValueError(
                f"The feature names of X should match those seen in fit: {where} "
                f"got {names[:20]}, fitted with {list(fitted_names)[:20]}."
            )
    return None


def non_finite_message(where, has_nan, has_inf, *, allow_nan=False):
    """The message for NaN or infinity in X: what is present and what to do."""
    if allow_nan:
        return (
            f"Input X contains infinity: {where} accepts NaN as a missing cell "
            "but needs the other values finite; replace or drop infinite entries."
        )
    present = " and ".join(
        word for word, flag in (("NaN", has_nan), ("infinity", has_inf)) if flag
    )
    return f"Input X contains {present}: {where} needs finite values; " + (
        NON_FINITE_HINT
    )


def _non_finite_error(columns, where, allow_nan=False):
    """The error for columns that hold NaN or infinity, or None."""
    has_nan = not allow_nan and any(bool(np.isnan(column).any()) for column in columns)
    has_inf = any(bool(np.isinf(column).any()) for column in columns)
    if has_nan or has_inf:
        return ValueError(
            non_finite_message(where, has_nan, has_inf, allow_nan=allow_nan)
        )
    return None


def _shape_error(estimator, shape, *, reset, ensure_min_samples, n_columns):
    """The error for a shape scikit-learn refused (public facts), or None."""
    name = type(estimator).__name__
    n_samples, n_features = shape
    if n_features == 0:
        return ValueError(
            f"Found array with 0 feature(s) (shape={shape}) while a minimum "
            f"of 1 is required by {name}."
        )
    if n_samples < ensure_min_samples:
        return ValueError(
            f"Found array with {n_samples} sample(s) (shape={shape}) while "
            f"a minimum of {ensure_min_samples} is required by {name}."
        )
    if n_columns is None and not reset and hasattr(estimator, "n_features_in_"):
        if n_features != estimator.n_features_in_:
            return ValueError(
                f"X has {n_features} features, but {name} is expecting "
                f"{estimator.n_features_in_} features as input."
            )
    return None


def _sparse_input_error(estimator, X, *, reset, ensure_min_samples, n_columns, where):
    """The error for a sparse input that scikit-learn refused (public facts)."""
    if X.dtype.kind == "c":
        return ValueError(
            f"Complex data not supported by {where}: X must be real-valued."
        )
    if X.dtype.kind not in "biuf":
        return ValueError(
            f"{where} needs numeric X; got a sparse matrix of dtype {X.dtype}."
        )
    error = _shape_error(
        estimator,
        X.shape,
        reset=reset,
        ensure_min_samples=ensure_min_samples,
        n_columns=n_columns,
    )
    if error is not None:
        return error
    try:
        values = X.tocoo().data
        has_nan = bool(np.isnan(values).any())
        has_inf = bool(np.isinf(values).any())
    except _VALIDATION_ERRORS:
        has_nan = has_inf = False
    if has_nan or has_inf:
        return ValueError(non_finite_message(where, has_nan, has_inf))
    return ValueError(
        f"{where} could not validate X: it needs a finite, numeric 2-D sparse "
        "matrix or array-like of shape (n_samples, n_features)."
    )
