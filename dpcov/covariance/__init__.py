"""Differentially private covariance estimators.

Drop-in replacements for :class:`sklearn.covariance.EmpiricalCovariance`: each
estimator subclasses it, so ``covariance_``, ``location_``, ``precision_``,
``score``, ``mahalanobis``, ``error_norm`` and ``get_precision`` behave as in
scikit-learn.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._adaptive import AdaptiveCovariance
from ._eigen_sampling import EigenSamplingCovariance
from ._gauss import GaussianCovariance
from ._nuclear import NuclearLaplaceCovariance
from ._separate import SeparateCovariance

__all__ = [
    "AdaptiveCovariance",
    "EigenSamplingCovariance",
    "GaussianCovariance",
    "NuclearLaplaceCovariance",
    "SeparateCovariance",
]
