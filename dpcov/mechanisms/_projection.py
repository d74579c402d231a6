"""Projections used to post-process noisy matrices and vectors.

Post-processing a private release never costs privacy. A Frobenius projection
onto a closed convex set that contains the exact statistic never increases the
Frobenius error (projections onto convex sets are non-expansive), so these
projections can only help:

* :func:`project_psd`: the PSD cone;
* :func:`project_psd_bounded`: ``{0 <= S <= upper I}`` (eigenvalues clamped,
  what every experiment of Dong, Liang and Yi, 2022, does);
* :func:`project_feasible`: ``{S >= 0, tr S <= t}``, the set of covariances of
  rows of norm at most ``sqrt(t)``: the projection mechanism of Dong, Liang
  and Yi (2022), Appendix C;
* :func:`project_l2_ball` for vectors.

The matrix projections take an optional eigenvalue ``floor`` (the set's lower
bound becomes ``floor I``): it makes the result invertible, at the price that
the set may no longer contain the exact statistic.

All matrix projections act on the eigenvalues only (von Neumann's trace
inequality; Dong, Liang and Yi 2022, Lemma 19), through :func:`spectral_map`.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import threading
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import linalg
from scipy.linalg import lapack


def project_capped_simplex(values, cap):
    """Euclidean projection onto ``{z : z >= 0, sum(z) <= cap}``.

    Parameters
    ----------
    values : array-like of shape (k,)
        Point to project.
    cap : float
        Upper bound on the sum, non-negative.

    Returns
    -------
    projected : ndarray of shape (k,)
        ``max(values - theta, 0)`` with the smallest ``theta >= 0`` that meets
        the cap.

    Examples
    --------
    >>> from dpcov.mechanisms import project_capped_simplex
    >>> project_capped_simplex([3.0, 1.0, -1.0], 2.0)
    array([2., 0., 0.])
    """
    values = np.asarray(values, dtype=float)
    positive = np.maximum(values, 0.0)
    if cap <= 0:
        return np.zeros_like(values)
    if positive.sum() <= cap:
        return positive
    # Sort descending; the active set is the largest k* values with
    # v_(k) - (S_k - cap) / k > 0, and theta = (S_k* - cap) / k*.
    desc = np.sort(values)[::-1]
    ks = np.arange(1, desc.shape[0] + 1)
    thetas = (np.cumsum(desc) - cap) / ks
    k_star = np.flatnonzero(desc - thetas > 0)[-1]
    return np.maximum(values - thetas[k_star], 0.0)


#: The symmetric eigendecomposition :func:`spectral_map`,
#: :func:`symmetric_eigh` and :func:`symmetric_eigvalsh` use: the host's,
#: unless a caller supplies another for a block of code (:func:`eigh_with`),
#: e.g. one that runs on the device where a fit's rows live. A context
#: variable: each thread (and task) sees its own.
_EIGH = ContextVar("dpcov_symmetric_eigh", default=None)


@contextmanager
def eigh_with(eigh):
    """Run the fit's symmetric eigendecompositions with ``eigh`` in a block.

    Parameters
    ----------
    eigh : callable
        Maps a symmetric NumPy matrix to its ascending eigenvalues and its
        eigenvectors (as columns), both NumPy arrays.
    """
    token = _EIGH.set(eigh)
    try:
        yield
    finally:
        _EIGH.reset(token)


#: Below this size SciPy's ``eigh`` spends most of its time choosing the
#: LAPACK routine and sizing its workspace, not computing (23-31 us against
#: 4-5 us for ``d <= 3``): small matrices call the same routine directly.
_DIRECT_LAPACK_BELOW = 32


@lru_cache(maxsize=_DIRECT_LAPACK_BELOW)
def _syevr_workspace(n):
    """The workspace sizes SciPy's ``eigh`` asks LAPACK for at size ``n``."""
    lwork, liwork, _ = lapack.dsyevr_lwork(n, lower=1)
    return int(lwork), int(liwork)


def _scipy_eigh(symmetric, *, vectors):
    """SciPy's ``eigh`` or ``eigvalsh`` (driver ``evr``, lower triangle), unchecked.

    For small float64 matrices, LAPACK's ``dsyevr`` is called as SciPy calls
    it, with the same arguments and workspace: the same results, bit for bit
    (``tests/mechanisms/test_projection.py``), without the wrapper's cost,
    which dominates the many small eigendecompositions of a bootstrap.
    """
    n = symmetric.shape[0]
    if symmetric.dtype == np.float64 and 0 < n < _DIRECT_LAPACK_BELOW:
        lwork, liwork = _syevr_workspace(n)
        values, eigenvectors, _, _, info = lapack.dsyevr(
            symmetric, compute_v=int(vectors), lower=1, lwork=lwork, liwork=liwork
        )
        if info == 0:
            return (values, eigenvectors) if vectors else values
        # A failure: SciPy raises its own error on the same call below.
    if vectors:
        return linalg.eigh(symmetric, check_finite=False)
    return linalg.eigvalsh(symmetric, check_finite=False)


def symmetric_eigh(symmetric, *, host=None):
    """Eigendecomposition of a symmetric host matrix, where the fit computes.

    Parameters
    ----------
    symmetric : ndarray of shape (d, d)
        Symmetric matrix.
    host : callable, default=None
        The host eigendecomposition when no other is in force
        (:func:`eigh_with`); None for SciPy's without a finiteness check.

    Returns
    -------
    eigenvalues : ndarray of shape (d,)
        Ascending.
    eigenvectors : ndarray of shape (d, d)
        As columns.
    """
    eigh = _EIGH.get()
    if eigh is not None:
        return eigh(symmetric)
    if host is None:
        return _scipy_eigh(symmetric, vectors=True)
    return host(symmetric)


def symmetric_eigvalsh(symmetric):
    """Ascending eigenvalues of a symmetric host matrix, where the fit computes.

    SciPy's without a finiteness check, unless another eigendecomposition is
    in force (:func:`eigh_with`).
    """
    eigh = _EIGH.get()
    if eigh is not None:
        return eigh(symmetric)[0]
    return _scipy_eigh(symmetric, vectors=False)


#: From this dimension on, a covariance fit eigendecomposes its release once
#: and derives everything after it (projection, shrinkage, noise figure,
#: precision, score model, PCA's axes) from that :class:`Spectrum`: at
#: ``d = 2000`` one eigendecomposition costs about as much as the Gram matrix
#: of 20000 rows. Below it, each step keeps its own (cheap) one.
SPECTRAL_FROM = 128


@dataclass(frozen=True)
class Spectrum:
    """The eigendecomposition of a symmetric matrix: ``V diag(values) V.T``.

    Parameters
    ----------
    values : ndarray of shape (d,)
        Eigenvalues, ascending.
    vectors : ndarray of shape (d, d)
        Orthonormal eigenvectors, as columns, in the order of ``values``.
    """

    values: np.ndarray
    vectors: np.ndarray

    def with_values(self, values):
        """The same eigenvectors with other eigenvalues."""
        return Spectrum(values, self.vectors)

    def top(self, m):
        """The eigenvectors of the ``m`` largest eigenvalues (columns, ascending)."""
        return self.vectors[:, self.vectors.shape[1] - m :]

    @classmethod
    def of(cls, matrix):
        """The spectrum of the symmetric part of ``matrix`` (one eigendecomposition).

        LAPACK's divide and conquer (NumPy's ``eigh``), about 15% faster
        than SciPy's default ``evr`` at ``d = 2000``, unless another
        eigendecomposition is in force (:func:`eigh_with`).
        """
        values, vectors = symmetric_eigh(_symmetric_part(matrix), host=np.linalg.eigh)
        return cls(values, vectors)

    def matrix(self, values=None):
        """``V diag(values) V.T`` (default: the spectrum's own), exactly symmetric.

        Formed as ``B+ B+.T - B- B-.T`` with ``B = V sqrt(|values|)`` over
        the columns of each sign: a symmetric rank-k update (half the flops
        of a general product), skipping the columns whose value is zero (a
        projected release clamps many to 0).
        """
        values = self.values if values is None else np.asarray(values, dtype=float)
        d = self.vectors.shape[0]
        out = np.zeros((d, d))
        for sign in (1.0, -1.0):
            kept = np.flatnonzero(sign * values > 0)
            if kept.size:
                factor = self.vectors[:, kept] * np.sqrt(sign * values[kept])
                out += sign * (factor @ factor.T)
        return out

    def pseudo_inverse(self, values=None):
        """The pseudo-inverse of ``V diag(values) V.T``, with SciPy ``pinvh``'s cutoff.

        Values of absolute value at most ``d eps max|values|`` count as zero
        (:func:`scipy.linalg.pinvh`'s default), so the result is
        ``pinvh(self.matrix(values))`` up to rounding, without a second
        eigendecomposition.
        """
        values = self.values if values is None else np.asarray(values, dtype=float)
        magnitude = np.abs(values)
        cutoff = values.size * np.finfo(np.float64).eps * magnitude.max(initial=0.0)
        inverse = np.zeros_like(values)
        above = magnitude > cutoff
        inverse[above] = 1.0 / values[above]
        return self.matrix(inverse)


def _symmetric_part(matrix):
    return (matrix + matrix.T) / 2.0


def spectral_map(matrix, func):
    """Apply ``func`` to the eigenvalues of the symmetric part of ``matrix``.

    Parameters
    ----------
    matrix : ndarray of shape (d, d)
        Square matrix; only its symmetric part ``(M + M.T) / 2`` is used.
    func : callable
        Maps the ascending eigenvalues (ndarray of shape (d,)) to new ones.

    Returns
    -------
    mapped : ndarray of shape (d, d)
        ``V diag(func(w)) V.T`` for the eigendecomposition ``V diag(w) V.T``,
        exactly symmetric.
    """
    eigenvalues, eigenvectors = symmetric_eigh(_symmetric_part(matrix))
    mapped = (eigenvectors * func(eigenvalues)) @ eigenvectors.T
    return (mapped + mapped.T) / 2.0


def project_psd(matrix, *, floor=0.0):
    """Project a symmetric matrix onto ``{S : S >= floor I}`` (Frobenius norm).

    Parameters
    ----------
    matrix : ndarray of shape (d, d)
        Symmetric matrix.
    floor : float, default=0.0
        Smallest eigenvalue allowed; 0 gives the PSD cone.

    Returns
    -------
    projected : ndarray of shape (d, d)
        Eigenvalues below ``floor`` raised to it.
    """
    return spectral_map(matrix, lambda w: np.maximum(w, floor))


def project_psd_bounded(matrix, upper, *, floor=0.0):
    """Project a symmetric matrix onto ``{S : floor I <= S <= upper I}``.

    Parameters
    ----------
    matrix : ndarray of shape (d, d)
        Symmetric matrix.
    upper : float
        Largest eigenvalue allowed.
    floor : float, default=0.0
        Smallest eigenvalue allowed, at most ``upper``.

    Returns
    -------
    projected : ndarray of shape (d, d)
        Eigenvalues clamped to ``[floor, upper]``.
    """
    return spectral_map(matrix, lambda w: np.clip(w, floor, upper))


def project_feasible(matrix, max_trace, *, floor=0.0):
    """Project a symmetric matrix onto ``{S : S >= floor I, tr S <= max_trace}``.

    For rows of norm at most ``r``, the second-moment matrices are exactly the
    PSD matrices of trace at most ``r**2`` (when ``n >= d``; a subset
    otherwise), so with ``floor=0`` and ``max_trace = r**2`` this is the
    projection mechanism of Dong, Liang and Yi (2022), Appendix C:
    eigendecompose, project the eigenvalues onto the capped simplex,
    reassemble (their Lemma 19).
    A positive floor shifts the set: ``S = floor I + T`` with ``T`` PSD of
    trace at most ``max_trace - d floor`` (empty when that is negative, in
    which case ``floor I`` is returned).

    Parameters
    ----------
    matrix : ndarray of shape (d, d)
        Symmetric matrix.
    max_trace : float
        Largest trace allowed.
    floor : float, default=0.0
        Smallest eigenvalue allowed.

    Returns
    -------
    projected : ndarray of shape (d, d)
        The projection.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.mechanisms import project_feasible
    >>> project_feasible(np.diag([2.0, 0.5, -1.0]), 1.0)
    array([[1., 0., 0.],
           [0., 0., 0.],
           [0., 0., 0.]])
    """
    cap = max_trace - matrix.shape[0] * floor
    return spectral_map(
        matrix, lambda w: floor + project_capped_simplex(w - floor, max(cap, 0.0))
    )


def project_l2_ball(vector, radius):
    """Euclidean projection of a vector onto the L2 ball of a given radius.

    Parameters
    ----------
    vector : ndarray of shape (d,)
        Point to project.
    radius : float
        Radius of the ball.

    Returns
    -------
    projected : ndarray of shape (d,)
        ``vector`` rescaled to norm ``radius`` if it was longer.
    """
    norm = np.linalg.norm(vector)
    return vector * (radius / norm) if norm > radius else vector


#: Whether the fits in a block defer their releases' eigenvectors (see
#: :func:`deferred_eigenvectors`).
_DEFERRED = ContextVar("dpcov_deferred_eigenvectors", default=False)


@contextmanager
def deferred_eigenvectors():
    """Let the fits in a block defer their releases' eigenvectors.

    From :data:`SPECTRAL_FROM` features on, a release's spectrum then holds
    its eigenvalues and the matrix they are of (:class:`LazySpectrum`): a
    reader of the top ``m`` eigenvectors (PCA's axes) gets them from a
    partial eigensolver, in ``O(d**2 m)`` after the tridiagonal reduction;
    any other reader computes them all, once, as :meth:`Spectrum.of` would.
    Host eigendecompositions only: with another in force (:func:`eigh_with`)
    the spectra are computed whole.
    """
    token = _DEFERRED.set(True)
    try:
        yield
    finally:
        _DEFERRED.reset(token)


def spectrum_of(matrix, values=None):
    """The spectrum of the symmetric part of ``matrix``, deferred where allowed.

    Parameters
    ----------
    matrix : ndarray of shape (d, d)
        The matrix whose eigenvectors are the spectrum's.
    values : ndarray of shape (d,), default=None
        Ascending eigenvalues paired with them in that order (a release of
        eigenvalues on another matrix's eigenvectors); None for the matrix's
        own.

    Returns
    -------
    spectrum : Spectrum or LazySpectrum
        :meth:`Spectrum.of`'s, unless inside :func:`deferred_eigenvectors`
        on the host: then the eigenvalues (``values``, or the matrix's from
        LAPACK's values-only solver) and the matrix, its eigenvectors
        computed when read.
    """
    if not _DEFERRED.get() or _EIGH.get() is not None:
        spectrum = Spectrum.of(matrix)
        return spectrum if values is None else spectrum.with_values(values)
    if values is None:
        values = symmetric_eigvalsh(_symmetric_part(matrix))
    return LazySpectrum(values, _Eigenvectors(matrix))


#: The partial eigensolver computes at most this share of the eigenvectors
#: (and PCA defers them only to keep at most this share): measured at ``d =
#: 500`` and ``1500``, one and two threads, LAPACK's ``dsyevr`` on the top
#: ``d / 20`` costs 0.40-0.51 of all the eigenvectors by divide and conquer,
#: 0.76-0.93 with the eigenvalues' own solve that a GaussCov release then
#: pays; at ``d / 6`` it costs 0.63-1.04 alone.
PARTIAL_UP_TO = 1 / 20


class _Eigenvectors:
    # The eigenvectors of the symmetric part of a matrix, computed when first
    # read: all of them (Spectrum.of's), or the top m only (a partial solver).
    # A lock makes the first full read one computation whatever the threads.

    def __init__(self, matrix):
        self._matrix = matrix
        self._all = None
        self._lock = threading.Lock()

    def __getstate__(self):
        return {"_matrix": self._matrix, "_all": self._all}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def all(self):
        with self._lock:
            if self._all is None:
                self._all = Spectrum.of(self._matrix).vectors
                self._matrix = None  # (no longer needed)
            return self._all

    def top(self, m):
        with self._lock:
            vectors, matrix = self._all, self._matrix
        d = (vectors if vectors is not None else matrix).shape[0]
        if m == 0:
            return np.empty((d, 0))  # (none read: none computed)
        if vectors is not None or PARTIAL_UP_TO * d < m:
            return self.all()[:, d - m :]
        _, vectors = linalg.eigh(
            _symmetric_part(matrix),
            subset_by_index=[d - m, d - 1],
            driver="evr",
            check_finite=False,
        )
        return vectors


class LazySpectrum:
    """A :class:`Spectrum` whose eigenvectors are computed when read.

    Made by :func:`spectrum_of` inside :func:`deferred_eigenvectors`. Its
    ``values`` are known; ``vectors`` computes all the eigenvectors once (and
    every spectrum sharing them, :meth:`with_values`, reuses them); ``top``
    computes only the ``m`` it is asked for while they have not been.

    Parameters
    ----------
    values : ndarray of shape (d,)
        Eigenvalues, ascending.
    eigenvectors : _Eigenvectors
        The source of the eigenvectors, shared with :meth:`with_values`'s.
    """

    def __init__(self, values, eigenvectors):
        self.values = values
        self._eigenvectors = eigenvectors

    @property
    def vectors(self):
        """All the eigenvectors (computed at the first read)."""
        return self._eigenvectors.all()

    def with_values(self, values):
        """The same (deferred) eigenvectors with other eigenvalues."""
        return LazySpectrum(values, self._eigenvectors)

    def top(self, m):
        """The eigenvectors of the ``m`` largest eigenvalues (columns, ascending).

        A partial eigensolver (LAPACK's ``dsyevr`` on that range of
        indices) while all of them have not been computed.
        """
        return self._eigenvectors.top(m)

    matrix = Spectrum.matrix
    pseudo_inverse = Spectrum.pseudo_inverse
