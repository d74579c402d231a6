"""scikit-learn's estimator checks and dpcov's DP checks on every estimator.

The private names the estimators need come through the sklearn_compat module;
these checks exercise them (parameter validation, fit context).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import pytest
from sklearn.utils.estimator_checks import (
    check_param_validation,
    parametrize_with_checks,
)

from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA
from dpcov.utils.estimator_checks import parametrize_with_dp_checks

# The checks must not take the private-radius path (many of their datasets are
# too small for it), so every instance gets an explicit data_norm; the
# private-radius path is tested in tests/covariance/test_base.py.
INIT_PARAMS = {
    GaussianCovariance: dict(data_norm=10.0),
    SeparateCovariance: dict(data_norm=10.0),
    AdaptiveCovariance: dict(data_norm=10.0),
    EigenSamplingCovariance: dict(data_norm=10.0),
    NuclearLaplaceCovariance: dict(data_norm=10.0),
}


def _tested_estimators():
    for cls, params in INIT_PARAMS.items():
        yield cls(**params)
    yield PCA(data_norm=10.0)
    yield PCA(data_norm=10.0, covariance="top_k")


EXPECTED_FAILED_CHECKS = {}


def _expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS.get(type(estimator), {})


@parametrize_with_checks(
    list(_tested_estimators()), expected_failed_checks=_expected_failed_checks
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    "estimator", list(_tested_estimators()), ids=lambda est: type(est).__name__
)
def test_param_validation(estimator):
    check_param_validation(type(estimator).__name__, estimator)


@parametrize_with_dp_checks(list(_tested_estimators()))
def test_dp_conventions(estimator, check):
    check(estimator)
