"""Privacy loss distributions: a Gaussian part, exact, and a discrete part, rounded up.

The privacy loss of a mechanism between two neighbouring inputs is the
random variable ``L = log(P(o) / Q(o))`` for ``o`` drawn from ``P``; its
distribution (the PLD) gives the mechanism's whole (epsilon, delta) curve,

.. math::

    \\delta(\\varepsilon) = \\mathbb{E}\\left[(1 - e^{\\varepsilon - L})_+\\right]
    + P(L = \\infty),

and the PLD of a composition, adaptive or not, is dominated by the
convolution of the parts' dominating pairs (Zhu, Dong and Wang 2022,
Theorem 10; Sommer, Meiser and Mohammadi 2019). The dominating pairs used:

* a Gaussian mechanism with sensitivity ``mu`` standard deviations: ``L ~
  N(mu**2 / 2, mu**2)``; Gaussian parts compose to one with ``mu =
  sqrt(sum mu_i**2)`` (Dong, Roth and Su 2022), kept exact here;
* any pure epsilon-DP step: randomized response, ``L = epsilon`` with
  probability ``e^eps / (1 + e^eps)``, else ``-epsilon`` (Kairouz, Oh and
  Viswanath 2015);
* an epsilon-bounded-range step (the exponential mechanism): the density
  ``e^((eps + x) / 2) / (2 (e^eps - 1))`` on ``(-eps, eps)``, whose curve
  ``(e^(eps/2) - e^(eps'/2))**2 / (e^eps - 1)`` is the largest over the
  worst cases of Dong, Durfee and Rogers (2020, Lemma 3.3), the two-point
  losses ``{t - eps, t}`` (attained at ``t = (eps + eps') / 2``); it is
  symmetric, so it dominates at every order.

:class:`PrivacyLoss` holds the composed Gaussian part's ``mu`` and the other
parts' composed PMF on the grid ``k * spacing``, every loss rounded *up* to
the grid point above it (a loss that is larger on every outcome gives a
larger delta at every epsilon, composition included). Its delta at epsilon
is ``sum_j p_j delta_G(epsilon - l_j)``, the exact Gaussian curve
(``_conversions._gaussian_curve``) shifted by each discrete loss, raised by
the curve's error bound: an upper bound of the true curve. The discrete
parts are convolved directly (sums of non-negative terms, no FFT), at a cost
of the product of their sizes (``2 eps / spacing`` points for a
bounded-range step).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special
from scipy.optimize import brentq

from ._conversions import _U, _gaussian_curve_above

#: Default grid spacing of the discrete parts' losses: each is rounded up by
#: at most this much.
SPACING = 1e-4


def _grid_span(epsilon, spacing):
    # The grid indices of -epsilon and epsilon, rounded up.
    return math.ceil(-epsilon / spacing), math.ceil(epsilon / spacing)


@dataclass(frozen=True, eq=False)
class PrivacyLoss:
    """A composed privacy loss: a Gaussian part and a discrete part.

    Parameters
    ----------
    mu : float
        The Gaussian part's sensitivity in standard deviations (0: none).
    spacing : float
        The discrete part's grid step.
    start : int
        The grid index of ``probabilities[0]``: its loss is ``start *
        spacing``.
    probabilities : ndarray of shape (m,)
        Non-negative masses of the discrete part's losses.
    rounding : float
        A bound on the masses' relative error (their formulas' and the
        convolutions' rounding).
    """

    mu: float = 0.0
    spacing: float = SPACING
    start: int = 0
    probabilities: np.ndarray = field(default_factory=lambda: np.ones(1))
    rounding: float = 0.0

    @classmethod
    def gaussian(cls, mu, spacing=SPACING):
        """A Gaussian mechanism with sensitivity ``mu`` noise standard deviations.

        Parameters
        ----------
        mu : float
            Non-negative and finite.
        spacing : float, default=SPACING
            The grid of the discrete parts it may be composed with.

        Returns
        -------
        loss : PrivacyLoss
        """
        return cls(mu=float(mu), spacing=spacing)

    @classmethod
    def pure(cls, epsilon, spacing=SPACING):
        """Any pure ``epsilon``-DP step (randomized response dominates it).

        Parameters
        ----------
        epsilon : float
            Non-negative and finite.
        spacing : float, default=SPACING
            The grid step.

        Returns
        -------
        loss : PrivacyLoss
        """
        low, high = _grid_span(epsilon, spacing)
        probabilities = np.zeros(high - low + 1)
        probabilities[0] += special.expit(-epsilon)
        probabilities[-1] += special.expit(epsilon)
        return cls(
            spacing=spacing, start=low, probabilities=probabilities, rounding=4 * _U
        )

    @classmethod
    def bounded_range(cls, epsilon, spacing=SPACING):
        """An ``epsilon``-bounded-range step, e.g. the exponential mechanism.

        Its dominating loss has the density ``e^((eps + x) / 2) / (2 (e^eps -
        1))`` on ``(-eps, eps)``; each interval ``(a, b]`` between grid points
        goes to its upper end, with the mass ``e^((eps + a) / 2) expm1((b -
        a) / 2) / expm1(eps)`` (no difference of CDF values, which would lose
        digits near 1).

        Parameters
        ----------
        epsilon : float
            Non-negative and finite.
        spacing : float, default=SPACING
            The grid step.

        Returns
        -------
        loss : PrivacyLoss
        """
        if epsilon == 0:
            return cls(spacing=spacing)
        low, high = _grid_span(epsilon, spacing)
        edges = np.clip(np.arange(low - 1, high + 1) * spacing, -epsilon, epsilon)
        a, b = edges[:-1], edges[1:]
        probabilities = (
            np.exp((epsilon + a) / 2.0) * np.expm1((b - a) / 2.0) / math.expm1(epsilon)
        )
        return cls(
            spacing=spacing,
            start=low,
            probabilities=np.maximum(probabilities, 0.0),
            rounding=8 * _U,
        )

    def compose(self, other):
        """The loss of both steps, one after the other.

        Parameters
        ----------
        other : PrivacyLoss
            On the same grid.

        Returns
        -------
        loss : PrivacyLoss
            The Gaussian parts combined (``sqrt(mu**2 + other.mu**2)``), the
            discrete parts convolved.
        """
        if other.spacing != self.spacing:
            raise ValueError("compose privacy losses on the same grid.")
        # Each mass is a sum of at most min(m1, m2) products of non-negative
        # masses: relative error below (min(m1, m2) + 1) u beyond the parts'.
        terms = min(self.probabilities.size, other.probabilities.size)
        return PrivacyLoss(
            mu=math.hypot(self.mu, other.mu),
            spacing=self.spacing,
            start=self.start + other.start,
            probabilities=np.convolve(self.probabilities, other.probabilities),
            rounding=self.rounding + other.rounding + (terms + 1) * _U,
        )

    def delta(self, epsilon):
        """An upper bound of the composed curve's delta at ``epsilon``.

        Parameters
        ----------
        epsilon : float
            Any real number.

        Returns
        -------
        delta : float
            ``sum_j p_j delta_G(epsilon - l_j)``, each term an upper bound of
            the Gaussian curve's (``_gaussian_curve_above``), raised by the
            masses' and the sum's rounding; without a Gaussian part, ``sum_j
            p_j (1 - e^(epsilon - l_j))_+``. At most 1.
        """
        losses = (self.start + np.arange(self.probabilities.size)) * self.spacing
        # The grid points in floats may sit a few ulps below the exact sums
        # of rounded-up losses: raise them by 4 u of the largest.
        losses = losses + 4 * _U * float(np.abs(losses).max())
        shifted = epsilon - losses
        if self.mu == 0:
            terms = np.where(shifted < 0, -np.expm1(np.minimum(shifted, 0.0)), 0.0)
            terms *= 1.0 + 2 * _U  # (expm1 to within an ulp or two)
        else:
            terms = _gaussian_curve_above(self.mu, shifted)
        total = float(np.dot(self.probabilities, terms))
        # (A sum of m non-negative products: relative error below 2 m u.)
        total *= (1.0 + self.rounding) * (1.0 + 2 * terms.size * _U)
        return min(total, 1.0) if math.isfinite(total) else 1.0

    def epsilon(self, delta):
        """The smallest ``epsilon >= 0`` with ``self.delta(epsilon) <= delta``.

        Parameters
        ----------
        delta : float
            In (0, 1).

        Returns
        -------
        epsilon : float
        """
        if self.delta(0.0) <= delta:
            return 0.0
        high = 1.0
        while self.delta(high) > delta:
            high *= 2.0
        root = brentq(lambda e: self.delta(e) - delta, 0.0, high, xtol=1e-12)
        epsilon, step = float(root), 0.0
        while self.delta(epsilon) > delta:
            step = max(2.0 * step, math.ulp(epsilon))
            epsilon += step
        return epsilon
