"""NuclearLaplaceCovariance: noise rate, projection, neighbours, sampler paths."""

import contextlib
import math
from unittest import mock

import numpy as np
import pytest

from dpcov.accounting import PureDP
from dpcov.covariance import NuclearLaplaceCovariance, _nuclear
from dpcov.covariance._nuclear import nuclear_rate
from dpcov.exceptions import ApproximateSamplerWarning
from tests._privacy_checks import (
    fitted_mechanism,
    laplace_event_loss,
    recorded_releases,
)

from ._rows import axis_rows


def _estimator(rng, **params):
    return NuclearLaplaceCovariance(
        data_norm=1.0,
        assume_centered=True,
        store_raw=True,
        random_state=rng,
        # The mechanism's own release (no shrinkage toward zero).
        **{"eigenvalue_floor": 0.0, "shrinkage": None, **params},
    )


def _fit(X, rng, **params):
    return _estimator(rng, **params).fit(X)


def test_rate_closed_form():
    # Nuclear sensitivity of Y^T Y / n is 2 R^2 / n: kappa = eps n / (2 R^2).
    assert nuclear_rate(0.5, n_samples=1000, radius=2.0) == pytest.approx(62.5)
    X = axis_rows([30, 20], 2)
    est = _fit(X, 0, epsilon=0.8)
    assert est.noise_rate_ == pytest.approx(0.8 * 50 / 2)
    assert est.guarantee_ == PureDP(0.8) and est.exact_sampler_


@contextlib.contextmanager
def _recorded_noise():
    """Record every nuclear-Laplace draw of a fit: (d, kappa, W), in order.

    (A recorder like tests/_privacy_checks.recorded_releases for the K-norm
    noise, which is not additive noise of the noise module: it wraps
    sample_nuclear_laplace where the mechanism calls it; the draws are
    unchanged.)
    """
    draws = []
    original = _nuclear.sample_nuclear_laplace

    def recorder(rng, d, kappa, *args, **kwargs):
        noise, exact = original(rng, d, kappa, *args, **kwargs)
        draws.append((d, kappa, np.copy(noise)))
        return noise, exact

    with mock.patch.object(_nuclear, "sample_nuclear_laplace", recorder):
        yield draws


def test_noise_scale_end_to_end(global_random_seed):
    # d = 2: sym(W) = (W + W^T)/2 has E||sym W||_F^2 = (E||W||_F^2 + E tr W^2)/2
    # with E||W||_F^2 = E[R^2] E||s||^2 = (20 / kappa^2)(3/4) and
    # E tr W^2 = E[R^2] E||s||^2 / 2 (Haar), i.e. 11.25 / kappa^2: the law of
    # W at rate kappa (Gamma radius scaled by 1/kappa, Haar factors, the d = 2
    # profile) is tested in tests/mechanisms/test_nuclear.py. So one fit is
    # exact: the first recorded draw is at the closed-form rate kappa =
    # eps n / (2 R^2) (a factor 2 in it moves E||sym W||_F^2 by 4x), and the
    # raw release is the exact second moment plus (W + W^T)/2 of that draw.
    # (Later draws are the shrinkage's simulations on the release.)
    X = axis_rows([60, 40], 2)
    n = X.shape[0]
    exact = X.T @ X / n
    rng = np.random.default_rng(global_random_seed)
    with _recorded_noise() as draws:
        est = _fit(X, rng, epsilon=1.0)
    d, kappa, W = draws[0]
    assert d == 2
    assert kappa == pytest.approx(1.0 * n / 2, rel=1e-12)
    assert est.noise_rate_ == kappa
    np.testing.assert_allclose(
        est.raw_covariance_, exact + (W + W.T) / 2, rtol=0, atol=1e-12
    )


def test_neighbour_privacy_loss(global_random_seed):
    # Neighbours: one row e1 replaced by e2 (||x|| = R = 1), d = 2, so
    # Sigma_00 - Sigma_11 moves by exactly 2 / n = ||Sigma - Sigma'||_*.
    # The statistic raw_00 - raw_11 = <sym W, diag(1, -1)> + shift has a
    # log-ratio of tail probabilities that approaches kappa * 2/n = eps from
    # below as the threshold grows, and never exceeds it.
    eps = 1.0
    X, Xp = axis_rows([30, 20], 2), axis_rows([29, 21], 2)
    rng = np.random.default_rng(global_random_seed)

    def stat(data):
        # Releases drawn from the fit's own mechanism on its inputs
        # (fitted_mechanism: the law of refitting, without the refits).
        draw = fitted_mechanism(_estimator(rng, epsilon=eps), data)
        raws = np.array([draw(rng).raw for _ in range(6000)])
        return raws[:, 0, 0] - raws[:, 1, 1]

    a, b = stat(X), stat(Xp)
    # Mean shift: exactly 2/n (the noise is centred).
    se = math.sqrt(a.var() / a.size + b.var() / b.size)
    assert abs((a.mean() - b.mean()) - 2 / 50) < 5 * se
    threshold = np.quantile(b, 0.9)
    loss, loss_se = laplace_event_loss(a > threshold, b > threshold)
    assert loss <= eps + 3 * loss_se
    assert loss > 0.3 * eps  # not vacuous: the shift is felt


def test_projection_with_private_trace(global_random_seed):
    # Small trace (rows of norm 0.1): Algorithm 2's projection onto the PSD
    # matrices of trace <= t gives a much smaller error than Algorithm 1, and
    # its output has trace at most t.
    rng = np.random.default_rng(global_random_seed)
    X = 0.1 * axis_rows([200, 150, 100, 50], 4)
    exact = X.T @ X / X.shape[0]
    plain, projected = [], []
    for _ in range(50):
        a = _fit(X, rng, epsilon=1.0, projection="psd")
        b = _fit(X, rng, epsilon=1.0, project=True)
        assert np.trace(b.covariance_) <= b.trace_bound_ + 1e-12
        assert set(b.budget_split_) == {"trace", "noise"}
        plain.append(np.linalg.norm(a.covariance_ - exact))
        projected.append(np.linalg.norm(b.covariance_ - exact))
    assert np.mean(projected) < 0.5 * np.mean(plain)


def test_trace_noise_scale(global_random_seed):
    # Trace at eps/2: Laplace scale 2 R^2 / (n eps) (L1 sensitivity R^2 / n);
    # clipped to [0, R^2]. One fit is exact: the recorded release is the exact
    # trace plus a draw whose law and scale must be the closed form's (the
    # sampler's law is tested in tests/mechanisms), and trace_bound_ is its
    # noisy value clipped to [0, R^2].
    X = 0.7 * axis_rows([300, 200], 2)  # trace 0.49, far from 0 and 1
    rng = np.random.default_rng(global_random_seed)
    with recorded_releases() as releases:
        est = _fit(X, rng, epsilon=1.0, project=True)
    release = releases[0]
    assert release.law == "laplace"
    assert release.scale == pytest.approx(2 / (500 * 1.0), rel=1e-12)
    assert release.value == pytest.approx(0.49, abs=1e-12)
    assert est.trace_bound_ == np.clip(release.noisy, 0.0, 1.0)


def test_gibbs_path_warns_and_is_recorded():
    X = np.random.default_rng(0).uniform(-0.3, 0.3, size=(200, 4))
    with pytest.warns(ApproximateSamplerWarning, match="total-variation"):
        est = _fit(X, 0, epsilon=1.0, exact_max_dim=3, n_sweeps=20)
    assert not est.exact_sampler_


def test_zcdp_budget_runs_at_the_pure_epsilon_it_allows():
    X = axis_rows([30, 20], 2)
    est = _fit(X, 0, rho=0.5)
    assert est.noise_rate_ == pytest.approx(math.sqrt(2 * 0.5) * 50 / 2)
    assert est.rho_spent_ == pytest.approx(0.5)


def test_infinite_epsilon_is_exact():
    X = axis_rows([30, 20, 10], 3)
    est = _fit(X, 0, epsilon=np.inf)
    np.testing.assert_allclose(est.covariance_, X.T @ X / X.shape[0], atol=1e-12)
