"""PrivateSearchCV against the best candidate in hindsight and a non-private search.

Frobenius error ``||C_hat - C||_F`` (x 1e-3) of a covariance chosen among
twelve candidates, Gaussian-, Separate- and AdaptiveCovariance with
``data_norm`` in {0.25, 0.5, 1, 2}, on the Zipf-norm rows of Dong, Liang and
Yi (2022), Section 7.1 (``make_zipf_norms``, d = 20, four norm buckets; the
target is the second moment ``X.T @ X / n``). ``PrivateSearchCV``: the
defaults (``n_iter=10``, logarithmic law, 20% held out, ``score_norm=1``),
(epsilon, 1e-6)-DP as a whole; ``geometric``: ``law="geometric",
n_iter=30``; ``hindsight, per-run``: the smallest error of the twelve fitted
on 80% of the rows at the search's per-run budget (an oracle);
``GridSearchCV``: scikit-learn's over the twelve at the full budget, ranked by
the noise-free score on the other 20% (not private); ``hindsight, full``: the
smallest of those twelve errors (an oracle); ``one fit``:
``AdaptiveCovariance(data_norm=1)`` at the full budget on all rows.
Repetition r draws the rows with ``random_state = 1000 r + 7``, the searches
with ``1000 r + 11``, the baselines' split from ``default_rng([r, 2])``, as the
script this replaces did.
"""

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from dpcov.accounting import zcdp_rho
from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.datasets import make_zipf_norms
from dpcov.mechanisms import draw_run_count
from dpcov.model_selection import PrivateSearchCV, search_cost
from dpcov.model_selection._scoring import bounded_scores

from ..harness import bootstrap_interval, rst_table
from ._pipelines import DerivedStudy

DELTA = 1e-6
ESTIMATORS = [GaussianCovariance, SeparateCovariance, AdaptiveCovariance]
NORMS = [0.25, 0.5, 1.0, 2.0]
GRID = [(cls, norm) for cls in ESTIMATORS for norm in NORMS]
SEARCHES = {"PrivateSearchCV": ("logarithmic", 10), "geometric": ("geometric", 30)}
METHODS = [
    *SEARCHES,
    "hindsight, per-run",
    "GridSearchCV",
    "hindsight, full",
    "one fit",
]


def _fit(estimator, X, target):
    model = Pipeline([("cov", estimator)]).fit(X)
    return model, float(np.linalg.norm(model[-1].covariance_ - target))


def _score(estimator, X, y=None):  # the search's per-row score, without noise
    return float(np.mean(bounded_scores(estimator, X, score_norm=1.0)[0]))


def _repetition(cell, r):
    """Every method's error and choice on the rows of repetition ``r``."""
    eps, n = cell["epsilon"], cell["n"]
    X = make_zipf_norms(n, 20, n_buckets=4, random_state=1000 * r + 7)
    target = X.T @ X / n
    order = np.random.default_rng([r, 2]).permutation(n)
    valid, train = (
        np.sort(order[: math.ceil(0.2 * n)]),
        np.sort(order[math.ceil(0.2 * n) :]),
    )
    out = {}
    for name, (law, n_iter) in SEARCHES.items():
        search = PrivateSearchCV(
            Pipeline([("cov", GaussianCovariance(assume_centered=True))]),
            {
                "cov": [c(assume_centered=True) for c in ESTIMATORS],
                "cov__data_norm": NORMS,
            },
            epsilon=eps,
            delta=DELTA,
            n_iter=n_iter,
            law=law,
            score_norm=1.0,
            random_state=1000 * r + 11,
        ).fit(X)
        error = np.linalg.norm(search.best_estimator_[-1].covariance_ - target)
        out[name] = {
            "error": error,
            "norm": search.best_params_["cov__data_norm"],
            # Not released; redrawn: the search's first draw from its seed.
            "runs": draw_run_count(np.random.default_rng(1000 * r + 11), n_iter, law),
            "rho": search.run_budget_.rho,
            "noise": search.score_noise_scale_,
            "spent": search.epsilon_spent_,
        }
    run_rho = out["PrivateSearchCV"]["rho"]
    per_run, full, fits = [], [], []
    for i, (cls, norm) in enumerate(GRID):
        common = {"data_norm": norm, "assume_centered": True}
        fit = cls(rho=run_rho, random_state=1000 * r + 100 + i, **common)
        per_run.append(_fit(fit, X[train], target)[1])
        fits.append(
            cls(epsilon=eps, delta=DELTA, random_state=1000 * r + 200 + i, **common)
        )
        model, error = _fit(clone(fits[-1]), X[train], target)
        full.append((error, _score(model, X[valid])))
    grid = GridSearchCV(
        Pipeline([("cov", fits[0])]),
        {"cov": fits},
        scoring=_score,
        cv=[(train, valid)],
        refit=False,
    ).fit(X)
    # The same fits as ours (same rows, same random_state): same scores.
    np.testing.assert_allclose(
        grid.cv_results_["mean_test_score"], [s for _, s in full], rtol=1e-10
    )
    best = int(np.argmin(per_run)), int(np.argmin([e for e, _ in full]))
    out["hindsight, per-run"] = {"error": per_run[best[0]], "norm": GRID[best[0]][1]}
    out["GridSearchCV"] = {
        "error": full[grid.best_index_][0],
        "norm": GRID[grid.best_index_][1],
        "fits epsilon": search_cost(grid).epsilon_at(DELTA),
    }
    out["hindsight, full"] = {"error": full[best[1]][0], "norm": GRID[best[1]][1]}
    one = AdaptiveCovariance(
        epsilon=eps,
        delta=DELTA,
        data_norm=1.0,
        assume_centered=True,
        random_state=1000 * r + 300,
    )
    out["one fit"] = {"error": _fit(one, X, target)[1], "norm": 1.0}
    for m in METHODS:
        out[m]["ratio"] = out[m]["error"] / out["hindsight, per-run"]["error"]
    return out


def _interval(values, statistic, scale=1.0):
    low, high = bootstrap_interval(values, statistic, rng=0)
    return f"{scale * statistic(values):.2f} [{scale * low:.2f}, {scale * high:.2f}]"


@dataclass
class SearchStudy(DerivedStudy):
    """One row per epsilon and method: errors, and what each method ran and chose."""

    def table(self, rows, grid, repeats):
        lines = []
        for row in rows:
            runs, eps = row["runs"], row["epsilon"]
            for m in METHODS:
                error = np.array(runs[f"{m} error"])
                norms = Counter(runs[f"{m} norm"])
                line = {
                    "epsilon": eps,
                    "method": m,
                    "median error": _interval(error, np.median, 1e3),
                    "mean error": _interval(error, np.mean, 1e3),
                    "/ hindsight": _interval(np.array(runs[f"{m} ratio"]), np.median),
                    "rho of each fit": zcdp_rho(eps, DELTA),
                    "data_norm picked": " / ".join(str(norms[v]) for v in NORMS),
                    "guarantee": f"({eps:g}, 1e-6)-DP"
                    if m in (*SEARCHES, "one fit")
                    else "none",
                }
                if m in SEARCHES or m == "hindsight, per-run":
                    line["rho of each fit"] = runs[
                        "PrivateSearchCV rho" if m not in SEARCHES else f"{m} rho"
                    ][0]
                if m in SEARCHES:
                    n_runs = runs[f"{m} runs"]
                    line["runs"] = (
                        f"{np.median(n_runs):g} ({min(n_runs):g}-{max(n_runs):g})"
                    )
                    line["one-run"] = sum(k == 1 for k in n_runs)
                    line["score noise x 1e-5"] = 1e5 * np.median(runs[f"{m} noise"])
                if m == "GridSearchCV":
                    line["guarantee"] = (
                        f"fits: ({runs['GridSearchCV fits epsilon'][0]:.3g}, 1e-6)-DP"
                    )
                lines.append(line)
        head = (
            f"{self.caption} ({repeats} repetitions, [95% bootstrap interval]; "
            "runs: redrawn from the search's seed, not released)."
        )
        return (
            head
            + "\n\n"
            + rst_table(lines, list(dict.fromkeys(k for line in lines for k in line)))
        )


STUDY = SearchStudy(
    name="search",
    title=__doc__.splitlines()[0],
    caption="Frobenius error (x 1e-3), error over the best in hindsight's "
    "(paired, median), and what each method ran and chose (delta = 1e-6)",
    grid={"epsilon": [0.5, 1.0, 2.0]},
    data=_repetition,
    methods={m: lambda data, cell, r, m=m: data[m] for m in METHODS},
    repeats=100,
    summary="median",
    options={"n": 20_000},
    blas_threads=1,
    quick={"epsilon": [1.0], "n": 2000, "repeats": 1},
    docs="docs/user_guide/_bench_search.rst",
)
