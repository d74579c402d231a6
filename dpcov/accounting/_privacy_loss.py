"""Privacy loss distributions, discretised pessimistically, and their composition.

The privacy loss of a mechanism between two neighbouring inputs is the
random variable ``L = log(P(o) / Q(o))`` for ``o`` drawn from ``P``; its
distribution (the PLD) gives the mechanism's whole (epsilon, delta) curve,

.. math::

    \\delta(\\varepsilon) = \\mathbb{E}\\left[(1 - e^{\\varepsilon - L})_+\\right]
    + P(L = \\infty),

and the PLD of a composition is the convolution of the parts' (Sommer,
Meiser and Mohammadi, 2019; Koskela, Jälkö and Honkela, 2020). For each
part, the PLD of a dominating pair (the worst neighbouring pair) is used:

* a Gaussian mechanism with sensitivity ``mu`` standard deviations: ``L ~
  N(mu**2 / 2, mu**2)`` (Dong, Roth and Su, 2022);
* any pure epsilon-DP step: randomized response, ``L = epsilon`` with
  probability ``e^eps / (1 + e^eps)``, else ``-epsilon`` (Kairouz, Oh and
  Viswanath, 2015);
* an epsilon-bounded-range step (the exponential mechanism): the density
  ``e^((eps + x) / 2) / (2 (e^eps - 1))`` on ``(-eps, eps)``, whose curve
  ``(e^(eps/2) - e^(eps'/2))**2 / (e^eps - 1)`` is the largest over the
  worst cases of Dong, Durfee and Rogers (2020, Lemma 3.3), the two-point
  losses ``{t - eps, t}`` (attained at ``t = (eps + eps') / 2``).

:class:`PrivacyLoss` holds a PLD on the grid ``k * spacing``, every loss
rounded *up* to the grid point above it (a loss that is larger on every
outcome gives a larger delta at every epsilon, composition included, so the
curve computed is an upper bound of the true one), with the mass of the far
upper tail moved to ``+inf`` and that of the far lower tail up to the
grid's first point (both pessimistic as well).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from dataclasses import dataclass

import numpy as np
from scipy import signal, special
from scipy.optimize import brentq

#: Default grid spacing of the losses: each part's loss is rounded up by at
#: most this much.
SPACING = 1e-4
#: Mass left in each far tail of a Gaussian part (moved up: pessimistic).
TAIL = 1e-15
#: Below this many points in the smaller operand, a direct convolution (exact
#: sums of non-negative terms); above it, by FFT.
DIRECT_UP_TO = 64


@dataclass(frozen=True, eq=False)
class PrivacyLoss:
    """A privacy loss distribution on the grid ``k * spacing``, rounded up.

    Parameters
    ----------
    spacing : float
        The grid's step.
    start : int
        The grid index of ``probabilities[0]``: its loss is ``start *
        spacing``.
    probabilities : ndarray of shape (m,)
        Non-negative masses of the finite losses.
    infinity : float
        The mass at ``+inf`` (outcomes one neighbour never gives, and the
        far upper tail).
    """

    spacing: float
    start: int
    probabilities: np.ndarray
    infinity: float = 0.0

    # -- the parts ------------------------------------------------------------

    @classmethod
    def identity(cls, spacing=SPACING):
        """The loss of no step: 0 with probability 1."""
        return cls(spacing, 0, np.ones(1))

    @classmethod
    def gaussian(cls, mu, spacing=SPACING):
        """A Gaussian mechanism with sensitivity ``mu`` noise standard deviations."""
        if mu == 0:
            return cls.identity(spacing)
        mean, scale = mu * mu / 2.0, mu
        reach = -special.ndtri(TAIL) * scale  # about 8 standard deviations
        low = math.ceil((mean - reach) / spacing)
        high = math.ceil((mean + reach) / spacing)
        edges = np.arange(low - 1, high + 1) * spacing
        # Mass of ((k - 1) h, k h] at k h: CDF differences below the mean,
        # survival-function differences above it (no digits lost in either
        # tail). The lower tail goes up to the first point, the upper tail to
        # infinity.
        z = (edges - mean) / scale
        cdf, survival = special.ndtr(z), special.ndtr(-z)
        probabilities = np.where(
            z[1:] <= 0, cdf[1:] - cdf[:-1], survival[:-1] - survival[1:]
        )
        probabilities[0] += cdf[0]
        probabilities = np.maximum(probabilities, 0.0)
        return cls(spacing, low, probabilities, float(survival[-1]))

    @classmethod
    def pure(cls, epsilon, spacing=SPACING):
        """Any pure ``epsilon``-DP step (randomized response dominates it)."""
        if epsilon == 0:
            return cls.identity(spacing)
        low, high = math.ceil(-epsilon / spacing), math.ceil(epsilon / spacing)
        probabilities = np.zeros(high - low + 1)
        probabilities[0] = special.expit(-epsilon)
        probabilities[-1] += special.expit(epsilon)
        return cls(spacing, low, probabilities)

    @classmethod
    def bounded_range(cls, epsilon, spacing=SPACING):
        """An ``epsilon``-bounded-range step, e.g. the exponential mechanism.

        The loss of its dominating pair has the density ``e^((eps + x) / 2) /
        (2 (e^eps - 1))`` on ``(-eps, eps)``: its CDF is ``(e^((eps + x)/2) -
        1) / (e^eps - 1)``.
        """
        if epsilon == 0:
            return cls.identity(spacing)
        low, high = math.ceil(-epsilon / spacing), math.ceil(epsilon / spacing)
        edges = np.clip(np.arange(low - 1, high + 1) * spacing, -epsilon, epsilon)
        cdf = np.expm1((epsilon + edges) / 2.0) / math.expm1(epsilon)
        return cls(spacing, low, np.maximum(np.diff(cdf), 0.0))

    # -- composition and the curve ---------------------------------------------

    def compose(self, other):
        """The PLD of both steps, one after the other (a convolution)."""
        if other.spacing != self.spacing:
            raise ValueError("compose privacy losses on the same grid.")
        a, b = self.probabilities, other.probabilities
        if min(a.size, b.size) <= DIRECT_UP_TO:
            probabilities = np.convolve(a, b)
        else:
            probabilities = np.maximum(signal.fftconvolve(a, b), 0.0)
        infinity = 1.0 - (1.0 - self.infinity) * (1.0 - other.infinity)
        return PrivacyLoss(
            self.spacing, self.start + other.start, probabilities, infinity
        )

    def losses(self):
        """The grid points of ``probabilities``."""
        return (self.start + np.arange(self.probabilities.size)) * self.spacing

    def delta(self, epsilon):
        """``E[(1 - e^(epsilon - L))_+] + P(L = inf)``: an upper bound of the curve."""
        losses = self.losses()
        above = losses > epsilon
        gain = -np.expm1(epsilon - losses[above])
        return float(np.dot(gain, self.probabilities[above]) + self.infinity)

    def epsilon(self, delta):
        """The smallest ``epsilon >= 0`` with ``self.delta(epsilon) <= delta``."""
        if self.delta(0.0) <= delta:
            return 0.0
        if self.infinity > delta:
            return math.inf
        top = float(self.losses()[-1])
        # delta(top) is the mass at infinity only: the root lies below top.
        root = brentq(lambda e: self.delta(e) - delta, 0.0, top, xtol=1e-12)
        epsilon, step = float(root), 0.0
        while self.delta(epsilon) > delta:
            step = max(2.0 * step, math.ulp(epsilon))
            epsilon += step
        return epsilon
