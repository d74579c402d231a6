"""The tables the studies share, with ranges written without reading the data.

Each range below comes from what the quantity can be (a unit's physical or
clinical limits, rounded), not from the table's values, so a release that
uses it as ``bounds`` spends no privacy on it. Two wine boxes exist because
two studies chose them independently and their published tables use them:
``wine`` (the chemistry of wine, a tighter box) and ``wine_wide`` (round
limits of each measurement).
"""

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_wine

#: wine, in the order of ``load_wine().feature_names``: (low, high).
WINE = [
    (10, 15), (0, 6), (1, 4), (10, 30), (50, 200), (0, 4), (0, 6),
    (0, 1), (0, 4), (0, 15), (0, 2), (1, 4), (0, 2000),
]  # fmt: skip
#: wine, round limits of each measurement.
WINE_WIDE = [
    (8, 16), (0, 10), (0, 5), (0, 40), (0, 200), (0, 5), (0, 6),
    (0, 1), (0, 5), (0, 15), (0, 2), (0, 5), (0, 2000),
]  # fmt: skip
#: breast_cancer: round limits of each measured quantity; shape descriptors
#: lie in [0, 1]; an "error" (standard error) column gets a tenth of its limit.
CANCER_LIMITS = {"radius": 50.0, "texture": 100.0, "perimeter": 400.0, "area": 8000.0}
#: The unscaled diabetes table: age, sex (1/2), BMI, blood pressure, six serum
#: measurements, each within clinical limits.
DIABETES = (
    [0.0, 1.0, 10.0, 40.0, 50.0, 0.0, 0.0, 0.0, 2.0, 40.0],
    [100.0, 2.0, 60.0, 160.0, 400.0, 300.0, 150.0, 15.0, 8.0, 300.0],
)


def _cancer_bounds(feature_names):
    upper = []
    for name in feature_names:
        quantity = name.replace("mean ", "").replace("worst ", "").replace(" error", "")
        limit = CANCER_LIMITS.get(quantity, 1.0)
        upper.append(limit / 10 if name.endswith(" error") else limit)
    return np.zeros(len(upper)), np.array(upper)


def _box(pairs):
    low, high = np.array(pairs, dtype=float).T
    return low, high


TABLES = ["wine", "wine_wide", "breast_cancer", "diabetes", "digits"]


def load_table(name):
    """``(X, y, bounds)`` of a bundled table; ``bounds`` is ``(low, high)``."""
    if name in ("wine", "wine_wide"):
        data = load_wine()
        return data.data, data.target, _box(WINE if name == "wine" else WINE_WIDE)
    if name == "breast_cancer":
        data = load_breast_cancer()
        return data.data, data.target, _cancer_bounds(data.feature_names)
    if name == "diabetes":
        data = load_diabetes(scaled=False)
        return data.data, data.target, tuple(np.array(b) for b in DIABETES)
    if name == "digits":  # pixels in [0, 16], divided by 16
        data = load_digits()
        d = data.data.shape[1]
        return data.data / 16.0, data.target, (np.zeros(d), np.ones(d))
    raise ValueError(f"unknown table {name!r}; known: {TABLES}")


def public_bounds(name):
    """The public ``bounds`` of a bundled table (see :func:`load_table`)."""
    return load_table(name)[2]
