"""Reproduce the real-data comparison of Amin et al. (NeurIPS 2019), Figure 1.

Iterative eigenvector sampling (:class:`~dpcov.covariance.EigenSamplingCovariance`)
against LapCov/GaussCov, SeparateCov and the zero matrix on two small real
datasets, over a log grid of epsilon, with two metrics:

1. Frobenius error ``||C - X^T X / n||_F`` of the released ``C``;
2. ridge-regression error: for each column ``j``, ``beta_j = (C_{-j,-j} +
   lam I)^{-1} C_{-j,j}`` is computed from the private ``C`` alone and scored
   by the mean squared error of predicting column ``j`` from the others on the
   (scaled) data, averaged over ``j``; ``lam = 1e-3`` in the units of
   ``X^T X / n``. The same error for the exact ``X^T X / n`` is the
   non-private reference.

Data: Wine (178 x 13 features plus the class label as a 14th column, as in the
paper) and, in place of UCI Airfoil (not available offline), Diabetes (442 x
10 features plus the target as an 11th column). Every column is standardised
(z-scored) so that no column dominates, then all rows are divided by the
largest row norm so that ``||x|| <= 1``. This scaling is data-dependent, so it
is not itself private: it is the paper's implied preprocessing, used here for
reproduction only. No further centring: the target is the second moment
``X^T X / n`` and every estimator runs with ``data_norm=1.0``,
``assume_centered=True`` and its default clamp projection.

Estimators, all at the same budget: EigenSampling with ``allocation`` x
``exponent`` in {adaptive x tight (the default), adaptive x paper (the paper's
Algorithm 1 as written), uniform x tight}, GaussianCovariance (``delta=0``:
LapCov) and SeparateCovariance; and the paper's own baselines as its text
states them ("ADK19-baseline": Laplace noise of scale ``2 d / epsilon`` on
``X^T X`` under pure DP, the classical Gaussian mechanism as printed in the
zCDP panel; see :func:`adk19_baseline`). Two panels: pure DP (``delta=0``) and zCDP
(``delta=1e-6``, converted to rho by the estimators). Each point is the mean
(and standard error) over ``--repeats`` seeds; repetition ``r`` uses
``random_state=1000 r + 7`` for every estimator.

    python benchmarks/bench_adk19.py --repeats 100 --out benchmarks/results

writes ``adk19.json``, ``adk19.csv``, ``adk19.png`` and ``adk19.rst`` (the
tables) to ``--out``. Use ``--quick`` for a smoke run (5 repetitions).
"""

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes, load_wine

from dpcov.covariance import (
    EigenSamplingCovariance,
    GaussianCovariance,
    SeparateCovariance,
)
from dpcov.mechanisms import project_psd_bounded

EPSILONS = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
PANELS = {"pure": 0.0, "zcdp": 1e-6}
LAM = 1e-3
METRICS = ["frobenius", "ridge"]
# (label, class, extra parameters); GaussianCovariance with delta=0 is LapCov.
ESTIMATORS = [
    ("ES-adapt-tight", EigenSamplingCovariance, dict(allocation="adaptive")),
    (
        "ES-adapt-paper",
        EigenSamplingCovariance,
        dict(allocation="adaptive", exponent="paper"),
    ),
    ("ES-unif-tight", EigenSamplingCovariance, dict(allocation="uniform")),
    ("Gauss/LapCov", GaussianCovariance, {}),
    ("SeparateCov", SeparateCovariance, {}),
]
METHODS = [name for name, _, _ in ESTIMATORS] + ["ADK19-baseline", "Zero"]


def adk19_baseline(X, epsilon, delta, rng):
    """The baselines of Amin et al. (2019), as their text states them (not dpcov's).

    Pure DP: symmetric Laplace noise of scale ``2 d / epsilon`` on ``X^T X``
    (the paper's L1 sensitivity, looser than dpcov's LapCov). zCDP panel: the
    classical Gaussian mechanism with s.d. ``sqrt(2 ln(1.25/delta)) / epsilon``
    per entry as printed, which omits the ``sqrt(2)`` L2 sensitivity (so it is
    not (epsilon, delta)-DP as stated; shown for reproduction only). Both are
    divided by ``n`` and clamped to ``[0, 1]`` like dpcov's estimators.
    """
    n, d = X.shape
    if delta == 0:
        upper = rng.laplace(0.0, 2 * d / epsilon, (d, d))
    else:
        upper = rng.normal(0.0, np.sqrt(2 * np.log(1.25 / delta)) / epsilon, (d, d))
    noise = np.triu(upper) + np.triu(upper, 1).T
    return project_psd_bounded(X.T @ X / n + noise / n, 1.0)


def load(name):
    """Standardised data with the label/target as the last column, ||x|| <= 1."""
    loader = {"wine": load_wine, "diabetes": load_diabetes}[name]
    features, target = loader(return_X_y=True)
    X = np.column_stack([features, target]).astype(float)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    # Data-dependent scaling (not private): reproduction only.
    return X / np.linalg.norm(X, axis=1).max()


def ridge_error(C, X, lam=LAM):
    """Mean over columns j of the MSE of predicting X[:, j] from the others."""
    d = X.shape[1]
    errors = []
    for j in range(d):
        rest = np.arange(d) != j
        beta = np.linalg.solve(C[np.ix_(rest, rest)] + lam * np.eye(d - 1), C[rest, j])
        errors.append(np.mean((X[:, j] - X[:, rest] @ beta) ** 2))
    return float(np.mean(errors))


def _errors(X, epsilon, delta, seed):
    target = X.T @ X / X.shape[0]
    params = dict(
        epsilon=epsilon,
        delta=delta,
        data_norm=1.0,
        assume_centered=True,
        random_state=seed,
    )
    out = {}
    for name, cls, extra in ESTIMATORS:
        C = cls(**params, **extra).fit(X).covariance_
        out[name] = (float(np.linalg.norm(C - target)), ridge_error(C, X))
    C = adk19_baseline(X, epsilon, delta, np.random.default_rng(seed))
    out["ADK19-baseline"] = (float(np.linalg.norm(C - target)), ridge_error(C, X))
    zero = np.zeros_like(target)
    out["Zero"] = (float(np.linalg.norm(target)), ridge_error(zero, X))
    return out


def run_point(X, epsilon, delta, repeats):
    runs = [_errors(X, epsilon, delta, 1000 * r + 7) for r in range(repeats)]
    res = {}
    for k, metric in enumerate(METRICS):
        res[metric] = {}
        for m in METHODS:
            vals = np.array([run[m][k] for run in runs])
            res[metric][m] = {
                "mean": float(vals.mean()),
                "sem": float(vals.std(ddof=1) / np.sqrt(len(vals))),
            }
    return res


def _table(title, rows, metric, reference=None):
    head = f"{'eps':>6s}  " + "  ".join(f"{m:>14s}" for m in METHODS)
    lines = [title, "", head]
    for eps, res in rows:
        best = min(METHODS, key=lambda m: res[metric][m]["mean"])
        cells = []
        for m in METHODS:
            r = res[metric][m]
            cell = f"{r['mean']:.3e}" + ("*" if m == best else " ")
            cells.append(f"{cell:>14s}")
        lines.append(f"{eps:>6g}  " + "  ".join(cells))
    if reference is not None:
        lines.append(f"non-private reference: {reference:.4e}")
    return lines


def _rst_table(title, rows, metric, reference=None):
    if reference is not None:
        title += f" (non-private: {reference:.3g})"
    lines = [
        f".. csv-table:: {title}",
        "   :header: " + ", ".join(["epsilon"] + METHODS),
        "",
    ]
    for eps, res in rows:
        best = min(METHODS, key=lambda m: res[metric][m]["mean"])
        cells = [f"{eps:g}"]
        for m in METHODS:
            cell = f"{res[metric][m]['mean']:.3g}"
            cells.append(f"**{cell}**" if m == best else cell)
        lines.append("   " + ", ".join(cells))
    return lines + [""]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats = min(args.repeats, 5) if args.quick else args.repeats
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {
        "repeats": repeats,
        "lam": LAM,
        "epsilons": EPSILONS,
        "deltas": PANELS,
        "datasets": {},
    }
    text = [
        f"Mean error over {repeats} repetitions (* = best); lam = {LAM:g}",
        "",
    ]
    rst = []
    start = time.time()
    for dataset in ["wine", "diabetes"]:
        X = load(dataset)
        n, d = X.shape
        exact = X.T @ X / n
        reference = ridge_error(exact, X)
        entry = {"n": n, "d": d, "nonprivate_ridge": reference, "panels": {}}
        for panel, delta in PANELS.items():
            rows = []
            for eps in EPSILONS:
                rows.append((eps, run_point(X, eps, delta, repeats)))
            print(f"[{time.time() - start:6.1f}s] {dataset} {panel} done", flush=True)
            entry["panels"][panel] = rows
            for metric in METRICS:
                ref = reference if metric == "ridge" else None
                title = f"{dataset} (n={n}, d={d}), {panel} delta={delta:g}, {metric}"
                text += _table(title, rows, metric, ref) + [""]
                rst += _rst_table(title, rows, metric, ref)
        results["datasets"][dataset] = entry
    elapsed = time.time() - start
    results["seconds"] = elapsed
    text.append(f"total time {elapsed:.1f} s")
    print("\n".join(text))
    (out / "adk19.json").write_text(json.dumps(results, indent=1))
    with open(out / "adk19.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(
            ["dataset", "panel", "epsilon", "metric", "method"] + ["mean", "sem"]
        )
        for dataset, entry in results["datasets"].items():
            for panel, rows in entry["panels"].items():
                for eps, res in rows:
                    for metric in METRICS:
                        for m in METHODS:
                            r = res[metric][m]
                            writer.writerow(
                                [dataset, panel, eps, metric, m, r["mean"], r["sem"]]
                            )
    (out / "adk19.rst").write_text("\n".join(rst))
    _plot(results, out / "adk19.png")


def _plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(results["datasets"].items())
    fig, axes = plt.subplots(len(datasets), 2, figsize=(10, 3.6 * len(datasets)))
    for row, (dataset, entry) in zip(axes, datasets, strict=True):
        rows = entry["panels"]["pure"]
        xs = [eps for eps, _ in rows]
        for ax, metric in zip(row, METRICS, strict=True):
            for m in METHODS:
                ax.errorbar(
                    xs,
                    [r[metric][m]["mean"] for _, r in rows],
                    yerr=[r[metric][m]["sem"] for _, r in rows],
                    marker="o",
                    ms=3,
                    label=m,
                )
            if metric == "ridge":
                ax.axhline(
                    entry["nonprivate_ridge"], color="k", ls="--", label="non-private"
                )
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("epsilon (pure DP)")
            ax.set_ylabel("Frobenius error" if metric == "frobenius" else "ridge MSE")
            ax.set_title(f"{dataset} (n={entry['n']}, d={entry['d']})")
    handles, labels = axes[0, 1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8)
    fig.suptitle("Amin et al. (2019) reproduction, pure DP")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
