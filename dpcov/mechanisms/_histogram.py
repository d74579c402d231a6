"""Stability-based histogram over an implicit, unbounded domain.

Only the non-empty cells are counted and noised, and only the cells whose
noisy count clears a threshold are released: a cell that exists on one
dataset and not on its neighbour (count 1 against 0) is released with
probability at most delta, so the empty cells of an unbounded domain (e.g.
grid cells in R^{qd}) never need noise. Used by the subspace learners of
Singhal and Steinke (2021), with replace-one neighbours: one item moves
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


def _count_cells(items):
    """``np.unique(items, axis=0, return_counts=True)``, faster for integer rows.

    Same cells in the same (lexicographic) order and the same counts.
    ``np.unique`` sorts rows as structured values, slowly; integer rows are
    sorted instead by one int64 key (mixed radix over the column ranges, most
    significant first) when the ranges fit, else by ``np.lexsort``.
    """
    if items.ndim != 2 or 0 in items.shape or items.dtype.kind not in "iu":
        return np.unique(items, axis=0 if items.ndim > 1 else None, return_counts=True)
    low, high = items.min(axis=0), items.max(axis=0)
    spans = [
        int(h) - int(lo) + 1 for lo, h in zip(low.tolist(), high.tolist(), strict=True)
    ]
    if math.prod(spans) < 2**62:
        # Key in [0, prod(spans)): no int64 overflow.
        factors = np.cumprod([1, *spans[:0:-1]])[::-1].astype(np.int64)
        key = (items.astype(np.int64) - low.astype(np.int64)) @ factors
        _, first, counts = np.unique(key, return_index=True, return_counts=True)
        return items[first], counts
    ordered = items[np.lexsort(items.T[::-1])]  # first column most significant
    starts = np.flatnonzero(
        np.concatenate(([True], np.any(ordered[1:] != ordered[:-1], axis=1)))
    )
    return ordered[starts], np.diff(np.append(starts, items.shape[0]))


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
    cells, counts = _count_cells(items)
    if noise == "laplace":
        noisy = counts + _noise.laplace(rng, 2.0 / epsilon, counts.size)
    else:
        scale, bound = truncated_laplace_params(1.0, epsilon / 2.0, delta / 2.0)
        noisy = counts + _noise.truncated_laplace(rng, scale, bound, counts.size)
    keep = noisy > stable_histogram_threshold(epsilon, delta, noise=noise)
    order = np.argsort(-noisy[keep], kind="stable")
    return cells[keep][order], noisy[keep][order]
