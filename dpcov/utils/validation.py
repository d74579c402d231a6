"""Validation of privacy parameters, independent of scikit-learn.

Estimators validate their privacy parameters here at the start of every
``fit``, whether or not scikit-learn's declarative validation ran (it is
switched off by ``sklearn.set_config(skip_parameter_validation=True)``).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral, Real

import numpy as np

from ..accounting import (
    ZCDP,
    ApproxDP,
    GaussianDP,
    ProfileDP,
    PureDP,
    gaussian_mu,
    zcdp_epsilon,
    zcdp_rho,
)
from ..accounting._exact_curve import exact_rho, step_parameters

#: delta of a composite's budget when only epsilon is given (the estimators'
#: default delta): a PrivatePipeline's ``delta=None``.
DEFAULT_DELTA = 1e-6


def _is_real(value):
    return (
        isinstance(value, Real)
        and not isinstance(value, bool)
        and not math.isnan(value)
    )


def check_n_draws(n_samples):
    """Validate the number of rows a ``sample`` method draws.

    Parameters
    ----------
    n_samples : int
        Positive; ``bool`` is refused.

    Raises
    ------
    ValueError
        If ``n_samples`` is not a positive integer.
    """
    if (
        not isinstance(n_samples, Integral)
        or isinstance(n_samples, bool)
        or n_samples < 1
    ):
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}.")


def check_privacy_params(epsilon, delta, rho=None, *, gaussian=False, shares=None):
    """Validate ``epsilon``, ``delta`` and ``rho`` and return the budget to run at.

    ========================  ==============================================
    parameters                budget (and guarantee)
    ========================  ==============================================
    ``rho`` set               ``ZCDP(rho)``; ``epsilon`` is ignored
    ``rho=None, delta=0``     ``PureDP(epsilon)``: the pure-DP variant
    ``rho=None, delta>0``     ``ZCDP(rho*)`` with the largest ``rho*`` whose
                              conversion gives (epsilon, delta)-DP; with
                              ``gaussian=True``, ``GaussianDP(mu*)`` with the
                              largest ``mu*`` that is (epsilon, delta)-DP on
                              the exact Gaussian curve
    ========================  ==============================================

    Parameters
    ----------
    epsilon : float
        Positive; ``inf`` means no privacy (for testing only).
    delta : float
        In [0, 1).
    rho : float or None, default=None
        Positive zCDP budget, or None.
    gaussian : bool, default=False
        Whether every part of the fit is a Gaussian mechanism calibrated to
        its share of a zCDP budget (noise ``Delta / sqrt(2 rho_i)``), so that
        the fit is one Gaussian mechanism (Dong, Roth and Su, 2022): then an
        (epsilon, delta) ask runs at the analytic Gaussian's ``mu`` (Balle
        and Wang, 2018), 6-9% less noise than through zCDP.
    shares : dict or None, default=None
        The shares of a zCDP budget the fit's steps take, by kind
        (Gaussian, pure, bounded range; see
        :func:`~dpcov.accounting._exact_curve.exact_rho`): an (epsilon,
        delta) ask then runs at the largest rho whose steps stay (epsilon,
        delta)-DP on their composed privacy loss distribution, and the
        budget is their :class:`~dpcov.accounting.ProfileDP` at that rho.

    Returns
    -------
    budget : PureDP, ZCDP, GaussianDP or ProfileDP
        The budget the mechanism runs at (a GaussianDP one as the zCDP
        budget of its Gaussian steps, :meth:`GaussianDP.gaussian_rho`; a
        ProfileDP one at the rho it was computed for).

    Raises
    ------
    ValueError
        If a parameter is out of range.

    Examples
    --------
    >>> from dpcov.utils import check_privacy_params
    >>> check_privacy_params(1.0, 0.0)
    PureDP(epsilon=1.0)
    >>> check_privacy_params(1.0, 1e-6, rho=0.5)
    ZCDP(rho=0.5)
    >>> check_privacy_params(1.0, 1e-6, gaussian=True)
    GaussianDP(mu=0.2367...)
    """
    if not _is_real(epsilon) or not epsilon > 0:
        raise ValueError(f"epsilon must be a positive number, got {epsilon!r}.")
    if not _is_real(delta) or not 0 <= delta < 1:
        raise ValueError(f"delta must be a number in [0, 1), got {delta!r}.")
    if rho is not None:
        if not _is_real(rho) or not rho > 0:
            raise ValueError(f"rho must be a positive number or None, got {rho!r}.")
        return ZCDP(float(rho))
    if delta == 0:
        return PureDP(float(epsilon))
    if gaussian and math.isfinite(epsilon):
        return GaussianDP(gaussian_mu(float(epsilon), float(delta)))
    if shares is not None and math.isfinite(epsilon):
        rho = exact_rho(float(epsilon), float(delta), shares)
        return ProfileDP(*step_parameters(rho, shares))
    return ZCDP(zcdp_rho(float(epsilon), float(delta)))


def check_approx_privacy_params(epsilon, delta):
    """Validate an (epsilon, delta) budget whose delta must be positive.

    Stability-based mechanisms (a released subspace that is the same on all
    neighbours) have no pure-DP or zCDP form, so ``delta=0`` is refused.

    Parameters
    ----------
    epsilon : float
        Positive; ``inf`` means no privacy (for testing only).
    delta : float
        In (0, 1).

    Returns
    -------
    budget : ApproxDP
        The guarantee to run at.
    """
    if not _is_real(epsilon) or not epsilon > 0:
        raise ValueError(f"epsilon must be a positive number, got {epsilon!r}.")
    if not _is_real(delta) or not 0 <= delta < 1:
        raise ValueError(f"delta must be a number in [0, 1), got {delta!r}.")
    if delta == 0:
        raise ValueError(
            "delta must be positive: this estimator is (epsilon, delta)-DP by a "
            "stability argument, which no pure-DP mechanism allows."
        )
    return ApproxDP(float(epsilon), float(delta))


def check_zcdp_privacy_params(epsilon, delta, rho=None):
    """Validate the budget of an estimator that has only a zCDP form.

    Gaussian-noise estimators with no pure-DP variant (the Gaussian and
    product-distribution learners) run at ``ZCDP(rho)`` when ``rho`` is set,
    else at the largest rho whose conversion gives (``epsilon``, ``delta``)-DP.
    ``delta=0`` without ``rho`` asks for pure DP, which they cannot give, so it
    is refused.

    Parameters
    ----------
    epsilon : float
        Positive; ``inf`` means no privacy (for testing only).
    delta : float
        In [0, 1); positive unless ``rho`` is set.
    rho : float or None, default=None
        Positive zCDP budget, or None.

    Returns
    -------
    budget : ZCDP
        The budget the estimator runs at.

    Raises
    ------
    ValueError
        If a parameter is out of range, or ``delta=0`` and ``rho`` is None.

    Examples
    --------
    >>> from dpcov.utils import check_zcdp_privacy_params
    >>> round(check_zcdp_privacy_params(1.0, 1e-6).rho, 4)
    0.0244
    """
    budget = check_privacy_params(epsilon, delta, rho)
    if isinstance(budget, PureDP):
        raise ValueError(
            "delta must be positive (or rho set): this estimator adds Gaussian "
            "noise and is rho-zCDP, which implies (epsilon, delta)-DP only for "
            "delta > 0; it has no pure-DP variant."
        )
    return budget


def privacy_spent(budget, delta, *, epsilon=None):
    """The (epsilon, delta, rho) an estimator reports for the budget it spent.

    Parameters
    ----------
    budget : PureDP, ZCDP, GaussianDP, ProfileDP or ApproxDP
        The budget the estimator ran at (the composition of all its steps).
    delta : float
        The estimator's ``delta`` parameter, used to express a zCDP or
        Gaussian-DP guarantee as (epsilon, delta)-DP (an ApproxDP budget
        keeps its own).
    epsilon : float, default=None
        The epsilon asked for, when the budget was derived from
        (``epsilon``, ``delta``) by :func:`~dpcov.accounting.zcdp_rho` or
        :func:`~dpcov.accounting.gaussian_mu` (that is, ``rho`` was not
        set). The reported epsilon is then at most
        ``epsilon``, exactly: the conversion of a composition that is at
        most the rho derived from (``epsilon``, ``delta``) may round one ulp
        above ``epsilon``.

    Returns
    -------
    epsilon : float
        Pure epsilon, or the epsilon of the (epsilon, delta) guarantee implied
        by zCDP (``inf`` for zCDP with ``delta=0``), or, for Gaussian DP, on
        its exact curve.
    delta : float
        0 for pure DP, else ``delta`` (an ApproxDP budget's own delta).
    rho : float
        The zCDP parameter (``epsilon**2 / 2`` for pure DP, ``mu**2 / 2``
        for Gaussian DP, rounded up;
        ``inf`` for (epsilon, delta)-DP with ``delta > 0``, which bounds no
        rho).

    Examples
    --------
    >>> from dpcov.accounting import PureDP
    >>> from dpcov.utils import privacy_spent
    >>> privacy_spent(PureDP(1.0), 1e-6)
    (1.0, 0.0, 0.5)
    """
    if isinstance(budget, PureDP):
        return budget.epsilon, 0.0, budget.to_zcdp().rho
    if isinstance(budget, ApproxDP):
        # Its own (epsilon, delta); a delta > 0 bounds no rho.
        rho = PureDP(budget.epsilon).to_zcdp().rho if budget.delta == 0 else math.inf
        return budget.epsilon, budget.delta, rho
    if isinstance(budget, GaussianDP | ProfileDP):
        # The exact or composed curve; at most the epsilon asked where the
        # guarantee holds there by the calibration's own test (the curve's
        # epsilon at delta is a root, which may read an ulp above it).
        spent = budget.to_approx_dp(delta).epsilon
        if epsilon is not None and 0 < delta < 1 and spent > epsilon:
            if budget._holds_at(epsilon, delta):
                spent = float(epsilon)
        return spent, float(delta), budget.to_zcdp().rho
    spent = zcdp_epsilon(budget.rho, delta)
    if epsilon is not None and spent > epsilon and 0 < delta < 1:
        # zcdp_epsilon is a numerical minimum over the Renyi order, exact only
        # to rounding, so it need not be monotone from one float to the next.
        # zcdp_rho(epsilon, delta) is deterministic and its result r satisfies
        # zcdp_epsilon(r, delta) <= epsilon: one bound that increases in rho
        # (Canonne, Kamath and Steinke (2020), Corollary 13, at one Renyi
        # order, or the classical bound of Bun and Steinke (2016)) is at most
        # epsilon at r, so every rho <= r is (epsilon, delta)-DP as well.
        if budget.rho <= zcdp_rho(float(epsilon), float(delta)):
            spent = float(epsilon)
    return spent, float(delta), budget.rho


def check_bounds(bounds, n_features):
    """Validate public per-feature bounds and return them as arrays.

    Parameters
    ----------
    bounds : tuple of (lower, upper)
        Public ranges of the features: each of ``lower`` and ``upper`` is a
        scalar (the same range for every feature) or an array-like of shape
        ``(n_features,)``. They must be finite, with ``lower < upper`` for
        every feature. They must come from knowledge about the data's domain
        (a questionnaire's scale, a sensor's range), never from the data.
    n_features : int
        Number of features.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,)
        The bounds, float64.

    Raises
    ------
    ValueError
        If ``bounds`` is not a pair of finite bounds of the right shape with
        ``lower < upper``. The message names the features at fault by
        position; it quotes no value (the bounds are the caller's, but a
        message carries no numbers that could come from data).
    """
    if isinstance(bounds, str) or not hasattr(bounds, "__len__") or len(bounds) != 2:
        raise ValueError(
            "bounds must be a pair (lower, upper) of scalars or arrays of "
            "shape (n_features,)."
        )
    arrays = []
    for name, value in zip(("lower", "upper"), bounds, strict=True):
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"bounds: {name} must be a real scalar or an array of shape "
                "(n_features,)."
            ) from None
        if array.ndim == 0:
            array = np.full(n_features, float(array))
        if array.shape != (n_features,):
            raise ValueError(
                f"bounds: {name} has shape {array.shape}; expected a scalar or "
                f"shape ({n_features},)."
            )
        if not np.isfinite(array).all():
            positions = np.flatnonzero(~np.isfinite(array))[:5].tolist()
            raise ValueError(
                f"bounds: {name} must be finite (features at positions {positions})."
            )
        arrays.append(array)
    lower, upper = arrays
    # The half-width is computed as upper/2 - lower/2, which cannot overflow;
    # it must be a normal positive float for the unit coordinates to be finite.
    narrow = ~(upper / 2 - lower / 2 >= np.finfo(np.float64).tiny)
    if narrow.any():
        positions = np.flatnonzero(narrow)[:5].tolist()
        raise ValueError(
            "bounds: lower must be below upper for every feature (features at "
            f"positions {positions})."
        )
    return lower, upper


def unit_box(lower, upper):
    """Centre and half-widths of the box ``[lower, upper]``.

    The unit coordinates of a row ``x`` clipped to the box are
    ``(x - center) / half_width``, in ``[-1, 1]`` for every feature, so a row
    has L2 norm at most ``sqrt(n_features)`` there.

    Parameters
    ----------
    lower, upper : ndarray of shape (n_features,)
        Validated bounds (:func:`check_bounds`).

    Returns
    -------
    center, half_width : ndarray of shape (n_features,)
        Computed without overflow, even for bounds near float64's limits.
    """
    return lower / 2 + upper / 2, upper / 2 - lower / 2


def to_unit_box(X, lower, upper):
    """Rows clipped to the box ``[lower, upper]``, in its unit coordinates.

    ``(clip(x, lower, upper) - center) / half_width``, clipped to ``[-1, 1]``
    once more (rounding can put an end a few ulps out); see
    :func:`unit_box`.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Dense rows.
    lower, upper : ndarray of shape (n_features,)
        Validated bounds (:func:`check_bounds`).

    Returns
    -------
    unit : ndarray of shape (n_samples, n_features)
    """
    center, half = unit_box(lower, upper)
    return np.clip((np.clip(X, lower, upper) - center) / half, -1.0, 1.0)
