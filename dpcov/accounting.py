"""Privacy guarantees, conversions between them, and composition.

Three notions of privacy are used in dpcov, all with respect to a fixed
neighbouring relation (each estimator states which one):

* pure :math:`\\varepsilon`-DP (:class:`PureDP`),
* :math:`\\rho`-zero-concentrated DP (:class:`ZCDP`), and
* approximate :math:`(\\varepsilon, \\delta)`-DP (:class:`ApproxDP`).

Pure :math:`\\varepsilon`-DP implies :math:`\\varepsilon^2/2`-zCDP [BS16]_, and
:math:`\\rho`-zCDP implies :math:`(\\varepsilon, \\delta)`-DP for every
:math:`\\delta > 0` with the :math:`\\varepsilon` of :func:`zcdp_epsilon` [CKS20]_.
zCDP and pure DP compose by adding :math:`\\rho` (respectively
:math:`\\varepsilon`); approximate DP composes (basically) by adding both
parameters.

Estimators use this module to turn their ``epsilon``/``delta``/``rho``
parameters into a budget, split the budget between their steps, and report
what they spent. Across fits, a :class:`BudgetAccountant` shared by several
estimators (through their ``accountant`` parameter) records every fit's
guarantee, composes them and refuses a fit that would exceed a total set by the
user. What a pipeline's private steps or a hyperparameter search spend is
computed in :mod:`dpcov.model_selection`, which walks scikit-learn objects;
this module knows nothing of them.

References
----------
.. [BS16] Bun, M. and Steinke, T. "Concentrated Differential Privacy:
   Simplifications, Extensions, and Lower Bounds". TCC 2016.
   https://arxiv.org/abs/1605.02065.
.. [CKS20] Canonne, C., Kamath, G. and Steinke, T. "The Discrete Gaussian for
   Differential Privacy". NeurIPS 2020, Proposition 12 and Corollary 13.
   https://arxiv.org/abs/2004.00010.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import struct
import sys
import threading
from dataclasses import dataclass
from fractions import Fraction
from numbers import Real

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from .exceptions import BudgetExceeded

__all__ = [
    "PureDP",
    "ZCDP",
    "ApproxDP",
    "zcdp_epsilon",
    "zcdp_rho",
    "compose",
    "split_budget",
    "BudgetAccountant",
]


def _check_nonnegative(name, value, *, allow_inf=True):
    if not isinstance(value, Real) or isinstance(value, bool) or math.isnan(value):
        raise ValueError(f"{name} must be a real number, got {value!r}.")
    if value < 0 or (not allow_inf and math.isinf(value)):
        raise ValueError(f"{name} must be non-negative and finite, got {value!r}.")


# Floating-point budgets. Every split, conversion and composition below is
# rounded so that what a step runs at, and what is reported, never exceeds
# the budget it came from, not even by one ulp: shares are rounded down and
# costs up, and the checks are exact (math.fsum rounds the exact sum of its
# arguments once, so the sign of ``fsum([*parts, -total])`` is the sign of
# the exact ``sum(parts) - total``; a nonzero sum of doubles is at least the
# smallest subnormal, so the rounding never makes it 0).


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


def _pure_rho(epsilon):
    # epsilon**2 / 2 rounded up: a pure epsilon-DP step is epsilon**2/2-zCDP
    # (Bun and Steinke, 2016, Proposition 1.4) and is never counted for less.
    rho = epsilon * epsilon / 2.0
    if math.isfinite(rho) and Fraction(rho) < Fraction(epsilon) ** 2 / 2:
        rho = math.nextafter(rho, math.inf)
    return rho


@dataclass(frozen=True)
class PureDP:
    """Pure epsilon-differential privacy.

    Parameters
    ----------
    epsilon : float
        Privacy-loss bound; ``inf`` means no privacy.

    Examples
    --------
    >>> from dpcov.accounting import PureDP
    >>> PureDP(1.0).to_zcdp()
    ZCDP(rho=0.5)
    """

    epsilon: float

    def __post_init__(self):
        _check_nonnegative("epsilon", self.epsilon)

    def to_zcdp(self):
        """Return the zCDP guarantee implied by this one (``epsilon**2 / 2``).

        Returns
        -------
        guarantee : ZCDP
            ``ZCDP(epsilon**2 / 2)`` (Proposition 1.4 in (Bun and Steinke, 2016)),
            rounded up.
        """
        return ZCDP(_pure_rho(self.epsilon))

    def to_approx_dp(self, delta=0.0):
        """Return an (epsilon, delta) guarantee implied by this one.

        Parameters
        ----------
        delta : float, default=0.0
            Target delta. With ``delta > 0`` the epsilon is the smaller of this
            guarantee's epsilon and the one obtained through zCDP.

        Returns
        -------
        guarantee : ApproxDP
            The implied guarantee.
        """
        _check_nonnegative("delta", delta)
        if delta == 0:
            return ApproxDP(self.epsilon, 0.0)
        return ApproxDP(
            min(self.epsilon, zcdp_epsilon(self.to_zcdp().rho, delta)), delta
        )

    def fraction(self, share):
        """Return the guarantee of a step that gets ``share`` of this budget.

        Parameters
        ----------
        share : float
            A number in [0, 1].

        Returns
        -------
        guarantee : PureDP
            ``PureDP(share * epsilon)``.
        """
        return PureDP(share * self.epsilon)

    def pure_epsilon(self):
        """Epsilon of the largest pure-DP step that fits in this budget.

        Returns
        -------
        epsilon : float
            ``epsilon`` itself.
        """
        return self.epsilon

    def exponential_epsilon(self):
        """Epsilon of the largest exponential mechanism that fits in this budget.

        The exponential mechanism run at ``epsilon`` (selection probabilities
        proportional to ``exp(epsilon * score / (2 * sensitivity))``) is pure
        ``epsilon``-DP (McSherry and Talwar, 2007).

        Returns
        -------
        epsilon : float
            ``epsilon`` itself.
        """
        return self.epsilon


@dataclass(frozen=True)
class ZCDP:
    """Rho-zero-concentrated differential privacy (Bun and Steinke, 2016).

    Parameters
    ----------
    rho : float
        The zCDP parameter; ``inf`` means no privacy.

    Examples
    --------
    >>> from dpcov.accounting import ZCDP
    >>> round(ZCDP(0.5).to_approx_dp(1e-6).epsilon, 4)
    5.2215
    """

    rho: float

    def __post_init__(self):
        _check_nonnegative("rho", self.rho)

    def to_zcdp(self):
        """Return this guarantee (for symmetry with :class:`PureDP`).

        Returns
        -------
        guarantee : ZCDP
            ``self``.
        """
        return self

    def to_approx_dp(self, delta):
        """Return the (epsilon, delta) guarantee implied by this one.

        Parameters
        ----------
        delta : float
            Target delta in [0, 1). With ``delta=0`` epsilon is infinite (zCDP
            does not imply pure DP) unless ``rho=0``.

        Returns
        -------
        guarantee : ApproxDP
            The guarantee with epsilon from :func:`zcdp_epsilon`.
        """
        return ApproxDP(zcdp_epsilon(self.rho, delta), delta)

    def fraction(self, share):
        """Return the guarantee of a step that gets ``share`` of this budget.

        Parameters
        ----------
        share : float
            A number in [0, 1].

        Returns
        -------
        guarantee : ZCDP
            ``ZCDP(share * rho)``.
        """
        return ZCDP(share * self.rho)

    def pure_epsilon(self):
        """Epsilon of the largest pure-DP step that fits in this budget.

        A pure epsilon-DP mechanism is ``epsilon**2 / 2``-zCDP, so it fits in
        rho-zCDP when ``epsilon <= sqrt(2 rho)``.

        Returns
        -------
        epsilon : float
            ``sqrt(2 rho)``, rounded down so that ``epsilon**2 / 2 <= rho``
            holds exactly.
        """
        epsilon = math.sqrt(2.0 * self.rho)
        if math.isfinite(epsilon):
            while Fraction(epsilon) ** 2 / 2 > Fraction(self.rho):
                epsilon = math.nextafter(epsilon, 0.0)
        return epsilon

    def exponential_epsilon(self):
        """Epsilon of the largest exponential mechanism that fits in this budget.

        The exponential mechanism run at ``epsilon`` is ``epsilon``-bounded
        range (Durfee and Rogers, 2019), and an ``epsilon``-bounded-range
        mechanism is ``epsilon**2 / 8``-zCDP (Cesar and Rogers, 2021): four
        times less than the ``epsilon**2 / 2`` of a generic pure-DP step, so
        it runs at twice :meth:`pure_epsilon`.

        Returns
        -------
        epsilon : float
            ``sqrt(8 rho)``, rounded down so that ``epsilon**2 / 8 <= rho``
            holds exactly.
        """
        epsilon = math.sqrt(8.0 * self.rho)
        if math.isfinite(epsilon):
            while Fraction(epsilon) ** 2 / 8 > Fraction(self.rho):
                epsilon = math.nextafter(epsilon, 0.0)
        return epsilon


@dataclass(frozen=True)
class ApproxDP:
    """Approximate (epsilon, delta)-differential privacy.

    Parameters
    ----------
    epsilon : float
        Privacy-loss bound.
    delta : float
        Failure probability, in [0, 1].

    Examples
    --------
    >>> from dpcov.accounting import ApproxDP, compose
    >>> compose([ApproxDP(0.5, 1e-6), ApproxDP(0.25, 0.0)])
    ApproxDP(epsilon=0.75, delta=1e-06)
    """

    epsilon: float
    delta: float

    def __post_init__(self):
        _check_nonnegative("epsilon", self.epsilon)
        _check_nonnegative("delta", self.delta)
        if self.delta > 1:
            raise ValueError(f"delta must be at most 1, got {self.delta!r}.")


def _cks_epsilon_at(log_am1, rho, log_inv_delta):
    # Corollary 13 of [CKS20] solved for epsilon at Renyi order alpha > 1:
    # eps = alpha rho + (log(1/delta) + (alpha-1) log(1-1/alpha) - log alpha)
    #       / (alpha-1),
    # written in s = alpha - 1 = exp(log_am1), with log(1 - 1/alpha) =
    # log(s) - log1p(s): alpha is never rounded to 1 (where the log would fail).
    s = math.exp(log_am1)
    log_alpha = math.log1p(s)
    return (1.0 + s) * rho + (log_inv_delta + s * (log_am1 - log_alpha) - log_alpha) / s


def zcdp_epsilon(rho, delta):
    """Epsilon of the (epsilon, delta)-DP guarantee implied by rho-zCDP.

    Uses the conversion of Canonne, Kamath and Steinke (2020, Corollary 13),

    .. math::

        \\varepsilon = \\inf_{\\alpha > 1} \\alpha\\rho + \\frac{\\log(1/\\delta)
        + (\\alpha - 1)\\log(1 - 1/\\alpha) - \\log\\alpha}{\\alpha - 1},

    minimised numerically over :math:`\\alpha`. It is never larger than the
    classical :math:`\\rho + 2\\sqrt{\\rho\\log(1/\\delta)}` (Bun and Steinke, 2016),
    which is
    used as a safeguard. For large ``delta`` the infimum can be negative at
    small ``rho``: the guarantee is then (0, delta)-DP and 0 is returned.

    Parameters
    ----------
    rho : float
        The zCDP parameter, non-negative (``inf`` allowed).
    delta : float
        Target delta in [0, 1).

    Returns
    -------
    epsilon : float
        The smallest epsilon this conversion certifies (``inf`` when
        ``delta=0`` and ``rho>0``).

    Examples
    --------
    >>> from dpcov.accounting import zcdp_epsilon
    >>> round(zcdp_epsilon(0.1, 1e-6), 6)
    2.141939
    >>> zcdp_epsilon(1e-4, 0.3)  # (0, 0.3)-DP: the infimum is negative
    0.0
    """
    _check_nonnegative("rho", rho)
    _check_nonnegative("delta", delta)
    if delta >= 1:
        raise ValueError(f"delta must be smaller than 1, got {delta!r}.")
    if rho == 0:
        return 0.0
    if delta == 0 or np.isinf(rho):
        return math.inf
    log_inv_delta = -math.log(delta)
    classical = rho + 2.0 * math.sqrt(rho * log_inv_delta)
    # The optimum is near alpha = 1 + sqrt(log(1/delta)/rho); search log(alpha-1)
    # on a bracket that is wide around it (the objective is unimodal in alpha).
    centre = 0.5 * (math.log(log_inv_delta) - math.log(rho))
    result = minimize_scalar(
        lambda t: _cks_epsilon_at(t, rho, log_inv_delta),
        bounds=(centre - 12.0, centre + 12.0),
        method="bounded",
        options={"xatol": 1e-10},
    )
    # A value below 0 certifies (0, delta)-DP (the bound on delta decreases in
    # epsilon, so it holds at epsilon = 0 too), hence (epsilon, delta) for all
    # epsilon >= 0.
    return float(max(min(result.fun, classical), 0.0))


def zcdp_rho(epsilon, delta):
    """Largest rho such that rho-zCDP implies (epsilon, delta)-DP.

    Inverts :func:`zcdp_epsilon` (which is increasing in rho) numerically; the
    returned rho satisfies ``zcdp_epsilon(rho, delta) <= epsilon``. Every
    ``delta`` in (0, 1) is allowed: for large ``delta`` the conversion is
    loose enough that rho may exceed ``epsilon`` (``zcdp_rho(0.1, 0.5)`` is
    about 0.45).

    Parameters
    ----------
    epsilon : float
        Target epsilon, positive (``inf`` gives ``inf``).
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    rho : float
        The zCDP budget to run a zCDP mechanism at.

    Examples
    --------
    >>> from dpcov.accounting import zcdp_rho
    >>> round(zcdp_rho(1.0, 1e-6), 6)
    0.024356
    """
    _check_nonnegative("epsilon", epsilon)
    _check_nonnegative("delta", delta)
    if not 0 < delta < 1:
        raise ValueError(
            f"delta must be in (0, 1) to convert to zCDP, got {delta!r}; "
            "with delta=0 use a pure-DP mechanism."
        )
    if epsilon == 0:
        return 0.0
    if np.isinf(epsilon):
        return math.inf

    def gap(r):
        return zcdp_epsilon(r, delta) - epsilon

    # The root is bracketed by [0, high] with gap(0) = -epsilon < 0 and
    # gap(high) > 0. zcdp_epsilon(rho) >= rho holds for small delta only: for
    # large delta, Corollary 13 of [CKS20] certifies epsilon < rho, and even
    # (0, delta)-DP at small rho (zcdp_epsilon is 0 there), so the root can
    # lie beyond epsilon. Double the bracket until it holds: zcdp_epsilon
    # increases without bound in rho (alpha*rho >= rho, and log(1/delta)/(alpha
    # - 1) keeps alpha away from 1). Where zcdp_epsilon > 0 it increases
    # strictly in rho (an infimum of strictly increasing functions, attained),
    # so the root is unique.
    high = epsilon
    while gap(high) <= 0:
        if high == sys.float_info.max:
            return high  # (only for epsilon near the largest float)
        high = min(2.0 * high, sys.float_info.max)
    rho = brentq(gap, 0.0, high, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    # Never overshoot the target: step down until the guarantee holds (the
    # root can sit an ulp or two above it), one ulp first, then twice as far
    # each time.
    rho, step = float(rho), 0.0
    while zcdp_epsilon(rho, delta) > epsilon:
        step = max(2.0 * step, math.ulp(rho))
        rho = max(rho - step, 0.0)
    return rho


def compose(guarantees):
    """Compose guarantees of mechanisms run one after another (adaptively).

    Pure DP composes to pure DP (epsilons add). Any mix of pure DP and zCDP
    composes to zCDP (each pure step counts ``epsilon**2/2``; rhos add).
    Approximate DP composes by adding epsilons and deltas (pure steps count as
    ``(epsilon, 0)``). Mixing zCDP with approximate DP is refused: convert the
    zCDP part first with :meth:`ZCDP.to_approx_dp`.

    Parameters
    ----------
    guarantees : iterable of PureDP, ZCDP or ApproxDP
        The guarantees of the steps.

    Returns
    -------
    guarantee : PureDP, ZCDP or ApproxDP
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
    kinds = {type(g) for g in guarantees}
    unknown = kinds - {PureDP, ZCDP, ApproxDP}
    if unknown:
        raise TypeError(f"cannot compose objects of type {sorted(map(str, unknown))}.")
    if kinds == {PureDP}:
        return PureDP(math.fsum(g.epsilon for g in guarantees))
    if ApproxDP not in kinds:
        return ZCDP(math.fsum(g.to_zcdp().rho for g in guarantees))
    if ZCDP in kinds:
        raise ValueError(
            "cannot compose zCDP with approximate DP directly; convert the zCDP "
            "guarantees with ZCDP.to_approx_dp(delta) first."
        )
    approx = [g.to_approx_dp(0.0) if isinstance(g, PureDP) else g for g in guarantees]
    return ApproxDP(
        math.fsum(g.epsilon for g in approx),
        min(1.0, math.fsum(g.delta for g in approx)),
    )


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
    return {name: type(budget)(part) for name, part in zip(shares, parts, strict=True)}


class BudgetAccountant:
    """A ledger of the privacy spent by fits on the same rows, with a cap.

    Share one accountant across fits (pass it as the ``accountant`` parameter
    of every dpcov estimator, or record guarantees with :meth:`spend`). Before
    an estimator reads its data it asks the accountant whether its guarantee
    fits in what is left, and a fit that would exceed the cap raises
    :class:`~dpcov.exceptions.BudgetExceeded` without touching the data;
    otherwise the fit's guarantee is recorded once the input is validated,
    before any private step runs. A recorded fit stays recorded even if it
    fails later (its private steps may have run); fits are never refunded.

    The recorded guarantees compose as follows: pure-DP and zCDP fits add up
    in zCDP (a pure ``epsilon``-DP fit counts ``epsilon**2 / 2``) and
    (epsilon, delta)-only fits (the stability-based subspace learners) add
    both parameters. The total (epsilon, delta) is reported with the tight
    conversion from zCDP of Canonne, Kamath and Steinke (2020), see
    :func:`zcdp_epsilon`, spending ``delta`` minus the (epsilon, delta) fits'
    deltas on the conversion; pure fits are also counted by adding their
    epsilons when that is smaller.

    The accountant is shared, not copied: :func:`copy.copy`,
    :func:`copy.deepcopy` and therefore :func:`sklearn.base.clone` of an
    estimator return the same accountant, so every clone that
    :class:`~sklearn.model_selection.GridSearchCV` fits (with ``n_jobs=1`` or a
    threading backend) records into it. Fits in other processes
    (``n_jobs > 1`` with the default process-based backend) would record into
    pickled copies that the caller never sees, so an unpickled accountant
    refuses every fit (``BudgetExceeded``): leave the accountant out of such a
    search and account it with :func:`~dpcov.model_selection.search_cost`.
    Save a ledger with :attr:`ledger`, not by pickling.

    Totals are compared with the cap exactly, with no slack: a fit is
    accepted when the total reported after it (:meth:`total`, :attr:`epsilon`
    or :attr:`rho`) is at most the cap, so no reported total ever exceeds
    the cap. Each total is a sum rounded once to the nearest float
    (:func:`math.fsum`), with a pure fit counted ``epsilon**2 / 2`` rounded
    up in zCDP: two fits at ``epsilon / 2``, or ten at 0.1 under a cap of
    1.0, fill the cap exactly. To spend exactly what is left, ask
    :meth:`remaining` for it.
    The composition of pure/zCDP fits with (epsilon, delta)-only fits is the
    approximate-zCDP composition of Bun and Steinke (2016, Section 8).

    Parameters
    ----------
    epsilon : float, default=None
        Cap on the total epsilon. With ``delta=0`` (the default) the cap is pure
        ``epsilon``-DP and only pure-DP fits are accepted; with ``delta > 0``
        it is (``epsilon``, ``delta``)-DP.
    delta : float, default=0.0
        Delta of the cap, in [0, 1); also the delta at which :attr:`epsilon`
        reports the total when no cap is set.
    rho : float, default=None
        Cap on the total in zCDP (pure fits count ``epsilon**2 / 2``).
        (epsilon, delta)-only fits have no zCDP guarantee and are refused.
        Exclusive with ``epsilon``.

    Attributes
    ----------
    ledger : list of tuple (str, PureDP or ZCDP or ApproxDP)
        Copy of the recorded fits: a label and a guarantee each.

    See Also
    --------
    dpcov.model_selection.search_cost : The cost of a hyperparameter search.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.accounting import BudgetAccountant
    >>> from dpcov.covariance import SeparateCovariance
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(1000, 3))
    >>> accountant = BudgetAccountant(epsilon=1.0, delta=1e-6)
    >>> est = SeparateCovariance(epsilon=0.5, data_norm=1.0, accountant=accountant)
    >>> for _ in range(3):
    ...     _ = est.fit(X)
    >>> # three fits at (0.5, 1e-6) compose in zCDP to less than (1, 1e-6)
    >>> len(accountant), round(accountant.epsilon, 3)
    (3, 0.898)
    >>> est.fit(X)  # a fourth would exceed the cap
    Traceback (most recent call last):
    ...
    dpcov.exceptions.BudgetExceeded: SeparateCovariance: ZCDP(rho=...) would ...
    """

    def __init__(self, epsilon=None, delta=0.0, rho=None):
        if epsilon is not None and rho is not None:
            raise ValueError("set a cap in epsilon or in rho, not both.")
        if epsilon is not None:
            _check_nonnegative("epsilon", epsilon)
        if rho is not None:
            _check_nonnegative("rho", rho)
        _check_nonnegative("delta", delta)
        if delta >= 1:
            raise ValueError(f"delta must be smaller than 1, got {delta!r}.")
        self.epsilon_cap = None if epsilon is None else float(epsilon)
        self.delta_cap = float(delta)
        self.rho_cap = None if rho is None else float(rho)
        self._ledger = []
        self._lock = threading.Lock()

    # The accountant is shared state: copies (clone, deepcopy) are the same
    # object, so that every clone of an estimator records into it.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()
        # A copy made by pickling (joblib sends estimators to worker processes
        # that way) would record fits the original never sees: it refuses.
        self._detached = True

    def __len__(self):
        return len(self._ledger)

    def __repr__(self):
        if self.rho_cap is not None:
            cap = f"rho={self.rho_cap!r}"
        elif self.epsilon_cap is not None:
            cap = f"epsilon={self.epsilon_cap!r}, delta={self.delta_cap!r}"
        else:
            cap = f"delta={self.delta_cap!r}"
        return f"BudgetAccountant({cap}, n_fits={len(self)})"

    @property
    def ledger(self):
        """Copy of the recorded fits, as (label, guarantee) pairs."""
        return list(self._ledger)

    @staticmethod
    def _sums(entries):
        # The parameters of the entries, by kind.
        pure = [g.epsilon for _, g in entries if isinstance(g, PureDP)]
        rhos = [g.rho for _, g in entries if isinstance(g, ZCDP)]
        approx = [g for _, g in entries if isinstance(g, ApproxDP)]
        return pure, rhos, [g.epsilon for g in approx], [g.delta for g in approx]

    @staticmethod
    def _rho_total(pure, rhos):
        # Pure and zCDP fits in zCDP, summed with one rounding; a pure fit
        # counts epsilon**2 / 2 rounded up (PureDP.to_zcdp).
        return math.fsum([*rhos, *map(_pure_rho, pure)])

    @classmethod
    def _total_epsilon(cls, entries, delta):
        # Smallest epsilon this accountant certifies at ``delta`` for the
        # entries (see the class docstring). Each candidate total is a sum
        # rounded once (math.fsum).
        if not entries:
            return 0.0
        pure, rhos, approx_epsilons, approx_deltas = cls._sums(entries)
        rho = math.fsum(rhos)
        if rho == 0 and not any(approx_epsilons) and not any(approx_deltas):
            # All pure: their sum needs no delta; with delta > 0, counting
            # them in zCDP may be smaller (the same min as with zCDP fits, so
            # the total never drops when a zCDP fit is added).
            pure_sum = math.fsum(pure)
            if delta > 0:
                in_zcdp = zcdp_epsilon(cls._rho_total(pure, []), delta)
                return min(pure_sum, in_zcdp)
            return pure_sum
        if math.fsum(approx_deltas) > delta:
            return math.inf
        # What is left of delta for the conversion, rounded down.
        conversion_delta = _left(delta, approx_deltas)
        if rho == 0 and not pure:
            return math.fsum(approx_epsilons)
        if conversion_delta <= 0:
            # Nothing left for the zCDP conversion: only pure parts can count.
            return math.fsum([*approx_epsilons, *pure]) if rho == 0 else math.inf
        all_zcdp = zcdp_epsilon(cls._rho_total(pure, rhos), conversion_delta)
        converted = zcdp_epsilon(rho, conversion_delta) if rho else 0.0
        return min(
            math.fsum([*approx_epsilons, all_zcdp]),
            math.fsum([*approx_epsilons, *pure, converted]),
        )

    @property
    def epsilon(self):
        """Epsilon of the total (epsilon, delta)-DP guarantee, at the cap's delta.

        Pure-only ledgers report their epsilon sum (delta is then 0).
        """
        with self._lock:
            return self._total_epsilon(self._ledger, self.delta_cap)

    def epsilon_at(self, delta):
        """Epsilon of the total (epsilon, delta)-DP guarantee at ``delta``.

        Parameters
        ----------
        delta : float
            Target delta in [0, 1).

        Returns
        -------
        epsilon : float
            The smallest epsilon the accountant certifies (``inf`` when
            ``delta`` is smaller than the (epsilon, delta) fits' deltas, or 0
            with zCDP fits recorded).
        """
        _check_nonnegative("delta", delta)
        with self._lock:
            return self._total_epsilon(self._ledger, float(delta))

    @property
    def rho(self):
        """The total in zCDP (``inf`` once an (epsilon, delta)-only fit is in)."""
        with self._lock:
            pure, rhos, _, _ = self._sums(self._ledger)
            if any(isinstance(g, ApproxDP) for _, g in self._ledger):
                return math.inf
            return self._rho_total(pure, rhos)

    def total(self):
        """The composition of every recorded fit, as one guarantee.

        Returns
        -------
        guarantee : PureDP, ZCDP or ApproxDP
            ``PureDP`` when every fit is pure, ``ZCDP`` when none is an
            (epsilon, delta)-only fit, else ``ApproxDP`` at the cap's delta
            (:attr:`epsilon`), or, with no delta cap, at the sum of the
            (epsilon, delta) fits' deltas. ``PureDP(0.0)`` for an empty
            ledger.
        """
        with self._lock:
            entries = list(self._ledger)
        if not entries:
            return PureDP(0.0)
        kinds = {type(g) for _, g in entries}
        if ApproxDP not in kinds:
            return compose(g for _, g in entries)
        # Without a delta cap, report at the (epsilon, delta) fits' own deltas.
        delta = self.delta_cap or min(
            1.0, math.fsum(g.delta for _, g in entries if isinstance(g, ApproxDP))
        )
        return ApproxDP(self._total_epsilon(entries, delta), delta)

    def remaining(self):
        """The largest guarantee that one more fit may spend under the cap.

        Under a cap in epsilon with ``delta=0`` or in rho, this is the
        largest float that keeps the exact sum of the recorded parameters
        (pure fits counting ``epsilon**2 / 2`` rounded up under a rho cap)
        within the cap; under a cap in (epsilon, delta) with ``delta > 0``,
        the largest rho of one more zCDP fit that the cap accepts.
        ``accountant.spend(accountant.remaining())`` is accepted (unless
        another thread records a fit in between). Pass it on to the last fit,
        e.g. ``SeparateCovariance(rho=left.rho, ...)`` or
        ``SeparateCovariance(epsilon=left.epsilon, delta=0.0, ...)``.

        Returns
        -------
        guarantee : PureDP, ZCDP or None
            ``PureDP`` under a pure cap (``delta=0``); ``ZCDP`` under a cap in
            rho or in (epsilon, delta) with ``delta > 0``; ``PureDP(0.0)`` or
            ``ZCDP(0.0)`` when the cap is reached; None when there is no cap.

        Examples
        --------
        >>> from dpcov.accounting import BudgetAccountant, PureDP
        >>> accountant = BudgetAccountant(epsilon=1.0)
        >>> _ = accountant.spend(PureDP(0.1)).spend(PureDP(0.2))
        >>> left = accountant.remaining()
        >>> left
        PureDP(epsilon=0.7)
        >>> accountant.spend(left).epsilon
        1.0
        """
        with self._lock:
            pure, rhos, _, _ = self._sums(self._ledger)
            if self.rho_cap is not None:
                return ZCDP(_left(self.rho_cap, [*rhos, *map(_pure_rho, pure)]))
            if self.epsilon_cap is None:
                return None
            if self.delta_cap == 0:
                # A pure cap holds pure fits only.
                return PureDP(_left(self.epsilon_cap, pure))

            def fits(value):
                return self._refusal([("remaining", ZCDP(value))]) is None

            if not fits(0.0):
                return ZCDP(0.0)
            high = 1.0
            while fits(high):
                if math.isinf(high):
                    return ZCDP(high)
                high *= 2.0
            # Bisect on the ordered bit patterns of the non-negative floats,
            # keeping fits(low) and not fits(high), down to adjacent floats.
            low, high = 0, _float_bits(high)
            while high - low > 1:
                middle = (low + high) // 2
                if fits(_bits_float(middle)):
                    low = middle
                else:
                    high = middle
            return ZCDP(_bits_float(low))

    def _refusal(self, entries):
        # Why adding ``entries`` would break the cap (None if it would not).
        kinds = {type(g) for _, g in entries}
        if self.rho_cap is not None:
            if ApproxDP in kinds:
                return "an (epsilon, delta)-only guarantee has no zCDP form"
            pure, rhos, _, _ = self._sums(self._ledger + entries)
            total = self._rho_total(pure, rhos)
            if total > self.rho_cap:
                total, cap = _apart(total, self.rho_cap)
                return f"would bring the total to rho={total} > {cap}"
            return None
        if self.epsilon_cap is None:
            return None
        if self.delta_cap == 0 and kinds - {PureDP}:
            return "the cap is pure epsilon-DP, which only pure-DP fits keep"
        total = self._total_epsilon(self._ledger + entries, self.delta_cap)
        if total > self.epsilon_cap:
            total, cap = _apart(total, self.epsilon_cap)
            return (
                f"would bring the total to epsilon={total} > {cap} "
                f"at delta={self.delta_cap:g}"
            )
        return None

    def _entries(self, guarantee, label):
        if getattr(self, "_detached", False):
            raise BudgetExceeded(
                f"{label}: this BudgetAccountant is an unpickled copy (joblib "
                "sends estimators to worker processes by pickling, e.g. "
                "GridSearchCV(n_jobs > 1)); what it recorded would never reach "
                "the original ledger, so it refuses every fit. Use n_jobs=1 or "
                "a threading backend, or leave the accountant out and account "
                "the search with dpcov.model_selection.search_cost."
            )
        if guarantee is self:
            raise ValueError("an accountant cannot spend its own ledger.")
        if isinstance(guarantee, BudgetAccountant):
            return guarantee.ledger
        if not isinstance(guarantee, PureDP | ZCDP | ApproxDP):
            raise TypeError(
                "expected a PureDP, ZCDP or ApproxDP guarantee or a "
                f"BudgetAccountant, got {type(guarantee).__name__}."
            )
        return [(str(label), guarantee)]

    def check(self, guarantee, *, label="fit"):
        """Raise if spending ``guarantee`` would exceed the cap; record nothing.

        Parameters
        ----------
        guarantee : PureDP, ZCDP, ApproxDP or BudgetAccountant
            What the next fit (or, for an accountant, every fit in its ledger)
            would spend.
        label : str, default="fit"
            Name used in the error message.

        Raises
        ------
        BudgetExceeded
            If the total would exceed the cap.
        """
        entries = self._entries(guarantee, label)
        with self._lock:
            reason = self._refusal(entries)
        if reason is not None:
            raise BudgetExceeded(self._message(label, guarantee, reason))

    def spend(self, guarantee, *, label="fit"):
        """Record ``guarantee`` if it fits under the cap, atomically.

        Parameters
        ----------
        guarantee : PureDP, ZCDP, ApproxDP or BudgetAccountant
            What a fit spends; an accountant's whole ledger is recorded at once
            (for example the result of
            :func:`~dpcov.model_selection.search_cost`).
        label : str, default="fit"
            Label of the ledger entry (ignored for an accountant, whose labels
            are kept).

        Returns
        -------
        self : BudgetAccountant
            The accountant.

        Raises
        ------
        BudgetExceeded
            If the total would exceed the cap; nothing is recorded.
        """
        entries = self._entries(guarantee, label)
        with self._lock:
            reason = self._refusal(entries)
            if reason is None:
                self._ledger.extend(entries)
        if reason is not None:
            raise BudgetExceeded(self._message(label, guarantee, reason))
        return self

    def _message(self, label, guarantee, reason):
        # Public values only: the guarantees and the cap.
        what = (
            f"{len(guarantee)} recorded fits"
            if isinstance(guarantee, BudgetAccountant)
            else repr(guarantee)
        )
        return (
            f"{label}: {what} {reason}; refused before reading the data "
            f"({len(self)} fits already recorded by {self!r})."
        )


def _apart(total, cap):
    # A total and a cap as text, with all digits when six would look equal.
    if f"{total:.6g}" == f"{cap:.6g}":
        return repr(total), repr(cap)
    return f"{total:.6g}", f"{cap:g}"
