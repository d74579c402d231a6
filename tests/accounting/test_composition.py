import math
from fractions import Fraction

import numpy as np
import pytest

from dpcov.accounting import (
    ZCDP,
    ApproxDP,
    BudgetAccountant,
    PureDP,
    SelectionDP,
    compose,
    split_budget,
    zcdp_epsilon,
    zcdp_rho,
)

# eps(rho, delta) of Canonne-Kamath-Steinke (2020), Corollary 13, computed
# independently with mpmath (40 digits): minimise over alpha > 1 of
# alpha rho + (log(1/delta) + (alpha - 1) log(1 - 1/alpha) - log(alpha)) / (alpha - 1).
CKS_ORACLE = [
    (0.1, 1e-6, 2.14193892838547),
    (0.5, 1e-5, 4.72838698494331),
    (1.0, 1e-10, 10.0343435813476),
    (0.01, 1e-6, 0.621692654559603),
    (0.5, 1e-6, 5.22153444453017),
]


@pytest.mark.parametrize("rho, delta, expected", CKS_ORACLE)
def test_zcdp_epsilon_oracle(rho, delta, expected):
    assert zcdp_epsilon(rho, delta) == pytest.approx(expected, rel=1e-10)
    # Never worse than the classical rho + 2 sqrt(rho log(1/delta)) (Bun-Steinke).
    assert zcdp_epsilon(rho, delta) <= rho + 2 * math.sqrt(rho * math.log(1 / delta))


# Largest rho with eps(rho, delta) <= target, solved independently at 60 digits
# (second derivation by a separate session; agrees with an mpmath root-find).
RHO_ORACLE = [
    (1.0, 1e-6, 0.0243559703595384),
    (0.5, 1e-5, 0.00850553059118191),
    (2.0, 1e-10, 0.0499868499726444),
]


@pytest.mark.parametrize("epsilon, delta, expected", RHO_ORACLE)
def test_zcdp_rho_oracle(epsilon, delta, expected):
    assert zcdp_rho(epsilon, delta) == pytest.approx(expected, rel=1e-10)


def test_zcdp_epsilon_clamped_at_zero():
    # For large delta the formula goes negative (-0.356 at rho=1e-4, delta=0.3).
    assert zcdp_epsilon(1e-4, 0.3) == 0.0


@pytest.mark.parametrize("rho, delta, expected", CKS_ORACLE)
def test_zcdp_rho_inverts(rho, delta, expected):
    found = zcdp_rho(expected, delta)
    assert found == pytest.approx(rho, rel=1e-9)
    assert zcdp_epsilon(found, delta) <= expected  # never overshoots


def test_zcdp_epsilon_edge_cases():
    assert zcdp_epsilon(0.0, 1e-6) == 0.0
    assert zcdp_epsilon(0.5, 0.0) == math.inf
    assert zcdp_epsilon(math.inf, 1e-6) == math.inf
    assert zcdp_rho(math.inf, 1e-6) == math.inf
    with pytest.raises(ValueError):
        zcdp_epsilon(0.5, 1.0)
    with pytest.raises(ValueError):
        zcdp_rho(1.0, 0.0)
    with pytest.raises(ValueError):
        zcdp_epsilon(-0.1, 1e-6)


def test_zcdp_epsilon_monotone():
    rhos = np.geomspace(1e-4, 10, 30)
    eps = [zcdp_epsilon(r, 1e-6) for r in rhos]
    assert np.all(np.diff(eps) > 0)
    deltas = np.geomspace(1e-12, 1e-2, 20)
    eps = [zcdp_epsilon(0.3, d) for d in deltas]
    assert np.all(np.diff(eps) < 0)


def test_pure_to_zcdp_and_back():
    # eps-DP implies eps^2/2-zCDP (Bun-Steinke Prop. 1.4).
    assert PureDP(1.0).to_zcdp() == ZCDP(0.5)
    assert PureDP(0.3).pure_epsilon() == 0.3
    assert ZCDP(0.125).pure_epsilon() == pytest.approx(0.5)
    assert PureDP(2.0).to_approx_dp() == ApproxDP(2.0, 0.0)
    # Through zCDP a pure guarantee can give a smaller epsilon at delta > 0.
    via = PureDP(0.5).to_approx_dp(1e-6)
    assert via.epsilon == min(0.5, zcdp_epsilon(0.125, 1e-6))
    assert ZCDP(0.5).to_approx_dp(1e-6) == ApproxDP(zcdp_epsilon(0.5, 1e-6), 1e-6)


def test_compose():
    assert compose([PureDP(0.5), PureDP(0.25)]) == PureDP(0.75)
    assert compose([ZCDP(0.1), ZCDP(0.2)]).rho == pytest.approx(0.3)
    assert compose([PureDP(1.0), ZCDP(0.25)]) == ZCDP(0.75)
    assert compose([ApproxDP(0.5, 1e-6), PureDP(0.5)]) == ApproxDP(1.0, 1e-6)
    assert compose([ApproxDP(0.5, 0.7), ApproxDP(0.5, 0.7)]).delta == 1.0
    with pytest.raises(ValueError, match="convert"):
        compose([ZCDP(0.1), ApproxDP(0.5, 1e-6)])
    with pytest.raises(ValueError):
        compose([])
    with pytest.raises(TypeError):
        compose([0.5])


def test_split_budget():
    split = split_budget(ZCDP(0.8), {"a": 0.25, "b": 0.75})
    # 0.8 * 0.75 rounds up: 0.2 + 0.6000000000000001 is 0.8 plus half an ulp
    # (exactly), so the largest part gives up one ulp.
    assert split == {"a": ZCDP(0.2), "b": ZCDP(math.nextafter(0.8 * 0.75, 0.0))}
    assert Fraction(0.2) + Fraction(0.8 * 0.75) > Fraction(0.8)
    assert compose(split.values()).rho == 0.8
    assert split_budget(PureDP(1.0), {"a": 0.5, "b": 0.5}) == {
        "a": PureDP(0.5),
        "b": PureDP(0.5),
    }
    with pytest.raises(ValueError):
        split_budget(ZCDP(1.0), {"a": 0.5, "b": 0.6})
    with pytest.raises(ValueError):
        split_budget(ZCDP(1.0), {"a": -0.5, "b": 1.5})
    with pytest.raises(TypeError):
        split_budget(ApproxDP(1.0, 1e-6), {"a": 1.0})


@pytest.mark.parametrize("bad", [-1.0, np.nan, "1", True])
def test_guarantees_validate(bad):
    with pytest.raises(ValueError):
        PureDP(bad)
    with pytest.raises(ValueError):
        ZCDP(bad)
    with pytest.raises(ValueError):
        ApproxDP(1.0, bad)


def test_a_selection_composes_as_its_epsilon_and_delta():
    # A search's guarantee carries its run and law; with other guarantees it
    # composes as the (epsilon, delta) guarantee it is, and alone it is
    # itself (its run and law kept).
    search = SelectionDP(1.0, 1e-6, ZCDP(0.01), 10.0, 0.0)
    assert isinstance(search, ApproxDP)
    assert compose([search]) is search
    assert compose([search, ApproxDP(0.5, 1e-6)]) == ApproxDP(1.5, 2e-6)
    assert compose([search, PureDP(0.5)]) == ApproxDP(1.5, 1e-6)
    with pytest.raises(ValueError, match="approximate"):
        compose([search, ZCDP(0.1)])
    accountant = BudgetAccountant().spend(search).spend(ApproxDP(0.5, 0.0))
    assert accountant.total() == ApproxDP(1.5, 1e-6)
    assert search._parameters() == (1.0, 1e-6)
    assert search.under_replacement() is search
    assert "run=ZCDP(rho=0.01)" in repr(search)


@pytest.mark.parametrize(
    "run, mean, shape, error",
    [
        (ApproxDP(1.0, 1e-6), 10.0, 0.0, TypeError),
        (ZCDP(0.01), 0.5, 0.0, ValueError),
        (ZCDP(0.01), math.inf, 0.0, ValueError),
        (ZCDP(0.01), 10.0, -1.0, ValueError),
        (ZCDP(0.01), 10.0, math.nan, ValueError),
    ],
)
def test_a_selection_needs_a_renyi_run_and_a_law(run, mean, shape, error):
    with pytest.raises(error):
        SelectionDP(1.0, 1e-6, run, mean, shape)
