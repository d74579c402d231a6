"""Array API input (PyTorch, array-api-strict), in a child process.

The checks are in tests/array_api_checks.py; they need SciPy's array API
support, which SciPy reads from ``SCIPY_ARRAY_API=1`` at its first import,
so they run in child pytest processes where it is set, in three shards (by
test function, balanced by their cost) that pytest-xdist can run side by
side. Skipped, saying why, where
scikit-learn's dispatch cannot run: SciPy before 1.14 (the floor lane's),
scikit-learn 1.6 without the array-api-compat package (1.7 and later vendor
it; the test extra installs it), or array-api-strict not installed.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import scipy
import sklearn
from sklearn.utils.fixes import parse_version

pytest.importorskip("array_api_strict")


def _release(module):
    return parse_version(module.__version__).release[:2]


def _array_api_compat_installed():
    try:
        import array_api_compat  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(
    _release(scipy) < (1, 14),
    reason="scikit-learn's array_api_dispatch needs SciPy >= 1.14 "
    "(with SCIPY_ARRAY_API=1)",
)
@pytest.mark.skipif(
    _release(sklearn) < (1, 7) and not _array_api_compat_installed(),
    reason="scikit-learn < 1.7 dispatches through the array-api-compat package, "
    "not installed (pip install array-api-compat; the test extra installs it)",
)
@pytest.mark.parametrize(
    "shard",
    [
        "scikit_learn_array_api_check",
        "covariance_fits_equal_the_numpy_fit",
        "not scikit_learn_array_api_check and not covariance_fits_equal_the_numpy_fit",
    ],
    ids=["scikit-learn's checks", "covariance", "the others"],
)
def test_array_api_checks_pass_in_a_child_process(shard):
    checks = Path(__file__).with_name("array_api_checks.py")
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    result = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            *(str(checks), "-k", shard),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
