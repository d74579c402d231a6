"""Command line: ``dpcov demo`` and ``dpcov fit`` (or ``python -m dpcov ...``).

:func:`main` parses the arguments (``_parser``) and runs a command: the demo
(``_demo``) or a fit (``_fit``), which reads the data (``_reading``), builds
the estimator (``_estimators``), keeps the budget ledger (``_ledger``), writes
the release and its report (``_report``) all or none (``_atomic``), and shows
errors and warnings without quoting the data (``_errors``).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import sys

from ..exceptions import AccountantCopyError
from ._demo import run_demo_command
from ._errors import CommandError
from ._fit import run_fit
from ._parser import build_parser

__all__ = ["main", "build_parser"]


def main(argv=None):
    """Run the ``dpcov`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    status : int
        Exit status: 0 on success, 1 on an error (one line on standard error,
        never a traceback from ``dpcov fit``), 2 on a usage error, 130 when
        interrupted.
    """
    args = build_parser().parse_args(argv)
    try:
        if args.command == "demo":
            return run_demo_command(args)
        return run_fit(args)
    except (CommandError, AccountantCopyError) as exc:
        # (An AccountantCopyError states public facts only; it is no
        # Exception, so that searches let it through: caught by name here.)
        print(f"dpcov: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("dpcov: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001
        if args.command != "fit":
            raise
        # An error that ``dpcov fit`` did not foresee: its message and
        # traceback could quote the data, so only its type is printed.
        print(
            f"dpcov: error: unexpected {type(exc).__name__} (a bug in dpcov; "
            "its message and traceback are not shown, as they could quote "
            "the data)",
            file=sys.stderr,
        )
        return 1
