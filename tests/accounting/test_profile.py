"""ProfileDP: Gaussian, pure and bounded-range parts composed, and ledgers of them."""

import math
from fractions import Fraction

import numpy as np
import pytest

from dpcov.accounting import (
    ZCDP,
    ApproxDP,
    BudgetAccountant,
    GaussianDP,
    ProfileDP,
    PureDP,
    compose,
    gaussian_epsilon,
    zcdp_epsilon,
)
from dpcov.accounting._exact_curve import composed_loss
from dpcov.cli._ledger import _guarantee_from_json
from dpcov.cli._report import to_json
from dpcov.covariance import GaussianCovariance


def test_zcdp_is_the_exact_sum_of_the_parts_rounded_up():
    # mu**2/2 + eps**2/2 (pure) + eps**2/8 (bounded range: Cesar and Rogers
    # 2021), summed exactly, never below.
    g = ProfileDP(0.3, pure=(0.1,), bounded_range=(0.7, 0.2))
    exact = (
        Fraction(0.3) ** 2 / 2
        + Fraction(0.1) ** 2 / 2
        + (Fraction(0.7) ** 2 + Fraction(0.2) ** 2) / 8
    )
    rho = g.to_zcdp().rho
    assert Fraction(rho) >= exact
    assert Fraction(math.nextafter(rho, 0.0)) < exact


def test_the_curve_lies_between_its_gaussian_part_and_zcdp():
    # Adding steps only adds privacy loss: the profile's epsilon is at least
    # its Gaussian part's (the analytic curve), and at most the zCDP
    # conversion of its rho, which also holds for it.
    g = ProfileDP(0.25, bounded_range=(0.1,))
    epsilon = g.to_approx_dp(1e-6).epsilon
    assert gaussian_epsilon(0.25, 1e-6) < epsilon
    assert epsilon <= zcdp_epsilon(g.to_zcdp().rho, 1e-6)
    # ... and is the smallest at which the composed loss's delta is 1e-6.
    loss = composed_loss(0.25, (), (0.1,))
    assert loss.delta(epsilon) <= 1e-6 < loss.delta(epsilon * (1 - 1e-6))


def test_composition_keeps_every_part():
    profile = ProfileDP(0.3, bounded_range=(0.1,))
    total = compose([profile, GaussianDP(0.4), PureDP(0.2)])
    assert (total.pure, total.bounded_range) == ((0.2,), (0.1,))
    # The Gaussian parts' mu: sqrt(0.3**2 + 0.4**2), rounded up.
    assert total.mu == pytest.approx(0.5, rel=1e-15)
    assert Fraction(total.mu) ** 2 >= Fraction(0.3) ** 2 + Fraction(0.4) ** 2
    assert compose([profile, ZCDP(0.1)]) == ZCDP(profile.to_zcdp().rho + 0.1)
    with pytest.raises(ValueError, match="approximate"):
        compose([profile, ApproxDP(1.0, 1e-6)])
    # Group privacy for two (an add/remove guarantee under replacement):
    # every part at twice its parameter.
    doubled = ProfileDP(0.3, (0.1,), (0.2,), relation="add_remove").under_replacement()
    assert doubled == ProfileDP(0.6, (0.2,), (0.4,))


def test_a_ledger_reads_profiles_on_their_composed_curve():
    ledger = BudgetAccountant(delta=1e-6)
    ledger.spend(ProfileDP(0.3, bounded_range=(0.1,))).spend(GaussianDP(0.2))
    composed = ProfileDP(math.hypot(0.3, 0.2), bounded_range=(0.1,))
    assert ledger.epsilon == pytest.approx(
        composed.to_approx_dp(1e-6).epsilon, rel=1e-12
    )
    assert ledger.epsilon < zcdp_epsilon(ledger.rho, 1e-6)
    # Beyond four discrete parts the convolution is not run: zCDP.
    for _ in range(4):
        ledger.spend(ProfileDP(0.1, bounded_range=(0.1,)))
    assert ledger.epsilon == zcdp_epsilon(ledger.rho, 1e-6)


def test_a_ledger_of_fits_with_other_units_or_relations():
    # Each fit read under the ledger's unit and relation (as in zCDP): a
    # Gaussian fit under add/remove beside one under replacement.
    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(1000, 3))
    ledger = BudgetAccountant(delta=1e-6)
    for neighbours in ("replace", "add_remove"):
        GaussianCovariance(
            data_norm=1.0, neighbours=neighbours, accountant=ledger, random_state=0
        ).fit(X)
    mus = [g.mu for _, g in ledger.ledger]
    assert ledger.epsilon == pytest.approx(
        gaussian_epsilon(math.hypot(*mus), 1e-6), rel=1e-12
    )


@pytest.mark.parametrize(
    "guarantee",
    [
        ProfileDP(0.3, (0.1,), (0.2, math.inf), unit="person"),
        GaussianDP(0.5, relation="add_remove"),
    ],
)
def test_the_cli_ledger_reads_back_what_it_wrote(guarantee):
    assert _guarantee_from_json(to_json(guarantee)) == guarantee
