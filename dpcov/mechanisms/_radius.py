"""A private upper bound on the row norms (the private radius).

Two mechanisms over the same public grid of radii and the same counts (one
cheap pass over the data):

* :func:`private_radius_exponential` (the default of the estimators): the
  exponential mechanism, scored by how far each radius is from leaving a
  public number ``k`` of rows outside. It works from a few hundred rows (272
  at ``epsilon = 1, delta = 1e-6`` with 3/16 of the budget, under zCDP);
* :func:`private_radius` / :func:`private_radius_from_counts`: AboveThreshold
  (sparse vector), described below; it needs thousands of rows.

AdaptiveCov (Dong, Liang and Yi 2022, Algorithm 3) clips the data to a private
radius found by the procedure of Dong and Yi (2021), with the guarantee of
Dong, Liang and Yi's Lemma 10: the radius is at most twice the largest norm
and only ``O(log(k / beta) / epsilon)`` rows lie outside it. The paper takes
that procedure from Dong and Yi without restating it; this module implements
a procedure with the same guarantee, built from the statement of Lemma 10
(it may differ from Dong and Yi's): AboveThreshold scans a public dyadic grid
of radii from the largest down and stops at the first radius that more than
``2 alpha`` rows exceed; the released radius is the grid point above it.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

from ._exponential import exponential_mechanism, exponential_probabilities
from ._sparse_vector import above_threshold, above_threshold_accuracy

#: Public grid of candidate radii, from 2**32 down to 2**-32.
DEFAULT_RADIUS_GRID = 2.0 ** np.arange(32, -33, -1)


def private_radius_min_samples(epsilon, beta=0.1, grid=DEFAULT_RADIUS_GRID):
    """Fewest rows for which :func:`private_radius` is meaningful.

    With probability ``1 - beta`` at most ``3 alpha`` rows lie outside the
    released radius; this asks for that to be at most half of the rows,
    ``n >= 6 alpha``. It depends on public quantities only.

    Parameters
    ----------
    epsilon : float
        Budget of the radius step (pure DP).
    beta : float, default=0.1
        Failure probability.
    grid : ndarray, default=DEFAULT_RADIUS_GRID
        Candidate radii.

    Returns
    -------
    n_min : int
        The smallest number of rows accepted.
    """
    return math.ceil(6.0 * above_threshold_accuracy(epsilon, len(grid), beta))


def radius_counts(norms, grid=DEFAULT_RADIUS_GRID):
    """Number of norms above each candidate radius (the radius queries).

    The counts of disjoint sets of rows add up, so the queries of a dataset
    are the sum of its chunks' (how a chunked or Dask pass computes them).

    Parameters
    ----------
    norms : ndarray of shape (n_samples,)
        Row norms (never released).
    grid : ndarray, default=DEFAULT_RADIUS_GRID
        Public candidate radii, strictly decreasing.

    Returns
    -------
    counts : ndarray of shape (len(grid),), dtype int64
        ``counts[j]`` is the number of norms strictly above ``grid[j]``.
    """
    grid = np.asarray(grid, dtype=float)
    if grid.ndim != 1 or np.any(np.diff(grid) >= 0):
        raise ValueError("The grid of candidate radii must be strictly decreasing.")
    ascending = grid[::-1]
    # below[i] = number of grid points strictly below norm i; a norm lies above
    # ascending[k] iff below > k.
    below = np.searchsorted(ascending, np.asarray(norms, dtype=float), side="left")
    histogram = np.bincount(below, minlength=ascending.shape[0] + 1)
    above_ascending = np.cumsum(histogram[::-1])[::-1][1:]
    return above_ascending[::-1].astype(np.int64)


def private_radius_from_counts(
    counts, *, epsilon, rng, beta=0.1, grid=DEFAULT_RADIUS_GRID
):
    """:func:`private_radius` from the queries :func:`radius_counts` returned.

    Parameters
    ----------
    counts : ndarray of shape (len(grid),)
        Number of rows with norm above each grid point (sensitivity 1 each
        under replace-one neighbours; never released).
    epsilon : float
        Budget (pure DP).
    rng : numpy.random.Generator
        Source of randomness.
    beta : float, default=0.1
        Failure probability of the accuracy statement.
    grid : ndarray, default=DEFAULT_RADIUS_GRID
        Public candidate radii, strictly decreasing.

    Returns
    -------
    radius : float
        The private radius, a grid point.
    """
    grid = np.asarray(grid, dtype=float)
    alpha = above_threshold_accuracy(epsilon, grid.shape[0], beta)
    j = above_threshold(counts, 2.0 * alpha, epsilon=epsilon, rng=rng)
    if j == grid.shape[0]:
        return float(grid[-1])
    return float(grid[max(j - 1, 0)])


def private_radius(norms, *, epsilon, rng, beta=0.1, grid=DEFAULT_RADIUS_GRID):
    """Private upper bound on the row norms, pure epsilon-DP.

    The query for radius ``g`` counts the rows with norm above ``g``; replacing
    one row changes each count by at most 1 (sensitivity 1). AboveThreshold with
    threshold ``2 alpha`` (``alpha`` from :func:`above_threshold_accuracy`)
    scans the grid downwards; if it stops at ``grid[j]``, the radius is
    ``grid[j - 1]`` (``grid[0]`` if ``j = 0``, ``grid[-1]`` if it never stops).
    With probability ``1 - beta``: the radius is at most twice the largest norm
    (or ``grid[0]``/``grid[-1]`` at the ends), and at most ``3 alpha`` rows have
    a larger norm.

    Parameters
    ----------
    norms : ndarray of shape (n_samples,)
        Row norms (never released).
    epsilon : float
        Budget (pure DP).
    rng : numpy.random.Generator
        Source of randomness.
    beta : float, default=0.1
        Failure probability of the accuracy statement (privacy does not depend
        on it).
    grid : ndarray, default=DEFAULT_RADIUS_GRID
        Public candidate radii, strictly decreasing.

    Returns
    -------
    radius : float
        The private radius, a grid point.

    See Also
    --------
    radius_counts, private_radius_from_counts : The same in two steps, for
        norms that arrive in chunks.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.mechanisms import private_radius
    >>> norms = np.full(10_000, 3.0)
    >>> private_radius(norms, epsilon=1.0, rng=np.random.default_rng(0))
    4.0
    """
    return private_radius_from_counts(
        radius_counts(norms, grid), epsilon=epsilon, rng=rng, beta=beta, grid=grid
    )


def exponential_radius_accuracy(epsilon, beta=0.1, grid=DEFAULT_RADIUS_GRID):
    """Rank accuracy ``alpha`` and target ``k`` of the exponential radius.

    With probability ``1 - beta`` the exponential mechanism at ``epsilon`` on
    a score of sensitivity 1 over ``m`` candidates picks one whose score is
    within ``alpha = (2 / epsilon) log(m / beta)`` of the best (McSherry and
    Talwar, 2007). The target number of rows outside the radius is
    ``k = floor(alpha) + 1``, the smallest integer above ``alpha``.

    Parameters
    ----------
    epsilon : float
        Epsilon of the exponential mechanism (see
        :meth:`dpcov.accounting.ZCDP.exponential_epsilon`).
    beta : float, default=0.1
        Failure probability.
    grid : ndarray, default=DEFAULT_RADIUS_GRID
        Candidate radii.

    Returns
    -------
    alpha : float
        The rank accuracy.
    k : int
        The target number of rows outside the released radius.
    """
    alpha = 2.0 / epsilon * math.log(len(grid) / beta)
    return alpha, math.floor(alpha) + 1


def exponential_radius_min_samples(epsilon, beta=0.1, grid=DEFAULT_RADIUS_GRID):
    """Fewest rows for which :func:`private_radius_exponential` is meaningful.

    With probability ``1 - beta`` at most ``k + alpha`` rows lie outside the
    released radius (:func:`exponential_radius_accuracy`); this asks for that
    to be at most half of the rows, ``n >= 2 (k + alpha)``. It depends on
    public quantities only.

    Parameters
    ----------
    epsilon : float
        Epsilon of the exponential mechanism.
    beta : float, default=0.1
        Failure probability.
    grid : ndarray, default=DEFAULT_RADIUS_GRID
        Candidate radii.

    Returns
    -------
    n_min : int
        The smallest number of rows accepted.

    Examples
    --------
    >>> from dpcov.accounting import ZCDP, zcdp_rho
    >>> from dpcov.mechanisms import exponential_radius_min_samples
    >>> share = ZCDP(3 * zcdp_rho(1.0, 1e-6) / 16)  # 3/16 of (1, 1e-6)-DP
    >>> exponential_radius_min_samples(share.exponential_epsilon())
    272
    """
    alpha, k = exponential_radius_accuracy(epsilon, beta, grid)
    return math.ceil(2.0 * (k + alpha))


def exponential_radius_scores(counts, n_samples, k):
    """Score each grid radius for :func:`private_radius_exponential`.

    With ``c_j`` the number of rows above ``grid[j]`` (the grid decreasing by
    factors of 2) and ``c_{j+1}`` the number above ``grid[j] / 2``, the score
    is ``-max(c_j - k, k - c_{j+1}, 0)``: 0 when ``grid[j]`` leaves at most
    ``k`` rows outside while half of it leaves at least ``k``, and minus the
    number of rows by which it misses otherwise. Beyond the smallest radius
    the count is taken as ``n_samples`` (a public constant, as if every row
    were above it).

    Parameters
    ----------
    counts : ndarray of shape (m,)
        ``radius_counts`` of the data (never released); those above
        ``n_samples`` count as ``n_samples``.
    n_samples : int
        Number of rows (public under replace-one neighbours; under add/remove
        neighbours, a released count).
    k : int
        Public target number of rows outside.

    Returns
    -------
    scores : ndarray of shape (m,)
        Non-positive; sensitivity 1 under replace-one neighbours.
    """
    # A count above n_samples (under add/remove neighbours n_samples is a
    # released count, which the exact counts may exceed) is taken as
    # n_samples: a 1-Lipschitz map, so the sensitivity stays 1, and every
    # score lies in [-(n_samples + k), 0], bounded by public values.
    counts = np.minimum(np.asarray(counts, dtype=float), float(n_samples))
    below = np.append(counts[1:], float(n_samples))
    # Replacing one row changes each count by at most 1, so each of
    # c_j - k and k - c_{j+1} changes by at most 1, and so does the max of
    # them and 0 (a max of 1-Lipschitz functions is 1-Lipschitz).
    return -np.maximum(np.maximum(counts - k, k - below), 0.0)


def exponential_radius_probabilities(
    counts, n_samples, *, epsilon, beta=0.1, grid=DEFAULT_RADIUS_GRID
):
    """Law of :func:`private_radius_exponential` over the grid (closed form).

    Parameters
    ----------
    counts : ndarray of shape (len(grid),)
        ``radius_counts`` of the data.
    n_samples : int
        Number of rows.
    epsilon : float
        Epsilon of the exponential mechanism.
    beta : float, default=0.1
        Failure probability (sets the target ``k``).
    grid : ndarray, default=DEFAULT_RADIUS_GRID
        Candidate radii.

    Returns
    -------
    probabilities : ndarray of shape (len(grid),)
        ``P(radius = grid[j])``, proportional to ``exp(epsilon s_j / 2)``.
    """
    _, k = exponential_radius_accuracy(epsilon, beta, grid)
    scores = exponential_radius_scores(counts, n_samples, k)
    return exponential_probabilities(scores, epsilon=epsilon)


def private_radius_exponential(
    counts, n_samples, *, epsilon, rng, beta=0.1, grid=DEFAULT_RADIUS_GRID
):
    """Private upper bound on the row norms by the exponential mechanism.

    Picks ``grid[j]`` with probability proportional to
    ``exp(epsilon s_j / 2)``, ``s_j`` from :func:`exponential_radius_scores`
    with the public target ``k`` of :func:`exponential_radius_accuracy`. The
    score has sensitivity 1 under replace-one neighbours, so this is pure
    ``epsilon``-DP (McSherry and Talwar, 2007) and ``epsilon**2 / 8``-zCDP
    (it is ``epsilon``-bounded range: Durfee and Rogers, 2019; Cesar and
    Rogers, 2021).

    Accuracy: when ``n >= k`` and the grid brackets the norms, some radius
    scores 0, so with probability ``1 - beta`` the released radius ``r``
    scores at least ``-alpha``: at most ``k + alpha`` rows lie outside ``r``
    and, since ``k > alpha``, at least one norm exceeds ``r / 2``, so ``r``
    is less than twice the largest norm. The score is flat (``-k``) on all
    radii far above the data; their total probability is at most ``beta``.

    Parameters
    ----------
    counts : ndarray of shape (len(grid),)
        ``radius_counts`` of the data (never released).
    n_samples : int
        Number of rows (public).
    epsilon : float
        Epsilon of the exponential mechanism.
    rng : numpy.random.Generator
        Source of randomness.
    beta : float, default=0.1
        Failure probability of the accuracy statement (privacy does not
        depend on it).
    grid : ndarray, default=DEFAULT_RADIUS_GRID
        Public candidate radii, strictly decreasing by factors of 2.

    Returns
    -------
    radius : float
        The private radius, a grid point.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.mechanisms import private_radius_exponential, radius_counts
    >>> norms = np.full(1000, 3.0)
    >>> private_radius_exponential(
    ...     radius_counts(norms), 1000, epsilon=1.0, rng=np.random.default_rng(0)
    ... )
    4.0
    """
    grid = np.asarray(grid, dtype=float)
    _, k = exponential_radius_accuracy(epsilon, beta, grid)
    # Sensitivity 1: inverse-CDF draw from one uniform, or (secure_noise)
    # the exact sampler on the scores.
    scores = exponential_radius_scores(counts, n_samples, k)
    j = exponential_mechanism(scores, epsilon=epsilon, rng=rng)
    return float(grid[j])
