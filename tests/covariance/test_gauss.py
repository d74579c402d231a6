"""Tests of the gauss module (GaussCov / LapCov): noise scales, neighbours."""

import math

import numpy as np
import pytest
from scipy import stats

import dpcov
from dpcov.covariance import GaussianCovariance
from dpcov.mechanisms import _discrete
from tests._privacy_checks import gaussian_shift, laplace_event_loss

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


def _fit(X, rng, **params):
    """GaussianCovariance on rows about the origin, raw noisy matrix kept."""
    return GaussianCovariance(
        assume_centered=True, store_raw=True, random_state=rng, **params
    ).fit(X)


def _upper_residuals(est, target):
    rows, cols = np.triu_indices(target.shape[0])
    return (est.raw_covariance_ - target)[rows, cols], rows == cols


def test_gaussian_noise_scale_closed_form(global_random_seed):
    # GaussCov: per-entry s.d. R^2 / (n sqrt(rho)) (Dong, Liang and Yi 2022,
    # Sec. 3.1: L2 sensitivity sqrt(2) R^2/n, sigma = Delta / sqrt(2 rho)).
    n, d, R, rho = 400, 30, 2.0, 0.3
    X = _unit_rows(n, d, global_random_seed, radius=R)
    target = X.T @ X / n
    sigma = R**2 / (n * math.sqrt(rho))
    rng = np.random.default_rng(global_random_seed)
    res, diag = [], []
    for _ in range(20):
        est = _fit(X, rng, rho=rho, data_norm=R)
        r, g = _upper_residuals(est, target)
        res.append(r)
        diag.append(g)
    res, diag = np.concatenate(res), np.concatenate(diag)
    # 9300 entries: the sample s.d. has relative s.e. 1/sqrt(2N) = 0.0073; 5 s.e.
    assert res.std() == pytest.approx(sigma, rel=0.037)
    assert stats.kstest(res / sigma, "norm").pvalue > 1e-4
    # Diagonal and off-diagonal entries have the same variance (600 vs 8700
    # entries: F-ratio within 0.25 of 1 at level ~1e-4).
    assert res[diag].var() / res[~diag].var() == pytest.approx(1.0, abs=0.25)


def test_laplace_noise_scale_closed_form(global_random_seed):
    # LapCov: Laplace scale b = sqrt(d (d + 3) / 2) R^2 / (n eps); at d = 30
    # that is 22.25 R^2/(n eps), not the paper's looser sqrt(2) d = 42.4.
    n, d, R, eps = 400, 30, 1.5, 2.0
    X = _unit_rows(n, d, global_random_seed, radius=R)
    target = X.T @ X / n
    b = math.sqrt(30 * 33 / 2) * R**2 / (n * eps)
    rng = np.random.default_rng(global_random_seed)
    fits = [_fit(X, rng, epsilon=eps, delta=0.0, data_norm=R) for _ in range(20)]
    res = np.concatenate([_upper_residuals(est, target)[0] for est in fits])
    # |Laplace(b)| is Exponential(b): mean b, relative s.e. 1/sqrt(N) = 0.0104.
    assert np.abs(res).mean() == pytest.approx(b, rel=0.052)
    assert stats.kstest(res / b, "laplace").pvalue > 1e-4


def test_centred_noise_scale_and_private_mean(global_random_seed):
    # assume_centered=False: mean at rho/8 with L2 sensitivity 2r/n, then the
    # covariance at 7 rho / 8 with radius r + ||location_||.
    n, d, r, rho = 500, 20, 1.0, 0.4
    X = _unit_rows(n, d, global_random_seed, radius=r) * 0.5 + 0.1
    assert np.linalg.norm(X, axis=1).max() <= r
    rng = np.random.default_rng(global_random_seed)
    sigma_mean = (2 * r / n) / math.sqrt(2 * rho / 8)
    mean_res, cov_res = [], []
    for _ in range(30):
        est = GaussianCovariance(
            rho=rho, data_norm=r, store_raw=True, random_state=rng
        ).fit(X)
        mean_res.append(est.location_ - X.mean(0))
        centred = X - est.location_
        R = r + np.linalg.norm(est.location_)
        sigma = R**2 / (n * math.sqrt(7 * rho / 8))
        cov_res.append(_upper_residuals(est, centred.T @ centred / n)[0] / sigma)
    mean_res = np.concatenate(mean_res)
    cov_res = np.concatenate(cov_res)
    assert mean_res.std() == pytest.approx(
        sigma_mean, rel=5 / math.sqrt(2 * mean_res.size)
    )
    assert cov_res.std() == pytest.approx(1.0, rel=5 / math.sqrt(2 * cov_res.size))


def _neighbours(n, d, R):
    # Worst case for the Frobenius sensitivity: the replaced row goes from
    # R e1 to R e2 (orthogonal), the others are shared.
    base = np.zeros((n, d))
    base[1:, 2] = 0.5 * R
    a, b = base.copy(), base.copy()
    a[0, 0], b[0, 1] = R, R
    return a, b


@pytest.fixture(params=[False, True], ids=["numpy", "secure_noise"])
def noise_switch(request, monkeypatch, global_random_seed):
    """Both samplers: numpy's, and the exact discrete ones (seeded source)."""
    monkeypatch.setattr(_discrete, "_source", SeededSource(global_random_seed))
    with dpcov.config_context(secure_noise=request.param):
        yield request.param


@pytest.mark.slow
def test_gaussian_neighbours_privacy_loss(global_random_seed, noise_switch):
    # Project the raw release on (e1e1^T - e2e2^T)/sqrt(2): the two neighbours
    # give N(m, s^2) and N(m - Delta, s^2) with Delta = sqrt(2) R^2 / n, and a
    # rho-zCDP Gaussian mechanism has Delta / s = sqrt(2 rho) = 1 here. A
    # factor-2 error in the sensitivity or the scale gives 0.5 or 2. The
    # discrete Gaussian on its grid (secure_noise) has the same shift up to
    # its 2**-9 of extra noise.
    n, d, R, rho, reps = 10, 3, 1.0, 0.5, 3000
    a, b = _neighbours(n, d, R)
    rng = np.random.default_rng(global_random_seed)

    def stat(X):
        raw = _fit(X, rng, rho=rho, data_norm=R).raw_covariance_
        return (raw[0, 0] - raw[1, 1]) / math.sqrt(2)

    shift, se = gaussian_shift(
        [stat(a) for _ in range(reps)], [stat(b) for _ in range(reps)]
    )
    assert shift == pytest.approx(math.sqrt(2 * rho), abs=5 * se)


@pytest.mark.slow
def test_laplace_neighbours_privacy_loss(global_random_seed, noise_switch):
    # Pure DP on a worst-case pair for the L1 sensitivity at d = 2: x and y
    # orthogonal unit vectors at angle a = atan2(1, 2) / 2 from the axes give
    # D = (xx^T - yy^T)/n with upper triangle (2, 1, -2) R^2 / (sqrt(5) n), of L1
    # norm sqrt(5) R^2 / n = sqrt(d (d + 3) / 2) R^2 / n: the bound is tight.
    # On the event where each of the three coordinates lies beyond both
    # neighbours' values (in the direction of D), the density ratio is
    # exp(|D|_1 / b) = e^eps exactly. Factor-2 errors in b give 2 eps or eps/2.
    # The discrete Laplace on its grid (secure_noise) gives the same ratio up
    # to its 2**-9 of extra noise.
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

    def event(X):
        raw = _fit(X, rng, epsilon=eps, delta=0.0, data_norm=R).raw_covariance_
        return raw[0, 0] > sa[0, 0] and raw[0, 1] > sa[0, 1] and raw[1, 1] < sa[1, 1]

    loss, se = laplace_event_loss(
        [event(a) for _ in range(reps)], [event(b) for _ in range(reps)]
    )
    assert loss == pytest.approx(eps, abs=5 * se)
