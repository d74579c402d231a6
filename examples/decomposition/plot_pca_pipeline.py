"""
================================================
Private PCA in a classification pipeline
================================================

:class:`dpcov.decomposition.PCA` replaces :class:`sklearn.decomposition.PCA`
in a :class:`~sklearn.pipeline.Pipeline`; :class:`~sklearn.model_selection.GridSearchCV`
searches over the privacy budget and the number of components together.

Privacy set-up: the PCA step is (epsilon, 1e-6)-DP with respect to replacing
one row of the digits data. Pixels lie in [0, 16], so clipping to that range
and dividing by 16 is a public scaling (a
:class:`~sklearn.preprocessing.StandardScaler` would read the data without
privacy), and rows of 64 pixels in [0, 1] have norm at most
8 (``data_norm=8``). Only the PCA step is private here: the classifier after
it is fitted without privacy on the projected rows, as a stand-in for a
downstream model; the search spends the budget of every fit it makes
(``n_candidates * n_splits + 1`` PCA fits).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA as SklearnPCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpcov.decomposition import PCA

X, y = load_digits(return_X_y=True)


def public_scale(Z):
    return np.clip(Z, 0.0, 16.0) / 16.0


pipe = make_pipeline(
    FunctionTransformer(public_scale),
    PCA(data_norm=8.0, random_state=0),
    LogisticRegression(max_iter=2000),
)
grid = {"pca__epsilon": [0.3, 1.0, 3.0, 10.0], "pca__n_components": [5, 10, 20]}
search = GridSearchCV(pipe, grid, cv=3).fit(X, y)
print("best:", search.best_params_, round(search.best_score_, 3))

# %%
# Accuracy against the budget, with the non-private PCA as a reference.
scores = search.cv_results_["mean_test_score"].reshape(4, 3)
reference = GridSearchCV(
    make_pipeline(
        FunctionTransformer(public_scale),
        SklearnPCA(),
        LogisticRegression(max_iter=2000),
    ),
    {"pca__n_components": [5, 10, 20]},
    cv=3,
).fit(X, y)

fig, ax = plt.subplots()
for j, k in enumerate(grid["pca__n_components"]):
    ax.semilogx(grid["pca__epsilon"], scores[:, j], "o-", label=f"private, k={k}")
ax.axhline(reference.best_score_, color="k", ls="--", label="non-private PCA (best k)")
ax.set_xlabel("epsilon of the PCA step (delta = 1e-6)")
ax.set_ylabel("cross-validated accuracy")
ax.legend()
plt.show()

# %%
# The top components of the private fit at the chosen budget, as images.
best_pca = search.best_estimator_[1]
fig, axes = plt.subplots(1, 5, figsize=(8, 2))
for ax, component in zip(axes, best_pca.components_, strict=False):
    ax.imshow(component.reshape(8, 8), cmap="RdBu")
    ax.set_axis_off()
fig.suptitle(f"private components (epsilon={search.best_params_['pca__epsilon']})")
plt.show()
print("privacy of the refitted PCA:", best_pca.guarantee_)
print("explained variance ratio:", np.round(best_pca.explained_variance_ratio_[:5], 3))
