"""Private Gaussian learning: error against n for MultivariateGaussian and baselines.

Errors of the private Gaussian ``N(mean_, covariance_)`` learnt from ``n``
rows of ``N(mu, Sigma)`` in ``d = 10`` dimensions, at several condition
numbers ``kappa`` of ``Sigma``, for

- ours: ``dpcov.distributions.MultivariateGaussian(epsilon, delta, **bounds,
  random_state=seed)`` with its defaults (``method="coinpress"``,
  ``n_iterations="auto"``: for the covariance and the mean separately, the
  number of steps, up to 12, and the budget share of the early steps, among
  1/4, 1/2 and 3/4, with the smallest predicted error, from public quantities);
- CoinPress-style: the CoinPress reference defaults of [BDKU20], run through
  dpcov's mechanisms exactly as ``MultivariateGaussian._fit_coinpress`` does
  (the same pairing, budget split 3/4 covariance and 1/4 mean, whitening,
  prior radius for the mean and post-processing; the lines are copied below),
  but with the plans fixed as in the reference code and its published
  experiments: ``t = 3`` covariance steps and ``t = 2`` mean steps, the first
  ``t - 1`` steps sharing 1/4 of the budget and the last one 3/4
  (``covariance_plan(..., n_steps=3, early_share=0.25, beta=0.1)``,
  ``mean_plan(..., n_steps=2, early_share=0.25, beta=0.1)``). The copy is
  checked at start-up: with the plans ``n_iterations=3`` chooses it
  reproduces ``MultivariateGaussian(n_iterations=3)`` to the last bit;
- naive: ``MultivariateGaussian(n_iterations=1)``: one Gaussian-mechanism
  release of the covariance (pair differences clipped to the radius the public
  ``max_variance`` implies) and one of the mean (rows clipped to a ball around
  the origin of the radius ``mean_bound`` implies), no preconditioning;
- KLSU: ``MultivariateGaussian(method="klsu")`` (the recursive
  preconditioning of [KLSU19] with the constants of its proofs). Its public
  pre-check raises ``ValueError`` before reading the data when the recursion
  cannot reach its target condition bound with ``n`` rows: such a fit is
  recorded as "refused", not as a number;
- non-private: the sample mean and the sample covariance (``np.cov``,
  ``ddof=1``).

Privacy: ``epsilon = 1``, ``delta = 1e-6``; the estimator runs at the largest
``rho`` whose zCDP conversion gives that (``rho = 0.0244``). Public bounds, two
settings, each fitted on the same data:

- default: the estimator's defaults, ``min_variance = 1e-4``,
  ``max_variance = 1e4``, ``mean_bound = 1e4`` (public condition bound ``K =
  1e8`` whatever ``kappa``);
- tight: ``min_variance = 1`` and ``max_variance = max(kappa, 2)`` (the true
  extreme eigenvalues; ``max_variance`` must exceed ``min_variance``, hence 2
  at ``kappa = 1``), ``mean_bound = 1e4`` as before.

Data: ``Sigma = Q diag(logspace(0, log10(kappa), d)) Q^T`` with a uniformly
random rotation ``Q`` and ``mu`` uniform in ``[-5, 5]^d``, ``kappa`` in {1,
1e2, 1e4}, ``n`` in {1e4, 3e4, 1e5, 3e5, 1e6}. Repetition ``r`` draws ``Q``
and ``mu`` from ``numpy.random.default_rng([7, r, i])`` (``i`` the index of
``kappa``; the same ``Sigma`` and ``mu`` at every ``n``) and the rows from
``default_rng([7, r, i, n])``; every private fit uses ``random_state = 1000 r
+ 7``.

Metrics of a fit, all affine-invariant:

- covariance error ``||Sigma^(-1/2) Sigma_hat Sigma^(-1/2) - I||_F``
  (Mahalanobis-Frobenius);
- mean error ``||Sigma^(-1/2) (mu_hat - mu)||_2`` (Mahalanobis);
- a bound on the total variation distance: Pinsker's ``TV <= sqrt(KL / 2)``,
  capped at 1, with the closed-form ``KL(N(mu, Sigma) || N(mu_hat,
  Sigma_hat)) = (tr(M^-1) - d + ln det M + v^T M^-1 v) / 2``, ``M =
  Sigma^(-1/2) Sigma_hat Sigma^(-1/2)``, ``v = Sigma^(-1/2) (mu_hat - mu)``;
- the wall-clock time of the fit (``time.perf_counter``; the data generation
  is not timed).

Medians over the repetitions are reported (interquartile ranges are in the
JSON and shaded in the plot).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_gaussian.py

(about 1 minute on a 2-core machine with ``--repeats 5``, the default)
writes ``bench_gaussian.json`` (with every run), ``bench_gaussian.csv`` (one
row per fit), ``bench_gaussian.png`` and ``bench_gaussian.rst`` (csv-tables)
to ``--out`` (``benchmarks/results``), and copies the tables, with the figure,
to ``docs/user_guide/_bench_gaussian.rst`` and the figure to
``docs/_static/bench_gaussian.png`` (not with ``--quick`` or ``--no-docs``).
``--quick`` is a smoke run (``n`` up to 3e5, 2 repetitions, writes nothing
under ``docs``); ``--from-json`` rewrites the csv, rst, png and docs copies from
an existing ``bench_gaussian.json`` without fitting.

References: [BDKU20] Biswas, Dong, Kamath and Ullman, "CoinPress: Practical
Private Mean and Covariance Estimation", NeurIPS 2020. [KLSU19] Kamath, Li,
Singhal and Ullman, "Privately Learning High-Dimensional Distributions", COLT
2019.
"""

import argparse
import csv
import json
import math
import os
import shutil
import time
from pathlib import Path

import numpy as np
from scipy import linalg

from dpcov.accounting import split_budget
from dpcov.distributions import MultivariateGaussian
from dpcov.distributions._gaussian import MEAN_SHARE, _pairs
from dpcov.mechanisms._coinpress import (
    best_covariance_plan,
    best_mean_plan,
    coinpress_covariance,
    coinpress_mean,
    covariance_plan,
    mean_plan,
)
from dpcov.mechanisms._projection import project_l2_ball, project_psd_bounded
from dpcov.utils._random import check_random_state
from dpcov.utils.validation import check_zcdp_privacy_params

N_FEATURES = 10
EPSILON = 1.0
DELTA = 1e-6
BETA = 0.1
MEAN_RANGE = 5.0
KAPPAS = [1.0, 1e2, 1e4]
NS = [10_000, 30_000, 100_000, 300_000, 1_000_000]
QUICK_NS = NS[:-1]
#: CoinPress reference defaults (BDKU20's code and experiments).
COINPRESS_COV_STEPS = 3
COINPRESS_MEAN_STEPS = 2
COINPRESS_EARLY_SHARE = 0.25
DEFAULT_BOUNDS = dict(min_variance=1e-4, max_variance=1e4, mean_bound=1e4)
BOUNDS = ["default", "tight"]
METHODS = ["ours", "CoinPress-style", "naive", "KLSU", "non-private"]
PRIVATE = METHODS[:4]
METRICS = {
    "cov_error": ("covariance error", "||Sigma^-1/2 Sigma_hat Sigma^-1/2 - I||_F"),
    "mean_error": ("mean error", "||Sigma^-1/2 (mu_hat - mu)||_2"),
    "tv_bound": ("TV bound", "min(1, sqrt(KL / 2))"),
}
STYLE = {
    "ours": dict(marker="o", ls="-", color="C0"),
    "CoinPress-style": dict(marker="s", ls="-", color="C1"),
    "naive": dict(marker="^", ls="-", color="C2"),
    "KLSU": dict(marker="D", ls="-", color="C3"),
    "non-private": dict(marker="x", ls="--", color="k"),
}
SEED = 7


def bounds(setting, kappa):
    """Public bounds of a setting (keyword arguments of MultivariateGaussian)."""
    if setting == "default":
        return dict(DEFAULT_BOUNDS)
    return dict(
        min_variance=1.0,
        max_variance=max(kappa, 2.0),
        mean_bound=DEFAULT_BOUNDS["mean_bound"],
    )


def make_truth(kappa_index, kappa, repeat, d=N_FEATURES):
    """``Sigma = Q diag(lambda) Q^T`` (as its square root factor) and ``mu``."""
    rng = np.random.default_rng([SEED, repeat, kappa_index])
    # QR of a Gaussian matrix with the signs of R's diagonal fixed: a Haar
    # orthogonal matrix.
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    q *= np.sign(np.diag(r))
    lam = np.logspace(0.0, math.log10(kappa), d)
    mu = rng.uniform(-MEAN_RANGE, MEAN_RANGE, size=d)
    return q, lam, mu


def make_rows(q, lam, mu, n, kappa_index, repeat):
    rng = np.random.default_rng([SEED, repeat, kappa_index, n])
    X = rng.normal(size=(n, q.shape[0])) @ (q * np.sqrt(lam)).T
    X += mu
    return X


def gaussian_metrics(cov_hat, mean_hat, q, lam, mu):
    """Covariance and mean Mahalanobis errors, KL and the Pinsker TV bound."""
    d = q.shape[0]
    inv_root = (q / np.sqrt(lam)) @ q.T
    M = inv_root @ cov_hat @ inv_root
    M = (M + M.T) / 2.0
    cov_error = float(np.linalg.norm(M - np.eye(d)))
    v = inv_root @ (np.asarray(mean_hat) - mu)
    mean_error = float(np.linalg.norm(v))
    m, U = np.linalg.eigh(M)
    if m.min() <= 0:
        kl = math.inf
    else:
        w = U.T @ v
        kl = 0.5 * float(np.sum(1.0 / m - 1.0 + np.log(m)) + np.sum(w * w / m))
    tv = min(1.0, math.sqrt(max(kl, 0.0) / 2.0))
    return dict(cov_error=cov_error, mean_error=mean_error, kl=kl, tv_bound=tv)


def coinpress_fit(X, seed, min_variance, max_variance, mean_bound, plans):
    """``MultivariateGaussian._fit_coinpress`` (and ``fit``'s pre- and
    post-processing) with the plans given by ``plans``.

    ``plans`` maps ``(n_pairs, d, rho_cov, K)`` to a covariance plan and
    ``(n, d, rho_mean, prior, upper)`` to a mean plan (two callables).
    Returns ``(covariance, mean, cov_plan, mean_plan)``.
    """
    cov_planner, mean_planner = plans
    budget = check_zcdp_privacy_params(EPSILON, DELTA)
    rng = check_random_state(seed)
    scale = math.sqrt(min_variance)
    condition = max_variance / min_variance
    radius = mean_bound / scale
    X = np.asarray(X, dtype=np.float64) / scale
    n_samples, n_features = X.shape
    # -- copied from MultivariateGaussian._fit_coinpress --
    shares = split_budget(budget, {"cov": 1.0 - MEAN_SHARE, "mean": MEAN_SHARE})
    pairs = _pairs(X, rng)
    n_pairs = pairs.shape[0]
    cov_plan = cov_planner(n_pairs, n_features, shares["cov"].rho, condition)
    covariance, whitening = coinpress_covariance(pairs, cov_plan, rng)
    upper = cov_plan.upper[-1]
    if not math.isfinite(upper):
        whitening, upper = np.eye(n_features), condition
    prior = np.linalg.norm(whitening, 2) * radius
    m_plan = mean_planner(n_samples, n_features, shares["mean"].rho, prior, upper)
    whitened_mean = coinpress_mean(X @ whitening.T, m_plan, rng)
    mean = linalg.solve(whitening, whitened_mean)
    # -- copied from MultivariateGaussian.fit (post-processing) --
    covariance = project_psd_bounded(covariance, condition, floor=1.0)
    return (
        min_variance * covariance,
        scale * project_l2_ball(mean, radius),
        cov_plan,
        m_plan,
    )


def reference_plans():
    """The CoinPress reference plans: fixed steps, early steps share 1/4."""

    def cov(m, d, rho, K):
        return covariance_plan(
            m,
            d,
            rho,
            K,
            n_steps=COINPRESS_COV_STEPS,
            early_share=COINPRESS_EARLY_SHARE,
            beta=BETA,
        )

    def mean(n, d, rho, prior, upper):
        return mean_plan(
            n,
            d,
            rho,
            prior,
            upper,
            n_steps=COINPRESS_MEAN_STEPS,
            early_share=COINPRESS_EARLY_SHARE,
            beta=BETA,
        )

    return cov, mean


def check_copy():
    """The copied fit must reproduce MultivariateGaussian(n_iterations=3)."""

    def cov_planner(m, d, rho, K):
        return best_covariance_plan(m, d, rho, K, beta=BETA, n_steps=3)

    def mean_planner(n, d, rho, prior, upper):
        return best_mean_plan(n, d, rho, prior, upper, beta=BETA, n_steps=3)

    q, lam, mu = make_truth(99, 1e3, 99)
    X = make_rows(q, lam, mu, 20_000, 99, 99)
    for kw in [DEFAULT_BOUNDS, dict(min_variance=1.0, max_variance=1e3)]:
        kw = {**DEFAULT_BOUNDS, **kw}
        est = MultivariateGaussian(
            epsilon=EPSILON,
            delta=DELTA,
            beta=BETA,
            n_iterations=3,
            random_state=3,
            **kw,
        ).fit(X)
        covariance, mean, _, _ = coinpress_fit(
            X, 3, plans=(cov_planner, mean_planner), **kw
        )
        assert np.array_equal(covariance, est.covariance_), "covariance copy differs"
        assert np.array_equal(mean, est.mean_), "mean copy differs"


def _fit_one(method, X, seed, bnd, info):
    """Fit one method; returns (covariance, mean) or None when refused."""
    if method == "non-private":
        return np.cov(X, rowvar=False), X.mean(axis=0)
    if method == "CoinPress-style":
        covariance, mean, cov_plan, m_plan = coinpress_fit(
            X, seed, plans=reference_plans(), **bnd
        )
        info.update(
            steps_cov=cov_plan.n_steps,
            steps_mean=m_plan.n_steps,
            predicted_cov_error=cov_plan.predicted_error,
        )
        return covariance, mean
    kwargs = dict(epsilon=EPSILON, delta=DELTA, beta=BETA, random_state=seed, **bnd)
    if method == "naive":
        kwargs["n_iterations"] = 1
    elif method == "KLSU":
        kwargs["method"] = "klsu"
    est = MultivariateGaussian(**kwargs)
    try:
        est.fit(X)
    except ValueError as exc:
        # Only KLSU's public pre-check counts as a refusal; anything else is a
        # failure of the benchmark.
        if method != "KLSU" or "recursive preconditioning cannot reach" not in str(exc):
            raise
        info["refusal"] = str(exc)
        return None
    info["rho"] = est.rho_spent_
    if method == "KLSU":
        info.update(
            steps_preconditioner=est.n_iterations_["preconditioner"],
            steps_cov=est.n_iterations_["covariance"],
            steps_mean=est.n_iterations_["mean"],
        )
    else:
        info.update(
            steps_cov=est.n_iterations_["covariance"],
            steps_mean=est.n_iterations_["mean"],
        )
        # The public plan's predicted error (recomputed from public inputs).
        plan = best_covariance_plan(
            X.shape[0] // 2,
            X.shape[1],
            split_budget(
                check_zcdp_privacy_params(EPSILON, DELTA),
                {"cov": 1.0 - MEAN_SHARE, "mean": MEAN_SHARE},
            )["cov"].rho,
            bnd["max_variance"] / bnd["min_variance"],
            beta=BETA,
            n_steps=kwargs.get("n_iterations", "auto"),
        )
        assert plan.n_steps == info["steps_cov"]
        info["predicted_cov_error"] = plan.predicted_error
    return est.covariance_, est.mean_


def run_cell(kappa_index, kappa, n, repeat, start):
    """Every method and bounds setting on one dataset: a list of run dicts."""
    seed = 1000 * repeat + SEED
    q, lam, mu = make_truth(kappa_index, kappa, repeat)
    X = make_rows(q, lam, mu, n, kappa_index, repeat)
    runs = []
    for setting in BOUNDS:
        for method in METHODS:
            if method == "non-private" and setting != BOUNDS[0]:
                continue  # no bounds: fitted once, shown in both settings
            bnd = bounds(setting, kappa)
            info = {}
            t0 = time.perf_counter()
            fitted = _fit_one(method, X, seed, bnd, info)
            seconds = time.perf_counter() - t0
            run = dict(
                bounds="none" if method == "non-private" else setting,
                kappa=kappa,
                n=n,
                repeat=repeat,
                seed=seed,
                method=method,
                refused=fitted is None,
                seconds=seconds,
                **info,
            )
            if fitted is None:
                run.update(cov_error=None, mean_error=None, kl=None, tv_bound=None)
                shown = "refused"
            else:
                run.update(gaussian_metrics(*fitted, q, lam, mu))
                shown = (
                    f"cov {run['cov_error']:.3g} mean {run['mean_error']:.3g} "
                    f"TV<= {run['tv_bound']:.3g}"
                )
            runs.append(run)
            print(
                f"[{time.time() - start:7.1f}s] kappa={kappa:g} n={n} r={repeat} "
                f"{run['bounds']:>7s} {method:>15s}: {shown}, {seconds:.2f} s",
                flush=True,
            )
    return runs


def _cell(runs, setting, kappa, n, method):
    b = "none" if method == "non-private" else setting
    return [
        run
        for run in runs
        if run["bounds"] == b
        and run["kappa"] == kappa
        and run["n"] == n
        and run["method"] == method
    ]


def summarise(runs, setting, kappa, n, method):
    """Medians and quartiles of one cell (over its non-refused runs)."""
    cell = _cell(runs, setting, kappa, n, method)
    if not cell:
        return None
    ok = [run for run in cell if not run["refused"]]
    out = {
        "runs": len(cell),
        "refused": len(cell) - len(ok),
        "median_seconds": float(np.median([run["seconds"] for run in cell])),
    }
    for key in list(METRICS) + ["kl"]:
        vals = np.array([run[key] for run in ok], dtype=float)
        q = np.percentile(vals, [25, 50, 75]) if vals.size else [math.nan] * 3
        out[key] = float(q[1])
        out[key + "_q25"] = float(q[0])
        out[key + "_q75"] = float(q[2])
    for key in ["steps_cov", "steps_mean"]:
        values = sorted({run[key] for run in ok if key in run})
        out[key] = values
    return out


def _fmt(x, digits=3):
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.{digits}g}"


def _cell_text(s, key):
    if s is None:
        return ""
    if s["refused"] == s["runs"]:
        return "refused"
    text = _fmt(s[key])
    if s["refused"]:
        text += f" ({s['refused']}/{s['runs']} refused)"
    return text


def _n(n):
    """``30000`` -> ``"3e4"``."""
    exponent = int(math.floor(math.log10(n)))
    mantissa = n / 10**exponent
    return f"{mantissa:g}e{exponent}"


def _seconds(runs, setting, kappas, n, method):
    """Median fit time over kappa and repetitions, refused fits left out."""
    secs = [
        run["seconds"]
        for kappa in kappas
        for run in _cell(runs, setting, kappa, n, method)
        if not run["refused"]
    ]
    return float(np.median(secs)) if secs else None


def _steps(values):
    return "/".join(str(v) for v in values) if values else "-"


def _rows(results, key):
    rows = []
    for setting in BOUNDS:
        for kappa in results["kappas"]:
            for n in results["ns"]:
                summ = results["summary"][setting][str(kappa)][str(n)]
                rows.append(
                    (setting, kappa, n, [_cell_text(summ.get(m), key) for m in METHODS])
                )
    return rows


def _rst(results):
    r = results
    common = (
        f"d = {N_FEATURES}, epsilon = {EPSILON:g}, delta = {DELTA:g} "
        f"(rho = {r['rho']:.3g}), median of {r['repeats']} repetitions"
    )
    cpu = f"{r['cpu']}, {r.get('cpu_count', '?')} cores"
    lines = [
        "Bounds: *default* is the estimator's defaults (``min_variance=1e-4``, "
        "``max_variance=1e4``, ``mean_bound=1e4``); *tight* is "
        "``min_variance=1``, ``max_variance=max(kappa, 2)``, ``mean_bound=1e4``. "
        "CoinPress-style: 3 covariance steps and 2 mean steps, the early steps "
        "sharing 1/4 of each budget (the reference defaults). "
        '"refused": KLSU\'s public pre-check rejected ``n`` before reading the '
        "data. The non-private column does not depend on the bounds. At "
        "kappa = 1 with tight bounds, ``Sigma = I`` sits on the public floor "
        "``min_variance = 1`` and clipping the released eigenvalues to it "
        "(post-processing) lets the private estimates beat the sample "
        "covariance at large n.",
        "",
    ]
    header = ", ".join(["bounds", "kappa", "n"] + METHODS)
    for key, (label, formula) in METRICS.items():
        extra = ", ours: steps (cov/mean)" if key == "cov_error" else ""
        lines += [
            f".. csv-table:: {label[0].upper() + label[1:]} ``{formula}``; {common}",
            f"   :header: {header}{extra}",
            "",
        ]
        for setting, kappa, n, cells in _rows(r, key):
            row = [setting, f"{kappa:g}", _n(n)] + cells
            if key == "cov_error":
                s = r["summary"][setting][str(kappa)][str(n)]["ours"]
                row.append(f"{_steps(s['steps_cov'])} / {_steps(s['steps_mean'])}")
            lines.append("   " + ", ".join(f'"{c}"' for c in row))
        lines.append("")
    # Fit times: medians over kappa and repetitions.
    lines += [
        ".. csv-table:: Median fit time (s), over kappa and repetitions (refused "
        f"fits left out); {common} ({cpu})",
        "   :header: " + ", ".join(["bounds", "n"] + METHODS),
        "",
    ]
    for setting in BOUNDS:
        for n in r["ns"]:
            row = [setting, _n(n)]
            for m in METHODS:
                secs = _seconds(r["runs"], setting, r["kappas"], n, m)
                row.append("refused" if secs is None else f"{secs:.2g}")
            lines.append("   " + ", ".join(f'"{c}"' for c in row))
    return lines + [""]


def _text(results):
    lines = []
    w = 16
    for key, (label, formula) in METRICS.items():
        lines.append(f"{label} {formula} (median)")
        lines.append(
            f"{'bounds':>8s} {'kappa':>6s} {'n':>8s} "
            + " ".join(f"{m:>{w}s}" for m in METHODS)
            + ("   ours steps" if key == "cov_error" else "")
        )
        for setting, kappa, n, cells in _rows(results, key):
            line = f"{setting:>8s} {kappa:>6g} {n:>8d} " + " ".join(
                f"{c:>{w}s}" for c in cells
            )
            if key == "cov_error":
                s = results["summary"][setting][str(kappa)][str(n)]["ours"]
                line += f"   {_steps(s['steps_cov'])}/{_steps(s['steps_mean'])}"
            lines.append(line)
        lines.append("")
    lines.append("median fit time (s), over kappa, refused fits left out")
    for setting in BOUNDS:
        for n in results["ns"]:
            cells = []
            for m in METHODS:
                secs = _seconds(results["runs"], setting, results["kappas"], n, m)
                cells.append("refused" if secs is None else f"{secs:.3g}")
            lines.append(
                f"{setting:>8s} {n:>8d} " + " ".join(f"{c:>{w}s}" for c in cells)
            )
    return lines


def _plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kappas, ns = results["kappas"], results["ns"]
    panels = [
        ("cov_error", "default"),
        ("cov_error", "tight"),
        ("tv_bound", "default"),
        ("tv_bound", "tight"),
    ]
    fig, axes = plt.subplots(
        len(panels),
        len(kappas),
        figsize=(4.0 * len(kappas), 3.2 * len(panels)),
        sharex=True,
    )
    ylabel = {"cov_error": "covariance error", "tv_bound": "TV bound"}
    for row, (key, setting) in enumerate(panels):
        for col, kappa in enumerate(kappas):
            ax = axes[row, col]
            refused = []
            for m in METHODS:
                summ = [
                    results["summary"][setting][str(kappa)][str(n)].get(m) for n in ns
                ]
                pts = [
                    (n, s)
                    for n, s in zip(ns, summ, strict=True)
                    if s is not None and s["refused"] < s["runs"]
                ]
                if any(s is not None and s["refused"] for s in summ):
                    refused.append(m)
                if not pts:
                    continue
                x = np.array([n for n, _ in pts], dtype=float)
                med = np.array([s[key] for _, s in pts])
                lo = np.array([s[key + "_q25"] for _, s in pts])
                hi = np.array([s[key + "_q75"] for _, s in pts])
                ax.plot(x, med, ms=4, label=m, **STYLE[m])
                ax.fill_between(x, lo, hi, color=STYLE[m]["color"], alpha=0.15, lw=0)
            if refused:
                note = ", ".join(refused) + " refused"
                klsu = [
                    n
                    for n in ns
                    if (
                        s := results["summary"][setting][str(kappa)][str(n)].get("KLSU")
                    )
                    and s["refused"]
                ]
                if klsu and len(klsu) < len(ns):
                    note += f" at n <= {max(klsu):g}"
                elif klsu:
                    note += " at every n"
                ax.text(
                    0.03,
                    0.04,
                    note,
                    transform=ax.transAxes,
                    fontsize=7,
                    color=STYLE["KLSU"]["color"],
                )
            ax.set_xscale("log")
            ax.set_yscale("log")
            if key == "cov_error":
                ax.axhline(1.0, color="grey", lw=0.8, ls=":")
            else:
                ax.set_ylim(top=1.5)
            ax.grid(True, which="major", alpha=0.3)
            if row == 0:
                ax.set_title(f"kappa = {kappa:g}", fontsize=10)
            if col == 0:
                ax.set_ylabel(f"{ylabel[key]}\n({setting} bounds)", fontsize=9)
            if row == len(panels) - 1:
                ax.set_xlabel("n")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    for ax in axes.flat:
        h, lab = ax.get_legend_handles_labels()
        if len(h) > len(handles):
            handles, labels = h, lab
    fig.legend(
        handles,
        labels,
        loc="upper center",
        ncol=len(METHODS),
        fontsize=9,
        bbox_to_anchor=(0.5, 0.985),
    )
    fig.suptitle(
        f"Private Gaussian learning, d={N_FEATURES}, epsilon={EPSILON:g}, "
        f"delta={DELTA:g}: median over {results['repeats']} runs (quartiles shaded)",
        fontsize=10,
        y=0.999,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=85)
    plt.close(fig)


def _cpu():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--docs", default="docs", help="docs folder to copy into")
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--from-json",
        action="store_true",
        help="rewrite the csv, rst, png and docs from --out/bench_gaussian.json",
    )
    args = parser.parse_args()
    out = Path(args.out)
    if args.from_json:
        results = json.loads((out / "bench_gaussian.json").read_text())
        print("\n".join(_text(results)))
        write_outputs(results, out, None if args.no_docs else Path(args.docs))
        return
    ns = QUICK_NS if args.quick else NS
    repeats = min(args.repeats, 2) if args.quick else args.repeats
    out.mkdir(parents=True, exist_ok=True)
    check_copy()
    results = {
        "n_features": N_FEATURES,
        "epsilon": EPSILON,
        "delta": DELTA,
        "rho": check_zcdp_privacy_params(EPSILON, DELTA).rho,
        "beta": BETA,
        "kappas": KAPPAS,
        "ns": ns,
        "repeats": repeats,
        "bounds": {s: {str(k): bounds(s, k) for k in KAPPAS} for s in BOUNDS},
        "coinpress_style": dict(
            cov_steps=COINPRESS_COV_STEPS,
            mean_steps=COINPRESS_MEAN_STEPS,
            early_share=COINPRESS_EARLY_SHARE,
            mean_share=MEAN_SHARE,
        ),
        "cpu": _cpu(),
        "cpu_count": os.cpu_count(),
        "runs": [],
    }
    start = time.time()
    for i, kappa in enumerate(KAPPAS):
        for n in ns:
            for r in range(repeats):
                results["runs"] += run_cell(i, kappa, n, r, start)
    summarise_all(results)
    elapsed = time.time() - start
    results["seconds"] = elapsed
    print("\n".join(_text(results) + [f"total time {elapsed:.1f} s"]))
    (out / "bench_gaussian.json").write_text(json.dumps(results, indent=1))
    docs = None if (args.quick or args.no_docs) else Path(args.docs)
    write_outputs(results, out, docs)


def summarise_all(results):
    results["summary"] = {
        setting: {
            str(kappa): {
                str(n): {
                    m: s
                    for m in METHODS
                    if (s := summarise(results["runs"], setting, kappa, n, m))
                }
                for n in results["ns"]
            }
            for kappa in results["kappas"]
        }
        for setting in BOUNDS
    }


def write_outputs(results, out, docs):
    """The csv, rst and png in ``out``; the docs snippet and figure in ``docs``."""
    fields = [
        "bounds",
        "kappa",
        "n",
        "repeat",
        "seed",
        "method",
        "refused",
        "cov_error",
        "mean_error",
        "kl",
        "tv_bound",
        "seconds",
        "steps_cov",
        "steps_mean",
        "steps_preconditioner",
        "predicted_cov_error",
    ]
    with open(out / "bench_gaussian.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(fields)
        for run in results["runs"]:
            writer.writerow(["" if run.get(k) is None else run.get(k) for k in fields])
    rst = _rst(results)
    (out / "bench_gaussian.rst").write_text("\n".join(rst))
    _plot(results, out / "bench_gaussian.png")
    if docs is not None:
        shutil.copyfile(
            out / "bench_gaussian.png", docs / "_static" / "bench_gaussian.png"
        )
        image = [
            ".. image:: /_static/bench_gaussian.png",
            "   :alt: Covariance error and total-variation bound of the private",
            "         Gaussian learners against n, at three condition numbers and",
            "         two settings of the public bounds.",
            "",
        ]
        (docs / "user_guide" / "_bench_gaussian.rst").write_text("\n".join(image + rst))


if __name__ == "__main__":
    main()
