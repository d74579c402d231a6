"""Every delta in (0, 1) converts to zCDP, correctly.

Issue 17: ``SeparateCovariance(delta=0.5, data_norm=1.0).fit(X)`` ended
inside SciPy, the root of the conversion not being bracketed.
"""

import math

import numpy as np
import pytest

from dpcov.accounting import ZCDP, zcdp_epsilon, zcdp_rho
from dpcov.covariance import SeparateCovariance
from dpcov.utils import check_privacy_params, check_zcdp_privacy_params


# --- the conversion for every delta in (0, 1) ------------------------------

_EPSILONS = (1e-3, 0.1, 0.15, 1.0, 10.0, 100.0)
_LARGE_DELTAS = (0.2, 0.25, 0.3, 0.49, 0.5, 0.7, 0.9, 0.99, 0.999)


def _cks_on_a_grid(rho, delta):
    # Corollary 13 of Canonne, Kamath and Steinke (2020) in alpha itself,
    # minimised on a fine grid (independent of zcdp_epsilon's search).
    alpha = 1.0 + np.geomspace(1e-9, 1e6, 200_001)
    values = (
        alpha * rho
        + (-math.log(delta) + (alpha - 1) * np.log1p(-1 / alpha) - np.log(alpha))
        / (alpha - 1)
    )
    return max(float(values.min()), 0.0)


@pytest.mark.parametrize("delta", _LARGE_DELTAS)
def test_zcdp_rho_for_large_delta(delta):
    for epsilon in _EPSILONS:
        rho = zcdp_rho(epsilon, delta)
        # The largest rho: it converts to at most epsilon, a little more
        # would not.
        assert 0 < rho and zcdp_epsilon(rho, delta) <= epsilon
        assert zcdp_epsilon(rho * (1 + 1e-9), delta) > epsilon
        assert zcdp_epsilon(rho, delta) == pytest.approx(epsilon, rel=1e-9)
        assert check_privacy_params(epsilon, delta) == ZCDP(rho)
        assert check_zcdp_privacy_params(epsilon, delta) == ZCDP(rho)
    # For large delta the conversion certifies less than rho: the root lies
    # beyond the old bracket (0, epsilon].
    if delta >= 0.25:
        assert zcdp_rho(0.1, delta) > 0.1


@pytest.mark.parametrize("delta", (1e-6, 0.2, 0.5, 0.9, 0.999))
@pytest.mark.parametrize("rho", (1e-3, 0.1, 1.0, 10.0))
def test_zcdp_epsilon_matches_a_grid_for_large_delta(rho, delta):
    assert zcdp_epsilon(rho, delta) == pytest.approx(
        _cks_on_a_grid(rho, delta), rel=1e-6, abs=1e-9
    )


def test_zcdp_epsilon_is_zero_where_the_bound_is_negative():
    # (0, delta)-DP: at delta = 0.5 the infimum is negative for small rho.
    assert _cks_on_a_grid(1e-3, 0.5) == 0.0
    assert zcdp_epsilon(1e-3, 0.5) == 0.0
    assert zcdp_rho(1e-9, 0.5) > 1e-3


@pytest.mark.parametrize("delta", (0.25, 0.5, 0.9, 0.999))
def test_fits_with_large_delta(delta):
    # It used to end inside SciPy ("f(a) and f(b) must have different signs").
    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(100, 3))
    for epsilon in (0.1, 1.0):
        est = SeparateCovariance(
            epsilon=epsilon, delta=delta, data_norm=1.0, random_state=0
        ).fit(X)
        assert est.epsilon_spent_ <= epsilon and est.delta_spent_ == delta
        assert est.guarantee_.rho <= zcdp_rho(epsilon, delta)
