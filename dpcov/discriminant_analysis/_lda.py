"""Private linear discriminant analysis from private class statistics.

Linear discriminant analysis needs the class means, the class priors and the
pooled within-class covariance: private means and a private covariance are
its sufficient statistics. The rows are clipped to a private radius inside a
public bound; the class sums and counts are released together (the counts
at no extra sensitivity); the rows, centred on the released class means, go
to a private covariance estimator (AdaptiveCovariance by default).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings
from numbers import Integral, Real

import numpy as np
from scipy import linalg
from scipy.special import logsumexp
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    TransformerMixin,
    clone,
)
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import check_is_fitted

from ..accounting import compose
from ..base import (
    PRIVACY_PARAMETER_CONSTRAINTS,
    PrivateEstimatorMixin,
    budget_params,
    is_private,
)
from ..covariance import AdaptiveCovariance
from ..covariance._base import BasePrivateCovariance
from ..exceptions import NoiseDominatedWarning, SeededNoiseWarning
from ..mechanisms import calibrate_additive, radius_counts
from ..mechanisms._sensitivity import class_statistics_sensitivities
from ..utils._docstrings import fill_doc
from ..utils._geometry import (
    check_one_bound,
    norm_bound,
    plan_geometry,
    plan_radius_inside,
    release_radius,
    release_ranges,
    split_geometry_budget,
)
from ..utils._gram._rows import _clip, _row_norms
from ..utils._gram._units import (
    UnitRows,
    check_group_parameters,
    check_unit_input,
    persons_in_messages,
)
from ..utils._input import quiet_float_errors, validate_rows
from ..utils._private_count import (
    UNBINDING_COUNT,
    release_count,
    split_count,
)
from ..utils._private_ranges import check_bounds_without_rows, ranges_first_pass
from ..utils._random import spawn_generators
from ..utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    check_params_always,
)

__all__ = ["LinearDiscriminantAnalysis", "class_statistics_noise"]

#: Shares of the budget: the private radius, the class sums and counts, the
#: pooled within-class covariance.
LDA_SHARES = {"radius": 0.1, "means": 0.2, "covariance": 0.7}


def class_statistics_noise(budget, radius, n_features):
    """Noise of the joint release of the class sums and counts, and the weight.

    The vector is ``(S_1, ..., S_K, w N_1, ..., w N_K)``: the sums of the
    rows of each class (rows of norm at most ``R``) and the class counts.
    Replacing one row either keeps its class (the class's sum moves by
    ``x' - x``, at most ``2 R``) or moves it from class ``a`` to class ``b``
    (``S_a`` loses ``x``, ``S_b`` gains ``x'``, ``N_a`` and ``N_b`` move by
    1): L2 norm at most ``sqrt(2 R**2 + 2 w**2)``, which is ``2 R`` for
    ``w = R``, so under zCDP the counts add nothing to the sums' L2
    sensitivity ``2 R``; L1 norm at most ``2 R sqrt(d) + 2 w``.

    A person whose ``k_p`` rows (each of norm at most ``R``) weigh
    ``1 / k_p`` each contributes ``(s_1, ..., s_K, w c_1, ..., w c_K)``
    with ``c_j`` the share of its rows in class ``j`` (``sum_j c_j = 1``)
    and ``|s_j| <= R c_j``. Replacing the person moves the vector by at
    most ``R**2 sum_j (c_j + c'_j)**2 + w**2 sum_j (c_j - c'_j)**2
    = 2 R**2 sum_j (c_j**2 + c'_j**2) <= 4 R**2`` in squared L2 norm for
    ``w = R``, and by at most ``2 R sqrt(d) + 2 w`` in L1 norm: the row's
    sensitivities, whatever the person's rows and classes.

    Parameters
    ----------
    budget : ZCDP or PureDP
        The release's budget.
    radius : float
        ``R``, the rows' norm bound.
    n_features : int
        ``d``.

    Returns
    -------
    weight : float
        ``w = R``.
    noise : AdditiveNoise
        The noise of each coordinate.
    """
    weight = float(radius)
    l2, l1 = class_statistics_sensitivities(radius, n_features, weight)
    noise = calibrate_additive(budget, l2_sensitivity=l2, l1_sensitivity=l1)
    return weight, noise


@fill_doc
class LinearDiscriminantAnalysis(
    PrivateEstimatorMixin, ClassifierMixin, TransformerMixin, BaseEstimator
):
    """Private linear discriminant analysis.

    A drop-in for :class:`sklearn.discriminant_analysis.LinearDiscriminantAnalysis`
    whose class means, class priors and pooled within-class covariance are
    private. The classes are public (``classes``: never read off ``y``).
    The fit:

    1. finds a private radius ``r`` inside the public bound (``data_norm``,
       or ``sqrt(n_features)`` in the unit coordinates of ``bounds``): the
       exponential mechanism over the powers of two below the bound and the
       bound itself, as the covariance estimators' private radius; it clips
       the rows to it;
    2. releases the class sums and counts together (:func:`class_statistics_noise`);
       the class means are the sums over the noisy counts, projected into the
       ``r``-ball (post-processing);
    3. releases the covariance of the rows centred on their class's released
       mean (norm at most ``2 r``) with a private covariance estimator
       (``covariance``, default :class:`~dpcov.covariance.AdaptiveCovariance`,
       which may clip harder with a private threshold), and adds a ridge at
       its public noise level.

    The fit is rho-zCDP (hence (``epsilon``, ``delta``)-DP) with
    ``delta > 0`` or ``rho``, and pure ``epsilon``-DP with ``delta=0``, with
    respect to replacing one row (its label included: a replaced row may
    change class, which moves two class sums and two counts), or one
    person's rows with ``groups`` and ``max_rows_per_group``; and to adding
    or removing one with ``neighbours="add_remove"``.

    Read more in the :ref:`User Guide <linear_models>`.

    Parameters
    ----------
    {epsilon}
    {delta}
    {rho}
    data_norm : float, default=None
        A public bound on the row norms, the outer bound of the private
        radius (in a :class:`~dpcov.pipeline.PrivatePipeline`, the range of
        the step before, e.g. PCA's output norm bound). None searches the
        whole grid ``2**-32`` to ``2**32``. Cannot be combined with
        ``bounds``.
    bounds : tuple of (lower, upper) or "private", default=None
        Public range of each feature, for features of different scales:
        scalars or arrays of shape ``(n_features,)`` with ``lower < upper``,
        from knowledge of the domain, never from the data. Each feature is
        clipped to its range and the box mapped onto ``[-1, 1]^d``
        (``z = (x - m) / h``, midpoint ``m``, half-width ``h``); the fit
        runs there, its private radius inside ``sqrt(n_features)``, and the
        class means and covariance come back in the original units (the
        noise on feature ``i`` scaled by ``h_i``). ``"private"`` finds the
        ranges privately with a quarter of the budget
        (``budget_split_["bounds"]``; see :ref:`private_ranges`); it needs a
        few thousand rows at ``epsilon=1`` (``fit`` says how many). In a
        :class:`~dpcov.pipeline.PrivatePipeline`, a box handed on by the step
        before (the scaler's image of its box) arrives here.
    classes : array-like of shape (n_classes,)
        The public class labels. Required. A label outside them is refused
        with a ValueError (outside the domain, as NaN is): the error tells
        that such a row exists, so give every label the data may hold.
    priors : array-like of shape (n_classes,), default=None
        Public class priors; None uses the private counts.
    covariance : estimator instance, default=None
        A dpcov covariance estimator for the pooled within-class covariance;
        its budget, ``data_norm`` and ``assume_centered`` are set by the fit.
        None uses ``AdaptiveCovariance()``.
    n_components : int, default=None
        Components of ``transform`` (at most ``min(n_classes - 1,
        n_features)``; None: that).
    max_rows_per_group : int, default=None
        Public bound ``k`` on the rows one person contributes, with
        ``groups`` passed to ``fit`` (the person of each row): the privacy
        unit is then the person, whose rows may hold several classes. At
        most ``k`` rows of each person are kept, at random; each row is
        clipped to the radius and weighs ``1 / k_p`` in the class sums and
        counts (``k_p`` the person's kept rows), so a person moves them by
        one row's worth (:func:`class_statistics_noise`); the private
        radius counts persons by their largest row norm, and the pooled
        covariance is fitted over persons. See :ref:`privacy_units`.
    neighbours : {{"replace", "add_remove"}}, default="replace"
        The neighbouring relation. ``"add_remove"``: one unit (a row, or a
        person with ``groups``) added or removed, so their number is
        private: the fit first releases a noisy count with 1/16 of the
        budget (sensitivity 1; ``released_count_``), which the private
        radius's plan reads (its scores and its minimum of units), and the
        covariance estimator fits under add/remove too (with a count of its
        own). The class statistics need no count (the means are ratios of
        noisy sums to noisy counts) and move by at most ``sqrt(2) r`` when
        a unit comes or goes, within their replace-one bound ``2 r``; the
        fit holds under both relations. With ``bounds="private"``, the
        ranges' plan reads the released count too.
    {accountant}
    {random_state}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The public classes.
    means_ : ndarray of shape (n_classes, n_features)
        Private class means.
    priors_ : ndarray of shape (n_classes,)
        Public priors, or the private counts' shares.
    covariance_ : ndarray of shape (n_features, n_features)
        Private pooled within-class covariance, with the ridge added.
    coef_ : ndarray of shape (n_classes, n_features) or (1, n_features)
        Weights of the linear decision function (one row for two classes,
        as scikit-learn's).
    intercept_ : ndarray of shape (n_classes,) or (1,)
        Its intercepts.
    scalings_ : ndarray of shape (n_features, n_components)
        Discriminant directions of ``transform``.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Share of the between-class variance (of the released means, in the
        released covariance's metric) along each direction.
    xbar_ : ndarray of shape (n_features,)
        The prior-weighted mean of the class means (``transform``'s centre).
    data_norm_ : float
        The private radius the rows were clipped to (with ``bounds``, in the
        box's unit coordinates).
    released_count_ : int or None
        Under ``neighbours="add_remove"``, the released (noisy) number of
        units; None otherwise.
    ridge_ : float
        The ridge added to the covariance (its public noise level; with
        ``bounds``, in the box's unit coordinates: ``h_i**2`` times it on
        feature ``i``'s variance).
    bounds_ : tuple of ndarray of shape (n_features,) or None
        The box the rows were clipped to (``bounds``, validated, or the
        private ranges), else None.
    guarantee_ : dpcov.accounting.PureDP or dpcov.accounting.ZCDP
        The guarantee of the fit.
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
        ``"bounds"`` (with private ranges), ``"radius"``, ``"means"`` and
        the covariance estimator's steps (prefixed ``"covariance_"``); they
        compose to ``guarantee_``.
    noise_sampler_ : str
        The sampler of the fit's noise.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    sklearn.discriminant_analysis.LinearDiscriminantAnalysis : The
        non-private estimator.

    Notes
    -----
    The budget is split 0.1 (radius), 0.2 (class sums and counts), 0.7
    (covariance), after a quarter for the ranges with ``bounds="private"``.
    The pooled covariance is of the rows centred on the released means,
    never through the true counts or means; its noise scales with ``r**2``,
    which is why the radius is chosen privately inside a worst-case bound.

    References
    ----------
    .. [1] Dong, W., Liang, Y. and Yi, K. "Differentially Private Covariance
       Revisited". NeurIPS 2022.
    .. [2] McSherry, F. and Talwar, K. "Mechanism Design via Differential
       Privacy". FOCS 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.discriminant_analysis import LinearDiscriminantAnalysis
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 3, 30000)
    >>> X = rng.normal(size=(30000, 4)) + 3.0 * np.eye(3, 4)[y]
    >>> lda = LinearDiscriminantAnalysis(epsilon=1.0, data_norm=20.0,
    ...                                  classes=[0, 1, 2], random_state=0)
    >>> round(lda.fit(X, y).score(X, y), 2)
    0.97
    """

    _hardened_noise = True
    _default_score = "accuracy"

    _parameter_constraints: dict = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "data_norm": [Interval(Real, 1e-150, 1e150, closed="both"), None],
        "bounds": ["array-like", StrOptions({"private"}), None],
        "classes": ["array-like", None],
        "priors": ["array-like", None],
        "covariance": [HasMethods(["fit"]), None],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "neighbours": [StrOptions({"replace", "add_remove"})],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-6,
        rho=None,
        data_norm=None,
        bounds=None,
        classes=None,
        priors=None,
        covariance=None,
        n_components=None,
        max_rows_per_group=None,
        neighbours="replace",
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.data_norm = data_norm
        self.bounds = bounds
        self.classes = classes
        self.priors = priors
        self.covariance = covariance
        self.n_components = n_components
        self.max_rows_per_group = max_rows_per_group
        self.neighbours = neighbours
        self.accountant = accountant
        self.random_state = random_state

    def _check_classes(self):
        if self.classes is None:
            raise ValueError(
                "LinearDiscriminantAnalysis needs classes=[...]: the public list "
                "of class labels (never read off y)."
            )
        classes = np.asarray(self.classes)
        if classes.ndim != 1 or classes.size < 2:
            raise ValueError("classes must list at least two labels.")
        if np.unique(classes).size != classes.size:
            raise ValueError("classes must not repeat a label.")
        return classes

    def _check_priors(self, n_classes):
        if self.priors is None:
            return None
        priors = np.asarray(self.priors, dtype=np.float64)
        if priors.shape != (n_classes,) or np.any(priors < 0) or priors.sum() <= 0:
            raise ValueError(
                "priors must be non-negative, one per class, and not all zero."
            )
        return priors / priors.sum()

    def _labels(self, y, classes, n_samples):
        # Class indices of y; a label outside classes is refused (naming no
        # label: outside the domain).
        if y is None:
            raise ValueError(
                "LinearDiscriminantAnalysis requires y to be passed, but the "
                "target y is None."
            )
        try:
            labels = np.asarray(y)
        except (TypeError, ValueError):
            labels = None
        if labels is None or labels.ndim not in (1, 2):
            raise ValueError("LinearDiscriminantAnalysis.fit: y should be a 1d array.")
        if labels.ndim == 2:
            if labels.shape[1] != 1:
                raise ValueError(
                    "LinearDiscriminantAnalysis.fit: y should be a 1d array."
                )
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected; it "
                "is read as one.",
                DataConversionWarning,
                stacklevel=3,
            )
            labels = labels.reshape(-1)
        if labels.shape[0] != n_samples:
            raise ValueError(
                # (No count: the rows' number is private over persons and
                # under add/remove neighbours.)
                "X and y have different numbers of rows: they must match."
            )
        index = np.full(n_samples, -1)
        for k, label in enumerate(classes):
            try:
                index[labels == label] = k
            except (TypeError, ValueError):
                pass
        if np.any(index < 0) and labels.dtype.kind == "f":
            finite = labels[np.isfinite(labels)]
            if finite.size < labels.size or np.any(finite != np.round(finite)):
                raise ValueError(
                    "Unknown label type: continuous. LinearDiscriminantAnalysis "
                    "needs class labels, each one of classes."
                )
        if np.any(index < 0):
            raise ValueError(
                "LinearDiscriminantAnalysis.fit: y holds a label outside classes "
                "(refused: pass every label the data may hold in classes)."
            )
        return index

    def _check_before_spending(self, n_samples, y, n_features=None, n_rows=None):
        """The fit's checks of public values and labels, before any release.

        The parameters (``classes``, ``priors``, ``n_components`` against the
        classes, ``bounds``, the covariance estimator), the budget, the labels
        (each one of ``classes``; ``n_rows`` of them when the units are
        persons) and the units the private radius and ranges need at this
        budget (``n_samples``). :class:`~dpcov.pipeline.PrivatePipeline`
        calls it before any of its steps runs, with ``n_features`` unknown
        (then the rows are those one feature needs: the fewest), so that a
        refusal here spends nothing there either. No message names a label.

        Returns
        -------
        classes, priors, budget, index
            The public classes, the normalised priors (or None), the budget
            and each row's class index.
        """
        check_params_always(self)
        classes = self._check_classes()
        priors = self._check_priors(classes.size)
        budget = self._check_budget()
        check_one_bound(self.bounds, self.data_norm)
        if self.n_components is not None and self.n_components > classes.size - 1:
            raise ValueError(
                f"n_components={self.n_components} is above n_classes - 1="
                f"{classes.size - 1}."
            )
        # The private ranges' quarter first (bounds="private"), then the
        # model's split of the rest: the radius, the class statistics and the
        # covariance.
        split = split_geometry_budget(
            budget, LDA_SHARES, private_ranges=isinstance(self.bounds, str)
        )
        self._covariance_estimator(split["covariance"])
        check_bounds_without_rows(
            self.bounds, n_samples, budget, name=type(self).__name__
        )
        index = self._labels(y, classes, n_samples if n_rows is None else n_rows)
        # The private radius inside the public bound (for one feature when
        # the width is not known yet: the fewest rows).
        width = 1 if n_features is None else n_features
        bound = norm_bound(self.bounds, self.data_norm, width)
        plan_radius_inside(split["radius"], n_samples, bound, name=type(self).__name__)
        return classes, priors, budget, index

    def _plan(self, budget, n_samples, n_features):
        # The geometry step: the box (public, or the private ranges with a
        # quarter of the budget first), the private radius inside the public
        # bound, and the model's split of the rest (LDA_SHARES).
        return plan_geometry(
            budget,
            n_samples,
            n_features,
            bounds=self.bounds,
            data_norm=self.data_norm,
            shares=LDA_SHARES,
            radius="inside",
            name=type(self).__name__,
        )

    def _supports_hardened_noise(self):
        # The radius and the class statistics have exact samplers; the
        # covariance estimator decides for its part.
        if self.covariance is None:
            return AdaptiveCovariance()._supports_hardened_noise()
        covariance = self.covariance
        return is_private(covariance) and covariance._supports_hardened_noise()

    def _covariance_estimator(self, share):
        # The configured covariance estimator (its geometry, budget and
        # accountant are the LDA's), checked before anything is spent.
        estimator = (
            AdaptiveCovariance() if self.covariance is None else clone(self.covariance)
        )
        if not isinstance(estimator, BasePrivateCovariance):
            raise ValueError(
                "covariance must be a dpcov covariance estimator (one of "
                "dpcov.covariance's)."
            )
        if estimator.bounds is not None or estimator.data_norm is not None:
            raise ValueError(
                "covariance=...: leave its bounds and data_norm at None; the "
                "LinearDiscriminantAnalysis sets its geometry (the centred rows' "
                "norm bound)."
            )
        if (
            estimator.max_rows_per_group is not None
            or estimator.neighbours != "replace"
        ):
            raise ValueError(
                "covariance=...: leave its max_rows_per_group and neighbours at "
                "their defaults; the LinearDiscriminantAnalysis sets its unit "
                "(its own max_rows_per_group, with groups)."
            )
        # A placeholder norm for the check; the fit sets the real one.
        estimator.set_params(
            data_norm=1.0,
            assume_centered=True,
            accountant=None,
            **budget_params(estimator, share),
        )
        check_params_always(estimator)
        return estimator

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, groups=None):
        """Fit the private class means, priors and pooled covariance.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows (clipped to the private radius; ``X`` itself is not
            modified).
        y : array-like of shape (n_samples,)
            Labels, each one of ``classes``.
        groups : array-like of shape (n_samples,), default=None
            The person of each row, with ``max_rows_per_group`` set (see
            ``max_rows_per_group`` and :ref:`privacy_units`).

        Returns
        -------
        self : object
            The fitted classifier.
        """
        name = type(self).__name__
        check_group_parameters(groups, self.max_rows_per_group, name=name)
        # The public values first (checked again, with the labels and the
        # rows' count, below).
        check_params_always(self)
        self._check_priors(self._check_classes().size)
        self._check_budget()
        X = validate_rows(self, X)
        if groups is not None:
            check_unit_input(X, groups, name=name)
        classes, priors, budget, index, plan = self._check_and_plan(X, y, groups)
        geometry, split, count, plan_budget = plan
        estimator = self._covariance_estimator(split["covariance"])
        X = np.asarray(X, dtype=np.float64)
        rng = self._noise_generator(budget)
        units = None
        if groups is not None:
            # At most k rows of each person, at random.
            (order,) = spawn_generators(rng, 1)
            units = UnitRows.select(
                X, groups, self.max_rows_per_group, order, name=name
            )
        first = None
        if geometry.ranges is not None:
            first = ranges_first_pass(X if units is None else units)
        self._spend_budget(budget)  # everything above used public values only
        released = None
        if count is not None:
            # Add/remove: the number of units is private; a noisy count
            # first, which the plan (the radius's) reads in its place.
            geometry, split, released = self._plan_at_released_count(
                X, units, count, plan_budget, rng
            )
            estimator.set_params(neighbours="add_remove")

        # 0-1. The geometry: the rows (a person's kept rows) in the box's unit
        # coordinates, clipped to the private radius.
        geometry, rows, radius = self._release_geometry(X, geometry, first, rng, units)

        # 2. Class sums and counts, one release.
        if units is not None:
            index = index[units.rows]
        means, noisy_counts = self._release_class_statistics(
            rows, index, units, classes.size, radius, split["means"], rng
        )
        if priors is None:
            priors = noisy_counts / noisy_counts.sum()

        # 3. The covariance of the rows centred on their class's released
        # mean: norm at most 2 r.
        centred = rows - means[index]
        self._fit_pooled(estimator, centred, units, radius, rng)
        # The noise level as a ridge (public); at least a few ulps of the
        # scale, and of the radius squared (the rows' scale: a zero release,
        # from rows constant within each class at epsilon=inf, has no scale
        # of its own), so that a singular release still gives a finite
        # classifier.
        n_features = X.shape[1]
        scale = max(float(np.trace(estimator.covariance_)) / n_features, 1e-300)
        ridge = float(max(estimator.noise_level_, 1e-9 * scale, 1e-12 * radius**2))
        covariance = estimator.covariance_ + ridge * np.eye(n_features)
        floor = ridge
        if geometry.box is not None:
            # Back to the original units (post-processing).
            means = geometry.from_unit(means)
            covariance = geometry.from_unit_scatter(covariance)
            floor = ridge * float(np.min(geometry.half_widths)) ** 2

        self._record(classes, means, priors, covariance, radius, ridge, floor)
        self.bounds_ = geometry.box
        self.released_count_ = released
        steps = {**geometry.split, "means": split["means"]}
        if count is not None:
            steps = {"count": count, **steps}
        for name, step in estimator.budget_split_.items():
            steps[f"covariance_{name}"] = step
        self._record_privacy(compose(steps.values()), steps)
        return self

    def _check_and_plan(self, X, y, groups):
        # The checks of public values and labels, and the plan, before
        # anything is spent: (classes, priors, budget, index, (geometry,
        # split, count budget, the plan's budget)). The plan reads the number
        # of units: rows, or persons with groups (whose number no message
        # states); under add/remove none (a count no minimum binds: the
        # checks that need the number come after the released count, in
        # fit), and the count's share of the budget is set aside.
        n_samples, n_features = X.shape
        n_units = n_samples if groups is None else np.unique(groups).size
        count = None
        if self.neighbours == "add_remove":
            n_units = UNBINDING_COUNT
        with persons_in_messages(groups is not None):
            classes, priors, budget, index = self._check_before_spending(
                n_units, y, n_features, n_rows=n_samples
            )
            plan_budget = budget
            if self.neighbours == "add_remove":
                count, plan_budget = split_count(budget)
            geometry, split = self._plan(plan_budget, n_units, n_features)
        limit = min(classes.size - 1, n_features)
        if self.n_components is not None and self.n_components > limit:
            raise ValueError(
                f"n_components={self.n_components} is above min(n_classes - 1, "
                f"n_features)={limit}."
            )
        return classes, priors, budget, index, (geometry, split, count, plan_budget)

    def _plan_at_released_count(self, X, units, count, plan_budget, rng):
        # Under add/remove: the noisy number of units (rows, or persons), and
        # the plan at it (its checks, e.g. the units the private radius
        # needs, refuse after the fit is recorded, naming the count as the
        # released one).
        _, released = release_count(X if units is None else units, count, rng)
        with persons_in_messages(units is not None, released=True):
            geometry, split = self._plan(plan_budget, released, X.shape[1])
        return geometry, split, released

    def _fit_pooled(self, estimator, centred, units, radius, rng):
        # The pooled covariance's estimator fitted on the centred rows (norm
        # at most 2 r); over persons (units), on the same persons' kept rows,
        # all kept again. (The whole fit is recorded once, by fit: the
        # estimator has no accountant.)
        estimator.set_params(data_norm=2.0 * radius, random_state=rng)
        groups = None
        if units is not None:
            estimator.set_params(max_rows_per_group=self.max_rows_per_group)
            sizes = np.diff(units.starts)
            groups = np.repeat(np.arange(sizes.size), sizes)
        with warnings.catch_warnings():
            # Its figure is of the pooled covariance alone, a part of the fit.
            warnings.simplefilter("ignore", NoiseDominatedWarning)
            warnings.simplefilter("ignore", SeededNoiseWarning)
            estimator.fit(centred, groups=groups)

    @staticmethod
    def _release_class_statistics(rows, index, units, n_classes, radius, budget, rng):
        # The class sums and counts, one release (class_statistics_noise);
        # over persons (units), each kept row weighs 1 / k_p: a person moves
        # them by one row's worth. Returns the means (projected into the
        # r-ball, where the true means lie: free) and the noisy counts.
        n_features = rows.shape[1]
        weights = None if units is None else units.mean_weights
        sums = np.zeros((n_classes, n_features))
        np.add.at(sums, index, rows if weights is None else rows * weights[:, None])
        counts = np.bincount(index, weights=weights, minlength=n_classes)
        weight, noise = class_statistics_noise(budget, radius, n_features)
        stacked = np.concatenate([sums.ravel(), weight * counts.astype(np.float64)])
        noisy = noise.add(stacked, rng)
        noisy_sums = noisy[: n_classes * n_features].reshape(n_classes, n_features)
        noisy_counts = np.maximum(noisy[n_classes * n_features :] / weight, 1.0)
        means = noisy_sums / noisy_counts[:, None]
        mean_norms = np.linalg.norm(means, axis=1, keepdims=True)
        means *= np.minimum(1.0, radius / np.maximum(mean_norms, 1e-300))
        return means, noisy_counts

    def _release_geometry(self, X, geometry, first, rng, units=None):
        # 0. With ranges (public, or found privately first), the rows in the
        # box's unit coordinates. 1. The private radius inside the public
        # bound; the rows clipped to it. Over persons (units), the kept rows,
        # person after person; the radius counts each person once, by its
        # largest row norm (a count of sensitivity 1 per person).
        if geometry.ranges is not None:
            geometry = release_ranges(
                geometry, X if units is None else units, first, rng=rng
            )
        if units is not None:
            X = X[units.rows]
        if geometry.box is not None:
            X = geometry.to_unit(X)
        norms = _row_norms(X)
        grid = geometry.radius_grid
        counts = None
        if grid.size > 1:
            scored = norms
            if units is not None and norms.size:
                # (Each person once, by its largest row norm; an empty table
                # under add/remove has no person to score.)
                scored = np.maximum.reduceat(norms, units.starts[:-1])
            counts = radius_counts(scored, grid)
        radius = release_radius(geometry, counts, rng=rng)
        rows, _ = _clip(X, radius, owned=False, norms=norms)
        return geometry, rows, radius

    def _record(self, classes, means, priors, covariance, radius, ridge, floor):
        # The linear classifier and the discriminant directions
        # (post-processing of the release).
        self.classes_ = classes
        self.means_ = means
        self.priors_ = priors
        self.covariance_ = covariance
        self.data_norm_ = radius
        self.ridge_ = ridge
        # The inverse and the whitening from one eigendecomposition of the
        # (ridged, symmetric) covariance; eigenvalues floored a few ulps
        # above 0, so a degenerate release gives no error and no warning.
        values, vectors = linalg.eigh(covariance)
        floor = max(floor, 1e-12 * float(values.max()), np.finfo(np.float64).tiny)
        values = np.maximum(values, floor)
        # (Post-processing of the release; a near-singular release can make
        # coef_ and intercept_ overflow: inf, silently, as scoring does.)
        with quiet_float_errors():
            coef = ((means @ vectors) / values) @ vectors.T
            whitening = vectors / np.sqrt(values)
            log_priors = np.log(priors)
            intercept = -0.5 * np.sum(means * coef, axis=1) + log_priors
        # Every class's score (predict, predict_proba); coef_ and intercept_
        # as scikit-learn's: one row for two classes (the second's score
        # less the first's).
        self._class_coef, self._class_intercept = coef, intercept
        if classes.size == 2:
            with quiet_float_errors():
                self.coef_ = (coef[1] - coef[0])[np.newaxis, :]
                self.intercept_ = np.array([intercept[1] - intercept[0]])
        else:
            self.coef_, self.intercept_ = coef, intercept
        self.xbar_ = priors @ means
        centred = (means - self.xbar_) @ whitening
        between = centred.T @ (centred * priors[:, None])
        values, directions = linalg.eigh(between)
        vectors = whitening @ directions
        order = np.argsort(values)[::-1]
        limit = min(classes.size - 1, means.shape[1])
        n_components = limit if self.n_components is None else int(self.n_components)
        self.scalings_ = vectors[:, order[:n_components]]
        self.explained_variance_ratio_ = values[order][:n_components] / max(
            values.sum(), 1e-300
        )

    def decision_function(self, X):
        """Log-posterior scores of each class, up to a constant.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows (not clipped).

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes)
            ``X @ coef_.T + intercept_`` (a column for two classes, as
            scikit-learn's).
        """
        check_is_fitted(self)
        X = validate_rows(self, X, reset=False, method="decision_function")
        with quiet_float_errors():
            scores = X @ self.coef_.T + self.intercept_
        if self.classes_.size == 2:
            return scores[:, 0]
        return scores

    def _scores(self, X):
        check_is_fitted(self)
        X = validate_rows(self, X, reset=False, method="predict")
        # Extreme rows overflow silently (a warning would single them out).
        with quiet_float_errors():
            return X @ self._class_coef.T + self._class_intercept

    def predict(self, X):
        """Predict the class of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_log_proba(self, X):
        """Log-probabilities of the classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log posterior probabilities.
        """
        scores = self._scores(X)
        with quiet_float_errors():
            return scores - logsumexp(scores, axis=1, keepdims=True)

    def predict_proba(self, X):
        """Probabilities of the classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Posterior probabilities.
        """
        log_proba = self.predict_log_proba(X)
        with quiet_float_errors():
            return np.exp(log_proba)

    def transform(self, X):
        """Project rows on the discriminant directions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            ``(X - xbar_) @ scalings_``.
        """
        check_is_fitted(self)
        X = validate_rows(self, X, reset=False, method="transform")
        with quiet_float_errors():
            return (X - self.xbar_) @ self.scalings_
