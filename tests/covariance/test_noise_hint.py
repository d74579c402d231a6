"""The signal-to-noise figure and NoiseDominatedWarning: released values only."""

import math
import warnings

import numpy as np
import pytest

from dpcov.accounting import gaussian_mu
from dpcov.base import warn_if_noise_dominated
from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA
from dpcov.exceptions import NoiseDominatedWarning

ESTIMATORS = [
    GaussianCovariance,
    SeparateCovariance,
    AdaptiveCovariance,
    EigenSamplingCovariance,
    NuclearLaplaceCovariance,
]


def _params(cls, **params):
    if cls is NuclearLaplaceCovariance:
        params.setdefault("delta", 0.0)
    return params


def _strong(n=20000, seed=0):
    # A clear spectrum well inside the unit ball: far above the noise.
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 4)) * np.array([1.0, 0.5, 0.3, 0.2]) / 5.0


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_figure_and_shrinkage_read_the_same_estimate(cls):
    # The figure is sqrt(s / (1 - s)) for the shrinkage factor s: a clear
    # spectrum has a figure above 1 and is kept as released (shrinkage_ 0);
    # with shrinkage=None the figure is the same and nothing is removed.
    est = cls(**_params(cls, data_norm=1.0, random_state=0)).fit(_strong())
    assert est.signal_to_noise_ > 1
    assert est.shrinkage_ == 0.0
    raw = cls(**_params(cls, data_norm=1.0, random_state=0, shrinkage=None))
    raw.fit(_strong())
    assert raw.shrinkage_ == 0.0
    assert raw.signal_to_noise_ == pytest.approx(est.signal_to_noise_, rel=1e-9)
    np.testing.assert_array_equal(raw.covariance_, est.covariance_)
    # Noise only: the factor applied is the Wiener gain of the figure
    # (snr**2 / (1 + snr**2)), or 0 when the release is within the noise.
    with pytest.warns(NoiseDominatedWarning):
        noisy = cls(
            **_params(cls, data_norm=1.0, assume_centered=True, random_state=0)
        ).fit(np.zeros((2000, 4)))
    snr = noisy.signal_to_noise_
    kept = 1.0 - noisy.shrinkage_
    assert kept == 0.0 or kept == pytest.approx(snr**2 / (1 + snr**2), rel=1e-9)


def test_gauss_noise_level_closed_form():
    # GaussCov adds N(0, s^2) to each upper-triangle entry with
    # s = R^2 / (n sqrt(rho)), R = data_norm + ||location_|| when centring;
    # the level is the semicircle edge 2 sqrt(d) s.
    X = _strong(5000)
    n, d = X.shape
    est = GaussianCovariance(data_norm=1.0, random_state=0).fit(X)
    rho = est.budget_split_["covariance"].rho
    radius = 1.0 + np.linalg.norm(est.location_)
    s = radius**2 / (n * math.sqrt(rho))
    assert est.noise_level_ == pytest.approx(2 * math.sqrt(d) * s, rel=1e-12)
    # data_norm given: only the mean (1/8) is taken from the budget, whose
    # steps are Gaussian only, so at the analytic Gaussian's mu**2 / 2.
    assert rho == pytest.approx(0.875 * gaussian_mu(1.0, 1e-6) ** 2 / 2, rel=1e-12)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_warns_on_noise_and_not_on_signal(cls):
    # Rows all equal to zero: the release is pure noise.
    with pytest.warns(NoiseDominatedWarning, match="dominated by noise"):
        est = cls(**_params(cls, data_norm=1.0, random_state=0)).fit(
            np.zeros((2000, 4))
        )
    assert est.signal_to_noise_ < 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatedWarning)
        cls(**_params(cls, data_norm=1.0, random_state=0)).fit(_strong())


@pytest.mark.parametrize("cls", [*ESTIMATORS, PCA])
def test_warning_points_at_the_callers_line(cls):
    # The warning names the user's fit call (the first frame outside dpcov,
    # scikit-learn and joblib), not a line of dpcov.
    params = {"n_components": 2} if cls is PCA else {}
    with pytest.warns(NoiseDominatedWarning) as record:
        cls(**_params(cls, data_norm=1.0, random_state=0, **params)).fit(
            np.zeros((2000, 4))
        )
    assert {w.filename for w in record} == {__file__}


def test_no_noise_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatedWarning)
        est = GaussianCovariance(epsilon=np.inf, data_norm=1.0).fit(_strong(100))
    assert est.noise_level_ == 0 and est.signal_to_noise_ == np.inf


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_hint_depends_on_the_release_only(cls):
    # Two datasets with the same clipped rows (one has every row 1000 times
    # longer, so every row is clipped) give the same release with the same
    # seed, hence the same figure and the same warning, although their true
    # norms and counts of clipped rows differ.
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(3000, 3))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)  # norm exactly 1
    long = rows * 1000.0
    fits = []
    for X in (rows, long):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = cls(
                **_params(cls, data_norm=1.0, assume_centered=True, random_state=7)
            ).fit(X)
        messages = [
            str(w.message) for w in caught if w.category is NoiseDominatedWarning
        ]
        fits.append((est, messages))
    (a, warned_a), (b, warned_b) = fits
    np.testing.assert_allclose(a.covariance_, b.covariance_, rtol=1e-9, atol=1e-15)
    assert a.signal_to_noise_ == pytest.approx(b.signal_to_noise_, rel=1e-9)
    assert a.noise_level_ == b.noise_level_
    assert warned_a == warned_b


def test_message_carries_no_data():
    X = np.zeros((2000, 3))
    X[0] = [123456.789, 0.0, 0.0]
    with pytest.warns(NoiseDominatedWarning) as record:
        GaussianCovariance(data_norm=1.0, random_state=0).fit(X)
    message = str(record[0].message)
    assert "123456" not in message and "2000" not in message


def test_pca_reports_its_covariance_figure():
    pca = PCA(2, data_norm=1.0, random_state=0).fit(_strong())
    inner = pca.covariance_estimator_
    assert pca.signal_to_noise_ == inner.signal_to_noise_ > 1
    assert pca.noise_level_ == inner.noise_level_
    # Twenty unit rows in six dimensions: whatever threshold AdaptiveCov
    # picks, the noise dominates (it warned for 20 of 20 seeds). Small rows
    # would not do: it now clips at their scale, where the noise is small too.
    X = np.random.default_rng(0).normal(size=(20, 6))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    with pytest.warns(NoiseDominatedWarning):
        PCA(2, data_norm=1.0, random_state=0).fit(X)


@pytest.mark.parametrize(
    "figure, printed",
    [(0.996, "0.99"), (0.9999999, "0.99"), (0.5, "0.5"), (0.0347, "0.034"), (0.0, "0")],
)
def test_the_printed_figure_is_rounded_down(figure, printed):
    # A figure just below 1 must not print as "1 < 1": it is rounded down to
    # two significant digits.
    with pytest.warns(NoiseDominatedWarning) as record:
        warn_if_noise_dominated(GaussianCovariance(), figure)
    assert f"signal_to_noise_={printed} < 1" in str(record[0].message)
