"""predicted_error_: the noise of a release, from public values and the release."""

import math
import warnings

import numpy as np
import pytest

from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.covariance._shrinkage import predicted_noise_energy


def _fit(estimator, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded, and maybe noise-dominated
        return estimator.fit(X)


def _strong_rows(n, d, seed):
    # Rows whose covariance has every eigenvalue far above the noise: the
    # projection then keeps the release as it is, and its error is the
    # noise's.
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) * np.linspace(0.3, 0.5, d)


@pytest.mark.parametrize("delta", [1e-6, 0.0])  # Gaussian; Laplace noise
def test_the_prediction_of_additive_noise_is_its_closed_form(delta):
    # GaussCov adds symmetric noise of standard deviation s to each entry
    # of the upper triangle (s = noise_level_ / (2 sqrt(d)), the public
    # scale): ||E||_F**2 has mean s**2 d**2 (d diagonal, d (d - 1)
    # mirrored entries). Where the projection keeps the release (every
    # eigenvalue far above the noise's), the prediction is that figure; 15%
    # covers the bootstrap's few draws (the relative spread of ||E||**2 is
    # about 2 / d per draw, 13 draws at d = 10) and a diagonal of twice the
    # variance (d**2 + d).
    d = 10
    X = _strong_rows(20_000, d, seed=d)
    params = dict(data_norm=2.0 * math.sqrt(d), assume_centered=True, shrinkage=None)
    est = _fit(
        GaussianCovariance(epsilon=8.0, delta=delta, random_state=0, **params), X
    )
    s = est.noise_level_ / (2.0 * math.sqrt(d))
    assert est.predicted_error_ == pytest.approx(s * d, rel=0.15)


@pytest.mark.parametrize("delta", [1e-6, 0.0])
def test_the_closed_form_prediction_in_high_dimension(delta):
    # From d = 128 the figure comes in closed form (Stein's unbiased risk
    # estimate of the projected release): over 10 seeded fits, the root
    # mean square of the prediction against that of the actual error
    # (the projection acts here: the error is below the raw noise's s d),
    # within the band [2/3, 3/2] the figure is calibrated to.
    d = 128
    X = _strong_rows(20_000, d, seed=d)
    target = X.T @ X / X.shape[0]
    params = dict(data_norm=2.0 * math.sqrt(d), assume_centered=True, shrinkage=None)
    predicted, actual = [], []
    for seed in range(10):
        est = _fit(
            GaussianCovariance(epsilon=8.0, delta=delta, random_state=seed, **params),
            X,
        )
        predicted.append(est.predicted_error_**2)
        actual.append(np.sum((est.covariance_ - target) ** 2))
    assert 2 / 3 <= math.sqrt(np.mean(predicted) / np.mean(actual)) <= 3 / 2


@pytest.mark.parametrize(
    "estimator", [GaussianCovariance, SeparateCovariance, AdaptiveCovariance]
)
def test_the_prediction_matches_the_actual_error_on_average(estimator):
    # Over 30 seeded fits of one table kept as released, the root mean
    # square of the prediction against that of the actual error of the
    # clipped rows' covariance (the box covers the rows: nothing is
    # clipped): within [2/3, 3/2], the band the figure is calibrated to on
    # real tables (python -m benchmarks run shrinkage).
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 6)) @ rng.normal(size=(6, 6)) / 3
    bounds = (np.floor(X.min(0)), np.ceil(X.max(0)))
    target = np.cov(X, rowvar=False, bias=True)
    predicted, actual = [], []
    for seed in range(30):
        est = _fit(
            estimator(epsilon=4.0, bounds=bounds, shrinkage=None, random_state=seed),
            X,
        )
        predicted.append(est.predicted_error_**2)
        actual.append(np.sum((est.covariance_ - target) ** 2))
    ratio = math.sqrt(np.mean(predicted) / np.mean(actual))
    assert 2 / 3 <= ratio <= 3 / 2


def test_no_noise_predicts_nothing_and_a_shrunk_release_no_figure():
    X = _strong_rows(500, 4, seed=0)
    exact = _fit(GaussianCovariance(epsilon=math.inf, data_norm=3.0), X)
    assert exact.predicted_error_ == 0.0
    # A tiny budget: the release is shrunk (by more than half), and its
    # error is that of the shrinkage, which no release can predict.
    shrunk = _fit(GaussianCovariance(epsilon=0.01, data_norm=3.0, random_state=0), X)
    assert shrunk.shrinkage_ > 0.5 and math.isnan(shrunk.predicted_error_)
    kept = _fit(
        GaussianCovariance(epsilon=0.01, data_norm=3.0, random_state=0, shrinkage=None),
        X,
    )
    assert kept.shrinkage_ == 0.0 and kept.predicted_error_ > 0.0


def test_the_energy_weighs_the_two_bootstraps_by_the_signal_share():
    # Signal only (s = 1): the larger of the bootstrap at the surrogate and
    # the pure-noise energy; noise only (s = 0): the pure-noise energy.
    assert predicted_noise_energy(5.0, 3.0, 1.0) == 5.0
    assert predicted_noise_energy(2.0, 3.0, 1.0) == 3.0
    assert predicted_noise_energy(5.0, 3.0, 0.0) == 3.0
    assert predicted_noise_energy(5.0, 3.0, 0.5) == pytest.approx(4.0)
    assert predicted_noise_energy(-1.0, None, 1.0) == 0.0
