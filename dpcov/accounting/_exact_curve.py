"""The zCDP budget a fit may run at for an (epsilon, delta) ask, on the exact curve.

A fit asked for (epsilon, delta) runs its steps at shares of one zCDP budget
``rho``, today the largest whose Canonne-Kamath-Steinke conversion gives
(epsilon, delta) (:func:`~dpcov.accounting.zcdp_rho`). That conversion holds
for any rho-zCDP mechanism; a fit's steps are particular ones, whose
composition has a smaller delta at epsilon:

* a Gaussian step at ``rho_i`` has sensitivity ``mu_i = sqrt(2 rho_i)``
  standard deviations, and Gaussian steps compose to one with ``mu =
  sqrt(sum mu_i**2)`` (Dong, Roth and Su 2022), whose curve is exact
  (:func:`~dpcov.accounting.gaussian_delta`);
* a pure step at ``rho_i`` runs at ``epsilon_i = sqrt(2 rho_i)``, and a
  bounded-range one (the exponential mechanism) at ``sqrt(8 rho_i)``; with
  them the curve comes from the composed privacy loss distributions
  (``_privacy_loss.py``).

:func:`exact_rho` finds the largest ``rho`` at which the fit's steps, taking
the same shares, stay (epsilon, delta)-DP on that curve, never below the
zCDP calibration's (which holds too): every step's noise shrinks by the
same factor, so no step loses budget to another.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from fractions import Fraction
from functools import lru_cache
from numbers import Real

import numpy as np

from ._conversions import _check_nonnegative, _sqrt_up, gaussian_mu, zcdp_rho
from ._privacy_loss import SPACING, PrivacyLoss

#: The kinds of step, and the epsilon each runs at for its share of rho.
KINDS = ("gaussian", "pure", "bounded_range")

#: Relative precision of the search for rho (on the mixed curve): the rho
#: returned is within this factor below the largest valid one.
RHO_PRECISION = 1e-4


def step_parameters(rho, shares):
    """The steps at ``rho``, rounded up: the Gaussian steps' ``mu``, the epsilons.

    Rounded up, they bound each step a fit runs at its share of ``rho``
    (``pure_epsilon()`` and ``exponential_epsilon()`` round down), so their
    composed curve bounds the fit's.

    Parameters
    ----------
    rho : float
        The fit's zCDP budget.
    shares : dict
        ``{"gaussian": [...], "pure": [...], "bounded_range": [...]}``: the
        shares of ``rho`` each step of that kind runs at (absent kinds have
        none); they sum to at most 1.

    Returns
    -------
    mu : float
        ``sqrt(2 rho sum s_i)`` over the Gaussian steps.
    pure, bounded_range : tuple of float
        ``sqrt(2 rho s_i)`` and ``sqrt(8 rho s_i)``.
    """
    exact = Fraction(rho)
    gaussian = sum(map(Fraction, shares.get("gaussian", ())), Fraction(0))
    mu = _sqrt_up(2 * exact * gaussian)
    pure = tuple(_sqrt_up(2 * exact * Fraction(s)) for s in shares.get("pure", ()))
    ranges = tuple(
        _sqrt_up(8 * exact * Fraction(s)) for s in shares.get("bounded_range", ())
    )
    return mu, pure, ranges


#: The most grid points the discrete parts' sizes may multiply to (their
#: direct convolution costs about that many products): measured on 2 cores,
#: AdaptiveCovariance at its defaults (a radius and a threshold search, two
#: bounded-range steps) asked for (8, 1e-6) took 1.5 s to calibrate at a
#: spacing of 1e-4 and (32, 1e-6) 12 s.
MAX_GRID_PRODUCT = 2**22


def grid_spacing(pure=(), bounded_range=()):
    """The discrete parts' grid: ``SPACING * 2**k``, the finest within the cost.

    The smallest ``k >= 0`` at which the parts' grid sizes (``2 eps /
    spacing + 1`` points each) multiply to at most ``MAX_GRID_PRODUCT``. A
    coarser grid rounds each loss up by more (at most its spacing), so its
    curve is a looser upper bound, and one of the same parameters is always
    on the same grid: a calibration and the guarantee it records read the
    same curve.

    Parameters
    ----------
    pure, bounded_range : tuple of float, default=()
        The epsilons of the pure and the bounded-range steps (finite).

    Returns
    -------
    spacing : float
    """
    spacing = SPACING
    widths = [2.0 * float(e) for e in (*pure, *bounded_range)]
    while math.prod(w / spacing + 1.0 for w in widths) > MAX_GRID_PRODUCT:
        spacing *= 2.0
    return spacing


def composed_loss(mu, pure=(), bounded_range=(), spacing=None):
    """The privacy loss distribution of the steps, composed.

    Parameters
    ----------
    mu : float
        The Gaussian steps' composed sensitivity in standard deviations.
    pure, bounded_range : tuple of float, default=()
        The epsilons of the pure and the bounded-range steps.
    spacing : float, default=None
        The grid of the discrete parts; None for :func:`grid_spacing`'s.

    Returns
    -------
    loss : PrivacyLoss
    """
    if spacing is None:
        spacing = grid_spacing(pure, bounded_range)
    loss = PrivacyLoss.gaussian(mu, spacing)
    for epsilon in pure:
        loss = loss.compose(PrivacyLoss.pure(epsilon, spacing))
    for epsilon in bounded_range:
        loss = loss.compose(PrivacyLoss.bounded_range(epsilon, spacing))
    return loss


def profile_epsilon(mu, pure, bounded_range, delta):
    """Epsilon at ``delta`` of the steps' composed curve (an upper bound).

    Parameters
    ----------
    mu : float
        The Gaussian steps' composed sensitivity in standard deviations.
    pure, bounded_range : tuple of float
        The epsilons of the pure and the bounded-range steps.
    delta : float
        In [0, 1).

    Returns
    -------
    epsilon : float
        The smallest epsilon at which the composed privacy loss
        distribution's delta (rounded up) is at most ``delta``; ``inf`` for
        an infinite part or ``delta = 0`` with a Gaussian part.
    """
    parts = (float(mu), *map(float, pure), *map(float, bounded_range))
    if any(math.isinf(p) for p in parts):
        return math.inf
    if delta == 0 and mu > 0:
        return math.inf
    return _profile_epsilon(
        float(mu),
        tuple(map(float, pure)),
        tuple(map(float, bounded_range)),
        float(delta),
    )


@lru_cache(maxsize=256)
def _profile_epsilon(mu, pure, bounded_range, delta):
    if delta == 0:  # pure and bounded-range parts only: they add
        return math.fsum([*pure, *bounded_range])
    return composed_loss(mu, pure, bounded_range).epsilon(delta)


def exact_rho(epsilon, delta, shares):
    """The largest zCDP budget whose steps stay (epsilon, delta)-DP on the exact curve.

    Parameters
    ----------
    epsilon : float
        Positive and finite.
    delta : float
        In (0, 1).
    shares : dict
        The shares of the budget each step takes, by kind (see
        :func:`step_parameters`).

    Returns
    -------
    rho : float
        At least ``zcdp_rho(epsilon, delta)``. With Gaussian steps only, the
        analytic Gaussian's: ``gaussian_mu(epsilon, delta)**2 / (2 g)`` for
        ``g`` the Gaussian steps' total share. With pure or bounded-range
        steps, found by bisection on the composed privacy loss distribution
        (rounded up, so an upper bound of the curve), to ``RHO_PRECISION``.
    """
    _check_nonnegative("epsilon", epsilon, allow_inf=False)
    if not epsilon > 0:
        raise ValueError(f"epsilon must be positive, got {epsilon!r}.")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    return _exact_rho(float(epsilon), float(delta), _checked_shares(shares))


def _checked_shares(shares):
    # The shares as a hashable key, refused unless each is a finite number
    # in [0, 1] and they sum to at most 1 (a budget split's shares can round
    # a few ulps above it: 1 + 8 u is allowed, the zCDP split's own slack).
    unknown = set(shares) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown kinds of step: {sorted(unknown)}.")
    for kind in KINDS:
        for share in shares.get(kind, ()):
            if not isinstance(share, Real) or isinstance(share, bool):
                raise ValueError("each step's share must be a number in [0, 1].")
    key = tuple(tuple(float(s) for s in shares.get(kind, ())) for kind in KINDS)
    values = [s for kind in key for s in kind]
    if not all(0 <= s <= 1 for s in values):  # (NaN fails too)
        raise ValueError("each step's share must be a number in [0, 1].")
    if math.fsum(values) > 1.0 + 8 * np.finfo(float).eps:
        raise ValueError("the steps' shares must sum to at most 1.")
    return key


@lru_cache(maxsize=1024)
def _exact_rho(epsilon, delta, key):
    shares = dict(zip(KINDS, key, strict=True))
    floor = zcdp_rho(epsilon, delta)
    gaussian = math.fsum(shares["gaussian"])
    if not (shares["pure"] or shares["bounded_range"]):
        if gaussian == 0:
            return floor
        # delta(mu) at epsilon is exact: the composed Gaussian at gaussian_mu.
        rho = gaussian_mu(epsilon, delta) ** 2 / (2.0 * gaussian)
        while step_parameters(rho, shares)[0] > gaussian_mu(epsilon, delta):
            rho = math.nextafter(rho, 0.0)
        return max(rho, floor)

    def within(rho):
        loss = composed_loss(*step_parameters(rho, shares))
        return loss.delta(epsilon) <= delta

    if not within(floor):
        # (The computed curve is an upper bound, rounded up on its grid: at
        # the zCDP budget it may read above delta. The zCDP calibration
        # holds regardless.)
        return floor
    high = floor * 2.0
    while within(high):
        if high > floor * 2.0**20:
            # (Steps whose shares cost next to nothing: no need to search
            # further than a million times the zCDP budget.)
            return high
        high *= 2.0
    low = floor
    while high - low > RHO_PRECISION * low:
        middle = 0.5 * (low + high)
        if within(middle):
            low = middle
        else:
            high = middle
    return low
