"""dpcov: differentially private estimators that are scikit-learn citizens."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from . import (
    accounting,
    base,
    covariance,
    datasets,
    decomposition,
    discriminant_analysis,
    distributions,
    impute,
    linear_model,
    mechanisms,
    model_selection,
    pipeline,
    preprocessing,
    utils,
)
from ._config import config_context, get_config, set_config
from ._version import __version__
from .covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from .decomposition import PCA
from .distributions import MultivariateGaussian
from .model_selection import PrivateSearchCV
from .preprocessing import BoundsScaler, StandardScaler

__all__ = [
    "accounting",
    "base",
    "covariance",
    "datasets",
    "decomposition",
    "discriminant_analysis",
    "distributions",
    "impute",
    "linear_model",
    "mechanisms",
    "model_selection",
    "pipeline",
    "preprocessing",
    "utils",
    "AdaptiveCovariance",
    "EigenSamplingCovariance",
    "GaussianCovariance",
    "NuclearLaplaceCovariance",
    "SeparateCovariance",
    "PCA",
    "MultivariateGaussian",
    "PrivateSearchCV",
    "BoundsScaler",
    "StandardScaler",
    "config_context",
    "get_config",
    "set_config",
    "__version__",
]
