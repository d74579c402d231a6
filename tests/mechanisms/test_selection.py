"""The law of the number of runs of a private selection, and its guarantees."""

import math

import numpy as np
import pytest
from scipy import stats

import dpcov
from dpcov.accounting import ZCDP, ApproxDP, PureDP, zcdp_epsilon
from dpcov.exceptions import NoHardenedSampler
from dpcov.mechanisms import (
    _discrete,
    draw_run_count,
    run_count_law,
    run_count_pmf,
    selection_guarantee,
    selection_run_budget,
)
from dpcov.mechanisms._selection import _rdp_epsilon, _selection_rdp, _tnb_mean

LAWS = ["logarithmic", "geometric", 2.0, 0.5, "poisson"]


@pytest.mark.parametrize("law", LAWS)
@pytest.mark.parametrize("mean", [1.5, 10.0])
def test_pmf_sums_to_one_with_the_asked_mean(law, mean):
    k = np.arange(0, 20_000)
    p = run_count_pmf(k, mean, law)
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    assert (p * k).sum() == pytest.approx(mean, rel=1e-8)
    if law != "poisson":
        assert p[0] == 0.0  # a truncated law always runs at least once


def test_pmf_closed_forms():
    # Papernot and Steinke (2022), Definition 1: the geometric law
    # gamma (1 - gamma)^(k-1), the logarithmic law (1 - gamma)^k / (k
    # log(1/gamma)), and the negative binomial of shape 2 conditioned on k >= 1:
    # (k + 1) gamma^2 (1 - gamma)^k / (1 - gamma^2).
    k = np.arange(1, 8)
    _, g = run_count_law(4.0, "geometric")
    assert g == 0.25
    np.testing.assert_allclose(
        run_count_pmf(k, 4.0, "geometric"), g * (1 - g) ** (k - 1)
    )
    _, g = run_count_law(4.0, "logarithmic")
    np.testing.assert_allclose(
        run_count_pmf(k, 4.0, "logarithmic"), (1 - g) ** k / (k * math.log(1 / g))
    )
    _, g = run_count_law(4.0, 2.0)
    np.testing.assert_allclose(
        run_count_pmf(k, 4.0, 2.0), (k + 1) * g**2 * (1 - g) ** k / (1 - g**2)
    )


@pytest.mark.parametrize("law", LAWS)
def test_draws_follow_the_pmf(law):
    # Chi-square goodness of fit of 20,000 draws, cells k = 0..9 and k >= 10.
    # Under a correct sampler the p-value is uniform: p < 1e-4 has probability
    # 1e-4 per law (fixed seed, so the test is deterministic anyway).
    rng = np.random.default_rng(12)
    draws = np.array([draw_run_count(rng, 5.0, law) for _ in range(20_000)])
    counts = np.bincount(np.minimum(draws, 10), minlength=11)
    p = run_count_pmf(np.arange(10), 5.0, law)
    p = np.append(p, 1.0 - p.sum())
    keep = p > 0
    assert counts[~keep].sum() == 0
    _, p_value = stats.chisquare(counts[keep], p[keep] * draws.size)
    assert p_value > 1e-4


@pytest.mark.parametrize(
    ("law", "factor"), [("logarithmic", 2), ("geometric", 3), (2.0, 4)]
)
def test_pure_selection_costs_two_plus_eta_epsilon(law, factor):
    # Liu and Talwar (2019), Theorem 3.4 (geometric: 3 eps); Papernot and
    # Steinke (2022), Theorem 2 with every order to infinity: (2 + eta) eps.
    assert selection_guarantee(PureDP(0.1), mean=10, law=law) == PureDP(0.1 * factor)
    assert selection_run_budget(0.3, 0.0, mean=10, law=law).epsilon == pytest.approx(
        0.3 / factor, rel=1e-15
    )
    # One run for sure costs one run.
    assert selection_guarantee(PureDP(0.1), mean=1, law=law) == PureDP(0.1)


def test_zcdp_selection_curve_closed_form():
    # Theorem 2 of Papernot and Steinke (2022) for a rho-zCDP run
    # (eps(l) = rho l) at order l, written out by hand with the inner minimum
    # at lh = sqrt(log(1/gamma)/rho).
    rho, mean = 0.01, 10.0
    for law in ["logarithmic", "geometric", 2.0]:
        eta, gamma = run_count_law(mean, law)
        log_inv_gamma = math.log(1 / gamma)
        lh = math.sqrt(log_inv_gamma / rho)
        inner = (1 - 1 / lh) * rho * lh + log_inv_gamma / lh
        for order in [1.5, 4.0, 30.0]:
            expected = rho * order + (1 + eta) * inner + math.log(mean) / (order - 1)
            got = _selection_rdp(rho, eta, gamma, mean)(order)
            assert got == pytest.approx(expected, rel=1e-6)


def test_zcdp_conversion_matches_the_single_run_at_one_run():
    # The Renyi curve of one rho-zCDP run converts as zcdp_epsilon does.
    guarantee = selection_guarantee(ZCDP(0.01), mean=1, delta=1e-6)
    assert guarantee.epsilon == pytest.approx(zcdp_epsilon(0.01, 1e-6), rel=1e-9)
    assert _rdp_epsilon(lambda o: 0.05 * o, 1e-5) == pytest.approx(
        zcdp_epsilon(0.05, 1e-5), rel=1e-9
    )


@pytest.mark.parametrize(
    ("law", "rho"),
    [
        ("logarithmic", 0.00892374595111392),
        ("geometric", 0.006177858152983577),
        (2.0, 0.0047350400393358655),
        ("poisson", 0.005388237620323768),
    ],
)
def test_run_budget_inverts_the_guarantee(law, rho):
    # These rhos are what this module computes for (1, 1e-6) and a mean of 10
    # runs. An independent implementation of the same theorems (Google's
    # dp_accounting 0.4, RepeatAndSelectDpEvent on a Gaussian mechanism of
    # the same rho, with its own grid of 900 orders) certifies epsilon
    # 1.000016 to 1.000027 for them: a coarser grid of orders gives a slightly
    # larger epsilon, so agreement within 1e-4 is what the two can show.
    budget = selection_run_budget(1.0, 1e-6, mean=10, law=law)
    assert budget.rho == pytest.approx(rho, rel=1e-6)
    spent = selection_guarantee(budget, mean=10, law=law, delta=1e-6)
    assert isinstance(spent, ApproxDP)
    assert spent.epsilon <= 1.0
    assert spent.epsilon == pytest.approx(1.0, abs=1e-9)


def test_more_runs_cost_more():
    costs = [
        selection_guarantee(ZCDP(0.01), mean=m, delta=1e-6).epsilon
        for m in [1, 2, 10, 100]
    ]
    assert costs == sorted(costs)
    # ... by a logarithm: 100 runs on average cost far less than 100 runs.
    assert costs[-1] < 3 * costs[0]


def test_refusals():
    with pytest.raises(ValueError, match="delta > 0"):
        selection_guarantee(ZCDP(0.01), mean=10)
    with pytest.raises(ValueError, match="delta > 0"):
        selection_run_budget(1.0, 0.0, mean=10, law="poisson")
    with pytest.raises(TypeError, match="Renyi"):
        selection_guarantee(ApproxDP(1.0, 1e-6), mean=10, delta=1e-6)
    with pytest.raises(ValueError, match="at least 1"):
        run_count_law(0.5, "geometric")
    # Theorem 6 of Papernot and Steinke (2022) fails below a mean of 1 (its
    # log(mean) term turns negative): refused for the Poisson law too.
    with pytest.raises(ValueError, match="at least 1"):
        run_count_law(0.5, "poisson")
    with pytest.raises(ValueError, match="law must be"):
        run_count_law(2.0, "uniform")


class _NoSource:
    # Stands in for the CSPRNG (and for numpy's generator): any draw fails.
    def __getattr__(self, name):
        raise AssertionError(f"a random draw ({name}) was made")


@pytest.mark.parametrize("mean", [10.0, 1.0])
def test_general_shape_refuses_under_secure_noise(monkeypatch, mean):
    # Only the logarithmic, geometric and Poisson laws have exact samplers;
    # any other shape is refused before a single draw, whatever the mean
    # (even a mean of 1, one run for sure), and the message names the laws
    # that work.
    monkeypatch.setattr(_discrete, "_source", _NoSource())
    with dpcov.config_context(secure_noise=True):
        with pytest.raises(NoHardenedSampler, match='law="logarithmic", "geometric"'):
            draw_run_count(_NoSource(), mean, 2.5)


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("gamma", [0.001, 0.1, 0.9, 1 - 1e-6, 1 - 1e-12, 1 - 2**-52])
def test_the_law_mean_is_an_upper_bound(gamma, shape):
    # The truncated negative binomial's mean, which the selection's bound
    # and its dp_accounting event read (a larger mean is a weaker claim),
    # against 50 digits: never below, and within 1e-14 (its formula's
    # roundings and the upward rounding). Near gamma = 1 the old 1/gamma - 1
    # cancelled, and read means below the law's, even below 1.
    from decimal import Decimal, localcontext

    with localcontext() as context:
        context.prec = 50
        g, eta = Decimal(gamma), Decimal(shape)
        if shape == 0:
            exact = (1 - g) / g / -g.ln()
        else:
            exact = eta * (1 - g) / (g * (1 - (eta * g.ln()).exp()))
    mean = _tnb_mean(gamma, shape)
    assert Decimal(mean) >= exact
    assert float(Decimal(mean) / exact - 1) < 1e-14


def test_a_mean_just_above_one_is_a_law():
    guarantee = selection_guarantee(ZCDP(0.01), mean=1 + 1e-10, delta=1e-6)
    assert guarantee.mean >= 1 + 1e-10
