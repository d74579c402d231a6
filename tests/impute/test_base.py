"""The private imputer: sensitivities, noise scale, laws, accuracy, API."""

import math

import numpy as np
import pytest

from dpcov.accounting import ZCDP, PureDP, compose, zcdp_rho
from dpcov.covariance import GaussianCovariance
from dpcov.datasets import make_mixed_units_table
from dpcov.decomposition import PCA
from dpcov.impute import SimpleImputer
from dpcov.impute._base import MEDIAN_STEPS, mean_noise
from dpcov.mechanisms import exponential_radius_accuracy, median_probabilities
from dpcov.mechanisms._ranges import median_scores
from dpcov.preprocessing import StandardScaler
from dpcov.utils._private_ranges import plan_private_ranges
from tests._privacy_checks import recorded_choices, recorded_releases

pytestmark = pytest.mark.filterwarnings("ignore::dpcov.exceptions.SeededNoiseWarning")


def _pair_change(z, z_new, weight):
    # Change of (S, w N) for one column when a cell z (NaN: missing) becomes
    # z_new.
    def contribution(v):
        return (0.0, 0.0) if np.isnan(v) else (v, weight)

    a, b = contribution(z), contribution(z_new)
    return np.array([b[0] - a[0], b[1] - a[1]])


def test_mean_release_sensitivities_by_brute_force(global_random_seed):
    # Over random replacements of one row (cells in [-1, 1] or missing), the
    # change of (S, w N) has L2 norm <= 2 sqrt(d) with w = sqrt(3) and L1
    # norm <= 2 d with w = 1, both attained; a larger weight breaks both.
    rng = np.random.default_rng(global_random_seed)
    d = 4
    worst_l2 = worst_l1 = 0.0
    cells = [np.nan, -1.0, 1.0, 0.0]
    for _ in range(2000):
        row = [cells[i] if i < 4 else rng.uniform(-1, 1) for i in rng.integers(0, 6, d)]
        new = [cells[i] if i < 4 else rng.uniform(-1, 1) for i in rng.integers(0, 6, d)]
        l2 = np.concatenate(
            [_pair_change(a, b, math.sqrt(3.0)) for a, b in zip(row, new, strict=True)]
        )
        l1 = np.concatenate(
            [_pair_change(a, b, 1.0) for a, b in zip(row, new, strict=True)]
        )
        worst_l2 = max(worst_l2, np.linalg.norm(l2))
        worst_l1 = max(worst_l1, np.abs(l1).sum())
    assert worst_l2 <= 2 * math.sqrt(d) + 1e-12
    assert worst_l1 <= 2 * d + 1e-12
    # Attained (z = 1 -> -1 in every column), and exceeded with more weight
    # on the counts (a cell going missing in every column).
    assert worst_l2 == pytest.approx(2 * math.sqrt(d))
    going_missing = np.concatenate([_pair_change(1.0, np.nan, 2.0)] * d)
    assert np.linalg.norm(going_missing) > 2 * math.sqrt(d)
    going_missing = np.concatenate([_pair_change(1.0, np.nan, 1.5)] * d)
    assert np.abs(going_missing).sum() > 2 * d


def test_mean_noise_scale_closed_form():
    rho, d = 0.02, 5
    weight, noise = mean_noise(ZCDP(rho), d)
    assert weight == pytest.approx(math.sqrt(3.0))
    assert noise.law == "gaussian"
    assert noise.std == pytest.approx(2 * math.sqrt(d) / math.sqrt(2 * rho))
    weight, noise = mean_noise(PureDP(0.5), d)
    assert weight == 1.0
    assert noise.law == "laplace"
    assert noise.scale == pytest.approx(2 * d / 0.5)


def test_released_mean_has_the_closed_form_spread(global_random_seed):
    # One feature, public range [-1, 1] (unit coordinates), 1600 of 2000
    # cells observed at 0.5: the whole budget releases (S, w N) = (800,
    # 1600 sqrt(3)) (w = sqrt(3) under zCDP), L2 sensitivity 2 sqrt(d) = 2,
    # so each coordinate gets Gaussian noise of s.d. sigma = 2 / sqrt(2 rho),
    # and statistics_ = S~ / N~ with S~ = S + e1, N~ = N + e2 / w (whose
    # spread, by the delta method, is sigma**2 (1 + m**2 / w**2) / N**2,
    # which 600 fits checked before). Exact, on one fit: the recorded
    # release is the exact (S, w N) plus a draw at scale sigma, and
    # statistics_ is its documented post-processing S~ / max(N~, 1) clipped
    # to [-1, 1] (the samplers' laws are tested in tests/mechanisms).
    X = np.full((2000, 1), 0.5)
    X[:400] = np.nan
    rho = zcdp_rho(1.0, 1e-6)
    w = math.sqrt(3.0)
    with recorded_releases() as releases:
        imputer = SimpleImputer(
            bounds=(-1.0, 1.0), random_state=global_random_seed
        ).fit(X)
    (release,) = releases
    assert release.law == "gaussian"
    assert release.scale == pytest.approx(2 / math.sqrt(2 * rho), rel=1e-12)
    np.testing.assert_allclose(release.value, [800.0, 1600 * w], rtol=1e-12)
    count = max(release.noisy[1] / w, 1.0)
    expected = np.clip(release.noisy[0] / count, -1.0, 1.0)
    assert imputer.statistics_[0] == pytest.approx(expected, rel=1e-12)


def test_median_score_keeps_sensitivity_one_when_a_cell_goes_missing(
    global_random_seed,
):
    # With N the observed count in place of n: a cell going missing moves
    # N / 2 by 1/2 and the counts by at most 1 in the same direction.
    rng = np.random.default_rng(global_random_seed)
    candidates = np.linspace(-1, 1, 65)
    for _ in range(300):
        x = rng.uniform(-1, 1, int(rng.integers(3, 50)))
        x[rng.random(x.size) < 0.3] = np.nan
        y = x.copy()
        i = rng.integers(x.size)
        y[i] = np.nan if rng.random() < 0.5 else rng.uniform(-1, 1)

        def scores(v):
            observed = v[~np.isnan(v)]
            at = (observed[:, None] <= candidates).sum(axis=0)
            return median_scores(at, observed.size)

        assert np.abs(scores(x) - scores(y)).max() <= 1


def test_released_median_follows_the_law_at_the_budget(global_random_seed):
    # One feature, public range [0, 1]: the median is the exponential
    # mechanism over 1025 candidates at the whole budget's epsilon
    # (sqrt(8 rho)), scored with the observed count. Exact, on one fit: the
    # mechanism's own law, the probabilities its one draw is made from
    # (recorded where the noise module draws it), is the closed form at
    # that epsilon, computed here from the rank counts of the observed
    # cells; and statistics_ is the candidate drawn. (The draw's law given
    # its probabilities is tested in tests/mechanisms; a chi-square over
    # 1500 fits tested this before.)
    rng = np.random.default_rng(0)
    X = rng.uniform(0.3, 0.7, size=(300, 1))
    X[:60] = np.nan
    candidates = np.linspace(0.0, 1.0, MEDIAN_STEPS + 1)
    observed = X[~np.isnan(X)]
    at = (observed[:, None] <= candidates).sum(axis=0)
    epsilon = math.sqrt(8 * zcdp_rho(1.0, 1e-6))
    with recorded_choices() as choices:
        imputer = SimpleImputer(
            strategy="median", bounds=(0.0, 1.0), random_state=global_random_seed
        ).fit(X)
    (choice,) = choices
    expected = median_probabilities(at, observed.size, epsilon=epsilon)
    np.testing.assert_allclose(choice.probabilities, expected, rtol=1e-9, atol=1e-300)
    assert imputer.statistics_[0] == candidates[choice.index]


@pytest.mark.parametrize("n_features", [1, 3, 8])
def test_median_epsilon_per_feature_is_the_even_split(n_features, monkeypatch):
    # d features share the statistics' budget evenly: each median's
    # exponential mechanism runs at sqrt(8 rho / d) under zCDP (rho the
    # whole budget's with public ranges), the closed form the law test above
    # checks for d = 1. A split that gave each feature the whole budget (or
    # half of its share) fails here.
    from dpcov.impute import _base

    seen = []
    real = _base.private_median

    def spy(*args, epsilon, **kwargs):
        seen.append(epsilon)
        return real(*args, epsilon=epsilon, **kwargs)

    monkeypatch.setattr(_base, "private_median", spy)
    X = np.random.default_rng(0).uniform(0.2, 0.8, size=(500, n_features))
    SimpleImputer(strategy="median", bounds=(0.0, 1.0), random_state=0).fit(X)
    rho = zcdp_rho(1.0, 1e-6)
    assert len(seen) == n_features
    np.testing.assert_allclose(seen, math.sqrt(8 * rho / n_features), rtol=1e-12)


@pytest.mark.parametrize("strategy", ["mean", "median"])
@pytest.mark.parametrize("bounds", ["public", None])
def test_statistics_are_close_on_a_mixed_units_table(strategy, bounds):
    # 20000 rows, 5% of cells missing, scales 1e-2 to 1e4: each statistic is
    # within 0.1 standard deviations of the observed cells' own (measured
    # errors are below 0.02 sd at epsilon = 1).
    table = make_mixed_units_table(20_000, missing_rate=0.05, random_state=0)
    X = table.data
    b = table.bounds if bounds == "public" else None
    imputer = SimpleImputer(strategy=strategy, bounds=b, random_state=0).fit(X)
    reference = np.nanmean(X, 0) if strategy == "mean" else np.nanmedian(X, 0)
    assert np.all(np.abs(imputer.statistics_ - reference) < 0.1 * np.nanstd(X, 0))
    budget = ZCDP(zcdp_rho(1.0, 1e-6))
    assert compose(imputer.budget_split_.values()).rho <= budget.rho
    assert imputer.epsilon_spent_ == pytest.approx(1.0)
    if bounds is None:
        # With probability 0.9 over the fit, at most k + alpha observed
        # values of every feature lie outside its private range.
        assert "bounds" in imputer.budget_split_
        plan = plan_private_ranges(imputer.budget_split_["bounds"], *X.shape)
        alpha, k = exponential_radius_accuracy(plan.epsilon, plan.beta)
        lower, upper = imputer.bounds_
        outside = np.sum((X < lower) | (X > upper), axis=0)
        assert outside.max() <= k + alpha


def test_transform_fills_only_the_missing_cells():
    table = make_mixed_units_table(5000, missing_rate=0.1, random_state=1)
    X = table.data
    imputer = SimpleImputer(bounds=table.bounds, random_state=0).fit(X)
    out = imputer.transform(X)
    missing = np.isnan(X)
    assert not np.isnan(out).any()
    np.testing.assert_array_equal(out[~missing], X[~missing])
    np.testing.assert_array_equal(
        out[missing], np.broadcast_to(imputer.statistics_, X.shape)[missing]
    )
    assert np.isnan(X).sum() == missing.sum()  # X untouched (copy=True)
    inplace = X.copy()
    result = SimpleImputer(bounds=table.bounds, copy=False, random_state=0)
    result = result.fit(inplace).transform(inplace)
    assert result is inplace or np.shares_memory(result, inplace)


def test_a_number_as_the_missing_marker():
    table = make_mixed_units_table(5000, missing_rate=0.1, random_state=1)
    X = np.where(np.isnan(table.data), -999.0, table.data)
    a = SimpleImputer(bounds=table.bounds, random_state=0).fit(table.data)
    b = SimpleImputer(missing_values=-999.0, bounds=table.bounds, random_state=0)
    b.fit(X)
    np.testing.assert_allclose(a.statistics_, b.statistics_)
    assert not np.any(b.transform(X) == -999.0)
    with pytest.raises(ValueError, match="NaN"):
        b.fit(table.data)


def test_constant_reads_nothing_and_costs_nothing():
    X = np.array([[1.0, np.nan], [np.nan, 2.0]])
    imputer = SimpleImputer(strategy="constant", fill_value=-1.0).fit(X)
    np.testing.assert_array_equal(imputer.transform(X), [[1.0, -1.0], [-1.0, 2.0]])
    assert imputer.guarantee_.rho == 0
    assert imputer.privacy_cost().rho == 0
    assert imputer.budget_split_ == {}


def test_infinity_is_refused_naming_no_value():
    X = make_mixed_units_table(3000, missing_rate=0.1, random_state=0).data
    X[5, 3] = np.inf
    with pytest.raises(ValueError, match="infinity") as info:
        SimpleImputer().fit(X)
    assert "inf]" not in str(info.value)


def test_too_few_rows_for_private_ranges_says_how_many():
    X = make_mixed_units_table(300, random_state=0).data
    imputer = SimpleImputer()
    with pytest.raises(
        ValueError, match=r"SimpleImputer finds the range .* \d+ samples"
    ):
        imputer.fit(X)
    assert not hasattr(imputer, "statistics_")


@pytest.mark.parametrize(
    "estimator",
    [
        StandardScaler(bounds=(0.0, 1.0)),
        GaussianCovariance(data_norm=1.0),
        PCA(n_components=1, data_norm=1.0),
    ],
    ids=lambda e: type(e).__name__,
)
def test_other_estimators_refuse_nan_naming_the_imputer(estimator):
    X = np.random.default_rng(0).uniform(size=(100, 3))
    X[4, 1] = np.nan
    with pytest.raises(ValueError, match=r"dpcov\.impute\.SimpleImputer"):
        estimator.fit(X)


def test_dask_fit_and_transform_equal_the_in_memory_ones():
    da = pytest.importorskip("dask.array")
    table = make_mixed_units_table(5000, missing_rate=0.1, random_state=2)
    X = table.data
    lazy = da.from_array(X, chunks=(1200, 5))
    for strategy in ("mean", "median"):
        a = SimpleImputer(strategy=strategy, random_state=4).fit(X)
        b = SimpleImputer(strategy=strategy, random_state=4).fit(lazy)
        np.testing.assert_allclose(a.statistics_, b.statistics_)
    out = b.transform(lazy)
    np.testing.assert_allclose(out.compute(), b.transform(X))
    assert np.isnan(X).any()  # the caller's array is not filled in place


def test_set_output_pandas():
    pd = pytest.importorskip("pandas")
    table = make_mixed_units_table(3000, missing_rate=0.1, random_state=0)
    frame = pd.DataFrame(table.data, columns=table.feature_names)
    imputer = SimpleImputer(bounds=table.bounds, random_state=0).set_output(
        transform="pandas"
    )
    out = imputer.fit_transform(frame)
    assert list(out.columns) == table.feature_names
    assert not out.isna().any().any()


@pytest.mark.parametrize("seed", range(8))
def test_a_column_that_is_all_missing_or_not_looks_the_same(seed):
    # Neighbours: column 1 entirely missing, or one cell of it observed.
    # The private box never collapses to a point (which would make the
    # mean 0 / 0 only when a cell is observed): both fits are finite and
    # neither warns (a seeded fit's SeededNoiseWarning aside).
    import warnings

    from dpcov.exceptions import SeededNoiseWarning

    rng = np.random.default_rng(1)
    A = rng.normal(5.0, 1.0, size=(6000, 2))
    A[:, 1] = np.nan
    B = A.copy()
    B[0, 1] = 1.0
    for X in (A, B):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            imputer = SimpleImputer(random_state=seed).fit(X)
        assert not [w for w in caught if w.category is not SeededNoiseWarning]
        assert np.all(np.isfinite(imputer.statistics_))
        lower, upper = imputer.bounds_
        assert np.all(lower < upper)


@pytest.mark.parametrize("strategy", ["mean", "median"])
def test_dask_bad_entries_are_refused_before_anything_is_recorded(strategy):
    da = pytest.importorskip("dask.array")
    from dpcov.accounting import BudgetAccountant

    X = make_mixed_units_table(3000, missing_rate=0.1, random_state=0).data
    X[7, 2] = np.inf
    accountant = BudgetAccountant()
    imputer = SimpleImputer(
        strategy=strategy, bounds=(-1e6, 1e6), accountant=accountant
    )
    with pytest.raises(ValueError, match="infinity"):
        imputer.fit(da.from_array(X, chunks=(1000, 12)))
    assert len(accountant) == 0
    with pytest.raises(ValueError, match="in-memory input only"):
        SimpleImputer(missing_values=-1.0).fit(da.from_array(X, chunks=1000))


def test_mean_over_persons_sums_each_person_s_averages():
    # With groups (strategy="mean"): the released sums are, per column, the
    # sums over persons of each person's average clipped observed value and
    # average observed indicator (all rows kept: at most k per person),
    # with the row-level noise scale (one row's ranges).
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 5, 300)
    groups = rng.permutation(np.repeat(np.arange(300), counts))
    X = rng.normal(size=(groups.size, 2)) * 2
    X[rng.random(X.shape) < 0.3] = np.nan
    params = dict(bounds=(-3.0, 3.0), rho=0.5, random_state=0)
    with recorded_releases() as by_person:
        imputer = SimpleImputer(max_rows_per_group=4, **params)
        imputer.fit(X, groups=groups)
    with recorded_releases() as by_row:
        SimpleImputer(**params).fit(X)
    assert by_person[0].scale == pytest.approx(by_row[0].scale, rel=1e-12)
    unit = np.where(np.isnan(X), 0.0, np.clip(X, -3, 3) / 3)
    seen = (~np.isnan(X)).astype(float)
    sums = sum(unit[groups == p].mean(axis=0) for p in range(300))
    observed = sum(seen[groups == p].mean(axis=0) for p in range(300))
    weight, _ = mean_noise(ZCDP(0.5), 2)
    np.testing.assert_allclose(
        by_person[0].value, np.r_[sums, weight * observed], rtol=1e-12
    )
    assert imputer.privacy_unit_ == "person"


def test_add_remove_moves_the_release_within_the_replace_bounds(global_random_seed):
    # Adding (or removing) one row moves column j's pair by (z, w) when the
    # cell is observed, by nothing when missing: L2 at most sqrt(d (1 + w**2))
    # = 2 sqrt(d) for w = sqrt(3), L1 at most d (1 + w) = 2 d for w = 1,
    # the replace-one bounds mean_noise calibrates to; and the median's
    # scores move by at most 1/2.
    rng = np.random.default_rng(global_random_seed)
    d = 4
    cells = [np.nan, -1.0, 1.0, 0.0]
    worst_l2 = worst_l1 = 0.0
    for _ in range(500):
        row = [cells[i] if i < 4 else rng.uniform(-1, 1) for i in rng.integers(0, 6, d)]
        l2 = np.concatenate([_pair_change(np.nan, a, math.sqrt(3.0)) for a in row])
        l1 = np.concatenate([_pair_change(np.nan, a, 1.0) for a in row])
        worst_l2 = max(worst_l2, np.linalg.norm(l2))
        worst_l1 = max(worst_l1, np.abs(l1).sum())
    assert worst_l2 <= 2 * math.sqrt(d) + 1e-12
    assert worst_l1 <= 2 * d + 1e-12
    candidates = np.linspace(-1, 1, 65)

    def scores(v):
        observed = v[~np.isnan(v)]
        return median_scores(
            (observed[:, None] <= candidates).sum(axis=0), observed.size
        )

    for _ in range(300):
        x = rng.uniform(-1, 1, int(rng.integers(3, 50)))
        x[rng.random(x.size) < 0.3] = np.nan
        added = np.append(x, rng.choice([np.nan, -1.0, 1.0, rng.uniform(-1, 1)]))
        assert np.abs(scores(x) - scores(added)).max() <= 0.5


@pytest.mark.parametrize("strategy", ["mean", "median"])
def test_add_remove_reads_no_count(strategy):
    # neighbours="add_remove" with public bounds: the same release as
    # replace-one (no count is needed: a ratio of noisy sums, or scores
    # within the replace-one bound), the relation recorded.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 2))
    X[rng.random(X.shape) < 0.2] = np.nan
    params = dict(strategy=strategy, bounds=(-3.0, 3.0), rho=0.5, random_state=0)
    replace = SimpleImputer(**params).fit(X)
    add_remove = SimpleImputer(neighbours="add_remove", **params).fit(X)
    np.testing.assert_array_equal(replace.statistics_, add_remove.statistics_)
    assert add_remove.neighbours_ == "add_remove"
    assert set(add_remove.budget_split_) == set(replace.budget_split_)


def test_median_over_persons_counts_each_person_at_most_once():
    # strategy="median" with groups: the exponential mechanism's scores are
    # median_scores of the rank counts with each person's kept rows
    # weighing 2**-ceil(log2 k_p) (at most 1 per person, exact), at the
    # row-level epsilon; a person of k rows at the range's end moves the
    # scores by at most 1 (by k - 1 or more counting rows).
    rng = np.random.default_rng(1)
    k = 5
    sizes = rng.integers(1, k + 1, 400)
    groups = rng.permutation(np.repeat(np.arange(400), sizes))
    X = rng.uniform(0.2, 0.8, size=(groups.size, 1))
    X[rng.random(X.shape) < 0.2] = np.nan
    extreme = np.r_[X[groups != 0], np.ones((k, 1))]
    extreme_groups = np.r_[groups[groups != 0], np.zeros(k, int)]
    params = dict(strategy="median", bounds=(0.0, 1.0), rho=0.5, max_rows_per_group=k)
    drawn = []
    for rows, labels in [(X, groups), (extreme, extreme_groups)]:
        with recorded_choices() as choices:
            imputer = SimpleImputer(random_state=0, **params).fit(rows, groups=labels)
        (choice,) = choices
        drawn.append(choice.scores)
        assert imputer.privacy_unit_ == "person"
    candidates = np.linspace(0.0, 1.0, MEDIAN_STEPS + 1)
    weight = {n: 2.0 ** -math.ceil(math.log2(n)) for n in range(1, k + 1)}
    at = np.zeros(candidates.size)
    observed = 0.0
    for p in range(400):
        cells = X[groups == p, 0]
        cells = cells[~np.isnan(cells)]
        w = weight[int(sizes[p])]
        at += w * (cells[:, None] <= candidates).sum(axis=0)
        observed += w * cells.size
    np.testing.assert_array_equal(drawn[0], median_scores(at, observed))
    assert 0 < np.abs(drawn[0] - drawn[1]).max() <= 1.0
