"""Tests of iterative eigenvector sampling (module eigen_sampling)."""

import math

import numpy as np
import pytest
from scipy import stats

from dpcov.mechanisms import sample_eigenvectors

from ._bingham_exact import bessel_second_moment
from ._samplers import assert_mean_close


def test_orthonormal_and_complete():
    rng = np.random.default_rng(0)
    d = 30
    matrix = np.cov(rng.normal(size=(100, d)).T)
    theta = sample_eigenvectors(rng, matrix * 100, [0.3] * (d - 1), complete=True)
    assert theta.shape == (d, d)
    np.testing.assert_allclose(theta.T @ theta, np.eye(d), atol=1e-10)
    partial = sample_eigenvectors(rng, matrix, [1.0] * 5)
    assert partial.shape == (d, 5)
    np.testing.assert_allclose(partial.T @ partial, np.eye(5), atol=1e-10)
    assert sample_eigenvectors(rng, matrix, []).shape == (d, 0)
    with pytest.raises(ValueError, match="at most 30"):
        sample_eigenvectors(rng, matrix, [1.0] * 31)


def test_infinite_scales_give_the_eigenvectors():
    rng = np.random.default_rng(0)
    basis = stats.ortho_group.rvs(5, random_state=1)
    matrix = (basis * [5.0, 4.0, 3.0, 2.0, 1.0]) @ basis.T
    theta = sample_eigenvectors(rng, matrix, [math.inf] * 4, complete=True)
    np.testing.assert_allclose(np.abs(theta.T @ basis), np.eye(5), atol=1e-10)


@pytest.mark.slow
def test_second_step_samples_the_compressed_law(global_random_seed):
    # C = diag(5, 2, 0) in a random basis. Step 1 at an infinite scale returns
    # the top eigenvector exactly; step 2 must then sample the circle Bingham
    # law of diag(2, 0) on the complement: its second moment along the second
    # eigenvector is the Bessel ratio. A wrong compression (e.g. P^T C instead
    # of P^T C P, or a complement that is not orthogonal) breaks this.
    rng = np.random.default_rng(global_random_seed)
    basis = stats.ortho_group.rvs(3, random_state=global_random_seed)
    matrix = (basis * [5.0, 2.0, 0.0]) @ basis.T
    s = 1.5
    second = np.array(
        [sample_eigenvectors(rng, matrix, [math.inf, s])[:, 1] for _ in range(10_000)]
    )
    np.testing.assert_allclose(second @ basis[:, 0], 0.0, atol=1e-12)
    assert_mean_close((second @ basis[:, 1]) ** 2, bessel_second_moment(2.0 * s))


@pytest.mark.slow
def test_first_step_moment(global_random_seed):
    # The first step alone is the circle law on d = 2.
    rng = np.random.default_rng(global_random_seed)
    u = np.array(
        [
            sample_eigenvectors(rng, np.diag([3.0, 1.0]), [1.0])[:, 0]
            for _ in range(10_000)
        ]
    )
    assert_mean_close(u[:, 0] ** 2, bessel_second_moment(2.0))
