"""The dense chunked pass: an in-memory array read chunk by chunk.

A NumPy array (or a memmap), or a sparse matrix in densified chunks, is read
in chunks of ``chunk_rows`` rows, each processed in a reused buffer; fixed
blocks of chunks are summed on the threads the BLAS would use, and the
blocks' sums added in a fixed order (the sizes and threads: ``_blocks.py``).
This module holds the processing of a chunk's rows (:meth:`_DensePass.process`, with
the rows beyond float64's range), the sums that need no processed row
(:meth:`_DensePass.unformed`), and :meth:`_DensePass.run`, the pass over
any in-memory ``X``, which hands a sparse input that can stay sparse to the
sparse pass (``_sparse.py``).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import queue
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy import sparse

from .._input_messages import NonFiniteInput
from .._threads import single_threaded_blas
from ._binned import add_binned
from ._blocks import (
    SYRK_FROM,
    _add_sums,
    _blocks_of,
    _chunk_rows,
    _in_main_thread,
    _ordered_map,
    _pass_threads,
    _rank_k_update,
    _symmetric_from_upper,
    _wide_chunk_rows,
)
from ._norms_kept import row_norms_of
from ._rows import (
    _MAX,
    _clip,
    _clip_factors,
    _clip_pass,
    _power_scaled,
    _row_norms,
)
from ._sparse import _as_csr, _cumulative_pairs, _prefer_sparse


class _DensePass:
    # The methods of _Pass (_pass.py) that process dense rows and run the
    # pass over an in-memory X; the fields they read are _Pass's.

    def process(self, chunk, buffer=None, raw_norms=None):
        """The chunk's processed rows and their norms before the final clip.

        ``buffer`` (float64, at least the chunk's shape) receives the rows
        when the steps can run in place: no array of the chunk's size is
        allocated. The rows are the same bits either way. ``raw_norms``,
        when given, are the chunk's row norms kept from an earlier pass
        (``_norms_kept.py``): the same numbers, not computed again.
        """
        if buffer is None or self.may_overflow or self.transform is not None:
            return self._process_new(chunk, raw_norms)
        # The steps of _process_new, each written to the buffer: the same
        # operations on the same values, so the same bits.
        out = buffer[: chunk.shape[0], : chunk.shape[1]]
        rows = chunk
        if chunk.dtype != np.float64:
            np.copyto(out, chunk)  # float32 to float64: exact
            rows = out
        raw_norms = self._check_rows(rows, chunk, raw_norms)
        if self.box is not None:
            lower, upper, center, half = self.box
            np.clip(rows, lower, upper, out=out)
            np.subtract(out, center, out=out)
            np.divide(out, half, out=out)
            rows = out
        if self.clip_norm is not None:
            rows = _clip_pass(rows, self.clip_norm, out, raw_norms)
        if self.center is not None:
            # (No overflow: may_overflow is False.)
            rows = np.subtract(rows, self.center, out=out)
        norms = None
        needs_norms = (
            self.square_norm or self.norm_sums is not None or self.bins is not None
        )
        if needs_norms or self.final_clip is not None:
            unchanged = (
                self.box is None and self.clip_norm is None and self.center is None
            )
            # (The check's norms are these rows' own when no step changed
            # them: the same einsum on the same values, not run twice.)
            norms = (
                raw_norms if unchanged and raw_norms is not None else _row_norms(rows)
            )
        if self.final_clip is not None:
            rows = _clip_pass(rows, self.final_clip, out, norms)
        return rows, norms

    def _check_rows(self, rows, chunk, norms=None):
        """Check the chunk for NaN and infinity; the raw rows' norms, or None.

        Without a box, the rows' norms (which the clip needs anyway) are the
        check: a NaN or infinite entry makes its row's norm NaN or infinite,
        so finite norms prove the chunk finite, and only a chunk with a norm
        beyond float64 (NaN, infinity, or finite entries whose norm exceeds
        about ``1.8e308``) is looked at entry by entry. That costs an
        ``O(m)`` test instead of a sum over the chunk, which, as the chunk's
        first read from memory, cost 0.047 s of a 0.39 s single-threaded Gram
        pass at ``n = 1e6, d = 100``. With a box (which clips infinity to a bound) the
        entries are checked first. ``rows`` is the chunk in float64;
        ``norms``, their norms kept from an earlier pass, or None.
        """
        if not self.check_finite:
            return norms
        if self.box is not None:
            self._check_chunk(chunk)
            return None
        if norms is None:
            norms = _row_norms(rows)
        if not (norms <= _MAX).all() and not np.isfinite(chunk).all():
            raise NonFiniteInput()
        return norms

    def _check_chunk(self, chunk):
        if self.check_finite:
            # A finite sum proves every entry finite; otherwise look closer (a
            # sum can overflow on finite entries).
            with np.errstate(over="ignore", invalid="ignore"):
                suspect = not np.isfinite(chunk.sum(dtype=np.float64))
            if suspect and not np.isfinite(chunk).all():
                raise NonFiniteInput()

    def reads_raw_norms(self):
        """Whether each chunk's raw row norms are computed: the check, a clip, or norms.

        With a box they never are (its rows change before any norm); without
        one, the finiteness check and the clip to ``clip_norm`` start from
        them, and so do the norm statistics and the final clip of rows that
        no step changed.
        """
        if self.box is not None:
            return False
        unchanged = self.transform is None and self.center is None
        needs_norms = (
            self.square_norm
            or self.norm_sums is not None
            or self.bins is not None
            or self.final_clip is not None
        )
        return (
            self.check_finite
            or self.clip_norm is not None
            or (unchanged and needs_norms)
        )

    def rows_unformed(self):
        """Whether the sums need no processed row: see :meth:`unformed`."""
        return (
            not (self.gram or self.square_total or self.may_overflow)
            and self.bins is None
            and self.box is None
            and self.transform is None
            and self.final_clip is None
            and self.clip_norm is not None
            and (self.center is None or not self.total)
        )

    def unformed(self, chunk, buffer, raw_norms=None):
        """The sums' inputs for rows ``z = f x - m`` that are never formed.

        Returns the chunk in float64 ``x``, the clip factors ``f = min(1, r /
        ||x||)`` and the norms of ``z``, or None for a chunk with a row
        beyond float64's range (the caller forms its rows). The sum of the
        clipped rows is ``sum_i f_i x_i``: the same clip factors and the
        same function of the rows as ``1 @ (f x)``; only the rounding differs
        (the product ``f_i x_ij`` is fused into the sum). The norms are
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
        norms = self._check_rows(rows, chunk, raw_norms)  # (no box here)
        if norms is None:
            norms = _row_norms(rows)
        scale, far = _clip_factors(norms, self.clip_norm)
        if far.any():
            return None
        norms = norms * scale  # (a new array: kept norms are read-only)
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

    def _process_new(self, chunk, raw_norms=None):
        # process() with new arrays: the rows of norm beyond float64 and
        # the transform need them.
        rows = chunk if chunk.dtype == np.float64 else chunk.astype(np.float64)
        owned = rows is not chunk
        raw_norms = self._check_rows(rows, chunk, raw_norms)
        if self.box is not None:
            # Clip each feature to its public range, then map the box onto
            # [-1, 1]^d (a new array: the input is never written to).
            lower, upper, center, half = self.box
            rows = (np.clip(rows, lower, upper) - center) / half
            owned = True
        unchanged = self.box is None and self.clip_norm is None
        if self.clip_norm is not None:
            rows, owned = _clip(rows, self.clip_norm, owned, raw_norms)
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
        needs_norms = (
            self.square_norm or self.norm_sums is not None or self.bins is not None
        )
        if needs_norms or self.final_clip is not None:
            if unchanged and rows is source and raw_norms is not None:
                norms = raw_norms  # (the same function of the same rows)
            else:
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
        if sparse.issparse(X):
            X = _as_csr(X)
            if self.sparse_rows():
                pairs = _cumulative_pairs(X.indptr)
                if _prefer_sparse(X.shape, pairs):
                    return self.run_sparse(X, pairs)
                del pairs
        # Fixed blocks of chunks, each summed on its own, the blocks' sums
        # added in order: for narrow rows the result does not depend on how
        # many threads run the blocks.
        n_rows, n_features = X.shape
        step = _chunk_rows(n_features, self.chunk_rows)
        out_features = n_features if self.transform is None else self.transform.shape[0]
        step = _wide_chunk_rows(step, out_features, self.chunk_rows)
        blocks = _blocks_of(n_rows, step)
        sums = self._zeros(n_features)
        # The rows' norms kept from an earlier pass of the fit, if any
        # (_norms_kept.py): each block's chunks are filled by one thread.
        kept = row_norms_of(X) if self.reads_raw_norms() else None
        if kept is not None:
            kept = kept.for_chunks(step)
        workers = _pass_threads(n_features, step, len(blocks))
        if workers == 1:
            buffer = np.empty((step, n_features))
            # One in-place Gram accumulator for every block (wide rows, in
            # the main thread: see SYRK_FROM): its triangle is mirrored once,
            # at the end.
            shared = None
            if _in_main_thread():
                shared = {"upper": None}
            for block in blocks:
                _add_sums(
                    sums, self._run_block(X, block, step, buffer, shared, kept=kept)
                )
            if shared is not None and shared["upper"] is not None:
                sums["gram"] += _symmetric_from_upper(shared["upper"])
            return sums
        buffers = queue.SimpleQueue()
        for _ in range(workers):
            buffers.put(np.empty((step, n_features)))

        def run_block(block):
            buffer = buffers.get()
            try:
                return self._run_block(X, block, step, buffer, kept=kept)
            finally:
                buffers.put(buffer)

        with single_threaded_blas(), ThreadPoolExecutor(workers) as executor:
            for block_sums in _ordered_map(executor, run_block, blocks, 2 * workers):
                _add_sums(sums, block_sums)
        return sums

    def _run_block(self, X, starts, step, buffer, shared=None, *, kept=None):
        # The sums over the chunks of rows that start at starts. With shared
        # (one thread), wide rows' Gram updates go to shared["upper"] (one
        # triangle, left to the caller); otherwise to the block's own sum.
        # With kept (a RowNorms of X), the chunks' raw norms come from it.
        n_features = X.shape[1]
        sums = self._zeros(n_features)
        ones = np.ones(step)
        unformed = self.rows_unformed()
        upper = None if shared is None else shared["upper"]
        units = None
        if self.bins is not None:
            out_features = n_features
            if self.transform is not None:
                out_features = self.transform.shape[0]
            units = np.empty((step, out_features))
        for start in starts:
            chunk = X[start : start + step]
            if sparse.issparse(chunk):
                # A chunk at a time: memory O(chunk_rows * d), never all of X.
                chunk = chunk.toarray()
            raw_norms = None if kept is None else kept.chunk(start, chunk)
            if unformed:
                parts = self.unformed(chunk, buffer, raw_norms)
                if parts is not None:
                    rows, scale, norms = parts
                    if self.total:
                        # sum_i f_i x_i. Not scale @ rows: OpenBLAS's
                        # transposed matrix-vector product ran no faster on
                        # two threads than on one (0.037 s against 0.023 s
                        # for this einsum, n = 1e6, d = 100, 2 cores).
                        sums["total"] += np.einsum("ij,i->j", rows, scale)
                    self._add_norm_statistics(sums, norms)
                    continue
            rows, norms = self.process(chunk, buffer, raw_norms)
            if self.bins is not None:
                add_binned(sums, rows, norms, self.bins[::-1], units)
                self._add_norm_statistics(sums, norms)
                continue
            if self.gram:
                if (
                    shared is not None
                    and rows.dtype == np.float64
                    and sums["gram"].shape[0] >= SYRK_FROM
                ):
                    upper = _rank_k_update(upper, rows)
                else:
                    # A contiguous array times its own transpose: NumPy calls
                    # BLAS syrk (half the flops of a general product), with
                    # the GIL released (see SYRK_FROM).
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
        if shared is not None:
            shared["upper"] = upper
            if upper is not None:
                del sums["gram"]  # (zeros: every update went to upper)
        return sums

    def _add_norm_statistics(self, sums, norms):
        if self.square_norm:
            # inf if the rows are not clipped and the sum is beyond float64.
            with np.errstate(over="ignore"):
                sums["square_norm"] += np.dot(norms, norms)
        if self.norm_sums is not None:
            sums["norm_sums"] += self.norm_sums(norms)
