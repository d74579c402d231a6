"""What a wrong row-norm bound costs: error against data_norm / (largest row norm).

Relative Frobenius error ``||C_hat - C||_F / ||C||_F`` (``C`` the exact
covariance of the rows) of GaussianCovariance, SeparateCovariance and
AdaptiveCovariance with their defaults (a private mean, ``delta = 1e-6``) at
``data_norm = ratio * max_i ||x_i||`` (the largest norm places the grid; no
estimator reads it) and at ``ratio = private``, the private radius
(``data_norm=None``; ``radius``: the radius found over the largest norm).
Rows: ``n = 20000``, ``d = 20``, new in each repetition; ``gaussian``: ``z @ A``
with ``A`` uniform (the generator of Amin et al., 2019); ``zipf``:
``make_zipf_norms`` with four norm buckets (Dong, Liang and Yi, 2022).

The ``angles`` study is the sine of the angle between the top eigenvector of
each estimate and that of ``X.T @ X / n`` on unit-norm rows (``d = 10``,
``data_norm = 1``, ``assume_centered=True``): the exponential mechanism
against additive noise, under pure DP and zCDP.
"""

import math

import numpy as np

from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    SeparateCovariance,
)
from dpcov.datasets import make_zipf_norms
from dpcov.decomposition import PCA

from ..harness import Study, line_figure
from ._covariance import quiet_fit, rel_error

ESTIMATORS = [GaussianCovariance, SeparateCovariance, AdaptiveCovariance]


def _rows(cell, r):
    if cell["dataset"] == "zipf":
        return make_zipf_norms(20_000, 20, n_buckets=4, random_state=1000 * r + 7)
    rng = np.random.RandomState(1000 * r + 7)
    z = rng.standard_normal((20_000, 20))
    return z @ rng.uniform(size=(20, 20))


def _data(cell, r):
    X = _rows(cell, r)
    return X, np.cov(X.T, bias=True), float(np.linalg.norm(X, axis=1).max())


def _bound(j, cls):
    def method(data, cell, r):
        X, target, max_norm = data
        ratio = cell["ratio"]
        # The random_state of each fit is the old script's: 1000 r + 100 j + i,
        # i the index of the ratio on its grid of 2**(k / 2), k = -9 .. 10.
        i = 99 if ratio == "private" else round(2 * math.log2(ratio)) + 9
        est = cls(
            epsilon=cell["epsilon"], delta=1e-6, random_state=1000 * r + 100 * j + i
        )
        if ratio != "private":
            est.set_params(data_norm=ratio * max_norm)
        error = rel_error(quiet_fit(est, X).covariance_, target)
        radius = est.data_norm_ / max_norm if ratio == "private" else np.nan
        return {"error": error, "radius": radius}

    return method


def _method_name(cls):
    return cls.__name__[: -len("Covariance")] + "Cov"


ESTIMATOR_COLUMNS = {cls.__name__: f"{_method_name(cls)} error" for cls in ESTIMATORS}


def _private_levels(rows):
    # The private radius's median error, dashed, beside the fixed bounds.
    private = [r for r in rows if r["ratio"] == "private"]
    return {
        label: private[0][column][0] if private else None
        for label, column in ESTIMATOR_COLUMNS.items()
    }


def _figure(rows):
    return line_figure(
        rows,
        x="ratio",
        series=ESTIMATOR_COLUMNS,
        panel=lambda r: f"{r['dataset']} rows, epsilon = {r['epsilon']:g}",
        xlabel="data_norm / largest row norm",
        ylabel="relative Frobenius error",
        logx=True,
        logy=True,
        reference=(1.0, "zero matrix"),
        levels=_private_levels,
        levels_label="private radius (data_norm=None)",
    )


STUDY = Study(
    name="bounds",
    title=__doc__.splitlines()[0],
    caption="Relative Frobenius error against the row-norm bound (n = 20000, d = 20)",
    grid={
        "dataset": ["gaussian", "zipf"],
        "epsilon": [0.5, 2.0, 8.0],
        "ratio": [2.0**k for k in range(-4, 6)] + ["private"],
    },
    data=_data,
    methods={_method_name(cls): _bound(j, cls) for j, cls in enumerate(ESTIMATORS)},
    repeats=30,
    summary="median",
    quick={
        "dataset": ["gaussian"],
        "epsilon": [2.0],
        "ratio": [1.0, "private"],
        "repeats": 2,
    },
    docs="docs/user_guide/_bench_bounds.rst",
    figure=_figure,
    image="docs/_static/bench_bounds.png",
)

ANGLE_METHODS = {
    "EigenSampling pure": lambda e: EigenSamplingCovariance(epsilon=e, delta=0.0),
    "EigenSampling zCDP": lambda e: EigenSamplingCovariance(epsilon=e, delta=1e-6),
    "PCA top_k pure": lambda e: PCA(1, covariance="top_k", epsilon=e, delta=0.0),
    "Gaussian pure": lambda e: GaussianCovariance(epsilon=e, delta=0.0),
    "Gaussian zCDP": lambda e: GaussianCovariance(epsilon=e, delta=1e-6),
    "Separate pure": lambda e: SeparateCovariance(epsilon=e, delta=0.0),
}


def _angle_data(cell, r):
    X = make_zipf_norms(cell["n"], 10, n_buckets=1, random_state=1000 * r + 7)
    return X, np.linalg.eigh(X.T @ X / cell["n"])[1][:, -1]


def _sine(j, make):
    def method(data, cell, r):
        X, truth = data
        est = make(cell["epsilon"]).set_params(
            data_norm=1.0, assume_centered=True, random_state=1000 * r + 11 + j
        )
        quiet_fit(est, X)
        top = (
            est.components_[0]
            if isinstance(est, PCA)
            else np.linalg.eigh(est.covariance_)[1][:, -1]
        )
        cosine = abs(top @ truth) / np.linalg.norm(top)
        return float(np.sqrt(max(0.0, 1.0 - cosine**2)))

    return method


ANGLES = Study(
    name="angles",
    title="The exponential mechanism's angle error against additive noise.",
    caption="Sine of the top-eigenvector angle (d = 10, unit-norm rows)",
    grid={"n": [10_000, 100_000, 1_000_000], "epsilon": [1.0, 10.0]},
    data=_angle_data,
    methods={
        name: _sine(j, make) for j, (name, make) in enumerate(ANGLE_METHODS.items())
    },
    repeats=10,
    summary="median",
    quick={"n": [10_000], "epsilon": [10.0], "repeats": 2},
)

STUDIES = [STUDY, ANGLES]
