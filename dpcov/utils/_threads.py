"""Who uses the cores during a fit: the passes' threads, or the BLAS's.

A fit has two kinds of work. The passes over the rows (``_gram``) are many
small, independent chunks: they run on as many threads as the BLAS would use,
each thread calling a single-threaded BLAS. The linear algebra on ``d x d``
matrices after the passes (eigendecompositions, projections, the precision)
is a few calls on small matrices, which a multi-threaded BLAS runs slower
than a single thread: measured on 2 cores (OpenBLAS 0.3.31), ``eigh`` of a
100 x 100 matrix took 136 ms on two threads and 0.7 ms on one, and every
``d`` up to 2000 was faster on one thread (1000: 0.60 s against 0.16 s).
:func:`small_matrix_blas` runs a fit that way: BLAS single-threaded for
``d <= SMALL_MATRIX_FEATURES``, the passes still on the threads the BLAS had
when the fit started.

``threadpoolctl``'s limits are process-wide: while such a fit (or a Dask
reduction) runs, BLAS calls from other threads of the process run
single-threaded too. Limits set by the user (``OPENBLAS_NUM_THREADS``,
``threadpoolctl.threadpool_limits``, joblib's in its workers) are read when
the fit starts and bound the passes' threads.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import threading
from contextlib import contextmanager
from contextvars import ContextVar

from threadpoolctl import ThreadpoolController

#: Fits with at most this many features run their d x d linear algebra on a
#: single-threaded BLAS.
SMALL_MATRIX_FEATURES = 1000

# The threads the passes of the current fit may use (None outside a fit:
# read the BLAS's).
_PASS_THREADS = ContextVar("dpcov_pass_threads", default=None)

_blas_lock = threading.Lock()
_blas_users = 0
_blas_limiter = None
_blas_controller = None


def _blas():
    # The BLAS libraries loaded in this process (NumPy's and SciPy's), found
    # once: threadpoolctl's scan of the loaded libraries costs milliseconds,
    # which a small fit would pay several times over. Their thread counts
    # are read live. (A BLAS loaded after the first fit is not seen.)
    global _blas_controller
    with _blas_lock:
        if _blas_controller is None:
            _blas_controller = ThreadpoolController().select(user_api="blas")
        return _blas_controller


def blas_threads():
    """The number of threads the BLAS behind NumPy would use now (at least 1)."""
    return max([1] + [lib.num_threads for lib in _blas().lib_controllers])


def pass_threads():
    """The threads a pass over the rows may use: the fit's, or the BLAS's."""
    threads = _PASS_THREADS.get()
    return blas_threads() if threads is None else threads


@contextmanager
def single_threaded_blas():
    """BLAS limited to one thread, for overlapping users in several threads.

    ``threadpool_limits`` is process-global and restores what it found on
    exit: two overlapping fits (in two threads) would leave BLAS at one
    thread. Count the users and let only the first set, and the last restore.
    """
    global _blas_users, _blas_limiter
    controller = _blas()
    with _blas_lock:
        if _blas_users == 0:
            _blas_limiter = controller.limit(limits=1)
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None


@contextmanager
def small_matrix_blas(n_features):
    """Run a fit: passes on the BLAS's threads, ``d x d`` algebra on one.

    The passes' thread count is read once, when the outermost fit starts
    (a nested fit, like PCA's covariance estimator, keeps it).
    """
    token = _PASS_THREADS.set(pass_threads())
    try:
        if n_features <= SMALL_MATRIX_FEATURES:
            with single_threaded_blas():
                yield
        else:
            yield
    finally:
        _PASS_THREADS.reset(token)
