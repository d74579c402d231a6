"""Reading the input of ``dpcov fit``: a CSV or ``.npy`` matrix.

Errors name the file and, where it helps, a column (by its position, or by
its name when the header was declared); they never quote a cell, a row or
a name read from an undeclared first row.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import csv
import math
import warnings
from pathlib import Path

import numpy as np

from ._errors import CommandError

#: CSV fields that stand for a missing value (case-insensitive, after
#: stripping spaces). A first row holding one is not taken for a header
#: without ``--header``: ``NA,NA`` may be a row of missing data.
MISSING_FIELDS = frozenset(
    {"", "na", "n/a", "#n/a", "nan", "null", "none", "nil", "missing", "-", "?", "."}
)

#: Kinds whose dtype is named by kind only: a string or bytes dtype's width is
#: the longest cell's length, a date's unit follows the cells' precision, and
#: a structured dtype spells out every field.
_HIDDEN_DTYPES = {
    "U": "strings or bytes",
    "S": "strings or bytes",
    "V": "structured records",
    "M": "dates",
    "m": "durations",
}


def _field_kind(field):
    # "number" (a finite float), "nonfinite" (inf, or beyond float64),
    # "missing" (see MISSING_FIELDS) or "text".
    text = field.strip()
    if text.lower() in MISSING_FIELDS:
        return "missing"
    if "_" in text:  # float() reads "1_000"; np.loadtxt does not
        return "text"
    try:
        value = float(text)
    except ValueError:
        return "text"
    return "number" if math.isfinite(value) else "nonfinite"


def is_header(fields):
    """Whether ``dpcov fit`` takes a CSV's first row for a header unasked.

    Only a row whose every field is text (neither a number, nor empty, nor a
    missing-value marker such as NA or NaN) is a header. A row of numbers may
    be a header (years such as ``2019,2020,2021``) or data, and a row with an
    empty or NA field may be a header or missing data: for those ``dpcov fit``
    asks for ``--header`` or ``--no-header`` rather than guess.

    Parameters
    ----------
    fields : list of str
        The first row of the CSV file.

    Returns
    -------
    header : bool
        True when the row is a header; False when it is ambiguous.

    Examples
    --------
    >>> is_header(["age", "income"])
    True
    >>> is_header(["2019", "2020", "2021"]), is_header(["NA", "NA"])
    (False, False)
    """
    return bool(fields) and all(_field_kind(f) == "text" for f in fields)


def _column(j, declared):
    # A column by its 1-based position, and by its name only when the user
    # declared the header (--header): a name read from an undeclared first
    # row could be a cell of a data row.
    if declared is not None and j < len(declared) and declared[j]:
        return f"column {j + 1} ({declared[j]!r})"
    return f"column {j + 1}"


def _missing(column):
    return (
        f"{column} has a missing value (an empty, NA or NaN cell); every cell "
        "must be a finite number"
    )


def _infinite(column):
    return (
        f"{column} has an infinite value (inf, or a number beyond the float64 "
        "range); every cell must be a finite number"
    )


def _read_npy(path):
    try:
        data = np.load(path, allow_pickle=False)
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise CommandError(f"{path}: holds Python objects, not numbers") from None
        raise CommandError(f"{path}: not a valid .npy file") from None
    except (OSError, EOFError) as exc:
        reason = getattr(exc, "strerror", None) or "not a valid .npy file"
        raise CommandError(f"{path}: cannot read: {reason}") from None
    if not isinstance(data, np.ndarray):  # an .npz archive under a .npy name
        data.close()
        raise CommandError(f"{path}: an .npz archive, not a .npy array")
    if data.dtype.kind not in "biuf":
        kind = _HIDDEN_DTYPES.get(data.dtype.kind, data.dtype)
        raise CommandError(f"{path}: not a numeric array (dtype {kind})")
    if data.ndim != 2:
        raise CommandError(f"{path}: expected a 2-D array, got {data.ndim}-D")
    return data.astype(np.float64)


def _csv_problem(path, delimiter, skip, width, declared):
    # Find what made np.loadtxt fail, naming only a column (by position, or
    # by a declared name), never a value or a row: messages must not reveal
    # data.
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle, delimiter=delimiter)
        for row in reader:
            if reader.line_num <= skip or not row:
                continue
            width = len(row) if width is None else width
            if len(row) != width:
                # Never which row: a row outside the domain is named by
                # nothing that picks out an individual (see the privacy
                # model's "input's domain").
                return (
                    f"{path}: rows have different numbers of fields (expected "
                    f"{width}); fix or drop the short or long rows"
                )
            for j, field in enumerate(row):
                kind = _field_kind(field)
                column = _column(j, declared)
                if kind == "text":
                    return f"{path}: {column} is not numeric (a cell is text)"
                if kind == "missing":
                    return f"{path}: {_missing(column)}"
                if kind == "nonfinite":
                    return f"{path}: {_infinite(column)}"
    return f"{path}: cannot be parsed as a matrix of numbers"


def _read_csv(path, delimiter, header):
    # Returns the data, the header (or None) and the header if declared by
    # --header (or None).
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle, delimiter=delimiter)
            first = next((row for row in reader if row), None)
            first_lines = reader.line_num
        if first is None:
            raise CommandError(f"{path}: empty file")
        if header is None and not is_header(first):
            # Decided on the first row alone and said without its content:
            # the message is the same for every ambiguous row.
            raise CommandError(
                f"{path}: cannot tell whether the first row is a header "
                "(unasked, only a row of text fields is one); pass --header "
                "if it names the columns, or --no-header if it is data"
            )
        names = [f.strip() for f in first] if header is not False else None
        declared = names if header else None
        skip = first_lines if names is not None else 0
        hint = _delimiter_hint(names, delimiter)
        try:
            with warnings.catch_warnings():
                # np.loadtxt warns on an input without rows: checked below.
                warnings.simplefilter("ignore", UserWarning)
                data = np.loadtxt(
                    path,
                    delimiter=delimiter,
                    skiprows=skip,
                    ndmin=2,
                    dtype=np.float64,
                    comments=None,
                    quotechar='"',
                    encoding="utf-8-sig",
                )
        except ValueError:
            width = None if names is None else len(names)
            problem = _csv_problem(path, delimiter, skip, width, declared)
            raise CommandError(problem + hint) from None
    except UnicodeDecodeError:
        raise CommandError(f"{path}: not UTF-8 text") from None
    except csv.Error:
        raise CommandError(f"{path}: not a valid CSV file") from None
    except OSError as exc:
        raise CommandError(f"{path}: cannot read: {exc.strerror}") from None
    if names is not None and data.size and len(names) != data.shape[1]:
        raise CommandError(
            f"{path}: the header has {len(names)} fields, the rows "
            f"{data.shape[1]}" + _delimiter_hint(names, delimiter)
        )
    return data, names, declared


#: Delimiters a header in one field may hold instead of the one asked for.
_OTHER_DELIMITERS = (";", "\t", "|", ",")


def _delimiter_hint(names, delimiter):
    # When the header is one field that another common delimiter would split
    # (a semicolon-separated file read with ","), say which --delimiter to
    # pass. The header names columns (it is not data) and only the delimiter
    # is named.
    if names is None or len(names) != 1:
        return ""
    for other in _OTHER_DELIMITERS:
        if other != delimiter and other in names[0]:
            shown = "\\t" if other == "\t" else other
            return (
                f"; the header is one field holding '{shown}': if that separates "
                f"the columns, pass --delimiter '{shown}'"
            )
    return ""


def read_matrix(path, *, delimiter=",", header=None):
    """Read a finite 2-D float matrix from a ``.csv`` or ``.npy`` file.

    Errors name the file and, where it helps, a column: by its position, or
    by its name when the header was declared (``header=True``). They never
    quote a cell, a row or a name read from an undeclared first row.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    delimiter : str, default=","
        CSV field delimiter.
    header : bool or None, default=None
        Whether a CSV's first row is a header (``--header`` or
        ``--no-header``). None: it is a header when :func:`is_header` says
        so, and any other first row is refused as ambiguous. A ``.npy``
        file has no header (True is an error).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The data, as float64.
    feature_names : list of str or None
        The CSV header, if any.

    Raises
    ------
    CommandError
        If the file is missing, unreadable, not numeric, not 2-D, empty, or
        contains a missing or infinite value, or if its first row is an
        ambiguous header.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.exists():
        raise CommandError(f"{path}: no such file")
    if path.is_dir():
        raise CommandError(f"{path}: is a directory")
    if suffix == ".npy":
        if header:
            raise CommandError(f"{path}: a .npy file has no header (--header)")
        X, names, declared = _read_npy(path), None, None
    elif suffix == ".csv":
        X, names, declared = _read_csv(path, delimiter, header)
    else:
        raise CommandError(f"{path}: unsupported file type; use .csv or .npy")
    if X.shape[0] == 0:
        raise CommandError(f"{path}: no data rows")
    if X.shape[1] == 0:
        raise CommandError(f"{path}: no columns")
    finite = np.isfinite(X).all(axis=0)
    if not finite.all():
        j = int(np.flatnonzero(~finite)[0])
        column = _column(j, declared)
        problem = _missing if np.isnan(X[:, j]).any() else _infinite
        raise CommandError(f"{path}: {problem(column)}")
    return X, names
