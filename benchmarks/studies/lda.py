"""Private linear discriminant analysis: features of mixed units, and MNIST.

``lda_units``: ``make_mixed_units_table`` (30,000 rows, 12 features of
scales 1e-2 to 1e4) with three classes cut at the terciles of a linear score
of the standardised features; 80% train, 20% test. At epsilon = 1 the
private LDA with a norm bound (``data_norm``: the box's farthest corner),
with the table's public ranges (``bounds``, the law's means +- 6 sd) and with
private ranges (``bounds="private"``) against scikit-learn's LDA: test
accuracy, its gap to scikit-learn's, and the largest gap. ``lda_mnist``:
``PrivatePipeline([PCA(40, bounds=(0, 1)), LDA(classes=range(10))])`` on
MNIST (``--set csv=PATH/mnist_train.csv``, pixels / 255; the first 50,000
rows train, the last 10,000 test) against scikit-learn's PCA(40) + LDA;
``lda_mnist_search``: ``PrivateSearchCV`` over ``pca__n_components`` in
{2, 10, 40} by accuracy on the first 20,000 training rows. Without a CSV both
run on scikit-learn's digits (pixels / 16; 1,500 rows train, 297 test), a
small stand-in, and say so. Repetition r fits with ``random_state = r``.
"""

import time
from functools import cache

import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA as SkPCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA
from sklearn.pipeline import make_pipeline

from dpcov.datasets import make_mixed_units_table
from dpcov.decomposition import PCA
from dpcov.discriminant_analysis import LinearDiscriminantAnalysis
from dpcov.model_selection import PrivateSearchCV
from dpcov.pipeline import PrivatePipeline

from ._pipelines import DerivedStudy


def _units_table(cell, r):
    n = cell["n"]
    data = make_mixed_units_table(n, random_state=r)
    X = data.data
    score = ((X - X.mean(0)) / X.std(0)) @ np.random.default_rng(r).normal(
        size=X.shape[1]
    )
    y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    cut = int(0.8 * n)
    exact = SkLDA().fit(X[:cut], y[:cut]).score(X[cut:], y[cut:])
    return data.bounds, X[:cut], y[:cut], X[cut:], y[cut:], exact


def _units(how):
    def measure(data, cell, r):
        (lower, upper), Xtr, ytr, Xte, yte, exact = data
        if how == "scikit-learn":
            return exact
        params = {
            "data_norm": {
                "data_norm": float(np.linalg.norm(np.maximum(-lower, upper)))
            },
            "bounds": {"bounds": (lower, upper)},
            "private": {"bounds": "private"},
        }[how]
        model = LinearDiscriminantAnalysis(
            epsilon=cell["epsilon"], classes=[0, 1, 2], random_state=r, **params
        ).fit(Xtr, ytr)
        accuracy = model.score(Xte, yte)
        return {"accuracy": accuracy, "gap": exact - accuracy}

    return measure


@cache
def _images(csv):
    if csv is None:  # the small stand-in
        digits = load_digits()
        X, y = digits.data / 16.0, digits.target
        return X[:1500], y[:1500], X[1500:], y[1500:]
    table = np.loadtxt(csv, delimiter=",", skiprows=1, dtype=np.float64)
    y, X = table[:, 0].astype(int), table[:, 1:] / 255.0
    return X[:50_000], y[:50_000], X[50_000:], y[50_000:]


def _pipeline(epsilon=None, n_components=40):
    steps = [
        ("pca", PCA(n_components=n_components, bounds=(0.0, 1.0))),
        ("lda", LinearDiscriminantAnalysis(classes=range(10))),
    ]
    return PrivatePipeline(steps, epsilon=epsilon, delta=epsilon and 1e-6)


@cache
def _exact(csv):
    Xtr, ytr, Xte, yte = _images(csv)
    return make_pipeline(SkPCA(n_components=40), SkLDA()).fit(Xtr, ytr).score(Xte, yte)


def _mnist(data, cell, r):
    Xtr, ytr, Xte, yte = _images(cell["csv"])
    start = time.perf_counter()
    pipe = _pipeline(cell["epsilon"]).set_params(random_state=r).fit(Xtr, ytr)
    seconds = time.perf_counter() - start
    spent = pipe.epsilon_spent_
    return {"accuracy": pipe.score(Xte, yte), "spent": spent, "fit s": seconds}


def _search(data, cell, r):
    Xtr, ytr, Xte, yte = _images(cell["csv"])
    start = time.perf_counter()
    found = PrivateSearchCV(
        _pipeline(),
        {"pca__n_components": [2, 10, 40]},
        scoring="accuracy",
        epsilon=cell["epsilon"],
        delta=1e-6,
        random_state=r,
    ).fit(Xtr[:20_000], ytr[:20_000])
    return {
        "picked": found.best_params_["pca__n_components"],
        "spent": found.epsilon_spent_,
        "test accuracy": found.best_estimator_.score(Xte, yte),
        "s": time.perf_counter() - start,
    }


def _note(options):
    if options["csv"] is None:
        return "Stand-in data: scikit-learn's digits (no ``--set csv=PATH`` given)."
    return None


STUDIES = [
    DerivedStudy(
        name="lda_units",
        title="Private LDA on features of mixed units: a norm bound or ranges",
        caption="Test accuracy and gap to scikit-learn's LDA (delta = 1e-6)",
        grid={"epsilon": [1.0]},
        data=_units_table,
        methods={
            m: _units(m) for m in ["scikit-learn", "data_norm", "bounds", "private"]
        },
        repeats=20,
        options={"n": 30_000},
        derive=lambda row: {
            f"{m} largest gap": max(row["runs"][f"{m} gap"])
            for m in ["data_norm", "bounds", "private"]
        },
        quick={"n": 5000},
    ),
    DerivedStudy(
        name="lda_mnist",
        title="Private PCA then private LDA on MNIST, one budget",
        caption="Test accuracy, largest epsilon spent and fit time in seconds; "
        "non-private: scikit-learn's PCA(40) + LDA (delta = 1e-6)",
        grid={"epsilon": [0.5, 1.0, 2.0, 4.0]},
        methods={
            "non-private": lambda data, cell, r: _exact(cell["csv"]),
            "private": _mnist,
        },
        repeats=5,
        options={"csv": None},
        derive=lambda row: {
            "smallest": min(row["runs"]["private accuracy"]),
            "largest spent": max(row["runs"]["private spent"]),
        },
        note=_note,
        quick={"epsilon": [1.0]},
    ),
    DerivedStudy(
        name="lda_mnist_search",
        title="PrivateSearchCV of the number of PCA components before a private LDA",
        caption="Picked n_components, spent epsilon, the picked model's test "
        "accuracy, seconds per search (delta = 1e-6)",
        grid={"epsilon": [2.0]},
        methods={"search": _search},
        repeats=5,
        options={"csv": None},
        derive=lambda row: {
            f"picked {k}": row["runs"]["search picked"].count(k) for k in (2, 10, 40)
        },
        note=_note,
        quick={"repeats": 1},  # the second search draws many more runs
    ),
]
