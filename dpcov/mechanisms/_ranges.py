"""Private per-feature ranges: a private median, then a private spread about it.

No public range is needed: each feature's range is found on public grids that
span the floats a table holds, from counts of rows (sensitivity 1 under
replace-one neighbours), with the exponential mechanism (McSherry and Talwar,
2007), three times per feature:

1. a private median ``m0`` over the signed grid ``0, +-2**(j/4)``
   (:data:`SIGNED_GRID`, ``-160 <= j <= 256``: magnitudes from ``2**-40`` to
   ``2**64``, a quarter of an octave apart; a nanosecond timestamp is
   about ``2**61``);
2. a private median ``m`` over ``m0 + SIGNED_GRID``: the first step places the
   median within a quarter of an octave of its magnitude, which for a feature
   far from zero (a pressure near 1013 hPa) can be wider than its spread; the
   second measures from ``m0``, so ``m`` lies within a quarter of an octave
   of the distance from ``m0``;
3. a private radius ``r`` of ``|x - m|`` over the powers of two from
   ``2**-40`` to ``2**64`` (:data:`SPREAD_GRID`), scored as the exponential
   radius the covariance
   estimators use for row norms
   (:func:`~dpcov.mechanisms.private_radius_exponential`) under a public
   prior ``r**-0.5`` (:func:`spread_scores`): with probability about
   ``1 - beta`` at most ``k + alpha`` values lie outside ``[m - r, m + r]``
   and ``r`` is less than twice the largest ``|x - m|``, and when it misses
   it lands near the values, not at ``2**64``.

Values beyond ``2**64`` in magnitude are clipped to the ends of the grids.

The range is ``[m - r, m + r]``. Candidate ``c_k`` of a median step stands
for the interval ``(c_{k-1}, c_k]`` between it and the candidate below, and
scores ``-max(#{x <= c_{k-1}} - n/2, n/2 - #{x <= c_k}, 0)``: 0 exactly when
a median lies in its interval, so a constant feature (whose value need not
be on the grid) has a scoring candidate, and it moves by at most 1 when one
row is replaced (each count moves by at most 1 and a maximum of 1-Lipschitz
functions is 1-Lipschitz).

The counts come from one pass per step (:func:`column_rank_counts`); the
composition of the ``3 d`` steps is the caller's (each is pure
``epsilon``-DP and ``epsilon**2 / 8``-zCDP, being ``epsilon``-bounded range:
Durfee and Rogers, 2019; Cesar and Rogers, 2021).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

from ._exponential import exponential_mechanism, exponential_probabilities
from ._radius import (
    exponential_radius_accuracy,
    exponential_radius_min_samples,
    exponential_radius_scores,
)

#: Offsets of the median candidates: 0 and +-2**(j/4) for -160 <= j <= 256.
_MAGNITUDES = 2.0 ** (np.arange(-160, 257) / 4.0)
SIGNED_GRID = np.concatenate([-_MAGNITUDES[::-1], [0.0], _MAGNITUDES])
#: Candidate spreads: the powers of two from 2**64 down to 2**-40.
SPREAD_GRID = 2.0 ** np.arange(64, -41, -1)
#: Exponential-mechanism steps per feature: two medians and one radius.
RANGE_STEPS = 3


def median_candidates(center=0.0, grid=SIGNED_GRID):
    """The public median candidates ``center + grid``, sorted, without repeats.

    Parameters
    ----------
    center : float, default=0.0
        A public (or already released) value.
    grid : ndarray, default=SIGNED_GRID
        Increasing offsets.

    Returns
    -------
    candidates : ndarray of shape (m,)
        Strictly increasing (offsets below the spacing of floats near
        ``center`` round onto it and are dropped).
    """
    return np.unique(float(center) + np.asarray(grid, dtype=float))


def median_scores(at_or_below, n_samples):
    """Scores of median candidates from their rank counts.

    Parameters
    ----------
    at_or_below : ndarray of shape (m,)
        ``#{x <= c_k}`` for each candidate ``c_k``, increasing in ``k``
        (never released).
    n_samples : int
        Number of rows (public under replace-one neighbours).

    Returns
    -------
    scores : ndarray of shape (m,)
        ``-max(#{x <= c_{k-1}} - n/2, n/2 - #{x <= c_k}, 0)`` (with
        ``#{x <= c_{-1}} = 0``): non-positive, 0 when a median lies in
        ``(c_{k-1}, c_k]``, sensitivity 1 under replace-one neighbours.
    """
    half = n_samples / 2.0
    at_or_below = np.asarray(at_or_below, dtype=float)
    previous = np.concatenate([[0.0], at_or_below[:-1]])
    # Replacing one row moves each count by at most 1, hence each of the
    # two differences, and their maximum with 0, by at most 1 (a maximum of
    # 1-Lipschitz functions is 1-Lipschitz).
    return -np.maximum(np.maximum(previous - half, half - at_or_below), 0.0)


def median_probabilities(at_or_below, n_samples, *, epsilon):
    """Law of :func:`private_median` over its candidates (closed form).

    Parameters
    ----------
    at_or_below : ndarray of shape (m,)
        Rank counts of the candidates (see :func:`median_scores`).
    n_samples : int
        Number of rows.
    epsilon : float
        Epsilon of the exponential mechanism.

    Returns
    -------
    probabilities : ndarray of shape (m,)
        ``P(median = c_k)``, proportional to ``exp(epsilon s_k / 2)``.
    """
    scores = median_scores(at_or_below, n_samples)
    return exponential_probabilities(scores, epsilon=epsilon)


def private_median(at_or_below, n_samples, candidates, *, epsilon, rng):
    """A private median: the exponential mechanism over public candidates.

    Pure ``epsilon``-DP (score sensitivity 1; McSherry and Talwar, 2007) and
    ``epsilon**2 / 8``-zCDP. With probability ``1 - beta`` the released
    candidate's interval (see :func:`median_scores`) has at most
    ``n/2 + alpha`` values on each side, ``alpha = (2 / epsilon) log(m /
    beta)`` for ``m`` candidates.

    Parameters
    ----------
    at_or_below : ndarray of shape (m,)
        ``#{x <= c}`` for each candidate (never released).
    n_samples : int
        Number of rows (public).
    candidates : ndarray of shape (m,)
        Public candidates, increasing.
    epsilon : float
        Epsilon of the exponential mechanism.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    median : float
        A candidate.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.mechanisms import private_median
    >>> x = np.random.default_rng(0).normal(4.2, 1.0, size=1000)
    >>> candidates = np.arange(0.0, 10.0)
    >>> at_or_below = np.searchsorted(np.sort(x), candidates, side="right")
    >>> private_median(at_or_below, 1000, candidates, epsilon=1.0,
    ...                rng=np.random.default_rng(0))
    5.0
    """
    scores = median_scores(at_or_below, n_samples)
    return float(candidates[exponential_mechanism(scores, epsilon=epsilon, rng=rng)])


def spread_scores(above, n_samples, *, epsilon, beta=0.1, grid=SPREAD_GRID):
    """Scores of the spread candidates, with the public prior folded in.

    The count score of :func:`~dpcov.mechanisms.exponential_radius_scores`
    (sensitivity 1) plus ``-log(r) / epsilon``: the exponential mechanism
    over these draws radius ``r`` with probability proportional to
    ``r**-0.5 exp(epsilon s_r / 2)``, the count score's law under the public
    prior ``r**-0.5``. The count score is flat (``-k``) on every radius
    above twice the largest value, and those radii share a chance of about
    ``beta`` of being drawn; without the prior they share it evenly, up to
    ``2**64``, and a range could come out a billion times too wide. The
    prior halves the odds every two octaves: a radius that misses lands near
    the values (the flat radii's draws fall within a factor 16 of the
    first of them with probability 0.94). It favours smaller radii among the
    good ones by at most ``sqrt(2)`` per octave, which their count scores
    outweigh.

    Parameters
    ----------
    above : ndarray of shape (len(grid),)
        ``#{|x - m| > r}`` for each radius of the decreasing ``grid``.
    n_samples : int
        Number of rows (public).
    epsilon : float
        Epsilon of the exponential mechanism.
    beta : float, default=0.1
        Failure probability: sets the target ``k`` of values outside.
    grid : ndarray, default=SPREAD_GRID
        Public radii, decreasing by factors of 2.

    Returns
    -------
    scores : ndarray of shape (len(grid),)
        Sensitivity 1 under replace-one neighbours (the prior is public).
    """
    grid = np.asarray(grid, dtype=float)
    _, k = exponential_radius_accuracy(epsilon, beta, grid)
    counts = exponential_radius_scores(above, n_samples, k)
    prior = -np.log(grid) / epsilon
    if not np.all(np.isfinite(prior)):  # epsilon = inf: the counts alone
        return counts
    # The prior rounded to a multiple of a power of two ``q`` such that every
    # score (a count score plus the prior, below 2**e in size) is a
    # multiple of q below 2**e with e - log2(q) = 50: the sums are exact in
    # float64, so the scores of neighbours differ by exactly the count
    # scores' difference, at most 1. (Count scores are integers, or over
    # persons multiples of 2**-ceil(log2 k) for k rows a person: multiples
    # of q too while 2**e stays below 2**50 / k.)
    exponent = math.ceil(math.log2(n_samples + k + float(np.max(np.abs(prior))) + 2))
    quantum = 2.0 ** (exponent - 50)
    return counts + np.round(prior / quantum) * quantum


def private_spread(above, n_samples, *, epsilon, rng, beta=0.1, grid=SPREAD_GRID):
    """A private bound on ``|x - m|``: the exponential mechanism on its counts.

    Pure ``epsilon``-DP and ``epsilon**2 / 8``-zCDP: the scores of
    :func:`spread_scores` have sensitivity 1 (a public prior added to a score
    does not change its sensitivity). With probability about ``1 - beta``
    at most ``k + alpha`` values lie outside the radius and the radius is
    less than twice the largest value (see
    :func:`~dpcov.mechanisms.private_radius_exponential`, whose count score
    this is).

    Parameters
    ----------
    above : ndarray of shape (len(grid),)
        ``#{|x - m| > r}`` for each radius ``r`` of the decreasing ``grid``
        (never released).
    n_samples : int
        Number of rows (public).
    epsilon : float
        Epsilon of the exponential mechanism.
    rng : numpy.random.Generator
        Source of randomness.
    beta : float, default=0.1
        Failure probability: it sets the target number of values outside
        (privacy does not depend on it).
    grid : ndarray, default=SPREAD_GRID
        Public radii, decreasing by factors of 2.

    Returns
    -------
    radius : float
        A grid point.
    """
    grid = np.asarray(grid, dtype=float)
    scores = spread_scores(above, n_samples, epsilon=epsilon, beta=beta, grid=grid)
    return float(grid[exponential_mechanism(scores, epsilon=epsilon, rng=rng)])


def private_ranges_min_samples(epsilon, beta=0.1):
    """Fewest rows for which private ranges at ``epsilon`` per step are meaningful.

    The radius step leaves at most ``k + alpha`` values outside the range
    with probability ``1 - beta``
    (:func:`~dpcov.mechanisms.exponential_radius_min_samples`); this asks
    for at most half of them, and for the median steps' rank error
    ``(2 / epsilon) log(m / beta)`` to be below ``n / 4``.

    Parameters
    ----------
    epsilon : float
        Epsilon of each exponential-mechanism step.
    beta : float, default=0.1
        Failure probability.

    Returns
    -------
    n_min : int
        The smallest number of rows accepted.
    """
    median = 4.0 * 2.0 / epsilon * math.log(len(SIGNED_GRID) / beta)
    spread = exponential_radius_min_samples(epsilon, beta, grid=SPREAD_GRID)
    return max(spread, math.ceil(median))
