"""Tests of the gauss module (GaussCov / LapCov): noise scales, neighbours."""

import math

import numpy as np
import pytest

import dpcov
from dpcov.covariance import GaussianCovariance
from dpcov.mechanisms import _discrete
from tests._privacy_checks import (
    fitted_mechanism,
    gaussian_shift,
    laplace_event_loss,
    recorded_releases,
)

from ..mechanisms._samplers import SeededSource


def _unit_rows(n, d, seed, radius=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return (
        radius
        * X
        / np.linalg.norm(X, axis=1, keepdims=True)
        * rng.uniform(0.2, 1, (n, 1))
    )


def _estimator(rng, **params):
    """GaussianCovariance on rows about the origin, raw noisy matrix kept."""
    return GaussianCovariance(
        assume_centered=True, store_raw=True, random_state=rng, **params
    )


def _fit(X, rng, **params):
    return _estimator(rng, **params).fit(X)


def _upper_residuals(est, target):
    rows, cols = np.triu_indices(target.shape[0])
    return (est.raw_covariance_ - target)[rows, cols], rows == cols


def _recorded_fit(X, rng, **params):
    """One fit and its first recorded release (later ones: the shrinkage's)."""
    with recorded_releases() as releases:
        est = _fit(X, rng, **params)
    return est, releases


def test_gaussian_noise_scale_closed_form(global_random_seed):
    # GaussCov: per-entry s.d. R^2 / (n sqrt(rho)) (Dong, Liang and Yi 2022,
    # Sec. 3.1: L2 sensitivity sqrt(2) R^2/n, sigma = Delta / sqrt(2 rho)).
    # One fit is exact: the recorded release is the exact second moment plus
    # a symmetric draw whose law and scale must be the closed form's, and the
    # raw release is its noisy value. The Wigner law (upper triangle iid,
    # diagonal and off-diagonal entries of the same law, mirrored) is tested
    # in tests/mechanisms/test_noise.py::test_symmetric_matrix_law.
    n, d, R, rho = 400, 30, 2.0, 0.3
    X = _unit_rows(n, d, global_random_seed, radius=R)
    target = X.T @ X / n
    sigma = R**2 / (n * math.sqrt(rho))
    rng = np.random.default_rng(global_random_seed)
    est, releases = _recorded_fit(X, rng, rho=rho, data_norm=R)
    release = releases[0]
    assert release.law == "gaussian"
    assert release.scale == pytest.approx(sigma, rel=1e-12)
    np.testing.assert_allclose(release.value, target, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(est.raw_covariance_, release.noisy)
    np.testing.assert_array_equal(release.noise, release.noise.T)


def test_laplace_noise_scale_closed_form(global_random_seed):
    # LapCov: Laplace scale b = sqrt(d (d + 3) / 2) R^2 / (n eps); at d = 30
    # that is 22.25 R^2/(n eps), not the paper's looser sqrt(2) d = 42.4.
    # Exact on one fit, as above.
    n, d, R, eps = 400, 30, 1.5, 2.0
    X = _unit_rows(n, d, global_random_seed, radius=R)
    target = X.T @ X / n
    b = math.sqrt(30 * 33 / 2) * R**2 / (n * eps)
    rng = np.random.default_rng(global_random_seed)
    est, releases = _recorded_fit(X, rng, epsilon=eps, delta=0.0, data_norm=R)
    release = releases[0]
    assert release.law == "laplace"
    assert release.scale == pytest.approx(b, rel=1e-12)
    np.testing.assert_allclose(release.value, target, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(est.raw_covariance_, release.noisy)
    np.testing.assert_array_equal(release.noise, release.noise.T)


def test_centred_noise_scale_and_private_mean(global_random_seed):
    # assume_centered=False: mean at rho/8 with L2 sensitivity 2r/n, then the
    # covariance at 7 rho / 8 with radius r + ||location_||. One fit is
    # exact: the first recorded release is the exact mean plus a Gaussian
    # draw at the first closed-form scale, location_ is its noisy value (the
    # projection onto the r-ball changes nothing here: ||mean|| is about
    # 0.45 and the noise s.d. 0.013), and the second is the second moment of
    # the rows centred on location_ plus a symmetric draw at the second.
    n, d, r, rho = 500, 20, 1.0, 0.4
    X = _unit_rows(n, d, global_random_seed, radius=r) * 0.5 + 0.1
    assert np.linalg.norm(X, axis=1).max() <= r
    rng = np.random.default_rng(global_random_seed)
    sigma_mean = (2 * r / n) / math.sqrt(2 * rho / 8)
    with recorded_releases() as releases:
        est = GaussianCovariance(
            rho=rho, data_norm=r, store_raw=True, random_state=rng
        ).fit(X)
    mean, cov = releases[:2]
    assert mean.law == "gaussian"
    assert mean.scale == pytest.approx(sigma_mean, rel=1e-12)
    np.testing.assert_allclose(mean.value, X.mean(0), rtol=1e-12, atol=1e-15)
    assert np.linalg.norm(mean.noisy) < r
    np.testing.assert_array_equal(est.location_, mean.noisy)
    centred = X - est.location_
    R = r + np.linalg.norm(est.location_)
    assert cov.law == "gaussian"
    assert cov.scale == pytest.approx(R**2 / (n * math.sqrt(7 * rho / 8)), rel=1e-12)
    np.testing.assert_allclose(
        cov.value, centred.T @ centred / n, rtol=1e-12, atol=1e-15
    )
    np.testing.assert_array_equal(est.raw_covariance_, cov.noisy)


def _neighbours(n, d, R):
    # Worst case for the Frobenius sensitivity: the replaced row goes from
    # R e1 to R e2 (orthogonal), the others are shared.
    base = np.zeros((n, d))
    base[1:, 2] = 0.5 * R
    a, b = base.copy(), base.copy()
    a[0, 0], b[0, 1] = R, R
    return a, b


@pytest.fixture(
    params=[False, pytest.param(True, marks=pytest.mark.slow)],
    ids=["numpy", "secure_noise"],
)
def noise_switch(request, monkeypatch, global_random_seed):
    """Both samplers: numpy's, and the exact discrete ones (seeded source, slow)."""
    monkeypatch.setattr(_discrete, "_source", SeededSource(global_random_seed))
    with dpcov.config_context(secure_noise=request.param):
        yield request.param


def test_gaussian_neighbours_privacy_loss(global_random_seed, noise_switch):
    # Project the raw release on (e1e1^T - e2e2^T)/sqrt(2): the two neighbours
    # give N(m, s^2) and N(m - Delta, s^2) with Delta = sqrt(2) R^2 / n, and a
    # rho-zCDP Gaussian mechanism has Delta / s = sqrt(2 rho) = 1 here. A
    # factor-2 error in the sensitivity or the scale gives 0.5 or 2. The
    # discrete Gaussian on its grid (secure_noise) has the same shift up to
    # its 2**-9 of extra noise. The releases are drawn from the fit's own
    # mechanism on its inputs (fitted_mechanism: the law of refitting).
    n, d, R, rho, reps = 10, 3, 1.0, 0.5, 3000
    a, b = _neighbours(n, d, R)
    rng = np.random.default_rng(global_random_seed)

    def stat(X):
        draw = fitted_mechanism(_estimator(rng, rho=rho, data_norm=R), X)
        raws = [draw(rng).raw for _ in range(reps)]
        return [(raw[0, 0] - raw[1, 1]) / math.sqrt(2) for raw in raws]

    shift, se = gaussian_shift(stat(a), stat(b))
    assert shift == pytest.approx(math.sqrt(2 * rho), abs=5 * se)


def test_laplace_neighbours_privacy_loss(global_random_seed, noise_switch):
    # Pure DP on a worst-case pair for the L1 sensitivity at d = 2: x and y
    # orthogonal unit vectors at angle a = atan2(1, 2) / 2 from the axes give
    # D = (xx^T - yy^T)/n with upper triangle (2, 1, -2) R^2 / (sqrt(5) n), of L1
    # norm sqrt(5) R^2 / n = sqrt(d (d + 3) / 2) R^2 / n: the bound is tight.
    # On the event where each of the three coordinates lies beyond both
    # neighbours' values (in the direction of D), the density ratio is
    # exp(|D|_1 / b) = e^eps exactly. Factor-2 errors in b give 2 eps or eps/2.
    # The discrete Laplace on its grid (secure_noise) gives the same ratio up
    # to its 2**-9 of extra noise. Releases drawn as in the test above.
    n, R, eps, reps = 10, 1.0, 2.0, 8000
    angle = math.atan2(1.0, 2.0) / 2
    x = R * np.array([math.cos(angle), math.sin(angle)])
    y = R * np.array([-math.sin(angle), math.cos(angle)])
    a = np.tile([0.0, 0.5 * R], (n, 1))
    b = a.copy()
    a[0], b[0] = x, y
    sa, sb = a.T @ a / n, b.T @ b / n
    assert np.abs(np.triu(sa - sb)).sum() == pytest.approx(math.sqrt(5) * R**2 / n)
    rng = np.random.default_rng(global_random_seed)

    def events(X):
        draw = fitted_mechanism(_estimator(rng, epsilon=eps, delta=0.0, data_norm=R), X)
        raws = np.array([draw(rng).raw for _ in range(reps)])
        return (
            (raws[:, 0, 0] > sa[0, 0])
            & (raws[:, 0, 1] > sa[0, 1])
            & (raws[:, 1, 1] < sa[1, 1])
        )

    loss, se = laplace_event_loss(events(a), events(b))
    assert loss == pytest.approx(eps, abs=5 * se)
