"""Schatten-norm error of the nuclear-Laplace mechanism against pure-DP baselines.

Mean error ``||C - X^T X / n||`` in the spectral (``ord=2``), Frobenius and
nuclear (``"nuc"``) norms, the three Schatten norms of d'Orsi and Novikov
(2025, Theorem 1.1), of pure-DP estimators at the same ``epsilon`` (all
``delta=0``, ``data_norm=1``, ``assume_centered=True``, default
``projection="clamp"``, i.e. eigenvalues clipped to ``[0, 1]``):

- NL: ``NuclearLaplaceCovariance()`` (Algorithm 1);
- NL-proj: ``NuclearLaplaceCovariance(project=True)`` (Algorithm 2: half of
  the budget on a private trace ``t``, projection onto
  ``{S >= 0, tr S <= t}``; the clamp is then applied on top);
- NL-psd: ``NuclearLaplaceCovariance(projection="psd")``, Algorithm 1 without
  the upper eigenvalue clamp (negative eigenvalues are still set to zero). It
  uses the same seed as NL, hence the same noise draw;
- LapCov: ``GaussianCovariance(delta=0.0)`` (Laplace noise on every entry);
- SepLapCov: ``SeparateCovariance(delta=0.0)`` (SeparateLapCov);
- Zero: the zero matrix;
- NL-raw (printed tables, JSON/CSV and the scaling fit; not in the rst tables
  or the plot): NL's symmetrised noisy matrix before any projection
  (``store_raw=True``), i.e. the mechanism's own noise.

Data (``data_norm = 1``, no clipping):

- zipf: :func:`dpcov.datasets.make_zipf_norms` with its defaults
  ``n_buckets=4, skew=3`` (Gaussian rows with a random covariance, row norms
  from Zipf buckets ``1/8, 1/4, 1/2, 1``; trace about 0.04);
- zipf1: ``make_zipf_norms(n_buckets=1)``, unit-norm rows with the same
  anisotropic covariance shape (trace 1, top eigenvalue about 0.55);
- sphere: rows uniform on the unit sphere (normalised Gaussians; trace 1).
  Its covariance is isotropic (about ``I / d``), so any orthonormal basis is
  an eigenbasis and SeparateLapCov's eigenvector noise costs nothing there;
  zipf1 is the full-trace control that is not isotropic.

Grid: ``d`` in {4, 8, 16, 32}, ``n`` in {100, 1000, 10000}, ``epsilon`` in
{0.1, 1}. Repetition ``r`` draws a new dataset with seed ``1000 r + 7`` (a
legacy ``RandomState``) and fits every estimator with ``random_state`` equal to
the same integer (a separate ``Generator`` stream). The standardised noise
draws are therefore shared across ``n``, ``epsilon`` and the data sets (common
random numbers: NL's raw noise is one matrix scaled by ``1 / kappa``). For
``d <= 8`` the noise profile is sampled exactly; for ``d = 16, 32`` by the
Gibbs chain with its default ``max(200, 20 d)`` sweeps (``--n-sweeps``
overrides it), whose "pure DP only up to the chain's TV error" warning is
silenced here. The scaling fit regresses log mean error on log d at
``n = 10000``.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_nuclear.py --repeats 20 \
        --out benchmarks/results

writes ``nuclear.json`` (with every run), ``nuclear.csv``, ``nuclear.png`` and
``nuclear.rst`` (csv-tables at ``epsilon = 1``) to ``--out``. Use ``--quick``
for a smoke run (3 repetitions).
"""

import argparse
import csv
import json
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.utils import check_random_state

from dpcov.covariance import (
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.datasets import make_zipf_norms

DATA = ["zipf", "zipf1", "sphere"]
LABELS = {
    "zipf": "Zipf norms, N=4",
    "zipf1": "Zipf, N=1 (trace 1)",
    "sphere": "unit sphere (trace 1)",
}
DIMS = [4, 8, 16, 32]
NS = [100, 1_000, 10_000]
EPSILONS = [0.1, 1.0]
NORMS = {"spectral": 2, "frobenius": "fro", "nuclear": "nuc"}
# Theory for Algorithm 1 (d'Orsi and Novikov 2025, Thm 1.1): d**(1 + 1/p) / (eps n).
THEORY_EXPONENT = {"spectral": 1.0, "frobenius": 1.5, "nuclear": 2.0}
METHODS = ["NL", "NL-proj", "NL-psd", "LapCov", "SepLapCov", "Zero"]
ALL_METHODS = METHODS + ["NL-raw"]


def make_data(kind, n, d, seed):
    """Rows of norm at most 1: Zipf norms (default buckets) or the unit sphere."""
    if kind == "zipf":
        return make_zipf_norms(n, d, random_state=seed)
    if kind == "zipf1":
        return make_zipf_norms(n, d, n_buckets=1, random_state=seed)
    z = check_random_state(seed).standard_normal((n, d))
    return z / np.linalg.norm(z, axis=1, keepdims=True)


def _norms(E):
    return {name: float(np.linalg.norm(E, ord)) for name, ord in NORMS.items()}


def _errors(kind, n, d, epsilon, seed, n_sweeps):
    X = make_data(kind, n, d, seed)
    target = X.T @ X / n
    params = dict(
        epsilon=epsilon,
        delta=0.0,
        data_norm=1.0,
        assume_centered=True,
        random_state=seed,
    )
    nl = dict(n_sweeps=n_sweeps)
    estimators = {
        "NL": NuclearLaplaceCovariance(**params, **nl, store_raw=True),
        "NL-proj": NuclearLaplaceCovariance(**params, **nl, project=True),
        "NL-psd": NuclearLaplaceCovariance(**params, **nl, projection="psd"),
        "LapCov": GaussianCovariance(**params),
        "SepLapCov": SeparateCovariance(**params),
    }
    out = {}
    with warnings.catch_warnings():
        # d > exact_max_dim: the Gibbs sampler's warning, expected here.
        warnings.filterwarnings(
            "ignore", message=r"n_features=\d+ > exact_max_dim", category=UserWarning
        )
        for name, est in estimators.items():
            est.fit(X)
            out[name] = _norms(est.covariance_ - target)
            if name == "NL":
                out["NL-raw"] = _norms(est.raw_covariance_ - target)
    out["Zero"] = _norms(target)
    out["trace"] = float(np.trace(target))
    return out


def near_best(res, norm):
    """Best method (by mean) and those within two paired standard errors."""
    best = min(METHODS, key=lambda m: res[m][norm]["mean"])
    top = np.array(res[best][norm]["runs"])
    near = []
    for m in METHODS:
        diff = np.array(res[m][norm]["runs"]) - top
        sem = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else 0.0
        if diff.mean() <= 2.0 * sem:
            near.append(m)
    return best, near


def run_point(kind, n, d, epsilon, repeats, n_sweeps, n_jobs):
    runs = Parallel(n_jobs=n_jobs)(
        delayed(_errors)(kind, n, d, epsilon, 1000 * r + 7, n_sweeps)
        for r in range(repeats)
    )
    res = {"trace": float(np.mean([r["trace"] for r in runs]))}
    for m in ALL_METHODS:
        res[m] = {}
        for norm in NORMS:
            vals = np.array([r[m][norm] for r in runs])
            res[m][norm] = {
                "mean": float(vals.mean()),
                "sem": float(vals.std(ddof=1) / np.sqrt(vals.size))
                if vals.size > 1
                else 0.0,
                "runs": vals.tolist(),
            }
    return res


def _key(kind, n, d, epsilon):
    return f"{kind}_n{n}_d{d}_eps{epsilon:g}"


def _table(results, kind, epsilon, norm):
    title = (
        f"{kind}, epsilon={epsilon:g}, {norm} error "
        "(* = best, ~ = within 2 paired standard errors)"
    )
    head = f"{'n':>6s} {'d':>3s} {'trace':>8s}  " + "  ".join(
        f"{m:>10s}" for m in ALL_METHODS
    )
    lines = [title, "", head]
    for n in NS:
        for d in DIMS:
            key = _key(kind, n, d, epsilon)
            if key not in results["points"]:
                continue
            res = results["points"][key]
            best, near = near_best(res, norm)
            cells = []
            for m in ALL_METHODS:
                mark = "*" if m == best else ("~" if m in near else " ")
                cells.append(f"{res[m][norm]['mean']:.3e}{mark}".rjust(10))
            lines.append(f"{n:>6d} {d:>3d} {res['trace']:>8.3g}  " + "  ".join(cells))
    return lines


def _rst_table(results, kind, epsilon, norm):
    lines = [
        f".. csv-table:: {LABELS[kind]}, epsilon = {epsilon:g}, {norm} error",
        "   :header: " + ", ".join(["n", "d"] + METHODS),
        "",
    ]
    for n in NS:
        for d in DIMS:
            key = _key(kind, n, d, epsilon)
            if key not in results["points"]:
                continue
            res = results["points"][key]
            _, near = near_best(res, norm)
            cells = [str(n), str(d)]
            for m in METHODS:
                cell = f"{res[m][norm]['mean']:.3g}"
                cells.append(f"**{cell}**" if m in near else cell)
            lines.append("   " + ", ".join(f'"{c}"' for c in cells))
    return lines + [""]


def scaling(results, kind, n, epsilon, method, norm):
    """Least-squares slope of log mean error against log d."""
    pts = [
        (d, results["points"][_key(kind, n, d, epsilon)][method][norm]["mean"])
        for d in DIMS
        if _key(kind, n, d, epsilon) in results["points"]
    ]
    if len(pts) < 2:
        return float("nan")
    x, y = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument(
        "--repeats-max-d",
        type=int,
        default=None,
        help="repetitions at the largest d (default: --repeats)",
    )
    parser.add_argument(
        "--n-sweeps",
        type=int,
        default=None,
        help="Gibbs sweeps for d > 8 (default: the estimator's max(200, 20 d))",
    )
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats = min(args.repeats, 3) if args.quick else args.repeats
    repeats_max_d = repeats if args.repeats_max_d is None else args.repeats_max_d
    repeats_max_d = min(repeats_max_d, repeats)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {
        "repeats": repeats,
        "repeats_max_d": repeats_max_d,
        "n_sweeps": args.n_sweeps,
        "dims": DIMS,
        "ns": NS,
        "epsilons": EPSILONS,
        "points": {},
    }
    start = time.time()
    for d in DIMS:
        reps = repeats_max_d if d == max(DIMS) else repeats
        t0 = time.time()
        for kind in DATA:
            for n in NS:
                for eps in EPSILONS:
                    results["points"][_key(kind, n, d, eps)] = run_point(
                        kind, n, d, eps, reps, args.n_sweeps, args.n_jobs
                    )
        print(
            f"[{time.time() - start:7.1f}s] d={d} done "
            f"({reps} repetitions, {time.time() - t0:.1f}s)",
            flush=True,
        )
    text = [
        f"Mean Schatten-norm error over {repeats} repetitions "
        f"({repeats_max_d} at d={max(DIMS)}); Gibbs sweeps for d > 8: "
        + ("max(200, 20 d)" if args.n_sweeps is None else str(args.n_sweeps)),
        "",
    ]
    rst = []
    for kind in DATA:
        for eps in EPSILONS:
            for norm in NORMS:
                text += _table(results, kind, eps, norm) + [""]
                if eps == 1.0:
                    rst += _rst_table(results, kind, eps, norm)
    # Slope of log error in log d at the largest n (noise-dominated end).
    results["slopes"] = {}
    text.append(
        f"Slope of log mean error against log d (d = {DIMS}), "
        f"n = {max(NS)}; theory for NL: spectral 1, Frobenius 1.5, nuclear 2"
    )
    for kind in DATA:
        for eps in EPSILONS:
            for m in ["NL-raw", "NL", "NL-proj", "LapCov", "SepLapCov"]:
                row = {
                    norm: scaling(results, kind, max(NS), eps, m, norm)
                    for norm in NORMS
                }
                results["slopes"][f"{kind}_eps{eps:g}_{m}"] = row
                text.append(
                    f"  {kind:>6s} eps={eps:<4g} {m:>10s}  "
                    + "  ".join(f"{norm} {s:5.2f}" for norm, s in row.items())
                )
    # NL-raw error in units of the theory rate d**(1 + 1/p) / (epsilon n); the
    # raw noise does not depend on the data, and with common random numbers
    # this ratio is the same at every n and epsilon.
    text += ["", f"NL-raw error * epsilon n / d**(1 + 1/p), d = {DIMS}"]
    for norm, a in THEORY_EXPONENT.items():
        consts = [
            results["points"][_key(DATA[0], max(NS), d, 1.0)]["NL-raw"][norm]["mean"]
            * max(NS)
            / d**a
            for d in DIMS
        ]
        results["slopes"][f"constant_{norm}"] = consts
        text.append(f"  {norm:>10s} " + " ".join(f"{c:5.2f}" for c in consts))
    elapsed = time.time() - start
    results["seconds"] = elapsed
    text.append(f"total time {elapsed:.1f} s")
    print("\n".join(text))
    (out / "nuclear.json").write_text(json.dumps(results))
    with open(out / "nuclear.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(
            ["data", "n", "d", "epsilon", "trace", "method", "norm", "mean", "sem"]
        )
        for kind in DATA:
            for n in NS:
                for d in DIMS:
                    for eps in EPSILONS:
                        res = results["points"][_key(kind, n, d, eps)]
                        for m in ALL_METHODS:
                            for norm in NORMS:
                                writer.writerow(
                                    [
                                        kind,
                                        n,
                                        d,
                                        eps,
                                        res["trace"],
                                        m,
                                        norm,
                                        res[m][norm]["mean"],
                                        res[m][norm]["sem"],
                                    ]
                                )
    (out / "nuclear.rst").write_text("\n".join(rst))
    _plot(results, out / "nuclear.png")


def _plot(results, path, d=16, epsilon=1.0):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(DATA), len(NORMS), figsize=(12, 3.2 * len(DATA)))
    for i, kind in enumerate(DATA):
        for j, norm in enumerate(NORMS):
            ax = axes[i, j]
            pts = [results["points"][_key(kind, n, d, epsilon)] for n in NS]
            for m in METHODS:
                ax.errorbar(
                    NS,
                    [p[m][norm]["mean"] for p in pts],
                    yerr=[p[m][norm]["sem"] for p in pts],
                    marker="x" if m == "NL-psd" else "o",
                    ms=5 if m == "NL-psd" else 3,
                    ls={"Zero": "--", "NL-psd": ":"}.get(m, "-"),
                    label=m,
                )
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("n")
            ax.set_ylabel(f"{norm} error")
            trace = np.mean([p["trace"] for p in pts])
            ax.set_title(
                f"{kind} (trace {trace:.2g}), d={d}, eps={epsilon:g}", fontsize=9
            )
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8)
    fig.suptitle("Pure DP: Schatten-norm error of the nuclear-Laplace mechanism")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
