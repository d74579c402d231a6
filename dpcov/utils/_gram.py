"""One chunked pass over the rows: process them, then sum statistics.

Every covariance-based estimator's cost floor is one pass over the data that
clips each row and accumulates the Gram matrix ``Y.T @ Y`` of the processed
rows. Every statistic an estimator needs from the data is a sum over rows (the
Gram matrix, the sum of the rows and of their squares, the sum of squared
norms, counts of norms in public bins), so one function,
:func:`row_statistics`, computes them all, in one pass, with bounded memory:

* a NumPy array (or a memmap) is read chunk by chunk: memory stays at the
  input plus ``O(d**2 + chunk_rows * d)`` per thread. ``X`` is never copied
  as a whole and never written to; each thread processes its chunks in one
  reused buffer (a float32 chunk is upcast into it, so float32 input costs
  no float64 copy of ``X`` and the statistics are as accurate as for
  float64). Every row is multiplied by its clip factor (1 within the
  radius), so the work depends on ``n`` and ``d`` only, not on how many
  rows are clipped. The Gram update is one BLAS call (``syrk``) per chunk,
  accumulated in float64. Fixed blocks of chunks are summed on the threads
  the BLAS would use (:mod:`dpcov.utils._threads`), their sums added in a
  fixed order: the same bits whatever the number of threads. Sums that need
  no processed row (a clipped sum, norms of clipped and centred rows) never
  form one (:meth:`_Pass.unformed`);
* a ``dask.array`` is reduced by Dask: every block runs the same chunked pass
  and returns its statistics packed in one vector, and Dask sums the vectors
  (a tree reduction). Only ``O(d**2)`` numbers per block travel; the caller
  draws the noise once, on the client, from the summed statistics;
* a SciPy sparse matrix or array (CSR; other formats are converted to CSR, a
  copy of the nonzeros) is never densified as a whole. Rows are clipped by
  scaling their stored values, and the Gram matrix of a chunk is the sparse
  product ``S.T @ S``, added into the dense ``d x d`` sum; the centring and
  the final clip follow from sums over the rows (``sum (c - m)(c - m)^T =
  sum c c^T - s m^T - m s^T + n m m^T``), so no dense row is formed either.
  The steps that make rows dense (``box``, ``transform``) and inputs dense
  enough that BLAS beats the sparse product run on densified chunks of
  ``chunk_rows`` rows instead: memory stays ``O(chunk_rows * d)``.

A row ``x`` is processed as ``clip(clip(box(x), clip_norm) @ transform.T -
center, final_clip)`` where ``clip(v, r) = v * min(1, r / ||v||)`` and
``box`` clips each feature to a public range and maps the range onto
``[-1, 1]``; each step is optional. Norm statistics (``square_norm``,
``norm_sums``) are of the rows as they enter the final clip.

Any finite row is processed without a floating-point warning, and its
processed row is finite whenever a clip bounds it. The rule for values beyond
float64's range (a row of entries near 1e308 has a norm, a transform or a
difference with the centre that overflows): such a row is scaled by a power
of two first (exact), the norm is computed on the scaled row (``inf`` when
the true norm exceeds float64), and a clip maps it to ``r u / ||u||`` for the
scaled row ``u``: the radius, in the row's own direction up to rounding.
Rows whose arithmetic stays in range are processed exactly as by the plain
formulas (the same bits).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import queue
import sys
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import sparse

from ._threads import pass_threads, single_threaded_blas

#: Bytes of float64 rows per chunk. Measured with row_statistics's
#: chunk_rows at n = 1e6, d = 100 on 2 cores (two threads, each with a
#: single-threaded OpenBLAS): 4 MiB chunks made the Gram pass as fast as
#: 1 MiB ones and the passes without a Gram update 1.2x to 2.2x faster (fewer
#: per-chunk calls); 15 MiB ones were 1.5x slower on the Gram pass.
CHUNK_BYTES = 4 * 2**20


def is_dask_array(X):
    """Whether ``X`` is a ``dask.array.Array`` (without importing Dask)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


#: Sparse chunks (of 8 MiB: a sparse product's overheads need larger
#: chunks): at most this many products of nonzeros in a row (``sum
#: nnz_i**2``, the entries of ``S.T @ S`` before they are merged), ...
SPARSE_CHUNK_PAIRS = 2**20
#: ... this many stored values ...
SPARSE_CHUNK_NONZEROS = 2**18
#: ... and this many rows.
SPARSE_CHUNK_ROWS = 2**17
#: The sparse product is used when ``sum nnz_i**2`` is below ``n d**2`` over
#: this. Measured on 2 cores (scipy 1.17, OpenBLAS; clip, Gram and sum of
#: 20000 x 500 and 5000 x 2000 uniform random matrices): the sparse pass was
#: 1.7x to 100x faster than densified chunks where ``n d**2 / sum nnz_i**2``
#: was 1000 or more, and 2x to 60x slower where it was 100 or less (5000 x
#: 2000) or 11 (20000 x 500).
SPARSE_PAIR_COST = 256


def _chunk_rows(n_features, chunk_rows):
    if chunk_rows is not None:
        return max(1, int(chunk_rows))
    return max(1, CHUNK_BYTES // (8 * max(1, n_features)))


#: Chunks per block: the unit of work of a thread, summed on its own.
BLOCK_CHUNKS = 16
#: At most this many bytes of per-thread sums and buffers (d x d matrices and
#: a chunk each): more threads are not worth their memory.
THREAD_BYTES = 64 * 2**20


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
    per_thread = 8 * (2 * n_features**2 + step * n_features)
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


def _cumulative_pairs(indptr):
    # sum_{i <= t} nnz_i**2 for every row t of a CSR matrix, exact in int64,
    # in one array (8 bytes a row, as much as the matrix's own indptr).
    pairs = np.diff(indptr).astype(np.int64)
    np.square(pairs, out=pairs)
    np.cumsum(pairs, out=pairs)
    return pairs


def _sparse_chunks(indptr, pairs, n_features, chunk_rows):
    # Row ranges [start, stop) of a CSR matrix whose products of nonzeros
    # (pairs: _cumulative_pairs), stored values and rows each stay within the
    # budgets above (a single row always makes a chunk). The product of a
    # chunk has at most d**2 entries whatever its rows, and adding it to the
    # Gram matrix costs up to d**2: chunks of up to d**2 products of nonzeros
    # amortise that.
    budget = max(SPARSE_CHUNK_PAIRS, n_features**2)
    n_rows = indptr.shape[0] - 1
    max_rows = SPARSE_CHUNK_ROWS if chunk_rows is None else max(1, int(chunk_rows))
    last = int(indptr[-1])
    start = 0
    while start < n_rows:
        before = int(pairs[start - 1]) if start else 0
        by_pairs = int(np.searchsorted(pairs, np.int64(before + budget), "right"))
        # (A target of indptr's own dtype: no converted copy of indptr.)
        target = indptr.dtype.type(
            min(int(indptr[start]) + SPARSE_CHUNK_NONZEROS, last)
        )
        by_values = int(np.searchsorted(indptr, target, "right")) - 1
        stop = max(start + 1, min(n_rows, start + max_rows, by_pairs, by_values))
        yield start, stop
        start = stop


def _as_csr(X):
    # CSR with canonical storage: duplicate entries summed (a row's norm is
    # computed from its stored values). The caller's matrix is never changed.
    X = X.tocsr()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def _prefer_sparse(shape, pairs):
    # The sparse product costs about sum nnz_i**2 scattered multiply-adds, the
    # densified chunks n d**2 / 2 BLAS flops (syrk) plus densifying: a
    # product of nonzeros costs about as much as SPARSE_PAIR_COST flops.
    n_rows, n_features = shape
    total = float(pairs[-1]) if pairs.size else 0.0
    return total * SPARSE_PAIR_COST <= n_rows * float(n_features) ** 2


#: Norms below this (and above 0) are recomputed on the rescaled row: their
#: squares may have lost digits to underflow.
_LOW_NORM = 2.0**-400
_MAX = float(np.finfo(np.float64).max)
_TINY = float(np.finfo(np.float64).tiny)
_EPS = float(np.finfo(np.float64).eps)


def _exponent(value):
    # The k with value < 2**k (value = m 2**k, m in [0.5, 1)); 0 for 0.
    return int(np.frexp(float(value))[1])


def _power_scaled(rows):
    # rows * 2**-k, with k per row so that the largest magnitude lies in
    # [0.5, 1), and k. A power of two: exact, except for entries that become
    # subnormal (below 2**-1022 of the row's largest); a zero row keeps k = 0.
    _, k = np.frexp(np.abs(rows).max(axis=1))
    return np.ldexp(rows, -k[:, np.newaxis]), k


def _row_norms(rows):
    # Row L2 norms of finite rows, in one einsum pass (no squared copy of the
    # chunk). A row whose sum of squares overflows, or is small enough to have
    # lost digits to underflow, is recomputed as 2**k ||x 2**-k||: exact
    # scaling, so the result is the norm correctly computed, or inf when it
    # exceeds the float64 range. (np.linalg.norm is no help: it squares too.)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
        suspect = ~(norms <= _MAX) | ((norms < _LOW_NORM) & (norms > 0))
        if suspect.any():
            scaled, k = _power_scaled(rows[suspect])
            norms[suspect] = np.ldexp(np.sqrt(np.einsum("ij,ij->i", scaled, scaled)), k)
    return norms


def _clip_factors(norms, radius):
    # min(1, radius / ||x||) per row, and which rows need the far-row rule of
    # _scale_rows (a norm beyond float64, or a subnormal factor).
    with np.errstate(divide="ignore", under="ignore"):
        scale = radius / norms  # inf for a zero row: its factor is 1
    np.minimum(scale, 1.0, out=scale)
    return scale, scale < _TINY


def _scale_rows(rows, radius, out, norms=None):
    # Rows of norm above radius scaled to it, in their own direction, written
    # to out (which may be rows itself): every row is multiplied by
    # min(1, radius / ||x||), so the work does not depend on how many rows
    # are clipped, and a row within the radius is multiplied by 1 (exact).
    # The factor radius / ||x|| is used as is when it is a normal float; for
    # a row whose norm is beyond float64 (inf) or makes that factor subnormal,
    # the row is first scaled by a power of two, u = x 2**-k, and becomes
    # u (radius / ||u||): the same direction, norm radius up to rounding.
    if norms is None:
        norms = _row_norms(rows)
    scale, far = _clip_factors(norms, radius)
    if far.any():
        index = np.flatnonzero(far)
        unit, _ = _power_scaled(rows[index])
        lengths = np.sqrt(np.einsum("ij,ij->i", unit, unit))
        far_rows = unit * (radius / lengths)[:, np.newaxis]
    np.multiply(rows, scale[:, np.newaxis], out=out)
    if far.any():
        out[index] = far_rows
    return out


def _clip(rows, radius, owned, norms=None):
    # _scale_rows in place when the rows are ours to change, else into a new
    # array; returns the rows and that they are now owned.
    out = rows if owned else np.empty_like(rows)
    return _scale_rows(rows, radius, out, norms), True


def _sums_by(index, values, length):
    # sum of values per index, as float64 (np.bincount gives int64 when
    # there are no values).
    return np.bincount(index, weights=values, minlength=length).astype(
        np.float64, copy=False
    )


def _sparse_row_peak(data, row, n_rows, entries):
    # max |x_ij| over the stored values of each row, for the stored values
    # selected by the boolean mask entries (0 for the other rows).
    peak = np.zeros(n_rows)
    np.maximum.at(peak, row[entries], np.abs(data[entries]))
    return peak


def _sparse_row_norms(data, row, n_rows):
    # Row L2 norms from the stored values of a canonical CSR chunk (row holds
    # each value's row), with _row_norms's rule for rows whose sum of squares
    # overflows or underflows: recomputed as 2**k ||x 2**-k||.
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        norms = np.sqrt(_sums_by(row, data * data, n_rows))
        suspect = ~(norms <= _MAX) | ((norms < _LOW_NORM) & (norms > 0))
        if suspect.any():
            entries = suspect[row]
            _, k = np.frexp(_sparse_row_peak(data, row, n_rows, entries))
            scaled = np.ldexp(data[entries], -k[row[entries]])
            squares = _sums_by(row[entries], scaled * scaled, n_rows)
            norms[suspect] = np.ldexp(np.sqrt(squares[suspect]), k[suspect])
    return norms


def _sparse_clip(data, row, n_rows, radius, norms):
    # _clip on the stored values of a CSR chunk: rows of norm above radius
    # scaled to it, in their own direction; a row whose norm is beyond
    # float64 or makes radius / ||x|| subnormal is first scaled by a power of
    # two, u = x 2**-k, and becomes u (radius / ||u||), as in _clip. Returns
    # new values when a row changes (the input is never written to).
    over = norms > radius
    if not over.any():
        return data
    factor = np.ones(n_rows)
    with np.errstate(under="ignore"):
        factor[over] = radius / norms[over]
        clipped = data * factor[row]
    far = over & (factor < _TINY)
    if far.any():
        entries = far[row]
        _, k = np.frexp(_sparse_row_peak(data, row, n_rows, entries))
        unit = np.ldexp(data[entries], -k[row[entries]])
        lengths = np.sqrt(_sums_by(row[entries], unit * unit, n_rows))
        clipped[entries] = unit * (radius / lengths[row[entries]])
    return clipped


def _add_sparse_gram(gram, rows):
    # gram += rows.T @ rows for a CSR chunk: the sparse product (entries for
    # the pairs of features that share a row only), added into the dense
    # d x d sum, densified when it fills an eighth of it (one vectorised add),
    # else scattered.
    product = (rows.T @ rows).tocoo()
    if 8 * product.nnz >= gram.size:
        gram += product.toarray()
    else:
        np.add.at(gram, (product.row, product.col), product.data)


@dataclass(frozen=True, eq=False)
class _Pass:
    # What one pass does: the processing of a row and the statistics summed.
    # Picklable (Dask ships it to the workers with each block's task).
    box: tuple = None
    clip_norm: float = None
    transform: np.ndarray = None
    center: np.ndarray = None
    final_clip: float = None
    gram: bool = False
    total: bool = False
    square_total: bool = False
    square_norm: bool = False
    norm_sums: object = None
    check_finite: bool = False
    chunk_rows: int = None
    # Exponents of the public magnitudes that bound the transform's and the
    # centring's results (see _affine_far), and whether they can overflow.
    transform_exponent: int = field(init=False, default=0)
    center_exponent: int = field(init=False, default=-1100)
    may_overflow: bool = field(init=False, default=False)
    center_square: float = field(init=False, default=0.0)

    def __post_init__(self):
        if self.box is not None:
            # Rows in unit coordinates: every entry in [-1, 1], norm <= sqrt(d).
            lower, upper = self.box
            center, half = lower / 2 + upper / 2, upper / 2 - lower / 2
            object.__setattr__(self, "box", (lower, upper, center, half))
        if self.transform is None and self.center is None:
            return
        # |(T x)_i| <= d max|T| max|x| < 2**t max|x| (no overflow computing t).
        if self.transform is not None and self.transform.size:
            t = _exponent(np.abs(self.transform).max()) + _exponent(
                self.transform.shape[1]
            )
            object.__setattr__(self, "transform_exponent", t)
        if self.center is not None:
            with np.errstate(over="ignore"):
                square = float(self.center @ self.center)
            object.__setattr__(self, "center_square", square)
        if self.center is not None and self.center.size:
            peak = np.abs(self.center).max()
            if peak > 0:
                object.__setattr__(self, "center_exponent", _exponent(peak))
        # After a clip to clip_norm every entry is below 2 clip_norm (rounding
        # included): a public bound on the results, checked in exponents.
        bound = self.clip_norm
        if self.box is not None:
            bound = np.sqrt(self.box[0].shape[0])
        may_overflow = bound is None or not (
            max(
                _exponent(bound) + 1 + self.transform_exponent,
                self.center_exponent,
            )
            + 1
            < 1000
        )
        object.__setattr__(self, "may_overflow", may_overflow)

    def shapes(self, n_features):
        # Every statistic's shape, in packing order.
        out_features = n_features if self.transform is None else self.transform.shape[0]
        shapes = {}
        if self.gram:
            shapes["gram"] = (out_features, out_features)
        if self.total:
            shapes["total"] = (out_features,)
        if self.square_total:
            shapes["square_total"] = (out_features,)
        if self.square_norm:
            shapes["square_norm"] = ()
        if self.norm_sums is not None:
            shapes["norm_sums"] = self.norm_sums_empty().shape
        return shapes

    def norm_sums_empty(self):
        # The norm_sums callable on no rows: its shape and dtype (integer
        # counts are summed exactly in int64, anything else in float64).
        empty = np.asarray(self.norm_sums(np.empty(0)))
        if np.issubdtype(empty.dtype, np.integer):
            return empty.astype(np.int64)
        return empty.astype(np.float64)

    def process(self, chunk, buffer=None):
        """The chunk's processed rows and their norms before the final clip.

        ``buffer`` (float64, at least the chunk's shape) receives the rows
        when the steps can run in place: no array of the chunk's size is
        allocated. The rows are the same bits either way.
        """
        self._check_chunk(chunk)
        if buffer is None or self.may_overflow or self.transform is not None:
            return self._process_new(chunk)
        # The steps of _process_new, each written to the buffer: the same
        # operations on the same values, so the same bits.
        out = buffer[: chunk.shape[0], : chunk.shape[1]]
        rows = chunk
        if chunk.dtype != np.float64:
            np.copyto(out, chunk)  # float32 to float64: exact
            rows = out
        if self.box is not None:
            lower, upper, center, half = self.box
            np.clip(rows, lower, upper, out=out)
            np.subtract(out, center, out=out)
            np.divide(out, half, out=out)
            rows = out
        if self.clip_norm is not None:
            rows = _scale_rows(rows, self.clip_norm, out)
        if self.center is not None:
            # (No overflow: may_overflow is False.)
            rows = np.subtract(rows, self.center, out=out)
        norms = None
        needs_norms = self.square_norm or self.norm_sums is not None
        if needs_norms or self.final_clip is not None:
            norms = _row_norms(rows)
        if self.final_clip is not None:
            rows = _scale_rows(rows, self.final_clip, out, norms)
        return rows, norms

    def _check_chunk(self, chunk):
        if self.check_finite:
            # A finite sum proves every entry finite; otherwise look closer (a
            # sum can overflow on finite entries).
            with np.errstate(over="ignore", invalid="ignore"):
                suspect = not np.isfinite(chunk.sum(dtype=np.float64))
            if suspect and not np.isfinite(chunk).all():
                raise ValueError("Input X contains NaN or infinity.")

    def rows_unformed(self):
        """Whether the sums need no processed row: see :meth:`unformed`."""
        return (
            not (self.gram or self.square_total or self.may_overflow)
            and self.box is None
            and self.transform is None
            and self.final_clip is None
            and self.clip_norm is not None
            and (self.center is None or not self.total)
        )

    def unformed(self, chunk, buffer):
        """The sums' inputs for rows ``z = f x - m`` that are never formed.

        Returns the chunk in float64 ``x``, the clip factors ``f = min(1, r /
        ||x||)`` and the norms of ``z``, or None for a chunk with a row
        beyond float64's range (the caller forms its rows). The sum of the
        clipped rows is ``f @ x``: the same clip factors and the same
        function of the rows as ``1 @ (f x)``; only the rounding differs (the
        BLAS may fuse ``f_i x_ij`` into the sum). The norms are
        ``f ||x||`` without a centre, else from ``||z||^2 = (f ||x||)^2 - 2 f
        (x . m) + ||m||^2``: they agree with the norms of the formed rows up
        to rounding, ``(d + 4) eps (||f x|| + ||m||)^2`` in the square (each
        term a sum of at most ``d`` products, Higham 2002, Sec. 3.1). These
        norms feed statistics whose sensitivity holds for any function of
        the row (bin counts, sums of squares within the bound), never a clip.
        """
        rows = chunk
        if chunk.dtype != np.float64:
            rows = buffer[: chunk.shape[0], : chunk.shape[1]]
            np.copyto(rows, chunk)
        norms = _row_norms(rows)
        scale, far = _clip_factors(norms, self.clip_norm)
        if far.any():
            return None
        norms *= scale
        if self.center is None:
            return rows, scale, norms
        with np.errstate(over="ignore", invalid="ignore"):
            dots = rows @ self.center
        if not np.isfinite(dots).all():
            return None
        dots *= scale
        square = np.square(norms, out=norms)
        square -= 2.0 * dots
        square += self.center_square
        np.maximum(square, 0.0, out=square)
        return rows, scale, np.sqrt(square, out=square)

    def _process_new(self, chunk):
        # process() with new arrays: the rows of norm beyond float64 and
        # the transform need them.
        rows = chunk if chunk.dtype == np.float64 else chunk.astype(np.float64)
        owned = rows is not chunk
        if self.box is not None:
            # Clip each feature to its public range, then map the box onto
            # [-1, 1]^d (a new array: the input is never written to).
            lower, upper, center, half = self.box
            rows = (np.clip(rows, lower, upper) - center) / half
            owned = True
        if self.clip_norm is not None:
            rows, owned = _clip(rows, self.clip_norm, owned)
        # Kept only if it may be needed (holding it costs a chunk of memory).
        source = rows if self.may_overflow else None
        # Overflow here (huge rows, no clip before) gives inf or NaN in that
        # row only; such rows are recomputed below, without a warning.
        with np.errstate(over="ignore", invalid="ignore"):
            if self.transform is not None:
                rows = rows @ self.transform.T
                owned = True
            if self.center is not None:
                rows = rows - self.center
                owned = True
        norms = None
        needs_norms = self.square_norm or self.norm_sums is not None
        if needs_norms or self.final_clip is not None:
            norms = _row_norms(rows)
        if source is not None and rows is not source:
            if norms is None:
                far = ~np.isfinite(rows).all(axis=1)
            else:
                # inf or NaN: an overflow in the row (or a norm beyond float64).
                far = ~(norms <= _MAX)
            if far.any():
                rows[far], far_norms = self._affine_far(source[far])
                if norms is None:
                    return rows, norms
                norms[far] = far_norms
                if self.final_clip is not None:
                    # Those rows come back clipped: not again.
                    rows, owned = _clip(
                        rows, self.final_clip, owned, np.where(far, 0.0, norms)
                    )
                    return rows, norms
        if self.final_clip is not None:
            rows, owned = _clip(rows, self.final_clip, owned, norms)
        return rows, norms

    def _affine_far(self, source):
        # transform @ x - center for rows where it overflowed, computed on
        # x 2**-j: with 2**k > max|x|, 2**t max|x| > max|T x| and 2**c >
        # max|center|, j = max(k + t, c, k - 1000) + 1
        # makes every entry of the scaled result below 1 and the scaled row
        # finite, so nothing overflows. The rows come back as the exact
        # result (inf where it is beyond float64) if final_clip is None,
        # else already clipped, u (final_clip / ||u||) for u the scaled
        # result brought to magnitude 1 (the rows' direction, up to
        # rounding), and with their norms.
        _, k = np.frexp(np.abs(source).max(axis=1))
        j = (
            np.maximum(
                np.maximum(k + self.transform_exponent, k - 1000), self.center_exponent
            )
            + 1
        )
        with np.errstate(over="ignore", under="ignore"):
            scaled = np.ldexp(source, -j[:, np.newaxis])
            if self.transform is not None:
                scaled = scaled @ self.transform.T
            if self.center is not None:
                scaled = scaled - np.ldexp(self.center, -j[:, np.newaxis])
            unit, i = _power_scaled(scaled)
            lengths = np.sqrt(np.einsum("ij,ij->i", unit, unit))
            norms = np.ldexp(lengths, i + j)
            if self.final_clip is None:
                return np.ldexp(scaled, j[:, np.newaxis]), norms
            over = norms > self.final_clip
            rows = np.empty_like(scaled)
            rows[over] = unit[over] * (self.final_clip / lengths[over])[:, np.newaxis]
            rows[~over] = np.ldexp(scaled[~over], j[~over][:, np.newaxis])
        return rows, norms

    def sparse_rows(self):
        """Whether a sparse input can be processed without dense rows.

        ``box`` and ``transform`` make rows dense. A centre is expanded into
        sums of squares and products (see :meth:`run_sparse`), so it needs a
        clip first and squares of the bounds within float64.
        """
        # The box step maps x to (clip(x, lower, upper) - center) / half,
        # whose shift fills the zeros: sparse input with bounds runs on
        # densified chunks (memory O(chunk_rows * d), time as for dense
        # rows). A sparse box would need the clip to keep zeros
        # (lower <= 0 <= upper) and the shift expanded like the centring; not
        # worth it while sparse users (counts, TF-IDF) have a natural
        # data_norm.
        if self.box is not None or self.transform is not None:
            return False
        if self.center is None:
            return True
        return (
            self.clip_norm is not None
            and max(_exponent(self.clip_norm), self.center_exponent) < 500
        )

    def _zeros(self, n_features):
        return {
            name: np.zeros_like(self.norm_sums_empty(), shape=shape)
            if name == "norm_sums"
            else np.zeros(shape)
            for name, shape in self.shapes(n_features).items()
        }

    def run(self, X):
        """Sum the statistics over the chunks of an in-memory ``X``."""
        if sparse.issparse(X):
            X = _as_csr(X)
            if self.sparse_rows():
                pairs = _cumulative_pairs(X.indptr)
                if _prefer_sparse(X.shape, pairs):
                    return self.run_sparse(X, pairs)
                del pairs
        # Fixed blocks of chunks, each summed on its own, the blocks' sums
        # added in order: the result does not depend on how many threads
        # run the blocks.
        n_rows, n_features = X.shape
        step = _chunk_rows(n_features, self.chunk_rows)
        starts = range(0, n_rows, step)
        blocks = [
            starts[i : i + BLOCK_CHUNKS] for i in range(0, len(starts), BLOCK_CHUNKS)
        ]
        sums = self._zeros(n_features)
        workers = _pass_threads(n_features, step, len(blocks))
        if workers == 1:
            buffer = np.empty((step, n_features))
            for block in blocks:
                _add_sums(sums, self._run_block(X, block, step, buffer))
            return sums
        buffers = queue.SimpleQueue()
        for _ in range(workers):
            buffers.put(np.empty((step, n_features)))

        def run_block(block):
            buffer = buffers.get()
            try:
                return self._run_block(X, block, step, buffer)
            finally:
                buffers.put(buffer)

        with single_threaded_blas(), ThreadPoolExecutor(workers) as executor:
            for block_sums in _ordered_map(executor, run_block, blocks, 2 * workers):
                _add_sums(sums, block_sums)
        return sums

    def _run_block(self, X, starts, step, buffer):
        # The sums over the chunks of rows that start at starts.
        n_features = X.shape[1]
        sums = self._zeros(n_features)
        ones = np.ones(step)
        unformed = self.rows_unformed()
        for start in starts:
            chunk = X[start : start + step]
            if sparse.issparse(chunk):
                # A chunk at a time: memory O(chunk_rows * d), never all of X.
                chunk = chunk.toarray()
            if unformed:
                self._check_chunk(chunk)
                parts = self.unformed(chunk, buffer)
                if parts is not None:
                    rows, scale, norms = parts
                    if self.total:
                        sums["total"] += scale @ rows
                    self._add_norm_statistics(sums, norms)
                    continue
            rows, norms = self.process(chunk, buffer)
            if self.gram:
                # A contiguous array times its own transpose: NumPy calls
                # BLAS syrk (half the flops of a general product).
                sums["gram"] += rows.T @ rows
            if self.total:
                # A BLAS matrix-vector product: about 3x np.sum(axis=0).
                sums["total"] += ones[: rows.shape[0]] @ rows
            if self.square_total:
                # Per-feature sums of squares (the Gram matrix's diagonal, in
                # O(n d) rather than O(n d^2)); inf if the rows are not
                # clipped and a sum is beyond float64.
                with np.errstate(over="ignore"):
                    sums["square_total"] += np.einsum("ij,ij->j", rows, rows)
            self._add_norm_statistics(sums, norms)
        return sums

    def _add_norm_statistics(self, sums, norms):
        if self.square_norm:
            # inf if the rows are not clipped and the sum is beyond float64.
            with np.errstate(over="ignore"):
                sums["square_norm"] += np.dot(norms, norms)
        if self.norm_sums is not None:
            sums["norm_sums"] += self.norm_sums(norms)

    def run_sparse(self, X, pairs):
        """Sum the statistics over the chunks of a canonical CSR ``X``.

        ``pairs`` is ``_cumulative_pairs(X.indptr)``.

        The rows are clipped by scaling their stored values. The centred rows
        ``z = c - m`` are never formed: with the final clip's factors ``f``
        (1 without it), ``sum f^2 z z^T = sum f^2 c c^T - s m^T - m s^T +
        (sum f^2) m m^T`` with ``s = sum f^2 c``, ``sum f z = sum f c - (sum
        f) m`` and ``||z||^2 = ||c||^2 - 2 c.m + ||m||^2``.
        """
        n_features = X.shape[1]
        sums = self._zeros(n_features)
        center = self.center
        if center is not None:
            center_square = float(center @ center)
            # s = sum f^2 c and sum f^2, for the centring of the Gram matrix.
            weighted, weight_square = np.zeros(n_features), 0.0
        for start, stop in _sparse_chunks(X.indptr, pairs, n_features, self.chunk_rows):
            n_rows = stop - start
            low, high = X.indptr[start], X.indptr[stop]
            data = X.data[low:high].astype(np.float64)  # a copy: ours to scale
            indices = X.indices[low:high]
            indptr = X.indptr[start : stop + 1] - low
            row = np.repeat(np.arange(n_rows), np.diff(indptr))
            if self.check_finite and not np.isfinite(data).all():
                raise ValueError("Input X contains NaN or infinity.")
            if self.clip_norm is not None:
                norms = _sparse_row_norms(data, row, n_rows)
                data = _sparse_clip(data, row, n_rows, self.clip_norm, norms)
            needs_norms = (
                self.square_norm
                or self.norm_sums is not None
                or self.final_clip is not None
            )
            norms = None
            if center is None:
                if needs_norms:
                    norms = _sparse_row_norms(data, row, n_rows)
                if self.final_clip is not None:
                    data = _sparse_clip(data, row, n_rows, self.final_clip, norms)
                weights = None
            else:
                weights = np.ones(n_rows)
                if needs_norms:
                    squares = _sums_by(row, data * data, n_rows)
                    rows = sparse.csr_matrix(
                        (data, indices, indptr), shape=(n_rows, n_features)
                    )
                    square_norms = squares - 2.0 * (rows @ center) + center_square
                    square_norms = np.maximum(square_norms, 0.0)
                    norms = np.sqrt(square_norms)
                if self.final_clip is not None:
                    # The expansion of ||c - m||^2 carries a rounding error of
                    # at most (d + 4) eps (||c|| + ||m||)^2 (each of its terms
                    # is a sum of at most d products, Higham 2002, Sec. 3.1):
                    # clipping by the norm plus that slack keeps every clipped
                    # row within final_clip, as the sensitivity needs.
                    slack = (n_features + 4) * _EPS
                    slack *= (np.sqrt(squares) + np.sqrt(center_square)) ** 2
                    upper = square_norms + slack
                    over = upper > self.final_clip**2
                    weights[over] = self.final_clip / np.sqrt(upper[over])
                    data = data * weights[row]
            rows = sparse.csr_matrix(
                (data, indices, indptr), shape=(n_rows, n_features)
            )
            if self.gram:
                _add_sparse_gram(sums["gram"], rows)
                if center is not None:
                    weighted += _sums_by(indices, data * weights[row], n_features)
                    weight_square += float(weights @ weights)
            if self.total:
                total = _sums_by(indices, data, n_features)
                if center is not None:
                    total -= weights.sum() * center
                sums["total"] += total
            if self.square_norm:
                with np.errstate(over="ignore"):
                    sums["square_norm"] += np.dot(norms, norms)
            if self.norm_sums is not None:
                sums["norm_sums"] += self.norm_sums(norms)
        if self.gram and center is not None:
            # - s m^T - m s^T + (sum f^2) m m^T, once for all the chunks.
            cross = np.outer(weighted, center)
            cross += cross.T
            sums["gram"] -= cross
            cross = np.outer(center, center)
            cross *= weight_square
            sums["gram"] += cross
        return sums

    def run_packed(self, block):
        # A Dask block's statistics as one row of float64 numbers (counts are
        # integers below 2**53, exact in float64).
        sums = self.run(block)
        return np.concatenate([np.ravel(value) for value in sums.values()])[np.newaxis]


@dataclass
class RowStatistics:
    """Sums over the processed rows, from :func:`row_statistics`.

    Attributes
    ----------
    n_rows : int
        Number of rows.
    gram : ndarray of shape (d, d) or None
        ``sum_i y_i y_i^T``, float64.
    total : ndarray of shape (d,) or None
        ``sum_i y_i``, float64.
    square_total : ndarray of shape (d,) or None
        ``sum_i y_i * y_i`` (per-feature sums of squares), float64.
    square_norm : float or None
        ``sum_i ||z_i||**2`` over the rows ``z_i`` entering the final clip.
    norm_sums : ndarray or None
        ``sum_i norm_sums(||z_i||)``: int64 for integer values (counts),
        float64 otherwise.
    """

    n_rows: int
    gram: np.ndarray = None
    total: np.ndarray = None
    square_total: np.ndarray = None
    square_norm: float = None
    norm_sums: np.ndarray = None


def row_statistics(
    X,
    *,
    box=None,
    clip_norm=None,
    transform=None,
    center=None,
    final_clip=None,
    gram=False,
    total=False,
    square_total=False,
    square_norm=False,
    norm_sums=None,
    check_finite=False,
    chunk_rows=None,
):
    """Sums over the processed rows of ``X``, in one chunked pass.

    Parameters
    ----------
    X : ndarray, sparse matrix or dask.array.Array of shape (n_samples, n_features)
        Input rows (float32 or float64); never modified. A Dask array is
        reduced by Dask (blocks of whole rows); anything else is read in
        chunks of ``chunk_rows`` rows. A SciPy sparse matrix or array is
        never densified as a whole (see the module's description).
    box : tuple of (lower, upper), default=None
        First, each feature is clipped to ``[lower, upper]`` (arrays of shape
        ``(n_features,)``, validated by
        :func:`~dpcov.utils.validation.check_bounds`) and the box is mapped
        onto ``[-1, 1]^d``: ``x -> (x - center) / half_width``.
    clip_norm : float, default=None
        Then rows are scaled down to this L2 norm if longer.
    transform : ndarray of shape (d_out, n_features), default=None
        Then mapped by ``x -> transform @ x``.
    center : ndarray, default=None
        Then this is subtracted.
    final_clip : float, default=None
        Then rows are scaled down to this L2 norm if longer.
    gram, total, square_total, square_norm : bool, default=False
        Which sums to compute (see :class:`RowStatistics`).
    norm_sums : callable, default=None
        Maps an array of norms (of the rows entering the final clip) to an
        array of a fixed shape, e.g. counts in public bins (integers, summed
        exactly in int64) or per-bin sums of squared norms (float64); summed
        over the chunks. Must be picklable for Dask (a module-level function
        or a :func:`functools.partial` of one).
    check_finite : bool, default=False
        Raise ``ValueError`` if an entry of ``X`` is NaN or infinite (for
        inputs that were not validated eagerly, like Dask arrays).
    chunk_rows : int, default=None
        Rows per chunk; by default about ``CHUNK_BYTES`` of float64 rows (for
        sparse input, by default chunks of bounded numbers of stored values
        and of their products).

    Returns
    -------
    statistics : RowStatistics
        The requested sums; the others are None.
    """
    spec = _Pass(
        box=None
        if box is None
        else tuple(np.asarray(bound, dtype=np.float64) for bound in box),
        clip_norm=None if clip_norm is None else float(clip_norm),
        transform=None if transform is None else np.asarray(transform, float),
        center=None if center is None else np.asarray(center, float),
        final_clip=None if final_clip is None else float(final_clip),
        gram=gram,
        total=total,
        square_total=square_total,
        square_norm=square_norm,
        norm_sums=norm_sums,
        check_finite=check_finite,
        chunk_rows=chunk_rows,
    )
    if not spec.shapes(X.shape[1]):
        if not check_finite:
            return RowStatistics(n_rows=int(X.shape[0]))
        # A bare finiteness check still visits every row: sum something.
        spec = replace(spec, total=True)
    sums = _dask_sums(X, spec) if is_dask_array(X) else spec.run(X)
    if not (gram or total or square_total or square_norm or norm_sums is not None):
        sums = {}
    if "square_norm" in sums:
        sums["square_norm"] = float(sums["square_norm"])
    return RowStatistics(n_rows=int(X.shape[0]), **sums)


def rows_in_blocks(X):
    """A Dask array with each block holding whole rows (one column block).

    Merging column blocks multiplies a block's size by their number, so the
    rows are re-split to Dask's default block size at the same time.
    """
    if X.numblocks[1] == 1:
        return X
    return X.rechunk({0: "auto", 1: -1})


def _dask_sums(X, spec):
    # Each block (whole rows) runs the in-memory pass; Dask sums the packed
    # vectors. On Dask's threaded scheduler, the blocks' BLAS calls run
    # single-threaded: the scheduler's threads supply the parallelism, and
    # OpenBLAS threads on top of them oversubscribe the cores (10x slower when
    # measured on 2 cores, n = 2e6, d = 100). Workers of dask.distributed start
    # with one BLAS thread; the synchronous scheduler keeps BLAS's threads.
    import dask
    import dask.threaded

    X = rows_in_blocks(X)
    shapes = spec.shapes(X.shape[1])
    sizes = [int(np.prod(shape)) for shape in shapes.values()]
    parts = X.map_blocks(
        spec.run_packed,
        chunks=((1,) * X.numblocks[0], (sum(sizes),)),
        dtype=np.float64,
        meta=np.empty((0, 0)),
    )
    total = parts.sum(axis=0)
    if dask.base.get_scheduler(collections=[total]) is dask.threaded.get:
        with single_threaded_blas():
            packed = total.compute()
    else:
        packed = total.compute()
    sums = {}
    offset = 0
    for (name, shape), size in zip(shapes.items(), sizes, strict=True):
        value = packed[offset : offset + size].reshape(shape)
        if name == "norm_sums" and spec.norm_sums_empty().dtype == np.int64:
            value = np.rint(value).astype(np.int64)
        sums[name] = value
        offset += size
    return sums
