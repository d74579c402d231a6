"""Amin et al. (2019), Figure 1, reproduced: eigenvector sampling on real tables.

Iterative eigenvector sampling (EigenSamplingCovariance: allocation x
exponent) against Gauss/LapCov (GaussianCovariance; LapCov at
``delta = 0``), SeparateCov, the paper's own baseline as its text states it
(ADK19-baseline) and the zero matrix, on Wine (label as a 14th column) and
Diabetes (target as an 11th column; in place of Airfoil). Columns z-scored,
rows divided by the largest row norm (data-dependent: reproduction only);
target ``X^T X / n``, ``data_norm = 1``, ``assume_centered = True``.
``frobenius``: ``||C - X^T X / n||_F``; ``ridge``: mean over columns ``j`` of
the MSE of predicting ``j`` from the others with ``beta_j = (C_{-j,-j} +
1e-3 I)^{-1} C_{-j,j}``; ``non-private`` is that error for ``X^T X / n``.
"""

import warnings
from functools import cache

import numpy as np
from sklearn.datasets import load_diabetes, load_wine

from dpcov.covariance import (
    EigenSamplingCovariance,
    GaussianCovariance,
    SeparateCovariance,
)
from dpcov.mechanisms import project_psd_bounded

from ..harness import Study, line_figure, per_metric, rst_table
from ._spectral import old_seed

ESTIMATORS = {
    "ES-adapt-tight": (EigenSamplingCovariance, {"allocation": "adaptive"}),
    "ES-adapt-paper": (
        EigenSamplingCovariance,
        {"allocation": "adaptive", "exponent": "paper"},
    ),
    "ES-unif-tight": (EigenSamplingCovariance, {"allocation": "uniform"}),
    "Gauss/LapCov": (GaussianCovariance, {}),
    "SeparateCov": (SeparateCovariance, {}),
}


def adk19_baseline(X, epsilon, delta, rng):
    """The baselines of Amin et al. (2019) as their text states them.

    Pure DP: Laplace noise of scale ``2 d / epsilon`` on ``X^T X``; with
    ``delta > 0`` the classical Gaussian mechanism's s.d.
    ``sqrt(2 ln(1.25/delta)) / epsilon`` as printed (it omits the
    ``sqrt(2)`` L2 sensitivity: not the guarantee it claims). Divided by
    ``n`` and clamped to ``[0, 1]`` like dpcov's estimators.
    """
    n, d = X.shape
    if delta == 0:
        upper = rng.laplace(0.0, 2 * d / epsilon, (d, d))
    else:
        upper = rng.normal(0.0, np.sqrt(2 * np.log(1.25 / delta)) / epsilon, (d, d))
    noise = np.triu(upper) + np.triu(upper, 1).T
    return project_psd_bounded(X.T @ X / n + noise / n, 1.0)


@cache
def load(name):
    loader = {"wine": load_wine, "diabetes": load_diabetes}[name]
    features, target = loader(return_X_y=True)
    X = np.column_stack([features, target]).astype(float)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X / np.linalg.norm(X, axis=1).max()  # data-dependent: reproduction only


def ridge_error(C, X, lam=1e-3):
    d = X.shape[1]
    errors = []
    for j in range(d):
        rest = np.arange(d) != j
        beta = np.linalg.solve(C[np.ix_(rest, rest)] + lam * np.eye(d - 1), C[rest, j])
        errors.append(np.mean((X[:, j] - X[:, rest] @ beta) ** 2))
    return float(np.mean(errors))


def _data(cell, r):
    X = load(cell["data"])
    return X, X.T @ X / X.shape[0]


def _scores(release):
    def method(data, cell, r):
        X, target = data
        C = release(X, cell, old_seed(r))
        return {
            "frobenius": float(np.linalg.norm(C - target)),
            "ridge": ridge_error(C, X),
        }

    return method


def _estimator(cls, extra):
    def release(X, cell, seed):
        params = {"epsilon": cell["epsilon"], "delta": cell["delta"], "data_norm": 1.0}
        est = cls(**params, assume_centered=True, random_state=seed, **extra)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # seeded and noisy fits, on purpose
            return est.fit(X).covariance_

    return release


METHODS = {name: _scores(_estimator(*how)) for name, how in ESTIMATORS.items()}
METHODS["ADK19-baseline"] = _scores(
    lambda X, c, s: adk19_baseline(
        X, c["epsilon"], c["delta"], np.random.default_rng(s)
    )
)
METHODS["Zero"] = _scores(lambda X, c, s: np.zeros((X.shape[1],) * 2))
METHODS["non-private"] = _scores(lambda X, c, s: X.T @ X / X.shape[0])


class _ADK19Study(Study):
    def table(self, rows, grid, repeats):
        """One table per metric: a column per method."""
        head = super().table(rows, grid, repeats).split("\n\n")[0]
        texts = [head]
        for metric in ["frobenius", "ridge"]:
            shown = [m for m in self.methods if metric == "ridge" or m != "non-private"]
            table = [
                {
                    **{k: row[k] for k in grid},
                    **{m: row[f"{m} {metric}"] for m in shown},
                }
                for row in rows
            ]
            texts += [f"{metric}:", rst_table(table, [*grid, *shown])]
        return "\n\n".join(texts)


def _figure(rows):
    # The paper's Figure 1 is pure DP: a panel per table and metric.
    pure = [row for row in rows if row["delta"] == 0]
    return line_figure(
        per_metric(pure, ["frobenius", "ridge"], METHODS),
        x="epsilon",
        series={m: m for m in METHODS},
        panel=lambda r: f"{r['data']}, {r['metric']} (pure DP)",
        xlabel="epsilon",
        ylabel="error",
        logx=True,
        logy=True,
        columns=2,
    )


STUDY = _ADK19Study(
    name="adk19",
    title=__doc__.splitlines()[0],
    caption="Error of the released second moment",
    grid={
        "data": ["wine", "diabetes"],
        "delta": [0.0, 1e-6],
        "epsilon": [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0],
    },
    data=_data,
    methods=METHODS,
    repeats=100,
    quick={"data": ["wine"], "delta": [0.0], "epsilon": [1.0], "repeats": 2},
    docs="docs/user_guide/_bench_adk19.rst",
    figure=_figure,
    image="docs/_static/bench_adk19.png",
)
