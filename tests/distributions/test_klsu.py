"""KLSU19 mechanisms: NaivePCE, PPC, KVMean."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np
import pytest
from scipy import stats

from dpcov.distributions import _klsu, kv_mean, naive_pce, ppc, ppc_schedule
from dpcov.distributions._klsu import (
    MIN_CONDITION,
    kv_coarse_bin,
    kv_fine_width,
    naive_pce_noise,
    naive_pce_threshold,
    weak_ppc_condition,
)
from dpcov.mechanisms import _noise, project_psd
from tests._privacy_checks import recorded_calls


def test_naive_pce_noise_closed_form():
    n, d, K, rho, beta = 2000, 3, 50.0, 0.5, 0.1
    T = K * (d + 2 * math.sqrt(d * math.log(2 * n / beta)) + 2 * math.log(2 * n / beta))
    assert naive_pce_threshold(n, d, K, beta) == pytest.approx(T)
    scale, _ = naive_pce_noise(n, d, K, rho, beta)
    # sigma = Delta_F / sqrt(2 rho) with Delta_F = sqrt(2) T / n.
    assert scale == pytest.approx(T / (n * math.sqrt(rho)))


def test_naive_pce_sensitivity_is_tight_and_rows_are_clipped():
    # Neighbours sqrt(T) e1 and sqrt(T) e2 move the clipped second
    # moment by exactly sqrt(2) T / n in Frobenius norm; a longer row counts as
    # one of norm sqrt(T). Checked at epsilon = inf (no noise).
    n, d, K, beta = 100, 3, 4.0, 0.1
    T = naive_pce_threshold(n, d, K, beta)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)) * 0.1
    X1, X2 = X.copy(), X.copy()
    X1[-1] = math.sqrt(T) * np.eye(d)[0]
    X2[-1] = math.sqrt(T) * np.eye(d)[1]
    kwargs = dict(rho=np.inf, beta=beta, condition=K, rng=rng)
    diff = naive_pce(X1, **kwargs) - naive_pce(X2, **kwargs)
    assert np.linalg.norm(diff) == pytest.approx(math.sqrt(2) * T / n)
    X3 = X1.copy()
    X3[-1] *= 1e6
    np.testing.assert_allclose(naive_pce(X3, **kwargs), naive_pce(X1, **kwargs))


@pytest.mark.parametrize("scale", [1e300, 1e307, -1e308])
def test_naive_pce_clips_rows_of_any_finite_size(scale):
    # A row whose whitened norm overflows float64 still counts as one of norm
    # sqrt(T) in its own direction (no warning: warnings are errors here).
    n, d, K, beta = 100, 3, 4.0, 0.1
    T = naive_pce_threshold(n, d, K, beta)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)) * 0.1
    A = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.5]])
    direction = np.array([1.0, -1.0, 1.0])
    X_big, X_clipped = X.copy(), X.copy()
    X_big[-1] = scale * direction
    X_clipped[-1] = np.linalg.solve(A, math.sqrt(T) * A @ direction) / np.linalg.norm(
        A @ direction
    )
    X_clipped[-1] *= np.sign(scale)
    kwargs = dict(rho=np.inf, beta=beta, condition=K, rng=rng, transform=A)
    np.testing.assert_allclose(
        naive_pce(X_big, **kwargs), naive_pce(X_clipped, **kwargs), rtol=1e-12
    )


def test_naive_pce_noise_variance(global_random_seed):
    # The release is PSD(Z.T Z / n + Y), Y symmetric Gaussian noise of s.d.
    # T / (n sqrt(rho)) per upper-triangular entry (Frobenius sensitivity
    # sqrt(2) T / n through sigma = Delta / sqrt(2 rho)), T the public
    # threshold. Rows far inside the radius sqrt(T) (no clipping) and
    # eigenvalues far above the noise (no projection): the release is the
    # exact moment plus the one recorded Wigner draw, whose scale must be the
    # closed form's. One fit checks this exactly (the Wigner law itself is
    # tested in tests/mechanisms/test_noise.py).
    rng = np.random.default_rng(global_random_seed)
    n, d, K, rho, beta = 3000, 3, 2.0, 4.0, 0.1
    Z = rng.normal(size=(n, d))
    L = math.log(2 * n / beta)
    T = K * (d + 2 * math.sqrt(d * L) + 2 * L)
    assert np.linalg.norm(Z, axis=1).max() < math.sqrt(T)
    # NaivePCE draws its noise with the raw sampler, not an additive release.
    with recorded_calls(_noise, "symmetric_matrix") as draws:
        release = naive_pce(Z, rho=rho, beta=beta, condition=K, rng=rng)
    ((args, kwargs, noise),) = draws
    _, size, scale, *law = args
    assert size == d and law in ([], ["gaussian"]) and not kwargs
    assert scale == pytest.approx(T / (n * math.sqrt(rho)), rel=1e-12)
    noisy = Z.T @ Z / n + noise
    assert np.linalg.eigvalsh(noisy)[0] > 0  # the projection is inactive
    np.testing.assert_allclose(release, noisy, rtol=0, atol=1e-12)
    np.testing.assert_allclose(release, project_psd(noisy), rtol=0, atol=1e-12)


def test_ppc_schedule_is_public_recursion():
    m, d, K, rho, beta = 100_000, 10, 1e3, 0.5, 0.1
    conditions = ppc_schedule(m, d, K, rho, beta)
    rounds = len(conditions) - 1
    assert conditions[-1] <= MIN_CONDITION
    for j in range(rounds):
        assert conditions[j + 1] == pytest.approx(
            weak_ppc_condition(m, d, conditions[j], rho / rounds, beta / rounds)
        )
    # One round fewer does not reach the target (the first r that works).
    shorter = [K]
    for _ in range(rounds - 1):
        shorter.append(
            weak_ppc_condition(
                m, d, shorter[-1], rho / (rounds - 1), beta / (rounds - 1)
            )
        )
    assert shorter[-1] > MIN_CONDITION
    assert ppc_schedule(m, d, 10.0, rho, beta) == [10.0]


def test_ppc_schedule_refuses_publicly():
    with pytest.raises(ValueError, match="cannot reach a condition bound"):
        ppc_schedule(2000, 10, 1e3, 0.5, 0.1)


def test_ppc_invariant():
    # PPC's guarantee: I <= A S A.T <= K_r I, checked as lambda_min >= 0.9 and
    # lambda_max <= K_r, on a rotated S with condition number 1e3, in all but
    # a beta fraction of 8 trials (plus 4 binomial standard errors).
    d, m, K, rho, beta = 10, 100_000, 1e3, 0.5, 0.1
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    S = (Q * np.logspace(0, 3, d)) @ Q.T
    conditions = ppc_schedule(m, d, K, rho, beta)
    fails, trials = 0, 8
    for seed in range(trials):
        trial_rng = np.random.default_rng(seed)
        Z = trial_rng.multivariate_normal(np.zeros(d), S, size=m)
        A = ppc(Z, conditions=conditions, rho=rho, beta=beta, rng=trial_rng)
        w = np.linalg.eigvalsh(A @ S @ A.T)
        fails += w[0] < 0.9 or w[-1] > conditions[-1]
    assert fails / trials <= beta + 4 * math.sqrt(beta * (1 - beta) / trials)


def _brute_force_bin(values, rho, width, radius, rng):
    # Reference: noise on every bin explicitly.
    half = math.ceil(radius / width) + 1
    index = np.clip(np.rint(values / width), -half, half).astype(int) + half
    counts = np.bincount(index, minlength=2 * half + 1)
    noisy = counts + rng.normal(scale=1 / math.sqrt(rho), size=counts.shape[0])
    return (int(np.argmax(noisy)) - half) * width


def test_coarse_bin_noises_empty_bins():
    # The one-draw maximum over empty bins has the law of noising
    # each bin. With one row and a small budget, empty bins often win; the
    # distribution of the chosen bin over 9 bins must match the brute-force
    # reference (chi-square two-sample test at level 1e-3), and the empty bins
    # must be chosen uniformly among themselves.
    values = np.array([0.2])
    rho, width, radius, n_draws = 0.05, 1.0, 3.0, 6000
    ours = [
        kv_coarse_bin(
            values, rho=rho, width=width, radius=radius, rng=np.random.default_rng(s)
        )
        for s in range(n_draws)
    ]
    rng = np.random.default_rng(10**6)
    reference = [
        _brute_force_bin(values, rho, width, radius, rng) for _ in range(n_draws)
    ]
    bins = np.arange(-4, 5)
    table = np.array(
        [[np.sum(np.array(x) == b) for b in bins] for x in (ours, reference)]
    )
    assert stats.chi2_contingency(table).pvalue > 1e-3
    empty = table[0][bins != 0]
    assert stats.chisquare(empty).pvalue > 1e-3


def test_coarse_bin_huge_range_is_cheap_and_correct():
    # J = 1e6 bins: the empty-bin trick keeps the cost O(n); with many rows in
    # one bin the argmax is that bin.
    values = np.full(500, 123.4)
    center = kv_coarse_bin(
        values, rho=0.5, width=1.0, radius=1e6, rng=np.random.default_rng(0)
    )
    assert center == 123.0


def test_kv_mean_noise_variance(global_random_seed):
    # Data far from bin edges: the coarse step (half the budget) finds the
    # bin at 10, and [10 - w, 10 + w] holds every value, so the fine step
    # releases the exact mean plus one Gaussian draw of s.d. (2 w / n) /
    # sqrt(2 rho / 2) (values clipped to an interval of half-width w:
    # sensitivity 2 w / n, at the other half of the budget). One fit checks
    # it exactly: the last recorded draw has the closed-form scale and the
    # release is the mean plus that draw (the sampler's law is tested in
    # tests/mechanisms).
    rng = np.random.default_rng(global_random_seed)
    n, rho, beta = 2000, 0.5, 0.1
    values = rng.normal(size=n) * 0.2 + 10.0
    w = kv_fine_width(n, 1.0, beta)
    sigma = (2 * w / n) / math.sqrt(2 * rho / 2)
    # KVMean draws its noise with the raw sampler, not an additive release.
    with (
        recorded_calls(_klsu, "kv_coarse_bin") as coarse,
        recorded_calls(_noise, "gaussian") as draws,
    ):
        mean = kv_mean(values, rho=rho, beta=beta, width=1.0, radius=100.0, rng=rng)
    ((_, _, center),) = coarse
    assert center == 10.0
    assert np.all(np.abs(values - center) < w)
    (_, scale), kwargs, noise = draws[-1]  # one draw: no size
    assert scale == pytest.approx(sigma, rel=1e-12) and not kwargs
    assert mean == values.mean() + noise
