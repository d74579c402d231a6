"""Stability-based histogram over an implicit, unbounded domain.

Only the non-empty cells are counted and noised, and only the cells whose
noisy count clears a threshold are released: a cell that exists on one
dataset and not on its neighbour (count 1 against 0) is released with
probability at most delta, so the empty cells of an unbounded domain (e.g.
grid cells in R^{qd}) never need noise. Used by the subspace learners of seed
001 (Singhal and Steinke, 2021), with replace-one neighbours: one item moves
from one cell to another.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

from . import _noise
from ._calibration import truncated_laplace_params


def stable_histogram_threshold(epsilon, delta, *, noise="laplace"):
    """Release threshold of :func:`stable_histogram`.

    Parameters
    ----------
    epsilon : float
        Privacy budget, positive and finite.
    delta : float
        In (0, 1).
    noise : {"laplace", "truncated"}, default="laplace"
        "laplace": Laplace(2 / epsilon) per cell (a replacement moves one item,
        L1 sensitivity 2) and ``tau = 1 + (2 / epsilon) log(1 / (2 delta))``,
        at which a count-1 cell is released with probability exactly delta.
        "truncated": truncated Laplace with sensitivity 1 at
        (epsilon / 2, delta / 2) per cell and ``tau = 1 + A``, so that a
        count-1 cell is never released.

    Returns
    -------
    tau : float
        Cells are released when their noisy count is strictly above ``tau``.
    """
    if noise == "laplace":
        return 1.0 + (2.0 / epsilon) * math.log(1.0 / (2.0 * delta))
    _, bound = truncated_laplace_params(1.0, epsilon / 2.0, delta / 2.0)
    return 1.0 + bound


def stable_histogram(items, *, epsilon, delta, rng, noise="laplace"):
    """Release the heavy cells of a histogram over an implicit domain.

    (epsilon, delta)-DP with respect to replacing one item (see
    :func:`stable_histogram_threshold` for the two noise laws).

    Parameters
    ----------
    items : array-like of shape (t,) or (t, k)
        The items; rows are cells (e.g. integer grid coordinates).
    epsilon : float
        Privacy budget, positive and finite.
    delta : float
        In (0, 1).
    rng : numpy.random.Generator
        Source of randomness.
    noise : {"laplace", "truncated"}, default="laplace"
        Noise law, see :func:`stable_histogram_threshold`.

    Returns
    -------
    cells : ndarray of shape (m,) or (m, k)
        The released cells, by decreasing noisy count.
    counts : ndarray of shape (m,)
        Their noisy counts (each above the threshold).

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.mechanisms import stable_histogram
    >>> items = np.array([[0, 1]] * 60 + [[2, 3]] * 2)
    >>> cells, counts = stable_histogram(items, epsilon=1.0, delta=1e-6,
    ...                                  rng=np.random.default_rng(0))
    >>> cells.tolist()
    [[0, 1]]
    """
    items = np.asarray(items)
    axis = 0 if items.ndim > 1 else None
    cells, counts = np.unique(items, axis=axis, return_counts=True)
    if noise == "laplace":
        noisy = counts + _noise.laplace(rng, 2.0 / epsilon, counts.size)
    else:
        scale, bound = truncated_laplace_params(1.0, epsilon / 2.0, delta / 2.0)
        noisy = counts + _noise.truncated_laplace(rng, scale, bound, counts.size)
    keep = noisy > stable_histogram_threshold(epsilon, delta, noise=noise)
    order = np.argsort(-noisy[keep], kind="stable")
    return cells[keep][order], noisy[keep][order]
