"""Sums binned by row norm: a clip at a radius chosen after the read.

A private radius, or AdaptiveCovariance's clipping threshold, is a point of a
public grid chosen from counts of the rows' norms; the sums the next step
needs are over the rows clipped there. Read twice, the data give the counts,
then the clipped sums. Read once, they give the sums binned by norm on the
grid, from which the clipped sums at every grid point follow exactly: a row
of norm ``||z||`` at most ``g`` is unchanged by the clip at ``g``, a longer
one becomes ``g u`` with ``u = z / ||z||``, so

``sum_i clip(z_i, g) = sum_{||z|| <= g} z + g sum_{||z|| > g} u``,
``sum_i clip(z_i, g) clip(z_i, g)^T = sum_{||z|| <= g} z z^T + g^2
sum_{||z|| > g} u u^T``,

and both sides of each split are sums over bins of the grid. Every bin holds
the sums of its rows and of their directions (its rows may end up on either
side), so the binned Gram matrices cost twice the flops of one Gram matrix:
worth it where a read costs more than flops (a Dask array on disk or on a
cluster), not in memory, where the estimators read twice instead.

The bin of a row is the number of grid points strictly below its norm
(``np.searchsorted`` on the ascending grid): the rows a clip at grid point
``g_k`` (ascending index ``k``) changes are exactly those of bins ``> k``.
Rows of bin 0 are never clipped (their directions are not summed); rows of
the last bin, above every grid point, are always clipped (their rows are
not summed).

The binned sums of a chunk are one sparse product of a bin indicator with
the rows (``O(rows * d)``, whatever the bins). The binned Gram matrices sort
the chunk's rows by bin and run one ``syrk`` per bin present: the flops are
fixed by ``n`` and ``d`` (each row enters two Gram matrices), but the number
of BLAS calls, and the memory for the bins' ``d x d`` sums, grow with the
number of distinct bins the rows fall in (at most the grid's length plus
one). That count is a coarse function of the data, seen only by whoever
watches the computation (its time, its memory), never released; the
in-memory passes, whose time depends on ``n`` and ``d`` alone, avoid it.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ._rows import _MAX, _TINY, _unit_rows

#: The most memory one set of binned Gram matrices may need, in the worst case
#: (rows in every bin): above it, a fit reads twice instead. A Dask fit holds
#: a few sets at once (the running sums of each task and the partial sums
#: waiting to be merged, two at a time): measured at most about 6 sets' worth.
BINNED_GRAM_BYTES = 128 * 2**20


def binned_grams_fit(n_grid, n_features):
    """Whether binned Gram matrices on a grid of ``n_grid`` points fit.

    The worst case holds ``2 (n_grid + 1)`` matrices of ``d x d`` float64
    per set of sums (rows and directions, one per bin); a public bound, on
    ``d`` and the grid only: ``d <= 356`` on the radius grid (65 points),
    ``d <= 321`` on AdaptiveCovariance's default 80 thresholds.
    """
    return 2 * (n_grid + 1) * 8 * n_features**2 <= BINNED_GRAM_BYTES


def norm_bins(norms, ascending):
    """The bin of each norm: the number of grid points strictly below it."""
    return np.searchsorted(ascending, norms, side="left")


class BinGrams:
    """Per-bin Gram matrices of rows and of directions, for the bins present.

    ``rows[b]`` is ``sum z z^T`` over the rows of bin ``b`` (not kept for
    the last bin), ``units[b]`` the same over their directions (not kept for
    bin 0). Added in place (``+=``) over chunks and Dask blocks.
    """

    def __init__(self):
        self.rows = {}
        self.units = {}

    def add(self, kind, bin_index, matrix):
        sums = getattr(self, kind)
        if bin_index in sums:
            sums[bin_index] += matrix
        else:
            sums[bin_index] = matrix

    def __iadd__(self, other):
        # Adds in place where the bin is present, takes other's matrix where
        # it is not (other is consumed: no copy, no more memory than both).
        for kind in ("rows", "units"):
            for bin_index, matrix in getattr(other, kind).items():
                self.add(kind, bin_index, matrix)
        return self


def add_binned(sums, rows, norms, ascending, unit_buffer):
    """Add a chunk's binned sums into ``sums`` (in place).

    Parameters
    ----------
    sums : dict
        ``bin_counts`` (int64, one per bin) and, when present, ``bin_total``
        (shape ``(2, n_bins, d)``: rows, then directions) and ``bin_gram``
        (:class:`BinGrams`).
    rows : ndarray of shape (m, d)
        The chunk's processed rows (float64).
    norms : ndarray of shape (m,)
        Their norms.
    ascending : ndarray
        The public grid, ascending.
    unit_buffer : ndarray
        At least ``(m, d)`` float64, for the directions.
    """
    m, d = rows.shape
    n_bins = ascending.shape[0] + 1
    bins = norm_bins(norms, ascending)
    sums["bin_counts"] += np.bincount(bins, minlength=n_bins)
    if "bin_total" in sums:
        # One sparse product: the bin indicator (rows) stacked on the bin
        # indicator weighted by 1 / ||z|| (directions), times the rows;
        # O(m d) whatever the bins. The rows of bin 0 (never clipped) have no
        # direction summed, those of the last bin (always clipped) no row
        # summed (it could overflow); a direction the factor cannot give (a
        # norm beyond float64) is added on its own.
        with np.errstate(divide="ignore", over="ignore"):
            inverse = 1.0 / norms
        plain = (bins > 0) & (inverse <= _MAX) & (inverse >= _TINY)
        inside = bins < n_bins - 1
        index = np.arange(m)
        indicator = sparse.csr_array(
            (
                np.concatenate([np.ones(inside.sum()), inverse[plain]]),
                (
                    np.concatenate([bins[inside], n_bins + bins[plain]]),
                    np.concatenate([index[inside], index[plain]]),
                ),
            ),
            shape=(2 * n_bins, m),
        )
        both = indicator @ rows
        sums["bin_total"][0] += both[:n_bins]
        sums["bin_total"][1] += both[n_bins:]
        far = (bins > 0) & ~plain
        if far.any():
            units = _unit_rows(rows[far], norms[far], np.empty((far.sum(), d)))
            np.add.at(sums["bin_total"][1], bins[far], units)
    if "bin_gram" in sums:
        units = _unit_rows(rows, norms, unit_buffer[:m, :d])
        order = np.argsort(bins, kind="stable")
        edges = np.searchsorted(bins[order], np.arange(n_bins + 1), side="left")
        sorted_rows = rows[order]
        sorted_units = units[order]
        grams = sums["bin_gram"]
        for b in np.flatnonzero(np.diff(edges)):
            start, stop = edges[b], edges[b + 1]
            # A contiguous block times its own transpose: BLAS syrk.
            if b < n_bins - 1:
                block = sorted_rows[start:stop]
                grams.add("rows", int(b), block.T @ block)
            if b > 0:
                block = sorted_units[start:stop]
                grams.add("units", int(b), block.T @ block)


@dataclass
class BinnedSums:
    """Sums binned by norm on a public grid, from one read.

    Attributes
    ----------
    grid : ndarray
        The public grid, strictly decreasing (as the radius grids are).
    counts : ndarray of shape (len(grid) + 1,), dtype int64
        Rows per bin (bin ``b``: ``b`` grid points strictly below the norm).
    total : ndarray of shape (2, len(grid) + 1, d) or None
        Per-bin sums of the rows and of their directions.
    grams : BinGrams or None
        Per-bin Gram matrices of the rows and of their directions.
    n_features : int
        ``d``.
    """

    grid: np.ndarray
    counts: np.ndarray
    total: np.ndarray = None
    grams: BinGrams = None
    n_features: int = 0

    def above_counts(self):
        """How many norms lie strictly above each grid point (grid order).

        The queries of :func:`dpcov.mechanisms.radius_counts`, from the bins.
        """
        # Above ascending[k]: bins k + 1, ..., in ascending order.
        above_ascending = np.cumsum(self.counts[::-1])[::-1][1:]
        return above_ascending[::-1].astype(np.int64)

    def clipped(self, radius):
        """The sums over the rows clipped at ``radius``, a point of the grid.

        Returns
        -------
        total : ndarray of shape (d,) or None
        gram : ndarray of shape (d, d) or None
        """
        ascending = self.grid[::-1]
        matches = np.flatnonzero(ascending == radius)
        if matches.shape[0] != 1:
            raise ValueError("The binned sums give the clip at a grid point only.")
        index = int(matches[0])
        kept = slice(0, index + 1)  # bins <= index: norm <= radius, unchanged
        clipped = slice(index + 1, None)  # the rest: radius times the direction
        total = gram = None
        if self.total is not None:
            rows, units = self.total
            total = rows[kept].sum(axis=0) + radius * units[clipped].sum(axis=0)
        if self.grams is not None:
            d = self.n_features
            gram = np.zeros((d, d))
            # In the bins' order: the same bits whatever order they came in.
            for b, matrix in sorted(self.grams.rows.items()):
                if b <= index:
                    gram += matrix
            outside = np.zeros((d, d))
            for b, matrix in sorted(self.grams.units.items()):
                if b > index:
                    outside += matrix
            gram += radius**2 * outside
        return total, gram
