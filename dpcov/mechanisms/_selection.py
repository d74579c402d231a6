"""Private selection from private candidates: best of a random number of runs.

A mechanism ``Q`` (here: draw a candidate, fit it privately, score it
privately) is run ``K`` times, with ``K`` drawn from a public law before any
data are read, and only the run with the best score is released. If ``Q`` is
private, so is the whole selection, at a cost that grows with the logarithm
of the expected number of runs instead of linearly, as composition would.

* Liu and Talwar (2019), Theorem 3.4: with a geometric number of runs, an
  ``eps``-DP ``Q`` gives a ``3 eps``-DP selection.
* Papernot and Steinke (2022), Theorem 2: with the truncated negative
  binomial law ``D(eta, gamma)`` (``eta = 0`` logarithmic, ``eta = 1``
  geometric), a ``Q`` that is ``(lambda, eps(lambda))``-Renyi DP at every
  order gives a selection that is ``(lambda, eps'(lambda))``-RDP with

  ``eps'(lambda) = eps(lambda) + (1 + eta) min_{lh >= 1} [(1 - 1/lh)
  eps(lh) + log(1/gamma)/lh] + log(E[K]) / (lambda - 1)``;

  letting every order grow, an ``eps``-DP ``Q`` gives ``(2 + eta) eps``-DP.
* Papernot and Steinke (2022), Theorem 6: with a Poisson number of runs of
  mean ``mu``, ``eps'(lambda) = eps(lambda) + mu delta_hat + log(mu) /
  (lambda - 1)``, where ``Q`` is also ``(eps_hat, delta_hat)``-DP with
  ``exp(eps_hat) = 1 + 1/(lambda - 1)``.

For a ``rho``-zCDP ``Q`` (``eps(lambda) = rho lambda``) the inner minimum has
the closed form ``2 sqrt(rho L) - rho`` with ``L = log(1/gamma)`` (at ``lh =
sqrt(L/rho)``; ``L`` itself when that order is below 1), and the Renyi curve
is converted to ``(epsilon, delta)``-DP with Proposition 12 of Canonne, Kamath
and Steinke (2020). Every order gives a valid bound: the numerical
minimisation over orders only chooses a good one.

This module knows nothing of scikit-learn; the search that uses it is
:class:`dpcov.model_selection.PrivateSearchCV`.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Real

import numpy as np
from scipy import stats
from scipy.optimize import brentq, minimize_scalar

from ..accounting import ZCDP, PureDP, SelectionDP, zcdp_epsilon, zcdp_rho
from . import _noise

__all__ = [
    "RUN_LAWS",
    "run_count_law",
    "run_count_pmf",
    "draw_run_count",
    "selection_guarantee",
    "selection_run_budget",
]

#: The named laws of the number of runs and their shapes ``eta``.
RUN_LAWS = {"logarithmic": 0.0, "geometric": 1.0, "poisson": math.inf}


def _shape(law):
    if isinstance(law, str):
        if law not in RUN_LAWS:
            raise ValueError(
                f"law must be one of {sorted(RUN_LAWS)} or a positive shape, "
                f"got {law!r}."
            )
        return RUN_LAWS[law]
    if not isinstance(law, Real) or not law > 0 or math.isnan(law):
        raise ValueError(
            f"law must be one of {sorted(RUN_LAWS)} or a positive shape, got {law!r}."
        )
    return float(law)


#: The relative error :func:`_tnb_mean` rounds up by: a few roundings of
#: its formula (1 - gamma is exact from gamma = 1/2 on), with room.
_MEAN_ROUNDING = 16 * 2.0**-53


def _tnb_mean(gamma, shape):
    # Mean of the truncated negative binomial D(shape, gamma) (Papernot and
    # Steinke, 2022, Definition 1): ((1 - gamma) / gamma) / log(1/gamma) for
    # shape 0 (not 1/gamma - 1, which cancels near gamma = 1), shape (1 -
    # gamma) / (gamma (1 - gamma**shape)) otherwise; rounded up, so that the
    # selection's bound, and its event, never read a smaller mean than the
    # law drawn from has (the bound grows with the mean).
    if gamma >= 1.0:
        return 1.0
    if shape == 0:
        mean = (1.0 - gamma) / gamma / -math.log(gamma)
    else:
        mean = shape * (1.0 - gamma) / (gamma * -math.expm1(shape * math.log(gamma)))
    return max(mean, 1.0) * (1.0 + _MEAN_ROUNDING)


def run_count_law(mean, law="logarithmic"):
    """Find the law of the number of runs that has a given mean.

    Parameters
    ----------
    mean : float
        The expected number of runs, at least 1.
    law : {"logarithmic", "geometric", "poisson"} or float, default="logarithmic"
        The law: the truncated negative binomial of shape 0 (logarithmic), 1
        (geometric) or the given positive shape, or the Poisson law.

    Returns
    -------
    shape : float
        ``eta`` (``inf`` for the Poisson law).
    gamma : float or None
        The success probability of the truncated negative binomial (None for
        the Poisson law); the mean of ``D(eta, gamma)`` is ``mean`` up to
        the root finder's tolerance, and :func:`selection_guarantee` uses the
        exact mean of the returned ``gamma``.

    Examples
    --------
    >>> from dpcov.mechanisms import run_count_law
    >>> run_count_law(10.0, "geometric")
    (1.0, 0.1)
    """
    shape = _shape(law)
    if not isinstance(mean, Real) or not math.isfinite(mean):
        raise ValueError(f"mean must be a finite number, got {mean!r}.")
    if not mean >= 1:
        # Theorem 6 of Papernot and Steinke (2022) needs mean >= 1 as well:
        # below it, log(mean) / (lambda - 1) is negative and the bound fails.
        raise ValueError(f"the mean number of runs must be at least 1, got {mean!r}.")
    if math.isinf(shape):
        return shape, None
    if mean == 1:
        return shape, 1.0
    if shape == 1:
        return shape, 1.0 / mean
    # The mean decreases from +inf (gamma -> 0) to 1 (gamma -> 1).
    high = 1.0 - 1e-15
    while _tnb_mean(high, shape) > mean:  # means very close to 1
        high = 1.0 - (1.0 - high) / 2.0
    low = min(1e-300, high / 2.0)
    gamma = brentq(lambda g: _tnb_mean(g, shape) - mean, low, high, xtol=1e-300)
    return shape, float(gamma)


def run_count_pmf(k, mean, law="logarithmic"):
    """Compute the probability of ``k`` runs under :func:`draw_run_count`'s law.

    Parameters
    ----------
    k : array-like of int
        Numbers of runs.
    mean : float
        The expected number of runs.
    law : {"logarithmic", "geometric", "poisson"} or float, default="logarithmic"
        The law (see :func:`run_count_law`).

    Returns
    -------
    p : ndarray
        ``P[K = k]``.

    Examples
    --------
    >>> from dpcov.mechanisms import run_count_pmf
    >>> run_count_pmf([1, 2, 3], 2.0, "geometric")
    array([0.5  , 0.25 , 0.125])
    """
    shape, gamma = run_count_law(mean, law)
    k = np.asarray(k)
    if gamma == 1.0:
        return (k == 1).astype(float)
    # Far in the tail the probabilities underflow to 0, which is right (some
    # SciPy versions warn about it).
    with np.errstate(divide="ignore", under="ignore"):
        if math.isinf(shape):
            return stats.poisson.pmf(k, mean)
        if shape == 0:
            return stats.logser.pmf(k, 1.0 - gamma)
        # The negative binomial of shape eta conditioned on k >= 1.
        positive = np.where(k >= 1, stats.nbinom.pmf(k, shape, gamma), 0.0)
    return positive / -math.expm1(shape * math.log(gamma))


def draw_run_count(rng, mean, law="logarithmic"):
    """Draw the number of runs of a private selection.

    The draw uses only public randomness: it is made before the data are
    read, but it must not be released with the selection: the theorems bound
    the best of a *random* number of runs.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    mean : float
        The expected number of runs.
    law : {"logarithmic", "geometric", "poisson"} or float, default="logarithmic"
        The law (see :func:`run_count_law`); only the Poisson law can draw 0.

    Returns
    -------
    k : int
        The number of runs.
    """
    shape, gamma = run_count_law(mean, law)
    return _noise.run_count(rng, shape, gamma=gamma, mean=mean)


def _log_order_terms(s):
    # With s = lambda - 1 > 0: (lambda - 1) log(1 - 1/lambda) - log(lambda),
    # the order-dependent part of Proposition 12 of Canonne, Kamath and
    # Steinke (2020), written without rounding lambda to 1.
    log_lambda = math.log1p(s)
    return s * (math.log(s) - log_lambda) - log_lambda


def _minimum_over_orders(objective):
    # The smallest value of objective(t) over Renyi orders lambda = 1 + e^t:
    # a grid in t, then a bounded search around the grid's best, and the
    # smaller of the two. Any order gives a valid bound, so the minimisation
    # only chooses a good one.
    grid = np.linspace(-9.0, 14.0, 231)
    values = [objective(t) for t in grid]
    best = int(np.argmin(values))
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    refined = minimize_scalar(objective, bounds=(low, high), method="bounded")
    return min(values[best], float(refined.fun))


def _rdp_epsilon(rdp, delta):
    # The smallest epsilon certified by an RDP curve ``rdp(lambda)`` at
    # ``delta`` through eps = rdp(lambda) + (log(1/delta) + (lambda-1)
    # log(1 - 1/lambda) - log(lambda)) / (lambda - 1), over lambda = 1 + s.
    log_inv_delta = -math.log(delta)

    def at(t):
        s = math.exp(t)
        value = rdp(1.0 + s) + (log_inv_delta + _log_order_terms(s)) / s
        return value if math.isfinite(value) else math.inf

    return max(_minimum_over_orders(at), 0.0)


def _zcdp_delta(rho, epsilon):
    # delta of (epsilon, delta)-DP implied by rho-zCDP (Canonne, Kamath and
    # Steinke, 2020, Corollary 13): inf over lambda > 1 of
    # exp((lambda-1)(lambda rho - epsilon)) (1 - 1/lambda)^(lambda-1) / lambda.
    def log_delta(t):
        s = math.exp(t)
        return s * ((1.0 + s) * rho - epsilon) + _log_order_terms(s)

    return min(math.exp(_minimum_over_orders(log_delta)), 1.0)


def _selection_rdp(rho, shape, gamma, mean):
    # The Renyi curve lambda -> eps'(lambda) of the best of K runs of a
    # rho-zCDP mechanism (module docstring).
    if math.isinf(shape):
        log_mean = math.log(mean)

        def curve(order):
            eps_hat = math.log1p(1.0 / (order - 1.0))
            return (
                rho * order
                + mean * _zcdp_delta(rho, eps_hat)
                + log_mean / (order - 1.0)
            )

        return curve
    log_inv_gamma = -math.log(gamma)
    if log_inv_gamma >= rho:
        inner = 2.0 * math.sqrt(rho * log_inv_gamma) - rho
    else:
        inner = log_inv_gamma  # the minimum sits at lh = 1
    constant = (1.0 + shape) * inner
    log_mean = math.log(_tnb_mean(gamma, shape))
    return lambda order: rho * order + constant + log_mean / (order - 1.0)


def selection_guarantee(run_budget, *, mean, law="logarithmic", delta=0.0):
    """The guarantee of releasing the best of a random number of private runs.

    Parameters
    ----------
    run_budget : PureDP or ZCDP
        The guarantee of one run (its fit and its score together).
    mean : float
        The expected number of runs.
    law : {"logarithmic", "geometric", "poisson"} or float, default="logarithmic"
        The law of the number of runs (see :func:`run_count_law`).
    delta : float, default=0.0
        The delta of the guarantee asked, in [0, 1). With ``delta=0`` a pure
        ``run_budget`` gives pure DP, ``(2 + eta) epsilon`` (Papernot and
        Steinke, 2022, from Theorem 2; Liu and Talwar, 2019, Theorem 3.4
        for the geometric law).

    Returns
    -------
    guarantee : PureDP or SelectionDP
        The selection's guarantee; a SelectionDP, an (epsilon, delta)
        guarantee, carries the run and the law it was computed from. With one
        run for sure (``mean=1`` and a truncated negative binomial law) its
        epsilon is the run's own.

    Raises
    ------
    ValueError
        If the guarantee asked cannot hold: a zCDP run or the Poisson law
        with ``delta=0``.

    Examples
    --------
    >>> from dpcov.accounting import PureDP, ZCDP
    >>> from dpcov.mechanisms import selection_guarantee
    >>> selection_guarantee(PureDP(0.1), mean=10, law="geometric")
    PureDP(epsilon=0.30000000000000004)
    >>> selection_guarantee(ZCDP(0.01), mean=10, delta=1e-6)
    SelectionDP(epsilon=1.060..., delta=1e-06, run=ZCDP(rho=0.01), mean=10.0...,
    shape=0.0)
    """
    shape, gamma = run_count_law(mean, law)
    if not isinstance(delta, Real) or not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}.")
    if not isinstance(run_budget, (PureDP, ZCDP)):
        raise TypeError(
            "the selection theorems need a pure-DP or zCDP run (a Renyi DP "
            f"guarantee); got {type(run_budget).__name__}."
        )
    certain = gamma == 1.0  # one run for sure: the run's own guarantee
    if isinstance(run_budget, PureDP) and not math.isinf(shape):
        pure = run_budget.epsilon * (1.0 if certain else 2.0 + shape)
        if delta == 0:
            return PureDP(pure)
    elif delta == 0:
        raise ValueError(
            "this selection is not pure DP (a zCDP run or a Poisson number "
            "of runs): give a delta > 0."
        )
    else:
        pure = math.inf
    rho = run_budget.to_zcdp().rho
    if certain:
        epsilon = zcdp_epsilon(rho, delta)  # one run: its own conversion
    elif math.isinf(rho):
        epsilon = math.inf
    else:
        epsilon = _rdp_epsilon(_selection_rdp(rho, shape, gamma, mean), delta)
    # The law as the bound read it: the mean of D(eta, gamma), rounded up.
    law_mean = float(mean) if gamma is None else _tnb_mean(gamma, shape)
    return SelectionDP(min(epsilon, pure), delta, run_budget, law_mean, shape)


def selection_run_budget(epsilon, delta, *, mean, law="logarithmic"):
    """The largest per-run budget whose selection meets ``(epsilon, delta)``.

    Parameters
    ----------
    epsilon : float
        The selection's epsilon, positive.
    delta : float
        The selection's delta, in [0, 1). With 0 the run is pure DP.
    mean : float
        The expected number of runs.
    law : {"logarithmic", "geometric", "poisson"} or float, default="logarithmic"
        The law of the number of runs (see :func:`run_count_law`).

    Returns
    -------
    run_budget : PureDP or ZCDP
        Pure DP when ``delta=0``, zCDP otherwise; its
        :func:`selection_guarantee` is at most ``(epsilon, delta)``.

    Examples
    --------
    >>> from dpcov.mechanisms import selection_run_budget
    >>> selection_run_budget(0.3, 0.0, mean=10, law="geometric")
    PureDP(epsilon=0.09999999999999999)
    """
    shape, gamma = run_count_law(mean, law)
    if not isinstance(epsilon, Real) or not epsilon > 0:
        raise ValueError(f"epsilon must be positive, got {epsilon!r}.")
    if math.isinf(epsilon):
        return PureDP(math.inf) if delta == 0 else ZCDP(math.inf)
    if delta == 0:
        if math.isinf(shape):
            raise ValueError("a Poisson number of runs needs delta > 0.")
        factor = 1.0 if gamma == 1.0 else 2.0 + shape
        budget = epsilon / factor
        while budget * factor > epsilon:  # never round above the target
            budget = math.nextafter(budget, 0.0)
        return PureDP(budget)
    if gamma == 1.0:
        return ZCDP(zcdp_rho(epsilon, delta))

    def gap(log_rho):
        guarantee = selection_guarantee(
            ZCDP(math.exp(log_rho)), mean=mean, law=law, delta=delta
        )
        return guarantee.epsilon - epsilon

    # The guarantee increases with rho; bracket the root in log(rho).
    low, high = math.log(epsilon) - 60.0, math.log(epsilon) + 5.0
    if gap(low) > 0:
        raise ValueError(
            f"no run budget meets epsilon={epsilon!r} with delta={delta!r} and "
            f"a mean of {mean!r} runs: fewer runs or a larger budget."
        )
    while gap(high) <= 0:
        high += 5.0
    log_rho = brentq(gap, low, high, xtol=1e-12)
    step = 1e-12
    while gap(log_rho) > 0:  # step down until the guarantee holds
        log_rho -= step
        step *= 2.0
    return ZCDP(math.exp(log_rho))
