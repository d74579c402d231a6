"""The privacy contract of dpcov.base: one record, declared tags and hooks."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
import math
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.utils import get_tags

import dpcov
from dpcov.accounting import ApproxDP, GaussianDP, ProfileDP, PureDP
from dpcov.base import (
    PRIVACY_RECORD,
    PrivacyTags,
    PrivateEstimatorMixin,
    is_private,
    privacy_tags,
)
from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA, ApproximateSubspace, ExactSubspace
from dpcov.discriminant_analysis import LinearDiscriminantAnalysis
from dpcov.distributions import MultivariateGaussian, ProductBernoulli
from dpcov.impute import SimpleImputer
from dpcov.linear_model import LinearRegression, Ridge
from dpcov.model_selection import PrivateSearchCV
from dpcov.pipeline import PrivatePipeline
from dpcov.preprocessing import StandardScaler


def _rows(n=3000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return np.clip(rng.normal(size=(n, d)) / 2.0, -2.0, 2.0)


def _subspace_rows(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    basis = rng.integers(-3, 4, size=(2, 4))
    return (rng.integers(-9, 10, size=(n, 2)) @ basis).astype(float)


def _labels(n=3000):
    return np.arange(n) % 3


BOX = (-2.0, 2.0)

#: One fit of every private estimator, pipeline and search: (estimator, X, y).
FITS = {
    "GaussianCovariance": (GaussianCovariance(data_norm=2.0), _rows(), None),
    "SeparateCovariance": (SeparateCovariance(data_norm=2.0), _rows(), None),
    "AdaptiveCovariance": (AdaptiveCovariance(), _rows(), None),
    "EigenSamplingCovariance": (EigenSamplingCovariance(data_norm=2.0), _rows(), None),
    "NuclearLaplaceCovariance": (
        NuclearLaplaceCovariance(data_norm=2.0, delta=0.0),
        _rows(),
        None,
    ),
    "PCA": (PCA(n_components=2, data_norm=4.0), _rows(), None),
    "ExactSubspace": (ExactSubspace(n_components=2), _subspace_rows(), None),
    "ApproximateSubspace": (
        ApproximateSubspace(n_components=2),
        _subspace_rows(),
        None,
    ),
    "MultivariateGaussian": (
        MultivariateGaussian(min_variance=0.1, max_variance=1.0),
        _rows(n=20_000),
        None,
    ),
    "ProductBernoulli": (ProductBernoulli(), (_rows() > 0).astype(float), None),
    "StandardScaler": (StandardScaler(bounds=BOX), _rows(), None),
    "SimpleImputer": (SimpleImputer(bounds=BOX), _rows(), None),
    "LinearRegression": (
        LinearRegression(bounds=BOX, target_bounds=BOX),
        _rows(),
        _rows()[:, 0],
    ),
    "Ridge": (Ridge(bounds=BOX, target_bounds=BOX), _rows(), _rows()[:, 0]),
    "LinearDiscriminantAnalysis": (
        LinearDiscriminantAnalysis(bounds=BOX, classes=[0, 1, 2]),
        _rows(),
        _labels(),
    ),
    "PrivatePipeline": (
        PrivatePipeline(
            [("scale", StandardScaler(bounds=BOX)), ("cov", SeparateCovariance())],
            epsilon=1.0,
            delta=1e-6,
        ),
        _rows(),
        None,
    ),
    "PrivateSearchCV": (
        PrivateSearchCV(
            SeparateCovariance(data_norm=2.0),
            {"data_norm": [1.0, 2.0]},
            score_norm=2.0,
        ),
        _rows(),
        None,
    ),
}


def _fitted(name):
    estimator, X, y = FITS[name]
    estimator = clone(estimator).set_params(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded, noise-dominated: not tested here
        return estimator.fit(X, y)


def _private_classes():
    # Every public, concrete private class of dpcov.
    found = set()
    for module in (
        dpcov.covariance,
        dpcov.decomposition,
        dpcov.discriminant_analysis,
        dpcov.distributions,
        dpcov.impute,
        dpcov.linear_model,
        dpcov.model_selection,
        dpcov.pipeline,
        dpcov.preprocessing,
    ):
        for name in module.__all__:
            value = getattr(module, name)
            if (
                inspect.isclass(value)
                and issubclass(value, PrivateEstimatorMixin)
                and not inspect.isabstract(value)
            ):
                found.add(name)
    return found


def test_every_private_class_is_fitted_here():
    assert _private_classes() == set(FITS)


@pytest.mark.parametrize("name", sorted(FITS))
def test_every_fit_writes_the_same_record(name):
    # One call (record_privacy) writes the record: the same six attributes
    # on every private estimator, pipeline and search, consistent with one
    # another.
    fitted = _fitted(name)
    for attribute in PRIVACY_RECORD:
        assert hasattr(fitted, attribute), attribute
    guarantee = fitted.guarantee_
    assert isinstance(fitted.budget_split_, dict)
    assert fitted.noise_sampler_ == "numpy"
    if isinstance(guarantee, PureDP):
        assert fitted.epsilon_spent_ == guarantee.epsilon
        assert fitted.delta_spent_ == 0.0
        assert fitted.rho_spent_ == guarantee.to_zcdp().rho
    elif isinstance(guarantee, ApproxDP):
        assert (fitted.epsilon_spent_, fitted.delta_spent_) == (
            guarantee.epsilon,
            guarantee.delta,
        )
        assert fitted.rho_spent_ == (math.inf if guarantee.delta > 0 else None)
    elif isinstance(guarantee, GaussianDP | ProfileDP):
        # On the exact curve (at most the ask); rho the larger one it runs at.
        assert fitted.epsilon_spent_ <= 1.0
        assert fitted.epsilon_spent_ == pytest.approx(1.0, rel=1e-3)
        assert fitted.delta_spent_ == 1e-6
        assert fitted.rho_spent_ == guarantee.to_zcdp().rho
    else:
        assert fitted.rho_spent_ == guarantee.rho
        assert 0.0 < fitted.delta_spent_ < 1.0


@pytest.mark.parametrize(
    "estimator, expected",
    [
        (
            GaussianCovariance(),
            PrivacyTags(default_score="frobenius", checks_before_spending=True),
        ),
        (
            PCA(),
            PrivacyTags(
                default_score="pca_log_likelihood", checks_before_spending=True
            ),
        ),
        (
            ExactSubspace(),
            PrivacyTags(
                guarantee="approx_dp",
                deterministic_release=True,
                default_score="captured_fraction",
            ),
        ),
        (
            ApproximateSubspace(),
            PrivacyTags(guarantee="approx_dp", default_score="captured_fraction"),
        ),
        (
            MultivariateGaussian(),
            PrivacyTags(guarantee="zcdp", default_score="frobenius"),
        ),
        (
            ProductBernoulli(),
            PrivacyTags(
                guarantee="zcdp", binary_input=True, default_score="log_likelihood"
            ),
        ),
        (
            LinearRegression(),
            PrivacyTags(default_score="neg_squared_error", checks_before_spending=True),
        ),
        (
            LinearDiscriminantAnalysis(),
            PrivacyTags(default_score="accuracy", checks_before_spending=True),
        ),
        (StandardScaler(), PrivacyTags(checks_before_spending=True)),
        (
            PrivatePipeline([("cov", GaussianCovariance())]),
            PrivacyTags(checks_before_spending=True),
        ),
    ],
)
def test_privacy_tags(estimator, expected):
    assert privacy_tags(estimator) == expected
    # scikit-learn's own tags are kept beside them.
    assert get_tags(estimator).privacy == expected
    assert get_tags(estimator).input_tags.two_d_array


def test_is_private():
    assert is_private(GaussianCovariance())
    assert is_private(PrivatePipeline([("cov", GaussianCovariance())]))
    assert not is_private(FrozenEstimator(GaussianCovariance()))
    assert not is_private(GaussianCovariance)  # a class, not an estimator
    assert not is_private(np.zeros(3))


def test_hooks_have_defaults():
    # What a composite may call on any private step, without probing.
    estimator = MultivariateGaussian()
    assert estimator._check_before_spending(10, None, n_features=3) is None
    assert estimator._output_range() is None
    assert estimator._check_composition() is None
    assert ExactSubspace()._supports_hardened_noise() is False  # the default
