"""Tests of the validation module (privacy parameters)."""

import math

import numpy as np
import pytest

from dpcov.accounting import ZCDP, PureDP, zcdp_epsilon, zcdp_rho
from dpcov.utils import check_privacy_params, privacy_spent


def test_budget_table():
    assert check_privacy_params(0.5, 0.0) == PureDP(0.5)
    assert check_privacy_params(0.5, 1e-6, rho=0.25) == ZCDP(0.25)
    assert check_privacy_params(1.0, 1e-6) == ZCDP(zcdp_rho(1.0, 1e-6))
    assert check_privacy_params(math.inf, 1e-6) == ZCDP(math.inf)


@pytest.mark.parametrize(
    "epsilon, delta, rho, match",
    [
        (0.0, 1e-6, None, "epsilon"),
        (-1.0, 1e-6, None, "epsilon"),
        (np.nan, 1e-6, None, "epsilon"),
        ("1", 1e-6, None, "epsilon"),
        (True, 1e-6, None, "epsilon"),
        (1.0, -1e-9, None, "delta"),
        (1.0, 1.0, None, "delta"),
        (1.0, np.nan, None, "delta"),
        (1.0, 1e-6, 0.0, "rho"),
        (1.0, 1e-6, -0.5, "rho"),
    ],
)
def test_bad_privacy_params(epsilon, delta, rho, match):
    with pytest.raises(ValueError, match=match):
        check_privacy_params(epsilon, delta, rho)


def test_privacy_spent():
    assert privacy_spent(PureDP(2.0), 1e-6) == (2.0, 0.0, 2.0)
    eps, delta, rho = privacy_spent(ZCDP(0.1), 1e-6)
    assert (eps, delta, rho) == (zcdp_epsilon(0.1, 1e-6), 1e-6, 0.1)
    assert privacy_spent(ZCDP(0.1), 0.0)[0] == math.inf
