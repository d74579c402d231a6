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

This module knows nothing of scikit-learn; estimators use it to turn their
``epsilon``/``delta``/``rho`` parameters into a budget, split the budget between
their steps, and report what they spent.

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
from dataclasses import dataclass
from numbers import Real

import numpy as np
from scipy.optimize import brentq, minimize_scalar

__all__ = [
    "PureDP",
    "ZCDP",
    "ApproxDP",
    "zcdp_epsilon",
    "zcdp_rho",
    "compose",
    "split_budget",
]


def _check_nonnegative(name, value, *, allow_inf=True):
    if not isinstance(value, Real) or isinstance(value, bool) or np.isnan(value):
        raise ValueError(f"{name} must be a real number, got {value!r}.")
    if value < 0 or (not allow_inf and np.isinf(value)):
        raise ValueError(f"{name} must be non-negative and finite, got {value!r}.")


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
            ``ZCDP(epsilon**2 / 2)`` (Proposition 1.4 in (Bun and Steinke, 2016)).
        """
        return ZCDP(self.epsilon**2 / 2)

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
            ``sqrt(2 rho)``.
        """
        return math.sqrt(2.0 * self.rho)


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


def _cks_epsilon_at(alpha, rho, log_inv_delta):
    # Corollary 13 of [CKS20] solved for epsilon at Renyi order alpha > 1:
    # eps = alpha*rho + (log(1/delta) + (alpha-1) log(1-1/alpha) - log(alpha))/(alpha-1)
    am1 = alpha - 1.0
    return (
        alpha * rho
        + (log_inv_delta + am1 * math.log1p(-1.0 / alpha) - math.log(alpha)) / am1
    )


def zcdp_epsilon(rho, delta):
    """Epsilon of the (epsilon, delta)-DP guarantee implied by rho-zCDP.

    Uses the conversion of Canonne, Kamath and Steinke (2020, Corollary 13),

    .. math::

        \\varepsilon = \\inf_{\\alpha > 1} \\alpha\\rho + \\frac{\\log(1/\\delta)
        + (\\alpha - 1)\\log(1 - 1/\\alpha) - \\log\\alpha}{\\alpha - 1},

    minimised numerically over :math:`\\alpha`. It is never larger than the
    classical :math:`\\rho + 2\\sqrt{\\rho\\log(1/\\delta)}` (Bun and Steinke, 2016),
    which is
    used as a safeguard.

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
        lambda t: _cks_epsilon_at(1.0 + math.exp(t), rho, log_inv_delta),
        bounds=(centre - 12.0, centre + 12.0),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return float(max(min(result.fun, classical), 0.0))


def zcdp_rho(epsilon, delta):
    """Largest rho such that rho-zCDP implies (epsilon, delta)-DP.

    Inverts :func:`zcdp_epsilon` (which is increasing in rho) numerically; the
    returned rho satisfies ``zcdp_epsilon(rho, delta) <= epsilon``.

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
    # zcdp_epsilon(rho) >= rho, so the root lies in (0, epsilon].
    rho = brentq(
        lambda r: zcdp_epsilon(r, delta) - epsilon,
        0.0,
        epsilon,
        xtol=1e-15,
        rtol=4 * np.finfo(float).eps,
    )
    # Never overshoot the target: step down until the guarantee holds.
    while zcdp_epsilon(rho, delta) > epsilon:
        rho = np.nextafter(rho, 0.0) * (1 - 1e-12)
    return float(rho)


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
    compose back to ``budget``.

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
    {'mean': ZCDP(rho=0.2), 'covariance': ZCDP(rho=0.6000000000000001)}
    """
    if not isinstance(budget, PureDP | ZCDP):
        raise TypeError("split_budget needs a PureDP or ZCDP budget.")
    values = np.asarray(list(shares.values()), dtype=float)
    if np.any(values < 0) or not math.isclose(values.sum(), 1.0, rel_tol=1e-12):
        raise ValueError(f"shares must be non-negative and sum to 1, got {shares}.")
    return {name: budget.fraction(share) for name, share in shares.items()}
