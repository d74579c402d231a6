"""The cost of hardened noise: fits with secure_noise=True against numpy's sampler.

``secure_noise``: each estimator fitted with numpy's sampler and with the exact
discrete samplers (``dpcov.config_context(secure_noise=True)``), interleaved
on the same rows (``n`` unit-norm rows, ``data_norm=1``, one BLAS thread);
``added s``: the time the hardened noise adds (best discrete minus best
numpy). The rows only enter the Gram pass, the same in both, so the added
time depends on ``d`` (``d (d + 1) / 2`` draws for a covariance), not on ``n``.

``secure_noise_samplers``: draws per second of the discrete Gaussian and
Laplace samplers at the scales (in grid steps) of a covariance release, in one
vectorised call; ``reference``: the sampler of Canonne, Kamath and Steinke
(``discretegauss.py``, one draw at a time in Python fractions), with
``--set reference=/path/to/checkout``.
"""

import importlib.util
import random
import time
from functools import lru_cache
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import dpcov
from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.decomposition import PCA
from dpcov.distributions import MultivariateGaussian, ProductBernoulli
from dpcov.mechanisms._discrete import discrete_gaussian, discrete_laplace

from ..harness import Study, TimingStudy
from ._covariance import quiet_fit

GIVEN = dict(data_norm=1.0, assume_centered=True, epsilon=1.0)
ESTIMATORS = {
    "GaussianCovariance": lambda: GaussianCovariance(**GIVEN),
    "GaussianCovariance (pure)": lambda: GaussianCovariance(**GIVEN, delta=0.0),
    "SeparateCovariance": lambda: SeparateCovariance(**GIVEN),
    "AdaptiveCovariance": lambda: AdaptiveCovariance(**GIVEN),
    "PCA (10 components)": lambda: PCA(n_components=10, epsilon=1.0),
    "MultivariateGaussian": lambda: MultivariateGaussian(epsilon=1.0),
    "ProductBernoulli": lambda: ProductBernoulli(epsilon=1.0, binarize=0.0),
}


@lru_cache(maxsize=1)
def _rows(n, d):
    X = np.random.default_rng(0).normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _fit(secure):
    def call(X, cell):
        with dpcov.config_context(secure_noise=secure):
            est = quiet_fit(ESTIMATORS[cell["estimator"]](), X)
        assert est.noise_sampler_ == ("discrete" if secure else "numpy")

    return call


class SecureNoiseStudy(TimingStudy):
    def execute(self, grid, options, repeats, n_jobs=1):
        rows = []
        with threadpool_limits(options["blas_threads"]):
            for d in grid["d"]:
                # MultivariateGaussian's public plan simulation dominates at large d.
                names = [e for e in grid["estimator"] if d <= 100 or "Multi" not in e]
                sub = {"d": [d], "estimator": names}
                rows += super().execute(sub, options, repeats)[0]
        for row in rows:
            row["added s"] = row["discrete s"] - row["numpy s"]
        return rows, self.table(rows, grid, repeats)


STUDY = SecureNoiseStudy(
    name="secure_noise",
    title=__doc__.splitlines()[0],
    caption="Fit time with numpy's sampler and with the exact discrete samplers",
    grid={"d": [100, 1000], "estimator": list(ESTIMATORS)},
    setup=lambda cell: _rows(cell["n"], cell["d"]),
    methods={"numpy": _fit(False), "discrete": _fit(True)},
    baseline="numpy",
    repeats=5,
    options={"n": 20_000, "blas_threads": 1},
    quick={"d": [20], "estimator": ["GaussianCovariance"], "n": 2_000, "repeats": 2},
)


@lru_cache
def _reference(path):
    spec = importlib.util.spec_from_file_location("discretegauss", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _dpcov_rate(data, cell, r):
    sampler = discrete_gaussian if cell["law"] == "gaussian" else discrete_laplace
    start = time.perf_counter()
    sampler(cell["scale"], cell["draws"])
    return cell["draws"] / (time.perf_counter() - start)


def _reference_rate(data, cell, r):
    if cell["reference"] is None:
        return np.nan
    module = _reference(str(Path(cell["reference"]) / "discretegauss.py"))
    rng, scale, size = random.SystemRandom(), cell["scale"], cell["reference_draws"]
    start = time.perf_counter()
    for _ in range(size):
        if cell["law"] == "gaussian":
            module.sample_dgauss(scale * scale, rng)
        else:
            module.sample_dlaplace(scale, rng)
    return size / (time.perf_counter() - start)


SAMPLERS = Study(
    name="secure_noise_samplers",
    title="Draws per second of the exact discrete samplers, and of the reference.",
    caption="Draws per second",
    grid={"law": ["gaussian", "laplace"], "scale": [2**20, 2**30]},
    methods={"dpcov": _dpcov_rate, "reference": _reference_rate},
    repeats=3,
    summary="median",
    options={"draws": 500_500, "reference_draws": 5_000, "reference": None},
    quick={"scale": [2**20], "draws": 5_000, "reference_draws": 100, "repeats": 2},
)

STUDIES = [STUDY, SAMPLERS]
