"""dpcov: differentially private estimators that are scikit-learn citizens."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from . import accounting, covariance, datasets, decomposition, mechanisms, utils
from .covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from .decomposition import PCA

__version__ = "0.1.0.dev0"

__all__ = [
    "accounting",
    "covariance",
    "datasets",
    "decomposition",
    "mechanisms",
    "utils",
    "AdaptiveCovariance",
    "EigenSamplingCovariance",
    "GaussianCovariance",
    "NuclearLaplaceCovariance",
    "SeparateCovariance",
    "PCA",
    "__version__",
]
