"""One chunked pass over the rows: process them, then sum statistics.

Every covariance-based estimator's cost floor is one pass over the data that
clips each row and accumulates the Gram matrix ``Y.T @ Y`` of the processed
rows. Every statistic an estimator needs from the data is a sum over rows (the
Gram matrix, the sum of the rows and of their squares, the sum of squared
norms, counts of norms in public bins), so one function,
:func:`row_statistics`, computes them all, in one pass, with bounded memory:

* a NumPy array (or a memmap) is read chunk by chunk: memory stays at the
  input plus ``O(d**2 + chunk_rows * d)``. ``X`` is never copied as a whole
  and never written to; a chunk is copied only when a row in it must change or
  the input is float32 (each chunk is upcast, so float32 input costs no
  float64 copy of ``X`` and the statistics are as accurate as for float64);
  the Gram update is one BLAS call per chunk, accumulated in float64;
* a ``dask.array`` is reduced by Dask: every block runs the same chunked pass
  and returns its statistics packed in one vector, and Dask sums the vectors
  (a tree reduction). Only ``O(d**2)`` numbers per block travel; the caller
  draws the noise once, on the client, from the summed statistics.

A row ``x`` is processed as ``clip(clip(box(x), clip_norm) @ transform.T -
center, final_clip)`` where ``clip(v, r) = v * min(1, r / ||v||)`` and
``box`` clips each feature to a public range and maps the range onto
``[-1, 1]``; each step is optional. Norm statistics (``square_norm``,
``norm_counts``) are of the rows as they enter the final clip.

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

import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np
from threadpoolctl import threadpool_limits

#: Bytes of float64 rows per chunk (a chunk of 8 MiB keeps BLAS efficient and
#: the temporaries small).
CHUNK_BYTES = 8 * 2**20


def is_dask_array(X):
    """Whether ``X`` is a ``dask.array.Array`` (without importing Dask)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def _chunk_rows(n_features, chunk_rows):
    if chunk_rows is not None:
        return max(1, int(chunk_rows))
    return max(1, CHUNK_BYTES // (8 * max(1, n_features)))


#: Norms below this (and above 0) are recomputed on the rescaled row: their
#: squares may have lost digits to underflow.
_LOW_NORM = 2.0**-400
_MAX = float(np.finfo(np.float64).max)
_TINY = float(np.finfo(np.float64).tiny)


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


def _clip(rows, radius, owned, norms=None):
    # Rows of norm above radius scaled to it, in their own direction. The
    # factor radius / ||x|| is used as is when it is a normal float (the
    # result is the same as before this rule existed); for a row whose norm
    # is beyond float64 (inf) or makes that factor subnormal, the row is
    # first scaled by a power of two, u = x 2**-k, and becomes
    # u (radius / ||u||): the same direction, norm radius up to rounding.
    if norms is None:
        norms = _row_norms(rows)
    over = norms > radius
    if not over.any():
        return rows, owned
    if not owned:
        rows = rows.copy()
        owned = True
    with np.errstate(under="ignore"):
        factor = radius / norms[over]
    far = factor < _TINY
    if far.any():
        index = np.flatnonzero(over)[far]
        unit, _ = _power_scaled(rows[index])
        lengths = np.sqrt(np.einsum("ij,ij->i", unit, unit))
        far_rows = unit * (radius / lengths)[:, np.newaxis]
    if 4 * factor.shape[0] > rows.shape[0]:
        # Many rows to scale: one dense product (by 1 elsewhere, exact) is
        # cheaper than gathering and scattering them.
        scale = np.ones(rows.shape[0])
        scale[over] = factor
        rows *= scale[:, np.newaxis]
    else:
        rows[over] *= factor[:, np.newaxis]
    if far.any():
        rows[index] = far_rows
    return rows, owned


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
    norm_counts: object = None
    check_finite: bool = False
    chunk_rows: int = None
    # Exponents of the public magnitudes that bound the transform's and the
    # centring's results (see _affine_far), and whether they can overflow.
    transform_exponent: int = field(init=False, default=0)
    center_exponent: int = field(init=False, default=-1100)
    may_overflow: bool = field(init=False, default=False)

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
        if self.norm_counts is not None:
            empty = np.asarray(self.norm_counts(np.empty(0)))
            shapes["norm_counts"] = empty.shape
        return shapes

    def process(self, chunk):
        """The chunk's processed rows and their norms before the final clip."""
        if self.check_finite:
            # A finite sum proves every entry finite; otherwise look closer (a
            # sum can overflow on finite entries).
            with np.errstate(over="ignore", invalid="ignore"):
                suspect = not np.isfinite(chunk.sum(dtype=np.float64))
            if suspect and not np.isfinite(chunk).all():
                raise ValueError("Input X contains NaN or infinity.")
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
        needs_norms = self.square_norm or self.norm_counts is not None
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

    def run(self, X):
        """Sum the statistics over the chunks of an in-memory ``X``."""
        n_features = X.shape[1]
        sums = {
            name: np.zeros(shape, dtype=np.int64 if name == "norm_counts" else None)
            for name, shape in self.shapes(n_features).items()
        }
        step = _chunk_rows(n_features, self.chunk_rows)
        for start in range(0, X.shape[0], step):
            rows, norms = self.process(X[start : start + step])
            if self.gram:
                sums["gram"] += rows.T @ rows
            if self.total:
                # A BLAS matrix-vector product: about 3x np.sum(axis=0).
                sums["total"] += np.ones(rows.shape[0]) @ rows
            if self.square_total:
                # Per-feature sums of squares (the Gram matrix's diagonal, in
                # O(n d) rather than O(n d^2)); inf if the rows are not
                # clipped and a sum is beyond float64.
                with np.errstate(over="ignore"):
                    sums["square_total"] += np.einsum("ij,ij->j", rows, rows)
            if self.square_norm:
                # inf if the rows are not clipped and the sum is beyond float64.
                with np.errstate(over="ignore"):
                    sums["square_norm"] += np.dot(norms, norms)
            if self.norm_counts is not None:
                sums["norm_counts"] += self.norm_counts(norms)
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
    norm_counts : ndarray of int or None
        ``sum_i norm_counts(||z_i||)``.
    """

    n_rows: int
    gram: np.ndarray = None
    total: np.ndarray = None
    square_total: np.ndarray = None
    square_norm: float = None
    norm_counts: np.ndarray = None


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
    norm_counts=None,
    check_finite=False,
    chunk_rows=None,
):
    """Sums over the processed rows of ``X``, in one chunked pass.

    Parameters
    ----------
    X : ndarray or dask.array.Array of shape (n_samples, n_features)
        Input rows (float32 or float64); never modified. A Dask array is
        reduced by Dask (blocks of whole rows); anything else is read in
        chunks of ``chunk_rows`` rows.
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
    norm_counts : callable, default=None
        Maps an array of norms (of the rows entering the final clip) to an
        integer array of a fixed shape, e.g. counts in public bins; summed
        over the chunks. Must be picklable for Dask (a module-level function
        or a :func:`functools.partial` of one).
    check_finite : bool, default=False
        Raise ``ValueError`` if an entry of ``X`` is NaN or infinite (for
        inputs that were not validated eagerly, like Dask arrays).
    chunk_rows : int, default=None
        Rows per chunk; by default about ``CHUNK_BYTES`` of float64 rows.

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
        norm_counts=norm_counts,
        check_finite=check_finite,
        chunk_rows=chunk_rows,
    )
    if not spec.shapes(X.shape[1]):
        if not check_finite:
            return RowStatistics(n_rows=int(X.shape[0]))
        # A bare finiteness check still visits every row: sum something.
        spec = replace(spec, total=True)
    sums = _dask_sums(X, spec) if is_dask_array(X) else spec.run(X)
    if not (gram or total or square_total or square_norm or norm_counts is not None):
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


_blas_lock = threading.Lock()
_blas_users = 0
_blas_limiter = None


@contextmanager
def _single_threaded_blas():
    # threadpool_limits is process-global and restores what it found on exit:
    # two overlapping fits (in two threads) would leave BLAS at one thread.
    # Count the users and let only the first set, and the last restore.
    global _blas_users, _blas_limiter
    with _blas_lock:
        if _blas_users == 0:
            _blas_limiter = threadpool_limits(limits=1, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None


def _dask_sums(X, spec):
    # Each block (whole rows) runs the in-memory pass; Dask sums the packed
    # vectors. On Dask's threaded scheduler, the blocks' BLAS calls run
    # single-threaded: the scheduler's threads supply the parallelism, and
    # OpenBLAS threads on top of them oversubscribe the cores (10x slower in
    # NOTES.md's measurement). Workers of dask.distributed start with one BLAS
    # thread; the synchronous scheduler keeps BLAS's threads.
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
        with _single_threaded_blas():
            packed = total.compute()
    else:
        packed = total.compute()
    sums = {}
    offset = 0
    for (name, shape), size in zip(shapes.items(), sizes, strict=True):
        value = packed[offset : offset + size].reshape(shape)
        if name == "norm_counts":
            value = np.rint(value).astype(np.int64)
        sums[name] = value
        offset += size
    return sums
