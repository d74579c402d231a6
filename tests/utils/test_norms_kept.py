"""The rows' norms kept between the passes of one fit (``_norms_kept.py``)."""

from functools import partial

import numpy as np
import pytest

from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.decomposition import PCA
from dpcov.mechanisms import radius_counts
from dpcov.utils import _gram
from dpcov.utils._gram import _norms_kept, kept_row_norms, row_statistics


def _rows():
    # Ordinary rows and the ones each path treats apart: a zero row, a tiny
    # one (its square underflows), one whose norm overflows float64 and one
    # of entries beyond a normal clip factor.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 12)) * np.linspace(0.2, 3.0, 12)
    X[5] = 0.0
    X[17] = 1e-200
    X[900] = 1e300
    X[2100, :3] = 1e306
    return X


def _passes(X, center):
    # The passes of a fit with a private radius, and others that read the
    # raw norms (a norm statistic of unchanged rows, a final clip alone), in
    # chunks of 256 rows.
    step = dict(chunk_rows=256)
    return [
        dict(norm_sums=radius_counts, check_finite=True, **step),
        dict(clip_norm=2.5, total=True, **step),
        dict(clip_norm=2.5, center=center, square_norm=True, **step),
        dict(
            clip_norm=2.5,
            center=center,
            norm_sums=partial(radius_counts, grid=np.array([4.0, 2.0, 1.0, 0.5])),
            **step,
        ),
        dict(clip_norm=2.5, center=center, final_clip=1.5, gram=True, **step),
        dict(final_clip=1.5, gram=True, total=True, square_norm=True, **step),
        dict(clip_norm=2.5, bins=np.array([4.0, 2.0, 1.0]), gram=True, **step),
        dict(box=(-2.0, 2.0), clip_norm=1.0, gram=True, **step),
    ]


def _fields(stats):
    fields = {
        name: getattr(stats, name)
        for name in ("gram", "total", "square_total", "square_norm", "norm_sums")
    }
    if stats.binned is not None:
        fields["binned"] = stats.binned.clipped(2.0)
    return fields


def _assert_same(first, second):
    other = _fields(second)
    for name, value in _fields(first).items():
        if value is None:
            assert other[name] is None
        elif name == "binned":
            for part, other_part in zip(value, other[name], strict=True):
                np.testing.assert_array_equal(part, other_part)
        else:
            np.testing.assert_array_equal(value, other[name])


@pytest.mark.parametrize("threads", [1, 2])
def test_kept_norms_give_the_same_sums_bit_for_bit(monkeypatch, threads):
    # Every pass that starts from the raw norms reads the kept ones: the
    # same numbers, so the same clips, counts and sums, bit for bit, rows
    # beyond float64 included.
    monkeypatch.setattr(_gram._blocks, "pass_threads", lambda: threads)
    X = _rows()
    center = np.full(12, 0.1)
    expected = [row_statistics(X, **kw) for kw in _passes(X, center)]
    with kept_row_norms(X):
        kept = [row_statistics(X, **kw) for kw in _passes(X, center)]
    for first, second in zip(expected, kept, strict=True):
        _assert_same(first, second)


def test_later_passes_read_the_kept_norms(monkeypatch):
    # Each chunk's norms are computed once in the context: by the first pass
    # that reads them; the clip and the centred norms after it compute no
    # raw norm.
    X = _rows()
    computed = []
    original = _norms_kept._row_norms
    monkeypatch.setattr(
        _norms_kept, "_row_norms", lambda rows: computed.append(1) or original(rows)
    )
    dense = []
    original_dense = _gram._dense._row_norms
    monkeypatch.setattr(
        _gram._dense,
        "_row_norms",
        lambda rows: dense.append(rows.shape) or original_dense(rows),
    )
    n_chunks = -(-X.shape[0] // 256)
    with kept_row_norms(X):
        row_statistics(X, norm_sums=radius_counts, check_finite=True, chunk_rows=256)
        assert len(computed) == n_chunks
        assert not dense
        row_statistics(X, clip_norm=2.5, total=True, chunk_rows=256)
        row_statistics(
            X, clip_norm=2.5, center=np.ones(12), square_norm=True, chunk_rows=256
        )
        assert not dense  # (the centred norms: from the kept ones)
        # Other chunks: computed again, for those chunks.
        row_statistics(X, clip_norm=2.5, total=True, chunk_rows=1000)
    assert len(computed) == n_chunks + 3


def test_kept_norms_are_read_only_and_dropped_with_the_context():
    X = _rows()
    with kept_row_norms(X):
        kept = _norms_kept.row_norms_of(X)
        view = kept.for_chunks(256).chunk(0, X[:256])
        with pytest.raises(ValueError, match="read-only"):
            view[0] = 1.0
        np.testing.assert_array_equal(view, _gram._row_norms(X[:256]))
        assert _norms_kept.row_norms_of(X.copy()) is None  # another array
        with kept_row_norms(X):  # the outer context keeps
            assert _norms_kept.row_norms_of(X) is kept
    assert _norms_kept.row_norms_of(X) is None


def test_norms_are_kept_only_for_float64_arrays_in_memory(tmp_path):
    # float32 rows are upcast chunk by chunk, a memmap is read from disk and
    # narrow rows' norms would cost as much as the rows: none is kept.
    X = np.random.default_rng(1).normal(size=(300, 12))
    memmap = np.lib.format.open_memmap(
        tmp_path / "X.npy", mode="w+", dtype=np.float64, shape=X.shape
    )
    memmap[:] = X
    narrow = np.ascontiguousarray(X[:, : _norms_kept.KEPT_FROM - 1])
    # (Validation turns a memmap into a plain array over the mapping.)
    mapped = (memmap, np.asarray(memmap), memmap[10:])
    for rows in (X.astype(np.float32), narrow, *mapped):
        with kept_row_norms(rows):
            assert _norms_kept.row_norms_of(rows) is None
    kept = []
    original = _norms_kept.RowNorms.__init__

    def spy(self, source):
        kept.append(1)
        original(self, source)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_norms_kept.RowNorms, "__init__", spy)
        AdaptiveCovariance(epsilon=2.0, random_state=0).fit(memmap)
        assert not kept
        AdaptiveCovariance(epsilon=2.0, random_state=0).fit(X)
        assert kept


def _frames_hold_norms(error, seen=None):
    # Whether a RowNorms is a local of a frame in the error's traceback, or
    # of the frames of errors and generators held there (the path by which
    # a refused fit's original error kept them).
    seen = set() if seen is None else seen
    tb = error.__traceback__
    while tb is not None:
        frames = [tb.tb_frame]
        while frames:
            frame = frames.pop()
            if id(frame) in seen:
                continue
            seen.add(id(frame))
            for value in frame.f_locals.values():
                if isinstance(value, _norms_kept.RowNorms):
                    return True
                if isinstance(value, BaseException) and _frames_hold_norms(value, seen):
                    return True
                generator = getattr(getattr(value, "gen", None), "gi_frame", None)
                if generator is not None:
                    frames.append(generator)
        tb = tb.tb_next
    return False


def test_a_refused_fit_keeps_no_norms():
    # A NaN in the last chunk: the first pass has kept the chunks before it
    # when it refuses. The error raised is a new one, raised outside the
    # handler: no frame of the fit (with the rows and their norms) in it.
    X = np.random.default_rng(1).normal(size=(20000, 12))
    X[-1, 0] = np.nan
    try:
        AdaptiveCovariance(epsilon=2.0, random_state=0).fit(X)
    except ValueError as error:
        refused = error
    assert refused.__context__ is None and refused.__cause__ is None
    assert not _frames_hold_norms(refused)


@pytest.mark.parametrize(
    "make",
    [
        lambda: AdaptiveCovariance(epsilon=2.0, random_state=0),
        lambda: AdaptiveCovariance(epsilon=2.0, data_norm=3.0, random_state=0),
        lambda: GaussianCovariance(epsilon=2.0, random_state=0),
        lambda: PCA(n_components=3, epsilon=2.0, random_state=0),
    ],
)
def test_fits_with_kept_norms_are_the_fits_without(monkeypatch, make):
    # A fit keeps its rows' norms between passes; with keeping off (no input
    # wide enough), the same fit, bit for bit. Nothing is kept after it.
    X = np.random.default_rng(3).normal(size=(5000, 10)) + 0.5
    kept = make().fit(X)
    assert _norms_kept._KEPT.get() is None
    monkeypatch.setattr(_norms_kept, "KEPT_FROM", 10**9)
    plain = make().fit(X)
    if isinstance(kept, PCA):
        np.testing.assert_array_equal(kept.components_, plain.components_)
        np.testing.assert_array_equal(
            kept.explained_variance_, plain.explained_variance_
        )
    else:
        np.testing.assert_array_equal(kept.covariance_, plain.covariance_)
        np.testing.assert_array_equal(kept.location_, plain.location_)


@pytest.mark.parametrize(
    "make",
    [
        lambda: GaussianCovariance(),
        lambda: GaussianCovariance(data_norm=3.0),
        lambda: GaussianCovariance(bounds=(-5.0, 5.0)),
        lambda: GaussianCovariance(data_norm=3.0, assume_centered=True),
        lambda: SeparateCovariance(),
        lambda: SeparateCovariance(data_norm=3.0),
        lambda: AdaptiveCovariance(),
        lambda: AdaptiveCovariance(data_norm=3.0),
        lambda: AdaptiveCovariance(data_norm=3.0, assume_centered=True),
        lambda: AdaptiveCovariance(bounds=(-5.0, 5.0)),
    ],
)
def test_a_fit_keeps_norms_exactly_when_it_reads_them_twice(monkeypatch, make):
    # The decision is made from public parameters before the passes: it
    # holds when, and only when, more than one pass starts from the raw
    # norms (so no single-read fit pays for n kept numbers).
    X = np.random.default_rng(3).normal(size=(3000, 10))
    reads = []
    original = _gram._dense._DensePass.run

    def run(self, rows):
        if rows is X:
            reads.append(self.reads_raw_norms())
        return original(self, rows)

    monkeypatch.setattr(_gram._dense._DensePass, "run", run)
    estimator = make().set_params(epsilon=2.0, random_state=0)
    estimator.fit(X)
    assert estimator._reads_raw_norms_again() == (sum(reads) > 1)
