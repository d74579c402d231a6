"""Tests of the rows, targets and fits that dpcov's estimator checks run on."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pytest

from dpcov.covariance import GaussianCovariance
from dpcov.decomposition import ExactSubspace
from dpcov.discriminant_analysis import LinearDiscriminantAnalysis
from dpcov.distributions import ProductBernoulli
from dpcov.linear_model import LinearRegression
from dpcov.utils._check_fits import (
    _check_data,
    _fit,
    _fitted_output,
    _targets,
    _Unreadable,
)


def test_rows_follow_what_the_estimator_declares():
    gaussian = _check_data(GaussianCovariance(), 50, scale=3.0)
    assert gaussian.shape == (50, 4)
    np.testing.assert_allclose(np.linalg.norm(gaussian, axis=1).max(), 3.0)
    binary = _check_data(ProductBernoulli(), 50, scale=3.0)
    assert set(np.unique(binary)) <= {0.0, 1.0}
    subspace = _check_data(ExactSubspace(), 50)
    assert np.linalg.matrix_rank(subspace) == 2
    np.testing.assert_array_equal(subspace, np.round(subspace))


def test_targets_come_from_public_parameters():
    lda = LinearDiscriminantAnalysis(classes=[0, 1, 2])
    np.testing.assert_array_equal(_targets(lda, 5), [0, 1, 2, 0, 1])
    y = _targets(LinearRegression(target_bounds=(-2.0, 6.0)), 100)
    assert y.shape == (100,) and np.all((y >= -2.0) & (y <= 6.0))
    assert _targets(GaussianCovariance(), 10) is None


def test_seeded_fits_give_the_same_fitted_output():
    X = _check_data(GaussianCovariance(), 200)
    a = _fitted_output(_fit(GaussianCovariance(data_norm=1.0, random_state=0), X))
    b = _fitted_output(_fit(GaussianCovariance(data_norm=1.0, random_state=0), X))
    assert a.ndim == 1 and a.size >= 4 * 4
    np.testing.assert_array_equal(a, b)


def test_unreadable_rows_fail_on_any_read():
    with pytest.raises(AssertionError, match="read the data"):
        np.asarray(_Unreadable())
    with pytest.raises(AssertionError, match="read the data"):
        len(_Unreadable())
