"""PrivatePipeline: one budget over its steps, ranges passed from step to step."""

import math
import re
import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA as SkPCA
from sklearn.frozen import FrozenEstimator
from sklearn.impute import SimpleImputer as SkSimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import FeatureUnion
from sklearn.pipeline import Pipeline as SkPipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, PolynomialFeatures
from sklearn.preprocessing import StandardScaler as SkStandardScaler
from sklearn.utils import get_tags

from dpcov.accounting import ZCDP, GaussianDP, PureDP, compose, gaussian_mu, zcdp_rho
from dpcov.base import calibrated_in_zcdp
from dpcov.covariance import AdaptiveCovariance, GaussianCovariance
from dpcov.datasets import make_mixed_units_table, make_sensor_table
from dpcov.decomposition import PCA, ExactSubspace
from dpcov.discriminant_analysis import LinearDiscriminantAnalysis
from dpcov.distributions import MultivariateGaussian
from dpcov.impute import SimpleImputer
from dpcov.linear_model import LinearRegression
from dpcov.model_selection import pipeline_cost
from dpcov.pipeline import PrivatePipeline, make_private_pipeline, output_range
from dpcov.preprocessing import BoundsScaler, PublicTransformer, StandardScaler
from tests._privacy_checks import outcomes

pytestmark = pytest.mark.filterwarnings("ignore::dpcov.exceptions.SeededNoiseWarning")


def _raw_pipeline(**budget):
    return PrivatePipeline(
        [
            ("impute", SimpleImputer(strategy="mean")),
            ("scale", StandardScaler()),
            ("pca", PCA(n_components=3)),
        ],
        **budget,
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_raw_table_to_components_within_budget_and_90_percent(seed):
    # The mixed-units table (n = 20000, d = 12, scales 1e-2 to 1e4), 5% of
    # cells missing, no ranges: only the imputer finds them, the rest flow.
    # The components capture at least 90% of the variance the non-private
    # top-3 subspace of the standardised (complete) table captures; measured
    # 99.9% on seeds 0-4.
    table = make_mixed_units_table(20_000, missing_rate=0.05, random_state=seed)
    pipe = _raw_pipeline(epsilon=1.0, delta=1e-6)
    pipe.set_params(
        pca__random_state=seed, impute__random_state=seed, scale__random_state=seed
    )
    pipe.fit(table.data)
    assert pipe.epsilon_spent_ <= 1.0
    assert pipe.delta_spent_ <= 1e-6
    assert pipe.guarantee_.rho <= zcdp_rho(1.0, 1e-6)
    assert set(pipe.ranges_) == {"scale", "pca"}
    complete = make_mixed_units_table(20_000, random_state=seed).data
    Z = SkStandardScaler().fit_transform(complete)
    best = SkPCA(n_components=3).fit(Z).explained_variance_.sum()
    V = pipe.named_steps["pca"].components_
    captured = np.trace(V @ np.cov(Z, rowvar=False) @ V.T)
    assert captured >= 0.9 * best


def test_fit_sets_shares_for_the_fit_only():
    table = make_mixed_units_table(5000, missing_rate=0.05, random_state=0)
    pipe = _raw_pipeline(epsilon=1.0)
    before = pipe.get_params()
    pipe.fit(table.data)
    after = pipe.get_params()
    assert before.keys() == after.keys()
    for key, value in before.items():
        if key == "steps" or "__" not in key:
            continue
        assert after[key] is value or after[key] == value, key
    budget = ZCDP(zcdp_rho(1.0, 1e-6))
    for name in ("impute", "scale", "pca"):
        step = pipe.named_steps[name]
        assert step.guarantee_.rho == pytest.approx(budget.rho / 3)
        assert pipe.budget_split_[name].rho == pytest.approx(budget.rho / 3)
    assert compose(pipe.budget_split_.values()).rho <= budget.rho


def test_shares_follow_the_steps_own_costs():
    # Pure DP: weights are the steps' epsilons; zCDP: their rhos (for steps
    # given epsilon and delta, the rho each would run at alone: through zCDP,
    # or mu**2 / 2 on the exact curve for a fit of Gaussian parts only).
    steps = [
        ("scale", StandardScaler(bounds=(-5.0, 5.0), epsilon=1.0, delta=0.0)),
        ("cov", GaussianCovariance(data_norm=10.0, epsilon=3.0, delta=0.0)),
    ]
    pure = PrivatePipeline(steps, epsilon=2.0, delta=0.0)
    shares = pure._shares(PureDP(2.0), pure._private_direct_steps())
    assert shares["scale"].epsilon == pytest.approx(0.5)
    assert shares["cov"].epsilon == pytest.approx(1.5)
    steps = [
        ("scale", StandardScaler(bounds=(-5.0, 5.0), epsilon=1.0)),
        ("cov", GaussianCovariance(data_norm=10.0, epsilon=3.0)),
    ]
    zcdp = PrivatePipeline(steps, rho=1.0)
    shares = zcdp._shares(ZCDP(1.0), zcdp._private_direct_steps())
    r1 = zcdp_rho(1.0, 1e-6)
    r3 = GaussianDP(gaussian_mu(3.0, 1e-6)).to_zcdp().rho
    assert shares["scale"].rho == pytest.approx(r1 / (r1 + r3))
    assert shares["cov"].rho == pytest.approx(r3 / (r1 + r3))
    assert pure.privacy_cost().epsilon == pytest.approx(2.0)
    assert zcdp.privacy_cost().rho == pytest.approx(1.0)


def test_pure_budget_runs_every_step_pure():
    X = make_sensor_table(20_000, random_state=0).data
    pipe = PrivatePipeline(
        [("scale", StandardScaler()), ("pca", PCA(n_components=2))],
        epsilon=2.0,
        delta=0.0,
    )
    pipe.set_params(scale__bounds="private").fit(X)
    assert isinstance(pipe.guarantee_, PureDP)
    assert pipe.epsilon_spent_ == pytest.approx(2.0)
    assert pipe.named_steps["pca"].guarantee_.epsilon == pytest.approx(1.0)


def test_a_costless_step_keeps_its_parameters():
    X = make_mixed_units_table(3000, missing_rate=0.1, random_state=0).data
    pipe = PrivatePipeline(
        [
            ("impute", SimpleImputer(strategy="constant")),
            ("scale", StandardScaler(bounds=(-1e5, 1e5))),
        ],
        epsilon=1.0,
    ).fit(X)
    assert list(pipe.budget_split_) == ["scale"]
    assert pipe.epsilon_spent_ == pytest.approx(1.0)


def test_without_a_budget_every_step_spends_its_own():
    table = make_mixed_units_table(20_000, missing_rate=0.05, random_state=0)
    pipe = _raw_pipeline().fit(table.data)
    assert pipe.budget_split_ == {}
    costs = [pipe.named_steps[n].guarantee_ for n in ("impute", "scale", "pca")]
    assert pipe.guarantee_ == compose(costs)
    # A pipeline's steps calibrate in zCDP (a step on its own, like PCA with
    # a private radius, may run on its composed curve).
    with calibrated_in_zcdp():
        steps = compose(step.privacy_cost() for _, step in _raw_pipeline().steps)
    assert pipeline_cost(_raw_pipeline()) == steps


def test_pipeline_cost_is_the_budget():
    assert pipeline_cost(_raw_pipeline(epsilon=1.0)).rho == pytest.approx(
        zcdp_rho(1.0, 1e-6)
    )
    assert pipeline_cost(_raw_pipeline(rho=0.3)).rho == pytest.approx(0.3)


def test_a_step_own_range_comes_first():
    X = make_sensor_table(20_000, random_state=0).data
    own = (np.full(8, -5.0), np.full(8, 5.0))
    pipe = PrivatePipeline(
        [
            ("impute", SimpleImputer()),
            ("scale", StandardScaler()),
            ("pca", PCA(n_components=2, bounds=own)),
            ("last", AdaptiveCovariance(data_norm=2.0)),
        ],
        epsilon=2.0,
    ).fit(X)
    assert set(pipe.ranges_) == {"scale"}
    np.testing.assert_array_equal(pipe.named_steps["pca"].bounds_[0], own[0])
    assert pipe.named_steps["last"].data_norm_ <= 2.0
    # "private" is a range of its own too.
    pipe.set_params(scale__bounds="private").fit(X)
    assert "scale" not in pipe.ranges_


def test_ranges_received_are_the_upstream_output_ranges():
    table = make_mixed_units_table(20_000, missing_rate=0.05, random_state=3)
    pipe = _raw_pipeline(epsilon=1.0).fit(table.data)
    imputer, scaler, pca = (pipe.named_steps[n] for n in ("impute", "scale", "pca"))
    for got, expected in zip(scaler.bounds_, imputer.bounds_, strict=True):
        np.testing.assert_allclose(got, expected)
    # The scaler's image of its box: transform of the box's corners.
    lower, upper = scaler.bounds_
    image = scaler.transform(np.vstack([lower, upper]))
    np.testing.assert_allclose(pca.bounds_[0], image[0])
    np.testing.assert_allclose(pca.bounds_[1], image[1])


def test_output_ranges_hold_for_rows_inside_the_input_geometry():
    rng = np.random.default_rng(0)
    X = make_sensor_table(20_000, random_state=0).data
    scaler = StandardScaler(bounds="private", random_state=0).fit(X)
    lower, upper = scaler.bounds_
    inside = rng.uniform(lower, upper, size=(5000, 8))
    kind, (lo, hi) = output_range(scaler)
    out = scaler.transform(inside)
    assert kind == "bounds" and np.all(out >= lo - 1e-9) and np.all(out <= hi + 1e-9)
    for whiten in (False, True):
        pca = PCA(n_components=3, bounds=(lower, upper), whiten=whiten, random_state=0)
        pca.fit(X)
        kind, radius = output_range(pca)
        assert kind == "data_norm"
        assert np.linalg.norm(pca.transform(inside), axis=1).max() <= radius
    pca = PCA(n_components=3, data_norm=2000.0, random_state=0).fit(X)
    kind, radius = output_range(pca)
    ball = rng.normal(size=(2000, 8))
    ball *= 2000.0 / np.linalg.norm(ball, axis=1, keepdims=True)
    assert np.linalg.norm(pca.transform(ball), axis=1).max() <= radius
    assert output_range(BoundsScaler(bounds=(0.0, 1.0)).fit(X))[0] == "bounds"
    assert output_range(SkStandardScaler().fit(X)) is None


def test_make_private_pipeline_names_the_steps():
    pipe = make_private_pipeline(
        SimpleImputer(), StandardScaler(), PCA(n_components=2), epsilon=1.0
    )
    assert isinstance(pipe, PrivatePipeline)
    assert [n for n, _ in pipe.steps] == ["simpleimputer", "standardscaler", "pca"]
    assert pipe.epsilon == 1.0 and pipe.delta is None
    from dpcov.accounting import BudgetAccountant

    accountant = BudgetAccountant()
    pipe = make_private_pipeline(PCA(n_components=2), accountant=accountant)
    assert pipe.accountant is accountant


def test_refusals():
    X = make_sensor_table(5000, random_state=0).data
    with pytest.raises(ValueError, match="delta is given without epsilon"):
        _raw_pipeline(delta=1e-6).fit(X)
    union = FeatureUnion([("a", StandardScaler(bounds=(-1e4, 1e4)))])
    with pytest.raises(ValueError, match="inside a composite step"):
        PrivatePipeline([("union", union)], epsilon=1.0).fit(X)
    with pytest.raises(ValueError, match=r"\(epsilon, delta\)-DP only"):
        PrivatePipeline([("sub", ExactSubspace(n_components=2))], epsilon=1.0).fit(X)
    with pytest.raises(ValueError, match="no pure-DP form"):
        PrivatePipeline(
            [("gauss", MultivariateGaussian())], epsilon=1.0, delta=0.0
        ).fit(X)
    with pytest.raises(ValueError, match="step__parameter"):
        _raw_pipeline(epsilon=1.0).fit(X, nonsense=1)


def test_clone_and_params_round_trip():
    pipe = _raw_pipeline(epsilon=2.0, delta=1e-7)
    copy = clone(pipe)
    assert copy.get_params()["epsilon"] == 2.0
    assert copy.get_params()["delta"] == 1e-7
    copy.set_params(rho=0.5, pca__n_components=2)
    assert copy.rho == 0.5 and copy.named_steps["pca"].n_components == 2
    assert math.isclose(pipeline_cost(copy).rho, 0.5)


def test_private_search_over_a_private_pipeline_on_a_raw_table():
    # The search sets the pipeline's budget (one leaf) and takes NaN, which
    # the pipeline's first step (the imputer) accepts.
    from dpcov.model_selection import PrivateSearchCV

    X = make_mixed_units_table(20_000, missing_rate=0.05, random_state=0).data
    search = PrivateSearchCV(
        _raw_pipeline(epsilon=1.0),
        {"pca__n_components": [2, 3]},
        epsilon=2.0,
        random_state=0,
    ).fit(X)
    assert search.epsilon_spent_ <= 2.0
    best = search.best_estimator_
    assert isinstance(best, PrivatePipeline)
    assert not np.isnan(best.transform(X)).any()


def test_an_extreme_row_cannot_make_a_later_step_fail_on_one_neighbour():
    # A scaler with scale_ < 1 turns a finite extreme row into inf; the rows
    # handed on are mapped into the scaler's output box, so PCA sees finite
    # rows on both neighbours and both fits record the same entries.
    from dpcov.accounting import BudgetAccountant

    rng = np.random.default_rng(0)
    X = rng.normal(0.0, 0.001, size=(20_000, 3))
    Y = X.copy()
    Y[0] = [1e308, 0.0, 0.0]
    for rows in (X, Y):
        accountant = BudgetAccountant()
        pipe = PrivatePipeline(
            [
                ("impute", SimpleImputer()),
                ("scale", StandardScaler()),
                ("pca", PCA(n_components=1)),
            ],
            epsilon=1.0,
            accountant=accountant,
        ).fit(rows)
        assert len(accountant) == 3
        assert np.all(np.isfinite(pipe.named_steps["pca"].components_))


def test_a_failing_step_records_the_steps_that_ran():
    from dpcov.accounting import BudgetAccountant

    X = make_sensor_table(20_000, random_state=0).data
    accountant = BudgetAccountant()
    pipe = PrivatePipeline(
        [("scale", StandardScaler()), ("pca", PCA(n_components=20))],
        epsilon=1.0,
        accountant=accountant,
    )
    pipe.set_params(scale__bounds="private")
    with pytest.raises(ValueError):
        pipe.fit(X)  # 20 components of 8 features
    assert len(accountant) == 1  # the scaler ran
    assert not hasattr(pipe, "guarantee_")
    assert not hasattr(pipe.named_steps["scale"], "mean_")


def _labelled(n, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    return rng.random((n, 6)) + 0.3 * np.eye(3, 6)[y], y


_PCA = ("pca", PCA(n_components=2, bounds=(0.0, 2.0)))


@pytest.mark.parametrize(
    "steps, n_rows, target, message",
    [
        # A label outside the public classes.
        (
            [_PCA, ("lda", LinearDiscriminantAnalysis(classes=[0, 1]))],
            2000,
            None,
            "label outside classes",
        ),
        # The model's public parameters.
        (
            [_PCA, ("lda", LinearDiscriminantAnalysis())],
            2000,
            None,
            "needs classes",
        ),
        # Too few rows for the model's private radius at its share.
        (
            [_PCA, ("lda", LinearDiscriminantAnalysis(classes=[0, 1, 2]))],
            50,
            None,
            "needs at least",
        ),
        # A target outside the public target range.
        (
            [_PCA, ("lr", LinearRegression(target_bounds=(-0.5, 0.5)))],
            2000,
            "wide",
            "outside target_bounds",
        ),
        # Targets that are not one per row.
        (
            [_PCA, ("lr", LinearRegression(target_bounds=(-5.0, 5.0)))],
            2000,
            "two columns",
            "1d array",
        ),
        # An integer n_components above the rows.
        (
            [
                ("scale", StandardScaler(bounds=(0.0, 2.0))),
                ("pca", PCA(n_components=2)),
                ("lda", LinearDiscriminantAnalysis(epsilon=np.inf, classes=[0, 1, 2])),
            ],
            1,
            None,
            "n_components=2",
        ),
        # The model's n_components against its classes.
        (
            [_PCA, ("lda", LinearDiscriminantAnalysis(classes=[0, 1], n_components=2))],
            2000,
            None,
            "n_components=2 is above",
        ),
        # A misconfigured covariance estimator inside the model.
        (
            [
                _PCA,
                (
                    "lda",
                    LinearDiscriminantAnalysis(
                        classes=[0, 1, 2],
                        covariance=GaussianCovariance(data_norm=3.0),
                    ),
                ),
            ],
            2000,
            None,
            "leave its bounds",
        ),
        # The model's own public box.
        (
            [
                ("scale", StandardScaler(bounds=(0.0, 2.0))),
                ("lda", LinearDiscriminantAnalysis(classes=[0, 1, 2], bounds=(1, -1))),
            ],
            2000,
            None,
            "bounds",
        ),
        # Too few rows for the model's private ranges, even for one feature.
        (
            [
                _PCA,
                (
                    "lda",
                    LinearDiscriminantAnalysis(classes=[0, 1, 2], bounds="private"),
                ),
            ],
            700,
            None,
            "needs at least",
        ),
    ],
    ids=[
        "label",
        "classes",
        "rows",
        "target range",
        "target shape",
        "one row",
        "n_components",
        "covariance",
        "box",
        "private ranges",
    ],
)
def test_a_later_step_refusal_that_needs_no_row_spends_nothing(
    steps, n_rows, target, message
):
    # Every step's checks of public values and targets run before any step
    # does: the earlier PCA has not spent, nothing is recorded or fitted.
    from dpcov.accounting import BudgetAccountant

    X, y = _labelled(n_rows)
    if target == "wide":
        y = np.linspace(-3.0, 3.0, n_rows)
    elif target == "two columns":
        y = np.c_[y, y].astype(float)
    accountant = BudgetAccountant()
    pipe = PrivatePipeline(steps, epsilon=1.0, delta=1e-6, accountant=accountant)
    with pytest.raises(ValueError, match=message):
        pipe.fit(X, y)
    assert len(accountant) == 0
    assert not [key for key in vars(pipe) if key.endswith("_")]
    for _, step in pipe.steps:
        assert not [key for key in vars(step) if key.endswith("_")]


# --- what a private pipeline may contain, and what it lets out -------------


def _neighbours(extreme, n=500, seed=0):
    # 499 rows N(0, 1/9) and one more: the extreme row, or (0, 0).
    rows = np.random.default_rng(seed).normal(0.0, 1.0 / 3.0, size=(n, 2))
    other = rows.copy()
    rows[-1] = extreme
    other[-1] = 0.0
    return rows, other


def _log1p():
    return PublicTransformer(FunctionTransformer(np.log1p, accept_sparse=True))


@pytest.mark.parametrize("as_sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize(
    "public, extreme",
    [
        # PolynomialFeatures squares 1e200 to inf (an overflow warning); a
        # sparse hand-over was passed on untouched and PCA refused it.
        ([("poly", PolynomialFeatures(2))], [1e200, 0.0]),
        # log1p(-2) is NaN, with a RuntimeWarning.
        ([("log", _log1p())], [-2.0, 0.0]),
        # Two public steps in a row before the private one.
        ([("poly", PolynomialFeatures(2)), ("log", _log1p())], [1e200, -2.0]),
        # A declared FunctionTransformer whose inverse is wrong: its fit
        # would check rows and warn on some data only.
        (
            [
                (
                    "log",
                    PublicTransformer(
                        FunctionTransformer(
                            np.log1p, inverse_func=np.square, accept_sparse=True
                        )
                    ),
                )
            ],
            [-2.0, 0.0],
        ),
    ],
    ids=["polynomial", "log1p", "two public steps", "check_inverse"],
)
def test_public_steps_let_out_nothing_about_a_row(public, extreme, as_sparse):
    # On a neighbouring pair chosen to break it (an extreme finite row against
    # (0, 0)): the same outcome and the same warnings, for every seed.
    pair = _neighbours(extreme)
    if as_sparse:
        pair = tuple(sparse.csr_matrix(rows) for rows in pair)
    for seed in range(3):
        seen = outcomes(
            pair,
            lambda seed=seed: PrivatePipeline(
                [
                    *clone(public, safe=False),
                    ("pca", PCA(n_components=1, data_norm=1.0)),
                ],
                epsilon=1.0,
                delta=0.0,
                random_state=seed,
            ),
        )
        assert seen[0] == seen[1] == ("fit", []), seen


def _public_table(n=300, d=2, seed=1):
    # Rows the user holds publicly (not the private table).
    return np.random.default_rng(seed).normal(size=(n, d))


@pytest.mark.parametrize(
    "step, counterpart",
    [
        (LogisticRegression(), "no dpcov counterpart"),
        (SkStandardScaler(), "dpcov.preprocessing.StandardScaler"),
        (SkSimpleImputer(), "dpcov.impute.SimpleImputer"),
        (OneHotEncoder(), "no dpcov counterpart"),
        (FunctionTransformer(np.log1p), "PublicTransformer"),
        ("fitted", "dpcov.decomposition.PCA"),
        ("in a union", "dpcov.preprocessing.StandardScaler"),
        ("in a remainder", "dpcov.preprocessing.StandardScaler"),
    ],
    ids=[
        "model",
        "scaler",
        "imputer",
        "encoder",
        "function",
        "fitted transformer",
        "union",
        "remainder",
    ],
)
@pytest.mark.parametrize("where", ["first", "last"])
def test_a_step_without_a_guarantee_is_refused_before_any_spend(
    step, counterpart, where
):
    from dpcov.accounting import BudgetAccountant

    if step == "fitted":
        step = SkPCA(n_components=2).fit(_public_table())
    elif step == "in a union":
        step = FeatureUnion(
            [("poly", PolynomialFeatures(2)), ("z", SkStandardScaler())]
        )
    elif step == "in a remainder":
        step = ColumnTransformer(
            [("poly", PolynomialFeatures(2), [0])], remainder=SkStandardScaler()
        )
    X = make_sensor_table(2000, random_state=0).data[:, :2]
    y = (X[:, 0] > np.median(X[:, 0])).astype(int)
    private = ("pca", PCA(n_components=2, data_norm=100.0))
    steps = [("step", step), private] if where == "first" else [private, ("step", step)]
    accountant = BudgetAccountant()
    pipe = PrivatePipeline(steps, epsilon=1.0, accountant=accountant)
    with pytest.raises(ValueError, match="step 'step") as refused:
        pipe.fit(X, y)
    assert counterpart in str(refused.value)
    assert len(accountant) == 0
    assert not hasattr(pipe, "guarantee_")
    with pytest.raises(ValueError, match="step 'step"):
        pipe.privacy_cost()


def test_public_maps_run_in_a_public_transformer():
    # A FrozenEstimator of a scaler fitted on public rows, a shape-only
    # transform and composites of them (a ColumnTransformer with its
    # remainder passed through) run between private steps; their fitted
    # forms are PublicTransformers (BoundsScaler, already one, stays itself).
    X = make_sensor_table(5000, random_state=0).data[:, :3]
    frozen = FrozenEstimator(SkStandardScaler().fit(_public_table(d=3)))
    columns = ColumnTransformer(
        [("poly", PolynomialFeatures(2), [0, 1])], remainder="passthrough"
    )
    pipe = PrivatePipeline(
        [
            ("frozen", frozen),
            ("columns", columns),
            ("box", BoundsScaler(bounds=(-10.0, 10.0))),
            ("pca", PCA(n_components=2)),
        ],
        epsilon=1.0,
        random_state=0,
    ).fit(X)
    assert isinstance(pipe.named_steps["frozen"], PublicTransformer)
    fitted_columns = pipe.named_steps["columns"]
    assert isinstance(fitted_columns, ColumnTransformer)
    assert isinstance(fitted_columns.transformers[0][1], PublicTransformer)
    assert isinstance(pipe.named_steps["box"], BoundsScaler)
    assert pipe.transform(X).shape == (5000, 2)
    # The user's own objects are unchanged (the pipeline fitted clones).
    assert fitted_columns is not columns
    assert isinstance(columns.transformers[0][1], PolynomialFeatures)
    assert not hasattr(columns, "transformers_")


def test_steps_short_of_rows_are_named_at_once():
    # The imputer's private ranges and LDA's private radius both need more
    # rows than there are: one refusal names both, before anything is read.
    from dpcov.accounting import BudgetAccountant

    X, y = _labelled(300)
    accountant = BudgetAccountant()
    pipe = PrivatePipeline(
        [
            ("impute", SimpleImputer()),
            ("pca", PCA(n_components=2)),
            ("lda", LinearDiscriminantAnalysis(classes=[0, 1, 2])),
        ],
        epsilon=1.0,
        accountant=accountant,
    )
    with pytest.raises(ValueError, match="refuses 2 of its steps") as refused:
        pipe.fit(X, y)
    message = str(refused.value)
    assert "Step 'impute': SimpleImputer" in message
    assert "Step 'lda': LinearDiscriminantAnalysis" in message
    assert message.count("needs at least") == 2
    assert len(accountant) == 0


def test_a_step_that_needs_ranges_says_where_they_flow():
    X = make_sensor_table(2000, random_state=0).data
    with pytest.raises(ValueError, match="Inside a dpcov.pipeline.PrivatePipeline"):
        SkPipeline([("scale", StandardScaler())]).fit(X)
    # As the first step of a PrivatePipeline nothing hands it a range: refused
    # before anything is read.
    with pytest.raises(ValueError, match="step 'scale': StandardScaler needs"):
        PrivatePipeline(
            [("scale", StandardScaler()), ("pca", PCA(2))], epsilon=1.0
        ).fit(X)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_raw_rows_outside_the_domain_are_refused_by_a_public_first_step(bad):
    # A public map maps what earlier steps hand on; as the first step it reads
    # the raw rows, and NaN or infinity there is bad input (a clear error,
    # nothing spent), not a row to map.
    from dpcov.accounting import BudgetAccountant

    X = _public_table(n=100, d=3)
    X[3, 1] = bad
    accountant = BudgetAccountant()
    pipe = PrivatePipeline(
        [("poly", PolynomialFeatures(2)), ("pca", PCA(2, data_norm=1.0))],
        epsilon=1.0,
        accountant=accountant,
    )
    with pytest.raises(ValueError, match="contains (NaN|infinity)"):
        pipe.fit(X)
    assert len(accountant) == 0


def test_sparse_rows_handed_on_are_mapped_into_the_range():
    # As dense rows are: finite, then clipped to the box (kept sparse when
    # the box holds 0 in every feature, densified otherwise) or scaled into
    # the ball.
    from dpcov.pipeline._pipeline import _into_range

    big = np.finfo(np.float64).max
    dense = np.array([[np.inf, 0.0, 2.0], [0.0, np.nan, -1e308], [0.5, 0.0, 0.0]])
    rows = sparse.csr_matrix(dense)
    box = ("bounds", (np.array([-1.0, -1.0, -1.0]), np.array([1.0, 1.0, 3.0])))
    mapped = _into_range(rows, box)
    assert sparse.issparse(mapped)
    expected = _into_range(dense, box)
    np.testing.assert_array_equal(mapped.toarray(), expected)
    assert np.all(expected <= [1.0, 1.0, 3.0]) and np.all(expected >= -1.0)
    shifted = ("bounds", (np.array([1.0, -1.0, -1.0]), np.array([2.0, 1.0, 3.0])))
    mapped = _into_range(rows, shifted)
    assert not sparse.issparse(mapped)
    np.testing.assert_array_equal(mapped, _into_range(dense, shifted))
    ball = _into_range(rows, ("data_norm", 2.0))
    norms = np.linalg.norm(ball.toarray(), axis=1)
    assert np.all(norms <= 2.0 * (1 + 1e-12))
    np.testing.assert_allclose(norms[:2], 2.0)
    np.testing.assert_array_equal(ball.toarray()[2], [0.5, 0.0, 0.0])
    assert np.all(np.isfinite(_into_range(rows, None).data))
    assert _into_range(rows, None).data.max() == big


@pytest.mark.parametrize(
    "make",
    [
        lambda: SimpleImputer(),
        lambda: StandardScaler(bounds="private"),
        lambda: GaussianCovariance(),
        lambda: AdaptiveCovariance(bounds="private"),
        lambda: PCA(1),
    ],
    ids=["imputer", "scaler", "radius", "ranges", "PCA"],
)
def test_checks_before_spending_refuse_exactly_where_the_fit_does(make):
    # As a pipeline's first step (the width known), a step's checks before
    # spending need exactly the rows its fit needs: never a refusal the fit
    # would not make, never a fit that fails on the row count after the
    # check passed. The fewest rows, by bisection on the check.
    d = 3

    def passes(n):
        try:
            make()._check_before_spending(n, None, n_features=d)
        except ValueError:
            return False
        return True

    low, high = 2, 100_000
    assert not passes(low) and passes(high)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if passes(middle) else (middle, high)
    rows = np.random.default_rng(0).normal(size=(high, d))
    make().set_params(random_state=0).fit(rows)
    with pytest.raises(ValueError, match="needs at least"):
        make().set_params(random_state=0).fit(rows[:-1])


def test_methods_map_rows_between_steps_as_fit_does():
    # A scaler's output overflows on an extreme row; PCA's transform, after
    # it, sees the row mapped into the scaler's output box, as in fit.
    rows = np.random.default_rng(0).uniform(-1.0, 1.0, size=(2000, 2))
    pipe = PrivatePipeline(
        [("s", StandardScaler(bounds=(-1.0, 1.0))), ("p", PCA(n_components=2))],
        epsilon=1.0,
        random_state=0,
    ).fit(rows)
    extreme = rows[:5].copy()
    extreme[0, 0] = 1.5e308
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = pipe.transform(extreme)
        assert pipe.score_samples(extreme).shape == (5,)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out[1:], pipe.transform(rows[1:5]))


def test_a_public_first_step_refuses_nan_in_the_tags_too():
    pipe = PrivatePipeline(
        [
            ("f", PublicTransformer(FunctionTransformer())),
            ("c", GaussianCovariance(data_norm=2.0)),
        ]
    )
    assert not get_tags(pipe).input_tags.allow_nan
    assert get_tags(_raw_pipeline()).input_tags.allow_nan


def test_a_column_transformer_first_reads_only_its_columns():
    # The raw table's text column is dropped by the ColumnTransformer: it is
    # not validated as if the pipeline read it.
    pd = pytest.importorskip("pandas")
    X = make_sensor_table(3000, random_state=0).data[:, :2]
    frame = pd.DataFrame(X, columns=["a", "b"])
    frame["name"] = "text"
    columns = ColumnTransformer([("n", PolynomialFeatures(1), ["a", "b"])])
    pipe = PrivatePipeline(
        [("columns", columns), ("pca", PCA(n_components=2))],
        epsilon=1.0,
        random_state=0,
    ).fit(frame)
    assert pipe.transform(frame).shape == (3000, 2)


def test_a_column_transformer_output_format_does_not_follow_the_density():
    # Around scikit-learn's default sparse_threshold (0.3): one row moves the
    # density across it, and the format of the output with it; in a private
    # composite the output is dense on both neighbours.
    dense = np.zeros((1000, 2))
    dense[:299] = 0.5
    dense[299, 0] = 0.5  # 599 of 2000 entries: density 0.2995
    other = dense.copy()
    other[300] = 0.5  # 601: density 0.3005
    columns = ColumnTransformer([("p", "passthrough", [0, 1])])
    formats = [
        sparse.issparse(columns.fit_transform(sparse.csr_matrix(rows)))
        for rows in (dense, other)
    ]
    assert formats == [True, False]  # scikit-learn's own choice differs
    seen = outcomes(
        (sparse.csr_matrix(dense), sparse.csr_matrix(other)),
        lambda: PrivatePipeline(
            [
                ("columns", ColumnTransformer([("p", "passthrough", [0, 1])])),
                ("scale", StandardScaler(bounds=(-1.0, 1.0))),
            ],
            epsilon=1.0,
            random_state=0,
        ),
    )
    assert seen[0] == seen[1] == ("fit", []), seen


def test_a_frozen_release_is_a_public_map():
    # A dpcov model fitted (and paid for) on public rows, frozen, maps rows
    # like any public transform; it is not refitted or charged again.
    public = np.random.default_rng(1).normal(size=(5000, 3))
    frozen = FrozenEstimator(PCA(2, data_norm=5.0, random_state=0).fit(public))
    pipe = PrivatePipeline(
        [("frozen", frozen), ("cov", GaussianCovariance(data_norm=5.0))],
        epsilon=1.0,
        random_state=0,
    ).fit(make_sensor_table(3000, random_state=0).data[:, :3])
    assert pipe.named_steps["cov"].covariance_.shape == (2, 2)
    assert math.isclose(pipe.epsilon_spent_, 1.0, rel_tol=1e-9)


def test_private_steps_inside_composites_only_without_a_shared_budget():
    # Without a budget or an accountant each private estimator spends its
    # own, wherever it is, and guarantee_ composes them all (here two scalers
    # side by side and a covariance after them); with a budget the clones a
    # ColumnTransformer fits would escape it, and it is refused.
    from dpcov.accounting import BudgetAccountant

    X = make_sensor_table(3000, random_state=0).data[:, :2]
    columns = ColumnTransformer(
        [
            ("a", StandardScaler(epsilon=0.5, delta=0.0, bounds=(-100.0, 100.0)), [0]),
            ("b", StandardScaler(epsilon=0.5, delta=0.0, bounds=(-100.0, 100.0)), [1]),
        ]
    )
    steps = [
        ("columns", columns),
        ("cov", GaussianCovariance(epsilon=1.0, delta=0.0, data_norm=5.0)),
    ]
    pipe = PrivatePipeline(steps, random_state=0)
    assert pipe.privacy_cost() == PureDP(2.0)
    pipe.fit(X)
    assert pipe.guarantee_ == PureDP(2.0)
    assert pipeline_cost(pipe) == PureDP(2.0)
    for budget in (dict(epsilon=1.0), dict(accountant=BudgetAccountant())):
        with pytest.raises(ValueError, match="inside a composite step"):
            PrivatePipeline(steps, **budget).fit(X)


def test_a_pipeline_inside_a_composite_step_maps_its_rows_too():
    # Without a budget, a scikit-learn Pipeline of private steps inside a
    # FeatureUnion runs as a PrivatePipeline: an extreme row that overflows
    # in its scaler cannot make its PCA refuse the rows on one neighbour.
    rows = np.random.default_rng(0).uniform(-1.0, 1.0, size=(2000, 2))
    other = rows.copy()
    rows[0, 0] = 1.5e308
    inner = SkPipeline(
        [
            ("s", StandardScaler(bounds=(-1.0, 1.0), epsilon=0.5)),
            ("pca", PCA(2, data_norm=3.0)),
        ]
    )
    seen = outcomes(
        (rows, other),
        lambda: PrivatePipeline(
            [
                ("u", FeatureUnion([("p", clone(inner))])),
                ("c", GaussianCovariance(data_norm=3.0)),
            ],
            random_state=0,
        ),
    )
    assert seen[0] == seen[1] == ("fit", []), seen


def test_a_nested_pipeline_under_a_shared_accountant_is_refused_before_spending():
    # The inner pipeline has no budget of its own but would receive the outer
    # accountant's ledger: nothing may be nested in it.
    from dpcov.accounting import BudgetAccountant

    X = make_sensor_table(3000, random_state=0).data[:, :2]
    columns = ColumnTransformer([("s", StandardScaler(bounds=(-100.0, 100.0)), [0])])
    inner = PrivatePipeline([("columns", columns), ("pca", PCA(1, data_norm=5.0))])
    accountant = BudgetAccountant()
    outer = PrivatePipeline(
        [("s0", StandardScaler(bounds=(-100.0, 100.0))), ("inner", inner)],
        accountant=accountant,
    )
    with pytest.raises(ValueError, match="inside a composite step"):
        outer.fit(X)
    assert len(accountant) == 0


def test_a_private_step_inside_a_composite_is_checked_before_spending():

    X = make_sensor_table(200, random_state=0).data[:, :2]
    union = FeatureUnion([("s", StandardScaler(bounds="private"))])
    pipe = PrivatePipeline(
        [("u", union), ("c", GaussianCovariance(data_norm=2.0))], random_state=0
    )
    with pytest.raises(ValueError, match="step 'u__s': StandardScaler"):
        pipe.fit(X)


def _verbose_pipeline(verbose):
    return PrivatePipeline(
        [
            ("scale", StandardScaler(bounds=(-100.0, 100.0))),
            ("skip", "passthrough"),
            ("pca", PCA(n_components=2, data_norm=10.0)),
        ],
        epsilon=1.0,
        random_state=0,
        verbose=verbose,
    )


def _timed_line(message):
    # scikit-learn's line (dots up to 70 characters), whatever the time.
    return re.compile(
        r"\[PrivatePipeline\] \.* " + re.escape(message) + r", total=[ \d.]+(s|min)"
    )


def test_verbose_prints_each_step_name_and_time_only(capsys):
    # As scikit-learn's Pipeline: one line per step (a skipped one too), with
    # the step's position, its name and the time its fit took.
    X = make_sensor_table(2000, random_state=0).data
    _verbose_pipeline(verbose=True).fit(X)
    lines = capsys.readouterr().out.splitlines()
    names = ["scale", "skip", "pca"]
    assert len(lines) == len(names)
    for index, (line, name) in enumerate(zip(lines, names, strict=True)):
        message = f"(step {index + 1} of 3) Processing {name}"
        assert _timed_line(message).fullmatch(line), line
        assert len(line) == 70


def test_verbose_false_prints_nothing_and_fits_the_same(capsys):
    X = make_sensor_table(2000, random_state=0).data
    quiet = _verbose_pipeline(verbose=False).fit(X)
    assert capsys.readouterr().out == ""
    loud = _verbose_pipeline(verbose=True).fit(X)
    capsys.readouterr()
    np.testing.assert_array_equal(
        quiet.named_steps["pca"].components_, loud.named_steps["pca"].components_
    )


def test_verbose_prints_no_line_for_a_step_that_fails(capsys):
    # The step that fails prints nothing; the steps before it printed theirs.
    X = make_sensor_table(2000, random_state=0).data  # 8 features
    pipe = make_private_pipeline(
        StandardScaler(bounds=(-100.0, 100.0)),
        PCA(n_components=20, data_norm=10.0),
        epsilon=1.0,
        verbose=True,
    )
    with pytest.raises(ValueError):
        pipe.fit(X)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    assert _timed_line("(step 1 of 2) Processing standardscaler").fullmatch(lines[0])


def test_an_approx_dp_step_without_a_budget_records_its_guarantee():
    # A step that is (epsilon, delta)-DP only, at its own budget: the
    # pipeline records the step's guarantee, with no zCDP parameter (the
    # record once failed on it, after the accountant was charged).
    rng = np.random.default_rng(0)
    basis = rng.integers(-3, 4, size=(2, 4))
    X = (rng.integers(-9, 10, size=(3000, 2)) @ basis).astype(float)
    pipe = PrivatePipeline([("subspace", ExactSubspace(2, random_state=0))]).fit(X)
    step = pipe.named_steps["subspace"]
    assert pipe.guarantee_ == step.guarantee_
    assert (pipe.epsilon_spent_, pipe.delta_spent_) == (
        step.guarantee_.epsilon,
        step.guarantee_.delta,
    )
    assert pipe.rho_spent_ == math.inf


def _persons_table(n_persons=3000, seed=0):
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 12, n_persons)
    groups = rng.permutation(np.repeat(np.arange(n_persons), counts))
    X = rng.normal(size=(n_persons, 3))[groups] + 0.3 * rng.normal(
        size=(groups.size, 3)
    )
    return X, groups


def test_a_pipeline_over_persons_fits_every_step_over_persons():
    # max_rows_per_group on the pipeline: every private step gets it and
    # the groups with all the rows (each step keeps at most k rows of each
    # person, and refuses NaN in any row, kept or not); the pipeline and
    # its steps record the person as their unit, and the ledger does too.
    from dpcov.accounting import BudgetAccountant
    from tests._privacy_checks import recorded_calls

    X, groups = _persons_table()
    accountant = BudgetAccountant(epsilon=2.0, delta=1e-6, unit="person")
    pipe = PrivatePipeline(
        [("scale", StandardScaler(bounds=(-5.0, 5.0))), ("pca", PCA(2))],
        epsilon=2.0,
        max_rows_per_group=4,
        accountant=accountant,
        random_state=0,
    )
    with (
        recorded_calls(StandardScaler, "fit") as scaled,
        recorded_calls(PCA, "fit") as projected,
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        pipe.fit(X, groups=groups)
    ((scale_args, scale_kwargs, _),) = scaled
    ((pca_args, pca_kwargs, _),) = projected
    np.testing.assert_array_equal(scale_kwargs["groups"], groups)
    np.testing.assert_array_equal(pca_kwargs["groups"], groups)
    assert scale_args[1].shape[0] == pca_args[1].shape[0] == len(groups)
    assert pipe.privacy_unit_ == "person"
    assert {step.privacy_unit_ for step in pipe.named_steps.values()} == {"person"}
    assert accountant.units == ["person", "person"]
    assert pipe.epsilon_spent_ == pytest.approx(2.0)
    assert pipe.get_params()["scale__max_rows_per_group"] is None  # unchanged
    # A NaN in any row is refused, whichever rows a step would keep.
    X[1, 0] = np.nan
    for seed in range(4):
        with pytest.raises(ValueError, match="NaN"):
            clone(pipe).set_params(accountant=None, random_state=seed).fit(
                X, groups=groups
            )


@pytest.mark.parametrize(
    "steps, match",
    [
        (
            [
                ("scale", StandardScaler(bounds=(-5.0, 5.0))),
                ("g", MultivariateGaussian()),
            ],
            "does not fit persons",
        ),
        ([("pca", PCA(2, max_rows_per_group=3))], "set it on the pipeline only"),
    ],
)
def test_a_pipeline_over_persons_refuses_steps_before_reading(steps, match):
    X, groups = _persons_table(200)
    pipe = PrivatePipeline(steps, epsilon=1.0, max_rows_per_group=4)
    with pytest.raises(ValueError, match=match):
        pipe.fit(X, groups=groups)
    assert not hasattr(pipe, "guarantee_")
    with pytest.raises(ValueError, match="metadata routing"):
        PrivatePipeline([("pca", PCA(2))], epsilon=1.0, max_rows_per_group=4).fit(X)


def test_a_pipeline_refusal_over_persons_states_no_count():
    # Too few persons for two steps' private radius: one message naming
    # both, in persons, with neither the number of persons nor of rows.
    X, groups = _persons_table(100)
    pipe = PrivatePipeline(
        [("pca", PCA(2)), ("again", PCA(1))], epsilon=1.0, max_rows_per_group=4
    )
    with pytest.raises(ValueError, match="persons") as error:
        pipe.fit(X, groups=groups)
    text = str(error.value)
    assert "100" not in text and str(len(groups)) not in text


def test_a_step_under_add_remove_is_not_checked_on_the_rows_count():
    # A step with neighbours="add_remove" in a replace-one pipeline: its
    # checks that need the number of rows come after its own released
    # count, so the pipeline's checks before spending skip it (they would
    # refuse or not on the private number of rows).
    X = np.random.default_rng(3).normal(size=(50, 3))
    pipe = PrivatePipeline(
        [("c", GaussianCovariance(neighbours="add_remove"))], epsilon=1.0
    )
    with pytest.raises(ValueError, match=r"the released \(noisy\) count is"):
        pipe.fit(X)


def test_a_pipeline_hands_add_remove_to_every_step():
    X, _ = _persons_table(1500)
    pipe = PrivatePipeline(
        [("scale", StandardScaler(bounds=(-5.0, 5.0))), ("pca", PCA(2))],
        epsilon=2.0,
        neighbours="add_remove",
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X)
    assert pipe.neighbours_ == "add_remove"
    assert {s.neighbours_ for s in pipe.named_steps.values()} == {"add_remove"}
    # Each step released its own count: neither states the number of rows.
    assert pipe.named_steps.scale.n_samples_seen_ != len(X)
    assert pipe.named_steps.pca.n_samples_ != len(X)
    assert "count" in pipe.named_steps.scale.budget_split_
    with pytest.raises(ValueError, match="does not fit under add/remove"):
        PrivatePipeline(
            [
                ("scale", StandardScaler(bounds=(-5.0, 5.0))),
                ("g", MultivariateGaussian()),
            ],
            epsilon=1.0,
            neighbours="add_remove",
        ).fit(X)


def test_groups_reach_a_pipeline_through_metadata_routing():
    # cross_val_score with GroupKFold: with routing and set_fit_request,
    # each fold's pipeline fits persons; without routing the pipeline's fit
    # gets no groups and refuses.
    import sklearn
    from sklearn.model_selection import GroupKFold, cross_val_score

    X, groups = _persons_table(1500)
    pipe = PrivatePipeline(
        [("scale", StandardScaler(bounds=(-5.0, 5.0))), ("pca", PCA(2))],
        epsilon=4.0,
        max_rows_per_group=4,
    )
    with pytest.raises(ValueError, match="metadata routing"):
        cross_val_score(pipe, X, groups=groups, cv=GroupKFold(3), error_score="raise")
    with (
        sklearn.config_context(enable_metadata_routing=True),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        routed = clone(pipe).set_fit_request(groups=True)
        scores = cross_val_score(
            routed, X, params={"groups": groups}, cv=GroupKFold(3), error_score="raise"
        )
    assert np.isfinite(scores).all()


def test_a_pipeline_over_persons_gives_an_extreme_person_the_same_outcome():
    # One person's 30 rows of entries 1e300 against one ordinary row, in a
    # pipeline over persons (scaler, then PCA with its private radius):
    # both fit, with the same warnings but the release-based ones.
    from tests._privacy_checks import outcome

    X, groups = _persons_table(600)
    far = (np.vstack([np.full((30, 3), 1e300), X]), np.r_[np.full(30, -1), groups])
    near = (np.vstack([np.ones((1, 3)), X]), np.r_[-1, groups])
    pipe = PrivatePipeline(
        [("scale", StandardScaler(bounds=(-5.0, 5.0))), ("pca", PCA(2))],
        epsilon=4.0,
        max_rows_per_group=40,
        random_state=0,
    )
    seen = [
        outcome(lambda X=X, g=g: clone(pipe).fit(X, groups=g)) for X, g in (far, near)
    ]
    assert seen[0] == seen[1] and seen[0][0] == "fit"


def test_add_remove_pipelines_end_in_a_model():
    # Least squares and LDA take neighbours too: a pipeline under add/remove
    # ends in either; the scaler and LDA release counts of their own (LDA's
    # private radius reads one), least squares none.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20_000, 3))
    y = np.clip(X @ [1.0, -1.0, 0.5], -6.0, 6.0)
    labels = (X[:, 0] > 0).astype(int)
    for last, target in [
        (LinearRegression(target_bounds=(-6.0, 6.0)), y),
        (LinearDiscriminantAnalysis(classes=[0, 1]), labels),
    ]:
        pipe = PrivatePipeline(
            [("scale", StandardScaler(bounds=(-5.0, 5.0))), ("model", last)],
            epsilon=2.0,
            neighbours="add_remove",
            random_state=0,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe.fit(X, target)
        assert {s.neighbours_ for s in pipe.named_steps.values()} == {"add_remove"}
        model = pipe.named_steps["model"]
        assert ("count" in model.budget_split_) == isinstance(
            model, LinearDiscriminantAnalysis
        )
        assert pipe.score(X, target) > 0.8


@pytest.mark.parametrize("persons", [False, True])
def test_an_empty_table_under_add_remove_runs_through_a_pipeline(persons):
    # Under add/remove an empty table is a neighbour of a one-row table: no
    # step refuses it (a public map is fitted and applied on a public pad
    # row whose output is dropped), and each private step releases its
    # count first, of 0 where the one-row table's is 1, at the same scale.
    from tests._privacy_checks import recorded_releases

    pipe = PrivatePipeline(
        [
            ("bounds", BoundsScaler(bounds=(-2.0, 2.0))),
            ("poly", PublicTransformer(PolynomialFeatures(2))),
            ("scale", StandardScaler(bounds=(-1.0, 1.0))),
            ("pca", PCA(n_components=1)),
            ("lr", LinearRegression(target_bounds=(-1.0, 1.0))),
        ],
        neighbours="add_remove",
        max_rows_per_group=2 if persons else None,
        epsilon=1.0,
        random_state=0,
    )
    counts = []
    for n in (0, 1):
        groups = np.arange(n) if persons else None
        with recorded_releases() as releases, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = clone(pipe).fit(np.full((n, 3), 0.5), np.zeros(n), groups=groups)
        assert fitted[-1].coef_.shape == (1,)
        counts.append(
            [(float(r.value), r.scale) for r in releases if r.sensitivity == 1.0]
        )
    assert [scale for _, scale in counts[0]] == [scale for _, scale in counts[1]]
    assert [value for value, _ in counts[0]] == [0.0] * len(counts[0])
    assert [value for value, _ in counts[1]] == [1.0] * len(counts[1])
    # The scaler's and PCA's (least squares receives its box from PCA's
    # output range and reads no count).
    assert len(counts[0]) == 2
