"""Public per-feature bounds: clipping to the box, unit coordinates, units back."""

import math
import warnings

import numpy as np
import pytest
from sklearn.covariance import EmpiricalCovariance
from sklearn.decomposition import PCA as SkPCA
from sklearn.model_selection import GridSearchCV

from dpcov.accounting import ZCDP
from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.covariance._gauss import gauss_noise
from dpcov.decomposition import PCA
from dpcov.exceptions import SeededNoiseWarning
from tests._privacy_checks import fitted_mechanism, gaussian_shift, recorded_releases

ESTIMATORS = [
    GaussianCovariance,
    SeparateCovariance,
    AdaptiveCovariance,
    EigenSamplingCovariance,
    NuclearLaplaceCovariance,
]


def _mixed_scales(n=300, seed=0):
    # Three features on very different scales, inside the bounds below.
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3)) @ np.array(
        [[1.0, 0.5, 0.0], [0.0, 1.0, 0.3], [0.0, 0.0, 1.0]]
    )
    X = X / np.abs(X).max(axis=0)
    return np.array([0.01, 100.0, 1e4]) * X + np.array([0.0, 50.0, -3e4])


LOWER = np.array([-0.01, -50.0, -4e4])
UPPER = np.array([0.01, 150.0, -2e4])


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_infinite_epsilon_matches_sklearn_in_original_units(cls):
    # With no noise the box is only a change of units: the fit equals
    # scikit-learn's on the clipped rows (here already inside the box).
    X = _mixed_scales()
    params = dict(epsilon=np.inf, bounds=(LOWER, UPPER))
    if cls is NuclearLaplaceCovariance:
        params["delta"] = 0.0
    est = cls(**params).fit(X)
    ref = EmpiricalCovariance().fit(X)
    assert_scale = np.outer(UPPER - LOWER, UPPER - LOWER)
    np.testing.assert_allclose(est.location_, ref.location_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        est.covariance_ / assert_scale, ref.covariance_ / assert_scale, atol=1e-9
    )
    assert est.data_norm_ == pytest.approx(math.sqrt(3))
    np.testing.assert_array_equal(est.bounds_[0], LOWER)
    np.testing.assert_array_equal(est.bounds_[1], UPPER)
    assert "radius" not in est.budget_split_


def test_rows_are_clipped_to_the_box():
    X = _mixed_scales()
    X[:10] *= 1e3  # far outside the box
    est = GaussianCovariance(epsilon=np.inf, bounds=(LOWER, UPPER)).fit(X)
    ref = EmpiricalCovariance().fit(np.clip(X, LOWER, UPPER))
    np.testing.assert_allclose(est.covariance_, ref.covariance_, rtol=1e-9)
    np.testing.assert_allclose(est.location_, ref.location_, rtol=1e-9)


def test_scalar_bounds_broadcast():
    X = np.random.default_rng(0).uniform(0, 1, size=(50, 4))
    a = GaussianCovariance(bounds=(0.0, 1.0), random_state=0).fit(X)
    b = GaussianCovariance(bounds=(np.zeros(4), np.ones(4)), random_state=0).fit(X)
    np.testing.assert_array_equal(a.covariance_, b.covariance_)


def test_bounds_with_data_norm_is_an_error():
    X = _mixed_scales(20)
    with pytest.raises(ValueError, match="either data_norm .* or bounds"):
        SeparateCovariance(bounds=(LOWER, UPPER), data_norm=1.0).fit(X)


@pytest.mark.parametrize(
    "bounds, match",
    [
        ((1.0, 0.0), "lower must be below upper"),
        ((0.0, np.inf), "must be finite"),
        ((np.zeros(2), 1.0), r"shape \(2,\); expected a scalar or shape \(3,\)"),
        (([0.0, 0.0, 0.0],), "pair"),
    ],
)
def test_bad_bounds(bounds, match):
    X = _mixed_scales(20)
    with pytest.raises(ValueError, match=match):
        GaussianCovariance(bounds=bounds).fit(X)


def test_failed_fit_leaves_estimator_unfitted():
    est = GaussianCovariance(bounds=(1.0, 0.0))
    with pytest.raises(ValueError):
        est.fit(_mixed_scales(20))
    assert not hasattr(est, "covariance_")


def test_noise_scale_in_unit_coordinates(global_random_seed):
    # GaussCov's raw release, mapped back to unit coordinates by dividing
    # entry (i, j) by h_i h_j, is the exact unit-coordinate second moment plus
    # N(0, s^2) on every upper-triangle entry, s = R^2 / (n sqrt(rho)) with
    # R = sqrt(d) (gauss_noise). One fit is exact: the recorded release is the
    # unit-coordinate second moment plus a draw whose law and scale must be
    # the closed form's (the samplers' laws are tested in tests/mechanisms),
    # and the raw release is its noisy value times h_i h_j.
    rng = np.random.default_rng(global_random_seed)
    X = _mixed_scales(40, seed=global_random_seed)
    n, d = X.shape
    half = (UPPER - LOWER) / 2
    Z = (X - (UPPER + LOWER) / 2) / half
    exact = Z.T @ Z / n
    rho = 0.3
    scale = gauss_noise(ZCDP(rho), n_samples=n, n_features=d, radius=math.sqrt(d)).scale
    assert scale == pytest.approx(d / (n * math.sqrt(rho)))
    with recorded_releases() as releases:
        est = GaussianCovariance(
            rho=rho,
            bounds=(LOWER, UPPER),
            assume_centered=True,
            store_raw=True,
            random_state=rng,
        ).fit(X)
    release = releases[0]  # (later ones: the shrinkage's simulations)
    assert release.law == "gaussian"
    assert release.scale == pytest.approx(d / (n * math.sqrt(rho)), rel=1e-12)
    np.testing.assert_allclose(release.value, exact, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        est.raw_covariance_ / np.outer(half, half),
        release.noisy,
        rtol=1e-12,
        atol=1e-15,
    )


def test_neighbours_privacy_loss_with_bounds(global_random_seed):
    # d = 2 and the box [0, 2] x [10, 30]: the rows (2, 30) and (2, 10) are
    # the unit-coordinate corners (1, 1) and (1, -1), orthogonal, so the
    # Frobenius change of Z^T Z / n is sqrt(2) d / n, the sensitivity the
    # noise is calibrated to (rows of norm sqrt(d)). Projected on the
    # off-diagonal entry (in unit coordinates) the neighbours differ by
    # 2 / n, and the noise there has std s = d / (n sqrt(rho)): the
    # standardised shift is exactly sqrt(rho). Noise at half (or twice) the
    # scale gives 2 sqrt(rho) (or sqrt(rho) / 2).
    n, rho, reps = 10, 0.5, 3000
    lower, upper = np.array([0.0, 10.0]), np.array([2.0, 30.0])
    base = np.tile((lower + upper) / 2, (n, 1))  # unit coordinates 0
    a, b = base.copy(), base.copy()
    a[0], b[0] = [2.0, 30.0], [2.0, 10.0]
    rng = np.random.default_rng(global_random_seed)

    def stat(X):
        # Releases drawn from the fit's own mechanism on its inputs
        # (fitted_mechanism: the law of refitting, without the refits), in
        # unit coordinates: raw_covariance_[0, 1] / 10 with h = (1, 10).
        estimator = GaussianCovariance(
            rho=rho,
            bounds=(lower, upper),
            assume_centered=True,
            store_raw=True,
            random_state=rng,
        )
        draw = fitted_mechanism(estimator, X, half_widths=(upper - lower) / 2)
        return [draw(rng).raw[0, 1] for _ in range(reps)]

    shift, se = gaussian_shift(stat(a), stat(b))
    assert shift == pytest.approx(math.sqrt(rho), abs=5 * se)


def test_dask_with_bounds_matches_numpy():
    da = pytest.importorskip("dask.array")
    X = _mixed_scales(500)
    est = SeparateCovariance(bounds=(LOWER, UPPER), random_state=0)
    a = est.fit(X).covariance_
    b = est.fit(da.from_array(X, chunks=(97, 3))).covariance_
    np.testing.assert_allclose(a, b, rtol=1e-9)


def test_pca_with_bounds_matches_sklearn_at_infinite_epsilon():
    X = _mixed_scales(400)
    ours = PCA(2, epsilon=np.inf, bounds=(LOWER, UPPER)).fit(X)
    ref = SkPCA(2).fit(X)
    np.testing.assert_allclose(ours.mean_, ref.mean_, rtol=1e-9)
    np.testing.assert_allclose(
        np.abs(ours.components_ @ ref.components_.T), np.eye(2), atol=1e-8
    )
    np.testing.assert_allclose(
        ours.explained_variance_, ref.explained_variance_, rtol=1e-8
    )
    assert ours.bounds_ is not None and ours.data_norm_ == pytest.approx(math.sqrt(3))


def test_pca_top_k_with_bounds_gives_axes_in_original_units():
    # covariance="top_k" samples directions in unit coordinates; with bounds
    # PCA takes the axes of the covariance in original units instead.
    X = _mixed_scales(400)
    pca = PCA(2, epsilon=np.inf, bounds=(LOWER, UPPER), covariance="top_k").fit(X)
    ref = SkPCA(2).fit(X)
    np.testing.assert_allclose(
        np.abs(pca.components_ @ ref.components_.T), np.eye(2), atol=1e-6
    )


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_grid_search_over_epsilon_ranks_with_defaults(cls):
    # The default eigenvalue floor keeps every held-out log-likelihood finite:
    # the search ranks its candidates, without a warning.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 3)) * [0.3, 0.2, 0.1]
    extra = {"delta": 0.0} if cls is NuclearLaplaceCovariance else {}
    search = GridSearchCV(
        cls(data_norm=1.0, random_state=0, **extra), {"epsilon": [0.5, 1.0, 2.0]}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # (The seed, for a reproducible test, is said once per fit.)
        warnings.simplefilter("ignore", SeededNoiseWarning)
        search.fit(X)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_small_real_tables_with_defaults(cls):
    # scikit-learn's wine (178 rows) is below the private radius's minimum
    # at (1, 1e-6): the error says what to pass; breast_cancer (569) fits.
    from sklearn.datasets import load_breast_cancer, load_wine

    params = _params_for(cls)
    with pytest.raises(ValueError, match=r"Pass bounds=\(lower, upper\)"):
        cls(**params).fit(load_wine().data)
    with warnings.catch_warnings():
        # (NuclearLaplace at d = 30 warns that its Gibbs sampler is used.)
        warnings.filterwarnings("ignore", message="n_features=30 > exact_max_dim")
        est = cls(random_state=0, **params).fit(load_breast_cancer().data)
    assert est.data_norm_ > 0 and "radius" in est.budget_split_


def test_pca_small_table_with_defaults():
    from sklearn.datasets import load_breast_cancer

    pca = PCA(2, random_state=0).fit(load_breast_cancer().data)
    assert pca.components_.shape == (2, 30)


def _params_for(cls):
    return {"delta": 0.0} if cls is NuclearLaplaceCovariance else {}


def test_score_finite_on_a_singular_release_and_sklearns_without_noise():
    # Rows on a line: the clamped release has zero eigenvalues (covariance_
    # is singular with the default eigenvalue_floor=0), yet score's model,
    # floored at the public noise level, gives a finite log-likelihood. With
    # no noise the floor is 0 and the score is scikit-learn's (compared on
    # full-rank rows: on singular ones both scores are rounding artefacts,
    # -inf or finite by the last bit of the smallest eigenvalue).
    rng = np.random.default_rng(0)
    X = np.outer(rng.normal(size=2000), [0.3, 0.1, 0.0]) + [0.0, 0.0, 0.2]
    est = SeparateCovariance(data_norm=1.0, random_state=0).fit(X)
    assert np.linalg.eigvalsh(est.covariance_)[0] == pytest.approx(0.0, abs=1e-15)
    assert np.isfinite(est.score(X))
    Y = rng.normal(size=(2000, 2)) * [0.3, 0.1]
    exact = GaussianCovariance(epsilon=np.inf, data_norm=10.0).fit(Y)
    ref = EmpiricalCovariance().fit(Y)
    assert exact.score(Y) == pytest.approx(ref.score(Y), rel=1e-9)
