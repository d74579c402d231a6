"""The pass over the rows of an array of another namespace, on its device.

An array of the Python array API standard (PyTorch, CuPy, array-api-strict),
accepted under scikit-learn's ``array_api_dispatch``, is read in chunks of
``chunk_rows`` rows on its own namespace and device: each chunk is processed
(box, clip, transform, centre, final clip, as :class:`._pass._Pass` states)
and added to sums held on the device in the widest float it supports
(float64, or float32 where the device has no float64), and the sums come to
the host once, as NumPy float64: ``O(d**2)`` numbers. What the device
computes is the rows' arithmetic; the noise and the ``d x d`` algebra after
the pass run on the host.

Two differences from the NumPy pass, both within the privacy model's bound
on a row: a chunk's clip factors are ``where(||x|| > r, r / ||x||, 1)``
(the same factors, computed by the namespace), and a row whose norm
overflows the dtype (entries near ``1e154`` and up in float64) gets the
factor 0, not the NumPy pass's exact scaling to the radius: it adds nothing
(its bound holds) instead of a row of norm ``r``. Sums binned by norm (a
Dask fit's) are not offered here.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

# Its functions are read as attributes of the module, at the call: a test that
# patches one (float_dtype) patches _array_api.
from .. import _array_api
from .._input_messages import NonFiniteInput

#: Bytes of rows per chunk on the device: larger than the NumPy pass's 4 MiB
#: (a GPU launches a few kernels per chunk, so small chunks would cost their
#: launches, not their flops); the device holds a few chunks' worth at once.
XP_CHUNK_BYTES = 64 * 2**20


def _norms(xp, rows):
    return xp.linalg.vector_norm(rows, axis=1)


def _device_radius(radius, xp, dtype):
    # The radius in the device's float, rounded toward zero (a clip at it
    # never exceeds the public radius) and at most the float's largest value
    # (rows with a larger norm overflow: their factor is 0). A radius below
    # the float's range becomes 0: every nonzero row is zeroed (within it).
    info = xp.finfo(dtype)
    bits = np.float32 if info.bits == 32 else np.float64
    value = bits(min(radius, float(info.max)))
    if value > radius:
        value = np.nextafter(value, bits(0))
    return float(value)


def _clipped(xp, rows, radius, norms):
    # Rows longer than radius scaled to it: factor r / ||x|| where ||x|| > r,
    # 1 elsewhere (an overflowing norm: factor 0, see the module's
    # description). The divisor is 1 where the factor is not used: no
    # division by zero, no warning that would tell a zero row.
    radius = _device_radius(radius, xp, rows.dtype)
    longer = norms > radius
    divisor = xp.where(longer, norms, xp.ones_like(norms))
    scale = xp.where(longer, radius / divisor, xp.ones_like(norms))
    return rows * scale[:, None]


def _check(xp, rows, box):
    # NaN or infinity refused; the raw rows' norms returned when there is no
    # box (the clip needs them). As in the NumPy pass, finite norms (or, with
    # a box, which clips infinity, a finite sum) prove a chunk finite; only a
    # chunk that fails that test is checked entry by entry (a whole-chunk
    # isfinite cost as much as the Gram product on PyTorch's CPU backend).
    norms = None
    if box is None:
        norms = _norms(xp, rows)
        suspect = not bool(xp.all(xp.isfinite(norms)))
    else:
        suspect = not math.isfinite(float(xp.sum(rows)))
    if suspect and not bool(xp.all(xp.isfinite(rows))):
        raise NonFiniteInput()
    return norms


def xp_sums(X, spec, xp, device):
    """The statistics of ``spec`` over the rows of ``X``, on its device.

    Parameters
    ----------
    X : array of namespace ``xp``, shape (n_samples, n_features)
        The rows (float32 or float64), never modified.
    spec : _Pass
        What to compute (``bins`` excluded).
    xp : module
        The array namespace of ``X``.
    device : object
        Its device.

    Returns
    -------
    sums : dict of str to ndarray
        As :meth:`._dense._DensePass.run` returns them: NumPy float64 (int64
        for integer ``norm_sums``), on the host.
    """
    if spec.bins is not None:
        raise ValueError("Sums binned by norm are computed for Dask arrays only.")
    n_features = X.shape[1]
    dtype = _array_api.float_dtype(xp, device)
    shapes = spec.shapes(n_features)
    step = spec.chunk_rows or max(1, XP_CHUNK_BYTES // (8 * max(1, n_features)))
    # (array-api-strict computes with NumPy: no floating-point warning, which
    # only extreme rows would raise.)
    with np.errstate(all="ignore"):
        sums, norm_sums = _device_sums(X, spec, xp, device, dtype, shapes, step)
    out = {
        name: _array_api.to_host(value, xp).astype(np.float64)
        for name, value in sums.items()
    }
    if norm_sums is not None:
        out["norm_sums"] = norm_sums
    # In the order of shapes (the callers unpack by name).
    return {name: out[name] for name in shapes}


def _device_sums(X, spec, xp, device, dtype, shapes, step):
    # The chunks' sums, on the device (norm_sums on the host: the callable is
    # NumPy's). check_finite=False is for reads of rows that a first pass
    # has checked: a NaN row would not be contained by the clip.
    def on_device(value):
        return _array_api.to_namespace(
            np.asarray(value, dtype=np.float64), xp, device, dtype
        )

    box = None
    if spec.box is not None:
        box = tuple(on_device(part) for part in spec.box)
    transform = None if spec.transform is None else on_device(spec.transform)
    center = None if spec.center is None else on_device(spec.center)
    sums = {
        name: xp.zeros(shape, dtype=dtype, device=device)
        for name, shape in shapes.items()
        if name != "norm_sums"
    }
    norm_sums = None
    if spec.norm_sums is not None:
        norm_sums = np.zeros_like(spec.norm_sums_empty())
    n_rows = X.shape[0]
    for start in range(0, n_rows, step):
        rows = xp.astype(X[start : min(start + step, n_rows), ...], dtype, copy=False)
        raw_norms = _check(xp, rows, box) if spec.check_finite else None
        if box is not None:
            lower, upper, middle, half = box
            rows = (xp.clip(rows, lower, upper) - middle) / half
        if spec.clip_norm is not None:
            if raw_norms is None:
                raw_norms = _norms(xp, rows)
            rows = _clipped(xp, rows, spec.clip_norm, raw_norms)
        if transform is not None:
            rows = rows @ xp.matrix_transpose(transform)
        if center is not None:
            rows = rows - center
        norms = None
        if spec.square_norm or norm_sums is not None or spec.final_clip is not None:
            norms = _norms(xp, rows)
        if spec.final_clip is not None:
            rows = _clipped(xp, rows, spec.final_clip, norms)
        if "gram" in sums:
            sums["gram"] = sums["gram"] + xp.matrix_transpose(rows) @ rows
        if "total" in sums:
            sums["total"] = sums["total"] + xp.sum(rows, axis=0)
        if "square_total" in sums:
            sums["square_total"] = sums["square_total"] + xp.sum(rows * rows, axis=0)
        if "square_norm" in sums:
            sums["square_norm"] = sums["square_norm"] + xp.sum(norms * norms)
        if norm_sums is not None:
            # The rows' norms (m numbers) counted on the host.
            norm_sums += spec.norm_sums(
                _array_api.to_host(norms, xp).astype(np.float64)
            )
    return sums, norm_sums
