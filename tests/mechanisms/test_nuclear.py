"""Tests of the nuclear-Laplace noise: radius, Haar factors, profile samplers.

The profile tests use closed forms (d = 2), the Stein identity (S2) of the
unordered law prod |s_i^2 - s_j^2| (``(d^2 + 2) E[sum s^3] =
(2d + 1) E[sum s^2]``, which a wrong Vandermonde power violates), reference
values from an independent simulation, and agreement of the exact and Gibbs
samplers. Tolerances are Z = 5 standard errors (paired-difference standard
errors for identities).
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpcov.mechanisms import (
    haar_orthogonal,
    nuclear_profile_exact,
    nuclear_profile_gibbs,
    sample_nuclear_laplace,
)

from ._nuclear_sequential import profile_exact, profile_gibbs

Z = 5.0


def _se(values):
    return values.std(ddof=1) / math.sqrt(values.size)


def _stein_residual(profiles):
    # (d^2 + 2) sum s^3 - (2d + 1) sum s^2 has mean 0 under the target.
    d = profiles.shape[1]
    return (d * d + 2) * np.sum(profiles**3, axis=1) - (2 * d + 1) * np.sum(
        profiles**2, axis=1
    )


def _stein3_residual(profiles):
    # (S3) kappa E[sum sigma^5] = (2d + 2) E[sum sigma^4] + E[(sum sigma^2)^2]
    # with sigma = R s, R ~ Gamma(d^2) independent of s (E R^5 / E R^4 =
    # d^2 + 4 at kappa = 1): (d^2 + 4) E[sum s^5] = (2d + 2) E[sum s^4]
    # + E[(sum s^2)^2].
    d = profiles.shape[1]
    return (
        (d * d + 4) * np.sum(profiles**5, axis=1)
        - (2 * d + 2) * np.sum(profiles**4, axis=1)
        - np.sum(profiles**2, axis=1) ** 2
    )


def test_radius_is_gamma_and_kappa_scales_it(global_random_seed):
    # ||W||_* ~ Gamma(d^2, 1/kappa): KS at level 1e-4; mean d^2 / kappa.
    rng = np.random.default_rng(global_random_seed)
    d, kappa = 3, 4.0
    norms = np.array(
        [
            np.linalg.norm(sample_nuclear_laplace(rng, d, kappa)[0], "nuc")
            for _ in range(2000)
        ]
    )
    assert stats.kstest(norms, stats.gamma(d * d, scale=1 / kappa).cdf).pvalue > 1e-4
    # kappa / 2 (a factor-2 error in the sensitivity) is rejected.
    assert stats.kstest(norms, stats.gamma(d * d, scale=2 / kappa).cdf).pvalue < 1e-4


def test_haar(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    d = 4
    draws = np.array([haar_orthogonal(rng, d) for _ in range(4000)])
    np.testing.assert_allclose(draws[0].T @ draws[0], np.eye(d), atol=1e-12)
    # E[U] = 0 (without the sign fix, E[U_ii] > 0) and E[U_ij^2] = 1/d; each
    # entry is bounded by 1, so the standard error is at most 1/sqrt(4000).
    assert np.all(np.abs(draws.mean(axis=0)) < Z / math.sqrt(draws.shape[0]))
    assert np.all(np.abs((draws**2).mean(axis=0) - 1 / d) < Z / math.sqrt(4000))


def test_profile_d2_closed_form(global_random_seed):
    # d = 2: u = s1 - s2 has P(u <= x) = x^2; E[s_max] = 5/6, E||s||^2 = 3/4.
    rng = np.random.default_rng(global_random_seed)
    s = np.array([nuclear_profile_exact(rng, 2) for _ in range(4000)])
    assert stats.kstest((s[:, 0] - s[:, 1]) ** 2, "uniform").pvalue > 1e-4
    assert abs(s[:, 0].mean() - 5 / 6) < Z * _se(s[:, 0])


@pytest.mark.slow
@pytest.mark.parametrize("d", [3, 4, 5, 6])
def test_exact_profile_matches_reference_and_stein(d, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    s = np.array([nuclear_profile_exact(rng, d) for _ in range(3000)])
    np.testing.assert_allclose(s.sum(axis=1), 1.0)
    assert np.all(np.diff(s, axis=1) <= 0)
    reference = {
        3: (0.6673, 0.5433),
        4: (0.5507, 0.4177),
        5: (0.4675, 0.3372),
        6: (0.4054, 0.2816),
    }[d]
    # Reference values (themselves +- 0.0005): E[s_max] and E||s||^2.
    assert abs(s[:, 0].mean() - reference[0]) < Z * _se(s[:, 0]) + 0.0015
    norm2 = np.sum(s**2, axis=1)
    assert abs(norm2.mean() - reference[1]) < Z * _se(norm2) + 0.0015
    for residual in (_stein_residual(s), _stein3_residual(s)):
        assert abs(residual.mean()) < Z * _se(residual)


def test_stein_identity_rejects_a_wrong_jacobian(global_random_seed):
    # The Wishart(d + 1) proposal has density prod |s_i - s_j| (a symmetric-
    # matrix Jacobian): the Stein check must reject it.
    rng = np.random.default_rng(global_random_seed)
    d = 5
    proposals = []
    for _ in range(3000):
        g = rng.standard_normal((d + 1, d))
        w = np.linalg.eigvalsh(g.T @ g)[::-1]
        proposals.append(w / w.sum())
    residual = _stein_residual(np.array(proposals))
    assert abs(residual.mean()) > Z * _se(residual)


@pytest.mark.slow
@pytest.mark.parametrize("d", [3, 4, 5, 6, 7, 8])
def test_gibbs_agrees_with_exact(d, global_random_seed):
    # Independent chains of 40 sweeps (a fifth of the default 200) from the
    # Wishart warm start, against the exact sampler: the
    # means of s_max and ||s||^2 agree within Z two-sample standard errors.
    rng = np.random.default_rng(global_random_seed)
    # Fewer exact draws where they are expensive (about 750 proposals at 8).
    n_exact, n_gibbs = {7: 600, 8: 250}.get(d, 1500), 300
    exact = np.array([nuclear_profile_exact(rng, d) for _ in range(n_exact)])
    gibbs = np.array([nuclear_profile_gibbs(rng, d, 40) for _ in range(n_gibbs)])
    for f in (lambda s: s[:, 0], lambda s: np.sum(s**2, axis=1), lambda s: s[:, -1]):
        a, b = f(exact), f(gibbs)
        se = math.sqrt(_se(a) ** 2 + _se(b) ** 2)
        assert abs(a.mean() - b.mean()) < Z * se


@pytest.mark.slow
def test_gibbs_stein_at_d10(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    s = np.array([nuclear_profile_gibbs(rng, 10, 40) for _ in range(300)])
    for residual in (_stein_residual(s), _stein3_residual(s)):
        assert abs(residual.mean()) < Z * _se(residual)
    assert abs(s[:, 0].mean() - 0.2652) < Z * _se(s[:, 0]) + 0.001


def test_rotation_invariance(global_random_seed):
    # W and Q W have the same law for a fixed orthogonal Q: compare the law of
    # the (0, 0) entry of W and of Q W (two-sample KS).
    rng = np.random.default_rng(global_random_seed)
    q = stats.ortho_group.rvs(3, random_state=1)
    a = np.array([sample_nuclear_laplace(rng, 3, 1.0)[0][0, 0] for _ in range(2000)])
    b = np.array(
        [(q @ sample_nuclear_laplace(rng, 3, 1.0)[0])[0, 0] for _ in range(2000)]
    )
    assert stats.ks_2samp(a, b).pvalue > 1e-4


def test_infinite_kappa_and_paths():
    rng = np.random.default_rng(0)
    w, exact = sample_nuclear_laplace(rng, 4, math.inf)
    assert exact and not w.any()
    _, exact = sample_nuclear_laplace(rng, 4, 1.0, exact_max_dim=3, n_sweeps=5)
    assert not exact


@pytest.mark.parametrize("d", [9, 30])
def test_gibbs_is_the_sequential_chain(d, global_random_seed):
    # The Gibbs sampler reads its uniforms from blocks in the order of the
    # one-at-a-time sampler (Generator.random(n) gives the numbers of n scalar
    # calls) and evaluates the level and the first proposal in one call: from
    # the same start and generator state it runs the same chain. Only the
    # rounding of the log-density differs (a log of products against a sum of
    # logs, about 1e-15 relative), which flips an acceptance only if a
    # proposal lands within that of the level: the states agree to rounding.
    rng = np.random.default_rng(global_random_seed)
    start = np.sort(rng.gamma(d * d, 1.0, d))[::-1]
    batched = nuclear_profile_gibbs(np.random.default_rng(7), d, 30, start=start)
    sequential = profile_gibbs(np.random.default_rng(7), d, 30, start)
    np.testing.assert_allclose(batched, sequential, rtol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("d", [4, 6])
def test_exact_batched_has_the_sequential_law(d, global_random_seed):
    # Batched proposals return the first accepted one in draw order, which is
    # the law of the one-at-a-time rejection sampler: the means of s_max,
    # ||s||^2 and s_min agree within Z two-sample standard errors.
    rng = np.random.default_rng(global_random_seed)
    batched = np.array([nuclear_profile_exact(rng, d) for _ in range(1500)])
    sequential = np.array([profile_exact(rng, d) for _ in range(1500)])
    for f in (lambda s: s[:, 0], lambda s: np.sum(s**2, axis=1), lambda s: s[:, -1]):
        a, b = f(batched), f(sequential)
        se = math.sqrt(_se(a) ** 2 + _se(b) ** 2)
        assert abs(a.mean() - b.mean()) < Z * se
    assert stats.ks_2samp(batched[:, 0], sequential[:, 0]).pvalue > 1e-4
