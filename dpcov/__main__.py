"""Command line: ``dpcov demo`` (or ``python -m dpcov demo``)."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import sys


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
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo",
        help="compare every covariance estimator on the bundled digits data",
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
    return parser


def main(argv=None):
    """Run the ``dpcov`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    status : int
        Exit status.
    """
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from ._demo import run_demo

        if not 0 <= args.delta < 1:
            print("dpcov: error: --delta must be in [0, 1)", file=sys.stderr)
            return 2
        if args.repeats < 1:
            print("dpcov: error: --repeats must be at least 1", file=sys.stderr)
            return 2
        run_demo(args.epsilons, delta=args.delta, repeats=args.repeats, seed=args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
