"""Private Gaussian learning: error against n for MultivariateGaussian and baselines.

Errors of the private Gaussian ``N(mean_, covariance_)`` learnt from ``n``
rows of ``N(mu, Sigma)`` in ``d = 10`` dimensions, at several condition
numbers ``kappa`` of ``Sigma``, for

- ours: ``dpcov.distributions.MultivariateGaussian(epsilon, delta, **bounds,
  random_state=seed)`` with its defaults (``method="coinpress"``,
  ``n_iterations="auto"``: for the covariance and the mean separately, the
  number of steps, up to 12, and the budget share of the early steps, among
  1/4, 1/2 and 3/4, with the smallest predicted error, and the mean's share
  of the budget and its frame, all from public quantities); the comparison
  with CoinPress's own algorithms is the ``--reference`` mode below;
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

Reference mode (``--reference``): dpcov's CoinPress mechanisms and learner
against the published algorithms of [BDKU20], in the settings of the
paper's experiments (``cov_estimation.py`` and ``mean_estimation.py`` of the
authors' code; ``Sigma = I``). The reference is a numpy rewrite of the
authors' ``cov_est`` and ``multivariate_mean_iterative`` (``algos.py``; torch
is not needed), faithful to the code, defects included (see the comment above
``reference_cov_est``). Three tables:

- covariance, ``u = 10 sqrt(d)`` and ``rho = 0.5`` unless varied: ``d = 10``
  with ``n`` in {3000, 5000, 8000}; ``d = 2`` with ``n`` in {1000, 3000};
  ``d = 100`` with ``n`` in {1e4, 4e4, 8e4}; ``d = 10``, ``n = 7000`` with
  ``u / sqrt(d)`` in {1, 100, 1e4}; ``d = 10``, ``n = 8000`` with ``rho`` in
  {0.005, 0.05, 0.5}. For ``t`` in {2, 3, 4}: the reference ``cov_est`` with
  prior ``u`` and the budgets of its experiments (the first ``t - 1`` steps
  share ``rho / 4``, the last gets ``3 rho / 4``) against
  ``coinpress_covariance(X, covariance_plan(n, d, rho, u, n_steps=t,
  early_share=0.25, beta=0.1), rng)`` (our frame ``I <= S <= K I`` with ``K =
  u``); and "auto", ``best_covariance_plan(n, d, rho, u, beta=0.1)``, against
  the reference's best ``t`` (by trimmed mean, after the fact). Error
  ``||Sigma_hat - I||_F``;
- mean, ``d = 50``, ``r = 10 sqrt(d)``, centre 0, ``rho = 0.5`` unless
  varied: ``n`` in {1000, 2000, 5000, 10000}; ``n = 2000`` with ``rho`` in
  {0.01, 0.1, 0.5}; ``n = 2000`` with ``r / sqrt(d)`` in {1, 10, 1000}. The
  reference ``multivariate_mean_iterative`` against ``coinpress_mean(X,
  mean_plan(n, d, rho, r, 1.0, n_steps=t, early_share=0.25, beta=0.1), rng)``
  and ``best_mean_plan(n, d, rho, r, 1.0, beta=0.1)``. Error ``||mu_hat||``;
- learner: ``MultivariateGaussian(rho=rho, min_variance=1, max_variance=1 +
  1e-4, mean_bound=r, random_state=rng)`` with ``r = 10 sqrt(d)`` on rows of
  ``N(mu, I)``, ``mu = (r / 2) (1, ..., 1) / sqrt(d)``, ``d`` in {10, 50},
  ``n`` in {2000, 8000, 20000}, ``rho`` in {0.1, 0.5}, and with
  ``max_variance = 100`` at ``d`` in {10, 50, 100}, ``n`` in {2000, 8000},
  ``rho = 0.1``, against the reference
  given the same public information: ``cov_est`` on the ``n // 2`` pair
  differences ``(x_2i - x_2i-1) / sqrt(2)`` (divided by ``sqrt(min_variance)``)
  with ``u = max_variance / min_variance`` at ``3 rho / 4`` and ``t = 2``, and
  ``multivariate_mean_iterative`` at ``rho / 4``, ``t = 2``, on the rows
  divided by ``sqrt(max_variance)`` with centre 0 and radius ``mean_bound /
  sqrt(max_variance)``, mapped back. Also shown: the reference's covariance
  with its eigenvalues clipped to ``[min_variance, max_variance]`` (the
  post-processing ``MultivariateGaussian`` applies), and our fitted
  ``n_iterations_`` and the early shares of ``budget_split_``.

Each repetition ``i`` draws the rows once, from ``numpy.random.default_rng([2020,
part, d, n, i])`` (``part`` 1 covariance, 2 mean, 3 learner), and every
method runs on those rows with its own noise generator
``default_rng([2020, part, d, n, i, method, t])`` (``method`` 0 reference, 1
ours, 2 ours-auto; ``t`` left out for "auto" and the learner). Cells with the
same ``(d, n)`` therefore share rows (and noise draws) across ``u``, ``rho``
and ``r``; cells with equal parameters are run once. Reported per cell: the
10%-trimmed mean (``scipy.stats.trim_mean(x, 0.1)``, as the reference's
experiments report) and the median of each error, the ratio ours / reference
of the trimmed means with a 95% paired bootstrap interval (2000 resamples of
the repetitions) and the median of the per-repetition ratios; an asterisk
marks a ratio above 1 (at three significant digits) where the reference's
trimmed mean is below 1.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_gaussian.py --reference

(30 repetitions by default, ``--repeats`` to change; about 1.5 minutes on a
2-core machine with 2 processes, ``--jobs`` to change; each process uses one
BLAS thread) writes ``bench_gaussian_reference.json`` (every run) and
``bench_gaussian_reference.rst`` (csv-tables) to ``--out`` and copies the
tables to ``docs/user_guide/_bench_gaussian_reference.rst`` (not with
``--quick`` or ``--no-docs``). ``--reference --quick`` is a smoke run (four
cells, 3 repetitions); ``--reference --from-json`` rewrites the tables from an
existing ``bench_gaussian_reference.json``.

Prior mode (``--prior``): is the learner ever worse than its public prior?
``MultivariateGaussian(rho=rho, min_variance=1, max_variance=K, mean_bound=10
sqrt(d))`` on ``n`` rows of ``N(0, Sigma)``, ``Sigma = Q diag(logspace(0,
log10 K, d)) Q^T`` with ``Q`` a uniformly random rotation, in the cells
``(d, n, K, rho)`` = (10, 4000, 1e2, 0.1), (10, 4000, 1e4, 0.1), (50, 20000,
1e3, 0.1), (50, 20000, 1e3, 0.5) (low signal) and (10, 100000, 1e2, 1)
(plenty of signal). Repetition ``i`` draws ``Q`` and the rows from
``numpy.random.default_rng([2020, 4, d, n, i])`` and fits with
``random_state=default_rng([2020, 4, d, n, i, 1])``. Reported: the means over
the repetitions (20 by default) of the learner's covariance error, of the
prior's (``min_variance I``, whose error needs no data) and of the learner's
mean error, all in the Mahalanobis metric, the largest per-fit ratio of the
covariance errors, the parts released from the prior (``prior_parts_``) and
the rows the covariance was learnt from (``covariance_rows_``: pair
differences or all rows centred at a coarse private mean). The columns
"before" are the same measurement at commit 5a896c5, before the learner could
release its priors (constants in ``PRIOR_BEFORE``).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_gaussian.py --prior

(about 1 minute on one core) writes ``bench_gaussian_prior.json`` and
``bench_gaussian_prior.rst`` to ``--out`` and copies the table to
``docs/user_guide/_bench_gaussian_prior.rst`` (not with ``--no-docs``).

References: [BDKU20] Biswas, Dong, Kamath and Ullman, "CoinPress: Practical
Private Mean and Covariance Estimation", NeurIPS 2020 (code:
https://github.com/twistedcubic/coin-press). [KLSU19] Kamath, Li,
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
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

from dpcov.distributions import MultivariateGaussian
from dpcov.distributions._coinpress import (
    best_covariance_plan,
    best_mean_plan,
    coinpress_covariance,
    coinpress_mean,
    covariance_plan,
    mean_plan,
)
from dpcov.mechanisms._projection import project_psd_bounded
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
DEFAULT_BOUNDS = dict(min_variance=1e-4, max_variance=1e4, mean_bound=1e4)
BOUNDS = ["default", "tight"]
METHODS = ["ours", "naive", "KLSU", "non-private"]
PRIVATE = METHODS[:3]
METRICS = {
    "cov_error": ("covariance error", "||Sigma^-1/2 Sigma_hat Sigma^-1/2 - I||_F"),
    "mean_error": ("mean error", "||Sigma^-1/2 (mu_hat - mu)||_2"),
    "tv_bound": ("TV bound", "min(1, sqrt(KL / 2))"),
}
STYLE = {
    "ours": dict(marker="o", ls="-", color="C0"),
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


def _fit_one(method, X, seed, bnd, info):
    """Fit one method; returns (covariance, mean) or None when refused."""
    if method == "non-private":
        return np.cov(X, rowvar=False), X.mean(axis=0)
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
        info["covariance_rows"] = est.covariance_rows_
        info["prior_parts"] = "+".join(est.prior_parts_) or "none"
        if "covariance" in est.prior_parts_:
            # The public prior min_variance * I: no plan, no noise.
            info["predicted_cov_error"] = float("nan")
            return est.covariance_, est.mean_
        # The public plan's predicted error (recomputed from public inputs and
        # the covariance's share, which the fit records), on the rows it ran
        # on: the n / 2 pair differences, or all n rows centred at a coarse
        # private mean (without the bias of that mean).
        cov_rho = math.fsum(
            part.rho
            for key, part in est.budget_split_.items()
            if key.startswith("covariance")
        )
        rows = X.shape[0] if est.covariance_rows_ == "centred" else X.shape[0] // 2
        plan = best_covariance_plan(
            rows,
            X.shape[1],
            cov_rho,
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
        '"refused": KLSU\'s public pre-check rejected ``n`` before reading the '
        "data. The non-private column does not depend on the bounds. At "
        "kappa = 1 with tight bounds, ``Sigma = I`` sits on the public floor "
        "``min_variance = 1`` and clipping the released eigenvalues to it "
        "(post-processing) lets the private estimates beat the sample "
        "covariance at large n. Where a part's plan predicts more error than "
        "its public prior, ours and naive release the prior instead "
        "(``prior_parts_``): the covariance ``min_variance * I``, whose error "
        "is at most ``sqrt(d) (1 - 1/K)`` (3.16 with the default bounds; 0 "
        "covariance steps). Ours estimates the covariance from all ``n`` rows "
        "centred at a coarse private mean where its plan predicts that better "
        "(``covariance_rows_``).",
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


# ---------------------------------------------------------------------------
# --reference: dpcov against the published CoinPress algorithms
# ---------------------------------------------------------------------------
#
# The two functions below are a numpy rewrite of the reference code of
# [BDKU20] (https://github.com/twistedcubic/coin-press, file algos.py:
# cov_est / cov_est_step for the covariance, multivariate_mean_iterative /
# multivariate_mean_step for the mean, and utils.py: psd_proj_symm). They
# follow it line by line and keep on purpose what it does:
#
# - rows as row vectors: W = X A, the update A <- (Z + eta I)^(-1/2) A and the
#   output A^(-1) Z_t A^(-1) with the A from before the last step (the order
#   is only right when the preconditioners commute, e.g. for Sigma = I);
# - its "PSD projection" U diag(max(s, 0)) U^T from the SVD U diag(s) V^T,
#   i.e. the matrix absolute value, not the clipping of negative eigenvalues;
# - its ridge eta = (2 sqrt(d / n) + d / n) / 2 (sampling only, no noise
#   term), the clipping radius gamma = gaussian_tailbound(d, 0.1) in the
#   whitened frame and the noise variance gamma^4 / (rho_i n^2) on the upper
#   triangle (diagonal included), mirrored;
# - the inverse square root as the reference computes it: the inverse, then
#   the square root of its singular values;
# - for the mean: gamma = gaussian_tailbound(d, 0.01), the clipping radius
#   min(sqrt(r^2 + 6 r + gamma^2), r + gamma), the projection of the rows onto
#   that ball around the current centre *in place* (a later step sees the rows
#   already projected by the earlier ones, as in the reference, which copies
#   the data once per call), noise sd = (2 c / n) / sqrt(2 rho_i) and the next
#   radius sqrt(1 / n + sd^2) gamma;
# - the budgets of its experiments (cov_estimation.py, mean_estimation.py):
#   [rho] for t = 1, otherwise rho / (4 (t - 1)) for each of the first t - 1
#   steps and 3 rho / 4 for the last.
#
# Differences that do not change the algorithm: float64 instead of torch's
# float32, numpy Generators instead of torch's and numpy's global generators.

REF_SEED = 2020
REF_REPEATS = 30
REF_QUICK_REPEATS = 3
REF_STEPS = (2, 3, 4)
REF_BETA = 0.1
REF_EARLY_SHARE = 0.25
REF_TRIM = 0.1
REF_BOOTSTRAP = 2000
#: Public variance bounds given to the learner (Sigma = I) in the third table.
REF_MIN_VARIANCE = 1.0
REF_MAX_VARIANCE = 1.0 + 1e-4
#: Budget split of the learner comparison (MultivariateGaussian's own split).
REF_COV_SHARE = 0.75
#: Codes of the parts and methods in the lists given to default_rng.
REF_PARTS = {"covariance": 1, "mean": 2, "learner": 3}
REF_METHODS = {"reference": 0, "ours": 1, "ours-auto": 2}


def gaussian_tailbound(d, b):
    """``algos.gaussian_tailbound``: ``sqrt(d + 2 sqrt(d ln(1/b)) + 2 ln(1/b))``."""
    return math.sqrt(d + 2.0 * math.sqrt(d * math.log(1.0 / b)) + 2.0 * math.log(1 / b))


def reference_budgets(rho, t):
    """The per-step budgets of the reference experiments (``Ps1`` ... ``Ps5``)."""
    if t == 1:
        return [rho]
    return [rho / (4.0 * (t - 1))] * (t - 1) + [3.0 * rho / 4.0]


def _reference_psd_proj_symm(S):
    # utils.psd_proj_symm: U diag(clamp(D, min=0)) U^T from torch.svd(S).
    U, s, _ = np.linalg.svd(S)
    return (U * np.maximum(s, 0.0)) @ U.T


def reference_cov_est_step(X, A, rho, rng):
    """``algos.cov_est_step``: one step, returns the new ``A`` and ``Z``."""
    n, d = X.shape
    W = X @ A
    gamma = gaussian_tailbound(d, 0.1)
    eta = 0.5 * (2.0 * math.sqrt(d / n) + math.sqrt(d / n) ** 2)
    # Truncate the rows to norm gamma.
    norm_ratio = gamma / np.sqrt(np.einsum("ij,ij->i", W, W))
    large = norm_ratio < 1
    W[large] *= norm_ratio[large, np.newaxis]
    # Symmetric noise: upper triangle with the diagonal, mirrored.
    Y = rng.standard_normal((d, d)) * math.sqrt(gamma**4 / (rho * n**2))
    Y = np.triu(Y)
    Y = Y + Y.T - np.diag(np.diag(Y))
    Z = W.T @ W / n + Y
    Z = _reference_psd_proj_symm(Z)
    inv = np.linalg.inv(Z + eta * np.eye(d))
    inv_u, inv_d, inv_vt = np.linalg.svd(inv)
    inv_sqrt = (inv_u * np.sqrt(inv_d)) @ inv_vt
    return inv_sqrt @ A, Z


def reference_cov_est(X, u, rhos, rng):
    """``algos.cov_est``: CoinPress covariance with prior ``Sigma <= u I``."""
    d = X.shape[1]
    A = np.eye(d) / math.sqrt(u)
    for rho in rhos[:-1]:
        A, _ = reference_cov_est_step(X, A, rho, rng)
    _, Z_t = reference_cov_est_step(X, A, rhos[-1], rng)
    A_inv = np.linalg.inv(A)
    return A_inv @ Z_t @ A_inv


def reference_mean_step(X, c, r, p, rng):
    """``algos.multivariate_mean_step`` (projects the rows of ``X`` in place)."""
    n, d = X.shape
    gamma = gaussian_tailbound(d, 0.01)
    clip_thresh = min(math.sqrt(r**2 + 2 * r * 3 + gamma**2), r + gamma)
    x = X - c
    mag_x = np.linalg.norm(x, axis=1)
    outside = mag_x > clip_thresh
    X[outside] = c + x[outside] / mag_x[outside, np.newaxis] * clip_thresh
    sd = (2.0 * clip_thresh / n) / math.sqrt(2.0 * p)
    c = np.sum(X, axis=0) / n + rng.normal(0.0, sd, size=d)
    r = math.sqrt(1.0 / n + sd**2) * gamma
    return c, r


def reference_mean(X, c, r, rhos, rng):
    """``algos.multivariate_mean_iterative`` on a copy of ``X`` (as called)."""
    X = np.array(X, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    for p in rhos:
        c, r = reference_mean_step(X, c, r, p, rng)
    return c


def _ref_rng(part, d, n, repeat, *extra):
    return np.random.default_rng([REF_SEED, REF_PARTS[part], d, n, repeat, *extra])


def _early_share(rhos):
    return sum(rhos[:-1]) / sum(rhos) if len(rhos) > 1 else 0.0


def reference_cells(quick=False):
    """The cells of the three tables (the settings of [BDKU20]'s experiments).

    Returns ``{part: [cell, ...]}``; a cell is a dict with ``group`` (what the
    row varies) and its parameters. Cells with equal parameters are run once.
    """
    cov, mean, learner = [], [], []
    for d, ns in [
        (10, [3000, 5000, 8000]),
        (2, [1000, 3000]),
        (100, [10_000, 40_000, 80_000]),
    ]:
        cov += [dict(group="n", d=d, n=n, u_factor=10.0, rho=0.5) for n in ns]
    cov += [
        dict(group="u", d=10, n=7000, u_factor=f, rho=0.5) for f in (1.0, 100.0, 1e4)
    ]
    cov += [
        dict(group="rho", d=10, n=8000, u_factor=10.0, rho=rho)
        for rho in (0.005, 0.05, 0.5)
    ]
    mean += [
        dict(group="n", d=50, n=n, r_factor=10.0, rho=0.5)
        for n in (1000, 2000, 5000, 10_000)
    ]
    mean += [
        dict(group="rho", d=50, n=2000, r_factor=10.0, rho=rho)
        for rho in (0.01, 0.1, 0.5)
    ]
    mean += [
        dict(group="r", d=50, n=2000, r_factor=f, rho=0.5) for f in (1.0, 10.0, 1000.0)
    ]
    learner += [
        dict(group="learner", d=d, n=n, r_factor=10.0, rho=rho)
        for d in (10, 50)
        for n in (2000, 8000, 20_000)
        for rho in (0.1, 0.5)
    ]
    # Looser public bounds (max_variance = 100): the mean's frame matters.
    learner += [
        dict(group="learner", d=d, n=n, r_factor=10.0, rho=0.1, max_variance=100.0)
        for d in (10, 50, 100)
        for n in (2000, 8000)
    ]
    if quick:
        cov = [cov[0], cov[3]]
        mean = [mean[0]]
        learner = [learner[1]]
    return {"covariance": cov, "mean": mean, "learner": learner}


def _cell_key(part, cell):
    params = {k: v for k, v in cell.items() if k != "group"}
    return part + ":" + ",".join(f"{k}={v!r}" for k, v in sorted(params.items()))


def _ref_covariance_run(cell, repeat):
    d, n, rho = cell["d"], cell["n"], cell["rho"]
    u = cell["u_factor"] * math.sqrt(d)
    X = _ref_rng("covariance", d, n, repeat).standard_normal((n, d))
    eye = np.eye(d)
    errors = {"non-private": float(np.linalg.norm(np.cov(X, rowvar=False) - eye))}
    for t in REF_STEPS:
        rng = _ref_rng("covariance", d, n, repeat, REF_METHODS["reference"], t)
        cov = reference_cov_est(X, u, reference_budgets(rho, t), rng)
        errors[f"reference t={t}"] = float(np.linalg.norm(cov - eye))
        plan = covariance_plan(
            n, d, rho, u, n_steps=t, early_share=REF_EARLY_SHARE, beta=REF_BETA
        )
        rng = _ref_rng("covariance", d, n, repeat, REF_METHODS["ours"], t)
        cov = coinpress_covariance(X, plan, rng)[0]
        errors[f"ours t={t}"] = float(np.linalg.norm(cov - eye))
    plan = best_covariance_plan(n, d, rho, u, beta=REF_BETA)
    rng = _ref_rng("covariance", d, n, repeat, REF_METHODS["ours-auto"])
    cov = coinpress_covariance(X, plan, rng)[0]
    errors["ours auto"] = float(np.linalg.norm(cov - eye))
    info = dict(auto_steps=plan.n_steps, auto_early_share=_early_share(plan.rhos))
    return errors, info


def _ref_mean_run(cell, repeat):
    d, n, rho = cell["d"], cell["n"], cell["rho"]
    r = cell["r_factor"] * math.sqrt(d)
    X = _ref_rng("mean", d, n, repeat).standard_normal((n, d))
    errors = {"non-private": float(np.linalg.norm(X.mean(axis=0)))}
    for t in REF_STEPS:
        rng = _ref_rng("mean", d, n, repeat, REF_METHODS["reference"], t)
        mu_hat = reference_mean(X, np.zeros(d), r, reference_budgets(rho, t), rng)
        errors[f"reference t={t}"] = float(np.linalg.norm(mu_hat))
        plan = mean_plan(
            n, d, rho, r, 1.0, n_steps=t, early_share=REF_EARLY_SHARE, beta=REF_BETA
        )
        rng = _ref_rng("mean", d, n, repeat, REF_METHODS["ours"], t)
        errors[f"ours t={t}"] = float(np.linalg.norm(coinpress_mean(X, plan, rng)))
    plan = best_mean_plan(n, d, rho, r, 1.0, beta=REF_BETA)
    rng = _ref_rng("mean", d, n, repeat, REF_METHODS["ours-auto"])
    errors["ours auto"] = float(np.linalg.norm(coinpress_mean(X, plan, rng)))
    info = dict(auto_steps=plan.n_steps, auto_early_share=_early_share(plan.rhos))
    return errors, info


def _ref_learner_run(cell, repeat):
    """MultivariateGaussian against the reference algorithms given the same
    public information (variance bounds, mean bound, budget split)."""
    d, n, rho = cell["d"], cell["n"], cell["rho"]
    max_variance = cell.get("max_variance", REF_MAX_VARIANCE)
    bound = cell["r_factor"] * math.sqrt(d)
    mu = np.full(d, bound / 2.0 / math.sqrt(d))  # ||mu|| = mean_bound / 2
    X = _ref_rng("learner", d, n, repeat).standard_normal((n, d)) + mu
    eye = np.eye(d)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = MultivariateGaussian(
            rho=rho,
            min_variance=REF_MIN_VARIANCE,
            max_variance=max_variance,
            mean_bound=bound,
            random_state=_ref_rng("learner", d, n, repeat, REF_METHODS["ours"]),
        ).fit(X)
    errors = {
        "ours cov": float(np.linalg.norm(est.covariance_ - eye)),
        "ours mean": float(np.linalg.norm(est.mean_ - mu)),
    }
    split = getattr(est, "budget_split_", None)
    info = dict(
        n_iterations=dict(est.n_iterations_),
        budget_split=(
            None
            if split is None
            else {k: float(getattr(v, "rho", v)) for k, v in split.items()}
        ),
        warnings=sorted({type(w.message).__name__ for w in caught}),
    )
    # The reference, in the frames the same public bounds give: the covariance
    # from pair differences scaled by 1 / sqrt(min_variance), with u = K; the
    # mean from rows scaled by 1 / sqrt(max_variance) (covariance <= I).
    rng = _ref_rng("learner", d, n, repeat, REF_METHODS["reference"])
    m = n // 2
    pairs = (X[1 : 2 * m : 2] - X[0 : 2 * m : 2]) / math.sqrt(2.0)
    scale = math.sqrt(REF_MIN_VARIANCE)
    condition = max_variance / REF_MIN_VARIANCE
    cov = REF_MIN_VARIANCE * reference_cov_est(
        pairs / scale, condition, reference_budgets(REF_COV_SHARE * rho, 2), rng
    )
    top = math.sqrt(max_variance)
    mu_hat = top * reference_mean(
        X / top,
        np.zeros(d),
        bound / top,
        reference_budgets((1 - REF_COV_SHARE) * rho, 2),
        rng,
    )
    errors["reference cov"] = float(np.linalg.norm(cov - eye))
    errors["reference mean"] = float(np.linalg.norm(mu_hat - mu))
    # The same post-processing as MultivariateGaussian: eigenvalues clipped to
    # [min_variance, max_variance], the mean projected onto its ball.
    cov = project_psd_bounded(cov, max_variance, floor=REF_MIN_VARIANCE)
    norm = np.linalg.norm(mu_hat)
    if norm > bound:
        mu_hat = mu_hat * (bound / norm)
    errors["reference+post cov"] = float(np.linalg.norm(cov - eye))
    errors["reference+post mean"] = float(np.linalg.norm(mu_hat - mu))
    return errors, info


_REF_RUNNERS = {
    "covariance": _ref_covariance_run,
    "mean": _ref_mean_run,
    "learner": _ref_learner_run,
}


def _ref_task(task):
    part, cell, repeat = task
    t0 = time.perf_counter()
    errors, info = _REF_RUNNERS[part](cell, repeat)
    return dict(
        part=part,
        key=_cell_key(part, cell),
        repeat=repeat,
        seconds=time.perf_counter() - t0,
        errors=errors,
        **info,
    )


def _ref_worker_init():
    # No timing in this mode: one BLAS thread per process, one process a core.
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)


def _ref_cost(task):
    part, cell, _ = task
    return cell["n"] * cell["d"] ** 2 * (3 if part == "covariance" else 1)


def run_reference(repeats, quick, jobs):
    """Every cell and repetition of the reference mode; the results dict."""
    from concurrent.futures import ProcessPoolExecutor

    cells = reference_cells(quick)
    unique = {}
    for part, part_cells in cells.items():
        for cell in part_cells:
            unique.setdefault(_cell_key(part, cell), (part, cell))
    tasks = [(part, cell, r) for part, cell in unique.values() for r in range(repeats)]
    # Largest first, for the balance between processes.
    order = sorted(range(len(tasks)), key=lambda i: -_ref_cost(tasks[i]))
    start = time.time()
    runs = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=jobs, initializer=_ref_worker_init) as pool:
        futures = {i: pool.submit(_ref_task, tasks[i]) for i in order}
        for done, i in enumerate(order, start=1):
            runs[i] = futures[i].result()
            if done % max(1, len(tasks) // 20) == 0 or done == len(tasks):
                print(
                    f"[{time.time() - start:7.1f}s] {done}/{len(tasks)} runs",
                    flush=True,
                )
    return {
        "mode": "reference",
        "repeats": repeats,
        "quick": quick,
        "jobs": jobs,
        "beta": REF_BETA,
        "early_share": REF_EARLY_SHARE,
        "steps": list(REF_STEPS),
        "trim": REF_TRIM,
        "bootstrap": REF_BOOTSTRAP,
        "min_variance": REF_MIN_VARIANCE,
        "max_variance": REF_MAX_VARIANCE,
        "cov_share": REF_COV_SHARE,
        "cells": {
            part: [dict(cell, key=_cell_key(part, cell)) for cell in part_cells]
            for part, part_cells in cells.items()
        },
        "runs": runs,
        "cpu": _cpu(),
        "cpu_count": os.cpu_count(),
        "seconds": time.time() - start,
    }


def _ref_compare(ours, ref, rng):
    """Trimmed means, medians, their ratio with a paired bootstrap interval,
    and the median of the per-run ratios."""
    ours, ref = np.asarray(ours, dtype=float), np.asarray(ref, dtype=float)
    out = {
        "ours_tm": float(stats.trim_mean(ours, REF_TRIM)),
        "ours_med": float(np.median(ours)),
        "ref_tm": float(stats.trim_mean(ref, REF_TRIM)),
        "ref_med": float(np.median(ref)),
        "ratio_median_per_run": float(np.median(ours / ref)),
    }
    out["ratio"] = out["ours_tm"] / out["ref_tm"]
    idx = rng.integers(0, ours.size, size=(REF_BOOTSTRAP, ours.size))
    boot = stats.trim_mean(ours[idx], REF_TRIM, axis=1) / stats.trim_mean(
        ref[idx], REF_TRIM, axis=1
    )
    out["ratio_lo"], out["ratio_hi"] = (
        float(q) for q in np.percentile(boot, [2.5, 97.5])
    )
    return out


def summarise_reference(results):
    """Per cell and comparison: ``results["summary"][key][name]``."""
    by_key = {}
    for run in results["runs"]:
        by_key.setdefault(run["key"], []).append(run)
    summary = {}
    for key, runs in by_key.items():
        runs = sorted(runs, key=lambda run: run["repeat"])
        errors = {
            name: [run["errors"][name] for run in runs] for name in runs[0]["errors"]
        }
        rng = np.random.default_rng([REF_SEED, 99])
        cell = {
            "errors": {
                k: float(stats.trim_mean(v, REF_TRIM)) for k, v in errors.items()
            }
        }
        if key.startswith("learner"):
            for what in ("cov", "mean"):
                for ref in ("reference", "reference+post"):
                    cell[f"{what} vs {ref}"] = _ref_compare(
                        errors[f"ours {what}"], errors[f"{ref} {what}"], rng
                    )
            cell["n_iterations"] = sorted(
                {
                    (run["n_iterations"]["covariance"], run["n_iterations"]["mean"])
                    for run in runs
                }
            )
            cell["early_shares"] = sorted(
                {
                    _learner_shares(run["budget_split"])
                    for run in runs
                    if run["budget_split"]
                }
            )
            cell["warnings"] = sorted({w for run in runs for w in run["warnings"]})
        else:
            for t in REF_STEPS:
                cell[f"t={t}"] = _ref_compare(
                    errors[f"ours t={t}"], errors[f"reference t={t}"], rng
                )
            best = min(REF_STEPS, key=lambda t: cell[f"t={t}"]["ref_tm"])
            cell["auto"] = _ref_compare(
                errors["ours auto"], errors[f"reference t={best}"], rng
            )
            cell["auto"]["reference_t"] = best
            cell["auto_steps"] = sorted({run["auto_steps"] for run in runs})
            cell["auto_early_share"] = sorted({run["auto_early_share"] for run in runs})
        cell["median_seconds"] = float(np.median([run["seconds"] for run in runs]))
        summary[key] = cell
    results["summary"] = summary
    return results


def _learner_shares(split):
    # (covariance early share, mean early share) from budget_split_.
    shares = []
    for part in ("covariance", "mean"):
        rhos = [v for k, v in split.items() if k.startswith(part)]
        shares.append(round(_early_share(rhos), 4) if rhos else None)
    return tuple(shares)


def _pair(s):
    return f"{_fmt(s['ref_tm'])} ({_fmt(s['ref_med'])})"


def _err(tm, med):
    return f"{_fmt(tm)} ({_fmt(med)})"


def _ratio(s, flags, label):
    text = _fmt(s["ratio"])
    if float(f"{s['ratio']:.3g}") > 1.0 and s["ref_tm"] < 1.0:
        text += "*"
        flags.append((label, s["ratio"], s["ref_tm"]))
    return text


def _interval(s):
    return f"{s['ratio_lo']:.2f} to {s['ratio_hi']:.2f}"


def _ref_tables(results):
    """The three tables: a list of (name, caption, header, rows); and the flags
    (ours / reference above 1 where the reference's error is below 1)."""
    summary, repeats = results["summary"], results["repeats"]
    flags = []
    tables = []
    for part, scale_name, metric, data in [
        ("covariance", "u / sqrt(d)", "||Sigma_hat - I||_F", "rows of N(0, I)"),
        ("mean", "r / sqrt(d)", "||mu_hat - mu||_2", "rows of N(0, I), centre 0"),
    ]:
        factor = "u_factor" if part == "covariance" else "r_factor"
        header = [
            "varies",
            "d",
            "n",
            scale_name,
            "rho",
            "t",
            "non-private",
            "reference",
            "ours",
            "ours / reference",
            "95% interval",
            "median of per-run ratios",
        ]
        rows = []
        for cell in results["cells"][part]:
            s = summary[cell["key"]]
            head = [cell["group"], cell["d"], cell["n"], f"{cell[factor]:g}"]
            head += [f"{cell['rho']:g}"]
            nonprivate = _fmt(s["errors"]["non-private"])
            label = (
                f"{part}: d={cell['d']}, n={cell['n']}, {scale_name}="
                f"{cell[factor]:g}, rho={cell['rho']:g}"
            )
            for t in REF_STEPS:
                c = s[f"t={t}"]
                rows.append(
                    head
                    + [t, nonprivate, _pair(c), _err(c["ours_tm"], c["ours_med"])]
                    + [_ratio(c, flags, f"{label}, t={t}"), _interval(c)]
                    + [_fmt(c["ratio_median_per_run"])]
                )
            c = s["auto"]
            steps = "/".join(str(t) for t in s["auto_steps"])
            rows.append(
                head
                + [f"auto ({steps})", nonprivate]
                + [f"{_pair(c)} at t={c['reference_t']}"]
                + [_err(c["ours_tm"], c["ours_med"])]
                + [_ratio(c, flags, f"{label}, auto ({steps} steps)"), _interval(c)]
                + [_fmt(c["ratio_median_per_run"])]
            )
        caption = (
            f"{part[0].upper() + part[1:]} error ``{metric}`` on {data}: "
            f"10%-trimmed mean (median) of {repeats} repetitions"
        )
        tables.append((part, caption, header, rows))
    header = [
        "d",
        "n",
        "rho",
        "max_variance",
        "ours: steps cov/mean",
        "ours: early shares cov/mean",
        "cov: ours",
        "cov: reference",
        "cov: reference, clipped",
        "cov: ours / reference",
        "cov: ours / reference, clipped",
        "95% interval",
        "mean: ours",
        "mean: reference",
        "mean: ours / reference",
        "95% interval",
    ]
    rows = []
    for cell in results["cells"]["learner"]:
        s = summary[cell["key"]]
        top = cell.get("max_variance", REF_MAX_VARIANCE)
        label = (
            f"learner: d={cell['d']}, n={cell['n']}, rho={cell['rho']:g}, "
            f"max_variance={top:g}"
        )
        cov, cov_post = s["cov vs reference"], s["cov vs reference+post"]
        mean = s["mean vs reference"]
        steps = ", ".join(f"{c}/{m}" for c, m in s["n_iterations"])
        shares = ", ".join(
            "/".join("-" if x is None or x == 0 else f"{x:.2g}" for x in pair)
            for pair in s["early_shares"]
        )
        rows.append(
            [cell["d"], cell["n"], f"{cell['rho']:g}", f"{top:g}", steps]
            + [shares or "n/a"]
            + [_err(cov["ours_tm"], cov["ours_med"]), _pair(cov), _pair(cov_post)]
            + [_ratio(cov, flags, f"{label}, covariance")]
            + [_ratio(cov_post, flags, f"{label}, covariance vs clipped reference")]
            + [_interval(cov_post)]
            + [_err(mean["ours_tm"], mean["ours_med"]), _pair(mean)]
            + [_ratio(mean, flags, f"{label}, mean"), _interval(mean)]
        )
    caption = (
        "Learner: ``MultivariateGaussian`` against the reference algorithms given "
        "the same public information; errors ``||Sigma_hat - I||_F`` and "
        f"``||mu_hat - mu||_2``, 10%-trimmed mean (median) of {repeats} repetitions"
    )
    tables.append(("learner", caption, header, rows))
    return tables, flags


_REF_INTRO = [
    "Reference: a numpy rewrite of the authors' code for Biswas, Dong, Kamath "
    "and Ullman (2020) (``cov_est`` and ``multivariate_mean_iterative``, with "
    "the budgets of their experiments: with ``t`` steps, the first ``t - 1`` "
    "share ``rho / 4`` and the last gets ``3 rho / 4``), run on the same rows "
    "as ours. Ours: ``coinpress_covariance`` and ``coinpress_mean`` with plans "
    "of the same number of steps and the same budgets (``beta = 0.1``); "
    '"auto" is the plan dpcov chooses (its number of steps in brackets), '
    "compared with the reference's best ``t`` among 2, 3 and 4, picked after "
    "the fact by its trimmed mean. The covariance runs take ``Sigma <= u I`` "
    "as the public prior (ours with ``K = u``); the mean runs take ``||mu|| <= "
    'r`` and ``Sigma <= I``. "ours / reference" is the ratio of the trimmed '
    "means, with a 95% paired bootstrap interval over the repetitions and the "
    "median of the per-repetition ratios; an asterisk marks a ratio above 1 "
    "(at three significant digits) where the reference's trimmed mean is "
    "below 1.",
    "",
]

_REF_LEARNER_NOTE = [
    "Learner: ``MultivariateGaussian(rho=rho, min_variance=1, max_variance, "
    "mean_bound=r)`` with ``max_variance`` 1 + 1e-4 (tight) or 100, ``r = 10 "
    "sqrt(d)``, on rows of ``N(mu, I)`` with "
    "``||mu|| = r / 2``. The reference gets the same public information: its "
    "covariance runs on the ``n // 2`` pair differences ``(x_2i - x_2i-1) / "
    "sqrt(2)`` with ``u = max_variance / min_variance``, ``3 rho / 4`` and "
    "``t = 2``; its mean on the rows scaled by ``1 / sqrt(max_variance)`` "
    "with centre 0, radius ``r / sqrt(max_variance)``, ``rho / 4`` and ``t = "
    '2``. "clipped": the reference\'s covariance with its eigenvalues clipped '
    "to ``[min_variance, max_variance]``, the post-processing "
    "``MultivariateGaussian`` applies; with bounds this tight that clipping "
    "alone sets the covariance error of ours at ``max_variance = 1 + 1e-4``. "
    "Ours chooses its budget split from public values; with bounds this tight "
    "the public prior ``min_variance I`` is predicted better than any private "
    "covariance, so ours releases it and gives the mean the whole budget "
    "(the covariance's steps then read 0 and its early share -); so it does "
    "at ``max_variance = 100`` except at ``d = 10``, ``n = 8000``, where ours "
    "learns the covariance from all rows centred at a coarse private mean "
    '(``covariance_rows_`` "centred"; the steps and early shares shown are '
    "the covariance's and the final mean's). The rows' "
    "covariance is ``I = min_variance I``, so the released prior is exact "
    "there: its error 0 flatters ours (the prior mode's table measures the "
    "rule on covariances away from the bound).",
    "",
]


def _ref_rst(results):
    tables, _ = _ref_tables(results)
    lines = list(_REF_INTRO)
    for name, caption, header, rows in tables:
        if name == "learner":
            lines += _REF_LEARNER_NOTE
        lines += [
            f".. csv-table:: {caption}",
            "   :header: " + ", ".join(f'"{h}"' for h in header),
            "",
        ]
        for row in rows:
            lines.append("   " + ", ".join(f'"{c}"' for c in row))
        lines.append("")
    return lines


def _ref_text(results):
    tables, flags = _ref_tables(results)
    lines = []
    for _, caption, header, rows in tables:
        cells = [header] + [[str(c) for c in row] for row in rows]
        widths = [max(len(str(row[i])) for row in cells) for i in range(len(header))]
        lines.append(caption.replace("``", ""))
        for row in cells:
            lines.append(
                "  ".join(str(c).rjust(w) for c, w in zip(row, widths, strict=True))
            )
        lines.append("")
    lines.append(
        "ours / reference above 1 where the reference's error is below 1: "
        + ("none" if not flags else f"{len(flags)} cells")
    )
    for label, ratio, ref in flags:
        lines.append(f"  {label}: ratio {ratio:.3g}, reference {ref:.3g}")
    return lines


def write_reference_outputs(results, out, docs):
    """The JSON and rst in ``out``; the rst also in ``docs/user_guide``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_gaussian_reference.json").write_text(json.dumps(results, indent=1))
    rst = "\n".join(_ref_rst(results))
    (out / "bench_gaussian_reference.rst").write_text(rst)
    if docs is not None:
        (docs / "user_guide" / "_bench_gaussian_reference.rst").write_text(rst)


def reference_main(args):
    out = Path(args.out)
    docs = None if (args.quick or args.no_docs) else Path(args.docs)
    if args.from_json:
        results = json.loads((out / "bench_gaussian_reference.json").read_text())
    else:
        if args.repeats is not None:
            repeats = args.repeats
        else:
            repeats = REF_QUICK_REPEATS if args.quick else REF_REPEATS
        jobs = args.jobs or os.cpu_count() or 1
        results = run_reference(repeats, args.quick, jobs)
    summarise_reference(results)
    print("\n".join(_ref_text(results)))
    print(f"total time {results['seconds']:.1f} s ({results['jobs']} processes)")
    write_reference_outputs(results, out, docs)


#: Cells (d, n, K, rho) of the prior mode: four low-signal cells, then one
#: with plenty of signal.
PRIOR_CELLS = [
    (10, 4000, 1e2, 0.1),
    (10, 4000, 1e4, 0.1),
    (50, 20_000, 1e3, 0.1),
    (50, 20_000, 1e3, 0.5),
    (10, 100_000, 1e2, 1.0),
]
PRIOR_REPEATS = 20
#: The prior mode at commit 5a896c5 (20 repetitions, same data and seeds):
#: mean covariance error and mean error of each cell.
PRIOR_BEFORE = {
    (10, 4000, 1e2, 0.1): (21.59, 0.113),
    (10, 4000, 1e4, 0.1): (1583, 0.6903),
    (50, 20_000, 1e3, 0.1): (480.2, 0.195),
    (50, 20_000, 1e3, 0.5): (20.49, 0.1006),
    (10, 100_000, 1e2, 1.0): (0.04636, 0.009325),
}


def _prior_run(cell, repeat):
    d, n, condition, rho = cell
    rng = np.random.default_rng([2020, 4, d, n, repeat])
    # A uniformly random rotation: QR of a Gaussian matrix, signs fixed.
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    q = q * np.sign(np.diag(r))
    lam = np.logspace(0, math.log10(condition), d)
    X = rng.normal(size=(n, d)) @ (q * np.sqrt(lam)).T
    est = MultivariateGaussian(
        rho=rho,
        min_variance=1.0,
        max_variance=condition,
        mean_bound=10 * math.sqrt(d),
        random_state=np.random.default_rng([2020, 4, d, n, repeat, 1]),
    )
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X)
    seconds = time.perf_counter() - start
    root = (q / np.sqrt(lam)) @ q.T
    eye = np.eye(d)
    return {
        "cov_error": float(np.linalg.norm(root @ est.covariance_ @ root - eye)),
        "prior_error": float(np.linalg.norm(root @ root - eye)),
        "mean_error": float(np.linalg.norm(root @ est.mean_)),
        "prior_parts": list(getattr(est, "prior_parts_", ())),
        "covariance_rows": getattr(est, "covariance_rows_", "pairs"),
        "seconds": seconds,
    }


def _prior_rst(results):
    header = [
        "d",
        "n",
        "K",
        "rho",
        "prior parts",
        "covariance rows",
        "covariance error",
        "before",
        "prior's error",
        "largest ratio",
        "mean error",
        "before",
    ]
    rows = []
    for cell in results["cells"]:
        d, n, condition, rho = cell["cell"]
        runs = cell["runs"]
        cov = np.mean([r["cov_error"] for r in runs])
        prior = np.mean([r["prior_error"] for r in runs])
        ratio = max(r["cov_error"] / r["prior_error"] for r in runs)
        mean = np.mean([r["mean_error"] for r in runs])
        parts = sorted({" and ".join(r["prior_parts"]) or "none" for r in runs})
        layouts = sorted({r.get("covariance_rows", "pairs") for r in runs})
        before = PRIOR_BEFORE.get((d, n, condition, rho), (None, None))
        rows.append(
            [
                d,
                n,
                f"{condition:g}",
                rho,
                ", ".join(parts),
                ", ".join(layouts),
                _fmt(cov),
                "" if before[0] is None else _fmt(before[0]),
                _fmt(prior),
                _fmt(ratio),
                _fmt(mean),
                "" if before[1] is None else _fmt(before[1]),
            ]
        )
    lines = [
        f".. csv-table:: Covariance and mean errors (Mahalanobis, means over "
        f"{results['repeats']} repetitions) against the public prior "
        "``min_variance I``; largest ratio: the largest per-fit ratio of the "
        "learner's covariance error to the prior's; before: commit 5a896c5",
        "   :header: " + ", ".join(f'"{h}"' for h in header),
        "",
    ]
    lines += ["   " + ", ".join(f'"{c}"' for c in row) for row in rows]
    return lines + [""], rows, header


def prior_main(args):
    out = Path(args.out)
    repeats = args.repeats or PRIOR_REPEATS
    start = time.time()
    results = {"repeats": repeats, "cells": []}
    for cell in PRIOR_CELLS:
        runs = [_prior_run(cell, i) for i in range(repeats)]
        results["cells"].append({"cell": list(cell), "runs": runs})
    results["seconds"] = time.time() - start
    lines, rows, header = _prior_rst(results)
    print("  ".join(header))
    for row in rows:
        print("  ".join(str(c) for c in row))
    print(f"total time {results['seconds']:.1f} s")
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_gaussian_prior.json").write_text(json.dumps(results, indent=1))
    (out / "bench_gaussian_prior.rst").write_text("\n".join(lines))
    if not args.no_docs:
        path = Path(args.docs) / "user_guide" / "_bench_gaussian_prior.rst"
        path.write_text("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        help=f"repetitions (default 5; {REF_REPEATS} with --reference, "
        f"{REF_QUICK_REPEATS} with --reference --quick)",
    )
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--docs", default="docs", help="docs folder to copy into")
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--from-json",
        action="store_true",
        help="rewrite the csv, rst, png and docs from --out/bench_gaussian.json",
    )
    parser.add_argument(
        "--reference",
        action="store_true",
        help="dpcov's CoinPress against the published algorithms of BDKU20",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="processes for --reference (default: the number of cores)",
    )
    parser.add_argument(
        "--prior",
        action="store_true",
        help="the learner against its public prior in low-signal cells",
    )
    args = parser.parse_args()
    if args.prior:
        prior_main(args)
        return
    if args.reference:
        reference_main(args)
        return
    if args.repeats is None:
        args.repeats = 5
    out = Path(args.out)
    if args.from_json:
        results = json.loads((out / "bench_gaussian.json").read_text())
        print("\n".join(_text(results)))
        write_outputs(results, out, None if args.no_docs else Path(args.docs))
        return
    ns = QUICK_NS if args.quick else NS
    repeats = min(args.repeats, 2) if args.quick else args.repeats
    out.mkdir(parents=True, exist_ok=True)
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
        "covariance_rows",
        "prior_parts",
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
