"""Pair differences: rows with the mean removed, without estimating the mean."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np


def pair_differences(X):
    """Differences of consecutive pairs of rows, ``X[2i + 1] - X[2i]``.

    Each row of X enters one difference, so replacing one row changes one
    difference: neighbouring datasets map to neighbouring datasets. The
    differences have mean zero and, for iid rows, twice the covariance.

    A pair whose difference overflows (entries near the largest float) is
    represented by half its difference, ``X[2i + 1] / 2 - X[2i] / 2``: the
    same line through the origin (what the subspace estimators use), and far
    beyond every clipping radius either way. No warning is raised.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The rows (finite).

    Returns
    -------
    D : ndarray of shape (n // 2, d)
        The differences (a last unpaired row is dropped).
    """
    half = X.shape[0] // 2
    upper, lower = X[1 : 2 * half : 2], X[0 : 2 * half : 2]
    with np.errstate(over="ignore", invalid="ignore"):
        D = upper - lower
    far = ~np.isfinite(D).all(axis=1)
    if far.any():
        # Halving is exact (but for subnormal entries), and |a/2 - b/2| never
        # exceeds the largest float.
        with np.errstate(under="ignore"):
            D[far] = np.ldexp(upper[far], -1) - np.ldexp(lower[far], -1)
    return D
