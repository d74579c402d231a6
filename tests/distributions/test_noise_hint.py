"""Signal-to-noise figures and NoiseDominatedWarning of the distribution learners."""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_wine

from dpcov.distributions import MultivariateGaussian, ProductBernoulli, best_mean_plan
from dpcov.exceptions import NoiseDominatedWarning
from dpcov.mechanisms._tails import gaussian_norm_tail

from .._privacy_checks import recorded_releases


def _fit_recording(est, X):
    # The fitted estimator and the messages of its NoiseDominatedWarnings.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X)
    return est, [str(w.message) for w in caught if w.category is NoiseDominatedWarning]


def _silent(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatedWarning)
        return est.fit(X)


# MultivariateGaussian -----------------------------------------------------

GAUSSIAN_FITS = [
    {},
    {
        "method": "klsu",
        "min_variance": 0.5,
        "max_variance": 2.0,
        "mean_bound": 10.0,
    },
]


@pytest.mark.parametrize("params", GAUSSIAN_FITS)
def test_gaussian_figure_is_top_eigenvalue_over_level(params):
    X = np.random.default_rng(0).normal(size=(20000, 3))
    est = MultivariateGaussian(random_state=0, **params).fit(X)
    top = np.linalg.eigvalsh(est.covariance_)[-1]
    assert est.signal_to_noise_ == pytest.approx(top / est.noise_level_, rel=1e-9)
    assert est.signal_to_noise_ > 1


def test_gaussian_noise_level_closed_form_one_step():
    # One CoinPress step: no whitening (A = I), rows clipped to c' and noise
    # of scale sqrt(2) c'**2 / (n sqrt(2 rho)) (Frobenius sensitivity
    # sqrt(2) c'**2 / n); the level is the semicircle edge 2 sqrt(d) times it,
    # in units of covariance_ (times min_variance). Enough rows for a private
    # covariance better than the public prior (prior_parts_ is empty).
    # The planner now picks the centred layout here (all n rows, centred at
    # a coarse private mean, rather than n // 2 pair differences), so c' is
    # the plan's c = sqrt(K) tau widened for the offset of that mean:
    # c' = sqrt(c**2 + 2 s sqrt(K) o + o**2), o = (tau / sqrt(d)) sqrt(d K /
    # n + sigma1**2 d), sigma1 the coarse mean's public noise scale.
    n, d = 40001, 3
    # The level is that of the noise drawn: the fit's one release of a d x d
    # matrix (the covariance step) has the scale sigma.
    X = np.random.default_rng(1).normal(size=(n, d))
    with recorded_releases() as releases:
        est = MultivariateGaussian(
            n_iterations=1,
            min_variance=0.25,
            max_variance=4.0,
            mean_bound=1.0,
            random_state=0,
        ).fit(X)
    assert est.prior_parts_ == ()
    assert est.covariance_rows_ == "centred"
    rho = est.budget_split_["covariance step 1"].rho
    K, beta = 4.0 / 0.25, 0.1
    tau = gaussian_norm_tail(d, beta)
    coarse = best_mean_plan(
        n,
        d,
        est.budget_split_["coarse mean step 1"].rho,
        1.0 / math.sqrt(0.25),
        K,
        beta=beta,
        n_steps=1,
    )
    o = tau / math.sqrt(d) * math.sqrt(d * K / n + coarse.noise_scales[-1] ** 2 * d)
    s = math.sqrt(2 * math.log(2 / beta))
    c = math.sqrt(K) * tau
    c_wide = math.sqrt(c**2 + 2 * s * math.sqrt(K) * o + o**2)
    sigma = math.sqrt(2.0) * c_wide**2 / (n * math.sqrt(2.0 * rho))
    assert est.noise_level_ == pytest.approx(0.25 * 2 * math.sqrt(d) * sigma, rel=1e-12)
    (covariance,) = [r for r in releases if np.shape(r.value) == (d, d)]
    assert covariance.law == "gaussian"
    assert covariance.scale == pytest.approx(sigma, rel=1e-12)


def test_gaussian_warns_on_raw_wine_and_not_on_a_gaussian():
    # Raw wine: 178 rows, 13 features under the default bounds (K = 1e8):
    # the plan predicts a private covariance worse than the public prior,
    # which is released instead, with a warning (decided from n, d and the
    # parameters alone, so the figure is that of a noiseless release).
    with pytest.warns(NoiseDominatedWarning, match="would be dominated by noise"):
        est = MultivariateGaussian(random_state=0).fit(load_wine().data)
    assert est.prior_parts_ == ("covariance",)
    np.testing.assert_array_equal(est.covariance_, 1e-4 * np.eye(13))
    assert est.signal_to_noise_ == np.inf
    # Rows whose variance (1e6) is far above max_variance (1): the plan
    # trusted the bounds, and the release is noise clipped to them.
    X = np.random.default_rng(0).normal(size=(20000, 5)) * 1e3
    with pytest.warns(NoiseDominatedWarning, match="Gaussian is dominated by noise"):
        est = MultivariateGaussian(
            min_variance=1e-2, max_variance=1.0, random_state=0
        ).fit(X)
    assert est.prior_parts_ == () and est.signal_to_noise_ < 1
    X = np.random.default_rng(0).normal(size=(20000, 5))
    for seed in range(3):
        assert _silent(MultivariateGaussian(random_state=seed), X).signal_to_noise_ > 1


def test_gaussian_no_noise_no_warning():
    X = np.random.default_rng(0).normal(size=(200, 2))
    est = _silent(MultivariateGaussian(epsilon=np.inf), X)
    assert est.noise_level_ == 0 and est.signal_to_noise_ == np.inf


def test_gaussian_hint_depends_on_the_release_only():
    # Rows beyond 2**1000 (in the frame scaled by 1 / sqrt(min_variance)) are
    # brought to that magnitude by a power of two, keeping their direction:
    # rows u 2**1015 and u 2**1020 give the same scaled rows, hence the same
    # release with the same seed, the same figure and the same warning,
    # although the data differ.
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(4000, 3))
    fits = []
    for power in (1015, 1020):
        X = rows.copy()
        X[:20] = np.ldexp(rows[:20], power)
        fits.append(_fit_recording(MultivariateGaussian(random_state=7), X))
    (a, warned_a), (b, warned_b) = fits
    np.testing.assert_array_equal(a.covariance_, b.covariance_)
    np.testing.assert_array_equal(a.mean_, b.mean_)
    assert a.signal_to_noise_ == b.signal_to_noise_
    assert a.noise_level_ == b.noise_level_
    assert warned_a == warned_b


def test_gaussian_message_carries_no_data():
    X = load_wine().data.copy()
    X[0, 0] = 123456.789
    with pytest.warns(NoiseDominatedWarning) as record:
        MultivariateGaussian(random_state=0).fit(X)
    messages = [str(w.message) for w in record if w.category is NoiseDominatedWarning]
    assert messages
    for message in messages:
        assert "123456" not in message and "178" not in message


# ProductBernoulli ---------------------------------------------------------


def _coins(n, p, seed=0):
    return (np.random.default_rng(seed).random((n, np.size(p))) < p).astype(float)


def test_product_figure_formula():
    X = _coins(20000, [0.5, 0.3, 0.1, 0.01, 0.97])
    est = ProductBernoulli(random_state=0).fit(X)
    p = est.probabilities_
    expected = np.median(np.minimum(p, 1 - p) / est.noise_std_)
    assert est.signal_to_noise_ == pytest.approx(expected, rel=1e-12)
    assert est.signal_to_noise_ > 1


def test_product_figure_formula_ppde():
    X = _coins(4000, np.full(4, 0.2))
    est = ProductBernoulli(
        method="ppde", orientation="known", rho=0.5, random_state=0
    ).fit(X)
    p = est.probabilities_
    expected = np.median(np.minimum(p, 1 - p) / est.noise_std_)
    assert est.signal_to_noise_ == pytest.approx(expected, rel=1e-12)


def test_product_warns_on_noise_and_not_on_signal():
    # n=100, d=50 at the default budget: noise of standard deviation about
    # 0.32 on each marginal of 0.3.
    with pytest.warns(NoiseDominatedWarning, match="dominated by noise"):
        est = ProductBernoulli(random_state=0).fit(_coins(100, np.full(50, 0.3)))
    assert est.signal_to_noise_ < 1
    # Biased coins, all alike (no spread across coordinates): still signal.
    for p in (0.3, 0.97):
        _silent(ProductBernoulli(random_state=0), _coins(20000, np.full(5, p)))


def test_product_no_noise():
    est = _silent(
        ProductBernoulli(epsilon=np.inf, min_probability=0.0), _coins(50, [0.0, 0.5])
    )
    assert est.signal_to_noise_ == np.inf


def test_product_hint_depends_on_the_release_only():
    # The same rows after binarization (threshold 0.5), different values
    # before: the same release with the same seed, so the same figure and
    # warning decision, in the noisy and in the clear regime.
    for n in (100, 20000):
        X = _coins(n, np.full(50, 0.3), seed=2)
        other = np.where(X > 0, 7.0 + X, -3.0)
        fits = [
            _fit_recording(ProductBernoulli(binarize=0.5, random_state=5), data)
            for data in (X, other)
        ]
        (a, warned_a), (b, warned_b) = fits
        np.testing.assert_array_equal(a.probabilities_, b.probabilities_)
        assert a.signal_to_noise_ == b.signal_to_noise_
        assert warned_a == warned_b
        assert bool(warned_a) == (n == 100)


def test_product_message_carries_no_data():
    with pytest.warns(NoiseDominatedWarning) as record:
        ProductBernoulli(random_state=0).fit(_coins(101, np.full(50, 0.3)))
    message = str(record[0].message)
    assert "101" not in message and "0.3" not in message
