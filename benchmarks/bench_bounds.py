"""What a wrong row-norm bound costs: error against data_norm / (largest row norm).

Relative Frobenius error ``||C_hat - C||_F / ||C||_F`` of
:class:`~dpcov.covariance.GaussianCovariance`,
:class:`~dpcov.covariance.SeparateCovariance` and
:class:`~dpcov.covariance.AdaptiveCovariance`, with their defaults (centred
about a private mean, ``delta = 1e-6``, eigenvalue clamp), where ``C`` is the
exact covariance of the rows (``np.cov(X.T, bias=True)``, scikit-learn's
``EmpiricalCovariance``), as ``data_norm`` runs over a logarithmic grid of
multiples of the rows' largest norm, ``data_norm = ratio * max_i ||x_i||``
with ``ratio = 2**(k / 2)``, ``k = -9 .. 10`` (0.044 to 32). The largest norm
places the grid only: no estimator reads it. Below 1 the bound clips rows
(bias); above 1 it only adds noise (the Gaussian mechanism's standard
deviation grows as ``data_norm**2``). The reference is the private radius:
``data_norm=None``, which spends 1/8 of the budget on finding a bound (see
the privacy-model chapter). The zero matrix has relative error 1.

Data, ``n = 20000`` rows in ``d = 20`` dimensions, a new dataset in each
repetition:

- ``gaussian``: rows ``z @ A`` with ``z ~ N(0, I)`` and ``A`` a matrix of
  Uniform(0, 1) entries (the generator of Amin et al., 2019): Gaussian rows
  with one dominant direction, whose largest norm is about 4.6 times the
  median norm;
- ``zipf``: :func:`dpcov.datasets.make_zipf_norms` with four norm buckets
  (Dong, Liang and Yi, 2022, Section 7.1): the same directions, rescaled so
  that most rows are short (norm 1/8) and 1.3% have the largest norm, 1.

Budgets: (epsilon, 1e-6) for epsilon in {0.5, 2, 8}. Repetition ``r`` draws
its rows with ``random_state = 1000 r + 7`` and gives every fit its own fixed
``random_state``; every estimator and bound sees the same rows. The tables
give the median over the repetitions with a 95% percentile bootstrap interval
(2000 resamples).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_bounds.py --repeats 30 --n-jobs 2

writes ``bounds.json`` (every run), ``bounds.png`` and ``bounds.rst`` to
``--out``, the figure to ``docs/_static/bench_bounds.png`` and the tables, with
this description, to ``docs/user_guide/_bench_bounds.rst`` (not with
``--quick`` or ``--no-docs``). ``--quick`` is a smoke run (3 repetitions,
epsilon 2, a coarse grid).

``--angles`` runs a separate measurement instead: the sine of the angle
between the top eigenvector of each estimate and that of ``X.T @ X / n``, for
unit-norm rows (``make_zipf_norms`` with one bucket, ``d = 10``,
``data_norm = 1``, ``assume_centered=True``) at ``n`` in {1e4, 1e5, 1e6} and
epsilon in {1, 10}, for :class:`~dpcov.covariance.EigenSamplingCovariance`
and ``PCA(covariance="top_k")`` (the exponential mechanism) against
:class:`~dpcov.covariance.GaussianCovariance` and
:class:`~dpcov.covariance.SeparateCovariance` (additive noise), each under
pure DP (``delta = 0``) and, where it has one, its zCDP form; medians over
``--repeats`` datasets (10 by default there). It prints a table and writes
``angles.json`` to ``--out``.
"""

import argparse
import json
import os
import shutil
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    SeparateCovariance,
)
from dpcov.datasets import make_zipf_norms
from dpcov.decomposition import PCA
from dpcov.exceptions import NoiseDominatedWarning

try:  # run as a script from the repository root or from benchmarks/
    from _machine import cpu_model
    from _stats import bootstrap_interval
except ImportError:  # pragma: no cover
    from benchmarks._machine import cpu_model
    from benchmarks._stats import bootstrap_interval

ROOT = Path(__file__).resolve().parents[1]
N_SAMPLES, N_FEATURES, N_BUCKETS = 20_000, 20, 4
EPSILONS = [0.5, 2.0, 8.0]
DELTA = 1e-6
RATIOS = [2.0 ** (k / 2) for k in range(-9, 11)]
QUICK_RATIOS = [2.0**k for k in range(-4, 6, 2)]
# The table shows every other grid point (the powers of 2).
TABLE_RATIOS = [r for r in RATIOS if float(np.log2(r)).is_integer()]
ESTIMATORS = {
    "GaussianCovariance": GaussianCovariance,
    "SeparateCovariance": SeparateCovariance,
    "AdaptiveCovariance": AdaptiveCovariance,
}
DATASETS = ["gaussian", "zipf"]
COLORS = {
    "GaussianCovariance": "tab:blue",
    "SeparateCovariance": "tab:orange",
    "AdaptiveCovariance": "tab:green",
}


def make_rows(dataset, seed):
    """The rows of one repetition."""
    if dataset == "zipf":
        return make_zipf_norms(
            N_SAMPLES, N_FEATURES, n_buckets=N_BUCKETS, random_state=seed
        )
    rng = np.random.RandomState(seed)
    # make_zipf_norms's directions before its rescaling: z @ A, A uniform.
    z = rng.standard_normal((N_SAMPLES, N_FEATURES))
    return z @ rng.uniform(size=(N_FEATURES, N_FEATURES))


def one_repetition(dataset, epsilon, r, ratios):
    """Relative errors of every estimator at every bound on repetition ``r``."""
    warnings.simplefilter("ignore", NoiseDominatedWarning)  # part of the result
    X = make_rows(dataset, 1000 * r + 7)
    target = np.cov(X.T, bias=True)
    scale = float(np.linalg.norm(target))
    max_norm = float(np.linalg.norm(X, axis=1).max())
    out = {"max_norm": max_norm, "errors": {}, "radius": {}}
    for j, (name, cls) in enumerate(ESTIMATORS.items()):
        errors = []
        for i, ratio in enumerate(ratios):
            est = cls(
                epsilon=epsilon,
                delta=DELTA,
                data_norm=ratio * max_norm,
                random_state=1000 * r + 100 * j + i,
            ).fit(X)
            errors.append(float(np.linalg.norm(est.covariance_ - target)) / scale)
        # The private radius: data_norm=None.
        est = cls(epsilon=epsilon, delta=DELTA, random_state=1000 * r + 100 * j + 99)
        est.fit(X)
        out["errors"][name] = errors
        out["errors"][name + " (None)"] = (
            float(np.linalg.norm(est.covariance_ - target)) / scale
        )
        out["radius"][name] = float(est.data_norm_) / max_norm
    return out


def summarise(runs, ratios):
    """Medians with bootstrap intervals, per estimator and bound."""
    summary = {}
    for name in ESTIMATORS:
        values = np.array([run["errors"][name] for run in runs])  # (reps, ratios)
        summary[name] = {
            "median": [float(np.median(values[:, i])) for i in range(len(ratios))],
            "ci": [bootstrap_interval(values[:, i], rng=0) for i in range(len(ratios))],
        }
        none = np.array([run["errors"][name + " (None)"] for run in runs])
        radius = np.array([run["radius"][name] for run in runs])
        summary[name]["none_median"] = float(np.median(none))
        summary[name]["none_ci"] = bootstrap_interval(none, rng=0)
        summary[name]["radius_median"] = float(np.median(radius))
        summary[name]["radius_range"] = [float(radius.min()), float(radius.max())]
    max_norms = [run["max_norm"] for run in runs]
    summary["max_norm_median"] = float(np.median(max_norms))
    return summary


def _cell(value, interval):
    low, high = interval
    return f"{value:.3g} [{low:.3g}, {high:.3g}]"


def rst_tables(results):
    lines = []
    ratios = results["ratios"]
    shown = [i for i, r in enumerate(ratios) if r in TABLE_RATIOS]
    names = list(ESTIMATORS)
    for dataset in results["datasets"]:
        rows = [row for row in results["rows"] if row["dataset"] == dataset]
        lines += [
            f".. csv-table:: {dataset} rows (n = {N_SAMPLES}, d = {N_FEATURES}): "
            f"median relative Frobenius error over {results['repeats']} "
            "repetitions [95% bootstrap interval]; the last row of each epsilon "
            "is data_norm=None, with the median radius found over the largest "
            "norm",
            "   :header: epsilon, data_norm / largest norm, "
            + ", ".join(f'"{n}"' for n in names),
            "",
        ]
        for row in rows:
            s = row["summary"]
            for i in shown:
                cells = [f"{row['epsilon']:g}", f"{ratios[i]:g}"]
                cells += [_cell(s[n]["median"][i], s[n]["ci"][i]) for n in names]
                lines.append("   " + ", ".join(f'"{c}"' for c in cells))
            radius = " / ".join(f"{s[n]['radius_median']:.2g}" for n in names)
            cells = [f"{row['epsilon']:g}", f"None (radius {radius})"]
            cells += [_cell(s[n]["none_median"], s[n]["none_ci"]) for n in names]
            lines.append("   " + ", ".join(f'"{c}"' for c in cells))
        lines.append("")
    return lines


def text_tables(results):
    ratios = results["ratios"]
    names = list(ESTIMATORS)
    lines = []
    for row in results["rows"]:
        s = row["summary"]
        lines.append(
            f"{row['dataset']} eps={row['epsilon']:g}: median relative error "
            f"(largest norm {s['max_norm_median']:.3g})"
        )
        lines.append(f"{'ratio':>8s}  " + "  ".join(f"{n[:-10]:>10s}" for n in names))
        for i, ratio in enumerate(ratios):
            lines.append(
                f"{ratio:8.3g}  "
                + "  ".join(f"{s[n]['median'][i]:10.3g}" for n in names)
            )
        lines.append(
            f"{'None':>8s}  " + "  ".join(f"{s[n]['none_median']:10.3g}" for n in names)
        )
        lines.append(
            f"{'radius':>8s}  "
            + "  ".join(f"{s[n]['radius_median']:10.3g}" for n in names)
        )
        lines.append("")
    return lines


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratios = np.array(results["ratios"])
    datasets, epsilons = results["datasets"], results["epsilons"]
    fig, axes = plt.subplots(
        len(datasets),
        len(epsilons),
        figsize=(4.2 * len(epsilons), 3.4 * len(datasets)),
        squeeze=False,
        sharex=True,
    )
    for row in results["rows"]:
        ax = axes[datasets.index(row["dataset"]), epsilons.index(row["epsilon"])]
        s = row["summary"]
        for name in ESTIMATORS:
            color = COLORS[name]
            ci = np.array(s[name]["ci"])
            ax.plot(
                ratios, s[name]["median"], color=color, marker="o", ms=3, label=name
            )
            ax.fill_between(ratios, ci[:, 0], ci[:, 1], color=color, alpha=0.2)
            ax.axhline(
                s[name]["none_median"],
                color=color,
                ls="--",
                lw=1,
                label=f"{name}, data_norm=None",
            )
        ax.axhline(1.0, color="grey", ls=":", lw=1, label="zero matrix")
        ax.axvline(1.0, color="black", lw=0.6, alpha=0.5)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(
            f"{row['dataset']} rows, epsilon = {row['epsilon']:g}", fontsize=10
        )
        if datasets.index(row["dataset"]) == len(datasets) - 1:
            ax.set_xlabel("data_norm / largest row norm")
        ax.set_ylabel("relative Frobenius error")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    fig.suptitle(
        f"Error against the row-norm bound: n = {N_SAMPLES}, d = {N_FEATURES}, "
        f"delta = {DELTA:g}; medians of {results['repeats']} repetitions "
        "(bands: 95% bootstrap intervals)",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def docs_snippet(results, tables):
    minutes, seconds = divmod(round(results["seconds"]), 60)
    took = f"{minutes} min {seconds} s" if minutes else f"{seconds} s"
    intro = f"""\
Benchmark: error against the norm bound
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~

``OPENBLAS_NUM_THREADS=1 python benchmarks/bench_bounds.py --repeats \
{results["repeats"]} --n-jobs {results["n_jobs"]}``
({took} on {results["cores"]} cores, {results["cpu"]}) fits
:class:`~dpcov.covariance.GaussianCovariance`,
:class:`~dpcov.covariance.SeparateCovariance` and
:class:`~dpcov.covariance.AdaptiveCovariance` with their defaults (a private
mean, ``delta = 1e-6``) at ``data_norm`` equal to 0.044 to 32 times the
largest row norm (the benchmark reads the largest norm to place the grid; no
estimator sees it), and with ``data_norm=None`` (the private radius, dashed
lines). The error is ``||C_hat - C||_F / ||C||_F`` with ``C`` the exact
covariance of the rows; the zero matrix scores 1 (dotted line). Two kinds
of rows, ``n = {N_SAMPLES}``, ``d = {N_FEATURES}``, new rows in each
repetition: *gaussian*, Gaussian rows with one dominant direction (the
generator of Amin et al., 2019; the largest norm is about 4.6 times the
median), and *zipf*, the same directions rescaled so that most rows are
short (norm 1/8) and 1.3% have the largest norm (Dong, Liang and Yi, 2022,
Section 7.1). Medians over {results["repeats"]} repetitions with 95%
bootstrap intervals; the script's docstring lists the ``random_state`` of
every fit. AdaptiveCovariance's intervals are wide above 1: its threshold
is chosen privately on a grid of halvings of ``data_norm``, and the choice
varies between repetitions.

.. image:: /_static/bench_bounds.png
   :alt: Relative Frobenius error of three covariance estimators against
         data_norm over the largest row norm, at epsilon 0.5, 2 and 8, on
         Gaussian and Zipf-norm rows, with the private radius as dashed lines.
"""
    return intro.splitlines() + [""] + tables


# --- The exponential mechanism's angle error (``--angles``) -----------------

ANGLE_FEATURES = 10
ANGLE_SAMPLES = [10_000, 100_000, 1_000_000]
ANGLE_EPSILONS = [1.0, 10.0]
ANGLE_METHODS = {
    "EigenSampling, pure": lambda e, s: EigenSamplingCovariance(
        epsilon=e, delta=0.0, random_state=s
    ),
    "EigenSampling, zCDP": lambda e, s: EigenSamplingCovariance(
        epsilon=e, delta=DELTA, random_state=s
    ),
    "PCA top_k, pure": lambda e, s: PCA(
        1, covariance="top_k", epsilon=e, delta=0.0, random_state=s
    ),
    "Gaussian, pure (Laplace)": lambda e, s: GaussianCovariance(
        epsilon=e, delta=0.0, random_state=s
    ),
    "Gaussian, zCDP": lambda e, s: GaussianCovariance(
        epsilon=e, delta=DELTA, random_state=s
    ),
    "Separate, pure (Laplace)": lambda e, s: SeparateCovariance(
        epsilon=e, delta=0.0, random_state=s
    ),
}


def _top_eigenvector(matrix):
    return np.linalg.eigh(matrix)[1][:, -1]


def _sine(u, v):
    cosine = abs(float(u @ v)) / float(np.linalg.norm(u) * np.linalg.norm(v))
    return float(np.sqrt(max(0.0, 1.0 - cosine**2)))


def angle_repetition(n_samples, r):
    """Sine of the top-eigenvector angle of every method on repetition ``r``."""
    warnings.simplefilter("ignore", NoiseDominatedWarning)
    X = make_zipf_norms(
        n_samples, ANGLE_FEATURES, n_buckets=1, random_state=1000 * r + 7
    )
    truth = _top_eigenvector(X.T @ X / n_samples)
    out = {}
    for epsilon in ANGLE_EPSILONS:
        for j, (name, make) in enumerate(ANGLE_METHODS.items()):
            est = make(epsilon, 1000 * r + 11 + j)
            est.set_params(data_norm=1.0, assume_centered=True).fit(X)
            if isinstance(est, PCA):
                top = est.components_[0]
            else:
                top = _top_eigenvector(est.covariance_)
            out[f"{epsilon:g}|{name}"] = _sine(truth, top)
    return out


def run_angles(args):
    repeats = args.repeats if args.repeats_given else 10
    start = time.time()
    rows = []
    for n_samples in ANGLE_SAMPLES:
        runs = Parallel(n_jobs=args.n_jobs)(
            delayed(angle_repetition)(n_samples, r) for r in range(repeats)
        )
        for epsilon in ANGLE_EPSILONS:
            medians = {
                name: float(np.median([run[f"{epsilon:g}|{name}"] for run in runs]))
                for name in ANGLE_METHODS
            }
            rows.append({"n": n_samples, "epsilon": epsilon, "median": medians})
    seconds = time.time() - start
    width = 26
    lines = [
        f"sine of the top-eigenvector angle, median of {repeats} repetitions, "
        f"d = {ANGLE_FEATURES}, unit-norm rows",
        f"{'n':>8s} {'eps':>4s}  "
        + "  ".join(f"{name:>{width}s}" for name in ANGLE_METHODS),
    ]
    for row in rows:
        lines.append(
            f"{row['n']:>8d} {row['epsilon']:>4g}  "
            + "  ".join(f"{row['median'][m]:>{width}.2e}" for m in ANGLE_METHODS)
        )
    lines.append(f"total time {seconds:.1f} s on {cpu_model()}")
    print("\n".join(lines))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "angles.json").write_text(
        json.dumps({"repeats": repeats, "rows": rows, "seconds": seconds}, indent=1)
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--docs", default=str(ROOT / "docs"), help="docs folder")
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--angles",
        action="store_true",
        help="measure the exponential mechanism's angle error instead",
    )
    args = parser.parse_args()
    args.repeats_given = args.repeats is not None
    if args.angles:
        run_angles(args)
        return
    repeats = 30 if args.repeats is None else args.repeats
    repeats = min(repeats, 3) if args.quick else repeats
    epsilons = [2.0] if args.quick else EPSILONS
    ratios = QUICK_RATIOS if args.quick else RATIOS
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {
        "n_samples": N_SAMPLES,
        "n_features": N_FEATURES,
        "delta": DELTA,
        "repeats": repeats,
        "n_jobs": args.n_jobs,
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "ratios": ratios,
        "epsilons": epsilons,
        "datasets": DATASETS,
        "rows": [],
    }
    start = time.time()
    for dataset in DATASETS:
        for epsilon in epsilons:
            runs = Parallel(n_jobs=args.n_jobs)(
                delayed(one_repetition)(dataset, epsilon, r, ratios)
                for r in range(repeats)
            )
            results["rows"].append(
                {
                    "dataset": dataset,
                    "epsilon": epsilon,
                    "summary": summarise(runs, ratios),
                    "runs": runs,
                }
            )
            print(
                f"[{time.time() - start:6.1f}s] {dataset} eps={epsilon:g}", flush=True
            )
    results["seconds"] = time.time() - start
    text = text_tables(results)
    text.append(f"total time {results['seconds']:.1f} s on {results['cpu']}")
    print("\n".join(text))
    tables = rst_tables(results)
    (out / "bounds.json").write_text(json.dumps(results, indent=1))
    (out / "bounds.rst").write_text("\n".join(tables))
    plot(results, out / "bounds.png")
    if not (args.quick or args.no_docs):
        docs = Path(args.docs)
        shutil.copyfile(out / "bounds.png", docs / "_static" / "bench_bounds.png")
        snippet = docs_snippet(results, tables)
        (docs / "user_guide" / "_bench_bounds.rst").write_text("\n".join(snippet))


if __name__ == "__main__":
    main()
