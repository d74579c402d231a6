"""Tests of the private StandardScaler and the public BoundsScaler."""

import math

import numpy as np
import pytest
from sklearn import preprocessing as skpre

from dpcov.accounting import ZCDP, BudgetAccountant, PureDP
from dpcov.preprocessing import BoundsScaler, StandardScaler
from dpcov.preprocessing._data import moment_noise
from tests._privacy_checks import (
    gaussian_shift,
    laplace_event_loss,
    recorded_releases,
)

from ..test_bad_input import INPUTS as BAD_INPUTS
from ..test_bad_input import _assert_outcome as assert_bad_outcome
from ..test_bad_input import _outcome as bad_outcome
from ..test_bad_input import _rows as bad_rows

LOWER = np.array([0.0, -5.0, 100.0, -1.0])
UPPER = np.array([10.0, 5.0, 300.0, 3.0])


def _inside(n, seed=0, lower=LOWER, upper=UPPER):
    # Rows strictly inside the box [lower, upper], on very different scales.
    rng = np.random.default_rng(seed)
    center, half = (lower + upper) / 2, (upper - lower) / 2
    Z = np.clip(rng.normal(0.2, 0.3, size=(n, lower.size)), -0.99, 0.99)
    return center + half * Z


# 100 features (the four ranges above, repeated) for the noise-scale tests:
# many draws per fit.
WIDE_LOWER, WIDE_UPPER = np.tile(LOWER, 25), np.tile(UPPER, 25)


def _unit(scaler):
    # The released moments of the unit coordinates, recovered from mean_ and
    # var_ (exact up to rounding when no post-processing clip was active).
    lower, upper = scaler.bounds_
    center, half = (lower + upper) / 2, (upper - lower) / 2
    mean = (scaler.mean_ - center) / half
    return mean, scaler.var_ / half**2 + mean**2


def _exact_unit(X, lower, upper):
    center, half = (lower + upper) / 2, (upper - lower) / 2
    Z = (np.clip(X, lower, upper) - center) / half
    return Z.mean(0), (Z * Z).mean(0)


# Sensitivities --------------------------------------------------------------


def test_joint_release_matches_the_half_split_for_the_second_moment():
    # The design claim in moment_noise: the second moment's noise equals what
    # half of the budget would give it alone (sensitivity sqrt(d)/n L2, d/n
    # L1), and the mean's is at most what half would give it.
    n, d = 200, 7
    for budget, half in ((ZCDP(0.3), ZCDP(0.15)), (PureDP(0.8), PureDP(0.4))):
        weight, noise = moment_noise(budget, n_samples=n, n_features=d)
        if isinstance(budget, ZCDP):
            second_alone = math.sqrt(d) / n / math.sqrt(2 * half.rho)
            mean_alone = 2 * math.sqrt(d) / n / math.sqrt(2 * half.rho)
            assert noise.std == pytest.approx(mean_alone / math.sqrt(2))
        else:
            second_alone = math.sqrt(2) * d / n / half.epsilon
            mean_alone = math.sqrt(2) * 2 * d / n / half.epsilon
            assert noise.std == pytest.approx(mean_alone * (1 + math.sqrt(2)) / 4)
        assert noise.std / weight == pytest.approx(second_alone)


# Noise scale against the closed form -----------------------------------------


def test_gaussian_noise_scale_closed_form(global_random_seed):
    # zCDP: one Gaussian draw on (mean, sqrt(2) second moment) with L2
    # sensitivity 2 sqrt(d) / n: sigma = 2 sqrt(d) / (n sqrt(2 rho)) on the
    # mean, sigma / sqrt(2) on the second moment. Exact, on one fit: the
    # recorded release is the exact vector (mean, sqrt(2) second moment) of
    # the unit coordinates plus a Gaussian draw of s.d. sigma, and the
    # released moments are its two halves (the second divided by sqrt(2):
    # hence its noise sigma / sqrt(2)); the rows are far inside the box and
    # n is large, so no post-processing clip is active (the samplers' laws
    # are tested in tests/mechanisms).
    n, rho = 20_000, 0.5
    d = WIDE_LOWER.size
    X = _inside(n, global_random_seed, WIDE_LOWER, WIDE_UPPER)
    mean, second = _exact_unit(X, WIDE_LOWER, WIDE_UPPER)
    sigma = 2 * math.sqrt(d) / (n * math.sqrt(2 * rho))
    rng = np.random.default_rng(global_random_seed)
    with recorded_releases() as releases:
        scaler = StandardScaler(
            rho=rho, bounds=(WIDE_LOWER, WIDE_UPPER), random_state=rng
        ).fit(X)
    (release,) = releases
    assert release.law == "gaussian"
    assert release.scale == pytest.approx(sigma, rel=1e-12)
    exact = np.concatenate([mean, math.sqrt(2) * second])
    np.testing.assert_allclose(release.value, exact, rtol=1e-12, atol=1e-15)
    got_mean, got_second = _unit(scaler)
    np.testing.assert_allclose(got_mean, release.noisy[:d], rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        got_second, release.noisy[d:] / math.sqrt(2), rtol=0, atol=1e-12
    )


def test_laplace_noise_scale_closed_form(global_random_seed):
    # Pure DP: one Laplace draw on (mean, w second moment), w = (1 + sqrt(2))
    # / 2, with L1 sensitivity (1 + sqrt(2)) d / n: scale b = (1 + sqrt(2)) d
    # / (n epsilon) on the mean and b / w = 2 d / (n epsilon) on the second
    # moment. Exact, on one fit, as above: the recorded release is the exact
    # vector plus a Laplace draw of scale b, and the released moments are
    # its two halves (the second divided by w).
    n, eps = 20_000, 2.0
    d = WIDE_LOWER.size
    w = (1 + math.sqrt(2)) / 2
    X = _inside(n, global_random_seed, WIDE_LOWER, WIDE_UPPER)
    mean, second = _exact_unit(X, WIDE_LOWER, WIDE_UPPER)
    b = (1 + math.sqrt(2)) * d / (n * eps)
    rng = np.random.default_rng(global_random_seed)
    with recorded_releases() as releases:
        scaler = StandardScaler(
            epsilon=eps, delta=0.0, bounds=(WIDE_LOWER, WIDE_UPPER), random_state=rng
        ).fit(X)
    (release,) = releases
    assert release.law == "laplace"
    assert release.scale == pytest.approx(b, rel=1e-12)
    assert release.scale / w == pytest.approx(2 * d / (n * eps), rel=1e-12)
    exact = np.concatenate([mean, w * second])
    np.testing.assert_allclose(release.value, exact, rtol=1e-12, atol=1e-15)
    got_mean, got_second = _unit(scaler)
    np.testing.assert_allclose(got_mean, release.noisy[:d], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got_second, release.noisy[d:] / w, rtol=0, atol=1e-12)


def test_mean_only_noise_scale(global_random_seed):
    # with_std=False: the mean alone, whole budget, sigma = 2 sqrt(d) / (n
    # sqrt(2 rho)); nothing else is released. Exact, on one fit: the only
    # recorded release is the exact unit mean plus a draw of s.d. sigma.
    n, rho = 5000, 0.2
    X = _inside(n, global_random_seed, WIDE_LOWER, WIDE_UPPER)
    mean, _ = _exact_unit(X, WIDE_LOWER, WIDE_UPPER)
    center = (WIDE_LOWER + WIDE_UPPER) / 2
    half = (WIDE_UPPER - WIDE_LOWER) / 2
    sigma = 2 * math.sqrt(WIDE_LOWER.size) / (n * math.sqrt(2 * rho))
    rng = np.random.default_rng(global_random_seed)
    with recorded_releases() as releases:
        scaler = StandardScaler(
            rho=rho, bounds=(WIDE_LOWER, WIDE_UPPER), with_std=False, random_state=rng
        ).fit(X)
    assert scaler.var_ is None and scaler.scale_ is None
    (release,) = releases
    assert release.law == "gaussian"
    assert release.scale == pytest.approx(sigma, rel=1e-12)
    np.testing.assert_allclose(release.value, mean, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(
        (scaler.mean_ - center) / half, release.noisy, rtol=0, atol=1e-12
    )


# Neighbouring datasets -------------------------------------------------------


def _neighbours(z_old, z_new, n=1000):
    # Rows in unit coordinates (bounds (-1, 1)): the others alternate at
    # +-1/2 (mean about 0, variance about 1/4, far from every clip), and row
    # 0 is z_old on one neighbour, z_new on the other.
    base = np.where(np.arange(n) % 2 == 0, 0.5, -0.5)[:, np.newaxis]
    a, b = base.copy(), base.copy()
    a[0], b[0] = z_old, z_new
    return a, b


def test_gaussian_neighbours_privacy_loss(global_random_seed):
    # Row z = 1 replaced by z' = 0 changes (mean, sqrt(2) second moment) by
    # (1, sqrt(2)) / n, of L2 norm sqrt(3) / n; the noise has s.d.
    # 2 / (n sqrt(2 rho)) on each coordinate, so the projection on that
    # direction shifts by sqrt(3) / 2 sqrt(2 rho) standard deviations. A
    # factor-2 error in either coordinate's noise moves it by more than 5
    # standard errors.
    rho, reps = 0.5, 700
    a, b = _neighbours(1.0, 0.0)
    direction = np.array([1.0, math.sqrt(2)]) / math.sqrt(3)
    rng = np.random.default_rng(global_random_seed)

    def stat(X):
        scaler = StandardScaler(rho=rho, bounds=(-1.0, 1.0), random_state=rng)
        mean, second = _unit(scaler.fit(X))
        return direction @ [mean[0], math.sqrt(2) * second[0]]

    shift, se = gaussian_shift(
        [stat(a) for _ in range(reps)], [stat(b) for _ in range(reps)]
    )
    assert shift == pytest.approx(math.sqrt(3) / 2 * math.sqrt(2 * rho), abs=5 * se)


@pytest.mark.slow
def test_gaussian_neighbours_worst_case_for_the_mean(global_random_seed):
    # z = 1 against z' = -1: the mean moves by 2/n, the squares not at all;
    # the shift is sqrt(2 rho) standard deviations, the zCDP bound, exactly.
    rho, reps = 0.5, 3000
    a, b = _neighbours(1.0, -1.0)
    rng = np.random.default_rng(global_random_seed)

    def stat(X):
        scaler = StandardScaler(rho=rho, bounds=(-1.0, 1.0), random_state=rng)
        return _unit(scaler.fit(X))[0][0]

    shift, se = gaussian_shift(
        [stat(a) for _ in range(reps)], [stat(b) for _ in range(reps)]
    )
    assert shift == pytest.approx(math.sqrt(2 * rho), abs=5 * se)


@pytest.mark.slow
def test_laplace_neighbours_privacy_loss(global_random_seed):
    # The L1 worst case at w = (1 + sqrt(2)) / 2: z = 1 against
    # z' = 1 - sqrt(2) moves (mean, w second moment) by (sqrt(2), 1) / n, of
    # L1 norm (1 + sqrt(2)) / n. On the event where both released
    # coordinates exceed the first neighbour's exact values, the density
    # ratio is exp(L1 / b) = e^eps exactly; factor-2 errors give 2 eps, eps/2.
    eps, reps = 1.0, 4000
    a, b = _neighbours(1.0, 1.0 - math.sqrt(2))
    mean_a, second_a = _exact_unit(a, -1.0, 1.0)
    rng = np.random.default_rng(global_random_seed)

    def event(X):
        scaler = StandardScaler(
            epsilon=eps, delta=0.0, bounds=(-1.0, 1.0), random_state=rng
        )
        mean, second = _unit(scaler.fit(X))
        return mean[0] > mean_a[0] and second[0] > second_a[0]

    loss, se = laplace_event_loss(
        [event(a) for _ in range(reps)], [event(b) for _ in range(reps)]
    )
    assert loss == pytest.approx(eps, abs=5 * se)


# epsilon = inf: scikit-learn's StandardScaler --------------------------------


@pytest.mark.parametrize("with_mean", [True, False])
@pytest.mark.parametrize("with_std", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_infinite_epsilon_is_sklearn(with_mean, with_std, dtype):
    X = _inside(300).astype(dtype)
    params = dict(with_mean=with_mean, with_std=with_std)
    ours = StandardScaler(epsilon=np.inf, bounds=(LOWER, UPPER), **params).fit(X)
    theirs = skpre.StandardScaler(**params).fit(X)
    for name in ("mean_", "var_", "scale_"):
        expected = getattr(theirs, name)
        if expected is None:
            assert getattr(ours, name) is None, name
        else:
            rtol = 1e-10 if dtype == np.float64 else 1e-5
            np.testing.assert_allclose(getattr(ours, name), expected, rtol=rtol)
    assert ours.n_samples_seen_ == theirs.n_samples_seen_ == 300
    Z = ours.transform(X)
    assert Z.dtype == dtype
    np.testing.assert_allclose(Z, theirs.transform(X), rtol=1e-4, atol=1e-5)
    # float32 round trip: a few ulps of each feature's range.
    error = (ours.inverse_transform(Z) - X) / (UPPER - LOWER)
    np.testing.assert_allclose(error, 0.0, atol=1e-6)


def test_infinite_epsilon_constant_feature_gets_scale_one():
    X = _inside(100)
    X[:, 1] = 2.5  # a constant feature inside its range
    ours = StandardScaler(epsilon=np.inf, bounds=(LOWER, UPPER)).fit(X)
    theirs = skpre.StandardScaler().fit(X)
    assert ours.scale_[1] == theirs.scale_[1] == 1.0
    np.testing.assert_allclose(ours.transform(X), theirs.transform(X), atol=1e-10)


# Clipping, transform, post-processing ----------------------------------------


def test_fit_clips_to_the_bounds_and_transform_does_not():
    X = _inside(200)
    X[:10, 0] = 1e6  # far above the range [0, 10]
    X[10:20, 2] = -1e308  # far below [100, 300]
    ours = StandardScaler(epsilon=np.inf, bounds=(LOWER, UPPER)).fit(X)
    clipped = np.clip(X, LOWER, UPPER)
    theirs = skpre.StandardScaler().fit(clipped)
    np.testing.assert_allclose(ours.mean_, theirs.mean_, rtol=1e-12)
    np.testing.assert_allclose(ours.var_, theirs.var_, rtol=1e-10)
    Z = ours.transform(X[:1])
    assert Z[0, 0] == pytest.approx((1e6 - ours.mean_[0]) / ours.scale_[0])


def test_released_values_stay_in_their_ranges(global_random_seed):
    # A tiny budget: the noise dwarfs the statistics, yet the mean stays in
    # the box and the variance in [w^2 floor, w^2], so scale_ never explodes
    # or vanishes.
    X = _inside(20, global_random_seed)
    half = (UPPER - LOWER) / 2
    for seed in range(20):
        scaler = StandardScaler(
            epsilon=0.01, bounds=(LOWER, UPPER), random_state=seed
        ).fit(X)
        assert np.all((scaler.mean_ >= LOWER) & (scaler.mean_ <= UPPER))
        assert np.all(scaler.var_ <= half**2 * (1 + 1e-12))
        # The floor is min(noise s.d. on the second moment, 1): here 1.
        np.testing.assert_allclose(scaler.var_, half**2)
        np.testing.assert_allclose(scaler.scale_, half)


def test_variance_floor_is_the_public_noise_level():
    # A constant feature at a small budget: the released variance is the
    # floor, the noise s.d. of the second moment (in unit coordinates times
    # half^2), whatever the noise drew.
    n, rho = 5000, 0.5
    X = np.full((n, 1), 3.0)
    floor = 2 / (n * math.sqrt(2 * rho)) / math.sqrt(2)
    floors = []
    for seed in range(30):
        scaler = StandardScaler(rho=rho, bounds=(0.0, 4.0), random_state=seed)
        floors.append(scaler.fit(X).var_[0] / 4.0)
    assert min(floors) == pytest.approx(floor)
    assert sum(f == pytest.approx(floor) for f in floors) >= 10


def test_transform_copy_and_in_place():
    X = _inside(50)
    scaler = StandardScaler(epsilon=np.inf, bounds=(LOWER, UPPER)).fit(X)
    before = X.copy()
    Z = scaler.transform(X)
    np.testing.assert_array_equal(X, before)
    out = scaler.transform(X, copy=False)
    assert out is X
    np.testing.assert_allclose(X, Z)
    read_only = before.copy()
    read_only.setflags(write=False)
    np.testing.assert_allclose(scaler.transform(read_only, copy=False), Z)


def test_pandas_output_and_feature_names():
    pd = pytest.importorskip("pandas")
    columns = ["a", "b", "c", "d"]
    frame = pd.DataFrame(_inside(50), columns=columns)
    scaler = StandardScaler(bounds=(LOWER, UPPER), random_state=0)
    out = scaler.set_output(transform="pandas").fit_transform(frame)
    assert list(out.columns) == columns
    assert list(scaler.get_feature_names_out()) == columns
    boxed = BoundsScaler(bounds=(LOWER, UPPER)).set_output(transform="pandas")
    assert list(boxed.fit_transform(frame).columns) == columns


def test_dask_fit_and_transform_equal_numpy():
    da = pytest.importorskip("dask.array")
    X = _inside(500)
    lazy = da.from_array(X, chunks=(128, 2))
    a = StandardScaler(bounds=(LOWER, UPPER), random_state=0).fit(X)
    b = StandardScaler(bounds=(LOWER, UPPER), random_state=0).fit(lazy)
    np.testing.assert_allclose(a.mean_, b.mean_, rtol=1e-12)
    np.testing.assert_allclose(a.var_, b.var_, rtol=1e-12)
    np.testing.assert_allclose(b.transform(lazy).compute(), a.transform(X))
    boxed = BoundsScaler(bounds=(LOWER, UPPER)).fit(lazy)
    np.testing.assert_allclose(boxed.transform(lazy).compute(), boxed.transform(X))


# Bounds ---------------------------------------------------------------------


@pytest.mark.parametrize("Scaler", [StandardScaler, BoundsScaler])
def test_bounds_none_says_what_to_pass_before_reading_the_data(Scaler):
    class Unreadable:
        def __array__(self, *args, **kwargs):
            raise AssertionError("fit read the data")

    with pytest.raises(ValueError, match=r"needs bounds=\(lower, upper\)"):
        Scaler().fit(Unreadable())


@pytest.mark.parametrize("Scaler", [StandardScaler, BoundsScaler])
@pytest.mark.parametrize(
    "bounds, message",
    [
        ((0.0, 1.0, 2.0), "pair"),
        (([0.0, 0.0], [1.0, 1.0]), "shape"),
        ((np.zeros(4), [1.0, 1.0, np.inf, 1.0]), "finite"),
        ((np.zeros(4), [1.0, 0.0, 1.0, -1.0]), r"below upper .* \[1, 3\]"),
        ((1.0, 1.0), "below upper"),
    ],
)
def test_bad_bounds(Scaler, bounds, message):
    with pytest.raises(ValueError, match=message):
        Scaler(bounds=bounds).fit(_inside(10))


def test_bad_bounds_are_refused_before_anything_is_recorded():
    accountant = BudgetAccountant()
    scaler = StandardScaler(bounds=(0.0, -1.0), accountant=accountant)
    with pytest.raises(ValueError, match="below upper"):
        scaler.fit(_inside(10))
    assert len(accountant) == 0
    assert not [key for key in vars(scaler) if key.endswith("_")]


def test_scalar_and_array_bounds_agree():
    X = _inside(30)
    a = StandardScaler(bounds=(-400.0, 400.0), random_state=0).fit(X)
    b = StandardScaler(bounds=(np.full(4, -400.0), [400] * 4), random_state=0).fit(X)
    np.testing.assert_array_equal(a.mean_, b.mean_)
    np.testing.assert_array_equal(a.bounds_[0], np.full(4, -400.0))


# Guarantee ------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, budget",
    [
        (dict(epsilon=1.0, delta=0.0), PureDP(1.0)),
        (dict(rho=0.3), ZCDP(0.3)),
    ],
)
@pytest.mark.parametrize(
    "with_mean, with_std, step",
    [
        (True, True, "mean_and_second_moment"),
        (False, True, "mean_and_second_moment"),
        (True, False, "mean"),
    ],
)
def test_guarantee_attributes(params, budget, with_mean, with_std, step):
    accountant = BudgetAccountant()
    scaler = StandardScaler(
        bounds=(LOWER, UPPER),
        with_mean=with_mean,
        with_std=with_std,
        accountant=accountant,
        random_state=0,
        **params,
    ).fit(_inside(100))
    assert scaler.budget_split_ == {step: budget}
    assert scaler.guarantee_ == budget == scaler.privacy_cost()
    assert accountant.ledger == [("StandardScaler", budget)]
    if isinstance(budget, PureDP):
        assert (scaler.epsilon_spent_, scaler.delta_spent_) == (1.0, 0.0)
        assert scaler.rho_spent_ == 0.5
    else:
        assert scaler.rho_spent_ == 0.3
        assert scaler.delta_spent_ == 1e-6
    assert scaler.mean_ is not None  # the variance needs the mean


def test_nothing_released_costs_nothing():
    scaler = StandardScaler(
        bounds=(LOWER, UPPER), with_mean=False, with_std=False, random_state=0
    )
    assert scaler.privacy_cost() == ZCDP(0.0)
    scaler.fit(_inside(20))
    assert scaler.mean_ is None and scaler.var_ is None and scaler.scale_ is None
    assert scaler.budget_split_ == {} and scaler.guarantee_ == ZCDP(0.0)
    assert scaler.epsilon_spent_ == 0.0
    X = _inside(5)
    np.testing.assert_array_equal(scaler.transform(X), X)
    pure = scaler.set_params(delta=0.0)
    assert pure.privacy_cost() == PureDP(0.0)


# BoundsScaler ----------------------------------------------------------------


def test_bounds_scaler_maps_the_box_onto_the_unit_cube():
    rng = np.random.default_rng(0)
    X = LOWER + (UPPER - LOWER) * rng.uniform(-0.5, 1.5, size=(200, 4))
    X[0] = 1e308
    scaler = BoundsScaler(bounds=(LOWER, UPPER)).fit(X)
    Z = scaler.transform(X)
    assert np.abs(Z).max() == 1.0
    assert np.all(np.linalg.norm(Z, axis=1) <= math.sqrt(4))
    np.testing.assert_array_equal(Z[0], np.ones(4))
    expected = 2 * (np.clip(X, LOWER, UPPER) - LOWER) / (UPPER - LOWER) - 1
    np.testing.assert_allclose(Z, expected, atol=1e-15)
    np.testing.assert_allclose(
        scaler.inverse_transform(Z), np.clip(X, LOWER, UPPER), rtol=1e-14
    )
    assert scaler.transform(X[1:].astype(np.float32)).dtype == np.float32


def test_bounds_scaler_reads_nothing_but_the_shape():
    # fit's result does not depend on the rows' values.
    a = BoundsScaler(bounds=(LOWER, UPPER)).fit(_inside(10))
    b = BoundsScaler(bounds=(LOWER, UPPER)).fit(np.zeros((3, 4)))
    assert vars(a).keys() == vars(b).keys()
    for x, y in zip(a.bounds_, b.bounds_, strict=True):
        np.testing.assert_array_equal(x, y)
    assert not hasattr(BoundsScaler, "privacy_cost")


@pytest.mark.parametrize(
    "method", ["fit", "fit_transform", "transform", "inverse_transform"]
)
@pytest.mark.parametrize("input_name", list(BAD_INPUTS))
def test_bounds_scaler_bad_input_leaks_nothing(method, input_name):
    # The bad inputs of tests/test_bad_input.py at BoundsScaler's entry
    # points: the documented outcome, no warning, no value in any message.
    make, expected = BAD_INPUTS[input_name]
    X = make(bad_rows())
    scaler = BoundsScaler(bounds=(-10.0, 10.0))
    if method in ("transform", "inverse_transform"):
        scaler.fit(bad_rows())
    error, text, caught = bad_outcome(scaler, method, X)
    assert_bad_outcome(expected, error, text, caught, method)


def test_scaler_over_persons_averages_each_person_in_the_box():
    # Each person contributes the average of its rows' clipped unit
    # coordinates and of their squares (both within one row's ranges), so
    # the release is the mean over persons of those averages plus noise at
    # the scale of a row-level fit on as many rows as persons; the fit
    # states no count.
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 9, 300)
    groups = rng.permutation(np.repeat(np.arange(300), counts))
    X = rng.normal(size=(300, 2))[groups] * 3 + rng.normal(size=(groups.size, 2))
    lower, upper = np.array([-4.0, -6.0]), np.array([4.0, 5.0])
    params = dict(bounds=(lower, upper), rho=0.5, random_state=0)
    with recorded_releases() as releases:
        scaler = StandardScaler(max_rows_per_group=8, **params)
        scaler.fit(X, groups=groups)
    unit = (np.clip(X, lower, upper) - (lower + upper) / 2) / ((upper - lower) / 2)
    means = np.array([unit[groups == p].mean(axis=0) for p in range(300)])
    squares = np.array([(unit[groups == p] ** 2).mean(axis=0) for p in range(300)])
    (release,) = releases
    weight, noise = moment_noise(
        ZCDP(0.5), n_samples=300, n_features=2, with_second_moment=True
    )
    np.testing.assert_allclose(
        release.value,
        np.r_[means.mean(axis=0), weight * squares.mean(axis=0)],
        rtol=1e-12,
    )
    assert release.scale == pytest.approx(noise.scale, rel=1e-12)
    assert scaler.n_samples_seen_ is None and scaler.privacy_unit_ == "person"
    with pytest.raises(ValueError, match="metadata routing"):
        StandardScaler(max_rows_per_group=8, **params).fit(X)


def test_scaler_add_remove_normalises_by_the_released_count():
    # neighbours="add_remove": a count first (sensitivity 1 at 1/16 of rho),
    # then the moments of the clipped unit coordinates summed and divided by
    # the released count, with the replace-one noise at that count.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(4000, 2)) * 2
    lower, upper = np.array([-4.0, -5.0]), np.array([4.0, 5.0])
    with recorded_releases() as releases:
        scaler = StandardScaler(
            bounds=(lower, upper), rho=0.5, neighbours="add_remove", random_state=0
        ).fit(X)
    count, moments = releases
    assert count.value == 4000
    assert count.scale == pytest.approx(1 / math.sqrt(2 * 0.5 / 16), rel=1e-12)
    released = scaler.n_samples_seen_
    assert released == max(round(float(count.noisy)), 1) != 4000
    unit = (np.clip(X, lower, upper) - (lower + upper) / 2) / ((upper - lower) / 2)
    weight, noise = moment_noise(
        ZCDP(15 * 0.5 / 16), n_samples=released, n_features=2, with_second_moment=True
    )
    np.testing.assert_allclose(
        moments.value,
        np.r_[unit.sum(axis=0), weight * (unit**2).sum(axis=0)] / released,
        rtol=1e-12,
    )
    assert moments.scale == pytest.approx(noise.scale, rel=1e-12)
    assert scaler.neighbours_ == "add_remove"
