"""PrivateSearchCV with targets: accuracy and squared-error scores."""

import numpy as np
import pytest

from dpcov.decomposition import PCA
from dpcov.discriminant_analysis import LinearDiscriminantAnalysis
from dpcov.linear_model import LinearRegression, Ridge
from dpcov.model_selection import PrivateSearchCV
from dpcov.model_selection._scoring import bounded_scores
from dpcov.pipeline import PrivatePipeline

pytestmark = pytest.mark.filterwarnings("ignore::dpcov.exceptions.SeededNoiseWarning")


def _mixture(seed, n=20_000, d=8, k=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = rng.normal(size=(n, d)) + 3.0 * np.eye(k, d)[y]
    return X, y


# Selection: with the geometric law of mean 20, every run draws one of two
# candidates evenly, so all runs draw the worse one with probability
# sum_k 0.05 0.95**(k-1) 0.5**k = 0.025 / 0.525 < 0.05; when the better one
# is drawn its score wins (the gap is many noise scales). Over 5 searches, 3
# or more wrong picks have probability below 10 * 0.05**3 = 0.00125.
SELECTION = dict(law=1, n_iter=20)


@pytest.mark.slow
def test_accuracy_search_over_a_private_classification_pipeline():
    X, y = _mixture(0, n=8000)
    pipe = PrivatePipeline(
        [
            ("pca", PCA(bounds=(-10.0, 10.0))),
            ("lda", LinearDiscriminantAnalysis(classes=[0, 1, 2])),
        ],
        epsilon=1.0,
    )
    picks = []
    for seed in range(5):
        search = PrivateSearchCV(
            pipe,
            {"pca__n_components": [1, 4]},
            epsilon=2.0,
            random_state=seed,
            **SELECTION,
        ).fit(X, y)
        assert search.epsilon_spent_ <= 2.0
        picks.append(search.best_params_["pca__n_components"])
    # 4 components hold the three class means' directions; 1 does not.
    assert picks.count(4) >= 3


def test_accuracy_scores_are_per_row_and_bounded():
    X, y = _mixture(1, n=5000)
    model = LinearDiscriminantAnalysis(
        epsilon=np.inf, data_norm=20.0, classes=[0, 1, 2]
    ).fit(X, y)
    values, bounds = bounded_scores(model, X[:100], y[:100])
    assert bounds == (0.0, 1.0)
    np.testing.assert_array_equal(values, model.predict(X[:100]) == y[:100])
    with pytest.raises(ValueError, match="needs targets"):
        bounded_scores(model, X[:100])


def test_squared_error_search_over_regressors():
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(20000, 5))
    y = X @ [1.0, -1.0, 0.5, 0.0, 2.0] + rng.normal(0, 0.3, 20000)
    model = Ridge(bounds=(-1.0, 1.0), target_bounds=(-6.0, 6.0))
    picks = []
    for seed in range(5):
        search = PrivateSearchCV(
            model, {"alpha": [1.0, 1e6]}, epsilon=2.0, random_state=seed, **SELECTION
        ).fit(X, y)
        picks.append(search.best_params_["alpha"])
    # A ridge of 1e6 shrinks every coefficient to about 0 (mean squared
    # error about 2 against 0.1; the score's noise scale is about 0.14).
    assert picks.count(1.0) >= 3
    values, (low, high) = bounded_scores(search.best_estimator_, X[:50], y[:50])
    assert (low, high) == (-144.0, 0.0)
    assert np.all(values <= 0) and np.all(values >= low)
    adassp = PrivateSearchCV(
        LinearRegression(bounds=(-1.0, 1.0), target_bounds=(-6.0, 6.0)),
        {"target_bounds": [(-6.0, 6.0), (-60.0, 60.0)]},
        epsilon=2.0,
        scoring="neg_squared_error",
        random_state=0,
    ).fit(X, y)
    assert adassp.epsilon_spent_ <= 2.0


def test_bad_targets_and_score_range():
    X, y = _mixture(3, n=2000)
    pipe = LinearDiscriminantAnalysis(data_norm=20.0, classes=[0, 1, 2])
    # (No count in the message: over persons it is private.)
    with pytest.raises(ValueError, match=r"1-D array of targets, one per row of X\.$"):
        PrivateSearchCV(pipe, {"priors": [None]}, random_state=0).fit(X, y[:-1])
    with pytest.raises(ValueError, match="has its own range"):
        PrivateSearchCV(
            pipe, {"priors": [None]}, scoring="accuracy", score_range=(0, 1)
        ).fit(X, y)


@pytest.mark.parametrize("seed", range(4))
def test_bad_targets_refused_before_spending_wherever_the_split_puts_them(seed):
    # Whether a bad target lands in the training or the held-out rows, the
    # refusal is the same, names no value and comes before the accountant
    # records anything.
    from dpcov.accounting import BudgetAccountant

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(3000, 3))
    y = (X @ [1.0, 2.0, 3.0]).astype(object)
    y[5] = "secret-value-42"
    accountant = BudgetAccountant()
    search = PrivateSearchCV(
        Ridge(bounds=(-1.0, 1.0), target_bounds=(-6.0, 6.0)),
        {"alpha": [1.0, 10.0]},
        epsilon=1.0,
        accountant=accountant,
        random_state=seed,
    )
    with pytest.raises(ValueError, match="not numbers") as info:
        search.fit(X, y)
    assert "secret" not in str(info.value)
    assert len(accountant) == 0
    labels = rng.integers(0, 3, 3000)
    labels[7] = 9
    lda = LinearDiscriminantAnalysis(data_norm=5.0, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="outside the model's classes"):
        PrivateSearchCV(
            lda, {"priors": [None]}, accountant=accountant, random_state=seed
        ).fit(X, labels)
    assert len(accountant) == 0


def test_scores_that_need_targets_or_another_model_are_refused_up_front():
    X, y = _mixture(5, n=2000)
    lda = LinearDiscriminantAnalysis(data_norm=20.0, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="call fit\\(X, y\\)"):
        PrivateSearchCV(lda, {"priors": [None]}).fit(X)
    with pytest.raises(ValueError, match="end in a dpcov regressor"):
        PrivateSearchCV(lda, {"priors": [None]}, scoring="neg_squared_error").fit(X, y)


def test_pca_score_uses_the_model_covariance_when_whitened():
    X, _ = _mixture(6, n=5000)
    plain = PCA(n_components=3, data_norm=20.0, epsilon=np.inf).fit(X)
    white = PCA(n_components=3, data_norm=20.0, epsilon=np.inf, whiten=True).fit(X)
    a, range_a = bounded_scores(plain, X[:100])
    b, range_b = bounded_scores(white, X[:100])
    np.testing.assert_allclose(a, b, rtol=1e-9)
    np.testing.assert_allclose(range_a, range_b, rtol=1e-9)
