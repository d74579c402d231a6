"""Public tail bounds for Gaussian data and Gaussian noise.

The Gaussian learners clip rows to radii and plan their iterations with
bounds that depend only on public quantities (dimension, sample size, budget,
failure probability). Nothing here reads data; the bounds describe accuracy,
never privacy, which holds whatever the data.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math


def gaussian_norm_tail(n_features, beta):
    """Return the radius a standard Gaussian vector exceeds w.p. at most beta.

    For ``z ~ N(0, I_d)``, ``P[||z||**2 >= d + 2 sqrt(d L) + 2 L] <= exp(-L)``
    (Laurent and Massart, 2000, Lemma 1), with ``L = ln(1 / beta)``. If the
    covariance is at most ``u I``, the radius scales by ``sqrt(u)``.

    Parameters
    ----------
    n_features : int
        Dimension ``d``.
    beta : float
        Failure probability in (0, 1).

    Returns
    -------
    radius : float
        The radius ``sqrt(d + 2 sqrt(d L) + 2 L)``.

    Examples
    --------
    >>> from dpcov.mechanisms import gaussian_norm_tail
    >>> round(gaussian_norm_tail(10, 0.1), 3)
    4.92
    """
    if not 0 < beta < 1:
        raise ValueError(f"beta must be in (0, 1), got {beta!r}.")
    log_term = math.log(1.0 / beta)
    return math.sqrt(
        n_features + 2.0 * math.sqrt(n_features * log_term) + 2.0 * log_term
    )


def wigner_norm_bound(n_features, scale, beta):
    """Operator-norm bound for symmetric Gaussian noise, exceeded w.p. <= beta.

    For the symmetric matrix ``Y`` whose entries on and above the diagonal are
    iid ``N(0, scale**2)``, ``E ||Y|| <= 2 scale sqrt(d)`` (up to lower-order
    terms) and each extreme eigenvalue is a ``sqrt(2) scale``-Lipschitz
    function of the Gaussian entries, so Gaussian concentration and a union
    over the two extremes give ``||Y|| <= scale (2 sqrt(d) + 2 sqrt(ln(2 /
    beta)))`` with probability at least ``1 - beta``.

    Parameters
    ----------
    n_features : int
        Matrix size ``d``.
    scale : float
        Standard deviation of each upper-triangular entry.
    beta : float
        Failure probability in (0, 1).

    Returns
    -------
    bound : float
        The operator-norm bound.

    Examples
    --------
    >>> from dpcov.mechanisms import wigner_norm_bound
    >>> round(wigner_norm_bound(10, 1.0, 0.05), 2)
    10.17
    """
    if not 0 < beta < 1:
        raise ValueError(f"beta must be in (0, 1), got {beta!r}.")
    return scale * (2.0 * math.sqrt(n_features) + 2.0 * math.sqrt(math.log(2.0 / beta)))


def covariance_deviation(n_features, n_samples, beta):
    """Relative deviation of a Gaussian sample covariance, exceeded w.p. <= beta.

    For ``n`` rows iid ``N(0, S)``, the empirical second moment ``S_n``
    satisfies ``(1 - xi) S <= S_n <= (1 + xi) S`` with probability at least
    ``1 - beta``, for ``xi = 2 t + t**2`` and ``t = sqrt(d / n) + sqrt(2
    ln(2 / beta) / n)`` (singular values of a Gaussian matrix, Vershynin 2012,
    Corollary 5.35).

    Parameters
    ----------
    n_features : int
        Dimension ``d``.
    n_samples : int
        Number of rows ``n``.
    beta : float
        Failure probability in (0, 1).

    Returns
    -------
    xi : float
        The relative deviation (may exceed 1 when ``n`` is small).

    Examples
    --------
    >>> from dpcov.mechanisms import covariance_deviation
    >>> round(covariance_deviation(10, 10_000, 0.1), 3)
    0.115
    """
    if not 0 < beta < 1:
        raise ValueError(f"beta must be in (0, 1), got {beta!r}.")
    t = math.sqrt(n_features / n_samples) + math.sqrt(
        2.0 * math.log(2.0 / beta) / n_samples
    )
    return 2.0 * t + t * t
