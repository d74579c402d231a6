"""Tests of the calibration and additive modules: noise scales against closed forms."""

import math

import numpy as np
import pytest
from scipy import stats

from dpcov.accounting import ZCDP, PureDP
from dpcov.mechanisms import (
    AdditiveNoise,
    calibrate_additive,
    gaussian_scale,
    laplace_scale,
)


def test_gaussian_scale_closed_form():
    # sigma = Delta / sqrt(2 rho) (Bun & Steinke 2016, Prop. 1.6)
    assert gaussian_scale(1.0, 0.5) == pytest.approx(1.0)
    assert gaussian_scale(math.sqrt(2), 0.1) == pytest.approx(
        math.sqrt(2) / math.sqrt(0.2)
    )
    assert gaussian_scale(3.0, math.inf) == 0.0


def test_laplace_scale_closed_form():
    assert laplace_scale(2.0, 0.5) == pytest.approx(4.0)
    assert laplace_scale(1.0, math.inf) == 0.0


@pytest.mark.parametrize("func", [gaussian_scale, laplace_scale])
@pytest.mark.parametrize(
    "sens, budget", [(-1.0, 1.0), (1.0, 0.0), (1.0, -1.0), (np.nan, 1.0)]
)
def test_scales_reject_bad_input(func, sens, budget):
    with pytest.raises(ValueError):
        func(sens, budget)


def test_calibrate_additive_dispatches_on_budget():
    assert calibrate_additive(ZCDP(2.0), l2_sensitivity=2.0, l1_sensitivity=7.0) == (
        AdditiveNoise("gaussian", 1.0)
    )
    assert calibrate_additive(PureDP(2.0), l2_sensitivity=2.0, l1_sensitivity=7.0) == (
        AdditiveNoise("laplace", 3.5)
    )
    with pytest.raises(TypeError):
        calibrate_additive(0.5, l2_sensitivity=1.0, l1_sensitivity=1.0)


@pytest.mark.parametrize(
    "budget, law, std",
    [(ZCDP(0.125), "gaussian", 2.0), (PureDP(0.5), "laplace", math.sqrt(2) * 2.0)],
)
def test_additive_noise_scale_matches_closed_form(budget, law, std, global_random_seed):
    # l2 = l1 = 1: sigma = 1/sqrt(2 * 0.125) = 2; b = 1/0.5 = 2 (std 2 sqrt 2).
    noise = calibrate_additive(budget, l2_sensitivity=1.0, l1_sensitivity=1.0)
    assert noise.law == law
    assert noise.std == pytest.approx(std)
    rng = np.random.default_rng(global_random_seed)
    value = np.full(200_000, 3.0)
    residual = noise.add(value, rng) - value
    # The sample std of 2e5 draws has relative s.e. sqrt((kurtosis-1)/4N):
    # <= 0.0028 for Laplace; 5 s.e. is 1.4%.
    assert residual.std() == pytest.approx(std, rel=0.014)
    dist = (
        stats.norm(scale=noise.scale)
        if law == "gaussian"
        else stats.laplace(scale=noise.scale)
    )
    assert stats.kstest(residual[:20_000], dist.cdf).pvalue > 1e-4
    assert isinstance(noise.add(1.0, rng), float)
