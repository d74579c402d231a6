"""Base mixin of dpcov's private estimators: the privacy contract.

Every dpcov estimator has privacy parameters (``epsilon``, ``delta`` and, for
most, ``rho``) and an optional shared :class:`~dpcov.accounting.BudgetAccountant`.
:class:`PrivateEstimatorMixin` turns the parameters into the guarantee a fit
spends, before the data are read, talks to the accountant, and declares what
the composites (:class:`~dpcov.pipeline.PrivatePipeline`,
:class:`~dpcov.model_selection.PrivateSearchCV`) may ask of a private step:
its :class:`PrivacyTags` (in ``__sklearn_tags__().privacy``) and a few
methods with documented defaults. :func:`record_privacy` writes the record
of what a fit spent (``PRIVACY_RECORD``) on every private estimator,
pipeline and search alike.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from numbers import Real

import numpy as np
from sklearn.frozen import FrozenEstimator
from sklearn.utils import Tags
from sklearn.utils.validation import check_is_fitted

from ._config import get_config
from .accounting import ZCDP, BudgetAccountant, GaussianDP, ProfileDP, PureDP
from .accounting._composition import relabel
from .accounting._exact_curve import exact_rho
from .exceptions import NoHardenedSampler, NoiseDominatedWarning, SeededNoiseWarning
from .mechanisms._noise import sampler_name
from .utils._error_bars import check_alpha
from .utils._random import check_random_state
from .utils._sklearn_compat import SECURE_AT_CLONE, Interval, Options
from .utils._warnings import warn
from .utils.validation import (
    check_approx_privacy_params,
    check_privacy_params,
    check_zcdp_privacy_params,
    privacy_spent,
)

__all__ = [
    "PRIVACY_PARAMETER_CONSTRAINTS",
    "PRIVACY_RECORD",
    "ErrorBarsMixin",
    "OutputRangeMixin",
    "PrivacyTags",
    "PrivateEstimatorMixin",
    "budget_params",
    "is_private",
    "privacy_tags",
    "record_privacy",
    "warn_if_noise_dominated",
    "warn_if_seeded",
]

#: The ``_parameter_constraints`` of the parameters every private estimator
#: shares (``epsilon = inf``, no noise, is allowed for testing).
PRIVACY_PARAMETER_CONSTRAINTS = {
    "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
    "delta": [Interval(Real, 0, 1, closed="left")],
    "rho": [
        Interval(Real, 0, None, closed="neither"),
        Options(Real, {np.inf}),
        None,
    ],
    "accountant": [BudgetAccountant, None],
    "random_state": ["random_state", np.random.Generator],
}


#: Set while a composite computes and runs its steps' budgets in zCDP (see
#: calibrated_in_zcdp).
_IN_ZCDP = ContextVar("dpcov_calibrated_in_zcdp", default=False)


@contextmanager
def calibrated_in_zcdp():
    """Run the private fits inside the block on the zCDP calibration.

    A :class:`~dpcov.pipeline.PrivatePipeline` composes its steps' budgets
    in zCDP and hands a step its upstream range at fit time, which would
    make a step Gaussian only (:meth:`PrivateEstimatorMixin._gaussian_only`)
    after its cost was computed: inside the block, an (epsilon, delta) ask
    is calibrated through zCDP, whatever the step's parameters, so that the
    costs computed before a fit and the fit agree. A context variable, so
    threads and tasks started outside it do not see it.
    """
    token = _IN_ZCDP.set(True)
    try:
        yield
    finally:
        _IN_ZCDP.reset(token)


#: The fitted attributes every private fit records, written by
#: :func:`record_privacy`: the guarantee, its parts, the noise's sampler and
#: (epsilon, delta, rho) spent.
PRIVACY_RECORD = (
    "guarantee_",
    "privacy_unit_",
    "neighbours_",
    "budget_split_",
    "noise_sampler_",
    "epsilon_spent_",
    "delta_spent_",
    "rho_spent_",
)


@dataclass(slots=True)
class PrivacyTags:
    """What a private estimator declares to the composites and the checks.

    Read with :func:`privacy_tags` (``get_tags(estimator).privacy``); each
    field comes from a class attribute of :class:`PrivateEstimatorMixin`
    that an estimator overrides.

    Parameters
    ----------
    guarantee : {"any", "approx_dp", "zcdp"}, default="any"
        Which guarantees the parameters may ask for: ``"any"`` (``delta=0``
        gives pure DP, ``delta > 0`` or ``rho`` zCDP), ``"approx_dp"`` (an
        (epsilon, delta)-DP estimator with no pure or zCDP form;
        ``_approx_dp_only``) or ``"zcdp"`` (no pure-DP form;
        ``_zcdp_only``).
    binary_input : bool, default=False
        The rows must be in {0, 1} (``_binary_input``).
    deterministic_release : bool, default=False
        A fit may release without noise, as a stability test allows
        (``_deterministic_release``): two fits need not differ.
    default_score : str or None, default=None
        The bounded per-row score a private search ranks this family by
        when no ``scoring`` is given (``_default_score``; see
        :class:`dpcov.model_selection.PrivateSearchCV`), or None.
    checks_before_spending : bool, default=False
        Whether the estimator refuses some fits from public values before
        reading a row (it overrides
        :meth:`PrivateEstimatorMixin._check_before_spending`); the
        composites run those checks on a clone before anything is spent.
    """

    guarantee: str = "any"
    binary_input: bool = False
    deterministic_release: bool = False
    default_score: str = None
    checks_before_spending: bool = False


@dataclass(slots=True)
class PrivateTags(Tags):
    """The tags of a private estimator: scikit-learn's and :class:`PrivacyTags`.

    What a private estimator's ``__sklearn_tags__`` returns: it extends
    scikit-learn's :class:`~sklearn.utils.Tags` (every field kept, read by
    :func:`~sklearn.utils.get_tags` as for any estimator) by one field,
    ``privacy``, which :func:`privacy_tags` reads.

    Parameters
    ----------
    estimator_type, target_tags, transformer_tags, classifier_tags : object
        The fields of scikit-learn's :class:`~sklearn.utils.Tags`, as documented
        there.
    regressor_tags, array_api_support, no_validation, non_deterministic : object
        Likewise.
    requires_fit, _skip_test, input_tags : object
        Likewise.
    privacy : PrivacyTags, default=PrivacyTags()
        What the estimator declares to dpcov's composites and checks (from
        the class attributes of :class:`PrivateEstimatorMixin`).
    """

    privacy: PrivacyTags = field(default_factory=PrivacyTags)


def is_private(estimator):
    """Whether an object is a private dpcov estimator, pipeline or search.

    A :class:`~sklearn.frozen.FrozenEstimator` is never one: it forwards
    attribute access to what it holds, but is never fitted again (a frozen
    dpcov model is a release, used as a public map).

    Parameters
    ----------
    estimator : object
        Any object (a step of a composite, a parameter value).

    Returns
    -------
    private : bool
        Whether it is a :class:`PrivateEstimatorMixin` and not frozen.
    """
    return isinstance(estimator, PrivateEstimatorMixin) and not isinstance(
        estimator, FrozenEstimator
    )


def privacy_tags(estimator):
    """The :class:`PrivacyTags` of a private estimator.

    Parameters
    ----------
    estimator : PrivateEstimatorMixin
        A private estimator, pipeline or search.

    Returns
    -------
    tags : PrivacyTags
        What the estimator declares (``__sklearn_tags__().privacy``).
    """
    return estimator.__sklearn_tags__().privacy


def budget_params(estimator, share):
    """The parameters that make a private estimator run at ``share``.

    Parameters
    ----------
    estimator : estimator instance
        A private estimator with ``epsilon`` and ``delta`` (and, for most,
        ``rho``) parameters.
    share : PureDP or ZCDP
        Its budget.

    Returns
    -------
    params : dict
        ``epsilon`` and ``delta=0`` (``rho=None``) for a pure share; ``rho``
        for a zCDP share, or, for an estimator without ``rho``, the pure
        epsilon that fits in it (``epsilon**2 / 2 <= rho``).
    """
    names = estimator.get_params(deep=False)
    if isinstance(share, PureDP):
        params = {"epsilon": share.epsilon, "delta": 0.0}
        if "rho" in names:
            params["rho"] = None
        return params
    if "rho" in names:
        return {"rho": share.rho}
    return {"epsilon": share.pure_epsilon(), "delta": 0.0}


def record_privacy(estimator, guarantee, split, *, delta, epsilon=None):
    """Write the record of what a fit spent (``PRIVACY_RECORD``).

    Every private estimator, :class:`~dpcov.pipeline.PrivatePipeline` and
    :class:`~dpcov.model_selection.PrivateSearchCV` records its fit with this
    one call, so that all carry the same attributes.

    Parameters
    ----------
    estimator : estimator instance
        The fitted estimator.
    guarantee : PureDP, ZCDP or ApproxDP
        What the fit spent (``guarantee_``).
    split : dict
        Its parts (``budget_split_``): each step's guarantee, by name.
    delta : float
        The ``delta`` a zCDP guarantee is stated at as (epsilon, delta)-DP.
    epsilon : float or None, default=None
        The epsilon asked for, when the budget was derived from (epsilon,
        delta): the epsilon reported is then at most it (see
        :func:`~dpcov.utils.privacy_spent`).
    """
    estimator.budget_split_ = split
    unit = getattr(estimator, "_privacy_unit", None)
    estimator.privacy_unit_ = "row" if unit is None else unit()
    relation = getattr(estimator, "_relation", None)
    estimator.neighbours_ = "replace" if relation is None else relation()
    # The guarantee names whom it protects and under which relation.
    estimator.guarantee_ = relabel(
        guarantee, unit=estimator.privacy_unit_, relation=estimator.neighbours_
    )
    estimator.noise_sampler_ = sampler_name()
    estimator.epsilon_spent_, estimator.delta_spent_, estimator.rho_spent_ = (
        privacy_spent(guarantee, delta, epsilon=epsilon)
    )


class OutputRangeMixin:
    """Mixin of transformers that state the range of their output rows.

    A :class:`~dpcov.pipeline.PrivatePipeline` hands the range a step states
    (:func:`dpcov.pipeline.output_range`) to the next step, as its public
    geometry. Every private estimator has the method (None by default);
    :class:`~dpcov.preprocessing.BoundsScaler`, a public map, too.
    """

    def _output_range(self):
        """The range of this step's output rows, handed to the next step.

        Returns
        -------
        range : tuple or None
            ``("bounds", (lower, upper))``, ``("data_norm", r)`` or None (the
            default: no range stated); see
            :func:`dpcov.pipeline.output_range`.
        """
        return None


class PrivateEstimatorMixin(OutputRangeMixin):
    """Mixin of private estimators: the privacy contract.

    :meth:`privacy_cost` is the guarantee a fit spends; estimators call
    :meth:`_check_budget` before reading their data, :meth:`_spend_budget`
    after validating it, before any private step, and :func:`record_privacy`
    once the release is made.

    **Declarations** (class attributes, read by composites and checks as
    :class:`PrivacyTags` in ``__sklearn_tags__().privacy``):
    ``_approx_dp_only`` (an (epsilon, delta)-DP estimator with no pure or
    zCDP form) and ``_zcdp_only`` (a zCDP estimator with no pure-DP variant)
    select how the parameters map to a guarantee; ``_binary_input``,
    ``_deterministic_release`` and ``_default_score`` as in
    :class:`PrivacyTags`. ``_hardened_noise`` states that every mechanism of
    a fit has an exact discrete sampler; under
    ``dpcov.set_config(secure_noise=True)`` :meth:`_check_budget` refuses the
    others with :class:`~dpcov.exceptions.NoHardenedSampler`.
    ``_accounting_label`` (None: the class name) is the label of the fit in
    the accountant's ledger (PCA has its inner estimator record under PCA's
    name).

    **Hooks** the composites call, with defaults here:
    :meth:`_supports_hardened_noise`, :meth:`_check_before_spending`,
    :meth:`_output_range` (from :class:`OutputRangeMixin`) and
    :meth:`_check_composition`.
    """

    _approx_dp_only = False
    _zcdp_only = False
    _hardened_noise = False
    _binary_input = False
    _deterministic_release = False
    _default_score = None
    _accounting_label = None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        values = {f.name: getattr(tags, f.name) for f in fields(tags)}
        values["privacy"] = PrivacyTags(
            guarantee=(
                "approx_dp"
                if self._approx_dp_only
                else "zcdp"
                if self._zcdp_only
                else "any"
            ),
            binary_input=self._binary_input,
            deterministic_release=self._deterministic_release,
            default_score=self._default_score,
            checks_before_spending=(
                type(self)._check_before_spending
                is not PrivateEstimatorMixin._check_before_spending
            ),
        )
        return PrivateTags(**values)

    def _supports_hardened_noise(self):
        """Whether a fit with the current parameters runs on hardened noise.

        Returns
        -------
        supported : bool
            ``_hardened_noise`` unless overridden (an estimator whose
            mechanisms depend on its parameters, PCA and LDA, asks its
            covariance estimator).
        """
        return self._hardened_noise

    def _check_before_spending(
        self, n_samples, y=None, *, n_features=None, n_rows=None
    ):
        """Refuse, from public values only, a fit that would fail on the rows.

        A composite calls it on a clone at its share of the budget, before
        anything is spent, so that a refusal costs nothing. The default
        checks nothing.

        Parameters
        ----------
        n_samples : int
            The number of units the fit will read (public): rows, or
            persons for a fit with ``groups``.
        y : array-like or None
            The targets (checked against a public domain only), one per row.
        n_features : int or None
            The width of the rows, where known.
        n_rows : int or None
            The number of rows (``y``'s length) when the units are persons;
            None when they are the rows (``n_samples``).

        Raises
        ------
        ValueError
            If the fit would refuse those rows; the message carries public
            values only.
        """

    def __sklearn_clone__(self):
        # scikit-learn's clone: a clone made under secure_noise=True
        # (config_context's is the calling thread's own), or of an estimator
        # so made, keeps it for its fits, wherever they run. A search clones
        # its estimator once in the caller's thread, then each task's from
        # that clone, in whichever thread joblib dispatches from: every fit
        # of the search is hardened. It only turns the switch on.
        clone = super().__sklearn_clone__()
        if self._secure_noise():
            setattr(clone, SECURE_AT_CLONE, True)
        return clone

    def _secure_noise(self):
        # Whether this estimator's fits draw hardened noise: the
        # configuration's, or a clone's made under it.
        return get_config()["secure_noise"] or getattr(self, SECURE_AT_CLONE, False)

    def _gaussian_only(self):
        """Whether every part of a fit with these parameters is a Gaussian mechanism.

        Each part calibrated to its share of a zCDP budget (noise ``Delta_i /
        sqrt(2 rho_i)``), with no pure-DP, bounded-range or sparse-vector
        step: the fit is then one Gaussian mechanism, and an (epsilon, delta)
        ask runs on its exact curve (:meth:`privacy_cost`). Public parameters
        only. False by default (zCDP calibration, always valid).
        """
        return False

    def _profile_shares(self):
        """The shares of the fit's zCDP budget its steps take, by kind, or None.

        ``{"gaussian": [...], "pure": [...], "bounded_range": [...]}`` (see
        :func:`dpcov.accounting._exact_curve.exact_rho`) for a fit whose
        plan does not depend on the data's shape, mixing Gaussian steps with
        pure-DP or bounded-range ones: an (epsilon, delta) ask then runs at
        the largest rho whose steps stay (epsilon, delta)-DP on their
        composed privacy loss distribution (:meth:`privacy_cost`). Public
        parameters only. None by default (zCDP calibration, always valid).
        """
        return None

    def _exact_allowed(self):
        # Whether an (epsilon, delta) ask may run on an exact curve: on
        # continuous noise (the exact curve does not bound a multivariate
        # discrete Gaussian; secure_noise keeps the zCDP calibration), with
        # no cap on the accountant (a cap is a filter in zCDP, and counts
        # the fit there), outside a composite that calibrates its steps in
        # zCDP (calibrated_in_zcdp). A Gaussian-DP filter (gaussian_only)
        # counts on the exact curve.
        accountant = getattr(self, "accountant", None)
        capped = (
            accountant is not None
            and (accountant.epsilon_cap is not None or accountant.rho_cap is not None)
            and not accountant.gaussian_only
        )
        return not (self._secure_noise() or capped or _IN_ZCDP.get())

    def _on_exact_curve(self):
        # Whether an (epsilon, delta) ask runs at the analytic Gaussian's mu.
        return self._gaussian_only() and self._exact_allowed()

    def _exact_shares(self):
        # The shares by kind an (epsilon, delta) ask is calibrated at on the
        # composed curve, or None (see _profile_shares).
        if self._gaussian_only() or not self._exact_allowed():
            return None
        return self._profile_shares()

    def _check_composition(self):
        """Refuse a step inside this estimator that no guarantee covers.

        The default (an estimator with no steps) checks nothing;
        :class:`~dpcov.pipeline.PrivatePipeline` checks its steps.
        """

    def privacy_cost(self):
        """The guarantee a fit spends with the current parameters.

        Computed from the parameters only (no data; the accountant's cap and
        ``secure_noise`` decide whether an (epsilon, delta) ask runs on an
        exact curve, see the user guide's "The Gaussian mechanism's exact
        curve"): it is what ``fit`` charges to the ``accountant``, and
        ``guarantee_`` (the composition of the steps in ``budget_split_``)
        is at most it, exactly in floating point.

        Returns
        -------
        guarantee : dpcov.accounting.PureDP, ZCDP, GaussianDP, ProfileDP or ApproxDP
            The guarantee of one fit.

        Raises
        ------
        ValueError
            If the privacy parameters are out of range.
        """
        if self._approx_dp_only:
            return check_approx_privacy_params(self.epsilon, self.delta)
        if self._zcdp_only:
            return check_zcdp_privacy_params(self.epsilon, self.delta, self.rho)
        return check_privacy_params(
            self.epsilon,
            self.delta,
            self.rho,
            gaussian=self._on_exact_curve(),
            shares=self._exact_shares(),
        )

    def _check_budget(self):
        # Before the data are read: validate the privacy parameters and refuse
        # a fit that would exceed the accountant's cap.
        cost = self.privacy_cost()
        if self._secure_noise() and not self._supports_hardened_noise():
            raise NoHardenedSampler(
                f"{type(self).__name__} with these parameters has no hardened "
                "sampler: secure_noise=True needs an exact discrete sampler for "
                "every mechanism of the fit. The user guide's privacy model page "
                "('Hardened noise') lists the estimators that have one."
            )
        accountant = getattr(self, "accountant", None)
        if accountant is not None:
            accountant.check(
                cost,
                label=type(self).__name__,
                unit=self._privacy_unit(),
                relation=self._relation(),
            )
        # What the fit charges and records is the cost checked here and the
        # budget it runs at, not a second reading of the parameters and the
        # configuration.
        self._fit_cost = cost
        self._fit_budget = self._running_budget(cost)
        return self._fit_budget

    def _running_budget(self, cost):
        # The zCDP budget the steps of a fit that spends ``cost`` split.
        if isinstance(cost, GaussianDP):
            # Gaussian steps on the zCDP budget that composes to mu exactly
            # (rounded down).
            return ZCDP(cost.gaussian_rho(), **cost._labels())
        if isinstance(cost, ProfileDP):
            # The rho the profile was computed at (the same cached search).
            rho = exact_rho(self.epsilon, self.delta, self._exact_shares())
            return ZCDP(rho, **cost._labels())
        return cost

    def _relation(self):
        # The neighbouring relation of the fit (its neighbours parameter).
        return getattr(self, "neighbours", "replace")

    def _privacy_unit(self):
        # "person" for a fit over persons (max_rows_per_group set: fit then
        # refuses to run without groups), else "row".
        if getattr(self, "max_rows_per_group", None) is not None:
            return "person"
        return "row"

    def _spend_budget(self, cost):
        # After input validation, before any private step: record the fit (the
        # check is repeated atomically, for accountants shared by threads). A
        # wrapper (PCA) may have its inner estimator record under its name.
        accountant = getattr(self, "accountant", None)
        if accountant is not None:
            label = self._accounting_label or type(self).__name__
            accountant.spend(
                self._charged(cost),
                label=label,
                unit=self._privacy_unit(),
                relation=self._relation(),
            )

    def _charged(self, budget):
        # What a fit run at ``budget`` (from _check_budget) spends: its cost
        # on an exact curve (GaussianDP, ProfileDP) where ``budget`` is the
        # one that cost runs at.
        cost = getattr(self, "_fit_cost", None)
        exact = isinstance(cost, GaussianDP | ProfileDP)
        if exact and budget == getattr(self, "_fit_budget", None):
            return cost
        return budget

    def _noise_generator(self, budget):
        # The generator of the fit's noise, after the input is validated and
        # before any draw; a seed the user gave is said out loud.
        warn_if_seeded(self, budget)
        return check_random_state(self.random_state)

    def _record_privacy(self, guarantee, split):
        # record_privacy for an estimator with (epsilon, delta[, rho])
        # parameters: with rho unset the budget came from (epsilon, delta),
        # and the reported epsilon is at most epsilon.
        asked = self.epsilon if getattr(self, "rho", None) is None else None
        cost = getattr(self, "_fit_cost", None)
        if (
            isinstance(cost, GaussianDP)
            and type(guarantee) is ZCDP
            and guarantee.rho <= cost.gaussian_rho()
        ):
            # Gaussian steps only: their composition is one Gaussian
            # mechanism, at most the mu asked.
            guarantee = GaussianDP.of_gaussian_steps(
                guarantee.rho, **guarantee._labels()
            )
        elif (
            isinstance(cost, ProfileDP)
            and type(guarantee) is ZCDP
            and guarantee.rho <= self._fit_budget.rho
        ):
            # Steps at the shares the profile was computed for (checked
            # against the plan before anything was spent): the profile
            # bounds each of them.
            guarantee = cost
        record_privacy(self, guarantee, split, delta=self.delta, epsilon=asked)


class ErrorBarsMixin:
    """Mixin of estimators whose releases carry additive noise: ``error_bars``.

    Subclasses implement ``_error_bars(alpha)``, from the release and the
    public law of its noise only (:mod:`dpcov.utils._error_bars`).
    """

    def error_bars(self, alpha=0.1):
        """Return intervals that cover the clipped rows' statistics with ``1 - alpha``.

        Each released entry ``T`` is the statistic ``t`` of the rows the
        mechanism saw (clipped to the public box or norm bound) plus noise
        of a public law: ``T -+`` the noise's ``1 - alpha / 2`` quantile
        covers ``t`` with probability ``1 - alpha``, entry by entry (not
        jointly). Entries that are smooth functions of noisy statistics (a
        variance, a mean over a noisy count) get the parametric bootstrap's
        basic interval, accurate to first order. The intervals are in the
        units of the fitted attributes, computed from the release and public
        values only (free: no budget is spent). They carry no sampling
        error: they cover the statistic of these rows, clipped, not a
        population parameter, and not the bias of the clipping.

        Parameters
        ----------
        alpha : float, default=0.1
            One minus the coverage, in ``(0, 1)``.

        Returns
        -------
        bars : dict of str to (ndarray, ndarray)
            For each fitted attribute with additive noise, the lower and
            upper ends of its entries' intervals (NumPy arrays of its
            shape, floats for a scalar such as ``intercept_``; empty where
            no released attribute has additive noise).

        Notes
        -----
        The user guide's :ref:`error_bars` lists each estimator's intervals
        and their measured coverage.

        Examples
        --------
        >>> import numpy as np
        >>> from dpcov.preprocessing import StandardScaler
        >>> X = np.random.default_rng(0).uniform(0, 10, size=(1000, 2))
        >>> scaler = StandardScaler(epsilon=1.0, bounds=(0, 10), random_state=0)
        >>> low, high = scaler.fit(X).error_bars(alpha=0.1)["mean_"]
        >>> bool(np.all((low <= scaler.mean_) & (scaler.mean_ <= high)))
        True
        """
        check_is_fitted(self)
        return self._error_bars(check_alpha(alpha))


_REMEDY = (
    "Use a larger budget, more rows, a tighter public data_norm or bounds, or "
    "fewer features."
)


def warn_if_noise_dominated(
    estimator, signal_to_noise, *, what="release", remedy=_REMEDY
):
    """Warn with :class:`~dpcov.exceptions.NoiseDominatedWarning` below 1.

    The warning names the user's line (see :func:`dpcov.utils._warnings.warn`),
    whether the estimator was called directly or through a pipeline or a
    search.

    Parameters
    ----------
    estimator : estimator
        The fitted estimator (named in the message).
    signal_to_noise : float
        Its signal-to-noise figure, computed from released and public values
        only (it is printed, rounded).
    what : str, default="release"
        What the figure measures, for the message.
    remedy : str, default: a larger budget, more rows, tighter geometry
        What the user can change, for the message (public advice only).
    """
    if not signal_to_noise >= 1.0:  # (NaN too: a figure that is not finite)
        warn(
            f"{type(estimator).__name__}: the {what} is dominated by noise "
            f"(signal_to_noise_={_two_digits_down(signal_to_noise)} < 1, from the "
            f"release and the public noise scale). {remedy}",
            NoiseDominatedWarning,
        )


def _two_digits_down(value):
    # The figure rounded down to two significant digits, so that a value
    # below 1 never prints as "1" (0.996 prints as 0.99, not 1).
    if not (math.isfinite(value) and value > 0):
        return f"{value:.2g}"
    step = 10.0 ** (math.floor(math.log10(value)) - 1)
    return f"{math.floor(value / step) * step:.2g}"


def _seed_kind(seed):
    if isinstance(seed, np.random.Generator):
        return "a numpy Generator (its state can be wound back to this fit's draws)"
    if isinstance(seed, np.random.RandomState):
        return "a numpy RandomState"
    return "an integer seed"


def _is_finite(budget):
    return all(math.isfinite(value) for value in budget._parameters())


def warn_if_seeded(estimator, budget):
    """Warn with :class:`~dpcov.exceptions.SeededNoiseWarning` for a seeded release.

    A fit whose ``random_state`` is not None, at a finite budget, on numpy's
    noise (under ``secure_noise`` every private draw comes from the
    operating system's CSPRNG, whatever the seed), releases noise that
    anyone who knows the seed can regenerate. The message names the kind of
    seed, never its value.

    Parameters
    ----------
    estimator : estimator
        The estimator being fitted (its ``random_state`` is read).
    budget : PureDP, ZCDP or ApproxDP
        The guarantee of the fit: no warning when it is infinite (no noise).
    """
    seed = estimator.random_state
    if seed is None or not _is_finite(budget) or get_config()["secure_noise"]:
        return
    warn(
        f"{type(estimator).__name__}: random_state is {_seed_kind(seed)}, so "
        "this release is not private against anyone who knows it or holds the "
        "fitted estimator: they can regenerate the noise and subtract it. Use "
        "random_state=None for a release; seed only tests and experiments.",
        SeededNoiseWarning,
    )
