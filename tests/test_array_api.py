"""Array API input (PyTorch, array-api-strict), in a child process.

The checks are in tests/array_api_checks.py; they need SciPy's array API
support, which SciPy reads from ``SCIPY_ARRAY_API=1`` at its first import,
so they run in a child pytest where it is set. Skipped, saying why, where
scikit-learn's dispatch cannot run: SciPy before 1.14 (the floor lane's), or
array-api-strict not installed.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import scipy

pytest.importorskip("array_api_strict")


def _scipy_supports_array_api():
    major, minor = (int(part) for part in scipy.__version__.split(".")[:2])
    return (major, minor) >= (1, 14)


@pytest.mark.skipif(
    not _scipy_supports_array_api(),
    reason="scikit-learn's array_api_dispatch needs SciPy >= 1.14 "
    "(with SCIPY_ARRAY_API=1)",
)
def test_array_api_checks_pass_in_a_child_process():
    checks = Path(__file__).with_name("array_api_checks.py")
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(checks)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
