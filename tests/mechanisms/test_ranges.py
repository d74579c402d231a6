"""Tests of the private-range mechanisms: scores, laws, neighbours, counts."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dpcov.mechanisms import (
    exponential_probabilities,
    exponential_radius_accuracy,
    exponential_radius_min_samples,
    median_probabilities,
    private_median,
    private_ranges_min_samples,
)
from dpcov.mechanisms._ranges import (
    SIGNED_GRID,
    SPREAD_GRID,
    median_candidates,
    median_scores,
    private_spread,
    spread_scores,
)
from dpcov.utils._columns import column_rank_counts

RADII = np.sort(SPREAD_GRID)


def _at_or_below(x, candidates):
    # Brute force: #{x <= c}.
    return (np.asarray(x, dtype=float)[:, None] <= candidates).sum(axis=0)


def _spread_counts(x, center):
    # #{|x - m| > r} for the decreasing grid.
    d = np.abs(np.asarray(x, dtype=float) - center)[:, None]
    return (d > SPREAD_GRID).sum(axis=0)


def test_signed_grid_is_symmetric_increasing_and_holds_zero_and_integers():
    assert SIGNED_GRID.size == 835
    assert np.all(np.diff(SIGNED_GRID) > 0)
    np.testing.assert_array_equal(SIGNED_GRID, -SIGNED_GRID[::-1])
    for value in [0.0, 1.0, 2.0, 4.0, -8.0, 2.0**64, 2.0**-40]:
        assert value in SIGNED_GRID


def test_median_candidates_drop_offsets_below_the_float_spacing():
    c = median_candidates(1e6)
    assert np.all(np.diff(c) > 0)
    assert 1e6 in c
    assert c.size < SIGNED_GRID.size  # 1e6 + 2**-40 == 1e6


def test_median_scores_by_hand():
    # Values 1 (x3), 2 (x1), 5 (x2), n = 6, n/2 = 3; candidate c_k stands for
    # the interval (c_{k-1}, c_k].
    x = [1.0, 1.0, 1.0, 2.0, 5.0, 5.0]
    c = np.array([0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 6.0])
    scores = median_scores(_at_or_below(x, c), 6)
    # (-inf, 0.5]: nothing at or below (3 short); (0.5, 1]: 0 at or below
    # 0.5 and 3 at or below 1, a median; (1, 1.5]: 3 at or below 1, a median;
    # (1.5, 2]: 3 at or below 1.5, a median; (2, 3]: 4 at or below 2 (one
    # too many); (3, 5]: 4; (5, 6]: 6 at or below 5 (three too many).
    np.testing.assert_array_equal(scores, [-3, 0, 0, 0, -1, -1, -3])


def test_a_constant_column_off_the_grid_gets_a_range_around_its_value():
    # 7 is not on the grid: the interval (2**(11/4), 8] holds it and scores
    # 0, every other candidate -50; the second step, from 8, has 8 - 1 = 7.
    x = np.full(100, 7.0)
    assert 7.0 not in SIGNED_GRID
    scores = median_scores(_at_or_below(x, median_candidates()), 100)
    assert median_candidates()[np.argmax(scores)] == 8.0
    assert np.sum(scores == 0) == 1
    scores = median_scores(_at_or_below(x, median_candidates(8.0)), 100)
    assert median_candidates(8.0)[np.argmax(scores)] == 7.0


def test_median_scores_have_sensitivity_one(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    c = median_candidates()
    for _ in range(200):
        n = int(rng.integers(2, 60))
        x = rng.normal(0, 10.0 ** rng.uniform(-3, 3), size=n)
        y = x.copy()
        y[rng.integers(n)] = rng.normal(0, 10.0 ** rng.uniform(-10, 10))
        a = median_scores(_at_or_below(x, c), n)
        b = median_scores(_at_or_below(y, c), n)
        assert np.abs(a - b).max() <= 1


def test_spread_scores_have_sensitivity_one(global_random_seed):
    # The prior term is public and rounded so that every sum is exact: the
    # scores of neighbours differ by the count scores' difference, at most
    # 1 exactly (not 1 + an ulp).
    rng = np.random.default_rng(global_random_seed)
    for _ in range(200):
        n = int(rng.integers(5, 60))
        x = rng.normal(0, 10.0 ** rng.uniform(-3, 3), size=n)
        y = x.copy()
        y[rng.integers(n)] = rng.normal(0, 10.0 ** rng.uniform(-10, 10))
        eps = float(np.exp(rng.uniform(-8, 2)))
        a = spread_scores(_spread_counts(x, 0.0), n, epsilon=eps)
        b = spread_scores(_spread_counts(y, 0.0), n, epsilon=eps)
        assert np.abs(a - b).max() <= 1


def test_spread_prior_is_r_to_the_minus_half():
    # Flat count scores (no values): the law is proportional to r**-0.5.
    counts = np.zeros(SPREAD_GRID.size)
    eps = 0.7
    p = exponential_probabilities(
        spread_scores(counts, 10**6, epsilon=eps), epsilon=eps
    )
    # With no values every count score is -k except beyond the smallest
    # radius; look at the flat part only.
    ratio = p[:-2] / p[1:-1]  # radius 2r against r
    np.testing.assert_allclose(ratio, 2**-0.5, rtol=1e-6)


def test_median_law_matches_closed_form(global_random_seed):
    # Chi-square goodness of fit of 4000 draws against the closed form, on
    # the cells with expected count >= 5 (the rest pooled).
    rng = np.random.default_rng(global_random_seed)
    x = np.concatenate([np.full(30, 3.0), np.full(25, 4.0), rng.normal(3.5, 2, 20)])
    c = median_candidates()
    counts = _at_or_below(x, c)
    eps = 0.4
    p = median_probabilities(counts, x.size, epsilon=eps)
    draws = np.array(
        [private_median(counts, x.size, c, epsilon=eps, rng=rng) for _ in range(4000)]
    )
    observed = np.array([np.sum(draws == value) for value in c])
    expected = 4000 * p
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    assert stats.chisquare(obs, exp).pvalue > 1e-4
    # The same draws against the law at 2 eps are rejected.
    p2 = median_probabilities(counts, x.size, epsilon=2 * eps)
    exp2 = 4000 * p2
    big2 = exp2 >= 5
    obs2 = np.append(observed[big2], observed[~big2].sum())
    exp2 = np.append(exp2[big2], exp2[~big2].sum())
    assert stats.chisquare(obs2, exp2).pvalue < 1e-6


def test_spread_law_matches_closed_form(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    x = np.concatenate([rng.uniform(-3, 3, 400), [40.0] * 10])
    above = _spread_counts(x, 0.0)
    eps = 0.3
    p = exponential_probabilities(
        spread_scores(above, x.size, epsilon=eps), epsilon=eps
    )
    draws = np.array(
        [private_spread(above, x.size, epsilon=eps, rng=rng) for _ in range(4000)]
    )
    observed = np.array([np.sum(draws == r) for r in SPREAD_GRID])
    expected = 4000 * p
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    assert stats.chisquare(obs, exp).pvalue > 1e-4


@pytest.mark.parametrize("step", ["median", "spread"])
def test_neighbours_probability_ratio(step, global_random_seed):
    # Exact laws on neighbouring datasets (one row replaced): every outcome's
    # probability ratio is at most e^eps (McSherry and Talwar, 2007). The
    # largest ratio found is above e^(eps/2): the same pairs would show a
    # mechanism run at 2 eps (ratio up to e^(2 eps)) or at eps/2.
    rng = np.random.default_rng(global_random_seed)
    eps, worst = 0.8, 0.0
    c = median_candidates()
    for _ in range(300):
        n = int(rng.integers(20, 200))
        x = rng.normal(rng.normal(0, 5), np.exp(rng.normal(0, 2)), size=n)
        y = x.copy()
        y[rng.integers(n)] = rng.normal(0, np.exp(rng.uniform(-20, 20)))
        if step == "median":
            p = median_probabilities(_at_or_below(x, c), n, epsilon=eps)
            q = median_probabilities(_at_or_below(y, c), n, epsilon=eps)
        else:
            p, q = (
                exponential_probabilities(
                    spread_scores(_spread_counts(v, 0.0), n, epsilon=eps),
                    epsilon=eps,
                )
                for v in (x, y)
            )
        ratio = np.max(np.abs(np.log(p) - np.log(q)))
        assert ratio <= eps + 1e-9
        worst = max(worst, ratio)
    assert worst > eps / 2


def test_spread_accuracy_and_misses_land_near_the_values(global_random_seed):
    # With probability >= 1 - beta at most k + alpha values lie outside and
    # the radius is below twice the largest value. Failures over 300 draws
    # are Binomial(300, <= 0.1): P(>= 50) < 1e-4. Every draw, miss or not,
    # stays below 2**10 times the largest value: the prior puts at most
    # sum_{i >= 10} 2**(-i/2) / (1 - 2**-0.5) = 0.1 of the flat radii's
    # mass (itself below beta) there, so P(any of 300 beyond) < 300 * 0.01.
    # (Without the prior the misses spread evenly up to 2**64.)
    rng = np.random.default_rng(global_random_seed)
    eps = 0.3
    alpha, k = exponential_radius_accuracy(eps)
    x = rng.uniform(-3.0, 3.0, 3000)
    above = _spread_counts(x, 0.0)
    failures, largest = 0, 0.0
    for _ in range(300):
        r = private_spread(above, x.size, epsilon=eps, rng=rng)
        if np.sum(np.abs(x) > r) > k + alpha or r >= 2 * np.abs(x).max():
            failures += 1
        largest = max(largest, r)
    assert failures < 50
    assert largest < 2**10 * 3.0


def test_min_samples_closed_form():
    eps = 0.2
    median = math.ceil(4 * 2 / eps * math.log(835 / 0.1))
    assert private_ranges_min_samples(eps) == max(
        exponential_radius_min_samples(eps, grid=SPREAD_GRID), median
    )
    assert private_ranges_min_samples(float("inf")) == 2


@pytest.mark.parametrize("kind", ["dense", "chunked", "sparse", "dask"])
@pytest.mark.parametrize("center", [None, np.array([0.5, -2.0, 0.0])])
def test_column_rank_counts_are_the_counts(kind, center, monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(0, 3, size=(500, 3))
    X[rng.random(X.shape) < 0.3] = 0.0
    X[:5] = 1.0  # ties with a candidate
    candidates = [median_candidates(), median_candidates(1.0), RADII]
    if kind == "chunked":
        monkeypatch.setattr("dpcov.utils._columns.CHUNK_BYTES", 8 * 3 * 7)
    data = X
    if kind == "sparse":
        data = sp.csr_matrix(X)
    if kind == "dask":
        da = pytest.importorskip("dask.array")
        data = da.from_array(X, chunks=(120, 2))
    counts, observed = column_rank_counts(data, candidates, center=center)
    np.testing.assert_array_equal(observed, [500, 500, 500])
    for j, at_or_below in enumerate(counts):
        values = X[:, j] if center is None else np.abs(X[:, j] - center[j])
        np.testing.assert_array_equal(at_or_below, _at_or_below(values, candidates[j]))


def test_column_rank_counts_check_finite_names_no_value():
    X = np.ones((10, 2))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity") as info:
        column_rank_counts(X, [RADII, RADII], check_finite=True)
    assert "nan" not in str(info.value).split("NaN")[0].lower()
