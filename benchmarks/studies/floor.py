"""What an eigenvalue floor on covariance_ costs in Frobenius error.

Each cell: the mean Frobenius error ``||C_hat - X^T X / n||_F`` with
``eigenvalue_floor="auto"`` over the mean error with ``eigenvalue_floor=0``,
on the Zipf-norm data of Dong, Liang and Yi (2022), Section 7.1 (rows in the
unit ball, ``N = 4`` norm buckets), ``data_norm=1``, ``assume_centered=True``.
Both fits of a pair use the same data and noise: only the post-processing
differs. ``finite``: the share of fits with the floor whose ``score`` is finite.
"""

import numpy as np

from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.datasets import make_zipf_norms

from ..harness import Study, rst_table
from ._covariance import quiet_fit

ESTIMATORS = {
    "GaussCov": GaussianCovariance,
    "SeparateCov": SeparateCovariance,
    "AdaptiveCov": AdaptiveCovariance,
}


def _data(cell, r):
    X = make_zipf_norms(cell["n"], cell["d"], n_buckets=4, random_state=1000 * r + 11)
    return X, X.T @ X / cell["n"]


def _method(cls):
    def errors(data, cell, r):
        X, target = data
        out = {}
        for floor in (0.0, "auto"):
            est = cls(
                rho=cell["rho"],
                data_norm=1.0,
                assume_centered=True,
                eigenvalue_floor=floor,
                random_state=1000 * r + 11,
            )
            quiet_fit(est, X)
            out[str(floor)] = float(np.linalg.norm(est.covariance_ - target))
        out["finite share"] = float(np.isfinite(est.score(X)))
        return out

    return errors


class FloorStudy(Study):
    def table(self, rows, grid, repeats):
        ratios = {m: [] for m in ESTIMATORS}
        for row in rows:
            for m in ESTIMATORS:
                runs = row["runs"]
                row[m] = np.mean(runs[f"{m} auto"]) / np.mean(runs[f"{m} 0.0"])
                ratios[m].append(row[m])
        finite = all(
            min(r["runs"][f"{m} finite share"]) == 1 for r in rows for m in ESTIMATORS
        )
        return "\n".join(
            [
                f"Frobenius error with eigenvalue_floor='auto' over the error with 0, "
                f"mean of {repeats} repetitions per cell (Zipf-norm data, N = 4).",
                "",
                rst_table(rows, [*grid, *ESTIMATORS]),
                "",
                "Median ratio: "
                + ", ".join(f"{m} {np.median(v):.3f}" for m, v in ratios.items())
                + ".",
                "Largest ratio: "
                + ", ".join(f"{m} {np.max(v):.3f}" for m, v in ratios.items())
                + ".",
                f"Score finite with the floor in every fit: {finite}.",
            ]
        )


STUDY = FloorStudy(
    name="floor",
    title=__doc__.splitlines()[0],
    grid={"n": [1_000, 10_000, 50_000], "d": [10, 50, 200], "rho": [0.01, 0.1, 1.0]},
    data=_data,
    methods={name: _method(cls) for name, cls in ESTIMATORS.items()},
    repeats=5,
    quick={"n": [1_000], "d": [10], "rho": [0.1], "repeats": 2},
    docs="docs/user_guide/_bench_floor.rst",
)
