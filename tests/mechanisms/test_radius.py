"""Tests of the radius module (private radius)."""

import math

import numpy as np
import pytest
from scipy import stats

from dpcov.mechanisms import (
    DEFAULT_RADIUS_GRID,
    above_threshold_accuracy,
    private_radius,
    private_radius_from_counts,
    private_radius_min_samples,
    radius_counts,
)

from ._svt_exact import above_threshold_law


def test_min_samples_closed_form():
    alpha = 8 * math.log(2 * 65 / 0.1) / 0.5
    assert private_radius_min_samples(0.5) == math.ceil(6 * alpha)
    assert len(DEFAULT_RADIUS_GRID) == 65


def test_radius_accuracy_guarantee(global_random_seed):
    # Lemma 10 interface: with probability >= 1 - beta the radius is at most
    # twice the largest norm and at most 3 alpha rows lie outside it. Over 200
    # runs the failure count is Binomial(200, <= 0.1); P(>= 40) < 1e-5.
    rng = np.random.default_rng(global_random_seed)
    eps, beta = 0.5, 0.1
    alpha = above_threshold_accuracy(eps, len(DEFAULT_RADIUS_GRID), beta)
    norms = np.concatenate([rng.uniform(0.0, 3.0, 20_000), [50.0] * 20])
    failures = 0
    for _ in range(200):
        radius = private_radius(norms, epsilon=eps, rng=rng, beta=beta)
        if radius > 2 * norms.max() or np.sum(norms > radius) > 3 * alpha:
            failures += 1
    assert failures < 40
    # The 20 outliers are fewer than alpha: they are clipped, the bulk is not.
    radius = private_radius(norms, epsilon=eps, rng=rng)
    assert 2.0 <= radius <= 4.0


def test_radius_is_exact_without_noise():
    norms = np.array([0.1, 0.3, 0.75])
    assert private_radius(norms, epsilon=math.inf, rng=np.random.default_rng(0)) == 1.0
    assert (
        private_radius(np.zeros(5), epsilon=math.inf, rng=np.random.default_rng(0))
        == 2.0**-32
    )


@pytest.mark.slow
def test_radius_neighbours_exact_law(global_random_seed):
    # Counts straddle the threshold 2 alpha = 42.4 (eps = 2, 10 radii): 42
    # rows of norm 3 among 400 vs 43 (one row of norm 0.3 replaced by one of
    # norm 3). The released radius must follow the exact AboveThreshold law of
    # its counts (chi-square, level 1e-4; a mis-scaled noise or threshold fails
    # it), and each radius's log-ratio between neighbours must stay below eps.
    eps, reps = 2.0, 10_000
    grid = 2.0 ** np.arange(6, -4, -1)
    alpha = above_threshold_accuracy(eps, len(grid), 0.1)
    rng = np.random.default_rng(global_random_seed)
    freqs = {}
    for n_long in (42, 43):
        norms = np.r_[np.full(n_long, 3.0), np.full(400 - n_long, 0.3)]
        counts = np.sum(norms[:, None] > grid, axis=0)
        law = above_threshold_law(counts, 2 * alpha, eps)
        # Index j released as grid[j-1] (grid[0] for j = 0, grid[-1] if none).
        radius_law = {}
        for j, p in enumerate(law):
            r = grid[-1] if j == len(grid) else grid[max(j - 1, 0)]
            radius_law[r] = radius_law.get(r, 0.0) + p
        draws = [
            private_radius(norms, epsilon=eps, rng=rng, grid=grid) for _ in range(reps)
        ]
        values, observed = np.unique(draws, return_counts=True)
        expected = np.array([radius_law.get(v, 0.0) for v in values]) * reps
        keep = expected > 5
        observed_kept = observed[keep]
        expected_kept = expected[keep] * observed_kept.sum() / expected[keep].sum()
        assert stats.chisquare(observed_kept, expected_kept).pvalue > 1e-4
        freqs[n_long] = dict(zip(values, observed / reps, strict=True))
    for value, pa in freqs[42].items():
        pb = freqs[43].get(value, 0.0)
        if min(pa, pb) * reps < 200:
            continue
        se = math.sqrt((1 - pa) / (pa * reps) + (1 - pb) / (pb * reps))
        assert abs(math.log(pa / pb)) <= eps + 5 * se


def test_radius_counts_are_the_counts_above_each_grid_point():
    rng = np.random.default_rng(3)
    # Norms on and between grid points, zeros and huge values.
    norms = np.concatenate(
        [rng.exponential(size=500), DEFAULT_RADIUS_GRID[20:40], [0.0, 1e300]]
    )
    expected = [(norms > g).sum() for g in DEFAULT_RADIUS_GRID]
    counts = radius_counts(norms)
    np.testing.assert_array_equal(counts, expected)
    # Counts of disjoint chunks add up (how a chunked or Dask pass gets them).
    parts = sum(radius_counts(part) for part in np.array_split(norms, 7))
    np.testing.assert_array_equal(parts, expected)


def test_private_radius_is_private_radius_from_counts():
    norms = np.random.default_rng(4).exponential(size=3000)
    for seed in range(5):
        direct = private_radius(norms, epsilon=0.5, rng=np.random.default_rng(seed))
        two_step = private_radius_from_counts(
            radius_counts(norms), epsilon=0.5, rng=np.random.default_rng(seed)
        )
        assert direct == two_step


@pytest.mark.parametrize("grid", [[1.0, 2.0, 0.5], [1.0, 1.0], [[1.0], [0.5]]])
def test_radius_counts_needs_a_decreasing_grid(grid):
    with pytest.raises(ValueError, match="strictly decreasing"):
        radius_counts(np.ones(3), grid)
