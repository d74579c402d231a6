"""What a private composite may contain: one rule, checked before any row is read.

A :class:`~dpcov.pipeline.PrivatePipeline`, and each candidate of a
:class:`~dpcov.model_selection.PrivateSearchCV`, states a guarantee for
everything it fits. That guarantee covers only what it can see, so every step
it fits, at any depth of a :class:`~sklearn.pipeline.Pipeline`,
:class:`~sklearn.pipeline.FeatureUnion` or
:class:`~sklearn.compose.ColumnTransformer` (its remainder included), must be
one of:

* a private dpcov estimator (:func:`dpcov.base.is_private`): its release is
  counted;
* a public map, which reads no row in its fit and maps each row on its own:
  a :class:`~dpcov.preprocessing.PublicTransformer` (the user's declaration),
  :class:`~dpcov.preprocessing.BoundsScaler` (public ranges), a
  :class:`~sklearn.frozen.FrozenEstimator` (a transformer fitted on public
  data), or one of the scikit-learn transforms that read only their input's
  shape (:data:`~dpcov.preprocessing._public.SHAPE_ONLY_TRANSFORMS`);
* ``"passthrough"``, ``"drop"`` or None.

Anything else (a scikit-learn model, scaler or imputer, an encoder that reads
its categories off the rows, a bare FunctionTransformer) is refused, naming
the step and its dpcov counterpart. :func:`check_composition` applies the
rule; :func:`run_public_maps` rewrites a composite so that each public map
runs inside a :class:`~dpcov.preprocessing.PublicTransformer`, whose fit
reads no row and whose output is always finite and silent.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn.base import clone
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from ..base import is_private
from ..preprocessing import BoundsScaler
from ..preprocessing._public import (
    SHAPE_ONLY_TRANSFORMS,
    PublicTransformer,
    learner_message,
)
from ._cost import _COMPOSITES

__all__ = [
    "check_composition",
    "composite_children",
    "is_public_map",
    "public_map_copy",
    "run_public_maps",
]


def _skipped(step):
    return step is None or (isinstance(step, str) and step in ("passthrough", "drop"))


def is_public_map(step):
    """Whether a step may run as a public map in a private composite.

    Parameters
    ----------
    step : object
        A step.

    Returns
    -------
    public : bool
        True for a PublicTransformer, a BoundsScaler, a FrozenEstimator and
        the scikit-learn transforms that read only their input's shape.
    """
    if isinstance(step, FrozenEstimator):
        # A FunctionTransformer's function is arbitrary code, frozen or not:
        # it is declared with a PublicTransformer.
        return not isinstance(step.estimator, FunctionTransformer)
    # Exact classes: a subclass may override what its parent reads.
    return isinstance(step, PublicTransformer) or type(step) in (
        BoundsScaler,
        *SHAPE_ONLY_TRANSFORMS,
    )


def composite_children(estimator):
    """(name, step) of a composite's steps, or None for a leaf.

    A Pipeline's steps, a FeatureUnion's transformers, a ColumnTransformer's
    transformers and its remainder (named ``"remainder"``): each pair's name
    is the parameter that ``set_params`` replaces it by.

    Parameters
    ----------
    estimator : object

    Returns
    -------
    children : list of (str, object) or None
    """
    attribute = next((a for cls, a in _COMPOSITES if isinstance(estimator, cls)), None)
    if attribute is None:
        return None
    steps = [(step[0], step[1]) for step in getattr(estimator, attribute)]
    if attribute == "transformers":
        steps.append(("remainder", estimator.remainder))
    return steps


def check_composition(estimator, *, caller, prefix=""):
    """Refuse, before any row is read, a step the composite cannot vouch for.

    Walks Pipelines (dpcov's :class:`~dpcov.pipeline.PrivatePipeline`
    included), FeatureUnions and ColumnTransformers to any depth; a private
    leaf that is itself a composite of its own (a PrivatePipeline, a
    PrivateSearchCV) is checked by its own ``_check_composition``.

    Parameters
    ----------
    estimator : estimator instance
        The composite (or a single step).
    caller : str
        Named in the message (``"PrivatePipeline"``).
    prefix : str, default=""
        The parameter path of ``estimator``, for recursion and messages.

    Raises
    ------
    ValueError
        Naming the first step that is neither private, nor a public map, nor
        skipped, with its dpcov counterpart where one exists.
    """
    if _skipped(estimator):
        return
    if is_private(estimator):
        estimator._check_composition()
        return
    if is_public_map(estimator):
        return
    children = composite_children(estimator)
    where = f"step {prefix.rstrip('_')!r} of {caller}" if prefix else caller
    if children is None:
        raise ValueError(learner_message(estimator, where))
    if isinstance(estimator, Pipeline) and type(estimator) is not Pipeline:
        raise ValueError(
            f"{where} is {type(estimator).__name__}, a subclass of Pipeline, "
            "which may run its steps its own way: use a scikit-learn Pipeline "
            "or a dpcov PrivatePipeline."
        )
    _check_composite_options(estimator, where)
    for name, step in children:
        check_composition(step, caller=caller, prefix=f"{prefix}{name}__")


def _check_composite_options(composite, where):
    # What a FeatureUnion or ColumnTransformer does to rows outside its steps
    # must not depend on their values: weights multiply outside the public
    # maps (an overflow there warns on some rows only), and a callable
    # selects columns from the rows (make_column_selector reads only the
    # column names and dtypes, public).
    if getattr(composite, "transformer_weights", None) is not None:
        raise ValueError(
            f"{where} sets transformer_weights, which multiply rows outside its "
            "steps; scale inside a PublicTransformer (or the step) instead."
        )
    if isinstance(composite, ColumnTransformer):
        for name, _, columns in composite.transformers:
            if callable(columns) and not isinstance(columns, make_column_selector):
                raise ValueError(
                    f"{where} selects the columns of {name!r} with a function, "
                    "which may read the rows; select them by position, by name "
                    "or with sklearn.compose.make_column_selector."
                )


def run_public_maps(estimator):
    """The composite with each public map run by a PublicTransformer.

    Parameters
    ----------
    estimator : estimator instance
        A composite that passed :func:`check_composition` (not fitted).

    Returns
    -------
    estimator : estimator instance
        ``estimator`` itself, with ``set_params`` putting a
        :class:`~dpcov.preprocessing.PublicTransformer` around each
        FrozenEstimator and shape-only transform (a single public map comes
        back wrapped), and every ColumnTransformer's ``sparse_threshold`` at
        0 (dense output, whatever the rows' density). Private leaves,
        PublicTransformers and BoundsScalers are left as they are.
    """
    if _skipped(estimator) or is_private(estimator):
        return estimator
    if is_public_map(estimator):
        if isinstance(estimator, (PublicTransformer, BoundsScaler)):
            return estimator
        return PublicTransformer(estimator)
    children = composite_children(estimator)
    if children is None:
        return estimator
    if isinstance(estimator, ColumnTransformer):
        # Dense output always: with a sparse_threshold in (0, 1] the format
        # would follow the rows' density, a choice one row can change.
        estimator.set_params(sparse_threshold=0.0)
    params = {
        name: wrapped
        for name, step in children
        if (wrapped := run_public_maps(step)) is not step
    }
    if params:
        estimator.set_params(**params)
    return estimator


def public_map_copy(step):
    """A clone of a public step, run by a PublicTransformer where it is not one.

    Parameters
    ----------
    step : estimator instance
        A public map, or a composite of public maps.

    Returns
    -------
    step : estimator instance
    """
    return run_public_maps(clone(step))
