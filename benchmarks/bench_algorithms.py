"""Profile of the algorithms whose cost is not the Gram pass.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \\
        python benchmarks/bench_algorithms.py --rounds 7

Times, at realistic sizes, the fits (or mechanism calls) whose running time is
spent after the second-moment matrix is formed, or that form none:

- ``eigen_sampling``: ``EigenSamplingCovariance(epsilon=1, delta=0,
  data_norm=1, assume_centered=True)`` at ``n = 10000``, ``d`` in {10, 50,
  100} (``d - 1`` Bingham draws, each an eigendecomposition plus an ACG
  rejection sampler);
- ``nuclear_exact`` and ``nuclear_gibbs``: ``NuclearLaplaceCovariance(
  epsilon=1, data_norm=1, assume_centered=True)`` at ``n = 10000``, with the
  exact profile sampler (``d`` in {3, 6, 8}) and the Gibbs sampler (``d`` in
  {10, 20, 50, 100}, ``max(200, 20 d)`` sweeps);
- ``approximate_subspace``: ``ApproximateSubspace(n_components=2)`` at
  ``n = 100000``, ``d`` in {50, 100}, default blocks (36 at epsilon = 1,
  delta = 1e-6), once with ``n_repeats=1`` and once with ``n_repeats=3``
  (boosting), on rows near a 2-dimensional subspace;
- ``exact_subspace``: ``ExactSubspace(n_components=2, assume_centered=True)``
  ("majority") at ``n = 100000``, ``d = 50``, on integer rows in a
  2-dimensional lattice subspace;
- ``stable_histogram``: :func:`dpcov.mechanisms.stable_histogram` on
  ``10**5`` and ``10**6`` items of 4 integer coordinates, about half of them
  distinct cells.

Data come from ``numpy.random.default_rng(--seed)``. Each case is warmed up
once, then timed ``--rounds`` times (``time.perf_counter`` around the fit,
``random_state`` = the round), and the cases are interleaved round by round so
that the load of this shared 2-core VM (+-30% on single timings) spreads over
all of them; the table reports medians and minima. One more fit per case runs
under ``cProfile``: "where time goes" lists the cumulative share of the
profiled time of the case's named stages (cProfile inflates Python-level
calls, so read the shares, not the absolute times).

Writes ``algorithms.json`` to ``--out`` (default ``benchmarks/results``; the
file name is ``--name``). ``--only`` keeps the cases whose name contains one
of the given strings; ``--quick`` is a smoke run (2 rounds, the smaller sizes).
"""

import argparse
import cProfile
import json
import platform
import pstats
import time
import warnings
from pathlib import Path

import numpy as np

import dpcov
from dpcov.covariance import EigenSamplingCovariance, NuclearLaplaceCovariance
from dpcov.decomposition import ApproximateSubspace, ExactSubspace
from dpcov.mechanisms import stable_histogram

ROOT = Path(__file__).resolve().parent.parent


def unit_rows(rng, n, d, decay=1e-3):
    """Rows from N(0, diag(s)) in a random rotation, ``s`` geometric from 1 to
    ``decay``, scaled so that the largest row norm is 1."""
    X = rng.standard_normal((n, d)) * np.sqrt(np.geomspace(1.0, decay, d))
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    X = X @ (q * np.sign(np.diag(r))).T
    return X / np.linalg.norm(X, axis=1).max()


def near_subspace(rng, n, d, k, noise=1e-6):
    basis = np.linalg.qr(rng.standard_normal((d, k)))[0].T
    return rng.standard_normal((n, k)) @ basis + noise * rng.standard_normal((n, d))


def lattice_subspace(rng, n, d, k):
    basis = rng.integers(-5, 6, size=(k, d))
    return (rng.integers(-9, 10, size=(n, k)) @ basis).astype(float)


# Stages: display name -> "file:function" substrings of the profile's entries
# (alternatives); the share is the largest cumulative time among the matches.
STAGES = {
    "eigen_sampling": {
        "gram": ["__init__.py:row_statistics"],
        "eigh": ["_linalg.py:eigh"],
        "ACG rejection": ["_bingham.py:_acg_rejection"],
        "complement": ["_eigen_sampling.py:_complement"],
    },
    "nuclear_exact": {
        "profile (rejection)": ["_nuclear.py:nuclear_profile_exact"],
        "Wishart proposals": ["_nuclear.py:_wishart_profile"],
        "acceptance": ["_nuclear.py:_log_acceptance"],
        "Haar": ["_nuclear.py:haar_orthogonal"],
    },
    "nuclear_gibbs": {
        "profile (Gibbs)": ["_nuclear.py:nuclear_profile_gibbs"],
        "log conditional": ["_nuclear.py:_log_conditional"],
        "uniform draws": ["_noise.py:uniform"],
        "Haar": ["_nuclear.py:haar_orthogonal"],
    },
    "approximate_subspace": {
        "split blocks": ["_approximate_subspace.py:split_blocks"],
        "block PCAs": ["_approximate_subspace.py:block_projections"],
        "histogram": ["_histogram.py:stable_histogram"],
        "boost": ["_approximate_subspace.py:boost"],
    },
    "exact_subspace": {
        "integer rows": ["_exact.py:integer_rows", "_exact.py:integer_matrix"],
        "search": ["_exact_subspace.py:majority_search"],
        "hyperplane count": ["_exact.py:max_hyperplane_count"],
        "basis": ["_exact.py:orthonormal_basis"],
    },
    "stable_histogram": {
        "count cells": ["unique", "_histogram.py:_count_cells"],
        "noise": ["_noise.py:laplace"],
        "sort": ["argsort"],
    },
}


def make_cases(quick, seed):
    """List of (case, params, run) with ``run(random_state)`` the timed call."""
    rng = np.random.default_rng(seed)
    cases = []
    for d in [10, 50] if quick else [10, 50, 100]:
        X = unit_rows(rng, 10_000, d)

        def run(rs, X=X):
            EigenSamplingCovariance(
                epsilon=1.0,
                delta=0.0,
                data_norm=1.0,
                assume_centered=True,
                random_state=rs,
            ).fit(X)

        cases.append(("eigen_sampling", dict(n=10_000, d=d), run))
    for d, path in [
        (3, "exact"),
        (6, "exact"),
        (8, "exact"),
        (10, "gibbs"),
        (20, "gibbs"),
        (50, "gibbs"),
        (100, "gibbs"),
    ]:
        if quick and d > 20:
            continue
        X = unit_rows(rng, 10_000, d)

        def run(rs, X=X):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # the Gibbs warning
                NuclearLaplaceCovariance(
                    epsilon=1.0, data_norm=1.0, assume_centered=True, random_state=rs
                ).fit(X)

        cases.append((f"nuclear_{path}", dict(n=10_000, d=d), run))
    for d in [50] if quick else [50, 100]:
        X = near_subspace(rng, 100_000, d, 2)
        for repeats in [1, 3]:

            def run(rs, X=X, repeats=repeats):
                ApproximateSubspace(
                    n_components=2, n_repeats=repeats, random_state=rs
                ).fit(X)

            cases.append(
                (
                    "approximate_subspace",
                    dict(n=100_000, d=d, k=2, n_repeats=repeats),
                    run,
                )
            )
    n = 10_000 if quick else 100_000
    X = lattice_subspace(rng, n, 50, 2)

    def run(rs, X=X):
        ExactSubspace(n_components=2, assume_centered=True, random_state=rs).fit(X)

    cases.append(("exact_subspace", dict(n=n, d=50, k=2), run))
    for t in [10**5] if quick else [10**5, 10**6]:
        # About half distinct cells: coordinates in a range of about t**(1/4).
        side = max(2, round((2 * t) ** 0.25))
        items = rng.integers(0, side, size=(t, 4))

        def run(rs, items=items):
            stable_histogram(
                items, epsilon=1.0, delta=1e-6, rng=np.random.default_rng(rs)
            )

        n_cells = len(np.unique(items, axis=0))
        cases.append(("stable_histogram", dict(items=t, cells=n_cells), run))
    return cases


def stage_shares(profile, stages):
    stats = pstats.Stats(profile)
    total = stats.total_tt
    shares = {}
    for name, patterns in stages.items():
        best = 0.0
        for (path, _, func), (_, _, _, cumtime, _) in stats.stats.items():
            where = f"{Path(path).name}:{func}"
            if any(p in where for p in patterns):
                best = max(best, cumtime)
        shares[name] = best / total if total else 0.0
    return total, shares


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    parser.add_argument("--name", default="algorithms.json")
    args = parser.parse_args()
    rounds = 2 if args.quick else args.rounds
    cases = make_cases(args.quick, args.seed)
    if args.only:
        cases = [c for c in cases if any(s in c[0] for s in args.only)]
    for _, _, run in cases:  # warm-up: imports, first calls
        run(0)
    times = [[] for _ in cases]
    for r in range(rounds):
        for i in np.random.default_rng(r).permutation(len(cases)):
            start = time.perf_counter()
            cases[i][2](r)
            times[i].append(time.perf_counter() - start)
    rows = []
    for (case, params, run), values in zip(cases, times, strict=True):
        row = dict(case=case, **params)
        row["median_s"] = float(np.median(values))
        row["min_s"] = float(np.min(values))
        row["times_s"] = values
        if not args.no_profile:
            profile = cProfile.Profile()
            profile.runcall(run, 0)
            row["profiled_s"], row["stage_shares"] = stage_shares(profile, STAGES[case])
        rows.append(row)

    print(
        f"dpcov {dpcov.__version__} from {Path(dpcov.__file__).parent}, "
        f"{rounds} interleaved rounds"
    )
    print(f"{'case':22s}{'size':34s}{'median s':>10s}{'min s':>9s}  where time goes")
    for row in rows:
        size = ", ".join(
            f"{k}={row[k]}"
            for k in row
            if k
            not in (
                "case",
                "median_s",
                "min_s",
                "times_s",
                "profiled_s",
                "stage_shares",
            )
        )
        shares = ", ".join(
            f"{name} {100 * share:.0f}%"
            for name, share in row.get("stage_shares", {}).items()
        )
        print(
            f"{row['case']:22s}{size:34s}{row['median_s']:10.4f}"
            f"{row['min_s']:9.4f}  {shares}"
        )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / args.name, "w") as f:
        json.dump(
            {
                "command": vars(args),
                "machine": dict(
                    processor=platform.processor() or platform.machine(),
                    python=platform.python_version(),
                    numpy=np.__version__,
                ),
                "results": rows,
            },
            f,
            indent=2,
        )


if __name__ == "__main__":
    main()
