"""Private per-feature ranges, for tables that come without public ones.

``bounds="private"`` finds the range of each feature from a share of the
fit's budget (:data:`RANGES_SHARE`) with the mechanisms of
:mod:`dpcov.mechanisms._ranges` (a private median, a second one measured
from the first, then a private spread about it), and the fit goes on as with
public ranges. The geometry step (:mod:`dpcov.utils._geometry`) plans and
releases them for every estimator.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from dataclasses import dataclass

import numpy as np

from ..accounting import split_budget
from ..mechanisms._ranges import (
    RANGE_STEPS,
    SPREAD_GRID,
    median_candidates,
    private_median,
    private_ranges_min_samples,
    private_spread,
)
from ._columns import column_rank_counts
from .validation import check_bounds

#: Share of a fit's budget spent on its private ranges (``bounds="private"``).
RANGES_SHARE = 0.25
#: Probability that some feature's range fails its accuracy statement (far
#: too wide, or clipping more than ``k + alpha`` values): each feature's
#: radius step runs at ``RANGES_BETA / d``.
RANGES_BETA = 0.1


@dataclass(frozen=True)
class RangesPlan:
    """The public plan of the private ranges: one epsilon per step.

    Parameters
    ----------
    n_samples : int
        Number of rows (public under replace-one neighbours).
    n_features : int
        Number of features ``d``.
    epsilon : float
        Epsilon of each of the ``3 d`` exponential-mechanism steps.
    beta : float
        Failure probability of each feature's steps (``RANGES_BETA / d``):
        it sets the radius step's target number of values outside.
    """

    n_samples: int
    n_features: int
    epsilon: float
    beta: float


def split_ranges_budget(budget):
    """The private ranges' share of a fit's budget and the rest.

    Parameters
    ----------
    budget : PureDP or ZCDP
        The fit's whole budget.

    Returns
    -------
    ranges, rest : PureDP or ZCDP
        :data:`RANGES_SHARE` of it for the ranges, the rest for the fit's
        own release; they compose to ``budget``.
    """
    split = split_budget(budget, {"bounds": RANGES_SHARE, "rest": 1.0 - RANGES_SHARE})
    return split["bounds"], split["rest"]


def _ranges_minimum(budget, n_features):
    # Each step's epsilon, the failure probability per feature, and the
    # fewest rows, for n_features features at this budget.
    n_steps = RANGE_STEPS * n_features
    steps = split_budget(budget, {f"step_{i}": 1.0 / n_steps for i in range(n_steps)})
    epsilon = min(step.exponential_epsilon() for step in steps.values())
    # A flat score far above the values leaves each feature's radius a
    # chance beta of landing there (far too wide): beta / d for d features
    # keeps the chance that any does below RANGES_BETA.
    beta = RANGES_BETA / n_features
    return epsilon, beta, private_ranges_min_samples(epsilon, beta)


def check_bounds_without_rows(bounds, n_samples, budget, *, name):
    """The checks of ``bounds`` that need no row, before anything is read.

    For :class:`~dpcov.pipeline.PrivatePipeline`'s checks before its first
    step, where a later step's width is not known yet: a public box is
    validated at its own width; ``"private"`` needs at least the rows the
    ranges of one feature need at their share of ``budget``
    (:func:`split_ranges_budget`; more features need more, and ``fit``
    checks the exact number).

    Parameters
    ----------
    bounds : tuple, "private" or None
        The estimator's ``bounds``.
    n_samples : int
        Number of rows (public).
    budget : PureDP or ZCDP
        The estimator's whole budget.
    name : str
        The estimator, for the message.
    """
    if bounds is None:
        return
    if isinstance(bounds, str):
        n_min = _ranges_minimum(split_ranges_budget(budget)[0], 1)[2]
        if n_samples < n_min:
            raise ValueError(
                f"{name} finds the range of each feature privately "
                "(bounds='private'), which needs at least "
                f"{n_min} samples at this budget for one feature, more for more "
                f"features; got {n_samples} sample{'' if n_samples == 1 else 's'}. "
                "Pass public bounds=(lower, upper) or a larger budget."
            )
        return
    try:
        width = max(int(np.size(part)) for part in bounds)
    except TypeError:
        width = 1
    check_bounds(bounds, width)


def plan_private_ranges(budget, n_samples, n_features, *, name="bounds='private'"):
    """Each step's epsilon, after checking there are enough rows for it.

    The budget is split evenly between the ``3 d`` steps (two medians and a
    spread per feature), which compose to it: each step is pure
    ``epsilon``-DP, and ``epsilon**2 / 8``-zCDP (bounded range), so under
    zCDP a step with ``rho / (3 d)`` runs at ``sqrt(8 rho / (3 d))``.

    Parameters
    ----------
    budget : PureDP or ZCDP
        The ranges' budget.
    n_samples, n_features : int
        The shape of the input (public).
    name : str
        What the error message names.

    Returns
    -------
    plan : RangesPlan

    Raises
    ------
    ValueError
        If there are fewer rows than the steps need at this budget (the
        message gives the number; it depends on public values only).
    """
    epsilon, beta, n_min = _ranges_minimum(budget, n_features)
    if n_samples < n_min:
        raise ValueError(
            f"{name} finds the range of each of the {n_features} features "
            f"privately, which needs at least {n_min} samples at this budget; "
            f"got {n_samples} sample{'' if n_samples == 1 else 's'}. Pass public "
            "bounds=(lower, upper), a larger budget, or fewer features."
        )
    return RangesPlan(
        n_samples=n_samples, n_features=n_features, epsilon=epsilon, beta=beta
    )


def ranges_first_pass(X, *, check_finite=False, allow_nan=False):
    """The counts of the first median step (read before anything is drawn).

    The rank counts of every column on the public median candidates (no
    budget is spent: the counts are never released, only read by the private
    median of :func:`release_private_ranges`). With ``allow_nan``, NaN marks
    a missing cell: the counts are over the observed cells.

    Parameters
    ----------
    X : ndarray, sparse matrix or dask.array.Array of shape (n_samples, d)
        The rows (never modified).
    check_finite : bool, default=False
        Refuse NaN or infinity as the rows are read.
    allow_nan : bool, default=False
        With ``check_finite``, accept NaN (a missing cell, counted nowhere).

    Returns
    -------
    counts : list of d ndarrays
        ``#{x_j <= c}`` for each public candidate ``c`` of each column ``j``.
    observed : ndarray of shape (d,)
        The number of observed (not NaN) cells of each column.

    Raises
    ------
    ValueError
        With ``check_finite``, on NaN (unless ``allow_nan``) or infinity
        (:class:`~dpcov.utils._input_messages.NonFiniteInput` for either
        without ``allow_nan``); the message names no value.
    """
    candidates = [median_candidates()] * X.shape[1]
    return column_rank_counts(
        X, candidates, check_finite=check_finite, allow_nan=allow_nan
    )


def release_private_ranges(X, plan, first, *, rng):
    """The private ranges, from the first pass's counts and two more passes.

    Parameters
    ----------
    X : ndarray, sparse matrix or dask.array.Array of shape (n_samples, d)
        The rows.
    plan : RangesPlan
        From :func:`plan_private_ranges`.
    first : tuple
        :func:`ranges_first_pass` of ``X``: the counts and the number of
        observed cells of each column.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    lower, upper : ndarray of shape (d,)
        ``m - r`` and ``m + r`` per feature (a private release).
    """
    n, epsilon = plan.n_samples, plan.epsilon
    # A median of the observed cells: with missing cells (NaN, counted
    # nowhere) their number N_j replaces n in the score. Replacing a row moves
    # N_j / 2 by at most 1/2 and the counts by at most 1, in the same
    # direction when a cell goes missing: the score still moves by at most 1.
    counts, observed = first
    coarse = [
        private_median(c, m, median_candidates(), epsilon=epsilon, rng=rng)
        for c, m in zip(counts, observed, strict=True)
    ]
    candidates = [median_candidates(center) for center in coarse]
    counts, observed = column_rank_counts(X, candidates)
    center = np.array(
        [
            private_median(c, m, grid, epsilon=epsilon, rng=rng)
            for c, m, grid in zip(counts, observed, candidates, strict=True)
        ]
    )
    # |x - m| against the radii, ascending; above r is the observed cells
    # minus those at or below (replacing a row moves it by at most 1).
    radii = np.sort(SPREAD_GRID)
    counts, observed = column_rank_counts(X, [radii] * X.shape[1], center=center)
    spread = np.array(
        [
            private_spread(
                (m - at_or_below)[::-1], n, epsilon=epsilon, rng=rng, beta=plan.beta
            )
            for at_or_below, m in zip(counts, observed, strict=True)
        ]
    )
    # At least a few ulps of the centre wide (post-processing of released
    # values): a spread below the spacing of floats near m would round the
    # box to a point, and its unit coordinates to 0 / 0.
    spread = np.maximum(spread, 8.0 * np.spacing(np.abs(center)))
    return center - spread, center + spread
