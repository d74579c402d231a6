"""The ``dpcov fit`` command: fit a private estimator on a data file.

It reads a CSV or ``.npy`` matrix, fits any public dpcov estimator by name,
and writes the released matrix (``.npy`` or CSV) and a JSON report of the
guarantee spent and its budget split. Nothing is written unless everything
succeeded: both files go to temporary files beside their destinations and are
renamed into place last.

Errors and warnings are one line each and never quote the data: a column is
named by its position (or by its name when the user declared the header), and
a message from outside dpcov is shown only when it cannot depend on the data
(see ``_fit_failure`` and ``_show_warnings``); otherwise only its type is
named. No traceback is printed.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import ast
import contextlib
import csv
import dataclasses
import json
import math
import os
import re
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from ._progress import Progress
from .accounting import ZCDP, ApproxDP, BudgetAccountant, PureDP
from .covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from .decomposition import PCA, ApproximateSubspace, ExactSubspace
from .distributions import MultivariateGaussian, ProductBernoulli
from .exceptions import BudgetExceeded, NoPrivateResult
from .utils._sklearn_compat import check_params_always

#: Every public estimator, by class name.
ESTIMATORS = {
    cls.__name__: cls
    for cls in (
        GaussianCovariance,
        SeparateCovariance,
        AdaptiveCovariance,
        EigenSamplingCovariance,
        NuclearLaplaceCovariance,
        PCA,
        ExactSubspace,
        ApproximateSubspace,
        MultivariateGaussian,
        ProductBernoulli,
    )
}

#: Short names (matched like class names: case, "-" and "_" ignored).
ALIASES = {
    "gauss": "GaussianCovariance",
    "separate": "SeparateCovariance",
    "adaptive": "AdaptiveCovariance",
    "eigen-sampling": "EigenSamplingCovariance",
    "nuclear": "NuclearLaplaceCovariance",
    "pca": "PCA",
    "exact-subspace": "ExactSubspace",
    "approximate-subspace": "ApproximateSubspace",
    "gaussian": "MultivariateGaussian",
    "bernoulli": "ProductBernoulli",
}

#: The attribute saved by default, when not ``covariance_``.
RELEASED_ATTRIBUTE = {
    "PCA": "components_",
    "ExactSubspace": "components_",
    "ApproximateSubspace": "components_",
    "ProductBernoulli": "probabilities_",
}

#: Command-line options that set the estimator parameter of the same name.
PARAMETER_OPTIONS = (
    "epsilon",
    "delta",
    "rho",
    "data_norm",
    "bounds",
    "n_components",
)

#: Fitted attributes reported in their own fields, or duplicates of others.
_REPORTED_APART = {
    "guarantee_",
    "budget_split_",
    "epsilon_spent_",
    "delta_spent_",
    "rho_spent_",
    "n_features_in_",
    "feature_names_in_",
}

_NOTIONS = {"PureDP": "pure", "ZCDP": "zCDP", "ApproxDP": "approx"}


class CommandError(Exception):
    """A user error, printed as one line ``dpcov: error: ...`` (exit status 1)."""


def _one_line(exc):
    return " ".join(str(exc).split())


def _key(name):
    return name.lower().replace("-", "").replace("_", "")


def resolve_estimator(name):
    """Return the estimator class that ``name`` designates.

    Parameters
    ----------
    name : str
        A class name or an alias from :data:`ALIASES`, in any case, with "-"
        and "_" ignored.

    Returns
    -------
    cls : type
        The estimator class.

    Examples
    --------
    >>> resolve_estimator("eigen-sampling").__name__
    'EigenSamplingCovariance'
    >>> resolve_estimator("pca").__name__
    'PCA'
    """
    table = {_key(n): n for n in ESTIMATORS}
    table.update({_key(alias): n for alias, n in ALIASES.items()})
    if _key(name) not in table:
        aliases = {n: a for a, n in ALIASES.items()}
        valid = ", ".join(f"{n} ({aliases[n]})" for n in ESTIMATORS)
        raise CommandError(f"unknown estimator {name!r}; valid names: {valid}")
    return ESTIMATORS[table[_key(name)]]


def parse_param(text):
    """Parse ``KEY=VALUE``: VALUE as a Python literal, else a float, else text.

    Parameters
    ----------
    text : str
        The argument of ``--param``.

    Returns
    -------
    key : str
        The parameter name.
    value : object
        The parsed value.

    Examples
    --------
    >>> parse_param("n_iterations=3")
    ('n_iterations', 3)
    >>> parse_param("projection=feasible")
    ('projection', 'feasible')
    >>> parse_param("epsilon=inf")
    ('epsilon', inf)
    """
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, ast.literal_eval(raw.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    try:
        return key, float(raw)
    except ValueError:
        return key, raw.strip()


def parse_bounds(text):
    """Parse ``--bounds``: ``LOWER,UPPER`` for every column, or a file.

    Parameters
    ----------
    text : str
        Two numbers separated by a comma (the same range for every column),
        or the path of a ``.csv`` (no header) or ``.npy`` file holding two
        rows, the lower and the upper bound of each column.

    Returns
    -------
    bounds : tuple of (lower, upper)
        Floats or 1-D arrays; checked against the data's columns by the fit.

    Examples
    --------
    >>> parse_bounds("0,100")
    (0.0, 100.0)
    """
    parts = text.split(",")
    if len(parts) == 2:
        try:
            return float(parts[0]), float(parts[1])
        except ValueError:
            pass
    path = Path(text)
    if path.suffix.lower() not in (".csv", ".npy"):
        raise argparse.ArgumentTypeError(
            "expected LOWER,UPPER or a .csv/.npy file of two rows (lower, upper)"
        )
    try:
        if path.suffix.lower() == ".npy":
            table = np.load(path, allow_pickle=False)
        else:
            table = np.loadtxt(path, delimiter=",", ndmin=2)
        table = np.asarray(table, dtype=float)
    except (OSError, ValueError) as exc:
        # The bounds file is public; the message still quotes no cell.
        raise argparse.ArgumentTypeError(
            f"{path}: cannot read two rows of numbers ({type(exc).__name__})"
        ) from None
    if table.ndim != 2 or table.shape[0] != 2:
        raise argparse.ArgumentTypeError(
            f"{path}: expected two rows (lower, upper), got shape {table.shape}"
        )
    return table[0], table[1]


def documented_attributes(cls):
    """Names of the fitted attributes in the Attributes section of ``cls``.

    Parameters
    ----------
    cls : type
        An estimator class with a numpydoc docstring.

    Returns
    -------
    names : list of str
        Attribute names ending in "_", in the documented order.

    Examples
    --------
    >>> documented_attributes(PCA)[:2]
    ['components_', 'explained_variance_']
    """
    doc = cls.__doc__ or ""
    match = re.search(
        r"\n\s*Attributes\n\s*-+\n(.*?)(\n\s*\n\s*[A-Z][\w ]*\n\s*-+\n|$)", doc, re.S
    )
    if match is None:
        return []
    return re.findall(r"^ {4}(\w+_) :", match.group(1), re.M)


def add_fit_arguments(parser):
    """Add the arguments of ``dpcov fit`` to ``parser``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The ``fit`` subparser.
    """
    parser.add_argument("input", metavar="INPUT", help="data file: .csv or .npy")
    parser.add_argument(
        "--estimator",
        "-e",
        required=True,
        metavar="NAME",
        help="estimator class name or alias: "
        + ", ".join(f"{a} ({n})" for a, n in ALIASES.items()),
    )
    parser.add_argument("--epsilon", type=float, help="privacy budget epsilon")
    parser.add_argument("--delta", type=float, help="privacy parameter delta")
    parser.add_argument("--rho", type=float, help="zCDP budget rho (replaces epsilon)")
    parser.add_argument(
        "--data-norm",
        type=float,
        metavar="B",
        help="public bound on the L2 norm of a row (never compute it from the data)",
    )
    parser.add_argument(
        "--bounds",
        type=parse_bounds,
        metavar="LO,HI|FILE",
        help="public range of every column, LO,HI, or a .csv/.npy file of two "
        "rows (lower, upper) for per-column ranges; rows are clipped to the "
        "box and the fit runs in its unit coordinates (never compute the "
        "ranges from the data)",
    )
    parser.add_argument(
        "--n-components",
        type=int,
        metavar="K",
        help="number of components (PCA, the subspaces, EigenSamplingCovariance)",
    )
    parser.add_argument(
        "--random-state",
        type=int,
        metavar="SEED",
        help="seed for a reproducible fit (default: fresh operating-system "
        "entropy); a seeded release is NOT private against anyone who knows "
        "the seed",
    )
    parser.add_argument(
        "--param",
        "-p",
        type=parse_param,
        action="append",
        metavar="KEY=VALUE",
        help="any other estimator parameter; VALUE is a Python literal or "
        "text, e.g. projection=feasible, n_iterations=3, covariance=top_k "
        "(PCA's covariance may also name a covariance estimator, e.g. separate)",
    )
    parser.add_argument(
        "--output",
        "-o",
        metavar="PATH",
        help="released matrix, .npy or .csv (default: "
        "<input stem>.<estimator>.npy in the current directory)",
    )
    parser.add_argument(
        "--report",
        metavar="PATH",
        help="JSON report (default: the output path with suffix .json)",
    )
    parser.add_argument(
        "--attribute",
        metavar="ATTR",
        help="fitted attribute to save (default: covariance_, components_ "
        "or probabilities_)",
    )
    parser.add_argument(
        "--delimiter",
        default=",",
        help='CSV field delimiter (default ","; "\\t" = tab)',
    )
    header = parser.add_mutually_exclusive_group()
    header.add_argument(
        "--header",
        dest="header",
        action="store_const",
        const=True,
        help="the CSV's first row names the columns (errors may then name a "
        "column by its header name)",
    )
    header.add_argument(
        "--no-header",
        dest="header",
        action="store_const",
        const=False,
        help="every row of the CSV is data. Without either flag, a first row "
        "of text fields only (no number, no empty or NA field) is a header "
        "and any other first row is refused as ambiguous: a row of numbers "
        "may be a header such as 2019,2020,2021, and NA,NA may be missing data",
    )
    ledger = parser.add_argument_group(
        "accounting across fits",
        "Keep a JSON ledger of every fit on the same data: a fit that would "
        "exceed the ledger's cap is refused before the data are read, and each "
        "accepted fit is recorded (even one that ends with no private result).",
    )
    ledger.add_argument(
        "--ledger", metavar="PATH", help="JSON ledger file (created if missing)"
    )
    ledger.add_argument(
        "--max-epsilon",
        type=float,
        metavar="E",
        help="cap of a new ledger: total epsilon, at the delta of --max-delta, "
        "which a new ledger needs with it",
    )
    ledger.add_argument(
        "--max-delta",
        type=float,
        metavar="D",
        help="cap of a new ledger: the delta of --max-epsilon. 1e-6 (the "
        "default fits' delta) caps (epsilon, 1e-6)-DP, which the default fits "
        "keep; 0 caps pure epsilon-DP, which only pure-DP fits (--delta 0) "
        "keep",
    )
    ledger.add_argument(
        "--max-rho", type=float, metavar="R", help="cap of a new ledger: total rho"
    )


# -- input ------------------------------------------------------------------

#: CSV fields that stand for a missing value (case-insensitive, after
#: stripping spaces). A first row holding one is not taken for a header
#: without ``--header``: ``NA,NA`` may be a row of missing data.
MISSING_FIELDS = frozenset(
    {"", "na", "n/a", "#n/a", "nan", "null", "none", "nil", "missing", "-", "?", "."}
)


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
        raise CommandError(f"{path}: not a numeric array (dtype {data.dtype})")
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
                return (
                    f"{path}: rows have different numbers of fields (expected {width})"
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
            raise CommandError(problem) from None
    except UnicodeDecodeError:
        raise CommandError(f"{path}: not UTF-8 text") from None
    except csv.Error:
        raise CommandError(f"{path}: not a valid CSV file") from None
    except OSError as exc:
        raise CommandError(f"{path}: cannot read: {exc.strerror}") from None
    if names is not None and data.size and len(names) != data.shape[1]:
        raise CommandError(
            f"{path}: the header has {len(names)} fields, the rows {data.shape[1]}"
        )
    return data, names, declared


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


# -- estimator --------------------------------------------------------------


def build_estimator(cls, args):
    """Instantiate ``cls`` with the parameters given on the command line.

    Parameters
    ----------
    cls : type
        The estimator class.
    args : argparse.Namespace
        Parsed arguments of ``dpcov fit``.

    Returns
    -------
    estimator : estimator
        The unfitted estimator.
    """
    valid = cls().get_params(deep=False)
    given = {}
    for name in (*PARAMETER_OPTIONS, "random_state"):
        value = getattr(args, name)
        if value is not None:
            given[name] = ("--" + name.replace("_", "-"), value)
    for key, value in args.param or ():
        if key in given:
            raise CommandError(f"parameter {key!r} given twice")
        given[key] = (f"--param {key}", value)
    for name, (flag, _) in given.items():
        if name not in valid:
            raise CommandError(
                f"{cls.__name__} has no parameter {name!r} ({flag}); its "
                f"parameters: {', '.join(sorted(valid))}"
            )
    params = {name: value for name, (_, value) in given.items()}
    covariance = params.get("covariance")
    if isinstance(covariance, str) and covariance != "top_k":
        try:
            inner = resolve_estimator(covariance)
        except CommandError:
            inner = None
        if inner is not None and inner.__module__.startswith("dpcov.covariance"):
            params["covariance"] = inner()
    return cls(**params)


# -- report -----------------------------------------------------------------


def to_json(value):
    """Convert ``value`` to JSON-safe data.

    Guarantees (:mod:`dpcov.accounting` dataclasses) become
    ``{"notion": "pure" | "zCDP" | "approx", <fields>}``, arrays lists,
    non-finite floats the strings "inf", "-inf" and "nan" (strict JSON has no
    such numbers), and anything else without a JSON form its ``repr``.

    Parameters
    ----------
    value : object
        What to convert.

    Returns
    -------
    data : object
        ``None``, bool, int, float, str, list or dict.

    Examples
    --------
    >>> from dpcov.accounting import ZCDP
    >>> to_json({"step": ZCDP(0.5), "x": np.array([1.0, np.inf])})
    {'step': {'notion': 'zCDP', 'rho': 0.5}, 'x': [1.0, 'inf']}
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else str(value)
    if isinstance(value, np.ndarray):
        return to_json(value.tolist())
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        notion = _NOTIONS.get(type(value).__name__, type(value).__name__)
        fields = dataclasses.fields(value)
        return {
            "notion": notion,
            **{f.name: to_json(getattr(value, f.name)) for f in fields},
        }
    return repr(value)


def _small(value):
    # Scalars, 1-D numeric arrays and flat dicts of scalars go into the report.
    if isinstance(value, (bool, int, float, str, np.generic)):
        return True
    if isinstance(value, np.ndarray):
        return value.ndim <= 1 and value.dtype.kind in "biuf"
    if isinstance(value, dict):
        return all(
            isinstance(v, (bool, int, float, str, np.generic)) for v in value.values()
        )
    return False


def build_report(estimator, *, X, input_path, output_path, attribute, feature_names):
    """The JSON report of a fit: parameters, guarantee, split and releases.

    Only documented fitted attributes are reported (dpcov's docstrings audit
    each as a private release or a public quantity).

    Parameters
    ----------
    estimator : estimator
        The fitted estimator.
    X : ndarray of shape (n_samples, n_features)
        The data (only its shape is reported).
    input_path, output_path : str
        The files read and written.
    attribute : str
        The attribute saved to ``output_path``.
    feature_names : list of str or None
        The CSV header, if any.

    Returns
    -------
    report : dict
        JSON-safe data.
    """
    from . import __version__

    released = np.asarray(getattr(estimator, attribute))
    report = {
        "dpcov_version": __version__,
        "estimator": type(estimator).__name__,
        "params": to_json(estimator.get_params(deep=False)),
        "input": str(input_path),
        "n_samples": int(X.shape[0]),
        "n_features": int(X.shape[1]),
    }
    if feature_names is not None:
        report["feature_names"] = feature_names
    report["output"] = {
        "path": str(output_path),
        "attribute": attribute,
        "shape": list(released.shape),
    }
    for name in ("guarantee_", "epsilon_spent_", "delta_spent_", "rho_spent_"):
        if hasattr(estimator, name):
            report[name] = to_json(getattr(estimator, name))
    if hasattr(estimator, "budget_split_"):
        report["budget_split_"] = to_json(estimator.budget_split_)
    inline, other = {}, []
    for name in documented_attributes(type(estimator)):
        if name in _REPORTED_APART or name == attribute or not hasattr(estimator, name):
            continue
        value = getattr(estimator, name)
        if _small(value):
            inline[name] = to_json(value)
        else:
            other.append(name)
    report["attributes"] = inline
    report["attributes_not_inlined"] = other
    return report


# -- output -----------------------------------------------------------------


def _chmod_default(path):
    # mkstemp makes owner-only files; give the result the permissions of a
    # file created the ordinary way (0o666 minus the umask).
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def write_atomically(writers):
    """Write several files, all or none.

    Each file is written to a temporary file in its destination directory;
    only when all are written are they renamed into place (``os.replace``).
    On any failure the temporary files are removed.

    Parameters
    ----------
    writers : list of (path, callable)
        Destination and a function that writes the content to a binary file
        object.
    """
    temporaries = []
    try:
        for path, write in writers:
            path = os.path.abspath(path)
            fd, tmp = tempfile.mkstemp(
                dir=os.path.dirname(path),
                prefix=f".{os.path.basename(path)}.",
                suffix=".tmp",
            )
            temporaries.append(tmp)
            with os.fdopen(fd, "wb") as handle:
                write(handle)
            _chmod_default(tmp)
        for (path, _), tmp in zip(writers, temporaries, strict=True):
            os.replace(tmp, path)
    finally:
        for tmp in temporaries:
            if os.path.exists(tmp):
                os.remove(tmp)


def _check_destination(path, what):
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise CommandError(f"{what} directory does not exist: {directory}")
    if os.path.isdir(path):
        raise CommandError(f"{what} path is a directory: {path}")


def _same_file(a, b):
    return os.path.realpath(a) == os.path.realpath(b)


_GUARANTEES = {"pure": PureDP, "zCDP": ZCDP, "approx": ApproxDP}


def _guarantee_from_json(data):
    cls = _GUARANTEES[data["notion"]]
    fields = [f.name for f in dataclasses.fields(cls)]
    return cls(**{name: float(data[name]) for name in fields})


class FileLedger(BudgetAccountant):
    """A :class:`~dpcov.accounting.BudgetAccountant` saved at every record.

    :meth:`spend` writes the whole ledger to its file (atomically) as soon as
    a fit is recorded, which an estimator does before its first private step:
    a fit that fails or is interrupted afterwards stays on record.

    Parameters
    ----------
    path : path-like
        The ledger file.
    **cap : float
        ``epsilon``, ``delta`` or ``rho`` of :class:`BudgetAccountant`.
    """

    def __init__(self, path, **cap):
        super().__init__(**cap)
        self.path = Path(path)

    def spend(self, guarantee, *, label="fit"):
        """Record ``guarantee`` (see :meth:`BudgetAccountant.spend`) and save.

        Parameters
        ----------
        guarantee : PureDP, ZCDP, ApproxDP or BudgetAccountant
            What a fit spends.
        label : str, default="fit"
            Label of the ledger entry.

        Returns
        -------
        self : FileLedger
            The ledger.
        """
        super().spend(guarantee, label=label)
        text = json.dumps(ledger_json(self), indent=2, allow_nan=False) + "\n"
        try:
            write_atomically([(self.path, lambda handle: handle.write(text.encode()))])
        except OSError as exc:
            # Raised inside the estimator's fit, before its private steps:
            # the fit stops, nothing is released.
            reason = exc.strerror or _one_line(exc)
            raise CommandError(f"cannot write the ledger: {reason}") from None
        return self


def _is_at(path, stat):
    # Whether ``path`` is (still) the file that ``stat`` describes.
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    return (current.st_dev, current.st_ino) == (stat.st_dev, stat.st_ino)


@contextlib.contextmanager
def _locked(path):
    # An exclusive lock on ``<ledger>.lock`` for the whole command, so that
    # concurrent fits on the same ledger cannot both pass its cap. POSIX
    # only; elsewhere the ledger is not protected against concurrent runs.
    #
    # The holder removes the lock file before it lets the lock go, so none is
    # left behind. A run that was waiting on the removed file then holds the
    # lock of a file no longer at the path: it sees that (device and inode
    # differ, or no file is there) and tries again with the file now at the
    # path. Only the holder of the file at the path runs.
    try:
        import fcntl  # noqa: PLC0415
    except ImportError:
        yield
        return
    lock_path = f"{path}.lock"
    while True:
        try:
            handle = open(lock_path, "a")  # noqa: SIM115 (closed below)
        except OSError as exc:
            reason = exc.strerror or _one_line(exc)
            raise CommandError(
                f"cannot create the ledger's lock file: {reason}"
            ) from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            held = os.fstat(handle.fileno())
            if _is_at(lock_path, held):
                break
        except BaseException:
            handle.close()
            raise
        handle.close()
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            if _is_at(lock_path, held):
                os.remove(lock_path)
        handle.close()  # lets the lock go, after the removal


def load_ledger(path, *, epsilon=None, delta=None, rho=None):
    """Read a ledger file into a :class:`~dpcov.accounting.BudgetAccountant`.

    A missing file starts an empty ledger with the cap given; an existing one
    keeps the cap it was created with (a different cap given here is an
    error, so that a cap cannot be raised by accident).

    Parameters
    ----------
    path : path-like
        The ledger file.
    epsilon, delta, rho : float or None, default=None
        The cap (``--max-epsilon``, ``--max-delta``, ``--max-rho``).

    Returns
    -------
    accountant : FileLedger
        The cap and the recorded fits; it saves itself at every record.
    """
    given = {"epsilon": epsilon, "delta": delta, "rho": rho}
    if delta is not None and epsilon is None:
        raise CommandError("--max-delta needs --max-epsilon")
    if not os.path.exists(path):
        if epsilon is not None and delta is None and rho is None:
            # No default delta: a cap is a privacy promise, so its delta is
            # said, never assumed (an epsilon alone used to mean pure DP).
            raise CommandError(
                "a new ledger's --max-epsilon needs --max-delta: --max-delta "
                "1e-6 caps (epsilon, 1e-6)-DP, which the default fits "
                "(delta=1e-6) keep; --max-delta 0 caps pure epsilon-DP, which "
                "only pure-DP fits (--delta 0) keep"
            )
        try:
            cap = {k: v for k, v in given.items() if v is not None}
            return FileLedger(path, **cap)
        except ValueError as exc:
            raise CommandError(f"ledger cap: {_one_line(exc)}") from None
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        stored = {k: data["cap"][k] for k in ("epsilon", "delta", "rho")}
        fits = [
            (str(e["label"]), _guarantee_from_json(e["guarantee"]))
            for e in data["fits"]
        ]
        accountant = FileLedger(
            path, **{k: float(v) for k, v in stored.items() if v is not None}
        )
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise CommandError(f"{path}: not a dpcov ledger ({_one_line(exc)})") from None
    for name, value in given.items():
        if value is not None and value != (
            None if stored[name] is None else float(stored[name])
        ):
            raise CommandError(
                f"{path}: the ledger's cap has {name}={stored[name]}; it cannot "
                f"be changed to {value} (start a new ledger)"
            )
    history = BudgetAccountant()
    for label, guarantee in fits:
        history.spend(guarantee, label=label)
    try:
        # The recorded fits go in without rewriting the file.
        BudgetAccountant.spend(accountant, history)
    except BudgetExceeded:
        raise CommandError(
            f"{path}: the recorded fits already exceed the cap"
        ) from None
    return accountant


def ledger_json(accountant):
    """The ledger file's content for ``accountant``.

    Parameters
    ----------
    accountant : BudgetAccountant
        The cap and the recorded fits.

    Returns
    -------
    data : dict
        JSON-safe data: the cap, every fit's label and guarantee, and the
        total.
    """
    cap = to_json(
        {
            "epsilon": accountant.epsilon_cap,
            "delta": accountant.delta_cap,
            "rho": accountant.rho_cap,
        }
    )
    return {
        "dpcov_ledger": 1,
        "cap": cap,
        "fits": [
            {"label": label, "guarantee": to_json(guarantee)}
            for label, guarantee in accountant.ledger
        ],
        "total": {
            "guarantee": to_json(accountant.total()),
            "epsilon": to_json(accountant.epsilon),
            "delta": accountant.delta_cap,
            "rho": to_json(accountant.rho),
        },
    }


def _cap_text(accountant):
    # The cap of ``accountant``, in its own units.
    if accountant.rho_cap is not None:
        return f"rho={accountant.rho_cap:g}"
    if accountant.epsilon_cap is None:
        return "none"
    if accountant.delta_cap == 0:
        return f"epsilon={accountant.epsilon_cap:g} (pure DP)"
    return f"(epsilon={accountant.epsilon_cap:g}, delta={accountant.delta_cap:g})"


def _total_text(accountant, cap):
    # The total of ``accountant`` in the units of the cap of ``cap``: rho for
    # a rho cap, epsilon for a pure one, (epsilon, delta) at the cap's delta.
    if cap.rho_cap is not None:
        return f"rho={accountant.rho:.6g}"
    if cap.epsilon_cap is None:
        return repr(accountant.total())
    epsilon = accountant.epsilon_at(cap.delta_cap)
    if cap.delta_cap == 0:
        return f"epsilon={epsilon:.6g}"
    return f"(epsilon={epsilon:.6g}, delta={cap.delta_cap:g})"


def _refusal(accountant, cost, label):
    # Why the ledger refuses a fit that costs ``cost``, in the cap's units.
    # Only public values: the guarantees and the cap.
    cap = _cap_text(accountant)
    if accountant.rho_cap is not None and isinstance(cost, ApproxDP):
        reason = (
            f"its guarantee, {cost!r}, has no zCDP form, and the ledger's cap is {cap}"
        )
    elif (
        accountant.epsilon_cap is not None
        and accountant.delta_cap == 0
        and not isinstance(cost, PureDP)
    ):
        reason = (
            f"its guarantee, {cost!r}, is not pure DP, and the ledger's cap is "
            f"{cap}, which only pure-DP fits (--delta 0) keep"
        )
    else:
        after = BudgetAccountant(delta=accountant.delta_cap)
        after.spend(accountant)
        after.spend(cost, label=label)
        reason = (
            f"it would bring the ledger's total to {_total_text(after, accountant)}"
            f", over its cap {cap}"
        )
    return (
        f"{label}: refused before reading the data: {reason} "
        f"({_fits(len(accountant))} recorded)"
    )


def _fits(n):
    return f"{n} fit" if n == 1 else f"{n} fits"


def run_fit(args):
    """Run ``dpcov fit``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments (see :func:`add_fit_arguments`), plus ``quiet`` and
        ``progress``.

    Returns
    -------
    status : int
        0 on success; errors raise :class:`CommandError`.
    """
    if args.ledger is None:
        return _run_fit(args)
    _check_destination(args.ledger, "ledger")
    with _locked(args.ledger):
        return _run_fit(args)


def _run_fit(args):
    cls = resolve_estimator(args.estimator)
    estimator = build_estimator(cls, args)
    try:
        # Before the data are read; the message quotes only the parameters.
        check_params_always(estimator)
    except ValueError as exc:
        message = _one_line(exc)
        if cls.__name__ not in message:
            message = f"{cls.__name__}: {message}"
        raise CommandError(message) from None
    input_path = Path(args.input)
    if args.output is None:
        output = Path(f"{input_path.stem}.{cls.__name__.lower()}.npy")
    else:
        output = Path(args.output)
    fmt = output.suffix.lower()
    if fmt not in (".npy", ".csv"):
        raise CommandError(f"{output}: the output must end in .npy or .csv")
    report_path = (
        output.with_suffix(".json") if args.report is None else Path(args.report)
    )
    _check_destination(output, "output")
    _check_destination(report_path, "report")
    for path in (output, report_path):
        if _same_file(path, input_path):
            raise CommandError(f"{path}: refusing to overwrite the input file")
    if _same_file(output, report_path):
        raise CommandError("the output and the report must be different files")
    accountant = None
    if args.ledger is not None:
        ledger_path = Path(args.ledger)
        _check_destination(ledger_path, "ledger")
        for path in (input_path, output, report_path):
            if _same_file(path, ledger_path):
                raise CommandError("the ledger must be a file of its own")
        accountant = load_ledger(
            ledger_path,
            epsilon=args.max_epsilon,
            delta=args.max_delta,
            rho=args.max_rho,
        )
        estimator.set_params(accountant=accountant)
    elif (args.max_epsilon, args.max_delta, args.max_rho) != (None, None, None):
        raise CommandError("--max-epsilon, --max-delta and --max-rho need --ledger")
    attribute = args.attribute or RELEASED_ATTRIBUTE.get(cls.__name__, "covariance_")
    documented = documented_attributes(cls)
    if attribute not in documented:
        raise CommandError(
            f"{cls.__name__} has no fitted attribute {attribute!r}; its "
            f"attributes: {', '.join(documented)}"
        )
    delimiter = "\t" if args.delimiter == "\\t" else args.delimiter
    if len(delimiter) != 1:
        raise CommandError("--delimiter must be one character")

    if accountant is not None:
        # Refuse before the data file is even opened.
        try:
            cost = estimator.privacy_cost()
            accountant.check(cost, label=cls.__name__)
        except BudgetExceeded:
            raise CommandError(_refusal(accountant, cost, cls.__name__)) from None
        except ValueError as exc:
            raise CommandError(f"{cls.__name__}: {_one_line(exc)}") from None

    enabled = False if args.quiet else (True if args.progress else None)
    caught = []
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = _recorder(caught)
        try:
            with Progress(3, enabled=enabled) as bar:
                bar.update(0, label=f"reading {input_path.name}")
                X, names = read_matrix(
                    input_path, delimiter=delimiter, header=args.header
                )
                bar.update(1, label=f"fitting {cls.__name__}")
                try:
                    estimator.fit(X)
                except CommandError:
                    raise
                except Exception as exc:  # noqa: BLE001
                    # A fit recorded before it failed is already in the ledger
                    # file (FileLedger saves at every record).
                    raise CommandError(_fit_failure(estimator, exc)) from None
                bar.update(1, label="writing")
                released = _released(estimator, attribute, fmt)
                report = build_report(
                    estimator,
                    X=X,
                    input_path=input_path,
                    output_path=output,
                    attribute=attribute,
                    feature_names=names,
                )
                report["params"].pop("accountant", None)
                if accountant is not None:
                    report["ledger"] = {
                        "path": str(ledger_path),
                        "n_fits": len(accountant),
                        "total": ledger_json(accountant)["total"],
                    }
                text = json.dumps(report, indent=2, allow_nan=False) + "\n"
                if fmt == ".npy":

                    def write_release(handle):
                        np.save(handle, released, allow_pickle=False)
                else:

                    def write_release(handle):
                        np.savetxt(handle, released, fmt="%.17g", delimiter=",")

                try:
                    writers = [
                        (output, write_release),
                        (report_path, lambda handle: handle.write(text.encode())),
                    ]
                    write_atomically(writers)
                except OSError as exc:
                    reason = exc.strerror or _one_line(exc)
                    raise CommandError(f"cannot write the output: {reason}") from None
                bar.update(1, label="done")
        finally:
            _show_warnings(caught)
    if not args.quiet:
        after = ", after a header row" if names is not None else ""
        print(
            f"read {X.shape[0]} rows of {X.shape[1]} columns from {input_path}{after}"
        )
        print(f"wrote {attribute} {released.shape} to {output}")
        print(f"wrote the report to {report_path}")
        print(f"guarantee: {_describe(estimator)}")
        if accountant is not None:
            print(
                f"ledger {ledger_path}: {_fits(len(accountant))}, total "
                f"{_total_text(accountant, accountant)}, cap {_cap_text(accountant)}"
            )
    return 0


def _released(estimator, attribute, fmt):
    if not hasattr(estimator, attribute):
        raise CommandError(f"{attribute} was not set by this fit")
    try:
        released = np.asarray(getattr(estimator, attribute), dtype=np.float64)
    except (TypeError, ValueError):
        raise CommandError(f"{attribute} is not a numeric array") from None
    if fmt == ".csv" and released.ndim > 2:
        raise CommandError(f"{attribute} is {released.ndim}-D: save it as .npy")
    return np.atleast_1d(released) if fmt == ".csv" else released


def _describe(estimator):
    parts = [repr(getattr(estimator, "guarantee_", None))]
    for name in ("epsilon_spent_", "delta_spent_", "rho_spent_"):
        if hasattr(estimator, name):
            parts.append(f"{name.removesuffix('_')}={getattr(estimator, name):.6g}")
    return ", ".join(parts)


def _raised_in_dpcov(exc):
    # Whether the innermost frame of ``exc``'s traceback is dpcov's code
    # (this module aside): its messages state only public values.
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "")
    return module.startswith("dpcov.") and module != __name__


def _fit_failure(estimator, exc):
    """The one-line message for an exception raised by ``estimator.fit(X)``.

    dpcov's own exceptions state only public values (parameters, ``n``,
    ``d``, guarantees): the estimators pass their input through one guard
    that replaces third-party validation messages. Any other message may
    quote the data (NumPy, SciPy and scikit-learn put array values in
    theirs), so only its type is named.
    """
    name = type(estimator).__name__
    if isinstance(exc, MemoryError):
        return f"{name}: out of memory"
    public = isinstance(exc, NoPrivateResult | BudgetExceeded) or (
        isinstance(exc, ValueError | TypeError) and _raised_in_dpcov(exc)
    )
    if public:
        message = _one_line(exc)
        if isinstance(exc, NoPrivateResult):
            message = f"no private result: {message}"
    else:
        message = (
            f"the fit failed ({type(exc).__name__}); its message is not shown, "
            "as it comes from outside dpcov and could quote the data"
        )
    return message if name in message else f"{name}: {message}"


#: NumPy's floating-point warnings: fixed texts, no values.
_FLOATING_POINT_WARNING = re.compile(
    r"(overflow|underflow|invalid value|divide by zero) encountered in [\w ]+"
)


def _recorder(caught):
    # A warnings.showwarning that appends (text, category, module) to
    # ``caught``, where module is that of the code that raised the warning
    # (the first frame outside the warnings machinery).
    def record(message, category, filename, lineno, file=None, line=None):
        frame = sys._getframe(1)
        while frame is not None and frame.f_globals.get("__name__") in (
            "warnings",
            "_py_warnings",
        ):
            frame = frame.f_back
        module = "" if frame is None else frame.f_globals.get("__name__", "")
        caught.append((_one_line(message), category, module))

    return record


def _show_warnings(caught):
    # dpcov's warnings state public values; so do NumPy's floating-point
    # ones. The text of any other (SciPy's LinAlgWarning quotes a condition
    # number of the data, for one) is not shown.
    seen = set()
    for text, category, module in caught:
        if not (module.startswith("dpcov.") or _FLOATING_POINT_WARNING.fullmatch(text)):
            text = (
                f"{category.__name__} from {module.partition('.')[0] or 'Python'}"
                " (its text is not shown: it comes from outside dpcov and could "
                "quote the data)"
            )
        line = f"dpcov: warning: {text}"
        if line not in seen:
            seen.add(line)
            print(line, file=sys.stderr)
