"""The ``dpcov fit`` command: fit a private estimator on a data file.

It reads a CSV or ``.npy`` matrix, fits any public dpcov estimator by name,
and writes the released matrix (``.npy`` or CSV) and a JSON report of the
guarantee spent and its budget split. Nothing is written unless everything
succeeded: both files go to temporary files beside their destinations and are
renamed into place last.

Errors and warnings are one line each and never quote the data: a column is
named by its position (or by its name when the user declared the header), and
a message from outside dpcov is shown only when it cannot depend on the data
(see ``dpcov.cli._errors``); otherwise only its type is named. No traceback
is printed.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import dataclasses
import json
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._config import config_context
from ..utils._sklearn_compat import check_params_always
from ._atomic import write_atomically
from ._errors import CommandError, _fit_failure, _one_line, _warnings_as_lines
from ._estimators import (
    RELEASED_ATTRIBUTE,
    SUPERVISED,
    build_estimator,
    documented_attributes,
    resolve_estimator,
)
from ._ledger import (
    _locked,
    ledger_line,
    ledger_report,
    load_ledger,
    refuse_over_cap,
)
from ._progress import Progress
from ._reading import read_matrix
from ._report import build_report, public_row_count


class _Files(NamedTuple):
    # The files of a fit: the input, the release (and its format, ".npy" or
    # ".csv"), the report and the ledger (None without --ledger).
    input: Path
    output: Path
    fmt: str
    report: Path
    ledger: Path | None


@dataclasses.dataclass(frozen=True)
class _Plan:
    # What the checks before reading settled.
    estimator: object
    files: _Files
    accountant: object
    attribute: str
    delimiter: str


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
    # Every check that needs no data comes first, in this order; the data file
    # is opened only once all of them (and the ledger's refusal) have passed.
    estimator = _checked_estimator(args)
    name = type(estimator).__name__
    files = _destinations(args, name)
    accountant = _open_ledger(args, estimator, files.ledger)
    attribute = _released_attribute(args, type(estimator))
    delimiter = _delimiter(args.delimiter)
    if accountant is not None:
        # Refuse before the data file is even opened.
        refuse_over_cap(accountant, estimator, name)
    plan = _Plan(estimator, files, accountant, attribute, delimiter)
    # Warnings are shown one line each, even when the fit fails.
    with _warnings_as_lines():
        X, names, released = _read_fit_and_write(plan, args)
    if not args.quiet:
        _print_summary(plan, X, names, released)
    return 0


def _checked_estimator(args):
    # The estimator named on the command line, with its parameters checked.
    cls = resolve_estimator(args.estimator)
    supervised = cls.__name__ in SUPERVISED
    if supervised and args.target is None:
        raise CommandError(
            f"{cls.__name__} fits a target: pass --target COLUMN (its name or "
            "1-based position)"
        )
    if not supervised and args.target is not None:
        raise CommandError(f"{cls.__name__} fits no target: drop --target")
    if (args.group_column is None) != (args.max_rows_per_group is None):
        raise CommandError(
            "--group-column and --max-rows-per-group come together: the column "
            "names the person of each row, the bound caps the rows a person "
            "contributes"
        )
    estimator = build_estimator(cls, args)
    try:
        # Before the data are read; the message quotes only the parameters.
        check_params_always(estimator)
    except ValueError as exc:
        message = _one_line(exc)
        if cls.__name__ not in message:
            message = f"{cls.__name__}: {message}"
        raise CommandError(message) from None
    if args.secure_noise:
        if args.random_state is not None:
            raise CommandError(
                "--random-state cannot seed hardened noise (--secure-noise draws "
                "from the operating system's CSPRNG)"
            )
        if not estimator._supports_hardened_noise():
            raise CommandError(
                f"{cls.__name__} with these parameters has no hardened sampler "
                "(--secure-noise); see the user guide's privacy model page, "
                "'Hardened noise'"
            )
    return estimator


def _destinations(args, name):
    # The files of the fit, each destination checked: its directory exists,
    # it is no directory, and no two of the files (input included) are one.
    input_path = Path(args.input)
    if args.output is None:
        output = Path(f"{input_path.stem}.{name.lower()}.npy")
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
    ledger_path = None
    if args.ledger is not None:
        ledger_path = Path(args.ledger)
        _check_destination(ledger_path, "ledger")
        for path in (input_path, output, report_path):
            if _same_file(path, ledger_path):
                raise CommandError("the ledger must be a file of its own")
    return _Files(input_path, output, fmt, report_path, ledger_path)


def _open_ledger(args, estimator, ledger_path):
    # The ledger's accountant, given to the estimator; None without --ledger.
    if ledger_path is None:
        if (args.max_epsilon, args.max_delta, args.max_rho) != (None, None, None):
            raise CommandError("--max-epsilon, --max-delta and --max-rho need --ledger")
        return None
    accountant = load_ledger(
        ledger_path,
        epsilon=args.max_epsilon,
        delta=args.max_delta,
        rho=args.max_rho,
    )
    estimator.set_params(accountant=accountant)
    return accountant


def _released_attribute(args, cls):
    # The fitted attribute to save: --attribute, or the estimator's release.
    attribute = args.attribute or RELEASED_ATTRIBUTE.get(cls.__name__, "covariance_")
    documented = documented_attributes(cls)
    if attribute not in documented:
        raise CommandError(
            f"{cls.__name__} has no fitted attribute {attribute!r}; its "
            f"attributes: {', '.join(documented)}"
        )
    return attribute


def _delimiter(text):
    # The CSV delimiter: one character, or "\\t" for a tab.
    delimiter = "\t" if text == "\\t" else text
    if len(delimiter) != 1:
        raise CommandError("--delimiter must be one character")
    return delimiter


def _read_fit_and_write(plan, args):
    # Read the matrix, fit, and write the release and its report (all or
    # none), under a progress bar of three steps.
    enabled = False if args.quiet else (True if args.progress else None)
    with Progress(3, enabled=enabled) as bar:
        bar.update(0, label=f"reading {plan.files.input.name}")
        X, names = read_matrix(
            plan.files.input, delimiter=plan.delimiter, header=args.header
        )
        y = groups = None
        path = plan.files.input
        columns = {"target": args.target, "group": args.group_column}
        index = {
            what: _column_index(names, spec, X.shape[1], path, what)
            for what, spec in columns.items()
            if spec is not None
        }
        if len(set(index.values())) < len(index):
            raise CommandError(f"{path}: --target and --group-column name one column")
        if index and X.shape[1] <= len(index):
            raise CommandError(f"{path}: no feature column is left")
        if "target" in index:
            y = X[:, index["target"]]
        if "group" in index:
            groups = X[:, index["group"]]
        if index:
            X = np.delete(X, list(index.values()), axis=1)
            if names is not None:
                names = [n for j, n in enumerate(names) if j not in index.values()]
        bar.update(1, label=f"fitting {type(plan.estimator).__name__}")
        _fit(plan.estimator, X, y, groups=groups, secure_noise=args.secure_noise)
        bar.update(1, label="writing")
        released = _released(plan.estimator, plan.attribute, plan.files.fmt)
        text = _report_text(plan, X, names)
        _write(plan.files, released, text)
        bar.update(1, label="done")
    return X, names, released


def _column_index(names, spec, width, path, what):
    # The 0-based index of the column --target or --group-column names (by
    # declared name or 1-based position); the message names columns only.
    if names is not None and spec in names:
        return names.index(spec)
    try:
        column = int(spec) - 1
    except ValueError:
        column = -1
    if not 0 <= column < width:
        flag = "--target" if what == "target" else "--group-column"
        raise CommandError(
            f"{path}: {flag} {spec!r} names no column (a header name, "
            f"or a position from 1 to {width})"
        )
    return column


def _fit(estimator, X, y=None, *, groups=None, secure_noise):
    # Fit under the hardened-noise setting; a failure becomes one line that
    # quotes no data.
    try:
        # None keeps the process's setting (DPCOV_SECURE_NOISE).
        secure = True if secure_noise else None
        with config_context(secure_noise=secure):
            fit_params = {} if groups is None else {"groups": groups}
            if y is None:
                estimator.fit(X, **fit_params)
            else:
                estimator.fit(X, y, **fit_params)
    except CommandError:
        raise
    except Exception as exc:  # noqa: BLE001
        # A fit recorded before it failed is already in the ledger
        # file (FileLedger saves at every record).
        raise CommandError(_fit_failure(estimator, exc)) from None


def _report_text(plan, X, names):
    # The JSON report, with the ledger's state in place of the accountant.
    report = build_report(
        plan.estimator,
        X=X,
        input_path=plan.files.input,
        output_path=plan.files.output,
        attribute=plan.attribute,
        feature_names=names,
    )
    report["params"].pop("accountant", None)
    if plan.accountant is not None:
        report["ledger"] = ledger_report(plan.accountant, plan.files.ledger)
    return json.dumps(report, indent=2, allow_nan=False) + "\n"


def _write(files, released, text):
    # The release and the report, both or neither.
    if files.fmt == ".npy":

        def write_release(handle):
            np.save(handle, released, allow_pickle=False)
    else:

        def write_release(handle):
            np.savetxt(handle, released, fmt="%.17g", delimiter=",")

    try:
        writers = [
            (files.output, write_release),
            (files.report, lambda handle: handle.write(text.encode())),
        ]
        write_atomically(writers)
    except OSError as exc:
        reason = exc.strerror or _one_line(exc)
        raise CommandError(f"cannot write the output: {reason}") from None


def _print_summary(plan, X, names, released):
    # What was read and written, the guarantee spent and the ledger's state.
    files = plan.files
    after = ", after a header row" if names is not None else ""
    count = public_row_count(plan.estimator, X)
    # Over persons, or under add/remove, the number of rows is private.
    rows = "the rows" if count is None else f"{count} rows"
    print(f"read {rows} of {X.shape[1]} columns from {files.input}{after}")
    print(f"wrote {plan.attribute} {released.shape} to {files.output}")
    print(f"wrote the report to {files.report}")
    print(f"guarantee: {_describe(plan.estimator)}")
    if plan.accountant is not None:
        print(ledger_line(plan.accountant, files.ledger))


def _check_destination(path, what):
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise CommandError(f"{what} directory does not exist: {directory}")
    if os.path.isdir(path):
        raise CommandError(f"{what} path is a directory: {path}")


def _same_file(a, b):
    return os.path.realpath(a) == os.path.realpath(b)


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
