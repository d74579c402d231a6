"""Private dimensionality reduction.

:class:`PCA` is a drop-in for :class:`sklearn.decomposition.PCA` whose
principal axes come from a private covariance estimate.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ..exceptions import NoHeavyCell, NoStableSubspace
from ._approximate_subspace import ApproximateSubspace
from ._exact_subspace import ExactSubspace
from ._pca import PCA

__all__ = [
    "ApproximateSubspace",
    "ExactSubspace",
    "NoHeavyCell",
    "NoStableSubspace",
    "PCA",
]
