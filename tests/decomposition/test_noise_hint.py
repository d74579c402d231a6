"""The stability-based subspace learners have no signal-to-noise figure.

Their release is a projector chosen by a noisy stability test (or bottom):
the noise decides whether a subspace is released, not how far it is off, so
there is no noise scale to compare it with (see their Notes).
"""

import warnings

import numpy as np

from dpcov.decomposition import ApproximateSubspace, ExactSubspace
from dpcov.exceptions import NoiseDominatedWarning


def _silent_fit(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatedWarning)
        return est.fit(X)


def test_exact_subspace_has_no_figure():
    rng = np.random.default_rng(0)
    basis = rng.integers(-5, 6, size=(2, 6))
    X = (rng.integers(-9, 10, size=(200, 2)) @ basis).astype(float)
    est = _silent_fit(
        ExactSubspace(n_components=2, assume_centered=True, random_state=0), X
    )
    assert not hasattr(est, "signal_to_noise_")
    assert not hasattr(est, "noise_level_")


def test_approximate_subspace_has_no_figure():
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.normal(size=(50, 2)))[0].T
    X = rng.normal(size=(2000, 2)) @ basis + 1e-9 * rng.normal(size=(2000, 50))
    est = _silent_fit(ApproximateSubspace(n_components=2, random_state=1), X)
    assert not hasattr(est, "signal_to_noise_")
    assert not hasattr(est, "noise_level_")
