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


def exponential_scale(sensitivity, epsilon):
    """Exponent of the exponential mechanism under pure epsilon-DP.

    Sampling an output ``u`` with probability (density) proportional to
    ``exp(c q(u))`` is epsilon-DP for ``c = epsilon / (2 sensitivity)``, where
    ``sensitivity`` bounds ``|q(u; X) - q(u; X')|`` over neighbours and
    outputs (McSherry and Talwar, FOCS 2007). The same mechanism is
    epsilon-bounded-range, hence ``epsilon**2 / 8``-zCDP (Cesar and Rogers,
    ALT 2021, Lemma 3.2); see :func:`bounded_range_epsilon`.

    Parameters
    ----------
    sensitivity : float
        Sensitivity of the score, positive.
    epsilon : float
        Privacy budget, positive (``inf`` gives an infinite exponent: the
        mechanism returns a maximiser).

    Returns
    -------
    c : float
        The exponent ``epsilon / (2 sensitivity)``.

    Examples
    --------
    >>> from dpcov.mechanisms import exponential_scale
    >>> exponential_scale(1.0, 0.5)
    0.25
    """
    if not sensitivity > 0:
        raise ValueError(f"sensitivity must be positive, got {sensitivity!r}.")
    if not epsilon > 0:
        raise ValueError(f"epsilon must be positive, got {epsilon!r}.")
    return epsilon / (2.0 * sensitivity)


def bounded_range_epsilon(rho):
    """Largest epsilon of an exponential mechanism that is rho-zCDP.

    The exponential mechanism with exponent ``epsilon / (2 sensitivity)`` has
    a privacy-loss random variable whose range has length at most epsilon
    (it is epsilon-bounded-range, Durfee and Rogers, NeurIPS 2019), and an
    epsilon-bounded-range mechanism is ``epsilon**2 / 8``-zCDP (Hoeffding's
    lemma on the privacy loss; Cesar and Rogers, ALT 2021, Lemma 3.2). So the
    mechanism may run at ``epsilon = sqrt(8 rho)``, twice the
    ``sqrt(2 rho)`` that the generic pure-to-zCDP conversion allows.

    Parameters
    ----------
    rho : float
        Budget in zCDP, positive (``inf`` allowed).

    Returns
    -------
    epsilon : float
        ``sqrt(8 rho)``.

    Examples
    --------
    >>> from dpcov.mechanisms import bounded_range_epsilon
    >>> bounded_range_epsilon(0.5)
    2.0
    """
    if not rho > 0:
        raise ValueError(f"rho must be positive, got {rho!r}.")
    return math.sqrt(8.0 * rho)


def truncated_laplace_params(sensitivity, epsilon, delta):
    """Scale and truncation of the truncated Laplace mechanism.

    Adding Laplace(``lambda``) noise truncated to ``[-A, A]`` to a statistic
    of sensitivity ``Delta`` is (epsilon, delta)-DP for ``lambda = Delta /
    epsilon`` and ``A = lambda log(1 + (e**epsilon - 1) / (2 delta))`` (Geng,
    Ding, Guo and Kumar, AISTATS 2020): the mass the shifted law puts on
    ``[A - Delta, A]`` is exactly delta.

    Parameters
    ----------
    sensitivity : float
        Sensitivity ``Delta`` (absolute change of a scalar), positive.
    epsilon : float
        Privacy budget, positive and finite.
    delta : float
        In (0, 1).

    Returns
    -------
    scale : float
        ``lambda``.
    bound : float
        ``A``.

    Examples
    --------
    >>> from dpcov.mechanisms import truncated_laplace_params
    >>> scale, bound = truncated_laplace_params(1.0, 1.0, 1e-6)
    >>> scale, round(bound, 3)
    (1.0, 13.664)
    """
    if not sensitivity > 0:
        raise ValueError(f"sensitivity must be positive, got {sensitivity!r}.")
    if not 0 < epsilon < math.inf:
        raise ValueError(f"epsilon must be positive and finite, got {epsilon!r}.")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    scale = sensitivity / epsilon
    return scale, scale * math.log1p(math.expm1(epsilon) / (2.0 * delta))
