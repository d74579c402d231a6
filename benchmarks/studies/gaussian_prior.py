"""Is the Gaussian learner ever worse than its public prior?

``MultivariateGaussian(rho, min_variance=1, max_variance=K, mean_bound=10
sqrt(d))`` on ``n`` rows of ``N(0, Sigma)``, ``Sigma`` with eigenvalues
log-spaced from 1 to ``K`` in a uniformly random basis, in four low-signal
cells and one with plenty of signal. Mahalanobis errors of the covariance
and of the mean, the error of the prior ``min_variance I`` (no data needed),
the largest per-fit ratio of the covariance's error to the prior's, the
share of fits that release the prior covariance (``prior_parts_``) and that
learn it from all rows centred at a coarse private mean
(``covariance_rows_``); "before": the same means at commit 5a896c5, before
the learner could release its priors.
"""

import math
import warnings

import numpy as np

from dpcov.distributions import MultivariateGaussian

from ._gaussian import ListedStudy, gaussian_errors, listed, rotation

CELLS = [(10, 4000, 1e2, 0.1), (10, 4000, 1e4, 0.1), (50, 20_000, 1e3, 0.1)]
CELLS += [(50, 20_000, 1e3, 0.5), (10, 100_000, 1e2, 1.0)]
#: Commit 5a896c5, same data and seeds: mean covariance and mean errors.
BEFORE = {
    (10, 4000, 1e2, 0.1): (21.59, 0.113),
    (10, 4000, 1e4, 0.1): (1583, 0.6903),
    (50, 20_000, 1e3, 0.1): (480.2, 0.195),
    (50, 20_000, 1e3, 0.5): (20.49, 0.1006),
    (10, 100_000, 1e2, 1.0): (0.04636, 0.009325),
}


def _learner(data, cell, r):
    d, n, K = cell["d"], cell["n"], cell["K"]
    rng = np.random.default_rng([2020, 4, d, n, r])  # the old script's stream
    q, lam = rotation(rng, d), np.logspace(0, math.log10(K), d)
    X = rng.normal(size=(n, d)) @ (q * np.sqrt(lam)).T
    est = MultivariateGaussian(
        rho=cell["rho"], min_variance=1.0, max_variance=K,
        mean_bound=10 * math.sqrt(d),
        random_state=np.random.default_rng([2020, 4, d, n, r, 1]),
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X)
    errors = gaussian_errors(est.covariance_, est.mean_, q, lam, np.zeros(d))
    prior = gaussian_errors(np.eye(d), np.zeros(d), q, lam, np.zeros(d))["cov"]
    return {
        "covariance error": errors["cov"],
        "prior's error": prior,
        "ratio": errors["cov"] / prior,
        "mean error": errors["mean"],
        "prior covariance share": float("covariance" in est.prior_parts_),
        "centred rows share": float(est.covariance_rows_ == "centred"),
    }


class PriorStudy(ListedStudy):
    def execute(self, grid, options, repeats, n_jobs=1):
        rows, _ = super().execute(grid, options, repeats, n_jobs)
        for row in rows:
            row["largest ratio"] = max(row["runs"]["learner ratio"])
            cov, mean = BEFORE.get(tuple(row[k] for k in grid), (None, None))
            row["covariance error before"], row["mean error before"] = cov, mean
        return rows, self.table(rows, grid, repeats)


STUDY = PriorStudy(
    name="gaussian_prior",
    title=__doc__.splitlines()[0],
    caption="Covariance and mean errors (Mahalanobis) against the public prior",
    grid=listed(
        [dict(zip("d n K rho".split(), c, strict=True)) for c in CELLS],
        "d n K rho".split(),
    ),
    zipped=True,
    methods={"learner": _learner},
    repeats=20,
    quick={"d": [10], "n": [4000], "K": [1e2], "rho": [0.1], "repeats": 2},
    docs="docs/user_guide/_bench_gaussian_prior.rst",
)
