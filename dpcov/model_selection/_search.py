"""A hyperparameter search whose choice is itself differentially private."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import warnings
from dataclasses import dataclass
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.model_selection import ParameterGrid, ParameterSampler
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from ..accounting import BudgetAccountant, PureDP, compose
from ..accounting._composition import budget_weights
from ..base import (
    PrivateEstimatorMixin,
    calibrated_in_zcdp,
    is_private,
    privacy_tags,
    record_privacy,
    warn_if_seeded,
)
from ..exceptions import NoHardenedSampler, NoPrivateResult, SeededNoiseWarning
from ..mechanisms import _noise, calibrate_additive
from ..mechanisms._selection import (
    RUN_LAWS,
    draw_run_count,
    selection_guarantee,
    selection_run_budget,
)
from ..pipeline._composition import check_composition, run_public_maps
from ..pipeline._cost import check_shareable, private_steps
from ..pipeline._pipeline import (
    PrivatePipeline,
    as_private_pipelines,
    check_pad_row,
)
from ..utils._gram._units import (
    check_group_parameters,
    check_groups,
    persons_in_messages,
)
from ..utils._input import validate_rows
from ..utils._private_count import UNBINDING_COUNT
from ..utils._random import check_random_state, held_objects, spawn_generators
from ..utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    check_params_always,
)
from ..utils._warnings import warn
from ._scoring import _final, bounded_scores, score_bounds, score_kind

__all__ = ["PrivateSearchCV"]

_PRIVACY_PARAMS = ("epsilon", "delta", "rho")


def _private_leaves(estimator):
    # (parameter prefix, estimator) of every private step (see private_steps).
    return private_steps(estimator, caller="PrivateSearchCV")


def _is_privacy_key(key):
    return key.rsplit("__", 1)[-1] in _PRIVACY_PARAMS


def _candidate_spaces(param_distributions):
    spaces = param_distributions
    if isinstance(spaces, dict):
        spaces = [spaces]
    return list(spaces)


def _guarantee_of(estimator):
    leaves = _private_leaves(estimator)
    if not leaves:
        raise ValueError(
            f"{type(estimator).__name__} holds no dpcov estimator: a private "
            "search selects among private candidates."
        )
    return compose(leaf.privacy_cost() for _, leaf in leaves)


def _set_run_budget(estimator, budget):
    # Rescale the private steps' budgets, keeping their proportions, so that
    # they compose to ``budget`` (a PureDP or ZCDP) exactly or just below.
    leaves = _private_leaves(estimator)
    # The proportions are those of their costs through zCDP, in which the
    # runs are calibrated (each step gets its rho).
    with calibrated_in_zcdp():
        costs = [leaf.privacy_cost() for _, leaf in leaves]
    for _, leaf in leaves:
        check_shareable(
            leaf,
            pure=isinstance(budget, PureDP),
            who="the search",
            why="the selection theorems need pure-DP or zCDP runs",
        )
    weights = budget_weights(costs, pure=isinstance(budget, PureDP))
    total = math.fsum(weights)
    shrink = 1.0
    while True:
        params = {}
        for (prefix, leaf), weight in zip(leaves, weights, strict=True):
            names = leaf.get_params(deep=False)
            if isinstance(budget, PureDP):
                params[f"{prefix}epsilon"] = budget.epsilon * weight / total * shrink
                params[f"{prefix}delta"] = 0.0
                if "rho" in names:
                    params[f"{prefix}rho"] = None
            else:
                rho = budget.rho * weight / total * shrink
                if "rho" in names:
                    params[f"{prefix}rho"] = rho
                else:  # a pure-DP estimator: epsilon^2 / 2 = rho
                    params[f"{prefix}epsilon"] = math.sqrt(2.0 * rho)
                    params[f"{prefix}delta"] = 0.0
        estimator.set_params(**params)
        spent = _guarantee_of(estimator)
        if _within(spent, budget):
            return spent
        shrink *= 1.0 - 1e-12  # rounding put the sum an ulp above the budget


@dataclass(frozen=True)
class _SearchPlan:
    """What a search decides before it reads the data."""

    #: What one run (fit and score) spends.
    run_budget: object
    #: The whole search's guarantee.
    guarantee: object
    #: The configured candidates, one per run, and their drawn parameters.
    candidates: list
    drawn: list
    #: Every combination of the listed values (checked before spending).
    grid: list
    #: A callable score's public range, and the covariance score's norm.
    score_range: tuple | None
    score_norm: float | None


def _check_grid_before_spending(grid, run_budget, n_train, y, n_features, *, said=None):
    # Each private step of every candidate, at the run budget: its checks of
    # public values that need no row (_check_before_spending) on the n_train
    # rows a run fits (the step that reads the input as it is, at its width
    # n_features); every refusal said at once. (The targets were checked
    # against the model's domain already: the first n_train stand for a
    # run's.)
    targets = None if y is None else y[:n_train]
    n_rows = None if y is None else targets.shape[0]
    problems = []
    for candidate in grid:
        leaves = _all_private_leaves(candidate)
        if not any(privacy_tags(leaf).checks_before_spending for _, leaf in leaves):
            continue
        probe = clone(candidate)
        _set_run_budget(probe, run_budget)
        # (Run as a run is: a Pipeline is a PrivatePipeline, whose checks
        # cover its steps; the candidate itself reads the rows at their
        # width.)
        probe = _as_run(probe)
        for prefix, leaf in _private_leaves(probe):
            check = leaf._check_before_spending
            width = n_features if leaf is probe else None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    check(n_train, targets, n_features=width, n_rows=n_rows)
                except ValueError as error:
                    where = f"{prefix.rstrip('_')!r}" if prefix else "the estimator"
                    problem = f"{where}: {error}"
                    if problem not in problems:
                        problems.append(problem)
    if problems:
        rows = f"{n_train} rows" if said is None else said
        raise ValueError(
            f"PrivateSearchCV refuses before anything is spent: a run fits "
            f"{rows} at the run budget {run_budget}, "
            f"and {len(problems)} of its candidates' steps cannot: "
            + " ".join(problems)
        )


def _check_budget_keys(spaces, grids):
    # A budget the grid lists is a private step's weight in the run budget
    # (its proportion to the other steps'): refused where it weighs nothing
    # in every candidate of its space, that is where it sets the budget of
    # the only private step, or of a PrivatePipeline (which the search sets).
    for space, candidates in zip(spaces, grids, strict=True):
        for key in sorted(k for k in space if _is_privacy_key(k)):
            path = key.rsplit("__", 1)[0] + "__" if "__" in key else ""
            if all(_weighs_nothing(c, path) for c in candidates):
                raise ValueError(
                    f"param_distributions lists {key!r}, the budget of the "
                    "candidates' only private step (or of a PrivatePipeline). "
                    "Every run spends the run budget the search derives from "
                    "its own epsilon and delta, and a budget in the grid is "
                    "read as a step's weight in it (how a pipeline's private "
                    "steps share it), so this grid searches nothing: drop the "
                    "key, or list the budgets of several private steps to "
                    "search how they share a run."
                )


def _weighs_nothing(candidate, path):
    # Whether the budget at ``path`` is a PrivatePipeline's own or that of
    # the candidate's only weighed private step.
    leaves = dict(_private_leaves(candidate))
    if isinstance(leaves.get(path), PrivatePipeline):
        return True
    # The private steps whose budgets share a run's: a PrivatePipeline's own
    # steps in its place (its budget is set by the search).
    weighed = [
        prefix
        for prefix, leaf in _all_private_leaves(candidate)
        if not (isinstance(leaf, PrivatePipeline) and leaves.get(prefix) is leaf)
    ]
    return weighed == [path]


def _within(guarantee, budget):
    if isinstance(budget, PureDP):
        return isinstance(guarantee, PureDP) and guarantee.epsilon <= budget.epsilon
    return guarantee.to_zcdp().rho <= budget.rho


class PrivateSearchCV(PrivateEstimatorMixin, MetaEstimatorMixin, BaseEstimator):
    """Differentially private hyperparameter search: the best of random runs.

    Each run draws one candidate's parameters from ``param_distributions``,
    fits it privately on a training part of the rows and scores it privately
    on the held-out part. The number of runs is random, drawn from a public
    law before the data are read, and only the best run (its fitted model
    and its noisy score) is released. The whole search, choice included, is
    then private (Liu and Talwar, 2019; Papernot and Steinke, 2022):

    * one run is as private as its fit and its score separately, since they
      read disjoint rows (parallel composition under replace-one
      neighbours: a replaced row is in one part only). The score's noise is
      calibrated to the run's budget, so a run costs its budget ``b``;
    * the best of ``K`` runs, ``K`` from the truncated negative binomial law
      of shape ``eta`` (0: logarithmic, 1: geometric) is ``(2 + eta) eps``-DP
      for pure ``eps``-DP runs, and for ``rho``-zCDP runs has the Renyi curve
      of Papernot and Steinke (2022, Theorem 2), converted to ``(epsilon,
      delta)``-DP with Canonne, Kamath and Steinke (2020, Proposition 12);
      with a Poisson ``K``, Theorem 6 of Papernot and Steinke (2022).

    The budget: the search finds the largest per-run budget ``b`` whose
    selection meets ``(epsilon, delta)`` and sets every candidate's privacy
    parameters so that its private steps compose to ``b`` (a pipeline's steps
    keep the proportions of their own budgets), so a search spends what it
    is asked for, whatever its grid lists. A step's ``epsilon``, ``delta`` or
    ``rho`` listed in ``param_distributions`` is that step's weight in ``b``:
    the grid searches how a pipeline's private steps share a run's budget
    (with ``{"scale__rho": [0.5], "pca__rho": [0.5, 1.0]}`` PCA gets one or
    two times the scaler's share of a zCDP run budget; a listed epsilon
    weighs as the rho it gives with the step's delta, or as itself in a pure
    search). A grid over the budget of the only private step searches nothing
    and is refused before the data are read.

    What a candidate may hold: private dpcov estimators, public maps
    (:class:`~dpcov.preprocessing.PublicTransformer`,
    :class:`~dpcov.preprocessing.BoundsScaler`,
    :class:`~sklearn.frozen.FrozenEstimator`, and the scikit-learn transforms
    that read only their input's shape, such as
    :class:`~sklearn.preprocessing.PolynomialFeatures`), in Pipelines,
    FeatureUnions and ColumnTransformers; any other step (a scikit-learn
    model, scaler or imputer, a bare FunctionTransformer) is refused before
    the data are read. Each public map runs in a
    :class:`~dpcov.preprocessing.PublicTransformer`, whose fit reads no row
    and whose output is finite and silent, and each scikit-learn Pipeline as
    a :class:`~dpcov.pipeline.PrivatePipeline` without a budget of its own
    (its steps keep the budgets the search set), which maps rows into range
    between steps in fit and when held-out rows are scored
    (``best_estimator_`` is that PrivatePipeline).

    Guarantee: pure ``epsilon``-DP when ``delta=0`` (pure-DP candidates, a
    truncated negative binomial law), otherwise ``(epsilon, delta)``-DP;
    replace-one neighbours, or add/remove neighbours when every private step
    of the estimator fits under them (``neighbours="add_remove"``, set on
    each step or on a PrivatePipeline; one relation for all). Under
    add/remove the search reads no count: each unit is held out by its own
    coin, every run fits under add/remove (a run whose fit refuses after its
    released count is a private "no result"), and the held-out score is
    released as the vector ``(sum (v - c), w N)`` over the held-out units'
    scores ``v`` in ``[low, high]`` (``c`` the centre, ``w`` the
    half-width) at sensitivity ``high - low``, which bounds both relations,
    then read as ``c + S / (N / w)``; no table is refused for its size (see
    :ref:`privacy_units`). It covers ``best_estimator_``, ``best_params_``,
    ``best_score_`` and the warnings of the selected run that dpcov computes
    from releases and public values (its own categories; any other warning a
    run raises is dropped); nothing about the other runs is kept. The
    number of runs is drawn before the data are read, but it is **not**
    released: the theorems bound the best of a random
    number of runs, and the best of a known number ``k`` of runs costs up to
    ``k`` times one run. (With a known integer ``random_state`` anyone can
    redraw it, as they can redraw the noise: use ``random_state=None`` for
    releases.)

    Under ``dpcov.set_config(secure_noise=True)`` the number of runs, the
    split, the candidates' noise and the score's noise come from exact
    samplers on the operating system's CSPRNG; the logarithmic, geometric and
    Poisson laws have one, a general negative binomial shape does not, and a
    search that would need a missing sampler (that law, or a candidate
    without a hardened sampler) refuses before reading the data.

    Parameters
    ----------
    estimator : estimator instance
        A dpcov estimator, or a Pipeline (FeatureUnion, ColumnTransformer)
        whose private steps are dpcov estimators. Its other steps must be
        public maps (see :func:`~dpcov.model_selection.pipeline_cost`).
    param_distributions : dict or list of dicts
        As in :class:`~sklearn.model_selection.RandomizedSearchCV`: lists
        are sampled uniformly, distributions with an ``rvs`` method are
        sampled; a list of dicts picks a dict uniformly first. Each run draws
        independently (with replacement). Values of ``epsilon``, ``delta``
        and ``rho`` must be lists.
    epsilon : float, default=1.0
        The search's epsilon, positive.
    delta : float, default=1e-6
        The search's delta, in [0, 1); 0 asks for pure DP.
    n_iter : float, default=10
        The expected number of runs, at least 1. The cost grows with its
        logarithm.
    law : {"logarithmic", "geometric", "poisson"} or float, default="logarithmic"
        The law of the number of runs: the truncated negative binomial of
        shape 0 (logarithmic), 1 (geometric) or the given positive shape, or
        the Poisson law (which may draw no run: fit then raises). The
        logarithmic law gives the largest per-run budget for zCDP
        candidates and pure DP (``2 eps`` against the geometric ``3 eps``).
    validation_fraction : float, default=0.2
        The share of rows (or persons) held out for scoring, in (0, 1); the
        split is a uniformly random partition drawn from ``random_state``,
        or, under add/remove neighbours, an independent coin per unit that
        holds it out with this probability.
    scoring : callable, "accuracy", "neg_squared_error" or None, default=None
        ``scoring(estimator, X)`` (``scoring(estimator, X, y)`` when ``fit``
        was given targets) returning a 1-D array of one score per row of
        ``X`` (higher is better), with ``score_range``; the score of a row
        may depend only on that row (and its target) and the fitted
        estimator, and must not raise on valid rows. ``"accuracy"``: 1 per
        held-out row predicted right (range [0, 1]); ``"neg_squared_error"``:
        minus the squared error of prediction and target, both clipped to the
        model's ``target_bounds_`` (R^2 is not a mean of per-row scores).
        None uses the family's default: the accuracy for a pipeline that ends
        in a dpcov classifier, the squared error for a dpcov regressor,
        the held-out log-likelihood of the probabilistic PCA model for PCA
        (which does not simply prefer more components: one whose released
        variance is noise costs likelihood), the captured energy fraction
        for subspaces, the
        log-likelihood for Bernoulli products, and the Frobenius score
        ``2 y^T C y - ||C||_F^2`` of rows ``y`` clipped to ``score_norm``
        for covariances and Gaussians (its mean is ``||S||_F^2 - ||C -
        S||_F^2``, ``S`` the held-out second moment).
    score_range : (float, float) or None, default=None
        The public range of ``scoring``'s values (they are clipped to it).
        Required with ``scoring``.
    score_norm : float or None, default=None
        The public norm held-out rows are clipped to for the covariance
        score. None uses the candidates' ``data_norm`` when they all share
        one (the bound the user already gave them).
    accountant : BudgetAccountant or None, default=None
        Records the search's guarantee, once (the runs record nothing).
    random_state : int, numpy.random.Generator or None, default=None
        Draws the number of runs, the split and the scores' noise, and
        spawns generators for each run (one draws its candidate, one each of
        its private steps' noise), which are removed from the model
        afterwards: ``best_estimator_`` is released with
        ``random_state=None`` in every private step and every fitted copy of
        one, so refitting a clone of it draws fresh noise. A
        release made with a known seed is not private (see
        :func:`dpcov.utils.check_random_state`); ``fit`` then warns with
        :class:`~dpcov.exceptions.SeededNoiseWarning`.

    Attributes
    ----------
    best_estimator_ : estimator
        The selected run's model, fitted on the training part; the
        ``random_state`` of its private steps is None (the run's generator
        is not released).
    best_params_ : dict
        Its parameters as drawn: the keys of ``param_distributions`` only (a
        budget listed there is a weight; the fitted steps' own parameters and
        ``guarantee_`` show what they spent).
    best_score_ : float
        Its noisy held-out score.
    run_budget_ : PureDP or ZCDP
        What one run (fit and score) spends.
    score_noise_scale_ : float
        The selected run's score noise: the Laplace scale (pure DP) or the
        Gaussian standard deviation (zCDP).
    guarantee_ : PureDP or SelectionDP
        The whole search's guarantee (a SelectionDP carries the run's
        guarantee and the law of the number of runs it was computed from:
        ``dpcov.accounting.to_dp_event`` hands it to dp_accounting).
    privacy_unit_ : {"row", "person"}
        Whom the guarantee protects: a row, or a person (a fit with
        ``groups`` and ``max_rows_per_group``; see :ref:`privacy_units`).
    neighbours_ : {"replace", "add_remove"}
        The neighbouring relation the guarantee holds under (an
        ``"add_remove"`` fit holds under replacement too).
    epsilon_spent_ : float
        Its epsilon, at most ``epsilon``.
    delta_spent_ : float
        Its delta.
    rho_spent_ : float
        ``epsilon**2 / 2`` for a pure-DP search; ``inf`` for an (epsilon,
        delta)-DP one, which bounds no zCDP parameter.
    budget_split_ : dict of str to PureDP or ZCDP
        ``{"run": run_budget_}``: what each run spends. The search's
        guarantee is not their composition: it is that of the best of a
        random number of runs (Papernot and Steinke, 2022).
    noise_sampler_ : str
        The sampler of the fit's noise: ``"numpy"`` (floating point) or
        ``"discrete"`` (exact, under ``dpcov.set_config(secure_noise=True)``).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit (only when X has string column
        names).

    See Also
    --------
    dpcov.model_selection.search_cost : The cost of a scikit-learn search,
        whose choice is not private.

    References
    ----------
    .. [1] Liu, J. and Talwar, K. "Private Selection from Private
       Candidates". STOC 2019, Theorem 3.4. https://arxiv.org/abs/1811.07971.
    .. [2] Papernot, N. and Steinke, T. "Hyperparameter Tuning with Renyi
       Differential Privacy". ICLR 2022, Theorems 2 and 6.
       https://arxiv.org/abs/2110.03620.
    .. [3] Canonne, C., Kamath, G. and Steinke, T. "The Discrete Gaussian for
       Differential Privacy". NeurIPS 2020, Proposition 12.
       https://arxiv.org/abs/2004.00010.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.covariance import SeparateCovariance
    >>> from dpcov.model_selection import PrivateSearchCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 3)) / 3.0
    >>> search = PrivateSearchCV(
    ...     SeparateCovariance(data_norm=1.0),
    ...     {"data_norm": [0.01, 1.0, 100.0]},
    ...     epsilon=2.0,
    ...     score_norm=1.0,
    ...     random_state=2,
    ... ).fit(X)
    >>> # The best of a random number of runs, each drawing one of the three
    >>> # bounds: 1.0 here, and for about 70% of seeds (a good candidate may
    >>> # not be drawn at all).
    >>> search.best_params_["data_norm"]
    1.0
    >>> search.guarantee_
    SelectionDP(epsilon=1.99..., delta=1e-06, run=ZCDP(rho=0.034...), mean=10.0,
    shape=0.0)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        "param_distributions": [dict, list],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "n_iter": [Interval(Real, 1, None, closed="left")],
        "law": [StrOptions(set(RUN_LAWS)), Interval(Real, 0, None, closed="neither")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "scoring": [callable, StrOptions({"accuracy", "neg_squared_error"}), None],
        "score_range": ["array-like", None],
        "score_norm": [Interval(Real, 1e-150, 1e150, closed="both"), None],
        "accountant": [BudgetAccountant, None],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        estimator,
        param_distributions,
        *,
        epsilon=1.0,
        delta=1e-6,
        n_iter=10,
        law="logarithmic",
        validation_fraction=0.2,
        scoring=None,
        score_range=None,
        score_norm=None,
        accountant=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.epsilon = epsilon
        self.delta = delta
        self.n_iter = n_iter
        self.law = law
        self.validation_fraction = validation_fraction
        self.scoring = scoring
        self.score_range = score_range
        self.score_norm = score_norm
        self.accountant = accountant
        self.random_state = random_state

    # --- before the data --------------------------------------------------

    def _check_spaces(self):
        spaces = _candidate_spaces(self.param_distributions)
        if not spaces or not all(isinstance(s, dict) for s in spaces):
            raise ValueError(
                "param_distributions must be a dict or a non-empty list of dicts."
            )
        for space in spaces:
            for key, values in space.items():
                if key.rsplit("__", 1)[-1] == "random_state":
                    raise ValueError(
                        f"param_distributions sets {key!r}: the search draws "
                        "every run's noise from a generator of its own (and "
                        "releases the winner with random_state=None); seed "
                        "the search itself with random_state."
                    )
                if key.rsplit("__", 1)[-1] in ("max_rows_per_group", "neighbours"):
                    raise ValueError(
                        f"param_distributions sets {key!r}: every run of a "
                        "search protects the same unit under the same "
                        "relation; set it on the estimator."
                    )
                if _is_privacy_key(key) and not isinstance(values, (list, tuple)):
                    raise ValueError(
                        f"param_distributions[{key!r}] must be a list: a "
                        "step's budget is its weight in the run budget, and "
                        "the search checks every weight it may draw before "
                        "reading the data."
                    )
        return spaces

    def _check_scoring(self, grid):
        if isinstance(self.scoring, str):
            if self.score_range is not None:
                raise ValueError(
                    f"scoring={self.scoring!r} has its own range: score_range is "
                    "for a callable scoring."
                )
            kinds = {score_kind(candidate) for candidate in grid}
            if kinds != {self.scoring}:
                raise ValueError(
                    f"scoring={self.scoring!r} needs candidates that end in a "
                    + (
                        "dpcov classifier."
                        if self.scoring == "accuracy"
                        else "dpcov regressor (its target_bounds_ bound the error)."
                    )
                )
            return None
        if self.scoring is not None:
            if self.score_range is None:
                raise ValueError(
                    "scoring needs score_range=(low, high): the public range "
                    "of its per-row values, to calibrate the score's noise."
                )
            low, high = (float(v) for v in np.asarray(self.score_range).reshape(2))
            if not (math.isfinite(low) and math.isfinite(high) and low <= high):
                raise ValueError("score_range must be two finite numbers, low <= high.")
            return (low, high)
        if self.score_range is not None:
            raise ValueError("score_range is used with scoring only.")
        kinds = {score_kind(candidate) for candidate in grid}
        if None in kinds:
            raise ValueError(
                f"{type(self.estimator).__name__} has no default private score: "
                "pass scoring=callable(estimator, X) returning per-row scores "
                "and score_range=(low, high)."
            )
        if len(kinds) > 1:
            raise ValueError(
                f"the candidates' default scores differ ({sorted(kinds)}) and "
                "cannot be compared: pass scoring and score_range."
            )
        return None

    def _score_norm(self, grid, sampled):
        # The public clip of the covariance score: score_norm, or the
        # data_norm every possible candidate shares.
        if self.scoring is not None or score_kind(grid[0]) != "frobenius":
            return None
        if self.score_norm is not None:
            return float(self.score_norm)
        norms = set()
        for candidate in grid:
            for _, leaf in _private_leaves(candidate):
                norms.add(getattr(leaf, "data_norm", None))
        if (
            len(norms) == 1
            and None not in norms
            and not any(key.endswith("data_norm") for key in sampled)
        ):
            return float(norms.pop())
        raise ValueError(
            "the covariance score clips held-out rows to a public norm: pass "
            "score_norm (the candidates do not share one data_norm)."
        )

    def _grid(self):
        # The candidate spaces and every combination of their listed values
        # (a cost or a data_norm can only change with listed values: privacy
        # parameters must be listed, swapped-in estimators are; a sampled
        # distribution leaves the estimator's own value).
        spaces = self._check_spaces()
        listed = [
            {k: v for k, v in s.items() if isinstance(v, (list, tuple))} for s in spaces
        ]
        # Each space's combinations (ParameterGrid over a list of spaces is
        # their concatenation, in order).
        grids = [
            [self._candidate(params) for params in ParameterGrid(space)]
            for space in listed
        ]
        _check_budget_keys(spaces, grids)
        return spaces, [candidate for grid in grids for candidate in grid]

    def _candidate(self, params):
        # The estimator with ``params``, checked before anything reads it:
        # its private steps are each fitted once, and every other step it
        # would fit is a public map (dpcov.pipeline._composition).
        candidate = clone(self.estimator).set_params(**clone(params, safe=False))
        _private_leaves(candidate)
        check_composition(candidate, caller="PrivateSearchCV's candidate")
        return candidate

    def _run_budget(self):
        # What one run spends: the largest budget whose selection meets
        # (epsilon, delta). Every candidate is set to spend it (a budget the
        # grid lists is a step's weight in it).
        return selection_run_budget(
            self.epsilon, self.delta, mean=self.n_iter, law=self.law
        )

    def _supports_hardened_noise(self):
        # The search checks its own law and its candidates under secure_noise
        # before reading the data (_check_candidate, the law's sampler); a
        # composite holding it leaves the check to it.
        return True

    def privacy_cost(self):
        """The guarantee a fit of the search spends, from its parameters.

        Computed before any data are read (and before the number of runs is
        drawn): it is what ``fit`` charges to the ``accountant`` and what
        :func:`~dpcov.model_selection.pipeline_cost` counts.

        Returns
        -------
        guarantee : dpcov.accounting.PureDP or SelectionDP
            The whole search's guarantee.
        """
        _, grid = self._grid()
        for candidate in grid:
            _check_candidate(candidate)
        run_budget = self._run_budget()
        return selection_guarantee(
            run_budget, mean=self.n_iter, law=self.law, delta=self.delta
        )

    def _plan(self, rng):
        # Everything decided before the data are read, from public values
        # and the search's own randomness: the run budget, the number of
        # runs, the candidates (configured clones) and their generators.
        spaces, grid = self._grid()
        relation = self._relation()
        for candidate in grid:
            _check_candidate(candidate)
            if set(_relations(candidate)) - {relation}:
                raise ValueError(
                    "PrivateSearchCV: a candidate in param_distributions fits "
                    f"under other neighbours than the estimator ({relation!r}); "
                    "every run of a search protects the same unit under the "
                    "same relation."
                )
        score_range = self._check_scoring(grid)
        sampled = {k for s in spaces for k, v in s.items() if hasattr(v, "rvs")}
        score_norm = self._score_norm(grid, sampled)
        run_budget = self._run_budget()
        n_runs = draw_run_count(rng, self.n_iter, self.law)
        # One independent generator per run, spawned from the search's (the
        # selection theorems assume independent, identically distributed
        # runs). Under secure_noise every noise draw comes from the OS CSPRNG
        # whatever the generator, and the runs' generators come from fresh
        # OS entropy too, so that no seed fixes the candidates either.
        parent = np.random.default_rng() if _noise.secure() else rng
        candidates, drawn = [], []
        for generator in spawn_generators(parent, n_runs):
            # The run's generator spawns one generator for its candidate's
            # parameters and one per private step: steps that scikit-learn
            # clones or caches separately (a ColumnTransformer, a Pipeline
            # with memory) must not draw the same noise.
            sampling, steps = spawn_generators(generator, 2)
            # The candidate's parameters (a legacy RandomState on the
            # generator's bit generator, which scikit-learn's sampler takes):
            # public randomness, independent of the data.
            sampler = ParameterSampler(
                spaces, 1, random_state=np.random.RandomState(sampling.bit_generator)
            )
            params = next(iter(sampler))
            # (A sampled parameter may change what the candidate holds.)
            candidate = self._candidate(params)
            _check_candidate(candidate)
            _set_run_budget(candidate, run_budget)
            _seed_private_steps(candidate, steps)
            candidate = _as_run(candidate)
            candidates.append(candidate)
            drawn.append(params)
        guarantee = selection_guarantee(
            run_budget, mean=self.n_iter, law=self.law, delta=self.delta
        )
        return _SearchPlan(
            run_budget=run_budget,
            guarantee=guarantee,
            candidates=candidates,
            drawn=drawn,
            grid=grid,
            score_range=score_range,
            score_norm=score_norm,
        )

    # --- fit ----------------------------------------------------------------

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, *, groups=None):
        """Run the private search on X (and its targets y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            All rows: a random ``validation_fraction`` of them is held out
            for scoring, the rest trains every run.
        y : array-like of shape (n_samples,), default=None
            Targets, for candidates that end in a model: split with the rows,
            passed to every run's fit and to the score.
        groups : array-like of shape (n_samples,), default=None
            The person of each row, when the estimator fits persons (its
            ``max_rows_per_group`` set; see :ref:`privacy_units`): a random
            ``validation_fraction`` of the persons is held out, each with
            all its rows, every run fits the others' with ``groups``, and
            the held-out score is the mean over held-out persons of each
            person's mean row score (one person moves it by one row's
            worth).

        Returns
        -------
        self : object
            The fitted search.

        Raises
        ------
        ValueError
            If the parameters cannot give the guarantee asked, or the rows
            are too few to split.
        dpcov.exceptions.NoPrivateResult
            If every run's answer was "no result" (a private outcome).
        """
        check_params_always(self)
        check_group_parameters(
            groups, self._max_rows_per_group(), name=type(self).__name__
        )
        rng = check_random_state(self.random_state)
        # Under secure_noise the run count, the candidates' noise, the split
        # and the score's noise come from exact samplers on the operating
        # system's CSPRNG; a law or a candidate without one refuses here,
        # before the data are read.
        plan = self._plan(rng)
        run_budget, guarantee = plan.run_budget, plan.guarantee
        unit, relation = self._privacy_unit(), self._relation()
        if self.accountant is not None:
            self.accountant.check(
                guarantee, label=type(self).__name__, unit=unit, relation=relation
            )
        X = self._read_rows(X)
        y = self._read_targets(y, X.shape[0], plan.grid)
        codes = None
        if groups is not None:
            codes = self._person_codes(X, groups)
        # Every candidate the grid lists, at the run budget, on the rows (or
        # persons) a run trains on (a public number): its steps' checks that
        # need no row, every refusal said at once, before anything is spent.
        if relation == "add_remove":
            # The number of units is private: every candidate's checks run
            # at a count no minimum binds (the parameters, a box's values);
            # those that need the count come in its fit, after its own
            # released count, and a refusal there is the run's private "no
            # result".
            n_train, said = UNBINDING_COUNT, "a private number of units"
        else:
            n_units = X.shape[0] if codes is None else int(codes.max()) + 1
            n_train = n_units - self._n_valid(n_units)
            said = None if codes is None else "the persons it trains on"
        with persons_in_messages(codes is not None):
            _check_grid_before_spending(
                plan.grid,
                run_budget,
                n_train,
                y,
                X.shape[1],
                said=said,
            )
        warn_if_seeded(self, guarantee)
        train, valid = self._split_rows(X, y, rng, codes)
        if self.accountant is not None:
            self.accountant.spend(
                guarantee, label=type(self).__name__, unit=unit, relation=relation
            )
        candidates, drawn = plan.candidates, plan.drawn
        if not candidates:
            # Theorem 6 of Papernot and Steinke (2022) covers this outcome as
            # part of the release: the budget is spent. Fitting again is
            # another search (a retry until a run is drawn is a different law,
            # which the theorem does not cover).
            raise NoPrivateResult(
                "the Poisson law drew no run: the search's answer is 'no result' "
                "(its budget is spent). A truncated negative binomial law "
                "always runs at least once."
            )
        calibration = (run_budget, plan.score_range, plan.score_norm)
        best = self._best_run(candidates, drawn, train, valid, calibration, rng)
        self._release_best(best, run_budget, guarantee)
        return self

    def _read_rows(self, X):
        # The rows, validated (their names and width recorded).
        if self._relation() == "add_remove" and hasattr(self.estimator, "steps"):
            # A run's pipeline maps an empty training part through a public
            # pad row: refused here, before spending, where it has none.
            check_pad_row(X, type(self).__name__)
        if hasattr(X, "iloc"):
            # A DataFrame stays one (a ColumnTransformer step may select its
            # columns by name): its names and width are recorded here, its
            # cells validated by the steps that read them.
            validate_data(self, X, skip_check_array=True)
            n_samples = X.shape[0]
        else:
            # NaN (a missing cell) passes when the estimator takes it (a
            # pipeline that starts with the private imputer).
            allow_nan = get_tags(self.estimator).input_tags.allow_nan
            X = validate_rows(
                self,
                X,
                accept_sparse="csr",
                # (Under add/remove any number of rows, none included.)
                ensure_min_samples=0 if self._relation() == "add_remove" else 2,
                allow_nan=allow_nan,
            )
            n_samples = X.shape[0]
        if self._relation() == "add_remove":
            # The number of rows is private: any number, none included, is
            # split and fitted (a run on too few is a private "no result").
            return X
        if n_samples < 2:  # a DataFrame's (an array's is checked above)
            raise ValueError(
                f"PrivateSearchCV needs at least 2 rows (one to train, one to "
                f"score), got {n_samples}."
            )
        return X

    def _read_targets(self, y, n_samples, grid):
        # The targets as an array of n_samples, checked before anything is
        # spent against the domain of the model that ends every candidate the
        # grid lists (a regressor's numbers within each candidate's
        # target_bounds, a classifier's public classes), so that no refusal
        # depends on where the split puts a row; no message quotes a target.
        model, _ = _final(self.estimator)
        models = [_final(candidate)[0] for candidate in grid] or [model]
        kind = self.scoring if isinstance(self.scoring, str) else score_kind(model)
        supervised = kind in ("accuracy", "neg_squared_error")
        if y is None:
            if supervised:
                raise ValueError(
                    f"{type(model).__name__} fits and scores with targets: call "
                    "fit(X, y)."
                )
            return None
        try:
            y = np.asarray(y)
        except (TypeError, ValueError):
            y = None
        if y is None or y.ndim != 1 or y.shape[0] != n_samples:
            # (No count: the number of rows is private over persons and
            # under add/remove neighbours.)
            raise ValueError("y must be a 1-D array of targets, one per row of X.")
        if kind == "neg_squared_error":
            problem = None
            try:
                numbers = y.astype(np.float64)
            except (TypeError, ValueError):
                problem = "holds values that are not numbers"
            if problem is None and not np.all(np.isfinite(numbers)):
                problem = "contains NaN or infinity"
            for bounds in (getattr(m, "target_bounds", None) for m in models):
                if problem is None and bounds is not None:
                    low, high = (float(v) for v in np.asarray(bounds).reshape(2))
                    if not np.all((numbers >= low) & (numbers <= high)):
                        problem = (
                            "holds a target outside a candidate model's target_bounds"
                        )
            if problem is not None:
                raise ValueError(f"PrivateSearchCV.fit: y {problem}.")
            return numbers
        for classes in (getattr(m, "classes", None) for m in models):
            if kind != "accuracy" or classes is None:
                continue
            inside = np.zeros(n_samples, dtype=bool)
            for label in np.asarray(classes):
                try:
                    inside |= y == label
                except (TypeError, ValueError):
                    pass
            if not inside.all():
                raise ValueError(
                    "PrivateSearchCV.fit: y holds a label outside the model's "
                    "classes (refused before anything is spent)."
                )
        return y

    def _max_rows_per_group(self):
        # The estimator's bound on a person's rows (a search fits persons
        # when it is set).
        return self.estimator.get_params(deep=False).get("max_rows_per_group")

    def _relation(self):
        # The neighbouring relation of the estimator's private steps (and of
        # a pipeline's own neighbours parameter): one for all, or refused.
        relations = set(_relations(self.estimator))
        if len(relations) > 1:
            raise ValueError(
                "PrivateSearchCV needs one neighbouring relation for all the "
                "private steps of its estimator: some have "
                'neighbours="add_remove" and some "replace". Set it on each '
                "step (or on the PrivatePipeline, which hands it to its steps)."
            )
        return relations.pop() if relations else "replace"

    def _privacy_unit(self):
        return "person" if self._max_rows_per_group() is not None else "row"

    def _person_codes(self, X, groups):
        # Each row's person as 0..m-1 (checked: one label per row, at least
        # two persons, one to train and one to score).
        groups = check_groups(groups, X.shape[0], name=type(self).__name__)
        _, codes = np.unique(groups, return_inverse=True)
        codes = codes.reshape(-1)
        if self._relation() == "add_remove":
            return codes  # their number is private: any, none included
        if codes.max() < 1:
            raise ValueError(
                "PrivateSearchCV needs at least 2 persons (one to train, one to score)."
            )
        return codes

    def _n_valid(self, n_samples):
        # The number of held-out rows (public: from n and the fraction).
        return min(
            max(1, math.ceil(self.validation_fraction * n_samples)), n_samples - 1
        )

    def _split_rows(self, X, y, rng, codes=None):
        # The training and held-out rows (and targets), by a random
        # permutation (the draw after the plan's): of the rows, or of the
        # persons (codes), each with all its rows on one side. Over persons
        # the held-out and training parts carry their persons' codes.
        n_units = X.shape[0] if codes is None else int(codes.max(initial=-1)) + 1
        if self._relation() == "add_remove":
            # An independent coin per unit, held out with probability
            # validation_fraction (to 2**-53): adding or removing a unit
            # changes one part only, by that unit, and no coin reads the
            # number of units (a permutation's split would).
            scale = 2**53
            coins = _noise.indices(rng, scale, size=n_units)
            held = coins < round(self.validation_fraction * scale)
        else:
            n_valid = self._n_valid(n_units)
            held = np.zeros(n_units, dtype=bool)
            held[_noise.permutation(rng, n_units)[:n_valid]] = True
        if codes is None:
            train, valid = np.flatnonzero(~held), np.flatnonzero(held)
            parts = (None, None)
        else:
            train, valid = np.flatnonzero(~held[codes]), np.flatnonzero(held[codes])
            parts = (codes[train], codes[valid])
        X_train, X_valid = _safe_indexing(X, train), _safe_indexing(X, valid)
        targets = (None, None) if y is None else (y[train], y[valid])
        return (X_train, targets[0], parts[0]), (X_valid, targets[1], parts[1])

    def _best_run(self, candidates, drawn, train, valid, calibration, rng):
        # The runs, in the order drawn (their scores' noise comes from rng in
        # that order): the best run's (score, scale, model, params, warnings).
        best = None
        for index, params in enumerate(drawn):
            # Only the best model so far is kept: the others are dropped as
            # soon as they lose (the number of runs has a long tail).
            candidate, candidates[index] = candidates[index], None
            outcome = self._run(candidate, train, valid, calibration, rng)
            if outcome is None:
                continue  # a private "no result": this run scores -inf
            score, scale, caught = outcome
            if best is None or score > best[0]:
                best = (score, scale, candidate, params, caught)
        if best is None:
            raise NoPrivateResult(
                "every run of the search answered 'no result' (a private outcome)."
            )
        return best

    def _run(self, candidate, train, valid, calibration, rng):
        # One run: fit the candidate (its warnings recorded, not shown), then
        # its noisy score; None for a private "no result".
        X_train, y_train, g_train = train
        fit_params = {} if g_train is None else {"groups": g_train}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                if y_train is None:
                    candidate.fit(X_train, **fit_params)
                else:
                    candidate.fit(X_train, y_train, **fit_params)
            except NoPrivateResult:
                return None
        with warnings.catch_warnings():
            # Whatever the scoring of held-out rows warns is about those
            # rows, not a release: never shown.
            warnings.simplefilter("ignore")
            score, scale = self._noisy_score(candidate, valid, calibration, rng)
        return score, scale, caught

    def _release_best(self, best, run_budget, guarantee):
        # The selected run's model, its warnings and the search's record.
        score, scale, model, params, caught = best
        for message in caught:
            # The selected run's warnings are part of its release only where
            # they are computed from releases and public values: dpcov's own
            # categories (a public step's warnings are silenced by its
            # PublicTransformer; anything else, a floating-point warning of
            # NumPy say, may be about a row, and is dropped). Its generator
            # was the search's: the search's own seed warning, in fit, covers
            # it.
            category = message.category
            if category.__module__.split(".")[0] == "dpcov" and not issubclass(
                category, SeededNoiseWarning
            ):
                warn(message.message, category)
        _unseed(model)
        self.best_estimator_ = model
        self.best_params_ = dict(params)
        self.best_score_ = float(score)
        self.run_budget_ = run_budget
        self.score_noise_scale_ = float(scale)
        # Each run spends run_budget_; the search's guarantee is that of the
        # best of a random number of runs (the selection theorem), not their
        # composition.
        record_privacy(
            self,
            guarantee,
            {"run": run_budget},
            delta=float(getattr(guarantee, "delta", 0.0)),
        )

    def _noisy_score(self, model, valid, calibration, rng):
        # The run's noisy held-out score and its noise scale: valid is the
        # held-out (X, y, persons), calibration (run budget, score range,
        # score norm).
        if self._relation() == "add_remove":
            return self._noisy_total_score(model, valid, calibration, rng)
        values, (low, high) = self._unit_scores(model, valid, calibration)
        if not math.isfinite(low):
            return -math.inf, 0.0
        # A scalar: its L1 and L2 sensitivities are both (high - low) / n,
        # n the number of held-out units (public under replacement).
        sensitivity = (high - low) / values.shape[0]
        noise = calibrate_additive(
            calibration[0], l2_sensitivity=sensitivity, l1_sensitivity=sensitivity
        )
        return float(noise.add(float(np.mean(values)), rng)), noise.scale

    def _noisy_total_score(self, model, valid, calibration, rng):
        # Under add/remove neighbours the number of held-out units is
        # private: the release is the vector (sum of (v - c), w N) over the N
        # held-out units' scores v in [low, high], c the range's centre and w
        # its half-width. Replacing a unit moves it by at most 2 w = high -
        # low (the sum only); adding or removing one by (v - c, w), of L2
        # norm at most sqrt(2) w and L1 norm at most 2 w: the sensitivity
        # high - low covers both relations, in L1 and L2. The score is the
        # ratio (post-processing), the noisy count floored at one unit and
        # the mean clipped to the range. The range is read from the model
        # alone, so the noise is the same whatever the held-out units, none
        # included.
        run_budget, score_range, score_norm = calibration
        low, high = score_bounds(
            model, scoring=self.scoring, score_range=score_range, score_norm=score_norm
        )
        if not math.isfinite(low):
            return -math.inf, 0.0
        center, half = (low + high) / 2.0, (high - low) / 2.0
        total, count = 0.0, 0
        if valid[0].shape[0]:
            values, _ = self._unit_scores(model, valid, calibration)
            values = np.clip(values, low, high)
            total, count = math.fsum(values - center), values.size
        noise = calibrate_additive(
            run_budget, l2_sensitivity=high - low, l1_sensitivity=high - low
        )
        noisy_total, noisy_count = noise.add(np.array([total, half * count]), rng)
        units = max(noisy_count / half, 1.0) if half > 0.0 else 1.0
        score = center + float(np.clip(noisy_total / units, -half, half))
        return score, noise.scale

    def _unit_scores(self, model, valid, calibration):
        # Each held-out unit's score, in [low, high]: a row's, or a held-out
        # person's mean row score (whatever its number of rows).
        (X_valid, y_valid, persons), (_, score_range, score_norm) = valid, calibration
        n_valid = X_valid.shape[0]
        values, (low, high) = bounded_scores(
            model,
            X_valid,
            y_valid,
            scoring=self.scoring,
            score_range=score_range,
            score_norm=score_norm,
        )
        if values.shape != (n_valid,):
            # One value per held-out row, or the sensitivity is not one
            # unit's: never calibrate to another count.
            got = "another length" if values.ndim == 1 else f"{values.ndim} dimensions"
            raise ValueError(
                "scoring must return one score per row of the held-out X, a "
                f"1-D array; got {got} (no count is said: it may be private)."
            )
        if persons is not None and math.isfinite(low):
            _, persons = np.unique(persons, return_inverse=True)
            values = np.bincount(persons, values) / np.bincount(persons)
        return values, (low, high)

    # --- the selected model's methods ----------------------------------------

    def _has(name):
        def check(self):
            if hasattr(self, "best_estimator_"):
                return hasattr(self.best_estimator_, name)
            return hasattr(self.estimator, name)

        return check

    @available_if(_has("transform"))
    def transform(self, X):
        """Transform X with the selected model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to transform.

        Returns
        -------
        X_new : ndarray
            ``best_estimator_.transform(X)``.
        """
        check_is_fitted(self)
        return self.best_estimator_.transform(X)

    @available_if(_has("inverse_transform"))
    def inverse_transform(self, X):
        """Map X back with the selected model.

        Parameters
        ----------
        X : array-like
            Transformed rows.

        Returns
        -------
        X_original : ndarray
            ``best_estimator_.inverse_transform(X)``.
        """
        check_is_fitted(self)
        return self.best_estimator_.inverse_transform(X)

    @available_if(_has("score_samples"))
    def score_samples(self, X):
        """Per-row scores of the selected model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            ``best_estimator_.score_samples(X)``.
        """
        check_is_fitted(self)
        return self.best_estimator_.score_samples(X)

    @available_if(_has("score"))
    def score(self, X, y=None):
        """The selected model's own score on X (not private: X is read as is).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows.
        y : array-like of shape (n_samples,), default=None
            Targets, for a model that scores with them (accuracy, R^2).

        Returns
        -------
        score : float
            ``best_estimator_.score(X)`` (``score(X, y)`` with ``y``).
        """
        check_is_fitted(self)
        if y is None:
            return self.best_estimator_.score(X)
        return self.best_estimator_.score(X, y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        tags.input_tags.sparse = True
        return tags


def _as_run(candidate):
    # The candidate as a run fits it: each public map in a PublicTransformer
    # (its fit reads no row, its output is finite and it warns nothing,
    # whatever a training or held-out row holds), and each scikit-learn
    # Pipeline, at any depth, a PrivatePipeline without a budget of its own
    # (every step keeps the budget the search set), which maps the rows into
    # range between its steps, in fit and in every method the score uses.
    # Under add/remove (its private steps', see _relations) every
    # PrivatePipeline fits under add/remove too: no table is refused for its
    # size, an empty training part included.
    run = as_private_pipelines(run_public_maps(candidate))
    if set(_relations(run)) == {"add_remove"}:
        for _, leaf in _private_leaves(run):
            if isinstance(leaf, PrivatePipeline):
                leaf.set_params(neighbours="add_remove")
    return run


def _all_private_leaves(candidate):
    # The candidate's private leaves and, in a PrivatePipeline, its own.
    for prefix, leaf in _private_leaves(candidate):
        yield prefix, leaf
        if isinstance(leaf, PrivatePipeline):
            for path, inner in leaf._private_leaves():
                yield f"{prefix}{path}", inner


def _relations(candidate):
    # The neighbouring relation of each private step: a PrivatePipeline's
    # "add_remove" is handed to all its steps; otherwise each step's own.
    for _, leaf in _private_leaves(candidate):
        relation = leaf.get_params(deep=False).get("neighbours", "replace")
        if isinstance(leaf, PrivatePipeline) and relation == "replace":
            for _, inner in leaf._private_leaves():
                yield inner.get_params(deep=False).get("neighbours", "replace")
        else:
            yield relation


def _check_candidate(candidate):
    # Before the data are read, on every candidate the grid lists (so that a
    # refusal does not depend on the candidates drawn) and on each one drawn.
    for _, leaf in _all_private_leaves(candidate):
        if getattr(leaf, "accountant", None) is not None:
            raise ValueError(
                f"{type(leaf).__name__} has an accountant: pass it to "
                "PrivateSearchCV, which records the search's guarantee once."
            )
        if _noise.secure() and not leaf._supports_hardened_noise():
            # As a plain fit refuses (secure_noise=True).
            raise NoHardenedSampler(
                f"PrivateSearchCV: the candidate {type(leaf).__name__} with "
                "these parameters has no hardened sampler (secure_noise=True); "
                "the user guide's privacy model page ('Hardened noise') lists "
                "the estimators that have one."
            )


def _seed_private_steps(candidate, generator):
    # One generator of its own for each private step, spawned from the
    # run's. (A public step's own randomness, if any, is left as the user
    # set it.)
    leaves = [
        prefix
        for prefix, leaf in _private_leaves(candidate)
        if "random_state" in leaf.get_params(deep=False)
    ]
    candidate.set_params(
        **{
            f"{prefix}random_state": child
            for prefix, child in zip(
                leaves, spawn_generators(generator, len(leaves)), strict=True
            )
        }
    )


def _unseed(model):
    # Set random_state=None on every dpcov estimator reachable from a fitted
    # model: its steps and their fitted copies (a ColumnTransformer's
    # transformers_, a PCA's covariance_estimator_, ...). The runs'
    # generators were set on private steps only, and copies of them (clone
    # deep-copies a generator) may sit in any of those places.
    for _, obj in held_objects(model):
        if is_private(obj) and "random_state" in vars(obj):
            obj.random_state = None
