"""Shrinkage toward zero and the noise warning, measured on real tables.

``shrinkage``: every covariance estimator, zCDP (``delta=1e-6``) and pure DP
(``delta=0``), fitted with ``shrinkage="auto"`` (the default) and
``shrinkage=None`` (the raw release) on the same data and noise, on wine
(the ``wine_wide`` ranges), breast_cancer and diabetes (unscaled) with public
ranges written from what the features measure (``benchmarks/harness/data.py``).
Error: ``||C_hat - C||_F / ||C||_F`` in the original units against
scikit-learn's ``EmpiricalCovariance`` (the zero matrix scores 1), median
over the repetitions; then the share of fits with error 0.9 or more, and of
fits with error below 0.5, that warned ``NoiseDominatedWarning``; then
``predicted_error_`` against the actual error ``||C_hat - C||_F``: per cell
and setting, over its fits kept as released (all with ``shrinkage=None``;
those with ``shrinkage_ == 0`` by default), the ratio of the root mean
squares, and the share of cell-settings within [2/3, 3/2] and [1/2, 2].

``shrinkage_regression``: where releases are already good, the mean
Frobenius error with the default and with ``shrinkage=None``, and their
paired difference: the sensor table (``make_sensor_table``, 20,000 rows, its
public ranges) at ``epsilon = 1`` under zCDP and pure DP, and Zipf cells
``n d N rho`` of Dong, Liang and Yi (2022) (``data_norm=1``,
``assume_centered=True``, target ``X^T X / n``).

The docs' include (``docs/user_guide/_bench_shrinkage.rst``) holds both
studies' tables and a figure of the code before shrinkage existed, so neither
study overwrites it with ``--docs``.
"""

from functools import cache

import numpy as np
from sklearn.covariance import EmpiricalCovariance

from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.datasets import make_sensor_table, make_zipf_norms
from dpcov.exceptions import NoiseDominatedWarning

from ..harness import Study, load_table, rst_table
from ._covariance import FilledStudy, picks, quiet_fit

ESTIMATORS = {
    "GaussCov": GaussianCovariance,
    "SeparateCov": SeparateCovariance,
    "AdaptiveCov": AdaptiveCovariance,
    "NuclearLaplace": NuclearLaplaceCovariance,
    "EigenSampling": EigenSamplingCovariance,
}
GUARANTEES = {"zCDP": 1e-6, "pure": 0.0}
SETTINGS = {"auto": "auto", "None": None}


@cache
def _table(name):
    X, _, bounds = load_table("wine_wide" if name == "wine" else name)
    return X, bounds, EmpiricalCovariance().fit(X).covariance_


def _setting(value):
    def method(data, cell, r):
        X, bounds, target = data
        est = ESTIMATORS[cell["estimator"]](
            epsilon=cell["epsilon"],
            delta=GUARANTEES[cell["guarantee"]],
            bounds=bounds,
            random_state=1000 * r + 11,
            shrinkage=value,
        )
        est, warned = quiet_fit(est, X, NoiseDominatedWarning)
        error = np.linalg.norm(est.covariance_ - target) / np.linalg.norm(target)
        kept = est.shrinkage_ == 0.0  # a shrunk release has no prediction
        return {
            "error": float(error),
            "warned": warned,
            "squared": float(
                np.sum((est.covariance_ - target) ** 2) if kept else np.nan
            ),
            "predicted": float(est.predicted_error_**2),
        }

    return method


def _warned(rows, setting):
    """Shares of fits that warned among those with error >= 0.9 and < 0.5."""
    error = np.concatenate([r["runs"][f"{setting} error"] for r in rows])
    warned = np.concatenate([r["runs"][f"{setting} warned"] for r in rows])
    out = [setting]
    for among in (error >= 0.9, error < 0.5):
        share = warned[among].mean() if among.any() else np.nan
        out.append(f"{share:.1%} of {among.sum()}")
    return dict(
        zip(["Fits", "error >= 0.9: warned", "error < 0.5: warned"], out, strict=True)
    )


BANDS = {"in [2/3, 3/2]": (2 / 3, 3 / 2), "in [1/2, 2]": (1 / 2, 2.0)}


def _calibration(rows):
    """Per estimator and in all: cell-settings whose RMS ratio is in band."""
    ratios = {}
    for row in rows:
        for s in SETTINGS:
            runs = row["runs"]
            squared = np.asarray(runs.get(f"{s} squared", [np.nan]))
            if np.isfinite(squared).sum() >= 5:  # a setting with fits kept
                predicted = np.nanmean(runs[f"{s} predicted"])
                ratio = np.sqrt(predicted / np.nanmean(squared))
                ratios.setdefault(row["estimator"], []).append(ratio)
    ratios["all"] = [r for values in ratios.values() for r in values]
    lines = []
    for name, values in ratios.items():
        values = np.asarray(values)
        line = {"Estimator": name, "cell-settings": len(values)}
        if not len(values):  # (a quick run: too few fits per cell)
            lines.append(line)
            continue
        for band, (low, high) in BANDS.items():
            line[band] = f"{np.mean((values >= low) & (values <= high)):.0%}"
        lines.append({**line, "median ratio": f"{np.median(values):.2f}"})
    return lines


class ShrinkageStudy(Study):
    def table(self, rows, grid, repeats):
        text = []
        columns = [f"eps={e:g} {s}" for e in grid["epsilon"] for s in SETTINGS]
        for name in grid["table"]:
            lines = []
            for row in (r for r in rows if r["table"] == name):
                if row["epsilon"] == grid["epsilon"][0]:
                    lines.append(
                        {"Estimator": row["estimator"], "Guarantee": row["guarantee"]}
                    )
                for s in SETTINGS:
                    lines[-1][f"eps={row['epsilon']:g} {s}"] = row[f"{s} error"][0]
            text += [f"**{name}** (median relative error over {repeats} fits)", ""]
            text += [rst_table(lines, ["Estimator", "Guarantee", *columns]), ""]
        text += ["**The warning** (share of fits that warned)", ""]
        warned = [_warned(rows, s) for s in SETTINGS]
        text += [rst_table(warned, list(warned[0])), ""]
        text += ["**predicted_error_** (RMS predicted over RMS actual error)", ""]
        calibration = _calibration(rows)
        return "\n".join(text) + "\n" + rst_table(calibration, list(calibration[0]))


STUDY = ShrinkageStudy(
    name="shrinkage",
    title=__doc__.splitlines()[0],
    grid={
        "table": ["wine", "breast_cancer", "diabetes"],
        "estimator": list(ESTIMATORS),
        "guarantee": list(GUARANTEES),
        "epsilon": [1.0, 4.0, 16.0],
    },
    data=lambda cell, r: _table(cell["table"]),
    methods={s: _setting(v) for s, v in SETTINGS.items()},
    repeats=10,
    summary="median",
    quick={
        "table": ["wine"],
        "estimator": ["AdaptiveCov"],
        "guarantee": ["zCDP"],
        "repeats": 2,
    },
)


def _regression(cell, r):
    """Frobenius errors of both settings on repetition ``r`` of a cell."""
    kind, *values = cell["cell"].split()
    name = cell["estimator"]
    if kind == "zipf" and name not in ("GaussCov", "SeparateCov", "AdaptiveCov"):
        return {}  # the Zipf cells: the estimators of Dong, Liang and Yi (2022)
    seed = 1000 * r + 13
    if kind == "sensor":
        table = make_sensor_table(20_000, random_state=seed)
        X, target = table.data, EmpiricalCovariance().fit(table.data).covariance_
        params = dict(epsilon=1.0, delta=float(values[0]), bounds=table.bounds)
    else:
        n, d, N, rho = int(values[0]), int(values[1]), int(values[2]), float(values[3])
        X = make_zipf_norms(n, d, n_buckets=N, random_state=seed)
        target = X.T @ X / n
        params = dict(rho=rho, data_norm=1.0, assume_centered=True)
    out = {}
    for s, value in SETTINGS.items():
        est = ESTIMATORS[name](**params, random_state=seed, shrinkage=value)
        out[s] = float(np.linalg.norm(quiet_fit(est, X).covariance_ - target))
    out["auto - None"] = out["auto"] - out["None"]
    return out


REGRESSION = FilledStudy(
    name="shrinkage_regression",
    title="Shrinkage where releases are already good: default against shrinkage=None.",
    caption="Frobenius error; auto - None: the paired difference",
    grid={
        "cell": [
            "sensor 1e-06",
            "sensor 0.0",
            "zipf 20000 100 1 0.1",
            "zipf 5000 100 8 0.1",
            "zipf 20000 10 4 0.01",
        ],
        "estimator": list(ESTIMATORS),
    },
    data=_regression,
    methods=picks(["auto", "None", "auto - None"]),
    repeats=100,
    quick={"cell": ["zipf 20000 10 4 0.01"], "estimator": ["GaussCov"], "repeats": 2},
)

STUDIES = [STUDY, REGRESSION]
