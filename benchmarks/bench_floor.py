"""What an eigenvalue floor on covariance_ costs in Frobenius error.

``eigenvalue_floor="auto"`` raises every eigenvalue of the released covariance
to at least the public standard deviation of the noise on an eigenvalue, so
that ``covariance_`` and ``precision_`` are invertible. (``score`` floors its
model at the same level whatever ``eigenvalue_floor`` is, so searches rank
either way; with ``eigenvalue_floor=0``, the default and the papers' setting,
``covariance_`` is often singular.) This script measures the price of the
floor on ``covariance_``, the ratio of the mean
Frobenius errors ``||C_hat - X^T X / n||_F`` with the floor and without, on the
Zipf-norm data of Dong, Liang and Yi (2022), Section 7.1
(:func:`dpcov.datasets.make_zipf_norms`, rows in the unit ball, ``N = 4``
norm buckets), over a grid of ``n``, ``d`` and ``rho``, for GaussCov,
SeparateCov and AdaptiveCov. Both fits of a pair use the same data and the
same noise (the same ``random_state``): only the post-processing differs.

    python benchmarks/bench_floor.py --repeats 10 --out benchmarks/results

writes ``floor.json`` and ``floor.rst`` to ``--out``; ``--quick`` for a smoke
run.
"""

import argparse
import json
from itertools import product
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.datasets import make_zipf_norms

GRID = {"n": [1_000, 10_000, 50_000], "d": [10, 50, 200], "rho": [0.01, 0.1, 1.0]}
METHODS = {
    "GaussCov": GaussianCovariance,
    "SeparateCov": SeparateCovariance,
    "AdaptiveCov": AdaptiveCovariance,
}


def _errors(n, d, rho, seed):
    X = make_zipf_norms(n, d, n_buckets=4, random_state=seed)
    target = X.T @ X / n
    out = {}
    for name, cls in METHODS.items():
        for floor in (0.0, "auto"):
            est = cls(
                rho=rho,
                data_norm=1.0,
                assume_centered=True,
                eigenvalue_floor=floor,
                random_state=seed,
            ).fit(X)
            out[name, str(floor)] = float(np.linalg.norm(est.covariance_ - target))
            if floor == "auto":
                out[name, "finite"] = bool(np.isfinite(est.score(X)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    grid = {k: v[:2] for k, v in GRID.items()} if args.quick else GRID
    repeats = min(args.repeats, 2) if args.quick else args.repeats
    rows, ratios = [], {name: [] for name in METHODS}
    for n, d, rho in product(grid["n"], grid["d"], grid["rho"]):
        runs = Parallel(n_jobs=args.n_jobs)(
            delayed(_errors)(n, d, rho, seed=1000 * r + 11) for r in range(repeats)
        )
        row = {"n": n, "d": d, "rho": rho}
        for name in METHODS:
            zero = np.mean([r[name, "0.0"] for r in runs])
            auto = np.mean([r[name, "auto"] for r in runs])
            row[name] = auto / zero
            row[name + " finite"] = all(r[name, "finite"] for r in runs)
            ratios[name].append(auto / zero)
        rows.append(row)
        print(row, flush=True)
    text = [
        f"Frobenius error with eigenvalue_floor='auto' over the error with 0, "
        f"mean of {repeats} repetitions per cell (Zipf-norm data, N = 4)",
        "",
        f"{'n':>7s} {'d':>4s} {'rho':>5s}  " + "  ".join(f"{m:>11s}" for m in METHODS),
    ]
    for row in rows:
        text.append(
            f"{row['n']:>7d} {row['d']:>4d} {row['rho']:>5g}  "
            + "  ".join(f"{row[m]:>11.3f}" for m in METHODS)
        )
    text += [
        "",
        "median ratio: "
        + ", ".join(f"{m} {np.median(r):.3f}" for m, r in ratios.items()),
        "largest ratio: "
        + ", ".join(f"{m} {np.max(r):.3f}" for m, r in ratios.items()),
        "score finite with the floor in every fit: "
        + str(all(row[m + " finite"] for row in rows for m in METHODS)),
    ]
    print("\n".join(text))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "floor.json").write_text(json.dumps(rows, indent=1))
    (out / "floor.rst").write_text(
        "::\n\n" + "\n".join("    " + t for t in text) + "\n"
    )


if __name__ == "__main__":
    main()
