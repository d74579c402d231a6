"""Schatten-norm error of the nuclear-Laplace mechanism against pure-DP baselines.

Mean error ``||C - X^T X / n||`` in the spectral, Frobenius and nuclear norms
(the Schatten norms of d'Orsi and Novikov, 2025, Theorem 1.1) of pure-DP
estimators at the same ``epsilon`` (``delta=0``, ``data_norm=1``,
``assume_centered=True``, ``projection="clamp"``): NL
``NuclearLaplaceCovariance()`` (their Algorithm 1), NL-proj ``project=True``
(Algorithm 2), NL-psd ``projection="psd"`` (no upper clamp; NL's noise),
LapCov ``GaussianCovariance(delta=0)``, SepLapCov
``SeparateCovariance(delta=0)``, Zero the zero matrix, NL-raw NL's noisy
matrix before any projection. Data: ``make_zipf_norms`` with four buckets
(``zipf``) or one (``zipf1``, unit-norm rows), and rows uniform on the unit
sphere (``sphere``). Repetition ``r`` seeds the data and every fit with
``1000 r + 7`` (common random numbers across ``n``, ``epsilon`` and data).
Bold: the best method and those within two paired standard errors of it.
"""

import warnings

import numpy as np
from sklearn.utils import check_random_state

from dpcov.covariance import (
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.datasets import make_zipf_norms

from ..harness import Study, line_figure, near_best, per_metric, rst_table

NORMS = {"spectral": 2, "frobenius": "fro", "nuclear": "nuc"}
METHODS = ["NL", "NL-proj", "NL-psd", "LapCov", "SepLapCov", "Zero"]
SLOPES = ["NL-raw", "NL", "NL-proj", "LapCov", "SepLapCov"]


def _data(cell, r):
    n, d, seed = cell["n"], cell["d"], 1000 * r + 7
    if cell["data"] == "sphere":
        z = check_random_state(seed).standard_normal((n, d))
        X = z / np.linalg.norm(z, axis=1, keepdims=True)
    else:
        X = make_zipf_norms(
            n, d, n_buckets=4 if cell["data"] == "zipf" else 1, random_state=seed
        )
    return X, X.T @ X / n


def _norms(E):
    return {name: float(np.linalg.norm(E, o)) for name, o in NORMS.items()}


def _method(make):
    def method(data, cell, r):
        X, target = data
        if make is None:
            return _norms(target)
        est = make(
            epsilon=cell["epsilon"],
            delta=0.0,
            data_norm=1.0,
            assume_centered=True,
            random_state=1000 * r + 7,
        )
        if isinstance(est, NuclearLaplaceCovariance):
            est.set_params(n_sweeps=cell["n_sweeps"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the Gibbs chain's (d > 8) and the noise's
            est.fit(X)
        out = _norms(est.covariance_ - target)
        if getattr(est, "raw_covariance_", None) is not None:
            out.update(
                {f"raw {k}": v for k, v in _norms(est.raw_covariance_ - target).items()}
            )
        return out

    return method


def _slope(rows, method, norm):
    """Least-squares slope of log mean error against log d."""
    x = np.log([row["d"] for row in rows])
    y = np.log([row[f"{method} {norm}"][0] for row in rows])
    return float(np.polyfit(x, y, 1)[0]) if len(rows) > 1 else float("nan")


class NuclearStudy(Study):
    def table(self, rows, grid, repeats):
        for row in rows:  # NL's raw noise, by its own name
            for norm in NORMS:
                row[f"NL-raw {norm}"] = row.get(f"NL raw {norm}")
        text = [f"Mean error over {repeats} repetitions.", ""]
        for kind in grid["data"]:
            for eps in grid["epsilon"]:
                sub = [r for r in rows if r["data"] == kind and r["epsilon"] == eps]
                for norm in NORMS:
                    lines = []
                    for row in sub:
                        res = {
                            m: {
                                "mean": -row[f"{m} {norm}"][0],
                                "runs": -np.array(row["runs"][f"{m} {norm}"]),
                            }
                            for m in METHODS
                        }
                        near = near_best(res, METHODS)[1]
                        line = {"n": row["n"], "d": row["d"]}
                        for m in [*METHODS, "NL-raw"]:
                            value = f"{row[f'{m} {norm}'][0]:.3g}"
                            line[m] = f"**{value}**" if m in near else value
                        lines.append(line)
                    text += [f"**{kind}, epsilon = {eps:g}, {norm} error**", ""]
                    text.append(rst_table(lines, ["n", "d", *METHODS, "NL-raw"]))
                    text.append("")
        if len(grid["d"]) < 2:
            return "\n".join(text)
        n = max(grid["n"])
        text.append(
            f"Slope of log mean error against log d at n = {n} "
            "(theory for NL-raw: 1, 1.5, 2):"
        )
        text.append("")
        for kind in grid["data"]:
            for eps in grid["epsilon"]:
                sub = [
                    r
                    for r in rows
                    if r["data"] == kind and r["epsilon"] == eps and r["n"] == n
                ]
                for m in SLOPES:
                    slopes = ", ".join(
                        f"{norm} {_slope(sub, m, norm):.2f}" for norm in NORMS
                    )
                    text.append(f"- {kind}, epsilon = {eps:g}, {m}: {slopes}")
        return "\n".join(text)


def _figure(rows):
    # Error against n for each data set and norm, at d = 16 and epsilon = 1
    # (or the largest d and epsilon the run has).
    d = 16 if any(r["d"] == 16 for r in rows) else max(r["d"] for r in rows)
    eps = (
        1.0
        if any(r["epsilon"] == 1.0 for r in rows)
        else max(r["epsilon"] for r in rows)
    )
    shown = [row for row in rows if row["d"] == d and row["epsilon"] == eps]
    return line_figure(
        per_metric(shown, NORMS, METHODS),
        x="n",
        series={m: m for m in METHODS},
        panel=lambda r: f"{r['data']}, {r['metric']} (d = {d}, epsilon = {eps:g})",
        ylabel="error",
        logx=True,
        logy=True,
    )


STUDY = NuclearStudy(
    name="nuclear",
    title=__doc__.splitlines()[0],
    grid={
        "data": ["zipf", "zipf1", "sphere"],
        "n": [100, 1_000, 10_000],
        "d": [4, 8, 16, 32],
        "epsilon": [0.1, 1.0],
    },
    data=_data,
    methods={
        "NL": _method(lambda **p: NuclearLaplaceCovariance(**p, store_raw=True)),
        "NL-proj": _method(lambda **p: NuclearLaplaceCovariance(**p, project=True)),
        "NL-psd": _method(lambda **p: NuclearLaplaceCovariance(**p, projection="psd")),
        "LapCov": _method(GaussianCovariance),
        "SepLapCov": _method(SeparateCovariance),
        "Zero": _method(None),
    },
    repeats=20,
    options={"n_sweeps": None},
    quick={"data": ["zipf"], "n": [100], "d": [4], "epsilon": [1.0], "repeats": 2},
    docs="docs/user_guide/_bench_nuclear.rst",
    figure=_figure,
    image="docs/_static/bench_nuclear.png",
)
