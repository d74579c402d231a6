"""Exact linear algebra on the rational values of float data.

Every finite float is a dyadic rational, so "is this row in the span of
those rows?" has an exact answer for the values a user passes. The exact-case
subspace estimator needs that answer exactly: its privacy proof uses lattice
facts (a point in two subspaces is in their intersection) that fail for
membership up to a floating-point tolerance. Here each row becomes a primitive
integer vector proportional to it (a nonzero rescaling does not change which
subspaces through the origin contain a point), and all decisions use Python's
arbitrary-precision integers and fractions: no tolerance anywhere.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from fractions import Fraction

import numpy as np


def integer_rows(X):
    """Scale each row of a float matrix to a primitive integer vector, exactly.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Finite floats.

    Returns
    -------
    rows : list of tuple of int
        Row ``i`` is ``c_i * X[i]`` for a positive rational ``c_i``, with
        coprime integer entries (all zero for a zero row).

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.utils._exact import integer_rows
    >>> integer_rows(np.array([[0.5, 1.5, 0.0], [0.1, 0.2, 0.3]]))[0]
    (1, 3, 0)
    """
    return [tuple(row) for row in integer_matrix(X).tolist()]


def integer_matrix(X):
    """:func:`integer_rows` as an array of Python ints.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Finite floats.

    Returns
    -------
    rows : ndarray of object (Python int) of shape (n, d)
        Row ``i`` is the primitive integer vector ``c_i * X[i]``, ``c_i > 0``.
    """
    X = np.asarray(X, dtype=np.float64)
    rows = np.empty(X.shape, dtype=object)
    step = max(1, 2**16 // max(1, X.shape[1]))  # blocks of rows that stay in cache
    for start in range(0, X.shape[0], step):
        rows[start : start + step] = _integer_block(X[start : start + step])
    return rows


def _integer_block(X):
    mantissa, exponent = np.frexp(X)
    # x = mantissa * 2**exponent with |mantissa| in [0.5, 1): mantissa * 2**53
    # is an integer, exactly; then x = odd * 2**shift with odd an odd integer
    # (below 2**53 in absolute value) once its trailing zero bits are moved
    # into the exponent.
    ints = (mantissa * 2.0**53).astype(np.int64)
    exponent = exponent.astype(np.int64) - 53
    nonzero = ints != 0
    trailing = np.frexp(ints & -ints)[1].astype(np.int64) - 1  # -1 where 0
    trailing[~nonzero] = 0
    odd = ints >> trailing
    exponent += trailing
    # Row i is odd * 2**(exponent - low_i) / 2**-low_i with low_i its smallest
    # exponent among nonzero entries. Rows whose scaled entries fit in 62
    # bits are done in int64; the others (a wide exponent range) in Python.
    low = np.where(nonzero, exponent, np.iinfo(np.int64).max).min(axis=1)
    low = np.where(nonzero.any(axis=1), low, 0)
    shift = np.where(nonzero, exponent - low[:, None], 0)
    bits = np.frexp(np.abs(odd).astype(np.float64))[1] + shift
    fits = np.all(bits <= 62, axis=1)
    rows = np.empty(X.shape, dtype=object)
    if fits.any():
        values = odd[fits] << shift[fits]
        g = np.gcd.reduce(values, axis=1)
        g[g == 0] = 1  # zero rows stay zero
        rows[fits] = (values // g[:, None]).astype(object)
    for i in np.flatnonzero(~fits).tolist():
        values = [
            m << e if m else 0
            for m, e in zip(odd[i].tolist(), shift[i].tolist(), strict=True)
        ]
        g = math.gcd(*values)
        rows[i] = [v // g for v in values]
    return rows


def direction(vector):
    """Canonical key of the line through a nonzero integer vector.

    Parameters
    ----------
    vector : sequence of int
        Not all zero.

    Returns
    -------
    key : tuple of int
        The primitive vector on the line whose first nonzero entry is
        positive: two vectors span the same line iff their keys are equal.
    """
    g = math.gcd(*vector)
    first = next(v for v in vector if v)
    if first < 0:
        g = -g
    return tuple(v // g for v in vector)


def rref(rows):
    """Reduced row echelon form over the rationals.

    Parameters
    ----------
    rows : sequence of sequence of int or Fraction
        The matrix, by rows.

    Returns
    -------
    pivots : tuple of int
        Pivot columns; their number is the rank.
    reduced : list of list of Fraction
        The nonzero rows of the reduced form (one per pivot). It is unique:
        two matrices have the same row space iff their ``(pivots, reduced)``
        are equal.
    """
    matrix = [[Fraction(v) for v in row] for row in rows]
    n_cols = len(matrix[0]) if matrix else 0
    pivots = []
    r = 0
    for col in range(n_cols):
        pivot = next((i for i in range(r, len(matrix)) if matrix[i][col]), None)
        if pivot is None:
            continue
        matrix[r], matrix[pivot] = matrix[pivot], matrix[r]
        lead = matrix[r][col]
        matrix[r] = [v / lead for v in matrix[r]]
        for i in range(len(matrix)):
            if i != r and matrix[i][col]:
                factor = matrix[i][col]
                matrix[i] = [
                    a - factor * b for a, b in zip(matrix[i], matrix[r], strict=True)
                ]
        pivots.append(col)
        r += 1
        if r == len(matrix):
            break
    return tuple(pivots), matrix[:r]


class IntegerSpan:
    """A subspace of Q^d spanned by integer vectors, with exact membership.

    Parameters
    ----------
    pivots : tuple of int
        Pivot columns of the reduced row echelon form of a basis.
    reduced : list of list of Fraction
        Its reduced rows (see :func:`rref`).

    Attributes
    ----------
    key : tuple
        Canonical, hashable description: equal keys iff equal subspaces.
    dim : int
        Dimension.
    """

    def __init__(self, pivots, reduced):
        self.pivots = list(pivots)
        self.dim = len(self.pivots)
        self.key = (tuple(pivots), tuple(tuple(row) for row in reduced))
        # Integer form: scale * reduced = basis, with scale the lcm of the
        # denominators. A point x is in the span iff x = x[pivots] @ reduced,
        # i.e. scale * x == x[pivots] @ basis, all in integers.
        scale = math.lcm(*(v.denominator for row in reduced for v in row))
        self._scale = scale
        self._basis = np.array(
            [[int(v * scale) for v in row] for row in reduced], dtype=object
        ).reshape(self.dim, -1)
        self._reduced = reduced

    @classmethod
    def from_rows(cls, rows):
        """The span of some integer rows.

        Parameters
        ----------
        rows : sequence of sequence of int
            Spanning vectors.

        Returns
        -------
        span : IntegerSpan
            Their span (of dimension their rank).
        """
        return cls(*rref(rows))

    def contains(self, X):
        """Exact membership of each row.

        Parameters
        ----------
        X : ndarray of object (Python int) of shape (n, d)
            Integer rows.

        Returns
        -------
        mask : ndarray of bool of shape (n,)
            Whether each row lies in the subspace.
        """
        if X.shape[0] == 0:
            return np.zeros(0, dtype=bool)
        residual = self._scale * X - X[:, self.pivots].dot(self._basis)
        return ~np.any(residual != 0, axis=1)

    def coordinates(self, X):
        """Integer coordinates of member rows in the reduced basis.

        Parameters
        ----------
        X : ndarray of object (Python int) of shape (n, d)
            Rows that lie in the subspace.

        Returns
        -------
        coords : list of tuple of int
            ``X[i] = coords[i] @ reduced``; the coordinates are the entries
            of ``X[i]`` at the pivot columns.
        """
        return [tuple(row) for row in X[:, self.pivots].tolist()]

    def orthonormal_basis(self):
        """A float orthonormal basis (rows), from the exact reduced form.

        Returns
        -------
        basis : ndarray of shape (dim, d)
            Orthonormal rows spanning the subspace (up to float rounding).
        """
        reduced = np.array(
            [[float(v) for v in row] for row in self._reduced], dtype=np.float64
        )
        q, _ = np.linalg.qr(reduced.T)
        return q.T


def max_hyperplane_count(points, dim, *, stop_at=None):
    """Most points on one hyperplane through the origin of Q^dim.

    The points are given in the coordinates of a ``dim``-dimensional space;
    a hyperplane is a subspace of dimension ``dim - 1``. Exact, by branching
    on the first point (in a fixed order) that the hyperplane contains and
    recursing in the quotient by that point's line, with the bound that a
    branch can gain at most the points that come after it. The problem is
    NP-hard as ``dim`` grows (largest feasible subsystem), so the cost is
    exponential in ``dim``: about ``c ** (dim - 1)`` for ``c`` points without
    ``stop_at``, far less with it.

    Parameters
    ----------
    points : sequence of tuple of int
        The points (zero points lie on every hyperplane).
    dim : int
        Dimension of the space, at least 1.
    stop_at : int or None, default=None
        If given, only ``max < stop_at`` is decided: the search stops as soon
        as it finds a hyperplane with at least ``stop_at`` points, and prunes
        every branch that cannot reach ``stop_at``. The result is then below
        ``stop_at`` exactly when the maximum is (but need not equal it).

    Returns
    -------
    count : int
        The maximum (or, with ``stop_at``, a value on the same side of
        ``stop_at`` as the maximum).

    Examples
    --------
    >>> from dpcov.utils._exact import max_hyperplane_count
    >>> max_hyperplane_count([(1, 0, 0), (0, 1, 0), (1, 1, 0), (0, 0, 1)], 3)
    3
    """
    zeros = 0
    groups = {}
    for p in points:
        if any(p):
            key = direction(p)
            groups[key] = groups.get(key, 0) + 1
        else:
            zeros += 1
    return _max_hyperplane(zeros, groups, dim, stop_at)


def _max_hyperplane(zeros, groups, dim, stop_at):
    if dim == 1 or not groups:
        return zeros
    if dim == 2:
        return zeros + max(groups.values())
    order = sorted(groups.items(), key=lambda item: (-item[1], item[0]))
    tail = sum(groups.values())
    best = zeros
    for i, (line, mult) in enumerate(order):
        # Hyperplanes containing `line` and none of the earlier lines hold at
        # most zeros + tail points (tail = this line and the later ones); the
        # bound only decreases along the order.
        if zeros + tail <= best or (stop_at is not None and zeros + tail < stop_at):
            break
        tail -= mult
        quotient = _quotient(line, order[i + 1 :])
        best = max(best, _max_hyperplane(zeros + mult, quotient, dim - 1, stop_at))
        if stop_at is not None and best >= stop_at:
            break
    return best


def _quotient(line, later):
    # Map Q^dim onto Q^dim / span(line), coordinates dropping a pivot p of
    # `line`: y -> line[p] * y - y[p] * line, then delete entry p. The kernel
    # is the line itself, so incidences with subspaces containing it are kept.
    p = next(j for j, v in enumerate(line) if v)
    a = line[p]
    # Distinct lines have nonzero images.
    groups = {}
    for vector, mult in later:
        b = vector[p]
        image = [a * v - b * w for v, w in zip(vector, line, strict=True)]
        del image[p]
        key = direction(image)
        groups[key] = groups.get(key, 0) + mult
    return groups
