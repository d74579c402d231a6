"""Pair differences: rows with the mean removed, without estimating the mean."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause


def pair_differences(X):
    """Differences of consecutive pairs of rows, ``X[2i + 1] - X[2i]``.

    Each row of X enters one difference, so replacing one row changes one
    difference: neighbouring datasets map to neighbouring datasets. The
    differences have mean zero and, for iid rows, twice the covariance.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The rows.

    Returns
    -------
    D : ndarray of shape (n // 2, d)
        The differences (a last unpaired row is dropped).
    """
    half = X.shape[0] // 2
    return X[1 : 2 * half : 2] - X[0 : 2 * half : 2]
