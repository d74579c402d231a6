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

import json
import os
import warnings
from pathlib import Path

import numpy as np

from .._config import config_context
from ..exceptions import BudgetExceeded
from ..utils._sklearn_compat import check_params_always
from ._atomic import write_atomically
from ._errors import CommandError, _fit_failure, _one_line, _recorder, _show_warnings
from ._estimators import (
    RELEASED_ATTRIBUTE,
    build_estimator,
    documented_attributes,
    resolve_estimator,
)
from ._ledger import (
    _cap_text,
    _fits,
    _locked,
    _refusal,
    _total_text,
    ledger_json,
    load_ledger,
)
from ._progress import Progress
from ._reading import read_matrix
from ._report import build_report


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
                    # None keeps the process's setting (DPCOV_SECURE_NOISE).
                    secure = True if args.secure_noise else None
                    with config_context(secure_noise=secure):
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
