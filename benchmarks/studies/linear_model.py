"""Private least squares (AdaSSP, a public ridge) against ordinary least squares.

Held-out R^2 of ``dpcov.linear_model.LinearRegression`` (AdaSSP: the ridge
chosen privately) and ``Ridge(alpha = n / 100)`` over scikit-learn's
``LinearRegression``'s, on synthetic problems: ``shape`` is n rows x d
features (80% train), features uniform in [-1, 1] (their public range), a
linear target with Gaussian noise of sd 0.5, clipped to its public range
[-10, 10] for every model. Repetition r draws the problem and the noise with
``random_state = r``.
"""

import warnings

import numpy as np
from sklearn.linear_model import LinearRegression as SkLinearRegression
from sklearn.metrics import r2_score

from dpcov.exceptions import NoiseDominatedWarning
from dpcov.linear_model import LinearRegression, Ridge

from ..harness import Study, load_table
from ._covariance import picks
from ._pipelines import DerivedStudy

BOUNDS = {"bounds": (-1.0, 1.0), "target_bounds": (-10.0, 10.0)}


def _problem(cell, r):
    n, d = (int(v) for v in cell["shape"].split("x"))
    rng = np.random.default_rng(r)
    X = rng.uniform(-1, 1, size=(n, d))
    y = np.clip(X @ rng.normal(size=d) + 0.5 + rng.normal(0, 0.5, n), -10.0, 10.0)
    cut = int(0.8 * n)
    Xtr, ytr, Xte, yte = X[:cut], y[:cut], X[cut:], y[cut:]
    exact = r2_score(yte, SkLinearRegression().fit(Xtr, ytr).predict(Xte))
    return Xtr, ytr, Xte, yte, exact


def _relative_r2(make):
    def measure(data, cell, r):
        Xtr, ytr, Xte, yte, exact = data
        model = make(len(ytr), epsilon=cell["epsilon"], random_state=r, **BOUNDS)
        return r2_score(yte, model.fit(Xtr, ytr).predict(Xte)) / exact

    return measure


STUDY = DerivedStudy(
    name="linear_model",
    title=__doc__.splitlines()[0],
    caption="Held-out R^2 over ordinary least squares' (delta = 1e-6)",
    grid={"shape": ["15000x10", "5000x10", "50000x50"], "epsilon": [0.5, 1.0, 2.0]},
    data=_problem,
    methods={
        "AdaSSP": _relative_r2(lambda n, **kw: LinearRegression(**kw)),
        "Ridge (alpha = n / 100)": _relative_r2(lambda n, **kw: Ridge(n / 100, **kw)),
    },
    repeats=10,
    quick={"shape": ["5000x10"], "epsilon": [1.0]},
    docs="docs/user_guide/_bench_linear_model.rst",
)


def _warned(cell, r):
    """LinearRegression's warning and held-out R^2 over OLS's, one split."""
    if cell["table"] == "diabetes":  # clinical ranges; the target in [0, 400]
        X, y, bounds = load_table("diabetes")
        params = dict(bounds=bounds, target_bounds=(0.0, 400.0))
    else:
        rng = np.random.default_rng(1)
        X = rng.uniform(-1, 1, size=(20_000, 10))
        y = np.clip(X @ rng.normal(size=10) + 0.5 + rng.normal(0, 0.5, 20_000), -10, 10)
        params = BOUNDS
    order = np.random.default_rng(r).permutation(len(y))
    train, test = order[: int(0.8 * len(y))], order[int(0.8 * len(y)) :]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = LinearRegression(epsilon=cell["epsilon"], random_state=r, **params)
        model.fit(X[train], y[train])
    ols = SkLinearRegression().fit(X[train], y[train]).predict(X[test])
    ratio = r2_score(y[test], model.predict(X[test])) / r2_score(y[test], ols)
    warned = any(w.category is NoiseDominatedWarning for w in caught)
    return {"R^2 / OLS": ratio, "below 0 share": float(ratio < 0), "warned": warned}


WARNING = Study(
    name="linear_model_warning",
    title="LinearRegression's noise warning: useless fits warn, useful ones do not.",
    caption="Held-out R^2 over ordinary least squares' (80% of rows train)",
    grid={"table": ["diabetes", "synthetic"], "epsilon": [0.25, 0.5, 1.0, 4.0, 16.0]},
    data=_warned,
    methods=picks(["R^2 / OLS", "below 0 share", "warned"]),
    repeats=30,
    summary="median",
    quick={"table": ["diabetes"], "epsilon": [1.0], "repeats": 2},
    docs="docs/user_guide/_bench_linear_model_warning.rst",
)

STUDIES = [STUDY, WARNING]
