"""Behaviour shared by every private covariance estimator."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import config_context
from sklearn.covariance import EmpiricalCovariance
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpcov.accounting import (
    ZCDP,
    GaussianDP,
    PureDP,
    compose,
    gaussian_mu,
    zcdp_epsilon,
    zcdp_rho,
)
from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.mechanisms import DEFAULT_RADIUS_GRID
from dpcov.utils import _gram

ESTIMATORS = [GaussianCovariance, SeparateCovariance, AdaptiveCovariance]


def _data(n=3000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.linspace(1.0, 0.2, d) + 0.3
    return X / np.linalg.norm(X, axis=1).max()


@pytest.fixture(params=ESTIMATORS, ids=lambda c: c.__name__)
def Estimator(request):
    return request.param


@pytest.mark.parametrize("assume_centered", [False, True])
@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_infinite_epsilon_matches_sklearn(Estimator, assume_centered, delta):
    # With no noise the private pipeline (clip at a bound >= every norm, exact
    # mean, exact Gram) is sklearn's estimator exactly.
    X = _data()
    ours = Estimator(
        epsilon=math.inf, delta=delta, data_norm=1.0, assume_centered=assume_centered
    ).fit(X)
    ref = EmpiricalCovariance(assume_centered=assume_centered).fit(X)
    np.testing.assert_allclose(ours.covariance_, ref.covariance_, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(ours.location_, ref.location_, atol=1e-14)
    np.testing.assert_allclose(ours.precision_, ref.precision_, rtol=1e-6)
    assert ours.score(X) == pytest.approx(ref.score(X), rel=1e-9)


def test_large_epsilon_converges_to_sklearn(Estimator):
    # At rho = 1e6 the covariance noise has per-entry s.d. at most
    # sqrt(2) R^2 / (n sqrt(rho/2)) ~ 1e-6 for R <= 2, n = 3000, and the
    # Frobenius error is at most a few d times that: 1e-4 is a wide margin.
    X = _data()
    ours = Estimator(rho=1e6, data_norm=1.0, random_state=0).fit(X)
    ref = EmpiricalCovariance().fit(X)
    assert np.linalg.norm(ours.covariance_ - ref.covariance_) < 1e-4
    np.testing.assert_allclose(ours.location_, ref.location_, atol=1e-5)


@pytest.mark.parametrize(
    "params, budget",
    [
        (dict(epsilon=1.0, delta=1e-6), ZCDP(zcdp_rho(1.0, 1e-6))),
        (dict(epsilon=0.5, delta=0.0), PureDP(0.5)),
        (dict(rho=0.2, delta=1e-5), ZCDP(0.2)),
        (dict(rho=0.2, delta=0.0), ZCDP(0.2)),
    ],
)
@pytest.mark.parametrize("data_norm", [1.0, None])
@pytest.mark.parametrize("assume_centered", [False, True])
def test_privacy_spent(Estimator, params, budget, data_norm, assume_centered):
    X = _data(n=20_000)
    est = Estimator(
        data_norm=data_norm, assume_centered=assume_centered, random_state=0, **params
    ).fit(X)
    exact = (
        Estimator in (GaussianCovariance, SeparateCovariance)
        and data_norm is not None
        and "epsilon" in params
        and params["delta"] > 0
    )
    # Gaussian steps with a selection (AdaptiveCovariance's threshold
    # search, the private radius), asked for (epsilon, delta).
    profile = not exact and "epsilon" in params and params["delta"] > 0
    if exact:
        # Gaussian parts only (no private radius), asked for (epsilon,
        # delta): one Gaussian mechanism at the analytic Gaussian's mu, its
        # steps on the zCDP budget mu**2 / 2 (rounded down).
        budget = GaussianDP(gaussian_mu(params["epsilon"], params["delta"]))
    elif profile:
        # Gaussian steps and the selections (bounded range): at the largest
        # rho whose composed loss is (epsilon, delta)-DP, recorded as their
        # profile.
        budget = est.privacy_cost()
    # The steps compose exactly to the configured budget.
    assert type(est.guarantee_) is type(budget)
    composed = compose(est.budget_split_.values())
    if profile:
        rho = est._running_budget(budget).rho
        assert rho > zcdp_rho(params["epsilon"], params["delta"])
        assert composed.rho == pytest.approx(rho, rel=1e-12)
        assert est.guarantee_ == budget
        assert est.epsilon_spent_ <= params["epsilon"]
        assert est.epsilon_spent_ == pytest.approx(params["epsilon"], rel=1e-3)
        budget = ZCDP(rho)  # the steps' shares below
    elif exact:
        assert composed.rho == pytest.approx(budget.gaussian_rho(), rel=1e-12)
        assert est.guarantee_.mu == pytest.approx(budget.mu, rel=1e-12)
        assert est.rho_spent_ == budget.to_zcdp().rho
        assert est.epsilon_spent_ == params["epsilon"]
        assert est.delta_spent_ == params["delta"]
        budget = ZCDP(budget.gaussian_rho())  # the steps' shares below
    elif isinstance(budget, PureDP):
        assert composed.epsilon == pytest.approx(budget.epsilon, rel=1e-12)
        assert (est.epsilon_spent_, est.delta_spent_) == (pytest.approx(0.5), 0.0)
        assert est.rho_spent_ == pytest.approx(0.125)
    else:
        assert composed.rho == pytest.approx(budget.rho, rel=1e-12)
        assert est.rho_spent_ == pytest.approx(budget.rho, rel=1e-12)
        assert est.delta_spent_ == params["delta"]
        if "epsilon" in params:
            assert est.epsilon_spent_ <= params["epsilon"] * (1 + 1e-12)
            assert est.epsilon_spent_ == pytest.approx(params["epsilon"], rel=1e-8)
        elif params["delta"] > 0:
            assert est.epsilon_spent_ == pytest.approx(
                zcdp_epsilon(0.2, params["delta"])
            )
        else:
            assert est.epsilon_spent_ == math.inf
    assert ("radius" in est.budget_split_) == (data_norm is None)
    assert ("mean" in est.budget_split_) == (not assume_centered)
    # On the composed curve the radius takes the exponential mechanism's
    # share whichever mechanism runs (the plan may not depend on n).
    shares = {"radius": 3 / 16 if profile else 1 / 8, "mean": 1 / 8}
    for step, share in shares.items():
        if step in est.budget_split_:
            got = est.budget_split_[step]
            total = budget.epsilon if isinstance(budget, PureDP) else budget.rho
            value = got.epsilon if isinstance(got, PureDP) else got.rho
            assert value == pytest.approx(share * total)


def test_private_radius_path(Estimator):
    # Accounting and the untouched parameter are checked in test_common (DP
    # checks); here: the radius is a grid point within Lemma 10's bound.
    X = _data(n=20_000) * 3.0
    est = Estimator(epsilon=1.0, random_state=0).fit(X)
    assert est.data_norm_ in DEFAULT_RADIUS_GRID
    assert est.data_norm_ <= 2 * np.linalg.norm(X, axis=1).max()


def test_private_radius_needs_enough_rows(Estimator):
    # Below the exponential mechanism's minimum (272 rows at rho =
    # zcdp_rho(1, 1e-6); 255 at epsilon=1, delta=1e-6 on the composed
    # curve's larger rho) the fit says what to pass, with public values only.
    X = _data(n=200)
    for params, n_min in [(dict(rho=zcdp_rho(1.0, 1e-6)), 272), ({}, 255)]:
        with pytest.raises(
            ValueError,
            match=rf"data_norm=None .* at least {n_min} samples .* got 200\. Pass "
            r"bounds=\(lower, upper\) .* or data_norm",
        ):
            Estimator(epsilon=1.0, **params).fit(X)


def test_private_radius_mechanism_follows_public_n(Estimator):
    # Under zCDP: few rows, the exponential mechanism with 3/16 of the
    # budget; enough for the sparse vector (4411 at rho = zcdp_rho(1,
    # 1e-6)): 1/8. On the composed curve (epsilon, delta): 3/16 for both,
    # the plan the calibration assumed whatever n.
    budget = ZCDP(zcdp_rho(1.0, 1e-6))
    small = Estimator(rho=budget.rho, random_state=0).fit(_data(n=300))
    assert small.budget_split_["radius"].rho == pytest.approx(
        3 / 16 * budget.rho, rel=1e-12
    )
    large = Estimator(rho=budget.rho, random_state=0).fit(_data(n=4411))
    assert large.budget_split_["radius"].rho == pytest.approx(budget.rho / 8, rel=1e-12)
    for n_samples in (300, 4411):
        est = Estimator(epsilon=1.0, random_state=0).fit(_data(n=n_samples))
        rho = est._running_budget(est.privacy_cost()).rho
        assert rho > budget.rho
        assert est.budget_split_["radius"].rho == pytest.approx(3 / 16 * rho, rel=1e-12)
        assert est.data_norm is None and est.data_norm_ > 0


@pytest.mark.parametrize("projection", ["clamp", "feasible", "psd"])
def test_projection_and_floor(Estimator, projection):
    X = _data(n=300, d=8)
    est = Estimator(
        epsilon=0.3,
        data_norm=1.0,
        projection=projection,
        eigenvalue_floor=0.0,
        store_raw=True,
        random_state=0,
    ).fit(X)
    w = np.linalg.eigvalsh(est.covariance_)
    assert np.array_equal(est.covariance_, est.covariance_.T)
    assert w.min() >= -1e-12
    if projection == "clamp":
        assert w.max() <= 1.0 + 1e-12
    if projection == "feasible":
        assert w.sum() <= 1.0 + 1e-12
    # The raw release is noisier than every projection that contains the truth.
    raw_w = np.linalg.eigvalsh(est.raw_covariance_)
    assert raw_w.min() < 0  # at eps=0.3, n=300 the noise makes it indefinite
    # The floor is the lower bound of the set projected onto: eigenvalues are
    # at least the floor and the trace bound still holds when d * floor fits.
    floored = Estimator(
        epsilon=0.5,
        data_norm=1.0,
        projection=projection,
        eigenvalue_floor="auto",
        random_state=0,
    ).fit(X)
    w = np.linalg.eigvalsh(floored.covariance_)
    assert w.min() > 0
    if projection == "feasible":
        assert w.sum() <= max(1.0, 8 * w.min()) + 1e-12
    if projection == "clamp":
        assert w.max() <= 1.0 + 1e-12
    assert np.isfinite(floored.score(X))
    assert not hasattr(floored, "raw_covariance_")
    # A refit without store_raw drops the raw matrix of the earlier fit.
    assert not hasattr(est.set_params(store_raw=False).fit(X), "raw_covariance_")


def test_fixed_floor(Estimator):
    X = _data(n=300, d=8)
    for projection in ["clamp", "feasible", "psd"]:
        est = Estimator(
            epsilon=0.5,
            data_norm=1.0,
            eigenvalue_floor=0.01,
            projection=projection,
            random_state=0,
        ).fit(X)
        w = np.linalg.eigvalsh(est.covariance_)
        # The floor is capped at the largest eigenvalue the release can have,
        # the squared row bound its mechanism ran at (for AdaptiveCovariance,
        # the clipping threshold it picked, here often far below 1).
        bound = min(getattr(est, "clip_threshold_", 1.0), 1.0) ** 2
        assert w.min() >= min(0.01, bound) - 1e-12
        if projection == "feasible":
            assert w.sum() <= 1.0 + 1e-12  # 8 * 0.01 fits within the trace bound


def test_sklearn_covariance_surface(Estimator):
    X = _data()
    # A positive definite release (eigenvalue_floor="auto"): the
    # pseudo-inverse of a singular one hangs on whether an eigenvalue of
    # about 1e-17 is cut, which changes with the BLAS's thread count (the
    # precision is computed single-threaded in fit, multi-threaded after).
    params = dict(data_norm=1.0, eigenvalue_floor="auto", random_state=0)
    est = Estimator(**params).fit(X)
    ref = EmpiricalCovariance().fit(X)
    assert est.mahalanobis(X[:10]).shape == (10,)
    assert est.error_norm(ref.covariance_) >= 0
    np.testing.assert_allclose(est.get_precision(), est.precision_)
    no_prec = Estimator(store_precision=False, **params).fit(X)
    assert no_prec.precision_ is None
    np.testing.assert_allclose(no_prec.get_precision(), est.precision_)


def test_float32_input(Estimator):
    X = _data()
    a = Estimator(data_norm=1.0, random_state=0).fit(X.astype(np.float32))
    b = Estimator(data_norm=1.0, random_state=0).fit(X)
    assert a.covariance_.dtype == np.float64
    np.testing.assert_allclose(a.covariance_, b.covariance_, atol=1e-6)


def test_input_not_modified(Estimator):
    X = _data() * 2  # every row is clipped
    before = X.copy()
    Estimator(data_norm=1.0, random_state=0).fit(X)
    np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize(
    "X, error, match",
    [
        (np.array([[1.0, np.nan], [0.0, 1.0]]), ValueError, "NaN"),
        (np.array([[1.0, np.inf], [0.0, 1.0]]), ValueError, "infinity"),
        (np.array([1.0, 2.0, 3.0]), ValueError, "2D array"),
        (np.empty((0, 3)), ValueError, "0 sample"),
        (np.array([["a", "b"], ["c", "d"]], dtype=object), ValueError, "not numbers"),
        (sp.csr_matrix([[1.0, np.nan], [0.0, 1.0]]), ValueError, "NaN"),
    ],
)
def test_bad_input(Estimator, X, error, match):
    with pytest.raises(error, match=match):
        Estimator(data_norm=1.0).fit(X)


def _sparse_data(n=6000, d=5, seed=0):
    # Rows with 70% zeros and a column of ones (a one-hot-like feature).
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.linspace(1.0, 0.3, d)
    X[rng.random(X.shape) < 0.7] = 0.0
    X[:, -1] = 1.0
    return X


@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csc_matrix, sp.csr_array])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "params",
    [dict(data_norm=2.0), dict(data_norm=2.0, assume_centered=True), dict()],
    ids=["data_norm", "centered", "private radius"],
)
@pytest.mark.parametrize("route", ["sparse products", "densified chunks"])
def test_sparse_input_gives_the_dense_fit(
    Estimator, container, dtype, params, route, monkeypatch
):
    # The sparse pass computes the same clipped sums as the dense one (up to
    # rounding), and the noise is drawn from the same seed: the same release.
    # Both of its routes are forced in turn.
    cost = 0.0 if route == "sparse products" else np.inf
    monkeypatch.setattr(_gram._sparse, "SPARSE_PAIR_COST", cost)
    X = _sparse_data().astype(dtype)
    dense = Estimator(random_state=0, **params).fit(X)
    ours = Estimator(random_state=0, **params).fit(container(X))
    np.testing.assert_allclose(
        ours.covariance_, dense.covariance_, rtol=1e-9, atol=1e-13
    )
    np.testing.assert_allclose(ours.location_, dense.location_, rtol=1e-9, atol=1e-13)
    assert ours.data_norm_ == dense.data_norm_
    assert ours.guarantee_ == dense.guarantee_
    for name in ("clip_threshold_", "mechanism_"):
        assert getattr(ours, name, None) == getattr(dense, name, None)


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(epsilon=0.0), "epsilon"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(delta=1.0), "delta"),
        (dict(delta=-0.1), "delta"),
        (dict(rho=0.0), "rho"),
        (dict(data_norm=0.0), "data_norm"),
        (dict(data_norm=-1.0), "data_norm"),
        (dict(data_norm=1e200), "data_norm"),
        (dict(projection="nearest"), "projection"),
        (dict(eigenvalue_floor=-1.0), "eigenvalue_floor"),
    ],
)
@pytest.mark.parametrize("skip_validation", [False, True])
def test_bad_parameters(Estimator, params, match, skip_validation):
    # Rejected even when scikit-learn's declarative validation is switched off.
    X = _data(n=50)
    with config_context(skip_parameter_validation=skip_validation):
        with pytest.raises(ValueError, match=match):
            Estimator(**{"data_norm": 1.0, **params}).fit(X)


def test_pipeline_grid_search_over_epsilon(Estimator):
    # Rows scaled by a public constant (not by the data) to norm <= 1, then a
    # private covariance; GridSearchCV ranks candidates by the Gaussian
    # log-likelihood of held-out rows, which rises with epsilon.
    rng = np.random.default_rng(0)
    cov = np.array([[1.0, 0.6, 0.0], [0.6, 1.0, 0.3], [0.0, 0.3, 0.5]])
    X = rng.multivariate_normal(np.zeros(3), cov, size=6000)
    # A positive eigenvalue floor keeps every score finite (with floor 0 a
    # clamped eigenvalue makes the log-likelihood -inf).
    pipe = make_pipeline(
        FunctionTransformer(lambda Z: Z / 6.0),
        Estimator(data_norm=1.0, eigenvalue_floor="auto", random_state=0),
    )
    name = pipe.steps[-1][0]
    search = GridSearchCV(pipe, {f"{name}__epsilon": [0.01, 1.0, 100.0]}, cv=3).fit(X)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores))
    assert list(search.cv_results_["rank_test_score"]) == [3, 2, 1]
    assert search.best_params_[f"{name}__epsilon"] == 100.0
