"""The private radius's plan: its grid, share, mechanism and fewest rows."""

import numpy as np
import pytest

from dpcov.accounting import ZCDP, PureDP
from dpcov.mechanisms import (
    DEFAULT_RADIUS_GRID,
    exponential_radius_min_samples,
    private_radius_min_samples,
)
from dpcov.utils._private_radius import (
    EM_RADIUS_SHARE,
    RADIUS_SHARE,
    plan_radius_inside,
    plan_unbounded_radius,
    radius_grid,
    unbounded_radius_share,
)

BUDGET = ZCDP(0.5)


def test_radius_grid_is_the_bound_then_the_powers_of_two_below():
    grid = radius_grid(3.0)
    assert grid[0] == 3.0 and grid[1] == 2.0 and np.all(np.diff(grid) < 0)
    assert np.array_equal(radius_grid(None), DEFAULT_RADIUS_GRID)


def test_unbounded_share_is_sparse_vector_from_its_fewest_rows():
    # Sparse vector at RADIUS_SHARE from the rows it needs at that share;
    # below them, the exponential mechanism at the larger EM_RADIUS_SHARE.
    n_min = private_radius_min_samples(BUDGET.fraction(RADIUS_SHARE).pure_epsilon())
    assert unbounded_radius_share(BUDGET, n_min) == (RADIUS_SHARE, "sparse_vector")
    assert unbounded_radius_share(BUDGET, n_min - 1) == (
        EM_RADIUS_SHARE,
        "exponential",
    )


def test_unbounded_epsilon_per_mechanism():
    share = BUDGET.fraction(EM_RADIUS_SHARE)
    assert plan_unbounded_radius("sparse_vector", share, 10**6) == share.pure_epsilon()
    # The exponential mechanism is epsilon**2 / 8-zCDP (bounded range).
    assert plan_unbounded_radius("exponential", share, 10**6) == (
        share.exponential_epsilon()
    )
    with pytest.raises(ValueError, match="needs at least .* samples"):
        plan_unbounded_radius("exponential", share, 10)


def test_inside_plan_checks_its_rows_and_names_the_estimator():
    share = PureDP(0.1)
    epsilon, grid = plan_radius_inside(share, 10**6, 4.0, name="LDA")
    assert epsilon == share.exponential_epsilon()
    assert grid[0] == 4.0
    n_min = exponential_radius_min_samples(epsilon, grid=grid)
    with pytest.raises(ValueError, match=rf"^LDA finds .* at least {n_min} samples"):
        plan_radius_inside(share, n_min - 1, 4.0, name="LDA")
    # A bound below the grid is the only candidate: nothing to check.
    _, grid = plan_radius_inside(share, 1, 2.0**-40, name="LDA")
    assert grid.size == 1
