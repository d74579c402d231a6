"""The public plan of a private Gaussian fit: CoinPress's budget planner
(Biswas, Dong, Kamath and Ullman 2020) and the schedule of the recursive
preconditioning (Kamath, Li, Singhal and Ullman 2019).

Every function here reads public values only (``n_samples``, ``n_features``,
the budget, the scaled public bounds and the estimator's parameters), before
the data are read: the plan is a function of public values, so choosing it
costs no privacy.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from dataclasses import dataclass

from ..accounting import split_budget
from ..mechanisms._tails import gaussian_norm_tail
from ._coinpress import best_covariance_plan, best_mean_plan
from ._klsu import ppc_schedule

#: Candidate shares of the budget of the mean under method="coinpress" (the
#: covariance gets the rest); the plan picks one from public values.
MEAN_SHARES = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4, 15 / 16)
#: Covariance share without noise (epsilon = inf), where no plan is weighed
#: (CoinPress's own split).
REFERENCE_COVARIANCE_SHARE = 0.75
#: Candidate shares (q1, q3) of the coarse and final mean in the centred
#: layout of method="coinpress" (the covariance gets 1 - q1 - q3).
CENTRED_SHARES = ((1 / 16, 1 / 16), (1 / 8, 1 / 8), (1 / 4, 1 / 8), (1 / 8, 1 / 4))


@dataclass(frozen=True)
class PlanInputs:
    """The public inputs of a fit's plan.

    The bounds are in the frame scaled by ``1 / sqrt(min_variance)``.

    Parameters
    ----------
    n_samples, n_features : int
        The shape of the rows (public).
    budget : ZCDP
        The fit's budget.
    condition : float
        ``max_variance / min_variance``: ``I <= Sigma <= condition I``.
    radius : float
        ``mean_bound / sqrt(min_variance)``: the bound on the mean's norm.
    method : {"coinpress", "klsu"}
        The estimator's method.
    beta : float
        Failure probability of each step's accuracy bounds.
    n_iterations : int or "auto"
        Steps of each CoinPress iteration.
    min_variance, mean_bound : float
        The unscaled public bounds (for the messages only).
    """

    n_samples: int
    n_features: int
    budget: object
    condition: float
    radius: float
    method: str
    beta: float
    n_iterations: object
    min_variance: float
    mean_bound: float


@dataclass(frozen=True)
class CoinpressPlan:
    """The public plan of a CoinPress fit, fixed before the data are read.

    CoinPress is the iterative mean and covariance learner of Biswas, Dong,
    Kamath and Ullman (2020); the plan fixes its budget split, its steps and
    the parts released from the public prior, from public values only
    (:func:`plan_coinpress`).

    Parameters
    ----------
    inputs : PlanInputs
        The public inputs it was planned from.
    shares : dict of str to ZCDP
        The budget of each part: ``"cov"`` and ``"mean"`` (and ``"coarse
        mean"`` in the centred layout), or the whole budget under ``"not
        spent (public prior)"`` when both parts are the prior.
    cov_plan : CovariancePlan or None
        The covariance's plan, in the frame scaled by
        ``1 / sqrt(min_variance)``; None when the covariance is the prior.
    frame : {"public", "whitened"}
        The mean's frame: the scaled public one, or the one whitened by the
        released covariance.
    prior_parts : tuple of str
        The parts (``"covariance"``, ``"mean"``) released from the public
        prior (``min_variance * I``, the zero vector) instead of the data.
    rows : {"pairs", "centred"}, default="pairs"
        The covariance's rows: the ``n // 2`` pair differences, or all ``n``
        rows centred at a coarse private mean.
    coarse_plan : MeanPlan or None, default=None
        The coarse mean's plan in the centred layout (public frame); None
        for pairs.
    """

    inputs: PlanInputs
    shares: dict
    cov_plan: object
    frame: str
    prior_parts: tuple
    rows: str = "pairs"
    coarse_plan: object = None


@dataclass(frozen=True)
class KlsuPlan:
    """The public plan of a recursive-preconditioning fit.

    The covariance and mean learners of Kamath, Li, Singhal and Ullman
    (2019) on three disjoint parts of the rows: the preconditioner's (PPC),
    the covariance's and the mean's (:func:`plan_klsu`).

    Parameters
    ----------
    inputs : PlanInputs
        The public inputs it was planned from.
    conditions : list of float
        The condition bounds ``[K_0, K_1, ..., K_r]`` before and after each
        of PPC's ``r`` rounds, in the scaled frame (``K_0`` is
        ``inputs.condition``).
    n_pre : int
        Rows of the preconditioner's part, even (``2 * (n // 3 // 2)``);
        the covariance's part has as many, the mean's the rest.
    """

    inputs: PlanInputs
    conditions: list
    n_pre: int


def plan_gaussian(inputs):
    """Plan a fit of :class:`MultivariateGaussian` from public values only.

    Parameters
    ----------
    inputs : PlanInputs
        The public inputs.

    Returns
    -------
    plan : CoinpressPlan or KlsuPlan
        The plan of ``inputs.method``.
    """
    if inputs.method == "coinpress":
        return plan_coinpress(inputs)
    return plan_klsu(inputs)


def plan_coinpress(inputs):
    """Plan CoinPress's split, plans and prior parts (public values only).

    Parameters
    ----------
    inputs : PlanInputs
        The public inputs.

    Returns
    -------
    plan : CoinpressPlan
        The plan.
    """
    # Everything here reads n, d and the parameters only: the split, the
    # plans and the choice of the parts released from the public prior
    # are public, fixed before the data are read.
    budget = inputs.budget
    rho = budget.rho
    m = inputs.n_samples // 2
    if math.isinf(rho):
        # No noise: the fit is the non-private one (every part private).
        cov_share = REFERENCE_COVARIANCE_SHARE
        shares = split_budget(budget, {"cov": cov_share, "mean": 1.0 - cov_share})
        cov_plan = plan_covariance(inputs, m, rho)
        frame = mean_error(inputs, rho, cov_plan)[1]
        return CoinpressPlan(inputs, shares, cov_plan, frame, ())
    share, prior_parts, centred = mean_share(inputs)
    if centred is not None:
        shares, coarse_plan, cov_plan = centred_plans(inputs, centred)
        return CoinpressPlan(
            inputs, shares, cov_plan, "whitened", (), "centred", coarse_plan
        )
    if "covariance" in prior_parts and "mean" in prior_parts:
        return CoinpressPlan(
            inputs, {"not spent (public prior)": budget}, None, "public", prior_parts
        )
    if "covariance" in prior_parts:
        # The prior covariance is the identity (in the scaled frame): the
        # public frame is the whitened one.
        return CoinpressPlan(inputs, {"mean": budget}, None, "public", prior_parts)
    if "mean" in prior_parts:
        cov_plan = plan_covariance(inputs, m, rho)
        return CoinpressPlan(inputs, {"cov": budget}, cov_plan, "public", prior_parts)
    shares = split_budget(budget, {"cov": 1.0 - share, "mean": share})
    cov_plan = plan_covariance(inputs, m, shares["cov"].rho)
    frame = mean_error(inputs, shares["mean"].rho, cov_plan)[1]
    return CoinpressPlan(inputs, shares, cov_plan, frame, prior_parts)


def centred_plans(inputs, q):
    """The budget split and plans of CoinPress's centred layout.

    The coarse mean gets the share ``q1`` (planned in the scaled public
    frame), the covariance of the rows centred at it ``1 - q1 - q3`` (all
    ``n`` rows), and the final mean ``q3`` (planned at fit time, from the
    released covariance).

    Parameters
    ----------
    inputs : PlanInputs
        The public inputs (finite budget).
    q : tuple of float
        The shares ``(q1, q3)`` of the coarse and the final mean.

    Returns
    -------
    shares : dict of str to ZCDP
        The budget of ``"coarse mean"``, ``"cov"`` and ``"mean"``.
    coarse_plan : MeanPlan
        The coarse mean's plan.
    cov_plan : CovariancePlan
        The covariance's plan.
    """
    q1, q3 = q
    shares = split_budget(
        inputs.budget, {"coarse mean": q1, "cov": 1.0 - q1 - q3, "mean": q3}
    )
    coarse_plan = plan_mean(
        inputs, shares["coarse mean"].rho, inputs.radius, inputs.condition
    )
    cov_plan = plan_covariance(inputs, inputs.n_samples, shares["cov"].rho)
    return shares, coarse_plan, cov_plan


def plan_covariance(inputs, m, rho_cov):
    """The covariance plan of CoinPress (Biswas, Dong, Kamath and Ullman 2020).

    In the frame scaled by ``1 / sqrt(min_variance)``, at the estimator's
    ``beta`` and ``n_iterations`` (see
    :func:`~dpcov.distributions._coinpress.best_covariance_plan`).

    Parameters
    ----------
    inputs : PlanInputs
        The public inputs.
    m : int
        Number of rows the covariance reads: the ``n // 2`` pair
        differences, or the ``n`` centred rows.
    rho_cov : float
        The covariance's zCDP budget.

    Returns
    -------
    plan : CovariancePlan
        The plan of smallest predicted error.
    """
    return best_covariance_plan(
        m,
        inputs.n_features,
        rho_cov,
        inputs.condition,
        beta=inputs.beta,
        n_steps=inputs.n_iterations,
    )


def plan_mean(inputs, rho_mean, radius, upper):
    """The mean plan of CoinPress (Biswas, Dong, Kamath and Ullman 2020).

    On all ``n`` rows, at the estimator's ``beta`` and ``n_iterations`` (see
    :func:`~dpcov.distributions._coinpress.best_mean_plan`), in the frame the
    mean runs in: the scaled public one, or the one whitened by the released
    covariance.

    Parameters
    ----------
    inputs : PlanInputs
        The public inputs.
    rho_mean : float
        The mean's zCDP budget.
    radius : float
        Public bound on the mean's norm in that frame (a public value, or
        one computed from earlier releases).
    upper : float
        Public bound on the covariance's largest eigenvalue in that frame.

    Returns
    -------
    plan : MeanPlan
        The plan of smallest predicted error.
    """
    return best_mean_plan(
        inputs.n_samples,
        inputs.n_features,
        rho_mean,
        radius,
        upper,
        beta=inputs.beta,
        n_steps=inputs.n_iterations,
    )


def mean_error(inputs, rho_mean, cov_plan):
    """The mean's predicted Mahalanobis error and the frame that gives it.

    Parameters
    ----------
    inputs : PlanInputs
        The public inputs.
    rho_mean : float
        The mean's zCDP budget.
    cov_plan : CovariancePlan or None
        The covariance's plan; None when the covariance is the prior.

    Returns
    -------
    error : float
        The smaller of the two frames' predicted bounds on
        ``||S^(-1/2) (mu_hat - mu)||`` in the scaled frame (the mean plan's
        radius, which holds with probability ``1 - beta``).
    frame : {"public", "whitened"}
        The frame of ``error``.
    """
    # Predicted Mahalanobis error of the mean in each frame, and the
    # frame: the public one (S <= K I, ||mu|| <= radius, S >= I, so a
    # Euclidean error is at most the Mahalanobis one) or the frame
    # whitened by the released covariance (A S A.T <= upper I, and
    # ||A||**2 <= upper as S >= I; the Euclidean error there is at
    # most sqrt(lower) times the Mahalanobis one). Without a covariance
    # plan (the covariance is the public prior) only the public frame.
    public = plan_mean(
        inputs, rho_mean, inputs.radius, inputs.condition
    ).predicted_error
    if cov_plan is None:
        return public, "public"
    upper, lower = cov_plan.upper[-1], cov_plan.lower[-1]
    if not (math.isfinite(upper) and lower > 0):
        return public, "public"
    whitened = plan_mean(
        inputs, rho_mean, math.sqrt(upper) * inputs.radius, upper
    ).predicted_error / math.sqrt(lower)
    return (whitened, "whitened") if whitened < public else (public, "public")


def prior_errors(inputs):
    """The largest errors of the public priors, in the scaled frame.

    Parameters
    ----------
    inputs : PlanInputs
        The public inputs.

    Returns
    -------
    cov_prior : float
        Bound on the Mahalanobis-Frobenius error of the prior covariance (the
        identity): ``sqrt(d) (1 - 1 / K)``.
    mean_prior : float
        Bound on the Mahalanobis error of the prior mean (zero): the radius.
    """
    # The priors' errors, for any S with I <= S <= K I (scaled frame):
    # the identity's Mahalanobis-Frobenius error ||S^(-1) - I||_F has d
    # eigenvalues in [1/K - 1, 0], hence at most sqrt(d) (1 - 1/K); the
    # centre of the ball, 0, has ||S^(-1/2) mu|| <= ||mu|| <= radius.
    cov_prior = math.sqrt(inputs.n_features) * (1.0 - 1.0 / inputs.condition)
    mean_prior = inputs.radius
    return cov_prior, mean_prior


def _typical(inputs):
    # The mean's plan predicts a radius that holds with probability
    # 1 - beta, tau sqrt(v) for a per-coordinate variance v; the expected
    # error is about sqrt(d v), comparable with the covariance plan's
    # predicted_error (a simulated mean error): this is sqrt(d) / tau.
    return math.sqrt(inputs.n_features) / gaussian_norm_tail(
        inputs.n_features, inputs.beta
    )


def _covariance_error(inputs, rho_cov):
    # The plan's simulated Mahalanobis-Frobenius error at S = I, where the
    # noise is largest against the signal (the noise is calibrated to the
    # public upper bound K); a check on log-spaced and two-point spectra
    # between 1 and K gave no larger errors. On the n // 2 pairs.
    plan = plan_covariance(inputs, inputs.n_samples // 2, rho_cov)
    return plan.predicted_error, plan


def _objective(cov, mean):
    # KL(N(mu, S) || N(mu_hat, S_hat)) ~ ||E||_F**2 / 4 + ||v||**2 / 2
    # for Mahalanobis errors E (covariance) and v (mean); each error
    # counts up to its prior's bound, the largest error the fit can
    # make under this rule. Ties go to the better mean.
    return (cov**2 / 4.0 + mean**2 / 2.0, mean)


def _pair_candidates(inputs, priors, typical):
    # The candidates (objective, mean share, prior parts, centred shares)
    # of the pairs layout with both parts private, at the shares
    # MEAN_SHARES. A part predicted worse than its prior is not released at
    # a share: that candidate is one of the prior candidates instead.
    cov_prior, mean_prior = priors
    candidates = []
    for share in MEAN_SHARES:
        shares = split_budget(inputs.budget, {"cov": 1.0 - share, "mean": share})
        cov, plan = _covariance_error(inputs, shares["cov"].rho)
        mean = typical * mean_error(inputs, shares["mean"].rho, plan)[0]
        if cov < cov_prior and mean < mean_prior:
            candidates.append((_objective(cov, mean), share, (), None))
    return candidates


def _centred_candidates(inputs, priors, typical):
    # The centred layout: the covariance on all n rows centred at a
    # coarse private mean mu1 (noise scale sigma1), the final mean in the
    # frame whitened by the released covariance, on x - mu1, from the
    # radius ||A|| r1 (||A||**2 <= upper as S >= I). As for the pairs, a
    # candidate predicted worse than a prior is dropped.
    cov_prior, mean_prior = priors
    candidates = []
    for q in CENTRED_SHARES:
        errors = centred_errors(inputs, q, typical)
        if errors is not None and errors[0] < cov_prior and errors[1] < mean_prior:
            candidates.append((_objective(*errors), 0.0, (), q))
    return candidates


def mean_share(inputs):
    """Choose the mean's share and the parts released from the public prior.

    The candidate of smallest objective (``||E||_F**2 / 4 + ||v||**2 / 2``)
    among the shares ``MEAN_SHARES`` with both parts private (pairs), the
    shares ``CENTRED_SHARES`` of the centred layout, all of the budget to the
    mean with the prior covariance, and all of it to the covariance with the
    prior mean. A part is private only where its plan predicts a smaller
    error than its prior's bound.

    Parameters
    ----------
    inputs : PlanInputs
        The public inputs (finite budget).

    Returns
    -------
    share : float
        The mean's share of the budget (pairs layout).
    prior_parts : tuple of str
        The parts released from the public prior.
    centred : tuple of float or None
        The centred layout's shares ``(q1, q3)``, or None for pairs.
    """
    # Why this is private: every value read here (n, d, rho, beta, the
    # bounds, and the plans' predictions, which simulate public synthetic
    # data from a fixed public seed) is public, so the choice is a
    # function of public values; releasing a prior is releasing a
    # constant, and moving a part's budget to the other part keeps the
    # total at rho (the steps compose to it). The guarantee is the one
    # declared, whichever candidate wins.
    rho = inputs.budget.rho
    priors = prior_errors(inputs)
    cov_prior, mean_prior = priors
    typical = _typical(inputs)
    candidates = _pair_candidates(inputs, priors, typical)
    candidates += _centred_candidates(inputs, priors, typical)
    # The prior covariance, the whole budget to the mean (or nothing
    # spent, if even then the mean is predicted worse than its prior).
    mean = typical * mean_error(inputs, rho, None)[0]
    if mean < mean_prior:
        candidates.append((_objective(cov_prior, mean), 1.0, ("covariance",), None))
    else:
        parts = ("covariance", "mean")
        candidates.append((_objective(cov_prior, mean_prior), 1.0, parts, None))
    # The prior mean, the whole budget to the covariance; its plan is
    # only computed where the candidate could win (the prior mean's
    # term alone must not exceed the best objective so far).
    best = min(c[0] for c in candidates)[0]
    if mean_prior**2 / 2.0 < best:
        cov = _covariance_error(inputs, rho)[0]
        if cov < cov_prior:
            candidates.append((_objective(cov, mean_prior), 0.0, ("mean",), None))
    _, share, parts, centred = min(candidates, key=lambda c: c[0])
    return share, parts, centred


def centred_errors(inputs, q, typical):
    """The centred layout's predicted errors at the shares ``q``.

    Parameters
    ----------
    inputs : PlanInputs
        The public inputs (finite budget).
    q : tuple of float
        The shares ``(q1, q3)`` of the coarse and the final mean
        (:func:`centred_plans`).
    typical : float
        The ratio of the mean's typical error to its plan's radius.

    Returns
    -------
    errors : tuple of float or None
        The predicted Mahalanobis-Frobenius error of the covariance (the
        centring's bias included) and the typical Mahalanobis error of the
        mean, in the scaled frame; None if the covariance's plan cannot
        whiten (no finite upper or positive lower bound).
    """
    shares, coarse, plan = centred_plans(inputs, q)
    upper, lower = plan.upper[-1], plan.lower[-1]
    if not (math.isfinite(upper) and lower > 0):
        return None
    # Centring at mu1 adds (mu - mu1)(mu - mu1).T, whose
    # Mahalanobis-Frobenius norm is ||S^(-1/2) (mu - mu1)||**2, of mean
    # at most d (1 / n + sigma1**2) for S >= I.
    cov = plan.predicted_error + inputs.n_features * (
        1.0 / inputs.n_samples + coarse.noise_scales[-1] ** 2
    )
    # The final mean runs in the frame whitened by the released
    # covariance, on x - mu1, from the radius ||A|| r1 (||A||**2 <= upper
    # as S >= I).
    whitened = plan_mean(
        inputs, shares["mean"].rho, math.sqrt(upper) * coarse.predicted_error, upper
    )
    return cov, typical * whitened.predicted_error / math.sqrt(lower)


def plan_klsu(inputs):
    """Plan the recursive preconditioning's public schedule, with its checks.

    Parameters
    ----------
    inputs : PlanInputs
        The public inputs.

    Returns
    -------
    plan : KlsuPlan
        PPC's condition bounds and the rows of the preconditioner's part.

    Raises
    ------
    ValueError
        Where the rows are too few, the condition bound cannot be reduced,
        or the mean's coarse histogram would need more bins than float64
        counts exactly (public values only, before the data are read).
    """
    n_samples = inputs.n_samples
    if n_samples < 6:
        raise ValueError(
            f"method='klsu' needs at least 6 rows (a pair for the "
            f"preconditioner, a pair for the covariance, two rows for the "
            f"mean); got {n_samples}."
        )
    third = n_samples // 3
    n_pre = 2 * (third // 2)
    conditions = ppc_schedule(
        n_pre // 2,
        inputs.n_features,
        inputs.condition,
        inputs.budget.rho,
        inputs.beta / 3,
    )
    # KVMean's coarse histogram has bins of width sqrt(K_r) over the
    # whitened radius (at most `radius`, the preconditioner's norm being at
    # most 1): their indices must be exact integers in float64 (with room
    # for rounding).
    n_bins = 2 * (math.ceil(inputs.radius / math.sqrt(conditions[-1])) + 1) + 1
    if not n_bins < 2.0**52:
        raise ValueError(
            f"method='klsu' would bin each coordinate of the mean into "
            f"{n_bins:.3g} bins (mean_bound={inputs.mean_bound!r} against "
            f"sqrt(min_variance)={math.sqrt(inputs.min_variance):.3g}), more "
            "than float64 counts exactly; lower mean_bound or raise "
            "min_variance."
        )
    return KlsuPlan(inputs, conditions, n_pre)
