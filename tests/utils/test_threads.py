"""Who uses the cores during a fit: the passes' threads or the BLAS's."""

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from dpcov.covariance import GaussianCovariance
from dpcov.utils import _threads
from dpcov.utils._threads import (
    SMALL_MATRIX_FEATURES,
    blas_threads,
    pass_threads,
    small_matrix_blas,
)


def _blas_counts():
    info = threadpool_info()
    return [lib["num_threads"] for lib in info if lib["user_api"] == "blas"]


def test_small_matrices_run_single_threaded_and_passes_keep_the_threads():
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_counts()
        with small_matrix_blas(10):
            # The d x d algebra runs on one thread; the passes may use the
            # two threads the BLAS had when the fit started, even nested.
            assert set(_blas_counts()) == {1}
            assert pass_threads() == 2
            with small_matrix_blas(10):
                assert pass_threads() == 2
            assert set(_blas_counts()) == {1}
        assert _blas_counts() == before
        # Large d: the BLAS keeps its threads.
        with small_matrix_blas(SMALL_MATRIX_FEATURES + 1):
            assert _blas_counts() == before
        assert pass_threads() == blas_threads() == 2


def test_user_limits_bound_the_passes():
    with threadpool_limits(limits=1, user_api="blas"), small_matrix_blas(10):
        assert pass_threads() == 1


def test_blas_libraries_are_found_once(monkeypatch):
    # threadpoolctl's scan of the loaded libraries costs milliseconds: a fit
    # must not repeat it (a small fit would cost several times as much).
    _threads._blas()
    scans = []
    monkeypatch.setattr(
        _threads, "ThreadpoolController", lambda *args, **kwargs: scans.append(1)
    )
    X = np.random.default_rng(0).normal(size=(50, 3))
    for _ in range(3):
        GaussianCovariance(epsilon=np.inf, data_norm=10.0).fit(X)
    assert scans == []
