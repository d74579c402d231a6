"""Shared fixtures: the global random seed of statistical tests."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import os

import pytest

# The array API checks run in a child process where SCIPY_ARRAY_API=1 (see
# tests/test_array_api.py); elsewhere they are not collected, not even for
# doctests.
if os.environ.get("SCIPY_ARRAY_API") != "1":
    collect_ignore = ["array_api_checks.py"]


def _import_sklearn_testing_without_array_api():
    """Import scikit-learn 1.6's test utilities where its array API is off.

    scikit-learn 1.6 needs the array-api-compat package to dispatch (1.7 and
    later vendor it), so the test extra installs it. Its test utilities then
    check the whole dispatch when imported and catch only an ImportError:
    with SciPy >= 1.14 and SCIPY_ARRAY_API unset (this process; the child of
    tests/test_array_api.py sets it) the import raises a RuntimeError, and
    with it every import of ``sklearn.utils.estimator_checks``. scikit-learn
    1.7 catches both; do as it does, for that import only.
    """
    import sklearn
    from sklearn.utils import _array_api
    from sklearn.utils.fixes import parse_version

    if (
        parse_version(sklearn.__version__).release[:2] >= (1, 7)
        or os.environ.get("SCIPY_ARRAY_API") == "1"
    ):
        return
    check = _array_api._check_array_api_dispatch

    def check_or_import_error(array_api_dispatch):
        try:
            check(array_api_dispatch)
        except RuntimeError as exc:
            raise ImportError(str(exc)) from exc

    _array_api._check_array_api_dispatch = check_or_import_error
    try:
        import sklearn.utils._testing  # noqa: F401
    finally:
        _array_api._check_array_api_dispatch = check


_import_sklearn_testing_without_array_api()


def pytest_configure(config):
    # Under pytest-xdist (python3 -m pytest -n auto) each worker gets its
    # share of the cores for BLAS and OpenMP: two workers with two BLAS
    # threads each on 2 cores make the small matrix products of the tests
    # several times slower. Set before SciPy's BLAS is loaded (and inherited
    # by child processes), and applied to what is loaded already.
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers is None:
        return
    threads = str(max(1, (os.cpu_count() or 1) // int(workers)))
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, threads)
    import scipy.linalg  # noqa: F401  (its own BLAS, limited below)
    from threadpoolctl import threadpool_limits

    config._dpcov_thread_limits = threadpool_limits(int(threads))


def _seeds():
    # DPCOV_TESTS_GLOBAL_RANDOM_SEED="all" sweeps seeds 0-99 (a scheduled job);
    # "a-b" a range; an int one seed. Default: 42.
    value = os.environ.get("DPCOV_TESTS_GLOBAL_RANDOM_SEED", "42")
    if value == "all":
        return list(range(100))
    if "-" in value:
        low, high = map(int, value.split("-"))
        return list(range(low, high + 1))
    return [int(value)]


@pytest.fixture(params=_seeds())
def global_random_seed(request):
    """Seed for statistical tests; tolerances are set so any seed passes w.h.p."""
    return request.param
