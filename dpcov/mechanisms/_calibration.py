"""Noise calibration: from a sensitivity and a budget to a noise scale.

Kept apart from sampling so that every scale can be tested against its closed
form and reused in error bounds.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math


def gaussian_scale(sensitivity, rho):
    """Noise standard deviation of the Gaussian mechanism under rho-zCDP.

    Adding ``N(0, sigma**2)`` to every coordinate of a statistic whose L2
    sensitivity is ``sensitivity`` is rho-zCDP for
    ``sigma = sensitivity / sqrt(2 rho)`` (Proposition 1.6 in [1]_).

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity of the statistic, non-negative.
    rho : float
        Budget in zCDP, positive (``inf`` gives zero noise).

    Returns
    -------
    sigma : float
        Standard deviation of the noise.

    References
    ----------
    .. [1] Bun, M. and Steinke, T. "Concentrated Differential Privacy:
       Simplifications, Extensions, and Lower Bounds". TCC 2016.
       https://arxiv.org/abs/1605.02065.

    Examples
    --------
    >>> from dpcov.mechanisms import gaussian_scale
    >>> gaussian_scale(2.0, 0.5)
    2.0
    """
    if not sensitivity >= 0:
        raise ValueError(f"sensitivity must be non-negative, got {sensitivity!r}.")
    if not rho > 0:
        raise ValueError(f"rho must be positive, got {rho!r}.")
    if math.isinf(rho):
        return 0.0
    return sensitivity / math.sqrt(2.0 * rho)


def laplace_scale(sensitivity, epsilon):
    """Noise scale of the Laplace mechanism under pure epsilon-DP.

    Adding ``Laplace(b)`` noise to every coordinate of a statistic whose L1
    sensitivity is ``sensitivity`` is epsilon-DP for ``b = sensitivity / epsilon``
    (Dwork, McSherry, Nissim and Smith, TCC 2006).

    Parameters
    ----------
    sensitivity : float
        L1 sensitivity of the statistic, non-negative.
    epsilon : float
        Privacy budget, positive (``inf`` gives zero noise).

    Returns
    -------
    scale : float
        The Laplace scale ``b``; the noise has standard deviation ``sqrt(2) b``.

    Examples
    --------
    >>> from dpcov.mechanisms import laplace_scale
    >>> laplace_scale(2.0, 0.5)
    4.0
    """
    if not sensitivity >= 0:
        raise ValueError(f"sensitivity must be non-negative, got {sensitivity!r}.")
    if not epsilon > 0:
        raise ValueError(f"epsilon must be positive, got {epsilon!r}.")
    if math.isinf(epsilon):
        return 0.0
    return sensitivity / epsilon
