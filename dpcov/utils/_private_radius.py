"""The private radius of a fit's geometry: a bound on the row norms, found privately.

:mod:`dpcov.utils._geometry` finds a radius with one of two policies, which
differ in when a radius is found, over which grid, and with which share:

``"unbounded"`` (the covariance estimators, hence PCA)
    Only without a public bound, over the whole grid ``2**-32 .. 2**32``: by
    sparse vector with :data:`RADIUS_SHARE` of the budget where there are
    enough rows for it, else by the exponential mechanism with
    :data:`EM_RADIUS_SHARE` (it works from a few hundred rows).
``"inside"`` (linear discriminant analysis)
    Always, by the exponential mechanism over the powers of two below the
    public bound and the bound itself (:func:`radius_grid`), or the whole
    grid without one, with the estimator's own share.

This module plans the radius from public values (its share, its mechanism,
its epsilon and grid, and the fewest rows it needs); the mechanisms are
those of :mod:`dpcov.mechanisms._radius`.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from ..accounting import split_budget
from ..mechanisms import (
    DEFAULT_RADIUS_GRID,
    exponential_radius_min_samples,
    private_radius_min_samples,
)

__all__ = [
    "EM_RADIUS_SHARE",
    "RADIUS_SHARE",
    "plan_radius_inside",
    "plan_unbounded_radius",
    "radius_grid",
    "unbounded_radius_share",
]

#: Share of the budget of the private radius under the "unbounded" policy,
#: by sparse vector (enough rows for it).
RADIUS_SHARE = 0.125
#: The share when the exponential mechanism finds it (fewer rows).
EM_RADIUS_SHARE = 0.1875


def radius_grid(bound):
    """The "inside" policy's candidate radii: below ``bound``, and ``bound``.

    Parameters
    ----------
    bound : float or None
        The public bound on the row norms (:func:`norm_bound`).

    Returns
    -------
    grid : ndarray
        Decreasing, as the radius mechanisms take it: ``bound`` (a candidate
        that holds rows at the bound), then the powers of two of the whole
        grid below it; the whole grid when ``bound`` is None.
    """
    if bound is None:
        return DEFAULT_RADIUS_GRID
    return np.r_[bound, DEFAULT_RADIUS_GRID[DEFAULT_RADIUS_GRID < bound]]


def plan_radius_inside(budget, n_samples, bound, *, name):
    """The "inside" policy's epsilon and grid, after checking the rows suffice.

    Parameters
    ----------
    budget : PureDP or ZCDP
        The radius's share.
    n_samples : int
        Number of rows (public).
    bound : float or None
        The public bound on the row norms (:func:`norm_bound`).
    name : str
        The estimator, for the message.

    Returns
    -------
    epsilon : float
        Of the exponential mechanism (``epsilon**2 / 8``-zCDP: bounded range).
    grid : ndarray
        The candidates (:func:`radius_grid`).
    """
    grid = radius_grid(bound)
    epsilon = budget.exponential_epsilon()
    if grid.size > 1:
        n_min = exponential_radius_min_samples(epsilon, grid=grid)
        if n_samples < n_min:
            raise ValueError(
                f"{name} finds a row-norm bound privately, "
                f"which needs at least {n_min} samples at this budget; got "
                f"{n_samples} sample{'' if n_samples == 1 else 's'}. Use a "
                "larger budget."
            )
    return epsilon, grid


def unbounded_radius_share(budget, n_samples, *, even=False):
    # The "unbounded" policy's share and mechanism (a choice on public
    # values: n and the budget). Sparse vector, where it applies, was the
    # more accurate in the radius benchmark (``python -m benchmarks run
    # radius``: it clips more of the tail); below its minimum the exponential
    # mechanism works from a few hundred rows, with a larger share so that
    # the minimum stays low. With ``even`` both take EM_RADIUS_SHARE: a fit
    # calibrated on its composed curve, whose bounded-range step at that
    # share bounds either mechanism (a pure epsilon-DP step has range 2
    # epsilon: the same share), so that its plan does not depend on n.
    share = EM_RADIUS_SHARE if even else RADIUS_SHARE
    svt_epsilon = split_budget(budget, {"radius": share, "rest": 1.0 - share})[
        "radius"
    ].pure_epsilon()
    if n_samples >= private_radius_min_samples(svt_epsilon):
        return share, "sparse_vector"
    return EM_RADIUS_SHARE, "exponential"


def plan_unbounded_radius(mechanism, budget, n_samples):
    # The "unbounded" policy's epsilon; checks the exponential's minimum n.
    if mechanism == "sparse_vector":
        # Sparse vector over radius counts is pure DP; under zCDP it runs
        # at the largest epsilon whose epsilon^2/2 fits the share.
        return budget.pure_epsilon()
    # The exponential mechanism over the grid of radii: pure DP at
    # epsilon, and epsilon**2/8-zCDP (bounded range), so under zCDP it
    # runs at sqrt(8 rho) for its share rho.
    epsilon_radius = budget.exponential_epsilon()
    n_min = exponential_radius_min_samples(epsilon_radius)
    if n_samples < n_min:
        raise ValueError(
            f"data_norm=None finds a row-norm bound privately, which needs "
            f"at least {n_min} samples at this privacy budget; got "
            f"{n_samples}. Pass bounds=(lower, upper) (public ranges of "
            "the features) or data_norm (a public bound on the row "
            "norms), or a larger budget."
        )
    return epsilon_radius
