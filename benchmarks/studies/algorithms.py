"""Profile of the algorithms whose cost is not the Gram pass.

The fits (or mechanism calls) whose time is spent after the second-moment
matrix is formed, or that form none: EigenSamplingCovariance (``delta=0``,
``d - 1`` Bingham draws), NuclearLaplaceCovariance with its exact profile
sampler (``d <= 8``) and its Gibbs sampler, ApproximateSubspace
(``n_components=2``, ``n_repeats`` 1 and 3) on rows near a plane,
ExactSubspace ("majority") on integer rows in a lattice plane, and
``stable_histogram`` on items of 4 integer coordinates, about half of them
distinct. All at ``epsilon=1``, ``data_norm=1`` where it applies; the data
come from one generator (option ``seed``), each call's ``random_state`` is
its round. "where time goes": the share of one more call's ``cProfile`` time
spent in each named stage (cProfile inflates Python-level calls: read the
shares, not the times). Option ``sizes``: ``"full"``, ``"small"`` (fewer,
smaller cases) or ``"tiny"`` (the smoke run); ``only``: keep the cases whose
name contains this string.
"""

import cProfile
import itertools
import pstats
import warnings
from pathlib import Path

import numpy as np

from dpcov.covariance import EigenSamplingCovariance, NuclearLaplaceCovariance
from dpcov.decomposition import ApproximateSubspace, ExactSubspace
from dpcov.mechanisms import stable_histogram

from ._speed import SpeedStudy

# Stages: name -> "file:function" substrings of the profile's entries; the
# share is the largest cumulative time among the matches.
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


def unit_rows(rng, n, d, decay=1e-3):
    """Gaussian rows with geometric variances, rotated; largest norm 1."""
    X = rng.standard_normal((n, d)) * np.sqrt(np.geomspace(1.0, decay, d))
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    X = X @ (q * np.sign(np.diag(r))).T
    return X / np.linalg.norm(X, axis=1).max()


def _eigen(X, rs):
    EigenSamplingCovariance(
        epsilon=1.0, delta=0.0, data_norm=1.0, assume_centered=True, random_state=rs
    ).fit(X)


def _nuclear(X, rs):
    NuclearLaplaceCovariance(
        epsilon=1.0, data_norm=1.0, assume_centered=True, random_state=rs
    ).fit(X)


def make_cases(sizes, seed):
    """``[(case, size, run)]``, ``run(random_state)`` the timed call; the
    data are drawn in this order from one generator (as the sizes allow)."""
    rng = np.random.default_rng(seed)
    full, tiny = sizes == "full", sizes == "tiny"
    n = 2_000 if tiny else 10_000
    cases = []
    for d in [10, 50, 100] if full else [10] if tiny else [10, 50]:
        X = unit_rows(rng, n, d)
        cases.append(("eigen_sampling", f"n={n}, d={d}", lambda rs, X=X: _eigen(X, rs)))
    for d in [3, 6, 8, 10, 20, 50, 100]:
        if (not full and d > 20) or (tiny and d > 6):
            continue
        X = unit_rows(rng, n, d)
        path = "exact" if d <= 8 else "gibbs"
        run = lambda rs, X=X: _nuclear(X, rs)  # noqa: E731
        cases.append((f"nuclear_{path}", f"n={n}, d={d}", run))
    m = 5_000 if tiny else 100_000
    for d in [50, 100] if full else [10] if tiny else [50]:
        basis = np.linalg.qr(rng.standard_normal((d, 2)))[0].T
        X = rng.standard_normal((m, 2)) @ basis + 1e-6 * rng.standard_normal((m, d))
        for repeats in [1, 3]:
            run = lambda rs, X=X, k=repeats: ApproximateSubspace(  # noqa: E731
                n_components=2, n_repeats=k, random_state=rs
            ).fit(X)
            size = f"n={m}, d={d}, k=2, n_repeats={repeats}"
            cases.append(("approximate_subspace", size, run))
    m = 100_000 if full else m if tiny else 10_000
    basis = rng.integers(-5, 6, size=(2, 50))
    X = (rng.integers(-9, 10, size=(m, 2)) @ basis).astype(float)
    run = lambda rs, X=X: ExactSubspace(  # noqa: E731
        n_components=2, assume_centered=True, random_state=rs
    ).fit(X)
    cases.append(("exact_subspace", f"n={m}, d=50, k=2", run))
    for t in [10**5, 10**6] if full else [10**4] if tiny else [10**5]:
        side = max(2, round((2 * t) ** 0.25))  # about half the items distinct
        items = rng.integers(0, side, size=(t, 4))
        run = lambda rs, items=items: stable_histogram(  # noqa: E731
            items, epsilon=1.0, delta=1e-6, rng=np.random.default_rng(rs)
        )
        cells = len(np.unique(items, axis=0))
        cases.append(("stable_histogram", f"items={t}, cells={cells}", run))
    return cases


def _calls(cell):
    cases = make_cases(cell["sizes"], cell["seed"])
    cases = [c for c in cases if cell["only"] is None or cell["only"] in c[0]]
    calls, cell["runs"] = {}, {}
    for case, size, run in cases:
        run(0)  # warm-up: imports, first calls
        rounds = itertools.count()
        name = f"{case} {size}"
        calls[name] = lambda run=run, rounds=rounds: run(next(rounds))
        cell["runs"][name] = (case, run)
    return calls


def _shares(cell, name, call):
    if not cell["profile"]:
        return {}
    case, run = cell["runs"][name]
    profile = cProfile.Profile()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        profile.runcall(run, 0)
    stats = pstats.Stats(profile)
    shares = []
    for stage, patterns in STAGES[case].items():
        best = 0.0
        for (path, _, func), (*_, cumtime, _) in stats.stats.items():
            if any(p in f"{Path(path).name}:{func}" for p in patterns):
                best = max(best, cumtime)
        shares.append(f"{stage} {100 * best / stats.total_tt:.0f}%")
    return {"where time goes": ", ".join(shares)}


STUDY = SpeedStudy(
    name="algorithms",
    title=__doc__.splitlines()[0],
    caption="Fits whose cost is not the Gram pass",
    grid={},
    options={"sizes": "full", "seed": 0, "only": None, "profile": True},
    calls=_calls,
    extra=_shares,
    repeats=7,
    quick={"sizes": "tiny", "repeats": 2},
)
