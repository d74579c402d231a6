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
            "snr": float(est.signal_to_noise_),
        }

    return method


def _warned(rows):
    """The warning: its rate in bad cell-settings, on good fits, on the worst."""
    bad, error, warned = [], [], []
    for row in rows:
        for s in SETTINGS:
            e, w = (np.asarray(row["runs"][f"{s} {k}"]) for k in ("error", "warned"))
            error.append(e), warned.append(w)
            if np.mean(e) >= 1.5:  # a cell-setting worse than the zero matrix
                bad.append(w)
    error, warned = np.concatenate(error), np.concatenate(warned).astype(bool)
    bad = bad or [np.array([np.nan])]  # (a quick run may have none)
    share = [f"{np.mean(w):.0%}" for w in (np.concatenate(bad), warned[error < 0.5])]
    low = f"{min(np.mean(w) for w in bad):.0%}"
    silent = f"{np.mean(~warned[error > 10]):.1%} of {np.sum(error > 10)}"
    keys = ["mean error >= 1.5: warned", "(least)", "error < 0.5: warned"]
    values = [*share[:1], low, share[1], silent]
    return dict(zip([*keys, "error > 10: silent"], values, strict=True))


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


def _cells(rows):
    """Per estimator: cells whose default mean error is within the bounds."""
    lines = {}
    for row in rows:
        auto, raw = (np.mean(row["runs"][f"{s} error"]) for s in SETTINGS)
        line = lines.setdefault(row["estimator"], {"Estimator": row["estimator"]})
        for factor in (1.25, 1.5):
            key = f"within {factor} min(None, 1) + 0.05"
            ok = auto <= factor * min(raw, 1.0) + 0.05
            line[key] = line.get(key, 0) + ok
        line["cells"] = line.get("cells", 0) + 1
    return list(lines.values())


def _by_snr(rows):
    """Fits (both settings) by signal_to_noise_: the share worse than zero."""
    snr, error = (
        np.concatenate([r["runs"][f"{s} {k}"] for r in rows for s in SETTINGS])
        for k in ("snr", "error")
    )
    edges = [0.0, 0.5, 1.0, 2.0, 4.0, np.inf]
    return [
        {
            "signal to noise": f"[{lo:g}, {hi:g})",
            "fits": int(among.sum()),
            "error >= 1": f"{np.mean(error[among] >= 1):.0%}" if among.any() else "-",
        }
        for lo, hi in zip(edges, edges[1:], strict=False)
        for among in [(snr >= lo) & (snr < hi)]
    ]


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
        text += ["**The warning** (both settings; per cell-setting)", ""]
        warned = [_warned(rows)]
        text += [rst_table(warned, list(warned[0])), ""]
        text += ["**Cells** (mean relative error of the default)", ""]
        cells = _cells(rows)
        text += [rst_table(cells, list(cells[0])), ""]
        text += ["**The figure** (fits by signal_to_noise_)", ""]
        text += [rst_table(_by_snr(rows), ["signal to noise", "fits", "error >= 1"])]
        text += ["", "**predicted_error_** (RMS predicted over RMS actual error)", ""]
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
