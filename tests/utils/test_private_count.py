"""The released count of units under add/remove neighbours."""

import math
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from dpcov.accounting import ZCDP, BudgetAccountant, PureDP
from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.decomposition import PCA
from dpcov.discriminant_analysis import LinearDiscriminantAnalysis
from dpcov.exceptions import NoPrivateResult, TooFewUnits
from dpcov.impute import SimpleImputer
from dpcov.linear_model import LinearRegression
from dpcov.preprocessing import StandardScaler
from dpcov.utils._gram._units import CountedRows, UnitRows
from dpcov.utils._private_count import (
    COUNT_SHARE,
    release_count,
    split_count,
)
from tests._privacy_checks import recorded_releases


def test_the_count_takes_its_share_and_the_rest_the_remainder():
    count, rest = split_count(ZCDP(0.8))
    assert count.rho == pytest.approx(COUNT_SHARE * 0.8)
    assert rest.rho == pytest.approx((1 - COUNT_SHARE) * 0.8)
    count, rest = split_count(PureDP(2.0))
    assert count.epsilon + rest.epsilon <= 2.0


def test_the_count_is_released_with_sensitivity_one_rounded_and_at_least_one():
    # Gaussian noise of s.d. 1 / sqrt(2 rho) on the exact count (the closed
    # form at sensitivity 1), rounded; a count far below 1 comes back as 1.
    X = np.zeros((50, 2))
    with recorded_releases() as releases:
        wrapped, count = release_count(X, ZCDP(0.5), np.random.default_rng(0))
    (release,) = releases
    assert release.value == 50 and release.scale == pytest.approx(1.0)
    assert count == max(round(float(release.noisy)), 1)
    assert isinstance(wrapped, CountedRows) and wrapped.shape == (count, 2)
    _, tiny = release_count(np.zeros((1, 2)), ZCDP(1e-8), np.random.default_rng(1))
    assert tiny >= 1
    # Persons: the count is of persons, and UnitRows reports it.
    units = UnitRows(X, np.arange(50), np.array([0, 20, 50]))
    with recorded_releases() as releases:
        wrapped, count = release_count(units, ZCDP(0.5), np.random.default_rng(2))
    assert releases[0].value == 2 and wrapped.shape == (count, 2)
    assert math.isclose(releases[0].scale, 1.0)


_EMPTY_TABLE_ESTIMATORS = [
    GaussianCovariance(bounds=(-1.0, 1.0)),
    SeparateCovariance(bounds=(-1.0, 1.0)),
    AdaptiveCovariance(bounds=(-1.0, 1.0)),
    PCA(n_components=1, bounds=(-1.0, 1.0)),
    StandardScaler(bounds=(-1.0, 1.0)),
    SimpleImputer(bounds=(-1.0, 1.0)),
    SimpleImputer(bounds=(-1.0, 1.0), strategy="median"),
    LinearRegression(bounds=(-1.0, 1.0), target_bounds=(-1.0, 1.0)),
    LinearDiscriminantAnalysis(data_norm=1.0, classes=[0, 1]),
    LinearDiscriminantAnalysis(bounds=(-1.0, 1.0), classes=[0, 1]),
]


def _fit_add_remove(estimator, n, persons, **params):
    # The estimator under add/remove on n rows (n persons of one row each).
    model = clone(estimator).set_params(neighbours="add_remove", **params)
    fit_params = {}
    if persons:
        model.set_params(max_rows_per_group=2)
        fit_params["groups"] = np.arange(n)
    X, y = np.full((n, 2), 0.5), np.zeros(n, dtype=int)
    supervised = isinstance(model, LinearRegression | LinearDiscriminantAnalysis)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if supervised:
            return model.fit(X, y, **fit_params)
        return model.fit(X, **fit_params)


@pytest.mark.parametrize("persons", [False, True])
@pytest.mark.parametrize("estimator", _EMPTY_TABLE_ESTIMATORS, ids=repr)
def test_an_empty_table_under_add_remove_is_fitted_as_a_one_row_table(
    estimator, persons
):
    # An empty table is an add/remove neighbour of a one-row table: it is not
    # refused before anything is released (that refusal would say the table
    # is empty). Its fit releases its count first, as the one-row table's
    # does (the same scale, on 0 against 1), and ends the same way: a release
    # or a refusal after the count (TooFewUnits, a private "no result").
    outcomes = []
    for n in (0, 1):
        with recorded_releases() as releases:
            try:
                _fit_add_remove(estimator, n, persons, epsilon=1.0, random_state=3)
                outcome = "released"
            except TooFewUnits:
                outcome = "too few"
        if isinstance(estimator, SimpleImputer | LinearRegression):
            # With public bounds these read no count (their sums need none):
            # the same releases, at the same scales.
            outcomes.append((outcome, [release.scale for release in releases]))
            continue
        count = releases[0]
        assert count.value == n and count.sensitivity in (None, 1.0)
        outcomes.append((outcome, count.scale))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("estimator", _EMPTY_TABLE_ESTIMATORS, ids=repr)
def test_an_empty_table_whose_released_count_is_large_is_fitted_through(
    estimator, monkeypatch
):
    # The rest of the fit runs on no row when the noisy count says there are
    # many (a draw of the count's noise, forced here): sums of nothing,
    # scores of nothing, no crash (which would be an outcome outside the
    # guarantee).
    class Large:
        scale = 1.0

        def add(self, value, rng):
            return value + 1e5

    monkeypatch.setattr(
        "dpcov.utils._private_count.calibrate_additive", lambda *a, **k: Large()
    )
    for persons in (False, True):
        model = _fit_add_remove(estimator, 0, persons, epsilon=1.0, random_state=0)
        assert model.neighbours_ == "add_remove"


def test_a_refusal_after_the_count_is_a_private_no_result():
    # Too few units by the released count (a private radius at a small
    # budget): TooFewUnits, both a ValueError (as the refusal of too few rows
    # is) and a NoPrivateResult (a search scores it as no result); it states
    # the released count, and the fit was recorded before it.
    ledger = BudgetAccountant(relation="add_remove")
    model = GaussianCovariance(neighbours="add_remove", accountant=ledger)
    with pytest.raises(TooFewUnits, match=r"released \(noisy\) count is \d+") as info:
        model.fit(np.zeros((5, 3)))
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, NoPrivateResult)
    assert len(ledger.relations) == 1
