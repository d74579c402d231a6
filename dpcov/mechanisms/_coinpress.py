"""CoinPress: iterative private covariance and mean of Gaussian rows (BDKU20).

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

The reference code of [1]_ has two defects this module avoids (spec §9.4): it
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

import math
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from ..accounting import _left
from ..utils._gram import row_statistics
from . import _noise
from ._calibration import gaussian_scale
from ._projection import project_psd
from ._tails import covariance_deviation, gaussian_norm_tail, wigner_norm_bound

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


def _best_plan(make_plan, n_steps):
    # The plan of smallest predicted error among 1..MAX_STEPS steps and the
    # early shares ("auto"), or among the early shares for a fixed count.
    counts = range(1, MAX_STEPS + 1) if n_steps == "auto" else (int(n_steps),)
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
        release: ``upper`` holds with high probability on Gaussian data,
        ``lower`` is a typical value (see :func:`covariance_plan`).
    predicted_error : float
        Predicted Mahalanobis-Frobenius error of the estimate.
    """

    rhos: tuple
    clip_radii: tuple
    noise_scales: tuple
    ridges: tuple
    lower: tuple
    upper: tuple
    predicted_error: float

    @property
    def n_steps(self):
        """Number of steps."""
        return len(self.rhos)


def covariance_plan(
    n_samples, n_features, rho, condition, *, n_steps, early_share, beta
):
    """Plan a CoinPress covariance fit from public quantities.

    The rows are assumed ``N(0, S)`` with ``I <= S <= condition I`` (after the
    known scaling). A step with bounds ``L I <= S_A <= U I`` on the whitened
    covariance ``S_A = A S A.T`` clips to ``c = sqrt(U) tau`` (``tau`` the
    Gaussian norm tail at ``beta``), adds noise of scale ``sigma = c**2 / (m
    sqrt(rho_i))`` whose operator norm is at most ``N`` (with probability
    ``1 - beta``), and sets the ridge ``eta = N``. With ``xi`` the relative
    deviation of the sample covariance, ``PSD(M) >= M`` gives ``S_A <= (Z +
    eta I) / (1 - xi)``: the next upper bound is ``1 / (1 - xi)``, which sets
    the next clipping radius.

    For the lower bound, ``PSD(M) <= M + N I`` gives the worst case ``1 / ((1
    + xi) + 3 N / L)``, which is far too pessimistic to choose a plan with
    (the noise is not aligned with the weak directions). The plan uses the
    typical value ``1 / ((1 + xi) + 2 sigma sqrt(d) / L)`` (``2 sigma
    sqrt(d)`` is the typical operator norm of the noise); on rotated
    Gaussians with condition numbers 1e3 and 1e8 it ranks plans as their
    measured errors do. The predicted error of the last step is ``(d sigma_t +
    U_t sqrt(d (d + 1) / m)) / L_t`` (noise and sampling in Frobenius norm, in
    the metric of the whitened covariance). None of this affects privacy.

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
    """
    rhos = step_budgets(rho, n_steps, early_share)
    tau = gaussian_norm_tail(n_features, beta)
    xi = covariance_deviation(n_features, n_samples, beta)
    lower, upper = [1.0], [float(condition)]
    radii, scales, ridges = [], [], []
    for rho_step in rhos:
        radius = math.sqrt(upper[-1]) * tau
        # Frobenius sensitivity of W.T W / m for rows of norm <= c under
        # replace-one: sqrt(2) c**2 / m (both rank-one terms are PSD); the
        # Gaussian mechanism needs sigma = sqrt(2) c**2 / (m sqrt(2 rho)).
        scale = gaussian_scale(math.sqrt(2.0) * radius**2 / n_samples, rho_step)
        bound = wigner_norm_bound(n_features, scale, beta)
        ridge = max(bound, MIN_RIDGE * upper[-1])
        radii.append(radius)
        scales.append(scale)
        ridges.append(ridge)
        if xi < 1:
            typical = 2.0 * scale * math.sqrt(n_features)
            upper.append(1.0 / (1.0 - xi))
            lower.append(1.0 / ((1.0 + xi) + typical / lower[-1]))
        else:
            upper.append(math.inf)
            lower.append(0.0)
    if n_steps > 1 and not math.isfinite(upper[-2]):
        error = math.inf
    else:
        sampling = upper[-2] * math.sqrt(n_features * (n_features + 1) / n_samples)
        error = (n_features * scales[-1] + sampling) / lower[-2]
    return CovariancePlan(
        rhos=rhos,
        clip_radii=tuple(radii),
        noise_scales=tuple(scales),
        ridges=tuple(ridges),
        lower=tuple(lower),
        upper=tuple(upper),
        predicted_error=error,
    )


def best_covariance_plan(
    n_samples, n_features, rho, condition, *, beta, n_steps="auto"
):
    """The covariance plan with the smallest predicted error.

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
        The chosen plan (a function of public quantities only).
    """
    return _best_plan(
        lambda t, share: covariance_plan(
            n_samples,
            n_features,
            rho,
            condition,
            n_steps=t,
            early_share=share,
            beta=beta,
        ),
        n_steps,
    )


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
    n_features = Z.shape[1]
    A = np.eye(n_features)
    for step in range(plan.n_steps):
        moment = clipped_second_moment(Z, plan.clip_radii[step], A)
        noisy = moment + _noise.symmetric_matrix(
            rng, n_features, plan.noise_scales[step]
        )
        # True projection onto the PSD cone (eigenvalues clipped at zero), not
        # the matrix absolute value of the reference code (spec §9.4.2).
        released = project_psd(noisy)
        if step == plan.n_steps - 1:
            frame = A
            A_inv = linalg.inv(A)
            covariance = A_inv @ released @ A_inv.T
            covariance = (covariance + covariance.T) / 2.0
        # Column convention w = A x: the new whitening acts after the old one,
        # A <- B A (the reference code's A <- B A with rows x A is the
        # multiplication-order bug of spec §9.4.1).
        A = inverse_sqrt(released + plan.ridges[step] * np.eye(n_features)) @ A
    if return_frame:
        return covariance, A, frame
    return covariance, A


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
    """

    rhos: tuple
    radii: tuple
    clip_radii: tuple
    noise_scales: tuple
    predicted_error: float

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
    radii, clips, scales = [float(radius)], [], []
    root = math.sqrt(upper)
    for rho_step in rhos:
        r = radii[-1]
        clip = min(
            math.sqrt(r * r + 2.0 * r * root * s + upper * tau**2), r + root * tau
        )
        # L2 sensitivity of the mean of rows projected onto a ball of radius
        # c under replace-one: 2 c / n.
        scale = gaussian_scale(2.0 * clip / n_samples, rho_step)
        clips.append(clip)
        scales.append(scale)
        radii.append(tau * math.sqrt(upper / n_samples + scale**2))
    return MeanPlan(
        rhos=rhos,
        radii=tuple(radii),
        clip_radii=tuple(clips),
        noise_scales=tuple(scales),
        predicted_error=radii[-1],
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
        n_steps,
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
        center = (
            center
            + total / n_samples
            + _noise.gaussian(rng, plan.noise_scales[step], n_features)
        )
    return center
