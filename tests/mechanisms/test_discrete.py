"""Tests of the exact discrete samplers and their grids (secure_noise)."""

import math
from fractions import Fraction
from itertools import permutations

import numpy as np
import pytest
from scipy import stats

import dpcov
from dpcov.mechanisms import _discrete, draw_run_count, run_count_law, run_count_pmf
from dpcov.mechanisms._discrete import (
    GRID_REFINEMENT,
    bernoulli_exp,
    bernoulli_exp_scalar,
    discrete_gaussian,
    discrete_gaussian_pmf,
    discrete_laplace,
    discrete_laplace_pmf,
    exponential_index,
    from_grid,
    geometric_count,
    grid_noise,
    logarithmic_count,
    poisson_count,
    secure_indices,
    secure_permutation,
    to_grid,
    uniform_below,
)

from ._samplers import SeededSource, chi_square_pvalue


@pytest.fixture
def seeded(monkeypatch, global_random_seed):
    # Reproducible statistical checks: the CSPRNG replaced by a seeded source.
    monkeypatch.setattr(_discrete, "_source", SeededSource(global_random_seed))


def test_uniform_below_is_uniform(seeded):
    # Chi-square against the uniform law on 6 and on 2**62 + 1 values (the
    # mask is then 2**63 - 1: about half of the words are rejected), binned
    # into 8 equal ranges; bound 1 always gives 0.
    draws = uniform_below(np.full(60_000, 6, dtype=np.uint64))
    assert (
        stats.chisquare(np.bincount(draws.astype(np.int64), minlength=6)).pvalue > 1e-4
    )
    big = 2**62 + 1
    draws = uniform_below(np.full(40_000, big, dtype=np.uint64))
    assert draws.max() < big
    bins = (draws // np.uint64(big // 8 + 1)).astype(np.int64)
    assert stats.chisquare(np.bincount(bins, minlength=8)).pvalue > 1e-4
    assert not uniform_below(np.ones(10, dtype=np.uint64)).any()


@pytest.mark.parametrize("num, den", [(0, 1), (1, 3), (1, 1), (5, 2), (7, 3), (12, 1)])
def test_bernoulli_exp_probability(seeded, num, den):
    # Frequency of Bernoulli(exp(-num/den)) within 5 binomial standard errors.
    n = 40_000
    p = math.exp(-num / den)
    hits = bernoulli_exp(np.full(n, num), den).mean()
    assert hits == pytest.approx(p, abs=5 * math.sqrt(p * (1 - p) / n) + 1e-12)


def test_bernoulli_exp_scalar_big_integers(seeded):
    # Python integers beyond 64 bits: gamma = (2**80 + 1) / 2**81 ~ 1/2.
    n = 4000
    p = math.exp(-(2**80 + 1) / 2**81)
    hits = np.mean([bernoulli_exp_scalar(2**80 + 1, 2**81) for _ in range(n)])
    assert hits == pytest.approx(p, abs=5 * math.sqrt(p * (1 - p) / n))


@pytest.mark.parametrize("scale", [1, 3, 10])
@pytest.mark.parametrize(
    "sampler, pmf",
    [
        (discrete_laplace, discrete_laplace_pmf),
        (discrete_gaussian, discrete_gaussian_pmf),
    ],
    ids=["laplace", "gaussian"],
)
def test_discrete_pmf(seeded, sampler, pmf, scale):
    # Discrete Laplace: P(z) = (1 - q) / (1 + q) q^|z|, q = exp(-1/t), the law
    # Algorithm 2 of Canonne, Kamath and Steinke (2020) samples; discrete
    # Gaussian: P(z) ~ exp(-z^2 / (2 t^2)), that of their Algorithm 3.
    draws = sampler(scale, 60_000)
    assert chi_square_pvalue(draws, lambda z: pmf(z, scale)) > 1e-4
    # The wrong scale is rejected (the test has power).
    assert chi_square_pvalue(draws, lambda z: pmf(z, scale * 1.1)) < 1e-4


RUN_COUNT_SAMPLERS = {
    "geometric": geometric_count,
    "logarithmic": logarithmic_count,
    "poisson": poisson_count,
}


def _run_count_sampler(mean, law):
    # The exact sampler of draw_run_count's law and its parameter: gamma for
    # the truncated negative binomials, the mean for the Poisson law.
    _, gamma = run_count_law(mean, law)
    return lambda: RUN_COUNT_SAMPLERS[law](mean if law == "poisson" else gamma)


@pytest.mark.parametrize(
    "law, mean",
    [("geometric", 10.0), ("logarithmic", 10.0), ("poisson", 10.0), ("poisson", 3.7)],
)
def test_run_count_pmf(seeded, law, mean):
    # The run counts of a private selection (Papernot and Steinke 2022,
    # Definition 1, and the Poisson law of their Theorem 6) against
    # run_count_pmf. 3.7 is no multiple of 1/2: the Poisson sampler's parts
    # r = 3.7 / 8 are then below 1/2. Under a correct sampler the p-value is
    # uniform, so a threshold of 1e-4 fails a given seed with probability
    # 1e-4. 20,000 draws take 0.1 to 0.5 s per case.
    sampler = _run_count_sampler(mean, law)
    draws = [sampler() for _ in range(20_000)]
    assert chi_square_pvalue(draws, lambda k: run_count_pmf(k, mean, law)) > 1e-4
    # Power: the law of a mean 25% larger is rejected (its noncentrality,
    # over 200 for the logarithmic law and far more for the others, leaves
    # a miss probability below 1e-7 at 1e-4).
    wrong = mean * 1.25
    assert chi_square_pvalue(draws, lambda k: run_count_pmf(k, wrong, law)) < 1e-4


def test_run_count_degenerate_laws(seeded):
    # A mean of 1 gives gamma = 1 (one run for sure) for the truncated laws,
    # and a Poisson mean of 0 gives 0: no randomness is needed.
    for law in ["geometric", "logarithmic"]:
        assert run_count_law(1.0, law)[1] == 1.0
        assert {_run_count_sampler(1.0, law)() for _ in range(100)} == {1}
    assert poisson_count(0.0) == 0
    for bad in [0.0, 1.5, math.nan]:
        with pytest.raises(ValueError, match="gamma"):
            logarithmic_count(bad)
    with pytest.raises(ValueError, match="mean"):
        poisson_count(math.inf)


@pytest.mark.parametrize("law", ["geometric", "logarithmic", "poisson"])
def test_hardened_run_count_uses_only_the_source(monkeypatch, law):
    # Under secure_noise, draw_run_count takes every bit from _discrete._source:
    # rng=None would fail if numpy's generator were used, and two sources of
    # the same seed give the same draws (no other randomness enters).
    def draws(seed):
        monkeypatch.setattr(_discrete, "_source", SeededSource(seed))
        with dpcov.config_context(secure_noise=True):
            return [draw_run_count(None, 10.0, law) for _ in range(50)]

    first = draws(3)
    assert first == draws(3)
    assert all(type(k) is int for k in first)
    assert len(set(first)) > 1


def test_python_integer_continuations_are_exact(seeded, monkeypatch):
    # The paths that continue in Python integers (a denominator past 64 bits,
    # a discrete Gaussian scale past the vectorised bound) give the same law:
    # force them with tiny bounds.
    monkeypatch.setattr(_discrete, "_WORD_BOUND", 4)
    draws = discrete_gaussian(3, 20_000)
    assert chi_square_pvalue(draws, lambda z: discrete_gaussian_pmf(z, 3)) > 1e-4
    monkeypatch.setattr(_discrete, "_WORD_BOUND", 2)  # t = 3: scalar Algorithm 2
    draws = discrete_laplace(3, 20_000)
    assert chi_square_pvalue(draws, lambda z: discrete_laplace_pmf(z, 3)) > 1e-4
    monkeypatch.setattr(_discrete, "_WORD_BOUND", 2**62)
    monkeypatch.setattr(_discrete, "_WHOLE_BOUND", 1)  # integer parts >= 1
    draws = discrete_gaussian(3, 20_000)
    assert chi_square_pvalue(draws, lambda z: discrete_gaussian_pmf(z, 3)) > 1e-4
    monkeypatch.setattr(_discrete, "_GAUSSIAN_T_BOUND", 1)
    draws = discrete_gaussian(3, 20_000)
    assert chi_square_pvalue(draws, lambda z: discrete_gaussian_pmf(z, 3)) > 1e-4


def test_large_scale_moments(seeded):
    # At a scale of 2**24 grid steps (the regime of the covariance releases)
    # the standard deviation is t within 4 standard errors (sd of the sample
    # variance of a Gaussian: sqrt(2 / n) relative).
    t, n = 2**24, 50_000
    draws = discrete_gaussian(t, n).astype(np.float64)
    assert draws.std() / t == pytest.approx(1.0, abs=4 * math.sqrt(0.5 / n))
    assert abs(draws.mean()) / t < 4 / math.sqrt(n)


@pytest.mark.parametrize(
    "law, scale, sensitivity, m",
    [
        ("gaussian", 2.0, 1.0, 4),
        ("gaussian", 0.013, 0.002, 5050),
        ("gaussian", 1e-7, 3e-6, 500_500),
        ("laplace", 6.0, 3.0, 6),
        ("laplace", 1e-3, 2e-4, 5050),
        ("gaussian", 1e5, 1.0, 1),
    ],
)
def test_grid_noise_closed_form(law, scale, sensitivity, m):
    # The grid of grid_noise: g the largest power of two below scale / 2^10
    # and sensitivity / (2^10 s), D = sensitivity / g + s with s = ceil(sqrt
    # m) (L2) or m (L1), t = ceil(D scale / sensitivity (1 + 2^-40)).
    noise = grid_noise(law, scale, sensitivity, m)
    slack = math.isqrt(m - 1) + 1 if law == "gaussian" else m
    bound = min(scale / GRID_REFINEMENT, sensitivity / (GRID_REFINEMENT * slack))
    assert math.log2(noise.step).is_integer()
    assert bound / 2 < noise.step <= bound
    exact = Fraction(sensitivity)
    assert noise.sensitivity == exact / Fraction(noise.step) + slack
    target = noise.sensitivity * Fraction(scale) / exact * (1 + Fraction(1, 2**40))
    assert noise.scale - 1 < target <= noise.scale
    # At least as private as the continuous mechanism it replaces...
    if law == "gaussian":
        assert noise.guarantee <= exact**2 / (2 * Fraction(scale) ** 2)
    else:
        assert noise.guarantee <= exact / Fraction(scale)
    # ... for at most 2^-9 more noise (in standard deviations).
    assert 1 <= noise.scale * noise.step / scale <= 1 + 2**-9


def test_grid_round_trip():
    # Rounding to the grid is exact (halves to even) and so is the way back.
    values = np.array([0.0, 0.3, -0.75, 2.5 * 2**-10, 1e6 + 2**-11])
    ints = to_grid(values, 2**-10)
    assert ints.tolist() == [0, 307, -768, 2, 1024000000 + 0]
    back = from_grid(ints, 2**-10, values.shape)
    assert np.all(np.abs(back - values) <= 2**-11)
    assert np.all(back * 2**10 == np.rint(back * 2**10))
    with pytest.raises(ValueError, match="too large for the noise grid"):
        to_grid(np.array([1e300]), 2**-100)


def test_exponential_index_law(seeded):
    # P(j) = exp(c s_j) / sum exp(c s): chi-square on 30,000 draws.
    scores = np.array([0.0, -1.0, -2.5, -0.25, -6.0])
    c = 0.8
    weights = np.exp(c * scores)
    counts = np.bincount(
        [exponential_index(scores, c) for _ in range(30_000)], minlength=5
    )
    expected = 30_000 * weights / weights.sum()
    assert stats.chisquare(counts, expected).pvalue > 1e-4
    # c = inf: a maximiser.
    assert exponential_index(scores, math.inf) == 0


def test_secure_permutation_and_indices(seeded):
    # Every permutation of 3 items equally likely; indices uniform.
    seen = [tuple(secure_permutation(3)) for _ in range(12_000)]
    counts = [seen.count(p) for p in permutations(range(3))]
    assert stats.chisquare(counts).pvalue > 1e-4
    idx = secure_indices(7, (5000,))
    assert idx.shape == (5000,) and idx.min() >= 0 and idx.max() < 7
    assert stats.chisquare(np.bincount(idx, minlength=7)).pvalue > 1e-4
    assert 0 <= secure_indices(7) < 7


def test_empty_ranges_are_refused():
    with pytest.raises(ValueError, match="at least 1"):
        uniform_below([3, 0])
    with pytest.raises(ValueError, match="at least 1"):
        secure_indices(0, 3)


def test_scale_must_be_positive_integer():
    with pytest.raises(TypeError, match="integer"):
        discrete_gaussian(1.5, 3)
    with pytest.raises(ValueError, match="positive"):
        discrete_laplace(0, 3)
