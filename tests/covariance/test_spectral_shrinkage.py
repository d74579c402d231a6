"""The shrinkage's closed forms from the release's eigendecomposition (d >= 128)."""

import numpy as np
import pytest
from scipy.stats import ortho_group

from dpcov.accounting import ZCDP
from dpcov.covariance import (
    AdaptiveCovariance,
    GaussianCovariance,
    SeparateCovariance,
)
from dpcov.covariance._separate import separate_release
from dpcov.covariance._spectral_shrinkage import (
    Metric,
    _haar_energy,
    entry_noise_kappa,
    entry_noise_null,
    rotation_energy,
    semicircle_quantiles,
    spectral_divergence,
    spectral_null,
)
from dpcov.mechanisms._noise import symmetric_matrix
from dpcov.mechanisms._projection import SPECTRAL_FROM, Spectrum


def _clamp(floor, upper):
    def project(values):
        return np.clip(values, floor, upper)

    def slopes(values):
        return ((values > floor) & (values < upper)).astype(float)

    return project, slopes


def _upper_triangle_divergence(Y, project, weights, step=1e-6):
    # sum_{i<=j} c_ij dP_ij / dy_ij by central differences, c_ij = 2 h_i^2 h_j^2
    # off the diagonal and h_i^4 on it.
    def release(M):
        spectrum = Spectrum.of(M)
        return spectrum.matrix(project(spectrum.values))

    d = Y.shape[0]
    total = 0.0
    for i in range(d):
        for j in range(i, d):
            H = np.zeros((d, d))
            H[i, j] = H[j, i] = step
            slope = (release(Y + H)[i, j] - release(Y - H)[i, j]) / (2 * step)
            weight = (
                weights[i] ** 4 if i == j else 2 * weights[i] ** 2 * weights[j] ** 2
            )
            total += weight * slope
    return total


@pytest.mark.parametrize("weighted", [False, True])
def test_divergence_matches_finite_differences(weighted):
    # The closed form is exact but for the diagonal entries' share, taken at
    # its delocalised value; its exact value lies in [0, sum h^4] (Gamma in
    # [0, 1] for a clamp), so the two differ by at most sum h^4, a 1/d share.
    rng = np.random.default_rng(0)
    d = 30
    weights = rng.uniform(0.5, 2.0, d) if weighted else np.ones(d)
    Y = symmetric_matrix(rng, d, 0.2) + np.diag(np.linspace(-1, 4, d))
    project, slopes = _clamp(0.0, 3.0)
    spectrum = Spectrum.of(Y)
    metric = Metric.of(spectrum.vectors, weights)
    closed = spectral_divergence(
        spectrum.values, project(spectrum.values), slopes(spectrum.values), metric
    )
    exact = _upper_triangle_divergence(Y, project, weights)
    assert abs(closed - exact) <= np.sum(weights**4)
    # A wrong factor on the pairs' term would be far outside it.
    assert exact > 4 * np.sum(weights**4)


def test_stein_estimate_is_unbiased_for_gaussian_entries():
    # E kappa_hat = E <P, P - C> for Gaussian entries (Stein's identity), up
    # to the diagonal share's approximation (at most sigma^2 d, under 1% here)
    # and the Monte Carlo error: 4 standard errors of the paired difference.
    rng = np.random.default_rng(1)
    d, sigma = SPECTRAL_FROM, 0.05
    truth = np.diag(np.r_[np.linspace(3.0, 1.0, 5), np.zeros(d - 5)])
    project, slopes = _clamp(0.0, 10.0)
    estimates, actual = [], []
    for _ in range(60):
        Y = truth + symmetric_matrix(rng, d, sigma)
        spectrum = Spectrum.of(Y)
        mapped = project(spectrum.values)
        metric = Metric.of(spectrum.vectors, np.ones(d))
        estimates.append(
            entry_noise_kappa(
                spectrum,
                mapped,
                slopes(spectrum.values),
                metric,
                variance=sigma**2,
                centring=0.0,
            )
        )
        P = spectrum.matrix(mapped)
        actual.append(float(np.sum(P * (P - truth))))
    difference = np.array(estimates) - np.array(actual)
    error = 4 * difference.std(ddof=1) / np.sqrt(difference.size)
    assert abs(difference.mean()) <= error + 0.01 * np.mean(actual)


def test_entry_noise_null_mean_and_spread():
    # At truth zero the energy of the PSD part of the noise is d^2 sigma^2 / 2
    # exactly (E and -E have the same law); the bound on its standard
    # deviation (Gaussian Poincare inequality) holds for the draws.
    rng = np.random.default_rng(2)
    d, sigma = SPECTRAL_FROM, 0.1
    project, _ = _clamp(0.0, np.inf)
    metric = Metric.of(np.eye(d), np.ones(d))
    mean, bound = entry_noise_null(
        project, metric, std=sigma, law="gaussian", centring=0.0
    )
    assert mean == pytest.approx(d**2 * sigma**2 / 2, rel=0.01)
    draws = [
        np.sum(np.maximum(np.linalg.eigvalsh(symmetric_matrix(rng, d, sigma)), 0) ** 2)
        for _ in range(200)
    ]
    # The closed form is the mean of the draws within 4 standard errors
    # (and the semicircle's O(1/d) edge correction, 1%).
    assert abs(np.mean(draws) - mean) <= 4 * np.std(draws) / np.sqrt(200) + 0.01 * mean
    assert np.std(draws, ddof=1) <= bound


def test_haar_moments_with_weights():
    # E ||V g V^T||_W^2 over random directions: the closed form against
    # random orthogonal matrices (4 standard errors).
    rng = np.random.default_rng(3)
    d = 16
    weights = rng.uniform(0.2, 3.0, d)
    g = np.abs(rng.standard_normal(d))
    D = np.diag(weights)
    draws = []
    for seed in range(4000):
        V = ortho_group.rvs(d, random_state=seed)
        M = D @ (V * g) @ V.T @ D
        draws.append(np.sum(M**2))
    metric = Metric.of(np.eye(d), weights)
    closed = _haar_energy(g, metric)
    assert abs(np.mean(draws) - closed) <= 4 * np.std(draws) / np.sqrt(len(draws))


def test_semicircle_quantiles():
    values = semicircle_quantiles(2001, 2.0)
    assert values[1000] == pytest.approx(0.0, abs=1e-12)
    # The second moment of the semicircle of radius 2 is 1.
    assert np.mean(values**2) == pytest.approx(1.0, rel=1e-3)


def test_spectral_null_matches_separate_releases_at_truth_zero():
    rng = np.random.default_rng(4)
    d = SPECTRAL_FROM
    budget = ZCDP(0.05)
    project, _ = _clamp(0.0, 1.0)
    energies = []
    for _ in range(50):
        release = separate_release(
            np.zeros((d, d)), n_samples=1000, radius=1.0, budget=budget, rng=rng
        )
        energies.append(np.sum(project(release.spectrum.values) ** 2))
    metric = Metric.of(np.eye(d), np.ones(d))
    mean, std = spectral_null(
        project, metric, value_noise=release.value_noise, centring=0.0
    )
    assert (
        abs(np.mean(energies) - mean) <= 4 * np.std(energies) / np.sqrt(50) + 0.1 * std
    )
    assert std == pytest.approx(np.std(energies, ddof=1), rel=0.5)


def test_rotation_energy_against_perturbed_eigenvectors():
    # A few well separated eigenvalues and a flat bulk, eigenvectors of
    # S + E: half the squared error of the rotation, against its first-order
    # closed form, within the approximation's stated level (20%).
    rng = np.random.default_rng(5)
    d, sigma = SPECTRAL_FROM, 0.01
    values = np.r_[np.zeros(d - 4), [0.5, 1.0, 1.5, 2.0]]
    S = np.diag(values)
    energies = []
    for _ in range(20):
        vectors = Spectrum.of(S + symmetric_matrix(rng, d, sigma)).vectors
        rotated = (vectors * values) @ vectors.T
        energies.append(np.sum(rotated * (rotated - S)))
    assert rotation_energy(values, sigma) == pytest.approx(np.mean(energies), rel=0.2)


@pytest.mark.parametrize(
    "cls", [GaussianCovariance, SeparateCovariance, AdaptiveCovariance]
)
def test_closed_forms_zero_pure_noise_and_keep_signal(cls):
    # Rows without signal at a budget far too small: the zero matrix; a strong
    # signal: the release kept as is (no shrinkage), at d = SPECTRAL_FROM.
    rng = np.random.default_rng(6)
    d = SPECTRAL_FROM
    noise = rng.standard_normal((2000, d)) * 0.01
    weak = cls(epsilon=0.1, data_norm=1.0, random_state=0).fit(noise)
    assert weak.shrinkage_ == 1.0
    assert not np.any(weak.covariance_)
    strong = rng.standard_normal((200_000, d)) * 0.01
    strong[:, :3] *= 50
    fit = cls(epsilon=4.0, data_norm=3.0, random_state=0).fit(strong)
    assert fit.shrinkage_ == 0.0
    assert fit.signal_to_noise_ > 1.0
