"""What the two subspace learners share (dpcov.decomposition._subspace_base).

``transform``, ``inverse_transform``, ``get_projection`` and ``score`` are
post-processing of the released ``components_``; they are tested here on
both estimators, fitted without noise (``epsilon=inf``) on rows that lie
exactly in a 2-dimensional subspace of R^4, where the release is that
subspace.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pytest
from sklearn.base import clone

from dpcov.decomposition import ApproximateSubspace, ExactSubspace

ESTIMATORS = [
    ExactSubspace(n_components=2, epsilon=np.inf, assume_centered=True),
    ApproximateSubspace(
        n_components=2, epsilon=np.inf, n_blocks=2, assume_centered=True
    ),
]


def _rows(n_samples=400, seed=0):
    # Integer rows in the span of two integer vectors: exact arithmetic sees
    # the subspace, and every block of them spans it.
    rng = np.random.default_rng(seed)
    basis = np.array([[1, 2, 0, -1], [0, 1, 3, 1]])
    return (rng.integers(-9, 10, size=(n_samples, 2)) @ basis).astype(float)


@pytest.fixture(params=ESTIMATORS, ids=lambda e: type(e).__name__)
def fitted(request):
    return clone(request.param).set_params(random_state=0).fit(_rows())


def test_projection_is_the_orthogonal_projector(fitted):
    P = fitted.get_projection()
    np.testing.assert_allclose(P, P.T, atol=1e-12)
    np.testing.assert_allclose(P @ P, P, atol=1e-12)
    assert np.trace(P) == pytest.approx(2.0)


def test_inverse_transform_of_transform_is_the_projection(fitted):
    X = _rows(50, seed=1)
    np.testing.assert_allclose(
        fitted.inverse_transform(fitted.transform(X)),
        X @ fitted.get_projection(),
        atol=1e-9,
    )


def test_score_is_the_captured_energy(fitted):
    # sum ||P x||^2 / sum ||x||^2 over the rows, also off the subspace.
    Y = np.vstack([_rows(50, seed=1), np.full((1, 4), 100.0)])
    P = fitted.get_projection()
    expected = np.sum((Y @ P) ** 2) / np.sum(Y**2)
    assert fitted.score(Y) == pytest.approx(expected)
    assert fitted.score(np.zeros((3, 4))) == 1.0


def test_exact_subspace_captures_rows_of_the_subspace():
    # Without noise the exact learner releases the subspace itself.
    estimator = clone(ESTIMATORS[0]).set_params(random_state=0).fit(_rows())
    assert estimator.score(_rows(50, seed=1)) == pytest.approx(1.0)


def test_score_is_scale_invariant_and_silent_on_extreme_rows(fitted):
    # The ratio does not depend on a common scale; rows near the largest
    # float must give the same value with no overflow warning (the test
    # suite turns warnings into errors).
    Y = np.vstack([_rows(50, seed=1), np.full((1, 4), 100.0)])
    assert fitted.score(Y * 1e306) == pytest.approx(fitted.score(Y))


def test_inverse_transform_needs_n_components_columns(fitted):
    with pytest.raises(ValueError, match="is expecting 2 \\(its n_components_\\)"):
        fitted.inverse_transform(np.ones((3, 4)))
