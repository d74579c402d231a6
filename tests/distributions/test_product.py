"""Tests for dpcov.distributions.ProductBernoulli (Kamath et al. 2019, Section 5)."""

import math

import numpy as np
import pytest
from scipy import sparse, stats
from sklearn import clone, config_context
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpcov.accounting import ZCDP, compose, zcdp_rho
from dpcov.distributions._ppde import (
    bernoulli_tv_bounds,
    naive_product_release,
    ppde_min_samples,
    ppde_release,
)
from dpcov.distributions._product import ProductBernoulli, default_min_probability

from .._privacy_checks import recorded_releases


def _rows(p, n, seed):
    rng = np.random.default_rng(seed)
    return (rng.random((n, len(p))) < np.asarray(p)).astype(np.float64)


def _mu_interval(above_x, above_x_prime, alpha=1e-3):
    # Gaussian-DP audit (Dong, Roth and Su, 2022): mu = Phi^-1(TPR) - Phi^-1(FPR) at
    # any threshold for N(m, s^2) vs N(m', s^2); Clopper-Pearson intervals at
    # 1 - alpha / 2 each give a 1 - alpha interval for mu.
    tpr = stats.binomtest(int(above_x.sum()), above_x.size)
    fpr = stats.binomtest(int(above_x_prime.sum()), above_x_prime.size)
    tpr = tpr.proportion_ci(1 - alpha / 2, method="exact")
    fpr = fpr.proportion_ci(1 - alpha / 2, method="exact")
    return (
        stats.norm.ppf(tpr.low) - stats.norm.ppf(fpr.high),
        stats.norm.ppf(tpr.high) - stats.norm.ppf(fpr.low),
    )


# --------------------------------------------------------------------------
# Privacy


@pytest.mark.slow
def test_neighbour_audit_through_the_estimator():
    # Worst-case neighbours: one row all ones vs all zeros, the others with
    # marginals 1/2 (no clipping at these noise levels), so probabilities_
    # moves by sqrt(d) / n along u = 1 / sqrt(d) and the projection is Gaussian
    # with standard deviation sigma. A rho-zCDP Gaussian mechanism is then
    # exactly sqrt(2 rho)-GDP: the 99.9% interval of mu_hat (threshold from
    # separate calibration fits) must contain sqrt(2 rho), and fits at sigma
    # / 2 (rho' = 4 rho) must be detected (interval above sqrt(2 rho)).
    # 2000 fits per side: standard error of mu_hat about 0.04.
    n, d, rho = 200, 10, 0.5
    X = np.zeros((n, d))
    X[1::2] = 1.0
    X_prime = X.copy()
    X[0], X_prime[0] = 1.0, 0.0
    u = np.full(d, 1 / math.sqrt(d))

    def projections(data, rho_fit, seeds):
        est = ProductBernoulli(rho=rho_fit)
        return np.array(
            [u @ est.set_params(random_state=s).fit(data).probabilities_ for s in seeds]
        )

    target = math.sqrt(2 * rho)
    for rho_fit, inside in [(rho, True), (4 * rho, False)]:
        cal = (
            projections(X, rho_fit, range(300)),
            projections(X_prime, rho_fit, range(300, 600)),
        )
        threshold = 0.5 * (np.median(cal[0]) + np.median(cal[1]))
        t_x = projections(X, rho_fit, range(1000, 3000))
        t_xp = projections(X_prime, rho_fit, range(3000, 5000))
        low, high = _mu_interval(t_x > threshold, t_xp > threshold)
        if inside:
            assert low <= target <= high, (low, high)
        else:
            assert low > target, (low, high)


def test_noise_scale_is_the_closed_form(global_random_seed):
    # "gaussian": sigma = sqrt(d) / (n sqrt(2 rho)) on every coordinate, and
    # epsilon/delta are converted to the largest rho implying them. The noise
    # drawn has that scale too: the fit's one additive release is the
    # empirical mean plus Gaussian noise at sigma, and probabilities_ is it
    # clipped to [floor, 1 - floor] (post-processing).
    X = _rows([0.5, 0.3, 0.2, 0.1, 0.05], 1000, global_random_seed)
    with recorded_releases() as releases:
        est = ProductBernoulli(epsilon=1.0, delta=1e-6, random_state=0).fit(X)
    rho = zcdp_rho(1.0, 1e-6)
    assert est.rho_spent_ == pytest.approx(rho)
    sigma = math.sqrt(5) / (1000 * math.sqrt(2 * rho))
    np.testing.assert_allclose(est.noise_std_, sigma)
    (release,) = releases
    assert release.law == "gaussian"
    assert release.scale == pytest.approx(sigma, rel=1e-12)
    np.testing.assert_allclose(release.value, X.mean(axis=0), rtol=0, atol=1e-14)
    floor = default_min_probability(1000)
    np.testing.assert_array_equal(
        est.probabilities_, np.clip(release.noisy, floor, 1 - floor)
    )


def test_budget_split_composes_to_the_configured_budget():
    # PPDE runs every step at the whole budget on disjoint blocks (parallel
    # composition): one entry, composing to exactly ZCDP(rho).
    X = _rows([0.4, 0.1, 0.01], 20_000, 0)
    for method in ["gaussian", "ppde"]:
        est = ProductBernoulli(rho=0.5, method=method, random_state=0).fit(X)
        assert compose(est.budget_split_.values()) == ZCDP(0.5) == est.guarantee_
        assert len(est.budget_split_) == 1
    est = ProductBernoulli(epsilon=2.0, delta=1e-5, method="ppde", random_state=0)
    est.fit(X)
    assert est.epsilon_spent_ <= 2.0 and est.delta_spent_ == 1e-5


def test_ppde_estimator_is_the_mechanism_plus_clipping():
    # fit = ppde_release with the same generator, then the floor (post-
    # processing); the plan in the attributes is the public one.
    X = _rows([0.9, 0.4, 0.1, 0.01, 0.002], 30_000, 0)
    for orientation in ["private", "known"]:
        est = ProductBernoulli(
            rho=0.5, method="ppde", orientation=orientation, random_state=3
        ).fit(X)
        release = ppde_release(
            X, rho=0.5, rng=np.random.default_rng(3), orientation=orientation
        )
        floor = 1 / (2 * (30_000 + 1))
        ceiling = 0.5 if orientation == "known" else 1 - floor
        np.testing.assert_array_equal(
            est.probabilities_, np.clip(release.marginals, floor, ceiling)
        )
        np.testing.assert_array_equal(est.set_in_round_, release.set_in_round)
        assert est.orientation_size_ + est.block_sizes_.sum() == 30_000
        assert est.n_rounds_ == len(est.block_sizes_) == len(est.upper_bounds_)
    # A later gaussian fit leaves no stale plan behind.
    est.set_params(method="gaussian").fit(X)
    assert not hasattr(est, "n_rounds_") and not hasattr(est, "flipped_")


def test_ppde_refuses_too_few_rows_before_reading_data():
    # The pre-check uses public quantities only (n, d, rho, beta) and states
    # the requirement; one more row passes.
    n_min = ppde_min_samples(50, rho=0.5)
    est = ProductBernoulli(rho=0.5, method="ppde")
    with pytest.raises(ValueError, match=f"needs at least {n_min} samples"):
        est.fit(np.zeros((n_min - 1, 50)))
    est.fit(np.zeros((n_min, 50)))


# --------------------------------------------------------------------------
# Accuracy


def test_tv_accuracy_gaussian(global_random_seed):
    # TV <= sqrt(1 - BC**2) <= sqrt(chi2), chi2 = sum (q - p)**2 / (p (1 - p))
    # (-2 log BC <= KL <= chi-square); E[chi2] <= sum (sigma**2 / v_j + 1 / n)
    # (noise plus binomial sampling; clipping to [floor, 1 - floor] with p
    # inside only shrinks errors). Markov at 1%: chi2 <= 100 E[chi2].
    p = np.r_[0.5, 0.3, 0.1, 0.03, np.full(46, 0.01)]
    n, rho = 50_000, 0.5
    X = _rows(p, n, global_random_seed)
    est = ProductBernoulli(rho=rho, random_state=global_random_seed).fit(X)
    sigma2 = len(p) / (n**2 * 2 * rho)
    expected_chi2 = np.sum(sigma2 / (p * (1 - p)) + 1 / n)
    lower, upper = bernoulli_tv_bounds(p, est.probabilities_)
    assert upper <= math.sqrt(100 * expected_chi2)
    assert lower <= upper


def test_inf_epsilon_gives_the_empirical_marginals():
    X = _rows([0.5, 0.3, 0.0, 1.0, 0.01], 400, 0)
    est = ProductBernoulli(epsilon=np.inf, min_probability=0.0).fit(X)
    np.testing.assert_array_equal(est.probabilities_, X.mean(axis=0))
    assert est.epsilon_spent_ == np.inf
    np.testing.assert_array_equal(est.noise_std_, 0.0)
    # With the "auto" floor only the constant columns move, to the floor.
    est = ProductBernoulli(epsilon=np.inf).fit(X)
    floor = default_min_probability(400)
    assert est.min_probability_ == floor == 1 / 802
    np.testing.assert_array_equal(
        est.probabilities_, np.clip(X.mean(axis=0), floor, 1 - floor)
    )


def test_known_orientation_clips_at_one_half():
    X = _rows([0.5, 0.45, 0.1], 300, 0)
    est = ProductBernoulli(rho=0.05, orientation="known", random_state=0).fit(X)
    assert est.probabilities_.max() <= 0.5
    same = ProductBernoulli(rho=0.05, random_state=0).fit(X)
    np.testing.assert_array_equal(
        est.probabilities_, np.minimum(same.probabilities_, 0.5)
    )


# --------------------------------------------------------------------------
# Density surface


def test_score_samples_is_the_log_likelihood():
    X = _rows([0.6, 0.2, 0.05], 5000, 0)
    est = ProductBernoulli(rho=1.0, random_state=0).fit(X)
    q = est.probabilities_
    rows = np.array([[1, 0, 0], [0, 1, 1], [1, 1, 1], [0, 0, 0]], dtype=float)
    by_hand = [
        math.log(q[0]) + math.log(1 - q[1]) + math.log(1 - q[2]),
        math.log(1 - q[0]) + math.log(q[1]) + math.log(q[2]),
        math.log(q[0]) + math.log(q[1]) + math.log(q[2]),
        math.log(1 - q[0]) + math.log(1 - q[1]) + math.log(1 - q[2]),
    ]
    np.testing.assert_allclose(est.score_samples(rows), by_hand, rtol=1e-13)
    assert est.score(rows) == pytest.approx(np.mean(by_hand))
    # A zero marginal without the floor: -inf for rows with a 1 there.
    est = ProductBernoulli(epsilon=np.inf, min_probability=0.0).fit(
        np.array([[0, 1], [0, 0]])
    )
    np.testing.assert_array_equal(
        est.score_samples([[1, 0], [0, 1]]), [-np.inf, math.log(0.5)]
    )


def test_sample_has_the_fitted_marginals(global_random_seed):
    # Column means of m draws within 5 binomial standard errors.
    X = _rows([0.5, 0.2, 0.05, 0.9], 4000, 0)
    est = ProductBernoulli(rho=1.0, random_state=0).fit(X)
    m = 40_000
    draws = est.sample(m, random_state=global_random_seed)
    assert draws.shape == (m, 4) and set(np.unique(draws)) <= {0.0, 1.0}
    q = est.probabilities_
    assert np.all(np.abs(draws.mean(axis=0) - q) <= 5 * np.sqrt(q * (1 - q) / m))
    np.testing.assert_array_equal(
        est.sample(5, random_state=1), est.sample(5, random_state=1)
    )
    with pytest.raises(ValueError, match="positive integer"):
        est.sample(0)


def test_binarize_threshold():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(2000, 6))
    a = ProductBernoulli(rho=1.0, binarize=0.3, random_state=0).fit(Z)
    b = ProductBernoulli(rho=1.0, random_state=0).fit((Z > 0.3).astype(float))
    np.testing.assert_array_equal(a.probabilities_, b.probabilities_)
    np.testing.assert_array_equal(
        a.score_samples(Z[:10]), b.score_samples(Z[:10] > 0.3)
    )
    # Boolean and integer input are binary already.
    c = ProductBernoulli(rho=1.0, random_state=0).fit(Z > 0.3)
    np.testing.assert_array_equal(a.probabilities_, c.probabilities_)


# --------------------------------------------------------------------------
# Bad input and parameters


@pytest.mark.parametrize(
    "X, error, match",
    [
        (np.array([[0.0, np.nan], [1.0, 0.0]]), ValueError, "NaN"),
        (np.array([[0.0, np.inf], [1.0, 0.0]]), ValueError, "infinity"),
        (np.array([[0.0, 0.5], [1.0, 0.0]]), ValueError, "must be 0 or 1"),
        (np.array([[0, 2], [1, 0]]), ValueError, "must be 0 or 1"),
        (np.array([["a", "b"], ["c", "d"]]), ValueError, "numeric"),
        (np.array([0.0, 1.0, 1.0]), ValueError, "2D array"),
        (np.zeros((0, 3)), ValueError, "0 sample"),
        (sparse.csr_array(np.eye(3)), TypeError, "dense data is required"),
    ],
)
def test_bad_input_is_refused(X, error, match):
    with pytest.raises(error, match=match):
        ProductBernoulli().fit(X)


def test_nan_is_refused_even_with_binarize():
    # NaN > threshold is False: binarizing must not hide a NaN.
    with pytest.raises(ValueError, match="NaN"):
        ProductBernoulli(binarize=0.0).fit([[0.0, np.nan], [1.0, 0.0]])


@pytest.mark.parametrize(
    "params",
    [
        {"epsilon": 0.0},
        {"epsilon": -1.0},
        {"delta": 1.0},
        {"delta": -0.1},
        {"delta": 0.0},  # no pure-DP form without rho
        {"rho": 0.0},
    ],
)
def test_bad_privacy_parameters_are_refused(params):
    X = np.zeros((10, 2))
    with pytest.raises(ValueError):
        ProductBernoulli(**params).fit(X)
    # Even with scikit-learn's validation switched off.
    with config_context(skip_parameter_validation=True):
        with pytest.raises(ValueError):
            ProductBernoulli(**params).fit(X)


def test_delta_zero_is_allowed_with_rho():
    est = ProductBernoulli(delta=0.0, rho=0.5, random_state=0).fit(np.zeros((10, 2)))
    assert est.rho_spent_ == 0.5 and est.epsilon_spent_ == np.inf


def test_score_checks_features_and_binarity():
    est = ProductBernoulli(rho=1.0, random_state=0).fit(np.zeros((10, 3)))
    with pytest.raises(ValueError, match="3 features"):
        est.score_samples(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="must be 0 or 1"):
        est.score_samples(np.full((2, 3), 0.5))


# --------------------------------------------------------------------------
# scikit-learn integration


def _above_half(Z):
    return Z > 0.5


def test_pipeline_and_grid_search():
    # GridSearchCV over method and rho, scored by the mean log-likelihood on
    # held-out rows, behind a stateless (data-independent, hence privacy-free)
    # transformer. Costs n_candidates x n_splits + 1 fits, each a release.
    rng = np.random.default_rng(0)
    Z = rng.random((12_000, 4)) * [1.0, 0.7, 0.55, 1.9]
    pipe = make_pipeline(
        FunctionTransformer(_above_half), ProductBernoulli(random_state=0)
    )
    grid = GridSearchCV(
        pipe,
        {
            "productbernoulli__method": ["gaussian", "ppde"],
            "productbernoulli__rho": [0.5, 2.0],
        },
        cv=3,
    )
    grid.fit(Z)
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))
    best = grid.best_estimator_[-1]
    truth = np.array([0.5, 0.2857, 0.0909, 0.7368])
    assert np.all(np.abs(best.probabilities_ - truth) < 0.05)
    assert clone(best).get_params()["rho"] in (0.5, 2.0)


def test_naive_mechanism_is_what_fit_runs():
    X = _rows([0.4, 0.2], 500, 0)
    est = ProductBernoulli(rho=0.2, random_state=7).fit(X)
    release = naive_product_release(X, rho=0.2, rng=np.random.default_rng(7))
    floor = default_min_probability(500)
    np.testing.assert_array_equal(
        est.probabilities_, np.clip(release.marginals, floor, 1 - floor)
    )
