"""
================================================
Private PCA in a classification pipeline
================================================

:class:`dpcov.decomposition.PCA` replaces :class:`sklearn.decomposition.PCA`
in a :class:`~sklearn.pipeline.Pipeline`, and
:class:`~sklearn.model_selection.GridSearchCV` tunes it like any other step.
This example tunes the number of components at a fixed budget, counts what
the search spends with :func:`dpcov.model_selection.search_cost`, and then plots
the cross-validated accuracy against the budget, with scikit-learn's
non-private PCA as the reference.

Privacy set-up: each PCA fit is (epsilon, 1e-6)-DP with respect to replacing
one row of the digits data. Pixels lie in [0, 16], so clipping to that range
and dividing by 16 is a public scaling (a
:class:`~sklearn.preprocessing.StandardScaler` would read the data without
privacy), and rows of 64 pixels in [0, 1] have norm at most 8
(``data_norm=8``). **Only the PCA step is private here**: the classifier after
it is fitted without privacy on the projected rows, as a stand-in for a
downstream model, so the fitted pipeline as a whole is not a private release.
Seeds are fixed so that the results are reproducible; a seeded release is not
private against anyone who knows the seed, so real releases use
``random_state=None`` (``fit`` warns about a seeded release with
:class:`~dpcov.exceptions.SeededNoiseWarning`, which this example silences).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# Tuning the number of components
# -------------------------------
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA as SklearnPCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpcov.decomposition import PCA
from dpcov.exceptions import NoiseDominatedWarning, SeededNoiseWarning
from dpcov.model_selection import pipeline_cost, search_cost

# The seeds below are for reproducible figures: silence the warning that each
# seeded fit gives (by its category only; every other warning still shows).
warnings.simplefilter("ignore", SeededNoiseWarning)

X, y = load_digits(return_X_y=True)


def count_noisy(fit):
    # Run fit() and count the PCA fits that warned NoiseDominatedWarning: on
    # 1,797 rows many releases are dominated by their noise, and one line
    # each would drown the output.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NoiseDominatedWarning)
        result = fit()
    noisy = [w for w in caught if issubclass(w.category, NoiseDominatedWarning)]
    for w in caught:  # any other warning is shown as usual
        if w not in noisy:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return result, len(noisy)


def public_scale(Z):
    return np.clip(Z, 0.0, 16.0) / 16.0


pipe = make_pipeline(
    FunctionTransformer(public_scale),
    PCA(epsilon=1.0, data_norm=8.0, random_state=0),
    LogisticRegression(max_iter=2000),
)
# One fit of the pipeline spends what its private steps spend, composed
# (they read the same rows): here the PCA step alone, since the scaling is
# public and the classifier is not private.
print("one pipeline fit:", pipeline_cost(pipe))
search = GridSearchCV(pipe, {"pca__n_components": [5, 10, 20]}, cv=3)

# %%
# What the search will spend can be computed before it reads any data: every
# candidate is fitted on every training split, and the best one is refitted
# on all rows, ``3 * 3 + 1 = 10`` PCA fits on overlapping rows. They compose:
# the rhos of the zCDP fits add, and the total converts to (epsilon, delta)
# by the tight conversion, much less than the sum of the ten epsilons.
cost = search_cost(search)
print(f"{len(cost)} private fits, total {cost.total()}")
print(f"= ({cost.epsilon_at(1e-6):.2f}, 1e-6)-DP for the search")

_, noisy = count_noisy(lambda: search.fit(X, y))
print(f"{noisy} of the {len(cost)} PCA fits are dominated by their noise")
print("best:", search.best_params_, round(search.best_score_, 3))

# %%
# The count above covers the fits, not the choice. ``GridSearchCV`` ranks the
# candidates by accuracies computed *without* privacy on the held-out rows,
# so ``best_params_``, the scores in ``cv_results_`` and the choice of the
# refitted model are not covered by any privacy guarantee. To release them,
# tune on public or synthetic data, or use a public validation set
# (:class:`~sklearn.model_selection.PredefinedSplit`), or a private selection
# mechanism; see :ref:`tuning-costs-budget`.
#
# Accuracy against the budget
# ---------------------------
#
# The trade-off at ``k = 10`` components, each point a 3-fold cross-validated
# accuracy, with scikit-learn's non-private PCA as the reference. (This is an
# evaluation, not a way to choose epsilon: a larger budget is always more
# accurate, and the budget is a policy decision made before seeing the data.)
epsilons = [0.3, 1.0, 3.0, 10.0, 30.0]
curve = clone(pipe).set_params(pca__n_components=10)
scores = []
for eps in epsilons:
    curve.set_params(pca__epsilon=eps)
    folds, noisy = count_noisy(lambda: cross_val_score(curve, X, y, cv=3))
    scores.append(folds.mean())
    print(f"epsilon={eps:g}: {noisy} of 3 PCA fits dominated by their noise")
reference = cross_val_score(
    make_pipeline(
        FunctionTransformer(public_scale),
        SklearnPCA(10),
        LogisticRegression(max_iter=2000),
    ),
    X,
    y,
    cv=3,
).mean()

fig, ax = plt.subplots()
ax.semilogx(epsilons, scores, "o-", label="dpcov PCA, k=10")
ax.axhline(reference, color="k", ls="--", label="sklearn PCA (non-private), k=10")
ax.set_xlabel("epsilon of the PCA step (delta = 1e-6)")
ax.set_ylabel("cross-validated accuracy")
ax.legend()
plt.show()

# %%
# The refitted private PCA of the search, at epsilon = 1: with 1,797 rows its
# private spectrum is nearly flat (the noise dominates), so its axes are far
# from scikit-learn's, yet the classifier still finds useful directions among
# 20 of them.
best_pca = search.best_estimator_[1]
print("privacy of the refitted PCA:", best_pca.guarantee_)
print("explained variance ratio:", np.round(best_pca.explained_variance_ratio_[:5], 3))

# %%
# At epsilon = 10, where the curve above meets the non-private accuracy, the
# top private components (top row) resemble scikit-learn's (bottom row), up to
# sign and order.
Z = public_scale(X)
private = PCA(5, epsilon=10.0, data_norm=8.0, random_state=0).fit(Z)
exact = SklearnPCA(5).fit(Z)
fig, axes = plt.subplots(2, 5, figsize=(8, 3.4))
for row, pca in zip(axes, [private, exact], strict=True):
    for ax, component in zip(row, pca.components_, strict=True):
        ax.imshow(component.reshape(8, 8), cmap="RdBu")
        ax.set_axis_off()
axes[0, 0].set_title("dpcov, epsilon=10", loc="left", fontsize="small")
axes[1, 0].set_title("sklearn", loc="left", fontsize="small")
plt.show()
