"""Sums binned by norm on a public grid (``dpcov.utils._gram._binned``).

One read gives the sums over the rows clipped at any grid point: they must
equal the sums of a pass that clips there (up to rounding: ``g (z / ||z||)``
against ``z (g / ||z||)``, a few ulps per clipped row, so relative 1e-12 on
sums of thousands of rows), on every path: chunks, threads, sparse input,
float32, rows beyond float64, and the steps before the clip.
"""

import numpy as np
import pytest
from scipy import sparse

from dpcov.mechanisms import DEFAULT_RADIUS_GRID, radius_counts
from dpcov.utils._gram import row_statistics


def _rows(n=4000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_t(3, size=(n, d)) * np.linspace(0.5, 4.0, d)
    X[7] = 0.0  # a zero row: bin 0, never clipped
    return X


def _assert_clipped_sums(binned, reference):
    # Entries that cancel are compared at the scale of the largest one: a sum
    # of n terms of size s has a rounding error of about n eps s.
    total, gram = binned
    if not isinstance(reference, tuple):
        reference = (reference.total, reference.gram)
    for value, expected in zip((total, gram), reference, strict=True):
        scale = np.abs(expected).max()
        np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12 * scale)


@pytest.mark.parametrize("chunk_rows", [None, 333])
def test_binned_sums_give_the_clip_at_every_grid_point(chunk_rows):
    X = _rows()
    grid = DEFAULT_RADIUS_GRID
    read = row_statistics(X, bins=grid, gram=True, total=True, chunk_rows=chunk_rows)
    norms = np.linalg.norm(X, axis=1)
    np.testing.assert_array_equal(read.binned.above_counts(), radius_counts(norms))
    assert read.gram is None and read.total is None
    # The grid points around the rows' norms, and both ends.
    for radius in [grid[0], 64.0, 8.0, 2.0, 0.5, 2.0**-6, grid[-1]]:
        reference = row_statistics(X, clip_norm=radius, gram=True, total=True)
        _assert_clipped_sums(read.binned.clipped(radius), reference)
    with pytest.raises(ValueError, match="grid point"):
        read.binned.clipped(3.0)


def test_binned_sums_after_the_steps_before_the_final_clip():
    # Box, clip, transform and centre first; the bins are of the norms that
    # enter the final clip, so the binned sums stand for final_clip.
    X = _rows(d=4)
    lower, upper = np.full(4, -6.0), np.full(4, 6.0)
    transform = np.random.default_rng(1).normal(size=(3, 4))
    center = np.array([0.3, -0.2, 0.1])
    steps = dict(box=(lower, upper), clip_norm=1.5, transform=transform, center=center)
    grid = 4.0 * 2.0 ** -np.arange(8)
    read = row_statistics(
        X, bins=grid, gram=True, total=True, square_norm=True, **steps
    )
    plain = row_statistics(X, square_norm=True, **steps)
    assert read.square_norm == pytest.approx(plain.square_norm, rel=1e-12)
    for radius in grid:
        reference = row_statistics(X, final_clip=radius, gram=True, total=True, **steps)
        _assert_clipped_sums(read.binned.clipped(radius), reference)


def test_binned_sums_of_sparse_and_float32_rows():
    X = _rows()
    X[X < 0.5] = 0.0
    dense = row_statistics(X, bins=DEFAULT_RADIUS_GRID, gram=True, total=True)
    read = row_statistics(
        sparse.csr_array(X), bins=DEFAULT_RADIUS_GRID, gram=True, total=True
    )
    np.testing.assert_array_equal(read.binned.counts, dense.binned.counts)
    _assert_clipped_sums(read.binned.clipped(4.0), dense.binned.clipped(4.0))
    single = X.astype(np.float32)
    read = row_statistics(single, bins=DEFAULT_RADIUS_GRID, gram=True, total=True)
    reference = row_statistics(
        single.astype(np.float64), clip_norm=4.0, gram=True, total=True
    )
    _assert_clipped_sums(read.binned.clipped(4.0), reference)


def test_binned_sums_of_rows_beyond_float64():
    # Rows whose norms overflow float64 lie above every grid point: always
    # clipped, their directions computed on rows scaled by a power of two; a
    # subnormal row lies in bin 0. No warning (warnings are errors in tests).
    X = _rows(d=6)
    X[11] = 1e308
    X[2500] = [1e308, -1e308] * 3
    X[3999] = [5e-324] * 6
    read = row_statistics(X, bins=DEFAULT_RADIUS_GRID, gram=True, total=True)
    for radius in (2.0**32, 4.0):
        reference = row_statistics(X, clip_norm=radius, gram=True, total=True)
        _assert_clipped_sums(read.binned.clipped(radius), reference)


def test_bins_replace_the_final_clip():
    with pytest.raises(ValueError, match="final_clip"):
        row_statistics(_rows(), bins=DEFAULT_RADIUS_GRID, final_clip=1.0, gram=True)


def test_binned_gram_memory_bound_is_public():
    from dpcov.utils._gram._binned import BINNED_GRAM_BYTES, binned_grams_fit

    # Worst case 2 (grid + 1) d x d float64 matrices: a function of d only.
    n_grid = len(DEFAULT_RADIUS_GRID)
    largest = int(np.sqrt(BINNED_GRAM_BYTES / (16 * (n_grid + 1))))
    assert binned_grams_fit(n_grid, largest)
    assert not binned_grams_fit(n_grid, largest + 1)
