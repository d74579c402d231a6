"""Every random draw that dpcov's mechanisms make, in one place.

Mechanisms never call a random generator themselves: they ask this module for
noise of a given law and scale. Keeping the draws here means a hardened,
floating-point-safe sampler (exact discrete Gaussian/Laplace, snapping) can
replace these numpy draws behind one switch without touching any mechanism.

The draws are numpy's: they are fast and statistically exact, but like every
floating-point sampler they are not protected against the attacks on the
low-order bits of floating-point noise described by Mironov (CCS 2012).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np


def gaussian(rng, scale, size=None):
    """Draw centred Gaussian noise with standard deviation ``scale``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    scale : float
        Standard deviation, non-negative.
    size : int or tuple of int, default=None
        Output shape; ``None`` draws a single float.

    Returns
    -------
    noise : float or ndarray
        The draw(s).
    """
    return scale * rng.standard_normal(size)


def laplace(rng, scale, size=None):
    """Draw centred Laplace noise with scale ``scale`` (variance ``2 scale**2``).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    scale : float
        Laplace scale ``b``, non-negative.
    size : int or tuple of int, default=None
        Output shape; ``None`` draws a single float.

    Returns
    -------
    noise : float or ndarray
        The draw(s).
    """
    return scale * rng.laplace(0.0, 1.0, size)


def uniform(rng, size=None):
    """Draw uniform variates on [0, 1) (for rejection samplers' accept steps).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    size : int or tuple of int, default=None
        Output shape; ``None`` draws a single float.

    Returns
    -------
    u : float or ndarray
        The draw(s).
    """
    return rng.random(size)


def indices(rng, n, size=None):
    """Draw indices uniformly from ``range(n)``, with replacement.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    n : int
        Number of items, positive.
    size : int or tuple of int, default=None
        Output shape; ``None`` draws a single index.

    Returns
    -------
    idx : int or ndarray of int
        The draw(s).
    """
    return rng.integers(n, size=size)


def permutation(rng, n):
    """Draw a uniformly random permutation of ``range(n)``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    n : int
        Number of items.

    Returns
    -------
    perm : ndarray of int of shape (n,)
        The permutation.
    """
    return rng.permutation(n)


def gamma(rng, shape, scale, size=None):
    """Draw Gamma variates (shape ``k``, scale ``theta``; mean ``k theta``).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    shape : float
        Shape ``k``, positive.
    scale : float
        Scale ``theta``, positive.
    size : int or tuple of int, default=None
        Output shape; ``None`` draws a single float.

    Returns
    -------
    g : float or ndarray
        The draw(s).
    """
    return rng.gamma(shape, scale, size)


def truncated_laplace(rng, scale, bound, size=None):
    """Draw Laplace noise of scale ``scale`` truncated to ``[-bound, bound]``.

    Inverse CDF: a uniform sign times ``-scale log(1 - U (1 - exp(-bound /
    scale)))``, ``U`` uniform on [0, 1).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    scale : float
        Laplace scale ``lambda``, positive.
    bound : float
        Truncation ``A``, positive.
    size : int or tuple of int, default=None
        Output shape; ``None`` draws a single float.

    Returns
    -------
    noise : float or ndarray
        The draw(s), in ``[-bound, bound]``.
    """
    u = rng.random(size)
    sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
    magnitude = -scale * np.log1p(u * np.expm1(-bound / scale))
    return sign * np.minimum(magnitude, bound)


def symmetric_matrix(rng, n_features, scale, law="gaussian"):
    """Draw a symmetric "Wigner" noise matrix.

    The entries on and above the diagonal are iid with the given law and scale
    and are mirrored below the diagonal, so the diagonal has the same law as the
    off-diagonal entries (this is *not* ``(G + G.T) / sqrt(2)``, whose diagonal
    has twice the variance).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    n_features : int
        Matrix size ``d``.
    scale : float
        Standard deviation (``law="gaussian"``) or Laplace scale
        (``law="laplace"``) of each upper-triangular entry.
    law : {"gaussian", "laplace"}, default="gaussian"
        Law of the entries.

    Returns
    -------
    noise : ndarray of shape (n_features, n_features)
        Symmetric noise matrix.
    """
    draw = {"gaussian": gaussian, "laplace": laplace}[law]
    rows, cols = np.triu_indices(n_features)
    upper = draw(rng, scale, rows.shape[0])
    noise = np.empty((n_features, n_features))
    noise[rows, cols] = upper
    noise[cols, rows] = upper
    return noise


def run_count(rng, shape, gamma=None, mean=None):
    """Draw the number of runs of a private selection (always at least 1).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    shape : float
        ``0`` for the logarithmic law, ``eta > 0`` for the negative binomial
        law of shape ``eta`` and success probability ``gamma`` conditioned
        on a positive count (``eta = 1``: the geometric law on 1, 2, ...),
        ``inf`` for the Poisson law of mean ``mean`` (which may draw 0).
    gamma : float, default=None
        Success probability in (0, 1] of the logarithmic and negative
        binomial laws.
    mean : float, default=None
        Mean of the Poisson law.

    Returns
    -------
    k : int
        The draw.
    """
    if shape == float("inf"):
        return int(rng.poisson(mean))
    if gamma == 1.0:
        return 1  # every law of the family is the point mass at 1
    if shape == 0:
        return int(rng.logseries(1.0 - gamma))
    if shape == 1:
        return int(rng.geometric(gamma))
    # Negative binomial conditioned on k >= 1: redraw a zero. A zero has
    # probability gamma**shape < 1, so the loop ends with probability 1.
    while True:
        k = int(rng.negative_binomial(shape, gamma))
        if k > 0:
            return k
