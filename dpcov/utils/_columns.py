"""Per-column rank counts against public candidates, in one chunked pass.

The private ranges (:mod:`dpcov.mechanisms._ranges`) score candidates by how
many values of a column lie below them. The counts of disjoint sets of rows
add up, so they are summed over chunks of rows (a Dask array: over its
blocks, by Dask), in bounded memory.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from functools import partial

import numpy as np
import scipy.sparse as sp

from ._array_api import host_view, is_dask_array, namespace_of, to_host
from ._gram import CHUNK_BYTES
from ._gram._dask import rows_in_blocks
from ._gram._units import UnitRows, source_rows
from ._input_messages import NonFiniteInput
from .validation import to_unit_box


def _check_block(block, check_finite, allow_nan):
    # Dense float64 rows; NaN or infinity refused as asked (naming no value).
    if sp.issparse(block):
        block = block.toarray()
    block = np.asarray(block, dtype=np.float64)
    if check_finite:
        if allow_nan:
            if np.isinf(block).any():
                raise ValueError(
                    "Input X contains infinity: NaN marks a missing cell, the "
                    "other values must be finite; replace or drop infinite "
                    "entries."
                )
        elif not np.isfinite(block).all():
            raise NonFiniteInput()
    return block


def _chunk_counts(
    block, candidates, center, check_finite, allow_nan=False, weights=None
):
    # (total candidates + d,) int64: #{v <= c}, column by column (NaN, a
    # missing cell, is counted nowhere), then the observed cells per column;
    # with weights, each row counts its weight (float64).
    block = _check_block(block, check_finite, allow_nan)
    parts = []
    for j, column_candidates in enumerate(candidates):
        values = block[:, j]
        if center is not None:
            values = np.abs(values - center[j])
        m = column_candidates.shape[0]
        # v <= c_k iff k >= #{c < v}: count the values by that index.
        before = np.searchsorted(column_candidates, values, side="left")
        # (NaN sorts after every candidate: index m, dropped below.)
        counted = np.bincount(before, weights=weights, minlength=m + 1)
        parts.append(np.cumsum(counted)[:m])
    observed = ~np.isnan(block)
    if weights is None:
        parts.append(np.sum(observed, axis=0))
        return np.concatenate(parts).astype(np.int64)
    parts.append(weights @ observed)
    return np.concatenate(parts)


def _packed(block, block_function):
    # One Dask block's sums as a row (a module-level function: picklable).
    return block_function(block).reshape(1, -1)


def _reduce(X, block_function, size, dtype):
    # Sum block_function over chunks of rows (Dask: over its blocks).
    if is_dask_array(X):
        X = rows_in_blocks(X)
        parts = X.map_blocks(
            _packed,
            block_function,
            chunks=((1,) * X.numblocks[0], (size,)),
            dtype=dtype,
            meta=np.empty((0, 0), dtype=dtype),
        )
        return parts.sum(axis=0).compute()
    n_samples, n_features = X.shape
    step = max(1, CHUNK_BYTES // (8 * max(n_features, 1)))
    total = np.zeros(size, dtype=dtype)
    # An array of another namespace: each chunk is counted on the host (these
    # per-column counts are O(n d), cheap beside the Gram pass).
    namespace = namespace_of(X)
    view = None if namespace is None else host_view(X)
    if view is not None:
        X, namespace = view, None
    for start in range(0, n_samples, step):
        block = X[start : min(start + step, n_samples), ...]
        if namespace is not None:
            block = to_host(block, namespace[0])
        total += block_function(block)
    return total


def _reduce_persons(X, weights, block_function, size, check_finite, allow_nan):
    # Sum block_function over the kept rows of X (a UnitRows), chunk by
    # chunk, each row with its weight; with check_finite, every row of the
    # input first, read or not: whether a fit refuses NaN or infinity must
    # not depend on which rows were kept.
    rows, source = X.rows, X.X
    step = max(1, CHUNK_BYTES // (8 * max(1, source.shape[1])))
    if check_finite:
        for start in range(0, source.shape[0], step):
            _check_block(source[start : start + step], check_finite, allow_nan)
    total = np.zeros(size)
    for start in range(0, rows.size, step):
        part = slice(start, start + step)
        total += block_function(source[rows[part]], weights=weights[part])
    return total


def column_rank_counts(
    X, candidates, *, center=None, check_finite=False, allow_nan=False
):
    """How many values of each column lie at or below each of its candidates.

    Parameters
    ----------
    X : ndarray, sparse matrix, dask.array.Array, CountedRows or UnitRows
        Rows (never modified), of shape (n_samples, d); persons' kept rows
        (:class:`~dpcov.utils._gram._units.UnitRows`) count with their
        ``count_weights``, so that a person counts at most 1 in every count,
        exactly (dyadic weights; ``check_finite`` then checks every row of
        the input, kept or not).
    candidates : sequence of d ndarrays
        Increasing public candidates of each column.
    center : ndarray of shape (d,), default=None
        If given, the values counted are ``|x_j - center_j|``.
    check_finite : bool, default=False
        Raise ``ValueError`` (naming no value) on NaN or infinity.
    allow_nan : bool, default=False
        With ``check_finite``, accept NaN (a missing cell, counted nowhere).

    Returns
    -------
    counts : list of d ndarrays
        ``#{v <= c}`` for each candidate ``c`` of each column (int64; over
        persons, the sums of the weights, float64), over the observed cells.
    observed : ndarray of shape (d,)
        The number of observed (not NaN) cells of each column (over
        persons, their weights' sum).
    """
    candidates = [np.asarray(c, dtype=np.float64) for c in candidates]
    if center is not None:
        center = np.asarray(center, dtype=np.float64)
    sizes = [c.shape[0] for c in candidates]
    count = partial(
        _chunk_counts,
        candidates=candidates,
        center=center,
        check_finite=check_finite,
        allow_nan=allow_nan,
    )
    size = sum(sizes) + len(sizes)
    if isinstance(X, UnitRows):
        total = _reduce_persons(
            X, X.count_weights, count, size, check_finite, allow_nan
        )
    else:
        total = _reduce(source_rows(X), count, size, np.int64)
    out, offset = [], 0
    for size in sizes:
        out.append(total[offset : offset + size])
        offset += size
    return out, total[offset:]


def _chunk_sums(block, box, check_finite, weights=None):
    # (2 d,): sums of the clipped unit coordinates over the observed cells,
    # then the observed cells per column (each row weighted, if weights).
    block = _check_block(block, check_finite, allow_nan=True)
    lower, upper = box
    observed = ~np.isnan(block)
    unit = np.where(observed, to_unit_box(block, lower, upper), 0.0)
    if weights is not None:
        return np.concatenate([weights @ unit, weights @ observed])
    return np.concatenate([unit.sum(axis=0), observed.sum(0)])


def column_observed_sums(X, box, *, check_finite=False):
    """Per-column sums over the observed cells, in the box's unit coordinates.

    Parameters
    ----------
    X : ndarray, sparse matrix, dask.array.Array or UnitRows
        Rows of shape (n_samples, d), NaN marking a missing cell (never
        modified); over persons (:class:`~dpcov.utils._gram._units.UnitRows`)
        the sums of each person's averages (its kept rows weigh ``1 / k_p``).
    box : tuple of (lower, upper)
        Validated ranges: each value is clipped to its column's and mapped
        to ``[-1, 1]``.
    check_finite : bool, default=False
        Raise ``ValueError`` (naming no value) on infinity.

    Returns
    -------
    sums : ndarray of shape (d,)
        Sum over the observed cells of each column of the unit coordinates.
    observed : ndarray of shape (d,)
        The number of observed cells of each column (float64).
    """
    box = tuple(np.asarray(bound, dtype=np.float64) for bound in box)
    d = box[0].shape[0]
    if isinstance(X, UnitRows):
        # Each person's averages: its kept rows weigh 1 / k_p each.
        sums = partial(_chunk_sums, box=box, check_finite=False)
        total = _reduce_persons(X, X.mean_weights, sums, 2 * d, check_finite, True)
        return total[:d], total[d:]
    total = _reduce(
        X, partial(_chunk_sums, box=box, check_finite=check_finite), 2 * d, np.float64
    )
    return total[:d], total[d:]
