"""Private scaling + private PCA + a classifier, against scikit-learn's pipeline.

Cross-validated accuracy of

    Pipeline(scaler, PCA(n_components=k), LogisticRegression())

on two tables whose features are on mixed scales, scikit-learn's bundled
``breast_cancer`` (n = 569, d = 30, 2 classes, k = 5) and ``wine`` (n = 178,
d = 13, 3 classes, k = 3). Candidates:

- ``sklearn``: scikit-learn's ``StandardScaler`` and ``PCA`` (not private),
  the reference.
- ``Bounds+PCA``: :class:`dpcov.preprocessing.BoundsScaler` (free) then
  ``dpcov.decomposition.PCA(k, rho, data_norm=sqrt(d))``, the whole budget on
  the PCA; the scaled rows lie in ``[-1, 1]^d``, so nothing is clipped.
- ``Std+PCA`` (the recipe of the user guide):
  :class:`dpcov.preprocessing.StandardScaler` with half of the budget, then
  ``PCA(k, data_norm=sqrt(d))`` with the other half (and its default private
  centring). Standardised rows have mean squared norm about ``d``, so
  ``sqrt(d)`` is their typical norm: a public bound fixed in advance (PCA
  clips longer rows).
- ``Std+PCA, centred``: the same with ``assume_centered=True`` (the scaler
  has centred the rows about its private mean already, so PCA spends all of
  its half on the covariance instead of 1/8 on a second mean).
- ``Std+PCA, 2 sqrt(d)``: the recipe with ``data_norm = 2 sqrt(d)``.
- ``Std+PCA, 2x ranges``: the recipe with every range twice as wide (about
  its centre): what looser public ranges cost.
- ``Std+PCA, data ranges``: the recipe with the ranges read off the whole
  table (each feature's min and max). **Not private**, a reference only: it
  shows what the generous public ranges cost.

Budgets: each fitted pipeline is (epsilon, 1e-6)-DP in total, for epsilon in
{0.5, 1, 2, 4, 8}: the private steps run at ``rho = zcdp_rho(epsilon, 1e-6)``
(split in half between the scaler and PCA in the ``Std`` candidates), and
:func:`dpcov.model_selection.pipeline_cost` of each pipeline is checked to give
that epsilon. The logistic regression is fitted without privacy on the
private features (dpcov has no private classifier): the accuracies measure
how good the private features are, and the fitted pipeline as a whole is not
a private release. Each repetition ``r`` (``random_state = 1000 r + 7``,
used by the private steps and by the shuffled stratified 5-fold split) gives
one cross-validated accuracy; the tables show the mean (standard error) over
the repetitions. Bold: the best private candidate and those within two paired
standard errors of it.

Public ranges. dpcov never infers ranges from the data, and neither does this
benchmark's recipe: the ranges below are round limits of each quantity, set
from what the features measure, not from the table's minima and maxima.

- breast_cancer (features of cell nuclei in digitised images of a fine-needle
  aspirate): radius [0, 50] (image units), texture (standard deviation of
  the grey levels) [0, 100], perimeter [0, 400], area [0, 8000] (about the
  area of a disc of radius 50); the six shape descriptors (smoothness,
  compactness, concavity, concave points, symmetry, fractal dimension) are
  normalised ratios, [0, 1]. The "mean" and "worst" (mean of the three
  largest) features share these ranges; the "error" features (standard
  errors of the mean over the nuclei of an image) get a tenth of them. A few
  values exceed them ("worst compactness" and "worst concavity" above 1, some
  standard errors of the shape descriptors above 0.1) and are clipped; the
  fraction is printed (clipping is part of the private mechanism).
- wine (chemical analysis of wines): alcohol [8, 16] (% vol, table wines);
  from 0 for every concentration: malic acid [0, 10] g/L, ash [0, 5] g/L,
  alcalinity of ash [0, 40], magnesium [0, 200] mg/L, total phenols [0, 5],
  flavanoids [0, 6], nonflavanoid phenols [0, 1], proanthocyanins [0, 5],
  colour intensity [0, 15], hue [0, 2], OD280/OD315 of diluted wines [0, 5],
  proline [0, 2000] mg/L.

    python benchmarks/bench_pipeline.py --repeats 20 --out benchmarks/results

writes ``pipeline.json`` (every run), ``pipeline.csv`` and ``pipeline.rst``
(the tables) to ``--out``. Use ``--quick`` for a smoke run (2 repetitions,
two budgets).
"""

import argparse
import csv
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.decomposition import PCA as SklearnPCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler as SklearnScaler

from dpcov.accounting import zcdp_rho
from dpcov.decomposition import PCA
from dpcov.model_selection import pipeline_cost
from dpcov.preprocessing import BoundsScaler, StandardScaler

try:  # run as a script from the repository root or from benchmarks/
    from _machine import cpu_model
    from _stats import near_best
except ImportError:  # pragma: no cover
    from benchmarks._machine import cpu_model
    from benchmarks._stats import near_best

EPSILONS = [0.5, 1.0, 2.0, 4.0, 8.0]
DELTA = 1e-6
N_SPLITS = 5

# breast_cancer: round limits of each measured quantity (see the docstring).
_CANCER_LIMITS = {"radius": 50.0, "texture": 100.0, "perimeter": 400.0, "area": 8000.0}
# wine, in the order of load_wine().feature_names.
_WINE_BOUNDS = [
    ("alcohol", 8.0, 16.0),
    ("malic_acid", 0.0, 10.0),
    ("ash", 0.0, 5.0),
    ("alcalinity_of_ash", 0.0, 40.0),
    ("magnesium", 0.0, 200.0),
    ("total_phenols", 0.0, 5.0),
    ("flavanoids", 0.0, 6.0),
    ("nonflavanoid_phenols", 0.0, 1.0),
    ("proanthocyanins", 0.0, 5.0),
    ("color_intensity", 0.0, 15.0),
    ("hue", 0.0, 2.0),
    ("od280/od315_of_diluted_wines", 0.0, 5.0),
    ("proline", 0.0, 2000.0),
]

METHODS = [
    "sklearn",
    "Bounds+PCA",
    "Std+PCA",
    "Std+PCA, centred",
    "Std+PCA, 2 sqrt(d)",
    "Std+PCA, 2x ranges",
    "Std+PCA, data ranges",
]
# Private candidates with public ranges (compared for "best").
PRIVATE = METHODS[1:-1]


def cancer_bounds(feature_names):
    """Public ranges of the breast_cancer features (see the docstring)."""
    upper = []
    for name in feature_names:
        quantity = name.replace("mean ", "").replace("worst ", "")
        quantity = quantity.replace(" error", "")
        limit = _CANCER_LIMITS.get(quantity, 1.0)  # shape descriptors: [0, 1]
        upper.append(limit / 10 if name.endswith(" error") else limit)
    return np.zeros(len(upper)), np.array(upper)


def wine_bounds(feature_names):
    """Public ranges of the wine features (see the docstring)."""
    assert [name for name, _, _ in _WINE_BOUNDS] == list(feature_names)
    return (
        np.array([low for _, low, _ in _WINE_BOUNDS]),
        np.array([high for _, _, high in _WINE_BOUNDS]),
    )


def datasets():
    """(name, X, y, public bounds, k) of each table."""
    cancer, wine = load_breast_cancer(), load_wine()
    return [
        (
            "breast_cancer",
            cancer.data,
            cancer.target,
            cancer_bounds(cancer.feature_names),
            5,
        ),
        ("wine", wine.data, wine.target, wine_bounds(wine.feature_names), 3),
    ]


def _classifier():
    return LogisticRegression(max_iter=5000)


def pipelines(method, *, bounds, data_bounds, k, d, rho, seed):
    """The pipeline of one candidate at a total budget ``rho`` (zCDP)."""
    norm = math.sqrt(d)
    if method == "sklearn":
        return make_pipeline(SklearnScaler(), SklearnPCA(k), _classifier())
    if method == "Bounds+PCA":
        return make_pipeline(
            BoundsScaler(bounds=bounds),
            PCA(k, rho=rho, data_norm=norm, random_state=seed),
            _classifier(),
        )
    if method == "Std+PCA, 2x ranges":
        lower, upper = bounds
        width = upper - lower
        bounds = (lower - width / 2, upper + width / 2)
    elif method == "Std+PCA, data ranges":
        bounds = data_bounds
    return make_pipeline(
        StandardScaler(rho=rho / 2, bounds=bounds, random_state=seed),
        PCA(
            k,
            rho=rho / 2,
            data_norm=2 * norm if method == "Std+PCA, 2 sqrt(d)" else norm,
            assume_centered=method == "Std+PCA, centred",
            random_state=seed,
        ),
        _classifier(),
    )


def _summary(values):
    values = np.asarray(values)
    return {
        "mean": float(values.mean()),
        "sem": float(values.std(ddof=1) / np.sqrt(values.size))
        if values.size > 1
        else 0.0,
        "runs": values.tolist(),
    }


def _rst_table(title, rows):
    lines = [
        f".. csv-table:: {title}",
        "   :header: " + ", ".join(["epsilon"] + [f'"{m}"' for m in METHODS]),
        "",
    ]
    for eps, res in rows:
        _, near = near_best(res, PRIVATE)
        cells = [f"{eps:g}"]
        for m in METHODS:
            cell = f"{res[m]['mean']:.3f} ({res[m]['sem']:.3f})"
            cells.append(f"**{cell}**" if m in near else cell)
        lines.append("   " + ", ".join(f'"{c}"' for c in cells))
    return lines + [""]


def _text_table(title, rows):
    lines = [title, f"{'eps':>5s}  " + "  ".join(f"{m[:20]:>20s}" for m in METHODS)]
    for eps, res in rows:
        best, near = near_best(res, PRIVATE)
        cells = []
        for m in METHODS:
            mark = "*" if m == best else ("~" if m in near else " ")
            cells.append(f"{res[m]['mean']:.3f}+-{res[m]['sem']:.3f}{mark}".rjust(20))
        lines.append(f"{eps:>5g}  " + "  ".join(cells))
    return lines + [""]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats = min(args.repeats, 2) if args.quick else args.repeats
    epsilons = [1.0, 8.0] if args.quick else EPSILONS
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {
        "repeats": repeats,
        "epsilons": epsilons,
        "delta": DELTA,
        "cpu": cpu_model(),
        "datasets": {},
    }
    text, rst = [], []
    start = time.time()
    for name, X, y, bounds, k in datasets():
        n, d = X.shape
        lower, upper = bounds
        data_bounds = (X.min(0), X.max(0))  # the non-private reference only
        clipped = float(np.mean((X < lower) | (X > upper)))
        majority = float(np.bincount(y).max() / y.size)
        rows = []
        for eps in epsilons:
            rho = zcdp_rho(eps, DELTA)
            runs = {m: [] for m in METHODS}
            for r in range(repeats):
                seed = 1000 * r + 7
                folds = StratifiedKFold(N_SPLITS, shuffle=True, random_state=seed)
                for m in METHODS:
                    pipe = pipelines(
                        m,
                        bounds=bounds,
                        data_bounds=data_bounds,
                        k=k,
                        d=d,
                        rho=rho,
                        seed=seed,
                    )
                    if m != "sklearn":
                        spent = pipeline_cost(pipe).to_approx_dp(DELTA).epsilon
                        assert spent <= eps * (1 + 1e-9), (m, spent, eps)
                    with warnings.catch_warnings():
                        # LogisticRegression on the noisiest features may
                        # stop at max_iter; that is part of the result.
                        warnings.simplefilter("ignore")
                        runs[m].append(cross_val_score(pipe, X, y, cv=folds).mean())
            res = {m: _summary(v) for m, v in runs.items()}
            rows.append((eps, res))
            print(
                f"[{time.time() - start:6.1f}s] {name} eps={eps:g} "
                + " ".join(f"{m}={res[m]['mean']:.3f}" for m in METHODS),
                flush=True,
            )
        results["datasets"][name] = {
            "n": n,
            "d": d,
            "k": k,
            "lower": lower.tolist(),
            "upper": upper.tolist(),
            "clipped_fraction": clipped,
            "majority_class": majority,
            "rows": rows,
        }
        title = (
            f"{name} (n={n}, d={d}), k={k}, 5-fold accuracy, "
            f"total (epsilon, {DELTA:g})-DP per fit"
        )
        text += _text_table(title, rows)
        text.append(
            f"  clipped entries with the public ranges: {100 * clipped:.2f}%; "
            f"majority class: {majority:.3f}"
        )
        text.append("")
        rst += _rst_table(title, rows)
    elapsed = time.time() - start
    results["seconds"] = elapsed
    text.append(f"total time {elapsed:.1f} s on {results['cpu']}")
    print("\n".join(text))
    (out / "pipeline.json").write_text(json.dumps(results, indent=1))
    with open(out / "pipeline.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["dataset", "epsilon", "method", "mean", "sem"])
        for name, panel in results["datasets"].items():
            for eps, res in panel["rows"]:
                for m in METHODS:
                    writer.writerow([name, eps, m, res[m]["mean"], res[m]["sem"]])
    (out / "pipeline.rst").write_text("\n".join(rst))


if __name__ == "__main__":
    main()
