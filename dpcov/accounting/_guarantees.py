"""The privacy guarantees: pure DP, zCDP and approximate DP."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from dataclasses import dataclass
from fractions import Fraction

from ._conversions import _check_nonnegative, _pure_rho, zcdp_epsilon


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
