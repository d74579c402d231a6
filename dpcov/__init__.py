"""dpcov: differentially private estimators that are scikit-learn citizens."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from . import accounting, covariance, datasets, mechanisms, utils
from .covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance

__version__ = "0.1.0.dev0"

__all__ = [
    "accounting",
    "covariance",
    "datasets",
    "mechanisms",
    "utils",
    "AdaptiveCovariance",
    "GaussianCovariance",
    "SeparateCovariance",
    "__version__",
]
