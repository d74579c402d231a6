"""The sparse pass: a CSR matrix summed from its stored values.

This module holds the chunks of a CSR matrix (bounded numbers of rows, of
stored values and of their products), the row norms and clips computed on
stored values (the rules of ``_rows.py``), the Gram update by the sparse
product, :meth:`_SparsePass.run_sparse`, which expands the centring into
sums over the rows, and the choice between that pass and densified chunks
of the dense pass (``SPARSE_PAIR_COST``, :meth:`_SparsePass.sparse_rows`).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy import sparse

from .._input_messages import NonFiniteInput
from ._rows import _EPS, _LOW_NORM, _MAX, _TINY, _exponent

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


class _SparsePass:
    # The methods of _Pass (_pass.py) for a sparse input; the fields they
    # read are _Pass's.

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
        if self.bins is not None:  # binned sums run on densified chunks
            return False
        if self.center is None:
            return True
        return (
            self.clip_norm is not None
            and max(_exponent(self.clip_norm), self.center_exponent) < 500
        )

    def _centred_clip(self, chunk, row, n_features, center_square, needs_norms):
        # The norms of a chunk's centred rows c - m (with needs_norms), by the
        # expansion ||c||^2 - 2 c.m + ||m||^2, and the final clip's factors f,
        # applied to the stored values: (data, norms, weights).
        data, indices, indptr = chunk
        n_rows = indptr.size - 1
        center = self.center
        norms = None
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
            # The expansion of ||c - m||^2 carries a rounding error of at most
            # (d + 4) eps (||c|| + ||m||)^2 (each of its terms is a sum of at
            # most d products, Higham 2002, Sec. 3.1): clipping by the norm
            # plus that slack keeps every clipped row within final_clip, as
            # the sensitivity needs.
            slack = (n_features + 4) * _EPS
            slack *= (np.sqrt(squares) + np.sqrt(center_square)) ** 2
            upper = square_norms + slack
            over = upper > self.final_clip**2
            weights[over] = self.final_clip / np.sqrt(upper[over])
            data = data * weights[row]
        return data, norms, weights

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
                raise NonFiniteInput()
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
                data, norms, weights = self._centred_clip(
                    (data, indices, indptr),
                    row,
                    n_features,
                    center_square,
                    needs_norms,
                )
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
