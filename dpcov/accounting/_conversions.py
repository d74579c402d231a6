"""Conversions between privacy guarantees.

Pure epsilon-DP implies ``epsilon**2 / 2``-zCDP (Bun and Steinke, 2016,
Proposition 1.4), and rho-zCDP implies (epsilon, delta)-DP for every
``delta > 0`` with the epsilon of :func:`zcdp_epsilon` (Canonne, Kamath and
Steinke, 2020, Corollary 13). A Gaussian mechanism whose sensitivity is
``mu`` noise standard deviations (mu-GDP, Dong, Roth and Su 2022) has an
exact (epsilon, delta) curve, :func:`gaussian_delta` (Balle and Wang 2018,
Theorem 8), with its inverses :func:`gaussian_epsilon` and
:func:`gaussian_mu`. The check of a privacy parameter, shared by the whole
package, lives here too: this module imports no other of the package.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import sys
from fractions import Fraction
from functools import lru_cache
from numbers import Real

import numpy as np
from scipy import special
from scipy.optimize import brentq, minimize_scalar


def _check_nonnegative(name, value, *, allow_inf=True):
    if not isinstance(value, Real) or isinstance(value, bool) or math.isnan(value):
        raise ValueError(f"{name} must be a real number, got {value!r}.")
    if value < 0 or (not allow_inf and math.isinf(value)):
        raise ValueError(f"{name} must be non-negative and finite, got {value!r}.")


def _pure_rho(epsilon):
    # epsilon**2 / 2 rounded up: a pure epsilon-DP step is epsilon**2/2-zCDP
    # (Bun and Steinke, 2016, Proposition 1.4) and is never counted for less.
    return _half_square(epsilon, up=True)


def _half_square(value, *, up):
    # value**2 / 2 rounded up or down. For mu-GDP: rounded up, the rho it is
    # counted for in zCDP (its Renyi divergence of order alpha is
    # alpha mu**2 / 2, Bun and Steinke (2016), Proposition 1.6); rounded
    # down, the rho of Gaussian steps that make up a mu-GDP fit.
    return _sum_half_squares([value], up=up)


def _sum_half_squares(values, *, up):
    # sum(v**2 / 2) over the values, exactly, rounded up or down to a float
    # (inf if one is).
    values = [float(v) for v in values]
    if any(math.isinf(v) for v in values):
        return math.inf
    return _rounded(sum((Fraction(v) ** 2 / 2 for v in values), Fraction(0)), up=up)


def _rounded(exact, *, up):
    # A non-negative Fraction as a float on one side of it: the smallest
    # float at least it (up), or the largest at most it (beyond the largest
    # float: inf, or the largest float).
    try:
        value = float(exact)
    except OverflowError:
        value = math.inf
    if math.isinf(value):
        return value if up else sys.float_info.max
    toward = math.inf if up else 0.0
    while (Fraction(value) < exact) if up else (Fraction(value) > exact):
        value = math.nextafter(value, toward)
    return value


#: Below this a Fraction's float loses digits (2**-960: far above the
#: smallest normal float, 2**-1022).
_TINY = Fraction(1, 2**960)


def _sqrt_up(exact):
    # The square root of a non-negative Fraction, rounded up to a float. A
    # tiny one is scaled by an even power of two first (exactly), so that
    # the first guess is within an ulp or two of the root.
    if exact == 0:
        return 0.0
    scale = 0
    while exact < _TINY:
        exact, scale = exact * 4**256, scale + 256
    root = math.ldexp(math.sqrt(float(exact)), -scale)
    target = exact / 4**scale
    if math.isfinite(root):
        while Fraction(root) ** 2 < target:
            root = math.nextafter(root, math.inf)
    return root


def _root_sum_squares(values):
    # sqrt(sum v**2) rounded up: the mu of a composition of mu_i-GDP steps
    # (Dong, Roth and Su, 2022, Corollary 3.3).
    values = [float(v) for v in values]
    if any(math.isinf(v) for v in values):
        return math.inf
    return _sqrt_up(sum((Fraction(v) ** 2 for v in values), Fraction(0)))


def _gaussian_mu_of_rho(rho):
    # sqrt(2 rho) rounded up: the mu of Gaussian steps whose rhos sum to rho
    # (a step calibrated as sigma = Delta / sqrt(2 rho_i) is sqrt(2 rho_i)-GDP).
    return math.inf if math.isinf(rho) else _sqrt_up(2 * Fraction(rho))


def _cks_epsilon_at(log_am1, rho, log_inv_delta):
    # Corollary 13 of [CKS20] solved for epsilon at Renyi order alpha > 1:
    # eps = alpha rho + (log(1/delta) + (alpha-1) log(1-1/alpha) - log alpha)
    #       / (alpha-1),
    # written in s = alpha - 1 = exp(log_am1), with log(1 - 1/alpha) =
    # log(s) - log1p(s): alpha is never rounded to 1 (where the log would fail).
    s = math.exp(log_am1)
    log_alpha = math.log1p(s)
    return (1.0 + s) * rho + (log_inv_delta + s * (log_am1 - log_alpha) - log_alpha) / s


def zcdp_epsilon(rho, delta):
    """Epsilon of the (epsilon, delta)-DP guarantee implied by rho-zCDP.

    Uses the conversion of Canonne, Kamath and Steinke (2020, Corollary 13),

    .. math::

        \\varepsilon = \\inf_{\\alpha > 1} \\alpha\\rho + \\frac{\\log(1/\\delta)
        + (\\alpha - 1)\\log(1 - 1/\\alpha) - \\log\\alpha}{\\alpha - 1},

    minimised numerically over :math:`\\alpha`. It is never larger than the
    classical :math:`\\rho + 2\\sqrt{\\rho\\log(1/\\delta)}` (Bun and Steinke, 2016),
    which is
    used as a safeguard. For large ``delta`` the infimum can be negative at
    small ``rho``: the guarantee is then (0, delta)-DP and 0 is returned.

    Parameters
    ----------
    rho : float
        The zCDP parameter, non-negative (``inf`` allowed).
    delta : float
        Target delta in [0, 1).

    Returns
    -------
    epsilon : float
        The smallest epsilon this conversion certifies (``inf`` when
        ``delta=0`` and ``rho>0``).

    Examples
    --------
    >>> from dpcov.accounting import zcdp_epsilon
    >>> round(zcdp_epsilon(0.1, 1e-6), 6)
    2.141939
    >>> zcdp_epsilon(1e-4, 0.3)  # (0, 0.3)-DP: the infimum is negative
    0.0
    """
    edge = _epsilon_at_edges("rho", rho, delta)
    if edge is not None:
        return edge
    return _cks_epsilon(float(rho), float(delta))


def _epsilon_at_edges(name, value, delta):
    # The checks and edge cases of a conversion to epsilon at delta: a
    # parameter (rho, mu) of 0 costs nothing; delta = 0 or an infinite
    # parameter, everything. None when neither applies.
    _check_nonnegative(name, value)
    _check_nonnegative("delta", delta)
    if delta >= 1:
        raise ValueError(f"delta must be smaller than 1, got {delta!r}.")
    if value == 0:
        return 0.0
    if delta == 0 or math.isinf(value):
        return math.inf
    return None


#: Conversions remembered: a fit converts its (epsilon, delta) once, but a
#: search or a pipeline fits with the same few budgets many times, and each
#: conversion is a numerical minimisation (inverting one for rho takes about 20).
_CACHE_SIZE = 4096


@lru_cache(maxsize=_CACHE_SIZE)
def _cks_epsilon(rho, delta):
    # zcdp_epsilon for 0 < rho < inf and 0 < delta < 1.
    log_inv_delta = -math.log(delta)
    classical = rho + 2.0 * math.sqrt(rho * log_inv_delta)
    # The optimum is near alpha = 1 + sqrt(log(1/delta)/rho); search log(alpha-1)
    # on a bracket that is wide around it (the objective is unimodal in alpha).
    centre = 0.5 * (math.log(log_inv_delta) - math.log(rho))
    result = minimize_scalar(
        lambda t: _cks_epsilon_at(t, rho, log_inv_delta),
        bounds=(centre - 12.0, centre + 12.0),
        method="bounded",
        options={"xatol": 1e-10},
    )
    # A value below 0 certifies (0, delta)-DP (the bound on delta decreases in
    # epsilon, so it holds at epsilon = 0 too), hence (epsilon, delta) for all
    # epsilon >= 0.
    return float(max(min(result.fun, classical), 0.0))


def zcdp_rho(epsilon, delta):
    """Largest rho such that rho-zCDP implies (epsilon, delta)-DP.

    Inverts :func:`zcdp_epsilon` (which is increasing in rho) numerically; the
    returned rho satisfies ``zcdp_epsilon(rho, delta) <= epsilon``. Every
    ``delta`` in (0, 1) is allowed: for large ``delta`` the conversion is
    loose enough that rho may exceed ``epsilon`` (``zcdp_rho(0.1, 0.5)`` is
    about 0.45).

    Parameters
    ----------
    epsilon : float
        Target epsilon, positive (``inf`` gives ``inf``).
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    rho : float
        The zCDP budget to run a zCDP mechanism at.

    Examples
    --------
    >>> from dpcov.accounting import zcdp_rho
    >>> round(zcdp_rho(1.0, 1e-6), 6)
    0.024356
    """
    _check_nonnegative("epsilon", epsilon)
    _check_nonnegative("delta", delta)
    if not 0 < delta < 1:
        raise ValueError(
            f"delta must be in (0, 1) to convert to zCDP, got {delta!r}; "
            "with delta=0 use a pure-DP mechanism."
        )
    if epsilon == 0:
        return 0.0
    if np.isinf(epsilon):
        return math.inf
    return _cks_rho(float(epsilon), float(delta))


@lru_cache(maxsize=_CACHE_SIZE)
def _cks_rho(epsilon, delta):
    # zcdp_rho for 0 < epsilon < inf and 0 < delta < 1.
    def gap(r):
        return zcdp_epsilon(r, delta) - epsilon

    # The root is bracketed by [0, high] with gap(0) = -epsilon < 0 and
    # gap(high) > 0. zcdp_epsilon(rho) >= rho holds for small delta only: for
    # large delta, Corollary 13 of [CKS20] certifies epsilon < rho, and even
    # (0, delta)-DP at small rho (zcdp_epsilon is 0 there), so the root can
    # lie beyond epsilon. Double the bracket until it holds: zcdp_epsilon
    # increases without bound in rho (alpha*rho >= rho, and log(1/delta)/(alpha
    # - 1) keeps alpha away from 1). Where zcdp_epsilon > 0 it increases
    # strictly in rho (an infimum of strictly increasing functions, attained),
    # so the root is unique.
    high = epsilon
    while gap(high) <= 0:
        if high == sys.float_info.max:
            return high  # (only for epsilon near the largest float)
        high = min(2.0 * high, sys.float_info.max)
    rho = brentq(gap, 0.0, high, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    # Never overshoot the target: step down until the guarantee holds (the
    # root can sit an ulp or two above it), one ulp first, then twice as far
    # each time.
    rho, step = float(rho), 0.0
    while zcdp_epsilon(rho, delta) > epsilon:
        step = max(2.0 * step, math.ulp(rho))
        rho = max(rho - step, 0.0)
    return rho


# -- the Gaussian mechanism's exact curve -------------------------------------


def gaussian_delta(mu, epsilon):
    """Delta at ``epsilon`` of a Gaussian mechanism with sensitivity ``mu`` sigmas.

    A Gaussian mechanism whose L2 sensitivity is ``Delta`` and whose noise
    has standard deviation ``sigma`` is ``mu``-GDP with ``mu = Delta /
    sigma``, and (epsilon, delta)-DP exactly for

    .. math::

        \\delta(\\varepsilon) = \\Phi\\left(\\frac{\\mu}{2} -
        \\frac{\\varepsilon}{\\mu}\\right) - e^{\\varepsilon}
        \\Phi\\left(-\\frac{\\mu}{2} - \\frac{\\varepsilon}{\\mu}\\right)

    (Balle and Wang, 2018, Theorem 8), no smaller delta: the curve is the
    mechanism's own. A composition of Gaussian mechanisms with ``mu_i``,
    adaptive or not, is one with ``mu = sqrt(sum mu_i**2)`` (Dong, Roth and
    Su, 2022, Corollary 3.3). Computed without subtracting the two terms in
    the tail, where they agree to many digits (see ``_gaussian_curve``, with
    the bound ``CURVE_ERROR`` on its relative error).

    Parameters
    ----------
    mu : float
        Sensitivity over noise standard deviation, non-negative (``inf``
        allowed: no privacy).
    epsilon : float
        Non-negative.

    Returns
    -------
    delta : float
        In [0, 1].

    Examples
    --------
    >>> from dpcov.accounting import gaussian_delta
    >>> f"{gaussian_delta(1.0, 1.0):.6f}"
    '0.126937'
    """
    _check_nonnegative("mu", mu)
    _check_nonnegative("epsilon", epsilon)
    if mu == 0:
        return 0.0
    if math.isinf(mu):
        return 1.0
    if math.isinf(epsilon):
        return 0.0
    return float(_gaussian_curve(float(mu), float(epsilon))[0])


_SQRT2 = math.sqrt(2.0)
_U = float(np.finfo(float).eps)


def _gaussian_curve(mu, x):
    """The Gaussian curve at every ``x`` (any real), for ``0 < mu < inf``.

    With ``z1 = mu/2 - x/mu`` and ``z2 = z1 - mu`` (so ``z2**2 - z1**2 =
    2 x``): in the tail (``z1 < -1``) ``Phi(z1) - e^x Phi(z2) = e^(-z1**2/2)
    (erfcx(-z1/sqrt 2) - erfcx(-z2/sqrt 2)) / 2``, a difference of two
    numbers of the same size instead of two that agree to many digits;
    elsewhere ``(Phi(z1) - Phi(z2)) - expm1(x) Phi(z2)``, the normal mass
    between ``z2`` and ``z1`` from ``erf`` (exact at ``x = 0``, where it is
    ``erf(mu / (2 sqrt 2))``).
    """
    x = np.atleast_1d(np.asarray(x, dtype=float))
    z1 = mu / 2.0 - x / mu
    z2 = -mu / 2.0 - x / mu
    out = np.empty_like(z1)
    tail = z1 < -1.0
    head = ~tail
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        a, b = -z1[tail] / _SQRT2, -z2[tail] / _SQRT2
        out[tail] = (
            0.5 * np.exp(-0.5 * z1[tail] ** 2) * (special.erfcx(a) - special.erfcx(b))
        )
        mass = 0.5 * (special.erf(z1[head] / _SQRT2) - special.erf(z2[head] / _SQRT2))
        out[head] = mass - _expm1_times_ndtr(x[head], z2[head])
    # (-0.0 and rounding below 0 become 0; a NaN, which no finite input
    # gives, would become 1: never an understated delta.)
    return np.where(np.isnan(out), 1.0, np.maximum(out, 0.0) + 0.0)


def _expm1_times_ndtr(x, z):
    # (e^x - 1) Phi(z), without inf * 0 for a large x and a far tail z:
    # e^(x + log Phi(z)) - Phi(z) from x = 1 on.
    small = x < 1.0
    out = np.empty_like(x)
    out[small] = np.expm1(x[small]) * special.ndtr(z[small])
    large = ~small
    out[large] = np.exp(x[large] + special.log_ndtr(z[large])) - special.ndtr(z[large])
    return out


#: The relative error of _gaussian_curve is below ``CURVE_ERROR * u * (1 +
#: 1/mu + |x|/mu**2 + z1**2 + |z1| (mu/2 + |x|/mu))`` (``u`` the float64
#: epsilon): the terms are the cancellations of the two normal masses
#: (``1/mu``, ``|x|/mu**2``), the exponential's argument (``z1**2``) and the
#: rounding of ``z1`` itself, which the exponential magnifies. Against
#: 80-digit arithmetic (mpmath) on mu in [1e-6, 1e5] and x in [-1, 1e8],
#: the largest error was 1.9 times the model: the constant keeps a factor of
#: 16 above it.
CURVE_ERROR = 32.0

#: Below this, a delta is subnormal: its relative error is unbounded, and
#: the curve's inverses refuse it.
SMALLEST_DELTA = float(np.finfo(float).tiny)


def _gaussian_curve_error(mu, x):
    """A bound on the relative error of ``_gaussian_curve`` at ``x``."""
    x, mu = np.asarray(x, dtype=float), np.float64(mu)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        z1 = mu / 2.0 - x / mu
        ratio = np.abs(x) / mu
        model = 1.0 + 1.0 / mu + ratio / mu + z1 * z1 + np.abs(z1) * (mu / 2 + ratio)
    return np.where(np.isnan(model), np.inf, CURVE_ERROR * _U * model)


def _gaussian_curve_above(mu, x):
    """An upper bound of the true curve at every ``x``, for ``0 < mu < inf``.

    The computed curve divided by ``1 - error`` where its error bound is
    below 1/2; elsewhere (tiny ``mu`` or ``x``, where it may have lost every
    digit) ``Phi(z1)``, the curve's first term (the second is positive),
    computed to within a few ulps. Never NaN.
    """
    x = np.atleast_1d(np.asarray(x, dtype=float))
    value = _gaussian_curve(mu, x)
    error = _gaussian_curve_error(mu, x)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        first = special.ndtr(np.float64(mu) / 2.0 - x / np.float64(mu)) * (1 + 4 * _U)
        above = np.where(error < 0.5, value / (1.0 - error), first)
    above = np.minimum(above, first)
    return np.where(np.isnan(above), 1.0, np.minimum(above, 1.0))


def _gaussian_delta_above(mu, epsilon):
    # The scalar form of _gaussian_curve_above.
    return float(_gaussian_curve_above(mu, epsilon)[0])


def _check_curve_delta(delta):
    if 0 < delta < SMALLEST_DELTA:
        raise ValueError(
            f"delta must be 0 or at least {SMALLEST_DELTA!r} (a normal float), "
            f"got {delta!r}."
        )


def gaussian_epsilon(mu, delta):
    """Smallest epsilon with ``gaussian_delta(mu, epsilon) <= delta``.

    The exact (epsilon, delta) guarantee of a ``mu``-GDP mechanism (see
    :func:`gaussian_delta`), never smaller than the root: the curve at the
    returned epsilon is at most ``delta``.

    Parameters
    ----------
    mu : float
        Non-negative (``inf`` gives ``inf``).
    delta : float
        In [0, 1).

    Returns
    -------
    epsilon : float
        Non-negative; 0 when the mechanism is (0, delta)-DP, ``inf`` when
        ``delta = 0`` and ``mu > 0``.

    Examples
    --------
    >>> from dpcov.accounting import gaussian_epsilon
    >>> round(gaussian_epsilon(0.5, 1e-6), 4)
    2.2541
    """
    edge = _epsilon_at_edges("mu", mu, delta)
    if edge is not None:
        return edge
    _check_curve_delta(delta)
    return _gaussian_epsilon(float(mu), float(delta))


@lru_cache(maxsize=_CACHE_SIZE)
def _gaussian_epsilon(mu, delta):
    # The root of the curve's upper bound (decreasing in epsilon: at 0 it
    # exceeds delta, far out it is 0), then up until that bound is at most
    # delta. Beyond epsilon = mu**2/2 + 40 mu the curve is below Phi(-40)
    # (about 1e-350): 0 in floats.
    if _gaussian_delta_above(mu, 0.0) <= delta:
        return 0.0
    high = mu * mu / 2.0 + 40.0 * mu + 1.0
    if not math.isfinite(high):
        return math.inf
    epsilon = brentq(
        lambda e: _gaussian_delta_above(mu, e) - delta,
        0.0,
        high,
        xtol=1e-15,
        rtol=4 * np.finfo(float).eps,
    )
    epsilon, step = float(epsilon), 0.0
    while _gaussian_delta_above(mu, epsilon) > delta and epsilon < high:
        step = max(2.0 * step, math.ulp(epsilon))
        epsilon += step
    return min(epsilon, high)


def gaussian_mu(epsilon, delta):
    """Largest ``mu`` whose Gaussian mechanism is (epsilon, delta)-DP.

    The analytic Gaussian mechanism's calibration (Balle and Wang, 2018,
    Algorithm 1): noise of standard deviation ``Delta / mu`` for an L2
    sensitivity ``Delta``. Never above the root: the curve of
    :func:`gaussian_delta` at ``epsilon`` is at most ``delta``.

    Parameters
    ----------
    epsilon : float
        Non-negative (``inf`` gives ``inf``).
    delta : float
        In (0, 1).

    Returns
    -------
    mu : float
        The sensitivity over the noise's standard deviation (``inf`` for an
        infinite ``epsilon``).

    Examples
    --------
    >>> from dpcov.accounting import gaussian_mu, zcdp_rho
    >>> round(gaussian_mu(1.0, 1e-6), 6)
    0.236704
    >>> # the zCDP calibration's mu is smaller: sigma 7% larger
    >>> round(gaussian_mu(1.0, 1e-6) / (2 * zcdp_rho(1.0, 1e-6)) ** 0.5, 4)
    1.0725
    """
    _check_nonnegative("epsilon", epsilon)
    _check_nonnegative("delta", delta)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    if math.isinf(epsilon):
        return math.inf
    _check_curve_delta(delta)
    return _gaussian_mu(float(epsilon), float(delta))


@lru_cache(maxsize=_CACHE_SIZE)
def _gaussian_mu(epsilon, delta):
    if epsilon == 0:
        # delta(0) = erf(mu / (2 sqrt 2)), computed exactly: invert it.
        # (erf is computed to within a few ulps: 4 of them are kept.)
        mu = 2.0 * _SQRT2 * float(special.erfinv(delta))
        while special.erf(mu / (2.0 * _SQRT2)) * (1.0 + 4 * _U) > delta:
            mu = math.nextafter(mu, 0.0)
        return mu
    # delta(mu) increases from 0 (mu -> 0) to 1 (mu -> inf): bracket the root
    # on a log scale, solve in log(mu) on the computed curve, then step down
    # until the curve raised by its error bound is at most delta.
    low, high = 1.0, 1.0
    while _gaussian_delta_above(low, epsilon) > delta:
        low /= 2.0
    while _gaussian_delta_above(high, epsilon) <= delta:
        high *= 2.0
        if high > 2.0**1000:  # (epsilon near the largest float: no root)
            raise ValueError(f"epsilon={epsilon!r} is beyond the Gaussian curve.")
    log_mu = brentq(
        lambda t: _gaussian_delta_above(math.exp(t), epsilon) - delta,
        math.log(low),
        math.log(high),
        xtol=1e-15,
        rtol=4 * np.finfo(float).eps,
    )
    mu, step = min(math.exp(log_mu), high), 0.0
    while _gaussian_delta_above(mu, epsilon) > delta and mu > low:
        step = max(2.0 * step, math.ulp(mu))
        mu -= step
    return max(mu, low)
