"""Command line: ``dpcov demo`` and ``dpcov fit`` (or ``python -m dpcov ...``)."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import os
import sys

from ._cli_fit import CommandError, add_fit_arguments, run_fit

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
        help="compare every covariance estimator and private PCA on the bundled "
        "digits data",
        description="Print the error of every private covariance estimator and "
        "private PCA against scikit-learn's on the digits data that ships with "
        "scikit-learn (no network), and save a plot of it.",
    )
    demo.add_argument(
        "--epsilons",
        type=_positive_floats,
        default=[0.1, 0.5, 1.0, 2.0, 5.0],
        help="comma-separated budgets (default: 0.1,0.5,1,2,5)",
    )
    demo.add_argument("--delta", type=float, default=1e-6, help="delta (default 1e-6)")
    demo.add_argument(
        "--repeats", type=int, default=10, help="fits per cell (default 10)"
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


def _run_demo(args):
    from ._demo import import_matplotlib, n_demo_cells, plot_demo, run_demo
    from ._progress import Progress

    if not 0 <= args.delta < 1:
        print("dpcov: error: --delta must be in [0, 1)", file=sys.stderr)
        return 2
    if args.repeats < 1:
        print("dpcov: error: --repeats must be at least 1", file=sys.stderr)
        return 2
    plot_path = None
    if not args.no_plot:
        explicit = args.plot is not None
        plot_path = args.plot if explicit else DEFAULT_PLOT
        if not plot_path.lower().endswith(".png"):
            raise CommandError(f"{plot_path}: the plot must end in .png")
        directory = os.path.dirname(os.path.abspath(plot_path))
        if not os.path.isdir(directory):
            raise CommandError(f"plot directory does not exist: {directory}")
        try:
            import_matplotlib()
        except ImportError:
            if explicit:
                raise CommandError(
                    f"--plot needs matplotlib: {_INSTALL_PLOT}"
                ) from None
            print(
                f"dpcov: plot skipped: matplotlib is not installed; {_INSTALL_PLOT}",
                file=sys.stderr,
            )
            plot_path = None
    enabled = False if args.quiet else (True if args.progress else None)
    with Progress(n_demo_cells(args.epsilons, args.delta), enabled=enabled) as bar:
        errors = run_demo(
            args.epsilons,
            delta=args.delta,
            repeats=args.repeats,
            seed=args.seed,
            out=bar.echo,
            progress=bar,
        )
    if plot_path is not None:
        plot_demo(errors, args.epsilons, plot_path, delta=args.delta)
        if not args.quiet:
            print(f"plot saved to {plot_path}")
    return 0


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
            return _run_demo(args)
        return run_fit(args)
    except CommandError as exc:
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


if __name__ == "__main__":
    sys.exit(main())
