"""Tests of iterative eigenvector sampling (module eigen_sampling)."""

import math

import numpy as np
import pytest
from scipy import stats

from dpcov.mechanisms import sample_eigenvectors, sampled_overlaps

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


# The model of the directions' law (sampled_overlaps): exact for the uniform
# law, for infinite exponents and for the first step on the circle; rows and
# columns sum to 1; the rotation's energy within the documented band of the
# sampler's.


def test_overlaps_exact_cases():
    values = np.array([3.0, 2.0, 1.0, 0.0])
    overlaps, remaining = sampled_overlaps(values, [0.0] * 3, complete=True)
    np.testing.assert_allclose(overlaps, 0.25, atol=1e-15)
    np.testing.assert_allclose(remaining, 0.0, atol=1e-15)
    overlaps, remaining = sampled_overlaps(values, [math.inf] * 2)
    np.testing.assert_array_equal(overlaps, np.eye(4)[:2])
    np.testing.assert_array_equal(remaining, [0.0, 0.0, 1.0, 1.0])
    # d = 2: the first row is the circle law's moment.
    overlaps, _ = sampled_overlaps(np.array([2.0, 0.0]), [1.5], complete=True)
    assert overlaps[0, 0] == pytest.approx(bessel_second_moment(3.0), abs=1e-12)
    np.testing.assert_allclose(overlaps, overlaps.T, atol=1e-12)
    with pytest.raises(ValueError, match="at most 4"):
        sampled_overlaps(values, [1.0] * 5)


def test_overlaps_are_doubly_stochastic():
    rng = np.random.default_rng(0)
    values = np.sort(rng.exponential(size=30))[::-1]
    scales = rng.uniform(1.0, 200.0, 29)
    overlaps, remaining = sampled_overlaps(values, scales, complete=True)
    assert overlaps.shape == (30, 30) and np.all(overlaps >= 0)
    np.testing.assert_allclose(overlaps.sum(axis=1), 1.0)
    np.testing.assert_allclose(overlaps.sum(axis=0), 1.0)
    partial, rest = sampled_overlaps(values, scales[:5])
    np.testing.assert_allclose(partial, overlaps[:5])
    np.testing.assert_allclose(rest, 1.0 - partial.sum(axis=0))


@pytest.mark.slow
@pytest.mark.parametrize(
    "values, scale",
    [
        (np.geomspace(1.0, 1e-3, 10) * 0.3, 140.0),
        (np.geomspace(1.0, 1e-3, 10) * 0.3, 14.0),
        (np.r_[0.5, 0.2, np.full(28, 0.01)], 50.0),
        (np.linspace(1.0, 0.0, 30), 20.0),
        (np.linspace(1.0, 0.0, 30), 200.0),
    ],
)
def test_overlaps_rotation_energy_against_the_sampler(values, scale):
    # E ||U diag(v) U.T - diag(v)||**2 / 2 over the sampler's bases, against
    # the model's sum_il O_il (v_i - v_l)**2 / 2: within the documented band
    # (-5% to +18%, measured) widened by 4 standard errors of the 400 draws.
    rng = np.random.default_rng(0)
    d = values.size
    basis = stats.ortho_group.rvs(d, random_state=1)
    matrix = (basis * values) @ basis.T
    scales = [scale] * (d - 1)
    gaps = (values[:, None] - values[None, :]) ** 2 / 2
    draws = []
    for _ in range(400):
        u = sample_eigenvectors(rng, matrix, scales, complete=True)
        draws.append(np.sum((u.T @ basis) ** 2 * gaps))
    mean, se = np.mean(draws), np.std(draws) / math.sqrt(len(draws))
    model = np.sum(sampled_overlaps(values, scales, complete=True)[0] * gaps)
    assert 0.95 * mean - 4 * se <= model <= 1.18 * mean + 4 * se
