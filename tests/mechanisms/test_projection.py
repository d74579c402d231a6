"""Tests of the projection module."""

import numpy as np
import pytest
from scipy import linalg, optimize

from dpcov.mechanisms import (
    project_capped_simplex,
    project_feasible,
    project_l2_ball,
    project_psd,
    project_psd_bounded,
    spectral_map,
)
from dpcov.mechanisms._projection import symmetric_eigh, symmetric_eigvalsh


def _random_symmetric(rng, d):
    a = rng.normal(size=(d, d))
    return (a + a.T) / 2


@pytest.mark.parametrize("cap", [0.0, 0.5, 2.0, 100.0])
def test_capped_simplex_matches_generic_solver(cap, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    for _ in range(10):
        v = rng.normal(size=5) * 2
        ours = project_capped_simplex(v, cap)
        res = optimize.minimize(
            lambda z, v=v: np.sum((z - v) ** 2),
            np.zeros(5),
            jac=lambda z, v=v: 2 * (z - v),
            bounds=[(0, None)] * 5,
            constraints=[{"type": "ineq", "fun": lambda z: cap - z.sum()}],
            method="SLSQP",
            options={"ftol": 1e-14, "maxiter": 500},
        )
        np.testing.assert_allclose(ours, res.x, atol=1e-6)
        assert np.all(ours >= 0) and ours.sum() <= cap + 1e-12


def test_feasible_projection_properties(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    d, t = 6, 1.5
    for _ in range(20):
        y = _random_symmetric(rng, d)
        p = project_feasible(y, t)
        w = np.linalg.eigvalsh(p)
        assert w.min() >= -1e-12 and np.trace(p) <= t + 1e-12
        np.testing.assert_allclose(project_feasible(p, t), p, atol=1e-12)  # idempotent
        # Variational inequality <y - P(y), Z - P(y)> <= 0 for feasible Z
        # certifies P(y) is the projection onto the convex set.
        for _ in range(20):
            b = rng.normal(size=(d, d))
            z = b @ b.T
            z *= rng.uniform(0, t) / np.trace(z)
            assert np.sum((y - p) * (z - p)) <= 1e-10
        # Non-expansive.
        y2 = _random_symmetric(rng, d)
        assert (
            np.linalg.norm(project_feasible(y2, t) - p)
            <= np.linalg.norm(y2 - y) + 1e-12
        )


def test_psd_projections(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    y = _random_symmetric(rng, 5)
    w, v = np.linalg.eigh(y)
    np.testing.assert_allclose(project_psd(y), (v * np.maximum(w, 0)) @ v.T, atol=1e-12)
    np.testing.assert_allclose(
        project_psd_bounded(y, 0.5), (v * np.clip(w, 0, 0.5)) @ v.T, atol=1e-12
    )
    # Only the symmetric part counts; the output is exactly symmetric.
    a = rng.normal(size=(5, 5))
    m = spectral_map(a, lambda w: w)
    assert np.array_equal(m, m.T)
    np.testing.assert_allclose(m, (a + a.T) / 2, atol=1e-12)


def test_project_l2_ball():
    np.testing.assert_allclose(project_l2_ball(np.array([3.0, 4.0]), 1.0), [0.6, 0.8])
    np.testing.assert_array_equal(
        project_l2_ball(np.array([0.3, 0.4]), 1.0), [0.3, 0.4]
    )


def test_projections_with_floor(global_random_seed):
    # With a floor f the sets become {S >= f I, ...}; {S >= f I, tr S <= t} is
    # f I + {T >= 0, tr T <= t - d f}, so the variational inequality holds for
    # its members, and f I is returned when d f > t (the set is empty).
    rng = np.random.default_rng(global_random_seed)
    d, t, f = 5, 2.0, 0.1
    for _ in range(10):
        y = _random_symmetric(rng, d)
        p = project_feasible(y, t, floor=f)
        w = np.linalg.eigvalsh(p)
        assert w.min() >= f - 1e-12 and w.sum() <= t + 1e-12
        for _ in range(10):
            b = rng.normal(size=(d, d))
            z = b @ b.T
            z = f * np.eye(d) + z * rng.uniform(0, t - d * f) / np.trace(z)
            assert np.sum((y - p) * (z - p)) <= 1e-10
        assert np.linalg.eigvalsh(project_psd(y, floor=f)).min() >= f - 1e-12
        w = np.linalg.eigvalsh(project_psd_bounded(y, 0.5, floor=f))
        assert w.min() >= f - 1e-12 and w.max() <= 0.5 + 1e-12
    np.testing.assert_allclose(
        project_feasible(np.eye(3), 0.5, floor=0.2), 0.2 * np.eye(3)
    )


@pytest.mark.parametrize("d", [1, 2, 3, 5, 8, 17, 31, 32, 40])
def test_host_eigendecomposition_is_scipys_bit_for_bit(d, global_random_seed):
    # Small matrices call LAPACK's dsyevr directly, as SciPy's eigh and
    # eigvalsh call it: the results must be identical, not merely close, so
    # that no fit's output depends on which path ran. Random, tied, zero,
    # Fortran-ordered and strided inputs.
    rng = np.random.default_rng(global_random_seed)
    tied = np.diag(np.repeat([2.0, -1.0], (d + 1) // 2)[:d])
    wide = _random_symmetric(rng, 2 * d)[::2, ::2]
    for matrix in (
        _random_symmetric(rng, d),
        1e-300 * _random_symmetric(rng, d),
        tied,
        np.zeros((d, d)),
        np.asfortranarray(_random_symmetric(rng, d)),
        wide,
    ):
        values, vectors = symmetric_eigh(matrix)
        expected_values, expected_vectors = linalg.eigh(matrix, check_finite=False)
        np.testing.assert_array_equal(values, expected_values)
        np.testing.assert_array_equal(vectors, expected_vectors)
        np.testing.assert_array_equal(
            symmetric_eigvalsh(matrix), linalg.eigvalsh(matrix, check_finite=False)
        )


def test_spectrum_forms_matrices_and_pseudo_inverse(global_random_seed):
    # One eigendecomposition gives the matrix for any values (exactly
    # symmetric) and the pseudo-inverse with pinvh's cutoff, within 1e-10.
    from dpcov.mechanisms._projection import Spectrum

    rng = np.random.default_rng(global_random_seed)
    A = rng.normal(size=(40, 40))
    A = A + A.T
    spectrum = Spectrum.of(A)
    np.testing.assert_allclose(spectrum.matrix(), A, atol=1e-12)
    clamped = np.clip(spectrum.values, 0.0, 5.0)
    P = spectrum.matrix(clamped)
    np.testing.assert_array_equal(P, P.T)
    np.testing.assert_allclose(P, project_psd_bounded(A, 5.0), atol=1e-12)
    expected = linalg.pinvh(P)
    np.testing.assert_allclose(
        spectrum.pseudo_inverse(clamped), expected, atol=1e-10 * np.abs(expected).max()
    )
    np.testing.assert_array_equal(spectrum.matrix(np.zeros(40)), np.zeros((40, 40)))
