"""The geometry step of a private fit: how the rows' influence is bounded.

Before it releases anything, a private fit bounds every row in one of four
ways, the *kind* of its :class:`Geometry`:

``"box"``
    Public ranges ``bounds=(lower, upper)`` of the features: each feature is
    clipped to its range and the box mapped onto ``[-1, 1]^d``, its unit
    coordinates, where a row has norm at most ``sqrt(d)``.
``"ball"``
    A public bound ``data_norm`` on the row norms.
``"private_ranges"``
    ``bounds="private"``: the box is found privately with a share of the
    budget (:data:`RANGES_SHARE`) by the mechanisms of
    :mod:`dpcov.mechanisms._ranges` (a private median, a second one measured
    from the first, then a private spread about it, per feature), and the
    fit goes on as with a public box.
``"private_radius"``
    Neither: a bound on the row norms is found privately.

Every estimator runs the same step: :func:`plan_geometry` resolves the kind
from the estimator's public parameters, the budget and the shape, checks that
there are enough rows, and splits the budget between the geometry's steps
and the release; :func:`release_ranges` and :func:`release_radius` spend the
geometry's share; the :class:`Geometry`'s maps take rows into the unit
coordinates and the release back to the original units.

The private radius follows one of two policies (``radius``): ``"unbounded"``
(the covariance estimators, hence PCA: only without a public bound) and
``"inside"`` (linear discriminant analysis: always, below the public bound),
planned by :mod:`dpcov.utils._private_radius`.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from dataclasses import dataclass, replace

import numpy as np

from ..accounting import split_budget
from ..mechanisms import (
    DEFAULT_RADIUS_GRID,
    private_radius_exponential,
    private_radius_from_counts,
)
from ._private_radius import (
    plan_radius_inside,
    plan_unbounded_radius,
    unbounded_radius_share,
)
from ._private_ranges import (
    RANGES_SHARE,
    RangesPlan,
    plan_private_ranges,
    release_private_ranges,
    split_ranges_budget,
)
from .validation import check_bounds, to_unit_box, unit_box

#: The geometry's own steps in a fit's budget split, in their order.
GEOMETRY_STEPS = ("bounds", "radius")


@dataclass(frozen=True, eq=False)
class Geometry:
    """The resolved geometry of a fit: every field is public.

    Parameters
    ----------
    kind : {"box", "ball", "private_ranges", "private_radius"}
        How the rows are bounded (see :mod:`dpcov.utils._geometry`).
    n_samples : int
        Number of rows (public under replace-one neighbours).
    n_features : int
        Number of features ``d``.
    split : dict of str to PureDP or ZCDP
        The budget of the geometry's own steps, in the fit's order:
        ``"bounds"`` (the private ranges) and ``"radius"`` (the private
        radius), each when there is one.
    box : tuple of ndarray or None
        The checked public box, or the private ranges once released
        (:func:`release_ranges`); None without a box.
    data_norm : float or None
        The public bound on the row norms: ``data_norm``, or ``sqrt(d)`` in
        a box's unit coordinates; None without one.
    ranges : RangesPlan or None
        The plan of the private ranges.
    radius_mechanism : {"sparse_vector", "exponential"} or None
        How the private radius is found; None without one.
    epsilon_radius : float or None
        The private radius's epsilon.
    radius_grid : ndarray or None
        The private radius's candidates, decreasing.
    """

    kind: str
    n_samples: int
    n_features: int
    split: dict
    box: tuple = None
    data_norm: float = None
    ranges: RangesPlan = None
    radius_mechanism: str = None
    epsilon_radius: float = None
    radius_grid: np.ndarray = None

    @property
    def find_radius(self):
        """Whether the fit finds a row-norm bound privately."""
        return self.radius_mechanism is not None

    @property
    def half_widths(self):
        """The box's half-widths: the scale of each unit coordinate."""
        return unit_box(*self.box)[1]

    def to_unit(self, X):
        """Dense rows clipped to the box, in its unit coordinates ``[-1, 1]^d``.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Dense rows, in original units.

        Returns
        -------
        unit : ndarray of shape (n_samples, n_features)
            The clipped rows in unit coordinates: norms at most ``sqrt(d)``.
        """
        return to_unit_box(X, *self.box)

    def from_unit(self, location):
        """A location (or rows of them) in unit coordinates, in original units.

        Parameters
        ----------
        location : ndarray of shape (n_features,) or (n_locations, n_features)
            A release in unit coordinates (a mean, the class means).

        Returns
        -------
        location : ndarray of the same shape
            ``center + half_width * location`` (post-processing).
        """
        center, half = unit_box(*self.box)
        return center + half * location

    def from_unit_scatter(self, matrix):
        """A covariance or second moment in unit coordinates, in original units.

        Parameters
        ----------
        matrix : ndarray of shape (n_features, n_features)
            A release in unit coordinates.

        Returns
        -------
        matrix : ndarray of shape (n_features, n_features)
            ``diag(half_width) @ matrix @ diag(half_width)`` (post-processing).
        """
        half = unit_box(*self.box)[1]
        return matrix * np.outer(half, half)


def check_one_bound(bounds, data_norm):
    """Refuse ``bounds`` and ``data_norm`` together (a message of public values).

    Parameters
    ----------
    bounds : tuple, "private" or None
        The estimator's ``bounds``.
    data_norm : float or None
        The estimator's ``data_norm``.

    Raises
    ------
    ValueError
        If both are given.
    """
    if bounds is not None and data_norm is not None:
        raise ValueError(
            "Pass either data_norm (a bound on the row norms) or bounds "
            "(per-feature ranges), not both."
        )


def norm_bound(bounds, data_norm, n_features):
    """The public bound on the row norms (None without one).

    Parameters
    ----------
    bounds : tuple, "private" or None
        The estimator's ``bounds``.
    data_norm : float or None
        The estimator's ``data_norm``.
    n_features : int
        Number of features ``d``.

    Returns
    -------
    bound : float or None
        ``sqrt(d)`` with ``bounds`` (public or private: the rows' bound in
        the box's unit coordinates), else ``data_norm`` (original units).
    """
    if bounds is not None:
        return float(np.sqrt(n_features))
    return None if data_norm is None else float(data_norm)


def split_geometry_budget(budget, shares, *, private_ranges, ranges_first=True):
    """The budget of each step: the private ranges' (``"bounds"``), then ``shares``.

    Parameters
    ----------
    budget : PureDP or ZCDP
        The fit's whole budget.
    shares : dict of str to float or None
        The other steps and their shares; one share may be None, for what
        the others leave.
    private_ranges : bool
        Whether the fit finds its ranges privately (:data:`RANGES_SHARE`).
    ranges_first : bool, default=True
        With private ranges, whether they take their share first and
        ``shares`` split what they leave (two splits), or ``shares`` are of
        the whole budget, split once with theirs.

    Returns
    -------
    split : dict of str to PureDP or ZCDP
        They compose to ``budget``.
    """
    if private_ranges and ranges_first:
        ranges, rest = split_ranges_budget(budget)
        return {"bounds": ranges, **_split_shares(rest, shares)}
    if private_ranges:
        shares = {"bounds": RANGES_SHARE, **shares}
    return _split_shares(budget, shares)


def _split_shares(budget, shares):
    # The budget split by shares, None taking what the others leave (summed
    # in their order); a single None step takes the budget as it is, and no
    # step nothing.
    if not shares:
        return {}
    if list(shares.values()) == [None]:
        return {name: budget for name in shares}
    left = 1.0 - sum(share for share in shares.values() if share is not None)
    return split_budget(
        budget,
        {name: left if share is None else share for name, share in shares.items()},
    )


def _kind(bounds, data_norm):
    # The kind of geometry the parameters ask for.
    if isinstance(bounds, str):
        return "private_ranges"
    if bounds is not None:
        return "box"
    return "private_radius" if data_norm is None else "ball"


def plan_geometry(
    budget,
    n_samples,
    n_features,
    *,
    bounds,
    data_norm=None,
    shares,
    radius=None,
    even_radius=False,
    ranges_first=True,
    name=None,
    ranges_name="bounds='private'",
):
    """The geometry of a fit and the budget of its release, from public values.

    Checks ``bounds`` and ``data_norm`` (not both; a box's values), picks
    the private radius's mechanism, splits the budget, and checks that there
    are enough rows for the private radius and ranges. Nothing is read.

    Parameters
    ----------
    budget : PureDP or ZCDP
        The fit's whole budget.
    n_samples, n_features : int
        The shape of the input (public).
    bounds : tuple (lower, upper), "private" or None
        The estimator's ``bounds``.
    data_norm : float or None, default=None
        The estimator's ``data_norm``.
    shares : dict of str to float or None
        The release's steps and their shares (one may be None, for what the
        others leave; see :func:`split_geometry_budget`), and, under the
        ``"inside"`` policy, ``"radius"``. Empty when the fit releases
        nothing: the geometry then takes no share (a box is only checked;
        no ranges or radius are planned).
    radius : {None, "unbounded", "inside"}, default=None
        The private radius's policy (see :mod:`dpcov.utils._geometry`);
        None finds none.
    even_radius : bool, default=False
        Under the ``"unbounded"`` policy, whether the sparse vector takes
        the exponential mechanism's share (``EM_RADIUS_SHARE``): a fit
        calibrated on its composed curve, whose plan must not depend on
        ``n_samples``.
    ranges_first : bool, default=True
        How the private ranges' share composes with ``shares``
        (:func:`split_geometry_budget`): the covariance estimators' shares
        are of the whole budget (False), the others' of what the ranges
        leave.
    name : str, default=None
        The estimator, for the ``"inside"`` radius's message.
    ranges_name : str, default="bounds='private'"
        What the private ranges' message names.

    Returns
    -------
    geometry : Geometry
        Its ``split`` holds the geometry's own steps.
    release : dict of str to PureDP or ZCDP
        The budget of each of the release's steps (``shares``'s others).

    Raises
    ------
    ValueError
        For both ``bounds`` and ``data_norm``, a box that is not one, or
        fewer rows than the private radius or ranges need at this budget
        (the messages give public values only).
    """
    check_one_bound(bounds, data_norm)
    box = None
    if bounds is not None and not isinstance(bounds, str):
        box = check_bounds(bounds, n_features)
    bound = norm_bound(bounds, data_norm, n_features)
    mechanism, shares = None, dict(shares)
    if shares and radius == "unbounded" and bound is None:
        share, mechanism = unbounded_radius_share(budget, n_samples, even=even_radius)
        shares = {"radius": share, **shares}
    elif shares and radius == "inside":
        mechanism = "exponential"
    private_ranges = bool(shares) and isinstance(bounds, str)
    split = split_geometry_budget(
        budget, shares, private_ranges=private_ranges, ranges_first=ranges_first
    )
    epsilon, grid = None, None
    if radius == "inside" and mechanism is not None:
        epsilon, grid = plan_radius_inside(split["radius"], n_samples, bound, name=name)
    elif mechanism is not None:
        epsilon = plan_unbounded_radius(mechanism, split["radius"], n_samples)
        grid = DEFAULT_RADIUS_GRID
    ranges = None
    if private_ranges:
        ranges = plan_private_ranges(
            split["bounds"], n_samples, n_features, name=ranges_name
        )
    geometry = Geometry(
        kind=_kind(bounds, data_norm),
        n_samples=n_samples,
        n_features=n_features,
        split={step: split[step] for step in GEOMETRY_STEPS if step in split},
        box=box,
        data_norm=bound,
        ranges=ranges,
        radius_mechanism=mechanism,
        epsilon_radius=epsilon,
        radius_grid=grid,
    )
    release = {step: part for step, part in split.items() if step not in GEOMETRY_STEPS}
    return geometry, release


def release_ranges(geometry, X, first, *, rng):
    """The geometry with its private ranges released (its ``"bounds"`` share).

    Parameters
    ----------
    geometry : Geometry
        Of kind ``"private_ranges"``, planned (``geometry.ranges``).
    X : ndarray, sparse matrix or dask.array.Array of shape (n_samples, d)
        The rows.
    first : tuple
        :func:`ranges_first_pass` of ``X``, read before the budget was spent.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    geometry : Geometry
        The same, its ``box`` the private ranges.
    """
    box = release_private_ranges(X, geometry.ranges, first, rng=rng)
    return replace(geometry, box=box)


def release_radius(geometry, counts, *, rng):
    """The private radius (its ``"radius"`` share), from the norm counts.

    Parameters
    ----------
    geometry : Geometry
        With a private radius (``geometry.find_radius``).
    counts : ndarray or None
        ``radius_counts`` of the rows' norms on ``geometry.radius_grid``
        (never released); None when the grid is its bound alone (the
        ``"inside"`` policy with a bound below the grid), which is then the
        radius.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    radius : float
        A point of the grid.
    """
    if counts is None:
        return float(geometry.radius_grid[0])
    if geometry.radius_mechanism == "sparse_vector":
        return private_radius_from_counts(
            counts, epsilon=geometry.epsilon_radius, rng=rng
        )
    return private_radius_exponential(
        counts,
        geometry.n_samples,
        epsilon=geometry.epsilon_radius,
        rng=rng,
        grid=geometry.radius_grid,
    )
