"""Tests of the gram module (the chunked row pass) on in-memory input."""

import tracemalloc
from functools import partial

import numpy as np
import pytest

from dpcov.mechanisms import radius_counts
from dpcov.utils._gram import row_statistics


def _naive(X, clip_norm=None, transform=None, center=None, final_clip=None):
    # The processing written out on a float64 copy of X; also returns the
    # norms of the rows entering the final clip.
    Y = X.astype(np.float64).copy()

    def clip(Y, r):
        norms = np.linalg.norm(Y, axis=1, keepdims=True)
        return Y * np.minimum(1.0, r / np.maximum(norms, 1e-300))

    if clip_norm is not None:
        Y = clip(Y, clip_norm)
    if transform is not None:
        Y = Y @ transform.T
    if center is not None:
        Y = Y - center
    norms = np.linalg.norm(Y, axis=1)
    if final_clip is not None:
        Y = clip(Y, final_clip)
    return Y, norms


PROCESSING = [
    {},
    {"clip_norm": 1.5},
    {"clip_norm": 1.5, "center": np.array([0.3, -0.2, 0.1, 0.0])},
    {
        "clip_norm": 1.5,
        "center": np.array([0.3, -0.2, 0.1, 0.0]),
        "final_clip": 0.7,
    },
    {"final_clip": 0.7, "center": np.array([0.3, -0.2, 0.1, 0.0])},
    {"transform": np.arange(12.0).reshape(3, 4) / 10, "final_clip": 2.0},
    {"clip_norm": 1.0, "transform": np.eye(4)[:2], "center": np.array([0.1, 0.2])},
]
GRID = 2.0 ** np.arange(3, -8, -1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("chunk_rows", [None, 1, 7, 1000])
@pytest.mark.parametrize("params", PROCESSING)
def test_statistics_match_naive(dtype, chunk_rows, params):
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(103, 4)) * [2.0, 1.0, 0.5, 0.1]).astype(dtype)
    X[5] = 0.0  # a zero row must not produce NaN
    before = X.copy()
    Y, norms = _naive(X, **params)
    stats = row_statistics(
        X,
        chunk_rows=chunk_rows,
        gram=True,
        total=True,
        square_norm=True,
        norm_counts=partial(radius_counts, grid=GRID),
        **params,
    )
    # float32 rows are upcast per chunk, so both dtypes are summed in float64.
    np.testing.assert_allclose(stats.gram, Y.T @ Y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stats.total, Y.sum(0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stats.square_norm, np.dot(norms, norms), rtol=1e-12)
    np.testing.assert_array_equal(stats.norm_counts, radius_counts(norms, GRID))
    assert stats.norm_counts.dtype == np.int64
    assert stats.n_rows == 103
    np.testing.assert_array_equal(X, before)  # the input is never modified


def test_only_requested_statistics():
    X = np.random.default_rng(0).normal(size=(20, 3))
    stats = row_statistics(X, total=True)
    assert stats.gram is None and stats.square_norm is None
    assert stats.norm_counts is None
    np.testing.assert_allclose(stats.total, X.sum(0))
    assert row_statistics(X).total is None  # nothing asked: no pass


def test_readonly_and_memmap_input(tmp_path):
    X = np.random.default_rng(0).normal(size=(300, 3))
    expected = row_statistics(X, clip_norm=0.5, gram=True).gram
    X.setflags(write=False)
    np.testing.assert_array_equal(
        row_statistics(X, clip_norm=0.5, gram=True).gram, expected
    )
    path = tmp_path / "x.npy"
    np.save(path, X)
    mapped = np.load(path, mmap_mode="r")
    got = row_statistics(mapped, clip_norm=0.5, gram=True, chunk_rows=64).gram
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert np.all(np.linalg.eigvalsh(got) >= -1e-12)


def test_huge_finite_rows_are_clipped_not_zeroed():
    # A row whose squared norm overflows float64 must still be clipped to the
    # radius in its own direction.
    X = np.array([[3e200, 4e200], [0.3, 0.4]])
    stats = row_statistics(X, clip_norm=1.0, total=True, check_finite=True)
    np.testing.assert_allclose(stats.total, [0.9, 1.2])
    counts = row_statistics(X, norm_counts=partial(radius_counts, grid=[1e300, 1.0]))
    np.testing.assert_array_equal(counts.norm_counts, [0, 1])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("requested", [{"gram": True}, {}])
def test_check_finite(bad, requested):
    X = np.ones((50, 3))
    X[37, 1] = bad
    with pytest.raises(ValueError, match="NaN or infinity"):
        row_statistics(X, check_finite=True, chunk_rows=8, clip_norm=1.0, **requested)
    # Finite entries whose sum overflows are accepted.
    X[37, 1] = 1e308
    X[38, 1] = 1e308
    row_statistics(X, check_finite=True, chunk_rows=8, clip_norm=1.0, **requested)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_memory_is_bounded_by_a_chunk(dtype):
    # No copy of X, no n x d temporary: the traced peak of a pass that clips,
    # centres and clips again (every row copied) stays within a few chunks of
    # float64 rows plus O(d^2), whatever n.
    n, d, chunk_rows = 200_000, 10, 1000
    X = np.random.default_rng(0).normal(size=(n, d)).astype(dtype)
    center = np.full(d, 0.1)
    tracemalloc.start()
    row_statistics(
        X,
        clip_norm=1.0,
        center=center,
        final_clip=0.5,
        gram=True,
        total=True,
        square_norm=True,
        chunk_rows=chunk_rows,
    )
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    chunk_bytes = chunk_rows * d * 8
    # A handful of chunk-sized temporaries (upcast, clipped copy, centred copy,
    # norms) and the d x d sums; X itself is 16 (float64) or 8 MB.
    assert peak < 6 * chunk_bytes + 64 * d * d + 2**16
