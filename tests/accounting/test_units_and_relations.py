"""A guarantee names whom it protects and under which neighbouring relation."""

import math
import warnings

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
)
from dpcov.accounting._composition import compose_fits
from dpcov.cli._ledger import _guarantee_from_json
from dpcov.cli._report import to_json
from dpcov.covariance import GaussianCovariance
from dpcov.pipeline import PrivatePipeline
from dpcov.preprocessing import StandardScaler

PERSON = {"unit": "person", "relation": "add_remove"}


def test_the_default_labels_are_silent_and_others_are_stated():
    assert repr(ZCDP(0.5)) == "ZCDP(rho=0.5)"
    assert repr(PureDP(1.0, **PERSON)) == (
        "PureDP(epsilon=1.0, unit='person', relation='add_remove')"
    )
    # Part of the statement: other labels, another guarantee.
    assert ZCDP(0.5) != ZCDP(0.5, unit="person")
    with pytest.raises(ValueError, match="unit must be"):
        ZCDP(0.5, unit="household")
    with pytest.raises(ValueError, match="relation must be"):
        PureDP(1.0, relation="swap")


def test_conversions_and_splits_keep_the_labels():
    pure = PureDP(1.0, **PERSON)
    for derived in (
        pure.to_zcdp(),
        pure.to_approx_dp(1e-6),
        pure.fraction(0.5),
        ZCDP(0.5, **PERSON).to_approx_dp(1e-6),
        *split_budget(ZCDP(0.8, **PERSON), {"a": 0.25, "b": 0.75}).values(),
    ):
        assert (derived.unit, derived.relation) == ("person", "add_remove")


def test_add_remove_implies_replace_at_the_cost_of_two_steps():
    # Group privacy for two: 2 epsilon, 4 rho, (2 epsilon, (1 + e^eps) delta)
    # (delta rounded up, never below the exact value); a replace-one
    # guarantee is its own.
    assert PureDP(0.7, relation="add_remove").under_replacement() == PureDP(1.4)
    assert ZCDP(0.3, **PERSON).under_replacement() == ZCDP(1.2, unit="person")
    approx = ApproxDP(1.0, 1e-6, relation="add_remove").under_replacement()
    assert approx.epsilon == 2.0 and approx.relation == "replace"
    assert approx.delta >= (1 + math.e) * 1e-6
    assert approx.delta == pytest.approx((1 + math.e) * 1e-6, rel=1e-14)
    replace = ZCDP(0.3)
    assert replace.under_replacement() is replace


def test_compose_keeps_one_unit_and_relation_and_refuses_two():
    total = compose([ZCDP(0.25, **PERSON), PureDP(1.0, **PERSON)])
    assert total == ZCDP(0.75, **PERSON)
    with pytest.raises(ValueError, match="different units or neighbouring"):
        compose([ZCDP(0.25), ZCDP(0.25, relation="add_remove")])
    # The conversion makes them composable, at its cost.
    both = compose([ZCDP(0.25), ZCDP(0.25, relation="add_remove").under_replacement()])
    assert both == ZCDP(1.25)
    # dpcov's fits together: read as row-level replace-one at their budgets.
    assert compose_fits([ZCDP(0.25), ZCDP(0.25, **PERSON)]) == ZCDP(0.5)


def test_an_accountant_reads_a_guarantee_s_own_labels():
    ledger = BudgetAccountant(rho=1.0, unit="person", relation="add_remove")
    ledger.spend(ZCDP(0.25, **PERSON), label="fit")
    assert ledger.units == ["person"] and ledger.relations == ["add_remove"]
    assert ledger.ledger == [("fit", ZCDP(0.25, **PERSON))]
    assert ledger.total() == ZCDP(0.25, **PERSON)
    assert ledger.remaining() == ZCDP(0.75, **PERSON)
    # Given labels that contradict the guarantee's own: refused.
    with pytest.raises(ValueError, match="states unit='person'"):
        BudgetAccountant().spend(ZCDP(0.1, **PERSON), unit="row")
    # A default ledger adds them as row-level replace-one totals.
    rows = BudgetAccountant().spend(ZCDP(0.1, **PERSON)).spend(ZCDP(0.2))
    assert rows.total() == ZCDP(0.1 + 0.2)


def test_a_fit_s_guarantee_names_its_unit_and_relation():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(600, 3))
    groups = rng.integers(0, 200, 600)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = GaussianCovariance(
            bounds=(-1, 1), max_rows_per_group=4, neighbours="add_remove", rho=0.5
        ).fit(X, groups=groups)
        rows = GaussianCovariance(bounds=(-1, 1), rho=0.5).fit(X)
        pipe = PrivatePipeline(
            [("scale", StandardScaler(bounds=(-1, 1)))],
            rho=0.5,
            max_rows_per_group=4,
        ).fit(X, groups=groups)
    assert fit.guarantee_ == ZCDP(0.5, **PERSON)
    assert rows.guarantee_ == ZCDP(0.5)
    assert (pipe.guarantee_.unit, pipe.guarantee_.relation) == ("person", "replace")
    # An accountant records it as it says.
    ledger = BudgetAccountant(unit="person", relation="add_remove")
    ledger.spend(fit.guarantee_)
    assert ledger.relations == ["add_remove"]


def test_the_ledger_file_keeps_the_labels():
    search = SelectionDP(1.0, 1e-6, ZCDP(0.01), 10.0, math.inf, **PERSON)
    for guarantee in (
        ZCDP(0.5),
        ApproxDP(1.0, 1e-6, **PERSON),
        PureDP(2.0, **PERSON),
        search,
    ):
        assert _guarantee_from_json(to_json(guarantee)) == guarantee
    assert to_json(ZCDP(0.5)) == {"notion": "zCDP", "rho": 0.5}


def test_the_conversion_of_a_huge_epsilon_does_not_overflow():
    converted = ApproxDP(800.0, 1e-9, relation="add_remove").under_replacement()
    assert converted == ApproxDP(1600.0, 1.0)
    assert ApproxDP(800.0, 0.0, relation="add_remove").under_replacement().delta == 0
