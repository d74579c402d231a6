"""Count the symmetric eigendecompositions a block of code runs.

For tests and benchmarks: a fit's cost at large ``d`` is its number of
``d x d`` eigendecompositions. The spy wraps every way dpcov, SciPy and
scikit-learn reach LAPACK's symmetric eigensolvers on the host: NumPy's
``eigh`` and ``eigvalsh``, SciPy's ``eigh`` (which its ``eigvalsh`` and
``pinvh`` call) and the direct ``dsyevr`` of
:func:`dpcov.mechanisms._projection._scipy_eigh`.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from contextlib import contextmanager
from dataclasses import dataclass
from unittest import mock

import numpy as np
import scipy.linalg
from scipy.linalg import _decomp, lapack


@dataclass(frozen=True)
class EigenCall:
    """One eigendecomposition: its entry point, size, whether it had vectors.

    ``partial``: only a range of the eigenpairs was asked for (SciPy's
    ``subset_by_index`` or ``subset_by_value``).
    """

    entry: str
    size: int
    vectors: bool
    partial: bool = False


def _spy(calls, entry, function, vectors):
    def wrapped(a, *args, **kwargs):
        with_vectors = vectors(args, kwargs)
        partial = any(
            kwargs.get(name) is not None
            for name in ("subset_by_index", "subset_by_value")
        )
        calls.append(EigenCall(entry, int(np.shape(a)[0]), with_vectors, partial))
        return function(a, *args, **kwargs)

    return wrapped


@contextmanager
def count_eigendecompositions():
    """Record every host symmetric eigendecomposition run inside the block.

    Yields
    ------
    calls : list of EigenCall
        Filled as the block runs.
    """
    calls = []
    scipy_eigh = _decomp.eigh

    def scipy_vectors(args, kwargs):
        return not kwargs.get("eigvals_only", args[1] if len(args) > 1 else False)

    def lapack_vectors(args, kwargs):
        return bool(kwargs.get("compute_v", 1))

    spied = _spy(calls, "scipy.linalg.eigh", scipy_eigh, scipy_vectors)
    patches = [
        mock.patch.object(
            np.linalg,
            "eigh",
            _spy(calls, "numpy.linalg.eigh", np.linalg.eigh, lambda a, k: True),
        ),
        mock.patch.object(
            np.linalg,
            "eigvalsh",
            _spy(
                calls, "numpy.linalg.eigvalsh", np.linalg.eigvalsh, lambda a, k: False
            ),
        ),
        mock.patch.object(_decomp, "eigh", spied),
        mock.patch.object(scipy.linalg, "eigh", spied),
        mock.patch.object(
            lapack,
            "dsyevr",
            _spy(calls, "lapack.dsyevr", lapack.dsyevr, lapack_vectors),
        ),
    ]
    for patch in patches:
        patch.start()
    try:
        yield calls
    finally:
        for patch in reversed(patches):
            patch.stop()
