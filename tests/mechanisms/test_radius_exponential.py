"""Tests of the exponential-mechanism radius: law, neighbours, accuracy."""

import math

import numpy as np
import pytest
from scipy import stats

from dpcov.accounting import ZCDP, PureDP, zcdp_rho
from dpcov.mechanisms import (
    DEFAULT_RADIUS_GRID,
    exponential_radius_accuracy,
    exponential_radius_min_samples,
    exponential_radius_probabilities,
    exponential_radius_scores,
    private_radius_exponential,
    radius_counts,
)

GRID = DEFAULT_RADIUS_GRID


def test_accuracy_and_minimum_closed_form():
    alpha, k = exponential_radius_accuracy(0.5)
    assert alpha == pytest.approx(2 / 0.5 * math.log(65 / 0.1))
    assert k == math.floor(alpha) + 1
    assert exponential_radius_min_samples(0.5) == math.ceil(2 * (k + alpha))


def test_minimum_at_the_estimators_budget_is_below_300():
    # 3/16 of (1, 1e-6)-DP in zCDP, run at sqrt(8 rho) (bounded range).
    share = ZCDP(3 / 16 * zcdp_rho(1.0, 1e-6))
    assert exponential_radius_min_samples(share.exponential_epsilon()) <= 300


def test_exponential_epsilon_of_budgets():
    # eps^2 / 8 <= rho exactly, and as large as that allows.
    for rho in [1e-4, 0.003, 0.5, 2.0]:
        eps = ZCDP(rho).exponential_epsilon()
        assert eps**2 / 8 <= rho
        assert math.nextafter(eps, math.inf) ** 2 / 8 > rho * (1 - 1e-15)
        assert eps == pytest.approx(2 * ZCDP(rho).pure_epsilon(), rel=1e-12)
    assert PureDP(0.7).exponential_epsilon() == 0.7


def _counts(norms):
    return radius_counts(np.asarray(norms, dtype=float))


def test_scores_by_hand():
    # Norms 3 (x10) and 5 (x2): above 4 there are 2 rows, above 2 there are 12.
    counts = _counts([3.0] * 10 + [5.0] * 2)
    scores = exponential_radius_scores(counts, 12, k=2)
    j4, j8 = np.flatnonzero(GRID == 4.0)[0], np.flatnonzero(GRID == 8.0)[0]
    assert scores[j4] == 0  # 2 <= k rows above 4, 12 >= k above 2
    assert scores[j8] == 0  # 0 <= k above 8, exactly k = 2 above 4
    assert scores[j8 - 1] == -2  # 16: nothing above 8 either: k - 0 short
    assert scores[np.flatnonzero(GRID == 2.0)[0]] == -10  # 12 - k above 2


def test_scores_have_sensitivity_one(global_random_seed):
    # Replacing one row moves every score by at most 1.
    rng = np.random.default_rng(global_random_seed)
    for _ in range(200):
        norms = np.exp(rng.uniform(-5, 5, size=30))
        other = norms.copy()
        other[0] = np.exp(rng.uniform(-30, 30))
        k = int(rng.integers(1, 30))
        a = exponential_radius_scores(_counts(norms), 30, k)
        b = exponential_radius_scores(_counts(other), 30, k)
        assert np.abs(a - b).max() <= 1


def test_law_matches_closed_form(global_random_seed):
    # Chi-square goodness of fit of 4000 draws against the closed-form law,
    # on the cells with expected count >= 5 (the rest pooled).
    rng = np.random.default_rng(global_random_seed)
    norms = np.concatenate([np.full(300, 3.0), np.full(40, 7.0), [100.0] * 3])
    counts, n, eps = _counts(norms), norms.size, 0.3
    p = exponential_radius_probabilities(counts, n, epsilon=eps)
    draws = [
        private_radius_exponential(counts, n, epsilon=eps, rng=rng) for _ in range(4000)
    ]
    observed = np.array([np.sum(np.asarray(draws) == g) for g in GRID])
    expected = 4000 * p
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    assert stats.chisquare(obs, exp).pvalue > 1e-4


def test_neighbours_probability_ratio(global_random_seed):
    # Exact laws on neighbouring datasets (one row replaced): every outcome's
    # probability ratio is at most e^eps (McSherry and Talwar, 2007). The
    # largest ratio found is above e^(eps/2): the same pairs would show a
    # mechanism run at 2 eps (ratio up to e^(2 eps)) or at eps/2 (at most
    # e^(eps/2)).
    rng = np.random.default_rng(global_random_seed)
    eps, worst = 0.8, 0.0
    for _ in range(300):
        n = int(rng.integers(20, 200))
        norms = np.exp(rng.normal(0, 2, size=n))
        other = norms.copy()
        other[rng.integers(n)] = np.exp(rng.uniform(-25, 25))
        p = exponential_radius_probabilities(_counts(norms), n, epsilon=eps)
        q = exponential_radius_probabilities(_counts(other), n, epsilon=eps)
        ratio = np.max(np.abs(np.log(p) - np.log(q)))
        assert ratio <= eps + 1e-9
        worst = max(worst, ratio)
    assert worst > eps / 2


def test_accuracy_guarantee(global_random_seed):
    # With probability >= 1 - beta: at most k + alpha rows outside and the
    # radius below twice the largest norm. Failures over 300 draws are
    # Binomial(300, <= 0.1): P(>= 50) < 1e-4.
    rng = np.random.default_rng(global_random_seed)
    eps = 0.3
    alpha, k = exponential_radius_accuracy(eps)
    norms = np.concatenate([rng.uniform(0.5, 3.0, 2000), [40.0] * 30])
    counts = _counts(norms)
    failures = 0
    for _ in range(300):
        r = private_radius_exponential(counts, norms.size, epsilon=eps, rng=rng)
        if np.sum(norms > r) > k + alpha or r >= 2 * norms.max():
            failures += 1
    assert failures < 50


def test_concentrated_norms_pick_the_bracketing_radius():
    # Every norm in (4, 8]: 8 scores 0 and every other radius scores at most
    # -k, so 8 is picked with probability >= 1 - 64 exp(-eps k / 2).
    norms = np.full(5000, 6.0)
    eps = 1.0
    _, k = exponential_radius_accuracy(eps)
    p = exponential_radius_probabilities(_counts(norms), 5000, epsilon=eps)
    assert p[np.flatnonzero(GRID == 8.0)[0]] >= 1 - 64 * math.exp(-eps * k / 2)
