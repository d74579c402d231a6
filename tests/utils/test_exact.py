"""Tests for dpcov.utils._exact: exact integer linear algebra."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from dpcov.utils._exact import (
    IntegerSpan,
    direction,
    integer_rows,
    max_hyperplane_count,
    rref,
)


def _brute_hyperplane(points, dim):
    # Largest subset of rank <= dim - 1 (plus the zero points), by brute force.
    zeros = sum(1 for p in points if not any(p))
    nonzero = [p for p in points if any(p)]
    best = 0
    for mask in range(1 << len(nonzero)):
        subset = [nonzero[i] for i in range(len(nonzero)) if mask >> i & 1]
        if not subset or len(rref(subset)[0]) <= dim - 1:
            best = max(best, len(subset))
    return zeros + best


def test_integer_rows_are_exact_primitive_multiples():
    rng = np.random.default_rng(0)
    X = np.vstack(
        [
            rng.normal(size=(20, 4)) * 10.0 ** rng.integers(-30, 30, (20, 1)),
            [[0.0, 0.0, 0.0, 0.0], [0.5, -1.5, 0.0, 2.0]],
        ]
    )
    rows = integer_rows(X)
    assert rows[-1] == (1, -3, 0, 4)
    assert rows[-2] == (0, 0, 0, 0)
    for x, r in zip(X, rows, strict=True):
        if not any(r):
            continue
        assert np.gcd.reduce([abs(v) for v in r]) == 1
        # r = c x for one positive rational c, exactly: all cross-products agree.
        j = next(i for i, v in enumerate(r) if v)
        c = Fraction(r[j]) / Fraction(float(x[j]))
        assert c > 0
        assert all(
            Fraction(v) == c * Fraction(float(xi)) for v, xi in zip(r, x, strict=True)
        )


def test_membership_has_no_tolerance():
    # A point one ulp off the span is outside it: a tolerance would accept it.
    basis = np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 1.0]])
    x = 3.0 * basis[0] - 2.0 * basis[1]
    off = x.copy()
    off[2] = np.nextafter(off[2], np.inf)
    span = IntegerSpan.from_rows(integer_rows(basis))
    rows = np.array(integer_rows(np.vstack([x, off])), dtype=object)
    assert span.contains(rows).tolist() == [True, False]


def test_span_key_is_canonical():
    a = IntegerSpan.from_rows([(1, 2, 3, 4), (0, 1, 1, 1)])
    b = IntegerSpan.from_rows([(2, 5, 7, 9), (1, 1, 2, 3)])  # same span
    c = IntegerSpan.from_rows([(1, 2, 3, 4), (0, 1, 1, 2)])
    assert a.key == b.key != c.key
    assert a.dim == 2
    assert direction((0, -2, 4)) == direction((0, 1, -2)) == (0, 1, -2)


def test_orthonormal_basis_spans_the_subspace():
    span = IntegerSpan.from_rows([(1, 2, 3, 4), (0, 1, 1, 1)])
    q = span.orthonormal_basis()
    np.testing.assert_allclose(q @ q.T, np.eye(2), atol=1e-12)
    v = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(q.T @ (q @ v), v, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_max_hyperplane_count_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        dim = int(rng.integers(1, 5))
        points = [
            tuple(int(v) for v in rng.integers(-2, 3, dim))
            for _ in range(int(rng.integers(1, 10)))
        ]
        exact = _brute_hyperplane(points, dim)
        assert max_hyperplane_count(points, dim) == exact
        for stop_at in range(len(points) + 2):
            decided = max_hyperplane_count(points, dim, stop_at=stop_at)
            assert (decided < stop_at) == (exact < stop_at)


def test_max_hyperplane_count_general_position():
    # Points in general position: a hyperplane of Q^3 holds 2 of them.
    points = [
        tuple(int(v) for v in row)
        for row in np.random.default_rng(0).integers(-(10**6), 10**6, (200, 3))
    ]
    assert max_hyperplane_count(points, 3) == 2
    # Add 50 points on the plane x3 = 0.
    plane = [(i, 2 * i + 1, 0) for i in range(50)]
    assert max_hyperplane_count(points + plane, 3) == 50 + sum(
        1 for p in points if p[2] == 0
    )
    assert max_hyperplane_count(list(itertools.repeat((0, 0, 0), 4)), 3) == 4
