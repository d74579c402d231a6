import math

import numpy as np

from dpcov.mechanisms import (
    DEFAULT_RADIUS_GRID,
    above_threshold_accuracy,
    private_radius,
    private_radius_min_samples,
)


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


def test_radius_neighbour_ratio(global_random_seed):
    # Pure DP of the whole step: replacing one row (norm 0.3 -> 40) changes the
    # probability of each released radius by at most e^eps (5 s.e. slack).
    eps, reps = 2.0, 4000
    base = np.full(400, 0.3)
    other = base.copy()
    other[0] = 40.0
    grid = 2.0 ** np.arange(6, -4, -1)
    rng = np.random.default_rng(global_random_seed)
    a = [private_radius(base, epsilon=eps, rng=rng, grid=grid) for _ in range(reps)]
    b = [private_radius(other, epsilon=eps, rng=rng, grid=grid) for _ in range(reps)]
    values, counts_a = np.unique(a, return_counts=True)
    for value, count_a in zip(values, counts_a, strict=False):
        count_b = np.sum(np.asarray(b) == value)
        if min(count_a, count_b) < 200:
            continue
        pa, pb = count_a / reps, count_b / reps
        se = math.sqrt((1 - pa) / count_a + (1 - pb) / count_b)
        assert abs(math.log(pa / pb)) <= eps + 5 * se
