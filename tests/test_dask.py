"""Dask arrays as input: lazy validation, Dask reductions, same result as NumPy.

The statistics a fit needs are sums over rows; on a Dask array every block
computes its part and Dask adds them up, while the noise is drawn once, in the
calling process, from the same ``random_state``. So a Dask fit equals the
in-memory fit up to the order of floating-point additions (relative 1e-12 on
sums of 1e3-1e4 terms of similar size), with the private radius, the
thresholds and every noise draw identical.
"""

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("dask.distributed")

from dpcov.accounting import BudgetAccountant  # noqa: E402
from dpcov.covariance import (  # noqa: E402
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA  # noqa: E402
from dpcov.distributions import MultivariateGaussian  # noqa: E402
from dpcov.utils._gram import rows_in_blocks  # noqa: E402

ESTIMATORS = [
    GaussianCovariance,
    SeparateCovariance,
    AdaptiveCovariance,
    NuclearLaplaceCovariance,
    EigenSamplingCovariance,
]
CONFIGS = [
    {},
    {"data_norm": 2.0},
    {"assume_centered": True},
    {"assume_centered": True, "data_norm": 2.0},
    {"rho": 0.5, "data_norm": 2.0},
    {"delta": 0.0},
]


def _data(n=6000, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) @ np.diag(np.linspace(0.2, 1.0, d)) / 3 + 0.1
    X[:30] *= 8  # a tail of long rows: clipping and thresholds matter
    return X


def _assert_same_fit(lazy, eager):
    np.testing.assert_allclose(
        lazy.covariance_, eager.covariance_, rtol=1e-9, atol=1e-13
    )
    np.testing.assert_allclose(lazy.location_, eager.location_, rtol=1e-9, atol=1e-13)
    assert lazy.data_norm_ == eager.data_norm_
    assert lazy.guarantee_ == eager.guarantee_
    assert lazy.n_features_in_ == eager.n_features_in_


@pytest.fixture
def client():
    # Two worker processes, one thread each: blocks travel between processes
    # and the per-block statistics come back to this process to be summed.
    # One per test: an active client would be the default scheduler of the
    # tests after it, which count reads in this process.
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.mark.parametrize(
    "config", CONFIGS, ids=lambda c: ",".join(map(str, c)) or "default"
)
@pytest.mark.parametrize("Estimator", ESTIMATORS, ids=lambda e: e.__name__)
def test_dask_fit_equals_numpy_fit(Estimator, config):
    X = _data()
    eager = Estimator(random_state=3, **config).fit(X)
    # Uneven blocks, threaded scheduler.
    lazy = Estimator(random_state=3, **config).fit(da.from_array(X, chunks=(1700, 6)))
    _assert_same_fit(lazy, eager)


@pytest.mark.parametrize("Estimator", ESTIMATORS, ids=lambda e: e.__name__)
def test_dask_fit_with_extreme_rows(Estimator):
    # Rows whose norms overflow float64 (and a subnormal one) are clipped in
    # each block as in memory: no warning (warnings are errors here), the
    # same fit, with the private radius too.
    X = _data()
    X[11] = 1e308
    X[2500] = [1e308, -1e308] * 3
    X[5999] = [5e-324] * 6
    for config in ({}, {"data_norm": 2.0}):
        eager = Estimator(random_state=3, **config).fit(X)
        lazy = Estimator(random_state=3, **config).fit(
            da.from_array(X, chunks=(1700, 6))
        )
        _assert_same_fit(lazy, eager)


class _CountingRows:
    """Rows whose chunks count their loads (a source on disk or a cluster)."""

    def __init__(self, X):
        self.X = X
        self.shape, self.dtype, self.ndim = X.shape, X.dtype, X.ndim
        self.loads = {}

    def __getitem__(self, key):
        rows = self.X[key]
        if rows.size:  # Dask reads an empty slice for the array's metadata
            self.loads[key[0].start] = self.loads.get(key[0].start, 0) + 1
        return rows


# Reads of each chunk per fit: the private radius, the mean and the Gram
# matrix come from one read (sums binned by norm on the radius grid);
# AdaptiveCovariance (and PCA, on it) reads a second time because its
# threshold's norms are of the rows centred on the private mean, released
# after the first read.
READS = [
    (GaussianCovariance, {}, 1),
    (SeparateCovariance, {}, 1),
    (NuclearLaplaceCovariance, {}, 1),
    (EigenSamplingCovariance, {}, 1),
    (GaussianCovariance, {"data_norm": 2.0}, 1),
    (AdaptiveCovariance, {}, 2),
    (AdaptiveCovariance, {"data_norm": 2.0, "assume_centered": True}, 1),
    (PCA, {"n_components": 2, "data_norm": 2.0}, 2),
    (PCA, {"n_components": 2}, 2),
]


@pytest.mark.parametrize(
    "Estimator, config, reads",
    READS,
    ids=[f"{e.__name__}-{','.join(c) or 'default'}" for e, c, _ in READS],
)
def test_each_chunk_is_read_at_most_as_planned(Estimator, config, reads):
    X = _data(n=12000)
    source = _CountingRows(X)
    with dask.config.set(scheduler="threads"):  # counted in this process
        lazy = Estimator(random_state=3, **config).fit(
            da.from_array(source, chunks=(1000, 6))
        )
    assert len(source.loads) == 12
    assert set(source.loads.values()) == {reads}
    eager = Estimator(random_state=3, **config).fit(X)
    if Estimator is PCA:
        np.testing.assert_allclose(
            lazy.components_, eager.components_, rtol=1e-8, atol=1e-10
        )
    else:
        _assert_same_fit(lazy, eager)


@pytest.mark.slow
@pytest.mark.parametrize("Estimator", [GaussianCovariance, AdaptiveCovariance])
def test_dask_fit_on_local_cluster(client, Estimator):
    X = _data(seed=1)
    eager = Estimator(random_state=5).fit(X)
    lazy = Estimator(random_state=5).fit(da.from_array(X, chunks=(1000, 3)))
    _assert_same_fit(lazy, eager)


@pytest.mark.slow
def test_pca_on_local_cluster(client):
    X = _data(seed=2)
    eager = PCA(n_components=3, random_state=0).fit(X)
    X_lazy = da.from_array(X, chunks=(1500, 6))
    lazy = PCA(n_components=3, random_state=0).fit(X_lazy)
    np.testing.assert_allclose(
        lazy.components_, eager.components_, rtol=1e-8, atol=1e-10
    )
    np.testing.assert_allclose(
        lazy.explained_variance_, eager.explained_variance_, rtol=1e-9
    )
    projected = lazy.transform(X_lazy)
    assert isinstance(projected, da.Array)
    np.testing.assert_allclose(
        projected.compute(), eager.transform(X), rtol=1e-8, atol=1e-10
    )
    fitted = PCA(n_components=3, whiten=True, random_state=0)
    out = fitted.fit_transform(X_lazy)
    assert isinstance(out, da.Array)
    np.testing.assert_allclose(
        out.compute(),
        PCA(n_components=3, whiten=True, random_state=0).fit_transform(X),
        rtol=1e-8,
        atol=1e-10,
    )


def test_multivariate_gaussian_accepts_dask():
    # Not reduced lazily (the pair differences need a random pairing of all
    # rows): the array is loaded, and the fit is the in-memory fit.
    X = _data(n=4000, d=3)
    eager = MultivariateGaussian(random_state=0).fit(X)
    lazy = MultivariateGaussian(random_state=0).fit(da.from_array(X, chunks=1000))
    np.testing.assert_allclose(lazy.covariance_, eager.covariance_)


def test_float32_and_integer_blocks():
    X = _data()
    eager = GaussianCovariance(random_state=0).fit(X.astype(np.float32))
    lazy = GaussianCovariance(random_state=0).fit(
        da.from_array(X.astype(np.float32), chunks=(2000, 6))
    )
    _assert_same_fit(lazy, eager)
    integers = np.rint(X * 10).astype(np.int64)
    eager = GaussianCovariance(random_state=0).fit(integers.astype(np.float64))
    lazy = GaussianCovariance(random_state=0).fit(da.from_array(integers, chunks=2000))
    _assert_same_fit(lazy, eager)


@pytest.mark.parametrize("data_norm", [None, 2.0])
@pytest.mark.parametrize("Estimator", [GaussianCovariance, AdaptiveCovariance])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_blocks_raise_before_recording(Estimator, data_norm, bad):
    X = _data()
    X[4321, 2] = bad
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    estimator = Estimator(
        data_norm=data_norm, assume_centered=True, accountant=accountant
    )
    # The first pass checks each block as it reads it; the fit names itself.
    message = f"contains NaN or infinity: {Estimator.__name__}.fit needs finite"
    with pytest.raises(ValueError, match=message):
        estimator.fit(da.from_array(X, chunks=(1000, 6)))
    assert accountant.ledger == []  # the first pass comes before the record
    assert not hasattr(estimator, "covariance_")


def test_bad_dask_input():
    X = da.from_array(_data(), chunks=1000)
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array"):
        GaussianCovariance().fit(X[:, 0])
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        GaussianCovariance().fit(X[X[:, 0] > 0])
    with pytest.raises(ValueError, match="numeric"):
        GaussianCovariance().fit(da.from_array(np.full((50, 2), "a")))
    with pytest.raises(ValueError, match="minimum of 1"):
        GaussianCovariance().fit(X[:0])
    fitted = PCA(n_components=2, data_norm=2.0).fit(X)
    with pytest.raises(ValueError, match="features"):
        fitted.transform(X[:, :3])


def test_column_blocks_are_merged_into_row_blocks():
    X = _data(n=5000, d=6)
    eager = SeparateCovariance(random_state=1).fit(X)
    lazy = SeparateCovariance(random_state=1).fit(da.from_array(X, chunks=(700, 2)))
    _assert_same_fit(lazy, eager)
    big = da.zeros((100_000, 10_000), chunks=(100_000, 100))
    merged = rows_in_blocks(big)
    assert merged.numblocks[1] == 1
    # A block of whole rows no larger than Dask's default block size.
    assert max(merged.chunks[0]) * 10_000 * 8 <= 256 * 2**20


def test_pca_transform_dtype_is_the_computed_dtype():
    X = _data(n=2000, d=5)
    pca = PCA(n_components=2, data_norm=2.0, random_state=0).fit(X)
    lazy = pca.transform(da.from_array(X.astype(np.float32), chunks=500))
    assert lazy.dtype == lazy.compute().dtype
    np.testing.assert_allclose(
        lazy.compute(), pca.transform(X.astype(np.float32)), rtol=1e-6
    )


def test_blas_limit_of_overlapping_fits_is_restored():
    # Two threads inside the threaded-scheduler context at once: the limit is
    # set once and the original restored only when both have left.
    from threadpoolctl import threadpool_info, threadpool_limits

    from dpcov.utils._threads import single_threaded_blas

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    # Two BLAS threads to start from, whatever the test runner set.
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        first, second = single_threaded_blas(), single_threaded_blas()
        first.__enter__()
        second.__enter__()
        assert all(t == 1 for t in blas_threads())
        first.__exit__(None, None, None)
        assert all(t == 1 for t in blas_threads())  # the other fit still runs
        second.__exit__(None, None, None)
        assert blas_threads() == before


def test_binned_grams_beyond_their_memory_bound_read_twice(monkeypatch):
    # Where the binned Gram matrices' worst case exceeds BINNED_GRAM_BYTES
    # (a bound on d), the fit reads twice: counts, then the Gram matrix at
    # the radius; the same fit.
    from dpcov.utils._gram import _binned

    monkeypatch.setattr(_binned, "BINNED_GRAM_BYTES", 1000)
    X = _data(n=12000)
    for Estimator, reads in [(GaussianCovariance, 2), (AdaptiveCovariance, 3)]:
        source = _CountingRows(X)
        with dask.config.set(scheduler="threads"):  # counted in this process
            lazy = Estimator(random_state=3).fit(
                da.from_array(source, chunks=(1000, 6))
            )
        assert set(source.loads.values()) == {reads}
        _assert_same_fit(lazy, Estimator(random_state=3).fit(X))


def test_binned_reads_can_be_turned_off():
    # dpcov.config_context(binned_reads=False): a read per step, as in
    # memory (where reads are cheap beside the flops); the same fit.
    import dpcov

    X = _data(n=12000)
    for Estimator, reads in [(GaussianCovariance, 2), (AdaptiveCovariance, 4)]:
        source = _CountingRows(X)
        with (
            dask.config.set(scheduler="threads"),
            dpcov.config_context(binned_reads=False),
        ):
            lazy = Estimator(random_state=3).fit(
                da.from_array(source, chunks=(1000, 6))
            )
        assert set(source.loads.values()) == {reads}
        _assert_same_fit(lazy, Estimator(random_state=3).fit(X))
