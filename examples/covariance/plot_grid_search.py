"""
============================================================
Choosing a private covariance with GridSearchCV, on a budget
============================================================

A private covariance estimator works in a :class:`~sklearn.pipeline.Pipeline`
and :class:`~sklearn.model_selection.GridSearchCV`, which ranks candidates by
the estimator's ``score`` (the Gaussian log-likelihood of held-out rows).

Privacy set-up: each fit is (epsilon, 1e-6)-DP with respect to replacing one
row, with rows divided by a public constant so that their norms are at most 1
(``data_norm=1``).

The search is itself a sequence of releases: it fits
``n_candidates * n_splits + 1`` estimators on overlapping subsets of the same
rows. A :class:`~dpcov.accounting.BudgetAccountant` shared by all of them
records every fit and refuses the one that would exceed the total we allow;
:func:`~dpcov.model_selection.search_cost` computes the same ledger from the
search's parameters, before it runs (the tool for ``n_jobs > 1``).

The accountant counts fits; ranking candidates on held-out scores is not
private (see the privacy-model chapter), which is why the held-out rows here
come from a public sample of the same population.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
import numpy as np
from sklearn.model_selection import GridSearchCV, PredefinedSplit
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from dpcov.accounting import BudgetAccountant
from dpcov.covariance import (
    AdaptiveCovariance,
    GaussianCovariance,
    SeparateCovariance,
)
from dpcov.exceptions import BudgetExceeded
from dpcov.model_selection import search_cost

rng = np.random.default_rng(0)
cov = np.array([[1.0, 0.6, 0.0], [0.6, 1.0, 0.3], [0.0, 0.3, 0.5]])
private_rows = rng.multivariate_normal(np.zeros(3), cov, size=6000)
public_rows = rng.multivariate_normal(np.zeros(3), cov, size=2000)


def scale(Z):
    # Public scaling: Gaussian rows with these variances have norm below 6
    # except with negligible probability; longer rows are clipped anyway.
    return Z / 6.0


# %%
# The budget for the whole study, and the search: which covariance estimator
# suits these data, each at (1, 1e-6). (Searching over epsilon itself would be
# pointless: the largest budget always scores best, and the budget is decided
# before seeing the data.) The public rows serve only as the held-out fold
# (``PredefinedSplit``: -1 = always in training, 0 = the test fold), so the
# ranking of the candidates reads no private row.
accountant = BudgetAccountant(epsilon=2.2, delta=1e-6)
# With the defaults every held-out log-likelihood is finite (score's model
# floors the eigenvalues at the public noise level), so the candidates rank.
common = dict(epsilon=1.0, data_norm=1.0, accountant=accountant)
candidates = [
    GaussianCovariance(**common),
    SeparateCovariance(**common),
    AdaptiveCovariance(**common),
]
pipe = Pipeline([("scale", FunctionTransformer(scale)), ("cov", candidates[0])])
X = np.vstack([private_rows, public_rows])
fold = np.r_[np.full(len(private_rows), -1), np.zeros(len(public_rows))]
search = GridSearchCV(
    pipe,
    {"cov": candidates},
    cv=PredefinedSplit(fold),
    refit=False,
    error_score="raise",
)

# %%
# Plan first: the cost of the search, computed from its parameters alone, is
# checked against the accountant before any row is read.
plan = search_cost(search)
print(f"the search fits {len(plan)} times (no refit); planned total:", plan.total())
print(f"as (epsilon, delta): ({plan.epsilon_at(1e-6):.3f}, 1e-6)")
accountant.check(plan)

search.fit(X)
for params, score in zip(
    search.cv_results_["params"], search.cv_results_["mean_test_score"], strict=True
):
    print(type(params["cov"]).__name__, round(score, 3))
best = search.best_params_["cov"]
print("best:", type(best).__name__)

# %%
# The release: refit the chosen candidate on the private rows only. The
# accountant has recorded every fit of the search, and records this one too.
final = pipe.set_params(cov=best).fit(private_rows)
print(f"{len(accountant)} fits recorded:")
for label, guarantee in accountant.ledger:
    print("  ", label, guarantee)
print(f"total: ({accountant.epsilon:.3f}, {accountant.delta_cap:g})-DP")

# %%
# A fifth fit would break the total of (2.2, 1e-6): it is refused before it
# reads the data, and nothing is recorded.
try:
    pipe.fit(private_rows)
except BudgetExceeded as exc:
    print("refused:", exc)
print(f"still {len(accountant)} fits recorded")
