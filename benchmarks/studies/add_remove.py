"""Add/remove neighbours against replace-one, on Dong, Liang and Yi's (2022) cells.

Mean Frobenius error ``||C - X^T X / n||_F`` of GaussCov, SeparateCov and
AdaptiveCov on the ``dly22`` study's Zipf-norm rows (``d = 200``,
``N = 4``, ``data_norm = 1``, ``assume_centered = True``, rows as units),
with ``n >= 5000``: under ``neighbours="replace"`` at ``rho``, and under
``neighbours="add_remove"`` at ``rho`` and at ``rho / 4`` (epsilon / 2).
Under add/remove the number of rows is private: 1/16 of the budget
releases a noisy count, which normalises the sums (the rest of the fit is
unchanged). ``ratio``: the add/remove error at ``rho`` over the replace
one, paired, with the delta method's standard error.
"""

import warnings

import numpy as np

from ..harness import Study, ratio_se, rst_table
from ._spectral import old_seed
from .dly22 import DPCOV, _params, _zipf

VARIANTS = {"replace": ("replace", 1.0), "add/rm": ("add_remove", 1.0)}
VARIANTS["add/rm rho/4"] = ("add_remove", 0.25)


def _error(name, neighbours, factor):
    def method(data, cell, r):
        X, target = data
        params = _params(cell, old_seed(r), neighbours=neighbours)
        params["rho"] = cell["rho"] * factor
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # seeded and noisy fits, on purpose
            estimate = DPCOV[name](**params).fit(X).covariance_
        return float(np.linalg.norm(estimate - target))

    return method


class _AddRemove(Study):
    def table(self, rows, grid, repeats):
        columns = []
        for name in DPCOV:
            for row in rows:
                runs = row["runs"]
                row[f"{name} ratio"] = ratio_se(
                    runs[f"{name} add/rm"], runs[f"{name} replace"]
                )
            columns += [*(f"{name} {v}" for v in VARIANTS), f"{name} ratio"]
        head = super().table(rows, grid, repeats).split("\n\n")[0]
        return head + "\n\n" + rst_table(rows, [*grid, *columns])


STUDY = _AddRemove(
    name="add_remove",
    title=__doc__.splitlines()[0],
    caption="Mean Frobenius error",
    grid={"n": [5_000, 10_000, 50_000], "d": [200], "rho": [0.1], "N": [4]},
    data=_zipf,
    methods={
        f"{name} {label}": _error(name, *variant)
        for name in DPCOV
        for label, variant in VARIANTS.items()
    },
    repeats=10,
    quick={"n": [2000], "d": [20], "repeats": 2},
    docs="docs/user_guide/_bench_add_remove.rst",
)
