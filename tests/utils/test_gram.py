"""Tests of the gram module (the chunked row pass)."""

import numpy as np
import pytest

from dpcov.utils._gram import (
    iter_processed_rows,
    processed_gram,
    processed_norms,
    processed_sum,
)


def _naive(X, clip_norm=None, center=None, clip_norm_centered=None):
    Y = X.astype(np.float64).copy()

    def clip(Y, r):
        norms = np.linalg.norm(Y, axis=1, keepdims=True)
        return Y * np.minimum(1.0, r / np.maximum(norms, 1e-300))

    if clip_norm is not None:
        Y = clip(Y, clip_norm)
    if center is not None:
        Y = Y - center
    if clip_norm_centered is not None:
        Y = clip(Y, clip_norm_centered)
    return Y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("chunk_rows", [None, 1, 7, 1000])
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"clip_norm": 1.5},
        {"clip_norm": 1.5, "center": np.array([0.3, -0.2, 0.1, 0.0])},
        {
            "clip_norm": 1.5,
            "center": np.array([0.3, -0.2, 0.1, 0.0]),
            "clip_norm_centered": 0.7,
        },
    ],
)
def test_processed_statistics_match_naive(dtype, chunk_rows, params):
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(103, 4)) * [2.0, 1.0, 0.5, 0.1]).astype(dtype)
    X[5] = 0.0  # a zero row must not produce NaN
    before = X.copy()
    Y = _naive(X, **params)
    rtol = 1e-12 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(
        processed_gram(X, chunk_rows=chunk_rows, **params),
        Y.T @ Y,
        rtol=rtol,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        processed_sum(X, chunk_rows=chunk_rows, **params),
        Y.sum(0),
        rtol=rtol,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        processed_norms(X, chunk_rows=chunk_rows, **params),
        np.linalg.norm(Y, axis=1),
        rtol=rtol,
        atol=1e-12,
    )
    np.testing.assert_array_equal(X, before)  # the input is never modified


def test_no_copy_when_nothing_changes():
    X = np.random.default_rng(0).normal(size=(50, 3))
    chunks = list(iter_processed_rows(X, chunk_rows=20, clip_norm=1e9))
    assert all(np.shares_memory(c, X) for c in chunks)
    assert sum(c.shape[0] for c in chunks) == 50


def test_readonly_input():
    X = np.random.default_rng(0).normal(size=(30, 3))
    X.setflags(write=False)
    gram = processed_gram(X, clip_norm=0.5)
    assert np.all(np.linalg.eigvalsh(gram) >= -1e-12)
    assert np.all(processed_norms(X, clip_norm=0.5) <= 0.5 + 1e-12)


def test_huge_finite_rows_are_clipped_not_zeroed():
    # A row whose squared norm overflows float64 must still be clipped to the
    # radius in its own direction.
    X = np.array([[3e200, 4e200], [0.3, 0.4]])
    norms = processed_norms(X)
    np.testing.assert_allclose(norms, [5e200, 0.5])
    rows = next(iter_processed_rows(X, clip_norm=1.0))
    np.testing.assert_allclose(rows, [[0.6, 0.8], [0.3, 0.4]])


@pytest.mark.parametrize(
    "params",
    [
        {"clip_norm": 1.5},
        {"clip_norm": 1.5, "center": np.array([0.3, -0.2, 0.1, 0.0])},
        {"clip_norm": 1.5, "center": np.array([0.3, -0.2]), "clip_norm_centered": 0.7},
        {"clip_norm_centered": 0.7, "center": np.array([0.3, -0.2])},
    ],
)
def test_known_norms_give_the_same_rows(params):
    # norms = the norms of the rows entering the last clipping step.
    rng = np.random.default_rng(1)
    d = params.get("center", np.zeros(4)).shape[0]
    X = rng.normal(size=(57, d)) * 2
    if "clip_norm_centered" in params:
        before = {k: v for k, v in params.items() if k != "clip_norm_centered"}
        norms = processed_norms(X, **before)
    else:
        norms = processed_norms(X)
    expected = processed_gram(X, chunk_rows=10, **params)
    got = processed_gram(X, chunk_rows=10, norms=norms, **params)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
