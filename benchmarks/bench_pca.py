"""Choose the default covariance estimator of dpcov.decomposition.PCA.

Captured variance of the top-``k`` private principal axes relative to the
non-private ones,

    captured = tr(V S V^T) / (sum of the top-k eigenvalues of S),

where ``S = np.cov(X.T)`` is the exact centred covariance of the full data and
``V = pca.components_`` (``k x d``); 1 is perfect. Candidates, all through
``PCA(n_components=k, epsilon, delta, data_norm, covariance=...)`` with its
default ``assume_centered=False`` (so the private mean is part of the fit):
``GaussianCovariance()``, ``SeparateCovariance()``, ``AdaptiveCovariance()``,
``EigenSamplingCovariance()`` (all ``d`` directions) and ``"top_k"`` (the top
``k`` directions only). "Random" is the floor: a uniformly random orthonormal
``k``-frame, with no data at all.

Data:

- digits: ``sklearn.datasets.load_digits`` divided by 16 (pixels in [0, 1]),
  ``n = 1797``, ``d = 64``, ``data_norm = 8`` (public: ``sqrt(64)``),
  ``k`` in {2, 5, 10}. The same data in every repetition.
- low-rank: ``d = 50``, rank-5 Gaussian with standard deviations
  ``[5, 4, 3, 2, 1]`` along a random orthonormal basis, plus isotropic noise of
  standard deviation 0.1 and a mean of 0.5 in every coordinate, divided by the
  public constant ``SCALE = 16`` and fitted with ``data_norm = 1``;
  ``n`` in {2000, 20000}, ``k = 5``. 16 is the 99.5% quantile of the row norm
  under the generating distribution (Monte Carlo over bases and rows, not read
  off any sample), so about 0.5% of the rows are clipped. A new basis and
  dataset in every repetition.

Budgets: ``epsilon`` in {0.1, 0.3, 1, 3, 10} with ``delta = 1e-6`` (zCDP) on
every setting, and ``delta = 0`` (pure DP) on digits with ``k = 5`` and on both
low-rank sizes. Repetition
``r`` uses ``random_state = 1000 r + 7`` for every estimator. Except for
"top_k", the covariance does not depend on ``k``, so on digits one fit with
``n_components = 10`` serves ``k = 2, 5, 10`` (its first ``k`` rows are exactly
the components of ``PCA(n_components=k)`` with the same seed).

    python benchmarks/bench_pca.py --repeats 20 --out benchmarks/results

writes ``pca.json`` (with every run), ``pca.csv``, ``pca.png`` and ``pca.rst``
(the tables) to ``--out``. Use ``--quick`` for a smoke run (3 repetitions).
"""

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA

try:  # run as a script from the repository root or from benchmarks/
    from _stats import near_best
except ImportError:  # pragma: no cover
    from benchmarks._stats import near_best

EPSILONS = [0.1, 0.3, 1.0, 3.0, 10.0]
ZCDP_DELTA = 1e-6
DIGITS_KS = [2, 5, 10]
LOWRANK_NS = [2_000, 20_000]
LOWRANK = dict(d=50, sds=[5.0, 4.0, 3.0, 2.0, 1.0], noise=0.1, offset=0.5, k=5)
# Public scale of the low-rank rows: the 99.5% quantile of ||x|| under the
# generating distribution (Monte Carlo, 400 bases x 5000 rows: 16.07), so
# data_norm=1 clips about 0.5% of the rows.
SCALE = 16.0
ESTIMATORS = [
    ("Gauss", GaussianCovariance),
    ("Separate", SeparateCovariance),
    ("Adaptive", AdaptiveCovariance),
    ("EigenSampling", EigenSamplingCovariance),
    ("top_k", "top_k"),
]
PRIVATE = [name for name, _ in ESTIMATORS]
METHODS = PRIVATE + ["Random"]


def make_lowrank(n, seed):
    """Low-rank Gaussian plus noise and a mean offset, divided by ``SCALE``."""
    rng = np.random.default_rng(seed)
    d, sds = LOWRANK["d"], np.asarray(LOWRANK["sds"])
    basis = np.linalg.qr(rng.normal(size=(d, sds.size)))[0]
    X = (rng.normal(size=(n, sds.size)) * sds) @ basis.T
    X += LOWRANK["noise"] * rng.normal(size=(n, d)) + LOWRANK["offset"]
    return X / SCALE


def captured(components, S, top):
    """``tr(V S V^T)`` over the sum of the top-k eigenvalues of ``S``."""
    return float(np.einsum("ij,jk,ik->", components, S, components) / top)


def _run(X, ks, epsilon, delta, data_norm, seed):
    """Captured variance of every method and every k for one seed."""
    S = np.cov(X.T)
    values = np.linalg.eigvalsh(S)[::-1]
    out = {k: {} for k in ks}
    for name, covariance in ESTIMATORS:
        fits = ks if covariance == "top_k" else [max(ks)]
        for fit_k in fits:
            pca = PCA(
                n_components=fit_k,
                epsilon=epsilon,
                delta=delta,
                data_norm=data_norm,
                covariance=covariance if covariance == "top_k" else covariance(),
                random_state=seed,
            ).fit(X)
            for k in [fit_k] if covariance == "top_k" else ks:
                out[k][name] = captured(pca.components_[:k], S, values[:k].sum())
    # A stream of its own: default_rng(seed) is the one that drew the data.
    rng = np.random.default_rng([seed, 1])
    for k in ks:
        frame = np.linalg.qr(rng.normal(size=(X.shape[1], k)))[0].T
        out[k]["Random"] = captured(frame, S, values[:k].sum())
    return out


def _summarise(runs):
    """Mean, standard error and the raw values of each method."""
    res = {}
    for m in METHODS:
        vals = np.array([run[m] for run in runs])
        res[m] = {
            "mean": float(vals.mean()),
            "sem": float(vals.std(ddof=1) / np.sqrt(len(vals))),
            "runs": vals.tolist(),
        }
    return res


def _table(title, rows):
    lines = [title, "", f"{'eps':>6s}  " + "  ".join(f"{m:>15s}" for m in METHODS)]
    for eps, res in rows:
        best, near = near_best(res, PRIVATE)
        cells = []
        for m in METHODS:
            mark = "*" if m == best else ("~" if m in near else " ")
            cell = f"{res[m]['mean']:.3f}+-{res[m]['sem']:.3f}" + mark
            cells.append(f"{cell:>15s}")
        lines.append(f"{eps:>6g}  " + "  ".join(cells))
    return lines


def _rst_table(title, rows):
    lines = [
        f".. csv-table:: {title}",
        "   :header: " + ", ".join(["epsilon"] + METHODS),
        "",
    ]
    for eps, res in rows:
        best, near = near_best(res, PRIVATE)
        cells = [f"{eps:g}"]
        for m in METHODS:
            cell = f"{res[m]['mean']:.3f} ({res[m]['sem']:.3f})"
            cells.append(f"**{cell}**" if m in near else cell)
        lines.append("   " + ", ".join(f'"{c}"' for c in cells))
    return lines + [""]


def settings(quick):
    """(panel name, dataset label, data maker, data_norm, ks, delta) tuples."""
    digits = load_digits().data / 16.0
    out = []
    for delta, tag in [(ZCDP_DELTA, "zcdp"), (0.0, "pure")]:
        ks = DIGITS_KS if tag == "zcdp" else [5]
        out.append(("digits", tag, lambda seed: digits, 8.0, ks, delta))
    for delta, tag in [(ZCDP_DELTA, "zcdp"), (0.0, "pure")]:
        for n in LOWRANK_NS[:1] if quick else LOWRANK_NS:
            out.append(
                (
                    f"lowrank_n{n}",
                    tag,
                    lambda seed, n=n: make_lowrank(n, seed),
                    1.0,
                    [LOWRANK["k"]],
                    delta,
                )
            )
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats = min(args.repeats, 3) if args.quick else args.repeats
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {
        "repeats": repeats,
        "epsilons": EPSILONS,
        "scale": SCALE,
        "lowrank": LOWRANK,
        "panels": {},
    }
    text = [
        f"Captured variance, mean+-sem over {repeats} repetitions "
        "(* = best, ~ = within 2 paired standard errors of the best)",
        "",
    ]
    rst = []
    start = time.time()
    for dataset, tag, make, data_norm, ks, delta in settings(args.quick):
        rows = {k: [] for k in ks}
        clipped = []
        for eps in EPSILONS:
            runs = {k: [] for k in ks}
            for r in range(repeats):
                seed = 1000 * r + 7
                X = make(seed)
                clipped.append(float(np.mean(np.linalg.norm(X, axis=1) > data_norm)))
                res = _run(X, ks, eps, delta, data_norm, seed)
                for k in ks:
                    runs[k].append(res[k])
            for k in ks:
                rows[k].append((eps, _summarise(runs[k])))
            print(
                f"[{time.time() - start:6.1f}s] {dataset} {tag} eps={eps:g} done",
                flush=True,
            )
        n, d = make(7).shape
        for k in ks:
            key = f"{dataset}_k{k}_{tag}"
            results["panels"][key] = {
                "dataset": dataset,
                "n": n,
                "d": d,
                "k": k,
                "delta": delta,
                "data_norm": data_norm,
                "clipped_fraction": float(np.mean(clipped)),
                "rows": rows[k],
            }
            title = (
                f"{dataset} (n={n}, d={d}), k={k}, "
                + (f"zCDP delta={delta:g}" if delta > 0 else "pure DP")
                + f", data_norm={data_norm:g}"
            )
            text += _table(title, rows[k]) + [""]
            rst += _rst_table(title, rows[k])
    # How often each method is the best or within noise of it, and its largest
    # shortfall from the best mean, per privacy regime.
    results["counts"] = {}
    for tag in ["zcdp", "pure", "all"]:
        counts = {m: [0, 0, 0.0] for m in PRIVATE}
        total = 0
        for key, panel in results["panels"].items():
            if tag != "all" and not key.endswith(tag):
                continue
            for _, res in panel["rows"]:
                best, near = near_best(res, PRIVATE)
                counts[best][0] += 1
                for m in PRIVATE:
                    counts[m][1] += m in near
                    gap = res[best]["mean"] - res[m]["mean"]
                    counts[m][2] = max(counts[m][2], gap)
                total += 1
        text.append(
            f"{tag}: best / within noise of best / largest shortfall, "
            f"over {total} grid points"
        )
        text += [
            f"  {m:>15s}  {b:3d} / {w:3d} / {g:.3f}" for m, (b, w, g) in counts.items()
        ]
        results["counts"][tag] = counts
    elapsed = time.time() - start
    results["seconds"] = elapsed
    text.append(f"total time {elapsed:.1f} s")
    print("\n".join(text))
    (out / "pca.json").write_text(json.dumps(results, indent=1))
    with open(out / "pca.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["panel", "epsilon", "method", "mean", "sem"])
        for key, panel in results["panels"].items():
            for eps, res in panel["rows"]:
                for m in METHODS:
                    writer.writerow([key, eps, m, res[m]["mean"], res[m]["sem"]])
    (out / "pca.rst").write_text("\n".join(rst))
    _plot(results, out / "pca.png")


def _plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Top row zCDP (delta=1e-6), bottom row pure DP.
    grid = [
        [f"{name}_k5_{tag}" for name in ["digits", "lowrank_n2000", "lowrank_n20000"]]
        for tag in ["zcdp", "pure"]
    ]
    fig, axes = plt.subplots(2, 3, figsize=(12, 7))
    for ax, key in zip(np.ravel(axes), np.ravel(grid), strict=True):
        if key not in results["panels"]:
            ax.axis("off")
            continue
        panel = results["panels"][key]
        privacy = "zCDP, delta=1e-6" if panel["delta"] > 0 else "pure DP"
        name = panel["dataset"].split("_")[0]
        title = f"{name} (n={panel['n']}, d={panel['d']}), k=5, {privacy}"
        xs = [eps for eps, _ in panel["rows"]]
        for m in METHODS:
            ax.errorbar(
                xs,
                [r[m]["mean"] for _, r in panel["rows"]],
                yerr=[r[m]["sem"] for _, r in panel["rows"]],
                marker="o",
                ms=3,
                ls="--" if m == "Random" else "-",
                label=m,
            )
        ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("epsilon")
        ax.set_ylabel("captured variance")
        ax.set_title(title, fontsize=9)
    handles, labels = np.ravel(axes)[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8)
    fig.suptitle("Private PCA: captured variance of the top-k axes")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
