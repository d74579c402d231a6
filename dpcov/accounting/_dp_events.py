"""Guarantees as events of Google's dp_accounting, for its accountants.

dp_accounting (``pip install dp-accounting``, or dpcov's ``accounting``
extra) composes privacy events in its privacy loss distribution (PLD) and
Renyi (RDP) accountants. :func:`to_dp_event` turns a dpcov guarantee, a
fitted estimator's ``guarantee_`` or a whole
:class:`~dpcov.accounting.BudgetAccountant` ledger into the event those
accountants read as it, with the neighbouring relation to read it under.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import importlib
import math

from ._accountant import BudgetAccountant
from ._guarantees import ZCDP, ApproxDP, GaussianDP, ProfileDP, PureDP, SelectionDP


def _dp_accounting():
    # dp_accounting, imported when first asked for (an optional dependency,
    # the "accounting" extra, that takes most of a second to import).
    try:
        return importlib.import_module("dp_accounting")
    except ImportError as error:
        raise ImportError(
            "to_dp_event needs Google's dp_accounting: pip install dp-accounting "
            "(or dpcov's accounting extra, pip install 'dpcov[accounting]')."
        ) from error


def to_dp_event(guarantee):
    """The dp_accounting event that reads as ``guarantee``, and its relation.

    ==================  ================================  =====================
    guarantee           event                             read under
    ==================  ================================  =====================
    ``GaussianDP(mu)``  ``GaussianDpEvent(1 / mu)``       ``ADD_OR_REMOVE_ONE``
    ``ZCDP(rho)``       ``ZCDpEvent(rho)`` (RDP only)     ``ADD_OR_REMOVE_ONE``
    ``PureDP(eps)``     ``RandomizedResponseDpEvent(p,    ``REPLACE_ONE``
                        2)``, ``p = 2 / (1 + e**eps)``
    ``SelectionDP``     ``RepeatAndSelectDpEvent(run's    the run's
                        event, mean, shape)`` (RDP only)
    ``ProfileDP``       its ``to_zcdp()``'s (RDP only)    ``ADD_OR_REMOVE_ONE``
    ==================  ================================  =====================

    dp_accounting's Gaussian event has sensitivity 1 in units of its noise
    under ``ADD_OR_REMOVE_ONE`` (in its PLD and RDP accountants alike; its
    PLD accountant doubles the sensitivity under ``REPLACE_ONE``, its RDP
    accountant does not), so noise multiplier ``1 / mu`` reads as
    ``mu``-GDP. Randomized response on two buckets is the worst pure
    ``eps``-DP mechanism (the dominating pair of pure DP, Kairouz, Oh and
    Viswanath 2015), which dp_accounting reads under ``REPLACE_ONE`` only. A
    search's guarantee (the best of a random number of runs, Papernot and
    Steinke 2022) is its run's event repeated and selected under its law,
    which dp_accounting's RDP accountant reads (one run for sure: the run's
    event). A profile (Gaussian steps with pure-DP and bounded-range ones)
    has no event of its own: its Gaussian part and its randomized responses
    are read under different relations, and there is no bounded-range event;
    it is given as its zCDP bound, looser than its composed curve.
    The relation returned is the one dp_accounting must be given to read the
    event's numbers as the guarantee's; the guarantee holds under its own
    ``relation`` (compose only guarantees that share one). (epsilon,
    delta)-only guarantees have no event in dp_accounting.

    Parameters
    ----------
    guarantee : PureDP, ZCDP, GaussianDP, ProfileDP, SelectionDP or BudgetAccountant
        A guarantee (a fitted estimator's or search's ``guarantee_``), or an
        accountant, whose ledger becomes a ``ComposedDpEvent`` of its fits.

    Returns
    -------
    event : dp_accounting.DpEvent
        The event.
    relation : dp_accounting.NeighboringRelation
        The ``neighboring_relation`` of the dp_accounting accountant that
        reads it.

    Raises
    ------
    ImportError
        If dp_accounting is not installed.
    ValueError
        For an (epsilon, delta)-only guarantee, or a ledger whose fits
        dp_accounting reads under different relations (pure fits with
        Gaussian or zCDP ones: compose them in separate accountants).

    Examples
    --------
    >>> from dpcov.accounting import GaussianDP, gaussian_mu, to_dp_event
    >>> guarantee = GaussianDP(gaussian_mu(1.0, 1e-6))
    >>> event, relation = to_dp_event(guarantee)  # doctest: +SKIP
    >>> from dp_accounting import pld  # doctest: +SKIP
    >>> accountant = pld.PLDAccountant(neighboring_relation=relation)  # doctest: +SKIP
    >>> round(accountant.compose(event).get_epsilon(1e-6), 4)  # doctest: +SKIP
    1.0
    """
    dp_accounting = _dp_accounting()
    if isinstance(guarantee, BudgetAccountant):
        return _ledger_event(guarantee, dp_accounting)
    spec, relation = dp_event_spec(guarantee)
    return _event(spec), getattr(dp_accounting.NeighboringRelation, relation)


def dp_event_spec(guarantee):
    """:func:`to_dp_event`'s event as plain data, without dp_accounting.

    Parameters
    ----------
    guarantee : PureDP, ZCDP, GaussianDP, ProfileDP or SelectionDP

    Returns
    -------
    spec : dict
        ``{"type": <dp_accounting event class>, <its fields>}``, an event
        field itself such a dict (JSON-safe: the budget ledger stores it).
    relation : str
        ``"ADD_OR_REMOVE_ONE"`` or ``"REPLACE_ONE"``, the name of the
        dp_accounting ``NeighboringRelation`` to read it under.

    Raises
    ------
    ValueError
        For a guarantee dp_accounting has no event for (see
        :func:`to_dp_event`).
    """
    if isinstance(guarantee, SelectionDP):
        run, relation = dp_event_spec(guarantee.run)
        if guarantee.mean == 1 and not math.isinf(guarantee.shape):
            return run, relation  # one run for sure
        law = {"mean": float(guarantee.mean), "shape": float(guarantee.shape)}
        return {"type": "RepeatAndSelectDpEvent", "event": run, **law}, relation
    if isinstance(guarantee, GaussianDP):
        return _gaussian_spec(guarantee.mu), "ADD_OR_REMOVE_ONE"
    if isinstance(guarantee, ZCDP):
        return {"type": "ZCDpEvent", "rho": guarantee.rho}, "ADD_OR_REMOVE_ONE"
    if isinstance(guarantee, PureDP):
        return _pure_spec(guarantee.epsilon), "REPLACE_ONE"
    if isinstance(guarantee, ProfileDP):
        # Its Gaussian part and its discrete parts are read under different
        # relations, and dp_accounting has no bounded-range event: its zCDP
        # bound (each part's, added), for the RDP accountant.
        return dp_event_spec(guarantee.to_zcdp())
    if isinstance(guarantee, ApproxDP):
        raise ValueError(
            f"{guarantee!r} is an (epsilon, delta)-only guarantee, which "
            "dp_accounting has no event for."
        )
    raise TypeError(
        "expected a PureDP, ZCDP, GaussianDP, ProfileDP or SelectionDP guarantee "
        f"or a BudgetAccountant, got {type(guarantee).__name__}."
    )


def _event(spec):
    # The dp_accounting event a spec describes (its classes live in its
    # dp_event module; RepeatAndSelectDpEvent is not exported above it).
    fields = {
        name: _event(value) if isinstance(value, dict) else value
        for name, value in spec.items()
        if name != "type"
    }
    module = importlib.import_module("dp_accounting.dp_event")
    return getattr(module, spec["type"])(**fields)


def _gaussian_spec(mu):
    # Noise multiplier 1 / mu, rounded down (the event never reads as more
    # private than mu-GDP): none at mu = 0, no privacy at mu = inf.
    if mu == 0:
        return {"type": "NoOpDpEvent"}
    if math.isinf(mu):
        return {"type": "NonPrivateDpEvent"}
    return {
        "type": "GaussianDpEvent",
        "noise_multiplier": math.nextafter(1.0 / mu, 0.0),
    }


def _pure_spec(epsilon):
    # Randomized response on two buckets, each output 1 / (1 + e^eps) or
    # e^eps / (1 + e^eps): noise parameter p = 2 / (1 + e^eps) (the
    # probability of a uniform answer), rounded down (never read as more
    # private than eps).
    if epsilon == 0:
        return {"type": "NoOpDpEvent"}
    if math.isinf(epsilon):
        return {"type": "NonPrivateDpEvent"}
    noise = (
        math.nextafter(2.0 / (1.0 + math.exp(epsilon)), 0.0) if epsilon < 700 else 0.0
    )
    return {
        "type": "RandomizedResponseDpEvent",
        "noise_parameter": noise,
        "num_buckets": 2,
    }


def _ledger_event(accountant, dp_accounting):
    # The fits of the ledger, composed, under their common relation.
    events = [to_dp_event(guarantee) for _, guarantee in accountant.ledger]
    relations = {relation for _, relation in events}
    if len(relations) > 1:
        raise ValueError(
            "dp_accounting reads pure-DP fits under REPLACE_ONE and Gaussian "
            "or zCDP fits under ADD_OR_REMOVE_ONE: this ledger holds both, so "
            "compose them in separate dp_accounting accountants."
        )
    relation = (
        relations.pop()
        if relations
        else (dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    )
    return dp_accounting.ComposedDpEvent([event for event, _ in events]), relation
