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
  float64). Rows beyond the radius are scaled by their clip factor; the
  others are left as they are (a factor of 1 is exact), so a chunk with no
  row to clip costs no write. The Gram update is one BLAS call (``syrk``)
  per chunk, accumulated in float64. Fixed blocks of chunks are summed on
  the threads the BLAS would use (:mod:`dpcov.utils._threads`), their sums
  added in a fixed order: for rows narrower than ``SYRK_FROM`` features the
  same bits whatever the number of threads (wider rows' updates, in place
  on one thread and products on several, agree to rounding). Sums that need
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

The package holds one module per path, and what they share:

* ``_rows.py``: row norms and clips, with the rule above for values beyond
  float64, shared by the paths;
* ``_pass.py``: ``_Pass``, what one pass computes (the processing of a row
  and the statistics summed), with the methods of each path;
* ``_dense.py``: the dense chunked pass over an in-memory array (and sparse
  input in densified chunks);
* ``_blocks.py``: how that pass is cut into chunks, blocks and threads, and
  a chunk's Gram update;
* ``_sparse.py``: the sparse pass over the stored values of a CSR matrix;
* ``_dask.py``: the reduction of a ``dask.array`` by Dask;
* ``_norms_kept.py``: the input rows' norms, kept between the passes of
  one fit (:func:`kept_row_norms`);
* ``_binned.py``: sums binned by norm on a public grid (``bins``), from which
  the sums over the rows clipped at any grid point follow: a clip at a radius
  chosen after the read, so that a Dask fit reads its data once.

This module holds the entry point, :func:`row_statistics`, with
:class:`RowStatistics`, and re-exports the names that other modules import
from ``dpcov.utils._gram``. A module-level constant or function is looked up
in the module that defines it: a test that patches one (``pass_threads``,
``SPARSE_PAIR_COST``) patches that module, e.g. ``_gram._sparse``.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from dataclasses import dataclass, replace

import numpy as np

# Its functions are read as attributes of the module, at the call: a test that
# patches one (host_view) patches _array_api.
from .. import _array_api
from .._array_api import is_dask_array
from ._binned import BinnedSums
from ._blocks import BLOCK_CHUNKS, CHUNK_BYTES, _ordered_map, _pass_threads
from ._dask import _dask_sums, rows_in_blocks
from ._norms_kept import kept_row_norms
from ._pass import _Pass
from ._rows import _clip, _row_norms
from ._sparse import SPARSE_CHUNK_ROWS, _cumulative_pairs, _sparse_chunks
from ._units import CountedRows, UnitRows
from ._xp import xp_sums


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
    binned : BinnedSums or None
        With ``bins``: the counts, and the sums ``gram`` and ``total`` asked
        for, binned by the norms entering the final clip (``gram`` and
        ``total`` are then None; :meth:`BinnedSums.clipped` gives them at a
        grid point).
    """

    n_rows: int
    gram: np.ndarray = None
    total: np.ndarray = None
    square_total: np.ndarray = None
    square_norm: float = None
    norm_sums: np.ndarray = None
    binned: BinnedSums = None


def _run(X, spec):
    # The pass for X's kind: Dask, another array namespace, or in memory.
    if is_dask_array(X):
        return _dask_sums(X, spec)
    namespace = _array_api.namespace_of(X)
    if namespace is not None:
        # In host memory: the NumPy pass on a view; elsewhere, on its device.
        view = _array_api.host_view(X)
        if view is not None:
            return spec.run(view)
        return xp_sums(X, spec, *namespace)
    return spec.run(X)


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
    bins=None,
):
    """Sums over the processed rows of ``X``, in one chunked pass.

    Parameters
    ----------
    X : ndarray, sparse matrix or dask.array.Array of shape (n_samples, n_features)
        Input rows (float32 or float64); never modified. A Dask array is
        reduced by Dask (blocks of whole rows); anything else is read in
        chunks of ``chunk_rows`` rows. A SciPy sparse matrix or array is
        never densified as a whole (see the module's description). A
        :class:`~dpcov.utils._gram._units.UnitRows` (rows grouped by person)
        gives sums over persons.
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
    bins : ndarray, default=None
        A public grid of radii, strictly decreasing. ``gram`` and ``total``
        are then summed per bin of the norms of the rows entering the final
        clip (``final_clip`` must be None), for the rows and for their
        directions, so that the sums over the rows clipped at any grid point
        follow from this one read (see ``_binned.py``; the binned Gram
        matrices cost twice the flops of one, and on a sparse input the
        chunks are densified).

    Returns
    -------
    statistics : RowStatistics
        The requested sums; the others are None.
    """
    if isinstance(X, CountedRows):
        # A released count in place of the number of rows: the sums are the
        # rows' (n_rows, exact, only ever enters them as the sums' count).
        X = X.X
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
        bins=None if bins is None else np.asarray(bins, dtype=np.float64),
    )
    if isinstance(X, UnitRows):
        # Rows grouped by person: sums over persons (dpcov.utils._gram._units).
        return RowStatistics(**X.statistics(spec))
    if bins is not None:
        if final_clip is not None:
            raise ValueError("bins replaces final_clip: pass one of them.")
        sums = _run(X, spec)
        binned = BinnedSums(
            grid=spec.bins,
            counts=sums.pop("bin_counts"),
            total=sums.pop("bin_total", None),
            grams=sums.pop("bin_gram", None),
            n_features=X.shape[1] if transform is None else spec.transform.shape[0],
        )
        if "square_norm" in sums:
            sums["square_norm"] = float(sums["square_norm"])
        return RowStatistics(n_rows=int(X.shape[0]), binned=binned, **sums)
    if not spec.shapes(X.shape[1]):
        if not check_finite:
            return RowStatistics(n_rows=int(X.shape[0]))
        # A bare finiteness check still visits every row: sum something.
        spec = replace(spec, total=True)
    sums = _run(X, spec)
    if not (gram or total or square_total or square_norm or norm_sums is not None):
        sums = {}
    if "square_norm" in sums:
        sums["square_norm"] = float(sums["square_norm"])
    return RowStatistics(n_rows=int(X.shape[0]), **sums)


__all__ = [
    "BLOCK_CHUNKS",
    "CHUNK_BYTES",
    "SPARSE_CHUNK_ROWS",
    "RowStatistics",
    "_Pass",
    "_clip",
    "_cumulative_pairs",
    "_ordered_map",
    "_pass_threads",
    "_row_norms",
    "_sparse_chunks",
    "is_dask_array",
    "kept_row_norms",
    "row_statistics",
    "rows_in_blocks",
]
