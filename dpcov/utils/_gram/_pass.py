"""What one pass computes: :class:`_Pass`.

Its fields (the processing of a row and the statistics summed), the public
bounds derived from them, and the statistics' shapes are here; the methods
that run the pass come from one class per path: :class:`._dense._DensePass`,
:class:`._sparse._SparsePass` and :class:`._dask._DaskPass`.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from dataclasses import dataclass, field

import numpy as np

from ._binned import BinGrams
from ._dask import _DaskPass
from ._dense import _DensePass
from ._rows import _exponent
from ._sparse import _SparsePass


@dataclass(frozen=True, eq=False)
class _Pass(_DensePass, _SparsePass, _DaskPass):
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
    # A public grid of radii, strictly decreasing: gram and total are then
    # summed per bin of the norms entering the final clip (_binned.py), with
    # the bins' counts, instead of over the rows.
    bins: np.ndarray = None
    # Exponents of the public magnitudes that bound the transform's and the
    # centring's results (see _affine_far), and whether they can overflow.
    transform_exponent: int = field(init=False, default=0)
    center_exponent: int = field(init=False, default=-1100)
    may_overflow: bool = field(init=False, default=False)
    center_square: float = field(init=False, default=0.0)

    def __post_init__(self):
        if self.box is not None and len(self.box) == 2:
            # Rows in unit coordinates: every entry in [-1, 1], norm <= sqrt(d).
            # (A copy by dataclasses.replace has the expanded box already.)
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
        if self.bins is not None:
            n_bins = self.bins.shape[0] + 1
            shapes["bin_counts"] = (n_bins,)
            if self.total:
                shapes["bin_total"] = (2, n_bins, out_features)
            if self.gram:
                shapes["bin_gram"] = None  # a BinGrams: the bins present
            return {**shapes, **self._norm_shapes()}
        if self.gram:
            shapes["gram"] = (out_features, out_features)
        if self.total:
            shapes["total"] = (out_features,)
        if self.square_total:
            shapes["square_total"] = (out_features,)
        return {**shapes, **self._norm_shapes()}

    def _norm_shapes(self):
        shapes = {}
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

    def _zeros(self, n_features):
        zeros = {}
        for name, shape in self.shapes(n_features).items():
            if name == "norm_sums":
                zeros[name] = np.zeros_like(self.norm_sums_empty(), shape=shape)
            elif name == "bin_counts":
                zeros[name] = np.zeros(shape, dtype=np.int64)
            elif name == "bin_gram":
                zeros[name] = BinGrams()
            else:
                zeros[name] = np.zeros(shape)
        return zeros
