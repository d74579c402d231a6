"""Per-column rank counts against public candidates, in one chunked pass.

The private ranges (:mod:`dpcov.mechanisms._ranges`) score candidates by how
many values of a column lie below them. The counts of disjoint sets of rows
add up, so they are summed over chunks of rows (a Dask array: over its
blocks, by Dask), in bounded memory.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import scipy.sparse as sp

from ._gram import CHUNK_BYTES, is_dask_array
from ._gram._dask import rows_in_blocks


def _chunk_counts(block, candidates, center, check_finite):
    # (total candidates,) int64: #{v <= c}, column by column.
    if sp.issparse(block):
        block = block.toarray()
    block = np.asarray(block, dtype=np.float64)
    if check_finite and not np.isfinite(block).all():
        raise ValueError(
            "Input X contains NaN or infinity. dpcov estimators refuse missing "
            "or infinite values: impute them first (for instance with "
            "dpcov.impute.SimpleImputer)."
        )
    parts = []
    for j, column_candidates in enumerate(candidates):
        values = block[:, j]
        if center is not None:
            values = np.abs(values - center[j])
        m = column_candidates.shape[0]
        # v <= c_k iff k >= #{c < v}: count the values by that index.
        before = np.searchsorted(column_candidates, values, side="left")
        parts.append(np.cumsum(np.bincount(before, minlength=m + 1))[:m])
    return np.concatenate(parts).astype(np.int64)


def _packed_block(block, candidates, center, check_finite):
    return _chunk_counts(block, candidates, center, check_finite).reshape(1, -1)


def column_rank_counts(X, candidates, *, center=None, check_finite=False):
    """How many values of each column lie at or below each of its candidates.

    Parameters
    ----------
    X : ndarray, sparse matrix or dask.array.Array of shape (n_samples, d)
        Rows (never modified).
    candidates : sequence of d ndarrays
        Increasing public candidates of each column.
    center : ndarray of shape (d,), default=None
        If given, the values counted are ``|x_j - center_j|``.
    check_finite : bool, default=False
        Raise ``ValueError`` (naming no value) on NaN or infinity.

    Returns
    -------
    counts : list of d ndarrays
        ``#{v <= c}`` for each candidate ``c`` of each column (int64).
    """
    candidates = [np.asarray(c, dtype=np.float64) for c in candidates]
    if center is not None:
        center = np.asarray(center, dtype=np.float64)
    sizes = [c.shape[0] for c in candidates]
    if is_dask_array(X):
        X = rows_in_blocks(X)
        parts = X.map_blocks(
            _packed_block,
            candidates,
            center,
            check_finite,
            chunks=((1,) * X.numblocks[0], (sum(sizes),)),
            dtype=np.int64,
            meta=np.empty((0, 0), dtype=np.int64),
        )
        total = parts.sum(axis=0).compute()
    else:
        n_samples, n_features = X.shape
        step = max(1, CHUNK_BYTES // (8 * max(n_features, 1)))
        total = np.zeros(sum(sizes), dtype=np.int64)
        for start in range(0, n_samples, step):
            total += _chunk_counts(
                X[start : start + step], candidates, center, check_finite
            )
    out, offset = [], 0
    for size in sizes:
        out.append(total[offset : offset + size])
        offset += size
    return out
