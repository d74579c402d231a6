"""Noise of the K-norm mechanism for the nuclear norm ("nuclear-Laplace").

A d x d real matrix ``W`` with density proportional to ``exp(-kappa ||W||_*)``
factorises through its singular value decomposition ``W = R U diag(s) V^T``
(seed 002, Lemma 4.3; spec sec. 7) into independent parts:

* the radius ``R = ||W||_*`` is Gamma(``d**2``, ``1 / kappa``);
* ``U`` and ``V`` are Haar on the orthogonal group;
* the profile ``s`` (singular values over their sum, on the simplex) has
  density proportional to ``prod_{i<j} |s_i**2 - s_j**2|``, the Jacobian of
  the real square SVD.

The first two are sampled exactly. The profile is sampled exactly by rejection
from normalised Wishart(d + 1) eigenvalues (density ``prod |s_i - s_j|``),
accepted with probability ``prod_{i<j} d (s_i + s_j) / 2 <= 1``; the expected
number of proposals grows like ``exp(Theta(d**2))`` (1.45 at d = 3, 750 at
d = 8). For larger ``d``, a Gibbs sampler on the ordered singular values
(slice sampling of each log-concave conditional) approximates it: the
release is then pure DP only up to the total-variation distance between the
chain's law and the target.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

from . import _noise

#: Largest dimension for which the exact profile sampler is the default.
EXACT_MAX_DIM = 8


def haar_orthogonal(rng, n_features):
    """Draw a Haar-distributed orthogonal matrix.

    QR of a Gaussian matrix, with each column of ``Q`` multiplied by the sign
    of the matching diagonal entry of ``R`` (without it the law is not Haar).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    n_features : int
        Size ``d``.

    Returns
    -------
    q : ndarray of shape (d, d)
        Orthogonal matrix.
    """
    q, r = np.linalg.qr(_noise.gaussian(rng, 1.0, (n_features, n_features)))
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)


def _log_acceptance(s):
    d = s.size
    i, j = np.triu_indices(d, k=1)
    return float(np.sum(np.log(d * (s[i] + s[j]) / 2.0)))


def _wishart_profile(rng, n_features):
    # Normalised eigenvalues of a real Wishart(d + 1, I) matrix: density
    # prop. to prod |s_i - s_j| on the simplex, decreasing.
    d = n_features
    g = _noise.gaussian(rng, 1.0, (d + 1, d))
    w = np.linalg.eigvalsh(g.T @ g)[::-1]
    return w / w.sum()


def nuclear_profile_exact(rng, n_features):
    """Draw the normalised singular-value profile exactly (rejection).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    n_features : int
        Dimension ``d``.

    Returns
    -------
    s : ndarray of shape (d,)
        Decreasing, positive, summing to 1, with density proportional to
        ``prod_{i<j} |s_i**2 - s_j**2|`` on the simplex.
    """
    d = n_features
    if d == 1:
        return np.ones(1)
    while True:
        s = _wishart_profile(rng, d)
        # prod d (s_i + s_j) / 2 <= 1, with equality at the centroid.
        if math.log1p(-_noise.uniform(rng)) < _log_acceptance(s):
            return s


def _log_conditional(x, others):
    # log of prod_j |x^2 - sigma_j^2| e^{-x} (kappa = 1).
    with np.errstate(divide="ignore"):
        return float(np.sum(np.log(np.abs(x - others)) + np.log(x + others)) - x)


def nuclear_profile_gibbs(rng, n_features, n_sweeps, *, start=None):
    """Approximate the profile by Gibbs sampling of the ordered singular values.

    The singular values of the unit-rate law have log-density
    ``sum_{i<j} log(sigma_i**2 - sigma_j**2) - sum_i sigma_i`` on the chamber
    ``sigma_1 > ... > sigma_d > 0``, log-concave there; each sweep updates
    every coordinate in turn from its conditional on
    ``(sigma_{k+1}, sigma_{k-1})`` by slice sampling (Neal, 2003) with
    shrinkage (stepping out, width ``d``, above the top one).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    n_features : int
        Dimension ``d``.
    n_sweeps : int
        Number of sweeps.
    start : ndarray of shape (d,), default=None
        Initial singular values (decreasing, positive); by default a draw from
        the Wishart(d + 1) proposal of :func:`nuclear_profile_exact` times a
        Gamma(``d**2``) radius.

    Returns
    -------
    s : ndarray of shape (d,)
        The last state, normalised to sum to 1 (decreasing).
    """
    d = n_features
    if d == 1:
        return np.ones(1)
    if start is None:
        profile = _wishart_profile(rng, d)
        sigma = _noise.gamma(rng, d * d, 1.0) * profile
    else:
        sigma = np.array(start, dtype=float)
    width = float(d)
    for _ in range(n_sweeps):
        for k in range(d):
            x0 = sigma[k]
            others = np.delete(sigma, k)
            low = sigma[k + 1] if k + 1 < d else 0.0
            high = sigma[k - 1] if k > 0 else math.inf
            level = _log_conditional(x0, others) + math.log1p(-_noise.uniform(rng))
            if math.isinf(high):
                # Stepping out (Neal 2003, fig. 3) from a randomly placed
                # interval of width d; the left end stops at the chamber's wall.
                left = x0 - width * _noise.uniform(rng)
                right = left + width
                while left > low and _log_conditional(left, others) > level:
                    left -= width
                left = max(left, low)
                while _log_conditional(right, others) > level:
                    right += width
            else:
                left, right = low, high
            while True:
                x = left + (right - left) * _noise.uniform(rng)
                if _log_conditional(x, others) > level:
                    sigma[k] = x
                    break
                if x < x0:
                    left = x
                else:
                    right = x
    return sigma / sigma.sum()


def default_sweeps(n_features):
    """Gibbs sweeps per draw: ``max(200, 20 d)`` (spec sec. 7).

    The measured integrated autocorrelation times are at most 14 sweeps up to
    d = 100 (for ``||s||**2``), so this is at least 14 times each.

    Parameters
    ----------
    n_features : int
        Dimension ``d``.

    Returns
    -------
    n_sweeps : int
        Number of sweeps.
    """
    return max(200, 20 * n_features)


def sample_nuclear_laplace(
    rng, n_features, kappa, *, exact_max_dim=EXACT_MAX_DIM, n_sweeps=None
):
    """Draw ``W`` with density proportional to ``exp(-kappa ||W||_*)``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    n_features : int
        Size ``d`` of the (general, non-symmetric) ``d x d`` matrix.
    kappa : float
        Rate, positive (``inf`` gives the zero matrix).
    exact_max_dim : int, default=8
        Use the exact profile sampler when ``d <= exact_max_dim``, the Gibbs
        sampler otherwise (never switched silently: the caller chooses).
    n_sweeps : int, default=None
        Gibbs sweeps; ``None`` uses :func:`default_sweeps`.

    Returns
    -------
    w : ndarray of shape (d, d)
        The noise matrix.
    exact : bool
        Whether the profile was sampled exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.mechanisms import sample_nuclear_laplace
    >>> w, exact = sample_nuclear_laplace(np.random.default_rng(0), 3, 10.0)
    >>> w.shape, exact
    ((3, 3), True)
    """
    d = n_features
    if math.isinf(kappa):
        return np.zeros((d, d)), True
    radius = _noise.gamma(rng, d * d, 1.0 / kappa)
    exact = d <= exact_max_dim
    if exact:
        profile = nuclear_profile_exact(rng, d)
    else:
        sweeps = default_sweeps(d) if n_sweeps is None else n_sweeps
        profile = nuclear_profile_gibbs(rng, d, sweeps)
    u, v = haar_orthogonal(rng, d), haar_orthogonal(rng, d)
    return radius * (u * profile) @ v.T, exact
