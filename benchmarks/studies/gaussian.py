"""Private Gaussian learning: error against n for MultivariateGaussian and baselines.

``N(mean_, covariance_)`` learnt from ``n`` rows of ``N(mu, Sigma)`` in
``d = 10`` at (1, 1e-6)-DP, ``Sigma = Q diag(logspace(0, log10 kappa, d))
Q^T`` with a uniformly random rotation ``Q`` and ``mu`` uniform in
``[-5, 5]^d`` (the same at every ``n``). Methods: ours
(``MultivariateGaussian`` with its defaults), naive (``n_iterations=1``: one
clipped Gaussian release of each part), KLSU (``method="klsu"``, whose
public pre-check may refuse ``n``: NaN, counted in "KLSU refused share"),
non-private (``np.cov`` and the sample mean). Public bounds: default
(``min_variance=1e-4, max_variance=1e4, mean_bound=1e4``) or tight
(``min_variance=1, max_variance=max(kappa, 2)``, same ``mean_bound``).
Metrics, affine-invariant: covariance error
``||Sigma^-1/2 Sigma_hat Sigma^-1/2 - I||_F``, mean error
``||Sigma^-1/2 (mu_hat - mu)||``, Pinsker's bound ``min(1, sqrt(KL / 2))``
on the total variation, and the fit's wall-clock time.
"""

import math
import time
import warnings

import numpy as np

from dpcov.distributions import MultivariateGaussian

from ..harness import line_figure, per_metric
from ._gaussian import ListedStudy, gaussian_errors, rotation

KAPPAS = [1.0, 1e2, 1e4]
DEFAULT = dict(min_variance=1e-4, max_variance=1e4, mean_bound=1e4)


def _data(cell, r):
    kappa, n, d = cell["kappa"], cell["n"], 10
    # The old script's streams: truth from [7, r, i], rows from [7, r, i, n].
    i = KAPPAS.index(kappa) if kappa in KAPPAS else int(kappa)
    rng = np.random.default_rng([7, r, i])
    q, lam = rotation(rng, d), np.logspace(0.0, math.log10(kappa), d)
    mu = rng.uniform(-5.0, 5.0, size=d)
    rows = np.random.default_rng([7, r, i, n]).normal(size=(n, d))
    return rows @ (q * np.sqrt(lam)).T + mu, q, lam, mu


def _bounds(cell):
    if cell["bounds"] == "default":
        return dict(DEFAULT)
    return dict(DEFAULT, min_variance=1.0, max_variance=max(cell["kappa"], 2.0))


def _learner(name, **options):
    def method(data, cell, r):
        X, q, lam, mu = data
        if name == "non-private":
            return gaussian_errors(np.cov(X, rowvar=False), X.mean(axis=0), q, lam, mu)
        est = MultivariateGaussian(
            epsilon=1.0, delta=1e-6, beta=0.1, random_state=1000 * r + 7,
            **_bounds(cell), **options,
        )  # fmt: skip
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():  # seeded fits; prior releases are counted
                warnings.simplefilter("ignore")
                est.fit(X)
        except ValueError as exc:  # KLSU's public pre-check, before the data
            if "recursive preconditioning cannot reach" not in str(exc):
                raise
            return dict.fromkeys(["cov", "mean", "TV", "s"], np.nan) | {
                "refused share": 1.0
            }
        out = gaussian_errors(est.covariance_, est.mean_, q, lam, mu)
        out["s"] = time.perf_counter() - start
        if name == "KLSU":
            out["refused share"] = 0.0
        if name == "ours":
            out["cov steps"] = est.n_iterations_["covariance"]
            out["mean steps"] = est.n_iterations_["mean"]
        return out

    return method


METHODS = {
    "ours": _learner("ours"),
    "naive": _learner("naive", n_iterations=1),
    "KLSU": _learner("KLSU", method="klsu"),
    "non-private": _learner("non-private"),
}


def _figure(rows):
    # A panel per metric and condition number; a line per learner and bounds.
    panels = [
        {**row, **{f"{m} ({row['bounds']})": row[m] for m in METHODS}}
        for row in per_metric(rows, ["cov", "TV"], METHODS)
    ]
    bounds = list(dict.fromkeys(row["bounds"] for row in rows))
    private = [m for m in METHODS if m != "non-private"]
    series = {f"{m} ({b})": f"{m} ({b})" for b in bounds for m in private}
    # The non-private estimate does not depend on the bounds.
    series["non-private"] = f"non-private ({bounds[0]})"
    return line_figure(
        panels,
        x="n",
        series=series,
        panel=lambda r: f"{r['metric']}, kappa = {r['kappa']:g}",
        ylabel="error",
        logx=True,
        logy=True,
    )


STUDY = ListedStudy(
    name="gaussian",
    title=__doc__.splitlines()[0],
    caption="Steps of ours' plans and KLSU's refusals",
    grid={
        "bounds": ["default", "tight"],
        "kappa": KAPPAS,
        "n": [10_000, 30_000, 100_000, 300_000, 1_000_000],
    },
    data=_data,
    methods=METHODS,
    parts={
        "cov": "Covariance error ||Sigma^-1/2 Sigma_hat Sigma^-1/2 - I||_F",
        "mean": "Mean error ||Sigma^-1/2 (mu_hat - mu)||_2",
        "TV": "Total variation bound min(1, sqrt(KL / 2))",
        "s": "Fit time (s)",
    },
    repeats=5,
    summary="median",
    quick={"bounds": ["tight"], "kappa": [1.0], "n": [10_000], "repeats": 2},
    docs="docs/user_guide/_bench_gaussian.rst",
    figure=_figure,
    image="docs/_static/bench_gaussian.png",
)
