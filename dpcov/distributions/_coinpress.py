"""CoinPress (Biswas et al., 2020): iterative private covariance and mean.

Both estimators shrink a public confidence region step by step: each step
clips the rows to a radius the current region implies, releases a noisy
statistic with the Gaussian mechanism, and uses it (post-processing) to
shrink the region for the next step.

* Covariance (MVCRec): rows ``w = A x`` are whitened by the current
  preconditioner ``A``; the step releases ``PSD(W.T W / m + noise)`` and
  updates ``A <- (Z + eta I)^(-1/2) A``. The last step's release, mapped back
  by ``A^(-1) Z A^(-T)``, is the estimate.
* Mean (MVMRec): rows are projected onto a ball around the current centre;
  the step releases the noisy mean and the ball shrinks around it.

Privacy holds for any data: every step clips to a public radius before the
Gaussian mechanism, and the steps compose (zCDP budgets add). The plans
(radii, noise scales, shrinkage) are computed from public quantities only, by
the recursions below; they describe accuracy on Gaussian data.

The reference code of [1]_ has two defects this module avoids: it
multiplies the preconditioner in the wrong order for three or more steps
(harmless only when the matrices commute) and its "PSD projection" returns the
matrix absolute value. Here ``A`` acts on columns (``w = A x``), so the update
is ``A <- B A`` and the estimate ``A^(-1) Z A^(-T)``; the projection clips
negative eigenvalues to zero.

References
----------
.. [1] Biswas, S., Dong, Y., Kamath, G. and Ullman, J. "CoinPress: Practical
   Private Mean and Covariance Estimation". NeurIPS 2020.
   https://arxiv.org/abs/2006.06618.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import functools
import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import linalg

from ..accounting._composition import _left
from ..mechanisms import (
    _noise,
    covariance_deviation,
    gaussian_norm_tail,
    gaussian_scale,
    project_psd,
    wigner_norm_bound,
)
from ..mechanisms._sensitivity import (
    ball_mean_sensitivities,
    rank_one_frobenius_distance,
)
from ..utils._gram import row_statistics
from ..utils._threads import single_threaded_blas

#: Shares of the budget of the steps before the last (CoinPress's default:
#: the last step gets 3/4, the others share 1/4); "auto" plans also try
#: 1/2 and 3/4, which win when many steps are needed.
EARLY_SHARES = (0.25, 0.5, 0.75)
#: Longest plan "auto" considers.
MAX_STEPS = 12
#: Smallest ridge ``eta`` relative to the frame's scale (only matters without
#: noise, i.e. epsilon = inf, where ``Z`` may be singular).
MIN_RIDGE = 1e-10


def step_budgets(rho, n_steps, early_share):
    """Split a zCDP budget between ``n_steps`` steps, CoinPress style.

    Parameters
    ----------
    rho : float
        Total zCDP budget of the iterations.
    n_steps : int
        Number of steps ``t``.
    early_share : float
        Share of the budget of the first ``t - 1`` steps (split equally); the
        last step gets the rest. Ignored when ``t = 1``.

    Returns
    -------
    rhos : tuple of float
        Budget of each step; they add up to ``rho`` (to at most ``rho``,
        exactly, in floating point).
    """
    if n_steps == 1 or math.isinf(rho):
        return (rho,) * n_steps
    early = rho * early_share / (n_steps - 1)
    # The last step gets what is left, rounded down: the steps add up to at
    # most rho exactly (rho - early * (t - 1) could round up by an ulp).
    return (early,) * (n_steps - 1) + (_left(rho, [early] * (n_steps - 1)),)


def _best_plan(make_plan, counts):
    # The plan of smallest predicted error among the step counts and the
    # early shares.
    plans = [
        make_plan(t, share)
        for t in counts
        for share in (EARLY_SHARES if t > 1 else EARLY_SHARES[:1])
    ]
    return min(plans, key=lambda plan: plan.predicted_error)


@dataclass(frozen=True)
class CovariancePlan:
    """The public plan of a CoinPress covariance fit.

    Attributes
    ----------
    rhos : tuple of float
        The zCDP budget of each step.
    clip_radii : tuple of float
        Norm bound of the whitened rows at each step.
    noise_scales : tuple of float
        Standard deviation of each upper-triangular noise entry at each step.
    ridges : tuple of float
        The ridge ``eta`` added before inverting the release at each step.
    lower, upper : tuple of float
        Bounds ``lower I <= A S A.T <= upper I`` for the preconditioner
        entering each step and, last, for the one derived from the final
        release: ``upper[-1]`` holds with high probability on Gaussian data,
        ``lower`` and the earlier ``upper`` are typical values (see
        :func:`covariance_plan`).
    predicted_error : float
        Predicted Mahalanobis-Frobenius error of the estimate.
    sensitivities : tuple of float
        Frobenius sensitivity of the clipped second moment at each step (the
        noise scales are calibrated to them).
    """

    rhos: tuple
    clip_radii: tuple
    noise_scales: tuple
    ridges: tuple
    lower: tuple
    upper: tuple
    predicted_error: float
    sensitivities: tuple

    @property
    def n_steps(self):
        """Number of steps."""
        return len(self.rhos)


def sampling_ridge(n_features, n_samples):
    """The sampling part of the ridge: ``(2 sqrt(d / m) + d / m) / 2``.

    Half the typical relative deviation ``2 t + t**2`` (``t = sqrt(d / m)``)
    of the second moment of ``m`` standard Gaussian rows, the ridge of the
    reference code of Biswas, Dong, Kamath and Ullman (2020).

    Parameters
    ----------
    n_features : int
        Dimension ``d``.
    n_samples : int
        Number of rows ``m``.

    Returns
    -------
    ridge : float
        The ridge.

    Examples
    --------
    >>> from dpcov.distributions import sampling_ridge
    >>> round(sampling_ridge(10, 10_000), 4)
    0.0321
    """
    t = math.sqrt(n_features / n_samples)
    return 0.5 * (2.0 * t + t * t)


def covariance_plan(
    n_samples, n_features, rho, condition, *, n_steps, early_share, beta
):
    """Plan a CoinPress covariance fit from public quantities.

    The rows are assumed ``N(0, S)`` with ``I <= S <= condition I`` (after the
    known scaling). Step ``i`` whitens the rows by the current ``A``, clips
    them to ``c_i`` and releases ``Z_i = PSD(W.T W / m + Y_i)``, with
    symmetric Gaussian noise of entry scale ``sigma_i = c_i**2 / (m
    sqrt(rho_i))``; then ``A <- (Z_i + eta_i I)^(-1/2) A``. Only ``c_i``,
    ``sigma_i`` and ``eta_i`` are chosen here, and all from public values,
    so the schedule never affects privacy; it sets the accuracy.

    **Schedule.** The first step clips at ``sqrt(K) tau`` (``tau`` the
    Gaussian norm tail at ``beta``: a row of ``N(0, S)`` lies inside with
    probability ``1 - beta``). Every later step clips at ``tau``, the radius
    of the frame the whitening aims at, ``A S A.T = I``. The ridge is
    ``eta_i = (2 sqrt(d / m) + d / m) / 2 + sigma_i``: the sampling ridge of
    the reference code of [1]_ plus one noise standard deviation. Its second
    term matters where the noise is comparable with the signal: a direction
    whose released variance was pushed towards zero by the noise is then not
    blown up by the next whitening (without it, the eigenvalue clipping of
    ``PSD`` makes such directions exact zeros, and the next step clips them
    away). A ridge of ``N_i``, the high-probability bound on ``||Y_i||``, is
    safe but far too large: where the noise dominates it shrinks the whitened
    covariance towards ``1 / N_i`` and the next clip radius is then far
    above the data.

    The last step's update of ``A`` does not enter the covariance estimate
    (which is ``A^(-1) Z_t A^(-T)`` with the ``A`` before it); it only gives
    the whitening the mean may use. Its ridge is therefore the safe one,
    ``max(eta_t, N_t)``, with ``N_t`` the bound on ``||Y_t||`` that holds
    with probability ``1 - beta``.

    **What the planned bounds promise.** ``upper[i]`` and ``lower[i]``
    describe ``A_i S A_i.T`` for the preconditioner entering step ``i`` (and,
    last, the final one), on Gaussian rows that the clip leaves intact (the
    radii are chosen so that a row is, with probability ``1 - beta``). With
    ``xi`` the relative deviation of the sample second moment (probability
    ``1 - beta``), ``PSD(M) >= M`` gives ``Z_i + eta_i I >= (1 - xi) A S A.T
    - (N_i - eta_i)_+ I``, hence ``upper[i+1] = 1 / ((1 - xi) - (N_i -
    eta_i)_+ / lower[i])`` (``inf`` when that is not positive). The last
    ridge covers the noise, so ``upper[-1] = 1 / (1 - xi)`` holds with
    probability at least ``1 - 2 beta`` whatever the earlier steps did; the
    earlier ones use ``lower``, which is a typical value, ``lower[i+1] = 1 /
    ((1 + xi) + (2 sigma_i sqrt(d) + eta_i) / lower[i])`` (``2 sigma
    sqrt(d)`` is the typical operator norm of the noise; the worst case
    ``PSD(M) <= M + N_i I`` is far too pessimistic to plan with).

    **Predicted error.** :func:`best_covariance_plan` ranks plans by
    simulation. The closed form here, used above ``PLAN_MAX_FEATURES``
    dimensions, is ``(d sigma_t + c_t**2 / tau**2 sqrt(d (d + 1) / m)) /
    lower[t-1]``: noise and sampling in Frobenius norm, in the metric of
    the last frame.

    Parameters
    ----------
    n_samples : int
        Number of rows ``m``.
    n_features : int
        Dimension ``d``.
    rho : float
        The zCDP budget of the whole iteration (``inf``: no noise).
    condition : float
        Public bound ``K >= 1`` with ``I <= S <= K I``.
    n_steps : int
        Number of steps ``t >= 1``.
    early_share : float
        See :func:`step_budgets`.
    beta : float
        Failure probability of each bound, in (0, 1).

    Returns
    -------
    plan : CovariancePlan
        The plan; ``predicted_error`` is ``inf`` when the recursion breaks
        down (too few rows to whiten).

    References
    ----------
    .. [1] Biswas, S., Dong, Y., Kamath, G. and Ullman, J. "CoinPress:
       Practical Private Mean and Covariance Estimation". NeurIPS 2020.
       https://arxiv.org/abs/2006.06618.
    """
    rhos = step_budgets(rho, n_steps, early_share)
    d, m = n_features, n_samples
    tau = gaussian_norm_tail(d, beta)
    xi = covariance_deviation(d, m, beta)
    base = sampling_ridge(d, m)
    lower, upper = [1.0], [float(condition)]
    radii, scales, ridges, sensitivities = [], [], [], []
    for step, rho_step in enumerate(rhos):
        target = float(condition) if step == 0 else 1.0
        radius = math.sqrt(target) * tau
        # Frobenius sensitivity of W.T W / m for rows of norm <= c under
        # replace-one: sqrt(2) c**2 / m (both rank-one terms are PSD); the
        # Gaussian mechanism needs sigma = sqrt(2) c**2 / (m sqrt(2 rho)).
        sensitivity = rank_one_frobenius_distance(radius**2) / m
        scale = gaussian_scale(sensitivity, rho_step)
        sensitivities.append(sensitivity)
        bound = wigner_norm_bound(d, scale, beta)
        ridge = base + scale
        if step == len(rhos) - 1:
            ridge = max(ridge, bound)
        ridge = max(ridge, MIN_RIDGE * target)
        radii.append(radius)
        scales.append(scale)
        ridges.append(ridge)
        if xi < 1 and lower[-1] > 0:
            denominator = (1.0 - xi) - max(bound - ridge, 0.0) / lower[-1]
            upper.append(1.0 / denominator if denominator > 0 else math.inf)
            noise = 2.0 * scale * math.sqrt(d)
            lower.append(1.0 / ((1.0 + xi) + (noise + ridge) / lower[-1]))
        else:
            upper.append(math.inf)
            lower.append(0.0)
    if lower[-2] <= 0:
        error = math.inf
    else:
        sampling = (radii[-1] / tau) ** 2 * math.sqrt(d * (d + 1) / m)
        error = (d * scales[-1] + sampling) / lower[-2]
    return CovariancePlan(
        rhos=rhos,
        clip_radii=tuple(radii),
        noise_scales=tuple(scales),
        ridges=tuple(ridges),
        lower=tuple(lower),
        upper=tuple(upper),
        predicted_error=error,
        sensitivities=tuple(sensitivities),
    )


#: Repetitions of the planner's simulation of a covariance plan, times the
#: dimension (fewer in high dimension, where one Frobenius error averages
#: over more entries), between 2 and 16.
PLAN_REPEATS = 320
#: Rows drawn per simulated step to model the clipping.
PLAN_CLIP_DRAWS = 1000
#: Seed of the planner's simulation: public and fixed, so the chosen plan is
#: a function of (m, d, rho, K, beta) alone.
PLAN_SEED = 2020
#: Largest dimension the planner simulates; above it, the closed-form
#: prediction of :func:`covariance_plan` chooses.
PLAN_MAX_FEATURES = 128


def simulate_covariance_error(plans, n_samples, n_features, *, repeats=None):
    """Simulated errors of CoinPress covariance plans on public synthetic data.

    Each plan is run on the sufficient statistics of ``m`` rows of ``N(0,
    I)``: the covariance at the public lower bound, where the signal is
    weakest against noise calibrated to the public upper bound. Step ``i``
    sees ``D A G A.T D``, where ``G`` is a Wishart draw of the rows' second
    moment (the same at every step, as the same rows are reused), ``A`` the
    current preconditioner, and ``D`` the per-direction shrinkage of clipping
    at ``c_i`` (estimated from ``PLAN_CLIP_DRAWS`` Gaussian rows in the
    eigenbasis of ``A A.T``); it then adds the plan's noise, projects onto the
    PSD cone and whitens with the plan's ridge, as
    :func:`coinpress_covariance` does. The error is the Mahalanobis-Frobenius
    error of the last release. All plans share the same draws (common random
    numbers), from a fixed public seed: the result depends only on its
    arguments, never on data.

    Parameters
    ----------
    plans : sequence of CovariancePlan
        Plans for the same ``(m, d)``.
    n_samples : int
        Number of rows ``m``.
    n_features : int
        Dimension ``d``.
    repeats : int, default=None
        Number of simulated datasets; None gives ``PLAN_REPEATS / d``, within
        2 to 16.

    Returns
    -------
    errors : ndarray of shape (len(plans),)
        Mean simulated error of each plan.

    Examples
    --------
    >>> from dpcov.distributions import covariance_plan, simulate_covariance_error
    >>> plans = [
    ...     covariance_plan(5000, 4, 0.1, 100.0, n_steps=t, early_share=0.25, beta=0.1)
    ...     for t in (1, 3)
    ... ]
    >>> errors = simulate_covariance_error(plans, 5000, 4)
    >>> bool(errors[1] < errors[0])
    True
    """
    d, m = n_features, n_samples
    if repeats is None:
        repeats = min(16, max(2, round(PLAN_REPEATS / d)))
    rng = np.random.default_rng(PLAN_SEED)
    longest = max(plan.n_steps for plan in plans)
    # The datasets are drawn one after another (the same draws, in the same
    # order, whatever the plans), then every plan runs on all of them at once:
    # stacked small matrices cost one numpy call per step instead of one per
    # step and dataset.
    # NumPy's stacked eigh (LAPACK syevd) replaces a per-matrix
    # scipy.linalg.eigh (syevr), which cost three times as much in Python
    # overhead. Where the PSD projection makes eigenvalues coincide, the
    # clipping model's per-direction draws follow the solver's choice of
    # basis, so the simulated errors differ from the per-matrix version's at
    # the level of the simulation's own noise (at most 1.7% on a grid of 74
    # (m, d, rho, K); 2 choices changed, between plans within 1% of each
    # other); with the same solver the two agree to rounding.
    draws = [_draw_dataset(m, d, rng, longest) for _ in range(repeats)]
    moments, squares, noises = (np.stack(parts) for parts in zip(*draws, strict=True))
    errors = np.empty(len(plans))
    # Small matrices: BLAS threads only add overhead (10x on 2 cores).
    with single_threaded_blas():
        for n_steps in sorted({plan.n_steps for plan in plans}):
            # Plans of the same length run together.
            group = [k for k, plan in enumerate(plans) if plan.n_steps == n_steps]
            simulated = _simulate_plans(
                [plans[k] for k in group], moments, squares, noises
            )
            for k, row in zip(group, simulated, strict=True):
                # Summed over the datasets in order, as one running total.
                total = 0.0
                for error in row:
                    total += error
                errors[k] = total
    return errors / repeats


def _draw_dataset(m, d, rng, longest):
    # One simulated dataset (see simulate_covariance_error): the second
    # moment of m rows of N(0, I), the squared entries of the rows that model
    # the clipping, and the noise of each step.
    if m > 4 * d:
        # Bartlett: L L.T ~ Wishart(m, I) for lower-triangular L with
        # chi(m - i) diagonal and standard normal entries below.
        L = np.tril(rng.normal(size=(d, d)), -1)
        L[np.diag_indices(d)] = np.sqrt(rng.chisquare(m - np.arange(d)))
        moment = L @ L.T / m
    else:
        rows = rng.normal(size=(m, d))
        moment = rows.T @ rows / m
    squares = rng.normal(size=(PLAN_CLIP_DRAWS, d)) ** 2
    noises = np.stack([rng.normal(size=(d, d)) for _ in range(longest)])
    return moment, squares, noises


def _simulate_plans(plans, moments, squares, noises):
    # The Mahalanobis-Frobenius error of plans of the same length on each
    # simulated dataset: an array of shape (plans, datasets). The arrays are
    # stacked over (plan, dataset); moments, squares and noises have the
    # datasets on their leading axis.
    d = moments.shape[-1]
    eye = np.eye(d)

    # The plans' values at each step: arrays of shape (plan, step).
    radii2 = np.array([plan.clip_radii for plan in plans]) ** 2
    scales = np.array([plan.noise_scales for plan in plans])
    ridges = np.array([plan.ridges for plan in plans])
    A = np.broadcast_to(eye, (len(plans),) + moments.shape).copy()
    n_steps = plans[0].n_steps
    for step in range(n_steps):
        # Clipping shrinks direction j of the whitened covariance
        # A A.T = V diag(lam) V.T by E[u_j**2 min(1, c**2 / ||w||**2)]
        # over w = sqrt(lam) u, u ~ N(0, I).
        At = np.swapaxes(A, -1, -2)
        lam, V = np.linalg.eigh(A @ At)
        lam = np.maximum(lam, 0.0)
        Vt = np.swapaxes(V, -1, -2)
        w2 = (squares @ lam[..., np.newaxis])[..., 0]
        factor = np.minimum(1.0, radii2[:, step, None, None] / np.maximum(w2, 1e-300))
        shrink = np.sqrt(
            (factor[..., np.newaxis, :] @ squares)[..., 0, :] / PLAN_CLIP_DRAWS
        )
        D = (V * shrink[..., np.newaxis, :]) @ Vt
        sample = D @ (A @ moments @ At) @ D
        noise = np.triu(noises[:, step]) * scales[:, step, None, None, None]
        noise = noise + np.swapaxes(np.triu(noise, 1), -1, -2)
        # project_psd of each release: its eigenvalues clipped at 0.
        released = sample + noise
        w, U = np.linalg.eigh((released + np.swapaxes(released, -1, -2)) / 2.0)
        w = np.maximum(w, 0.0)
        Ut = np.swapaxes(U, -1, -2)
        if step == n_steps - 1:
            released = (U * w[..., np.newaxis, :]) @ Ut
            released = (released + np.swapaxes(released, -1, -2)) / 2.0
            root = (V / np.sqrt(np.maximum(lam, 1e-300))[..., np.newaxis, :]) @ Vt
            return np.linalg.norm(root @ released @ root - eye, axis=(-2, -1))
        # inverse_sqrt(released + ridge I) A, from the same eigenvectors:
        # released + ridge I = U diag(w + ridge) U.T.
        A = (
            (U / np.sqrt(w + ridges[:, step, None, None])[..., np.newaxis, :]) @ Ut
        ) @ A
    raise AssertionError("a plan has at least one step")


@functools.lru_cache(maxsize=256)
def best_covariance_plan(
    n_samples, n_features, rho, condition, *, beta, n_steps="auto"
):
    """The covariance plan with the smallest predicted error.

    Candidates are 1 to ``MAX_STEPS`` steps (or ``n_steps``), each with the
    early shares ``EARLY_SHARES``. Up to ``PLAN_MAX_FEATURES`` dimensions the
    prediction is the simulated error of :func:`simulate_covariance_error`
    (steps are tried in increasing number, and the search stops once two
    more steps have not improved on the best); above, the closed form of
    :func:`covariance_plan`. Both read public quantities only.

    Parameters
    ----------
    n_samples : int
        Number of rows ``m``.
    n_features : int
        Dimension ``d``.
    rho : float
        The zCDP budget of the iteration.
    condition : float
        Public bound ``K`` with ``I <= S <= K I``.
    beta : float
        Failure probability of each bound.
    n_steps : int or "auto", default="auto"
        Fixed number of steps, or "auto" for 1 to ``MAX_STEPS``.

    Returns
    -------
    plan : CovariancePlan
        The chosen plan (a function of public quantities only), with its
        ``predicted_error``.
    """

    def make(t, share):
        return covariance_plan(
            n_samples,
            n_features,
            rho,
            condition,
            n_steps=t,
            early_share=share,
            beta=beta,
        )

    counts = range(1, MAX_STEPS + 1) if n_steps == "auto" else (int(n_steps),)
    if n_features > PLAN_MAX_FEATURES or math.isinf(rho):
        # Without noise one step (the widest clip) is best; in high
        # dimension the closed-form prediction chooses.
        if math.isinf(rho) and n_steps == "auto":
            counts = (1,)
        return _best_plan(make, counts)
    best, stale = None, 0
    for t in counts:
        candidates = [
            make(t, share) for share in (EARLY_SHARES if t > 1 else EARLY_SHARES[:1])
        ]
        candidates = [
            plan for plan in candidates if math.isfinite(plan.predicted_error)
        ]
        if not candidates:
            continue
        errors = simulate_covariance_error(candidates, n_samples, n_features)
        k = int(np.argmin(errors))
        if best is None or errors[k] < best.predicted_error:
            best = replace(candidates[k], predicted_error=float(errors[k]))
            stale = 0
        else:
            stale += 1
            if stale == 2:
                break
    if best is None:
        return _best_plan(make, counts)
    return best


def clipped_second_moment(Z, radius, preconditioner=None):
    """``sum_i w_i w_i^T / m`` over ``w_i = clip(A z_i, radius)``.

    Parameters
    ----------
    Z : ndarray of shape (m, d)
        Rows.
    radius : float
        Norm bound the whitened rows are scaled down to.
    preconditioner : ndarray of shape (d, d), default=None
        ``A``; the identity when None.

    Returns
    -------
    moment : ndarray of shape (d, d)
        The clipped second moment.
    """
    # One chunked pass (bounded memory, also on Dask arrays).
    stats = row_statistics(Z, transform=preconditioner, final_clip=radius, gram=True)
    return stats.gram / Z.shape[0]


def inverse_sqrt(matrix):
    """``matrix ** (-1/2)`` for a symmetric positive definite matrix.

    Parameters
    ----------
    matrix : ndarray of shape (d, d)
        Symmetric positive definite.

    Returns
    -------
    root : ndarray of shape (d, d)
        The symmetric inverse square root.
    """
    eigenvalues, eigenvectors = linalg.eigh(matrix, check_finite=False)
    return (eigenvectors / np.sqrt(eigenvalues)) @ eigenvectors.T


def coinpress_covariance(Z, plan, rng, *, return_frame=False):
    """Run a CoinPress covariance plan on rows ``Z`` (MVCRec).

    Satisfies ``sum(plan.rhos)``-zCDP with respect to replacing one row of
    ``Z``, whatever the rows: each step releases the clipped second moment of
    the whitened rows with the Gaussian mechanism, and ``A`` depends only on
    earlier releases.

    Parameters
    ----------
    Z : ndarray of shape (m, d)
        Rows, ideally ``N(0, S)`` with ``I <= S <= K I``.
    plan : CovariancePlan
        From :func:`covariance_plan` (public).
    rng : numpy.random.Generator
        Source of the noise.
    return_frame : bool, default=False
        Also return the preconditioner ``A`` of the last step, whose frame
        the last noise is added in (post-processing of earlier releases).

    Returns
    -------
    covariance : ndarray of shape (d, d)
        The estimate ``A^(-1) Z_t A^(-T)`` for the last preconditioner ``A`` and release
        ``Z_t`` (PSD).
    preconditioner : ndarray of shape (d, d)
        The whitening ``(Z_t + eta_t I)^(-1/2) A``: whitens ``S`` to within
        ``plan.lower[-1]`` and ``plan.upper[-1]`` (post-processing).
    frame : ndarray of shape (d, d)
        Only with ``return_frame=True``: the last step's ``A``; the last
        noise enters the estimate as ``A^(-1) Y A^(-T)``.
    """

    def schedule(step, A):
        # The plan's public radius, noise scale and ridge.
        return (
            plan.clip_radii[step],
            plan.noise_scales[step],
            plan.sensitivities[step],
            plan.ridges[step],
        )

    covariance, A, frame, _ = _covariance_steps(Z, plan.n_steps, schedule, rng)
    if return_frame:
        return covariance, A, frame
    return covariance, A


def _covariance_steps(Z, n_steps, schedule, rng):
    # The CoinPress covariance iteration; schedule(step, A) gives the step's
    # clip radius, noise scale, sensitivity and ridge from public values and
    # the current A (itself a function of earlier releases).
    n_features = Z.shape[1]
    A = np.eye(n_features)
    scales = []
    for step in range(n_steps):
        radius, scale, sensitivity, ridge = schedule(step, A)
        scales.append(scale)
        moment = clipped_second_moment(Z, radius, A)
        noisy = _noise.add_symmetric(rng, moment, scale, sensitivity=sensitivity)
        # True projection onto the PSD cone (eigenvalues clipped at zero), not
        # the matrix absolute value of the reference code.
        released = project_psd(noisy)
        if step == n_steps - 1:
            frame = A
            A_inv = linalg.inv(A)
            covariance = A_inv @ released @ A_inv.T
            covariance = (covariance + covariance.T) / 2.0
        # Column convention w = A x: the new whitening acts after the old one,
        # A <- B A (the reference code's A <- B A with rows x A is the
        # multiplication-order bug).
        A = inverse_sqrt(released + ridge * np.eye(n_features)) @ A
    return covariance, A, frame, tuple(scales)


def centred_clip_radius(radius, target, offset, beta):
    """Clip radius of a CoinPress covariance step on rows centred at an estimate.

    A row ``y = x - mu1`` whitened by ``A`` is ``A (x - mu) + o`` with the
    offset ``o = A (mu - mu1)``. Where ``||A (x - mu)|| <= c`` (the plan's
    radius), its projection on the direction of ``o`` is at most ``s
    sqrt(target)`` (``A S A.T <= target I``; ``s = sqrt(2 ln(2 / beta))``, a
    Gaussian tail) and ``||o|| <= offset``, hence ``||A y||**2 <= c**2 + 2 s
    sqrt(target) offset + offset**2``.

    Parameters
    ----------
    radius : float
        The plan's radius ``c`` for rows centred at the true mean.
    target : float
        Bound on the largest eigenvalue of ``A S A.T``.
    offset : float
        Bound on ``||A (mu - mu1)||``.
    beta : float
        Failure probability of the one-dimensional tail.

    Returns
    -------
    radius : float
        The widened radius ``c'``.
    """
    s = math.sqrt(2.0 * math.log(2.0 / beta))
    return math.sqrt(
        radius * radius + 2.0 * s * math.sqrt(target) * offset + offset * offset
    )


def coinpress_centred_covariance(Y, plan, rng, *, mean_noise, condition, beta):
    """Run a CoinPress covariance plan on rows centred at a released mean.

    The rows are ``y = x - mu1`` for a private estimate ``mu1`` of the mean
    released with Gaussian noise of scale ``mean_noise`` on each coordinate.
    Step ``i`` follows ``plan`` but widens its radius for the offset ``A (mu
    - mu1)`` (see :func:`centred_clip_radius`), with the bound ``offset =
    (tau / sqrt(d)) sqrt(d t / n + mean_noise**2 ||A||_F**2)`` (``t = K`` at
    the first step and 1 after, ``tau`` the Gaussian norm tail at ``beta``):
    the sampling error of ``mu1`` is ``N(0, S / n)`` and its noise ``N(0,
    mean_noise**2 I)``. The noise scale and ridge are recomputed from the
    widened radius ``c'`` as in :func:`covariance_plan`.

    Satisfies ``sum(plan.rhos)``-zCDP with respect to replacing one row of
    ``Y``, whatever the rows: ``c'`` depends only on public values and on
    ``A`` (earlier releases), and the clipped second moment has Frobenius
    sensitivity ``sqrt(2) c'**2 / n``.

    Parameters
    ----------
    Y : ndarray of shape (n, d)
        Rows centred at the released mean.
    plan : CovariancePlan
        From :func:`covariance_plan` on ``n`` rows (public).
    rng : numpy.random.Generator
        Source of the noise.
    mean_noise : float
        Public noise scale of the released mean.
    condition : float
        Public bound ``K`` with ``I <= S <= K I``.
    beta : float
        Failure probability of each bound.

    Returns
    -------
    covariance : ndarray of shape (d, d)
        The estimate ``A^(-1) Z_t A^(-T)`` (PSD); it estimates ``S + (mu -
        mu1)(mu - mu1).T``.
    preconditioner : ndarray of shape (d, d)
        The whitening ``(Z_t + eta_t I)^(-1/2) A`` (post-processing).
    frame : ndarray of shape (d, d)
        The last step's ``A``.
    noise_scales : tuple of float
        The noise scale of each step.
    """
    n_samples, n_features = Y.shape
    tau = gaussian_norm_tail(n_features, beta)
    base = sampling_ridge(n_features, n_samples)

    def schedule(step, A):
        target = float(condition) if step == 0 else 1.0
        offset = (tau / math.sqrt(n_features)) * math.sqrt(
            n_features * target / n_samples
            + mean_noise**2 * np.linalg.norm(A, "fro") ** 2
        )
        radius = centred_clip_radius(plan.clip_radii[step], target, offset, beta)
        # Replacing one row of x replaces one y (mu1 is an earlier release):
        # the Frobenius sensitivity of W.T W / n for rows clipped to c' is
        # sqrt(2) c'**2 / n, and sigma = sqrt(2) c'**2 / (n sqrt(2 rho_i)).
        sensitivity = rank_one_frobenius_distance(radius**2) / n_samples
        scale = gaussian_scale(sensitivity, plan.rhos[step])
        ridge = base + scale
        if step == plan.n_steps - 1:
            ridge = max(ridge, wigner_norm_bound(n_features, scale, beta))
        ridge = max(ridge, MIN_RIDGE * target)
        return radius, scale, sensitivity, ridge

    return _covariance_steps(Y, plan.n_steps, schedule, rng)


@dataclass(frozen=True)
class MeanPlan:
    """The public plan of a CoinPress mean fit.

    Attributes
    ----------
    rhos : tuple of float
        The zCDP budget of each step.
    radii : tuple of float
        Radius of the ball around the current centre that contains the mean
        (on Gaussian data, with high probability), entering each step and,
        last, after the final step.
    clip_radii : tuple of float
        Radius rows are projected to (around the current centre) at each step.
    noise_scales : tuple of float
        Standard deviation of the noise on each coordinate of the mean.
    predicted_error : float
        The last radius: predicted Euclidean error in the whitened frame.
    sensitivities : tuple of float
        L2 sensitivity of the clipped mean at each step.
    """

    rhos: tuple
    radii: tuple
    clip_radii: tuple
    noise_scales: tuple
    predicted_error: float
    sensitivities: tuple

    @property
    def n_steps(self):
        """Number of steps."""
        return len(self.rhos)


def mean_plan(n_samples, n_features, rho, radius, upper, *, n_steps, early_share, beta):
    """Plan a CoinPress mean fit from public quantities.

    The rows are assumed ``N(mu, S)`` with ``S <= upper I`` and ``||mu - c||
    <= r``. A row then satisfies ``||x - c||**2 <= r**2 + 2 r sqrt(upper) s +
    upper tau**2`` (``s`` the Gaussian tail of one projection, ``tau`` the norm
    tail) and ``||x - c|| <= r + sqrt(upper) tau``; the step projects rows
    onto the ball of the smaller radius ``c_r``, adds noise of scale ``2 c_r /
    (n sqrt(2 rho_i))``, and the new centre is within ``tau sqrt(upper / n +
    sigma**2)`` of ``mu``.

    Parameters
    ----------
    n_samples : int
        Number of rows ``n``.
    n_features : int
        Dimension ``d``.
    rho : float
        The zCDP budget of the iteration.
    radius : float
        Public bound ``r`` on ``||mu||`` (the first centre is the origin).
    upper : float
        Public bound on the covariance's largest eigenvalue.
    n_steps : int
        Number of steps.
    early_share : float
        See :func:`step_budgets`.
    beta : float
        Failure probability of each bound.

    Returns
    -------
    plan : MeanPlan
        The plan.
    """
    rhos = step_budgets(rho, n_steps, early_share)
    tau = gaussian_norm_tail(n_features, beta)
    s = math.sqrt(2.0 * math.log(2.0 / beta))
    radii, clips, scales, sensitivities = [float(radius)], [], [], []
    root = math.sqrt(upper)
    for rho_step in rhos:
        r = radii[-1]
        clip = min(
            math.sqrt(r * r + 2.0 * r * root * s + upper * tau**2), r + root * tau
        )
        # L2 sensitivity of the mean of rows projected onto a ball of radius
        # c under replace-one: 2 c / n.
        sensitivity = ball_mean_sensitivities(clip, n_samples, n_features)[0]
        scale = gaussian_scale(sensitivity, rho_step)
        sensitivities.append(sensitivity)
        clips.append(clip)
        scales.append(scale)
        radii.append(tau * math.sqrt(upper / n_samples + scale**2))
    return MeanPlan(
        rhos=rhos,
        radii=tuple(radii),
        clip_radii=tuple(clips),
        noise_scales=tuple(scales),
        predicted_error=radii[-1],
        sensitivities=tuple(sensitivities),
    )


def best_mean_plan(n_samples, n_features, rho, radius, upper, *, beta, n_steps="auto"):
    """The mean plan with the smallest predicted error.

    Parameters
    ----------
    n_samples : int
        Number of rows ``n``.
    n_features : int
        Dimension ``d``.
    rho : float
        The zCDP budget of the iteration.
    radius : float
        Public bound on ``||mu||``.
    upper : float
        Public bound on the covariance's largest eigenvalue.
    beta : float
        Failure probability of each bound.
    n_steps : int or "auto", default="auto"
        Fixed number of steps, or "auto" for 1 to ``MAX_STEPS``.

    Returns
    -------
    plan : MeanPlan
        The chosen plan (public).
    """
    return _best_plan(
        lambda t, share: mean_plan(
            n_samples,
            n_features,
            rho,
            radius,
            upper,
            n_steps=t,
            early_share=share,
            beta=beta,
        ),
        range(1, MAX_STEPS + 1) if n_steps == "auto" else (int(n_steps),),
    )


def coinpress_mean(X, plan, rng, transform=None):
    """Run a CoinPress mean plan on rows ``X`` (MVMRec).

    Satisfies ``sum(plan.rhos)``-zCDP with respect to replacing one row,
    whatever the rows: each step releases the mean of rows projected onto a
    ball of public radius around a centre that earlier releases fixed.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Rows, ideally ``N(mu, S)`` with ``S <= upper I``, ``||mu|| <= r``.
    plan : MeanPlan
        From :func:`mean_plan` (public).
    rng : numpy.random.Generator
        Source of the noise.
    transform : ndarray of shape (d, d), default=None
        A public (or earlier released) map applied to every row first: the
        mean of ``A x`` is estimated, without a transformed copy of ``X``.

    Returns
    -------
    mean : ndarray of shape (d,)
        The private mean (of the transformed rows).
    """
    n_samples = X.shape[0]
    n_features = X.shape[1] if transform is None else transform.shape[0]
    center = np.zeros(n_features)
    for step in range(plan.n_steps):
        total = row_statistics(
            X,
            transform=transform,
            center=center,
            final_clip=plan.clip_radii[step],
            total=True,
        ).total
        # The centre is public (earlier releases): the sum's sensitivity.
        center = _noise.add_gaussian(
            rng,
            center + total / n_samples,
            plan.noise_scales[step],
            plan.sensitivities[step],
        )
    return center
