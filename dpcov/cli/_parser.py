"""The argument parser of the ``dpcov`` command and its argument types."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import ast
from pathlib import Path

import numpy as np

from ._estimators import ALIASES

#: Where ``dpcov demo`` saves its plot unless told otherwise.
DEFAULT_PLOT = "dpcov-demo.png"


_INSTALL_PLOT = (
    "python3 -m pip install matplotlib, or install dpcov with its extra: "
    "python3 -m pip install '.[plot]'"
)


def _positive_floats(text):
    values = [float(v) for v in text.split(",")]
    if not values or any(not v > 0 for v in values):
        raise argparse.ArgumentTypeError("expected comma-separated positive numbers")
    return values


def build_parser():
    """The argument parser of the ``dpcov`` command.

    Returns
    -------
    parser : argparse.ArgumentParser
        The parser.
    """
    parser = argparse.ArgumentParser(
        prog="dpcov", description="Differentially private covariance estimation."
    )
    output = argparse.ArgumentParser(add_help=False)
    output.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="no progress bar and no summary (warnings and errors still show)",
    )
    output.add_argument(
        "--progress",
        action="store_true",
        help="show the progress bar (on standard error) even when it is not a terminal",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo",
        parents=[output],
        help="show where private covariance is cheap (a 100,000-row table) and "
        "where it is not (the 1,797-row digits)",
        description="Fit every private covariance estimator, under zCDP and under "
        "pure DP, at several budgets, and print each one's relative error (lower "
        "is better) next to scikit-learn's non-private estimate and the zero "
        "matrix: on a synthetic 100,000-row table with public per-feature ranges, "
        "then on the digits data that ships with scikit-learn (no network). Save "
        "a plot of both.",
    )
    demo.add_argument(
        "--dataset",
        metavar="synthetic|digits|PATH",
        help="one table only: the synthetic table, the digits, or a CSV/.npy file "
        "(with --data-norm); default: synthetic, then digits",
    )
    demo.add_argument(
        "--data-norm",
        type=float,
        help="public bound on the rows' L2 norms, for --dataset PATH",
    )
    demo.add_argument(
        "--quick",
        action="store_true",
        help="a smaller run (20,000 synthetic rows, epsilon 0.5 and 4, one fit "
        "per cell), for a first look",
    )
    demo.add_argument(
        "--epsilons",
        type=_positive_floats,
        default=None,
        help="comma-separated budgets (default: 0.25,0.5,1,2,4)",
    )
    demo.add_argument("--delta", type=float, default=1e-6, help="delta (default 1e-6)")
    demo.add_argument(
        "--repeats", type=int, default=None, help="fits per cell (default 5)"
    )
    demo.add_argument("--seed", type=int, default=0, help="noise seed (default 0)")
    plot = demo.add_mutually_exclusive_group()
    plot.add_argument(
        "--plot",
        metavar="PATH",
        help=f"PNG to save (default {DEFAULT_PLOT}; needs matplotlib: {_INSTALL_PLOT})",
    )
    plot.add_argument("--no-plot", action="store_true", help="save no plot")
    fit = commands.add_parser(
        "fit",
        parents=[output],
        help="fit a private estimator on a CSV or .npy file",
        description="Fit a private estimator on a CSV or .npy matrix (one row "
        "per individual), save the released matrix (.npy or .csv) and a JSON "
        "report of the privacy guarantee spent and its budget split.",
    )
    add_fit_arguments(fit)
    return parser


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
        the path of a ``.csv`` (no header) or ``.npy`` file holding two
        rows, the lower and the upper bound of each column, or ``private``
        (the ranges are found privately, from a quarter of the budget).

    Returns
    -------
    bounds : tuple of (lower, upper) or "private"
        Floats or 1-D arrays; checked against the data's columns by the fit.

    Examples
    --------
    >>> parse_bounds("0,100")
    (0.0, 100.0)
    """
    if text.strip().lower() == "private":
        return "private"
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
        metavar="LO,HI|FILE|private",
        help="public range of every column, LO,HI, or a .csv/.npy file of two "
        "rows (lower, upper) for per-column ranges; rows are clipped to the "
        "box and the fit runs in its unit coordinates (never compute the "
        "ranges from the data); 'private' finds them privately with a quarter "
        "of the budget",
    )
    parser.add_argument(
        "--n-components",
        type=int,
        metavar="K",
        help="number of components (PCA, the subspaces, EigenSamplingCovariance)",
    )
    parser.add_argument(
        "--secure-noise",
        action="store_true",
        help="draw the noise from exact discrete samplers fed by the operating "
        "system's CSPRNG, safe against floating-point attacks (Mironov 2012); "
        "estimators without one are refused before the data are read",
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
        help="fitted attribute to save (default: covariance_, components_, "
        "probabilities_ or coef_)",
    )
    parser.add_argument(
        "--target",
        metavar="COLUMN",
        help="the column that holds the target of a model (linear-regression, "
        "ridge, lda): its name (with a header) or its 1-based position; its "
        "range is public like the features' (--param target_bounds=(LO,HI), "
        "--param classes=[...])",
    )
    parser.add_argument(
        "--group-column",
        metavar="COLUMN",
        help="the column that names the person of each row (its name with a "
        "header, or its 1-based position): read for grouping, not a feature; "
        "with --max-rows-per-group, the privacy unit is the person",
    )
    parser.add_argument(
        "--max-rows-per-group",
        type=int,
        metavar="K",
        help="public bound on the rows one person contributes (with "
        "--group-column): at most K rows of each person, chosen at random, "
        "averaged into one contribution (covariance estimators and PCA)",
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
