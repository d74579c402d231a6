"""The geometry step: kinds, budget shares, refusals, radius policies, maps."""

import math

import numpy as np
import pytest

from dpcov.accounting import ZCDP, PureDP, compose, split_budget
from dpcov.mechanisms import (
    DEFAULT_RADIUS_GRID,
    private_radius_exponential,
    private_radius_from_counts,
    private_radius_min_samples,
    radius_counts,
)
from dpcov.utils._geometry import (
    norm_bound,
    plan_geometry,
    release_radius,
    split_geometry_budget,
)
from dpcov.utils._private_radius import EM_RADIUS_SHARE, RADIUS_SHARE
from dpcov.utils._private_ranges import RANGES_SHARE

BUDGET = ZCDP(0.5)


def _plan(bounds=None, data_norm=None, n_samples=10**6, n_features=3, **kwargs):
    kwargs.setdefault("shares", {"release": None})
    return plan_geometry(
        BUDGET, n_samples, n_features, bounds=bounds, data_norm=data_norm, **kwargs
    )


@pytest.mark.parametrize(
    "bounds, data_norm, kind",
    [
        ((-1.0, 1.0), None, "box"),
        (None, 2.0, "ball"),
        ("private", None, "private_ranges"),
        (None, None, "private_radius"),
    ],
)
def test_kind_follows_the_parameters(bounds, data_norm, kind):
    geometry, _ = _plan(bounds, data_norm, radius="unbounded")
    assert geometry.kind == kind
    # The public bound on the row norms: sqrt(d) in a box's unit coordinates.
    expected = {"box": math.sqrt(3), "private_ranges": math.sqrt(3), "ball": 2.0}
    assert geometry.data_norm == expected.get(kind)
    assert geometry.find_radius == (kind == "private_radius")
    assert (geometry.ranges is not None) == (kind == "private_ranges")
    assert (geometry.box is not None) == (kind == "box")


def test_bounds_and_data_norm_are_refused_together():
    with pytest.raises(ValueError, match="not both"):
        _plan((-1.0, 1.0), 1.0)
    with pytest.raises(ValueError, match="not both"):
        _plan("private", 1.0)


def test_a_public_box_is_checked_against_the_width():
    with pytest.raises(ValueError, match=r"expected a scalar or shape \(3,\)"):
        _plan(([0.0, 0.0], [1.0, 1.0]))
    geometry, _ = _plan(([0.0, 0.0, 0.0], [1.0, 2.0, 4.0]))
    np.testing.assert_array_equal(geometry.half_widths, [0.5, 1.0, 2.0])


def test_unbounded_radius_by_sparse_vector_with_enough_rows():
    geometry, release = _plan(radius="unbounded", shares={"covariance": None})
    assert geometry.radius_mechanism == "sparse_vector"
    assert geometry.split["radius"].rho == pytest.approx(RADIUS_SHARE * BUDGET.rho)
    assert geometry.epsilon_radius == geometry.split["radius"].pure_epsilon()
    assert list(release) == ["covariance"]
    assert compose([*geometry.split.values(), *release.values()]).rho <= BUDGET.rho


def test_unbounded_radius_by_the_exponential_mechanism_with_fewer_rows():
    # Sparse vector needs 974 rows at 1/8 of rho = 0.5, the exponential
    # mechanism 60 at 3/16.
    n_samples = private_radius_min_samples(BUDGET.fraction(RADIUS_SHARE).pure_epsilon())
    geometry, _ = _plan(n_samples=n_samples - 1, radius="unbounded")
    assert geometry.radius_mechanism == "exponential"
    assert geometry.split["radius"].rho == pytest.approx(EM_RADIUS_SHARE * BUDGET.rho)
    assert geometry.epsilon_radius == geometry.split["radius"].exponential_epsilon()
    np.testing.assert_array_equal(geometry.radius_grid, DEFAULT_RADIUS_GRID)


def test_unbounded_radius_refuses_too_few_rows():
    with pytest.raises(ValueError, match=r"data_norm=None finds a row-norm bound"):
        _plan(n_samples=20, radius="unbounded")


@pytest.mark.parametrize("bounds, data_norm", [((-1.0, 1.0), None), (None, 2.0)])
def test_unbounded_policy_finds_no_radius_with_a_public_bound(bounds, data_norm):
    geometry, release = _plan(bounds, data_norm, radius="unbounded")
    assert not geometry.find_radius
    assert geometry.split == {}
    assert release == {"release": BUDGET}


def test_inside_radius_is_found_below_the_public_bound_with_its_own_share():
    shares = {"radius": 0.1, "means": 0.2, "covariance": 0.7}
    geometry, release = _plan(None, 5.0, radius="inside", shares=shares, name="E")
    assert geometry.kind == "ball"
    assert geometry.radius_mechanism == "exponential"
    assert geometry.radius_grid[0] == 5.0
    assert np.all(geometry.radius_grid[1:] < 5.0)
    assert geometry.split == {"radius": split_budget(BUDGET, shares)["radius"]}
    assert list(release) == ["means", "covariance"]
    # Without a bound: the whole grid.
    geometry, _ = _plan(radius="inside", shares=shares, name="E")
    np.testing.assert_array_equal(geometry.radius_grid, DEFAULT_RADIUS_GRID)


def test_inside_radius_refuses_too_few_rows_naming_the_estimator():
    with pytest.raises(ValueError, match=r"^Estimator finds a row-norm bound"):
        _plan(
            n_samples=20,
            radius="inside",
            shares={"radius": 0.1, "rest": 0.9},
            name="Estimator",
        )


def test_inside_radius_below_the_grid_is_the_bound():
    # A bound below the grid's smallest point: the grid is the bound alone,
    # no rows are needed and the radius is the bound.
    geometry, _ = _plan(
        None, 2.0**-40, n_samples=2, radius="inside", shares={"radius": 0.1, "r": 0.9}
    )
    assert geometry.radius_grid.size == 1
    assert release_radius(geometry, None, rng=None) == 2.0**-40


@pytest.mark.parametrize("budget", [ZCDP(0.5), PureDP(1.0)])
def test_private_ranges_take_a_quarter_first_or_flat(budget):
    shares = {"mean": 0.125, "covariance": None}
    # Flat (the covariance estimators): one split of the whole budget.
    split = split_geometry_budget(
        budget, shares, private_ranges=True, ranges_first=False
    )
    assert split == split_budget(
        budget, {"bounds": RANGES_SHARE, "mean": 0.125, "covariance": 0.625}
    )
    # Ranges first (the others): the shares split what the ranges leave.
    split = split_geometry_budget(budget, {"a": 0.5, "b": 0.5}, private_ranges=True)
    ranges, rest = split_budget(budget, {"bounds": 0.25, "rest": 0.75}).values()
    assert split == {"bounds": ranges, **split_budget(rest, {"a": 0.5, "b": 0.5})}
    assert list(split) == ["bounds", "a", "b"]


def test_plan_splits_the_geometry_from_the_release_in_order():
    geometry, release = _plan(
        "private", shares={"mean": 0.125, "covariance": None}, ranges_first=False
    )
    assert list(geometry.split) == ["bounds"]
    assert list(release) == ["mean", "covariance"]
    parts = [*geometry.split.values(), *release.values()]
    assert compose(parts).rho <= BUDGET.rho
    assert release["covariance"].rho == pytest.approx(0.625 * BUDGET.rho)


def test_private_ranges_refuse_too_few_rows_with_the_name_given():
    with pytest.raises(ValueError, match=r"^bounds='private' finds the range"):
        _plan("private", n_samples=30)
    with pytest.raises(ValueError, match=r"^SimpleImputer finds the range"):
        _plan("private", n_samples=30, ranges_name="SimpleImputer")


def test_a_fit_that_releases_nothing_plans_no_geometry_share():
    # No ranges (whatever the rows), no radius, no split; a box still checked.
    geometry, release = _plan("private", n_samples=3, shares={}, radius="unbounded")
    assert geometry.ranges is None and geometry.box is None
    assert geometry.split == {} and release == {}
    geometry, _ = _plan(n_samples=3, shares={}, radius="unbounded")
    assert not geometry.find_radius
    with pytest.raises(ValueError, match="bounds"):
        _plan(([0.0], [1.0, 2.0]), shares={})


def test_a_single_open_share_takes_the_whole_budget():
    _, release = _plan((-1.0, 1.0))
    assert release["release"] is BUDGET


def test_norm_bound():
    assert norm_bound((0, 1), None, 4) == 2.0
    assert norm_bound(None, 3, 4) == 3.0
    assert norm_bound(None, None, 4) is None


def test_maps_to_unit_coordinates_and_back():
    lower, upper = np.array([0.0, -10.0]), np.array([2.0, 30.0])
    geometry, _ = _plan((lower, upper), n_features=2)
    X = np.array([[1.0, 10.0], [2.0, -10.0], [5.0, 50.0]])
    unit = geometry.to_unit(X)
    np.testing.assert_array_equal(unit, [[0.0, 0.0], [1.0, -1.0], [1.0, 1.0]])
    np.testing.assert_allclose(geometry.from_unit(unit), np.clip(X, lower, upper))
    matrix = np.array([[1.0, 0.5], [0.5, 2.0]])
    half = np.diag([1.0, 20.0])
    np.testing.assert_allclose(geometry.from_unit_scatter(matrix), half @ matrix @ half)


@pytest.mark.parametrize(
    "n_samples, mechanism", [(500, "exponential"), (10**6, "sparse_vector")]
)
def test_release_radius_is_the_planned_mechanism(n_samples, mechanism):
    geometry, _ = _plan(n_samples=n_samples, radius="unbounded")
    assert geometry.radius_mechanism == mechanism
    norms = np.random.default_rng(0).uniform(0.0, 3.0, n_samples)
    counts = radius_counts(norms)
    radius = release_radius(geometry, counts, rng=np.random.default_rng(1))
    epsilon = geometry.epsilon_radius
    if mechanism == "sparse_vector":
        expected = private_radius_from_counts(
            counts, epsilon=epsilon, rng=np.random.default_rng(1)
        )
    else:
        expected = private_radius_exponential(
            counts, n_samples, epsilon=epsilon, rng=np.random.default_rng(1)
        )
    assert radius == expected
