"""Additive noise calibrated to a budget: Gaussian under zCDP, Laplace under pure DP.

Estimators that have a zCDP form and a pure-DP form (GaussCov and LapCov,
SeparateCov and SeparateLapCov of Dong, Liang and Yi, 2022, ...) state both
sensitivities of each statistic and let the budget's type pick the mechanism.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from dataclasses import dataclass, field

from scipy.special import ndtri

from ..accounting import ZCDP, PureDP
from . import _noise
from ._calibration import gaussian_scale, laplace_scale


@dataclass(frozen=True)
class AdditiveNoise:
    """Calibrated additive noise: a law and its scale.

    Parameters
    ----------
    law : {"gaussian", "laplace"}
        Law of each coordinate of the noise.
    scale : float
        Standard deviation (Gaussian) or Laplace scale ``b``.
    sensitivity : float, default=None
        The sensitivity the scale was calibrated to (L2 for the Gaussian, L1
        for the Laplace): the hardened sampler (``secure_noise``) needs it to
        choose its grid.
    """

    law: str
    scale: float
    sensitivity: float = field(default=None, repr=False, compare=False)

    @property
    def std(self):
        """Standard deviation of one coordinate of the noise."""
        return self.scale if self.law == "gaussian" else math.sqrt(2.0) * self.scale

    def quantile(self, level):
        """The ``level`` quantile of one coordinate of the noise.

        The continuous law's. The hardened samplers (``secure_noise``) draw
        a discrete law of the same scale on a fine grid instead, whose
        quantiles these approximate.

        Parameters
        ----------
        level : float
            In ``(0, 1)``.

        Returns
        -------
        quantile : float
            ``scale * Phi^-1(level)`` (Gaussian) or ``-scale * sign(1/2 -
            level) * log(1 - 2 |level - 1/2|)`` (Laplace).

        Examples
        --------
        >>> from dpcov.mechanisms import AdditiveNoise
        >>> round(AdditiveNoise("gaussian", 2.0).quantile(0.975), 4)
        3.9199
        >>> round(AdditiveNoise("laplace", 1.0).quantile(0.95), 4)
        2.3026
        """
        if not 0.0 < level < 1.0:
            raise ValueError(f"level must be in (0, 1), got {level!r}.")
        if self.law == "gaussian":
            return float(self.scale * ndtri(level))
        tail = 1.0 - 2.0 * abs(level - 0.5)
        return float(math.copysign(-self.scale * math.log(tail), level - 0.5))

    def add(self, value, rng):
        """Return ``value`` plus iid noise of this law and scale.

        Parameters
        ----------
        value : ndarray or float
            The exact statistic.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        noisy : ndarray or float
            The noisy statistic.
        """
        add = _noise.add_gaussian if self.law == "gaussian" else _noise.add_laplace
        return add(rng, value, self.scale, self.sensitivity)

    def add_symmetric(self, matrix, rng):
        """Return a symmetric matrix plus a symmetric (Wigner) noise matrix.

        Parameters
        ----------
        matrix : ndarray of shape (d, d)
            The exact symmetric statistic.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        noisy : ndarray of shape (d, d)
            The noisy symmetric matrix.
        """
        return _noise.add_symmetric(rng, matrix, self.scale, self.law, self.sensitivity)


def calibrate_additive(budget, *, l2_sensitivity, l1_sensitivity):
    """Calibrate additive noise for a statistic to a zCDP or pure-DP budget.

    Parameters
    ----------
    budget : ZCDP or PureDP
        The budget of this release.
    l2_sensitivity : float
        L2 sensitivity of the statistic (used under zCDP).
    l1_sensitivity : float
        L1 sensitivity of the statistic (used under pure DP).

    Returns
    -------
    noise : AdditiveNoise
        Gaussian noise with ``sigma = l2 / sqrt(2 rho)`` under zCDP, Laplace
        noise with ``b = l1 / epsilon`` under pure DP.

    Examples
    --------
    >>> from dpcov.accounting import PureDP, ZCDP
    >>> from dpcov.mechanisms import calibrate_additive
    >>> calibrate_additive(ZCDP(0.5), l2_sensitivity=1.0, l1_sensitivity=3.0)
    AdditiveNoise(law='gaussian', scale=1.0)
    >>> calibrate_additive(PureDP(0.5), l2_sensitivity=1.0, l1_sensitivity=3.0)
    AdditiveNoise(law='laplace', scale=6.0)
    """
    if isinstance(budget, ZCDP):
        scale = gaussian_scale(l2_sensitivity, budget.rho)
        return AdditiveNoise("gaussian", scale, l2_sensitivity)
    if isinstance(budget, PureDP):
        scale = laplace_scale(l1_sensitivity, budget.epsilon)
        return AdditiveNoise("laplace", scale, l1_sensitivity)
    raise TypeError(f"budget must be ZCDP or PureDP, got {type(budget).__name__}.")
