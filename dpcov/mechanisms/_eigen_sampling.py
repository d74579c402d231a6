"""Iterative eigenvector sampling by the exponential mechanism (Amin et al., 2019).

Eigenvectors are drawn one at a time: the i-th is the exponential mechanism
with score ``u^T C u`` over the unit sphere of the orthogonal complement of
the ones already drawn (a Bingham law, :func:`sample_bingham`). The
complement's basis is updated by one Householder reflection per step, in
``O(d q)``, so a step costs the ``O(q^3)`` eigendecomposition of the
compressed matrix plus the rejection sampler.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from ._bingham import sample_bingham


def _complement(basis, compressed, u):
    """Orthonormal basis of ``u``'s complement and the compressed matrix on it.

    ``H = I - 2 v v^T / v^T v`` with ``v = u + sign(u_0) e_0`` maps ``u`` to a
    multiple of ``e_0``, so the columns ``1..q-1`` of the symmetric orthogonal
    ``H`` span ``u``'s complement in R^q.
    """
    v = u.copy()
    v[0] += 1.0 if u[0] >= 0 else -1.0
    beta = 2.0 / (v @ v)
    # basis @ H and H @ compressed @ H by rank-one updates; drop column 0.
    new_basis = basis - beta * np.outer(basis @ v, v)
    w = compressed @ v
    vw = v @ w
    reflected = (
        compressed
        - beta * (np.outer(v, w) + np.outer(w, v))
        + beta * beta * vw * np.outer(v, v)
    )
    reflected = reflected[1:, 1:]
    return new_basis[:, 1:], (reflected + reflected.T) / 2.0


def sample_eigenvectors(rng, matrix, scales, *, complete=False):
    """Draw orthonormal directions by iterated exponential mechanisms.

    Step ``i`` draws ``u`` on the unit sphere of the complement of the
    directions drawn so far, with density proportional to
    ``exp(scales[i] u^T matrix u)``. With a score sensitivity ``Delta``, step
    ``i`` is ``2 Delta scales[i]``-DP, and the steps compose adaptively.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    matrix : ndarray of shape (d, d)
        Symmetric matrix ``C`` of the score.
    scales : sequence of float
        Exponent of each step, at most ``d`` of them.
    complete : bool, default=False
        If True and ``len(scales) == d - 1``, append the unit vector spanning
        the remaining one-dimensional complement; it is determined (up to
        sign) by the others, so it costs nothing.

    Returns
    -------
    directions : ndarray of shape (d, k)
        Orthonormal columns, in the order drawn.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.mechanisms import sample_eigenvectors
    >>> rng = np.random.default_rng(0)
    >>> theta = sample_eigenvectors(rng, np.diag([3.0, 2.0, 1.0]), [50.0, 50.0],
    ...                             complete=True)
    >>> np.allclose(theta.T @ theta, np.eye(3))
    True
    """
    matrix = np.asarray(matrix, dtype=float)
    d = matrix.shape[0]
    scales = list(scales)
    if len(scales) > d:
        raise ValueError(f"at most {d} directions in dimension {d}, got {len(scales)}")
    basis = np.eye(d)
    compressed = (matrix + matrix.T) / 2.0
    directions = []
    for scale in scales:
        u = sample_bingham(rng, compressed, scale)
        directions.append(basis @ u)
        if basis.shape[1] > 1:
            basis, compressed = _complement(basis, compressed, u)
    if complete and len(scales) == d - 1:
        directions.append(basis[:, 0])
    if not directions:
        return np.empty((d, 0))
    return np.column_stack(directions)
