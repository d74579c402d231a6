"""The rule of what a private composite may contain, and its public maps."""

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (
    Binarizer,
    FunctionTransformer,
    Normalizer,
    OneHotEncoder,
    PolynomialFeatures,
)
from sklearn.preprocessing import StandardScaler as SkStandardScaler

from dpcov.decomposition import PCA
from dpcov.pipeline._composition import (
    check_composition,
    is_public_map,
    run_public_maps,
)
from dpcov.preprocessing import BoundsScaler, PublicTransformer


def _frozen():
    public = np.random.default_rng(1).normal(size=(50, 2))
    return FrozenEstimator(SkStandardScaler().fit(public))


def test_public_maps():
    for step in (
        PublicTransformer(FunctionTransformer(np.tanh)),
        BoundsScaler(bounds=(0.0, 1.0)),
        _frozen(),
        PolynomialFeatures(2),
        Normalizer(),
        Binarizer(),
    ):
        assert is_public_map(step)
    for step in (FunctionTransformer(np.tanh), SkStandardScaler(), OneHotEncoder()):
        assert not is_public_map(step)


def test_nested_composites_of_allowed_steps_pass_and_run_public_maps():
    union = FeatureUnion([("poly", PolynomialFeatures(2)), ("frozen", _frozen())])
    columns = ColumnTransformer(
        [("union", union, [0, 1]), ("skip", "drop", [2])], remainder="passthrough"
    )
    candidate = Pipeline(
        [("columns", columns), ("norm", Normalizer()), ("pca", PCA(2, data_norm=1.0))]
    )
    check_composition(candidate, caller="test")
    wrapped = run_public_maps(candidate)
    assert wrapped is candidate
    assert isinstance(candidate["norm"], PublicTransformer)
    inner = candidate["columns"].transformers[0][1]
    assert all(
        isinstance(step, PublicTransformer) for _, step in inner.transformer_list
    )
    assert isinstance(candidate["pca"], PCA)
    X = np.random.default_rng(0).normal(size=(2000, 4))
    assert candidate.fit(X).transform(X).shape == (2000, 2)


@pytest.mark.parametrize(
    "composite, path",
    [
        (Pipeline([("a", Pipeline([("b", SkStandardScaler())]))]), "a__b"),
        (FeatureUnion([("u", OneHotEncoder())]), "u"),
        (ColumnTransformer([("c", "passthrough", [0])], remainder=Normalizer()), None),
        (
            ColumnTransformer(
                [("c", "passthrough", [0])], remainder=SkStandardScaler()
            ),
            "remainder",
        ),
    ],
)
def test_a_step_without_a_guarantee_is_named_by_its_path(composite, path):
    if path is None:
        check_composition(composite, caller="test")
        return
    with pytest.raises(ValueError, match=f"step '{path}' of test"):
        check_composition(composite, caller="test")


def test_what_a_composite_does_outside_its_steps_is_public():
    from sklearn.compose import make_column_selector

    weighted = FeatureUnion([("p", Normalizer())], transformer_weights={"p": 2.0})
    with pytest.raises(ValueError, match="transformer_weights"):
        check_composition(weighted, caller="test")

    def select(X):
        return [0] if np.abs(np.asarray(X)).max() < 1e100 else [1]

    with pytest.raises(ValueError, match="with a function"):
        check_composition(
            ColumnTransformer([("n", Normalizer(), select)]), caller="test"
        )
    by_dtype = ColumnTransformer(
        [("n", Normalizer(), make_column_selector(dtype_include=np.number))]
    )
    check_composition(by_dtype, caller="test")
    # Dense output whatever the rows' density.
    assert run_public_maps(by_dtype).sparse_threshold == 0.0


def test_declarations_cannot_be_skipped():
    # A frozen FunctionTransformer is still arbitrary code; a subclass of a
    # shape-only transform may read the rows.
    class Reading(PolynomialFeatures):
        pass

    for step in (FrozenEstimator(FunctionTransformer(np.tanh)), Reading(2)):
        assert not is_public_map(step)
        with pytest.raises(ValueError, match="neither a private dpcov"):
            check_composition(Pipeline([("s", step)]), caller="test")
