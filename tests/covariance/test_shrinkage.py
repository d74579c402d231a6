"""Shrinkage toward zero: public inputs only, and its risk against the raw release."""

import warnings

import numpy as np
import pytest

from dpcov.accounting import ZCDP, PureDP
from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.covariance._separate import separate_release
from dpcov.covariance._shrinkage import (
    AdditiveError,
    mean_error_energy,
    shrinkage_factor,
)
from dpcov.exceptions import NoiseDominatedWarning
from dpcov.mechanisms import calibrate_additive

ESTIMATORS = [
    GaussianCovariance,
    SeparateCovariance,
    AdaptiveCovariance,
    EigenSamplingCovariance,
    NuclearLaplaceCovariance,
]


def _symmetric_noise(rng, d, sigma):
    upper = np.triu(rng.normal(0.0, sigma, size=(d, d)))
    return upper + np.triu(upper, 1).T


@pytest.mark.parametrize("signal", [0.0, 1.0, 30.0])
def test_risk_never_above_the_raw_release(signal):
    # Gaussian noise on the d (d + 1) / 2 = 55 free entries (d = 10), metric
    # weights h in [1, 2]. kappa = sum v + sd is inside Bock's range
    # (0, 2 (sum v - 2 max v)] here (sum v = 100 s^2 h-weighted, max v and sd
    # are a few percent of it), so the positive-part factor has lower risk
    # than the raw release for every truth (Bock 1975; Baranchik 1964). With
    # 2000 paired draws the mean difference is compared to three paired
    # standard errors; at zero signal the risk is a small part of the raw
    # one (the factor is 0 unless the noise's energy exceeds its mean by one
    # standard deviation, about 16% of draws, and then small).
    rng = np.random.default_rng(0)
    d, sigma = 10, 1.0
    h = np.linspace(1.0, 2.0, d)
    W = np.outer(h, h)
    error = AdditiveError(sigma**2, sigma**2)
    energy = error.energy(h)
    base = _symmetric_noise(np.random.default_rng(1), d, 1.0)
    theta = base / np.linalg.norm(W * base) * np.sqrt(signal * energy)
    raw_loss, shrunk_loss = [], []
    for _ in range(2000):
        y = theta + _symmetric_noise(rng, d, sigma)
        s = shrinkage_factor(y, h, energy)
        raw_loss.append(np.sum((W * (y - theta)) ** 2))
        shrunk_loss.append(np.sum((W * (s * y - theta)) ** 2))
    diff = np.array(shrunk_loss) - np.array(raw_loss)
    assert diff.mean() <= 3 * diff.std(ddof=1) / np.sqrt(len(diff))
    if signal == 0.0:
        assert np.mean(shrunk_loss) < 0.1 * np.mean(raw_loss)


def test_energy_is_the_mean_noise_energy_plus_one_sd():
    # Monte Carlo check of the closed form (mean and standard deviation of
    # ||D E D||_F^2 for Gaussian entries), 4000 draws: the sample mean is
    # within 4 of its standard errors.
    rng = np.random.default_rng(2)
    d, sigma = 6, 0.7
    h = np.array([1.0, 2.0, 0.5, 3.0, 1.0, 1.5])
    W = np.outer(h, h)
    draws = np.array(
        [np.sum((W * _symmetric_noise(rng, d, sigma)) ** 2) for _ in range(4000)]
    )
    predicted = AdditiveError(sigma**2, sigma**2).energy(h)
    estimate = draws.mean() + draws.std()
    se = draws.std() / np.sqrt(len(draws))
    assert abs(predicted - estimate) < 4 * se + 0.05 * draws.std()


def test_mean_error_energy_closed_form():
    # E (sum h_i^2 e_i^2)^2 for Laplace e: Monte Carlo with 20000 draws,
    # within 4 standard errors.
    rng = np.random.default_rng(3)
    h = np.array([1.0, 3.0, 0.5])
    noise = calibrate_additive(
        PureDP(1.0),
        l2_sensitivity=1.0,
        l1_sensitivity=1.0,
    )
    e = rng.laplace(0.0, noise.scale, size=(20000, 3))
    values = (e**2 @ h**2) ** 2
    predicted = mean_error_energy(h, noise)
    assert abs(values.mean() - predicted) < 4 * values.std() / np.sqrt(len(values))


def test_spectral_energy_reads_public_inputs_only():
    # The parametric bootstrap draws from a fixed generator: the same release
    # and public parameters give the same energy, whatever the caller's
    # generator did before.
    rng = np.random.default_rng(4)
    X = rng.normal(size=(500, 5)) / 5
    second = X.T @ X / 500
    release = separate_release(
        second, n_samples=500, radius=1.0, budget=ZCDP(0.5), rng=rng
    )
    h = np.array([1.0, 2.0, 3.0, 1.0, 0.5])
    first = release.error.energy(h, release.raw)
    np.random.default_rng(99).normal(size=100)
    assert release.error.energy(h, release.raw) == first


# AdaptiveCovariance is left out: centred on the noisy mean, zero rows become
# rows -e (e the mean's noise), which it clips at a threshold of their own
# scale, so its release holds that rank-one term as signal, not noise.
@pytest.mark.parametrize("cls", [c for c in ESTIMATORS if c is not AdaptiveCovariance])
def test_pure_noise_is_shrunk_to_the_target(cls):
    # Rows all zero: the release is noise (plus the noisy mean's outer
    # product). The factor kept is at most 1 - kappa / ||Y||^2 with kappa
    # the noise's mean energy plus one standard deviation, so it is 0 unless
    # the noise's energy exceeds its mean by more than one standard
    # deviation, and small then (d = 20: the energy's relative spread is a
    # few percent for additive noise).
    params = {"delta": 0.0} if cls is NuclearLaplaceCovariance else {}
    X = np.zeros((2000, 20))
    kept = []
    for seed in range(5):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = cls(data_norm=1.0, random_state=seed, **params).fit(X)
        kept.append(1.0 - est.shrinkage_)
    assert max(kept) < 0.2
    assert est.signal_to_noise_ < 1


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_none_keeps_the_release_and_no_noise_shrinks_nothing(cls):
    params = {"delta": 0.0} if cls is NuclearLaplaceCovariance else {}
    X = np.random.default_rng(5).normal(size=(3000, 4)) / 4
    a = cls(data_norm=1.0, epsilon=np.inf, random_state=0, **params).fit(X)
    b = cls(
        data_norm=1.0, epsilon=np.inf, shrinkage=None, random_state=0, **params
    ).fit(X)
    np.testing.assert_allclose(a.covariance_, b.covariance_, rtol=1e-12)
    assert a.shrinkage_ == 0.0 == b.shrinkage_


def test_shrinkage_warns_with_the_figure():
    # The warning and the shrinkage read the same estimate: a release shrunk
    # more than halfway warns.
    with pytest.warns(NoiseDominatedWarning):
        est = GaussianCovariance(data_norm=1.0, random_state=0).fit(np.zeros((500, 8)))
    assert est.shrinkage_ > 0.5


def test_shrinkage_parameter_is_validated():
    with pytest.raises(ValueError, match="shrinkage"):
        GaussianCovariance(shrinkage="yes", data_norm=1.0).fit(np.zeros((10, 2)))
