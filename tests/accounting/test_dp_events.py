"""Guarantees as dp_accounting events: read back by its accountants."""

import math

import numpy as np
import pytest

from dpcov.accounting import (
    ZCDP,
    ApproxDP,
    BudgetAccountant,
    GaussianDP,
    ProfileDP,
    PureDP,
    SelectionDP,
    _dp_events,
    gaussian_mu,
    to_dp_event,
)
from dpcov.covariance import GaussianCovariance, SeparateCovariance
from dpcov.decomposition import PCA
from dpcov.model_selection import PrivateSearchCV


def _rows():
    X = np.random.default_rng(0).uniform(-1.0, 1.0, size=(2000, 4))
    return X / np.linalg.norm(X, axis=1).max()


def test_without_dp_accounting_the_error_says_how_to_install_it(monkeypatch):
    def missing(name):
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(_dp_events.importlib, "import_module", missing)
    with pytest.raises(ImportError, match="pip install dp-accounting"):
        to_dp_event(GaussianDP(1.0))


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
def test_a_gaussian_fit_reads_back_as_its_ask(epsilon):
    # GaussianCovariance with data_norm, asked for (epsilon, 1e-6), composed
    # alone in dp_accounting's PLD accountant under the relation returned:
    # (epsilon, 1e-6) back, at most 1% above (its grid rounds
    # pessimistically; below only by the rounding of the roots).
    dp_accounting = pytest.importorskip("dp_accounting")
    est = GaussianCovariance(
        epsilon=epsilon, delta=1e-6, data_norm=1.0, random_state=0
    ).fit(_rows())
    event, relation = to_dp_event(est.guarantee_)
    assert relation == dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    pld = dp_accounting.pld.PLDAccountant(neighboring_relation=relation)
    theirs = pld.compose(event).get_epsilon(1e-6)
    assert epsilon * (1 - 1e-9) <= theirs <= epsilon * 1.01
    rdp = dp_accounting.rdp.RdpAccountant(neighboring_relation=relation)
    # The RDP accountant reads the same Gaussian, through Renyi divergences:
    # looser, never below the ask.
    assert rdp.compose(event).get_epsilon(1e-6) >= epsilon


def test_a_ledger_of_gaussian_fits_totals_as_dp_accounting():
    # Ten fits of three estimators at three asks, in an accountant without a
    # cap: its exact total and dp_accounting's PLD of the ledger's event
    # agree within 1% at delta = 1e-6.
    dp_accounting = pytest.importorskip("dp_accounting")
    ledger = BudgetAccountant(delta=1e-6)
    X = _rows()
    makers = [
        lambda e: GaussianCovariance(epsilon=e, data_norm=1.0),
        lambda e: SeparateCovariance(epsilon=e, data_norm=1.0),
        lambda e: PCA(2, covariance=GaussianCovariance(), epsilon=e, data_norm=1.0),
    ]
    for i in range(10):
        est = makers[i % 3]((0.5, 1.0, 2.0)[i % 3])
        est.set_params(accountant=ledger, random_state=i).fit(X)
    assert all(isinstance(g, GaussianDP) for _, g in ledger.ledger)
    event, relation = to_dp_event(ledger)
    pld = dp_accounting.pld.PLDAccountant(neighboring_relation=relation)
    theirs = pld.compose(event).get_epsilon(1e-6)
    assert theirs == pytest.approx(ledger.epsilon, rel=0.01)


def test_a_pure_fit_is_randomized_response():
    # Two-bucket randomized response at eps is pure eps-DP exactly: its PLD
    # gives eps at delta = 0, read under REPLACE_ONE.
    dp_accounting = pytest.importorskip("dp_accounting")
    event, relation = to_dp_event(PureDP(0.7))
    assert relation == dp_accounting.NeighboringRelation.REPLACE_ONE
    assert event.num_buckets == 2
    assert event.noise_parameter == pytest.approx(2 / (1 + math.exp(0.7)), rel=1e-15)
    assert event.noise_parameter <= 2 / (1 + math.exp(0.7))
    pld = dp_accounting.pld.PLDAccountant(neighboring_relation=relation)
    assert pld.compose(event).get_epsilon(0.0) == pytest.approx(0.7, rel=1e-3)


def test_zcdp_and_the_edges():
    dp_accounting = pytest.importorskip("dp_accounting")
    event, _ = to_dp_event(ZCDP(0.25))
    assert event == dp_accounting.ZCDpEvent(0.25)
    assert to_dp_event(GaussianDP(0.0))[0] == dp_accounting.NoOpDpEvent()
    assert to_dp_event(GaussianDP(math.inf))[0] == dp_accounting.NonPrivateDpEvent()
    assert to_dp_event(PureDP(math.inf))[0] == dp_accounting.NonPrivateDpEvent()
    with pytest.raises(ValueError, match="no event"):
        to_dp_event(ApproxDP(1.0, 1e-6))
    mixed = BudgetAccountant().spend(PureDP(1.0)).spend(GaussianDP(1.0))
    with pytest.raises(ValueError, match="separate"):
        to_dp_event(mixed)
    with pytest.raises(TypeError, match="BudgetAccountant"):
        to_dp_event(gaussian_mu(1.0, 1e-6))


def _search(**params):
    # A search over data_norm at (1, 1e-6): zCDP runs.
    return PrivateSearchCV(
        SeparateCovariance(data_norm=1.0),
        {"data_norm": [0.1, 1.0]},
        epsilon=1.0,
        delta=1e-6,
        score_norm=1.0,
        random_state=0,
        **params,
    )


@pytest.mark.parametrize("law", ["logarithmic", "geometric", "poisson", 2.0])
def test_a_search_reads_back_as_repeat_and_select(law):
    # A search's guarantee is the best of a random number of zCDP runs:
    # dp_accounting's RDP accountant reads its RepeatAndSelectDpEvent
    # (Papernot and Steinke 2022, the same theorem dpcov's bound uses) and
    # gives the search's epsilon back. Both bound the same Renyi curve and
    # differ only in the orders each minimises over: within 0.1% (measured:
    # 0.01-0.02%).
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.dp_event import RepeatAndSelectDpEvent

    guarantee = _search(n_iter=5, law=law).privacy_cost()
    assert isinstance(guarantee, SelectionDP) and guarantee.run.rho > 0
    event, relation = to_dp_event(guarantee)
    assert isinstance(event, RepeatAndSelectDpEvent)
    assert event.event == dp_accounting.ZCDpEvent(guarantee.run.rho)
    orders = np.concatenate([np.linspace(1.01, 10, 300), np.linspace(10.5, 512, 500)])
    rdp = dp_accounting.rdp.RdpAccountant(orders, neighboring_relation=relation)
    theirs = rdp.compose(event).get_epsilon(1e-6)
    assert theirs == pytest.approx(guarantee.epsilon, rel=1e-3)
    # One run for sure is the run's own event.
    one = SelectionDP(1.0, 1e-6, ZCDP(0.02), 1.0, 0.0)
    assert to_dp_event(one)[0] == dp_accounting.ZCDpEvent(0.02)


def test_a_ledger_with_a_search_is_one_event():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.dp_event import RepeatAndSelectDpEvent

    accountant = BudgetAccountant()
    search = _search(accountant=accountant).fit(_rows())
    GaussianCovariance(epsilon=1.0, data_norm=1.0, accountant=accountant).fit(_rows())
    event, relation = to_dp_event(accountant)
    assert relation == dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    first, second = event.events
    assert isinstance(first, RepeatAndSelectDpEvent)
    assert first.event == dp_accounting.ZCDpEvent(search.run_budget_.rho)
    assert isinstance(second, dp_accounting.GaussianDpEvent)


def test_a_profile_reads_as_its_zcdp_bound():
    # AdaptiveCovariance at its defaults (a private radius, a threshold
    # search and Gaussian steps) records a ProfileDP: dp_accounting has no
    # bounded-range event and reads Gaussian and randomized-response events
    # under different relations, so the event is its zCDP bound, for the RDP
    # accountant; looser than the composed curve, never below it.
    dp_accounting = pytest.importorskip("dp_accounting")
    from dpcov.covariance import AdaptiveCovariance

    X = np.random.default_rng(0).uniform(-1.0, 1.0, size=(20_000, 4))
    est = AdaptiveCovariance(epsilon=1.0, delta=1e-6, random_state=0).fit(X)
    assert isinstance(est.guarantee_, ProfileDP)
    event, relation = to_dp_event(est.guarantee_)
    assert event == dp_accounting.ZCDpEvent(est.guarantee_.to_zcdp().rho)
    rdp = dp_accounting.rdp.RdpAccountant(neighboring_relation=relation)
    assert rdp.compose(event).get_epsilon(1e-6) >= est.epsilon_spent_
