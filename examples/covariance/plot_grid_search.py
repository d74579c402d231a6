"""
===============================================
Tuning a private covariance with GridSearchCV
===============================================

A private covariance estimator works in a :class:`~sklearn.pipeline.Pipeline`
and :class:`~sklearn.model_selection.GridSearchCV`, which ranks candidates by
the estimator's ``score`` (the Gaussian log-likelihood of held-out rows).

Privacy set-up: each fit is (epsilon, 1e-6)-DP with respect to replacing one
row, with rows divided by a public constant so that their norms are at most 1
(``data_norm=1``).

The search is itself a release: it fits ``n_candidates * n_splits + 1``
estimators on overlapping subsets of the same rows, so its cost is the sum of
all their budgets, computed below.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
import numpy as np
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpcov.accounting import compose
from dpcov.covariance import SeparateCovariance
from dpcov.utils import check_privacy_params

rng = np.random.default_rng(0)
cov = np.array([[1.0, 0.6, 0.0], [0.6, 1.0, 0.3], [0.0, 0.3, 0.5]])
X = rng.multivariate_normal(np.zeros(3), cov, size=6000)


def scale(Z):
    # Public scaling: Gaussian rows with these variances have norm below 6
    # except with negligible probability; longer rows are clipped anyway.
    return Z / 6.0


# eigenvalue_floor="auto" keeps the covariance invertible, so that every
# held-out log-likelihood is finite and the candidates can be ranked.
pipe = make_pipeline(
    FunctionTransformer(scale),
    SeparateCovariance(data_norm=1.0, eigenvalue_floor="auto", random_state=0),
)
grid = {"separatecovariance__epsilon": [0.1, 1.0, 10.0]}
search = GridSearchCV(pipe, grid, cv=3).fit(X)
for params, score in zip(
    search.cv_results_["params"], search.cv_results_["mean_test_score"], strict=False
):
    print(params, round(score, 3))
print("best:", search.best_params_)

# %%
# Budget arithmetic. Every candidate is fitted on each of the 3 training folds,
# then the best one is refitted on all rows: 3 * 3 + 1 = 10 fits. Each fit's
# budget follows from its parameters (``check_privacy_params`` is what ``fit``
# uses); the zCDP budgets add up.
params = search.cv_results_["params"]
budgets = [
    check_privacy_params(p["separatecovariance__epsilon"], 1e-6)
    for p in params
    for _ in range(search.n_splits_)
]
budgets.append(search.best_estimator_[-1].guarantee_)
total = compose(budgets)
print(f"{len(budgets)} fits; total {total}, i.e. {total.to_approx_dp(1e-6)}")
