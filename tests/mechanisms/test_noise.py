"""Tests of the noise module: the laws of the raw draws."""

import numpy as np
import pytest
from scipy import stats

from dpcov.mechanisms import _noise


@pytest.mark.parametrize("law", ["gaussian", "laplace"])
def test_symmetric_matrix_law(law, global_random_seed):
    # Upper triangle (diagonal included) iid with the requested law and scale,
    # mirrored. A (G + G.T)/sqrt(2) construction would give the diagonal twice
    # the variance of the off-diagonal entries, a (G + G.T)/2 one half of it.
    rng = np.random.default_rng(global_random_seed)
    d, scale, reps = 40, 0.7, 50
    draws = np.stack([_noise.symmetric_matrix(rng, d, scale, law) for _ in range(reps)])
    assert np.array_equal(draws, np.swapaxes(draws, 1, 2))
    rows, cols = np.triu_indices(d, k=1)
    diag = draws[:, np.arange(d), np.arange(d)].ravel()
    off = draws[:, rows, cols].ravel()
    dist = stats.norm(scale=scale) if law == "gaussian" else stats.laplace(scale=scale)
    # KS at level 1e-4 against the exact law, for each group of entries.
    assert stats.kstest(diag, dist.cdf).pvalue > 1e-4
    assert stats.kstest(off, dist.cdf).pvalue > 1e-4
    # Variance ratio diag/off: F distribution under equal variances (Gaussian);
    # for 2000 vs 39000 entries its 1e-4 two-sided quantiles are within 0.2 of 1
    # for Gaussian entries and 0.25 for Laplace ones (kurtosis 6).
    assert abs(diag.var() / off.var() - 1) < 0.25


def test_draws_are_reproducible_and_scaled():
    a = _noise.gaussian(np.random.default_rng(1), 2.0, 5)
    b = _noise.gaussian(np.random.default_rng(1), 1.0, 5)
    np.testing.assert_allclose(a, 2 * b)
    a = _noise.laplace(np.random.default_rng(1), 3.0, 5)
    b = _noise.laplace(np.random.default_rng(1), 1.0, 5)
    np.testing.assert_allclose(a, 3 * b)
    assert isinstance(_noise.gaussian(np.random.default_rng(0), 1.0), float)
