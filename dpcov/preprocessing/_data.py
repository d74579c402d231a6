"""Scaling with public per-feature ranges: private standardisation, box scaling.

Both transformers start from public ranges ``[lower, upper]`` of the features
(``bounds``), which must come from knowledge of the data's domain, never from
the data. :class:`BoundsScaler` maps each range onto ``[-1, 1]`` and is free:
it reads nothing from the rows but their number of features.
:class:`StandardScaler` releases a private mean and variance of each feature
of the clipped rows, for scikit-learn's standardisation.

The private release works in unit coordinates: a row ``x``, clipped to the
box, becomes ``z = (x - center) / half_width``, in ``[-1, 1]^d``. The mean of
``z`` and the weighted mean of ``z * z`` are released together by one
additive-noise mechanism (:func:`moment_noise` states and derives its
sensitivities), and the variance ``E[z^2] - E[z]^2`` is post-processing.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from dataclasses import dataclass, replace
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..accounting import ZCDP, BudgetAccountant, compose
from ..base import ErrorBarsMixin, OutputRangeMixin, PrivateEstimatorMixin
from ..mechanisms import calibrate_additive
from ..mechanisms._sensitivity import box_mean_sensitivities, box_moment_sensitivities
from ..utils._array_api import (
    as_host,
    check_fitted_namespace,
    namespace_of,
    to_namespace,
)
from ..utils._docstrings import fill_doc
from ..utils._error_bars import (
    N_DRAWS,
    additive_bars,
    bootstrap_bars,
    feature_blocks,
    noise_draws,
    simulation_generator,
)
from ..utils._geometry import plan_geometry, release_ranges
from ..utils._gram import is_dask_array, row_statistics
from ..utils._gram._units import (
    UnitRows,
    check_group_parameters,
    check_unit_input,
    persons_in_messages,
)
from ..utils._input import quiet_float_errors, validate_rows
from ..utils._input_messages import NonFiniteInput
from ..utils._private_count import release_count, split_count
from ..utils._private_ranges import check_bounds_without_rows, ranges_first_pass
from ..utils._random import spawn_generators
from ..utils._sklearn_compat import (
    Interval,
    Options,
    StrOptions,
    _fit_context,
    check_params_always,
)
from ..utils.validation import check_bounds, unit_box

__all__ = ["BoundsScaler", "StandardScaler"]

#: Weight ``w`` of the second moment in the joint release ``(mean, w * second
#: moment)``, by noise law; see :func:`moment_noise`.
SECOND_MOMENT_WEIGHT = {
    "gaussian": math.sqrt(2.0),
    "laplace": (1.0 + math.sqrt(2.0)) / 2.0,
}

_NO_BOUNDS = (
    "{name} needs bounds=(lower, upper): public ranges of the features (scalars "
    "or arrays of shape (n_features,)), known without looking at the data, such "
    "as a sensor's range, a questionnaire's scale or a round limit of the "
    "quantity measured; or bounds='private', which finds them privately with a "
    "quarter of the budget. They are never read off the data for free: ranges "
    "read off the rows would not be private. Inside a "
    "dpcov.pipeline.PrivatePipeline, a step without bounds receives the output "
    "range of the step before it; a scikit-learn Pipeline hands on no range."
)


def moment_noise(budget, *, n_samples, n_features, with_second_moment=True):
    """Calibrated noise of the moment release of :class:`StandardScaler`.

    Without the second moment, the mean alone gets the whole budget
    (sensitivities of :func:`box_mean_sensitivities`). With it, the vector
    ``(mean, w * second_moment)`` of the unit coordinates is released by one
    mechanism, whose sensitivities (:func:`box_moment_sensitivities`) barely
    exceed the mean's own: under zCDP, ``w = sqrt(2)`` adds nothing to the L2
    sensitivity, so the mean is as accurate as if it had the whole budget and
    the second moment (noise divided by ``w``) as accurate as with half of
    it; under pure DP, ``w = (1 + sqrt(2)) / 2`` gives the second moment
    exactly what half of the budget would, and the mean
    ``2 / (1 + sqrt(2)) = 0.83`` of the budget, against half of it each in a
    split.

    Parameters
    ----------
    budget : ZCDP or PureDP
        Budget of the release.
    n_samples : int
        Number of rows ``n``.
    n_features : int
        Dimension ``d``.
    with_second_moment : bool, default=True
        Whether the second moment is released with the mean.

    Returns
    -------
    weight : float or None
        ``w`` (None without the second moment).
    noise : AdditiveNoise
        Gaussian noise under zCDP, Laplace noise under pure DP, for every
        coordinate of the released vector; the second moment's noise is this
        divided by ``weight``.
    """
    if not with_second_moment:
        l2, l1 = box_mean_sensitivities(n_samples, n_features)
        return None, calibrate_additive(budget, l2_sensitivity=l2, l1_sensitivity=l1)
    law = "gaussian" if isinstance(budget, ZCDP) else "laplace"
    weight = SECOND_MOMENT_WEIGHT[law]
    l2, l1 = box_moment_sensitivities(n_samples, n_features, weight)
    return weight, calibrate_additive(budget, l2_sensitivity=l2, l1_sensitivity=l1)


def unit_variance(mean, second_moment, floor):
    """Post-process noisy unit-coordinate moments into a mean and a variance.

    Parameters
    ----------
    mean : ndarray of shape (d,)
        Noisy mean of the unit coordinates.
    second_moment : ndarray of shape (d,)
        Noisy mean of their squares.
    floor : float
        Public lower bound on the variance, in ``[0, 1]``.

    Returns
    -------
    mean : ndarray of shape (d,)
        The mean clipped to ``[-1, 1]``, where the exact mean lies (so the
        error of no coordinate grows).
    variance : ndarray of shape (d,)
        ``second_moment - mean**2`` clipped to ``[floor, 1]`` (1 is the
        largest variance on ``[-1, 1]``).
    """
    mean = np.clip(mean, -1.0, 1.0)
    return mean, np.clip(second_moment - mean * mean, floor, 1.0)


def _constant(unit_var):
    # A variance of a few ulps is a constant feature (only epsilon=inf gets
    # there): its scale_ is 1, as in scikit-learn.
    return unit_var <= 10 * np.finfo(np.float64).eps


def _bounds_constraint(private=True):
    # A pair (lower, upper) of scalars or arrays; check_bounds validates it.
    if private:
        return ["array-like", StrOptions({"private"}), None]
    return ["array-like", None]


@dataclass(frozen=True)
class MomentNoise:
    """The release of :class:`StandardScaler` in unit coordinates, and its noise.

    Parameters
    ----------
    noise : AdditiveNoise
        The noise of each coordinate of the mean (the second moment's is
        this divided by ``weight``).
    weight : float or None
        :func:`moment_noise`'s ``w`` (None: the mean alone was released).
    floor : float or None
        The variance's public floor.
    mean, second_moment : ndarray of shape (d,)
        The released noisy mean and second moment, before their
        post-processing (``second_moment`` None without it).
    center, half : ndarray of shape (d,)
        The box's centre and half-widths (public, or released ranges).
    counted : bool
        Whether the sums were divided by a released count (add/remove):
        the statistic, the sums over that count, may then leave the range.
    """

    noise: object
    weight: float
    floor: float
    mean: np.ndarray
    second_moment: np.ndarray
    center: np.ndarray
    half: np.ndarray
    counted: bool = False


def moment_bars(model, alpha):
    """Intervals of the unit mean and variance (:meth:`StandardScaler.error_bars`).

    The mean is its statistic plus the noise: exact intervals, clipped to
    ``[-1, 1]`` where the statistic lies there. The variance ``m2 - m**2``
    of the noisy moments, before its clipping to ``[floor, 1]``: basic
    bootstrap intervals at the released moments (before their
    post-processing, so that the draws are not cut at the floor), clipped
    to ``[0, 1]``. Draws in blocks of features.

    Returns
    -------
    mean : tuple of ndarray
    var : tuple of ndarray or None
    """
    limits = None if model.counted else (-1.0, 1.0)
    mean = additive_bars(model.mean, model.noise, alpha, limits=limits)
    if model.weight is None:
        return mean, None
    var = model.second_moment - model.mean**2
    low, high = np.empty_like(var), np.empty_like(var)
    rng = simulation_generator()
    for block in feature_blocks(var.shape[0], 2):
        width = block.stop - block.start
        e1, e2 = np.split(noise_draws(model.noise, (N_DRAWS, 2 * width), rng), 2, 1)
        draws = model.second_moment[block] + e2 / model.weight
        draws -= (model.mean[block] + e1) ** 2
        low[block], high[block] = bootstrap_bars(
            var[block], draws, alpha, limits=None if model.counted else (0.0, 1.0)
        )
    return mean, (np.maximum(low, 0.0), np.maximum(high, 0.0))


@fill_doc
class StandardScaler(
    ErrorBarsMixin,
    PrivateEstimatorMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Standardise features with a private mean and variance.

    A drop-in for :class:`sklearn.preprocessing.StandardScaler`, given public
    ranges of the features: each feature is clipped to its range
    ``[lower_j, upper_j]``, and the mean and the variance of the clipped
    values are released with additive noise; ``transform`` then computes
    ``(x - mean_) / scale_`` as scikit-learn does. The fit is rho-zCDP (hence
    (``epsilon``, ``delta``)-DP) with ``delta > 0`` or ``rho`` set, and pure
    ``epsilon``-DP with ``delta=0``, with respect to replacing one row, for
    any finite rows (the clipping bounds every row's influence).

    A scikit-learn scaler fitted before a private step reads every row
    without privacy; this one spends a stated budget, which composes with the
    following steps' (see :func:`dpcov.model_selection.pipeline_cost`).

    Read more in the :ref:`User Guide <preprocessing>`.

    Parameters
    ----------
    {epsilon}
    {delta}
    {rho}
    bounds : tuple (lower, upper), default=None
        Public ranges of the features: each of ``lower`` and ``upper`` is a
        scalar (the same for every feature) or an array-like of shape
        ``(n_features,)``, finite, with ``lower < upper``. They must come
        from knowledge of the data's domain (a sensor's range, a
        questionnaire's scale, a round physical limit), never from the data.
        Values outside are clipped to the range in ``fit`` (a row's influence
        is bounded whatever it holds); the noise grows with the ranges, so
        take them no wider than the domain needs. ``"private"`` finds them
        privately with a quarter of the budget (a private median and a
        private spread about it per feature; see Notes), recorded in
        ``bounds_``; it needs a few thousand rows at ``epsilon=1`` and says
        how many when there are fewer. None raises a ValueError: ranges are
        never read off the data for free.
    with_mean : bool, default=True
        If True, ``transform`` centres the data about ``mean_``.
    with_std : bool, default=True
        If True, ``transform`` divides by ``scale_``. The variance needs the
        mean, so both are released whenever ``with_std`` is True; with
        ``with_mean=False`` and ``with_std=False`` nothing is released and
        the fit costs no privacy.
    max_rows_per_group : int, default=None
        Public bound ``k`` on the rows one person contributes, with
        ``groups`` passed to ``fit`` (the person of each row): the privacy
        unit is then the person. At most ``k`` rows of each person are kept,
        chosen at random; each person contributes the average of its rows'
        clipped values and of their squares, which lie in the same ranges as
        one row's, so the noise is that of one row among as many rows as
        persons. The guarantee is then for replacing one person's rows
        (their number included). See :ref:`privacy_units`.
    neighbours : {"replace", "add_remove"}, default="replace"
        The neighbouring relation. ``"add_remove"``: one unit (a row, or a
        person with ``groups``) added or removed, so their number is
        private; the fit first releases a noisy count with 1/16 of the
        budget (sensitivity 1) and divides the sums by it (``n_samples_seen_``
        reports it). The moments' noise keeps its replace-one calibration,
        which bounds adding or removing a unit too, so the fit holds under
        both relations. With ``bounds="private"`` the ranges' plan reads the
        released count too.
    copy : bool, default=True
        If False, ``transform`` and ``inverse_transform`` work in place when
        the input is a writeable float array.
    {accountant}
    {random_state}

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,) or None
        Private mean of each feature of the clipped rows, inside
        ``bounds_``. None when ``with_mean`` and ``with_std`` are both False.
    var_ : ndarray of shape (n_features,) or None
        Private variance of each feature of the clipped rows, post-processed
        into ``[w_j**2 floor, w_j**2]`` for the half-width ``w_j`` of the
        range, with the public ``floor = min(s, 1)`` for ``s`` the standard
        deviation of the noise on the second moment (in unit coordinates):
        below it the release cannot tell a variance from zero, and the floor
        keeps ``scale_`` away from 0. None when ``with_std`` is False.
    scale_ : ndarray of shape (n_features,) or None
        ``sqrt(var_)``, used by ``transform`` (1 where ``var_`` is zero,
        which only ``epsilon=inf`` allows, as in scikit-learn). None when
        ``with_std`` is False.
    n_samples_seen_ : int or None
        Number of rows (public under replace-one neighbours); under
        ``neighbours="add_remove"`` the released count; None when fitted
        over persons (``groups``), where no count is stated.
    bounds_ : tuple of ndarray
        The validated ``(lower, upper)``, each of shape (n_features,)
        (public: the parameter), or the private ranges with
        ``bounds="private"`` (a release, covered by the guarantee; None
        when nothing is released).
    guarantee_ : dpcov.accounting.PureDP or dpcov.accounting.ZCDP
        The guarantee of the fit (zero when nothing is released).
    privacy_unit_ : {"row", "person"}
        Whom the guarantee protects: a row, or a person (a fit with
        ``groups`` and ``max_rows_per_group``; see :ref:`privacy_units`).
    neighbours_ : {"replace", "add_remove"}
        The neighbouring relation the guarantee holds under (an
        ``"add_remove"`` fit holds under replacement too).
    epsilon_spent_ : float
        Epsilon of the guarantee (pure, or of the implied (epsilon, delta)-DP;
        ``inf`` for zCDP with ``delta=0``).
    delta_spent_ : float
        Delta of the guarantee (0 for pure DP).
    rho_spent_ : float
        The zCDP parameter of the guarantee (``epsilon**2 / 2`` for pure DP).
    budget_split_ : dict of str to PureDP or ZCDP
        Budget of each step; they compose to ``guarantee_``.
    noise_sampler_ : str
        The sampler of the fit's noise: ``"numpy"`` (floating point) or
        ``"discrete"`` (exact, under ``dpcov.set_config(secure_noise=True)``).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    sklearn.preprocessing.StandardScaler : The non-private estimator.
    BoundsScaler : Map public ranges onto [-1, 1], at no privacy cost.

    Notes
    -----
    **Privacy unit.** Neighbouring datasets differ in one row (replace-one);
    ``n_samples`` and ``n_features`` are public, and so is ``bounds``.

    **Private ranges.** With ``bounds="private"``, a quarter of the budget
    (``budget_split_["bounds"]``) finds each feature's range
    ``[m - r, m + r]``: a private median ``m`` in two steps, the second
    measured from the first, and a private bound ``r`` on ``|x - m|`` over
    the powers of two, each by the exponential mechanism (McSherry and
    Talwar, 2007) over public grids from ``2**-40`` to ``2**64``, the budget
    split evenly between the ``3 d`` steps (each pure ``epsilon``-DP and
    ``epsilon**2 / 8``-zCDP; Cesar and Rogers, 2021). A few of the largest
    ``|x - m|`` of each feature lie outside its range and are clipped; the
    rest of the budget releases the moments in that box, as below.

    **Mechanism.** Each row ``x`` is clipped to the box and mapped to unit
    coordinates ``z = (x - c) / w`` in ``[-1, 1]^d``, for the box's centre
    ``c`` and half-widths ``w``. The mean of ``z`` has L2 sensitivity
    ``2 sqrt(d) / n`` and L1 sensitivity ``2 d / n``; the mean of ``z * z``
    (entries in ``[0, 1]``) has ``sqrt(d) / n`` and ``d / n``. Both are
    released together, as the vector ``(mean, v * second moment)`` with one
    Gaussian (zCDP, ``v = sqrt(2)``) or Laplace (pure DP,
    ``v = (1 + sqrt(2)) / 2``) mechanism: the worst neighbours of the mean
    (``z_j = 1`` against ``-1``) leave the squares unchanged, so the joint
    vector has L2 sensitivity ``2 sqrt(d) / n``, the mean's alone, and L1
    sensitivity ``(1 + sqrt(2)) d / n``. Compared with half of the budget
    for each, the second moment gets the same noise and the mean less: the
    whole budget's noise under zCDP, ``2 / (1 + sqrt(2)) = 0.83`` of it under
    pure DP. ``budget_split_`` is ``{"mean_and_second_moment": budget}``
    (``{"mean": budget}`` with ``with_std=False``, empty when nothing is
    released).

    **Post-processing.** The mean is clipped to ``[-1, 1]``, the variance
    ``E[z^2] - E[z]^2`` to ``[floor, 1]`` (see ``var_``), and both are mapped
    back: ``mean_ = c + w mean``, ``var_ = w**2 variance``. Releasing the
    variance about the private mean instead would need the squares of
    ``z - mean``, whose range ``(1 + |mean|)**2`` is larger; releasing the
    empirical variance directly costs a sensitivity of about ``4 / n`` per
    feature, four times the second moment's.

    **Transform.** ``transform`` does not clip: it applies the released
    affine map to the rows it is given, which is post-processing of the
    release (and of those rows). Values outside ``bounds`` come out beyond
    the standardised range of the clipped training data.

    Unlike scikit-learn's scaler, NaN is refused (impute first), and sparse
    input, ``sample_weight`` and ``partial_fit`` are not supported.

    References
    ----------
    .. [1] Bun, M. and Steinke, T. "Concentrated Differential Privacy:
       Simplifications, Extensions, and Lower Bounds". TCC 2016.
       https://arxiv.org/abs/1605.02065.
    .. [2] Dwork, C., McSherry, F., Nissim, K. and Smith, A. "Calibrating
       Noise to Sensitivity in Private Data Analysis". TCC 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.preprocessing import StandardScaler
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal([50.0, 0.5], [10.0, 0.1], size=(5000, 2))
    >>> scaler = StandardScaler(epsilon=1.0, bounds=([0.0, 0.0], [100.0, 1.0]),
    ...                         random_state=0).fit(X)
    >>> np.round(scaler.mean_, 1)
    array([50.1,  0.5])
    >>> np.round(scaler.scale_, 1)
    array([10.2,  0.1])
    >>> scaler.transform(X).shape
    (5000, 2)
    """

    # Every mechanism has an exact sampler (secure_noise; read by _check_budget).
    _hardened_noise = True

    _parameter_constraints: dict = {
        # epsilon = inf (no noise) is allowed for testing against sklearn.
        "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "rho": [
            Interval(Real, 0, None, closed="neither"),
            Options(Real, {np.inf}),
            None,
        ],
        "bounds": _bounds_constraint(),
        "with_mean": ["boolean"],
        "with_std": ["boolean"],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "neighbours": [StrOptions({"replace", "add_remove"})],
        "copy": ["boolean"],
        "accountant": [BudgetAccountant, None],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-6,
        rho=None,
        bounds=None,
        with_mean=True,
        with_std=True,
        max_rows_per_group=None,
        neighbours="replace",
        copy=True,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.bounds = bounds
        self.with_mean = with_mean
        self.with_std = with_std
        self.max_rows_per_group = max_rows_per_group
        self.neighbours = neighbours
        self.copy = copy
        self.accountant = accountant
        self.random_state = random_state

    def privacy_cost(self):
        """The guarantee a fit spends with the current parameters.

        Computed from the parameters only (no data). With ``with_mean=False``
        and ``with_std=False`` nothing is released and the cost is zero (in
        the notion the parameters select).

        Returns
        -------
        guarantee : dpcov.accounting.PureDP or dpcov.accounting.ZCDP
            The guarantee of one fit.

        Raises
        ------
        ValueError
            If the privacy parameters are out of range.
        """
        cost = super().privacy_cost()
        if self.with_mean or self.with_std:
            return cost
        return type(cost)(0.0)

    def _check_before_spending(
        self, n_samples, y=None, *, n_features=None, n_rows=None
    ):
        """The fit's checks of public values that need no row, before any release.

        The parameters, the budget, a public box's values and, with
        ``bounds="private"``, the rows the private ranges need (for
        ``n_features`` features when the width is known, as the first step
        of a :class:`~dpcov.pipeline.PrivatePipeline`, else for one).
        ``bounds=None`` is refused as the first step only: a later step may
        receive its box from upstream. A refusal here spends nothing.
        """
        check_params_always(self)
        if self.bounds is None:
            if n_features is not None:
                raise ValueError(_NO_BOUNDS.format(name=type(self).__name__))
            return
        budget = self._check_budget()
        if n_features is not None:
            self._plan(budget, n_samples, n_features, ranges_name=type(self).__name__)
        elif self.with_mean or self.with_std or not isinstance(self.bounds, str):
            check_bounds_without_rows(
                self.bounds, n_samples, budget, name=type(self).__name__
            )

    def _plan(self, budget, n_samples, n_features, *, ranges_name="bounds='private'"):
        # The geometry step: the box (public, or the private ranges with a
        # quarter of the budget) and the moments' budget; with nothing to
        # release, no ranges are found.
        release = self.with_mean or self.with_std
        return plan_geometry(
            budget,
            n_samples,
            n_features,
            bounds=self.bounds,
            shares={"moments": None} if release else {},
            ranges_name=ranges_name,
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, groups=None):
        """Release the private mean and variance of the clipped features.

        Parameters
        ----------
        X : array-like or dask.array.Array of shape (n_samples, n_features)
            Training data. Each feature is clipped to its range in ``bounds``
            (``X`` itself is not modified). A Dask array is reduced by Dask,
            without loading it.
        y : Ignored
            Not used, present for API consistency by convention.
        groups : array-like of shape (n_samples,), default=None
            The person of each row, with ``max_rows_per_group`` set (see
            :ref:`privacy_units`); in memory only.

        Returns
        -------
        self : object
            Fitted scaler.
        """
        # Declarative validation is skipped under skip_parameter_validation;
        # a private estimator validates its parameters regardless, and checks
        # its budget against the accountant before reading the data.
        check_params_always(self)
        name = type(self).__name__
        check_group_parameters(groups, self.max_rows_per_group, name=name)
        if self.bounds is None:
            raise ValueError(_NO_BOUNDS.format(name=name))
        budget = self._check_budget()
        # NaN and infinity are refused by the first pass over the rows, as it
        # reads them (no read of their own), before the budget is spent.
        X = validate_rows(
            self,
            X,
            accept_dask=True,
            accept_array_api=True,
            defer_finite=True,
        )
        if groups is not None:
            check_unit_input(X, groups, name=name)
        try:
            return self._fit_rows(X, budget, groups)
        except NonFiniteInput as error:
            failed = error.named(f"{type(self).__name__}.fit")  # (raised below)
        raise failed

    def _fit_rows(self, X, budget, groups=None):
        # The fit after validation: plan, first pass, spend, release, record.
        # With groups, X becomes the persons' rows (UnitRows): X.shape[0] is
        # the number of persons and the sums are over persons.
        lazy = is_dask_array(X)
        source = X  # (the rows' namespace, for the fitted arrays)
        rng = self._noise_generator(budget)
        if groups is not None:
            (order,) = spawn_generators(rng, 1)
            X = UnitRows.select(
                X, groups, self.max_rows_per_group, order, name=type(self).__name__
            )
        release = self.with_mean or self.with_std
        X, geometry, moments, sums = self._read_and_spend(
            X, budget, rng, lazy=lazy, release=release
        )
        n_samples, n_features = X.shape
        split = dict(geometry.split)

        mean = var = scale = model = None
        if release:
            moments_budget = moments["moments"]
            weight, noise = moment_noise(
                moments_budget,
                n_samples=n_samples,
                n_features=n_features,
                with_second_moment=self.with_std,
            )
            unit_mean = sums.total / n_samples
            if self.with_std:
                # One draw for the vector (mean, w * second moment); see
                # moment_noise for its sensitivities.
                stacked = np.concatenate(
                    [unit_mean, weight * (sums.square_total / n_samples)]
                )
                noisy = noise.add(stacked, rng)
                # The public floor: the noise on the second moment, below
                # which a variance cannot be told from zero (at most 1, the
                # largest variance on [-1, 1]).
                floor = min(noise.std / weight, 1.0)
                unit_mean, unit_var = unit_variance(
                    noisy[:n_features], noisy[n_features:] / weight, floor
                )
                split["mean_and_second_moment"] = moments_budget
                moments = (noisy[:n_features], noisy[n_features:] / weight)
                model = self._moment_model(noise, weight, floor, moments, geometry)
            else:
                noisy = noise.add(unit_mean, rng)
                unit_mean = np.clip(noisy, -1.0, 1.0)
                split["mean"] = moments_budget
                model = self._moment_model(noise, None, None, (noisy, None), geometry)
            mean = geometry.from_unit(unit_mean)
            if self.with_std:
                half = geometry.half_widths
                # Half-widths above 1e154 (public bounds near float64's
                # limits) make var_ inf; scale_ below stays finite.
                with np.errstate(over="ignore"):
                    var = half * half * unit_var
                scale = np.where(_constant(unit_var), 1.0, half * np.sqrt(unit_var))

        # Over persons the number of rows is private: no count; under
        # add/remove, the released count (X.shape[0] of the wrapped rows).
        seen = None if isinstance(X, UnitRows) else int(X.shape[0])
        self._record(source, (mean, var, scale), geometry.box, split, seen)
        self._moment_noise = model
        return self

    def _moment_model(self, noise, weight, floor, moments, geometry):
        # The release's noisy moments and their public noise (error_bars).
        return MomentNoise(
            noise,
            weight,
            floor,
            *moments,
            *unit_box(*geometry.box),
            counted=self.neighbours == "add_remove",
        )

    def _error_bars(self, alpha):
        # mean_, var_ and scale_ from the unit coordinates' intervals.
        model = getattr(self, "_moment_noise", None)
        if model is None:
            return {}
        (mean_low, mean_high), var = moment_bars(model, alpha)
        bars = {
            "mean_": (
                model.center + model.half * mean_low,
                model.center + model.half * mean_high,
            )
        }
        if var is not None:
            square = model.half * model.half
            bars["var_"] = (square * var[0], square * var[1])
            # (scale_ is 1 for a constant feature, as fit sets it.)
            _, unit_var = unit_variance(model.mean, model.second_moment, model.floor)
            constant = _constant(unit_var)
            scale = [model.half * np.sqrt(end) for end in var]
            bars["scale_"] = tuple(np.where(constant, 1.0, end) for end in scale)
        return bars

    def _read_and_spend(self, X, budget, rng, *, lazy, release):
        # The plan, the pass of sums and the budget spent, in the order the
        # relation allows: (X, geometry, moments' budget, sums), X wrapped
        # to report the released count under add/remove.
        if release and self.neighbours == "add_remove":
            # The number of units is private: the sums first (entries
            # checked; with private ranges, the ranges' first counts), then
            # the fit is recorded and a noisy count released, which the plan
            # (the ranges' included) and the normalisation read.
            count, rest = split_count(budget)
            private = isinstance(self.bounds, str)
            if private:
                first = ranges_first_pass(X, check_finite=True)
            else:
                box = check_bounds(self.bounds, X.shape[1])
                sums = self._moment_sums(X, box, check_finite=True)
            self._spend_budget(budget)
            X, _ = release_count(X, count, rng)
            with persons_in_messages(isinstance(X, UnitRows), released=True):
                geometry, moments = self._plan(rest, *X.shape)
            geometry = replace(geometry, split={"count": count, **geometry.split})
            if private:
                geometry = release_ranges(geometry, X, first, rng=rng)
                sums = self._moment_sums(X, geometry.box, check_finite=lazy)
            return X, geometry, moments, sums
        with persons_in_messages(isinstance(X, UnitRows)):
            geometry, moments = self._plan(budget, *X.shape)
        # One pass: the sums of the unit coordinates and of their squares (a
        # Dask array's entries are checked for NaN and infinity on the way).
        # With public bounds it comes before the budget is spent; with
        # private ranges, after them (their first pass checked the entries).
        if geometry.ranges is None:
            sums = self._moment_sums(X, geometry.box, check_finite=True)
            self._spend_budget(budget)  # everything above used public values only
        else:
            # The first count pass (Dask: entries checked) before the budget
            # is spent.
            first = ranges_first_pass(X, check_finite=True)
            self._spend_budget(budget)
            geometry = release_ranges(geometry, X, first, rng=rng)
            sums = self._moment_sums(X, geometry.box, check_finite=lazy)
        return X, geometry, moments, sums

    def _moment_sums(self, X, box, *, check_finite):
        # One pass: the sums of the unit coordinates and of their squares.
        return row_statistics(
            X,
            box=box,
            total=self.with_mean or self.with_std,
            square_total=self.with_std,
            check_finite=check_finite,
        )

    def _record(self, X, moments, box, split, seen):
        # The fitted attributes and the privacy spent.
        mean, var, scale = moments
        namespace = namespace_of(X)
        if namespace is not None:
            # An array of another namespace: the released arrays go back to
            # its namespace and device (in the widest float it supports).
            mean, var, scale = (
                None if value is None else to_namespace(value, *namespace)
                for value in (mean, var, scale)
            )
            if box is not None:
                box = tuple(to_namespace(bound, *namespace) for bound in box)
        self.mean_ = mean
        self.var_ = var
        self.scale_ = scale
        self.n_samples_seen_ = seen
        self.bounds_ = box
        self._record_privacy(
            compose(split.values()) if split else self.privacy_cost(), split
        )

    def transform(self, X, copy=None):
        """Standardise X with the released mean and scale.

        The rows are not clipped: ``(x - mean_) / scale_`` is applied to them
        as given (post-processing of the release).

        Parameters
        ----------
        X : array-like or dask.array.Array of shape (n_samples, n_features)
            Rows to scale. A Dask array gives a lazy Dask array.
        copy : bool, default=None
            Whether to copy X; None uses the ``copy`` parameter.

        Returns
        -------
        X_tr : ndarray of shape (n_samples, n_features)
            Transformed rows, of the input's float dtype.
        """
        check_is_fitted(self)
        X = validate_rows(
            self,
            X,
            reset=False,
            accept_dask=True,
            method="transform",
            accept_array_api=True,
        )
        if self.mean_ is not None:
            check_fitted_namespace(self, self.mean_, X, "transform")
        shift = self.mean_ if self.with_mean else None
        divide = self.scale_ if self.with_std else None
        return _affine(X, shift=shift, divide=divide, copy=self._copy(copy))

    def inverse_transform(self, X, copy=None):
        """Map standardised rows back to the original units.

        Parameters
        ----------
        X : array-like or dask.array.Array of shape (n_samples, n_features)
            Standardised rows.
        copy : bool, default=None
            Whether to copy X; None uses the ``copy`` parameter.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            ``X * scale_ + mean_`` (each step as ``with_std`` and
            ``with_mean`` ask).
        """
        check_is_fitted(self)
        X = validate_rows(
            self,
            X,
            reset=False,
            accept_dask=True,
            method="inverse_transform",
            accept_array_api=True,
        )
        if self.mean_ is not None:
            check_fitted_namespace(self, self.mean_, X, "inverse_transform")
        scale = self.scale_ if self.with_std else None
        shift = self.mean_ if self.with_mean else None
        return _affine(X, multiply=scale, add=shift, copy=self._copy(copy))

    def _copy(self, copy):
        return self.copy if copy is None else copy

    def _output_range(self):
        # The image of the box under the released affine map (post-processing
        # of the release): ("bounds", (lower, upper)), or None when nothing
        # was released.
        check_is_fitted(self)
        if self.bounds_ is None:
            return None
        lower, upper = (as_host(bound) for bound in self.bounds_)
        shift = as_host(self.mean_) if self.with_mean else 0.0
        divide = as_host(self.scale_) if self.with_std else 1.0
        with np.errstate(over="ignore"):
            return ("bounds", ((lower - shift) / divide, (upper - shift) / divide))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        # Arrays of other namespaces under array_api_dispatch.
        tags.array_api_support = True
        return tags


def _affine(X, *, shift=None, divide=None, multiply=None, add=None, copy=True):
    # ((X - shift) / divide) * multiply + add, each step optional, in X's
    # float dtype; in place on X when copy is False and X can be written.
    # Extreme rows overflow to inf silently: a warning would show which rows
    # the caller passed are extreme.
    namespace = namespace_of(X)
    if namespace is not None:
        # An array of another namespace: out of place, in its dtype (the
        # fitted arrays live there too), without the floating-point warnings
        # array-api-strict's NumPy would raise on extreme rows only.
        xp = namespace[0]
        with quiet_float_errors():
            for value, step in (
                (shift, lambda a, b: a - b),
                (divide, lambda a, b: a / b),
                (multiply, lambda a, b: a * b),
                (add, lambda a, b: a + b),
            ):
                if value is not None:
                    X = step(X, xp.astype(value, X.dtype))
        return X
    if is_dask_array(X):
        for op, value in (
            (np.subtract, shift),
            (np.divide, divide),
            (np.multiply, multiply),
            (np.add, add),
        ):
            if value is not None:
                X = op(X, value.astype(X.dtype))
        return X
    if copy or not X.flags.writeable:
        X = X.copy()
    with quiet_float_errors():
        for op, value in (
            (np.subtract, shift),
            (np.divide, divide),
            (np.multiply, multiply),
            (np.add, add),
        ):
            if value is not None:
                op(X, value.astype(X.dtype), out=X)
    return X


class BoundsScaler(
    OutputRangeMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator
):
    """Map public feature ranges onto ``[-1, 1]``, at no privacy cost.

    Each feature is clipped to its public range ``[lower_j, upper_j]`` and
    mapped affinely onto ``[-1, 1]``: ``z = (clip(x) - c) / w`` for the
    range's centre ``c`` and half-width ``w``. Nothing is learnt from the
    rows (``fit`` only validates ``bounds`` against the number of features),
    so the transformer has no privacy parameters and costs nothing; it puts
    features on different scales on a common one before a private step.

    Every output row has L2 norm at most ``sqrt(n_features)``: that is the
    public ``data_norm`` to give a following private estimator (PCA, a
    covariance estimator), which then clips nothing.

    Read more in the :ref:`User Guide <preprocessing>`.

    Parameters
    ----------
    bounds : tuple (lower, upper), default=None
        Public ranges of the features: each of ``lower`` and ``upper`` is a
        scalar or an array-like of shape ``(n_features,)``, finite, with
        ``lower < upper``. They must come from knowledge of the data's domain,
        never from the data. None raises a ValueError.

    Attributes
    ----------
    bounds_ : tuple of ndarray
        The validated ``(lower, upper)``, each of shape (n_features,).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    StandardScaler : Private standardisation (spends a budget).
    sklearn.preprocessing.MinMaxScaler : Reads the ranges off the data (not
        private).

    Notes
    -----
    The map is fixed by the parameter, and each output row depends on its
    input row only, so a private step fitted on the output has the same
    guarantee with respect to the input rows (replacing one input row
    replaces one output row). ``inverse_transform`` maps ``[-1, 1]`` back
    to the ranges (clipped values stay at the range's ends).

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.preprocessing import BoundsScaler
    >>> X = np.array([[20.0, 0.5], [65.0, 1.5], [120.0, 0.0]])
    >>> BoundsScaler(bounds=([0.0, 0.0], [100.0, 1.0])).fit_transform(X)
    array([[-0.6,  0. ],
           [ 0.3,  1. ],
           [ 1. , -1. ]])
    """

    _parameter_constraints: dict = {"bounds": _bounds_constraint(private=False)}

    def __init__(self, *, bounds=None):
        self.bounds = bounds

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Validate ``bounds`` against the number of features of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; only its shape (and feature names) are read.
        y : Ignored
            Not used, present for API consistency by convention.

        Returns
        -------
        self : object
            Fitted scaler.
        """
        if self.bounds is None:
            raise ValueError(_NO_BOUNDS.format(name=type(self).__name__))
        X = validate_rows(self, X, accept_dask=True)
        self.bounds_ = check_bounds(self.bounds, X.shape[1])
        return self

    def transform(self, X):
        """Clip each feature to its range and map the ranges onto ``[-1, 1]``.

        Parameters
        ----------
        X : array-like or dask.array.Array of shape (n_samples, n_features)
            Rows to scale. A Dask array gives a lazy Dask array.

        Returns
        -------
        X_tr : ndarray of shape (n_samples, n_features)
            Rows in ``[-1, 1]^n_features`` (L2 norm at most
            ``sqrt(n_features)``), of the input's float dtype.
        """
        check_is_fitted(self)
        X = validate_rows(self, X, reset=False, accept_dask=True, method="transform")
        lower, upper = self.bounds_
        center, half = unit_box(lower, upper)
        # x - center lies in [-half, half] once x is clipped: no overflow.
        clipped = np.clip(X, lower.astype(X.dtype), upper.astype(X.dtype))
        return _affine(clipped, shift=center, divide=half, copy=False)

    def inverse_transform(self, X):
        """Map unit coordinates back to the feature ranges.

        Parameters
        ----------
        X : array-like or dask.array.Array of shape (n_samples, n_features)
            Rows in unit coordinates.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            ``center + half_width * X`` for each feature.
        """
        check_is_fitted(self)
        X = validate_rows(
            self, X, reset=False, accept_dask=True, method="inverse_transform"
        )
        center, half = unit_box(*self.bounds_)
        return _affine(X, multiply=half, add=center, copy=True)

    def _output_range(self):
        # Every output lies in [-1, 1] (transform clips).
        check_is_fitted(self)
        ones = np.ones_like(self.bounds_[0])
        return ("bounds", (-ones, ones))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
