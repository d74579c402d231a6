"""Private radius: exponential mechanism against sparse vector.

Relative Frobenius error ``||C_hat - C||_F / ||C||_F`` of SeparateCov
(``Sep``) and AdaptiveCov (``Ada``) given a row-norm bound found privately by
the sparse-vector search at 1/8 of the budget (``SVT 1/8``) or the
exponential mechanism at 1/8 or 3/16 (``EM``), on Gaussian rows with feature
``i`` of standard deviation ``1 / i`` (as in the synthetic experiments of
Dong, Liang and Yi, 2022) and on heavy-tailed rows (the same, each scaled by
``0.5 + Pareto(3)``). Each fit is (epsilon, 1e-6)-DP in total: the radius
step on its share, the estimator on the rest; ``-`` where the table has too
few rows for that radius.
"""

import numpy as np

from dpcov.accounting import ZCDP, zcdp_rho
from dpcov.covariance import AdaptiveCovariance, SeparateCovariance
from dpcov.mechanisms import (
    exponential_radius_min_samples,
    private_radius_exponential,
    private_radius_from_counts,
    private_radius_min_samples,
    radius_counts,
)

from ..harness import Study
from ._covariance import picks, quiet_fit, rel_error

#: (name, share of the budget, mechanism)
RADII = [("SVT 1/8", 0.125, "svt"), ("EM 1/8", 0.125, "em"), ("EM 3/16", 0.1875, "em")]
ESTIMATORS = {"Sep": SeparateCovariance, "Ada": AdaptiveCovariance}


def _errors(cell, r):
    """Every column of repetition ``r``; its fits share one random stream."""
    n, d, epsilon = cell["n"], cell["d"], cell["epsilon"]
    rng = np.random.default_rng(1000 * r + 3)
    X = rng.normal(size=(n, d)) / np.arange(1, d + 1)
    if cell["tails"] == "heavy":
        X *= 0.5 + rng.pareto(3.0, size=(n, 1))
    target = np.cov(X.T, bias=True)
    counts = radius_counts(np.linalg.norm(X, axis=1))
    rho = zcdp_rho(epsilon, 1e-6)
    rng = np.random.default_rng(1000 * r + 3)
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
            out[f"{short} {name}"] = rel_error(quiet_fit(est, X).covariance_, target)
    return out


STUDY = Study(
    name="radius",
    title=__doc__.splitlines()[0],
    caption="Relative Frobenius error (delta = 1e-6; - : too few rows for that radius)",
    grid={
        "tails": ["gaussian", "heavy"],
        "d": [10, 50],
        "n": [1_000, 10_000, 100_000],
        "epsilon": [0.5, 1.0, 2.0],
    },
    data=_errors,
    methods=picks([f"{e} {name}" for e in ESTIMATORS for name, _, _ in RADII]),
    repeats=6,
    summary="median",
    quick={
        "tails": ["gaussian"],
        "d": [10],
        "n": [1_000],
        "epsilon": [1.0],
        "repeats": 2,
    },
    docs="docs/user_guide/_bench_radius.rst",
)
