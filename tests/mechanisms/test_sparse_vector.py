"""Tests of the sparse_vector module (AboveThreshold)."""

import math

import numpy as np
import pytest
from scipy import stats

import dpcov
from dpcov.mechanisms import (
    _discrete,
    above_threshold,
    above_threshold_accuracy,
    above_threshold_scales,
)

from ._samplers import SeededSource
from ._svt_exact import above_threshold_law


def test_scales_closed_form():
    # Dwork & Roth (2014), Algorithm 1: Lap(2 Delta/eps) threshold and
    # Lap(4 Delta/eps) queries.
    assert above_threshold_scales(0.5) == (4.0, 8.0)
    assert above_threshold_scales(2.0, sensitivity=3.0) == (3.0, 6.0)


def test_accuracy_closed_form():
    assert above_threshold_accuracy(2.0, 10, 0.1) == pytest.approx(4 * math.log(200))
    assert above_threshold_accuracy(math.inf, 10, 0.1) == 0.0


def test_deterministic_queries():
    rng = np.random.default_rng(0)
    for _ in range(50):
        assert above_threshold([-np.inf] * 5 + [np.inf], 0.0, epsilon=1.0, rng=rng) == 5
        assert above_threshold([-np.inf] * 4, 0.0, epsilon=1.0, rng=rng) == 4
    # epsilon = inf: exact, strict comparison.
    assert above_threshold([0.0, 0.5, 1.0], 0.5, epsilon=math.inf, rng=rng) == 2


@pytest.mark.parametrize("secure", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_stopping_law_matches_independent_simulation(
    global_random_seed, secure, monkeypatch
):
    # Noise-scale test: the stopping index of a query sequence crossing the
    # threshold has a law that depends on both noise scales. Simulate it
    # independently with the textbook scales 2/eps and 4/eps and compare with
    # a chi-square two-sample test (level 1e-4). Halving or doubling either
    # scale moves the law far outside this (checked below). With secure_noise
    # the discrete Laplace on its grid has scales within 2**-9 of these: the
    # same law for this test.
    eps, reps = 1.0, 20_000
    queries = np.linspace(-12.0, 12.0, 13)
    rng = np.random.default_rng(global_random_seed)
    monkeypatch.setattr(_discrete, "_source", SeededSource(global_random_seed))
    with dpcov.config_context(secure_noise=secure):
        ours = np.array(
            [above_threshold(queries, 0.0, epsilon=eps, rng=rng) for _ in range(reps)]
        )

    def simulate(t_scale, q_scale, seed):
        sim = np.random.default_rng(seed)
        noisy_t = sim.laplace(0, t_scale, (reps, 1))
        noisy_q = queries + sim.laplace(0, q_scale, (reps, queries.size))
        above = noisy_q > noisy_t
        return np.where(above.any(axis=1), above.argmax(axis=1), queries.size)

    def chi2_pvalue(a, b):
        bins = np.arange(queries.size + 2)
        table = np.array([np.histogram(a, bins)[0], np.histogram(b, bins)[0]])
        table = table[:, table.sum(axis=0) > 0]
        return stats.chi2_contingency(table)[1]

    assert chi2_pvalue(ours, simulate(2 / eps, 4 / eps, global_random_seed + 1)) > 1e-4
    # Power: the same test rejects mis-scaled noise decisively.
    assert chi2_pvalue(ours, simulate(1 / eps, 2 / eps, global_random_seed + 1)) < 1e-10
    assert chi2_pvalue(ours, simulate(4 / eps, 8 / eps, global_random_seed + 1)) < 1e-10


@pytest.mark.slow
def test_neighbouring_queries_exact_law(global_random_seed):
    # Neighbours move one query by the sensitivity (here the only finite one,
    # in the tail where the privacy loss is largest). The empirical stopping
    # frequencies must match the exact law at the textbook scales (5 binomial
    # s.e.), and the log-ratio between neighbours must stay below eps (the
    # exact value here is about eps / 4: the query noise has scale 4 / eps).
    eps, reps = 1.0, 40_000
    rng = np.random.default_rng(global_random_seed)
    base = np.array([-np.inf, -np.inf, -8.0, np.inf])
    other = base.copy()
    other[2] += 1.0
    results = {}
    for name, q in [("base", base), ("other", other)]:
        exact = above_threshold_law(q, 0.0, eps)[2]
        draws = [above_threshold(q, 0.0, epsilon=eps, rng=rng) for _ in range(reps)]
        observed = np.mean(np.array(draws) == 2)
        assert abs(observed - exact) < 5 * math.sqrt(exact * (1 - exact) / reps)
        results[name] = (observed, exact)
    (pa, ea), (pb, eb) = results["base"], results["other"]
    se = math.sqrt((1 - pa) / (pa * reps) + (1 - pb) / (pb * reps))
    assert abs(math.log(pb / pa)) <= eps + 5 * se
    assert math.log(pb / pa) == pytest.approx(math.log(eb / ea), abs=5 * se)
