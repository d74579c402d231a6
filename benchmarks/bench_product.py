"""Private product distributions over {0,1}^d: Gaussian mechanism vs PPDE.

Total variation distance between the true product distribution ``Ber(p)``
and the released ``Ber(q)`` (``q = probabilities_`` of
``dpcov.distributions.ProductBernoulli``), bounded exactly on both sides
through the Bhattacharyya coefficient ``BC = prod_j (sqrt(p_j q_j) +
sqrt((1 - p_j)(1 - q_j)))``: ``1 - BC <= TV <= sqrt(1 - BC**2)``
(:func:`dpcov.distributions._ppde.bernoulli_tv_bounds`, computed in log space).
The table reports the medians over repetitions of both bounds.

Methods, all at ``rho = 0.5`` (``ProductBernoulli(rho=0.5, ...)``, default
``min_probability="auto"``, ``beta=0.1``):

- gaussian: ``method="gaussian"`` (the default), the Gaussian mechanism on
  the empirical marginals;
- ppde: ``method="ppde"`` with the private orientation step (a tenth of the
  rows), Algorithm 7 of Kamath, Li, Singhal and Ullman (2019);
- gaussian (known), ppde (known): ``orientation="known"``, only on the
  sparse instances, where every marginal is indeed at most 1/2 (the
  estimates are then clipped to 1/2, and PPDE skips its orientation step);
- non-private: ``epsilon=inf`` (the empirical marginals, with the same
  floor), the sampling-error floor.

``fit`` refuses ``method="ppde"`` below the public requirement of
:func:`dpcov.distributions._ppde.ppde_min_samples`; at such sizes the
benchmark runs the mechanism itself (:func:`ppde_release`, with the
estimator's post-processing) and marks the row "below pre-check".

Instances, the marginals drawn once per instance from a fixed seed:

- log-uniform: ``d = 1000``, ``p_j`` log-uniform in ``[d**-1.5, 1/2]``, 30%
  of the coordinates (chosen at random) flipped to ``1 - p_j``;
- sparse: ``p_j = 2 / d`` except ten coordinates at 0.4, at ``d`` = 1000,
  5000, 20000 and 50000.

The ``d = 1000`` instances are dense boolean arrays fitted through the
estimator. At ``d >= 5000`` the sizes where either method is accurate (up to
``n = 3 10**7`` rows) only fit in memory as sparse matrices, which
``ProductBernoulli`` does not accept: those rows call the mechanisms
(:func:`naive_product_release`, :func:`ppde_release`, which take CSR input
without densifying it) with the estimator's generator and post-processing,
which is what ``fit`` computes (checked in tests/distributions).

Data: coordinate ``j`` gets ``Binomial(n, min(p_j, 1 - p_j))`` ones at
uniformly random rows (one uniform draw per row instead when that marginal
exceeds 0.05), and the coordinates with ``p_j > 1/2`` are complemented:
exactly iid Bernoulli rows, built in O(number of ones) for the sparse
coordinates. Repetition ``r`` draws them with
``numpy.random.default_rng([seed of the instance, n, r])`` and fits with
``random_state = 1000 r + 7``. Fits are timed (wall clock).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_product.py --repeats 3

(4 minutes 16 s on 2 cores in the recorded run, peak resident memory 5.9 GB,
at ``d = 50000, n = 3 10**7``)
writes ``product.json`` and ``product.rst`` (a csv-table) and
``product.png`` to ``--out`` and copies the table, with the figure, to
``docs/user_guide/_bench_product.rst`` and the figure to
``docs/_static/bench_product.png`` (not with ``--quick`` or ``--no-docs``).
``--quick`` is a smoke run (``d = 1000`` only, two sizes, one repetition,
a few seconds); ``--from-json`` rewrites the rst, png and docs copies from an
existing ``product.json`` without fitting.
"""

import argparse
import json
import math
import shutil
import time
from pathlib import Path

import numpy as np
from scipy import sparse

from dpcov.distributions._ppde import (
    bernoulli_tv_bounds,
    naive_product_release,
    ppde_min_samples,
    ppde_release,
)
from dpcov.distributions._product import ProductBernoulli, default_min_probability

RHO = 0.5
INSTANCES = [
    dict(
        key="log-uniform d=1000",
        d=1000,
        kind="log-uniform",
        seed=1,
        storage="dense",
        ns=[50_000, 200_000, 1_000_000],
    ),
    dict(
        key="sparse d=1000",
        d=1000,
        kind="sparse",
        seed=2,
        storage="dense",
        ns=[50_000, 200_000, 1_000_000],
    ),
    dict(
        key="sparse d=5000",
        d=5000,
        kind="sparse",
        seed=3,
        storage="csr",
        ns=[100_000, 500_000, 2_000_000],
    ),
    dict(
        key="sparse d=20000",
        d=20000,
        kind="sparse",
        seed=4,
        storage="csr",
        ns=[300_000, 2_000_000, 10_000_000],
    ),
    dict(
        key="sparse d=50000",
        d=50000,
        kind="sparse",
        seed=5,
        storage="csr",
        ns=[10_000_000, 30_000_000],
    ),
]
QUICK_KEYS = ["log-uniform d=1000", "sparse d=1000"]
METHODS = ["gaussian", "ppde", "gaussian (known)", "ppde (known)", "non-private"]
STYLE = {
    "gaussian": dict(marker="o", ls="-", color="tab:blue"),
    "ppde": dict(marker="s", ls="-", color="tab:orange"),
    "gaussian (known)": dict(marker="o", ls=":", color="tab:cyan"),
    "ppde (known)": dict(marker="s", ls=":", color="tab:red"),
    "non-private": dict(marker="x", ls="--", color="tab:grey"),
}


def marginals(instance):
    """The true marginals ``p`` of an instance (fixed seed)."""
    d = instance["d"]
    rng = np.random.default_rng(instance["seed"])
    if instance["kind"] == "sparse":
        p = np.full(d, 2.0 / d)
        p[rng.choice(d, 10, replace=False)] = 0.4
        return p
    low, high = math.log(d**-1.5), math.log(0.5)
    p = np.exp(rng.uniform(low, high, d))
    flip = rng.choice(d, int(round(0.3 * d)), replace=False)
    p[flip] = 1.0 - p[flip]
    return p


def make_data(p, n, rng, storage="dense"):
    """``n`` iid rows of ``Ber(p)``, built in O(number of ones).

    Column ``j`` gets ``Binomial(n, min(p_j, 1 - p_j))`` ones at uniformly
    random rows (a uniform draw per row when that marginal exceeds 0.05);
    columns with ``p_j > 1/2`` are then complemented. A boolean
    ndarray (``storage="dense"``) or a boolean CSR array (``"csr"``, only for
    marginals at most 1/2).
    """
    d = p.shape[0]
    low = np.minimum(p, 1.0 - p)
    rows = [
        # Dense columns: one uniform per row; sparse ones: the number of ones,
        # then that many distinct rows (exactly Bernoulli either way).
        np.flatnonzero(rng.random(n) < q)
        if q > 0.05
        else rng.choice(n, rng.binomial(n, q), replace=False)
        for q in low
    ]
    counts = np.array([r.size for r in rows])
    if storage == "csr":
        if np.any(p > 0.5):
            raise ValueError("csr storage is for marginals at most 1/2")
        indptr = np.concatenate([[0], np.cumsum(counts)])
        indices = np.concatenate(rows).astype(np.int32)
        data = np.ones(indices.size, dtype=bool)
        return sparse.csc_array((data, indices, indptr), shape=(n, d)).tocsr()
    X = np.zeros((n, d), dtype=bool)
    X[np.concatenate(rows), np.repeat(np.arange(d), counts)] = True
    X ^= p > 0.5  # complement the coordinates whose marginal is above 1/2
    return X


def _estimator(method, seed):
    name, _, known = method.partition(" (")
    if name == "non-private":
        return ProductBernoulli(epsilon=np.inf, random_state=seed)
    return ProductBernoulli(
        rho=RHO,
        method=name,
        orientation="known" if known else "private",
        random_state=seed,
    )


def _mechanism(est, X, seed):
    # What ProductBernoulli.fit computes, called on the mechanism directly
    # (sparse input, or below the ppde pre-check): the same release with the
    # same generator, then the estimator's post-processing.
    rng = np.random.default_rng(seed)
    rho = np.inf if est.epsilon == np.inf else est.rho
    if est.method == "ppde":
        release = ppde_release(
            X, rho=rho, rng=rng, orientation=est.orientation, beta=est.beta
        )
    else:
        release = naive_product_release(X, rho=rho, rng=rng)
    floor = default_min_probability(X.shape[0])
    ceiling = 0.5 if est.orientation == "known" else 1.0 - floor
    return np.clip(release.marginals, floor, ceiling)


def _fit(method, X, seed, n_min):
    """Fitted marginals, and whether ppde's pre-check passes (True otherwise)."""
    est = _estimator(method, seed)
    passed = est.method != "ppde" or X.shape[0] >= n_min[est.orientation]
    if sparse.issparse(X) or not passed:
        return _mechanism(est, X, seed), passed
    return est.fit(X).probabilities_, passed


def run(instances, repeats, start):
    """Every run: a list of per-run dicts."""
    runs = []
    for inst in instances:
        p = marginals(inst)
        n_min = {
            o: ppde_min_samples(inst["d"], rho=RHO, orientation=o)
            for o in ("private", "known")
        }
        methods = [m for m in METHODS if inst["kind"] == "sparse" or "known" not in m]
        for n in inst["ns"]:
            for r in range(repeats):
                rng = np.random.default_rng([inst["seed"], n, r])
                t0 = time.perf_counter()
                X = make_data(p, n, rng, inst["storage"])
                gen = time.perf_counter() - t0
                for method in methods:
                    seed = 1000 * r + 7
                    t0 = time.perf_counter()
                    q, passed = _fit(method, X, seed, n_min)
                    seconds = time.perf_counter() - t0
                    lower, upper = bernoulli_tv_bounds(p, q)
                    runs.append(
                        dict(
                            instance=inst["key"],
                            d=inst["d"],
                            n=n,
                            repeat=r,
                            seed=seed,
                            method=method,
                            tv_lower=lower,
                            tv_upper=upper,
                            precheck=passed,
                            seconds=seconds,
                        )
                    )
                    print(
                        f"[{time.time() - start:7.1f}s] {inst['key']} n={n} r={r} "
                        f"{method}: TV in [{lower:.3g}, {upper:.3g}]"
                        f"{'' if passed else ' (below pre-check)'} {seconds:.2f} s "
                        f"(data {gen:.1f} s)",
                        flush=True,
                    )
                del X
    return runs


def summarise(runs, instance, n, method):
    """Medians of the bounds and of the fit time in one cell, or None."""
    cell = [
        run
        for run in runs
        if run["instance"] == instance and run["n"] == n and run["method"] == method
    ]
    if not cell:
        return None
    return {
        "runs": len(cell),
        "tv_lower": float(np.median([run["tv_lower"] for run in cell])),
        "tv_upper": float(np.median([run["tv_upper"] for run in cell])),
        "seconds": float(np.median([run["seconds"] for run in cell])),
        "precheck": all(run["precheck"] for run in cell),
    }


def _summary(results):
    out = {}
    for inst in results["instances"]:
        for n in inst["ns"]:
            for m in METHODS:
                s = summarise(results["runs"], inst["key"], n, m)
                if s is not None:
                    out[f"{inst['key']}|{n}|{m}"] = s
    return out


def _rst(results):
    title = (
        f"Total variation to the true product distribution (exact Bhattacharyya "
        f"bounds, medians of {results['repeats']} repetitions), rho = {RHO:g}"
    )
    lines = [
        f".. csv-table:: {title}",
        "   :header: instance, n, method, TV lower bound, TV upper bound, "
        "fit time (s), ppde pre-check (n_min)",
        "",
    ]
    for inst in results["instances"]:
        for n in inst["ns"]:
            for m in METHODS:
                s = results["summary"].get(f"{inst['key']}|{n}|{m}")
                if s is None:
                    continue
                note = ""
                if m.startswith("ppde"):
                    orientation = "known" if "known" in m else "private"
                    n_min = results["n_min"][f"{inst['d']}|{orientation}"]
                    note = ("passed" if s["precheck"] else "below") + f" ({n_min})"
                cells = [
                    inst["key"],
                    f"{n:,}",
                    m,
                    f"{s['tv_lower']:.3g}",
                    f"{s['tv_upper']:.3g}",
                    f"{s['seconds']:.3g}",
                    note,
                ]
                lines.append("   " + ", ".join(f'"{c}"' for c in cells))
    return lines + [""]


def _text(results):
    lines = [
        f"{'instance':>20s} {'n':>9s} {'method':>17s} {'TV low':>8s} {'TV up':>8s}"
    ]
    for inst in results["instances"]:
        for n in inst["ns"]:
            for m in METHODS:
                s = results["summary"].get(f"{inst['key']}|{n}|{m}")
                if s is None:
                    continue
                flag = "" if s["precheck"] else "  below pre-check"
                lines.append(
                    f"{inst['key']:>20s} {n:>9d} {m:>17s} {s['tv_lower']:>8.3g} "
                    f"{s['tv_upper']:>8.3g}{flag}"
                )
    return lines


def _plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    instances = results["instances"]
    n_panels = len(instances) + 1  # the last panel holds the legend
    n_cols = min(3, n_panels)
    n_rows = math.ceil(n_panels / n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(4.1 * n_cols, 3.5 * n_rows))
    axes = np.atleast_1d(axes).ravel()
    for ax, inst in zip(axes, instances, strict=False):
        for m in METHODS:
            cells = [
                (n, results["summary"].get(f"{inst['key']}|{n}|{m}"))
                for n in inst["ns"]
            ]
            cells = [(n, s) for n, s in cells if s is not None]
            if not cells:
                continue
            ns = np.array([n for n, _ in cells], dtype=float)
            lo = np.array([s["tv_lower"] for _, s in cells])
            hi = np.array([s["tv_upper"] for _, s in cells])
            # The true TV lies between the bounds: upper bound with markers
            # (hollow where ppde is below its pre-check), lower bound thin.
            style = STYLE[m]
            ax.plot(ns, hi, color=style["color"], ls=style["ls"], lw=1.4)
            ax.plot(ns, lo, color=style["color"], ls=style["ls"], lw=0.7)
            ax.fill_between(ns, lo, hi, color=style["color"], alpha=0.06)
            for x, y, (_, s) in zip(ns, hi, cells, strict=True):
                ax.plot(
                    x,
                    y,
                    marker=style["marker"],
                    color=style["color"],
                    mfc=style["color"] if s["precheck"] else "none",
                    ms=5,
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_title(inst["key"], fontsize=9)
        ax.grid(alpha=0.3, which="major")
    for ax in axes[len(instances) :]:
        ax.axis("off")
    for row in range(n_rows):
        axes[row * n_cols].set_ylabel("TV: upper (thick), lower (thin) bound")
    handles = [
        Line2D(
            [],
            [],
            color=STYLE[m]["color"],
            ls=STYLE[m]["ls"],
            marker=STYLE[m]["marker"],
            label=m,
        )
        for m in METHODS
    ]
    handles.append(
        Line2D(
            [],
            [],
            color="grey",
            marker="s",
            mfc="none",
            ls="none",
            label="ppde below its pre-check\n(mechanism run directly)",
        )
    )
    axes[-1].legend(handles=handles, loc="center", fontsize=9, frameon=False)
    fig.suptitle(
        f"ProductBernoulli at rho={RHO:g}: exact TV bounds to the true product "
        f"distribution (medians of {results['repeats']} repetitions)",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_outputs(results, out, docs):
    """The rst and png in ``out``; the docs snippet and figure in ``docs``."""
    rst = _rst(results)
    (out / "product.rst").write_text("\n".join(rst))
    _plot(results, out / "product.png")
    if docs is not None:
        shutil.copyfile(out / "product.png", docs / "_static" / "bench_product.png")
        image = [
            ".. image:: /_static/bench_product.png",
            "   :alt: Total variation of ProductBernoulli's gaussian and ppde "
            "methods against n.",
            "",
        ]
        (docs / "user_guide" / "_bench_product.rst").write_text("\n".join(image + rst))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--docs", default="docs", help="docs folder to copy into")
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--from-json",
        action="store_true",
        help="rewrite the rst, png and docs from --out/product.json, no fits",
    )
    args = parser.parse_args()
    out = Path(args.out)
    if args.from_json:
        results = json.loads((out / "product.json").read_text())
        print("\n".join(_text(results)))
        write_outputs(results, out, None if args.no_docs else Path(args.docs))
        return
    instances = [
        inst for inst in INSTANCES if not args.quick or inst["key"] in QUICK_KEYS
    ]
    if args.quick:
        instances = [dict(inst, ns=inst["ns"][:2]) for inst in instances]
    repeats = 1 if args.quick else args.repeats
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    results = {
        "rho": RHO,
        "repeats": repeats,
        "instances": instances,
        "n_min": {
            f"{inst['d']}|{o}": ppde_min_samples(inst["d"], rho=RHO, orientation=o)
            for inst in instances
            for o in ("private", "known")
        },
        "runs": run(instances, repeats, start),
    }
    results["summary"] = _summary(results)
    results["seconds"] = time.time() - start
    print("\n".join(_text(results) + [f"total time {results['seconds']:.1f} s"]))
    (out / "product.json").write_text(json.dumps(results, indent=1))
    docs = None if (args.quick or args.no_docs) else Path(args.docs)
    write_outputs(results, out, docs)


if __name__ == "__main__":
    main()
