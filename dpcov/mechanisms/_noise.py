"""Every random draw that dpcov's mechanisms make, in one place.

Mechanisms never call a random generator themselves: they ask this module for
noise of a given law and scale, or for a noisy copy of a statistic. By
default the draws are numpy's: fast and statistically exact, but like every
floating-point sampler open to the attacks on the low-order bits of
floating-point noise described by Mironov (CCS 2012).

Under ``dpcov.set_config(secure_noise=True)`` the additive releases
(:func:`add_gaussian`, :func:`add_laplace`, :func:`add_symmetric`,
:func:`noisy_above_threshold`), the exponential mechanism over a finite set
(:func:`exponential_choice`), the public shuffles (:func:`permutation`,
:func:`indices`) and the number of runs of a private selection
(:func:`run_count`, for the logarithmic, geometric and Poisson laws) switch to
the exact samplers of :mod:`dpcov.mechanisms._discrete`, fed by the operating
system's CSPRNG. The raw floating-point draws (:func:`gaussian`,
:func:`laplace`, :func:`uniform`, :func:`gamma`, :func:`truncated_laplace`)
and the run count of a general negative binomial shape have no exact
counterpart and raise :class:`~dpcov.exceptions.NoHardenedSampler` there; the
draws of synthetic samples from a fitted model (post-processing) are not
affected by the switch.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from functools import lru_cache

import numpy as np

from .._config import get_config
from ..exceptions import NoHardenedSampler
from . import _discrete


def secure():
    """Whether ``secure_noise`` is in force (in this thread).

    Returns
    -------
    secure : bool
        ``dpcov.get_config()["secure_noise"]``.
    """
    return get_config()["secure_noise"]


def sampler_name():
    """Name of the sampler in force: ``"discrete"`` (hardened) or ``"numpy"``.

    Returns
    -------
    name : str
        What fitted estimators record in ``noise_sampler_``.
    """
    return "discrete" if secure() else "numpy"


def _refuse(what):
    if secure():
        raise NoHardenedSampler(
            f"secure_noise=True: {what} has no exact discrete sampler in dpcov. "
            "Use an estimator listed as hardened in the user guide (privacy "
            "model, 'Hardened noise'), or fit with secure_noise=False."
        )


def _hardened_release(value, scale, sensitivity, law, n_coordinates=None):
    # round(value / g) + integer noise, on the grid of grid_noise: exact.
    if scale == 0:
        return value  # infinite budget: no noise, nothing to harden
    if sensitivity is None:
        raise NoHardenedSampler(
            "secure_noise=True needs the sensitivity of every noisy statistic; "
            "this mechanism did not state one."
        )
    array = np.asarray(value, dtype=float)
    m = array.size if n_coordinates is None else int(n_coordinates)
    noise = _discrete.grid_noise(law, scale, sensitivity, max(m, 1))
    ints = _discrete.to_grid(array, noise.step)
    ints = ints + _discrete.integer_noise(law, noise.scale, ints.shape[0])
    out = _discrete.from_grid(ints, noise.step, array.shape)
    return float(out) if np.ndim(value) == 0 else out


def add_gaussian(rng, value, scale, sensitivity=None):
    """Return ``value`` plus centred Gaussian noise of standard deviation ``scale``.

    Under ``secure_noise``: ``value`` rounded to a public grid plus exact
    discrete Gaussian noise (:func:`dpcov.mechanisms._discrete.grid_noise`),
    at least as private as the continuous release of the same scale.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (not used under ``secure_noise``).
    value : float or ndarray
        The exact statistic.
    scale : float
        Standard deviation, non-negative.
    sensitivity : float, default=None
        L2 sensitivity of ``value`` (required under ``secure_noise``).

    Returns
    -------
    noisy : float or ndarray
        The noisy statistic.
    """
    if secure():
        return _hardened_release(value, scale, sensitivity, "gaussian")
    return value + gaussian(rng, scale, getattr(value, "shape", None) or None)


def add_laplace(rng, value, scale, sensitivity=None):
    """Return ``value`` plus centred Laplace noise of scale ``scale``.

    Under ``secure_noise``: ``value`` rounded to a public grid plus exact
    discrete Laplace noise (:func:`dpcov.mechanisms._discrete.grid_noise`),
    at least as private as the continuous release of the same scale.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (not used under ``secure_noise``).
    value : float or ndarray
        The exact statistic.
    scale : float
        Laplace scale ``b``, non-negative.
    sensitivity : float, default=None
        L1 sensitivity of ``value`` (required under ``secure_noise``).

    Returns
    -------
    noisy : float or ndarray
        The noisy statistic.
    """
    if secure():
        return _hardened_release(value, scale, sensitivity, "laplace")
    return value + laplace(rng, scale, getattr(value, "shape", None) or None)


def add_symmetric(rng, matrix, scale, law="gaussian", sensitivity=None):
    """Return a symmetric matrix plus symmetric (Wigner) noise.

    The ``d (d + 1) / 2`` entries on and above the diagonal get iid noise and
    are mirrored (see :func:`symmetric_matrix`).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (not used under ``secure_noise``).
    matrix : ndarray of shape (d, d)
        The exact symmetric statistic.
    scale : float
        Standard deviation (Gaussian) or Laplace scale of each entry.
    law : {"gaussian", "laplace"}, default="gaussian"
        Law of the entries.
    sensitivity : float, default=None
        L2 (Gaussian) or L1 (Laplace) sensitivity of the upper triangle
        (required under ``secure_noise``).

    Returns
    -------
    noisy : ndarray of shape (d, d)
        The noisy symmetric matrix.
    """
    if not secure():
        return matrix + symmetric_matrix(rng, matrix.shape[0], scale, law)
    rows, cols = upper_triangle(matrix.shape[0])
    upper = _hardened_release(matrix[rows, cols], scale, sensitivity, law)
    noisy = np.empty(matrix.shape)
    noisy[rows, cols] = upper
    noisy[cols, rows] = upper
    return noisy


def noisy_above_threshold(
    rng, queries, threshold, *, threshold_scale, query_scale, sensitivity
):
    """The noisy queries and noisy threshold of AboveThreshold.

    Only comparisons ``noisy_queries[i] > noisy_threshold`` may be used.

    Under ``secure_noise`` the queries and the (public) threshold are rounded
    to one grid, fitted to the query noise by
    :func:`dpcov.mechanisms._discrete.grid_noise`; the rounded queries are
    integers that move by at most ``k = floor(D)`` between neighbours
    (``D = sensitivity / g + 1`` grid steps), and discrete Laplace noise of
    scales ``t_T >= k b_T / sensitivity`` (threshold) and ``t_q >= k b_q /
    sensitivity`` (queries) is added. The proof of Dwork and Roth (2014,
    Theorem 3.23) shifts the threshold noise by ``k`` and the noise of the
    returned query by ``2 k``, integers, so it holds for the discrete Laplace
    law as for the continuous one, with ``epsilon = k / t_T + 2 k / t_q <=
    sensitivity / b_T + 2 sensitivity / b_q``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (not used under ``secure_noise``).
    queries : ndarray of shape (k,)
        Query values (infinite values are compared as they are).
    threshold : float
        Public threshold.
    threshold_scale, query_scale : float
        Laplace scales ``b_T`` and ``b_q``, positive (or both zero).
    sensitivity : float
        Sensitivity of each query, positive.

    Returns
    -------
    noisy_queries : ndarray of shape (k,)
        Floats, or Python integers in grid steps under ``secure_noise``.
    noisy_threshold : float or int
        Same units.
    """
    if not secure():
        noisy_threshold = threshold + laplace(rng, threshold_scale)
        return queries + laplace(rng, query_scale, queries.shape), noisy_threshold
    if query_scale == 0 or threshold_scale == 0:
        return queries, threshold
    grid = _discrete.grid_noise("laplace", query_scale, sensitivity, 1)
    # Integer-valued queries move by an integer: at most floor(D).
    shift = math.floor(grid.sensitivity)
    finite = np.isfinite(queries)
    noisy = np.asarray(queries, dtype=float).astype(object)
    ints = _discrete.to_grid(queries[finite], grid.step)
    t_query = _discrete.integer_scale(shift, query_scale, sensitivity)
    noisy[finite] = ints + _discrete.discrete_laplace(t_query, ints.shape[0])
    if not np.isfinite(threshold):
        return noisy, threshold  # a public infinite threshold: no comparison
    t_threshold = _discrete.integer_scale(shift, threshold_scale, sensitivity)
    noisy_threshold = _discrete.to_grid(np.array([threshold]), grid.step)[0]
    return noisy, int(noisy_threshold + _discrete.discrete_laplace(t_threshold, 1)[0])


def exponential_choice(rng, probabilities, *, scores, coefficient):
    """An index drawn by the exponential mechanism over a finite set.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (not used under ``secure_noise``).
    probabilities : ndarray of shape (k,)
        The mechanism's law ``exp(c s_j) / sum exp(c s)``, used by the
        numpy sampler (inverse CDF of one uniform).
    scores : ndarray of shape (k,)
        The scores ``s_j``, used by the exact sampler.
    coefficient : float
        ``c``, used by the exact sampler.

    Returns
    -------
    index : int
        The chosen index.
    """
    if secure():
        return _discrete.exponential_index(scores, coefficient)
    u = rng.random()
    j = int(np.searchsorted(np.cumsum(probabilities), u, side="right"))
    return min(j, len(probabilities) - 1)


def synthetic_gaussian(rng, size):
    """Standard normal draws for synthetic samples (post-processing).

    Sampling from a released model reveals nothing more about the data, so
    these draws stay numpy's under ``secure_noise``.
    """
    return rng.standard_normal(size)


def synthetic_uniform(rng, size):
    """Uniform draws on [0, 1) for synthetic samples (post-processing)."""
    return rng.random(size)


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
    _refuse("the floating-point Gaussian sampler")
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
    _refuse("the floating-point Laplace sampler")
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
    _refuse("a sampler built on uniform floats (a rejection or inverse-CDF sampler)")
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
    if secure():
        return _discrete.secure_indices(n, size)
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
    if secure():
        return _discrete.secure_permutation(n)
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
    _refuse("the Gamma sampler (nuclear-norm radius)")
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
    _refuse("the truncated Laplace sampler")
    u = rng.random(size)
    sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
    magnitude = -scale * np.log1p(u * np.expm1(-bound / scale))
    return sign * np.minimum(magnitude, bound)


@lru_cache(maxsize=32)
def upper_triangle(n_features, k=0):
    """``numpy.triu_indices(n_features, k)``, read-only, computed once per size."""
    rows, cols = np.triu_indices(n_features, k)
    rows.flags.writeable = False
    cols.flags.writeable = False
    return rows, cols


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
    rows, cols = upper_triangle(n_features)
    upper = draw(rng, scale, rows.shape[0])
    noise = np.empty((n_features, n_features))
    noise[rows, cols] = upper
    noise[cols, rows] = upper
    return noise


def run_count(rng, shape, gamma=None, mean=None):
    """Draw the number of runs of a private selection.

    Under ``secure_noise`` the logarithmic (``shape=0``), geometric
    (``shape=1``) and Poisson (``shape=inf``) laws are drawn exactly by
    :func:`~dpcov.mechanisms._discrete.logarithmic_count`,
    :func:`~dpcov.mechanisms._discrete.geometric_count` and
    :func:`~dpcov.mechanisms._discrete.poisson_count`, on the exact rationals
    of the floats ``gamma`` and ``mean``, so the law drawn is exactly the one
    whose guarantee is computed from those floats. Any other shape raises
    :class:`~dpcov.exceptions.NoHardenedSampler` before any draw.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (not used under ``secure_noise``).
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
        The draw: at least 1, except under the Poisson law, which may draw 0.

    Raises
    ------
    dpcov.exceptions.NoHardenedSampler
        Under ``secure_noise``, for a shape other than 0, 1 and ``inf``.
    """
    if secure():
        return _exact_run_count(shape, gamma, mean)
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


def _exact_run_count(shape, gamma, mean):
    # The hardened run_count. A general shape is refused whatever gamma is
    # (even gamma = 1, one run for sure): whether a configuration runs under
    # secure_noise then depends on its law, not on its mean.
    if shape == math.inf:
        return _discrete.poisson_count(mean)
    if shape not in (0, 1):
        raise NoHardenedSampler(
            f"secure_noise=True: the number of runs of law {shape!r} (a general "
            "negative binomial shape) has no exact sampler in dpcov. Use "
            'law="logarithmic", "geometric" or "poisson", or fit with '
            "secure_noise=False."
        )
    if gamma == 1.0:
        return 1  # both laws are the point mass at 1
    if shape == 0:
        return _discrete.logarithmic_count(gamma)
    return _discrete.geometric_count(gamma)
