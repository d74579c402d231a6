"""Tests of the zipf module (synthetic data of Dong, Liang and Yi, 2022)."""

import numpy as np
import pytest

from dpcov.datasets import make_zipf_norms


@pytest.mark.parametrize(
    "n_buckets, trace", [(1, 1.0), (2, 0.33334), (4, 0.0410415625), (8, 0.0027550769)]
)
def test_traces_match_reference(n_buckets, trace):
    # Reference traces (n = 5e4, s = 3), computed from the generator.
    X = make_zipf_norms(50_000, 10, n_buckets=n_buckets, random_state=0)
    assert (X**2).sum() / X.shape[0] == pytest.approx(trace, rel=1e-8)


def test_norms_and_blocks():
    X = make_zipf_norms(1000, 4, n_buckets=3, random_state=1)
    norms = np.linalg.norm(X, axis=1)
    # Block edges floor(n P_k), P = cumulative shares of weights 1, 1/8, 1/27
    # (sum 1.16204): 1000 * 0.86055 -> 860, 1000 * 0.96812 -> 968.
    np.testing.assert_allclose(norms[:860], 0.25)
    np.testing.assert_allclose(norms[860:968], 0.5)
    np.testing.assert_allclose(norms[968:], 1.0)
    np.testing.assert_array_equal(
        X, make_zipf_norms(1000, 4, n_buckets=3, random_state=1)
    )
