"""Tests of the budget accountant shared across fits, search_cost and pipeline_cost."""

import copy
import math
import pickle
import threading
import time

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, RandomizedSearchCV, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpcov.accounting import (
    ZCDP,
    ApproxDP,
    BudgetAccountant,
    GaussianDP,
    PureDP,
    gaussian_mu,
    zcdp_epsilon,
    zcdp_rho,
)
from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA, ApproximateSubspace
from dpcov.distributions import MultivariateGaussian
from dpcov.exceptions import AccountantCopyError, BudgetExceeded, NoPrivateResult
from dpcov.model_selection import pipeline_cost, search_cost
from dpcov.preprocessing import BoundsScaler, StandardScaler
from dpcov.utils._check_fits import _Unreadable


def _rows(n=600, d=3, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1).max()


# --- composition ---------------------------------------------------------


def test_zcdp_fits_add_rho_and_convert_tightly():
    acc = BudgetAccountant(delta=1e-6)
    acc.spend(ZCDP(0.1)).spend(ZCDP(0.2))
    assert math.isclose(acc.rho, 0.3)
    assert isinstance(acc.total(), ZCDP) and math.isclose(acc.total().rho, 0.3)
    # The tight conversion of the summed rho, not the sum of two conversions.
    assert math.isclose(acc.epsilon, zcdp_epsilon(0.3, 1e-6))
    assert acc.epsilon < zcdp_epsilon(0.1, 1e-6) + zcdp_epsilon(0.2, 1e-6)
    assert math.isclose(acc.epsilon_at(1e-9), zcdp_epsilon(0.3, 1e-9))


def test_pure_fits_add_epsilon():
    acc = BudgetAccountant(epsilon=1.0)
    for _ in range(4):
        acc.spend(PureDP(0.25))
    assert acc.total() == PureDP(1.0)
    assert acc.epsilon == 1.0
    assert math.isclose(acc.rho, 4 * 0.25**2 / 2)


def test_pure_and_zcdp_mix_takes_the_better_of_two_valid_bounds():
    # Many small pure fits: counting them in zCDP wins; one large pure fit
    # next to a small zCDP fit: adding its epsilon wins.
    many = BudgetAccountant(delta=1e-6)
    for _ in range(100):
        many.spend(PureDP(0.01))
    many.spend(ZCDP(0.001))
    in_zcdp = zcdp_epsilon(0.001 + 100 * 0.01**2 / 2, 1e-6)
    apart = 1.0 + zcdp_epsilon(0.001, 1e-6)
    assert math.isclose(many.epsilon, min(in_zcdp, apart)) and in_zcdp < apart

    one = BudgetAccountant(delta=1e-6).spend(PureDP(0.5)).spend(ZCDP(1e-6))
    in_zcdp = zcdp_epsilon(0.125 + 1e-6, 1e-6)
    apart = 0.5 + zcdp_epsilon(1e-6, 1e-6)
    assert math.isclose(one.epsilon, min(in_zcdp, apart)) and apart < in_zcdp


def test_approx_fits_add_both_and_leave_the_rest_of_delta_to_the_conversion():
    acc = BudgetAccountant(delta=1e-5)
    acc.spend(ApproxDP(0.5, 4e-6)).spend(ZCDP(0.05))
    assert math.isclose(acc.epsilon, 0.5 + zcdp_epsilon(0.05, 6e-6))
    assert acc.total() == ApproxDP(acc.epsilon, 1e-5)
    assert acc.rho == math.inf
    # Below the approximate fits' delta no epsilon is certified.
    assert acc.epsilon_at(1e-6) == math.inf


def test_empty_ledger():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    assert len(acc) == 0 and acc.epsilon == 0.0 and acc.total() == PureDP(0.0)


# --- caps ----------------------------------------------------------------


def test_cap_in_epsilon_delta_refuses_the_fit_that_would_exceed_it():
    rho = zcdp_rho(0.5, 1e-6)
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    # zCDP composition: k fits at (0.5, 1e-6) stay below (1, 1e-6) while
    # zcdp_epsilon(k rho) <= 1, i.e. for k <= 3 (0.898), not k = 4 (1.048).
    for _ in range(3):
        acc.spend(ZCDP(rho))
    assert zcdp_epsilon(3 * rho, 1e-6) <= 1.0 < zcdp_epsilon(4 * rho, 1e-6)
    with pytest.raises(BudgetExceeded, match="refused before reading the data"):
        acc.spend(ZCDP(rho), label="fourth")
    assert len(acc) == 3  # the refused fit is not recorded


def test_cap_is_exact_and_remaining_fills_it():
    # No slack: in floats 0.1 + 0.2 is 0.30000000000000004, a total above the
    # cap (issue 17: no total may exceed the ask, not even by one ulp). The
    # cap is filled exactly with what remaining() gives.
    acc = BudgetAccountant(epsilon=0.3)
    acc.spend(PureDP(0.1))
    with pytest.raises(BudgetExceeded, match=r"0\.30000000000000004 > 0\.3 "):
        acc.spend(PureDP(0.2))
    left = acc.remaining()
    assert left == PureDP(math.nextafter(0.2, 0.0))
    assert acc.spend(left).epsilon == 0.3 == acc.total().epsilon
    with pytest.raises(BudgetExceeded):
        acc.spend(PureDP(1e-6))
    # Halves (and ten fits at 0.1, whose float sum rounds to 1.0) fill a cap.
    halves = BudgetAccountant(epsilon=1.0).spend(PureDP(0.5)).spend(PureDP(0.5))
    assert halves.epsilon == 1.0 and halves.remaining() == PureDP(0.0)
    tenths = BudgetAccountant(epsilon=1.0)
    for _ in range(10):
        tenths.spend(PureDP(0.1))
    assert tenths.epsilon == 1.0


def test_pure_cap_refuses_zcdp_and_approx():
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(BudgetExceeded, match="pure"):
        acc.spend(ZCDP(1e-9))
    with pytest.raises(BudgetExceeded, match="pure"):
        acc.spend(ApproxDP(0.1, 1e-9))
    acc.spend(PureDP(1.0))


def test_rho_cap_counts_pure_fits_and_refuses_approx():
    acc = BudgetAccountant(rho=0.5)
    acc.spend(PureDP(0.6)).spend(ZCDP(0.32))  # 0.18 + 0.32 = 0.5
    with pytest.raises(BudgetExceeded, match="rho"):
        acc.spend(ZCDP(1e-6))
    with pytest.raises(BudgetExceeded, match="zCDP form"):
        BudgetAccountant(rho=1.0).spend(ApproxDP(0.1, 1e-9))


def test_check_records_nothing_and_spend_of_a_ledger_is_atomic():
    acc = BudgetAccountant(epsilon=1.0)
    acc.check(PureDP(1.0))
    assert len(acc) == 0
    batch = BudgetAccountant().spend(PureDP(0.6)).spend(PureDP(0.6))
    with pytest.raises(BudgetExceeded, match="2 recorded fits"):
        acc.spend(batch)
    assert len(acc) == 0  # neither entry of the batch went in
    acc.spend(BudgetAccountant().spend(PureDP(0.5), label="a"))
    assert acc.ledger == [("a", PureDP(0.5))]


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(epsilon=1.0, rho=1.0),
        dict(epsilon=-1.0),
        dict(rho=float("nan")),
        dict(delta=1.0),
        dict(delta=-1e-6),
    ],
)
def test_bad_caps(kwargs):
    with pytest.raises(ValueError):
        BudgetAccountant(**kwargs)


def test_spend_rejects_non_guarantees():
    with pytest.raises(TypeError, match="PureDP"):
        BudgetAccountant().spend(0.5)


def test_threads_never_overspend(monkeypatch):
    # 8 threads race to record 0.1-epsilon fits under a cap of 1: exactly 10
    # get in, whatever the interleaving. The cap check is slowed down so that
    # without the lock the threads would interleave between check and record
    # (checked: with the lock replaced by a no-op this test fails).
    acc = BudgetAccountant(epsilon=1.0)
    refusal = BudgetAccountant._refusal

    def slow_refusal(self, entries, units, relations):
        reason = refusal(self, entries, units, relations)
        time.sleep(1e-3)  # between the check and the record
        return reason

    monkeypatch.setattr(BudgetAccountant, "_refusal", slow_refusal)
    refused = []
    start = threading.Barrier(8)

    def worker():
        start.wait()
        for _ in range(5):
            try:
                acc.spend(PureDP(0.1))
            except BudgetExceeded:
                refused.append(1)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(acc) == 10 and len(refused) == 30
    assert acc.epsilon <= 1.0


# --- sharing: copies, clone, pickle --------------------------------------


def test_copies_and_clones_share_the_accountant():
    acc = BudgetAccountant(epsilon=1.0)
    assert copy.copy(acc) is acc and copy.deepcopy(acc) is acc
    est = SeparateCovariance(data_norm=1.0, accountant=acc)
    assert clone(est).accountant is acc
    assert clone(est).get_params()["accountant"] is acc


def test_an_unpickled_copy_refuses_every_fit():
    # A pickled copy (what a worker process gets) would record fits that the
    # original never sees: it refuses them, capped or not, with a first line
    # that names the cause and the fix.
    for acc in (BudgetAccountant(epsilon=1.0), BudgetAccountant()):
        acc.spend(PureDP(0.25), label="x")
        copied = pickle.loads(pickle.dumps(acc))
        assert copied is not acc and copied.ledger == acc.ledger
        with pytest.raises(AccountantCopyError, match="pickled copy") as exc:
            copied.spend(PureDP(0.25))
        first_line = str(exc.value).splitlines()[0]
        assert "GridSearchCV(n_jobs=2)" in first_line
        assert "fix: fit with n_jobs=1" in first_line and "search_cost" in first_line
        with pytest.raises(AccountantCopyError, match="search_cost"):
            copied.check(PureDP(0.25))
        assert len(acc) == 1 and len(copied) == 1
        acc.spend(PureDP(0.25))  # the original still works
    with pytest.raises(ValueError, match="its own ledger"):
        acc.spend(acc)
    # Not an Exception: scikit-learn's per-fit handlers (except Exception)
    # let it through.
    assert not issubclass(AccountantCopyError, Exception)


def test_a_fitted_estimator_with_an_accountant_pickles():
    # Saving a fitted model that holds an accountant works, and so does the
    # loaded model; only recording a new fit into the loaded copy is refused,
    # before the rows are read.
    X = _rows()
    acc = BudgetAccountant(epsilon=2.0)
    est = GaussianCovariance(epsilon=0.5, delta=0.0, data_norm=1.0, accountant=acc)
    est.fit(X)
    loaded = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(loaded.covariance_, est.covariance_)
    assert loaded.score(X) == est.score(X)
    assert loaded.accountant.ledger == acc.ledger

    class Unreadable:
        def __array__(self, *args, **kwargs):
            raise AssertionError("the rows were read")

    with pytest.raises(AccountantCopyError):
        loaded.fit(Unreadable())
    assert len(acc) == 1 and len(loaded.accountant) == 1


def test_repr_states_the_cap_the_fits_and_the_total():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6).spend(ZCDP(0.01))
    epsilon = zcdp_epsilon(0.01, 1e-6)
    assert repr(acc) == (
        "BudgetAccountant(epsilon=1.0, delta=1e-06, n_fits=1, "
        f"spent=ApproxDP(epsilon={epsilon!r}, delta=1e-06))"
    )
    assert repr(BudgetAccountant().spend(ZCDP(0.01))) == (
        "BudgetAccountant(delta=0.0, n_fits=1, spent=ZCDP(rho=0.01))"
    )
    assert repr(BudgetAccountant(rho=1.0)) == (
        "BudgetAccountant(rho=1.0, n_fits=0, spent=PureDP(epsilon=0.0))"
    )


# --- estimators and searches ---------------------------------------------


def test_every_fit_of_an_estimator_is_recorded_and_refusal_happens_first():
    X = _rows()
    acc = BudgetAccountant(epsilon=1.0)
    est = GaussianCovariance(epsilon=0.4, delta=0.0, data_norm=1.0, accountant=acc)
    est.fit(X).fit(X)
    assert acc.ledger == [("GaussianCovariance", PureDP(0.4))] * 2
    with pytest.raises(BudgetExceeded) as exc:
        est.fit(X)
    # The message carries the guarantee and the cap, nothing from the data.
    message = str(exc.value)
    assert "PureDP(epsilon=0.4)" in message and "epsilon=1.2" in message
    assert len(acc) == 2


def test_fits_refused_by_public_checks_or_validation_are_not_recorded():
    # n < the private radius's minimum: refused from public values, before
    # the fit is recorded; NaN input: refused by validation, not recorded.
    acc = BudgetAccountant(epsilon=10.0)
    est = GaussianCovariance(epsilon=1.0, delta=0.0, accountant=acc)
    with pytest.raises(ValueError, match="samples"):
        est.fit(_rows(n=20))
    X = _rows()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(X)
    assert len(acc) == 0


@pytest.mark.parametrize(
    "estimator, X",
    [
        # the private radius needs more rows at this budget (PCA delegates it)
        (PCA(2, epsilon=0.1), _rows(n=50)),
        # KLSU needs 6 rows; 5 pass validation
        (MultivariateGaussian(method="klsu"), _rows(n=5)),
        # n_components > n_features
        (EigenSamplingCovariance(n_components=5, data_norm=1.0), _rows(n=50)),
    ],
    ids=["pca-radius", "klsu-rows", "eigen-components"],
)
def test_public_refusals_inside_fit_are_not_recorded(estimator, X):
    acc = BudgetAccountant()
    with pytest.raises(ValueError):
        clone(estimator).set_params(accountant=acc).fit(X)
    assert len(acc) == 0


def test_a_fit_that_fails_after_it_read_the_data_stays_recorded():
    # Random rows lie near no line: the private answer is bottom, after the
    # private steps ran, so the budget is spent.
    acc = BudgetAccountant(epsilon=10.0, delta=1e-6)
    est = ApproximateSubspace(n_components=1, accountant=acc, random_state=0)
    with pytest.raises(NoPrivateResult):
        est.fit(np.random.default_rng(0).normal(size=(4000, 5)))
    assert acc.ledger == [("ApproximateSubspace", ApproxDP(1.0, 1e-6))]


def test_pca_charges_once_and_refuses_an_inner_accountant():
    acc = BudgetAccountant(delta=1e-6)
    PCA(2, data_norm=1.0, accountant=acc).fit(_rows())
    assert len(acc) == 1 and acc.ledger[0][0] == "PCA"
    inner = SeparateCovariance(accountant=BudgetAccountant())
    with pytest.raises(ValueError, match="accountant"):
        PCA(2, data_norm=1.0, covariance=inner).fit(_rows())


def _search(accountant=None, n_jobs=None):
    est = SeparateCovariance(data_norm=1.0, eigenvalue_floor="auto")
    if accountant is not None:
        est.set_params(accountant=accountant)
    return GridSearchCV(
        est, {"epsilon": [0.5, 1.0, 2.0]}, cv=3, n_jobs=n_jobs, error_score="raise"
    )


def _gaussian_rho(epsilon):
    return GaussianDP(gaussian_mu(epsilon, 1e-6)).to_zcdp().rho


def test_grid_search_n_jobs_1_records_every_fit():
    acc = BudgetAccountant(delta=1e-6)
    search = _search(acc).fit(_rows())
    assert len(acc) == 3 * 3 + 1
    # SeparateCovariance with data_norm is Gaussian only: each fit at
    # (epsilon, 1e-6) runs at the analytic Gaussian's mu, mu**2 / 2 in zCDP.
    expected = sum(3 * _gaussian_rho(e) for e in (0.5, 1.0, 2.0))
    expected += _gaussian_rho(search.best_params_["epsilon"])
    assert math.isclose(acc.rho, expected, rel_tol=1e-9)
    # search_cost recomputes the same ledger from cv_results_.
    cost = search_cost(search)
    assert len(cost) == len(acc) and math.isclose(cost.rho, acc.rho, rel_tol=1e-12)


def test_grid_search_is_refused_midway_by_a_cap():
    acc = BudgetAccountant(epsilon=2.0, delta=1e-6)
    with pytest.raises(BudgetExceeded):
        _search(acc).fit(_rows())
    assert 0 < len(acc) < 10
    assert acc.epsilon <= 2.0


def test_unfitted_search_cost_bounds_the_search_before_it_reads_data():
    planned = search_cost(_search())
    # 3 candidates x 3 splits + a refit charged at the costliest candidate.
    assert len(planned) == 10
    assert planned.ledger[-1][1] == GaussianDP(gaussian_mu(2.0, 1e-6))
    acc = BudgetAccountant(delta=1e-6)
    fitted = search_cost(_search(acc).fit(_rows()))
    assert planned.rho >= fitted.rho
    with pytest.raises(BudgetExceeded):
        BudgetAccountant(epsilon=3.0, delta=1e-6).check(planned)
    BudgetAccountant(epsilon=6.0, delta=1e-6).check(planned)


@pytest.mark.slow
def test_search_with_processes_needs_search_cost():
    # With n_jobs=2 the fits run in worker processes on pickled copies of the
    # accountant, which refuse them. The refusal is the search's own error,
    # not "All the 9 fits failed" (with the default error_score, which turns
    # any Exception of a fit into a NaN score), and so it is through
    # cross_validate. Without an accountant the search runs and search_cost
    # counts its 10 fits.
    acc = BudgetAccountant(delta=1e-6)
    with pytest.raises(AccountantCopyError, match="pickled copy"):
        _search(acc, n_jobs=2).set_params(error_score=np.nan).fit(_rows())
    est = SeparateCovariance(data_norm=1.0, accountant=acc)
    with pytest.raises(AccountantCopyError, match="pickled copy"):
        cross_validate(est, _rows(), cv=3, n_jobs=2)
    assert len(acc) == 0
    search = _search(n_jobs=2).fit(_rows())
    cost = search_cost(search, delta=1e-6)
    assert len(cost) == 10
    # Its printout states the total (epsilon, delta) guarantee.
    assert repr(cost).endswith(
        f"spent=ApproxDP(epsilon={cost.epsilon!r}, delta=1e-06))"
    )


def test_search_cost_walks_pipelines_and_randomized_searches():
    pipe = make_pipeline(
        FunctionTransformer(), PCA(2, data_norm=1.0, delta=0.0, epsilon=0.5)
    )
    search = RandomizedSearchCV(
        pipe,
        {"pca__epsilon": [0.25, 0.5, 1.0]},
        n_iter=2,
        cv=2,
        random_state=0,
    ).fit(_rows())
    cost = search_cost(search)
    assert len(cost) == 2 * 2 + 1
    eps = [p["pca__epsilon"] for p in search.cv_results_["params"]]
    expected = 2 * sum(eps) + search.best_params_["pca__epsilon"]
    assert isinstance(cost.total(), PureDP)
    assert math.isclose(cost.total().epsilon, expected)
    assert all(label.startswith("PCA") for label, _ in cost.ledger)


def test_search_cost_of_an_approx_only_estimator():
    grid = GridSearchCV(
        ApproximateSubspace(n_components=1, delta=1e-6),
        {"epsilon": [1.0, 2.0]},
        cv=2,
    )
    cost = search_cost(grid)
    assert len(cost) == 5
    assert cost.ledger[-1][1] == ApproxDP(2.0, 1e-6)
    # (epsilon, delta) fits add both: 2 splits x (1 + 2) + a refit at 2.
    assert math.isclose(cost.epsilon_at(5e-6), 8.0)
    assert cost.epsilon_at(4e-6) == math.inf


def test_search_cost_refuses_what_it_cannot_count():
    with pytest.raises(TypeError, match="fitted search"):
        search_cost(SeparateCovariance())
    mixed = GridSearchCV(
        make_pipeline(
            PCA(1, data_norm=1.0), ApproximateSubspace(n_components=1, delta=1e-6)
        ),
        {"pca__epsilon": [1.0, 2.0]},
        cv=2,
    )
    with pytest.raises(ValueError, match="zCDP"):
        search_cost(mixed)


def test_search_cost_counts_column_transformer_and_feature_union_steps():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion

    pca = PCA(1, data_norm=1.0, delta=0.0, epsilon=0.5)
    inner = ColumnTransformer([("pca", pca, [0, 1, 2])])
    union = FeatureUnion([("a", pca), ("b", clone(pca))])
    for composite, n_private in ((inner, 1), (union, 2)):
        search = GridSearchCV(
            make_pipeline(composite, FunctionTransformer()), {}, cv=2, refit=False
        )
        cost = search_cost(search)
        assert len(cost) == 2 * n_private
        assert cost.total() == PureDP(2 * n_private * 0.5)


def test_search_cost_refuses_what_may_fit_several_times_or_is_not_a_grid():
    from sklearn.ensemble import BaggingRegressor
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingGridSearchCV, KFold

    bagged = GridSearchCV(BaggingRegressor(SeparateCovariance(data_norm=1.0)), {}, cv=2)
    with pytest.raises(ValueError, match="several times"):
        search_cost(bagged)
    halving = HalvingGridSearchCV(
        SeparateCovariance(data_norm=1.0), {"epsilon": [1.0, 2.0]}, cv=2
    )
    with pytest.raises(TypeError, match="unfitted GridSearchCV"):
        search_cost(halving)
    splits = iter(KFold(2).split(_rows()))
    with pytest.raises(ValueError, match="iterable of splits"):
        search_cost(GridSearchCV(SeparateCovariance(data_norm=1.0), {}, cv=splits))
    assert len(list(splits)) == 2  # not consumed


def test_reported_total_never_drops_when_a_fit_is_added():
    # 100 pure fits under an (epsilon, delta) cap are counted at the better of
    # the epsilon sum and the zCDP conversion, as they are next to zCDP fits.
    acc = BudgetAccountant(delta=1e-6)
    for _ in range(100):
        acc.spend(PureDP(0.01))
    alone = acc.epsilon
    assert math.isclose(alone, min(1.0, zcdp_epsilon(100 * 0.01**2 / 2, 1e-6)))
    acc.spend(ZCDP(1e-12))
    assert acc.epsilon >= alone


def test_total_without_a_delta_cap_reports_at_the_fits_deltas():
    cost = BudgetAccountant().spend(ApproxDP(1.0, 1e-6)).spend(ApproxDP(2.0, 1e-6))
    assert cost.total() == ApproxDP(3.0, 2e-6)


# --- pipeline_cost ---------------------------------------------------------
def _labelled(n=400, d=3, seed=0):
    X = _rows(n, d, seed)
    return X, (X[:, 0] > 0).astype(int)


def test_pipeline_cost_adds_the_private_steps():
    from sklearn.linear_model import LogisticRegression

    pipe = make_pipeline(
        StandardScaler(rho=0.1, bounds=(-1.0, 1.0), random_state=0),
        PCA(2, rho=0.25, data_norm=2.0, random_state=0),
        LogisticRegression(),
    )
    assert pipeline_cost(pipe) == ZCDP(0.35)  # before fitting: the parameters
    pipe.fit(*_labelled())
    # After: the fits' guarantees (a split's parts are rounded down, so the
    # composition may be an ulp below the parameters, never above).
    spent = pipeline_cost(pipe)
    assert math.isclose(spent.rho, 0.35) and spent.rho <= 0.35
    # The total converts like any zCDP guarantee.
    assert math.isclose(
        pipeline_cost(pipe).to_approx_dp(1e-6).epsilon, zcdp_epsilon(0.35, 1e-6)
    )
    # Pure steps add their epsilons; a pure step among zCDP ones counts
    # epsilon^2 / 2.
    pure = make_pipeline(
        BoundsScaler(bounds=(-1.0, 1.0)),
        StandardScaler(epsilon=0.5, delta=0.0, bounds=(-1.0, 1.0)),
        PCA(2, epsilon=1.0, delta=0.0, data_norm=2.0),
    )
    assert pipeline_cost(pure) == PureDP(1.5)
    mixed = make_pipeline(
        StandardScaler(epsilon=1.0, delta=0.0, bounds=(-1.0, 1.0)),
        PCA(2, rho=0.25, data_norm=2.0),
    )
    assert pipeline_cost(mixed) == ZCDP(0.75)
    # A single estimator is its own pipeline.
    assert pipeline_cost(PCA(2, rho=0.2, data_norm=1.0)) == ZCDP(0.2)


def test_fitted_pipeline_counts_what_its_fits_spent():
    # Once fitted, each step counts its guarantee_, not its current
    # parameters (changed after the fit here, without refitting).
    pipe = make_pipeline(
        StandardScaler(rho=0.1, bounds=(-1.0, 1.0), random_state=0),
        PCA(2, rho=0.2, data_norm=2.0, random_state=0),
    ).fit(_rows())
    pipe.set_params(pca__rho=5.0)
    assert math.isclose(pipeline_cost(pipe).rho, 0.1 + 0.2)
    assert pipeline_cost(clone(pipe)) == ZCDP(0.1 + 5.0)


def test_pipeline_cost_walks_unions_and_column_transformers():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion

    scaler = StandardScaler(rho=0.1, bounds=(-1.0, 1.0), random_state=0)
    columns = ColumnTransformer(
        [
            ("scale", scaler, [0, 1]),
            ("pca", PCA(1, rho=0.2, data_norm=1.0, random_state=0), [1, 2]),
        ]
    )
    union = FeatureUnion([("a", clone(scaler)), ("b", clone(scaler))])
    pipe = make_pipeline(union, columns)
    assert pipeline_cost(pipe) == ZCDP(0.5)
    pipe.fit(_rows())
    # The fitted ColumnTransformer's fitted clones (transformers_) count, not
    # its unfitted originals (transformers), changed here after the fit.
    pipe[-1].set_params(pca__rho=5.0)
    assert math.isclose(pipe[-1].named_transformers_["pca"].guarantee_.rho, 0.2)
    assert math.isclose(pipeline_cost(pipe).rho, 0.5)
    assert pipeline_cost(clone(pipe)) == ZCDP(5.3)


def test_pipeline_cost_refuses_what_it_cannot_count():
    from sklearn.ensemble import BaggingRegressor

    with pytest.raises(ValueError, match="holds no dpcov estimator"):
        pipeline_cost(make_pipeline(FunctionTransformer(), BoundsScaler()))
    bagged = make_pipeline(BaggingRegressor(SeparateCovariance(data_norm=1.0)))
    with pytest.raises(ValueError, match="several times; pipeline_cost counts"):
        pipeline_cost(bagged)
    approx = make_pipeline(
        StandardScaler(bounds=(-1.0, 1.0)), ApproximateSubspace(n_components=1)
    )
    with pytest.raises(
        ValueError, match="cannot compose zCDP or Gaussian DP with approximate"
    ):
        pipeline_cost(approx)


def test_a_person_ledger_refuses_row_level_fits_before_reading():
    # A person-level guarantee protects each row too (a row replaced is one
    # person's rows changed), so a row ledger records both; a row-level fit
    # does not protect a person with several rows, so a person ledger
    # refuses it before the fit reads anything, and records nothing.
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(500), 3)
    X = rng.uniform(-0.5, 0.5, size=(1500, 3))
    persons = BudgetAccountant(epsilon=4.0, delta=1e-6, unit="person")
    rows = BudgetAccountant(epsilon=4.0, delta=1e-6)
    for accountant in (persons, rows):
        SeparateCovariance(
            data_norm=1.0, max_rows_per_group=3, accountant=accountant
        ).fit(X, groups=groups)
    with pytest.raises(BudgetExceeded, match="does not protect a person"):
        SeparateCovariance(data_norm=1.0, accountant=persons).fit(X)
    SeparateCovariance(data_norm=1.0, accountant=rows).fit(X)
    assert persons.units == ["person"] and rows.units == ["person", "row"]
    assert len(persons) == 1
    # An accountant's ledger spent into another keeps its units.
    assert BudgetAccountant(unit="row").spend(rows).units == ["person", "row"]
    with pytest.raises(BudgetExceeded, match="unit='person'"):
        BudgetAccountant(unit="person").spend(rows)
    with pytest.raises(ValueError, match="unit must be"):
        BudgetAccountant(unit="group")


def test_a_gaussian_filter_counts_on_the_exact_curve():
    # gaussian_only=True: a cap in (epsilon, delta) on the composed mu of
    # Gaussian-DP fits (Smith and Thakurta 2022: a filter on sum mu_i**2
    # holds under fully adaptive composition). Its fits run on the exact
    # curve: one asked at the cap fits, a second does not; what remaining()
    # gives fits exactly; a fit with other steps is refused unread.
    X = _rows()
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6, gaussian_only=True)
    est = GaussianCovariance(data_norm=1.0, accountant=acc, random_state=0)
    est.fit(X)
    assert acc.ledger == [("GaussianCovariance", GaussianDP(gaussian_mu(1.0, 1e-6)))]
    assert acc.epsilon <= 1.0
    with pytest.raises(BudgetExceeded, match="mu="):
        est.fit(X)
    acc = BudgetAccountant(epsilon=2.0, delta=1e-6, gaussian_only=True)
    SeparateCovariance(data_norm=1.0, accountant=acc, random_state=0).fit(X)
    left = acc.remaining()
    assert isinstance(left, GaussianDP) and left.mu > 0
    assert acc.spend(left).epsilon <= 2.0
    with pytest.raises(BudgetExceeded, match="Gaussian-DP filter"):
        # (An input that fails on any read: the refusal comes first.)
        AdaptiveCovariance(epsilon=0.01, data_norm=1.0, accountant=acc).fit(
            _Unreadable()
        )
    assert len(acc) == 2
    for cap in ({}, {"epsilon": 1.0}, {"rho": 1.0}):
        with pytest.raises(ValueError, match="gaussian_only"):
            BudgetAccountant(**cap, gaussian_only=True)
