"""Tests for dpcov.utils._exact: exact integer linear algebra."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from dpcov.utils._exact import (
    IntegerSpan,
    direction,
    integer_matrix,
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


def _integer_rows_reference(X):
    # The row-by-row conversion in Python integers.
    mantissa, exponent = np.frexp(np.asarray(X, dtype=np.float64))
    ints = (mantissa * 2.0**53).astype(np.int64).tolist()
    exponent = (exponent.astype(np.int64) - 53).tolist()
    rows = []
    for m_row, e_row in zip(ints, exponent, strict=True):
        shifts = [e for m, e in zip(m_row, e_row, strict=True) if m]
        if not shifts:
            rows.append(tuple(0 for _ in m_row))
            continue
        low = min(shifts)
        values = [m << (e - low) if m else 0 for m, e in zip(m_row, e_row, strict=True)]
        g = math.gcd(*values)
        rows.append(tuple(v // g for v in values))
    return rows


def test_integer_matrix_equals_the_row_by_row_conversion():
    # int64 rows (small exponent range) and Python rows (wide range, e.g.
    # 1e-300 next to 1e300) both give the unique primitive vector exactly.
    rng = np.random.default_rng(0)
    for X in [
        rng.integers(-9, 10, size=(300, 7)).astype(float),
        rng.normal(size=(200, 4)) * 10.0 ** rng.integers(-30, 30, (200, 1)),
        rng.normal(size=(200, 6)) * 10.0 ** rng.integers(-300, 300, (200, 6)),
        rng.integers(-(2**53), 2**53, size=(100, 3)).astype(float),
        np.array([[0.0, 0.0, 0.0], [1e-320, 3.0, -0.0], [-(2.0**60), 1.0, 5e-324]]),
        np.zeros((0, 3)),
    ]:
        rows = integer_matrix(X)
        assert rows.dtype == object and rows.shape == X.shape
        assert all(type(v) is int for v in rows.ravel())
        assert [tuple(r) for r in rows.tolist()] == _integer_rows_reference(X)
        assert integer_rows(X) == _integer_rows_reference(X)
