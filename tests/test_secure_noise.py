"""Hardened noise: the switch, the estimators that run on it, the weakness it closes."""

import math
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import dpcov
from dpcov.accounting import ZCDP, BudgetAccountant, PureDP
from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA, ApproximateSubspace, ExactSubspace
from dpcov.distributions import MultivariateGaussian, ProductBernoulli
from dpcov.exceptions import NoHardenedSampler
from dpcov.mechanisms import _discrete, _noise, calibrate_additive
from dpcov.model_selection import PrivateSearchCV
from dpcov.preprocessing import StandardScaler

from .mechanisms.test_discrete import SeededSource

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
    assert dpcov.get_config() == {"secure_noise": False}
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
            lambda: _noise.run_count(rng, 1.0, gamma=0.5),
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
    assert estimator.noise_sampler_ == "discrete"
    # The guarantee is the one the parameters promise (its composition is at
    # most it, exactly in floating point), recorded once.
    cost, spent = estimator.privacy_cost(), estimator.guarantee_
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


def test_private_search_refuses():
    search = PrivateSearchCV(
        GaussianCovariance(data_norm=5.0), {"epsilon": [0.5, 1.0]}, epsilon=1.0
    )
    with dpcov.config_context(secure_noise=True):
        with pytest.raises(NoHardenedSampler, match="PrivateSearchCV"):
            search.fit(_data())


def test_private_radius_runs_hardened(seeded):
    # Without data_norm the radius comes from the exact exponential mechanism
    # (or AboveThreshold on discrete Laplace noise); the rows have norms
    # about 2.4, so the radius is a grid point between 2 and 16.
    with dpcov.config_context(secure_noise=True):
        est = GaussianCovariance(epsilon=2.0).fit(_data())
    assert 2.0 <= est.data_norm_ <= 16.0
    assert math.log2(est.data_norm_).is_integer()
