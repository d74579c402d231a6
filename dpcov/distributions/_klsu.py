"""Recursive private preconditioning and private means (Kamath et al., 2019).

The covariance learner of [1]_ preconditions recursively: NaivePCE releases
the clipped second moment with the Gaussian mechanism; WeakPPC halves the
directions whose noisy variance is large; PPC repeats WeakPPC on the same rows
(sequential composition) until a public bound on the condition number is
small; PCE then runs NaivePCE on fresh rows whitened by the preconditioner.
The mean learner (PME) whitens fresh rows the same way and runs KVMean, a
zCDP Karwa-Vadhan estimator (a noisy histogram for a coarse location, then a
noisy clipped mean), on every coordinate (NaivePME).

The constants here (clipping thresholds, WeakPPC's cut-off, the number of
rounds) are derived for dpcov and stated in each docstring; they need not be
the paper's. Privacy never depends on them: every release clips to a public
radius first.

References
----------
.. [1] Kamath, G., Li, J., Singhal, V. and Ullman, J. "Privately Learning
   High-Dimensional Distributions". COLT 2019.
   https://arxiv.org/abs/1805.00216.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np
from scipy import linalg
from scipy.special import ndtri

from ..accounting._composition import _even_share
from ..mechanisms import (
    _noise,
    covariance_deviation,
    gaussian_scale,
    project_psd,
    wigner_norm_bound,
)
from ..mechanisms._sensitivity import (
    ball_mean_sensitivities,
    histogram_sensitivities,
    rank_one_frobenius_distance,
)
from ._coinpress import clipped_second_moment

#: PPC stops once the public condition bound is at most this (dpcov's choice;
#: the paper's PPC brings the condition number down to a constant, Theorem 3.11).
MIN_CONDITION = 16.0
#: Largest number of PPC rounds tried.
MAX_ROUNDS = 200


def naive_pce_threshold(n_samples, n_features, condition, beta):
    """Squared-norm threshold ``T`` of NaivePCE.

    ``T = K (d + 2 sqrt(d L) + 2 L)`` with ``L = ln(2 n / beta)``: the
    Laurent-Massart tail with a union over the ``n`` rows, so that rows
    ``N(0, S)`` with ``S <= K I`` are all within ``sqrt(T)`` with probability
    ``1 - beta / 2``.

    Parameters
    ----------
    n_samples : int
        Number of rows ``n``.
    n_features : int
        Dimension ``d``.
    condition : float
        Public bound ``K`` on the largest eigenvalue.
    beta : float
        Failure probability.

    Returns
    -------
    threshold : float
        The threshold ``T``.
    """
    log_term = math.log(2.0 * n_samples / beta)
    return condition * (
        n_features + 2.0 * math.sqrt(n_features * log_term) + 2.0 * log_term
    )


def naive_pce_noise(n_samples, n_features, condition, rho, beta):
    """Noise scale and its operator-norm bound for NaivePCE.

    Parameters
    ----------
    n_samples : int
        Number of rows ``n``.
    n_features : int
        Dimension ``d``.
    condition : float
        Public bound ``K``.
    rho : float
        The zCDP budget of the release.
    beta : float
        Failure probability.

    Returns
    -------
    scale : float
        The scale ``T / (n sqrt(rho))``: the Frobenius sensitivity of the clipped second
        moment is ``sqrt(2) T / n`` (two PSD rank-one terms of trace at most
        ``T``), and the Gaussian mechanism divides it by ``sqrt(2 rho)``.
    bound : float
        Operator-norm bound on the noise, exceeded with probability at most
        ``beta / 2`` (:func:`~dpcov.mechanisms.wigner_norm_bound`).
    """
    threshold = naive_pce_threshold(n_samples, n_features, condition, beta)
    # Rows clipped to norm sqrt(T): Frobenius sensitivity sqrt(2) T / n.
    sensitivity = rank_one_frobenius_distance(threshold) / n_samples
    scale = gaussian_scale(sensitivity, rho)
    return scale, wigner_norm_bound(n_features, scale, beta / 2.0)


def naive_pce(Z, *, rho, beta, condition, rng, transform=None):
    """NaivePCE: the clipped second moment plus symmetric Gaussian noise.

    rho-zCDP with respect to replacing one row of ``Z``, for any rows: rows
    are scaled down to norm ``sqrt(T)`` (:func:`naive_pce_threshold`, radial
    clipping rather than the paper's zeroing, with the same sensitivity).

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Rows, ideally ``N(0, S)`` with ``S <= condition I``.
    rho : float
        The zCDP budget.
    beta : float
        Failure probability of the accuracy bounds.
    condition : float
        Public bound ``K``.
    rng : numpy.random.Generator
        Source of the noise.
    transform : ndarray of shape (d, d), default=None
        A map ``A`` fixed by earlier releases: the rows are ``A z`` (computed
        chunk by chunk, without a transformed copy of ``Z``).

    Returns
    -------
    estimate : ndarray of shape (d, d)
        The release ``PSD(Z_c.T Z_c / n + Y)``.
    """
    n_samples, n_features = Z.shape
    threshold = naive_pce_threshold(n_samples, n_features, condition, beta)
    scale, _ = naive_pce_noise(n_samples, n_features, condition, rho, beta)
    moment = clipped_second_moment(Z, math.sqrt(threshold), transform)
    return project_psd(moment + _noise.symmetric_matrix(rng, n_features, scale))


def weak_ppc_condition(n_samples, n_features, condition, rho, beta):
    """Public bound on the condition number after one WeakPPC round.

    With ``V`` the span of the noisy eigenvectors of eigenvalue at least
    ``K / 2`` and ``A = I - P_V / 2``, the new upper bound is ``K' = ((1 +
    xi) K / 4 + K / 2 + N) / (1 - xi)`` (derived for dpcov; it takes the place
    of the upper bound of Kamath et al. 2019, Theorem 3.8), ``N`` the noise's
    operator-norm bound and ``xi`` the sample covariance's relative deviation.
    The lower bound 1 is kept when ``K >= 8 (1 + xi) + 2 N``.

    Parameters
    ----------
    n_samples : int
        Number of rows ``n``.
    n_features : int
        Dimension ``d``.
    condition : float
        Current bound ``K``.
    rho : float
        The zCDP budget of the round.
    beta : float
        Failure probability of the round.

    Returns
    -------
    condition : float
        The bound ``K'`` (``inf`` if the round cannot keep the lower bound).
    """
    xi = covariance_deviation(n_features, n_samples, beta / 2.0)
    _, bound = naive_pce_noise(n_samples, n_features, condition, rho, beta)
    if xi >= 1 or condition < 8.0 * (1.0 + xi) + 2.0 * bound:
        return math.inf
    return ((1.0 + xi) * condition / 4.0 + condition / 2.0 + bound) / (1.0 - xi)


def ppc_schedule(n_samples, n_features, condition, rho, beta, *, min_condition=None):
    """Public number of PPC rounds and the condition bound after each.

    For ``r = 1, 2, ...`` the rounds run at ``rho / r`` and ``beta / r`` each;
    the first ``r`` whose recursion reaches ``min_condition`` is chosen.

    Parameters
    ----------
    n_samples : int
        Number of rows ``n`` the rounds share.
    n_features : int
        Dimension ``d``.
    condition : float
        Public bound ``K`` with ``I <= S <= K I``.
    rho : float
        The zCDP budget of all rounds together.
    beta : float
        Failure probability of all rounds together.
    min_condition : float, default=None
        Target bound; ``MIN_CONDITION`` (16) by default.

    Returns
    -------
    conditions : list of float
        The bounds ``[K_0, K_1, ..., K_r]``; ``r = len(conditions) - 1`` rounds (0 when
        ``K`` is already small).

    Raises
    ------
    ValueError
        If no number of rounds up to ``MAX_ROUNDS`` reaches the target: too
        few rows for this budget (a public pre-check).
    """
    target = MIN_CONDITION if min_condition is None else min_condition
    if condition <= target:
        return [float(condition)]
    for rounds in range(1, MAX_ROUNDS + 1):
        conditions = [float(condition)]
        for _ in range(rounds):
            conditions.append(
                weak_ppc_condition(
                    n_samples,
                    n_features,
                    conditions[-1],
                    _even_share(rho, rounds),
                    beta / rounds,
                )
            )
            if not conditions[-1] < conditions[-2]:
                break
        if len(conditions) == rounds + 1 and conditions[-1] <= target:
            return conditions
        if rounds > 1 and not math.isfinite(conditions[1]):
            break  # fewer rho per round only makes the first round worse
    raise ValueError(
        f"recursive preconditioning cannot reach a condition bound of {target:g} "
        f"from {condition:g} with {n_samples} rows at rho={rho:.3g} in d="
        f"{n_features}: more rows, a larger budget, tighter public covariance "
        "bounds or method='coinpress' are needed."
    )


def ppc(Z, *, conditions, rho, beta, rng):
    """PPC: recursive preconditioning on the rows ``Z`` (same rows each round).

    rho-zCDP with respect to replacing one row of ``Z``: ``r`` rounds of
    NaivePCE at ``rho / r`` each, composed sequentially; each round's input
    ``Z A.T`` depends only on earlier releases.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Rows, ideally ``N(0, S)`` with ``I <= S <= K I``.
    conditions : list of float
        From :func:`ppc_schedule` (public).
    rho : float
        The zCDP budget of all rounds.
    beta : float
        Failure probability of all rounds.
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    preconditioner : ndarray of shape (d, d)
        The preconditioner ``A``, with ``I <= A S A.T <= K_r I`` (on Gaussian
        data, with high probability).
    """
    n_features = Z.shape[1]
    rounds = len(conditions) - 1
    A = np.eye(n_features)
    for j in range(rounds):
        estimate = naive_pce(
            Z,
            # rounds * rho_round <= rho exactly (ppc_schedule planned the same).
            rho=_even_share(rho, rounds),
            beta=beta / rounds,
            condition=conditions[j],
            rng=rng,
            transform=A,
        )
        eigenvalues, eigenvectors = linalg.eigh(estimate, check_finite=False)
        large = eigenvectors[:, eigenvalues >= conditions[j] / 2.0]
        # A_j = I - P_V / 2 halves the large directions; w = A x, so A <- A_j A.
        A = (np.eye(n_features) - 0.5 * large @ large.T) @ A
    return A


def _max_gaussian(rng, count, scale):
    # The largest of `count` iid N(0, scale**2), in one draw: its CDF is
    # Phi(x / scale)**count, so x = scale * Phi^-1(U**(1/count)); written with
    # 1 - U**(1/count) = -expm1(log(U) / count) to keep precision for huge
    # counts.
    u = _noise.uniform(rng)
    return -scale * ndtri(-np.expm1(np.log(u) / count))


def kv_coarse_bin(values, *, rho, width, radius, rng):
    """Noisy-argmax bin of a histogram over bins of width ``width`` (zCDP).

    Bins are centred on ``j width`` for ``j = -J..J``, ``J = ceil(radius /
    width) + 1``; values beyond the outer bins count in them. Every bin, empty
    or not, gets ``N(0, 1 / rho)`` noise (replace-one moves one count between
    two bins: L2 sensitivity ``sqrt(2)``, so ``sigma**2 = 2 / (2 rho)``). The
    empty bins are handled together: the largest of their noises is drawn in
    one step and placed at a uniformly random empty bin, which has the same
    law as noising each (the largest of ``r`` independent ``N(0, 1 / rho)``
    draws has distribution function ``Phi(x sqrt(rho))**r``).

    Parameters
    ----------
    values : ndarray of shape (n,)
        The data.
    rho : float
        The zCDP budget.
    width : float
        Bin width ``sigma``.
    radius : float
        Public bound on the location.
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    center : float
        The centre ``j* width`` for the noisy-argmax bin ``j*``.
    """
    half = math.ceil(radius / width) + 1
    n_bins = 2 * half + 1
    index = np.clip(np.rint(values / width), -half, half).astype(np.int64) + half
    occupied, counts = np.unique(index, return_counts=True)
    # One count moves between two bins: L2 sensitivity sqrt(2).
    scale = gaussian_scale(histogram_sensitivities()[0], rho)
    noisy = counts + _noise.gaussian(rng, scale, counts.shape[0])
    best = int(occupied[np.argmax(noisy)])
    n_empty = n_bins - occupied.shape[0]
    if n_empty > 0 and scale > 0:
        empty_max = _max_gaussian(rng, n_empty, scale)
        # Which empty bin carries the maximum: uniform among them.
        k = int(_noise.indices(rng, n_empty))
        if empty_max > noisy.max():
            # The k-th bin index not in `occupied` (occupied is sorted).
            best = k + int(
                np.searchsorted(
                    occupied - np.arange(occupied.shape[0]), k, side="right"
                )
            )
    return (best - half) * width


def kv_fine_width(n_samples, width, beta):
    """Half-width of KVMean's clipping interval around the coarse location.

    ``w = sigma (1.5 + sqrt(2 ln(4 n / beta)))``: the heaviest bin is the
    mean's or a neighbour (``|mu - mu_0| <= 1.5 sigma``), and all rows are
    within ``sigma sqrt(2 ln(4 n / beta))`` of the mean.

    Parameters
    ----------
    n_samples : int
        Number of values ``n``.
    width : float
        Standard-deviation bound ``sigma``.
    beta : float
        Failure probability.

    Returns
    -------
    half_width : float
        The half-width ``w``.
    """
    return width * (1.5 + math.sqrt(2.0 * math.log(4.0 * n_samples / beta)))


def kv_mean(values, *, rho, beta, width, radius, rng):
    """KVMean: a rho-zCDP univariate mean (zCDP variant of Karwa-Vadhan).

    Half the budget finds a coarse location (:func:`kv_coarse_bin`), the other
    half releases the mean of the values clipped to ``[mu_0 - w, mu_0 + w]``
    (:func:`kv_fine_width`) with Gaussian noise; the clipped mean's
    sensitivity under replace-one is ``2 w / n``.

    Parameters
    ----------
    values : ndarray of shape (n,)
        The data, ideally ``N(mu, s**2)`` with ``s <= width``, ``|mu| <=
        radius``.
    rho : float
        The zCDP budget.
    beta : float
        Failure probability.
    width : float
        Public bound ``sigma`` on the standard deviation.
    radius : float
        Public bound on ``|mu|``.
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    mean : float
        The private mean.
    """
    n_samples = values.shape[0]
    coarse = kv_coarse_bin(values, rho=rho / 2.0, width=width, radius=radius, rng=rng)
    half_width = kv_fine_width(n_samples, width, beta)
    clipped = np.clip(values, coarse - half_width, coarse + half_width)
    # Values clipped to an interval of half-width w: sensitivity 2 w / n.
    sensitivity = ball_mean_sensitivities(half_width, n_samples)[0]
    scale = gaussian_scale(sensitivity, rho / 2.0)
    return float(clipped.mean() + _noise.gaussian(rng, scale))


def naive_pme(Y, *, rho, beta, condition, radius, rng):
    """NaivePME: KVMean on every coordinate at ``rho / d`` (zCDP composition).

    Parameters
    ----------
    Y : ndarray of shape (n, d)
        Rows, ideally ``N(mu, S)`` with ``S <= condition I``, ``||mu|| <=
        radius``.
    rho : float
        The zCDP budget of the whole vector.
    beta : float
        Failure probability of the whole vector.
    condition : float
        Public bound ``K`` on the largest eigenvalue (``width = sqrt(K)``).
    radius : float
        Public bound on ``||mu||`` (hence on each ``|mu_j|``).
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    mean : ndarray of shape (d,)
        The private mean.
    """
    n_features = Y.shape[1]
    width = math.sqrt(condition)
    return np.array(
        [
            kv_mean(
                Y[:, j],
                # d * rho_j <= rho exactly (rho / d can round up).
                rho=_even_share(rho, n_features),
                beta=beta / n_features,
                width=width,
                radius=radius,
                rng=rng,
            )
            for j in range(n_features)
        ]
    )
