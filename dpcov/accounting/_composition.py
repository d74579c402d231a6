"""Composition of guarantees, budget splits, and the rounding that keeps them exact."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import struct
from dataclasses import replace
from fractions import Fraction

from ._conversions import _root_sum_squares
from ._guarantees import ZCDP, ApproxDP, GaussianDP, ProfileDP, PureDP, notion_of

# Floating-point budgets. Every split, conversion and composition in this
# package is rounded so that what a step runs at, and what is reported, never
# exceeds the budget it came from, not even by one ulp: shares are rounded
# down and costs up, and the checks are exact (math.fsum rounds the exact sum
# of its arguments once, so the sign of ``fsum([*parts, -total])`` is the sign
# of the exact ``sum(parts) - total``; a nonzero sum of doubles is at least
# the smallest subnormal, so the rounding never makes it 0).


def _excess(parts, total):
    # sum(parts) - total, exactly rounded; > 0 iff the exact sum exceeds total.
    return math.fsum([*parts, -total])


def _fit_parts(parts, total):
    """Round ``parts`` down until their exact sum is at most ``total``.

    The largest part (the last of equal ones) gives up the excess, at least
    one ulp at a time; parts stay non-negative, and nothing changes when the
    sum already fits (the usual case) or ``total`` is infinite.
    """
    parts = [float(p) for p in parts]
    if not math.isfinite(total):
        return parts
    while (excess := _excess(parts, total)) > 0:
        i = max(range(len(parts)), key=lambda j: (parts[j], j))
        parts[i] = max(0.0, min(parts[i] - excess, math.nextafter(parts[i], 0.0)))
    return parts


def _left(total, parts):
    # Largest float r >= 0 with sum(parts) + r <= total exactly (0.0 if the
    # parts already reach total): fsum rounds the exact remainder to nearest,
    # and the float below a value rounded up lies below the exact value.
    left = math.fsum([total, *(-p for p in parts)])
    if left <= 0:
        return 0.0
    if _excess([*parts, left], total) > 0:
        left = math.nextafter(left, 0.0)
    return left


def _float_bits(value):
    # Non-negative floats are ordered as their IEEE 754 bit patterns.
    return struct.unpack("<q", struct.pack("<d", value))[0]


def _bits_float(bits):
    return struct.unpack("<d", struct.pack("<q", bits))[0]


def _even_share(total, n_parts):
    """Largest float ``s`` with ``n_parts * s <= total`` exactly.

    The budget of each of ``n_parts`` steps that share ``total`` equally
    (``total / n_parts`` rounded to nearest can be half an ulp too large).

    Parameters
    ----------
    total : float
        The budget shared (non-negative, ``inf`` allowed).
    n_parts : int
        The number of steps, positive.

    Returns
    -------
    share : float
        The budget of each step.
    """
    share = total / n_parts
    if math.isfinite(total):
        while Fraction(share) * n_parts > Fraction(total):
            share = math.nextafter(share, 0.0)
    return share


def compose(guarantees):
    """Compose guarantees of mechanisms run one after another (adaptively).

    Pure DP composes to pure DP (epsilons add), Gaussian DP to Gaussian DP
    (``mu = sqrt(sum mu_i**2)``, rounded up; Dong, Roth and Su, 2022), and
    profiles (:class:`ProfileDP`) with Gaussian and pure guarantees to a
    profile of all their parts. Any other mix of pure DP, zCDP, Gaussian DP
    and profiles composes to zCDP (each pure step counts ``epsilon**2/2``,
    each Gaussian one ``mu**2/2``; rhos add).
    Approximate DP composes by adding epsilons and deltas (pure steps count as
    ``(epsilon, 0)``). Mixing zCDP with approximate DP is refused: convert the
    zCDP part first with :meth:`ZCDP.to_approx_dp`. The guarantees must
    protect the same unit under the same relation (their ``unit`` and
    ``relation``), which the composition keeps: a row-level guarantee and a
    person-level one bound different changes, and an add/remove guarantee
    gives a replace-one one only at a cost (its ``under_replacement()``), so
    they are refused together. A :class:`BudgetAccountant` adds dpcov's fits
    under its own unit and relation (see :ref:`privacy_units`).

    Parameters
    ----------
    guarantees : iterable of PureDP, ZCDP, GaussianDP, ProfileDP or ApproxDP
        The guarantees of the steps.

    Returns
    -------
    guarantee : PureDP, ZCDP, GaussianDP, ProfileDP or ApproxDP
        The guarantee of the composition.

    Examples
    --------
    >>> from dpcov.accounting import PureDP, ZCDP, compose
    >>> compose([PureDP(1.0), ZCDP(0.25)])
    ZCDP(rho=0.75)
    """
    guarantees = list(guarantees)
    if not guarantees:
        raise ValueError("compose needs at least one guarantee.")
    kinds = {notion_of(g) for g in guarantees}
    unknown = kinds - {PureDP, ZCDP, GaussianDP, ProfileDP, ApproxDP}
    if unknown:
        raise TypeError(f"cannot compose objects of type {sorted(map(str, unknown))}.")
    labels = {(g.unit, g.relation) for g in guarantees}
    if len(labels) > 1:
        raise ValueError(
            "cannot compose guarantees for different units or neighbouring "
            f"relations ({', '.join(f'{u}/{r}' for u, r in sorted(labels))}): "
            "convert add/remove guarantees with under_replacement() first, or "
            "record dpcov fits in a BudgetAccountant, which adds them under "
            "its own unit and relation."
        )
    unit, relation = labels.pop()
    if len(guarantees) == 1:
        return guarantees[0]  # (a search's SelectionDP keeps its run and law)
    if kinds == {PureDP}:
        return PureDP(
            math.fsum(g.epsilon for g in guarantees), unit=unit, relation=relation
        )
    if kinds == {GaussianDP}:
        return GaussianDP(
            _root_sum_squares(g.mu for g in guarantees), unit=unit, relation=relation
        )
    if ProfileDP in kinds and kinds <= {ProfileDP, GaussianDP, PureDP}:
        return _profile(guarantees, unit=unit, relation=relation)
    if ApproxDP not in kinds:
        return ZCDP(
            math.fsum(g.to_zcdp().rho for g in guarantees),
            unit=unit,
            relation=relation,
        )
    if kinds & {ZCDP, GaussianDP, ProfileDP}:
        raise ValueError(
            "cannot compose zCDP or Gaussian DP with approximate DP directly; "
            "convert them with to_approx_dp(delta) first."
        )
    approx = [g.to_approx_dp(0.0) if isinstance(g, PureDP) else g for g in guarantees]
    return ApproxDP(
        math.fsum(g.epsilon for g in approx),
        min(1.0, math.fsum(g.delta for g in approx)),
        unit=unit,
        relation=relation,
    )


def _profile(guarantees, **labels):
    # Profiles, Gaussian and pure guarantees: their parts, side by side.
    mus, pure, ranges = [], [], []
    for g in guarantees:
        if isinstance(g, PureDP):
            pure.append(g.epsilon)
        else:
            mus.append(g.mu)
        if isinstance(g, ProfileDP):
            pure.extend(g.pure)
            ranges.extend(g.bounded_range)
    return ProfileDP(_root_sum_squares(mus), tuple(pure), tuple(ranges), **labels)


def compose_fits(guarantees):
    """Compose the guarantees of dpcov fits, whatever their units and relations.

    Under their common unit and relation when they share one; otherwise
    each read as a row-level replace-one guarantee at its budget (see
    :func:`relabel`), as a default :class:`BudgetAccountant` reads them.
    """
    guarantees = list(guarantees)
    if len({(g.unit, g.relation) for g in guarantees}) > 1:
        guarantees = [relabel(g) for g in guarantees]
    return compose(guarantees)


def relabel(guarantee, unit="row", relation="replace"):
    """``guarantee`` read for ``unit`` under ``relation``, its numbers kept.

    For dpcov's own fits, whose guarantees hold at their budgets under the
    readings a :class:`BudgetAccountant` adds them under: an add/remove fit
    keeps its replace-one noise, so it holds under replacement too, and a
    person-level fit covers a row of a person (the persons a public frame;
    see :ref:`privacy_units`). Not a conversion for other guarantees (see
    ``under_replacement()``).
    """
    return replace(guarantee, unit=unit, relation=relation)


def split_budget(budget, shares):
    """Split a pure-DP or zCDP budget between named steps.

    Both notions compose additively, so a step that gets fraction ``f`` of the
    budget runs at ``f * epsilon`` (pure) or ``f * rho`` (zCDP), and the steps
    compose back to ``budget``. The products are rounded to floats, which can
    add up to an ulp or two more than ``budget``: the largest part is then
    rounded down until the exact sum of the parts is at most ``budget``. So
    ``compose(split_budget(budget, shares).values())`` never exceeds
    ``budget``, and neither do the parts of splits of the parts.

    Parameters
    ----------
    budget : PureDP or ZCDP
        The total budget.
    shares : dict of str to float
        Non-negative fractions that sum to 1.

    Returns
    -------
    split : dict of str to PureDP or ZCDP
        The budget of each step, in the order of ``shares``.

    Examples
    --------
    >>> from dpcov.accounting import ZCDP, split_budget
    >>> split_budget(ZCDP(0.8), {"mean": 0.25, "covariance": 0.75})
    {'mean': ZCDP(rho=0.2), 'covariance': ZCDP(rho=0.6)}
    """
    if not isinstance(budget, PureDP | ZCDP):
        raise TypeError("split_budget needs a PureDP or ZCDP budget.")
    values = [float(share) for share in shares.values()]
    if any(not share >= 0 for share in values) or not math.isclose(
        math.fsum(values), 1.0, rel_tol=1e-12
    ):
        raise ValueError(f"shares must be non-negative and sum to 1, got {shares}.")
    total = budget.epsilon if isinstance(budget, PureDP) else budget.rho
    # The same products as budget.fraction(share), then rounded to fit.
    parts = _fit_parts([share * total for share in values], total)
    labels = {"unit": budget.unit, "relation": budget.relation}
    return {
        name: type(budget)(part, **labels)
        for name, part in zip(shares, parts, strict=True)
    }


def budget_weights(costs, *, pure):
    """Weights of private steps in a shared budget: what each would spend alone.

    Under a pure-DP budget a step weighs its epsilon (a zCDP step: the
    epsilon with the same rho, ``sqrt(2 rho)``); under zCDP, its rho (a pure
    step: ``epsilon**2 / 2``). Steps that cost nothing weigh 0; when none
    costs anything finite, all weigh the same.

    Parameters
    ----------
    costs : list of PureDP or ZCDP
        Each step's ``privacy_cost()``.
    pure : bool
        Whether the shared budget is pure DP.

    Returns
    -------
    weights : list of float
    """
    if pure:
        weights = [
            c.epsilon if isinstance(c, PureDP) else math.sqrt(2.0 * c.to_zcdp().rho)
            for c in costs
        ]
    else:
        weights = [c.to_zcdp().rho for c in costs]
    total = math.fsum(weights)
    if not math.isfinite(total) or total <= 0:
        return [1.0] * len(costs)
    return weights
