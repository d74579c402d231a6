"""Private radius: exponential mechanism against sparse vector.

When ``data_norm`` and ``bounds`` are None, the covariance estimators find a
row-norm bound privately over the grid of radii ``2**32 ... 2**-32`` from one
pass of norm counts. Two mechanisms can do it
(:mod:`dpcov.mechanisms._radius`): the sparse-vector search (1/8 of the
budget; it needs 4,411 rows at ``epsilon = 1, delta = 1e-6``) and the
exponential mechanism (3/16 of the budget; 272 rows). This script measures
the relative Frobenius error ``||C_hat - C||_F / ||C||_F`` of SeparateCov and
AdaptiveCov with each, median over repetitions, on Gaussian rows with a
decaying spectrum (feature ``i`` has standard deviation ``1 / i``, as in the
synthetic experiments of Dong, Liang and Yi, 2022) and on heavy-tailed rows
(the same, each row scaled by ``0.5 + Pareto(3)``). Each fit is
(epsilon, 1e-6)-DP in total: the radius step takes its share of the zCDP
budget, the estimator (private mean and covariance) the rest, with the
radius as its ``data_norm``; ``EM 1/8`` is the exponential mechanism at the
sparse vector's share, for the price of the larger share.

    python benchmarks/bench_radius.py --repeats 6 --out benchmarks/results

writes ``radius.json`` and ``radius.rst``; ``--quick`` for a smoke run.
"""

import argparse
import json
import warnings
from itertools import product
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from dpcov.accounting import ZCDP, zcdp_rho
from dpcov.covariance import AdaptiveCovariance, SeparateCovariance
from dpcov.mechanisms import (
    exponential_radius_min_samples,
    private_radius_exponential,
    private_radius_from_counts,
    private_radius_min_samples,
    radius_counts,
)

GRID = {"d": [10, 50], "n": [1_000, 10_000, 100_000], "epsilon": [0.5, 1.0, 2.0]}
#: (name, share of the budget, mechanism)
RADII = [("SVT 1/8", 0.125, "svt"), ("EM 1/8", 0.125, "em"), ("EM 3/16", 0.1875, "em")]
ESTIMATORS = {"Sep": SeparateCovariance, "Ada": AdaptiveCovariance}


def _rows(n, d, seed, heavy):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.arange(1, d + 1)
    if heavy:
        X *= 0.5 + rng.pareto(3.0, size=(n, 1))
    return X


def _errors(n, d, epsilon, seed, heavy):
    X = _rows(n, d, seed, heavy)
    target = np.cov(X.T, bias=True)
    counts = radius_counts(np.linalg.norm(X, axis=1))
    rho = zcdp_rho(epsilon, 1e-6)
    rng = np.random.default_rng(seed)
    out = {}
    for name, share, mechanism in RADII:
        step = ZCDP(share * rho)
        if mechanism == "svt":
            eps = step.pure_epsilon()
            if n < private_radius_min_samples(eps):
                continue
            radius = private_radius_from_counts(counts, epsilon=eps, rng=rng)
        else:
            eps = step.exponential_epsilon()
            if n < exponential_radius_min_samples(eps):
                continue
            radius = private_radius_exponential(counts, n, epsilon=eps, rng=rng)
        for short, cls in ESTIMATORS.items():
            est = cls(rho=(1 - share) * rho, data_norm=radius, random_state=rng)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X)
            error = np.linalg.norm(est.covariance_ - target) / np.linalg.norm(target)
            out[f"{short} {name}"] = float(error)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    grid = {k: v[:2] for k, v in GRID.items()} if args.quick else GRID
    repeats = 2 if args.quick else args.repeats
    columns = [f"{e} {r}" for e in ESTIMATORS for r, _, _ in RADII]
    rows = []
    for heavy, d, n, epsilon in product(
        [False, True], grid["d"], grid["n"], grid["epsilon"]
    ):
        runs = Parallel(n_jobs=args.n_jobs)(
            delayed(_errors)(n, d, epsilon, 1000 * r + 3, heavy) for r in range(repeats)
        )
        row = {"tails": "heavy" if heavy else "gaussian", "d": d, "n": n}
        row["epsilon"] = epsilon
        for c in columns:
            values = [r[c] for r in runs if c in r]
            row[c] = float(np.median(values)) if values else None
        rows.append(row)
        print(row, flush=True)
    text = [
        f"Relative Frobenius error, median of {repeats} repetitions "
        "(- : too few rows for that radius)",
        "",
        f"{'tails':>8s} {'d':>3s} {'n':>7s} {'eps':>4s}  "
        + "  ".join(f"{c:>11s}" for c in columns),
    ]
    for row in rows:
        cells = ["-" if row[c] is None else f"{row[c]:.3f}" for c in columns]
        text.append(
            f"{row['tails']:>8s} {row['d']:>3d} {row['n']:>7d} {row['epsilon']:>4g}  "
            + "  ".join(f"{cell:>11s}" for cell in cells)
        )
    print("\n".join(text))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "radius.json").write_text(json.dumps(rows, indent=1))
    (out / "radius.rst").write_text(
        "::\n\n" + "\n".join("    " + t for t in text) + "\n"
    )


if __name__ == "__main__":
    main()
