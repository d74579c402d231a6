"""``dpcov demo``: where private covariance is cheap and where it is not.

The demo fits every private covariance estimator, under zCDP and under pure
DP, at several budgets on two tables and prints the relative Frobenius error
of each (lower is better) next to the non-private estimate and the zero
matrix:

* a realistic-size synthetic table (100,000 weather-station readings in eight
  units, :func:`dpcov.datasets.make_sensor_table`) with public per-feature
  ranges, where the law's covariance is known: there the private estimates
  come close to the non-private one;
* scikit-learn's digits (1,797 images of 64 pixels), where the noise wins.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import sys
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.covariance import EmpiricalCovariance
from sklearn.datasets import load_digits

from ..covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    SeparateCovariance,
)
from ..datasets import make_sensor_table
from ..exceptions import NoiseDominatedWarning, SeededNoiseWarning
from ._atomic import write_atomically
from ._errors import CommandError
from ._parser import _INSTALL_PLOT, DEFAULT_PLOT
from ._progress import Progress
from ._reading import read_matrix

#: Pixels of the digits images lie in [0, 16], so each 64-pixel row has norm
#: at most 16 * 8 = 128: a bound known before seeing the data.
DIGITS_PUBLIC_NORM = 128.0

#: The budgets of the default run, and of ``--quick``.
DEMO_EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0)
QUICK_EPSILONS = (0.5, 4.0)

#: Rows of the synthetic table (``--quick``: fewer).
SYNTHETIC_ROWS = 100_000
QUICK_ROWS = 20_000

#: The estimators' families, in the order of the table and the plot colours.
FAMILIES = {
    "GaussianCovariance": GaussianCovariance,
    "SeparateCovariance": SeparateCovariance,
    "AdaptiveCovariance": AdaptiveCovariance,
    "EigenSamplingCovariance": EigenSamplingCovariance,
}


def load_unit_digits():
    """Digits images (1797 x 64) divided by their public norm bound 128.

    Returns
    -------
    X : ndarray of shape (1797, 64)
        Rows of norm at most 1.
    """
    return load_digits().data / DIGITS_PUBLIC_NORM


def demo_estimators(delta):
    """The estimators the demo compares, by display name.

    Parameters
    ----------
    delta : float
        Delta of the zCDP variants (each family also runs pure, ``delta=0``).

    Returns
    -------
    estimators : dict of str to estimator
        Unfitted estimators, without their geometry (``data_norm`` or
        ``bounds``), which the table sets.
    """
    estimators = {}
    for guarantee, value in ((f"delta={delta:g}", delta), ("pure", 0.0)):
        if value == delta and delta == 0:
            continue  # --delta 0: the pure variants only
        for family, cls in FAMILIES.items():
            estimators[f"{family} ({guarantee})"] = cls(delta=value)
    return estimators


@dataclass
class DemoTable:
    """One table of the demo and what its errors are measured against.

    Attributes
    ----------
    title : str
        Its name in the output.
    X : ndarray of shape (n_samples, n_features)
        The rows.
    geometry : dict
        The public ``data_norm`` or ``bounds`` every estimator gets.
    reference : ndarray of shape (n_features, n_features)
        The covariance the errors are measured against.
    reference_name : str
        What ``reference`` is, for the output.
    units : ndarray of shape (n_features,)
        Each feature's unit for the error (its public range for a table with
        ranges, so that no feature dominates the norm; 1 otherwise).
    nonprivate : float
        The relative error of scikit-learn's non-private estimate (0 when it
        is the reference).
    """

    title: str
    X: np.ndarray
    geometry: dict
    reference: np.ndarray
    reference_name: str
    units: np.ndarray
    nonprivate: float = 0.0

    def relative_error(self, covariance):
        """``||C - C_ref||_F / ||C_ref||_F``, each feature in its unit."""
        scale = np.outer(self.units, self.units)
        difference = (covariance - self.reference) / scale
        return float(
            np.linalg.norm(difference) / np.linalg.norm(self.reference / scale)
        )


def synthetic_table(n_samples=SYNTHETIC_ROWS, seed=0):
    """The synthetic sensor table with its public ranges and true covariance.

    Parameters
    ----------
    n_samples : int, default=100_000
        Rows.
    seed : int, default=0
        Seed of the rows.

    Returns
    -------
    table : DemoTable
        Errors against the law's covariance, each reading in units of its
        public range.
    """
    sensors = make_sensor_table(n_samples, random_state=seed)
    lower, upper = sensors.bounds
    table = DemoTable(
        title="synthetic sensor table (dpcov.datasets.make_sensor_table, "
        "public per-feature ranges)",
        X=sensors.data,
        geometry={"bounds": sensors.bounds},
        reference=sensors.covariance,
        reference_name="the law's covariance, each reading in units of its range",
        units=upper - lower,
    )
    table.nonprivate = table.relative_error(
        EmpiricalCovariance().fit(table.X).covariance_
    )
    return table


def digits_table():
    """scikit-learn's digits, rows divided by their public bound 128.

    Returns
    -------
    table : DemoTable
        Errors against scikit-learn's estimate on the same rows (the law is
        unknown).
    """
    X = load_unit_digits()
    return DemoTable(
        title="digits (scikit-learn's bundled images, rows divided by the public "
        "bound 128)",
        X=X,
        geometry={"data_norm": 1.0},
        reference=EmpiricalCovariance().fit(X).covariance_,
        reference_name="scikit-learn's EmpiricalCovariance on the same rows",
        units=np.ones(X.shape[1]),
    )


def file_table(path, data_norm):
    """A CSV or ``.npy`` file with a public row-norm bound.

    Parameters
    ----------
    path : str or os.PathLike
        The file (see ``dpcov fit --help`` for the formats).
    data_norm : float
        A public bound on the rows' L2 norms (rows above it are clipped).

    Returns
    -------
    table : DemoTable
        Errors against scikit-learn's estimate on the same rows.
    """
    X, _ = read_matrix(path)
    return DemoTable(
        title=f"{os.fspath(path)} (data_norm={data_norm:g})",
        X=X,
        geometry={"data_norm": float(data_norm)},
        reference=EmpiricalCovariance().fit(X).covariance_,
        # The errors compare with the non-private estimate: they read the
        # rows without privacy, so the printout is not a private release.
        reference_name="scikit-learn's EmpiricalCovariance on the same rows "
        "(not private: these figures are a comparison, not a release; use "
        "dpcov fit to release)",
        units=np.ones(X.shape[1]),
    )


def run_demo(
    table, epsilons, *, delta=1e-6, repeats=5, seed=0, out=print, progress=None
):
    """Print the relative error of every private estimator on one table.

    Parameters
    ----------
    table : DemoTable
        The rows, their public geometry and the reference covariance.
    epsilons : sequence of float
        Budgets.
    delta : float, default=1e-6
        Delta of the zCDP variants.
    repeats : int, default=5
        Fits per cell (different noise), averaged.
    seed : int, default=0
        Seed of the noise, for a reproducible table (a seeded release is not
        private against whoever knows the seed; this is a demonstration).
    out : callable, default=print
        Where the lines go.
    progress : dpcov.cli._progress.Progress, default=None
        Advanced once per (estimator, epsilon) cell.

    Returns
    -------
    errors : dict of str to ndarray
        Mean relative error per estimator and epsilon, plus
        ``"scikit-learn (not private)"`` and ``"zero matrix"``.
    """
    if progress is None:
        progress = Progress(0, enabled=False)
    n_samples, n_features = table.X.shape
    out(f"{table.title}: n={n_samples}, d={n_features}")
    out(
        f"relative Frobenius error ||C - C_ref||_F / ||C_ref||_F, lower is better "
        f"(mean of {repeats} fits); C_ref: {table.reference_name}"
    )
    width = max(len(name) for name in demo_estimators(delta)) + 2
    header = "estimator".ljust(width) + "".join(f"eps={e:<9g}" for e in epsilons)
    out(header)
    out("-" * len(header))
    rng = np.random.default_rng(seed)
    errors = {}
    for name, estimator in demo_estimators(delta).items():
        estimator.set_params(**table.geometry)
        row = []
        for epsilon in epsilons:
            progress.update(0, label=f"{name}, eps={epsilon:g}")
            estimator.set_params(epsilon=epsilon, random_state=rng)
            with warnings.catch_warnings():
                # The demo sweeps small budgets on purpose: the table shows
                # the error that NoiseDominatedWarning would announce. Its
                # fits are seeded so that its table is reproducible, and they
                # release nothing but that table.
                warnings.simplefilter("ignore", NoiseDominatedWarning)
                warnings.simplefilter("ignore", SeededNoiseWarning)
                fits = [
                    table.relative_error(estimator.fit(table.X).covariance_)
                    for _ in range(repeats)
                ]
            row.append(float(np.mean(fits)))
            progress.update()
        errors[name] = np.array(row)
        out(name.ljust(width) + "".join(f"{v:<13.3g}" for v in row))
    for name, value in (
        ("scikit-learn (not private)", table.nonprivate),
        ("zero matrix", 1.0),
    ):
        errors[name] = np.full(len(epsilons), value)
        out(name.ljust(width) + f"{value:<13.3g}" * len(epsilons))
    out(verdict(table, errors, epsilons))
    out("")
    return errors


def verdict(table, errors, epsilons):
    """One sentence on what the table shows.

    Parameters
    ----------
    table : DemoTable
        The table.
    errors : dict of str to ndarray
        What :func:`run_demo` measured.
    epsilons : sequence of float
        Its budgets.

    Returns
    -------
    sentence : str
        Where privacy is cheap (the best private error against the
        non-private one) or where the noise wins (against the zero matrix).
    """
    private = {
        k: v
        for k, v in errors.items()
        if k not in ("scikit-learn (not private)", "zero matrix")
    }
    best = np.min(np.stack(list(private.values())), axis=0)
    leader = min(private, key=lambda k: private[k][-1])
    lost = [e for e, b in zip(epsilons, best, strict=True) if b >= 1.0]
    if lost:
        return (
            f"The noise wins: at epsilon <= {max(lost):g} no private estimate beats "
            "the zero matrix, which knows nothing; so few rows in this many "
            "dimensions need a larger budget, more rows or fewer features."
        )
    if table.nonprivate > 0:
        ratio = best[-1] / table.nonprivate
        return (
            f"Privacy is cheap here: at epsilon={epsilons[-1]:g} the best private "
            f"estimate ({leader}) is {ratio:.2g} times scikit-learn's non-private "
            "error, which comes from sampling alone."
        )
    return (
        f"Every budget beats the zero matrix; at epsilon={epsilons[-1]:g} the best "
        f"private estimate ({leader}) is off by {best[-1]:.2g} of the reference's norm."
    )


def n_demo_cells(epsilons, delta, n_tables=1):
    """Number of (estimator, epsilon) cells that the demo computes.

    Parameters
    ----------
    epsilons : sequence of float
        Budgets.
    delta : float
        Delta of the zCDP variants.
    n_tables : int, default=1
        Tables run.

    Returns
    -------
    n_cells : int
        Estimators times budgets times tables.
    """
    return len(demo_estimators(delta)) * len(epsilons) * n_tables


def import_matplotlib():
    """Import matplotlib's object-oriented API with the Agg canvas.

    Nothing global is changed: no ``pyplot``, no ``matplotlib.use``.

    Returns
    -------
    figure_class : type
        :class:`matplotlib.figure.Figure`.
    canvas_class : type
        :class:`matplotlib.backends.backend_agg.FigureCanvasAgg`.

    Raises
    ------
    ImportError
        If matplotlib is not installed (``pip install "dpcov[plot]"``).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    return Figure, FigureCanvasAgg


def plot_demo(results, epsilons, path, *, delta=1e-6):
    """Save one panel per table as a PNG, atomically.

    Each estimator family has its own colour; the line style gives the
    guarantee (solid: zCDP at ``delta``, dashed: pure DP). The non-private
    error (black) and the zero matrix (grey, dotted) are references. The
    legend sits below the panels.

    Parameters
    ----------
    results : list of (DemoTable, dict)
        Each table and what :func:`run_demo` returned for it.
    epsilons : sequence of float
        The budgets.
    path : str or os.PathLike
        The PNG to write; its directory must exist. It is written to a
        temporary file beside it first and then renamed.
    delta : float, default=1e-6
        The delta of the zCDP variants (for the title).

    Returns
    -------
    path : str
        The path written.
    """
    Figure, FigureCanvasAgg = import_matplotlib()
    epsilons = np.asarray(epsilons, dtype=float)
    fig = Figure(figsize=(6.5 * len(results), 6.0), layout="constrained")
    FigureCanvasAgg(fig)
    axes = np.atleast_1d(fig.subplots(1, len(results), squeeze=False)[0])
    colours = {family: f"C{i}" for i, family in enumerate(FAMILIES)}
    for ax, (table, errors) in zip(axes, results, strict=True):
        for name, values in errors.items():
            family = name.split(" (")[0]
            if family in colours:
                style = "--" if name.endswith("(pure)") else "-"
                ax.loglog(
                    epsilons,
                    values,
                    style,
                    color=colours[family],
                    marker="o",
                    ms=3,
                    label=name,
                )
        if table.nonprivate > 0:
            ax.axhline(
                table.nonprivate,
                color="black",
                lw=1.2,
                label="scikit-learn (not private)",
            )
        ax.axhline(1.0, color="grey", ls=":", lw=1.2, label="zero matrix")
        ax.set_xticks(epsilons, labels=[f"{e:g}" for e in epsilons])
        ax.minorticks_off()
        n_samples, n_features = table.X.shape
        ax.set(
            xlabel="epsilon",
            ylabel="relative Frobenius error (lower is better)",
            title=f"{table.title.split(' (')[0]}: n={n_samples}, d={n_features}",
        )
    handles, labels = {}, []
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in handles:
                handles[label] = handle
                labels.append(label)
    fig.legend(
        [handles[label] for label in labels],
        labels,
        loc="outside lower center",
        ncols=3,
        fontsize=8,
    )
    fig.suptitle(
        f"Private covariance: zCDP at (epsilon, {delta:g}) solid, pure epsilon-DP "
        "dashed"
    )
    write_atomically(
        [(path, lambda handle: fig.savefig(handle, format="png", dpi=110))]
    )
    return os.fspath(path)


def _tables(args):
    # The tables asked for, built lazily (the synthetic rows take a moment).
    dataset = args.dataset
    if dataset is None:
        names = ["synthetic", "digits"]
    else:
        names = [dataset]
    for name in names:
        if name == "synthetic":
            yield lambda: synthetic_table(QUICK_ROWS if args.quick else SYNTHETIC_ROWS)
        elif name == "digits":
            yield digits_table
        else:
            if args.data_norm is None:
                raise CommandError(
                    f"--dataset {name}: give the rows' public norm bound with "
                    "--data-norm (it is never read off the data)"
                )
            yield lambda name=name: file_table(name, args.data_norm)


def run_demo_command(args):
    """Run ``dpcov demo``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments of ``dpcov demo``, plus ``quiet`` and ``progress``.

    Returns
    -------
    status : int
        0 on success, 2 on a usage error; other errors raise
        :class:`CommandError`.
    """
    if not 0 <= args.delta < 1:
        print("dpcov: error: --delta must be in [0, 1)", file=sys.stderr)
        return 2
    repeats = args.repeats if args.repeats is not None else (1 if args.quick else 5)
    if repeats < 1:
        print("dpcov: error: --repeats must be at least 1", file=sys.stderr)
        return 2
    epsilons = args.epsilons or (QUICK_EPSILONS if args.quick else DEMO_EPSILONS)
    if args.data_norm is not None and not args.data_norm > 0:
        raise CommandError("--data-norm must be positive")
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
    builders = list(_tables(args))
    enabled = False if args.quiet else (True if args.progress else None)
    results = []
    cells = n_demo_cells(epsilons, args.delta, len(builders))
    with Progress(cells, enabled=enabled) as bar:
        for build in builders:
            table = build()
            errors = run_demo(
                table,
                epsilons,
                delta=args.delta,
                repeats=repeats,
                seed=args.seed,
                out=bar.echo,
                progress=bar,
            )
            results.append((table, errors))
    if plot_path is not None:
        plot_demo(results, epsilons, plot_path, delta=args.delta)
        if not args.quiet:
            print(f"plot saved to {plot_path}")
    return 0
