"""Truncated Laplace noise and the stability-based histogram (module histogram).

Release probabilities are compared with their exact values: a binomial test
at Z = 5 standard errors of the Monte Carlo frequency.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpcov.mechanisms import (
    _noise,
    stable_histogram,
    stable_histogram_threshold,
    truncated_laplace_params,
)
from dpcov.mechanisms._histogram import _count_cells

Z = 5.0


def _close(frequency, probability, reps):
    se = math.sqrt(max(probability * (1 - probability), 1e-12) / reps)
    return abs(frequency - probability) <= Z * se


def _truncated_laplace_cdf(scale, bound):
    norm = 1.0 - math.exp(-bound / scale)

    def cdf(z):
        z = np.clip(z, -bound, bound)
        inner = (1.0 - np.exp(-np.abs(z) / scale)) / norm / 2.0
        return 0.5 + np.sign(z) * inner

    return cdf


def test_truncated_laplace_params_closed_form():
    # Truncated Laplace (Geng, Ding, Guo and Kumar 2020):
    # A = (Delta/eps) log(1 + (e^eps - 1)/(2 delta)); eps = 2, delta = 1e-6,
    # Delta = 2 gives 14.98.
    scale, bound = truncated_laplace_params(2.0, 2.0, 1e-6)
    assert scale == 1.0
    assert bound == pytest.approx(14.977, abs=1e-3)
    with pytest.raises(ValueError):
        truncated_laplace_params(1.0, 1.0, 0.0)


def test_truncated_laplace_law_and_exact_tail(global_random_seed):
    # KS against the exact CDF; the mass of [A - c, A] is
    # delta (e^{c eps / Delta} - 1) / (e^eps - 1) for 0 <= c <= Delta.
    rng = np.random.default_rng(global_random_seed)
    sensitivity, eps, delta = 2.0, 1.0, 0.01
    scale, bound = truncated_laplace_params(sensitivity, eps, delta)
    z = _noise.truncated_laplace(rng, scale, bound, 400_000)
    assert np.abs(z).max() <= bound
    assert stats.kstest(z[:20_000], _truncated_laplace_cdf(scale, bound)).pvalue > 1e-4
    for c in (1.0, 2.0):
        exact = delta * math.expm1(c * eps / sensitivity) / math.expm1(eps)
        assert _close(np.mean(z > bound - c), exact, z.size)


@pytest.mark.slow
def test_laplace_histogram_release_probabilities(global_random_seed):
    # A cell of count c is released with probability P[c + Lap(2/eps) > tau];
    # a count-1 cell (the one a neighbour can create) with exactly delta.
    rng = np.random.default_rng(global_random_seed)
    eps, delta, reps = 1.0, 0.05, 20_000
    tau = stable_histogram_threshold(eps, delta)
    assert tau == pytest.approx(1 + 2 * math.log(10))
    items = np.array([[0]] * 1 + [[1]] * 4 + [[2]] * 8)
    released = {0: 0, 1: 0, 2: 0}
    for _ in range(reps):
        cells, counts = stable_histogram(items, epsilon=eps, delta=delta, rng=rng)
        assert np.all(counts > tau) and np.all(np.diff(counts) <= 0)
        for cell in cells[:, 0]:
            released[int(cell)] += 1
    law = stats.laplace(scale=2 / eps)
    for cell, count in ((0, 1), (1, 4), (2, 8)):
        exact = law.sf(tau - count)
        assert _close(released[cell] / reps, exact, reps)
    assert law.sf(tau - 1) == pytest.approx(delta)


def test_truncated_histogram_never_releases_singletons(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    eps, delta, reps = 1.0, 1e-3, 5_000
    tau = stable_histogram_threshold(eps, delta, noise="truncated")
    scale, bound = truncated_laplace_params(1.0, eps / 2, delta / 2)
    assert tau == 1 + bound
    count = 12
    items = np.array([0] * 1 + [1] * count)
    hits = 0
    for _ in range(reps):
        cells, _ = stable_histogram(
            items, epsilon=eps, delta=delta, rng=rng, noise="truncated"
        )
        assert 0 not in cells
        hits += 1 in cells
    exact = 1 - _truncated_laplace_cdf(scale, bound)(tau - count)
    assert _close(hits / reps, float(exact), reps)


@pytest.mark.parametrize("noise", ["laplace", "truncated"])
def test_neighbour_guarantee_from_exact_probabilities(noise):
    # Worst-case replacement: an item moves from a singleton cell a to a cell
    # b of count c. The output law factorises over cells, so the hockey-stick
    # divergence of the released (cell, noisy count) pairs is computed
    # exactly from the per-cell laws; it must be at most delta at e^eps.
    eps, delta = 1.0, 1e-3
    tau = stable_histogram_threshold(eps, delta, noise=noise)
    if noise == "laplace":
        law = stats.laplace(scale=2 / eps)
        pdf, sf = law.pdf, law.sf
    else:
        scale, bound = truncated_laplace_params(1.0, eps / 2, delta / 2)
        cdf = _truncated_laplace_cdf(scale, bound)
        norm = 2 * scale * (1 - math.exp(-bound / scale))

        def pdf(z):
            return np.where(np.abs(z) <= bound, np.exp(-np.abs(z) / scale) / norm, 0.0)

        def sf(z):
            return 1 - cdf(z)

    grid = np.linspace(tau, tau + 60, 600_001)
    step = grid[1] - grid[0]
    worst = 0.0
    for c in (1, 2, 5, 20):
        # Cell b: count c on X, c + 1 on X'; cell a: 1 on X, absent on X'.
        # Hockey-stick for cell b's released value (released densities) plus
        # the mass of "a released" on X (impossible on X').
        p_b = pdf(grid - c)
        q_b = pdf(grid - (c + 1))
        p_none, q_none = 1 - sf(tau - c), 1 - sf(tau - (c + 1))
        a_released = sf(tau - 1)
        # Events over (a released?, b's value): X's law is the product of
        # Bernoulli(a_released) and b's law; X' never releases a.
        hockey_b = np.sum(np.maximum(p_b - math.exp(eps) * q_b, 0)) * step
        hockey_b += max(p_none - math.exp(eps) * q_none, 0.0)
        total = hockey_b + a_released
        # eps/2-DP for the Laplace cell b (its sensitivity is 1 at scale
        # 2/eps), so hockey_b is ~0; the singleton costs at most delta.
        worst = max(worst, float(total))
    assert worst <= delta * (1 + 1e-6)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.uint64])
@pytest.mark.parametrize("shape", [(1000, 3), (40, 800), (1, 2), (300, 1)])
def test_cell_counts_equal_numpy_unique(dtype, shape):
    # Both paths of _count_cells (one int64 key when the column ranges fit,
    # lexsort otherwise: the full range of the dtype, or 800 columns) give
    # np.unique's cells, order and counts exactly.
    rng = np.random.default_rng(0)
    info = np.iinfo(dtype)
    for low, high in [(0, 3), (info.min, info.max), (info.max - 5, info.max)]:
        items = rng.integers(low, high, size=shape, dtype=dtype, endpoint=True)
        cells, counts = _count_cells(items)
        expected_cells, expected_counts = np.unique(items, axis=0, return_counts=True)
        np.testing.assert_array_equal(cells, expected_cells)
        np.testing.assert_array_equal(counts, expected_counts)
        assert cells.dtype == expected_cells.dtype
