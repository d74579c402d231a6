"""``dpcov demo``: private covariance of a bundled dataset at several budgets."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import sys
import warnings

import numpy as np
from sklearn.covariance import EmpiricalCovariance
from sklearn.datasets import load_digits

from ..covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from ..decomposition import PCA
from ..exceptions import NoiseDominatedWarning
from ._atomic import write_atomically
from ._errors import CommandError
from ._parser import _INSTALL_PLOT, DEFAULT_PLOT
from ._progress import Progress

#: Pixels of the digits images lie in [0, 16], so each 64-pixel row has norm
#: at most 16 * 8 = 128: a bound known before seeing the data.
DIGITS_PUBLIC_NORM = 128.0


#: Number of principal components in the PCA part of the demo.
DEMO_COMPONENTS = 10


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
        Delta of the approximate-DP variants.

    Returns
    -------
    estimators : dict of str to estimator
        Unfitted estimators with ``data_norm=1``.
    """
    common = dict(data_norm=1.0)
    return {
        f"GaussCov (delta={delta:g})": GaussianCovariance(delta=delta, **common),
        f"ProjectionMech (delta={delta:g})": GaussianCovariance(
            delta=delta, projection="feasible", **common
        ),
        f"SeparateCov (delta={delta:g})": SeparateCovariance(delta=delta, **common),
        f"AdaptiveCov (delta={delta:g})": AdaptiveCovariance(delta=delta, **common),
        f"EigenSampling (delta={delta:g})": EigenSamplingCovariance(
            delta=delta, **common
        ),
        "LapCov (pure)": GaussianCovariance(delta=0.0, **common),
        "SeparateLapCov (pure)": SeparateCovariance(delta=0.0, **common),
        "AdaptiveLapCov (pure)": AdaptiveCovariance(delta=0.0, **common),
        "EigenSampling (pure)": EigenSamplingCovariance(delta=0.0, **common),
        # d = 64 is beyond the exact sampler: Gibbs with 200 sweeps (about 14
        # autocorrelation times); the fit warns about it, once for the demo.
        "NuclearLaplace (pure)": NuclearLaplaceCovariance(n_sweeps=200, **common),
        "NuclearLaplace+trace (pure)": NuclearLaplaceCovariance(
            project=True, n_sweeps=200, **common
        ),
    }


def demo_pcas(delta, n_components):
    """The private PCAs the demo compares, by display name.

    Parameters
    ----------
    delta : float
        Delta of the approximate-DP variants.
    n_components : int
        Number of components.

    Returns
    -------
    estimators : dict of str to estimator
        Unfitted PCAs with ``data_norm=1``.
    """
    common = dict(n_components=n_components, delta=delta, data_norm=1.0)
    return {
        f"PCA, default (delta={delta:g})": PCA(**common),
        f"PCA, SeparateCov (delta={delta:g})": PCA(
            covariance=SeparateCovariance(), **common
        ),
        f"PCA, top_k (delta={delta:g})": PCA(covariance="top_k", **common),
    }


def run_demo(
    epsilons=(0.1, 0.5, 1.0, 2.0, 5.0),
    *,
    delta=1e-6,
    repeats=10,
    seed=0,
    out=print,
    progress=None,
):
    """Print the error of every private estimator against the non-private one.

    Covariances: mean Frobenius error. PCA: variance captured by the private
    top-10 subspace relative to scikit-learn's.

    Parameters
    ----------
    epsilons : sequence of float, default=(0.1, 0.5, 1.0, 2.0, 5.0)
        Budgets to compare.
    delta : float, default=1e-6
        Delta of the approximate-DP variants.
    repeats : int, default=10
        Fits per cell (different noise), averaged.
    seed : int, default=0
        Seed of the noise, for a reproducible table (a seeded release is not
        private against whoever knows the seed; this is a demonstration).
    out : callable, default=print
        Where the lines of the table go.
    progress : dpcov.cli._progress.Progress, default=None
        Advanced once per (estimator, epsilon) cell, labelled with the cell
        being computed; its total should be :func:`n_demo_cells`.

    Returns
    -------
    errors : dict of str to ndarray
        Mean error per estimator and epsilon.
    """
    if progress is None:
        progress = Progress(0, enabled=False)
    X = load_unit_digits()
    reference = EmpiricalCovariance().fit(X).covariance_
    out(
        f"digits: n={X.shape[0]}, d={X.shape[1]}, rows scaled by the public bound "
        f"{DIGITS_PUBLIC_NORM:g} (data_norm=1), assume_centered=False"
    )
    out(f"Frobenius error ||C - C_sklearn||_F, mean of {repeats} fits")
    name_width = 34
    header = "estimator".ljust(name_width) + "".join(f"eps={e:<9g}" for e in epsilons)
    out(header)
    out("-" * len(header))
    rng = np.random.default_rng(seed)
    errors = {}
    for name, estimator in demo_estimators(delta).items():
        row = []
        for epsilon in epsilons:
            progress.update(0, label=f"{name}, eps={epsilon:g}")
            estimator.set_params(epsilon=epsilon, random_state=rng)
            with warnings.catch_warnings():
                # The Gibbs-sampler notice of NuclearLaplaceCovariance, stated
                # once in the table's notes below.
                warnings.filterwarnings("ignore", message=".*total-variation")
                # The demo sweeps small budgets on purpose: the table shows
                # the error that NoiseDominatedWarning would announce.
                warnings.simplefilter("ignore", NoiseDominatedWarning)
                fit_errors = [
                    np.linalg.norm(estimator.fit(X).covariance_ - reference)
                    for _ in range(repeats)
                ]
            row.append(np.mean(fit_errors))
            progress.update()
        errors[name] = np.array(row)
        out(name.ljust(name_width) + "".join(f"{v:<13.4g}" for v in row))
    zero = np.linalg.norm(reference)
    out("zero matrix (any budget)".ljust(name_width) + f"{zero:<13.4g}" * len(epsilons))
    out(
        "NuclearLaplace at d=64 samples its noise profile by a Gibbs chain: pure "
        "DP up to the chain's total-variation error."
    )
    errors["zero matrix"] = np.full(len(epsilons), zero)

    # PCA: variance captured by the private top-k subspace, relative to the
    # non-private top-k subspace (1 is perfect).
    k = DEMO_COMPONENTS
    values = np.linalg.eigvalsh(reference)[::-1]
    out("")
    out(f"PCA, k={k}: variance captured relative to sklearn's top-{k}, mean of fits")
    out(header)
    out("-" * len(header))
    for name, pca in demo_pcas(delta, k).items():
        row = []
        for epsilon in epsilons:
            progress.update(0, label=f"{name}, eps={epsilon:g}")
            pca.set_params(epsilon=epsilon, random_state=rng)
            captured = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NoiseDominatedWarning)
                for _ in range(repeats):
                    components = pca.fit(X).components_
                    captured.append(np.trace(components @ reference @ components.T))
            row.append(np.mean(captured) / values[:k].sum())
            progress.update()
        errors[name] = np.array(row)
        out(name.ljust(name_width) + "".join(f"{v:<13.4g}" for v in row))
    out(
        f"random {k}-subspace (expected)".ljust(name_width)
        + f"{k / X.shape[1]:<13.4g}" * len(epsilons)
    )
    return errors


def n_demo_cells(epsilons, delta):
    """Number of (estimator, epsilon) cells that :func:`run_demo` computes.

    Parameters
    ----------
    epsilons : sequence of float
        Budgets of the demo.
    delta : float
        Delta of the approximate-DP variants.

    Returns
    -------
    n_cells : int
        Covariance estimators and PCAs, times the number of budgets.
    """
    n_estimators = len(demo_estimators(delta)) + len(demo_pcas(delta, DEMO_COMPONENTS))
    return n_estimators * len(epsilons)


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


def plot_demo(errors, epsilons, path, *, delta=1e-6, n_features=64):
    """Save the demo's two panels as a PNG, atomically.

    Left: Frobenius error of each covariance estimator against epsilon
    (log-log), with the zero matrix as reference. Right: variance captured by
    each private PCA relative to scikit-learn's, with a random subspace as
    reference.

    Parameters
    ----------
    errors : dict of str to ndarray
        What :func:`run_demo` returned for ``epsilons`` and ``delta``.
    epsilons : sequence of float
        The budgets of ``errors``.
    path : str or os.PathLike
        The PNG to write; its directory must exist. It is written to a
        temporary file beside it first and then renamed, so a failure leaves
        no partial file.
    delta : float, default=1e-6
        The delta given to :func:`run_demo` (to find the estimators' names).
    n_features : int, default=64
        Dimension of the data (for the random-subspace reference).

    Returns
    -------
    path : str
        The path written.
    """
    Figure, FigureCanvasAgg = import_matplotlib()
    epsilons = np.asarray(epsilons, dtype=float)
    fig = Figure(figsize=(13, 5.5), layout="constrained")
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    families = {}
    for name in demo_estimators(delta):
        # One colour per algorithm: solid for (epsilon, delta), dashed for pure.
        family = name.split(" (")[0]
        family = "GaussCov" if family == "LapCov" else family.replace("LapCov", "Cov")
        color = families.setdefault(family, f"C{len(families)}")
        style = "--" if "(pure)" in name else "-"
        left.loglog(
            epsilons, errors[name], style, color=color, marker="o", ms=3, label=name
        )
    left.loglog(
        epsilons, errors["zero matrix"], ":", color="black", label="zero matrix"
    )
    left.set(
        xlabel="epsilon",
        ylabel="mean Frobenius error vs sklearn",
        title="Covariance (digits, data_norm=1)",
    )
    left.legend(fontsize=7)
    k = DEMO_COMPONENTS
    for name in demo_pcas(delta, k):
        right.semilogx(epsilons, errors[name], marker="o", ms=3, label=name)
    right.semilogx(
        epsilons,
        np.full(len(epsilons), k / n_features),
        ":",
        color="black",
        label=f"random {k}-subspace",
    )
    right.set(
        xlabel="epsilon",
        ylabel=f"variance captured / sklearn's top-{k}",
        title=f"PCA, k={k}",
    )
    right.legend(fontsize=7)
    write_atomically(
        [(path, lambda handle: fig.savefig(handle, format="png", dpi=120))]
    )
    return os.fspath(path)


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
