"""Tests of the gram module (the chunked row pass) on in-memory input."""

import tracemalloc
from functools import partial

import numpy as np
import pytest
from scipy import sparse

from dpcov.mechanisms import radius_counts
from dpcov.utils import _gram
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
        square_total=True,
        square_norm=True,
        norm_sums=partial(radius_counts, grid=GRID),
        **params,
    )
    # float32 rows are upcast per chunk, so both dtypes are summed in float64.
    np.testing.assert_allclose(stats.gram, Y.T @ Y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stats.total, Y.sum(0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        stats.square_total, (Y * Y).sum(0), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(stats.square_norm, np.dot(norms, norms), rtol=1e-12)
    np.testing.assert_array_equal(stats.norm_sums, radius_counts(norms, GRID))
    assert stats.norm_sums.dtype == np.int64
    assert stats.n_rows == 103
    np.testing.assert_array_equal(X, before)  # the input is never modified


def test_only_requested_statistics():
    X = np.random.default_rng(0).normal(size=(20, 3))
    stats = row_statistics(X, total=True)
    assert stats.gram is None and stats.square_norm is None
    assert stats.square_total is None
    assert stats.norm_sums is None
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
    counts = row_statistics(X, norm_sums=partial(radius_counts, grid=[1e300, 1.0]))
    np.testing.assert_array_equal(counts.norm_sums, [0, 1])


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


@pytest.mark.parametrize("threads", [1, 4])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_memory_is_bounded_by_a_chunk(monkeypatch, dtype, threads):
    # No copy of X, no n x d temporary: the traced peak of a pass that clips,
    # centres and clips again (every row scaled) stays within a few chunks of
    # float64 rows per thread plus O(d^2), whatever n.
    monkeypatch.setattr(_gram._blocks, "pass_threads", lambda: threads)
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
    # Per thread its buffer, the norms and factors of a chunk and a block's
    # d x d sums; the threads' own bookkeeping (measured: about 2.5 chunks
    # with one thread, 9 with four); X itself is 16 (float64) or 8 MB.
    assert peak < (2 + 3 * threads) * chunk_bytes + 64 * d * d + 2**16


# Finite rows whose norm, transform or centring overflows float64 (or whose
# entries are subnormal): the pass must neither warn (warnings are errors in
# this suite) nor let an inf or NaN through, and must clip them to the radius
# in their own direction.
EXTREME_ROWS = [
    [1e307, 0.0, 0.0, 0.0],
    [1e308, -1e308, 1e308, -1e308],
    [1e300] * 4,
    [-1e308] * 4,
    [1e-308, 0.0, 5e-324, -1e-310],
]
TRANSFORM = np.array(
    [[1.0, 2.0, 0.0, -1.0], [0.5, -1.0, 3.0, 0.0], [0.0, 1.0, 1.0, 1.0]]
)
CENTER = np.array([0.3, -0.2, 0.1])


def _direction(row, transform=None):
    # The direction of transform @ row, from the row scaled to magnitude 1
    # (a centre of order 1 is negligible next to the huge rows).
    u = np.asarray(row, dtype=float) / np.abs(row).max()
    if transform is not None:
        u = transform @ u
    return u / np.linalg.norm(u)


@pytest.mark.parametrize("row", EXTREME_ROWS[:4])
@pytest.mark.parametrize(
    "params",
    [
        {"clip_norm": 1.5},
        {"clip_norm": 1.5, "center": np.append(CENTER, 0.0), "final_clip": 0.7},
        {"transform": TRANSFORM, "final_clip": 0.7},
        {"transform": TRANSFORM, "center": CENTER, "final_clip": 0.7},
    ],
)
@pytest.mark.parametrize("chunk_rows", [None, 1])
def test_huge_rows_are_clipped_in_their_direction(row, params, chunk_rows):
    X = np.array([row, [0.3, 0.4, 0.0, 0.1], row[::-1]])
    stats = row_statistics(
        X,
        chunk_rows=chunk_rows,
        gram=True,
        total=True,
        square_norm=True,
        norm_sums=partial(radius_counts, grid=GRID),
        **params,
    )
    assert np.all(np.isfinite(stats.gram)) and np.all(np.isfinite(stats.total))
    if "clip_norm" not in params:
        # Each huge row counts above every grid radius (its norm before the
        # final clip is beyond them all, inf or not).
        assert stats.norm_sums[0] == 2
    for huge in (row, row[::-1]):
        one = row_statistics(np.array([huge]), total=True, **params).total
        if "center" in params and "transform" not in params:
            # clip_norm first, then centring and the final clip: the clipped
            # row is 1.5 u; the result has norm 0.7.
            expected = 1.5 * _direction(huge) - params["center"]
            expected *= 0.7 / np.linalg.norm(expected)
        else:
            radius = params.get("final_clip", params.get("clip_norm"))
            expected = radius * _direction(huge, params.get("transform"))
        np.testing.assert_allclose(one, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("chunk_rows", [None, 2])
def test_tiny_rows(chunk_rows):
    # Subnormal entries pass unchanged (their norm is far below any radius
    # the estimators accept, 1e-150 and up); a norm whose squares underflow
    # is still computed to full precision.
    X = np.array([EXTREME_ROWS[4], [0.0] * 4, [3e-160, 4e-160, 0.0, 0.0]])
    stats = row_statistics(
        X,
        chunk_rows=chunk_rows,
        clip_norm=1e-150,
        total=True,
        norm_sums=partial(radius_counts, grid=[5e-160 * (1 + 1e-14), 5e-160]),
    )
    np.testing.assert_array_equal(stats.total, X.sum(axis=0))
    np.testing.assert_array_equal(stats.norm_sums, [0, 0])
    stats = row_statistics(
        X,
        norm_sums=partial(radius_counts, grid=[5e-160, 5e-160 * (1 - 1e-14)]),
    )
    np.testing.assert_array_equal(stats.norm_sums, [0, 1])


def test_norms_beyond_float64_are_inf_without_warning():
    X = np.array([[1e308] * 4, [1.0, 0.0, 0.0, 0.0]])
    stats = row_statistics(
        X, square_norm=True, norm_sums=partial(radius_counts, grid=[1e308, 1.0])
    )
    assert stats.square_norm == np.inf
    np.testing.assert_array_equal(stats.norm_sums, [1, 1])


@pytest.mark.parametrize("params", PROCESSING[1:])
def test_ordinary_rows_give_the_same_bits_as_the_plain_formulas(params):
    # The overflow rule only touches rows outside float64's comfortable
    # range: on ordinary data the pass is bit for bit the plain computation.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 4)) * rng.lognormal(sigma=2.0, size=(500, 1))

    def clip(Y, r):
        norms = np.sqrt(np.einsum("ij,ij->i", Y, Y))
        over = norms > r
        Y = Y.copy()
        Y[over] *= (r / norms[over])[:, np.newaxis]
        return Y

    Y = X
    if "clip_norm" in params:
        Y = clip(Y, params["clip_norm"])
    if "transform" in params:
        Y = Y @ params["transform"].T
    if "center" in params:
        Y = Y - params["center"]
    if "final_clip" in params:
        Y = clip(Y, params["final_clip"])
    stats = row_statistics(X, chunk_rows=10_000, gram=True, total=True, **params)
    np.testing.assert_array_equal(stats.gram, Y.T @ Y)
    np.testing.assert_array_equal(stats.total, np.ones(500) @ Y)


def test_huge_rows_on_dask_match_numpy():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    X[7], X[31], X[59] = EXTREME_ROWS[1], EXTREME_ROWS[3], EXTREME_ROWS[4]
    params = {"transform": TRANSFORM, "center": CENTER, "final_clip": 0.7}
    expected = row_statistics(X, gram=True, total=True, **params)
    got = row_statistics(
        da.from_array(X, chunks=(16, 4)),
        gram=True,
        total=True,
        check_finite=True,
        **params,
    )
    np.testing.assert_allclose(got.gram, expected.gram, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got.total, expected.total, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("chunk_rows", [None, 7])
def test_box_square_total_matches_naive(chunk_rows):
    # Each feature clipped to its range and mapped onto [-1, 1]: the sums of
    # the unit coordinates and of their squares.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3)) * [1.0, 10.0, 100.0] + [0.0, 5.0, -50.0]
    lower, upper = np.array([-1.0, 0.0, -100.0]), np.array([1.0, 20.0, 0.0])
    Z = (np.clip(X, lower, upper) - (lower + upper) / 2) / ((upper - lower) / 2)
    assert np.abs(Z).max() == 1.0  # some entries are clipped
    stats = row_statistics(
        X, box=(lower, upper), total=True, square_total=True, chunk_rows=chunk_rows
    )
    np.testing.assert_allclose(stats.total, Z.sum(0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stats.square_total, (Z * Z).sum(0), rtol=1e-12)


def test_square_total_on_dask_matches_numpy():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4)) * 3.0
    box = (np.full(4, -2.0), np.full(4, 2.0))
    expected = row_statistics(X, box=box, total=True, square_total=True)
    got = row_statistics(
        da.from_array(X, chunks=(16, 2)),
        box=box,
        total=True,
        square_total=True,
        check_finite=True,
    )
    np.testing.assert_allclose(got.total, expected.total, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got.square_total, expected.square_total, rtol=1e-12)


# Sparse input: the sparse pass (clipping by scaling stored values, Gram
# matrix by sparse products, centring from sums) and the densified-chunk pass
# (for box and transform, and dense-enough input) are each forced in turn.
ROUTES = {"sparse products": 0.0, "densified chunks": np.inf}


@pytest.fixture(params=list(ROUTES))
def route(request, monkeypatch):
    monkeypatch.setattr(_gram._sparse, "SPARSE_PAIR_COST", ROUTES[request.param])
    return request.param


def _sparse_rows(dtype=np.float64):
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(103, 4)) * [2.0, 1.0, 0.5, 0.1]).astype(dtype)
    X[rng.random(X.shape) < 0.6] = 0.0
    X[5] = 0.0  # an empty row
    return X


@pytest.mark.parametrize("container", [sparse.csr_matrix, sparse.csc_array])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("chunk_rows", [None, 1, 7])
@pytest.mark.parametrize("params", PROCESSING)
def test_sparse_statistics_match_dense(route, container, dtype, chunk_rows, params):
    X = _sparse_rows(dtype)
    S = container(X)
    data = S.data.copy()
    requested = dict(
        gram=True,
        total=True,
        square_norm=True,
        norm_sums=partial(radius_counts, grid=GRID),
        chunk_rows=chunk_rows,
        **params,
    )
    dense = row_statistics(X, **requested)
    got = row_statistics(S, **requested)
    np.testing.assert_allclose(got.gram, dense.gram, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got.total, dense.total, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got.square_norm, dense.square_norm, rtol=1e-12)
    np.testing.assert_array_equal(got.norm_sums, dense.norm_sums)
    assert got.n_rows == 103
    np.testing.assert_array_equal(S.data, data)  # the input is never modified


def test_sparse_duplicates_and_box(route):
    # A CSR matrix with duplicate entries (their sum is the value) and
    # unsorted indices; and the box step, which densifies chunk by chunk.
    S = sparse.csr_matrix(
        (
            np.array([1.0, 2.0, -0.5, 3.0, 0.25, 0.25]),
            np.array([2, 0, 2, 1, 1, 1]),
            np.array([0, 3, 3, 6]),
        ),
        shape=(3, 3),
    )
    assert not S.has_canonical_format
    data = S.data.copy()
    X = S.toarray()
    for params in (
        {"clip_norm": 1.0, "center": np.array([0.1, 0.0, -0.1]), "final_clip": 0.5},
        {"box": (np.full(3, -1.0), np.array([2.0, 2.0, 1.0])), "clip_norm": 1.5},
    ):
        requested = dict(gram=True, total=True, square_norm=True, **params)
        dense = row_statistics(X, **requested)
        got = row_statistics(S, **requested)
        np.testing.assert_allclose(got.gram, dense.gram, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(got.total, dense.total, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(got.square_norm, dense.square_norm, rtol=1e-12)
    np.testing.assert_array_equal(S.data, data)
    assert not S.has_canonical_format  # the caller's matrix is left as it was


@pytest.mark.parametrize("row", EXTREME_ROWS)
@pytest.mark.parametrize(
    "params",
    [
        {"clip_norm": 1.5},
        {"final_clip": 0.7},
        {"clip_norm": 1.5, "center": np.append(CENTER, 0.0), "final_clip": 0.7},
        {"clip_norm": 1e-150},
    ],
)
def test_sparse_extreme_rows_match_dense(route, row, params):
    # Rows beyond float64's comfortable range follow the dense pass's rule
    # (scaled by a power of two, clipped in their own direction), with no
    # warning (warnings are errors in this suite).
    X = np.array([row, [0.3, 0.4, 0.0, 0.1], row[::-1], [0.0] * 4])
    requested = dict(
        gram=True,
        total=True,
        square_norm=True,
        norm_sums=partial(radius_counts, grid=GRID),
        **params,
    )
    dense = row_statistics(X, **requested)
    got = row_statistics(sparse.csr_matrix(X), **requested)
    np.testing.assert_allclose(got.gram, dense.gram, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(got.total, dense.total, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(got.square_norm, dense.square_norm, rtol=1e-12)
    np.testing.assert_array_equal(got.norm_sums, dense.norm_sums)


def test_sparse_check_finite(route):
    X = sparse.csr_matrix(np.eye(4))
    X.data[2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        row_statistics(X, check_finite=True, clip_norm=1.0, gram=True)


def test_sparse_memory_has_no_dense_copy():
    # 200000 x 1000 at density 1e-4 (20000 stored values): densified it would
    # be 1.6 GB. The traced peak is the d x d sums and their centring (four
    # d x d float64 arrays) plus a few float64 vectors over the rows of a
    # chunk; nothing of size n x d.
    n, d = 200_000, 1_000
    rng = np.random.default_rng(0)
    nnz = n * d // 10_000
    X = sparse.csr_matrix(
        (rng.random(nnz), (rng.integers(n, size=nnz), rng.integers(d, size=nnz))),
        shape=(n, d),
    )
    tracemalloc.start()
    stats = row_statistics(
        X,
        clip_norm=0.5,
        center=np.full(d, 0.01),
        final_clip=0.3,
        gram=True,
        total=True,
        square_norm=True,
    )
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert stats.gram.shape == (d, d)
    assert peak < 4 * 8 * d * d + 8 * 8 * _gram.SPARSE_CHUNK_ROWS + 2**20
    assert peak < n * d * 8 / 40


@pytest.mark.parametrize("chunk_rows", [None, 3])
def test_sparse_chunks_respect_their_budgets(monkeypatch, chunk_rows):
    # Consecutive row ranges covering every row; a range of more than one row
    # stays within the budgets of products of nonzeros (at least d**2),
    # stored values and rows.
    monkeypatch.setattr(_gram._sparse, "SPARSE_CHUNK_PAIRS", 40)
    monkeypatch.setattr(_gram._sparse, "SPARSE_CHUNK_NONZEROS", 12)
    counts = np.random.default_rng(0).integers(0, 8, size=200)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    pairs = _gram._cumulative_pairs(indptr)
    ranges = list(_gram._sparse_chunks(indptr, pairs, 5, chunk_rows))
    assert ranges[0][0] == 0 and ranges[-1][1] == 200
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:], strict=False))
    for start, stop in ranges:
        if stop - start > 1:
            chunk = counts[start:stop]
            assert (chunk**2).sum() <= 40 and chunk.sum() <= 12
            assert chunk_rows is None or stop - start <= chunk_rows


def _per_chunk_reference(X, chunk_rows, clip_norm=None, center=None, final_clip=None):
    # The pass written out the plain way (each step a new array, a row scaled
    # by radius / ||x|| only when its norm exceeds the radius), summed with
    # the pass's fixed structure: chunk sums added within blocks of
    # BLOCK_CHUNKS chunks, the block sums in order.
    def clip(rows, radius):
        norms = _gram._row_norms(rows)
        factor = np.where(norms > radius, radius / np.maximum(norms, 1e-300), 1.0)
        return rows * factor[:, np.newaxis]

    d = X.shape[1]
    gram, total, square_norm = np.zeros((d, d)), np.zeros(d), 0.0
    starts = list(range(0, X.shape[0], chunk_rows))
    for b in range(0, len(starts), _gram.BLOCK_CHUNKS):
        block = [np.zeros((d, d)), np.zeros(d), 0.0]
        for start in starts[b : b + _gram.BLOCK_CHUNKS]:
            rows = X[start : start + chunk_rows].astype(np.float64)
            if clip_norm is not None:
                rows = clip(rows, clip_norm)
            if center is not None:
                rows = rows - center
            norms = _gram._row_norms(rows)
            if final_clip is not None:
                rows = clip(rows, final_clip)
            block[0] += rows.T @ rows
            block[1] += np.ones(rows.shape[0]) @ rows
            block[2] += np.dot(norms, norms)
        gram += block[0]
        total += block[1]
        square_norm += block[2]
    return gram, total, square_norm


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize(
    "params",
    [
        {"clip_norm": 1.5},
        {"clip_norm": 1.5, "center": np.linspace(-0.3, 0.3, 6), "final_clip": 0.9},
        {"clip_norm": 2.0, "center": np.linspace(-0.3, 0.3, 6)},
    ],
)
def test_pass_is_bit_for_bit_the_plain_formulas(monkeypatch, dtype, threads, params):
    # The pass writes every step into one buffer per thread and multiplies
    # every row by min(1, r / ||x||) (1 for the rows within the radius, an
    # exact product): the same operations on the same values as the plain
    # formulas, so the same bits, with one thread or several (the blocks'
    # sums are added in a fixed order whatever thread ran them).
    monkeypatch.setattr(_gram._blocks, "pass_threads", lambda: threads)
    rng = np.random.default_rng(3)
    X = (rng.normal(size=(2000, 6)) * rng.uniform(0.1, 1.5, (2000, 1))).astype(dtype)
    X[7] = 0.0
    before = X.copy()
    stats = row_statistics(
        X, gram=True, total=True, square_norm=True, chunk_rows=23, **params
    )
    gram, total, square_norm = _per_chunk_reference(X, 23, **params)
    np.testing.assert_array_equal(stats.gram, gram)
    np.testing.assert_array_equal(stats.total, total)
    assert stats.square_norm == square_norm
    np.testing.assert_array_equal(X, before)


def test_threads_follow_the_blas_and_memory_caps(monkeypatch):
    monkeypatch.setattr(_gram._blocks, "pass_threads", lambda: 8)
    assert _gram._pass_threads(100, 5000, n_blocks=1) == 1
    assert _gram._pass_threads(100, 5000, n_blocks=3) == 3
    assert _gram._pass_threads(100, 5000, n_blocks=50) == 8
    # Sums and buffers of 8 (3 d^2 + chunk d) bytes per thread, at most
    # THREAD_BYTES in all: d = 2000 leaves room for one thread.
    assert _gram._pass_threads(2000, 500, n_blocks=50) == 1
    monkeypatch.setattr(_gram._blocks, "pass_threads", lambda: 1)
    assert _gram._pass_threads(100, 5000, n_blocks=50) == 1


def test_ordered_map_keeps_order_and_window():
    from concurrent.futures import ThreadPoolExecutor

    in_flight, peak = [0], [0]

    def work(i):
        in_flight[0] += 1
        peak[0] = max(peak[0], in_flight[0])
        in_flight[0] -= 1
        return i * i

    with ThreadPoolExecutor(2) as executor:
        out = list(_gram._ordered_map(executor, work, range(50), window=4))
    assert out == [i * i for i in range(50)]
    assert peak[0] <= 4


def test_buffered_and_allocating_processing_agree():
    # process(chunk, buffer) and process(chunk): the same rows and norms,
    # bit for bit, for every combination of steps that runs in place.
    rng = np.random.default_rng(4)
    chunk = rng.normal(size=(50, 5)) * 2
    box = (np.full(5, -3.0), np.full(5, 2.0))
    for params in [
        dict(clip_norm=1.0),
        dict(clip_norm=1.0, center=np.full(5, 0.2), final_clip=0.5),
        dict(box=box, clip_norm=1.5, center=np.full(5, 0.1), final_clip=0.8),
        dict(box=box),
    ]:
        spec = _gram._Pass(
            **{
                key: (tuple(value) if key == "box" else value)
                for key, value in params.items()
            },
            gram=True,
            square_norm=True,
        )
        rows, norms = spec.process(chunk, np.empty((64, 5)))
        plain_rows, plain_norms = spec._process_new(chunk)
        np.testing.assert_array_equal(rows, plain_rows)
        np.testing.assert_array_equal(norms, plain_norms)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("center", [None, np.linspace(-0.4, 0.5, 6)])
def test_norms_only_pass_matches_the_formed_rows(monkeypatch, dtype, center):
    # A pass that needs only the norms of clip(x, r) - m computes them
    # without forming the rows: f ||x|| and (f ||x||)^2 - 2 f x.m + ||m||^2.
    # They agree with the norms of the formed rows up to the rounding of
    # that expansion, (d + 4) eps (||f x|| + ||m||)^2 in the square.
    rng = np.random.default_rng(6)
    X = (rng.normal(size=(3000, 6)) * rng.uniform(0, 2, (3000, 1))).astype(dtype)
    X[3] = 0.0
    # (Clipped rows have norm r up to rounding: a bin edge at r itself would
    # be ambiguous for either path; GRID holds powers of two.)
    r = 0.9
    counts = partial(radius_counts, grid=GRID)
    fast = row_statistics(
        X, clip_norm=r, center=center, square_norm=True, norm_sums=counts
    )
    monkeypatch.setattr(_gram._Pass, "rows_unformed", lambda self: False)
    formed = row_statistics(
        X, clip_norm=r, center=center, square_norm=True, norm_sums=counts
    )
    m = 0.0 if center is None else np.linalg.norm(center)
    slack = X.shape[0] * (6 + 4) * np.finfo(float).eps * (r + m) ** 2
    assert abs(fast.square_norm - formed.square_norm) <= slack
    # Bin counts: equal unless a norm lies within rounding of a bin edge
    # (none does for these continuous rows).
    np.testing.assert_array_equal(fast.norm_sums, formed.norm_sums)


def test_unformed_passes_keep_the_adaptive_fit(monkeypatch):
    # AdaptiveCovariance's mean and threshold passes never form the rows. On
    # fixed seeds the fit makes the same choices as with formed rows (the
    # threshold and the mechanism), its Gram pass clips exactly as before,
    # and the mean, the trace bound and the release move by rounding only.
    from dpcov.covariance import AdaptiveCovariance
    from dpcov.datasets import make_zipf_norms

    X = make_zipf_norms(20000, 8, n_buckets=8, random_state=1)
    X += 0.05

    def fit():
        return AdaptiveCovariance(epsilon=2.0, data_norm=1.2, random_state=0).fit(X)

    fast = fit()
    monkeypatch.setattr(_gram._Pass, "rows_unformed", lambda self: False)
    formed = fit()
    np.testing.assert_allclose(fast.location_, formed.location_, rtol=1e-12)
    np.testing.assert_allclose(fast.covariance_, formed.covariance_, rtol=1e-10)
    # (The same grid point: thresholds a factor 2 apart, and the radius,
    # data_norm plus the mean's norm, moves by rounding only.)
    assert fast.clip_threshold_ == pytest.approx(formed.clip_threshold_, rel=1e-12)
    assert fast.mechanism_ == formed.mechanism_
    assert fast.trace_bound_ == pytest.approx(formed.trace_bound_, rel=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("threads", [1, 3])
def test_unformed_sum_matches_the_clipped_rows(monkeypatch, dtype, threads):
    # The private mean's pass sums clip(x, r) as f @ x, never forming f x:
    # the same clip factors, the same function of the rows; only the
    # rounding differs (BLAS fuses f_i x_ij into the sum), by at most
    # n eps r per entry (a sum of n terms of magnitude <= r).
    monkeypatch.setattr(_gram._blocks, "pass_threads", lambda: threads)
    rng = np.random.default_rng(8)
    X = (rng.normal(size=(2000, 6)) * rng.uniform(0.1, 1.5, (2000, 1))).astype(dtype)
    stats = row_statistics(X, clip_norm=1.5, total=True, chunk_rows=23)
    assert _gram._Pass(clip_norm=1.5, total=True).rows_unformed()
    _, total, _ = _per_chunk_reference(X, 23, clip_norm=1.5)
    np.testing.assert_allclose(stats.total, total, rtol=0, atol=2000 * 1.5 * 2**-52)


@pytest.mark.parametrize(
    "steps",
    [
        {"clip_norm": 2.0, "gram": True},  # rows formed in the buffer
        {"clip_norm": 2.0, "total": True},  # the unformed sum
        {"clip_norm": 2.0, "center": np.full(4, 0.1), "square_norm": True},
        {"norm_sums": radius_counts},  # no clip: the raw rows' norms
        {"box": (np.full(4, -3.0), np.full(4, 3.0)), "gram": True},
        {"transform": np.eye(3, 4), "clip_norm": 2.0, "gram": True},
    ],
    ids=["buffer", "unformed", "centred", "counts", "box", "transform"],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_first_pass_checks_entries_on_every_path(steps, dtype):
    # Without a box the check rides on the rows' norms: finite rows whose
    # norms overflow float64 are accepted (and summed as without the check),
    # NaN and infinity refused, whatever the chunk and the path.
    from dpcov.utils._input_messages import NonFiniteInput

    X = np.random.default_rng(0).normal(size=(900, 4)).astype(dtype)
    # Finite; its norm is beyond float64 (for float32 input, beyond float32).
    X[450] = np.finfo(dtype).max / 2
    checked = row_statistics(X, check_finite=True, chunk_rows=100, **steps)
    plain = row_statistics(X, chunk_rows=100, **steps)
    for name in ("gram", "total", "square_norm", "norm_sums"):
        np.testing.assert_array_equal(getattr(checked, name), getattr(plain, name))
    for bad in (np.nan, np.inf, -np.inf):
        Y = X.copy()
        Y[777, 1] = bad
        with pytest.raises(NonFiniteInput, match="NaN or infinity"):
            row_statistics(Y, check_finite=True, chunk_rows=100, **steps)


@pytest.mark.parametrize("chunk_rows", [None, 1, 37])
def test_wide_rows_update_the_gram_matrix_in_place(chunk_rows):
    # From SYRK_FROM columns on, each chunk's Gram update is LAPACK's in-place
    # rank-k update on one triangle; the sum is the same matrix, symmetric.
    from dpcov.utils._gram._blocks import SYRK_FROM

    rng = np.random.default_rng(0)
    X = rng.normal(size=(301, SYRK_FROM + 3))
    stats = row_statistics(X, chunk_rows=chunk_rows, gram=True, clip_norm=10.0)
    Y = X * np.minimum(1.0, 10.0 / np.linalg.norm(X, axis=1))[:, None]
    np.testing.assert_allclose(stats.gram, Y.T @ Y, rtol=1e-12, atol=1e-11)
    np.testing.assert_array_equal(stats.gram, stats.gram.T)


@pytest.mark.parametrize("share", [0.0, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("in_place", [False, True])
def test_clip_pass_is_the_full_scaling_bit_for_bit(share, in_place):
    # _clip_pass skips the rows whose factor is 1 (none clipped: the rows
    # themselves; few, in place: those rows only): the same bits as
    # _scale_rows, which multiplies every row.
    from dpcov.utils._gram._rows import _clip_pass, _scale_rows

    rng = np.random.default_rng(4)
    rows = rng.normal(size=(400, 6))
    rows *= 0.9 / np.linalg.norm(rows, axis=1, keepdims=True)
    clipped = rng.random(400) < share
    rows[clipped] *= rng.uniform(1.5, 40.0, size=(clipped.sum(), 1))
    rows[np.flatnonzero(clipped)[:1]] *= 1e300  # a row beyond float64's norm
    expected = _scale_rows(rows, 1.0, np.empty_like(rows))
    source = rows.copy()
    out = source if in_place else np.empty_like(rows)
    result = _clip_pass(source, 1.0, out)
    np.testing.assert_array_equal(result, expected)
    if share == 0.0:
        assert result is source  # (nothing written)
    if not in_place:
        np.testing.assert_array_equal(source, rows)  # the input untouched


def _wide_pass(X, **kwargs):
    return row_statistics(X, gram=True, clip_norm=10.0, **kwargs)


@pytest.mark.parametrize("where", ["main, one thread", "main, two", "worker thread"])
def test_wide_gram_updates_hold_the_gil_only_alone_in_the_main_thread(
    monkeypatch, where
):
    # SciPy's dsyrk holds the GIL: a pass on several threads, or in another
    # thread (Dask's, joblib's), updates with NumPy's product on chunks of at
    # least WIDE_CHUNK_ROWS rows; only a pass alone in the main thread
    # updates in place. The same matrix either way.
    from concurrent.futures import ThreadPoolExecutor

    from dpcov.utils._gram._blocks import SYRK_FROM, WIDE_CHUNK_ROWS

    threads = 1 if where == "main, one thread" else 2
    monkeypatch.setattr(_gram._blocks, "pass_threads", lambda: threads)
    monkeypatch.setattr(_gram._blocks, "BLOCK_CHUNKS", 2)  # (blocks for 2 threads)
    # Chunks of 100 rows by bytes (as 4 MiB are from d = 513 on): raised to
    # WIDE_CHUNK_ROWS where the product updates the sums.
    monkeypatch.setattr(_gram._blocks, "CHUNK_BYTES", 8 * (SYRK_FROM + 3) * 100)
    in_place, chunks = [], []
    original = _gram._dense._rank_k_update
    monkeypatch.setattr(
        _gram._dense,
        "_rank_k_update",
        lambda upper, rows: in_place.append(1) or original(upper, rows),
    )
    process = _gram._dense._DensePass.process
    monkeypatch.setattr(
        _gram._dense._DensePass,
        "process",
        lambda self, chunk, *a: (
            chunks.append(chunk.shape[0]) or process(self, chunk, *a)
        ),
    )
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5 * WIDE_CHUNK_ROWS + 7, SYRK_FROM + 3))
    if where == "worker thread":
        with ThreadPoolExecutor(1) as executor:
            stats = executor.submit(_wide_pass, X).result()
    else:
        stats = _wide_pass(X)
    Y = X * np.minimum(1.0, 10.0 / np.linalg.norm(X, axis=1))[:, None]
    # Sums of n terms of magnitude at most r^2 = 100 per entry, in another
    # order: within n eps r^2 of each other.
    slack = X.shape[0] * np.finfo(float).eps * 100.0
    np.testing.assert_allclose(stats.gram, Y.T @ Y, rtol=0, atol=slack)
    np.testing.assert_array_equal(stats.gram, stats.gram.T)
    assert bool(in_place) == (where == "main, one thread")
    if where != "main, one thread":
        assert max(chunks) == WIDE_CHUNK_ROWS
    else:
        assert max(chunks) == 100
