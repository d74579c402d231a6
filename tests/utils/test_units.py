"""Rows grouped by person: the selection, the per-person sums, the refusals."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from dpcov.decomposition import PCA, ApproximateSubspace, ExactSubspace
from dpcov.discriminant_analysis import LinearDiscriminantAnalysis
from dpcov.distributions import MultivariateGaussian, ProductBernoulli
from dpcov.exceptions import SeededNoiseWarning
from dpcov.impute import SimpleImputer
from dpcov.linear_model import LinearRegression
from dpcov.pipeline import PrivatePipeline
from dpcov.utils._gram import row_statistics
from dpcov.utils._gram._units import (
    UnitRows,
    check_group_parameters,
    check_unit_input,
)

from .._privacy_checks import clopper_pearson


def _visits(rng, n_persons=40, most=7, d=3, scale=2.0):
    counts = rng.integers(1, most + 1, n_persons)
    groups = rng.permutation(np.repeat(np.arange(n_persons), counts))
    X = rng.normal(scale=scale, size=(groups.size, d))
    return X, groups


def _by_hand(X, groups, units, *, box=None, clip=None, center=None, final=None):
    """Each kept person's clipped average, the slow way: ({person: rows}, sums)."""
    kept = units.rows
    gram, total, rms_all = 0.0, 0.0, []
    for label in np.unique(groups):
        rows = X[kept[groups[kept] == label]].astype(float)
        if box is not None:
            lower, upper = box
            rows = (np.clip(rows, lower, upper) - (lower + upper) / 2) / (
                (upper - lower) / 2
            )
        if clip is not None:
            rho = np.sqrt(np.mean(np.sum(rows**2, axis=1)))
            rows = rows * min(1.0, clip / rho) if rho > 0 else rows
        if center is not None:
            rows = rows - center
        rho = np.sqrt(np.mean(np.sum(rows**2, axis=1)))
        rms_all.append(rho)
        if final is not None and rho > final:
            rows = rows * (final / rho)
        gram = gram + rows.T @ rows / len(rows)
        total = total + rows.mean(axis=0)
    return gram, total, np.array(rms_all)


def test_selection_keeps_at_most_k_rows_of_each_person():
    rng = np.random.default_rng(0)
    X, groups = _visits(rng)
    units = UnitRows.select(X, groups, 3, np.random.default_rng(1), name="E")
    assert units.shape == (40, 3)
    for p in range(40):
        mine = units.rows[units.starts[p] : units.starts[p + 1]]
        # One person per block, its own rows, min(count, 3) of them, no repeat.
        assert np.unique(groups[mine]).size == 1
        label = groups[mine[0]]
        assert mine.size == min(np.sum(groups == label), 3)
        assert np.unique(mine).size == mine.size


def test_selection_is_uniform_among_a_persons_rows():
    # One person with 10 rows, k = 3: each row is kept with probability 3/10
    # whatever its position. 2000 selections; each count must lie in its
    # two-sided Clopper-Pearson interval at level 1e-3 / 10 (Bonferroni over
    # the rows), so a bias towards early rows (kept by order: probability 1
    # for the first three) fails.
    groups = np.r_[np.zeros(10, int), np.ones(4, int)]
    X = np.zeros((14, 2))
    kept = np.zeros(14, int)
    n_draws = 2000
    for seed in range(n_draws):
        units = UnitRows.select(X, groups, 3, np.random.default_rng(seed), name="E")
        kept[units.rows] += 1
    level = 1e-3 / 14
    for row in range(14):
        share = 0.3 if row < 10 else 0.75  # the second person: 3 of its 4 rows
        low, high = clopper_pearson(kept[row], n_draws, level)
        assert low <= share <= high
    assert kept[:10].sum() == kept[10:].sum() == 3 * n_draws


@pytest.mark.parametrize("sparse", [False, True])
def test_sums_over_persons_match_the_definition(sparse):
    # Box, clip as a whole, centre, final clip: each person's averaged rows,
    # summed over persons, against a slow loop over persons; small chunks
    # (whole persons each) give the same sums.
    rng = np.random.default_rng(2)
    X, groups = _visits(rng, scale=3.0)
    units = UnitRows.select(X, groups, 4, np.random.default_rng(3), name="E")
    box = (np.full(3, -4.0), np.array([4.0, 6.0, 5.0]))
    center = np.array([0.1, -0.2, 0.05])
    gram, total, rms = _by_hand(
        X, groups, units, box=box, clip=1.2, center=center, final=0.9
    )
    for chunk_rows in (None, 5):
        source = (
            UnitRows(sp.csr_matrix(X), units.rows, units.starts) if sparse else units
        )
        stats = row_statistics(
            source,
            box=box,
            clip_norm=1.2,
            center=center,
            final_clip=0.9,
            gram=True,
            total=True,
            square_norm=True,
            norm_sums=lambda norms: np.array([np.sum(norms > 0.9)]),
            chunk_rows=chunk_rows,
        )
        assert stats.n_rows == 40
        np.testing.assert_allclose(stats.gram, gram, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(stats.total, total, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(stats.square_norm, np.sum(rms**2), rtol=1e-12)
        assert stats.norm_sums.dtype == np.int64
        assert stats.norm_sums[0] == np.sum(rms > 0.9)


def test_a_person_clipped_as_a_whole_has_trace_at_most_r_squared():
    # A person's averaged outer products after the clip: trace <= r**2 and
    # the averaged row's norm <= r, whatever the rows; a row on its own
    # (k_p = 1) is clipped exactly as row_statistics clips rows.
    rng = np.random.default_rng(4)
    X, groups = _visits(rng, n_persons=30, scale=10.0)
    units = UnitRows.select(X, groups, 5, np.random.default_rng(0), name="E")
    for p in range(30):
        mine = units.rows[units.starts[p] : units.starts[p + 1]]
        one = UnitRows(X, mine, np.array([0, mine.size]))
        stats = row_statistics(one, clip_norm=1.5, gram=True, total=True)
        assert np.trace(stats.gram) <= 1.5**2 * (1 + 1e-12)
        assert np.linalg.norm(stats.total) <= 1.5 * (1 + 1e-12)
    row = UnitRows(X, np.array([7]), np.array([0, 1]))
    np.testing.assert_allclose(
        row_statistics(row, clip_norm=1.5, gram=True).gram,
        row_statistics(X[7:8], clip_norm=1.5, gram=True).gram,
        rtol=1e-14,
    )


def test_far_persons_are_clipped_without_a_warning():
    # Finite rows whose squared norms overflow (and one beyond float64's norm
    # range): clipped to root-mean-square norm r, in their direction, with no
    # floating-point warning (which would appear on one neighbour only).
    X = np.array([[1.5e308, 1.5e308], [3e200, 0.0], [0.5, 0.0], [1e-300, 0.0]])
    groups = np.array([0, 1, 1, 2])
    units = UnitRows.select(X, groups, 5, np.random.default_rng(0), name="E")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            stats = row_statistics(units, clip_norm=2.0, gram=True, total=True)
    # Person 0: one row along (1, 1) whose norm is beyond float64, now of
    # norm 2; person 1: two rows along e1, one negligible against the other,
    # so rho = 2 puts the far row at 2 sqrt(2) (average outer product 4,
    # average row sqrt(2)); person 2: unclipped and negligible.
    np.testing.assert_allclose(stats.gram, [[6.0, 2.0], [2.0, 2.0]], rtol=1e-12)
    np.testing.assert_allclose(stats.total, [2 * np.sqrt(2), np.sqrt(2)], rtol=1e-12)


def test_parameters_come_in_pairs_and_the_message_names_routing():
    check_group_parameters(None, None, name="E")
    with pytest.raises(ValueError, match="metadata routing"):
        check_group_parameters(None, 3, name="E")
    with pytest.raises(ValueError, match="max_rows_per_group is None"):
        check_group_parameters(np.zeros(4), None, name="E")


@pytest.mark.parametrize(
    "groups, match",
    [
        (np.zeros((4, 1)), "1-D array with one label per row"),
        (np.zeros(5), "1-D array with one label per row"),
        (np.array([0.0, np.nan, 1.0, 1.0]), "contains NaN"),
        (np.array(["a", None, "b", "b"], dtype=object), "missing label"),
        (np.array(["a", 1, "b", 2], dtype=object), "one sortable type"),
    ],
)
def test_bad_groups_are_refused_without_their_labels(groups, match):
    with pytest.raises(ValueError, match=match) as error:
        check_unit_input(np.zeros((4, 2)), groups, name="E")
    assert "'a'" not in str(error.value) and "nan," not in str(error.value)


def test_unsupported_inputs_are_refused_before_reading():
    da = pytest.importorskip("dask.array")
    groups = np.zeros(4)
    with pytest.raises(ValueError, match="in memory"):
        check_unit_input(da.zeros((4, 2)), groups, name="E")


def test_nan_in_a_row_left_out_is_refused_too():
    # Whether a fit refuses NaN must not depend on which rows the random
    # selection kept: a NaN row beyond a person's k is refused every time.
    from dpcov.utils._input_messages import NonFiniteInput

    X = np.ones((12, 2))
    X[5, 1] = np.nan
    groups = np.zeros(12, int)
    for seed in range(20):
        units = UnitRows.select(X, groups, 2, np.random.default_rng(seed), name="E")
        with pytest.raises(NonFiniteInput):
            row_statistics(units, gram=True, check_finite=True)
    sparse_units = UnitRows(sp.csr_matrix(X), units.rows, units.starts)
    with pytest.raises(NonFiniteInput):
        row_statistics(sparse_units, total=True, check_finite=True)


@pytest.mark.parametrize(
    "estimator",
    [
        ExactSubspace(n_components=1),
        ApproximateSubspace(n_components=1),
        MultivariateGaussian(),
        ProductBernoulli(),
    ],
    ids=type,
)
def test_estimators_of_rows_refuse_groups_clearly(estimator):
    # Estimators with no person-level form take groups (metadata routing can
    # hand them) only to refuse them before reading, saying why.
    X, y = np.zeros((20, 2)), np.zeros(20, int)
    with pytest.raises(ValueError, match=r"does not fit persons \(groups\)"):
        estimator.fit(X, y, groups=np.arange(20))


@pytest.mark.parametrize(
    "estimator",
    [
        LinearDiscriminantAnalysis(classes=[0, 1]),
        SimpleImputer(strategy="median"),
        LinearRegression(bounds="private", target_bounds=(-2.0, 2.0)),
        LinearDiscriminantAnalysis(classes=[0, 1], neighbours="add_remove"),
    ],
    ids=["lda", "imputer", "least_squares", "lda_add_remove"],
)
def test_an_extreme_person_is_a_merely_large_person(estimator):
    # One person's k rows near float64's limit (1e300) or merely beyond
    # every radius and range (1e100), in the same direction: with the same
    # random_state, the fits over persons (private radius or private
    # ranges) are equal and neither warns, whatever the mechanism's rule for
    # rows past the bound.
    rng = np.random.default_rng(0)
    k, n_persons = 3, 3000
    sizes = rng.integers(1, k + 1, n_persons)
    groups = np.repeat(np.arange(n_persons), sizes)
    X = rng.normal(size=(groups.size, 2))
    y = (X[:, 0] > 0).astype(int)
    if isinstance(estimator, LinearRegression):
        y = np.clip(X[:, 0], -2.0, 2.0)
    fits = []
    for scale in (1e300, 1e100):
        rows = np.vstack([X, np.full((k, 2), scale)])
        labels = np.r_[groups, np.full(k, n_persons)]
        target = np.r_[y, [1] * k] if y.dtype.kind == "i" else np.r_[y, [2.0] * k]
        fitted = clone(estimator).set_params(
            epsilon=2.0, max_rows_per_group=k, random_state=0
        )
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.simplefilter("ignore", SeededNoiseWarning)
            fitted.fit(rows, target, groups=labels)
        fits.append(fitted)
    for name in ("means_", "covariance_", "statistics_", "coef_", "bounds_"):
        if getattr(fits[0], name, None) is not None:
            np.testing.assert_allclose(
                np.asarray(getattr(fits[0], name)),
                np.asarray(getattr(fits[1], name)),
                rtol=1e-9,
            )


@pytest.mark.parametrize(
    "estimator",
    [
        LinearDiscriminantAnalysis(classes=[0, 1]),
        LinearRegression(bounds=(-3.0, 3.0), target_bounds=(-2.0, 2.0)),
    ],
    ids=["lda", "least_squares"],
)
@pytest.mark.parametrize("unit", ["person", "add_remove"])
def test_a_refused_target_states_no_row_count(estimator, unit):
    # Over persons, or under add/remove neighbours, the number of rows is
    # private: a target of the wrong length or shape is refused without it,
    # on its own and inside a pipeline over persons.
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(250), 4)
    X = rng.normal(size=(groups.size, 2))
    y = (X[:, 0] > 0).astype(int)
    extra = {"max_rows_per_group": 2} if unit == "person" else {}
    fit_params = {"groups": groups} if unit == "person" else {}
    fitted = clone(estimator).set_params(**extra)
    if unit == "add_remove":
        fitted.set_params(neighbours="add_remove")
    for bad in (y[:-1], np.c_[y, y]):
        with pytest.raises(ValueError) as error:
            fitted.fit(X, bad, **fit_params)
        text = str(error.value)
        assert str(len(X)) not in text and str(len(X) - 1) not in text
    if unit == "person":
        pipe = PrivatePipeline([("model", clone(estimator))], max_rows_per_group=2)
        with pytest.raises(ValueError) as error:
            pipe.fit(X, y[:-1], groups=groups)
        assert str(len(X)) not in str(error.value)


def test_pca_over_few_persons_names_the_bound_without_its_value():
    # n_components above the number of persons: refused, naming the bound
    # (min(n_persons, n_features)) but not the number of persons.
    X = np.random.default_rng(0).normal(size=(9, 10))
    groups = np.repeat([0, 1, 2], 3)
    with pytest.raises(ValueError, match=r"min\(n_persons, n_features\)\.") as error:
        PCA(5, data_norm=5.0, max_rows_per_group=3).fit(X, groups=groups)
    assert "3" not in str(error.value).replace("max_rows_per_group=3", "")
