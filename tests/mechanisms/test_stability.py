"""Tests for dpcov.mechanisms._stability: the truncated-Laplace stability test."""

import math

import numpy as np
import pytest
from scipy import stats

from dpcov.mechanisms import stability_noise, stability_test, stability_threshold
from dpcov.mechanisms._calibration import truncated_laplace_params


def _release_rate(score, sensitivity, epsilon, delta, n_runs, seed):
    rng = np.random.default_rng(seed)
    hits = sum(
        stability_test(
            rng, score, sensitivity=sensitivity, epsilon=epsilon, delta=delta
        )
        for _ in range(n_runs)
    )
    return hits


def test_threshold_closed_form():
    # Delta + A with A = (Delta / eps) log(1 + (e^eps - 1) / (2 delta)), so
    # B_1 = 13.66 and B_2 = 27.33 at eps=1, delta=1e-6.
    assert stability_threshold(1.0, 1.0, 1e-6) == pytest.approx(1 + 13.664, abs=1e-3)
    assert stability_threshold(2.0, 1.0, 1e-6) == pytest.approx(2 + 27.327, abs=1e-3)
    assert stability_threshold(2.0, math.inf, 1e-6) == 2.0
    assert stability_noise(np.random.default_rng(0), 1.0, math.inf, 1e-6) == 0.0


@pytest.mark.slow
@pytest.mark.parametrize(
    "sensitivity, margin, expected",
    [
        # Majority-margin edge: score 2 = Delta + 1 needs Z > A - 1,
        # exactly delta by the tail P[Z > A - c] = delta (e^{c eps/Delta} - 1)
        # / (e^eps - 1) at c = Delta = 1.
        (1.0, 1.0, lambda eps, d: d),
        # Noisy-gap edge: gap 3 = Delta + 1 with Delta = 2 needs Z > A - 1,
        # delta / (1 + e^{eps/2}).
        (2.0, 1.0, lambda eps, d: d / (1 + math.exp(eps / 2))),
    ],
)
def test_release_probability_at_the_edge(sensitivity, margin, expected):
    epsilon, delta, n_runs = 1.0, 0.01, 200_000
    hits = _release_rate(sensitivity + margin, sensitivity, epsilon, delta, n_runs, 0)
    p = expected(epsilon, delta)
    # Exact binomial test at the closed form; a Laplace (untruncated) noise or
    # a wrong A gives a different rate (e.g. A from log(1/delta): 2.4x).
    assert stats.binomtest(hits, n_runs, p).pvalue > 1e-4
    # At or below the sensitivity the candidate is never released (Z <= A).
    assert _release_rate(sensitivity, sensitivity, epsilon, delta, 20_000, 1) == 0


def test_noise_is_the_truncated_laplace_law():
    # KS against the closed-form CDF of TLap(Delta, eps, delta).
    rng = np.random.default_rng(3)
    sensitivity, epsilon, delta = 2.0, 0.5, 1e-3
    scale, bound = truncated_laplace_params(sensitivity, epsilon, delta)
    draws = np.array(
        [stability_noise(rng, sensitivity, epsilon, delta) for _ in range(20_000)]
    )
    assert np.abs(draws).max() <= bound
    norm = 1 - math.exp(-bound / scale)

    def cdf(z):
        z = np.clip(z, -bound, bound)
        tail = (np.exp(-np.abs(z) / scale) - math.exp(-bound / scale)) / (2 * norm)
        return np.where(z < 0, tail, 1 - tail)

    assert stats.kstest(draws, cdf).pvalue > 1e-3
    # The same draws reject the law at half the scale.
    half = 1 - math.exp(-bound / (scale / 2))

    def cdf_half(z):
        z = np.clip(z, -bound, bound)
        tail = (np.exp(-np.abs(z) / (scale / 2)) - math.exp(-bound / (scale / 2))) / (
            2 * half
        )
        return np.where(z < 0, tail, 1 - tail)

    assert stats.kstest(draws, cdf_half).pvalue < 1e-6
