"""PrivateSearchCV against the best candidate in hindsight and a non-private search.

Frobenius error ``||C_hat - C||_F`` of a covariance chosen among twelve
candidates, ``Pipeline([("cov", estimator)])`` with the estimator in
{GaussianCovariance, SeparateCovariance, AdaptiveCovariance} and ``data_norm``
in {0.25, 0.5, 1, 2} (a geometric grid about the rows' norms: the largest is
1, 98.7% of the rows have norm at most 0.5). Data: the Zipf-norm rows of Dong,
Liang and Yi (2022, Section 7.1), :func:`dpcov.datasets.make_zipf_norms` with
``n = 20000, d = 20`` and four norm buckets (norms 1/8, 1/4, 1/2 and 1); as in
that paper the target ``C`` is the second moment ``X.T @ X / n`` of all rows
(``assume_centered=True``). Budgets: (epsilon, 1e-6) for epsilon in
{0.5, 1, 2}.

Methods, each repetition on the same rows:

- ``PrivateSearchCV``: ``PrivateSearchCV(pipe, {"cov": [three estimators],
  "cov__data_norm": [0.25, 0.5, 1, 2]}, epsilon=epsilon, delta=1e-6,
  score_norm=1)`` with the defaults ``n_iter=10``, ``law="logarithmic"``,
  ``validation_fraction=0.2``: a random number of runs (each a candidate drawn
  at random, fitted on 80% of the rows and scored with noise on the other
  20%), the best released. The whole search is (epsilon, 1e-6)-DP (Liu and
  Talwar, 2019; Papernot and Steinke, 2022); error of ``best_estimator_``.
- ``PrivateSearchCV, geometric, n_iter=30``: the same with ``law="geometric",
  n_iter=30``: more runs (the logarithmic law runs a single candidate with
  probability about 0.28 at ``n_iter=10``, the geometric law with
  probability 1/30 at ``n_iter=30``), each with a smaller budget.
- ``best in hindsight, per-run budget``: every candidate fitted on a random
  80% of the rows at the search's per-run budget (``run_budget_``), and the
  smallest of the twelve errors. It reads the target: an oracle, not a
  release.
- ``GridSearchCV (not private)``: scikit-learn's ``GridSearchCV`` over the
  same twelve candidates, each at the full (epsilon, 1e-6), fitted on the same
  80% and ranked by the same Frobenius score on the other 20% (rows clipped
  to norm 1) computed without noise; error of the chosen fit (``refit=False``:
  the fit that was scored, refitted with its own ``random_state`` on the same
  rows). Its twelve fits compose to more than epsilon (the ``GridSearchCV
  fits`` column, from :func:`dpcov.model_selection.search_cost`), and its
  choice reads the held-out rows without noise: no guarantee covers it. It
  shows what a non-private choice among full-budget fits gives.
- ``best in hindsight, full budget``: the smallest error among those twelve
  full-budget fits (an oracle).
- ``one fit, no search``: ``AdaptiveCovariance(data_norm=1)`` at the full
  (epsilon, 1e-6) on all rows: a single release at the rows' known bound,
  with the estimator the user guide suggests for skewed norms.

Repetition ``r`` draws the rows with ``random_state = 1000 r + 7`` (the same
rows at every epsilon), the search with ``random_state = 1000 r + 11`` (so each
search draws the same number of runs and the same candidates at every
epsilon), the 80/20 split
of the baselines from ``numpy.random.default_rng([r, 2])`` and gives every
baseline fit its own fixed ``random_state``. The tables give the median and
the mean over the repetitions with 95% percentile bootstrap intervals
(2000 resamples).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_search.py --repeats 100 --n-jobs 2

writes ``search.json`` (every run) and ``search.rst`` (the tables) to
``--out`` and the tables, with this description, to
``docs/user_guide/_bench_search.rst`` (not with ``--quick`` or
``--no-docs``). ``--quick`` is a smoke run (3 repetitions, epsilon 1).
"""

import argparse
import json
import math
import os
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from dpcov.accounting import zcdp_rho
from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.datasets import make_zipf_norms
from dpcov.exceptions import NoiseDominatedWarning
from dpcov.mechanisms import draw_run_count
from dpcov.model_selection import PrivateSearchCV, search_cost
from dpcov.model_selection._scoring import bounded_scores

try:  # run as a script from the repository root or from benchmarks/
    from _machine import cpu_model
    from _stats import bootstrap_interval
except ImportError:  # pragma: no cover
    from benchmarks._machine import cpu_model
    from benchmarks._stats import bootstrap_interval

ROOT = Path(__file__).resolve().parents[1]
N_SAMPLES, N_FEATURES, N_BUCKETS = 20_000, 20, 4
EPSILONS = [0.5, 1.0, 2.0]
DELTA = 1e-6
VALIDATION_FRACTION = 0.2
SCORE_NORM = 1.0  # the rows' norms are at most 1 (public: the generator's)
ESTIMATORS = [GaussianCovariance, SeparateCovariance, AdaptiveCovariance]
DATA_NORMS = [0.25, 0.5, 1.0, 2.0]
GRID = [(cls, norm) for cls in ESTIMATORS for norm in DATA_NORMS]
# The searches: name -> (law, n_iter).
SEARCHES = {
    "PrivateSearchCV": ("logarithmic", 10),  # the defaults
    "PrivateSearchCV, geometric, n_iter=30": ("geometric", 30),
}
METHODS = [
    *SEARCHES,
    "best in hindsight, per-run budget",
    "GridSearchCV (not private)",
    "best in hindsight, full budget",
    "one fit, no search",
]
SCALE = 1e3  # errors in the tables are in units of 1e-3


def _label(cls, data_norm):
    return f"{cls.__name__}({data_norm:g})"


def _pipe(estimator):
    return Pipeline([("cov", estimator)])


def _error(model, target):
    return float(np.linalg.norm(model[-1].covariance_ - target))


def frobenius_score(estimator, X, y=None):
    """The search's per-row Frobenius score, averaged, without noise."""
    values, _ = bounded_scores(estimator, X, score_norm=SCORE_NORM)
    return float(np.mean(values))


def one_repetition(epsilon, r):
    """Errors of every method on repetition ``r`` at ``epsilon``."""
    warnings.simplefilter("ignore", NoiseDominatedWarning)  # part of the result
    X = make_zipf_norms(
        N_SAMPLES, N_FEATURES, n_buckets=N_BUCKETS, random_state=1000 * r + 7
    )
    target = X.T @ X / N_SAMPLES
    order = np.random.default_rng([r, 2]).permutation(N_SAMPLES)
    n_valid = math.ceil(VALIDATION_FRACTION * N_SAMPLES)
    valid, train = np.sort(order[:n_valid]), np.sort(order[n_valid:])

    searches = {}
    for name, (law, n_iter) in SEARCHES.items():
        search = PrivateSearchCV(
            _pipe(GaussianCovariance(assume_centered=True)),
            {
                "cov": [cls(assume_centered=True) for cls in ESTIMATORS],
                "cov__data_norm": DATA_NORMS,
            },
            epsilon=epsilon,
            delta=DELTA,
            n_iter=n_iter,
            law=law,
            validation_fraction=VALIDATION_FRACTION,
            score_norm=SCORE_NORM,
            random_state=1000 * r + 11,
        ).fit(X)
        best = search.best_params_
        searches[name] = {
            "error": _error(search.best_estimator_, target),
            "choice": _label(type(best["cov"]), best["cov__data_norm"]),
            # The number of runs is not released (the best of a known number
            # of runs is less private); a benchmark with a known seed redraws
            # it: it is the search's first draw from its random_state.
            "n_runs": int(
                draw_run_count(np.random.default_rng(1000 * r + 11), n_iter, law)
            ),
            "run_rho": float(search.run_budget_.rho),
            "score_noise": float(search.score_noise_scale_),
            "epsilon_spent": float(search.epsilon_spent_),
        }
    # The baselines' per-run budget: the default search's.
    run_rho = searches[METHODS[0]]["run_rho"]

    per_run, full, candidates = {}, {}, []
    for i, (cls, data_norm) in enumerate(GRID):
        common = dict(data_norm=data_norm, assume_centered=True)
        model = _pipe(cls(rho=run_rho, random_state=1000 * r + 100 + i, **common))
        per_run[_label(cls, data_norm)] = _error(model.fit(X[train]), target)
        candidate = cls(
            epsilon=epsilon, delta=DELTA, random_state=1000 * r + 200 + i, **common
        )
        candidates.append(candidate)
        model = _pipe(clone(candidate)).fit(X[train])
        full[_label(cls, data_norm)] = (
            _error(model, target),
            frobenius_score(model, X[valid]),
        )

    grid_search = GridSearchCV(
        _pipe(candidates[0]),
        {"cov": candidates},
        scoring=frobenius_score,
        cv=[(train, valid)],
        refit=False,
        error_score="raise",
    ).fit(X)
    scores = grid_search.cv_results_["mean_test_score"]
    # The same fits as ours (same rows, same random_state): same scores.
    np.testing.assert_allclose(scores, [s for _, s in full.values()], rtol=1e-10)
    grid_choice = _label(*GRID[grid_search.best_index_])
    grid_fits_epsilon = search_cost(grid_search).epsilon_at(DELTA)

    single = _pipe(
        AdaptiveCovariance(
            epsilon=epsilon,
            delta=DELTA,
            data_norm=1.0,
            assume_centered=True,
            random_state=1000 * r + 300,
        )
    ).fit(X)
    return {
        "errors": {
            **{name: result["error"] for name, result in searches.items()},
            "best in hindsight, per-run budget": min(per_run.values()),
            "GridSearchCV (not private)": full[grid_choice][0],
            "best in hindsight, full budget": min(e for e, _ in full.values()),
            "one fit, no search": _error(single, target),
        },
        "searches": searches,
        "hindsight_choice": min(per_run, key=per_run.get),
        "full_hindsight_choice": min(full, key=lambda k: full[k][0]),
        "grid_choice": grid_choice,
        "grid_fits_epsilon": float(grid_fits_epsilon),
        "per_run_errors": per_run,
        "full_errors": {k: e for k, (e, _) in full.items()},
    }


HINDSIGHT = "best in hindsight, per-run budget"


def summarise(runs, seed):
    """Median and mean of every method's errors, with bootstrap intervals.

    ``ratio``: the median over the repetitions of each method's error divided
    by the best in hindsight's (paired: the same rows).
    """
    out = {}
    reference = np.array([run["errors"][HINDSIGHT] for run in runs])
    for m in METHODS:
        values = np.array([run["errors"][m] for run in runs])
        out[m] = {
            "median": float(np.median(values)),
            "median_ci": bootstrap_interval(values, np.median, rng=seed),
            "mean": float(np.mean(values)),
            "mean_ci": bootstrap_interval(values, np.mean, rng=seed),
            "ratio": float(np.median(values / reference)),
            "ratio_ci": bootstrap_interval(values / reference, np.median, rng=seed),
        }
    return out


def _cell(value, interval, scale=SCALE):
    low, high = interval
    return f"{scale * value:.2f} [{scale * low:.2f}, {scale * high:.2f}]"


def _norm_counts(choices):
    counts = Counter(c.rsplit("(", 1)[1].rstrip(")") for c in choices)
    return " / ".join(f"{counts.get(f'{n:g}', 0)}" for n in DATA_NORMS)


DETAIL_HEADER = [
    "epsilon",
    "method",
    "rho of each fit",
    "runs, redrawn from the seed (not released): median (min-max)",
    "one-run searches",
    "score noise (x 1e-5)",
    "data_norm picked (0.25 / 0.5 / 1 / 2)",
    "error / best in hindsight (median)",
    "guarantee",
]


def detail_rows(results):
    """One row per epsilon and method: what each one ran and chose."""
    rows = []
    for row in results["rows"]:
        eps, runs, summary = row["epsilon"], row["runs"], row["summary"]
        full_rho = f"{zcdp_rho(eps, DELTA):.3g}"
        for m in METHODS:
            ratio = _cell(summary[m]["ratio"], summary[m]["ratio_ci"], scale=1.0)
            if m in SEARCHES:
                found = [run["searches"][m] for run in runs]
                n_runs = [f["n_runs"] for f in found]
                one_run = sum(k == 1 for k in n_runs)
                cells = [
                    f"{found[0]['run_rho']:.3g}",
                    f"{np.median(n_runs):g} ({min(n_runs)}-{max(n_runs)})",
                    f"{one_run} of {len(runs)}",
                    f"{1e5 * np.median([f['score_noise'] for f in found]):.2f}",
                    _norm_counts(f["choice"] for f in found),
                    ratio,
                    f"({max(f['epsilon_spent'] for f in found):.3g}, {DELTA:g})-DP",
                ]
            elif m == HINDSIGHT:
                cells = [
                    f"{runs[0]['searches'][METHODS[0]]['run_rho']:.3g}",
                    f"{len(GRID)} fits",
                    "",
                    "",
                    _norm_counts(run["hindsight_choice"] for run in runs),
                    "1",
                    "none (reads the target)",
                ]
            elif m == "GridSearchCV (not private)":
                cells = [
                    full_rho,
                    f"{len(GRID)} fits",
                    "",
                    "",
                    _norm_counts(run["grid_choice"] for run in runs),
                    ratio,
                    f"fits: ({runs[0]['grid_fits_epsilon']:.3g}, {DELTA:g})-DP; "
                    "choice: none",
                ]
            elif m == "best in hindsight, full budget":
                cells = [
                    full_rho,
                    f"{len(GRID)} fits",
                    "",
                    "",
                    _norm_counts(run["full_hindsight_choice"] for run in runs),
                    ratio,
                    "none (reads the target)",
                ]
            else:
                cells = [full_rho, "1 fit", "", ""]
                cells += [f"0 / 0 / {len(runs)} / 0 (fixed)", ratio]
                cells.append(f"({eps:g}, {DELTA:g})-DP")
            rows.append([f"{eps:g}", m, *cells])
    return rows


def rst_tables(results):
    repeats = results["repeats"]
    lines = []
    for stat in ("median", "mean"):
        lines += [
            f".. csv-table:: {stat.capitalize()} Frobenius error (x 1e-3) over "
            f"{repeats} repetitions [95% bootstrap interval], n = {N_SAMPLES}, "
            f"d = {N_FEATURES}, delta = {DELTA:g}",
            "   :header: " + ", ".join(["epsilon"] + [f'"{m}"' for m in METHODS]),
            "",
        ]
        for row in results["rows"]:
            s = row["summary"]
            cells = [f"{row['epsilon']:g}"]
            cells += [_cell(s[m][stat], s[m][f"{stat}_ci"]) for m in METHODS]
            lines.append("   " + ", ".join(f'"{c}"' for c in cells))
        lines.append("")
    lines += [
        ".. csv-table:: What each method ran and chose, over "
        f"{repeats} repetitions (the error ratio is paired: same rows, "
        "[95% bootstrap interval])",
        "   :header: " + ", ".join(f'"{h}"' for h in DETAIL_HEADER),
        "",
    ]
    for cells in detail_rows(results):
        lines.append("   " + ", ".join(f'"{c}"' for c in cells))
    return lines + [""]


def text_tables(results):
    width = 24
    lines = []
    for stat in ("median", "mean"):
        lines.append(
            f"{stat} Frobenius error (x 1e-3) [95% bootstrap interval], "
            f"{results['repeats']} repetitions"
        )
        lines.append(
            f"{'eps':>4s}  " + "  ".join(f"{m[:width]:>{width}s}" for m in METHODS)
        )
        for row in results["rows"]:
            s = row["summary"]
            cells = [_cell(s[m][stat], s[m][f"{stat}_ci"]) for m in METHODS]
            lines.append(
                f"{row['epsilon']:>4g}  " + "  ".join(f"{c:>{width}s}" for c in cells)
            )
        lines.append("")
    lines.append(" | ".join(DETAIL_HEADER))
    for cells in detail_rows(results):
        lines.append(" | ".join(cells))
    return lines + [""]


def docs_snippet(results, tables):
    minutes, seconds = divmod(round(results["seconds"]), 60)
    took = f"{minutes} min {seconds} s" if minutes else f"{seconds} s"
    intro = f"""\
Benchmark: a private search against the best candidate in hindsight
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~

``OPENBLAS_NUM_THREADS=1 python benchmarks/bench_search.py --repeats \
{results["repeats"]} --n-jobs {results["n_jobs"]}`` ({took} on
{results["cores"]} cores, {results["cpu"]}) chooses a covariance estimator
among twelve candidates,
:class:`~dpcov.covariance.GaussianCovariance`,
:class:`~dpcov.covariance.SeparateCovariance` and
:class:`~dpcov.covariance.AdaptiveCovariance` with ``data_norm`` in
{{0.25, 0.5, 1, 2}}, on the Zipf-norm rows of Dong, Liang and Yi (2022)
(``n = {N_SAMPLES}``, ``d = {N_FEATURES}``, four norm buckets: the largest
norm is 1, 98.7% of the rows have norm at most 0.5), and measures the
Frobenius error to the rows' second moment ``X.T @ X / n``.
:class:`~dpcov.model_selection.PrivateSearchCV` (the defaults ``n_iter=10``
and the logarithmic law, or ``law="geometric", n_iter=30``; 20% of the rows
held out, ``score_norm=1``) is (epsilon, 1e-6)-DP as a whole, choice
included (Liu and Talwar, 2019; Papernot and Steinke, 2022). The best
candidate in hindsight fits all twelve on 80% of the rows at the default
search's per-run budget and keeps the smallest error, which no one can
compute without the target. ``GridSearchCV`` fits the twelve at the full
(epsilon, 1e-6) on 80% of the rows and keeps the best noise-free Frobenius
score on the other 20%: its fits alone compose to the epsilon given in the
third table, and its choice reads the held-out rows without noise, so **it
is not private**; it shows what a non-private choice among full-budget fits
gives. "One fit, no search" is ``AdaptiveCovariance(data_norm=1)`` (the
estimator the covariance chapter suggests for skewed norms) at the full
budget on all rows. Every method sees the same rows in a repetition; the
script's docstring lists the ``random_state`` of every fit.
"""
    return intro.splitlines() + [""] + tables


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--docs", default=str(ROOT / "docs"), help="docs folder")
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats = min(args.repeats, 3) if args.quick else args.repeats
    epsilons = [1.0] if args.quick else EPSILONS
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {
        "n_samples": N_SAMPLES,
        "n_features": N_FEATURES,
        "delta": DELTA,
        "repeats": repeats,
        "n_jobs": args.n_jobs,
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "rows": [],
    }
    start = time.time()
    for epsilon in epsilons:
        runs = Parallel(n_jobs=args.n_jobs)(
            delayed(one_repetition)(epsilon, r) for r in range(repeats)
        )
        summary = summarise(runs, seed=0)
        results["rows"].append({"epsilon": epsilon, "summary": summary, "runs": runs})
        print(
            f"[{time.time() - start:6.1f}s] eps={epsilon:g} "
            + " ".join(f"{m}={SCALE * summary[m]['median']:.2f}" for m in METHODS),
            flush=True,
        )
    results["seconds"] = time.time() - start
    text = text_tables(results)
    text.append(f"total time {results['seconds']:.1f} s on {results['cpu']}")
    print("\n".join(text))
    tables = rst_tables(results)
    (out / "search.json").write_text(json.dumps(results, indent=1))
    (out / "search.rst").write_text("\n".join(tables))
    if not (args.quick or args.no_docs):
        snippet = docs_snippet(results, tables)
        (Path(args.docs) / "user_guide" / "_bench_search.rst").write_text(
            "\n".join(snippet)
        )


if __name__ == "__main__":
    main()
