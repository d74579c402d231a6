"""The shrinkage's closed forms against its bootstrap, on the same releases.

From ``d = 128`` a covariance fit takes the shrinkage's energies in closed
form (:mod:`dpcov.covariance._spectral_shrinkage`); below it, from a
parametric bootstrap. Each fit here computes both factors on its one
release and reports the relative Frobenius error ``||C_hat - C||_F /
||C||_F`` (``C``: the rows' covariance; the zero matrix scores 1) of the
release shrunk by each, their paired difference, and each one's factor
``s`` before the rule that applies it only below 1/2 (``signal_to_noise_``
is ``sqrt(s / (1 - s))``); mean with its standard error over the
repetitions (the same rows and release for both).
Rows: ``diag``, ``N(0, diag(1/j))`` with ``data_norm = sqrt(d) / 2``;
``spike``, ``N(0, 0.01 I)`` with three coordinates 100 times the variance,
``data_norm = 10``. Every estimator at ``epsilon = 1``, ``delta = 1e-6``.

``shrinkage_sampled``: the same for EigenSamplingCovariance, whose closed
form holds at every ``d`` (its bootstrap reruns the sampler), at ``d = 10``
and ``50``, pure DP (``delta = 0``) and zCDP (``delta = 1e-6``).
"""

import warnings

import numpy as np

from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    SeparateCovariance,
)
from dpcov.covariance._base import BasePrivateCovariance
from dpcov.covariance._shrinkage import applied_factor

from ..harness import Study, rst_table

ESTIMATORS = {
    "GaussCov": GaussianCovariance,
    "SeparateCov": SeparateCovariance,
    "AdaptiveCov": AdaptiveCovariance,
}


def _data(cell, r):
    n, d = cell["n"], cell["d"]
    rng = np.random.default_rng(r)
    if cell["data"] == "diag":
        X = rng.standard_normal((n, d)) / np.sqrt(np.arange(1, d + 1))
        norm = np.sqrt(d) / 2
    else:
        X = rng.standard_normal((n, d)) * 0.1
        X[:, :3] *= 10
        norm = 10.0
    return X, norm, np.cov(X.T, bias=True)


def _both_factors(fit):
    # The fit, with the bootstrap's factor computed on its own release too.
    seen = {}
    closed = BasePrivateCovariance._spectral_factor

    def spy(self, release, plan, estimate, slopes, project, weights, data_norm, **kw):
        # (Each returns the factor and the predicted noise energy.)
        out = closed(
            self, release, plan, estimate, slopes, project, weights, data_norm, **kw
        )
        mean_noise = self._mean_noise(plan, data_norm)
        seen["closed"] = out[0]
        seen["bootstrap"] = self._bootstrap_factor(
            release, estimate, weights, data_norm, mean_noise
        )[0]
        seen["estimate"], seen["project"] = estimate, project
        return out

    BasePrivateCovariance._spectral_factor = spy
    try:
        estimator = fit()
    finally:
        BasePrivateCovariance._spectral_factor = closed
    return estimator, seen


def _method(cls):
    def method(data, cell, r):
        X, norm, truth = data
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator, seen = _both_factors(
                lambda: cls(
                    epsilon=1.0,
                    delta=cell.get("delta", 1e-6),
                    data_norm=norm,
                    random_state=r,
                ).fit(X)
            )
        scale = np.linalg.norm(truth)
        estimate = seen["estimate"]
        shrunk = applied_factor(seen["bootstrap"])
        values = estimate.values
        if shrunk < 1.0:
            values = seen["project"](shrunk * estimate.values)
        bootstrap = estimate.matrix(values)
        closed = np.linalg.norm(estimator.covariance_ - truth) / scale
        boot = np.linalg.norm(bootstrap - truth) / scale
        return {
            "closed": closed,
            "bootstrap": boot,
            "difference": closed - boot,
            "closed s": seen["closed"],
            "bootstrap s": seen["bootstrap"],
        }

    return method


class ClosedFormStudy(Study):
    def table(self, rows, grid, repeats):
        text = [
            f"{self.caption} Mean of {repeats} repetitions ± one standard error.",
            "",
        ]
        for name in self.methods:
            columns = [f"{name} {c}" for c in COLUMNS]
            text += [f"**{name}**", "", rst_table(rows, [*grid, *columns]), ""]
        return "\n".join(text)


COLUMNS = ["closed", "bootstrap", "difference", "closed s", "bootstrap s"]

STUDY = ClosedFormStudy(
    name="shrinkage_closed_form",
    title=__doc__.splitlines()[0],
    caption="Relative error of the release shrunk by each factor, and the factors.",
    grid={
        "data": ["diag", "spike"],
        "n": [2000, 20_000, 200_000],
        "d": [128, 256],
    },
    data=_data,
    methods={name: _method(cls) for name, cls in ESTIMATORS.items()},
    repeats=10,
    docs="docs/user_guide/_bench_shrinkage_closed_form.rst",
    quick={"data": ["spike"], "n": [2000], "d": [128], "repeats": 2},
)

SAMPLED = ClosedFormStudy(
    name="shrinkage_sampled",
    title="The shrinkage's closed form against its bootstrap for sampled eigenvectors.",
    caption="Relative error of the release shrunk by each factor, and the factors.",
    grid={
        "data": ["diag", "spike"],
        "n": [1000, 10_000, 100_000],
        "d": [10, 50],
        "delta": [0.0, 1e-6],
    },
    data=_data,
    methods={"EigenSampling": _method(EigenSamplingCovariance)},
    repeats=10,
    docs="docs/user_guide/_bench_shrinkage_sampled.rst",
    quick={"data": ["spike"], "n": [1000], "d": [10], "delta": [0.0], "repeats": 2},
)

STUDIES = [STUDY, SAMPLED]
