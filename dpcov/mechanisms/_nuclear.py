"""Noise of the K-norm mechanism for the nuclear norm ("nuclear-Laplace").

A d x d real matrix ``W`` with density proportional to ``exp(-kappa ||W||_*)``
factorises through its singular value decomposition ``W = R U diag(s) V^T``
(d'Orsi and Novikov 2025, Lemma 4.3) into independent parts:

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
    # Log acceptance probability of each proposal (rows of s).
    d = s.shape[-1]
    i, j = _noise.upper_triangle(d, 1)
    return np.sum(np.log(d * (s[..., i] + s[..., j]) / 2.0), axis=-1)


def _wishart_profiles(rng, n_features, size):
    # Normalised eigenvalues of ``size`` independent real Wishart(d + 1, I)
    # matrices: density prop. to prod |s_i - s_j| on the simplex, decreasing.
    d = n_features
    g = _noise.gaussian(rng, 1.0, (size, d + 1, d))
    w = np.linalg.eigvalsh(np.swapaxes(g, 1, 2) @ g)[:, ::-1]
    return w / w.sum(axis=1, keepdims=True)


def _wishart_profile(rng, n_features):
    return _wishart_profiles(rng, n_features, 1)[0]


#: Proposals of the exact profile sampler drawn at once: the first batch, then
#: doubling up to the cap (about 1 / acceptance rate at d = 8).
_FIRST_BATCH, _MAX_BATCH = 4, 1024


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
    # Proposals and their uniforms come in batches (stacked eigvalsh); the
    # first accepted one in draw order is returned, which is the law of
    # drawing them one at a time: the proposals are independent, and the
    # batch sizes do not depend on them.
    batch = _FIRST_BATCH
    while True:
        s = _wishart_profiles(rng, d, batch)
        log_u = np.log1p(-_noise.uniform(rng, batch))
        # prod d (s_i + s_j) / 2 <= 1, with equality at the centroid.
        accepted = np.flatnonzero(log_u < _log_acceptance(s))
        if accepted.size:
            return s[accepted[0]]
        batch = min(2 * batch, _MAX_BATCH)


class _UniformStream:
    """Uniforms on [0, 1) from ``rng``, drawn in blocks and read in order.

    ``Generator.random(n)`` gives the same numbers as ``n`` calls of
    ``Generator.random()``, so reading them from a block only saves the
    per-call cost (the generator is left further on at the end).
    """

    def __init__(self, rng, block):
        self._rng = rng
        self._block = block
        self._buffer = iter(())

    def next(self):
        u = next(self._buffer, None)
        if u is None:
            self._buffer = iter(_noise.uniform(self._rng, self._block).tolist())
            u = next(self._buffer)
        return u


def _log_conditional(x, others):
    # log of prod_j |x^2 - sigma_j^2| e^{-x} (kappa = 1); the product
    # (x - s)(x + s) has no cancellation, unlike x^2 - s^2. Called inside
    # np.errstate(divide="ignore"): log 0 = -inf at a chamber wall.
    return float(np.log(np.abs((x - others) * (x + others))).sum()) - x


def _slice_update(uniforms, others, x0, left, right, level=None):
    # Shrinkage (Neal 2003, fig. 5) on [left, right] around x0. With
    # ``level=None`` the level is drawn first, from the conditional at x0
    # and the next uniform; the conditional at x0 and at the first proposal
    # are then evaluated in one call, the proposal being drawn (from the next
    # uniform) before it is needed. The uniforms are used in the sequential
    # order: level, then proposals.
    if level is None:
        u = uniforms.next()
        x = left + (right - left) * uniforms.next()
        points = np.array([[x0], [x]])
        logs = np.log(np.abs((points - others) * (points + others))).sum(axis=1)
        level = float(logs[0]) - x0 + math.log1p(-u)
        value = float(logs[1]) - x
    else:
        x = left + (right - left) * uniforms.next()
        value = _log_conditional(x, others)
    while not value > level:
        if x < x0:
            left = x
        else:
            right = x
        x = left + (right - left) * uniforms.next()
        value = _log_conditional(x, others)
    return x


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
    # About 2.6 uniforms per coordinate update.
    uniforms = _UniformStream(rng, block=max(1024, 4 * d))
    with np.errstate(divide="ignore"):  # log 0 = -inf at a chamber wall
        for _ in range(n_sweeps):
            for k in range(d):
                x0 = float(sigma[k])
                others = np.concatenate((sigma[:k], sigma[k + 1 :]))
                low = float(sigma[k + 1]) if k + 1 < d else 0.0
                if k > 0:
                    high = float(sigma[k - 1])
                    sigma[k] = _slice_update(uniforms, others, x0, low, high)
                    continue
                level = _log_conditional(x0, others) + math.log1p(-uniforms.next())
                # Stepping out (Neal 2003, fig. 3) from a randomly placed
                # interval of width d; the left end stops at the chamber's wall.
                left = x0 - width * uniforms.next()
                right = left + width
                while left > low and _log_conditional(left, others) > level:
                    left -= width
                left = max(left, low)
                while _log_conditional(right, others) > level:
                    right += width
                sigma[k] = _slice_update(uniforms, others, x0, left, right, level)
    return sigma / sigma.sum()


def default_sweeps(n_features):
    """Gibbs sweeps per draw: ``max(200, 20 d)``.

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
