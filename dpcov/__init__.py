"""dpcov: differentially private estimators that are scikit-learn citizens."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from . import accounting, covariance, mechanisms
from .covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance

__version__ = "0.1.0.dev0"

__all__ = [
    "accounting",
    "covariance",
    "mechanisms",
    "AdaptiveCovariance",
    "GaussianCovariance",
    "SeparateCovariance",
    "__version__",
]
