"""A person with several rows as the privacy unit: noise, neighbours, routing."""

import math

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GroupKFold, cross_val_score

from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA
from tests._privacy_checks import (
    fitted_mechanism,
    gaussian_shift,
    laplace_event_loss,
    outcome,
    recorded_releases,
)


def _visits(seed, n_persons=60, most=12, d=3):
    """Rows of persons with 1..most rows each, in no order, norms up to ~3."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, most + 1, n_persons)
    groups = rng.permutation(np.repeat(np.arange(n_persons), counts))
    person = rng.normal(size=(n_persons, d))
    X = person[groups] + 0.5 * rng.normal(size=(groups.size, d))
    return X, groups


def _person_moment(X, groups, k, R):
    """The mean over persons of their rows' averaged outer products (all
    rows kept: no person above k here), each person clipped as a whole."""
    total = 0.0
    labels = np.unique(groups)
    for label in labels:
        rows = X[groups == label]
        assert len(rows) <= k
        rho = math.sqrt(np.mean(np.sum(rows**2, axis=1)))
        rows = rows * min(1.0, R / rho)
        total = total + rows.T @ rows / len(rows)
    return total / len(labels)


def test_gaussian_noise_scale_per_person_closed_form():
    # GaussCov over m persons: the release is the mean over persons of
    # their averaged, clipped outer products plus Gaussian noise of s.d.
    # R**2 / (m sqrt(rho)) per upper entry (Dong, Liang and Yi 2022, Sec.
    # 3.1, with m persons for n rows: a person's term is PSD of trace <=
    # R**2, whose Frobenius distance to another is <= sqrt(2) R**2). A scale
    # from the number of rows (about 6.5 m here) or from a k-row
    # sensitivity (k times larger) fails the equality; one fit is exact.
    X, groups = _visits(0)
    m, R, rho, k = 60, 1.5, 0.5, 12
    with recorded_releases() as releases:
        GaussianCovariance(
            rho=rho,
            data_norm=R,
            assume_centered=True,
            max_rows_per_group=k,
            random_state=0,
        ).fit(X, groups=groups)
    release = releases[0]
    assert release.law == "gaussian"
    assert release.scale == pytest.approx(R**2 / (m * math.sqrt(rho)), rel=1e-12)
    np.testing.assert_allclose(
        release.value, _person_moment(X, groups, k, R), rtol=1e-12, atol=1e-15
    )


def test_laplace_noise_scale_per_person_closed_form():
    # LapCov: scale sqrt(d (d + 3) / 2) R**2 / (m epsilon) (the estimator's
    # Notes: the L1 bound of the upper triangle, from its Frobenius bound).
    X, groups = _visits(1)
    m, d, R, eps = 60, 3, 1.5, 0.7
    with recorded_releases() as releases:
        GaussianCovariance(
            epsilon=eps,
            delta=0.0,
            data_norm=R,
            assume_centered=True,
            max_rows_per_group=12,
            random_state=0,
        ).fit(X, groups=groups)
    assert releases[0].law == "laplace"
    expected = math.sqrt(d * (d + 3) / 2) * R**2 / (m * eps)
    assert releases[0].scale == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "estimator, n_public",
    [
        (GaussianCovariance(), None),
        (SeparateCovariance(), None),
        (EigenSamplingCovariance(delta=0.0), None),
        (NuclearLaplaceCovariance(delta=0.0), None),
        # The trace bound; the later scales follow the private threshold,
        # which differs between the two tables.
        (AdaptiveCovariance(), 1),
    ],
    ids=lambda p: type(p).__name__ if not isinstance(p, int | None) else "",
)
def test_every_scale_is_the_row_fit_s_on_m_rows(estimator, n_public):
    # Each mechanism's calibration reads the number of units and the norm
    # bound only: a fit over m persons draws every noise at the scale of a
    # row-level fit on m rows. First the private mean (2 r / m), then, about
    # the origin and without shrinkage (whose simulations follow the
    # release), every release of the mechanism.
    X, groups = _visits(2)
    Z = np.random.default_rng(3).normal(size=(60, 3))
    for params, first in [
        (dict(assume_centered=False), 1),
        (dict(assume_centered=True, shrinkage=None), n_public),
    ]:
        params.update(data_norm=2.0, random_state=0)
        with recorded_releases() as persons:
            by_person = clone(estimator).set_params(max_rows_per_group=5, **params)
            by_person.fit(X, groups=groups)
        with recorded_releases() as rows:
            by_row = clone(estimator).set_params(**params).fit(Z)
        # The nuclear-norm noise is no additive draw: its rate is recorded.
        if hasattr(by_row, "noise_rate_") and params["assume_centered"]:
            assert by_person.noise_rate_ == pytest.approx(by_row.noise_rate_, rel=1e-12)
        persons, rows = persons[:first], rows[:first]
        assert len(persons) == len(rows)
        assert [r.law for r in persons] == [r.law for r in rows]
        np.testing.assert_allclose(
            [r.scale for r in persons], [r.scale for r in rows], rtol=1e-12
        )


def _person_pair(n_persons, d, R, x, y, k):
    """Neighbours: person 0 has one row x, or k rows y; the others, one row
    each, the same on both sides."""
    rng = np.random.default_rng(5)
    others = rng.normal(size=(n_persons - 1, d))
    others *= 0.5 * R / np.linalg.norm(others, axis=1, keepdims=True)
    a = np.vstack([x, others])
    b = np.vstack([np.tile(y, (k, 1)), others])
    groups_a = np.arange(n_persons)
    groups_b = np.r_[np.zeros(k - 1, int), groups_a]
    return (a, groups_a), (b, groups_b)


def test_gaussian_person_neighbours_privacy_loss(global_random_seed):
    # Person 0 replaced, its number of rows with it: one row R e1 against
    # k = 20 rows R e2. Averaged, the terms are R**2 e1e1^T and R**2 e2e2^T,
    # a Frobenius distance of sqrt(2) R**2 / m between the statistics (the
    # bound, attained). Projected on (e1e1^T - e2e2^T) / sqrt(2), the
    # releases are N(c, s**2) and N(c - Delta, s**2) with Delta / s =
    # sqrt(2 rho) = 1 for a rho-zCDP fit. Half the noise gives 2; a sum over
    # the person's rows (a k-row sensitivity, not averaged) gives 20.
    m, d, R, rho, k, reps = 10, 3, 1.0, 0.5, 20, 3000
    e1, e2 = np.eye(d)[0] * R, np.eye(d)[1] * R
    pair = _person_pair(m, d, R, e1, e2, k)
    rng = np.random.default_rng(global_random_seed)

    def stat(X, groups):
        estimator = GaussianCovariance(
            rho=rho,
            data_norm=R,
            assume_centered=True,
            max_rows_per_group=k,
            store_raw=True,
            random_state=rng,
        )
        draw = fitted_mechanism(estimator, X, groups=groups)
        raws = [draw(rng).raw for _ in range(reps)]
        return [(raw[0, 0] - raw[1, 1]) / math.sqrt(2) for raw in raws]

    shift, se = gaussian_shift(stat(*pair[0]), stat(*pair[1]))
    assert shift == pytest.approx(math.sqrt(2 * rho), abs=5 * se)


def test_laplace_person_neighbours_privacy_loss(global_random_seed):
    # Pure DP, the L1 worst case at d = 2 (as for rows in test_gauss.py):
    # x and y orthogonal at angle atan2(1, 2) / 2 from the axes; person 0
    # has one row x or k = 7 rows y. On the event where each upper entry
    # lies beyond both neighbours' values, the density ratio is exactly
    # exp(|D|_1 / b) = e^eps; half the scale gives 2 eps.
    m, R, eps, k, reps = 10, 1.0, 2.0, 7, 8000
    angle = math.atan2(1.0, 2.0) / 2
    x = R * np.array([math.cos(angle), math.sin(angle)])
    y = R * np.array([-math.sin(angle), math.cos(angle)])
    pair = _person_pair(m, 2, R, x, y, k)
    sa = _person_moment(*pair[0], k, R)
    sb = _person_moment(*pair[1], k, R)
    assert np.abs(np.triu(sa - sb)).sum() == pytest.approx(math.sqrt(5) * R**2 / m)
    rng = np.random.default_rng(global_random_seed)

    def events(X, groups):
        estimator = GaussianCovariance(
            epsilon=eps,
            delta=0.0,
            data_norm=R,
            assume_centered=True,
            max_rows_per_group=k,
            store_raw=True,
            random_state=rng,
        )
        draw = fitted_mechanism(estimator, X, groups=groups)
        raws = np.array([draw(rng).raw for _ in range(reps)])
        return (
            (raws[:, 0, 0] > sa[0, 0])
            & (raws[:, 0, 1] > sa[0, 1])
            & (raws[:, 1, 1] < sa[1, 1])
        )

    loss, se = laplace_event_loss(events(*pair[0]), events(*pair[1]))
    assert loss == pytest.approx(eps, abs=5 * se)


@pytest.mark.parametrize("estimator", [GaussianCovariance(), AdaptiveCovariance()])
def test_an_extreme_person_gives_the_same_outcome(estimator):
    # One person's 30 rows of entries 1e300 (squared norms beyond float64)
    # against one ordinary row, with the private radius: both fit, with the
    # same warnings (the release-based ones aside).
    X, groups = _visits(4, n_persons=400)
    far = np.vstack([np.full((30, 3), 1e300), X])
    far_groups = np.r_[np.full(30, -1), groups]
    near = np.vstack([np.ones((1, 3)), X])
    near_groups = np.r_[-1, groups]
    seen = [
        outcome(
            lambda X=X, g=g: estimator.set_params(
                max_rows_per_group=40, epsilon=4.0, random_state=0
            ).fit(X, groups=g)
        )
        for X, g in [(far, far_groups), (near, near_groups)]
    ]
    assert seen[0] == seen[1]
    assert seen[0][0] == "fit"


def test_groups_and_the_bound_come_together():
    X, groups = _visits(6)
    with pytest.raises(ValueError, match="max_rows_per_group is None"):
        GaussianCovariance(data_norm=1.0).fit(X, groups=groups)
    with pytest.raises(ValueError, match="metadata routing"):
        GaussianCovariance(data_norm=1.0, max_rows_per_group=3).fit(X)
    with pytest.raises(ValueError, match="one label per row"):
        GaussianCovariance(data_norm=1.0, max_rows_per_group=3).fit(
            X, groups=groups[1:]
        )
    # The private ranges count persons: too few of them is refused, with the
    # minimum only (no count of persons or rows).
    with pytest.raises(ValueError, match="persons at this budget") as error:
        GaussianCovariance(bounds="private", max_rows_per_group=3).fit(X, groups=groups)
    assert "60" not in str(error.value) and str(len(X)) not in str(error.value)


def test_groups_reach_fit_by_metadata_routing_only():
    # cross_val_score with GroupKFold: without routing the groups go to the
    # splitter alone, and the fit refuses (rather than fitting rows); with
    # routing and set_fit_request(groups=True) each fold fits persons.
    X, groups = _visits(7, n_persons=300)
    estimator = GaussianCovariance(epsilon=4.0, data_norm=4.0, max_rows_per_group=5)
    with pytest.raises(ValueError, match="metadata routing"):
        cross_val_score(
            estimator, X, groups=groups, cv=GroupKFold(3), error_score="raise"
        )
    with sklearn.config_context(enable_metadata_routing=True):
        routed = estimator.set_fit_request(groups=True)
        scores = cross_val_score(
            routed, X, params={"groups": groups}, cv=GroupKFold(3), error_score="raise"
        )
    assert np.isfinite(scores).all()


def test_a_refusal_for_too_few_persons_states_no_count():
    # 100 persons of 20 rows: below the private radius's minimum (255 at
    # (1, 1e-6) on the composed curve); the message says persons and states
    # neither the number of persons nor of rows.
    X = np.random.default_rng(8).normal(size=(2000, 3))
    groups = np.repeat(np.arange(100), 20)
    with pytest.raises(ValueError, match="at least 255 persons") as error:
        GaussianCovariance(max_rows_per_group=5).fit(X, groups=groups)
    assert "100" not in str(error.value) and "2000" not in str(error.value)
    assert "samples" not in str(error.value)


def test_the_fit_records_its_unit():
    X, groups = _visits(9)
    params = dict(data_norm=2.0, random_state=0)
    with pytest.warns(Warning):
        by_person = GaussianCovariance(max_rows_per_group=4, **params)
        by_person.fit(X, groups=groups)
        by_row = GaussianCovariance(**params).fit(X)
    assert by_person.privacy_unit_ == "person" and by_row.privacy_unit_ == "row"


def test_add_remove_releases_a_count_then_normalises_by_it():
    # neighbours="add_remove": the first release is the number of rows, with
    # sensitivity 1 at 1/16 of rho (s.d. 1 / sqrt(2 rho / 16)); the
    # covariance release is the exact sum over the rows divided by the
    # released count m', with the replace-one scale at m' (R**2 / (m'
    # sqrt(rho'))) for the rest rho' = 15 rho / 16. A fit that divided by
    # the exact count, or calibrated at it, fails the equalities.
    X = np.random.default_rng(10).normal(size=(3000, 3))
    R, rho = 2.0, 0.5
    with recorded_releases() as releases:
        est = GaussianCovariance(
            rho=rho,
            data_norm=R,
            assume_centered=True,
            neighbours="add_remove",
            random_state=0,
        ).fit(X)
    count, matrix = releases[0], releases[1]
    assert count.value == 3000 and count.law == "gaussian"
    assert count.scale == pytest.approx(1 / math.sqrt(2 * rho / 16), rel=1e-12)
    released = est.released_count_
    assert released == max(round(float(count.noisy)), 1) and released != 3000
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    clipped = X * np.minimum(1.0, R / norms)
    np.testing.assert_allclose(matrix.value, clipped.T @ clipped / released, rtol=1e-12)
    expected = R**2 / (released * math.sqrt(15 * rho / 16))
    assert matrix.scale == pytest.approx(expected, rel=1e-12)
    assert est.neighbours_ == "add_remove"
    assert set(est.budget_split_) == {"count", "covariance"}


def test_gaussian_add_remove_neighbours_privacy_loss(global_random_seed):
    # One row R e1 added. On the sum (the release times the released count,
    # whose law is the exact sum plus Gaussian noise of s.d. R**2 /
    # sqrt(rho') per entry, whatever the count), entry (0, 0) moves by R**2:
    # a standardised shift of sqrt(rho'), the replace-one calibration's
    # sqrt(2 rho') at the add/remove sensitivity R**2 (1/sqrt(2) of the
    # replace one's sqrt(2) R**2). Half the noise gives twice the shift.
    # (Dividing by the exact count instead of the released one is caught by
    # test_add_remove_releases_a_count_then_normalises_by_it.)
    n, d, R, rho, reps = 40, 3, 1.0, 0.5, 3000
    rng = np.random.default_rng(5)
    base = rng.normal(size=(n, d))
    base *= 0.5 * R / np.linalg.norm(base, axis=1, keepdims=True)
    pair = [base, np.vstack([base, R * np.eye(d)[0]])]
    rng = np.random.default_rng(global_random_seed)

    def stat(X):
        estimator = GaussianCovariance(
            rho=rho,
            data_norm=R,
            assume_centered=True,
            neighbours="add_remove",
            store_raw=True,
            random_state=rng,
        )
        draw = fitted_mechanism(estimator, X)
        released = estimator.released_count_
        return [draw(rng).raw[0, 0] * released for _ in range(reps)]

    shift, se = gaussian_shift(stat(pair[0]), stat(pair[1]))
    assert shift == pytest.approx(math.sqrt(15 * rho / 16), abs=5 * se)


def test_add_remove_refusal_comes_after_the_count_and_is_recorded():
    # Too few rows for the private radius: known only from the released
    # count, so the refusal comes after the fit is recorded, and its message
    # names the released count as such.
    from dpcov.accounting import BudgetAccountant
    from dpcov.exceptions import BudgetExceeded

    X = np.random.default_rng(11).normal(size=(100, 3))
    accountant = BudgetAccountant(relation="add_remove")
    with pytest.raises(ValueError, match=r"the released \(noisy\) count is \d+"):
        GaussianCovariance(
            neighbours="add_remove", accountant=accountant, random_state=0
        ).fit(X)
    assert len(accountant) == 1 and accountant.relations == ["add_remove"]
    with pytest.raises(BudgetExceeded, match="replace-one neighbours only"):
        GaussianCovariance(data_norm=1.0, accountant=accountant).fit(X)


def test_pca_add_remove_states_the_released_count():
    X = np.random.default_rng(12).normal(size=(5000, 4)) * [2.0, 1.0, 0.5, 0.2]
    with pytest.warns(Warning):
        pca = PCA(2, epsilon=2.0, neighbours="add_remove", random_state=0).fit(X)
    inner = pca.covariance_estimator_
    assert pca.n_samples_ == inner.released_count_ != 5000
    assert pca.neighbours_ == "add_remove"


@pytest.mark.parametrize("estimator", [GaussianCovariance(), AdaptiveCovariance()])
def test_add_remove_over_persons_counts_persons(estimator):
    # With groups, the released count is of persons (value m, sensitivity
    # 1), and every later release reads it: the private mean's sum over
    # persons divided by it, at the replace-one scale 2 r / m' of the mean,
    # and (AdaptiveCovariance) the trace bound at R**2 / m'.
    from dpcov.mechanisms._sensitivity import ball_mean_sensitivities

    X, groups = _visits(13, n_persons=400, most=5)  # every row kept
    with recorded_releases() as releases:
        est = clone(estimator).set_params(
            rho=0.5,
            data_norm=2.0,
            max_rows_per_group=5,
            neighbours="add_remove",
            random_state=0,
        )
        est.fit(X, groups=groups)
    count, mean = releases[0], releases[1]
    assert count.value == 400
    released = est.released_count_
    l2, _ = ball_mean_sensitivities(2.0, released, 3)
    mean_budget = est.budget_split_["mean"].rho
    assert mean.scale == pytest.approx(l2 / math.sqrt(2 * mean_budget), rel=1e-12)
    per_person = [
        X[groups == p]
        * min(1.0, 2.0 / math.sqrt(np.mean(np.sum(X[groups == p] ** 2, 1))))
        for p in range(400)
    ]
    expected = sum(rows.mean(axis=0) for rows in per_person) / released
    np.testing.assert_allclose(mean.value, expected, rtol=1e-12)
    assert est.privacy_unit_ == "person" and est.neighbours_ == "add_remove"


def test_gaussian_person_added_under_add_remove_privacy_loss(global_random_seed):
    # A whole person added (20 rows R e1, averaged: R**2 e1 e1^T) under
    # add/remove over persons: on the sum (release times released count),
    # entry (0, 0) moves by R**2 against noise of s.d. R**2 / sqrt(rho'): a
    # standardised shift of sqrt(rho'). A sum over the person's rows (not
    # averaged) would shift it 20 times as far; half the noise, twice.
    m, d, R, rho, k, reps = 30, 3, 1.0, 0.5, 20, 3000
    rng = np.random.default_rng(6)
    others = rng.normal(size=(m, d))
    others *= 0.5 * R / np.linalg.norm(others, axis=1, keepdims=True)
    without = (others, np.arange(m))
    with_person = (
        np.vstack([others, np.tile(R * np.eye(d)[0], (k, 1))]),
        np.r_[np.arange(m), np.full(k, m)],
    )
    rng = np.random.default_rng(global_random_seed)

    def stat(X, groups):
        estimator = GaussianCovariance(
            rho=rho,
            data_norm=R,
            assume_centered=True,
            max_rows_per_group=k,
            neighbours="add_remove",
            store_raw=True,
            random_state=rng,
        )
        draw = fitted_mechanism(estimator, X, groups=groups)
        released = estimator.released_count_
        return [draw(rng).raw[0, 0] * released for _ in range(reps)]

    shift, se = gaussian_shift(stat(*without), stat(*with_person))
    assert shift == pytest.approx(math.sqrt(15 * rho / 16), abs=5 * se)


def test_add_remove_on_a_dask_array_equals_the_in_memory_fit():
    # The wrapper that reports the released count passes a Dask array on to
    # Dask's reductions (AdaptiveCovariance's binned read included): the
    # same fit as in memory, up to the order of sums.
    da = pytest.importorskip("dask.array")
    X = np.random.default_rng(14).normal(size=(8000, 4))
    params = dict(neighbours="add_remove", epsilon=2.0, random_state=0)
    with pytest.warns(Warning):
        here = AdaptiveCovariance(**params).fit(X)
        lazy = AdaptiveCovariance(**params).fit(da.from_array(X, chunks=2000))
    assert here.released_count_ == lazy.released_count_
    np.testing.assert_allclose(lazy.covariance_, here.covariance_, atol=1e-12)
