"""SeparateCov / SeparateLapCov: noise scales, pairing, neighbour tests."""

import math

import numpy as np
import pytest

from dpcov.covariance import SeparateCovariance
from tests._privacy_checks import (
    fitted_mechanism,
    gaussian_shift,
    laplace_event_loss,
    recorded_releases,
)

from ._rows import axis_rows


def _estimator(rng, **params):
    return SeparateCovariance(
        data_norm=1.0, assume_centered=True, store_raw=True, random_state=rng, **params
    )


def _fit(X, rng, **params):
    return _estimator(rng, **params).fit(X)


def _eigenvalues(X, rng, reps, **params):
    # Eigenvalues of reps releases drawn from the fit's own mechanism on its
    # inputs (fitted_mechanism: the law of refitting, without the refits).
    draw = fitted_mechanism(_estimator(rng, **params), X)
    return np.linalg.eigvalsh(np.array([draw(rng).raw for _ in range(reps)]))


def _recorded_fit(X, rng, **params):
    """One fit and its two releases: the noisy matrix, then the eigenvalues.

    (The later recorded releases are the shrinkage's simulations on the
    released matrix, from a generator of its own.)
    """
    with recorded_releases() as releases:
        est = _fit(X, rng, **params)
    matrix, values = releases[:2]
    assert matrix.value.shape == (X.shape[1],) * 2 and values.value.ndim == 1
    return est, matrix, values


def _paired(noisy_matrix, noisy_values):
    # The paper's pairing (Algorithm 2): the i-th largest noisy eigenvalue
    # with the eigenvector of the i-th largest algebraic eigenvalue of the
    # noisy matrix: P diag(l) P^T.
    vectors = np.linalg.eigh(noisy_matrix)[1][:, ::-1]
    return (vectors * np.sort(noisy_values)[::-1]) @ vectors.T


@pytest.mark.parametrize("pure", [False, True])
def test_eigenvalue_noise_scale_closed_form(pure, global_random_seed):
    # zCDP: lambda + N(0, s^2), s = sqrt(2) R^2 / (n sqrt(rho)) (L2 sensitivity
    # sqrt(2) R^2/n at rho/2). Pure: Laplace scale 4 R^2/(n eps) (L1
    # sensitivity 2 R^2/n at eps/2). The eigenvalues are 0.1 apart, far above
    # the noise, so sorting does not mix them. One fit is exact: the second
    # recorded release is the true spectrum (descending) plus a draw whose
    # law and scale must be the closed form's, and the raw release's
    # eigenvalues are its noisy values (the samplers' laws are tested in
    # tests/mechanisms).
    counts = [400, 300, 200, 100]
    X = axis_rows(counts, 4)
    n = X.shape[0]
    truth = np.array(counts) / n
    rng = np.random.default_rng(global_random_seed)
    params = dict(epsilon=2.0, delta=0.0) if pure else dict(rho=0.5)
    est, _, values = _recorded_fit(X, rng, **params)
    assert values.law == ("laplace" if pure else "gaussian")
    closed_form = 4 / (n * 2.0) if pure else math.sqrt(2) / (n * math.sqrt(0.5))
    assert values.scale == pytest.approx(closed_form, rel=1e-12)
    np.testing.assert_allclose(values.value, truth, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        np.linalg.eigvalsh(est.raw_covariance_),
        np.sort(values.noisy),
        rtol=0,
        atol=1e-12,
    )


def test_pairing_keeps_signs(global_random_seed):
    # With eigenvector noise large enough that the noisy matrix has large
    # negative eigenvalues, the paper's pairing gives raw = P diag(l) P^T, whose
    # trace is sum(l) = tr(Sigma) + N(0, d s^2). The reference code's SVD
    # pairing flips the sign of every direction with a negative noisy
    # eigenvalue and would bias the trace down by O(1). One fit is exact: raw
    # is P diag(l) P^T for the recorded noisy matrix (which has negative
    # eigenvalues here) and the recorded noisy eigenvalues l, which are the
    # true spectrum plus Gaussian noise of s.d. s.
    X = axis_rows([10, 5, 5], 6)
    n = X.shape[0]
    rng = np.random.default_rng(global_random_seed)
    s = math.sqrt(2) / (n * math.sqrt(0.5))
    est, matrix, values = _recorded_fit(X, rng, rho=0.5)
    assert np.linalg.eigvalsh(matrix.noisy)[0] < -0.05  # the case at stake
    assert values.law == "gaussian"
    assert values.scale == pytest.approx(s, rel=1e-12)
    np.testing.assert_allclose(
        values.value, [0.5, 0.25, 0.25, 0, 0, 0], rtol=0, atol=1e-12
    )
    raw = est.raw_covariance_
    np.testing.assert_allclose(
        raw, _paired(matrix.noisy, values.noisy), rtol=0, atol=1e-12
    )
    assert np.trace(raw) == pytest.approx(np.sum(values.noisy), abs=1e-12)


def test_eigenvector_noise_closed_form(global_random_seed):
    # The eigenvectors are those of Sigma + s_v W, W a Gaussian Wigner matrix,
    # s_v = sqrt(2) R^2 / (n sqrt(rho)) (GaussCov at rho/2). One fit is exact:
    # the first recorded release is Sigma plus a symmetric draw whose law and
    # scale must be the closed form's (the Wigner law itself is tested in
    # tests/mechanisms/test_noise.py), and the raw release's eigenvectors are
    # that noisy matrix's (raw = P diag(l) P^T). (It replaces a two-sample KS
    # test of |<top eigenvector, e1>| against a direct simulation at s_v.)
    X = axis_rows([6, 4], 2)
    n, rho = 10, 2.0
    s_v = math.sqrt(2) / (n * math.sqrt(rho))
    rng = np.random.default_rng(global_random_seed)
    est, matrix, values = _recorded_fit(X, rng, rho=rho)
    assert matrix.law == "gaussian"
    assert matrix.scale == pytest.approx(s_v, rel=1e-12)
    np.testing.assert_allclose(matrix.value, np.diag([0.6, 0.4]), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(matrix.noise, matrix.noise.T)
    np.testing.assert_allclose(
        est.raw_covariance_, _paired(matrix.noisy, values.noisy), rtol=0, atol=1e-12
    )


@pytest.mark.parametrize("pure", [False, True])
def test_eigenvector_noise_is_gausscov_at_half_the_budget(pure, global_random_seed):
    # GaussCov (LapCov) at half the budget: s.d. R^2 / (n sqrt(rho/2)), or
    # Laplace scale sqrt(d (d + 3) / 2) R^2 / (n eps/2) (exact, on one fit).
    X = axis_rows([400, 300, 200, 100], 4)
    n = X.shape[0]
    params = dict(epsilon=2.0, delta=0.0) if pure else dict(rho=0.5)
    _, matrix, _ = _recorded_fit(X, global_random_seed, **params)
    assert matrix.law == ("laplace" if pure else "gaussian")
    closed_form = math.sqrt(14) / (n * 1.0) if pure else 1 / (n * math.sqrt(0.25))
    assert matrix.scale == pytest.approx(closed_form, rel=1e-12)
    np.testing.assert_allclose(matrix.value, X.T @ X / n, rtol=0, atol=1e-12)


def _neighbours():
    # Sorted eigenvalues (60, 30, 1)/91 vs (61, 30, 0)/91: L2 distance
    # sqrt(2)/n (worst case of Lemma 8), L1 distance 2/n (Lemma 12).
    a = axis_rows([60, 30, 1], 3)
    b = axis_rows([61, 30, 0], 3)
    return a, b


def test_gaussian_eigenvalue_neighbours(global_random_seed):
    # (l1 - l3)/sqrt(2) moves by Delta = sqrt(2)/n between neighbours; the
    # eigenvalue step is rho/2-zCDP, so Delta / s = sqrt(2 rho/2) = 1 at rho=1.
    a, b = _neighbours()
    rng = np.random.default_rng(global_random_seed)

    def stat(X):
        w = _eigenvalues(X, rng, 3000, rho=1.0)
        return (w[:, 2] - w[:, 0]) / math.sqrt(2)

    shift, se = gaussian_shift(stat(a), stat(b))
    assert shift == pytest.approx(1.0, abs=5 * se)


def test_laplace_eigenvalue_neighbours(global_random_seed):
    # Event {l1 below both neighbours' values, l3 above both}: density ratio
    # exp(D1 / b) = exp((2/n) / (4/(n eps))) = exp(eps/2) = e^2 at eps = 4.
    a, b = _neighbours()
    n = a.shape[0]
    rng = np.random.default_rng(global_random_seed)

    def events(X):
        w = _eigenvalues(X, rng, 6000, epsilon=4.0, delta=0.0)
        return (w[:, 2] < 60 / n) & (w[:, 0] > 1 / n)

    loss, se = laplace_event_loss(events(a), events(b))
    assert loss == pytest.approx(2.0, abs=5 * se)
