"""Hardened noise: the switch, the estimators that run on it, the weakness it closes."""

import inspect
import math
import os
import subprocess
import sys
import threading
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone

import dpcov
from dpcov.accounting import ZCDP, BudgetAccountant, PureDP
from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.covariance._gauss import gauss_noise
from dpcov.decomposition import PCA, ApproximateSubspace, ExactSubspace
from dpcov.distributions import MultivariateGaussian, ProductBernoulli
from dpcov.exceptions import NoHardenedSampler, NoPrivateResult
from dpcov.mechanisms import _discrete, _noise, calibrate_additive, run_count_pmf
from dpcov.mechanisms._radius import (
    DEFAULT_RADIUS_GRID,
    exponential_radius_accuracy,
    exponential_radius_probabilities,
    exponential_radius_scores,
    private_radius_exponential,
    private_radius_from_counts,
    radius_counts,
)
from dpcov.mechanisms._sparse_vector import above_threshold_scales
from dpcov.model_selection import PrivateSearchCV, search_cost
from dpcov.model_selection import _search as search_module
from dpcov.preprocessing import StandardScaler

from .mechanisms._samplers import SeededSource, chi_square_pvalue

HARDENED = {
    "GaussianCovariance": lambda: GaussianCovariance(epsilon=1.0),
    "GaussianCovariance-pure": lambda: GaussianCovariance(epsilon=1.0, delta=0.0),
    "SeparateCovariance": lambda: SeparateCovariance(epsilon=1.0),
    "SeparateCovariance-pure": lambda: SeparateCovariance(epsilon=1.0, delta=0.0),
    "AdaptiveCovariance": lambda: AdaptiveCovariance(epsilon=1.0),
    "AdaptiveCovariance-pure": lambda: AdaptiveCovariance(epsilon=1.0, delta=0.0),
    "PCA": lambda: PCA(n_components=2, epsilon=1.0),
    "PCA-pure": lambda: PCA(n_components=2, epsilon=1.0, delta=0.0),
    "PCA-separate": lambda: PCA(n_components=2, covariance=SeparateCovariance()),
    "MultivariateGaussian": lambda: MultivariateGaussian(epsilon=1.0),
    "ProductBernoulli-ppde": lambda: ProductBernoulli(epsilon=1.0, binarize=0.0),
    "ProductBernoulli-gaussian": lambda: ProductBernoulli(
        epsilon=1.0, method="gaussian", binarize=0.0
    ),
    "StandardScaler": lambda: StandardScaler(epsilon=1.0, bounds=(-10.0, 10.0)),
}
REFUSED = {
    "EigenSamplingCovariance": lambda: EigenSamplingCovariance(data_norm=10.0),
    "NuclearLaplaceCovariance": lambda: NuclearLaplaceCovariance(data_norm=10.0),
    "PCA-top_k": lambda: PCA(n_components=2, covariance="top_k", data_norm=10.0),
    "PCA-eigen": lambda: PCA(n_components=2, covariance=EigenSamplingCovariance()),
    "ExactSubspace": lambda: ExactSubspace(n_components=1),
    "ApproximateSubspace": lambda: ApproximateSubspace(n_components=1),
    "MultivariateGaussian-klsu": lambda: MultivariateGaussian(method="klsu"),
}


@pytest.fixture
def seeded(monkeypatch, global_random_seed):
    monkeypatch.setattr(_discrete, "_source", SeededSource(global_random_seed))


def _data(seed=0, n=6000):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 3)) * [2.0, 1.0, 0.3] + [1.0, -1.0, 0.5]


# --- the switch ---------------------------------------------------------------


def test_config_default_and_context():
    assert dpcov.get_config() == {"secure_noise": False, "binned_reads": True}
    with dpcov.config_context(secure_noise=True):
        assert dpcov.get_config()["secure_noise"]
        with dpcov.config_context(secure_noise=False):
            assert not dpcov.get_config()["secure_noise"]
        assert dpcov.get_config()["secure_noise"]
    assert not dpcov.get_config()["secure_noise"]
    with pytest.raises(RuntimeError), dpcov.config_context(secure_noise=True):
        raise RuntimeError
    assert not dpcov.get_config()["secure_noise"]
    with pytest.raises(TypeError, match="bool"):
        dpcov.set_config(secure_noise=1)
    with (
        pytest.raises(TypeError, match="bool"),
        dpcov.config_context(secure_noise="yes"),
    ):
        pass


@pytest.mark.parametrize("backend", ["threading", "loky"])
def test_a_search_under_the_switch_hardens_every_fit(backend):
    # config_context is the caller thread's: a search's workers (threads or
    # processes) do not see it, and joblib dispatches all but the first
    # 2 * n_jobs tasks from a thread of its own. The search clones its
    # estimator once in the caller's thread, then each task's from that
    # clone, which keeps the switch on. Without that the workers drew
    # numpy's noise on the exact Gaussian curve (GaussianDP) while
    # search_cost, planned in the block, counted hardened zCDP fits. Nine
    # fits on two workers, so most are dispatched from joblib's thread; with
    # the threading backend the shared accountant sees every fit.
    joblib = pytest.importorskip("joblib")
    from sklearn.model_selection import GridSearchCV

    X = _data(n=3000)
    accountant = BudgetAccountant() if backend == "threading" else None
    est = GaussianCovariance(data_norm=4.0, epsilon=1.0, accountant=accountant)
    grid = {"epsilon": [0.5, 1.0, 2.0]}
    with dpcov.config_context(secure_noise=True):
        planned = search_cost(GridSearchCV(est, grid, cv=3, n_jobs=2))
        with joblib.parallel_backend(backend):  # (parallel_config: joblib >= 1.3)
            search = GridSearchCV(est, grid, cv=3, n_jobs=2).fit(X)
    assert search.best_estimator_.noise_sampler_ == "discrete"
    if accountant is not None:
        assert len(accountant) == 10  # nine split fits and the refit
        assert {type(g) for _, g in accountant.ledger} == {ZCDP}
        # The same split fits as planned (in the order they finished), and
        # the refit, last, at most the planned one (the costliest candidate:
        # the best is not known before the search).
        spent = [g.rho for _, g in accountant.ledger]
        plan = [g.rho for _, g in planned.ledger]
        assert sorted(spent[:-1]) == sorted(plan[:-1])
        assert spent[-1] <= plan[-1]


def test_a_clone_of_a_hardened_clone_stays_hardened():
    # (What a search's later tasks are, dispatched outside the block.)
    with dpcov.config_context(secure_noise=True):
        first = clone(GaussianCovariance(data_norm=4.0, epsilon=1.0))
    second = clone(first)
    assert type(second.privacy_cost()) is ZCDP
    assert second.fit(_data(n=2000)).noise_sampler_ == "discrete"


def test_the_clone_only_turns_the_switch_on():
    est = GaussianCovariance(data_norm=4.0, epsilon=1.0)
    outside = clone(est)
    with dpcov.config_context(secure_noise=True):
        inside = clone(est)
        assert type(outside.privacy_cost()) is ZCDP  # (the block's own)
    assert type(outside.privacy_cost()) is not ZCDP  # the exact curve
    assert type(inside.privacy_cost()) is ZCDP
    assert inside.fit(_data(n=2000)).noise_sampler_ == "discrete"
    # A clone of the original outside the block follows the configuration.
    assert clone(est).fit(_data(n=2000)).noise_sampler_ == "numpy"
    assert "secure" not in str(inside.get_params())


def test_set_config_reaches_every_thread_and_context_stays_local():
    seen = {}

    def look(key):
        seen[key] = dpcov.get_config()["secure_noise"]

    try:
        dpcov.set_config(secure_noise=True)
        worker = threading.Thread(target=look, args=("global",))
        worker.start()
        worker.join()
    finally:
        dpcov.set_config(secure_noise=False)
    with dpcov.config_context(secure_noise=True):
        worker = threading.Thread(target=look, args=("context",))
        worker.start()
        worker.join()
    assert seen == {"global": True, "context": False}


def test_set_config_reaches_processes_started_afterwards(monkeypatch):
    # set_config writes DPCOV_SECURE_NOISE, which a new process reads.
    monkeypatch.setenv("DPCOV_SECURE_NOISE", "0")
    code = "import dpcov; print(dpcov.get_config()['secure_noise'])"
    try:
        dpcov.set_config(secure_noise=True)
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True
        )
    finally:
        dpcov.set_config(secure_noise=False)
    assert out.stdout.strip() == "True", out.stderr
    assert os.environ["DPCOV_SECURE_NOISE"] == "0"


def test_environment_variable_sets_the_process_default():
    # What a worker process (joblib's loky, multiprocessing) starts from.
    code = "import dpcov; print(dpcov.get_config()['secure_noise'])"
    env = {"DPCOV_SECURE_NOISE": "1", "PATH": ""}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    assert out.stdout.strip() == "True", out.stderr


# --- the weakness (Mironov, CCS 2012) ------------------------------------------


def _numpy_laplace_reachable(y):
    # Is y an output of numpy's Laplace sampler, loc 0 and scale 1? Its
    # draws are -log(2 - 2U) for U = k 2**-53 >= 1/2 (numpy's
    # random_laplace), increasing in k: a binary search over k finds the
    # smallest k whose draw is >= y, and y is reachable iff that draw is y.
    def draw(k):
        u = k * 2.0**-53
        return -math.log(2.0 - u - u)

    lo, hi = 2**52, 2**53 - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if draw(mid) < y:
            lo = mid + 1
        else:
            hi = mid
    return draw(lo) == y


def test_float_laplace_supports_differ_and_grid_supports_do_not():
    # A tiny release: a count x in {0, 1} (sensitivity 1) plus Laplace(1)
    # noise, as the numpy sampler computes it (x + noise). On x = 0 the
    # outputs in [1.5, 2) are exactly numpy's draws, and about half of the
    # floats there are no draw at all (the draws step by about 2.3 floats);
    # on x = 1 the sum 1 + noise reaches almost all of them. An output seen on
    # x = 1 that x = 0 cannot produce identifies the input with certainty.
    rng = np.random.default_rng(0)
    on_zero = _noise.add_laplace(rng, np.zeros(200_000), 1.0)
    on_one = _noise.add_laplace(rng, np.ones(200_000), 1.0)
    window = lambda y: y[(y >= 1.5) & (y < 2.0)][:300]  # noqa: E731
    # The oracle reproduces every output seen on x = 0 (a self-check of the
    # replica of numpy's sampler)...
    assert all(_numpy_laplace_reachable(y) for y in window(on_zero))
    # ... and rules out a good share of those seen on x = 1.
    impossible = [y for y in window(on_one) if not _numpy_laplace_reachable(y)]
    assert len(impossible) > 50

    # The grid sampler: every output on both inputs is a multiple of the
    # public step, and every multiple has positive probability under both
    # (the discrete Laplace charges every integer), so the supports agree.
    grid = _discrete.grid_noise("laplace", 1.0, 1.0, 1)
    with dpcov.config_context(secure_noise=True):
        a = np.array([_noise.add_laplace(None, 0.0, 1.0, 1.0) for _ in range(2000)])
        b = np.array([_noise.add_laplace(None, 1.0, 1.0, 1.0) for _ in range(2000)])
    for out in (a, b):
        steps = out / grid.step
        assert np.array_equal(steps, np.rint(steps))
    # Both supports are the whole grid: their integer offsets from the
    # rounded inputs are discrete Laplace draws, positive everywhere.
    offsets = np.concatenate([a / grid.step, b / grid.step - 1.0 / grid.step])
    assert np.all(_discrete.discrete_laplace_pmf(offsets, grid.scale) > 0)


# --- the mechanisms -----------------------------------------------------------


def test_additive_noise_under_the_switch_is_on_the_grid(seeded):
    # GaussCov's release of a 4 x 4 second moment: the upper triangle is
    # round(S / g) g + g Z, Z discrete Gaussian of scale t (grid_noise).
    S = np.arange(16.0).reshape(4, 4) / 7.0
    S = S + S.T
    noise = calibrate_additive(ZCDP(0.5), l2_sensitivity=0.01, l1_sensitivity=0.03)
    with dpcov.config_context(secure_noise=True):
        noisy = noise.add_symmetric(S, None)
    grid = _discrete.grid_noise("gaussian", noise.scale, 0.01, 10)
    assert np.array_equal(noisy, noisy.T)
    assert np.array_equal(noisy / grid.step, np.rint(noisy / grid.step))
    # Offsets from the rounded statistic: integers of s.d. t (10 draws: 5 se).
    rows, cols = np.triu_indices(4)
    z = (noisy - np.rint(S / grid.step) * grid.step)[rows, cols] / grid.step
    assert np.std(z) / grid.scale == pytest.approx(1.0, abs=5 * math.sqrt(0.5 / 10))


def test_above_threshold_with_infinite_values(seeded):
    # Infinite queries and thresholds are compared as they are.
    from dpcov.mechanisms import above_threshold

    with dpcov.config_context(secure_noise=True):
        assert (
            above_threshold([-np.inf, -np.inf, np.inf], 0.0, epsilon=1.0, rng=None) == 2
        )
        assert above_threshold([5.0, 9.0], np.inf, epsilon=1.0, rng=None) == 2
        assert above_threshold([-5.0, 1e9], -np.inf, epsilon=1.0, rng=None) == 0


def test_raw_floating_point_draws_refuse_under_the_switch():
    rng = np.random.default_rng(0)
    with dpcov.config_context(secure_noise=True):
        for draw in (
            lambda: _noise.gaussian(rng, 1.0, 3),
            lambda: _noise.laplace(rng, 1.0, 3),
            lambda: _noise.uniform(rng, 3),
            lambda: _noise.gamma(rng, 2.0, 1.0),
            lambda: _noise.truncated_laplace(rng, 1.0, 2.0),
            # (the logarithmic, geometric and Poisson laws have exact samplers)
            lambda: _noise.run_count(rng, 2.5, gamma=0.5),
            lambda: _noise.symmetric_matrix(rng, 3, 1.0),
            lambda: _noise.add_gaussian(rng, np.zeros(3), 1.0),  # no sensitivity
        ):
            with pytest.raises(NoHardenedSampler, match="secure_noise"):
                draw()
        # Post-processing draws (synthetic samples) are not affected.
        assert _noise.synthetic_gaussian(rng, 3).shape == (3,)


@pytest.mark.parametrize(
    "law, budget", [("gaussian", ZCDP(0.5)), ("laplace", PureDP(1.0))]
)
def test_hardened_noise_scale_closed_form(seeded, law, budget):
    # Under the switch the noise's s.d. is t g, within 2**-9 of the
    # continuous one (grid_noise): checked on 20,000 coordinates (4 se).
    noise = calibrate_additive(budget, l2_sensitivity=0.2, l1_sensitivity=0.2)
    with dpcov.config_context(secure_noise=True):
        noisy = noise.add(np.zeros(20_000), None)
    assert np.std(noisy) / noise.std == pytest.approx(
        1.0, abs=4 * math.sqrt(0.5 / 20_000) + 2**-9
    )


# --- the estimators -------------------------------------------------------------


def _fit_data(name):
    if name.startswith("ProductBernoulli"):
        rng = np.random.default_rng(0)
        return (rng.random((20_000, 4)) < [0.5, 0.3, 0.1, 0.02]).astype(float)
    return _data(n=20_000 if name == "MultivariateGaussian" else 6000)


@pytest.mark.parametrize("name", HARDENED)
def test_hardened_estimators_fit_and_record(seeded, name):
    X = _fit_data(name)
    accountant = BudgetAccountant()
    estimator = HARDENED[name]().set_params(accountant=accountant)
    with dpcov.config_context(secure_noise=True):
        estimator.fit(X)
        # (In zCDP under the switch: read where the fit ran.)
        cost = estimator.privacy_cost()
    assert estimator.noise_sampler_ == "discrete"
    # The guarantee is the one the parameters promise (its composition is at
    # most it, exactly in floating point), recorded once.
    spent = estimator.guarantee_
    assert type(spent) is type(cost)
    assert all(vars(spent)[k] <= v for k, v in vars(cost).items())
    assert len(accountant) == 1
    # The same estimator off the switch records numpy's sampler.
    plain = HARDENED[name]().set_params(random_state=0).fit(X)
    assert plain.noise_sampler_ == "numpy"


def test_hardened_release_is_as_accurate(seeded):
    # GaussCov's error under the switch matches the float sampler's: the
    # noise grows by at most 2**-9; over 10 fits each the mean Frobenius
    # errors agree within 25% (their spread at 10 fits is about 10%).
    X = _data(n=4000)
    X /= np.linalg.norm(X, axis=1).max()
    truth = np.cov(X.T, bias=True)
    params = dict(epsilon=1.0, data_norm=1.0)

    def error(secure, seed):
        with dpcov.config_context(secure_noise=secure):
            est = GaussianCovariance(random_state=seed, **params).fit(X)
        return np.linalg.norm(est.covariance_ - truth)

    plain = np.mean([error(False, s) for s in range(10)])
    hardened = np.mean([error(True, s) for s in range(10)])
    assert hardened == pytest.approx(plain, rel=0.25)


@pytest.mark.parametrize("name", REFUSED)
def test_estimators_without_exact_sampler_refuse_before_reading(name):
    accountant = BudgetAccountant()
    estimator = REFUSED[name]().set_params(accountant=accountant)
    with dpcov.config_context(secure_noise=True):
        with pytest.raises(NoHardenedSampler, match="no hardened sampler"):
            estimator.fit(_data())
    assert len(accountant) == 0
    assert not [key for key in vars(estimator) if key.endswith("_")]


def _unreadable():
    class Unreadable:
        def __array__(self, *args, **kwargs):
            raise AssertionError("the rows were read")

    return Unreadable()


@pytest.mark.parametrize("law", ["logarithmic", "geometric", "poisson"])
def test_private_search_runs_hardened(seeded, law):
    # The number of runs, the split, the candidates' noise and the score's
    # noise are exact; the search records the discrete sampler and releases
    # a model fitted on it. (n_iter=3 keeps the runs few; the Poisson law
    # may draw none, a private "no result" that spends the budget.)
    search = PrivateSearchCV(
        GaussianCovariance(data_norm=5.0),
        {"data_norm": [2.0, 5.0]},
        epsilon=2.0,
        n_iter=3,
        law=law,
        score_norm=5.0,
    )
    with dpcov.config_context(secure_noise=True):
        try:
            search.fit(_data())
        except NoPrivateResult:
            assert law == "poisson"
            return
    assert search.noise_sampler_ == "discrete"
    assert search.best_estimator_.noise_sampler_ == "discrete"
    assert search.best_estimator_.random_state is None
    assert search.epsilon_spent_ <= 2.0


@pytest.mark.slow
@pytest.mark.parametrize("law", ["logarithmic", "geometric", "poisson"])
def test_private_search_run_count_law_hardened(seeded, monkeypatch, law):
    # The search's number of runs under the switch (the candidates its plan
    # draws before reading any row) against run_count_pmf, by chi-square:
    # under the right law the p-value is uniform, so 1e-4 fails a seed with
    # probability 1e-4; a mean 50% larger is rejected (power check). 1,500
    # plans, about 3 ms each once the budget, a deterministic function of the
    # parameters that takes 0.5 s for the Poisson law, is computed once.
    search = PrivateSearchCV(
        GaussianCovariance(data_norm=5.0),
        {"data_norm": [2.0, 5.0]},
        n_iter=2.0,
        law=law,
        score_norm=5.0,
    )
    run_budget = search._run_budget()
    guarantee = search_module.selection_guarantee(
        run_budget, mean=2.0, law=law, delta=search.delta
    )
    monkeypatch.setattr(search, "_run_budget", lambda *args: run_budget)
    monkeypatch.setattr(
        search_module, "selection_guarantee", lambda *args, **kwargs: guarantee
    )
    with dpcov.config_context(secure_noise=True):
        rng = np.random.default_rng(0)  # the candidates' (public) draws
        counts = [len(search._plan(rng).candidates) for _ in range(1500)]
    pvalue = chi_square_pvalue(counts, lambda k: run_count_pmf(k, 2.0, law))
    assert pvalue > 1e-4
    wrong = chi_square_pvalue(counts, lambda k: run_count_pmf(k, 3.0, law))
    assert wrong < 1e-4


def test_private_search_refuses_what_has_no_exact_sampler():
    # A general negative binomial law, or a candidate without a hardened
    # sampler, refuses before any row is read or anything recorded; the
    # refusal checks every candidate the grid lists, so it does not depend on
    # the candidates drawn (a user who retried a random refusal would draw
    # the number of runs from another law than the guarantee's).
    accountant = BudgetAccountant()
    mixed = PrivateSearchCV(
        PCA(2, data_norm=5.0),
        {"covariance": [None, "top_k"]},
        n_iter=1,  # one run: a random refusal would pass half of the time
        accountant=accountant,
    )
    for _ in range(10):
        with dpcov.config_context(secure_noise=True):
            with pytest.raises(NoHardenedSampler, match="top_k|PCA"):
                mixed.fit(_unreadable())
    for search in (
        PrivateSearchCV(
            GaussianCovariance(data_norm=5.0),
            {"data_norm": [2.0, 5.0]},
            law=2.5,
            accountant=accountant,
            score_norm=5.0,
        ),
        PrivateSearchCV(
            EigenSamplingCovariance(data_norm=5.0),
            {"data_norm": [2.0, 5.0]},
            accountant=accountant,
            score_norm=5.0,
        ),
    ):
        with dpcov.config_context(secure_noise=True):
            with pytest.raises(NoHardenedSampler, match="secure_noise"):
                search.fit(_unreadable())
    assert len(accountant) == 0


def test_private_radius_runs_hardened(seeded):
    # Without data_norm the radius comes from the exact exponential mechanism
    # (or AboveThreshold on discrete Laplace noise); the rows have norms
    # about 2.4, so the radius is a grid point between 2 and 16.
    with dpcov.config_context(secure_noise=True):
        est = GaussianCovariance(epsilon=2.0).fit(_data())
    assert 2.0 <= est.data_norm_ <= 16.0
    assert math.log2(est.data_norm_).is_integer()


# --- the exact samplers' parameters, pinned to the float path's closed forms ----
#
# The tests above check what a hardened release looks like (on the grid, with
# the right spread). The tests below record what the exact samplers of
# _discrete are asked for (integer noise scales, scores, the exponential
# mechanism's coefficient) and compare it, in exact rationals where the code
# uses them, with the law of the float path that the switch replaces. A
# hardened mechanism that spends more than its share (an exponent doubled, a
# noise scale halved) fails here, in the fast lane, and not only in the slow
# lane's neighbour audits: test_pins_catch_planted_bugs plants such bugs and
# checks that every pin fails on them.

#: The exact samplers whose calls the sampler_calls fixture records.
_EXACT_SAMPLERS = ("discrete_laplace", "discrete_gaussian", "exponential_index")
#: integer_scale's relative margin: t = ceil(D b / sensitivity (1 + 2**-40)).
_MARGIN = 1 + _discrete.SCALE_MARGIN
#: AboveThreshold's queries in the direct tests: four finite, two infinite
#: (compared as they are, without noise).
_QUERIES = np.array([-3.0, 0.5, np.inf, 7.25, -np.inf, 2.0])


@pytest.fixture
def sampler_calls(monkeypatch, seeded):
    """The outermost calls of the exact samplers, in order, as argument dicts.

    _noise reaches the samplers as attributes of _discrete
    (``_discrete.exponential_index``, ``_discrete.discrete_laplace``) and
    integer_noise by their global names in _discrete, so replacing the module
    attributes catches both. The discrete Gaussian draws its proposals from
    discrete_laplace: those nested calls are no release, and are not kept.
    Every call goes on to the original sampler, fed by the seeded source, so
    the draws stay reproducible.
    """
    calls = []
    depth = [0]

    def record(name):
        original = getattr(_discrete, name)
        signature = inspect.signature(original)

        def recorded(*args, **kwargs):
            if depth[0] == 0:
                arguments = dict(signature.bind(*args, **kwargs).arguments)
                if "scores" in arguments:  # a copy: the caller owns the array
                    arguments["scores"] = np.array(arguments["scores"], dtype=float)
                calls.append({"sampler": name, **arguments})
            depth[0] += 1
            try:
                return original(*args, **kwargs)
            finally:
                depth[0] -= 1

        monkeypatch.setattr(_discrete, name, recorded)

    for name in _EXACT_SAMPLERS:
        record(name)
    return calls


def _only(calls, sampler):
    return [call for call in calls if call["sampler"] == sampler]


def _assert_exponential_law(call, counts, n_samples, epsilon):
    """The exact radius draw has the float path's law, ``exp(epsilon s_j / 2)``."""
    assert call["sampler"] == "exponential_index"
    # The radius scores have sensitivity 1 (exponential_radius_scores: a max
    # of 1-Lipschitz counts), so the coefficient is epsilon / (2 * 1)
    # (McSherry and Talwar 2007; exponential_index's docstring). The exact
    # sampler reads the float as the rational it is: only equality is the
    # same mechanism.
    assert call["coefficient"] == epsilon / (2.0 * 1.0)
    _, k = exponential_radius_accuracy(epsilon)
    assert_array_equal(call["scores"], exponential_radius_scores(counts, n_samples, k))
    # The law exponential_index samples, softmax(c s), against the float
    # path's closed form. Both are float computations of the same logits
    # (halving is exact), so they agree to a few ulps; rtol=1e-9 is slack for
    # a different order of operations, and a doubled coefficient moves each
    # probability by a factor exp(epsilon |s_j - s_i| / 2) for some i, far
    # more (the scores here differ by 1 or more).
    logits = call["coefficient"] * call["scores"]
    law = np.exp(logits - logits.max())
    assert_allclose(
        law / law.sum(),
        exponential_radius_probabilities(counts, n_samples, epsilon=epsilon),
        rtol=1e-9,
        atol=0.0,
    )


def _assert_grid_step(step, scale, sensitivity, slack):
    # grid_noise's step: the largest power of two at most scale / 2**10 and
    # sensitivity / (2**10 slack) (these bounds give the 1 + 2**-9 below).
    refinement = _discrete.GRID_REFINEMENT
    assert refinement == 2**10
    assert math.frexp(step)[0] == 0.5  # a power of two
    bound = min(scale, sensitivity / slack) / refinement
    assert step <= bound < 2 * step


def _assert_above_threshold_scales(
    calls, *, threshold_scale, query_scale, sensitivity, n_finite
):
    """The exact AboveThreshold costs at most the float one (its scales b_T, b_q)."""
    query, threshold = calls[:2]  # drawn first: the queries, then the threshold
    assert query["sampler"] == threshold["sampler"] == "discrete_laplace"
    assert (query["size"], threshold["size"]) == (n_finite, 1)
    # noisy_above_threshold's docstring: the queries, rounded to the grid of
    # grid_noise("laplace", b_q, sensitivity, 1), are integers that move by
    # at most k = floor(D) between neighbours.
    grid = _discrete.grid_noise("laplace", query_scale, sensitivity, 1)
    k = math.floor(grid.sensitivity)
    s, g = Fraction(sensitivity), Fraction(grid.step)
    b_t, b_q = Fraction(threshold_scale), Fraction(query_scale)
    # The grid: a power of two 2**10 times finer than b_q and the
    # sensitivity; rounding moves a query by at most g / 2 on each side, so
    # D = sensitivity / g + 1.
    _assert_grid_step(g, b_q, s, slack=1)
    assert k == math.floor(s / g + 1)
    t_t, t_q = threshold["scale"], query["scale"]
    # Each noise covers k grid steps at the float path's rate b / sensitivity,
    # so the shifts of Dwork and Roth's proof (k for the threshold, 2k for the
    # returned query, Theorem 3.23) cost what the float path's shifts cost.
    assert t_t >= k * b_t / s
    assert t_q >= k * b_q / s
    assert Fraction(k, t_t) + 2 * Fraction(k, t_q) <= s / b_t + 2 * s / b_q
    # In original units the noise is at least the float path's (k g >=
    # sensitivity) and at most a little more: the grid is 2**10 times finer
    # than b_q and the sensitivity (grid_noise), so the rounding's extra step
    # in D = sensitivity / g + 1 adds at most 2**-10 of the scale and the
    # ceiling of integer_scale at most one step g <= b_q 2**-10: 1 + 2**-9 for
    # the queries. The threshold shares their grid, so its extra step is up
    # to g / b_t (2**-9 at AboveThreshold's b_q = 2 b_t: 1 + 3 2**-10 in all,
    # reached only when b_t < sensitivity, i.e. epsilon > 2).
    assert b_q <= t_q * g <= b_q * (1 + Fraction(1, 2**9)) * _MARGIN
    assert b_t <= t_t * g <= (b_t * (1 + Fraction(1, 2**10)) + g) * _MARGIN


def _assert_additive_release(call, noise, budget, n_coordinates, released=None):
    """The exact release of ``noise`` costs at most ``budget``, with as much noise."""
    assert call["sampler"] == f"discrete_{noise.law}"
    assert call["size"] == n_coordinates
    grid = _discrete.grid_noise(
        noise.law, noise.scale, noise.sensitivity, n_coordinates
    )
    t, g = call["scale"], Fraction(grid.step)
    b, s = Fraction(noise.scale), Fraction(noise.sensitivity)
    # Rounding m coordinates to the grid moves them by at most g / 2 each:
    # sqrt(m) <= ceil(sqrt(m)) steps in L2, m in L1 (the triangle inequality).
    if noise.law == "gaussian":
        slack = math.isqrt(n_coordinates - 1) + 1  # ceil(sqrt(m))
    else:
        slack = n_coordinates
    _assert_grid_step(g, b, s, slack)
    assert grid.sensitivity == s / g + slack
    # grid_noise's bound on the noise in original units: at least the float
    # path's scale, and at most 1 + 2**-9 times it (the grid is 2**10 times
    # finer than the scale and the sensitivity per coordinate: 2**-10 from
    # the rounding slack in D, 2**-10 from the ceiling to whole steps).
    assert b <= t * g <= b * (1 + Fraction(1, 2**9)) * _MARGIN
    # The exact guarantee of the recorded scale is at most the continuous
    # mechanism's, and at most the budget share itself: integer_scale's 2**-40
    # margin covers the rounding of the float scale (sensitivity / sqrt(2 rho)
    # or sensitivity / epsilon, a few ulps).
    exact = _discrete.GridNoise(noise.law, grid.step, t, grid.sensitivity).guarantee
    if noise.law == "gaussian":
        assert exact <= s**2 / (2 * b**2)
        assert exact <= Fraction(budget.rho)
    else:
        assert exact <= s / b
        assert exact <= Fraction(budget.epsilon)
    if released is not None:  # and the release lies on that grid
        steps = np.asarray(released) / grid.step
        assert_array_equal(steps, np.rint(steps))


# Each scenario runs a mechanism under the switch (recording into `calls`) and
# returns the pinning check, so that test_pins_catch_planted_bugs can run the
# same mechanism with a planted bug and expect the check to fail.


def _exponential_radius(calls):
    n = 1000
    counts = radius_counts(np.linalg.norm(_data(n=n), axis=1))
    with dpcov.config_context(secure_noise=True):
        private_radius_exponential(counts, n, epsilon=0.5, rng=None)

    def check():
        found = _only(calls, "exponential_index")
        assert len(found) == 1
        _assert_exponential_law(found[0], counts, n, 0.5)

    return check


def _estimator_exponential_radius(delta):
    def scenario(calls):
        # 500 rows are below the sparse vector's minimum at epsilon = 2 (about
        # 1,400 rows for its 1/8 share under pure DP, more under zCDP), above
        # the exponential mechanism's (about 140 for 3/16), so the fit finds
        # its radius with the exponential mechanism (covariance/_base.py).
        X = _data(n=500)
        with dpcov.config_context(secure_noise=True):
            est = GaussianCovariance(epsilon=2.0, delta=delta).fit(X)

        def check():
            found = _only(calls, "exponential_index")
            assert len(found) == 1
            # The epsilon of the share the fit records as spent (pure DP:
            # epsilon; zCDP: sqrt(8 rho), bounded range).
            epsilon = est.budget_split_["radius"].exponential_epsilon()
            counts = radius_counts(np.linalg.norm(X, axis=1))
            _assert_exponential_law(found[0], counts, X.shape[0], epsilon)

        return check

    return scenario


def _noisy_above_threshold(threshold_scale, query_scale, sensitivity):
    def scenario(calls):
        with dpcov.config_context(secure_noise=True):
            _noise.noisy_above_threshold(
                None,
                _QUERIES,
                1.0,
                threshold_scale=threshold_scale,
                query_scale=query_scale,
                sensitivity=sensitivity,
            )
        return lambda: _assert_above_threshold_scales(
            calls,
            threshold_scale=threshold_scale,
            query_scale=query_scale,
            sensitivity=sensitivity,
            n_finite=4,
        )

    return scenario


def _assert_dwork_roth_scales(calls, epsilon, sensitivity, n_finite):
    # The float path's AboveThreshold: Laplace(2 s / epsilon) on the
    # threshold, Laplace(4 s / epsilon) on each query (Dwork and Roth 2014,
    # Algorithm 1).
    b_t, b_q = 2.0 * sensitivity / epsilon, 4.0 * sensitivity / epsilon
    assert above_threshold_scales(epsilon, sensitivity) == (b_t, b_q)
    _assert_above_threshold_scales(
        calls,
        threshold_scale=b_t,
        query_scale=b_q,
        sensitivity=sensitivity,
        n_finite=n_finite,
    )


def _above_threshold(epsilon, sensitivity):
    def scenario(calls):
        with dpcov.config_context(secure_noise=True):
            dpcov.mechanisms.above_threshold(
                _QUERIES, 1.0, epsilon=epsilon, rng=None, sensitivity=sensitivity
            )
        return lambda: _assert_dwork_roth_scales(calls, epsilon, sensitivity, 4)

    return scenario


def _radius_above_threshold(calls):
    # The radius queries are counts (sensitivity 1), one per grid point.
    counts = radius_counts(np.linalg.norm(_data(), axis=1))
    with dpcov.config_context(secure_noise=True):
        private_radius_from_counts(counts, epsilon=0.25, rng=None)
    return lambda: _assert_dwork_roth_scales(calls, 0.25, 1.0, counts.shape[0])


def _estimator_above_threshold(calls):
    # 6,000 rows at epsilon = 2 (zCDP): the sparse vector finds the radius.
    X = _data()
    with dpcov.config_context(secure_noise=True):
        est = GaussianCovariance(epsilon=2.0).fit(X)

    def check():
        assert not _only(calls, "exponential_index")
        epsilon = est.budget_split_["radius"].pure_epsilon()
        _assert_dwork_roth_scales(calls, epsilon, 1.0, len(DEFAULT_RADIUS_GRID))

    return check


def _estimator_additive(delta):
    def scenario(calls):
        # data_norm given: no radius step; the private mean (d coordinates),
        # then the upper triangle of the second moment (d (d + 1) / 2).
        X = _data(n=2000)
        with dpcov.config_context(secure_noise=True):
            est = GaussianCovariance(
                epsilon=1.0, delta=delta, data_norm=4.0, store_raw=True
            ).fit(X)

        def check():
            n, d = X.shape
            assert len(calls) == 2
            split = est.budget_split_
            # The float path's noise, as the fit computes it: the mean of rows
            # of norm <= R (L2 sensitivity 2R/n, L1 2R sqrt(d)/n), then GaussCov
            # or LapCov on rows centred about the released mean.
            mean = calibrate_additive(
                split["mean"],
                l2_sensitivity=2.0 * 4.0 / n,
                l1_sensitivity=2.0 * 4.0 * np.sqrt(d) / n,
            )
            radius = 4.0 + float(np.linalg.norm(est.location_))
            covariance = gauss_noise(
                split["covariance"], n_samples=n, n_features=d, radius=radius
            )
            # ... whose scales have the closed forms of gauss_noise's
            # docstring (rel=1e-12: a few float roundings).
            if delta > 0:
                closed = radius**2 / (n * math.sqrt(split["covariance"].rho))
            else:
                closed = (
                    math.sqrt(d * (d + 3) / 2.0)
                    * radius**2
                    / (n * split["covariance"].epsilon)
                )
            assert covariance.scale == pytest.approx(closed, rel=1e-12)
            _assert_additive_release(calls[0], mean, split["mean"], d)
            _assert_additive_release(
                calls[1],
                covariance,
                split["covariance"],
                d * (d + 1) // 2,
                released=est.raw_covariance_[np.triu_indices(d)],
            )

        return check

    return scenario


_EXPONENTIAL = {
    "mechanism": _exponential_radius,
    "estimator-pure": _estimator_exponential_radius(0.0),
    "estimator-zcdp": _estimator_exponential_radius(1e-6),
}
_ABOVE_THRESHOLD = {
    "noisy_above_threshold": _noisy_above_threshold(2.0, 4.0, 1.0),
    # Scales in another ratio, and a sensitivity that is no power of two.
    "noisy_above_threshold-uneven": _noisy_above_threshold(5.0, 0.75, 0.3),
    "above_threshold": _above_threshold(0.5, 1.0),
    # b_T < sensitivity: the threshold's realised scale exceeds 1 + 2**-9.
    "above_threshold-large-epsilon": _above_threshold(3.97, 1.0),
    "above_threshold-sensitivity": _above_threshold(1.0, 2.5),
    "radius": _radius_above_threshold,
    "estimator": _estimator_above_threshold,
}
_ADDITIVE = {
    "estimator-zcdp": _estimator_additive(1e-6),
    "estimator-pure": _estimator_additive(0.0),
}


@pytest.mark.parametrize("scenario", _EXPONENTIAL)
def test_exact_exponential_radius_has_the_float_law(sampler_calls, scenario):
    _EXPONENTIAL[scenario](sampler_calls)()


@pytest.mark.parametrize("scenario", _ABOVE_THRESHOLD)
def test_exact_above_threshold_scales_closed_form(sampler_calls, scenario):
    _ABOVE_THRESHOLD[scenario](sampler_calls)()


@pytest.mark.parametrize("scenario", _ADDITIVE)
def test_exact_additive_scales_closed_form(sampler_calls, scenario):
    _ADDITIVE[scenario](sampler_calls)()


# Planted bugs: each wraps a call between the mechanism and the recorder (the
# wrapper is installed after sampler_calls, so it sees the mechanism's
# arguments and the recorder sees what it passes on).


def _double_the_exponent(monkeypatch):
    # _radius.private_radius_exponential with coefficient=epsilon: 2 eps-DP.
    original = _noise.exponential_choice

    def doubled(rng, probabilities, *, scores, coefficient):
        return original(
            rng, probabilities, scores=scores, coefficient=2.0 * coefficient
        )

    monkeypatch.setattr(_noise, "exponential_choice", doubled)


def _halve_laplace_call(index):
    # noisy_above_threshold with t_query (index 0, drawn first) or t_threshold
    # (index 1) halved. AboveThreshold draws the first discrete Laplace noise
    # of every scenario it runs in.
    def plant(monkeypatch):
        original = _discrete.discrete_laplace
        seen = [0]

        def halved(scale, size):
            if seen[0] == index:
                scale = max(1, scale // 2)
            seen[0] += 1
            return original(scale, size)

        monkeypatch.setattr(_discrete, "discrete_laplace", halved)

    return plant


def _halve_integer_noise(monkeypatch):
    # _hardened_release with the integer scale halved: 4 times the rho
    # (Gaussian), twice the epsilon (Laplace).
    original = _discrete.integer_noise

    def halved(law, scale, size):
        return original(law, max(1, scale // 2), size)

    monkeypatch.setattr(_discrete, "integer_noise", halved)


_PLANTED = {
    "exponent-doubled": (_double_the_exponent, _EXPONENTIAL),
    "query-scale-halved": (_halve_laplace_call(0), _ABOVE_THRESHOLD),
    "threshold-scale-halved": (_halve_laplace_call(1), _ABOVE_THRESHOLD),
    "integer-scale-halved": (_halve_integer_noise, _ADDITIVE),
}


@pytest.mark.parametrize(
    "bug, scenario",
    [(bug, name) for bug, (_, scenarios) in _PLANTED.items() for name in scenarios],
)
def test_pins_catch_planted_bugs(monkeypatch, sampler_calls, bug, scenario):
    # Bugs the fast lane once missed (a doubled exponent in the radius, a
    # halved AboveThreshold scale), and a halved additive scale: the
    # mechanism runs, and its pinning check fails.
    plant, scenarios = _PLANTED[bug]
    plant(monkeypatch)
    check = scenarios[scenario](sampler_calls)
    with pytest.raises(AssertionError):
        check()
