"""Private subspace error against the dimension: ApproximateSubspace vs PCA.

Spectral error ``||P_hat - P||_2`` of the released rank-``k`` projector as the
dimension ``d`` grows, at fixed ``n``, ``k`` and (``epsilon``, ``delta``), for

- ApproximateSubspace: ``dpcov.decomposition.ApproximateSubspace(
  n_components=k, epsilon, delta, random_state=seed)`` with its defaults
  (``eigengap=None``: the cell width is set for a predicted error of
  ``max_error = 0.1`` and ``eigengap_`` records the largest gap it tolerates;
  ``assume_centered=False``: pairs of rows are differenced; ``t = 36`` blocks
  at ``epsilon = 1, delta = 1e-6``). It may raise
  :class:`~dpcov.exceptions.NoHeavyCell`, the private "bottom" answer: that is
  a failure, counted in the success rate. "median error" is over the
  successful runs only; "error counting failures as 1" treats a failure as
  error 1, the error of a subspace orthogonal to the true one (no
  information; a uniformly random ``k``-frame is close to that for large
  ``d``);
- PCA (Adaptive): ``dpcov.decomposition.PCA(n_components=k, epsilon, delta,
  data_norm=R, random_state=seed)`` with its default covariance
  (``AdaptiveCovariance`` under zCDP, ``assume_centered=False``);
- PCA (Gauss): the same with ``covariance=GaussianCovariance()``;
- non-private: the top-``k`` axes of ``sklearn.decomposition.PCA`` (the
  eigenvectors of the sample covariance), the floor.

Error: with ``U_hat`` and ``U`` the ``k x d`` orthonormal bases of the
released and the true subspace, ``||P_hat - P||_2`` is the sine of the largest
principal angle, ``sqrt(1 - sigma_min(U_hat U^T)**2)``. It is computed here as
the equal ``||U_hat - (U_hat U^T) U||_2`` (the norm of the component of
``U_hat`` outside the true subspace), which keeps full precision for tiny
angles (``sqrt(1 - c**2)`` cannot resolve angles below about 1e-8). No
``d x d`` matrix is formed outside PCA's own fit.

Data: ``n = 4000``, ``k = 3``, ``X = Z Q^T + gamma E`` with ``Z`` an
``n x k`` standard Gaussian, ``Q`` a uniformly random ``d x k`` orthonormal
basis and ``E`` an ``n x d`` standard Gaussian, ``gamma = 1e-9``; so the
covariance has ``lambda_1 = ... = lambda_k = 1 + gamma**2`` and
``lambda_{k+1} = gamma**2``, an eigen-gap ratio of ``gamma``. ``d`` in {100,
1000, 10000}. ApproximateSubspace needs ``eigengap_ >= gamma`` for its
accuracy guarantee; its ``eigengap_`` (public, from ``n``, ``d`` and the
defaults) is reported for every ``d``. With ``n = 4000`` the blocks hold
``m = (n // 2) // 36 = 55`` differenced rows (above the recommended
``4 k = 12``).

Row-norm bound for PCA, public and chosen without looking at the data:
``R = sqrt(k + 2 sqrt(k L) + 2 L) + gamma sqrt(d + 2 sqrt(d L) + 2 L)`` with
``L = ln(1 / beta)``, ``beta = 1e-3`` (Laurent and Massart's chi-square tail
for ``||z||`` and ``||e||``, triangle inequality), so each row exceeds ``R``
with probability at most ``2 beta``. ``R = 5.09`` at every ``d`` (the noise
term is at most 1.1e-7). The fraction of clipped rows is recorded in the JSON.

Repetition ``r`` draws the data with ``numpy.random.default_rng(1000 r + 7 +
d)`` (a new basis ``Q`` per repetition and ``d``) and fits every estimator
with ``random_state = 1000 r + 7``. Every fit is timed (wall clock,
``time.perf_counter``). At ``d = 10000`` the private PCA fits form and
eigendecompose 10000 x 10000 matrices several times (the covariance
estimator's eigendecompositions, then PCA's): 10 to 18 minutes per fit on a
2-core machine with 24 GiB (626 s in the recorded run, 1079 s in a trial
run; peak memory about 6 GiB), so the largest ``d`` runs fewer repetitions:
``--repeats-max-d`` (default 3) for ApproximateSubspace and the non-private
fit, ``--pca-repeats-max-d`` (default 1) for PCA (Adaptive), and PCA (Gauss)
is skipped there (``--gauss-max-d``, default 1000; it took longer than
Adaptive at ``d = 2500``). Private PCA is already at error about 1 at
``d = 1000``.

    OPENBLAS_NUM_THREADS=2 python benchmarks/bench_subspace.py --repeats 10 \
        --out benchmarks/results

(OpenBLAS on both cores, for the 10000 x 10000 eigendecompositions; 11
minutes in the recorded run, all but 40 s of it the one PCA fit at
``d = 10000``) writes ``subspace.json`` (with every run), ``subspace.csv`` (one
row per run), ``subspace.png`` and ``subspace.rst`` (a csv-table) to
``--out``, and copies the table, with the figure, to
``docs/user_guide/_bench_subspace.rst`` and the figure to
``docs/_static/bench_subspace.png`` (not with ``--quick`` or ``--no-docs``).
Use ``--quick`` for a smoke run (``d`` in {100, 1000}, 2 repetitions, under
a minute; writes nothing under ``docs``), and ``--from-json`` to rewrite the
csv, rst, png and docs copies from an existing ``subspace.json`` without
fitting.
"""

import argparse
import csv
import json
import math
import shutil
import time
from pathlib import Path

import numpy as np
from sklearn.decomposition import PCA as SkPCA

from dpcov.covariance import GaussianCovariance
from dpcov.decomposition import PCA, ApproximateSubspace
from dpcov.exceptions import NoHeavyCell

N_SAMPLES = 4000
N_COMPONENTS = 3
GAMMA = 1e-9
EPSILON = 1.0
DELTA = 1e-6
BETA = 1e-3
DIMS = [100, 1000, 10000]
QUICK_DIMS = [100, 1000]
METHODS = ["ApproximateSubspace", "PCA (Adaptive)", "PCA (Gauss)", "non-private"]
STYLE = {
    "ApproximateSubspace": dict(marker="o", ls="-"),
    "PCA (Adaptive)": dict(marker="s", ls="-"),
    "PCA (Gauss)": dict(marker="^", ls="-"),
    "non-private": dict(marker="x", ls="--"),
}


def norm_bound(k, d, gamma=GAMMA, beta=BETA):
    """Public row-norm bound ``R`` (each row exceeds it w.p. <= ``2 beta``).

    Laurent-Massart: ``P(chi2_j >= j + 2 sqrt(j L) + 2 L) <= exp(-L)``, for
    the signal ``||z||`` (``j = k``) and the noise ``||e||`` (``j = d``).
    """
    L = math.log(1.0 / beta)

    def root(j):
        return math.sqrt(j + 2.0 * math.sqrt(j * L) + 2.0 * L)

    return root(k) + gamma * root(d)


def make_data(n, d, k, gamma, seed):
    """``Z Q^T + gamma E`` and the true basis ``Q^T`` (``k x d``)."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.normal(size=(d, k)))[0].T
    X = rng.normal(size=(n, k)) @ basis
    X += gamma * rng.normal(size=(n, d))
    return X, basis


def projection_error(estimate, truth):
    """``||P_hat - P||_2`` from ``k x d`` orthonormal bases, no ``d x d`` matrix.

    The sine of the largest principal angle: the spectral norm of
    ``U_hat - (U_hat U^T) U``, equal to ``sqrt(1 - sigma_min(U_hat U^T)**2)``.
    """
    estimate = np.asarray(estimate, dtype=np.float64)
    outside = estimate - (estimate @ truth.T) @ truth
    return float(np.linalg.norm(outside, 2))


def _fits(d, gauss, pca):
    """Estimators run at dimension ``d``: name -> factory of a fitted basis."""
    R = norm_bound(N_COMPONENTS, d)
    out = {}

    def approximate(X, seed, info):
        est = ApproximateSubspace(
            n_components=N_COMPONENTS, epsilon=EPSILON, delta=DELTA, random_state=seed
        )
        try:
            est.fit(X)
        except NoHeavyCell:
            return None
        info.update(
            eigengap=est.eigengap_,
            block_size=est.block_size_,
            n_blocks=est.n_blocks_,
            cell_width=est.cell_width_,
            predicted_error=est.predicted_error_,
        )
        return est.components_

    def private_pca(covariance):
        def fit(X, seed, info):
            est = PCA(
                n_components=N_COMPONENTS,
                epsilon=EPSILON,
                delta=DELTA,
                data_norm=R,
                random_state=seed,
                **({} if covariance is None else {"covariance": covariance}),
            ).fit(X)
            cov = est.covariance_estimator_
            for attr in ["mechanism_", "clip_threshold_"]:
                if hasattr(cov, attr):
                    info[attr.rstrip("_")] = getattr(cov, attr)
            return est.components_

        return fit

    def nonprivate(X, seed, info):
        return SkPCA(n_components=N_COMPONENTS).fit(X).components_

    out["ApproximateSubspace"] = approximate
    if pca:
        out["PCA (Adaptive)"] = private_pca(None)
    if gauss and pca:
        out["PCA (Gauss)"] = private_pca(GaussianCovariance())
    out["non-private"] = nonprivate
    return out


def run_dim(d, repeats, pca_repeats, gauss, start):
    """Every run at dimension ``d``: a list of per-run dicts."""
    runs = []
    R = norm_bound(N_COMPONENTS, d)
    for r in range(repeats):
        seed = 1000 * r + 7
        X, basis = make_data(N_SAMPLES, d, N_COMPONENTS, GAMMA, seed + d)
        clipped = float(np.mean(np.linalg.norm(X, axis=1) > R))
        fits = _fits(d, gauss, pca=r < pca_repeats)
        for name, fit in fits.items():
            info = {}
            t0 = time.perf_counter()
            components = fit(X, seed, info)
            seconds = time.perf_counter() - t0
            error = None if components is None else projection_error(components, basis)
            runs.append(
                dict(
                    d=d,
                    repeat=r,
                    seed=seed,
                    method=name,
                    success=components is not None,
                    error=error,
                    seconds=seconds,
                    clipped_fraction=clipped,
                    **info,
                )
            )
            shown = "bottom" if error is None else f"{error:.3g}"
            print(
                f"[{time.time() - start:7.1f}s] d={d} r={r} {name}: error "
                f"{shown}, {seconds:.2f} s",
                flush=True,
            )
        del X
    return runs


def summarise(runs, d, method):
    """Success rate, error quantiles and median fit time of one cell."""
    cell = [run for run in runs if run["d"] == d and run["method"] == method]
    if not cell:
        return None
    ok = np.array([run["error"] for run in cell if run["success"]])
    with_bottom = np.array([run["error"] if run["success"] else 1.0 for run in cell])
    quart = np.percentile(ok, [25, 50, 75]) if ok.size else [np.nan] * 3
    quart1 = np.percentile(with_bottom, [25, 50, 75])
    return {
        "runs": len(cell),
        "successes": int(ok.size),
        "success_rate": ok.size / len(cell),
        "q25": float(quart[0]),
        "median": float(quart[1]),
        "q75": float(quart[2]),
        "median_fail1": float(quart1[1]),
        "q25_fail1": float(quart1[0]),
        "q75_fail1": float(quart1[2]),
        "median_seconds": float(np.median([run["seconds"] for run in cell])),
    }


def _fmt(x, digits=3):
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.{digits}g}"


def _rst(results):
    gaps = ", ".join(
        f"{_fmt(results['eigengap'][str(d)], 2)} at d = {d}" for d in results["dims"]
    )
    title = (
        f"Projection error ``||P_hat - P||_2``, n = {N_SAMPLES}, k = {N_COMPONENTS}, "
        f"epsilon = {EPSILON:g}, delta = {DELTA:g}, gamma = {GAMMA:g}, "
        f"data_norm = {results['data_norm']:.3g} (PCA); "
        f"ApproximateSubspace ``eigengap_`` {gaps}"
    )
    lines = [
        f".. csv-table:: {title}",
        "   :header: d, estimator, repetitions, success rate, median error "
        "[IQR], error counting failures as 1, median fit time (s)",
        "",
    ]
    for d in results["dims"]:
        for m in METHODS:
            s = results["summary"][str(d)].get(m)
            if s is None:
                continue
            err = (
                f"{_fmt(s['median'])} [{_fmt(s['q25'])}, {_fmt(s['q75'])}]"
                if s["successes"]
                else "n/a"
            )
            cells = [
                str(d),
                m,
                str(s["runs"]),
                f"{s['successes']}/{s['runs']}",
                err,
                _fmt(s["median_fail1"]),
                f"{s['median_seconds']:.3g}",
            ]
            lines.append("   " + ", ".join(f'"{c}"' for c in cells))
    return lines + [""]


def _text(results):
    head = (
        f"{'d':>6s} {'estimator':>20s} {'runs':>4s} {'succ':>5s} "
        f"{'median':>9s} {'q25':>9s} {'q75':>9s} {'fail=1':>9s} {'time s':>8s}"
    )
    lines = [head]
    for d in results["dims"]:
        for m in METHODS:
            s = results["summary"][str(d)].get(m)
            if s is None:
                continue
            lines.append(
                f"{d:>6d} {m:>20s} {s['runs']:>4d} {s['success_rate']:>5.2f} "
                f"{s['median']:>9.3g} {s['q25']:>9.3g} {s['q75']:>9.3g} "
                f"{s['median_fail1']:>9.3g} {s['median_seconds']:>8.3g}"
            )
    lines.append("")
    for d in results["dims"]:
        lines.append(
            f"d={d}: ApproximateSubspace eigengap_ = "
            f"{_fmt(results['eigengap'][str(d)])} (gamma = {GAMMA:g}), "
            f"block_size_ = {results['block_size'][str(d)]}, "
            f"predicted_error_ = {_fmt(results['predicted_error'][str(d)])}"
        )
    return lines


def _plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Left: the private estimators on a linear error scale; right: all four on
    # a log scale, with the non-private floor.
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
    dims = results["dims"]
    for ax, methods in zip(axes, [METHODS[:3], METHODS], strict=True):
        for j, m in enumerate(METHODS):
            pts = [
                (d, results["summary"][str(d)][m])
                for d in dims
                if m in results["summary"][str(d)]
                and results["summary"][str(d)][m]["successes"]
            ]
            if m not in methods or not pts:
                continue
            # Small horizontal offsets keep the bars apart.
            xs = np.array([d for d, _ in pts]) * 1.07 ** (j - 1.5)
            med = np.array([s["median"] for _, s in pts])
            lo = med - np.array([s["q25"] for _, s in pts])
            hi = np.array([s["q75"] for _, s in pts]) - med
            label = m + (" (successful runs)" if m == "ApproximateSubspace" else "")
            line = ax.errorbar(
                xs, med, yerr=[lo, hi], capsize=3, ms=5, label=label, **STYLE[m]
            )
            colour = line[0].get_color()
            # Every run, faint.
            for (d, _), x in zip(pts, xs, strict=True):
                vals = [
                    run["error"]
                    for run in results["runs"]
                    if run["d"] == d and run["method"] == m and run["success"]
                ]
                ax.scatter([x] * len(vals), vals, s=8, alpha=0.35, color=colour)
            for (_, s), x, y in zip(pts, xs, med, strict=True):
                # Success counts, and run counts where fewer ran (largest d).
                if ax is not axes[0] or m == "non-private":
                    continue
                if m == "ApproximateSubspace":
                    note = f"{s['successes']}/{s['runs']} ok"
                elif s["runs"] < results["repeats"]:
                    note = f"{s['runs']} run" + ("s" if s["runs"] > 1 else "")
                else:
                    continue
                ax.annotate(
                    note,
                    (x, y),
                    textcoords="offset points",
                    xytext=(6, -12) if m == "ApproximateSubspace" else (-30, 6),
                    fontsize=7,
                    color=colour,
                )
        ax.set_xscale("log")
        ax.set_xticks(dims, [str(d) for d in dims])
        ax.set_xlabel("dimension d")
        ax.axhline(1.0, color="grey", lw=0.8, ls=":")
        ax.legend(fontsize=8, loc="center right")
    axes[0].set_ylim(0, 1.08)
    axes[0].set_ylabel("||P_hat - P||_2 (median, interquartile bars)")
    axes[0].set_title("private estimators", fontsize=9)
    axes[1].set_yscale("log")
    axes[1].set_title("log scale, with the non-private floor", fontsize=9)
    fig.suptitle(
        f"Private rank-{N_COMPONENTS} subspace: n={N_SAMPLES}, k={N_COMPONENTS}, "
        f"epsilon={EPSILON:g}, delta={DELTA:g}, eigen-gap ratio gamma={GAMMA:g}",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument(
        "--repeats-max-d",
        type=int,
        default=3,
        help="repetitions at the largest d (capped at --repeats)",
    )
    parser.add_argument(
        "--pca-repeats-max-d",
        type=int,
        default=1,
        help="private PCA repetitions at the largest d (capped at --repeats-max-d)",
    )
    parser.add_argument(
        "--gauss-max-d",
        type=int,
        default=1000,
        help="largest d at which PCA (Gauss) runs",
    )
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--docs", default="docs", help="docs folder to copy into")
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--from-json",
        action="store_true",
        help="rewrite the csv, rst, png and docs from --out/subspace.json, no fits",
    )
    args = parser.parse_args()
    out = Path(args.out)
    if args.from_json:
        results = json.loads((out / "subspace.json").read_text())
        print("\n".join(_text(results)))
        write_outputs(results, out, None if args.no_docs else Path(args.docs))
        return
    dims = QUICK_DIMS if args.quick else DIMS
    repeats = min(args.repeats, 2) if args.quick else args.repeats
    repeats_max_d = min(args.repeats_max_d, repeats)
    pca_repeats_max_d = min(args.pca_repeats_max_d, repeats_max_d)
    out.mkdir(parents=True, exist_ok=True)
    results = {
        "n_samples": N_SAMPLES,
        "n_components": N_COMPONENTS,
        "gamma": GAMMA,
        "epsilon": EPSILON,
        "delta": DELTA,
        "beta": BETA,
        "data_norm": norm_bound(N_COMPONENTS, max(dims)),
        "data_norm_per_d": {str(d): norm_bound(N_COMPONENTS, d) for d in dims},
        "dims": dims,
        "repeats": repeats,
        "repeats_max_d": repeats_max_d,
        "pca_repeats_max_d": pca_repeats_max_d,
        "gauss_max_d": args.gauss_max_d,
        "runs": [],
    }
    start = time.time()
    for d in dims:
        big = d == max(dims) and not args.quick
        reps = repeats_max_d if big else repeats
        pca_reps = pca_repeats_max_d if big else reps
        results["runs"] += run_dim(d, reps, pca_reps, d <= args.gauss_max_d, start)
    results["summary"] = {}
    for key in ["eigengap", "block_size", "predicted_error", "cell_width"]:
        results[key] = {}
    for d in dims:
        results["summary"][str(d)] = {}
        for m in METHODS:
            s = summarise(results["runs"], d, m)
            if s is not None:
                results["summary"][str(d)][m] = s
        # Public geometry of ApproximateSubspace (from n, d and the defaults,
        # not the data), read off its fitted attributes: the same in every
        # successful run at this d, absent if none succeeded.
        fitted = [
            run
            for run in results["runs"]
            if run["d"] == d
            and run["method"] == "ApproximateSubspace"
            and run["success"]
        ]
        for key in ["eigengap", "block_size", "predicted_error", "cell_width"]:
            values = {run[key] for run in fitted}
            assert len(values) <= 1, (d, key, values)
            results[key][str(d)] = values.pop() if values else None
        gap = results["eigengap"][str(d)]
        if gap is not None and gap <= GAMMA:
            print(f"WARNING: d={d}: eigengap_ {gap:.3g} <= gamma {GAMMA:g}")
    elapsed = time.time() - start
    results["seconds"] = elapsed
    text = _text(results) + [f"total time {elapsed:.1f} s"]
    print("\n".join(text))
    (out / "subspace.json").write_text(json.dumps(results, indent=1))
    docs = None if (args.quick or args.no_docs) else Path(args.docs)
    write_outputs(results, out, docs)


def write_outputs(results, out, docs):
    """The csv, rst and png in ``out``; the docs snippet and figure in ``docs``."""
    with open(out / "subspace.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(
            ["d", "repeat", "seed", "method", "success", "error", "seconds"]
        )
        for run in results["runs"]:
            writer.writerow(
                [
                    run["d"],
                    run["repeat"],
                    run["seed"],
                    run["method"],
                    run["success"],
                    "" if run["error"] is None else run["error"],
                    run["seconds"],
                ]
            )
    rst = _rst(results)
    (out / "subspace.rst").write_text("\n".join(rst))
    _plot(results, out / "subspace.png")
    if docs is not None:
        shutil.copyfile(out / "subspace.png", docs / "_static" / "bench_subspace.png")
        image = [
            ".. image:: /_static/bench_subspace.png",
            "   :alt: Spectral projection error of ApproximateSubspace, private "
            "PCA and",
            "         non-private PCA against the dimension d.",
            "",
        ]
        (docs / "user_guide" / "_bench_subspace.rst").write_text("\n".join(image + rst))


if __name__ == "__main__":
    main()
