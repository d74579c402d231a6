"""A private upper bound on the row norms (the private radius).

Seed 000 (Algorithm 3) clips the data to a private radius found by the
procedure of Dong and Yi (2021) with the guarantee of its Lemma 10: the radius
is at most twice the largest norm and only ``O(log(k / beta) / epsilon)`` rows
lie outside it. This module implements a procedure with that interface (the
spec reconstructs it; the seed's own procedure was lost in extraction):
AboveThreshold scans a public dyadic grid of radii from the largest down and
stops at the first radius that more than ``2 alpha`` rows exceed; the released
radius is the grid point above it.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

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
