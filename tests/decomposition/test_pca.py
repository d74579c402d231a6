"""Private PCA: agreement with scikit-learn, post-processing only, search."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA as SklearnPCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpcov.accounting import ZCDP, PureDP
from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA
from dpcov.utils import check_privacy_params


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 6)) @ np.diag([3.0, 2.0, 1.0, 0.5, 0.2, 0.1]) + 5.0


COVARIANCES = [
    None,
    "top_k",
    SeparateCovariance(),
    EigenSamplingCovariance(),
    GaussianCovariance(projection="feasible"),
]


@pytest.mark.parametrize("covariance", COVARIANCES, ids=str)
@pytest.mark.parametrize("n_components", [None, 3])
@pytest.mark.parametrize("whiten", [False, True])
def test_infinite_epsilon_matches_sklearn(covariance, n_components, whiten):
    # No noise: the private mean is the mean and the covariance is exact (up to
    # the n / (n - 1) factor scikit-learn uses), so every attribute and method
    # must agree with scikit-learn's PCA, components up to sign.
    X = _data()
    sk = SklearnPCA(n_components, whiten=whiten).fit(X)
    ours = PCA(
        n_components,
        epsilon=np.inf,
        data_norm=1e3,
        covariance=covariance,
        whiten=whiten,
    ).fit(X)
    signs = np.sign(np.sum(ours.components_ * sk.components_, axis=1))
    np.testing.assert_allclose(
        ours.components_ * signs[:, None], sk.components_, atol=1e-10
    )
    for name in (
        "explained_variance_",
        "explained_variance_ratio_",
        "singular_values_",
        "mean_",
        "noise_variance_",
        "n_components_",
        "n_samples_",
    ):
        np.testing.assert_allclose(getattr(ours, name), getattr(sk, name), rtol=1e-10)
    np.testing.assert_allclose(ours.transform(X) * signs, sk.transform(X), atol=1e-8)
    np.testing.assert_allclose(
        ours.fit_transform(X) * signs, sk.transform(X), atol=1e-8
    )
    Z = sk.transform(X[:20])
    np.testing.assert_allclose(
        ours.inverse_transform(Z * signs), sk.inverse_transform(Z), atol=1e-8
    )
    np.testing.assert_allclose(ours.get_covariance(), sk.get_covariance(), atol=1e-10)
    assert ours.score(X) == pytest.approx(sk.score(X), rel=1e-10)
    assert list(ours.get_feature_names_out()) == [
        f"pca{i}" for i in range(ours.n_components_)
    ]


def test_components_are_post_processing_of_the_covariance():
    # PCA touches the data only through its covariance estimator: its
    # components and variances are an eigendecomposition of the released
    # covariance, and the guarantee is the estimator's.
    X = _data()
    pca = PCA(3, epsilon=1.0, data_norm=20.0, random_state=0).fit(X)
    est = pca.covariance_estimator_
    values, vectors = np.linalg.eigh(est.covariance_)
    np.testing.assert_allclose(
        np.abs(pca.components_ @ vectors[:, ::-1][:, :3]), np.eye(3), atol=1e-8
    )
    n = X.shape[0]
    np.testing.assert_allclose(pca.explained_variance_, values[::-1][:3] * n / (n - 1))
    np.testing.assert_array_equal(pca.mean_, est.location_)
    assert pca.guarantee_ == est.guarantee_
    assert pca.guarantee_.rho == pytest.approx(check_privacy_params(1.0, 1e-6).rho)
    assert pca.data_norm_ == 20.0


def test_default_covariance_depends_on_the_privacy_model():
    # The benchmark's pick: AdaptiveCov under zCDP, GaussCov under pure DP.
    X = _data()
    zcdp = PCA(2, data_norm=20.0, random_state=0).fit(X)
    assert isinstance(zcdp.covariance_estimator_, AdaptiveCovariance)
    rho = PCA(2, rho=0.1, delta=0.0, data_norm=20.0, random_state=0).fit(X)
    assert isinstance(rho.covariance_estimator_, AdaptiveCovariance)
    pure = PCA(2, delta=0.0, data_norm=20.0, random_state=0).fit(X)
    assert type(pure.covariance_estimator_) is GaussianCovariance
    assert pure.covariance_estimator_.eigenvalue_floor == "auto"


def test_top_k_spends_on_k_directions():
    X = _data()
    pca = PCA(2, epsilon=1.0, delta=0.0, data_norm=20.0, covariance="top_k").fit(X)
    est = pca.covariance_estimator_
    assert isinstance(est, EigenSamplingCovariance) and est.n_components == 2
    assert est.eigenvector_shares_.shape == (2,)
    assert pca.guarantee_ == PureDP(1.0)
    # Mean 1/8, then half of the rest for the eigenvalues, half for 2 vectors.
    assert pca.budget_split_["eigenvectors"] == PureDP(0.4375)
    np.testing.assert_allclose(
        pca.components_ @ pca.components_.T, np.eye(2), atol=1e-10
    )


def test_budget_and_geometry_are_set_on_pca():
    X = _data()
    pca = PCA(
        2,
        rho=0.3,
        data_norm=20.0,
        assume_centered=True,
        covariance=SeparateCovariance(projection="feasible"),
        random_state=0,
    ).fit(X)
    est = pca.covariance_estimator_
    assert (est.rho, est.data_norm, est.assume_centered, est.random_state) == (
        0.3,
        20.0,
        True,
        0,
    )
    assert est.projection == "feasible"  # the estimator's own parameters stay
    assert pca.guarantee_ == ZCDP(0.3)
    np.testing.assert_array_equal(pca.mean_, 0.0)
    # The estimator passed in is not modified (it is cloned).
    assert pca.covariance.rho is None


def test_float_n_components_selects_by_private_ratio():
    X = _data()
    pca = PCA(0.8, epsilon=2.0, data_norm=20.0, random_state=0).fit(X)
    full = PCA(None, epsilon=2.0, data_norm=20.0, random_state=0).fit(X)
    ratios = np.cumsum(full.explained_variance_ratio_)
    expected = int(np.argmax(ratios >= 0.8)) + 1
    assert pca.n_components_ == expected
    np.testing.assert_allclose(pca.components_, full.components_[:expected])


@pytest.mark.parametrize(
    "params, X, match",
    [
        (dict(n_components=7), _data(), "n_components=7 must be at most"),
        (dict(n_components=0.5, covariance="top_k"), _data(), "integer n_components"),
        (dict(covariance=SeparateCovariance(data_norm=3.0)), _data(), "data_norm"),
        (dict(covariance=SeparateCovariance(random_state=1)), _data(), "random_st"),
        (dict(), _data()[:1], "at least 2 samples"),
        (dict(epsilon=0.0), _data(), "epsilon"),
        (dict(delta=1.0), _data(), "delta"),
        (dict(), np.full((10, 2), np.nan), "NaN"),
        (dict(), np.ones(10), "2D array"),
    ],
)
def test_bad_input(params, X, match):
    params = {"data_norm": 20.0, **params}
    with pytest.raises(ValueError, match=match):
        PCA(**params).fit(X)


def test_sparse_and_non_numeric_input_rejected():
    from scipy import sparse

    with pytest.raises(TypeError, match="dense data is required"):
        PCA(data_norm=1.0).fit(sparse.random(50, 4, density=0.5, format="csr"))
    with pytest.raises(ValueError, match="values that are not numbers"):
        PCA(data_norm=1.0).fit(np.array([["a", "b"], ["c", "d"]]))


def test_captured_variance_improves_with_epsilon():
    # Low-rank data (rank 3 plus small noise), n = 20000: the top-3 private
    # subspace captures most of the variance at epsilon = 4, more than at 0.1.
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.normal(size=(20, 3)))[0]
    X = rng.normal(size=(20_000, 3)) * [3.0, 2.0, 1.5] @ basis.T
    X += 0.1 * rng.normal(size=X.shape)
    scale = np.linalg.norm(X, axis=1).max()  # test data only; public in practice
    cov = np.cov(X.T)
    best = np.sort(np.linalg.eigvalsh(cov))[::-1][:3].sum()

    def captured(eps, seed):
        pca = PCA(3, epsilon=eps, data_norm=scale, random_state=seed).fit(X)
        return np.trace(pca.components_ @ cov @ pca.components_.T) / best

    low = np.mean([captured(0.1, s) for s in range(5)])
    high = np.mean([captured(4.0, s) for s in range(5)])
    assert high > 0.95
    assert high > low


def test_pipeline_grid_search_over_epsilon_and_n_components():
    # Digits pixels lie in [0, 16] (public): clip to that range and scale by
    # 16 instead of fitting a StandardScaler, which would read the data
    # without privacy.
    X, y = load_digits(return_X_y=True)
    pipe = make_pipeline(
        FunctionTransformer(lambda Z: np.clip(Z, 0.0, 16.0) / 16.0),
        PCA(data_norm=8.0, random_state=0),
        LogisticRegression(max_iter=2000),
    )
    search = GridSearchCV(
        pipe,
        {"pca__epsilon": [0.5, 8.0], "pca__n_components": [5, 20]},
        cv=3,
    ).fit(X, y)
    assert set(search.best_params_) == {"pca__epsilon", "pca__n_components"}
    assert search.cv_results_["mean_test_score"].shape == (4,)
    assert search.best_score_ > 0.5  # ten classes: chance is 0.1
    # The pipeline transforms with the refitted private components.
    assert (
        search.best_estimator_[-2].components_.shape[0]
        == (search.best_params_["pca__n_components"])
    )


def test_grid_search_ranks_by_pca_score():
    X = _data(2000)
    search = GridSearchCV(
        PCA(data_norm=30.0, random_state=0),
        {"n_components": [1, 4], "epsilon": [1.0, 10.0]},
        cv=2,
    ).fit(X)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
