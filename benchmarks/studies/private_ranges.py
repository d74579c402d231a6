"""Private per-feature ranges against true public ranges.

Relative Frobenius error of the covariance (original units, against
scikit-learn's EmpiricalCovariance) with ranges found privately
(``bounds="private"``, a quarter of the budget) and with the table's true
public ranges: ``make_mixed_units_table`` (n = 20000, d = 12, scales 1e-2 to
1e4; true ranges the law's means +- 5 sd, ``6 sd`` the table's own ranges) and
``make_sensor_table`` (n = 20000, d = 8; what the sensors can report).
Repetition r redraws the table with ``random_state = r`` and fits with it.
``ratio``: mean private error over mean true-range error; ``outside``: the
largest share of a feature's values outside its private range, over the
repetitions. ``private_ranges_pipeline``: the raw-table pipeline
(imputer, scaler, PCA(3)) on the mixed-units table with 5% of cells missing
and no ranges: the share of the variance that the non-private top-3
subspace of the standardised complete table captures.
"""

import numpy as np
from sklearn.covariance import EmpiricalCovariance
from sklearn.decomposition import PCA as SkPCA
from sklearn.preprocessing import StandardScaler as SkStandardScaler

from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.datasets import make_mixed_units_table, make_sensor_table
from dpcov.decomposition import PCA
from dpcov.impute import SimpleImputer
from dpcov.pipeline import PrivatePipeline
from dpcov.preprocessing import StandardScaler

from ._pipelines import DerivedStudy, ratio_of_means

ESTIMATORS = {
    "AdaptiveCov": AdaptiveCovariance,
    "GaussCov": GaussianCovariance,
    "SeparateCov": SeparateCovariance,
}
MAKERS = {"mixed_units": make_mixed_units_table, "sensor": make_sensor_table}


def _data(cell, r):
    table = MAKERS[cell["table"]](cell["n"], random_state=r)
    ranges = {"true": table.bounds, "6 sd": None}
    if cell["table"] == "mixed_units":  # the law's means +- 5 sd
        lower, upper = table.bounds
        centre, sd = (lower + upper) / 2, np.sqrt(np.diag(table.covariance))
        ranges = {"true": (centre - 5 * sd, centre + 5 * sd), "6 sd": table.bounds}
    return table.data, EmpiricalCovariance().fit(table.data).covariance_, ranges


def _error(which):
    def measure(data, cell, r):
        X, C, ranges = data
        bounds = "private" if which == "private" else ranges[which]
        if bounds is None:
            return np.nan
        cls = ESTIMATORS[cell["estimator"]]
        est = cls(epsilon=cell["epsilon"], delta=1e-6, bounds=bounds, random_state=r)
        error = np.linalg.norm(est.fit(X).covariance_ - C) / np.linalg.norm(C)
        if which != "private":
            return error
        lower, upper = est.bounds_
        outside = np.max(np.mean((X < lower) | (X > upper), axis=0))
        return {"error": error, "outside": outside}

    return measure


def _captured(data, cell, r):
    table = make_mixed_units_table(cell["n"], missing_rate=0.05, random_state=r)
    steps = [SimpleImputer(), StandardScaler(), PCA(n_components=3)]
    pipe = PrivatePipeline(
        list(zip(["impute", "scale", "pca"], steps, strict=True)),
        epsilon=cell["epsilon"],
        delta=1e-6,
        random_state=r,
    ).fit(table.data)
    Z = SkStandardScaler().fit_transform(
        make_mixed_units_table(cell["n"], random_state=r).data
    )
    best = SkPCA(n_components=3).fit(Z).explained_variance_.sum()
    V = pipe.named_steps["pca"].components_
    captured = np.trace(V @ np.cov(Z, rowvar=False) @ V.T) / best
    return {"captured": captured, "epsilon spent": pipe.epsilon_spent_}


STUDIES = [
    DerivedStudy(
        name="private_ranges",
        title=__doc__.splitlines()[0],
        caption="Relative Frobenius error of covariance_ with private ranges and "
        "with public ones (delta = 1e-6)",
        grid={
            "table": ["mixed_units", "sensor"],
            "estimator": list(ESTIMATORS),
            "epsilon": [1.0, 4.0],
        },
        data=_data,
        methods={w: _error(w) for w in ["private", "true", "6 sd"]},
        repeats=20,
        options={"n": 20_000},
        derive=lambda row: {
            "private/true": ratio_of_means("private error", "true")(row),
            "private/6 sd": ratio_of_means("private error", "6 sd")(row),
            "outside max": max(row["runs"]["private outside"]),
        },
        quick={"table": ["sensor"], "estimator": ["GaussCov"], "n": 2000},
        docs="docs/user_guide/_bench_private_ranges.rst",
    ),
    DerivedStudy(
        name="private_ranges_pipeline",
        title="A raw table's private pipeline (imputer, scaler, PCA) without ranges",
        caption="Share of the variance of the standardised complete table that "
        "the non-private top-3 subspace captures (5% of cells missing, no "
        "ranges, delta = 1e-6)",
        grid={"epsilon": [0.5, 1.0]},
        methods={"pipeline": _captured},
        repeats=20,
        options={"n": 20_000},
        derive=lambda row: {
            "smallest": min(row["runs"]["pipeline captured"]),
            "largest spent": max(row["runs"]["pipeline epsilon spent"]),
        },
        quick={"epsilon": [1.0], "n": 5000},
    ),
]
