"""One chunked pass over the rows: clip, centre, then accumulate.

Every covariance estimator's cost floor is one pass over the data that clips
each row and accumulates the Gram matrix ``Y.T @ Y`` of the processed rows.
The pass works chunk by chunk, so memory stays at the input plus
``O(d**2 + chunk_rows * d)``: ``X`` is never copied as a whole and never
written to. A chunk is copied only when a row in it must change (clipping,
centring) or the input is not float64; the Gram update is one BLAS call per
chunk, accumulated in float64.

A row ``x`` is processed as ``clip(clip(x, clip_norm) - center, clip_norm_centered)``
where ``clip(v, r) = v * min(1, r / ||v||)``; each step is optional.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.extmath import row_norms

#: Bytes of float64 rows per chunk (a chunk of 8 MiB keeps BLAS efficient and
#: the temporaries small).
CHUNK_BYTES = 8 * 2**20


def _chunk_rows(n_features, chunk_rows):
    if chunk_rows is not None:
        return max(1, int(chunk_rows))
    return max(1, CHUNK_BYTES // (8 * max(1, n_features)))


def _row_norms(rows):
    # Row L2 norms that do not overflow for finite rows with huge entries
    # (whose squared norm exceeds the float64 range): rescale those rows.
    norms = row_norms(rows)
    overflow = np.isinf(norms)
    if overflow.any():
        big = rows[overflow]
        scale = np.abs(big).max(axis=1)
        norms[overflow] = scale * row_norms(big / scale[:, np.newaxis])
    return norms


def _clip(rows, radius, owned, norms=None):
    if norms is None:
        norms = _row_norms(rows)
    over = norms > radius
    if over.any():
        if not owned:
            rows = rows.copy()
            owned = True
        rows[over] *= (radius / norms[over])[:, np.newaxis]
    return rows, owned


def iter_processed_rows(
    X,
    *,
    clip_norm=None,
    center=None,
    clip_norm_centered=None,
    norms=None,
    chunk_rows=None,
):
    """Yield the processed rows of ``X``, chunk by chunk, as float64.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Input rows (float32 or float64); never modified.
    clip_norm : float, default=None
        Rows are first scaled down to this L2 norm if longer.
    center : ndarray of shape (n_features,), default=None
        Then subtracted from every row.
    clip_norm_centered : float, default=None
        Then rows are scaled down to this L2 norm if longer.
    norms : ndarray of shape (n_samples,), default=None
        Norms of the rows as they enter the last clipping step, when already
        known (e.g. from :func:`processed_norms` with the same earlier
        steps); saves recomputing them.
    chunk_rows : int, default=None
        Rows per chunk; by default about ``CHUNK_BYTES`` of float64 rows.

    Yields
    ------
    rows : ndarray of shape (n_chunk, n_features)
        Processed rows. It may be a view of ``X``: do not modify it.
    """
    step = _chunk_rows(X.shape[1], chunk_rows)
    last_clip_first = clip_norm_centered is None
    for start in range(0, X.shape[0], step):
        chunk = X[start : start + step]
        known = None if norms is None else norms[start : start + step]
        rows = chunk if chunk.dtype == np.float64 else chunk.astype(np.float64)
        owned = rows is not chunk
        if clip_norm is not None:
            first = known if last_clip_first else None
            rows, owned = _clip(rows, clip_norm, owned, first)
        if center is not None:
            rows = rows - center
            owned = True
        if clip_norm_centered is not None:
            rows, owned = _clip(rows, clip_norm_centered, owned, known)
        yield rows


def processed_gram(X, **params):
    """Gram matrix ``sum_i y_i y_i^T`` of the processed rows.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Input rows.
    **params : dict
        Processing options of :func:`iter_processed_rows`.

    Returns
    -------
    gram : ndarray of shape (n_features, n_features)
        The (unnormalised) Gram matrix, float64.
    """
    gram = np.zeros((X.shape[1], X.shape[1]))
    for rows in iter_processed_rows(X, **params):
        gram += rows.T @ rows
    return gram


def processed_sum(X, **params):
    """Sum ``sum_i y_i`` of the processed rows.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Input rows.
    **params : dict
        Processing options of :func:`iter_processed_rows`.

    Returns
    -------
    total : ndarray of shape (n_features,)
        The sum, float64.
    """
    total = np.zeros(X.shape[1])
    for rows in iter_processed_rows(X, **params):
        total += rows.sum(axis=0)
    return total


def processed_norms(X, **params):
    """L2 norms ``||y_i||`` of the processed rows.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Input rows.
    **params : dict
        Processing options of :func:`iter_processed_rows`.

    Returns
    -------
    norms : ndarray of shape (n_samples,)
        The norms, float64.
    """
    norms = np.empty(X.shape[0])
    start = 0
    for rows in iter_processed_rows(X, **params):
        norms[start : start + rows.shape[0]] = _row_norms(rows)
        start += rows.shape[0]
    return norms
