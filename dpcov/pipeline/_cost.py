"""What composites spend: walks of scikit-learn objects to their private steps.

:func:`private_steps` finds the private estimators a pipeline (or a
:class:`~sklearn.pipeline.FeatureUnion`, a
:class:`~sklearn.compose.ColumnTransformer`) fits once, at any depth;
:func:`pipeline_cost` composes their guarantees. Both read the private
estimators' ``privacy_cost()`` (before a fit) or ``guarantee_`` (after), and
compose them with :mod:`dpcov.accounting`. The cost of a search is in
:mod:`dpcov.model_selection`, which walks its candidates with these.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import FeatureUnion, Pipeline

from ..accounting import ApproxDP
from ..accounting._composition import compose_fits
from ..base import is_private, privacy_tags

__all__ = ["check_shareable", "pipeline_cost", "private_steps", "walk_costs"]


def _is_estimator(value):
    return hasattr(value, "get_params") and not isinstance(value, type)


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
    guarantee = privacy_tags(step).guarantee
    if guarantee == "approx_dp" or isinstance(step.privacy_cost(), ApproxDP):
        raise ValueError(f"{name} is (epsilon, delta)-DP only; {why}.")
    if pure and guarantee == "zcdp":
        raise ValueError(f"{name} has no pure-DP form: give {who} a delta > 0.")


def walk_costs(estimator, *, fitted=False, caller="search_cost"):
    """The class name and guarantee of each private step of ``estimator``.

    The steps are those of :func:`private_steps`, in its order. Each counts
    its ``privacy_cost()`` (what a fit will spend, read from its public
    parameters) or, with ``fitted``, its ``guarantee_`` where it has one
    (what its fit spent, at most its ``privacy_cost()``).

    Parameters
    ----------
    estimator : object
        A private estimator, or a Pipeline, FeatureUnion or ColumnTransformer
        holding private estimators (nested to any depth), fitted or not.
    fitted : bool, default=False
        Count a fitted step's ``guarantee_`` (and walk a fitted
        ColumnTransformer's fitted clones) instead of its ``privacy_cost()``.
    caller : str, default="search_cost"
        The public function named in the error.

    Returns
    -------
    costs : list of (str, PureDP, ZCDP or ApproxDP)
        The class name and guarantee of each private step; empty if
        ``estimator`` holds none.

    Raises
    ------
    ValueError
        If ``estimator`` holds a private estimator inside a meta-estimator
        that may fit it several times (bagging, one-vs-rest), or outside its
        steps (see :func:`private_steps`).
    """
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
    costs = walk_costs(estimator, fitted=True, caller="pipeline_cost")
    if not costs:
        raise ValueError(
            f"{type(estimator).__name__} holds no dpcov estimator: "
            "pipeline_cost composes the guarantees of private steps only."
        )
    return compose_fits(guarantee for _, guarantee in costs)
