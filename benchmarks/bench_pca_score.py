"""PCA's default private search score against the captured energy.

Which ``n_components`` ``PrivateSearchCV`` picks when it ranks PCA fits by
its default score, the held-out log-likelihood of the probabilistic PCA
model (Tipping and Bishop, 1999), against the fraction of the held-out rows'
energy the components capture (the previous default, which never falls as
components are added). Rows: a rank-5 signal in d = 30 plus isotropic noise
(``Z = S W + E``, ``W`` 5 x 30 with entries 2 N(0, 1), ``S`` and ``E``
standard normal; 20,000 rows scaled into the unit ball, ``data_norm = 1``).
Candidates ``n_components`` in {2, 5, 10, 20, 29}; budgets (epsilon, 1e-6)
with epsilon in {0.5, 2}; the search's defaults otherwise (logarithmic
run-count law, ``n_iter = 10``, 20% held out).

Two tables:

1. Each candidate fitted once at the search's per-run budget on the 80%
   training rows, seeds 0 to 4: the mean held-out log-likelihood and captured
   energy on the other 20% (what each score ranks, before the selection's
   noise).
2. ``--repeats`` searches per score and epsilon (``random_state`` 0, 1, ...):
   how many picked each candidate.

    python benchmarks/bench_pca_score.py --repeats 20 --out benchmarks/results
    python benchmarks/bench_pca_score.py --out benchmarks/results \\
        --docs docs/user_guide/_bench_pca_score.rst
"""

import argparse
import json
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

from dpcov.base import budget_params
from dpcov.decomposition import PCA
from dpcov.model_selection import PrivateSearchCV
from dpcov.model_selection._scoring import _captured_fraction, _pca_log_likelihood

try:  # run as a script from the repository root or from benchmarks/
    from _machine import cpu_model
except ImportError:  # pragma: no cover
    from benchmarks._machine import cpu_model

CANDIDATES = [2, 5, 10, 20, 29]
EPSILONS = [0.5, 2.0]
N_SAMPLES, N_FEATURES, RANK = 20_000, 30, 5


def rows(seed=0):
    rng = np.random.default_rng(seed)
    W = 2.0 * rng.normal(size=(RANK, N_FEATURES))
    Z = rng.normal(size=(N_SAMPLES, RANK)) @ W + rng.normal(
        size=(N_SAMPLES, N_FEATURES)
    )
    return Z / np.linalg.norm(Z, axis=1).max()


def energy(model, X):
    return _captured_fraction(model, X)[0]


def candidate_scores(X, epsilon):
    # Each candidate at the search's per-run budget, on its training rows.
    run = (
        PrivateSearchCV(
            PCA(data_norm=1.0), {"n_components": CANDIDATES}, epsilon=epsilon
        )
        .fit(X)
        .run_budget_
    )
    cut = int(0.8 * X.shape[0])
    train, held = X[:cut], X[cut:]
    out = {}
    for k in CANDIDATES:
        likelihood, captured = [], []
        for seed in range(5):
            model = PCA(k, data_norm=1.0, random_state=seed)
            model.set_params(**budget_params(model, run)).fit(train)
            likelihood.append(float(_pca_log_likelihood(model, held)[0].mean()))
            captured.append(float(energy(model, held).mean()))
        out[k] = {"likelihood": likelihood, "energy": captured}
    return out


def picks(X, epsilon, repeats, score):
    extra = {} if score == "likelihood" else dict(scoring=energy, score_range=(0, 1))
    counts = Counter()
    for seed in range(repeats):
        search = PrivateSearchCV(
            PCA(data_norm=1.0),
            {"n_components": CANDIDATES},
            epsilon=epsilon,
            random_state=seed,
            **extra,
        ).fit(X)
        counts[int(search.best_params_["n_components"])] += 1
    return {k: counts.get(k, 0) for k in CANDIDATES}


def render(results):
    lines = [
        f"Machine: {results['machine']}; rank-5 rows in d = 30, n = 20,000, "
        "delta = 1e-6.",
        "",
        "Each candidate once per seed (0 to 4) at the per-run budget: mean "
        "held-out log-likelihood (the default score) and captured energy.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - epsilon",
        "     - n_components",
        "     - log-likelihood",
        "     - captured energy",
    ]
    for row in results["rows"]:
        for k in CANDIDATES:
            cell = row["candidates"][str(k)]
            lines += [
                f"   * - {row['epsilon']:g}",
                f"     - {k}",
                f"     - {np.mean(cell['likelihood']):.2f}",
                f"     - {np.mean(cell['energy']):.4f}",
            ]
    lines += [
        "",
        f"Searches ({results['repeats']} per cell): how many picked each candidate.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - epsilon",
        "     - score",
        *[f"     - {k}" for k in CANDIDATES],
    ]
    for row in results["rows"]:
        for score in ("likelihood", "energy"):
            counts = row["picks"][score]
            lines += [f"   * - {row['epsilon']:g}", f"     - {score}"]
            lines += [f"     - {counts[str(k)]}" for k in CANDIDATES]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    parser.add_argument("--docs", type=Path, default=None)
    args = parser.parse_args()
    path = args.out / "pca_score.json"
    if args.docs is not None:
        args.docs.write_text(render(json.loads(path.read_text())))
        return
    warnings.simplefilter("ignore")  # seeded fits say so; measured on purpose
    X = rows()
    start = time.perf_counter()
    results = {"machine": cpu_model(), "repeats": args.repeats, "rows": []}
    for epsilon in EPSILONS:
        row = {"epsilon": epsilon, "candidates": candidate_scores(X, epsilon)}
        row["picks"] = {
            score: picks(X, epsilon, args.repeats, score)
            for score in ("likelihood", "energy")
        }
        results["rows"].append(row)
        print(row["picks"], flush=True)
    results["seconds"] = time.perf_counter() - start
    args.out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1))
    print(render(json.loads(json.dumps(results))))


if __name__ == "__main__":
    main()
