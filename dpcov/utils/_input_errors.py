"""The errors for the input that scikit-learn's validation refused.

scikit-learn's, NumPy's and pandas' messages print data (a whole column, a
cell that is not a number); :func:`~dpcov.utils._input.validate_rows` raises
:func:`input_error`'s error instead, built from public facts only: the entry
point, the shape, the dtype, which columns (by position, or by the
DataFrame's own column names, which the user declared) are not numeric,
whether NaN or infinity is present, and how many rows are needed.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy import sparse

from ._input_messages import NON_FINITE_HINT

# The failures of scikit-learn's, NumPy's and pandas' validation (pandas'
# errors derive from these). Anything else is not an input error and
# propagates.
VALIDATION_ERRORS = (ValueError, TypeError, OverflowError)

_RESHAPE_HINT = (
    "Reshape your data either using array.reshape(-1, 1) if your data has a "
    "single feature or array.reshape(1, -1) if it contains a single sample."
)


#: The refusal of dates and durations (the dtype is not printed: a date's
#: unit follows the cells).
_DATES_MESSAGE = (
    "{where} needs numeric X; got dates or durations: convert them to numbers first."
)


def _is_dataframe(X):
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def holds_dates(X):
    """Whether ``X`` holds dates or durations, which NumPy turns into numbers.

    scikit-learn's validation converts a ``datetime64`` or ``timedelta64``
    array (or a list of such scalars, an object array or column holding
    them, a structured array with such a field, a polars temporal column)
    to floats without a word: the count of time units since the epoch,
    whose scale and origin the user never chose. They are refused instead,
    as pandas' dates already are. Public facts only: dtypes and types.
    """
    schema = getattr(X, "schema", None)
    if schema is not None and callable(getattr(schema, "dtypes", None)):
        # (A polars DataFrame: Date, Datetime, Duration and Time columns.)
        return any(_is_time_dtype(dtype) for dtype in schema.dtypes())
    if _is_dataframe(X):
        return any(
            _is_time_dtype(dtype)
            or (
                getattr(dtype, "kind", None) == "O"
                and _holds_time_scalars(X.iloc[:, j].to_numpy())
            )
            for j, dtype in enumerate(X.dtypes)
        )
    dtype = getattr(X, "dtype", None)
    array = None
    if dtype is None and isinstance(X, list | tuple):
        try:
            array = np.asarray(X)
        except VALIDATION_ERRORS:
            return False  # refused later, with its own message
        dtype = array.dtype
    elif isinstance(X, np.ndarray):
        array = X
    if _is_time_dtype(dtype):
        return True
    return array is not None and _holds_time_scalars(array)


def _is_time_dtype(dtype):
    if getattr(dtype, "kind", None) in ("m", "M"):
        return True
    fields = getattr(dtype, "fields", None)
    if fields is not None and not callable(fields):  # a NumPy structured dtype
        return any(_is_time_dtype(field[0]) for field in fields.values())
    is_temporal = getattr(dtype, "is_temporal", None)  # polars
    return bool(is_temporal()) if callable(is_temporal) else False


def _holds_time_scalars(array):
    # An object array's NumPy date or duration scalars (float() of one is
    # its count of units): the cells' types, collected in one C-level pass.
    if array.dtype != object:
        return False
    return any(
        issubclass(kind, np.datetime64 | np.timedelta64)
        for kind in set(map(type, array.flat))
    )


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


def input_error(
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

    Parameters
    ----------
    estimator : estimator instance
        The estimator whose entry point read ``X`` (its class is named; its
        ``n_features_in_`` and ``feature_names_in_`` are checked).
    X : object
        The input refused, as the caller passed it.
    reset : bool
        Whether the entry point is a fit (no fitted shape or names to check).
    ensure_min_samples : int
        Fewest rows accepted.
    n_columns : int or None
        The number of columns required of an input that is not rows of the
        training space; None for rows.
    method : str
        The entry point, named in the message.
    accept_sparse : False, str or tuple of str
        Whether the entry point accepts sparse input (see
        :func:`~dpcov.utils._input.validate_rows`).
    allow_nan : bool, default=False
        Whether NaN (a missing cell) is accepted.

    Returns
    -------
    error : ValueError or TypeError
        The error to raise (not raised here): the first of what is wrong
        found, or a generic one when nothing specific is.
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
    except VALIDATION_ERRORS:
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
    if holds_dates(X):
        # (NumPy scalars of an object array or column, a structured field,
        # a polars column: converted above, still dates.)
        return ValueError(_DATES_MESSAGE.format(where=where))
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
        # (The dtype is not printed: a date's unit follows the cells.)
        return ValueError(_DATES_MESSAGE.format(where=where))
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
    """The message for NaN or infinity in X: what is present and what to do.

    Parameters
    ----------
    where : str
        The entry point (``"Class.method"``), named in the message.
    has_nan : bool
        Whether ``X`` holds NaN.
    has_inf : bool
        Whether ``X`` holds infinity.
    allow_nan : bool, default=False
        Whether the entry point accepts NaN (a missing cell): the message
        then names infinity only.

    Returns
    -------
    message : str
        The message, of these public facts only (no value of ``X``).
    """
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
    except VALIDATION_ERRORS:
        has_nan = has_inf = False
    if has_nan or has_inf:
        return ValueError(non_finite_message(where, has_nan, has_inf))
    return ValueError(
        f"{where} could not validate X: it needs a finite, numeric 2-D sparse "
        "matrix or array-like of shape (n_samples, n_features)."
    )
