"""The shrinkage's noise energies in closed form, from the release's eigendecomposition.

From :data:`~dpcov.mechanisms._projection.SPECTRAL_FROM` features on, the
shrinkage toward zero (:mod:`dpcov.covariance._shrinkage`) gets its two
public inputs without rerunning the mechanism:

``kappa``, an estimate of ``E <P, P - C>_W``
    - *Entry noise* (GaussCov/LapCov: ``Y = M + E`` with ``E`` a symmetric
      matrix of independent upper-triangle entries of variance ``s**2``,
      ``P = V g(lambda) V.T`` a spectral function of ``Y``): Stein's
      unbiased risk estimate (Stein 1981), ``<P, P - Y>_W + s**2 div_W P(Y)``,
      with the divergence of a spectral function in closed form
      (Daleckii-Krein; Candes, Sing-Long and Trzasko 2013, for singular
      values): ``sum_kl Gamma_kl (a_k a_l + A_kl**2)`` with ``Gamma_kl =
      (g_k - g_l) / (lambda_k - lambda_l)`` (``g'`` on ties), ``A = V.T D**2
      V`` and ``a = diag(A)``, less the diagonal entries' share (their
      variance is ``s**2``, not ``2 s**2``), taken at its delocalised value
      ``sum_i h_i**4 sum_kl Gamma_kl / d**2`` (its exact value is between 0
      and ``sum_i h_i**4``, a ``1/d`` share of the whole). Exact in
      expectation for Gaussian entries; for Laplace entries the same
      expression with their variance (the spectrum's laws are universal in
      the entries' variance as ``d`` grows).
    - *Spectral releases* (SeparateCov: sorted noisy eigenvalues on the
      eigenvectors of a noisy matrix): the values' part is the mean of
      ``<P*, P* - S>_W`` over draws of sorted noisy eigenvalues on ``S``'s
      directions (``S = P``, as the bootstrap's surrogate; d-vectors only);
      SeparateCov's directions add half the squared error of rotating
      ``S`` by its matrix noise's first-order eigenvector perturbation
      (:func:`rotation_energy`).
    - *Sampled eigenvectors* (Amin et al. 2019): the same values' part, and
      the variance the drawn directions miss from a model of their law
      (:func:`sampled_kappa`; :func:`~dpcov.mechanisms.sampled_overlaps`).
      It replaces the bootstrap at every ``d``, since each bootstrap draw
      reruns the sampler (most of a fit's time).
    Both add the centring error's share ``E|delta|**2 tr(D**2 P D**2) / d``.

The energy of an estimate of pure noise, ``||P0||_W**2`` (mean and spread)
    Its eigenvalues at truth zero are the semicircle's quantiles (radius
    ``2 s sqrt(d)``, plus the centring error's rank-one outlier above the BBP
    threshold) for entry noise, or sorted noise draws for spectral releases;
    its directions are uniformly random, so ``E ||P0||_W**2 = alpha sum g_k**2
    + beta sum_{k != l} g_k g_l`` with the Haar moments ``alpha = (t1**2 + 2
    t2) / (d (d + 2))`` and ``beta = (d t2 - t1**2) / ((d - 1) d (d + 2))``
    (``t1 = sum h**2``, ``t2 = sum h**4``; ``alpha = 1``, ``beta = 0`` in
    unweighted units). Its standard deviation is bounded by the Gaussian
    Poincare inequality for entry noise (``Var F <= s**2 E ||grad F||**2 <= 8
    c s**2 max(h)**4 E||P0||_W**2``, ``c = 1`` for Gaussian and ``2`` for
    Laplace entries, whose Poincare constant is twice their variance), and
    taken from the draws for spectral releases.

Everything here reads the release's eigendecomposition, public scales and
a fixed generator: post-processing.

References
----------
Stein, C. "Estimation of the mean of a multivariate normal distribution".
Annals of Statistics 9(6), 1981.
Candes, E. J., Sing-Long, C. A. and Trzasko, J. D. "Unbiased risk estimates
for singular value thresholding and spectral estimators". IEEE Transactions
on Signal Processing 61(19), 2013.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from dataclasses import dataclass

import numpy as np

from ..mechanisms import sampled_overlaps
from ..utils._error_bars import noise_draws

#: Draws of a spectral release's noisy eigenvalues (d-vectors: cheap).
N_VALUE_DRAWS = 64
#: Rows of the pairwise sums per block (bounds the temporary d x d memory).
_BLOCK = 512


@dataclass(frozen=True)
class Metric:
    """The weighted metric ``||A||_W = ||D A D||_F`` in a spectrum's basis.

    Parameters
    ----------
    weights : ndarray of shape (d,)
        The scales ``h`` (``D = diag(h)``).
    overlaps : ndarray of shape (d, d) or None
        ``(V.T D**2 V)**2`` entrywise; None when the weights are all equal
        (then it is ``h**4 I``).
    diagonal : ndarray of shape (d,)
        ``a = diag(V.T D**2 V)``.
    fourth : ndarray of shape (d,)
        ``sum_i h_i**4 V_ik**2``: the weight of eigenvalue ``k`` in
        ``tr(D**2 P D**2)``.
    """

    weights: np.ndarray
    overlaps: np.ndarray
    diagonal: np.ndarray
    fourth: np.ndarray

    @classmethod
    def of(cls, basis, weights):
        """The metric in ``basis``: eigenvectors as columns, or a spectrum.

        A spectrum's eigenvectors are read only for unequal weights (equal
        ones weigh every basis alike): a deferred spectrum's
        (:class:`~dpcov.mechanisms._projection.LazySpectrum`) are not computed.
        """
        weights = np.asarray(weights, dtype=float)
        squared = weights**2
        if np.all(squared == squared[0]):
            d = weights.shape[0]
            return cls(
                weights, None, np.full(d, squared[0]), np.full(d, squared[0] ** 2)
            )
        vectors = getattr(basis, "vectors", basis)
        rotated = vectors.T @ (squared[:, None] * vectors)  # one d x d product
        return cls(
            weights,
            rotated**2,
            np.diagonal(rotated).copy(),
            (squared**2) @ vectors**2,
        )

    def pair_sum(self, left, right):
        """``sum_kl left_k right_l A_kl**2``, the inner product of two spectra.

        That is ``<V diag(left) V.T, V diag(right) V.T>_W``.
        """
        if self.overlaps is None:
            return float(self.weights[0] ** 4 * np.dot(left, right))
        return float(left @ self.overlaps @ right)

    def pair_sums(self, left, right):
        """:meth:`pair_sum` of each row of ``left`` with the same row of ``right``."""
        if self.overlaps is None:
            return self.weights[0] ** 4 * np.sum(left * right, axis=-1)
        return np.sum((left @ self.overlaps) * right, axis=-1)


def _divided_differences(values, mapped, slopes, rows):
    """``Gamma_kl`` for ``k`` in ``rows``: ``(g_k - g_l) / (lambda_k - lambda_l)``.

    On ties (gaps below ``1e-12`` of the spectrum's scale) the mean of the
    two slopes.
    """
    gap = values[rows, None] - values[None, :]
    scale = max(float(np.max(np.abs(values), initial=0.0)), np.finfo(float).tiny)
    tied = np.abs(gap) <= 1e-12 * scale
    with np.errstate(divide="ignore", invalid="ignore"):
        gamma = (mapped[rows, None] - mapped[None, :]) / gap
    return np.where(tied, (slopes[rows, None] + slopes[None, :]) / 2.0, gamma)


def spectral_divergence(values, mapped, slopes, metric):
    """``div_W`` of ``Y -> V g(lambda) V.T`` over the upper-triangle entries of ``Y``.

    ``sum_{i<=j} c_ij dP_ij / dy_ij`` with ``c_ij = 2 h_i**2 h_j**2`` off the
    diagonal and ``h_i**4`` on it, so that ``E <P, E>_W = s**2 E div_W`` for
    entries of variance ``s**2`` (Stein's identity).

    Parameters
    ----------
    values : ndarray of shape (d,)
        ``lambda``, the eigenvalues of ``Y``.
    mapped : ndarray of shape (d,)
        ``g(lambda)``.
    slopes : ndarray of shape (d,)
        ``dg_k / dlambda_k``.
    metric : Metric

    Returns
    -------
    divergence : float
    """
    d = values.shape[0]
    total, plain = 0.0, 0.0
    for start in range(0, d, _BLOCK):
        rows = np.arange(start, min(start + _BLOCK, d))
        gamma = _divided_differences(values, mapped, slopes, rows)
        plain += float(gamma.sum())
        weight = np.outer(metric.diagonal[rows], metric.diagonal)
        if metric.overlaps is None:
            weight[np.arange(rows.size), rows] += metric.weights[0] ** 4
        else:
            weight += metric.overlaps[rows]
        total += float(np.sum(gamma * weight))
    # The diagonal entries' share, at its delocalised value.
    return total - float(np.sum(metric.weights**4)) * plain / d**2


def centring_energy(mapped, metric, centring):
    """``E <P, delta delta.T>_W`` for a centring error of mean square norm ``centring``.

    The release carries ``delta delta.T`` itself, so ``delta.T P delta`` is
    about ``|delta|**2 tr(P) / d`` (a random direction) plus ``|delta|**4``.
    """
    d = mapped.shape[0]
    isotropic = centring / d * float(np.dot(metric.fourth, mapped))
    return isotropic + centring**2 * float(np.mean(metric.weights**4))


def entry_noise_kappa(spectrum, mapped, slopes, metric, *, variance, centring):
    """Stein's estimate of ``E <P, P - C>_W`` for entry noise of that variance."""
    values = spectrum.values
    residual = metric.pair_sum(mapped, mapped - values)
    divergence = spectral_divergence(values, mapped, slopes, metric)
    return residual + variance * divergence + centring_energy(mapped, metric, centring)


def _haar_energy(mapped, metric):
    """``E ||V g V.T||_W**2`` over random directions ``V``, per row of ``g``."""
    d = mapped.shape[-1]
    t1 = float(np.sum(metric.weights**2))
    t2 = float(np.sum(metric.weights**4))
    alpha = (t1 * t1 + 2.0 * t2) / (d * (d + 2.0))
    beta = (d * t2 - t1 * t1) / ((d - 1.0) * d * (d + 2.0)) if d > 1 else 0.0
    squares = np.sum(mapped**2, axis=-1)
    return alpha * squares + beta * (np.sum(mapped, axis=-1) ** 2 - squares)


def semicircle_quantiles(n_points, radius):
    """The ``(k - 1/2) / n`` quantiles of the semicircle on ``[-radius, radius]``."""
    grid = np.linspace(-1.0, 1.0, 4097)
    cdf = 0.5 + (grid * np.sqrt(1.0 - grid**2) + np.arcsin(grid)) / np.pi
    levels = (np.arange(n_points) + 0.5) / n_points
    return radius * np.interp(levels, cdf, grid)


def entry_noise_null(project, metric, *, std, law, centring):
    """Mean and a standard deviation bound of ``||P0||_W**2`` under entry noise.

    Parameters
    ----------
    project : callable
        The projection on eigenvalues (ascending in, mapped out).
    metric : Metric
    std : float
        Standard deviation ``s`` of each upper-triangle entry.
    law : {"gaussian", "laplace"}
    centring : float
        Mean square norm of the centring error.
    """
    d = metric.weights.shape[0]
    values = semicircle_quantiles(d, 2.0 * std * math.sqrt(d))
    if centring > std * math.sqrt(d):
        # Its rank-one outlier, above the BBP threshold.
        values[-1] = centring + d * std**2 / centring
    mean = float(_haar_energy(project(values), metric))
    constant = 1.0 if law == "gaussian" else 2.0
    bound = math.sqrt(
        8.0 * constant * std**2 * float(np.max(metric.weights)) ** 4 * mean
    )
    return mean, bound


def _project_rows(project, rows):
    """``project`` (ascending values in, mapped out) on each row, in the row's order."""
    order = np.argsort(rows, axis=1)
    mapped = project(np.take_along_axis(rows, order, axis=1))
    out = np.empty_like(mapped)
    np.put_along_axis(out, order, mapped, axis=1)
    return out


def _values_energy(mapped, metric, released):
    """Mean of ``<P*, P* - S>_W`` over released values on ``S``'s directions.

    ``released`` holds the post-processed values of each draw (rows),
    paired with ``mapped`` (ascending) entry by entry.
    """
    return float(np.mean(metric.pair_sums(released, released - mapped)))


def spectral_kappa(
    mapped,
    project,
    metric,
    *,
    value_noise,
    vector_std,
    centring,
):
    """``E <P*, P* - S>_W`` for a spectral release at ``S = V g V.T``.

    Parameters
    ----------
    mapped : ndarray of shape (d,)
        ``g``, the estimate's eigenvalues (ascending, on ``metric``'s basis).
    project : callable
        The projection on eigenvalues.
    metric : Metric
    value_noise : AdditiveNoise
        The noise on each eigenvalue.
    vector_std : float
        Entry standard deviation of the matrix whose eigenvectors are
        released (SeparateCov's).
    centring : float
        Mean square norm of the centring error.
    """
    d = mapped.shape[0]
    draws = np.sort(mapped + noise_draws(value_noise, (N_VALUE_DRAWS, d)), axis=1)
    values = _values_energy(mapped, metric, project(draws))
    vectors = rotation_energy(mapped, vector_std) * float(np.mean(metric.weights**4))
    return max(values, 0.0) + vectors + centring_energy(mapped, metric, centring)


def sampled_kappa(mapped, project, metric, *, law, centring):
    """``E <P*, P* - S>_W`` for sampled eigenvectors (Amin et al. 2019) at ``S``.

    ``S = V g V.T`` with ``g = mapped``. A release at ``S`` pairs values
    ``p_i`` (the mechanism's noisy, sorted and clipped eigenvalues of ``S``,
    post-processed) with directions ``u_i`` drawn by the exponential
    mechanism, so in unweighted units ``<P*, P* - S> = sum_i p_i (p_i -
    g_i) + sum_i p_i (g_i - u_i^T S u_i)``, ``g`` decreasing: the values'
    error on ``S``'s directions plus the variance each drawn direction
    misses. The first is averaged over draws of the values, in the metric;
    the second uses ``E u_i^T S u_i = sum_l O_il g_l`` with the expected
    squared overlaps ``O`` of
    :func:`~dpcov.mechanisms.sampled_overlaps` at the release's exponents
    (the values and the directions are drawn independently given the
    exponents). In a weighted metric the second share comes pairwise
    (:func:`pair_rotation_energy`): scaling it by ``mean(h**4)``, as the
    rotation term of :func:`spectral_kappa` does, was 0.8 to 1.9 of
    ``||P||_W**2`` off on a table whose ranges span 2000x. With ``k < d`` the
    tail's value sits on the complement, which holds ``m_l = 1 - sum_i
    O_il`` of each eigenvector (``d - k`` directions of that profile).

    Parameters
    ----------
    mapped : ndarray of shape (d,)
        ``g``, ascending, on ``metric``'s basis.
    project : callable
        The projection on eigenvalues.
    metric : Metric
    law : SampledLaw
        The release's public law
        (:class:`~dpcov.covariance._eigen_sampling.SampledLaw`).
    centring : float
        Mean square norm of the centring error.
    """
    d, k = mapped.shape[0], law.n_components
    truth = mapped[::-1]  # decreasing: the order the directions are drawn in
    draws = noise_draws(law.value_noise, (N_VALUE_DRAWS, law.n_statistics))
    released = _project_rows(project, law.released_values(truth, draws))
    values = _values_energy(mapped, metric, released[:, ::-1])
    overlaps, remaining = sampled_overlaps(truth, law.scales, complete=k == d)
    if k < d:  # the complement's d - k directions share the tail's value
        overlaps = np.vstack([overlaps, np.tile(remaining / (d - k), (d - k, 1))])
    if metric.overlaps is None:
        missed = truth - overlaps @ truth
        vectors = float(np.mean(released, axis=0) @ missed) * metric.weights[0] ** 4
    else:
        vectors = pair_rotation_energy(released, truth, overlaps, metric)
    energy = max(values, 0.0) + vectors + centring_energy(mapped, metric, centring)
    return max(energy, 0.0)


def pair_rotation_energy(released, truth, overlaps, metric):
    """The rotation's share of ``E <P*, P* - S>_W`` in a weighted metric.

    ``P*`` is ``P_v = V diag(p) V.T`` (released values on ``S``'s
    directions) with each pair of directions ``(i, l)`` turned by an angle
    ``theta`` of ``sin(theta)**2 = O_il`` (the symmetrised expected
    overlaps, independent signs): in the pair's plane that moves ``O_il (p_l
    - p_i)`` from ``v_i v_i.T`` to ``v_l v_l.T`` and adds ``(p_i - p_l)
    sin(theta) cos(theta)`` on ``v_i v_l.T + v_l v_i.T``. With ``A = V.T D**2
    V``, ``|| D (v_i v_l.T + v_l v_i.T) D ||**2 = 2 (A_ii A_ll + A_il**2)``
    and ``<v_i v_i.T, M>_W = (A**2 m)_i`` for ``M = V diag(m) V.T``, so pair
    ``(i, l)`` adds

        ``E (p_i - p_l)**2 [2 O (1 - O) (A_ii A_ll + A_il**2) + O**2 (A_ii**2
        + A_ll**2 - 2 A_il**2)] - O E (p_i - p_l) (q_i - q_l)``

    with ``q = A**2 (2 p - g)``. In unweighted units this is ``O_il E (p_i -
    p_l) (g_i - g_l)``, the exact share of the rotation in
    :func:`sampled_kappa`; weights that differ by orders of magnitude (a box
    whose ranges do) make the plain ``mean(h**4)`` scaling of that share
    wrong by as much.

    Parameters
    ----------
    released : ndarray of shape (m, d)
        Draws of the post-processed values ``p``, paired with ``truth``.
    truth : ndarray of shape (d,)
        ``g``, ``S``'s eigenvalues, in the order of ``released``.
    overlaps : ndarray of shape (d, d)
        Expected squared overlaps of the released directions (rows) with
        ``S``'s eigenvectors (columns), in that order.
    metric : Metric
        On ``S``'s eigenvectors in ascending order (``truth`` reversed).

    Returns
    -------
    energy : float
    """
    m = released.shape[0]
    pair = (overlaps + overlaps.T) / 2.0
    np.fill_diagonal(pair, 0.0)
    squares = metric.overlaps[::-1, ::-1]  # A**2, in the order of truth
    diagonal = metric.diagonal[::-1]
    second = released.T @ released / m
    spread = np.diagonal(second)[:, None] + np.diagonal(second)[None, :] - 2 * second
    cross_moment = released.T @ ((2.0 * released - truth) @ squares) / m
    own = np.diagonal(cross_moment)
    cross = own[:, None] + own[None, :] - cross_moment - cross_moment.T
    off = 2.0 * (np.outer(diagonal, diagonal) + squares)
    on = np.diagonal(squares)[:, None] + np.diagonal(squares)[None, :] - 2 * squares
    total = spread * (pair * (1.0 - pair) * off + pair**2 * on) - pair * cross
    return float(np.sum(np.triu(total, 1)))


def rotation_energy(values, std):
    """``E <R S R.T, R S R.T - S>`` for ``S``'s eigenvectors perturbed by entry noise.

    A rotation ``R`` gives ``<R S R.T, R S R.T - S> = ||R S R.T - S||**2 / 2``
    and, to first order, ``||R S R.T - S||**2 = sum_{k != l} (lambda_k -
    lambda_l)**2 (v'_k . v_l)**2`` with overlaps ``s**2 / (lambda_k -
    lambda_l)**2`` for entry noise of standard deviation ``s``
    (Davis-Kahan's first order); eigenvalues closer than the noise's level
    spacing ``s sqrt(d)`` mix fully, at the cost of their gap: each pair
    costs ``s**2 g**2 / (g**2 + d s**2)`` for its gap ``g``.

    Parameters
    ----------
    values : ndarray of shape (d,)
        ``S``'s eigenvalues.
    std : float
        ``s``.

    Returns
    -------
    energy : float
    """
    d = values.shape[0]
    total = 0.0
    for start in range(0, d, _BLOCK):
        gaps = values[start : start + _BLOCK, None] - values[None, :]
        gaps **= 2
        total += float(np.sum(gaps / (gaps + d * std**2)))
    return 0.5 * std**2 * total


def spectral_null(project, metric, *, value_noise, centring, law=None):
    """Mean and standard deviation of ``||P0||_W**2`` for a spectral release.

    At truth zero the released values are sorted noise draws on the
    eigenvalues of the centring error's outer product (one value
    ``centring``, the others 0), or, given a sampled release's ``law``,
    its values released from them.
    """
    d = metric.weights.shape[0]
    truth = np.zeros(d)
    truth[-1] = centring
    if law is None:
        draws = np.sort(truth + noise_draws(value_noise, (N_VALUE_DRAWS, d)), axis=1)
    else:
        draws = law.released_values(
            truth[::-1], noise_draws(value_noise, (N_VALUE_DRAWS, law.n_statistics))
        )
    energies = _haar_energy(_project_rows(project, draws), metric)
    return float(np.mean(energies)), float(np.std(energies, ddof=1))
