"""Tests of ``error_bars``: intervals of additive releases from their noise's law.

Coverage tests fit many seeds on one table and count how often the 90%
interval holds the statistic of the clipped rows. With ``m`` independent
interval checks the share has standard deviation ``sqrt(0.9 * 0.1 / m)``:
the bounds [0.85, 0.95] are at least 4 standard deviations away for the
``m >= 600`` checks (entries x seeds) of each test below, so a correct
interval fails by chance with probability below 1e-4, while an interval
built on a noise scale 25% too small (coverage about 0.81 for the Gaussian)
or too large (0.96) fails.
"""

import numpy as np
import pytest
from scipy import stats
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError

from dpcov.covariance import GaussianCovariance, SeparateCovariance
from dpcov.impute import SimpleImputer
from dpcov.linear_model import LinearRegression, Ridge
from dpcov.linear_model._ssp import _original_units
from dpcov.mechanisms import AdditiveNoise
from dpcov.preprocessing import StandardScaler
from dpcov.utils._error_bars import N_DRAWS, feature_blocks

ALPHA = 0.1
LOW, HIGH = 0.85, 0.95
GUARANTEES = {"zCDP": 1e-6, "pure": 0.0}


def _covered(bars, truth):
    low, high = bars
    return (np.asarray(low) <= truth) & (truth <= np.asarray(high))


@pytest.mark.parametrize("law", ["gaussian", "laplace"])
@pytest.mark.parametrize("level", [0.05, 0.5, 0.9, 0.975, 0.999])
def test_quantile_is_the_laws_closed_form(law, level):
    scale = 2.5
    expected = {
        "gaussian": stats.norm(scale=scale).ppf(level),
        "laplace": stats.laplace(scale=scale).ppf(level),
    }[law]
    assert AdditiveNoise(law, scale).quantile(level) == pytest.approx(
        expected, abs=1e-12
    )


@pytest.mark.parametrize("level", [0.0, 1.0, -0.1, 2.0])
def test_quantile_refuses_levels_outside_the_unit_interval(level):
    with pytest.raises(ValueError, match="level must be in"):
        AdditiveNoise("gaussian", 1.0).quantile(level)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.5, 1.5, "0.1", None])
def test_alpha_outside_the_unit_interval_is_refused(alpha):
    X = np.random.default_rng(0).uniform(-1, 1, size=(200, 2))
    scaler = StandardScaler(epsilon=1.0, bounds=(-1, 1), random_state=0).fit(X)
    with pytest.raises(InvalidParameterError, match="'alpha' parameter of error_bars"):
        scaler.error_bars(alpha)


def test_error_bars_need_a_fit():
    with pytest.raises(NotFittedError):
        StandardScaler(epsilon=1.0, bounds=(-1, 1)).error_bars()


def test_feature_blocks_cover_every_feature_once():
    blocks = feature_blocks(5000, 2)
    assert blocks[0].start == 0 and blocks[-1].stop == 5000
    assert all(a.stop == b.start for a, b in zip(blocks, blocks[1:], strict=False))
    assert max(b.stop - b.start for b in blocks) * N_DRAWS * 2 * 8 <= 2**25


@pytest.mark.parametrize("guarantee", list(GUARANTEES))
def test_scaler_mean_interval_is_the_closed_form_in_original_units(guarantee):
    # Noise-scale test against the sensitivities derived here, not read
    # from the fit. The scaler releases (z, w z**2) per unit coordinate z in
    # [-1, 1]. Replacing a row moves a coordinate pair by (a, w a b), a = z'
    # - z and b = z' + z with |a| + |b| <= 2: under pure DP (w = (1 +
    # sqrt 2) / 2) |a| (1 + w |b|) is at most 1 + sqrt 2, so Laplace scale
    # d (1 + sqrt 2) / (n epsilon); under zCDP (w = sqrt 2) a**2 (1 + 2 b**2)
    # is at most 4, so standard deviation 2 sqrt(d) / (n sqrt(2 rho)). In
    # original units the mean's noise is h_j times it: the 90% half-width
    # is h_j times ln(10) b, or z_0.95 sigma.
    n, d = 1000, 3
    X = np.random.default_rng(1).uniform(0, 10, size=(n, d))
    lower, upper = np.array([0.0, -5.0, 0.0]), np.array([10.0, 15.0, 40.0])
    if guarantee == "zCDP":
        params = {"rho": 0.5}
        half = stats.norm.ppf(0.95) * 2 * np.sqrt(d) / (n * np.sqrt(2 * 0.5))
    else:
        params = {"epsilon": 1.0, "delta": 0.0}
        half = np.log(10.0) * d * (1 + np.sqrt(2)) / (n * 1.0)
    scaler = StandardScaler(**params, bounds=(lower, upper), random_state=0).fit(X)
    low, high = scaler.error_bars(ALPHA)["mean_"]
    assert ((low > lower) & (high < upper)).all()  # (not clipped to the box)
    np.testing.assert_allclose((high - low) / 2, (upper - lower) / 2 * half, rtol=1e-10)


@pytest.mark.parametrize("guarantee", list(GUARANTEES))
def test_scaler_intervals_cover_the_clipped_moments(guarantee):
    rng = np.random.default_rng(2)
    X = rng.normal(0.5, 1.0, size=(2000, 3))
    clipped = np.clip(X, -3, 3)
    truth = {"mean_": clipped.mean(axis=0), "var_": clipped.var(axis=0)}
    hits = {name: [] for name in truth}
    for seed in range(200):
        scaler = StandardScaler(
            epsilon=1.0, delta=GUARANTEES[guarantee], bounds=(-3, 3), random_state=seed
        ).fit(X)
        bars = scaler.error_bars(ALPHA)
        for name in truth:
            hits[name].append(_covered(bars[name], truth[name]))
        scale = bars["scale_"]
        np.testing.assert_allclose(scale[0] ** 2, bars["var_"][0])
    for name, covered in hits.items():
        assert LOW <= np.mean(covered) <= HIGH, name


@pytest.mark.parametrize("guarantee", list(GUARANTEES))
def test_imputer_intervals_cover_the_mean_of_observed_clipped_cells(guarantee):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 4))
    X[rng.random(X.shape) < 0.3] = np.nan
    truth = np.nanmean(np.clip(X, -2, 2), axis=0)
    assert LOW <= _imputer_coverage(X, truth, guarantee, (-2, 2)) <= HIGH


def _imputer_coverage(X, truth, guarantee, bounds):
    # The share of 200 seeded fits' intervals that hold the truth.
    delta = GUARANTEES[guarantee]
    return np.mean(
        [
            _covered(
                SimpleImputer(epsilon=1.0, delta=delta, bounds=bounds, random_state=s)
                .fit(X)
                .error_bars(ALPHA)["statistics_"],
                truth,
            )
            for s in range(200)
        ]
    )


@pytest.mark.parametrize("guarantee", list(GUARANTEES))
def test_imputer_interval_is_the_closed_form_at_a_centred_mean(guarantee):
    # Noise-scale test against sensitivities derived here. The imputer
    # releases (S, w N) per column, S the sum of unit coordinates z in [-1,
    # 1] over the observed cells: a replaced row moves a column's pair by
    # (z' - z, 0) or (+-z, +-w), at most 2 in L2 (w = sqrt 3) and in L1 (w =
    # 1), so the vector has L2 sensitivity 2 sqrt(d) and L1 sensitivity 2 d.
    # With every cell observed and the rows symmetric about the box's
    # centre, mu = 0 and Fieller's pivot S~ - mu N~ is the sum's noise
    # alone: the 90% half-width is h_j q / n with q = z_0.95 sigma, sigma =
    # 2 sqrt(d) / sqrt(2 rho), or ln(10) b, b = 2 d / epsilon. The bars
    # read q from 4000 fixed draws of the law: the 0.9 quantile of |e|
    # has standard error sqrt(0.9 * 0.1 / 4000) / f(q) relative to q, 1.4%
    # (Gaussian, f = 2 phi; 2.1% Laplace), so the tolerance is four of them
    # plus the grid's step (0.4% of the width here); a 1.25x scale error
    # fails either.
    n, d = 4000, 3
    unit = np.random.default_rng(4).uniform(-0.5, 0.5, size=(n // 2, d))
    unit = np.vstack([unit, -unit])
    lower, upper = np.array([0.0, -5.0, 0.0]), np.array([10.0, 15.0, 40.0])
    center, half_width = (lower + upper) / 2, (upper - lower) / 2
    if guarantee == "zCDP":
        params, rtol = {"rho": 0.5}, 0.06
        q = stats.norm.ppf(0.95) * 2 * np.sqrt(d) / np.sqrt(2 * 0.5)
    else:
        params, rtol = {"epsilon": 1.0, "delta": 0.0}, 0.085
        q = np.log(10.0) * 2 * d / 1.0
    imputer = SimpleImputer(**params, bounds=(lower, upper), random_state=0)
    low, high = imputer.fit(center + half_width * unit).error_bars(ALPHA)["statistics_"]
    np.testing.assert_allclose((high - low) / 2, half_width * q / n, rtol=rtol)


@pytest.mark.parametrize("strategy", ["median", "constant"])
def test_imputer_without_additive_noise_has_no_bars(strategy):
    X = np.random.default_rng(0).uniform(-1, 1, size=(300, 2))
    imputer = SimpleImputer(strategy=strategy, epsilon=1.0, bounds=(-1, 1)).fit(X)
    assert imputer.error_bars() == {}


def _centred_second_moment(X, estimator, half):
    # The second moment the mechanism saw: rows clipped to the box, in unit
    # coordinates, centred on the released location (no norm clipping is
    # active: every centred row is within data_norm_ + |location|), back in
    # original units.
    unit = np.clip(X, -half, half) / half - estimator.location_ / half
    return unit.T @ unit / X.shape[0] * half * half


@pytest.mark.parametrize("guarantee", list(GUARANTEES))
def test_gaussian_covariance_intervals_cover_location_and_raw_entries(guarantee):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(3000, 4)) @ np.diag([1.0, 2.0, 0.5, 1.0]) + [0.5, 0, 1, -1]
    location = np.clip(X, -5, 5).mean(axis=0)
    upper = np.triu_indices(4)
    hits = {"location_": [], "raw_covariance_": []}
    for seed in range(150):
        est = GaussianCovariance(
            epsilon=2.0,
            delta=GUARANTEES[guarantee],
            bounds=(-5, 5),
            store_raw=True,
            random_state=seed,
        ).fit(X)
        bars = est.error_bars(ALPHA)
        hits["location_"].append(_covered(bars["location_"], location))
        raw = _covered(bars["raw_covariance_"], _centred_second_moment(X, est, 5.0))
        hits["raw_covariance_"].append(raw[upper])  # (each entry once)
    for name, covered in hits.items():
        assert LOW <= np.mean(covered) <= HIGH, name


def test_covariance_bars_name_only_additive_releases():
    X = np.random.default_rng(5).uniform(-1, 1, size=(500, 3))
    gauss = GaussianCovariance(epsilon=1.0, data_norm=2.0, random_state=0).fit(X)
    assert set(gauss.error_bars()) == {"location_"}  # (raw not stored)
    separate = SeparateCovariance(
        epsilon=1.0, data_norm=2.0, store_raw=True, assume_centered=True
    ).fit(X)
    assert separate.error_bars() == {}  # (eigenvectors: not additive entries)


@pytest.mark.parametrize("guarantee", list(GUARANTEES))
def test_ridge_intervals_are_the_closed_form_on_an_orthogonal_design(guarantee):
    # Noise-scale test against sensitivities derived here. Ridge(alpha=0)
    # releases U^T U and U^T t, rows u = (z, 1) with z in [-1, 1]^d and t in
    # [-1, 1], half the budget each: U^T t moves by u' t' - u t, at most 2 B
    # in L2 and 2 sqrt(d + 1) B in L1 (B**2 = d + 1). On a full factorial
    # design of signs, each pattern with targets +-1/2, U^T U = n I and U^T
    # t = 0, so theta* = (n I + E)^-1 e = e / n up to a relative term of
    # order |E| / n (5e-4 here): the 90% half-width of coef_j is h_y / h_j
    # times z_0.95 sigma / n, sigma = 2 sqrt(d + 1) / sqrt(2 rho / 2), or
    # ln(10) b / n, b = 2 (d + 1) / (epsilon / 2); the intercept's is h_y
    # times it (a box centred on zero). The bars' basic bootstrap reads the
    # 5% and 95% quantiles of 4000 fixed draws, standard error about 1.5%
    # of the half-width (Gaussian; 2.1% Laplace): four of them are the
    # tolerance, and a 1.25x scale error fails either.
    d, repeats = 3, 1000
    signs = np.array(np.meshgrid(*[[-1.0, 1.0]] * d)).reshape(d, -1).T
    z = np.repeat(signs, 2 * repeats, axis=0)
    t = np.tile([0.5, -0.5], signs.shape[0] * repeats)
    n, half, target_half = z.shape[0], np.array([1.0, 10.0, 250.0]), 5.0
    if guarantee == "zCDP":
        params, rtol = {"rho": 0.5}, 0.06
        q = stats.norm.ppf(0.95) * 2 * np.sqrt(d + 1) / np.sqrt(2 * 0.5 / 2)
    else:
        params, rtol = {"epsilon": 1.0, "delta": 0.0}, 0.085
        q = np.log(10.0) * 2 * (d + 1) / (1.0 / 2)
    model = Ridge(
        alpha=0.0,
        **params,
        bounds=(-half, half),
        target_bounds=(0.0, 2 * target_half),
        random_state=0,
    ).fit(half * z, target_half * (1 + t))
    bars = model.error_bars(ALPHA)
    low, high = bars["coef_"]
    np.testing.assert_allclose((high - low) / 2, target_half / half * q / n, rtol=rtol)
    low, high = bars["intercept_"]
    np.testing.assert_allclose((high - low) / 2, target_half * q / n, rtol=rtol)


@pytest.mark.parametrize(
    "estimator", [Ridge(alpha=1.0), LinearRegression()], ids=["Ridge", "AdaSSP"]
)
@pytest.mark.parametrize("guarantee", list(GUARANTEES))
def test_least_squares_intervals_cover_the_ridge_solution(estimator, guarantee):
    # The statistic: the ridge solution of the clipped rows at the fit's own
    # ridge (public for Ridge, AdaSSP's released one for LinearRegression).
    rng = np.random.default_rng(6)
    X = rng.uniform(-1, 1, size=(5000, 3))
    y = np.clip(X @ [1.0, -2.0, 0.5] + 0.3 * rng.normal(size=5000), -4, 4)
    U = np.hstack([X, np.ones((X.shape[0], 1))])
    covered = []
    for seed in range(150):
        model = estimator.set_params(
            epsilon=1.0,
            delta=GUARANTEES[guarantee],
            bounds=(-1, 1),
            target_bounds=(-4, 4),
            random_state=seed,
        ).fit(X, y)
        penalty = model._statistics_noise[2]
        theta = np.linalg.solve(U.T @ U + np.diag(penalty), U.T @ (y / 4))
        coef, intercept = _original_units(theta, *model._statistics_noise[3:])
        bars = model.error_bars(ALPHA)
        covered.append(
            np.r_[
                _covered(bars["coef_"], coef), _covered(bars["intercept_"], intercept)
            ]
        )
    assert LOW <= np.mean(covered) <= HIGH


def test_bars_are_post_processing_of_the_release():
    # The same release gives the same bars (the bootstrap's generator is
    # fixed: its draws are not the release's noise).
    X = np.random.default_rng(7).normal(size=(800, 3))
    fits = [
        StandardScaler(epsilon=1.0, bounds=(-3, 3), random_state=3).fit(X.copy())
        for _ in range(2)
    ]
    first, second = (fit.error_bars() for fit in fits)
    for name in first:
        np.testing.assert_array_equal(first[name][0], second[name][0])
        np.testing.assert_array_equal(first[name][1], second[name][1])
    # The model holds the release's values only: mean_ back in unit
    # coordinates.
    model = fits[0]._moment_noise
    np.testing.assert_allclose(model.center + model.half * model.mean, fits[0].mean_)


@pytest.mark.parametrize("guarantee", list(GUARANTEES))
def test_raw_entry_bars_are_gausscov_closed_form(guarantee):
    # Noise-scale test against the documented closed form, independent of
    # the noise objects: with the rows' norm bound R public and no mean,
    # each raw entry has Gaussian noise of standard deviation R**2 / (n
    # sqrt(rho)) (zCDP), or Laplace noise of scale sqrt(d (d + 3) / 2) R**2
    # / (n epsilon) (pure DP); the 90% half-width is z_0.95 or ln(10) times it.
    n, d, R = 2000, 4, 2.0
    X = np.random.default_rng(8).uniform(-0.5, 0.5, size=(n, d))
    if guarantee == "zCDP":
        params = {"rho": 0.5}
        half = stats.norm.ppf(0.95) * R**2 / (n * np.sqrt(0.5))
    else:
        params = {"epsilon": 1.0, "delta": 0.0}
        half = np.log(10.0) * np.sqrt(d * (d + 3) / 2) * R**2 / (n * 1.0)
    est = GaussianCovariance(
        **params, data_norm=R, assume_centered=True, store_raw=True, random_state=0
    ).fit(X)
    low, high = est.error_bars(ALPHA)["raw_covariance_"]
    np.testing.assert_allclose((high - low) / 2, half, rtol=1e-10)
    np.testing.assert_allclose((high + low) / 2, est.raw_covariance_, rtol=1e-12)


@pytest.mark.parametrize("guarantee", list(GUARANTEES))
def test_imputer_intervals_hold_with_few_observed_cells(guarantee):
    # Fieller's interval for the ratio S / N is exact whatever N: columns
    # with 10, 30 and 100 observed cells of 1000 (where a bootstrap of the
    # ratio covered 42-65% under zCDP).
    X = np.full((1000, 3), np.nan)
    rng = np.random.default_rng(9)
    for j, observed in enumerate((10, 30, 100)):
        X[:observed, j] = rng.uniform(0.3, 1.0, observed)
    truth = np.nanmean(X, axis=0)
    assert LOW <= _imputer_coverage(X, truth, guarantee, (-1, 1)) <= HIGH


def test_add_remove_bars_cover_sums_over_the_released_count():
    # Under add/remove the mean is the sums over a released count, which can
    # leave the range: the interval is not clipped to it.
    X = np.full((20, 1), 10.0)
    covered = []
    for seed in range(300):
        scaler = StandardScaler(
            epsilon=1.0,
            bounds=(0, 10),
            neighbours="add_remove",
            with_std=False,
            random_state=seed,
        ).fit(X)
        truth = 5.0 + 5.0 * X.shape[0] / scaler.n_samples_seen_
        covered.append(_covered(scaler.error_bars(ALPHA)["mean_"], truth))
    assert LOW <= np.mean(covered) <= HIGH


def test_bars_follow_the_fit_not_later_parameters():
    X = np.random.default_rng(10).uniform(-1, 1, size=(300, 2))
    imputer = SimpleImputer(epsilon=1.0, bounds=(-1, 1), random_state=0).fit(X)
    bars = imputer.error_bars()
    imputer.set_params(strategy="median")  # (not refitted: still the mean)
    np.testing.assert_array_equal(
        imputer.error_bars()["statistics_"][0], bars["statistics_"][0]
    )
    imputer.fit(X)  # (now the median's release: no additive noise)
    assert imputer.error_bars() == {}
