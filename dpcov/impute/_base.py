"""A private imputer: missing cells filled with private per-feature statistics.

scikit-learn's :class:`~sklearn.impute.SimpleImputer` reads every observed
cell without privacy; :class:`SimpleImputer` here releases its statistics
under a stated guarantee, so a raw table with missing cells can enter a
private pipeline. The number of observed cells of a column is data (one row
can turn a missing cell into an observed one), and the mechanisms treat it
so.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from dataclasses import dataclass, replace
from functools import cache
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..accounting import compose, split_budget
from ..base import PRIVACY_PARAMETER_CONSTRAINTS, ErrorBarsMixin, PrivateEstimatorMixin
from ..mechanisms import AdditiveNoise, calibrate_additive, private_median
from ..mechanisms._sensitivity import observed_sums_sensitivities
from ..utils._columns import column_observed_sums, column_rank_counts
from ..utils._docstrings import fill_doc
from ..utils._error_bars import N_DRAWS, feature_blocks, noise_draws
from ..utils._geometry import plan_geometry, release_ranges
from ..utils._gram import is_dask_array
from ..utils._gram._dask import rows_in_blocks
from ..utils._gram._units import (
    UnitRows,
    check_group_parameters,
    check_unit_input,
    persons_in_messages,
)
from ..utils._input import validate_rows
from ..utils._private_count import (
    UNBINDING_COUNT,
    release_count,
    split_count,
)
from ..utils._private_ranges import check_bounds_without_rows, ranges_first_pass
from ..utils._random import spawn_generators
from ..utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_params_always,
)
from ..utils.validation import unit_box

__all__ = ["SimpleImputer", "mean_noise"]

#: Candidates of the median strategy: this many equal steps across the range.
MEDIAN_STEPS = 1024
#: Weight of the counts in the mean's joint release, by noise law (see
#: :func:`mean_noise`).
COUNT_WEIGHT = {"gaussian": math.sqrt(3.0), "laplace": 1.0}


def mean_noise(budget, n_features):
    """Calibrated noise of the mean strategy's release, and the counts' weight.

    The release is the vector ``(S, w N)``: per column, ``S_j`` the sum over
    the observed cells of the unit coordinates ``z = (clip(x) - c) / h`` (in
    ``[-1, 1]``) and ``N_j`` the number of observed cells. Replacing one row
    changes column ``j``'s pair by ``(z' - z, 0)`` when both cells are
    observed (``|z' - z| <= 2``), by ``(+-z, +-1)`` when one of them is
    missing, and by nothing when both are. Its L2 norm is at most
    ``max(2, sqrt(1 + w**2))`` = 2 for ``w = sqrt(3)``, and its L1 norm at
    most ``max(2, 1 + w)`` = 2 for ``w = 1``: the vector has L2 sensitivity
    ``2 sqrt(d)`` (Gaussian, ``w = sqrt(3)``) and L1 sensitivity ``2 d``
    (Laplace, ``w = 1``), the sums' own, so the counts cost nothing extra.

    Parameters
    ----------
    budget : ZCDP or PureDP
        The budget of the release.
    n_features : int
        Number of columns ``d``.

    Returns
    -------
    weight : float
        ``w``.
    noise : AdditiveNoise
        The noise of each coordinate of ``(S, w N)``.
    """
    l2, l1 = observed_sums_sensitivities(n_features)
    noise = calibrate_additive(budget, l2_sensitivity=l2, l1_sensitivity=l1)
    return COUNT_WEIGHT[noise.law], noise


@fill_doc
class SimpleImputer(
    ErrorBarsMixin,
    PrivateEstimatorMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Fill missing cells with private per-feature statistics.

    A drop-in for :class:`sklearn.preprocessing.SimpleImputer` (numeric
    columns) whose statistics are released under differential privacy: the
    mean (``strategy="mean"``) or median (``"median"``) of each feature's
    observed cells, clipped to a range, or a public constant
    (``"constant"``, which reads nothing and costs nothing). With
    ``delta > 0`` or ``rho`` set the fit is rho-zCDP (hence
    (``epsilon``, ``delta``)-DP), with ``delta=0`` pure ``epsilon``-DP, with
    respect to replacing one row (its missing cells included), or one
    person with ``groups``, and to adding or removing one with
    ``neighbours="add_remove"``.

    The ranges are public ``bounds`` or, by default, found privately from a
    quarter of the budget (as ``bounds="private"`` does on the other
    estimators; see :ref:`private_ranges`), over the observed cells.

    Read more in the :ref:`User Guide <raw_table>`.

    Parameters
    ----------
    strategy : {{"mean", "median", "constant"}}, default="mean"
        The statistic that fills a feature's missing cells.
    {epsilon}
    {delta}
    {rho}
    bounds : tuple (lower, upper), "private" or None, default=None
        Public ranges of the features (scalars or arrays of shape
        ``(n_features,)``, ``lower < upper``, from knowledge of the domain);
        observed values are clipped to them. ``None`` or ``"private"``:
        found privately with a quarter of the budget (``budget_split_["bounds"]``),
        which needs a few thousand rows at ``epsilon=1`` (``fit`` says how
        many). Unused with ``strategy="constant"``.
    missing_values : float, default=np.nan
        The marker of a missing cell: NaN, or a number (then NaN is refused,
        as scikit-learn's imputer does).
    fill_value : float, default=None
        The constant of ``strategy="constant"`` (None: 0).
    max_rows_per_group : int, default=None
        Public bound ``k`` on the rows one person contributes, with
        ``groups`` passed to ``fit``: the privacy unit is then the person.
        At most ``k`` rows of each person are kept, at random. For the mean,
        each person contributes the average over its rows of each column's
        clipped observed value and of its observed indicator (in one row's
        ranges), so the noise is unchanged and the mean weighs persons. For
        the median and the private ranges, each person counts at most 1 in
        every rank count (its rows weigh ``2**-e`` each, ``e = ceil(log2
        k_p)``), so the scores keep sensitivity 1. See :ref:`privacy_units`.
    neighbours : {{"replace", "add_remove"}}, default="replace"
        The neighbouring relation. ``"add_remove"``: one unit (a row, or a
        person with ``groups``) added or removed, so their number is
        private. The imputer reads no count: adding or removing a unit moves
        a column's (sum, weighted count) pair by at most ``(1, w)``, within
        the replace-one bound :func:`mean_noise` calibrates to, and the
        median's scores by at most 1/2 (its observed count by 1/2 and its
        rank counts by at most 1, in the same direction); so nothing is
        spent on a count and the fit holds under both relations. With
        private ranges (``bounds=None`` or ``"private"``) their plan needs
        the number of units: a noisy count (1/16 of the budget) is released
        first for it.
    copy : bool, default=True
        If False, ``transform`` fills in place when the input is a writeable
        float array.
    {accountant}
    {random_state}

    Attributes
    ----------
    statistics_ : ndarray of shape (n_features,)
        The fill value of each feature (a private release, inside
        ``bounds_``, for ``"mean"`` and ``"median"``).
    bounds_ : tuple of ndarray or None
        The ranges the statistics were computed in: ``bounds`` validated, or
        the private ranges (a release); None with ``strategy="constant"``
        and no ``bounds``.
    guarantee_ : dpcov.accounting.PureDP or dpcov.accounting.ZCDP
        The guarantee of the fit (zero with ``strategy="constant"``).
    privacy_unit_ : {"row", "person"}
        Whom the guarantee protects: a row, or a person (a fit with
        ``groups`` and ``max_rows_per_group``; see :ref:`privacy_units`).
    neighbours_ : {"replace", "add_remove"}
        The neighbouring relation the guarantee holds under (an
        ``"add_remove"`` fit holds under replacement too).
    epsilon_spent_ : float
        Epsilon of the guarantee.
    delta_spent_ : float
        Delta of the guarantee.
    rho_spent_ : float
        The zCDP parameter of the guarantee.
    budget_split_ : dict of str to PureDP or ZCDP
        Budget of each step (``"bounds"``, ``"statistics"``); they compose
        to ``guarantee_``.
    noise_sampler_ : str
        The sampler of the fit's noise (``"numpy"`` or ``"discrete"``).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    sklearn.impute.SimpleImputer : The non-private imputer.
    dpcov.preprocessing.StandardScaler : Private standardisation, which
        refuses missing cells.

    Notes
    -----
    **Privacy unit.** Neighbouring datasets differ in one row, its missing
    cells included (a row may turn an observed cell into a missing one);
    ``n_samples`` and ``n_features`` are public, the number of observed
    cells of each feature is not. With ``groups``, one person's rows
    replace another's (the number of persons is public, the rows' is not);
    with ``neighbours="add_remove"``, a unit is added or removed and their
    number is private too (see :ref:`privacy_units`).

    **Mean.** The vector ``(S, w N)`` of the sums ``S_j`` of the observed
    unit coordinates and the observed counts ``N_j`` is released by one
    Gaussian (zCDP) or Laplace (pure DP) mechanism whose sensitivity is that
    of the sums alone (:func:`mean_noise` derives it); the mean is
    ``clip(S~ / max(N~, 1), -1, 1)`` mapped back to the range
    (post-processing).

    **Median.** For each feature, the exponential mechanism (McSherry and
    Talwar, 2007) over ``1025`` equally spaced candidates of its range,
    scored as :func:`dpcov.mechanisms.private_median` with the observed count
    ``N_j`` in place of ``n`` (still sensitivity 1: a cell going missing
    moves ``N_j / 2`` by 1/2 and the counts by at most 1 in the same
    direction); the budget is split evenly between the features.

    **Transform.** ``transform`` replaces the missing cells of the rows it
    is given with ``statistics_`` (post-processing of the release); it does
    not clip the other cells.

    A feature with no observed cell gets a fill that is noise: with private
    ranges, a value drawn from the public grid (possibly far from zero);
    with public ranges, a value inside them. Give such a feature public
    ``bounds``, or drop it.

    Unlike scikit-learn's imputer there is no ``add_indicator`` (the missing
    pattern of the transformed rows is the user's own, but its statistics
    would need a budget) and no ``"most_frequent"`` strategy.

    References
    ----------
    .. [1] McSherry, F. and Talwar, K. "Mechanism Design via Differential
       Privacy". FOCS 2007.
    .. [2] Bun, M. and Steinke, T. "Concentrated Differential Privacy:
       Simplifications, Extensions, and Lower Bounds". TCC 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.impute import SimpleImputer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal([50.0, 0.5], [10.0, 0.1], size=(5000, 2))
    >>> X[rng.random(X.shape) < 0.1] = np.nan
    >>> imputer = SimpleImputer(epsilon=1.0, bounds=([0.0, 0.0], [100.0, 1.0]),
    ...                         random_state=0).fit(X)
    >>> np.round(imputer.statistics_, 1)
    array([50.2,  0.5])
    >>> bool(np.isnan(imputer.transform(X)).any())
    False
    """

    # Every mechanism has an exact sampler (secure_noise; read by _check_budget).
    _hardened_noise = True

    _parameter_constraints: dict = {
        "strategy": [StrOptions({"mean", "median", "constant"})],
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "bounds": ["array-like", StrOptions({"private"}), None],
        "missing_values": [Real],
        "fill_value": [Real, None],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "neighbours": [StrOptions({"replace", "add_remove"})],
        "copy": ["boolean"],
    }

    def __init__(
        self,
        *,
        strategy="mean",
        epsilon=1.0,
        delta=1e-6,
        rho=None,
        bounds=None,
        missing_values=np.nan,
        fill_value=None,
        max_rows_per_group=None,
        neighbours="replace",
        copy=True,
        accountant=None,
        random_state=None,
    ):
        self.strategy = strategy
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.bounds = bounds
        self.missing_values = missing_values
        self.fill_value = fill_value
        self.max_rows_per_group = max_rows_per_group
        self.neighbours = neighbours
        self.copy = copy
        self.accountant = accountant
        self.random_state = random_state

    def privacy_cost(self):
        """The guarantee a fit spends with the current parameters.

        Computed from the parameters only (no data): zero (in the notion the
        parameters select) with ``strategy="constant"``.

        Returns
        -------
        guarantee : dpcov.accounting.PureDP or dpcov.accounting.ZCDP
            The guarantee of one fit.
        """
        cost = super().privacy_cost()
        if self.strategy == "constant":
            return type(cost)(0.0)
        return cost

    def _nan_marks_missing(self):
        return isinstance(self.missing_values, Real) and math.isnan(self.missing_values)

    def _validate(self, X, *, reset, method):
        # Rows with NaN marking the missing cells (a copy when another marker
        # is replaced by NaN; a Dask array stays lazy).
        nan_marks = self._nan_marks_missing()
        X = validate_rows(
            self,
            X,
            reset=reset,
            accept_dask=True,
            method=method,
            allow_nan=nan_marks,
        )
        if not nan_marks:
            if is_dask_array(X):
                # NaN must be refused and the marker turned into NaN: Dask
                # checks entries only in the passes, which accept NaN.
                raise ValueError(
                    f"{type(self).__name__} takes a number as missing_values on "
                    "in-memory input only; mark the missing cells of a Dask "
                    "array with NaN (missing_values=np.nan)."
                )
            marker = float(self.missing_values)
            X = np.where(X == marker, np.nan, X).astype(X.dtype, copy=False)
        return X

    def _check_before_spending(
        self, n_samples, y=None, *, n_features=None, n_rows=None
    ):
        """The fit's checks of public values that need no row, before any release.

        The parameters, the budget, a public box's values, and the rows the
        private ranges need: for ``n_features`` features when the width is
        known (the first step of a :class:`~dpcov.pipeline.PrivatePipeline`),
        else, with ``bounds="private"``, for one feature (a later step with
        ``bounds=None`` may receive its box from upstream). A refusal here
        spends nothing.
        """
        check_params_always(self)
        budget = self._check_budget()
        if self.strategy == "constant":
            return
        if n_features is not None:
            self._plan(budget, n_samples, n_features)
        else:
            check_bounds_without_rows(
                self.bounds, n_samples, budget, name=type(self).__name__
            )

    def _plan(self, budget, n_samples, n_features, *, release=True):
        # The geometry step: the box (public, or by default the private
        # ranges, with a quarter of the budget) and the statistics' budget;
        # without a release, a public box is only checked.
        bounds = "private" if self.bounds is None else self.bounds
        return plan_geometry(
            budget,
            n_samples,
            n_features,
            bounds=bounds,
            shares={"statistics": None} if release else {},
            ranges_name=type(self).__name__,
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, groups=None):
        """Release the private statistics of each feature's observed cells.

        Parameters
        ----------
        X : array-like or dask.array.Array of shape (n_samples, n_features)
            Training data, with missing cells marked by ``missing_values``;
            never modified. A Dask array is reduced by Dask, without loading
            it.
        y : Ignored
            Not used, present for API consistency by convention.
        groups : array-like of shape (n_samples,), default=None
            The person of each row, with ``max_rows_per_group`` set
            (``strategy="mean"``; see :ref:`privacy_units`).

        Returns
        -------
        self : object
            Fitted imputer.
        """
        name = type(self).__name__
        check_group_parameters(groups, self.max_rows_per_group, name=name)
        check_params_always(self)
        budget = self._check_budget()
        X = self._validate(X, reset=True, method="fit")
        lazy = is_dask_array(X)
        n_samples, n_features = X.shape
        if groups is not None:
            check_unit_input(X, groups, name=name)
        # A public box is checked first (and recorded by strategy="constant",
        # which releases nothing); the rest of the plan after the generator.
        geometry, _ = self._plan(budget, n_samples, n_features, release=False)
        self._mean_noise = None
        if self.strategy == "constant":
            fill = 0.0 if self.fill_value is None else float(self.fill_value)
            self._spend_budget(self.privacy_cost())
            self._record(np.full(n_features, fill), geometry.box, {})
            return self
        rng = self._noise_generator(budget)
        if groups is not None:
            # At most k rows of each person, at random: the persons are the
            # samples (their number is public, the rows' is not).
            (order,) = spawn_generators(rng, 1)
            X = UnitRows.select(X, groups, self.max_rows_per_group, order, name=name)
            n_samples = X.shape[0]
        # Under add/remove only the private ranges read a count: their
        # plan is then made at a count no minimum binds, and again at a
        # released count once the fit is recorded.
        private = self.bounds is None or isinstance(self.bounds, str)
        ranges_count = self.neighbours == "add_remove" and private
        plan_budget = split_count(budget)[1] if ranges_count else budget
        with persons_in_messages(groups is not None):
            geometry, split = self._plan(
                plan_budget, UNBINDING_COUNT if ranges_count else n_samples, n_features
            )
        if geometry.ranges is None:
            # The pass before the budget is spent (Dask: entries checked).
            read = self._read(X, geometry.box, lazy)
            self._spend_budget(budget)
        else:
            # The first count pass (Dask: infinity refused there) before the
            # budget is spent.
            first = ranges_first_pass(X, check_finite=lazy, allow_nan=True)
            self._spend_budget(budget)
            if ranges_count:
                geometry, split = self._plan_at_released_count(X, budget, rng)
            geometry = release_ranges(geometry, X, first, rng=rng)
            read = self._read(X, geometry.box, lazy)
        split = {**geometry.split, **split}
        if self.strategy == "mean":
            statistics, self._mean_noise = _draw_mean(
                *read, geometry, split["statistics"], rng
            )
        else:
            statistics = _draw_median(*read, split["statistics"], rng)
        self._record(statistics, geometry.box, split)
        return self

    def _error_bars(self, alpha):
        # statistics_ of the mean strategy (the median's exponential
        # mechanism and the constant add no noise of a public law).
        model = getattr(self, "_mean_noise", None)
        if model is None:
            return {}
        return {"statistics_": observed_mean_bars(model, alpha)}

    def _plan_at_released_count(self, X, budget, rng):
        # Add/remove with private ranges: a noisy count of the units (rows,
        # or persons), then the plan at it; a refusal for too few comes
        # after the fit is recorded and names the count as the released one.
        count, plan_budget = split_count(budget)
        _, released = release_count(X, count, rng)
        with persons_in_messages(isinstance(X, UnitRows), released=True):
            geometry, split = self._plan(plan_budget, released, X.shape[1])
        return replace(geometry, split={"count": count, **geometry.split}), split

    def _read(self, X, box, lazy):
        # The sums (mean) or rank counts (median) the release needs; over
        # persons (UnitRows), the sums of each person's averages (weights
        # 1 / k_p) or the rank counts with each person counting at most 1.
        if self.strategy == "mean":
            return column_observed_sums(X, box, check_finite=lazy)
        candidates = [
            np.unique(np.linspace(low, high, MEDIAN_STEPS + 1))
            for low, high in zip(*box, strict=True)
        ]
        counts, observed = column_rank_counts(
            X, candidates, check_finite=lazy, allow_nan=True
        )
        return candidates, counts, observed

    def _record(self, statistics, box, split):
        self.statistics_ = statistics
        self.bounds_ = box
        self._record_privacy(
            compose(split.values()) if split else self.privacy_cost(), split
        )

    def transform(self, X):
        """Fill the missing cells of X with ``statistics_``.

        Parameters
        ----------
        X : array-like or dask.array.Array of shape (n_samples, n_features)
            Rows with missing cells marked by ``missing_values``. A Dask
            array gives a lazy Dask array.

        Returns
        -------
        X_filled : ndarray of shape (n_samples, n_features)
            The rows with every missing cell replaced, of the input's float
            dtype.
        """
        check_is_fitted(self)
        X = self._validate(X, reset=False, method="transform")
        fill = self.statistics_.astype(X.dtype)
        if is_dask_array(X):
            # Blocks of whole rows; a block may be a view of the caller's
            # array: filled in a copy.
            return rows_in_blocks(X).map_blocks(
                _fill,
                fill=fill,
                copy=True,
                dtype=X.dtype,
                meta=np.empty((0, 0), dtype=X.dtype),
            )
        # Another marker was replaced by NaN in a new array already.
        copy = self._nan_marks_missing() and (self.copy or not X.flags.writeable)
        return _fill(X, fill, copy=copy)

    def _output_range(self):
        # The box the statistics were computed in (transform fills missing
        # cells with values inside it and leaves the others as given).
        check_is_fitted(self)
        return None if self.bounds_ is None else ("bounds", self.bounds_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


@dataclass(frozen=True)
class ObservedMeanNoise:
    """The mean strategy's release in unit coordinates, and its noise.

    Parameters
    ----------
    noise : AdditiveNoise
        The noise of each coordinate of ``(S, w N)`` (see :func:`mean_noise`).
    weight : float
        ``w``.
    sums, counts : ndarray of shape (d,)
        The released noisy sums ``S + e1`` and counts ``N + e2 / w``, before
        their post-processing.
    center, half : ndarray of shape (d,)
        The box's centre and half-widths.
    """

    noise: object
    weight: float
    sums: np.ndarray
    counts: np.ndarray
    center: np.ndarray
    half: np.ndarray


def _draw_mean(sums, observed, geometry, budget, rng):
    # The mean's release (see mean_noise), post-processed into the box, and
    # the release and its noise in unit coordinates (for the error bars).
    n_features = sums.shape[0]
    weight, noise = mean_noise(budget, n_features)
    noisy = noise.add(np.concatenate([sums, weight * observed]), rng)
    count = np.maximum(noisy[n_features:] / weight, 1.0)
    unit = np.clip(noisy[:n_features] / count, -1.0, 1.0)
    model = ObservedMeanNoise(
        noise,
        weight,
        noisy[:n_features],
        noisy[n_features:] / weight,
        *unit_box(*geometry.box),
    )
    return geometry.from_unit(unit), model


#: Points of the grid on [-1, 1] that Fieller's intervals are read on.
FIELLER_POINTS = 801


def observed_mean_bars(model, alpha):
    """Intervals of the mean of each feature's observed clipped cells (Fieller).

    The mean ``mu = S / N`` of the unit coordinates is released as a ratio
    of noisy statistics, ``S~ = S + e1`` and ``N~ = N + e2 / w``: at the
    true ``mu``, ``S~ - mu N~ = e1 - mu e2 / w``, whose law is public. The
    interval is the set of ``mu`` in ``[-1, 1]`` with ``|S~ - mu N~|`` at
    most that law's ``1 - alpha`` quantile (Fieller 1954; exact, where a
    bootstrap of the ratio fails for few observed cells), read on a grid of
    :data:`FIELLER_POINTS` points (its hull, widened by a step), with the
    quantiles from draws of the public law. In original units.

    Parameters
    ----------
    model : ObservedMeanNoise
    alpha : float

    Returns
    -------
    low, high : ndarray of shape (d,)
    """
    grid = np.linspace(-1.0, 1.0, FIELLER_POINTS)
    step = grid[1] - grid[0]
    scale = model.noise.scale
    quantile = scale * _pivot_quantiles(model.noise.law, model.weight, alpha)
    low, high = np.empty_like(model.sums), np.empty_like(model.sums)
    for block in feature_blocks(model.sums.shape[0], FIELLER_POINTS / N_DRAWS):
        sums, counts = model.sums[block, None], model.counts[block, None]
        ends = _accepted_hull(
            sums,
            counts,
            np.broadcast_to(grid, sums.shape[:1] + grid.shape),
            quantile,
            grid,
        )
        # Then on a grid 400 times finer across that hull (the quantile
        # interpolated between the coarse points).
        fine = np.linspace(0.0, 1.0, FIELLER_POINTS)
        start = np.maximum(ends[0] - step, -1.0)
        span = np.minimum(ends[1] + step, 1.0) - start
        points = start[:, None] + fine * span[:, None]
        ends = _accepted_hull(sums, counts, points, quantile, grid)
        fine_step = span / (FIELLER_POINTS - 1)
        # (None accepted, with probability at most alpha: the release itself.)
        fallback = np.clip(
            model.sums[block] / np.maximum(model.counts[block], 1), -1, 1
        )
        empty = np.isnan(ends[0])
        low[block] = np.where(empty, fallback, np.maximum(ends[0] - fine_step, -1.0))
        high[block] = np.where(empty, fallback, np.minimum(ends[1] + fine_step, 1.0))
    return model.center + model.half * low, model.center + model.half * high


@cache
def _pivot_quantiles(law, weight, alpha):
    # The 1 - alpha quantile of |e1 - mu e2 / w| on the grid of mu, for
    # noise of unit scale (public; the same for every fit of this law).
    grid = np.linspace(-1.0, 1.0, FIELLER_POINTS)
    e1, e2 = noise_draws(AdditiveNoise(law, 1.0), (N_DRAWS, 2)).T
    pivot = np.abs(e1[:, np.newaxis] - grid * (e2[:, np.newaxis] / weight))
    quantile = np.quantile(pivot, 1.0 - alpha, axis=0)
    quantile.flags.writeable = False
    return quantile


def _accepted_hull(sums, counts, points, quantile, grid):
    # The first and last of each row's points where |S~ - mu N~| is at most
    # the pivot's quantile (interpolated on grid); NaN where none is.
    accepted = np.abs(sums - points * counts) <= np.interp(points, grid, quantile)
    first = np.argmax(accepted, axis=1)
    last = points.shape[1] - 1 - np.argmax(accepted[:, ::-1], axis=1)
    rows = np.arange(points.shape[0])
    empty = ~accepted.any(axis=1)
    return (
        np.where(empty, np.nan, points[rows, first]),
        np.where(empty, np.nan, points[rows, last]),
    )


def _draw_median(candidates, counts, observed, budget, rng):
    # One exponential mechanism per feature, the budget split evenly.
    n_features = len(candidates)
    steps = split_budget(
        budget, {f"feature_{j}": 1.0 / n_features for j in range(n_features)}
    )
    epsilon = min(step.exponential_epsilon() for step in steps.values())
    return np.array(
        [
            private_median(c, m, grid, epsilon=epsilon, rng=rng)
            for c, m, grid in zip(counts, observed, candidates, strict=True)
        ]
    )


def _fill(block, fill, copy):
    # The missing cells (NaN) of a block filled, column by column (in place
    # unless copy).
    missing = np.isnan(block)
    if copy:
        block = block.copy()
    if missing.any():
        block[missing] = np.broadcast_to(fill, block.shape)[missing]
    return block
