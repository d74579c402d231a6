"""The released count of units under add/remove neighbours."""

import math

import numpy as np
import pytest

from dpcov.accounting import ZCDP, PureDP
from dpcov.utils._gram._units import CountedRows, UnitRows
from dpcov.utils._private_count import (
    COUNT_SHARE,
    release_count,
    split_count,
)
from tests._privacy_checks import recorded_releases


def test_the_count_takes_its_share_and_the_rest_the_remainder():
    count, rest = split_count(ZCDP(0.8))
    assert count.rho == pytest.approx(COUNT_SHARE * 0.8)
    assert rest.rho == pytest.approx((1 - COUNT_SHARE) * 0.8)
    count, rest = split_count(PureDP(2.0))
    assert count.epsilon + rest.epsilon <= 2.0


def test_the_count_is_released_with_sensitivity_one_rounded_and_at_least_one():
    # Gaussian noise of s.d. 1 / sqrt(2 rho) on the exact count (the closed
    # form at sensitivity 1), rounded; a count far below 1 comes back as 1.
    X = np.zeros((50, 2))
    with recorded_releases() as releases:
        wrapped, count = release_count(X, ZCDP(0.5), np.random.default_rng(0))
    (release,) = releases
    assert release.value == 50 and release.scale == pytest.approx(1.0)
    assert count == max(round(float(release.noisy)), 1)
    assert isinstance(wrapped, CountedRows) and wrapped.shape == (count, 2)
    _, tiny = release_count(np.zeros((1, 2)), ZCDP(1e-8), np.random.default_rng(1))
    assert tiny >= 1
    # Persons: the count is of persons, and UnitRows reports it.
    units = UnitRows(X, np.arange(50), np.array([0, 20, 50]))
    with recorded_releases() as releases:
        wrapped, count = release_count(units, ZCDP(0.5), np.random.default_rng(2))
    assert releases[0].value == 2 and wrapped.shape == (count, 2)
    assert math.isclose(releases[0].scale, 1.0)
