"""Row norms and clips, and the float64 limits they keep to: what the paths share.

The limits of float64 (``_MAX``, ``_TINY``, ``_EPS``, ``_LOW_NORM``) and
``_exponent``, which every path uses; the norms of dense rows, computed
without overflow and without digits lost to underflow; the clip factors
``min(1, r / ||x||)``; and the clip of rows to a radius in their own
direction, with the rule for rows beyond float64's range that the package's
description states. The sparse pass applies the same rules to stored values
(``_sparse.py``).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

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


#: Below this share of rows to clip, a clip in place scales those rows only.
FEW_CLIPPED = 0.25


def _clip_pass(rows, radius, out, norms=None):
    """:func:`_scale_rows` that skips the rows it would multiply by 1.

    The same values (a factor of 1 is exact): where no row is clipped, the
    rows themselves (not written to ``out``: the caller only reads them, or
    writes its next step to ``out``); where few are, in place, only those
    rows are scaled. Passes over a chunk cost as much as the arithmetic on
    it.
    """
    if norms is None:
        norms = _row_norms(rows)
    scale, far = _clip_factors(norms, radius)
    if far.any():
        return _scale_rows(rows, radius, out, norms)
    clipped = np.flatnonzero(scale < 1.0)
    if clipped.size == 0:
        return rows
    if out is rows and clipped.size < FEW_CLIPPED * rows.shape[0]:
        rows[clipped] *= scale[clipped, np.newaxis]
        return rows
    np.multiply(rows, scale[:, np.newaxis], out=out)
    return out


def _clip(rows, radius, owned, norms=None):
    # _scale_rows in place when the rows are ours to change, else into a new
    # array; returns the rows and that they are now owned.
    out = rows if owned else np.empty_like(rows)
    return _scale_rows(rows, radius, out, norms), True


def _unit_rows(rows, norms, out):
    # Each row divided by its norm (a zero row stays zero), written to out:
    # the row's direction. A row whose norm is beyond float64 (inf) or whose
    # factor 1 / ||x|| is not a normal float is first scaled by a power of
    # two, u = x 2**-k, and becomes u / ||u||, as in _scale_rows.
    with np.errstate(divide="ignore", over="ignore"):
        scale = 1.0 / norms
    zero = norms == 0
    far = ~zero & ~((scale <= _MAX) & (scale >= _TINY))
    scale[zero] = 0.0
    if far.any():
        index = np.flatnonzero(far)
        unit, _ = _power_scaled(rows[index])
        lengths = np.sqrt(np.einsum("ij,ij->i", unit, unit))
        far_rows = unit / lengths[:, np.newaxis]
        scale[index] = 0.0
    np.multiply(rows, scale[:, np.newaxis], out=out)
    if far.any():
        out[index] = far_rows
    return out
