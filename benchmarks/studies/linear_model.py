"""Private least squares (AdaSSP, a public ridge) against ordinary least squares.

Held-out R^2 of ``dpcov.linear_model.LinearRegression`` (AdaSSP: the ridge
chosen privately) and ``Ridge(alpha = n / 100)`` over scikit-learn's
``LinearRegression``'s, on synthetic problems: ``shape`` is n rows x d
features (80% train), features uniform in [-1, 1] (their public range), a
linear target with Gaussian noise of sd 0.5, clipped to its public range
[-10, 10] for every model. Repetition r draws the problem and the noise with
``random_state = r``.
"""

import numpy as np
from sklearn.linear_model import LinearRegression as SkLinearRegression
from sklearn.metrics import r2_score

from dpcov.linear_model import LinearRegression, Ridge

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
