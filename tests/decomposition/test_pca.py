"""Private PCA: agreement with scikit-learn, post-processing only, search."""

import inspect
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import sparse
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
from dpcov.decomposition._pca import SOLVER_PARAMS, _minka_log_likelihoods
from dpcov.exceptions import NoiseDominatedWarning


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
    assert pca.guarantee_ == pca.privacy_cost() == est.privacy_cost()
    assert pca.data_norm_ == 20.0


def test_default_covariance_is_adaptive_under_both_privacy_models():
    # The benchmark's pick: AdaptiveCov under zCDP, AdaptiveLapCov under pure
    # DP (its budget then is pure: the fit is pure epsilon-DP).
    X = _data()
    zcdp = PCA(2, data_norm=20.0, random_state=0).fit(X)
    assert type(zcdp.covariance_estimator_) is AdaptiveCovariance
    rho = PCA(2, rho=0.1, delta=0.0, data_norm=20.0, random_state=0).fit(X)
    assert type(rho.covariance_estimator_) is AdaptiveCovariance
    pure = PCA(2, delta=0.0, data_norm=20.0, random_state=0).fit(X)
    assert type(pure.covariance_estimator_) is AdaptiveCovariance
    assert pure.covariance_estimator_.eigenvalue_floor == "auto"
    assert isinstance(pure.guarantee_, PureDP)


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
        (dict(n_components=7), _data(), r"n_components=7 must be between 1 and min"),
        (dict(n_components=4), _data()[:3], r"min\(n_samples, n_features\)=3"),
        (dict(n_components=0.5, covariance="top_k"), _data(), "integer n_components"),
        (dict(n_components="mle", covariance="top_k"), _data(), "integer n_compo"),
        (dict(n_components="mle"), _data()[:5], "only supported if n_samples >="),
        (dict(covariance=SeparateCovariance(data_norm=3.0)), _data(), "data_norm"),
        (dict(covariance=SeparateCovariance(random_state=1)), _data(), "random_st"),
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


def test_non_numeric_input_and_sparse_scoring_rejected():
    with pytest.raises(ValueError, match="values that are not numbers"):
        PCA(data_norm=1.0).fit(np.array([["a", "b"], ["c", "d"]]))
    # As scikit-learn's PCA, scoring needs dense rows.
    X = sparse.random(50, 4, density=0.5, format="csr", random_state=0)
    pca = PCA(data_norm=1.0, random_state=0).fit(X)
    for method in (pca.score, pca.score_samples):
        with pytest.raises(TypeError, match="dense data is required"):
            method(X)


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


# Parity with scikit-learn's PCA: its solver parameters, "mle", the number of
# components for n < d, one sample, sparse input.

SOLVER_VALUES = {
    "copy": [False],
    "svd_solver": ["full", "covariance_eigh", "arpack", "randomized"],
    "tol": [1e-3],
    "iterated_power": [3],
    "n_oversamples": [20],
    "power_iteration_normalizer": ["QR", "LU", "none"],
}


def test_solver_parameters_follow_sklearn():
    # The same constraints as scikit-learn's, the same defaults, and
    # scikit-learn's parameter order (dpcov's own parameters interleaved).
    sk_signature = inspect.signature(SklearnPCA.__init__).parameters
    ours = list(inspect.signature(PCA.__init__).parameters)
    for name in SOLVER_PARAMS:
        assert (
            PCA._parameter_constraints[name] is SklearnPCA._parameter_constraints[name]
        )
        assert PCA().get_params()[name] == sk_signature[name].default
    shared = [name for name in sk_signature if name in ours]
    assert shared == [name for name in ours if name in sk_signature]
    assert shared == list(sk_signature)  # every scikit-learn parameter
    assert next(iter(inspect.signature(PCA).parameters.values())).kind is (
        inspect.Parameter.POSITIONAL_OR_KEYWORD
    )


@pytest.mark.parametrize(
    "name, value", [(name, v) for name, values in SOLVER_VALUES.items() for v in values]
)
def test_solver_parameters_have_no_effect(name, value):
    # The private fit eigendecomposes the released d x d covariance whatever
    # the solver; copy=False does not let it write to X.
    X = _data(500)
    before = X.copy()
    reference = PCA(3, data_norm=20.0, random_state=0).fit(X)
    pca = PCA(3, data_norm=20.0, random_state=0, **{name: value}).fit(X)
    np.testing.assert_array_equal(pca.components_, reference.components_)
    np.testing.assert_array_equal(
        pca.explained_variance_, reference.explained_variance_
    )
    np.testing.assert_array_equal(pca.transform(X), reference.transform(X))
    np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize("svd_solver", ["arpack", "randomized"])
@pytest.mark.parametrize("n_components", [None, 0.9, "mle"])
def test_every_n_components_works_with_every_solver(svd_solver, n_components):
    # scikit-learn's truncated solvers refuse these; here the solver has no
    # effect, so they behave as with the default.
    X = _data(500)
    params = dict(data_norm=20.0, random_state=0)
    pca = PCA(n_components, svd_solver=svd_solver, **params).fit(X)
    reference = PCA(n_components, **params).fit(X)
    assert pca.n_components_ == reference.n_components_


@pytest.mark.parametrize(
    "params",
    [
        dict(svd_solver="eigen"),
        dict(tol=-1.0),
        dict(iterated_power=-1),
        dict(n_oversamples=0),
        dict(power_iteration_normalizer="qr"),
        dict(copy="no"),
        dict(n_components="MLE"),
    ],
)
def test_solver_parameters_are_validated(params):
    name = next(iter(params))
    with pytest.raises(ValueError, match=f"'{name}' parameter of PCA must be"):
        PCA(data_norm=20.0, **params).fit(_data(100))


def _spectra(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 30))
    signal = np.full(int(rng.integers(0, d + 1)), 20.0)
    spectrum = rng.exponential(size=d) * np.concatenate([signal, np.ones(d)])[:d]
    spectrum = np.sort(spectrum)[::-1]
    if seed % 4 == 0:
        spectrum[-2:] = 0.0  # rank-deficient
    return spectrum, int(rng.integers(d, 10 * d))


@pytest.mark.parametrize("seed", range(12))
def test_minka_log_likelihoods_match_sklearn(seed):
    sk_pca = pytest.importorskip("sklearn.decomposition._pca")
    assess = getattr(sk_pca, "_assess_dimension", None)
    infer = getattr(sk_pca, "_infer_dimension", None)
    if assess is None or infer is None:
        pytest.skip("scikit-learn moved its Minka MLE")
    spectrum, n_samples = _spectra(seed)
    ours = _minka_log_likelihoods(spectrum, n_samples)
    theirs = [-np.inf] + [
        assess(spectrum, rank, n_samples) for rank in range(1, spectrum.size)
    ]
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    assert np.argmax(ours) == infer(spectrum, n_samples)


def test_minka_with_ties_at_the_floor():
    # Noisy eigenvalues at the public floor are equal; Minka's approximation
    # is undefined for the numbers of components that compare them
    # (scikit-learn's code raises "math domain error"); they are skipped.
    spectrum = np.array([9.0, 4.0, 1.0, 0.1, 0.1, 0.1])
    ll = _minka_log_likelihoods(spectrum, 200)
    assert np.all(np.isfinite(ll[1:4])) and np.all(ll[4:] == -np.inf)
    assert ll[0] == -np.inf
    # Nothing defined (one feature, or all tied): 0, as scikit-learn's argmax.
    assert np.argmax(_minka_log_likelihoods(np.array([2.0]), 10)) == 0
    assert np.argmax(_minka_log_likelihoods(np.full(4, 2.0), 10)) == 0


@pytest.mark.parametrize("whiten", [False, True])
@pytest.mark.parametrize("data", ["decaying", "low rank", "digits"])
def test_mle_matches_sklearn_at_infinite_epsilon(data, whiten):
    rng = np.random.default_rng(0)
    if data == "decaying":
        X = _data()
    elif data == "low rank":
        X = rng.normal(size=(2000, 4)) @ rng.normal(size=(4, 12))
        X += 0.05 * rng.normal(size=X.shape)
    else:
        X = load_digits().data[:, 20:40]
    sk = SklearnPCA("mle", whiten=whiten).fit(X)
    ours = PCA("mle", epsilon=np.inf, data_norm=1e3, whiten=whiten).fit(X)
    assert ours.n_components_ == sk.n_components_
    # (Rounding: the digits columns leave variances of order 1e-16 beyond k.)
    scale = sk.explained_variance_[0]
    np.testing.assert_allclose(
        ours.explained_variance_, sk.explained_variance_, atol=1e-12 * scale
    )
    np.testing.assert_allclose(
        ours.noise_variance_, sk.noise_variance_, rtol=1e-8, atol=1e-12 * scale
    )


def test_mle_is_post_processing_of_the_noisy_spectrum():
    # 'mle' reads the released spectrum: the full fit with the same seed
    # releases the same covariance, and Minka's rule on its explained
    # variances gives the number kept.
    X = _data()
    params = dict(epsilon=0.5, data_norm=20.0, random_state=3)
    pca = PCA("mle", **params).fit(X)
    full = PCA(None, **params).fit(X)
    ll = _minka_log_likelihoods(full.explained_variance_, X.shape[0])
    assert pca.n_components_ == np.argmax(ll) >= 1
    assert pca.guarantee_ == full.guarantee_
    np.testing.assert_array_equal(pca.components_, full.components_[: np.argmax(ll)])


@pytest.mark.parametrize("n_components", [None, 2, 0.95])
def test_fewer_samples_than_features(n_components):
    # n_samples is public (replace-one): None keeps min(n_samples,
    # n_features), and the noise variance averages up to it, as in
    # scikit-learn.
    X = np.random.default_rng(0).normal(size=(5, 8))
    sk = SklearnPCA(n_components).fit(X)
    ours = PCA(n_components, epsilon=np.inf, data_norm=1e3).fit(X)
    assert ours.n_components_ == sk.n_components_
    # (The centred rows span n - 1 dimensions: the last variance is 0 up to
    # rounding, 1e-16 here; its square root is 1e-8.)
    np.testing.assert_allclose(
        ours.explained_variance_, sk.explained_variance_, atol=1e-12
    )
    np.testing.assert_allclose(ours.singular_values_, sk.singular_values_, atol=1e-6)
    np.testing.assert_allclose(
        ours.noise_variance_, sk.noise_variance_, rtol=1e-8, atol=1e-12
    )
    private = PCA(None, data_norm=10.0, random_state=0).fit(X)
    assert private.n_components_ == 5


def _sklearn_outcome(X, n_components):
    # scikit-learn's default solver ("auto", which is "full" here).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # its 0 / 0
        try:
            return SklearnPCA(n_components).fit(X), None
        except Exception as exc:  # noqa: BLE001 - the type is compared
            return None, exc


@pytest.mark.parametrize("n_features", [1, 3])
@pytest.mark.parametrize("n_components", [None, 1, 0.5, 2, "mle"])
@pytest.mark.parametrize("container", [np.asarray, sparse.csr_matrix])
def test_one_sample_as_sklearn(n_features, n_components, container):
    # With one row scikit-learn's PCA fits (NaN explained variance) or raises
    # a ValueError, depending on n_components; so does this PCA, with dense
    # or sparse rows, and its messages carry no data.
    X = np.full((1, n_features), 1234.5678)
    sk, sk_error = _sklearn_outcome(X, n_components)
    pca = PCA(n_components, data_norm=10.0, random_state=0)
    if sk_error is not None:
        with pytest.raises(type(sk_error)) as info:
            pca.fit(container(X))
        assert "1234" not in str(info.value)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        pca.fit(container(X))
    assert pca.n_components_ == sk.n_components_
    assert pca.components_.shape == sk.components_.shape
    np.testing.assert_array_equal(np.isnan(pca.explained_variance_), True)
    assert pca.noise_variance_ == sk.noise_variance_ or (
        np.isnan(pca.noise_variance_) and np.isnan(sk.noise_variance_)
    )
    assert pca.transform(X).shape == (1, sk.n_components_)


SPARSE_COVARIANCES = {
    "AdaptiveCovariance (default)": dict(),
    "AdaptiveCovariance (pure default)": dict(delta=0.0),
    "GaussianCovariance (pure)": dict(covariance=GaussianCovariance(), delta=0.0),
    "top_k": dict(covariance="top_k", delta=0.0),
    "private radius": dict(data_norm=None, epsilon=4.0),
}


def _sparse_rows(n=6000, d=8, seed=0):
    # TF-IDF-like rows: non-negative, mostly zeros, norms up to about 1.
    rng = np.random.default_rng(seed)
    X = rng.exponential(size=(n, d)) * np.linspace(0.6, 0.1, d)
    X[rng.random(X.shape) < 0.75] = 0.0
    return X


@pytest.mark.parametrize("container", [sparse.csr_matrix, sparse.csc_matrix])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "params", SPARSE_COVARIANCES.values(), ids=list(SPARSE_COVARIANCES)
)
@pytest.mark.parametrize("whiten", [False, True])
def test_sparse_input_gives_the_dense_fit(container, dtype, params, whiten):
    X = _sparse_rows().astype(dtype)
    S = container(X)
    params = dict(
        dict(n_components=3, data_norm=1.5, whiten=whiten, random_state=0), **params
    )
    dense = PCA(**params).fit(X)
    ours = PCA(**params).fit(S)
    for name in ("components_", "explained_variance_", "mean_", "singular_values_"):
        assert getattr(ours, name).dtype == dtype
        np.testing.assert_allclose(
            getattr(ours, name), getattr(dense, name), rtol=1e-5, atol=1e-6
        )
    assert ours.noise_variance_ == pytest.approx(dense.noise_variance_, rel=1e-5)
    assert ours.guarantee_ == dense.guarantee_
    projected = ours.transform(S)
    assert isinstance(projected, np.ndarray) and projected.dtype == dtype
    np.testing.assert_allclose(projected, dense.transform(X), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        PCA(**params).fit_transform(S), dense.transform(X), rtol=1e-4, atol=1e-5
    )
    np.testing.assert_allclose(
        ours.inverse_transform(container(projected)),
        dense.inverse_transform(projected),
        rtol=1e-4,
        atol=1e-5,
    )


def test_sparse_transform_is_sklearns():
    # At epsilon=inf, transform of sparse rows is scikit-learn's, which
    # computes X @ components_.T - mean_ @ components_.T as well.
    X = _sparse_rows()
    ours = PCA(3, epsilon=np.inf, data_norm=1e3).fit(X)
    sk = SklearnPCA(3).fit(X)
    signs = np.sign(np.sum(ours.components_ * sk.components_, axis=1))
    S = sparse.csr_matrix(X)
    np.testing.assert_allclose(ours.transform(S) * signs, sk.transform(S), atol=1e-8)


def test_sparse_fit_has_no_dense_copy():
    # 1000000 x 200 with 40000 stored values: densified, 1.6 GB. The fit
    # (default covariance: private mean, trace, threshold and Gram passes)
    # holds the d x d matrices of the mechanism and per-row vectors of one
    # chunk at most.
    n, d = 1_000_000, 200
    rng = np.random.default_rng(0)
    nnz = 40_000
    S = sparse.csr_matrix(
        (rng.random(nnz), (rng.integers(n, size=nnz), rng.integers(d, size=nnz))),
        shape=(n, d),
    )
    tracemalloc.start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        pca = PCA(5, data_norm=1.0, random_state=0).fit(S)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert pca.components_.shape == (5, d)
    assert peak < n * d * 8 / 40, peak


def test_tied_variances_get_a_basis_of_their_span_only():
    # Two bases of the same tied eigenspace (the top 3 of 6, e.g. clamped at
    # the bound) give the same components; untied axes are kept as they are.
    from dpcov.decomposition._pca import _canonical_ties

    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    values = np.array([2.0, 2.0, 2.0 * (1 + 1e-13), 1.5, 1.0, 0.5])
    rotation, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    first = Q.T.copy()
    second = Q.T.copy()
    second[:3] = rotation @ second[:3]
    a = _canonical_ties(values, first)
    b = _canonical_ties(values, second)
    np.testing.assert_allclose(a, b, atol=1e-12)
    np.testing.assert_allclose(a[3:], Q.T[3:])
    np.testing.assert_allclose(a @ a.T, np.eye(6), atol=1e-12)
    # The span is the same: the projector onto the first three rows.
    np.testing.assert_allclose(a[:3].T @ a[:3], Q[:, :3] @ Q[:, :3].T, atol=1e-12)


def test_components_do_not_depend_on_the_eigendecomposition():
    # The same release through another eigendecomposition (eigenvectors with
    # flipped signs and rotated within each tied eigenspace, as a device's
    # may return them) gives the same components: sign convention and a
    # basis of each tied span. Two cases: a release with distinct
    # eigenvalues (2000 rows), and one clamped at its bound (30 rows: every
    # eigenvalue equals the bound).
    from dpcov.mechanisms._projection import eigh_with

    rng = np.random.default_rng(1)

    def scrambled(symmetric):
        values, vectors = np.linalg.eigh(symmetric)
        vectors = vectors * rng.choice([-1.0, 1.0], size=vectors.shape[1])
        scale = max(np.abs(values).max(), 1e-300)
        start = 0
        while start < values.size:
            stop = start + 1
            while stop < values.size and abs(values[stop] - values[start]) <= (
                1e-9 * scale
            ):
                stop += 1
            rotation, _ = np.linalg.qr(rng.normal(size=(stop - start,) * 2))
            vectors[:, start:stop] = vectors[:, start:stop] @ rotation
            start = stop
        return values, vectors

    for n in (2000, 30):
        X = np.random.default_rng(0).normal(size=(n, 6))
        expected = PCA(n_components=4, data_norm=10.0, random_state=0).fit(X)
        with eigh_with(scrambled):
            fitted = PCA(n_components=4, data_norm=10.0, random_state=0).fit(X)
        np.testing.assert_allclose(fitted.components_, expected.components_, atol=1e-9)
        # The sign convention: each component's largest entry is positive.
        rows = np.arange(4)
        largest = np.argmax(np.abs(expected.components_), axis=1)
        assert np.all(expected.components_[rows, largest] > 0)


def test_top_components_of_tied_runs_are_the_full_canonical_basis():
    # The first m rows of the canonical basis, computed in O(d^2 m) from the
    # run's basis, are the full computation's (up to rounding): a run of 5
    # tied values straddling m = 4, and untied ones before it.
    from dpcov.decomposition._pca import _canonical_ties, _canonical_ties_top

    rng = np.random.default_rng(0)
    d = 12
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    values = np.array([3.0, 2.5, 2.0, 2.0, 2.0, 2.0, 2.0, 1.0, 0.5, 0.0, 0.0, 0.0])
    full = _canonical_ties(values, Q.T.copy())
    for m in (1, 2, 4, 7, d):
        np.testing.assert_allclose(
            _canonical_ties_top(values, Q, m), full[:m], atol=1e-12
        )


def test_pca_over_persons_is_its_covariance_fit_over_persons():
    # groups reach the covariance estimator, with PCA's max_rows_per_group:
    # the release is that estimator's person-level fit (same seed), and the
    # fitted PCA states no count (n_samples_ is None).
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 9, 500)
    groups = rng.permutation(np.repeat(np.arange(500), counts))
    X = rng.normal(size=(500, 4))[groups] + 0.3 * rng.normal(size=(groups.size, 4))
    params = dict(epsilon=2.0, data_norm=3.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pca = PCA(2, max_rows_per_group=4, covariance=GaussianCovariance(), **params)
        pca.fit(X, groups=groups)
        alone = GaussianCovariance(max_rows_per_group=4, **params)
        alone.fit(X, groups=groups)
    np.testing.assert_array_equal(
        pca.covariance_estimator_.covariance_, alone.covariance_
    )
    assert pca.n_samples_ is None
    with pytest.raises(ValueError, match="metadata routing"):
        PCA(2, max_rows_per_group=4, **params).fit(X)
    with pytest.raises(ValueError, match="pass these parameters to PCA"):
        PCA(
            2,
            max_rows_per_group=4,
            covariance=GaussianCovariance(max_rows_per_group=4),
            **params,
        ).fit(X, groups=groups)
