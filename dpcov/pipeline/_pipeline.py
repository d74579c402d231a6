"""A pipeline with one privacy budget, whose steps pass their ranges on.

:class:`PrivatePipeline` is a scikit-learn :class:`~sklearn.pipeline.Pipeline`
that splits one budget over its private steps and, before each private step
that has no range of its own, hands it the output range of the step before
(computed from that step's public parameters and released values only).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import warnings
from contextlib import contextmanager
from numbers import Integral, Real

import numpy as np
from scipy import sparse
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.utils.metaestimators import available_if

from ..accounting import ZCDP, BudgetAccountant, PureDP, compose, split_budget
from ..accounting._composition import budget_weights, compose_fits
from ..base import (
    OutputRangeMixin,
    PrivateEstimatorMixin,
    budget_params,
    calibrated_in_zcdp,
    is_private,
    privacy_tags,
    record_privacy,
    warn_if_seeded,
)
from ..exceptions import SeededNoiseWarning
from ..preprocessing._public import PublicTransformer, finite_output
from ..utils._array_api import array_api_input
from ..utils._gram import is_dask_array
from ..utils._gram._dask import rows_in_blocks
from ..utils._gram._rows import _clip
from ..utils._gram._sparse import _sparse_clip, _sparse_row_norms
from ..utils._gram._units import (
    check_group_parameters,
    check_groups,
    persons_in_messages,
)
from ..utils._input import validate_rows
from ..utils._private_count import UNBINDING_COUNT, fewest_units
from ..utils._random import check_random_state
from ..utils._sklearn_compat import (
    Hidden,
    Interval,
    Options,
    StrOptions,
    _fit_context,
    _name_estimators,
    _num_features,
    _num_samples,
    _print_elapsed_time,
)
from ..utils.validation import DEFAULT_DELTA, check_privacy_params
from ._composition import (
    check_composition,
    composite_children,
    public_map_copy,
)
from ._cost import check_shareable, private_steps

__all__ = [
    "PrivatePipeline",
    "as_private_pipelines",
    "make_private_pipeline",
    "output_range",
]


def output_range(estimator):
    """The range of a fitted step's outputs, from public and released values.

    Parameters
    ----------
    estimator : estimator instance
        A fitted step.

    Returns
    -------
    range : tuple or None
        ``("bounds", (lower, upper))`` (a box, per output feature),
        ``("data_norm", r)`` (an L2 bound on the output rows), or None when
        the step does not state one (a scikit-learn transformer, or a step
        whose range is unbounded). The rows the step is later given may lie
        outside (transforms do not clip); the step that receives the range
        clips to it.
    """
    if isinstance(estimator, FrozenEstimator):
        estimator = estimator.estimator  # a fitted step, frozen
    if isinstance(estimator, OutputRangeMixin):
        return estimator._output_range()
    return None


def _skipped(step):
    # A pipeline step that runs nothing.
    return step is None or (isinstance(step, str) and step == "passthrough")


def _first_step(steps):
    # The first step that runs (None when there is none).
    return next((step for _, step in steps if not _skipped(step)), None)


@contextmanager
def _temporary_params(estimator, params):
    # Set params for one fit, then put the user's back (the pipeline's fit
    # changes no parameter, as scikit-learn's conventions ask).
    if not params:
        yield
        return
    old = {name: estimator.get_params(deep=False)[name] for name in params}
    estimator.set_params(**params)
    try:
        yield
    finally:
        estimator.set_params(**old)


def _range_params(estimator, received):
    # The parameters that hand a step the upstream range, when it has none of
    # its own: its own bounds / data_norm (or "private") come first.
    if received is None:
        return {}
    names = estimator.get_params(deep=False)
    has_bounds, has_norm = "bounds" in names, "data_norm" in names
    if not (has_bounds or has_norm):
        return {}
    if (has_bounds and names["bounds"] is not None) or (
        has_norm and names["data_norm"] is not None
    ):
        return {}
    kind, value = received
    if kind == "bounds":
        if has_bounds:
            return {"bounds": value}
        # A box as a bound on the row norms: its farthest corner's norm.
        lower, upper = value
        far = np.maximum(np.abs(lower), np.abs(upper))
        return {"data_norm": float(np.linalg.norm(far))}
    if has_norm:
        return {"data_norm": float(value)}
    # An L2 bound as a box for a step that takes boxes only (the scaler).
    return {"bounds": (-float(value), float(value))}


def _unseeded(direct):
    # The names of the private steps left at random_state=None.
    return [
        name
        for name, step in direct
        if step.get_params(deep=False).get("random_state", 0) is None
    ]


def _step_message(pipeline, index):
    # The verbose line's message for step ``index`` (None: print nothing), as
    # scikit-learn's Pipeline words it: the step's position and name only.
    if not pipeline.verbose:
        return None
    name, _ = pipeline.steps[index]
    return f"(step {index + 1} of {len(pipeline.steps)}) Processing {name}"


def _fit_copy(step):
    # The copy of a step that the pipeline fits: a private step's clone; a
    # public step in a PublicTransformer (its fit reads no row, its output is
    # finite and silent, whatever a row holds), a Pipeline inside a composite
    # step as a PrivatePipeline (rows mapped between its steps).
    if is_private(step):
        return clone(step)
    return as_private_pipelines(public_map_copy(step))


def _fit_step(step, Xt, y, params, settings, *, seeded, last):
    # Fit one step at its settings (set for this fit only) and return the
    # rows it hands on (the last step's: the rows it was given).
    with _temporary_params(step, settings), warnings.catch_warnings():
        if seeded:
            # Seeded by the pipeline's random_state: the pipeline says so,
            # once, at the end of its fit.
            warnings.simplefilter("ignore", SeededNoiseWarning)
        if last:
            step.fit(Xt, y, **params)
            return Xt
        if _num_samples(Xt) == 0:
            return _fit_no_rows(step, Xt, y, params)
        if hasattr(step, "fit_transform"):
            return step.fit_transform(Xt, y, **params)
        return step.fit(Xt, y, **params).transform(Xt)


def pad_row(X):
    """A public row of zeros shaped as a row of ``X``, or None where none is.

    A NumPy array's, a sparse matrix's, or a DataFrame's whose columns are
    all numbers (or booleans), of their dtypes; None for other input (a
    DataFrame with a column of strings has no public zero).
    """
    if sparse.issparse(X):
        return sparse.csr_matrix((1, X.shape[1]), dtype=X.dtype)
    if isinstance(X, np.ndarray):
        return np.zeros((1, X.shape[1]), dtype=X.dtype)
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "iloc"):
        return None
    try:
        numeric = all(
            np.issubdtype(np.dtype(t), np.number) or np.dtype(t) == bool for t in dtypes
        )
    except TypeError:  # an extension dtype (categories, strings)
        numeric = False
    if not numeric:
        return None
    return X.iloc[:0].reindex(range(1)).fillna(0).astype(dtypes)


def check_pad_row(X, who):
    """Refuse, before reading, input that has no public pad row (add/remove).

    Under add/remove neighbours an empty table is fitted like any other,
    through a public pad row of zeros (see :func:`_fit_no_rows`); the
    refusal depends on the input's type and columns only.
    """
    if pad_row(X) is None and not is_dask_array(X):
        raise TypeError(
            f"{who} under neighbours='add_remove' maps an empty table through "
            "its steps with a public row of zeros, which this input has none "
            "of (a DataFrame with columns that are not numbers): encode them "
            "first, or pass a NumPy array."
        )


def _fit_no_rows(step, Xt, y, params):
    # A step fitted on no row (an empty table, under add/remove neighbours,
    # where it is a neighbour of a one-row table) and its output for no row.
    # A private step fits the empty table (its count released first). A
    # public map (whose fit reads no row) and a composite step are fitted on
    # a public pad row of zeros, and every transform maps the pad row, whose
    # output is dropped: scikit-learn's transformers refuse no rows, and a
    # refusal here would say that the table is empty. (A composite's private
    # steps then fit the pad row in place of no row: a replace-one neighbour
    # of any one-row table, so their guarantee covers the pair.)
    pad = pad_row(Xt)
    if pad is None:  # refused before reading (check_pad_row); as it is
        return step.fit(Xt, y, **params).transform(Xt)
    if is_private(step):
        step.fit(Xt, y, **params)
    else:
        step.fit(pad, None, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # about the pad row, not a release
        return step.transform(pad)[:0]


def _hand_off(step, Xt):
    # The range a fitted step hands on, and its output rows mapped into it,
    # each row on its own (and to finite values): the next step's validation
    # then sees the same kind of rows on neighbours, whatever an extreme row
    # overflowed to in a transform.
    received = output_range(step)
    return received, _into_range(Xt, received)


def _spend_ledger(accountant, ledger):
    # The accountant records what the pipeline's steps spent (one entry per
    # step), when there is an accountant and a step spent.
    if ledger is not None and len(ledger):
        accountant.spend(ledger)


@contextmanager
def _spent_on_failure(accountant, ledger):
    # The pipeline's transaction around a step's fit: when it fails, the steps
    # fitted before it drew their noise on the data, so what ran is spent,
    # whatever stopped the pipeline after it (a failure may depend on an
    # earlier release); then the failure goes on.
    try:
        yield
    except BaseException:
        _spend_ledger(accountant, ledger)
        raise


def _final_has(method):
    # available_if: the last step has ``method``.
    def check(self):
        return hasattr(self._final_estimator, method)

    return check


def _final_can_transform(self):
    final = self._final_estimator
    return final == "passthrough" or hasattr(final, "transform")


def _on_last_step_rows(method, returns, what):
    # A fitted pipeline's method that runs the last step's ``method`` on the
    # rows the earlier steps hand on, mapped into range between them
    # (PrivatePipeline._last_step_rows), as scikit-learn's Pipeline runs it
    # on their outputs.
    def call(self, X, **params):
        rows = self._last_step_rows(X)
        return getattr(self._final_estimator, method)(rows, **params)

    call.__name__, call.__qualname__ = method, f"PrivatePipeline.{method}"
    name, kind = returns.split(" : ", 1)
    call.__doc__ = f"""The last step's {what} on the rows the earlier steps hand on.

        Each earlier step's output is mapped into its output range, as
        ``fit`` hands it on.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows, for the first step.
        **params : dict
            Passed to the last step's ``{method}``.

        Returns
        -------
        {name} : {kind}
            The last step's {what}.
        """
    return available_if(_final_has(method))(call)


class PrivatePipeline(PrivateEstimatorMixin, Pipeline):
    """A pipeline of private steps that share one budget and pass ranges on.

    A :class:`sklearn.pipeline.Pipeline` (same ``steps``, same methods) for
    pipelines that start from a raw table: with ``epsilon`` (and ``delta``)
    or ``rho`` set, ``fit`` splits that one budget over the private steps,
    and each private step after the first that has no ``bounds`` or
    ``data_norm`` of its own receives the output range of the step before it.

    **Budget.** Each private step gets a share of the pipeline's budget
    proportional to what it would spend alone with its own parameters
    (its ``privacy_cost()``: its rho under zCDP, its epsilon under pure DP),
    so steps left at their defaults share it evenly and a step given twice
    the others' epsilon gets twice their share (pure DP) or four times
    (zCDP, where rho grows as epsilon squared). The shares compose to at
    most the budget (:func:`dpcov.accounting.split_budget`). Steps that
    cost nothing (a constant imputer) keep their parameters. With
    ``epsilon``, ``delta`` and ``rho`` all None, every step spends its own
    budget, as in a scikit-learn pipeline. The step parameters are set for
    the step's fit only: ``get_params`` is unchanged by ``fit``, and each
    step's ``guarantee_`` records its share.

    ``fit`` fits clones of the steps and puts them in ``steps`` once every
    step has succeeded (as scikit-learn's ``Pipeline`` does with a
    ``memory``): a step that fails leaves the pipeline and its steps as they
    were, and the accountant records the steps that ran before it (they drew
    their noise on the data). So that few refusals come that late, every
    step's checks that need no row (its parameters, a model's labels against
    ``classes`` or targets against ``target_bounds``, the rows a private
    radius needs at the step's share, PCA's integer ``n_components`` against
    the rows, the rows the first step's private ranges or radius need) run
    before the first step does, and every step they refuse is named in one
    error. Between steps, in ``fit`` and in the fitted pipeline's methods
    (``transform``, ``predict``, the scores), each row, dense or sparse, is
    mapped on its own into the range handed on (NaN to 0, infinities to the
    largest floats, then clipped to the box or scaled into the ball), so an
    extreme row that overflows in a transform cannot make a later step fail
    on one of two neighbouring datasets only.

    **What it may contain.** Private dpcov steps, and public maps: a
    :class:`~dpcov.preprocessing.PublicTransformer` (how a
    :class:`~sklearn.preprocessing.FunctionTransformer` is declared),
    :class:`~dpcov.preprocessing.BoundsScaler`, a
    :class:`~sklearn.frozen.FrozenEstimator` fitted on public data, the
    scikit-learn transforms that read only their input's shape
    (:class:`~sklearn.preprocessing.PolynomialFeatures`,
    :class:`~sklearn.preprocessing.Normalizer`,
    :class:`~sklearn.preprocessing.Binarizer`), and FeatureUnions,
    ColumnTransformers and Pipelines of them. Any other step (a scikit-learn
    model, scaler or imputer, a bare FunctionTransformer) is refused before
    anything is read, naming the step and its dpcov counterpart. Each public
    map runs in a :class:`~dpcov.preprocessing.PublicTransformer` (the fitted
    pipeline holds it): its fit reads no row, and its output is finite and
    silent whatever a row holds (see the user guide's privacy model).

    **Ranges.** The output range of a fitted step is computed from its public
    parameters and released values only, so handing it on is
    post-processing of that step's release: the imputer's box
    (``bounds_``), the scaler's image of its box under its released mean and
    scale, :class:`~dpcov.preprocessing.BoundsScaler`'s ``[-1, 1]``, PCA's
    bound on the norm of its outputs. The receiving step treats it as an
    outer bound: it clips to it (the rows a transform passes on are not
    clipped) and may still choose a private radius or threshold inside it
    (AdaptiveCovariance does). Precedence: a step's own ``bounds`` or
    ``data_norm`` (``"private"`` included), then the range from upstream,
    then the step's default (a private radius). A public map other than
    BoundsScaler states no range and breaks the chain.

    Parameters
    ----------
    steps : list of tuples
        ``(name, estimator)`` pairs, as scikit-learn's ``Pipeline``: private
        dpcov steps and public maps (above). With a budget or an
        accountant, private steps must be direct steps (a private estimator
        inside a ``FeatureUnion`` or ``ColumnTransformer`` is refused: they
        fit clones, which the shared budget or the accountant would not
        reach); without either, each spends its own budget wherever it is,
        as in a scikit-learn pipeline, and ``guarantee_`` composes them all.
    epsilon : float, default=None
        The pipeline's budget (with ``delta``): rho-zCDP at the largest rho
        that gives (``epsilon``, ``delta``)-DP, or pure ``epsilon``-DP with
        ``delta=0``.
    delta : float, default=None
        With ``epsilon``; None means ``1e-6``, the estimators' default.
    rho : float, default=None
        A zCDP budget, used instead of ``epsilon`` and ``delta``.
    max_rows_per_group : int, default=None
        With ``groups`` passed to ``fit`` (the person of each row): the
        privacy unit of every step is the person: every private step fits
        persons with this bound (each keeps at most this many rows of each
        person, chosen at random; its own ``max_rows_per_group``, when set,
        must be the same; a step that does not take ``groups`` is refused
        before anything is read). See :ref:`privacy_units`.
    neighbours : {"replace", "add_remove"}, default="replace"
        ``"add_remove"`` hands ``neighbours="add_remove"`` to every private
        step (each releases its own noisy count of units first, from its
        share of the budget; a step without the parameter is refused before
        anything is read). The steps' checks that need the number of units
        then come after their counts, inside their fits.
    accountant : dpcov.accounting.BudgetAccountant, default=None
        Checked for the whole budget before the first step is fitted, and
        given to the private steps that have none of their own; their
        shares are recorded (one entry per step) when every step has
        succeeded, or, when a step fails, those of the steps that ran
        before it.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the private steps left at ``random_state=None`` (the pipeline's
        own steps; a private estimator inside a composite step keeps its
        own), each with an independent generator spawned from it (for
        tests and experiments: a seeded release is not private against
        whoever knows the seed; the fit says so once, with a
        :class:`~dpcov.exceptions.SeededNoiseWarning`). None leaves every
        step's own.
    verbose : bool, default=False
        Print one line per step during ``fit``, as scikit-learn's ``Pipeline``
        does: the step's position, its name and the time its fit took, e.g.
        ``[PrivatePipeline] ... (step 2 of 3) Processing scale, total=   0.1s``
        (a skipped step's line too); a step that fails prints none. The
        lines carry step names and times only, no value of the data; a
        step's time, like the whole fit's, may depend on the rows (their
        sparsity, how long a sampler runs), and what an observer learns from
        it is outside the guarantee.

    Attributes
    ----------
    guarantee_ : dpcov.accounting.PureDP or dpcov.accounting.ZCDP
        The composition of the private steps' guarantees.
    privacy_unit_ : {"row", "person"}
        Whom the guarantee protects: a row, or a person (a fit with
        ``groups`` and ``max_rows_per_group``; see :ref:`privacy_units`).
    neighbours_ : {"replace", "add_remove"}
        The neighbouring relation the guarantee holds under (an
        ``"add_remove"`` fit holds under replacement too).
    epsilon_spent_ : float
        Epsilon of ``guarantee_`` (at ``delta_spent_``).
    delta_spent_ : float
        Delta of ``guarantee_``.
    rho_spent_ : float
        The zCDP parameter of ``guarantee_``.
    budget_split_ : dict of str to PureDP or ZCDP
        Each private step's share, by step name (empty without a budget).
    noise_sampler_ : str
        The sampler of the fit's noise: ``"numpy"`` (floating point) or
        ``"discrete"`` (exact, under ``dpcov.set_config(secure_noise=True)``).
    ranges_ : dict of str to tuple
        The range each step received from upstream, by step name (``kind,
        value`` as :func:`output_range` gives); steps that received none are
        absent.
    named_steps : :class:`~sklearn.utils.Bunch`
        As scikit-learn's ``Pipeline``.

    See Also
    --------
    make_private_pipeline : Build one from estimators, naming them.
    dpcov.model_selection.pipeline_cost : What a pipeline spends.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.datasets import make_mixed_units_table
    >>> from dpcov.decomposition import PCA
    >>> from dpcov.impute import SimpleImputer
    >>> from dpcov.pipeline import PrivatePipeline
    >>> from dpcov.preprocessing import StandardScaler
    >>> X = make_mixed_units_table(20000, missing_rate=0.05, random_state=0).data
    >>> pipe = PrivatePipeline(
    ...     [("impute", SimpleImputer()), ("scale", StandardScaler()),
    ...      ("pca", PCA(n_components=3))],
    ...     epsilon=1.0, delta=1e-6,
    ... ).fit(X)
    >>> round(pipe.epsilon_spent_, 6), pipe.transform(X).shape
    (1.0, (20000, 3))
    """

    _parameter_constraints: dict = {
        "steps": [list, Hidden(tuple)],
        "epsilon": [
            Interval(Real, 0, None, closed="neither"),
            Options(Real, {np.inf}),
            None,
        ],
        "delta": [Interval(Real, 0, 1, closed="left"), None],
        "rho": [
            Interval(Real, 0, None, closed="neither"),
            Options(Real, {np.inf}),
            None,
        ],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "neighbours": [StrOptions({"replace", "add_remove"})],
        "accountant": [BudgetAccountant, None],
        "random_state": ["random_state", np.random.Generator],
        "verbose": ["boolean"],
    }

    def __init__(
        self,
        steps,
        *,
        epsilon=None,
        delta=None,
        rho=None,
        max_rows_per_group=None,
        neighbours="replace",
        accountant=None,
        random_state=None,
        verbose=False,
    ):
        super().__init__(steps, verbose=verbose)
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.max_rows_per_group = max_rows_per_group
        self.neighbours = neighbours
        self.accountant = accountant
        self.random_state = random_state

    def _step_generators(self, names):
        # Independent generators for the steps left at random_state=None,
        # spawned from the pipeline's seed (None: the steps keep theirs).
        if self.random_state is None:
            return {}
        # (A Generator advances, so refits differ, as a RandomState does in
        # scikit-learn; an integer gives the same children every fit.)
        seed = int(check_random_state(self.random_state).integers(2**63))
        sequence = np.random.SeedSequence(seed).spawn(len(names))
        children = [np.random.default_rng(child) for child in sequence]
        return dict(zip(names, children, strict=True))

    def __getitem__(self, ind):
        # A slice is a PrivatePipeline of the same steps (shallow, as
        # scikit-learn's) with the same parameters.
        if isinstance(ind, slice):
            if ind.step not in (1, None):
                raise ValueError("Pipeline slicing only supports a step of 1")
            return PrivatePipeline(
                self.steps[ind],
                epsilon=self.epsilon,
                delta=self.delta,
                rho=self.rho,
                accountant=self.accountant,
                random_state=self.random_state,
                verbose=self.verbose,
            )
        return super().__getitem__(ind)

    def _budget(self):
        # The pipeline's budget (None: every step spends its own).
        if self.epsilon is None and self.rho is None:
            if self.delta is not None:
                raise ValueError("delta is given without epsilon: pass epsilon too.")
            return None
        delta = DEFAULT_DELTA if self.delta is None else self.delta
        epsilon = 1.0 if self.epsilon is None else self.epsilon
        return check_privacy_params(epsilon, delta, self.rho)

    def _private_leaves(self, fitted=False):
        # (parameter path, estimator) of every private estimator the steps
        # fit, at any depth of their composites (with ``fitted``, the fitted
        # copies a fitted ColumnTransformer holds).
        return [
            leaf
            for name, step in self.steps
            if not _skipped(step)
            for leaf in private_steps(
                step, fitted=fitted, caller="PrivatePipeline", prefix=f"{name}__"
            )
        ]

    def _nested_allowed(self):
        # Private estimators inside composite steps (a ColumnTransformer's)
        # fit clones that a shared budget or accountant would not reach: they
        # are allowed only when every step spends its own budget and nothing
        # records (a search's candidate, run as a pipeline).
        return self._budget() is None and self.accountant is None

    def _private_direct_steps(self, shared=False):
        # (name, estimator) of the private steps; refuses private estimators
        # elsewhere (inside composites, which fit clones) when a budget or an
        # accountant is shared over the steps (this pipeline's, or, with
        # ``shared``, that of a pipeline holding it), and every step that is
        # neither private nor a public map (check_composition), before
        # anything is read.
        shared = shared or not self._nested_allowed()
        direct = []
        for name, step in self.steps:
            if _skipped(step):
                continue
            for path, leaf in private_steps(
                step, caller="PrivatePipeline", prefix=f"{name}__"
            ):
                if leaf is not step:
                    if not shared:
                        continue
                    raise ValueError(
                        f"PrivatePipeline shares its budget or its accountant "
                        f"over its own steps; {type(leaf).__name__} "
                        f"({path.rstrip('_')}) is inside a composite step, which "
                        "fits a clone of it. Make it a step of the pipeline, fit "
                        "the composite on its own, or give no budget and no "
                        "accountant (each step then spends its own)."
                    )
                if isinstance(step, PrivatePipeline):
                    # It receives a share and the ledger: nothing nested.
                    step._private_direct_steps(shared=shared)
                direct.append((name, step))
            check_composition(step, caller=type(self).__name__, prefix=f"{name}__")
        return direct

    def _check_composition(self):
        # The rule of dpcov.pipeline._composition, for a composite that
        # holds this pipeline (a search's candidate).
        self._private_direct_steps()

    def _shares(self, budget, direct):
        # Each private step's share of ``budget``, by name.
        costs = {name: step.privacy_cost() for name, step in direct}
        for _, step in direct:
            check_shareable(
                step,
                pure=isinstance(budget, PureDP),
                who="the pipeline",
                why="a pipeline's budget is shared in pure DP or zCDP",
            )
        paying = [name for name, _ in direct if _pays(costs[name])]
        if not paying:
            return {}
        weights = budget_weights(
            [costs[name] for name in paying], pure=isinstance(budget, PureDP)
        )
        total = math.fsum(weights)
        shares = {
            name: weight / total
            for name, weight in zip(paying, weights, strict=True)
            if weight > 0
        }
        return split_budget(budget, shares)

    def _supports_hardened_noise(self):
        # Whether every private step runs on exact samplers (secure_noise).
        self._private_direct_steps()
        return all(
            leaf._supports_hardened_noise() for _, leaf in self._private_leaves()
        )

    def privacy_cost(self):
        """The guarantee a fit spends with the current parameters (no data).

        Returns
        -------
        guarantee : dpcov.accounting.PureDP or dpcov.accounting.ZCDP
            The pipeline's budget when set, else the composition of its
            private steps' own costs.
        """
        with calibrated_in_zcdp():  # as the steps run (see fit)
            budget = self._budget()
            direct = self._private_direct_steps()
            shares = {} if budget is None else self._shares(budget, direct)
            return _cost(budget, self._private_leaves(), shares)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, *, groups=None, **params):
        """Fit the steps in turn, each at its share and with its upstream range.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, for the first step.
        y : array-like of shape (n_samples,), default=None
            Targets, passed to every step's fit.
        groups : array-like of shape (n_samples,), default=None
            The person of each row, with ``max_rows_per_group`` set: every
            private step fits persons (see ``max_rows_per_group``).
        **params : dict
            ``step__parameter`` fit parameters, routed to their step.

        Returns
        -------
        self : object
            The fitted pipeline.
        """
        # The steps are calibrated in zCDP, in which their budgets compose,
        # whatever range they are handed: what they spend is the cost
        # computed before the fit (see dpcov.base.calibrated_in_zcdp).
        with calibrated_in_zcdp():
            return self._fit_steps(X, y, groups=groups, **params)

    def _fit_steps(self, X, y, *, groups, **params):
        # fit, with the steps calibrated in zCDP.
        name = type(self).__name__
        check_group_parameters(groups, self.max_rows_per_group, name=name)
        # Plan on public values: the budget and each private step's share.
        budget, direct, shares = self._plan_shares(X)
        routed = _route(params, [name for name, _ in self.steps])
        n_units = None
        if self.neighbours == "add_remove":
            self._check_steps_take("neighbours")
            check_pad_row(X, name)
        if groups is not None:
            # Every private step fits persons (each keeps at most k rows of
            # each person, at random, and refuses NaN in any row, kept or
            # not); the number of persons is the steps' number of samples.
            self._check_person_steps()
            groups = check_groups(groups, _num_samples(X), name=name)
            n_units = np.unique(groups).size
        # Check before spending: a refusal here reads no row and spends nothing.
        self._check_before_fit(X, y, budget, shares, n_units)
        generators = self._step_generators(_unseeded(direct))
        # Run the steps as clones; their fits record into a ledger that the
        # accountant takes at the end (or, when a step fails, what ran before).
        ledger = BudgetAccountant() if self.accountant is not None else None
        fitted, ranges = self._run_steps(
            X, y, routed, shares, generators, ledger, groups
        )
        # Recorded before the steps are put in place: a refusal (another fit
        # spent the shared accountant meanwhile) leaves the pipeline unfitted.
        _spend_ledger(self.accountant, ledger)
        for index, name, step in fitted:
            self.steps[index] = (name, step)
        self._record(budget, shares, ranges)
        if generators:
            warn_if_seeded(self, self.guarantee_)
        return self

    def _plan_shares(self, X):
        # (budget, private direct steps, shares): every step is private or a
        # public map, and X is of the NumPy namespace (refused before anything
        # else), then each private step's share of the budget.
        budget = self._budget()
        direct = self._private_direct_steps()
        self._validate_steps()
        namespace = array_api_input(X)
        if namespace is not None:
            # The steps hand NumPy rows to each other (their output ranges
            # too): an array of another namespace is refused before any step
            # reads it.
            raise TypeError(
                f"{type(self).__name__}.fit does not read arrays of the "
                f"{namespace[0].__name__} namespace (scikit-learn's "
                "array_api_dispatch is on): convert X to a NumPy array first "
                "(for a torch tensor, X.cpu().numpy())."
            )
        shares = {} if budget is None else self._shares(budget, direct)
        return budget, direct, shares

    def _check_steps_take(self, parameter):
        # Every private step is a direct step that takes ``parameter``
        # (max_rows_per_group with groups, neighbours under add/remove),
        # which the pipeline hands it. Refused before anything is read.
        who = type(self).__name__
        what = {
            "max_rows_per_group": ("with groups", "does not fit persons"),
            "neighbours": (
                'with neighbours="add_remove"',
                "does not fit under add/remove neighbours",
            ),
        }[parameter]
        direct = {name for name, _ in self._private_direct_steps()}
        for path, leaf in self._private_leaves():
            label = path.rstrip("_")
            if label not in direct:
                raise ValueError(
                    f"{who} {what[0]}: step {label!r} is a private estimator "
                    "inside a composite step, which the pipeline cannot reach; "
                    "make it a step of the pipeline."
                )
            if parameter not in leaf.get_params(deep=False):
                raise ValueError(
                    f"{who} {what[0]}: step {label!r} ({type(leaf).__name__}) "
                    f"{what[1]} (no {parameter}); see the user guide's 'One "
                    "person, many rows' for the estimators that do."
                )

    def _check_person_steps(self):
        # With groups: every private step takes max_rows_per_group, with no
        # conflicting value of its own. Refused before anything is read.
        who = type(self).__name__
        self._check_steps_take("max_rows_per_group")
        for path, leaf in self._private_leaves():
            label = path.rstrip("_")
            own = leaf.get_params(deep=False)
            if own["max_rows_per_group"] not in (None, self.max_rows_per_group):
                raise ValueError(
                    f"{who}: step {label!r} has max_rows_per_group="
                    f"{own['max_rows_per_group']}, the pipeline "
                    f"{self.max_rows_per_group}: set it on the pipeline only."
                )

    def _check_before_fit(self, X, y, budget, shares, n_units=None):
        # The refusals before any step reads a row: a public first step's raw
        # rows, the accountant's remaining budget, then each step's checks of
        # public values and targets (an integer n_components against the rows,
        # a model's labels or targets, the rows a private radius needs at the
        # step's share). A refusal spends nothing and leaves nothing fitted.
        # (Under add/remove an empty table is a neighbour like any other.)
        _check_raw_rows(self.steps, X, ensure_min_samples=fewest_units(self.neighbours))
        if self.accountant is not None:
            cost = _cost(budget, self._private_leaves(), shares)
            self.accountant.check(
                cost,
                label=type(self).__name__,
                unit=self._privacy_unit(),
                relation=self._relation(),
            )
        self._check_steps_before_spending(X, y, shares, n_units)

    def _run_steps(self, X, y, routed, shares, generators, ledger, groups=None):
        # Fit clones of the steps in turn, each at its settings, on the rows
        # the step before hands off; returns the fitted clones as (index,
        # name, step) and the ranges received, by name. They are put in place
        # once every step has succeeded (as scikit-learn's Pipeline does with
        # a memory): a step that fails leaves the pipeline and its steps as
        # they were (the earlier clones' releases are dropped unseen), and
        # the accountant records the ledger of the steps that ran before it.
        fitted, ranges, received = [], {}, None
        Xt = X
        last = len(self.steps) - 1
        for index, (name, step) in enumerate(self.steps):
            timed = _print_elapsed_time(type(self).__name__, _step_message(self, index))
            if _skipped(step):
                with timed:  # one line per step, as scikit-learn's Pipeline
                    continue
            step = _fit_copy(step)
            settings, params = {}, routed[name]
            if is_private(step):
                settings = self._step_settings(name, step, shares, generators, ledger)
                flow = _range_params(step, received)
                if flow:
                    ranges[name] = received
                settings.update(flow)
                if groups is not None:
                    settings["max_rows_per_group"] = self.max_rows_per_group
                    params = {**params, "groups": groups}
                if self.neighbours == "add_remove":
                    settings["neighbours"] = "add_remove"
            with _spent_on_failure(self.accountant, ledger), timed:
                Xt = _fit_step(
                    step,
                    Xt,
                    y,
                    params,
                    settings,
                    seeded=name in generators,
                    last=index == last,
                )
            fitted.append((index, name, step))
            if index != last:
                received, Xt = _hand_off(step, Xt)
        return fitted, ranges

    def _step_settings(self, name, step, shares, generators, ledger):
        # The parameters a private step is fitted with: its share of the
        # budget, its generator, and the ledger when it has no accountant.
        settings = {}
        if name in shares:
            settings.update(budget_params(step, shares[name]))
        if name in generators:
            settings["random_state"] = generators[name]
        own = step.get_params(deep=False).get("accountant", 0)
        if ledger is not None and own is None:
            settings["accountant"] = ledger
        return settings

    def _record(self, budget, shares, ranges):
        # The fitted attributes: the composition of what the fitted private
        # steps spent (or the planned cost, when none says), its epsilon,
        # delta and rho, the shares and the ranges handed on.
        leaves = self._private_leaves(fitted=True)
        spent = [leaf.guarantee_ for _, leaf in leaves if hasattr(leaf, "guarantee_")]
        guarantee = compose_fits(spent) if spent else _cost(budget, leaves, shares)
        delta = DEFAULT_DELTA if self.delta is None else self.delta
        asked = None if self.rho is not None or self.epsilon is None else self.epsilon
        record_privacy(self, guarantee, dict(shares), delta=delta, epsilon=asked)
        self.ranges_ = ranges

    def _check_steps_before_spending(self, X, y, shares, n_units=None):
        # Each step that declares them (checks_before_spending) runs its
        # fit's checks that need no row, on a clone at its share of the budget;
        # every step's refusal is collected and said at once. Over persons
        # (n_units), the steps' samples are the persons, and no count is said.
        try:
            n_samples = _num_samples(X)
            n_features = _num_features(X)
        except Exception:  # noqa: BLE001 - the first step refuses X, clearly
            return
        if not isinstance(n_samples, Integral):
            return  # rows not counted yet (a Dask array of unknown chunks)
        if self.neighbours == "add_remove":
            # The number of units is private: each step's checks that need
            # it come in its fit; those that need none, here.
            with persons_in_messages(n_units is not None):
                self._refuse_before_spending(n_samples, y, shares, n_features)
            return
        if n_units is None:
            self._refuse_before_spending(n_samples, y, shares, n_features)
            return
        with persons_in_messages():
            self._refuse_before_spending(
                n_units, y, shares, n_features, n_rows=n_samples
            )

    def _check_before_spending(
        self, n_samples, y=None, *, n_features=None, n_rows=None
    ):
        """The steps' checks of public values that need no row, before any release.

        Each step that declares them (its privacy tag
        ``checks_before_spending``) runs its own (on a clone at its share of
        the budget); every refusal is said at once, in one ValueError that names
        each step and what it needs. A composite that holds this pipeline
        (a :class:`~dpcov.model_selection.PrivateSearchCV`) calls it before
        it spends, as ``fit`` does.
        """
        with calibrated_in_zcdp():  # as the steps run (see fit)
            budget = self._budget()
            direct = self._private_direct_steps()
            if self.neighbours == "add_remove":
                self._check_steps_take("neighbours")
            shares = {} if budget is None else self._shares(budget, direct)
            self._refuse_before_spending(
                n_samples, y, shares, n_features, n_rows=n_rows
            )

    def _refuse_before_spending(
        self, n_samples, y, shares, n_features=None, n_rows=None
    ):
        # One ValueError naming every step whose checks before spending
        # refuse, each with its own message: the first step is checked at the
        # rows' width (n_features, when known; the whole plan of its fit),
        # the later ones at the fewest features (their width, and whether
        # they receive a range, come from the steps before them).
        problems = []
        first = True
        for name, step in self.steps:
            if _skipped(step):
                continue
            width, first = (n_features if first else None), False
            # A private step, or the private estimators inside a composite
            # step (allowed without a shared budget: at their own budgets,
            # on columns of unknown width).
            checked = (
                [(name, step, width)]
                if is_private(step)
                else [
                    (path.rstrip("_"), leaf, None)
                    for path, leaf in private_steps(step, prefix=f"{name}__")
                ]
            )
            for label, leaf, leaf_width in checked:
                if not privacy_tags(leaf).checks_before_spending:
                    continue
                probe = clone(leaf)
                if label in shares:
                    probe.set_params(**budget_params(probe, shares[label]))
                units, rows = n_samples, n_rows
                relation = leaf.get_params(deep=False).get("neighbours")
                if "add_remove" in (relation, self.neighbours):
                    # The number of units is private to the step: its checks
                    # that need it come after its released count, in its
                    # fit; here, those that need none, at a count no
                    # minimum binds (the targets against the rows).
                    probe.set_params(neighbours="add_remove")
                    units, rows = (
                        UNBINDING_COUNT,
                        n_samples if n_rows is None else n_rows,
                    )
                with warnings.catch_warnings():
                    # The step's own fit warns (a column-vector y), once.
                    warnings.simplefilter("ignore")
                    try:
                        probe._check_before_spending(
                            units, y, n_features=leaf_width, n_rows=rows
                        )
                    except ValueError as error:
                        problems.append((label, str(error)))
        if problems:
            # (Over persons, or under add/remove, no count is said.)
            hidden = n_rows is not None or self.neighbours == "add_remove"
            said = None if hidden else n_samples
            raise ValueError(_refusals(type(self).__name__, said, problems))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        first = _first_step(self.steps)
        if first is not None and hasattr(first, "__sklearn_tags__"):
            # (A public first step reads the raw rows, refused with NaN.)
            tags.input_tags.allow_nan = (
                is_private(first) and first.__sklearn_tags__().input_tags.allow_nan
            )
        return tags

    # --- the fitted pipeline's methods: rows mapped between steps, as in fit

    def _last_step_rows(self, X):
        # The rows the last step reads: each earlier step's output mapped into
        # its output range (and to finite values), as fit hands them on, so
        # that no row's value makes a later step refuse the others (a private
        # search scores held-out rows through these methods).
        Xt = X
        for _, step in self.steps[:-1]:
            if _skipped(step):
                continue
            Xt = _into_range(step.transform(Xt), output_range(step))
        return Xt

    @available_if(_final_can_transform)
    def transform(self, X, **params):
        """Transform X with the fitted steps, rows mapped into range between them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows, for the first step.
        **params : dict
            Passed to the last step's ``transform``.

        Returns
        -------
        Xt : ndarray of shape (n_samples, n_transformed_features)
            The last step's output.
        """
        Xt = self._last_step_rows(X)
        final = self._final_estimator
        if _skipped(final):
            return Xt
        return final.transform(Xt, **params)

    predict = _on_last_step_rows("predict", "y_pred : ndarray", "predictions")
    predict_proba = _on_last_step_rows(
        "predict_proba",
        "y_proba : ndarray of shape (n_samples, n_classes)",
        "class probabilities",
    )
    predict_log_proba = _on_last_step_rows(
        "predict_log_proba",
        "y_log_proba : ndarray of shape (n_samples, n_classes)",
        "log class probabilities",
    )
    decision_function = _on_last_step_rows(
        "decision_function", "y_score : ndarray", "decision function"
    )

    @available_if(_final_has("score_samples"))
    def score_samples(self, X):
        """Per-row scores of the last step on the rows handed on.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows, for the first step.

        Returns
        -------
        y_score : ndarray of shape (n_samples,)
            The last step's ``score_samples``.
        """
        return self._final_estimator.score_samples(self._last_step_rows(X))

    @available_if(_final_has("score"))
    def score(self, X, y=None, sample_weight=None, **params):
        """Score of the last step on the rows handed on.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows, for the first step.
        y : array-like of shape (n_samples,), default=None
            Targets, for a last step that scores with them.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the last step's ``score`` when given.
        **params : dict
            Passed to the last step's ``score``.

        Returns
        -------
        score : float
            The last step's score.
        """
        if sample_weight is not None:
            params["sample_weight"] = sample_weight
        return self._final_estimator.score(self._last_step_rows(X), y, **params)

    @available_if(_final_can_transform)
    def fit_transform(self, X, y=None, **params):
        """Fit, then transform the training data with the fitted steps.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,), default=None
            Targets.
        **params : dict
            ``step__parameter`` fit parameters.

        Returns
        -------
        Xt : ndarray of shape (n_samples, n_transformed_features)
            The transformed training data.
        """
        return self.fit(X, y, **params).transform(X)

    @available_if(_final_has("predict"))
    def fit_predict(self, X, y=None, **params):
        """Fit, then predict the training data with the fitted steps.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,), default=None
            Targets.
        **params : dict
            ``step__parameter`` fit parameters.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predictions of the last step.
        """
        return self.fit(X, y, **params).predict(X)


def _sparse_into_range(values, received):
    # _finite_rows for a sparse matrix, on its stored values: a box that
    # holds 0 in every feature clips them (implicit zeros stay inside); other
    # boxes densify (a public choice: it depends on the box only); a ball
    # scales each row's stored values (overflow-safe norms, as the dense
    # rows').
    rows = finite_output(values)
    if received is None:
        return rows
    rows.sum_duplicates()
    kind, bound = received
    if kind == "bounds":
        low, high = _inward_box(bound, rows.dtype)
        if not np.all((low <= 0) & (high >= 0)):
            return _finite_rows(rows.toarray(), received)
        rows.data = np.clip(rows.data, low[rows.indices], high[rows.indices])
        return rows
    data = rows.data.astype(np.float64)
    row = np.repeat(np.arange(rows.shape[0]), np.diff(rows.indptr))
    norms = _sparse_row_norms(data, row, rows.shape[0])
    data = _sparse_clip(data, row, rows.shape[0], float(bound), norms)
    rows.data = data.astype(rows.dtype, copy=False)
    return rows


def _inward_box(bound, dtype):
    # A box's float64 ends rounded inward to the rows' dtype (no value
    # clipped to them leaves the box), as (low, high).
    lower = np.nextafter(np.asarray(bound[0]).astype(dtype), np.inf, dtype=dtype)
    upper = np.nextafter(np.asarray(bound[1]).astype(dtype), -np.inf, dtype=dtype)
    return np.minimum(lower, upper), np.maximum(lower, upper)


def _finite_rows(values, received):
    # A float array with NaN as 0 and infinities as the largest floats, then
    # clipped into the range: a box per column, or rows scaled into the
    # ball (norms taken after dividing by each row's largest entry, so that
    # rows of huge entries do not overflow).
    values = np.asarray(values)
    if values.dtype not in (np.float32, np.float64):
        values = values.astype(np.float64)
    big = np.finfo(values.dtype).max
    values = np.nan_to_num(values, copy=True, nan=0.0, posinf=big, neginf=-big)
    if received is None:
        return values
    kind, bound = received
    if kind == "bounds":
        return np.clip(values, *_inward_box(bound, values.dtype))
    # Rows scaled into the ball (in float64: _clip's overflow-safe norms).
    rows, _ = _clip(values.astype(np.float64), bound, owned=True)
    return rows.astype(values.dtype, copy=False)


def _into_range(Xt, received):
    # _finite_rows on an array, a Dask array (lazily) or a DataFrame (kept).
    if is_dask_array(Xt):
        dtype = Xt.dtype if Xt.dtype in (np.float32, np.float64) else np.float64
        return rows_in_blocks(Xt).map_blocks(
            _finite_rows, received=received, dtype=dtype
        )
    if hasattr(Xt, "iloc"):
        return type(Xt)(
            _finite_rows(Xt.to_numpy(), received), index=Xt.index, columns=Xt.columns
        )
    if sparse.issparse(Xt):
        return _sparse_into_range(Xt, received)
    return _finite_rows(Xt, received)


def as_private_pipelines(estimator):
    """Every scikit-learn Pipeline in ``estimator`` as a PrivatePipeline.

    The same steps, with no budget, accountant or seed of its own: each step
    spends its own budget, as in the scikit-learn pipeline, and the rows are
    mapped into range between the steps, in ``fit`` and in the methods. At
    any depth of FeatureUnions and ColumnTransformers (set by
    ``set_params``); a PrivatePipeline is left as it is.

    Parameters
    ----------
    estimator : estimator instance

    Returns
    -------
    estimator : estimator instance
        A new PrivatePipeline for a Pipeline, else ``estimator`` itself.
    """
    if type(estimator) is Pipeline:
        steps = [(name, as_private_pipelines(step)) for name, step in estimator.steps]
        return PrivatePipeline(steps, verbose=estimator.verbose)
    if isinstance(estimator, (FeatureUnion, ColumnTransformer)):
        params = {
            name: converted
            for name, step in composite_children(estimator)
            if (converted := as_private_pipelines(step)) is not step
        }
        if params:
            estimator.set_params(**params)
    return estimator


def _check_raw_rows(steps, X, *, ensure_min_samples=1):
    # A public map maps whatever rows it is given (those handed on by a step
    # before it may hold NaN or infinities on some data only); as the first
    # step it reads the raw rows, which must be in the domain: refused, with
    # a message free of data, before anything is read for a release.
    first = _first_step(steps)
    if (
        first is None
        or is_private(first)
        or is_dask_array(X)
        or isinstance(first, (Pipeline, FeatureUnion, ColumnTransformer))
    ):
        # (A composite's steps read the columns it selects, which need not
        # all be numbers; its public maps map what they are given.)
        return
    validate_rows(
        PublicTransformer(first),
        X,
        dtype=None,
        accept_sparse=("csr", "csc", "coo"),
        method="fit",
        ensure_min_samples=ensure_min_samples,
    )


def _refusals(who, n_samples, problems):
    # One message for every step refused before anything is read: each step's
    # own (public values only: parameters, the number of rows, the rows a
    # step needs at its share).
    if len(problems) == 1:
        name, message = problems[0]
        return f"{who}, step {name!r}: {message}"
    steps = " ".join(f"Step {name!r}: {message}" for name, message in problems)
    rows = "rows" if n_samples is None else f"{n_samples} rows"
    return (
        f"{who} refuses {len(problems)} of its steps before reading the "
        f"{rows} (nothing is spent). {steps}"
    )


def _cost(budget, leaves, shares):
    # What a fit spends: the shares of the budget, or, without a budget,
    # the private steps' own costs (at any depth).
    if budget is None:
        return compose(leaf.privacy_cost() for _, leaf in leaves)
    return compose(shares.values()) if shares else type(budget)(0.0)


def _pays(cost):
    # Whether a step's own cost is more than nothing.
    if isinstance(cost, PureDP):
        return cost.epsilon > 0
    if isinstance(cost, ZCDP):
        return cost.rho > 0
    return True


def _route(params, names):
    # ``step__param`` -> {step: {param: value}}.
    routed = {name: {} for name in names}
    for key, value in params.items():
        step, _, param = key.partition("__")
        if step not in routed or not param:
            raise ValueError(
                f"PrivatePipeline.fit takes fit parameters as step__parameter; "
                f"got {key!r}."
            )
        routed[step][param] = value
    return routed


def make_private_pipeline(
    *steps,
    epsilon=None,
    delta=None,
    rho=None,
    accountant=None,
    random_state=None,
    verbose=False,
):
    """Build a :class:`PrivatePipeline` from estimators, naming them.

    As :func:`sklearn.pipeline.make_pipeline`: each step is named after its
    class, lowercased (with a number when names repeat).

    Parameters
    ----------
    *steps : list of estimators
        The steps, in order.
    epsilon, delta, rho : float, default=None
        The pipeline's budget (see :class:`PrivatePipeline`).
    accountant : dpcov.accounting.BudgetAccountant, default=None
        Records the steps' shares (see :class:`PrivatePipeline`).
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the steps left unseeded (see :class:`PrivatePipeline`).
    verbose : bool, default=False
        Print one line per step, with its name and the time its fit took
        (see :class:`PrivatePipeline`).

    Returns
    -------
    pipeline : PrivatePipeline

    Examples
    --------
    >>> from dpcov.decomposition import PCA
    >>> from dpcov.impute import SimpleImputer
    >>> from dpcov.pipeline import make_private_pipeline
    >>> from dpcov.preprocessing import StandardScaler
    >>> pipe = make_private_pipeline(
    ...     SimpleImputer(), StandardScaler(), PCA(n_components=2), epsilon=1.0
    ... )
    >>> [name for name, _ in pipe.steps]
    ['simpleimputer', 'standardscaler', 'pca']
    """
    return PrivatePipeline(
        _name_estimators(steps),
        epsilon=epsilon,
        delta=delta,
        rho=rho,
        accountant=accountant,
        random_state=random_state,
        verbose=verbose,
    )
