"""PrivateSearchCV: its guarantee, its noise, its neighbours, its choices."""

import math
import warnings

import numpy as np
import pytest
from scipy import sparse, stats
from sklearn.base import BaseEstimator, clone
from sklearn.decomposition import PCA as SkPCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, PolynomialFeatures
from sklearn.preprocessing import StandardScaler as SkStandardScaler

from dpcov.accounting import ZCDP, BudgetAccountant, PureDP, compose
from dpcov.base import PrivateEstimatorMixin, calibrated_in_zcdp
from dpcov.covariance import (
    AdaptiveCovariance,
    GaussianCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA, ExactSubspace
from dpcov.discriminant_analysis import LinearDiscriminantAnalysis
from dpcov.distributions import MultivariateGaussian, ProductBernoulli
from dpcov.exceptions import BudgetExceeded, NoiseDominatedWarning, NoPrivateResult
from dpcov.impute import SimpleImputer
from dpcov.linear_model import LinearRegression
from dpcov.mechanisms import draw_run_count, run_count_pmf, selection_guarantee
from dpcov.model_selection import PrivateSearchCV
from dpcov.model_selection._scoring import bounded_scores
from dpcov.pipeline import PrivatePipeline
from dpcov.preprocessing import BoundsScaler, PublicTransformer, StandardScaler
from tests._privacy_checks import gaussian_shift, outcomes, recorded_releases

from ..test_common import _parametrize_with_checks


def _rows(n=5000, d=5, seed=1):
    # Rows of norm about 1 (a Gaussian scaled by 1/sqrt(d)).
    return np.random.default_rng(seed).normal(size=(n, d)) / math.sqrt(d)


def _norm_search(**kwargs):
    params = dict(epsilon=1.0, delta=1e-6, score_norm=1.0)
    params.update(kwargs)
    return PrivateSearchCV(
        SeparateCovariance(data_norm=1.0), {"data_norm": [0.01, 1.0, 100.0]}, **params
    )


# --- the guarantee ---------------------------------------------------------


def test_guarantee_composes_the_runs_by_the_selection_theorem():
    search = _norm_search(random_state=0).fit(_rows())
    assert isinstance(search.run_budget_, ZCDP)
    assert search.guarantee_ == selection_guarantee(
        search.run_budget_, mean=10, law="logarithmic", delta=1e-6
    )
    assert search.epsilon_spent_ <= 1.0
    assert search.epsilon_spent_ == pytest.approx(1.0, abs=1e-9)
    assert search.delta_spent_ == 1e-6
    # The selected fit spent at most the run budget.
    assert search.best_estimator_.guarantee_.rho <= search.run_budget_.rho
    assert search.best_estimator_.rho <= search.run_budget_.rho
    # best_params_ holds the searched keys only (the fitted model's own
    # parameters show its budget).
    assert set(search.best_params_) == {"data_norm"}


def test_pure_search():
    search = _norm_search(delta=0.0, law="geometric", random_state=0).fit(_rows())
    # Liu and Talwar (2019), Theorem 3.4: 3 eps for a geometric number of runs.
    assert search.run_budget_ == PureDP(1.0 / 3.0)
    assert search.guarantee_ == PureDP(1.0)
    assert isinstance(search.best_estimator_.guarantee_, PureDP)


def test_pipeline_steps_keep_their_proportions():
    pipe = Pipeline(
        [
            ("scale", StandardScaler(epsilon=0.5, delta=1e-6, bounds=(-3.0, 3.0))),
            ("pca", PCA(2, epsilon=1.0, delta=1e-6, data_norm=3.0)),
        ]
    )
    search = PrivateSearchCV(
        pipe, {"pca__data_norm": [1.0, 3.0]}, epsilon=1.0, random_state=0
    ).fit(_rows())
    model = search.best_estimator_
    rhos = [model["scale"].guarantee_.rho, model["pca"].guarantee_.rho]
    assert sum(rhos) <= search.run_budget_.rho
    assert sum(rhos) == pytest.approx(search.run_budget_.rho, rel=1e-9)
    # The scaler's configured share of the pipeline's zCDP budget is kept
    # (the steps' costs in zCDP, as the search weighs them).
    with calibrated_in_zcdp():
        configured = [
            StandardScaler(epsilon=0.5, delta=1e-6).privacy_cost().rho,
            PCA(epsilon=1.0, delta=1e-6).privacy_cost().rho,
        ]
    assert rhos[0] / sum(rhos) == pytest.approx(configured[0] / sum(configured))


def test_a_grid_over_the_only_step_budget_is_refused_before_reading():
    # Every run spends the run budget; a budget in the grid is a step's
    # weight in it, and the only private step's weight is meaningless.
    accountant = BudgetAccountant()
    for key in ("rho", "epsilon"):
        search = PrivateSearchCV(
            SeparateCovariance(data_norm=1.0),
            {key: [0.001, 0.005]},
            epsilon=1.0,
            score_norm=1.0,
            accountant=accountant,
            random_state=0,
        )
        with pytest.raises(ValueError, match="only private step"):
            search.fit(_rows())
    pipe = Pipeline([("pca", PCA(2, data_norm=1.0))])
    with pytest.raises(ValueError, match="only private step"):
        PrivateSearchCV(pipe, {"pca__epsilon": [1.0, 2.0]}).fit(_rows())
    assert len(accountant) == 0
    with pytest.raises(ValueError, match="must be a list"):
        PrivateSearchCV(
            Pipeline(
                [
                    ("scale", StandardScaler(bounds=(-3.0, 3.0))),
                    ("pca", PCA(2, data_norm=3.0)),
                ]
            ),
            {"pca__epsilon": stats.uniform(0.1, 0.2)},
        ).fit(_rows())


@pytest.mark.parametrize("delta", [1e-6, 0.0])
def test_a_grid_over_step_budgets_searches_shares_and_spends_what_is_asked(delta):
    # Asked for epsilon 8, the search spends 8 (up to the run budget's
    # rounding; at least 0.98 of it), whatever budgets the grid lists: they
    # are the steps' weights in the run budget.
    pipe = Pipeline(
        [
            ("scale", StandardScaler(epsilon=1.0, delta=delta, bounds=(-3.0, 3.0))),
            ("pca", PCA(2, epsilon=1.0, delta=delta, data_norm=3.0)),
        ]
    )
    grid = {"pca__n_components": [1, 2], "pca__epsilon": [1.0, 2.0]}
    search = PrivateSearchCV(
        pipe, grid, epsilon=8.0, delta=delta, law="geometric", random_state=0
    ).fit(_rows())
    assert 0.98 * 8.0 <= search.epsilon_spent_ <= 8.0
    assert search.delta_spent_ == delta
    assert set(search.best_params_) == set(grid)
    model = search.best_estimator_
    spent = [model["scale"].guarantee_, model["pca"].guarantee_]
    weight = search.best_params_["pca__epsilon"]
    if delta == 0:
        # Pure DP: epsilons add, in the proportion the grid gave.
        epsilons = [g.epsilon for g in spent]
        assert sum(epsilons) == pytest.approx(search.run_budget_.epsilon)
        assert epsilons[1] / epsilons[0] == pytest.approx(weight)
    else:
        # zCDP: rhos add; a step's rho grows as its epsilon squared.
        rhos = [g.rho for g in spent]
        assert sum(rhos) == pytest.approx(search.run_budget_.rho)
        with calibrated_in_zcdp():  # (as the search weighs the steps)
            configured = [
                StandardScaler(epsilon=1.0, delta=delta).privacy_cost().rho,
                PCA(epsilon=weight, delta=delta).privacy_cost().rho,
            ]
        assert rhos[1] / rhos[0] == pytest.approx(configured[1] / configured[0])


def test_accountant_records_the_search_once():
    accountant = BudgetAccountant(epsilon=2.0, delta=1e-6)
    _norm_search(accountant=accountant, random_state=0).fit(_rows())
    assert len(accountant) == 1
    assert accountant.ledger[0][0] == "PrivateSearchCV"
    with pytest.raises(ValueError, match="pass it to PrivateSearchCV"):
        PrivateSearchCV(
            SeparateCovariance(data_norm=1.0, accountant=BudgetAccountant()),
            {"data_norm": [1.0]},
        ).fit(_rows())


# --- the score's noise -------------------------------------------------------


def _one_candidate_search():
    # One candidate: the selected model is the only run's, fitted seeded.
    return PrivateSearchCV(
        SeparateCovariance(data_norm=1.0),
        {"data_norm": [1.0]},
        score_norm=1.0,
        random_state=0,
    ).fit(_rows())


def test_score_noise_matches_the_closed_form():
    search = _one_candidate_search()
    model = search.best_estimator_
    values = np.linalg.eigvalsh((model.covariance_ + model.covariance_.T) / 2)
    n_valid = math.ceil(0.2 * 5000)
    # The per-row score 2 y^T C y - ||C||_F^2 of a row of norm at most r = 1
    # spans 2 r^2 [min(lambda_min, 0), max(lambda_max, 0)]; the mean over
    # n_valid rows moves by at most that width / n_valid when one row is
    # replaced, and the Gaussian mechanism's sigma is that over sqrt(2 rho).
    width = 2.0 * (max(values[-1], 0.0) - min(values[0], 0.0))
    expected = width / n_valid / math.sqrt(2.0 * search.run_budget_.rho)
    assert search.score_noise_scale_ == pytest.approx(expected, rel=1e-12)


@pytest.mark.slow
def test_score_noise_on_worst_case_neighbours():
    # Two held-out sets that differ in one row: a zero row (score -||C||^2,
    # the low end of the range when C is PSD) and r times the top
    # eigenvector (the high end). Their noisy scores differ in mean by the
    # sensitivity exactly, so the standardised shift is sqrt(2 rho) (a
    # rho-zCDP Gaussian mechanism on a worst-case pair); noise at half or
    # twice the scale would give twice or half the shift.
    search = _one_candidate_search()
    model = search.best_estimator_
    values, vectors = np.linalg.eigh((model.covariance_ + model.covariance_.T) / 2)
    assert values[0] >= 0  # SeparateCovariance's default release is PSD
    base = _rows(n=9, seed=3)
    a = np.vstack([base, np.zeros(5)])
    b = np.vstack([base, vectors[:, -1]])
    rng = np.random.default_rng(5)

    def draws(rows):
        return [
            search._noisy_score(
                model, (rows, None, None), (search.run_budget_, None, 1.0), rng
            )[0]
            for _ in range(20_000)
        ]

    shift, se = gaussian_shift(draws(a), draws(b))
    assert abs(shift - math.sqrt(2.0 * search.run_budget_.rho)) < 4.0 * se


# --- neighbours of the whole search ------------------------------------------


class _Announce(PrivateEstimatorMixin, BaseEstimator):
    # A private estimator whose release does not depend on the rows: the
    # search's selection is then the only thing the rows change.
    def __init__(self, choice=0, epsilon=1.0, delta=0.0, rho=None):
        self.choice = choice
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho

    def fit(self, X, y=None):
        self.guarantee_ = self.privacy_cost()
        return self


def _agrees(estimator, X):
    # Per-row score in {0, 1}: does the row's sign agree with the choice?
    return (X[:, 0] > 0) == bool(estimator.choice)


@pytest.mark.slow
def test_neighbouring_datasets_whole_search():
    # Two rows; one trains and one is held out (the split is random). The
    # neighbours differ in row 0: on D both rows favour choice 1, on D' row 0
    # favours choice 0. The released choice is the observable. The search is
    # pure 1-DP (logarithmic law: 2 eps per run of 0.5), so no event's
    # probability may change by more than a factor e between D and D'. The
    # check: a 99.9% Clopper-Pearson lower bound on log(P(E) / P'(E)) stays
    # below 1 for both choices, and the selection is observable (the bound
    # is above 0 for one of them: the test is not vacuous).
    n_trials = 6000
    D = np.array([[1.0], [1.0]])
    D_prime = np.array([[-1.0], [1.0]])

    def choices(X, offset):
        picked = np.empty(n_trials, dtype=int)
        for i in range(n_trials):
            search = PrivateSearchCV(
                _Announce(),
                {"choice": [0, 1]},
                epsilon=1.0,
                delta=0.0,
                n_iter=3,
                validation_fraction=0.5,
                scoring=_agrees,
                score_range=(0.0, 1.0),
                random_state=offset + i,
            ).fit(X)
            picked[i] = search.best_params_["choice"]
        return picked

    a, b = choices(D, 0), choices(D_prime, 10**6)
    observed = []
    for choice in (0, 1):
        for x, y in ((a, b), (b, a)):
            k_x, k_y = int(np.sum(x == choice)), int(np.sum(y == choice))
            low_x = stats.beta.ppf(0.0005, k_x, n_trials - k_x + 1)
            high_y = stats.beta.ppf(0.9995, k_y + 1, n_trials - k_y)
            loss_lower = math.log(low_x / high_y)
            assert loss_lower < 1.0
            observed.append(loss_lower)
    assert max(observed) > 0.0


# --- choices ------------------------------------------------------------------


@pytest.mark.slow
def test_picks_the_right_norm_bound_most_of_the_time():
    # Rows of norm about 1; data_norm 0.01 shrinks the estimate to almost 0,
    # data_norm 100 buries it in noise 10^4 times larger, and 1 is right.
    # Once the candidate 1 is drawn it wins unless the score's noise
    # (sigma about 3e-3 here, against a score gap of about ||C||_F^2 = 0.2)
    # flips the order, which has probability below 1e-9. So the search
    # picks 1 with probability p = 1 - E[(2/3)^K], the chance that one of
    # K runs draws it, K from the logarithmic law of mean 10. The count over
    # 40 independent searches is Binomial(40, p); the test fails only below
    # its 0.1% quantile.
    k = np.arange(1, 2000)
    p = 1.0 - float(np.sum(run_count_pmf(k, 10.0) * (2.0 / 3.0) ** k))
    X = _rows()
    picks = [
        _norm_search(random_state=s).fit(X).best_params_["data_norm"] for s in range(40)
    ]
    assert sum(pick == 1.0 for pick in picks) >= stats.binom.ppf(0.001, 40, p)


def test_search_over_estimators_in_a_pipeline():
    pipe = Pipeline([("cov", GaussianCovariance(data_norm=1.0))])
    candidates = [
        GaussianCovariance(data_norm=1.0),
        SeparateCovariance(data_norm=1.0),
        AdaptiveCovariance(data_norm=1.0),
    ]
    search = PrivateSearchCV(pipe, {"cov": candidates}, random_state=0).fit(_rows())
    assert type(search.best_params_["cov"]) in {type(c) for c in candidates}
    assert search.best_estimator_["cov"].covariance_.shape == (5, 5)
    # The run's generator is not released with the step it seeded.
    assert search.best_estimator_["cov"].random_state is None
    assert np.isfinite(search.score(_rows(n=100, seed=9)))


def test_other_families_have_a_default_score():
    X = _rows()
    pca = PrivateSearchCV(
        PCA(2, data_norm=1.0), {"data_norm": [0.5, 1.0]}, random_state=0
    ).fit(X)
    assert pca.transform(X).shape == (5000, 2)
    # The held-out PPCA log-likelihood, plus noise: within the model's range.
    best = pca.best_estimator_
    _, (low, high) = bounded_scores(best, X[:10])
    noise = 10 * pca.score_noise_scale_
    assert low - noise < pca.best_score_ < high + noise
    gauss = PrivateSearchCV(
        MultivariateGaussian(), {"beta": [0.05, 0.1]}, score_norm=3.0, random_state=0
    ).fit(X)
    assert np.isfinite(gauss.best_score_)
    bits = (np.random.default_rng(0).random((4000, 6)) < 0.3).astype(float)
    product = PrivateSearchCV(
        ProductBernoulli(), {"beta": [0.05, 0.1]}, random_state=0
    ).fit(bits)
    assert product.score_samples(bits).shape == (4000,)


def test_the_number_of_runs_is_drawn_first_and_not_released():
    # The best of a known number k of runs costs up to k runs: the count is
    # not an attribute. It is the search's first draw from random_state
    # (redrawable by whoever knows the seed, as the noise is).
    search = _norm_search(random_state=3).fit(_rows())
    assert not hasattr(search, "n_runs_")
    plan = _norm_search(random_state=3)._plan(np.random.default_rng(3))
    assert len(plan.drawn) == draw_run_count(np.random.default_rng(3), 10)


def test_poisson_without_runs_answers_no_result_and_spends():
    seed = next(
        s
        for s in range(100)
        if draw_run_count(np.random.default_rng(s), 1, "poisson") == 0
    )
    accountant = BudgetAccountant()
    search = _norm_search(
        law="poisson", n_iter=1, accountant=accountant, random_state=seed
    )
    with pytest.raises(NoPrivateResult, match="no run"):
        search.fit(_rows())
    assert len(accountant) == 1
    with pytest.raises(ValueError, match="range"):
        _norm_search(law="poisson", n_iter=0.5).fit(_rows())


def test_column_transformer_remainder_is_counted():
    from sklearn.compose import ColumnTransformer

    from dpcov.model_selection import pipeline_cost

    pick = ColumnTransformer(
        [("first", "passthrough", [0])],
        remainder=StandardScaler(epsilon=50.0, delta=0.0, bounds=(-3.0, 3.0)),
    )
    pipe = Pipeline(
        [("pick", pick), ("pca", PCA(1, epsilon=1.0, delta=0.0, data_norm=3.0))]
    )
    assert pipeline_cost(pipe) == PureDP(51.0)
    search = PrivateSearchCV(
        pipe, {"pca__data_norm": [3.0]}, delta=0.0, random_state=0
    ).fit(_rows())
    model = search.best_estimator_
    spent = compose(
        [model["pca"].guarantee_, model["pick"].transformers_[1][1].guarantee_]
    )
    assert spent.epsilon <= search.run_budget_.epsilon
    assert pipeline_cost(model).epsilon <= search.run_budget_.epsilon


def test_scoring_must_give_one_value_per_row():
    def wide(estimator, X):
        return np.ones((X.shape[0], 50))

    with pytest.raises(ValueError, match="one score per row"):
        PrivateSearchCV(
            SeparateCovariance(data_norm=1.0),
            {"data_norm": [1.0]},
            scoring=wide,
            score_range=(0.0, 1.0),
        ).fit(_rows())


def test_only_the_selected_run_warns():
    # data_norm 100 is dominated by noise (it warns when fitted alone); the
    # search reports the warnings of the run it releases only.
    with pytest.warns(NoiseDominatedWarning):
        SeparateCovariance(data_norm=100.0, rho=0.009, random_state=0).fit(
            _rows()[:4000]
        )
    for seed in range(5):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            search = _norm_search(random_state=seed).fit(_rows())
        warned = any(issubclass(w.category, NoiseDominatedWarning) for w in caught)
        assert warned == (search.best_params_["data_norm"] == 100.0)


# --- refusals -----------------------------------------------------------------


def test_refusals_are_clear_and_free_of_data():
    X = _rows()
    with pytest.raises(ValueError, match="score_range"):
        PrivateSearchCV(
            SeparateCovariance(data_norm=1.0), {"data_norm": [1.0]}, scoring=_agrees
        ).fit(X)
    with pytest.raises(ValueError, match="score_norm"):
        PrivateSearchCV(
            SeparateCovariance(data_norm=1.0), {"data_norm": [0.5, 1.0]}
        ).fit(X)
    with pytest.raises(ValueError, match="no pure-DP form"):
        PrivateSearchCV(
            MultivariateGaussian(), {"beta": [0.1]}, delta=0.0, score_norm=1.0
        ).fit(X)
    with pytest.raises(ValueError, match="only"):
        PrivateSearchCV(ExactSubspace(n_components=1), {"n_components": [1]}).fit(X)
    with pytest.raises(ValueError, match="no default private score"):
        PrivateSearchCV(_Announce(), {"choice": [0, 1]}).fit(X)
    with pytest.raises(ValueError, match="may fit it several times"):
        PrivateSearchCV(
            GridSearchCV(SeparateCovariance(data_norm=1.0), {}),
            {},
            scoring=_agrees,
            score_range=(0.0, 1.0),
        ).fit(X)
    mixed = Pipeline([("step", PCA(2, data_norm=1.0))])
    with pytest.raises(ValueError, match="cannot be compared"):
        PrivateSearchCV(
            mixed, {"step": [PCA(2, data_norm=1.0), SeparateCovariance(data_norm=1.0)]}
        ).fit(X)
    with pytest.raises(ValueError, match="a generator of its own"):
        PrivateSearchCV(
            SeparateCovariance(data_norm=1.0), {"random_state": [0, 1]}
        ).fit(X)
    with pytest.raises(ValueError, match="minimum of 2"):
        _norm_search().fit(X[:1])
    secret = X.copy()
    secret[3, 2] = np.nan
    with pytest.raises(ValueError) as info:
        _norm_search().fit(secret)
    assert str(X[3, 1])[:6] not in str(info.value)
    assert not hasattr(_norm_search(), "best_estimator_")


def _search_for_checks():
    # Candidates differ clearly (see test_picks_the_right_norm_bound...).
    return PrivateSearchCV(
        SeparateCovariance(data_norm=10.0), {"data_norm": [1.0, 10.0]}, score_norm=10.0
    )


@_parametrize_with_checks([_search_for_checks()])
def test_sklearn_compatible_search(estimator, check):
    with warnings.catch_warnings():
        # The checks' tiny random datasets are dominated by noise.
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        check(estimator)


def test_composition_helper_agrees():
    # compose() of a candidate's steps is what the run budget bounds.
    search = _norm_search(random_state=0).fit(_rows())
    assert compose([search.best_estimator_.guarantee_]).rho <= search.run_budget_.rho


def test_dataframe_through_a_column_transformer():
    pd = pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer

    frame = pd.DataFrame(_rows(n=3000, d=3), columns=["a", "b", "c"])
    frame["label"] = "text"  # a column the pipeline drops
    pipe = Pipeline(
        [
            ("pick", ColumnTransformer([("num", "passthrough", ["a", "b", "c"])])),
            ("cov", SeparateCovariance(data_norm=1.0)),
        ]
    )
    search = PrivateSearchCV(
        pipe, {"cov__data_norm": [0.5, 1.0]}, score_norm=1.0, random_state=0
    ).fit(frame)
    assert list(search.feature_names_in_) == ["a", "b", "c", "label"]
    assert search.best_estimator_["cov"].covariance_.shape == (3, 3)


def test_param_validation():
    from sklearn.utils.estimator_checks import check_param_validation

    check_param_validation("PrivateSearchCV", _search_for_checks())


def test_privacy_cost_before_the_data_and_pipeline_cost_after():
    from dpcov.model_selection import pipeline_cost

    search = _norm_search(random_state=0)
    planned = search.privacy_cost()
    assert planned.epsilon <= 1.0
    search.fit(_rows())
    assert pipeline_cost(search) == search.guarantee_ == planned
    # A search of searches has (epsilon, delta)-only runs: refused.
    with pytest.raises(ValueError, match="only"):
        PrivateSearchCV(
            search, {"n_iter": [2, 5]}, scoring=_agrees, score_range=(0, 1)
        ).fit(_rows())


@pytest.mark.parametrize(
    "check",
    [
        "check_privacy_params_validated_in_fit",
        "check_geometry_resolved_privately",
        "check_no_undocumented_outputs",
        "check_seeded_fit_warns",
        "check_release_carries_no_seed",
    ],
)
def test_dp_conventions(check):
    # dpcov's own conventions that apply to a search (the others read an
    # estimator's budget_split_ or per-fit privacy parameters, which a search
    # replaces by its run budget and its selection guarantee).
    from dpcov.utils import estimator_checks

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        getattr(estimator_checks, check)(_search_for_checks())


def _column_pipeline():
    # Two private scalers that scikit-learn clones separately (a
    # ColumnTransformer), then a covariance: three private steps.
    from sklearn.compose import ColumnTransformer

    scalers = ColumnTransformer(
        [
            ("a", StandardScaler(bounds=(-1.0, 1.0), with_std=False), [0, 1]),
            ("b", StandardScaler(bounds=(-1.0, 1.0), with_std=False), [2, 3]),
        ]
    )
    return Pipeline([("scale", scalers), ("cov", GaussianCovariance(data_norm=2.0))])


@pytest.mark.parametrize(
    "search",
    [
        # PCA keeps its covariance estimator, a fitted copy of its own seed.
        PrivateSearchCV(PCA(2, data_norm=1.0), {"data_norm": [0.5, 1.0]}),
        PrivateSearchCV(_column_pipeline(), {"cov__data_norm": [2.0]}, score_norm=2.0),
    ],
    ids=["PCA", "ColumnTransformer"],
)
def test_meta_estimators_release_no_generator(search):
    # The runs' generators reach fitted copies of the private steps too
    # (PCA's covariance_estimator_, a ColumnTransformer's transformers_):
    # none is left on the released model.
    from dpcov.utils.estimator_checks import check_release_carries_no_seed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        check_release_carries_no_seed(search)


def test_private_steps_of_a_run_draw_independent_noise():
    # Two identical scalers on identical columns: with one generator shared
    # by the steps, the fitted clones would draw the same noise and the
    # released means would be equal (their difference, 0 here, exact). Each
    # step has its own generator: the means differ by the difference of two
    # independent continuous noises, never 0.
    x = np.random.default_rng(0).uniform(-0.5, 0.5, size=(4000, 2))
    X = np.hstack([x, x])
    search = PrivateSearchCV(
        _column_pipeline(), {"cov__data_norm": [2.0]}, n_iter=2, score_norm=2.0
    ).fit(X)
    scalers = search.best_estimator_["scale"].named_transformers_
    assert np.all(scalers["a"].mean_ != scalers["b"].mean_)


def test_seeded_searches_are_reproducible():
    a = _norm_search(random_state=7).fit(_rows())
    b = _norm_search(random_state=7).fit(_rows())
    assert a.best_params_ == b.best_params_
    assert a.best_score_ == b.best_score_
    np.testing.assert_array_equal(
        a.best_estimator_.covariance_, b.best_estimator_.covariance_
    )


def test_a_released_winner_cannot_rebuild_its_noise():
    # The attack an integer seed on best_estimator_ allowed: refit a clone of
    # it on zero rows of the (public) training size and subtract. On
    # constant rows v (assume_centered, raw releases) the raw release is
    # v v^T + N, and on zero rows 0 + N' : a clone that redraws the same
    # noise (N' = N) gives v v^T back to rounding, while fresh noise leaves
    # N - N', whose 15 distinct entries are independent with s.d. sqrt(2)
    # sigma (sigma about 0.002 here): each is within 1e-6 of 0 with
    # probability below 3e-4, all of them below 1e-50.
    v = np.array([0.6, -0.3, 0.2, 0.1, 0.5])
    X = np.tile(v, (5000, 1))
    truth = np.outer(v, v)
    search = PrivateSearchCV(
        GaussianCovariance(data_norm=1.0, assume_centered=True, store_raw=True),
        {"data_norm": [1.0]},
        n_iter=2,
    ).fit(X)
    best = search.best_estimator_
    assert best.random_state is None
    n_train = 5000 - math.ceil(0.2 * 5000)
    zeros = np.zeros((n_train, 5))

    def recovered(model):
        return model.raw_covariance_ - clone(model).fit(zeros).raw_covariance_

    assert np.abs(recovered(best) - truth).max() > 1e-6
    # The same attack on a model that carries a seed: the test's control.
    seeded = clone(best).set_params(random_state=5).fit(X[:n_train])
    np.testing.assert_allclose(recovered(seeded), truth, atol=1e-12)


# --- what a candidate may hold, and what a search lets out -----------------


def _log1p():
    return PublicTransformer(FunctionTransformer(np.log1p, accept_sparse=True))


@pytest.mark.parametrize("as_sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("kind", [Pipeline, PrivatePipeline])
@pytest.mark.parametrize(
    "public, extreme",
    [
        ([("poly", PolynomialFeatures(2))], [1e200, 0.0]),
        ([("poly", PolynomialFeatures(2)), ("log", _log1p())], [1e200, -2.0]),
    ],
    ids=["polynomial", "two public steps"],
)
def test_a_public_step_in_a_candidate_lets_out_nothing_about_a_row(
    public, extreme, kind, as_sparse
):
    # A neighbouring pair chosen to break it: 499 rows N(0, 1/9) and an
    # extreme finite row, or (0, 0). Before, a scikit-learn Pipeline's
    # PolynomialFeatures overflowed to inf and PCA refused the rows on one
    # neighbour only (87 of 100 searches); a PrivatePipeline's search
    # re-emitted the overflow warning (86 of 100). Same outcome and warnings
    # on both, for every seed (the split and the runs vary with it).
    rows = np.random.default_rng(0).normal(0.0, 1.0 / 3.0, size=(500, 2))
    other = rows.copy()
    rows[-1], other[-1] = extreme, 0.0
    pair = (rows, other)
    if as_sparse:
        pair = tuple(sparse.csr_matrix(X) for X in pair)
    candidate = kind([*clone(public, safe=False), ("pca", PCA(1, data_norm=1.0))])
    searches = []
    for seed in range(4):

        def make(seed=seed):
            searches.append(
                PrivateSearchCV(
                    clone(candidate),
                    {"pca__n_components": [1, 2]},
                    epsilon=1.0,
                    delta=0.0,
                    law="geometric",
                    random_state=seed,
                )
            )
            return searches[-1]

        seen = outcomes(pair, make)
        assert seen[0] == seen[1] == ("fit", []), seen
    search = searches[-1]
    if kind is Pipeline:
        # The public maps ran in PublicTransformers (the user's are unchanged).
        assert isinstance(search.best_estimator_["poly"], PublicTransformer)
        assert isinstance(candidate["poly"], PolynomialFeatures)


@pytest.mark.parametrize(
    "candidate, grid",
    [
        (Pipeline([("pca", PCA(2, data_norm=1.0)), ("lr", LogisticRegression())]), {}),
        (
            Pipeline([("scale", SkStandardScaler()), ("pca", PCA(2, data_norm=1.0))]),
            {},
        ),
        (
            Pipeline(
                [
                    ("scale", FunctionTransformer(np.log1p)),
                    ("pca", PCA(2, data_norm=1.0)),
                ]
            ),
            {},
        ),
        ("fitted", {}),
        (
            Pipeline([("scale", "passthrough"), ("pca", PCA(2, data_norm=1.0))]),
            {"scale": ["passthrough", SkStandardScaler()]},
        ),
        (
            PrivatePipeline(
                [("scale", SkStandardScaler()), ("pca", PCA(2, data_norm=1.0))]
            ),
            {},
        ),
    ],
    ids=["model", "scaler", "function", "fitted", "in the grid", "private pipeline"],
)
def test_a_candidate_step_without_a_guarantee_is_refused_before_any_spend(
    candidate, grid
):
    if candidate == "fitted":
        public = np.random.default_rng(1).normal(size=(300, 5))
        fitted = SkPCA(n_components=3).fit(public)
        candidate = Pipeline([("sk", fitted), ("pca", PCA(2, data_norm=1.0))])
    accountant = BudgetAccountant()
    search = PrivateSearchCV(
        candidate,
        {"pca__n_components": [1, 2], **grid},
        accountant=accountant,
        random_state=0,
    )
    with pytest.raises(ValueError, match="neither a private dpcov estimator"):
        search.fit(_rows(), np.zeros(5000, dtype=int))
    assert len(accountant) == 0
    assert not hasattr(search, "best_estimator_")


def test_candidate_steps_short_of_rows_are_named_at_once():
    # Before reading: every candidate of the grid at the run budget, on the
    # rows a run trains on (public n); both steps short are named.
    rng = np.random.default_rng(0)
    X = rng.random((400, 4))
    y = rng.integers(0, 3, 400)
    accountant = BudgetAccountant()
    search = PrivateSearchCV(
        Pipeline(
            [
                ("impute", SimpleImputer()),
                ("lda", LinearDiscriminantAnalysis(classes=[0, 1, 2])),
            ]
        ),
        {"lda__n_components": [1, 2]},
        epsilon=1.0,
        accountant=accountant,
    )
    with pytest.raises(ValueError, match="a run fits 320 rows") as refused:
        search.fit(X, y)
    message = str(refused.value)
    assert "'impute': SimpleImputer" in message
    assert "'lda': LinearDiscriminantAnalysis" in message
    assert len(accountant) == 0


def _extreme_pair(n=400, d=2, extreme=1.5e308, seed=0):
    rows = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(n, d))
    other = rows.copy()
    rows[0, 0] = extreme
    return rows, other


@pytest.mark.parametrize(
    "candidate",
    [
        # A scaler's output overflows on the extreme row: the PCA after it,
        # in fit and when the held-out rows are scored, must not refuse.
        lambda: PrivatePipeline(
            [
                ("s", StandardScaler(bounds=(-1.0, 1.0))),
                ("p", PCA(n_components=2)),
                ("c", SeparateCovariance()),
            ]
        ),
        # A scikit-learn Pipeline of private steps runs as a PrivatePipeline.
        lambda: Pipeline(
            [
                ("s", StandardScaler(bounds=(-1.0, 1.0))),
                ("p", PCA(n_components=2)),
                ("c", SeparateCovariance(data_norm=2.0)),
            ]
        ),
        lambda: Pipeline(
            [
                ("s", StandardScaler(bounds=(-1.0, 1.0))),
                ("b", BoundsScaler(bounds=(-5.0, 5.0))),
                ("c", SeparateCovariance(data_norm=2.0)),
            ]
        ),
    ],
    ids=["private pipeline", "pipeline", "bounds scaler"],
)
def test_rows_are_mapped_between_private_steps_in_fit_and_in_the_score(candidate):
    pair = _extreme_pair()
    for seed in range(3):
        seen = outcomes(
            pair,
            lambda seed=seed: PrivateSearchCV(
                candidate(),
                {"s__with_mean": [True, False]},
                n_iter=2,
                validation_fraction=0.9,
                score_norm=2.0,
                random_state=seed,
            ),
        )
        assert seen[0] == seen[1] == ("fit", []), seen


def test_a_step_left_without_a_range_in_a_pipeline_candidate_receives_one():
    # A scikit-learn Pipeline candidate runs as a PrivatePipeline: the scaler
    # after PCA receives PCA's output range (before, it refused after the
    # search had spent), and the search records its guarantee once.
    accountant = BudgetAccountant()
    search = PrivateSearchCV(
        Pipeline(
            [
                ("p", PCA(n_components=2, data_norm=2.0)),
                ("s", StandardScaler()),
                ("c", SeparateCovariance(data_norm=2.0)),
            ]
        ),
        {"p__whiten": [False]},
        score_norm=2.0,
        accountant=accountant,
        random_state=0,
    ).fit(_extreme_pair()[1])
    assert len(accountant) == 1
    assert isinstance(search.best_estimator_, PrivatePipeline)
    assert "s" in search.best_estimator_.ranges_


def test_an_accountant_inside_a_private_pipeline_candidate_is_refused():
    # It would record every run, and the number of runs is not released.
    pipe = PrivatePipeline(
        [("p", PCA(n_components=2, data_norm=2.0, accountant=BudgetAccountant()))]
    )
    with pytest.raises(ValueError, match="pass it to PrivateSearchCV"):
        PrivateSearchCV(pipe, {"p__whiten": [False, True]}).fit(_rows())


def test_targets_are_checked_against_every_candidate_before_spending():
    # The grid lists two target ranges: a target outside one of them is
    # refused whatever its row, before anything is spent.
    X = _rows(n=2000)
    for row in (0, -1):
        y = np.zeros(2000)
        y[row] = 5.0
        accountant = BudgetAccountant()
        search = PrivateSearchCV(
            LinearRegression(bounds=(-1.0, 1.0), target_bounds=(-10.0, 10.0)),
            {"target_bounds": [(-1.0, 1.0), (-10.0, 10.0)]},
            accountant=accountant,
        )
        with pytest.raises(ValueError, match="outside a candidate model's"):
            search.fit(X, y)
        assert len(accountant) == 0


def test_budget_keys_are_weights_in_their_own_space():
    # Each space of a list is checked against its own candidates, and a key
    # that weighs something in some of them is accepted.
    scale = StandardScaler(bounds=(-3.0, 3.0))
    pipe = Pipeline([("scale", scale), ("pca", PCA(2, data_norm=3.0))])
    spaces = [{"pca__epsilon": [1.0, 2.0]}, {"scale": ["passthrough"]}]
    PrivateSearchCV(pipe, spaces, random_state=0).fit(_rows())
    grid = {"scale": ["passthrough", scale], "pca__epsilon": [1.0, 2.0]}
    PrivateSearchCV(pipe, grid, random_state=0).fit(_rows())
    one = PrivatePipeline([("pca", PCA(2, data_norm=3.0))])
    for key in ("pca__epsilon", "epsilon"):
        with pytest.raises(ValueError, match="only private step"):
            PrivateSearchCV(one, {key: [1.0, 2.0]}).fit(_rows())


def test_held_out_rows_reach_the_last_step_mapped_into_range():
    # The score reads the last step's input as the fitted pipeline hands it
    # on: an extreme held-out row, which overflows in the scaler, cannot make
    # ProductBernoulli's score refuse the rows (after the search spent).
    pair = _extreme_pair()
    candidate = Pipeline(
        [
            ("s", StandardScaler(bounds=(-1.0, 1.0))),
            ("b", ProductBernoulli(binarize=0.0)),
        ]
    )
    for seed in range(3):
        seen = outcomes(
            pair,
            lambda seed=seed: PrivateSearchCV(
                clone(candidate),
                {"b__min_probability": ["auto", 0.01]},
                validation_fraction=0.9,
                random_state=seed,
            ),
        )
        assert seen[0] == seen[1] == ("fit", []), seen


def test_a_pipeline_subclass_is_refused():
    class MyPipeline(Pipeline):
        pass

    candidate = MyPipeline(
        [("s", StandardScaler(bounds=(-1.0, 1.0))), ("p", PCA(2, data_norm=2.0))]
    )
    with pytest.raises(ValueError, match="a subclass of Pipeline"):
        PrivateSearchCV(candidate, {"p__whiten": [False]}).fit(_rows())


def test_a_private_step_inside_a_composite_candidate_is_checked_before_spending():
    from sklearn.pipeline import FeatureUnion

    accountant = BudgetAccountant()
    candidate = Pipeline(
        [
            ("u", FeatureUnion([("s", StandardScaler(bounds="private"))])),
            ("c", SeparateCovariance(data_norm=2.0)),
        ]
    )
    search = PrivateSearchCV(
        candidate, {"c__data_norm": [2.0]}, score_norm=2.0, accountant=accountant
    )
    with pytest.raises(ValueError, match="u__s"):
        search.fit(_rows(n=200, d=2))
    assert len(accountant) == 0


def _visits_table(n_persons=2000, seed=0):
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 9, n_persons)
    groups = rng.permutation(np.repeat(np.arange(n_persons), counts))
    X = rng.normal(size=(n_persons, 3))[groups] * [2.0, 1.0, 0.3]
    return X + 0.3 * rng.normal(size=(groups.size, 3)), groups


def test_a_search_over_persons_splits_persons_and_scores_per_person():
    # With the estimator's max_rows_per_group set: a random share of the
    # persons is held out with all their rows, every run fits the others
    # with groups, and the held-out score averages each person's mean row
    # score, so its noise is calibrated to (high - low) / (held-out
    # persons), not to the held-out rows. The search records the person as
    # its unit.
    from tests._privacy_checks import recorded_calls, recorded_releases

    X, groups = _visits_table()
    search = PrivateSearchCV(
        PCA(max_rows_per_group=4, data_norm=5.0),
        {"n_components": [1, 2]},
        epsilon=2.0,
        validation_fraction=0.25,
        random_state=0,
    )
    _, codes = np.unique(groups, return_inverse=True)
    (X_train, _, g_train), (X_valid, _, g_valid) = search._split_rows(
        X, None, np.random.default_rng(0), codes
    )
    assert not set(g_train) & set(g_valid)
    assert len(set(g_valid)) == math.ceil(0.25 * 2000)
    assert X_train.shape[0] + X_valid.shape[0] == X.shape[0]
    with (
        recorded_calls(PCA, "fit") as fits,
        recorded_releases() as releases,
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        search.fit(X, groups=groups)
    assert all("groups" in kwargs for _, kwargs, _ in fits)
    # The score noises: the last release of each run, with sensitivity
    # (high - low) / 500 held-out persons; a row-level search on one row per
    # person holds out 500 rows and has the same sensitivity.
    by_person = releases[-1].sensitivity
    with recorded_releases() as row_releases, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        PrivateSearchCV(
            PCA(data_norm=5.0),
            {"n_components": [1, 2]},
            epsilon=2.0,
            validation_fraction=0.25,
            random_state=0,
        ).fit(X[np.unique(groups, return_index=True)[1]])
    assert by_person == pytest.approx(row_releases[-1].sensitivity, rel=1e-12)
    assert search.privacy_unit_ == "person"
    assert search.best_estimator_.privacy_unit_ == "person"


def test_a_search_over_persons_refuses_what_it_cannot_keep():
    X, groups = _visits_table(300)
    with pytest.raises(ValueError, match="metadata routing"):
        PrivateSearchCV(
            PCA(max_rows_per_group=4, data_norm=5.0), {"n_components": [1, 2]}
        ).fit(X)
    with pytest.raises(ValueError, match="same unit under the same relation"):
        PrivateSearchCV(
            PCA(max_rows_per_group=4, data_norm=5.0), {"max_rows_per_group": [1, 2]}
        ).fit(X, groups=groups)
    # One relation for every run: steps under different relations, or a
    # candidate swapped in under another, are refused before reading.
    mixed = Pipeline(
        [
            ("scale", StandardScaler(bounds=(-10, 10), neighbours="add_remove")),
            ("pca", PCA(data_norm=5.0)),
        ]
    )
    with pytest.raises(ValueError, match="one neighbouring relation"):
        PrivateSearchCV(mixed, {"pca__n_components": [1, 2]}).fit(X)
    with pytest.raises(ValueError, match="under other neighbours"):
        PrivateSearchCV(
            Pipeline([("pca", PCA(data_norm=5.0, neighbours="add_remove"))]),
            {"pca": [PCA(data_norm=5.0)]},
        ).fit(X)


def _add_remove_search(scoring, seed, **extra):
    return PrivateSearchCV(
        GaussianCovariance(data_norm=1.0, neighbours="add_remove"),
        {"data_norm": [1.0, 2.0]},
        epsilon=1.0,
        scoring=scoring,
        score_range=(-1.0, 1.0),
        validation_fraction=0.5,
        random_state=seed,
        **extra,
    )


def test_a_search_under_add_remove_releases_its_score_within_the_claim():
    # Under add/remove neighbours the number of held-out units is private:
    # each run releases (sum of (v - c), w N) at sensitivity h = high - low in
    # L2 and L1, a Gaussian of s.d. h / sqrt(2 rho_run) per coordinate (the
    # closed form). A unit at the top of the range added to the held-out part
    # moves it by (w, w), a zCDP cost of rho_run / 2; a unit at the bottom
    # replaced by one at the top moves it by (2 w, 0), rho_run exactly. Both
    # lie in (rho / 4, rho], so half the noise would break the claim. The
    # split is a coin per unit (a prefix of the same draws on both tables):
    # the added unit changes the held-out part only, so every fit's releases
    # are identical on the two tables.
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(400, 3))
    top, bottom = np.vstack([X, [1.0, 0.0, 0.0]]), np.vstack([X, [-1.0, 0.0, 0.0]])
    held = []

    def scoring(estimator, rows):
        held.append(bool(np.any(rows[:, 0] == 1.0)))
        return rows[:, 0]

    # The first seed whose split holds the added unit out (the pair audited).
    for seed in range(100):
        held.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _add_remove_search(scoring, seed).fit(top)
        if held[0]:
            break

    def releases(table):
        with recorded_releases() as out, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search = _add_remove_search(scoring, seed).fit(table)
        scores = [r for r in out if np.shape(r.value) == (2,)]
        fits = [r for r in out if np.shape(r.value) != (2,)]
        return search, scores, fits

    search, without, fits = releases(X)
    _, added, fits_added = releases(top)
    _, replaced, fits_replaced = releases(bottom)
    for other in (fits_added, fits_replaced):
        for a, b in zip(fits, other, strict=True):
            np.testing.assert_array_equal(a.value, b.value)
    rho = search.run_budget_.rho
    sigma = 2.0 / math.sqrt(2.0 * rho)
    assert search.score_noise_scale_ == pytest.approx(sigma, rel=1e-12)
    assert without and len(without) == len(added) == len(replaced)
    for a, b, c in zip(without, added, replaced, strict=True):
        assert a.scale == b.scale == c.scale == pytest.approx(sigma, rel=1e-12)
        add_loss = np.sum((b.value - a.value) ** 2) / (2 * sigma**2)
        replace_loss = np.sum((b.value - c.value) ** 2) / (2 * sigma**2)
        assert add_loss == pytest.approx(rho / 2, rel=1e-9)
        assert replace_loss == pytest.approx(rho, rel=1e-9)
        for loss in (add_loss, replace_loss):
            assert rho / 4 < loss <= rho * (1 + 1e-9)
    assert search.neighbours_ == "add_remove"


def test_a_search_under_add_remove_fits_any_number_of_rows():
    # The number of rows is private: no table is refused for its size, an
    # empty one included (every run fits an empty table, which releases its
    # count like any other). A run whose fit refuses after its released count
    # (too few units for a private radius) is a private "no result", not an
    # error: with every run so, the search answers "no result", on no row and
    # on one alike.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in (0, 1, 3):
            search = _add_remove_search(None, 0, score_norm=1.0)
            search.set_params(scoring=None, score_range=None)
            search.fit(np.full((n, 3), 0.1))
            assert search.best_params_["data_norm"] in (1.0, 2.0)
            assert search.neighbours_ == "add_remove"
        for n in (0, 1):
            needs_rows = PrivateSearchCV(
                GaussianCovariance(neighbours="add_remove"),
                {"assume_centered": [True, False]},
                epsilon=1.0,
                score_norm=1.0,
                random_state=0,
            )
            with pytest.raises(NoPrivateResult, match="every run"):
                needs_rows.fit(np.full((n, 3), 0.1))


def test_a_search_under_add_remove_over_persons_is_recorded_as_such():
    # A pipeline over persons under add/remove: persons are held out by
    # their coins, each with all its rows; the accountant records the unit
    # and the relation, and an add/remove ledger refuses a replace-one search
    # before reading.
    X, groups = _visits_table(600)
    y = (X[:, 0] > 0).astype(int)
    pipe = PrivatePipeline(
        [
            ("scale", StandardScaler(bounds=(-8.0, 8.0))),
            ("lda", LinearDiscriminantAnalysis(classes=[0, 1], bounds=(-3.0, 3.0))),
        ],
        neighbours="add_remove",
        max_rows_per_group=4,
    )
    ledger = BudgetAccountant(unit="person", relation="add_remove")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = PrivateSearchCV(
            pipe,
            {"lda__bounds": [(-3.0, 3.0), (-2.0, 2.0)]},
            epsilon=4.0,
            accountant=ledger,
            random_state=0,
        ).fit(X, y, groups=groups)
    assert (search.privacy_unit_, search.neighbours_) == ("person", "add_remove")
    guarantee = search.guarantee_
    assert (guarantee.unit, guarantee.relation) == ("person", "add_remove")
    assert ledger.units == ["person"] and ledger.relations == ["add_remove"]
    assert 0.0 <= search.best_score_ <= 1.0
    with pytest.raises(BudgetExceeded, match="replace-one neighbours only"):
        PrivateSearchCV(
            clone(pipe).set_params(neighbours="replace"),
            {"lda__bounds": [(-3.0, 3.0)]},
            epsilon=1.0,
            accountant=ledger,
        ).fit(X, y, groups=groups)


def test_an_add_remove_search_never_fails_on_one_neighbour_only():
    # Neighbours built to break it (review): a scikit-learn Pipeline of
    # add/remove steps behind a public map, whose run's PrivatePipeline
    # must fit under add/remove (an empty training part included); a
    # numeric DataFrame through a PrivatePipeline; PCA on so few rows that
    # a run's released count may be one (a model with no finite variance
    # scores the worst, it does not fail). On 0, 1 and 2 rows, over 30
    # seeds, no exception escapes but a private "no result".
    import pandas as pd

    pipeline = Pipeline(
        [
            ("bounds", BoundsScaler(bounds=(-1.0, 1.0))),
            ("cov", GaussianCovariance(data_norm=1.0, neighbours="add_remove")),
        ]
    )
    private = PrivatePipeline(
        [("scale", StandardScaler(bounds=(-1.0, 1.0))), ("pca", PCA(n_components=1))],
        neighbours="add_remove",
    )
    rng = np.random.default_rng(0)
    for n in (0, 1, 2, 20):
        X = rng.uniform(-0.5, 0.5, size=(n, 3))
        for estimator, grid, rows in (
            (pipeline, {"cov__data_norm": [1.0, 2.0]}, X),
            (
                private,
                {"pca__n_components": [1, 2]},
                pd.DataFrame(X, columns=list("abc")),
            ),
            (PCA(data_norm=3.0, neighbours="add_remove"), {"n_components": [1, 2]}, X),
        ):
            for seed in range(30):
                search = PrivateSearchCV(
                    estimator, grid, epsilon=1.0, score_norm=1.0, random_state=seed
                )
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        search.fit(rows)
                    except NoPrivateResult:
                        pass


def test_an_add_remove_search_refuses_before_spending_what_it_cannot_run():
    # A step's public parameters are checked before anything is spent (at a
    # count no minimum binds), and a DataFrame with a column of strings,
    # which has no public pad row for an empty training part, is refused by
    # its type.
    import pandas as pd

    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    bad_priors = Pipeline(
        [
            ("s", StandardScaler(bounds=(-1, 1), neighbours="add_remove")),
            (
                "l",
                LinearDiscriminantAnalysis(
                    classes=[0, 1], bounds=(-3, 3), priors=[0.2, 0.3, 0.5],
                    neighbours="add_remove",
                ),
            ),
        ]
    )  # fmt: skip
    ledger = BudgetAccountant(relation="add_remove")
    with pytest.raises(ValueError, match="refuses before anything is spent"):
        PrivateSearchCV(bad_priors, {"l__bounds": [(-3, 3)]}, accountant=ledger).fit(
            X, y
        )
    assert len(ledger) == 0
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": ["x"] * 300})
    pipe = PrivatePipeline(
        [("cov", GaussianCovariance(data_norm=1.0))], neighbours="add_remove"
    )
    with pytest.raises(TypeError, match="public row of zeros"):
        PrivateSearchCV(pipe, {"cov__data_norm": [1.0]}, score_norm=1.0).fit(frame)
    with pytest.raises(TypeError, match="public row of zeros"):
        pipe.fit(frame)
