"""How a dense pass is cut: chunks, blocks of chunks, threads, Gram updates.

A pass over an in-memory array reads it in chunks of about ``CHUNK_BYTES``
of rows (``_chunk_rows``; at least ``WIDE_CHUNK_ROWS`` for a Gram pass over
wide rows on several threads), groups them in fixed blocks of
``BLOCK_CHUNKS`` chunks, and sums the blocks on ``_pass_threads`` threads
(as many as the BLAS would use, within ``THREAD_BYTES``), in order
(``_ordered_map``). A chunk's Gram update is NumPy's product, or on one
thread in the main thread for wide rows LAPACK's in-place rank-k update
(``_rank_k_update``, see ``SYRK_FROM``).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import threading
from collections import deque

import numpy as np
from scipy.linalg import blas

from .._threads import pass_threads

#: Bytes of float64 rows per chunk. Measured with row_statistics's
#: chunk_rows at n = 1e6, d = 100 on 2 cores (two threads, each with a
#: single-threaded OpenBLAS): 4 MiB chunks made the Gram pass as fast as
#: 1 MiB ones and the passes without a Gram update 1.2x to 2.2x faster (fewer
#: per-chunk calls); 15 MiB ones were 1.5x slower on the Gram pass.
CHUNK_BYTES = 4 * 2**20


def _chunk_rows(n_features, chunk_rows):
    if chunk_rows is not None:
        return max(1, int(chunk_rows))
    return max(1, CHUNK_BYTES // (8 * max(1, n_features)))


#: From this width on, a pass on one thread updates its Gram matrix with
#: LAPACK's rank-k update in place (``dsyrk`` with ``beta = 1`` on one
#: triangle), not ``rows.T @ rows`` added to the sum: the product's d x d
#: result and the addition cost as much memory traffic as the flops of a
#: short chunk (measured, 20000 x 2000 rows in chunks of 262, one thread:
#: 2.73 s against 1.48 s, and 1.22 s for one ``X.T @ X``). Narrower rows keep
#: the product (bit for bit as before). Any other pass (on several threads,
#: or in a thread other than the main one: Dask's, joblib's) keeps the
#: product, on chunks of at least ``WIDE_CHUNK_ROWS`` rows: SciPy's BLAS
#: wrappers hold the GIL, so ``dsyrk`` calls from several threads run one at
#: a time (measured, 1e5 x 500 rows in chunks of 1048: 0.60 s on two threads
#: as on one), where NumPy's product releases it (0.29 s on two, 0.57 s on
#: one).
SYRK_FROM = 128

#: Rows per chunk, at least, of a Gram pass over wide rows on several
#: threads: the d x d product and its addition are then a small part of the
#: chunk's flops (measured on 2 cores, 20000 x 2000 rows: 1.23 s in chunks of
#: 262, 0.88 s in chunks of 1024, 0.88 s for one ``X.T @ X``; 1e5 x 500:
#: 0.28 s, against 0.31 s).
WIDE_CHUNK_ROWS = 1024


def _rank_k_update(upper, rows):
    """``upper += rows.T @ rows`` on the upper triangle (Fortran order), in place.

    ``dsyrk`` leaves the strict lower triangle as it was: 0.
    """
    if upper is None:
        upper = np.zeros((rows.shape[1], rows.shape[1]), order="F")
    return blas.dsyrk(
        1.0, np.ascontiguousarray(rows).T, beta=1.0, c=upper, trans=0, overwrite_c=1
    )


def _symmetric_from_upper(upper):
    """The symmetric matrix whose upper triangle is ``upper``'s (its lower is 0)."""
    full = upper + upper.T
    diagonal = np.einsum("ii->i", full)
    diagonal /= 2.0
    return full


#: Chunks per block: the unit of work of a thread, summed on its own.
BLOCK_CHUNKS = 16
#: At most this many bytes of per-thread sums and buffers (d x d matrices and
#: a chunk each): more threads are not worth their memory.
THREAD_BYTES = 64 * 2**20


def _in_main_thread():
    """Whether the caller is the main thread: no other thread of dpcov's waits on it."""
    return threading.current_thread() is threading.main_thread()


def _alone_in_main_thread():
    """Whether a pass runs on one thread, the main one: it may hold the GIL."""
    return pass_threads() < 2 and _in_main_thread()


def _wide_chunk_rows(step, n_features, chunk_rows):
    """The chunk size of a pass over wide rows: at least ``WIDE_CHUNK_ROWS``.

    For every pass over rows of ``SYRK_FROM`` features or more that may run
    on several threads (its Gram updates then add NumPy's product, see
    ``SYRK_FROM``), not only the Gram pass: the passes of one fit then cut
    the rows alike, and the norms the first computes serve the others
    (``_norms_kept.py``). Unless the pass runs alone in the main thread or
    the caller chose the size.

    Parameters
    ----------
    step : int
        The size by bytes (``_chunk_rows``).
    n_features : int
        The processed rows' width.
    chunk_rows : int or None
        The caller's size.

    Returns
    -------
    step : int
    """
    if n_features < SYRK_FROM or chunk_rows is not None:
        return step
    if _alone_in_main_thread():
        return step
    return max(step, WIDE_CHUNK_ROWS)


def _blocks_of(n_rows, step):
    """The passes' blocks: ranges of chunk starts, ``BLOCK_CHUNKS`` chunks each."""
    starts = range(0, n_rows, step)
    return [starts[i : i + BLOCK_CHUNKS] for i in range(0, len(starts), BLOCK_CHUNKS)]


def _pass_threads(n_features, step, n_blocks):
    """How many threads sum the blocks of a pass over dense rows.

    As many as the BLAS would use (so ``OPENBLAS_NUM_THREADS``,
    ``threadpoolctl`` and joblib's limits in its workers apply), each calling
    a single-threaded BLAS on its own chunks: a chunk's Gram update is too
    small for BLAS threads to pay (measured on 2 cores, n = 1e6, d = 100:
    the Gram pass took 0.63 s with two BLAS threads per chunk, 0.37 s with
    one, 0.24 s with two threads each on its own chunks). At most one thread
    per block, and within ``THREAD_BYTES`` of sums and buffers.
    """
    if n_blocks < 2:
        return 1
    threads = pass_threads()
    # The block's sums, a chunk's product (wide rows) and the buffer.
    per_thread = 8 * (3 * n_features**2 + step * n_features)
    cap = max(1, THREAD_BYTES // per_thread)
    return int(max(1, min(threads, n_blocks, cap)))


def _ordered_map(executor, function, items, window):
    # executor.map with at most window items in flight and results yielded in
    # the items' order: memory for window results, whatever the number of
    # items.
    pending = deque()
    for item in items:
        pending.append(executor.submit(function, item))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def _add_sums(sums, more):
    for name, value in more.items():
        sums[name] += value
