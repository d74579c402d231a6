"""Private scaling, private PCA and a classifier, against scikit-learn's pipeline.

Five-fold accuracy of ``Pipeline(scaler, PCA(k), LogisticRegression())`` on
breast_cancer (k = 5) and wine (k = 3) with the public ranges of
``benchmarks/harness/data.py`` (``wine_wide``: round limits of each
measurement). ``sklearn``: scikit-learn's scaler and PCA (not private);
``Bounds+PCA``: the free BoundsScaler, then PCA on the whole budget with
``data_norm = sqrt(d)``; ``Std+PCA`` (the user guide's recipe): the private
StandardScaler and PCA (``data_norm = sqrt(d)``) on half of the budget each;
its variants change one thing: PCA with ``assume_centered=True``,
``data_norm = 2 sqrt(d)``, every range twice as wide, or the ranges read off
the table (not private: a reference). Each private pipeline is
(epsilon, 1e-6)-DP in total, checked with ``pipeline_cost``; the logistic
regression is not private (the accuracies measure the private features).
Repetition r uses ``random_state = 1000 r + 7`` for the noise and the
shuffled folds, as the script this replaces did.
"""

import math

from sklearn.decomposition import PCA as SklearnPCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler as SklearnScaler

from dpcov.accounting import zcdp_rho
from dpcov.decomposition import PCA
from dpcov.model_selection import pipeline_cost
from dpcov.preprocessing import BoundsScaler, StandardScaler

from ..harness import load_table
from ._pipelines import DerivedStudy

DELTA = 1e-6
COMPONENTS = {"breast_cancer": 5, "wine_wide": 3}
PRIVATE = [
    "Bounds+PCA",
    "Std+PCA",
    "Std+PCA, centred",
    "Std+PCA, 2 sqrt(d)",
    "Std+PCA, 2x ranges",
]


def _pipeline(method, X, bounds, k, rho, seed):
    norm = math.sqrt(X.shape[1])
    classifier = LogisticRegression(max_iter=5000)
    if method == "sklearn":
        return make_pipeline(SklearnScaler(), SklearnPCA(k), classifier)
    if method == "Bounds+PCA":
        pca = PCA(k, rho=rho, data_norm=norm, random_state=seed)
        return make_pipeline(BoundsScaler(bounds=bounds), pca, classifier)
    if method == "Std+PCA, 2x ranges":
        lower, upper = bounds
        bounds = (lower - (upper - lower) / 2, upper + (upper - lower) / 2)
    elif method == "Std+PCA, data ranges":  # not private: a reference only
        bounds = (X.min(0), X.max(0))
    pca = PCA(
        k,
        rho=rho / 2,
        data_norm=2 * norm if method == "Std+PCA, 2 sqrt(d)" else norm,
        assume_centered=method == "Std+PCA, centred",
        random_state=seed,
    )
    scaler = StandardScaler(rho=rho / 2, bounds=bounds, random_state=seed)
    return make_pipeline(scaler, pca, classifier)


def _accuracy(method):
    def measure(data, cell, r):
        X, y, bounds = data
        seed = 1000 * r + 7
        rho = zcdp_rho(cell["epsilon"], DELTA)
        pipe = _pipeline(method, X, bounds, COMPONENTS[cell["table"]], rho, seed)
        if method != "sklearn":
            spent = pipeline_cost(pipe).to_approx_dp(DELTA).epsilon
            assert spent <= cell["epsilon"] * (1 + 1e-9), (method, spent)
        folds = StratifiedKFold(5, shuffle=True, random_state=seed)
        return cross_val_score(pipe, X, y, cv=folds).mean()

    return measure


STUDY = DerivedStudy(
    name="pipeline",
    title=__doc__.splitlines()[0],
    caption="Five-fold accuracy, total (epsilon, 1e-6)-DP per fit; bold: the best "
    "private candidate with public ranges and those within two paired standard "
    "errors of it",
    grid={"table": ["breast_cancer", "wine_wide"], "epsilon": [0.5, 1, 2, 4, 8]},
    data=lambda cell, r: load_table(cell["table"]),
    methods={m: _accuracy(m) for m in ["sklearn", *PRIVATE, "Std+PCA, data ranges"]},
    repeats=20,
    bold=tuple(PRIVATE),
    blas_threads=1,
    quick={"table": ["wine_wide"], "epsilon": [1.0], "repeats": 2},
    docs="docs/user_guide/_bench_pipeline.rst",
)
