"""What pipelines and hyperparameter searches spend: walks of scikit-learn objects.

:func:`pipeline_cost` composes the guarantees of the private steps of a
pipeline; :func:`search_cost` lists what every fit of a scikit-learn search
spends. Both read the private estimators' ``privacy_cost()`` (before a fit)
or ``guarantee_`` (after), and compose them with :mod:`dpcov.accounting`.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral

from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV, ParameterGrid, check_cv
from sklearn.pipeline import FeatureUnion, Pipeline

from ..accounting import ZCDP, ApproxDP, BudgetAccountant, PureDP, compose

__all__ = ["pipeline_cost", "search_cost"]


def _is_estimator(value):
    return hasattr(value, "get_params") and not isinstance(value, type)


def is_private(estimator):
    """Whether an object is a private dpcov estimator (it has ``privacy_cost``).

    A :class:`~sklearn.frozen.FrozenEstimator` forwards attribute access to
    what it holds, but is never fitted again: a frozen dpcov model is a
    release, used as a public map, not a private step.

    Parameters
    ----------
    estimator : object

    Returns
    -------
    private : bool
    """
    return hasattr(estimator, "privacy_cost") and not isinstance(
        estimator, FrozenEstimator
    )


_COMPOSITES = (
    (Pipeline, "steps"),
    (FeatureUnion, "transformer_list"),
    (ColumnTransformer, "transformers"),
)


def private_steps(estimator, *, fitted=False, caller="search_cost", prefix=""):
    """The private estimators that ``estimator`` fits once, with their paths.

    Itself, or the steps of the composites that fit each step once on the
    same rows (Pipeline, FeatureUnion, ColumnTransformer, its remainder
    included), nested to any depth. Any other meta-estimator may fit its
    inner estimator several times (bagging, one-vs-rest, ...): if it holds a
    private estimator, its cost is not known here and this raises.

    Parameters
    ----------
    estimator : object
        What to walk.
    fitted : bool, default=False
        Walk a fitted ColumnTransformer's fitted clones (``transformers_``)
        instead of the unfitted originals.
    caller : str, default="search_cost"
        Named in the error.
    prefix : str, default=""
        The parameter path of ``estimator`` (``"step__"``), for recursion.

    Returns
    -------
    steps : list of (str, estimator)
        Each private estimator with its parameter prefix (``"pca__"``, or
        ``""`` for ``estimator`` itself): ``set_params(**{prefix + "rho":
        ...})`` on the walked estimator reaches it.
    """
    if is_private(estimator):
        return [(prefix, estimator)]
    if not _is_estimator(estimator) or isinstance(estimator, FrozenEstimator):
        return []  # (a frozen estimator is never fitted again)
    attribute = next((a for cls, a in _COMPOSITES if isinstance(estimator, cls)), None)
    if attribute is None:
        inner = [value for _, value in _private_params(estimator)]
        if inner:
            raise ValueError(
                f"{type(estimator).__name__} holds a private estimator "
                f"({type(inner[0]).__name__}) and may fit it several times; "
                f"{caller} counts Pipeline, FeatureUnion and ColumnTransformer "
                "steps only."
            )
        return []
    if fitted and hasattr(estimator, "transformers_"):
        # A fitted ColumnTransformer's fitted clones (``transformers`` keeps
        # the unfitted originals; ``transformers_`` lists the remainder).
        steps = [(step[0], step[1]) for step in estimator.transformers_]
    else:
        steps = [(step[0], step[1]) for step in getattr(estimator, attribute)]
        if attribute == "transformers":
            steps.append(("remainder", estimator.remainder))  # fitted too
    leaves = []
    for name, inner in steps:
        leaves.extend(
            private_steps(
                inner, fitted=fitted, caller=caller, prefix=f"{prefix}{name}__"
            )
        )
    # Every private estimator the composite holds must be one of the leaves
    # (or inside one): anything else would be fitted without being counted.
    found = [path for path, _ in leaves]
    for key, value in _private_params(estimator):
        if not any(f"{prefix}{key}__".startswith(path) for path in found):
            raise ValueError(
                f"{type(estimator).__name__} holds a private estimator "
                f"({type(value).__name__}, parameter {key!r}) outside its "
                f"steps; {caller} cannot count it."
            )
    return leaves


def _private_params(estimator):
    # (key, value) of the private estimators among ``estimator``'s nested
    # parameters, but those inside a FrozenEstimator (never fitted again).
    params = estimator.get_params(deep=True)
    frozen = [f"{k}__" for k, v in params.items() if isinstance(v, FrozenEstimator)]
    return [
        (key, value)
        for key, value in params.items()
        if is_private(value) and not any(key.startswith(path) for path in frozen)
    ]


def check_shareable(step, *, pure, who, why):
    """Refuse a private step that cannot run at a share of a pure or zCDP budget.

    Parameters
    ----------
    step : estimator instance
        The private step.
    pure : bool
        Whether the shared budget is pure DP.
    who : str
        What shares the budget, for the message ("the search").
    why : str
        Why it needs pure-DP or zCDP steps, for the message.

    Raises
    ------
    ValueError
        If the step is (epsilon, delta)-DP only, or has no pure-DP form under
        a pure-DP budget.
    """
    name = type(step).__name__
    if getattr(step, "_approx_dp_only", False) or isinstance(
        step.privacy_cost(), ApproxDP
    ):
        raise ValueError(f"{name} is (epsilon, delta)-DP only; {why}.")
    if pure and getattr(step, "_zcdp_only", False):
        raise ValueError(f"{name} has no pure-DP form: give {who} a delta > 0.")


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


def budget_weights(costs, *, pure):
    """Weights of private steps in a shared budget: what each would spend alone.

    Under a pure-DP budget a step weighs its epsilon (a zCDP step: the
    epsilon with the same rho, ``sqrt(2 rho)``); under zCDP, its rho (a pure
    step: ``epsilon**2 / 2``). Steps that cost nothing weigh 0; when none
    costs anything finite, all weigh the same.

    Parameters
    ----------
    costs : list of PureDP or ZCDP
        Each step's ``privacy_cost()``.
    pure : bool
        Whether the shared budget is pure DP.

    Returns
    -------
    weights : list of float
    """
    if pure:
        weights = [
            c.epsilon if isinstance(c, PureDP) else math.sqrt(2.0 * c.to_zcdp().rho)
            for c in costs
        ]
    else:
        weights = [c.to_zcdp().rho for c in costs]
    total = math.fsum(weights)
    if not math.isfinite(total) or total <= 0:
        return [1.0] * len(costs)
    return weights


def _walk_costs(estimator, *, fitted=False, caller="search_cost"):
    # (name, guarantee) of the private steps: with ``fitted``, a fitted
    # estimator counts its ``guarantee_`` (what its fit spent, at most its
    # ``privacy_cost()``).
    return [
        (
            type(step).__name__,
            step.guarantee_
            if fitted and hasattr(step, "guarantee_")
            else step.privacy_cost(),
        )
        for _, step in private_steps(estimator, fitted=fitted, caller=caller)
    ]


def pipeline_cost(estimator):
    """The total guarantee of the private steps of a pipeline.

    The steps of a :class:`~sklearn.pipeline.Pipeline` (and of a
    :class:`~sklearn.pipeline.FeatureUnion` or
    :class:`~sklearn.compose.ColumnTransformer`, nested to any depth) are each
    fitted once, on the same rows (or on rows computed from them, row by row,
    by the earlier steps). Their releases therefore compose sequentially,
    adaptively: the guarantees add (epsilons under pure DP, rhos under zCDP,
    see :func:`~dpcov.accounting.compose`). A step fitted on the output of an
    earlier private step (a private PCA after a private scaler) is covered: the earlier
    release is a public input to it, and replacing one row of the data
    replaces one row of what it sees.

    Each dpcov estimator counts its ``guarantee_`` once fitted (what its fit
    spent) and its ``privacy_cost()`` before (what a fit will spend), so the
    total can be checked before the pipeline reads any data.

    The guarantee covers the private steps' releases and nothing else. Every
    other step must be public: a fixed row-wise map such as
    :class:`~dpcov.preprocessing.BoundsScaler` or a
    :class:`~sklearn.preprocessing.FunctionTransformer` of a public function
    (dpcov's own composites, :class:`~dpcov.pipeline.PrivatePipeline` and
    :class:`~dpcov.model_selection.PrivateSearchCV`, refuse any other step
    before reading, and run the public ones in a
    :class:`~dpcov.preprocessing.PublicTransformer`).
    A non-private estimator fitted in the pipeline (a scikit-learn scaler, or
    a classifier fitted on the private features) reads the rows without
    privacy, and what it learns is not covered.

    Parameters
    ----------
    estimator : estimator instance
        A dpcov estimator, or a Pipeline, FeatureUnion or ColumnTransformer
        holding dpcov estimators, fitted or not.

    Returns
    -------
    guarantee : PureDP, ZCDP or ApproxDP
        The composition of the private steps' guarantees.

    Raises
    ------
    ValueError
        If ``estimator`` holds no dpcov estimator, holds one inside a
        meta-estimator that may fit it several times (bagging, one-vs-rest),
        or mixes zCDP with (epsilon, delta)-only guarantees (see
        :func:`~dpcov.accounting.compose`).

    See Also
    --------
    search_cost : What a hyperparameter search spends, fit by fit.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from dpcov.model_selection import pipeline_cost
    >>> from dpcov.decomposition import PCA
    >>> from dpcov.preprocessing import StandardScaler
    >>> pipe = make_pipeline(
    ...     StandardScaler(epsilon=0.5, delta=0.0, bounds=(0.0, 10.0)),
    ...     PCA(2, epsilon=1.0, delta=0.0, data_norm=4.0),
    ... )
    >>> pipeline_cost(pipe)  # before fitting: epsilons add under pure DP
    PureDP(epsilon=1.5)
    """
    costs = _walk_costs(estimator, fitted=True, caller="pipeline_cost")
    if not costs:
        raise ValueError(
            f"{type(estimator).__name__} holds no dpcov estimator: "
            "pipeline_cost composes the guarantees of private steps only."
        )
    return compose(guarantee for _, guarantee in costs)


def search_cost(search, *, delta=0.0):
    """What a scikit-learn hyperparameter search spends, fit by fit.

    A search fits every candidate on every training split and, with ``refit``,
    the best candidate once more on all rows: ``n_candidates * n_splits + 1``
    fits on overlapping subsets of the same rows, which compose. This function
    recomputes each fit's guarantee from its parameters (the estimator's
    ``privacy_cost()``; every dpcov estimator found in a
    :class:`~sklearn.pipeline.Pipeline` or another meta-estimator counts) and
    returns them as a ledger.

    Use it for searches with ``n_jobs > 1``, whose fits run in other processes
    where an accountant passed to the estimator cannot record (see
    :class:`~dpcov.accounting.BudgetAccountant`). For a fitted search the
    candidates come from ``cv_results_["params"]``; for an unfitted
    :class:`~sklearn.model_selection.GridSearchCV` from its ``param_grid`` and
    the number of splits of its ``cv`` (so the cost can be checked before the
    search reads any data). The count covers the fits only: choosing the best
    candidate from held-out scores is not private (see the privacy-model
    chapter): :class:`PrivateSearchCV` is the search whose choice is.

    Parameters
    ----------
    search : GridSearchCV, RandomizedSearchCV or similar
        A fitted search (anything with ``cv_results_``, ``n_splits_`` and
        ``refit``; a halving search lists every fit in ``cv_results_``), or
        an unfitted ``GridSearchCV`` whose ``cv`` is an integer, None or a
        splitter with a data-independent number of splits.
    delta : float, default=0.0
        The delta at which the total is stated, in [0, 1): with 0, the total
        is the fits' composition as it is (pure DP, zCDP, or (epsilon,
        delta)-DP at the (epsilon, delta) fits' deltas); with ``delta > 0``,
        (epsilon, delta)-DP at that delta.

    Returns
    -------
    cost : BudgetAccountant
        An accountant without cap (``BudgetAccountant(delta=delta)``) whose
        ledger holds one entry per private fit. Its printout states the
        number of fits and the total (``spent=...``); read the total with
        :meth:`~dpcov.accounting.BudgetAccountant.spent`,
        :meth:`~dpcov.accounting.BudgetAccountant.total` or
        :attr:`~dpcov.accounting.BudgetAccountant.epsilon`, or charge it to
        your own accountant with ``accountant.spend(cost)``.

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV
    >>> from dpcov.model_selection import search_cost
    >>> from dpcov.covariance import SeparateCovariance
    >>> search = GridSearchCV(
    ...     SeparateCovariance(data_norm=1.0), {"epsilon": [0.5, 1.0]}, cv=3
    ... )
    >>> search_cost(search)  # before fitting: 2 * 3 + 1 fits
    BudgetAccountant(delta=0.0, n_fits=7, spent=ZCDP(rho=...))
    >>> search_cost(search, delta=1e-6)
    BudgetAccountant(delta=1e-06, n_fits=7, spent=ApproxDP(epsilon=..., delta=1e-06))
    """
    # ``best``: the refit's parameters when known; ``refit_costliest``: charge
    # the refit at the costliest candidate (unfitted search with refit).
    refit_costliest = False
    if hasattr(search, "cv_results_"):
        candidates = list(search.cv_results_["params"])
        n_splits = int(search.n_splits_)
        best = getattr(search, "best_params_", None) if search.refit else None
    elif type(search) is GridSearchCV:
        # Only a plain grid search: successive halving fits more than
        # n_candidates * n_splits + 1 times.

        cv = search.cv
        if not (cv is None or isinstance(cv, Integral) or hasattr(cv, "get_n_splits")):
            # An iterable of splits would be consumed here, before the search.
            raise ValueError(
                "the search's cv is an iterable of splits: its number is not "
                "known without using it up; fit the search first and call "
                "search_cost on the fitted search."
            )
        candidates = list(ParameterGrid(search.param_grid))
        n_splits = check_cv(cv).get_n_splits()
        if n_splits is None:
            raise ValueError(
                "the search's cv has a data-dependent number of splits; fit the "
                "search first and call search_cost on the fitted search."
            )
        best = None
        refit_costliest = bool(search.refit)
    else:
        raise TypeError(
            "search_cost needs a fitted search (with cv_results_) or an "
            "unfitted GridSearchCV."
        )

    def costs(params):
        return _walk_costs(clone(search.estimator).set_params(**params))

    cost = BudgetAccountant(delta=delta)
    per_candidate = [costs(params) for params in candidates]
    for params, entries in zip(candidates, per_candidate, strict=True):
        for split in range(n_splits):
            for name, guarantee in entries:
                cost.spend(guarantee, label=f"{name} {params} split {split}")
    if best is not None:
        for name, guarantee in costs(best):
            cost.spend(guarantee, label=f"{name} {best} refit")
    elif refit_costliest:
        # The refit's candidate is not known before the search runs: charge a
        # guarantee that dominates every candidate's.
        guarantee = _dominating([compose(g for _, g in e) for e in per_candidate if e])
        if guarantee is not None:
            cost.spend(guarantee, label="refit (the costliest candidate)")
    return cost


def _dominating(guarantees):
    # One guarantee at least as strong a cost as each of ``guarantees``.
    if not guarantees:
        return None
    kinds = {type(g) for g in guarantees}
    if kinds == {PureDP}:
        return PureDP(max(g.epsilon for g in guarantees))
    if ApproxDP not in kinds:
        return ZCDP(max(g.to_zcdp().rho for g in guarantees))
    if ZCDP in kinds:
        raise ValueError(
            "the candidates mix zCDP and (epsilon, delta)-only guarantees, so "
            "the refit's cost is not known before the search: fit the search "
            "and call search_cost on the fitted search."
        )
    approx = [g.to_approx_dp(0.0) if isinstance(g, PureDP) else g for g in guarantees]
    return ApproxDP(max(g.epsilon for g in approx), max(g.delta for g in approx))
