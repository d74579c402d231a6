"""dpcov's CoinPress against the authors' code, in the settings of their experiments.

The reference is the code of Biswas, Dong, Kamath and Ullman (2020)
(``cov_est`` and ``multivariate_mean_iterative`` of its ``algos.py``), run
from a checkout given as ``--set reference=PATH`` (it needs torch; without
it the reference's columns are NaN), with the budgets of its experiments:
with ``t`` steps the first ``t - 1`` share ``rho / 4`` and the last gets
``3 rho / 4``. Ours: ``coinpress_covariance`` and ``coinpress_mean`` with
plans of the same steps and budgets (``beta = 0.1``) on the same rows, and
at ``t = auto`` the plan dpcov chooses ("steps": its number of steps).
Covariance: rows of ``N(0, I)``, prior ``Sigma <= u I`` (ours with ``K =
u``), error ``||Sigma_hat - I||_F``. Mean: rows of ``N(0, I)``, prior
``||mu|| <= r`` and ``Sigma <= I``, error ``||mu_hat||``. Learner:
``MultivariateGaussian(rho, min_variance=1, max_variance, mean_bound=r)``
on rows of ``N(mu, I)``, ``||mu|| = r / 2``, against the reference given the
same public information (its covariance on the ``n // 2`` pair differences
with ``u = max_variance`` at ``3 rho / 4``, its mean on the rows scaled by
``1 / sqrt(max_variance)`` at ``rho / 4``, two steps each); "clipped": the
reference's covariance with its eigenvalues clipped to ``[min_variance,
max_variance]`` (the learner's post-processing). "ratio": ours over the
reference, per repetition.
"""

import math
import warnings
from types import SimpleNamespace

import numpy as np

from dpcov.distributions import MultivariateGaussian
from dpcov.distributions._coinpress import (
    best_covariance_plan,
    best_mean_plan,
    coinpress_covariance,
    coinpress_mean,
    covariance_plan,
    mean_plan,
)
from dpcov.mechanisms._projection import project_psd_bounded

from ._gaussian import ListedStudy, coinpress, listed, reference_seed

PART = {"covariance": 1, "mean": 2, "learner": 3}  # codes of the seed streams


def budgets(rho, t):
    return [rho] if t == 1 else [rho / (4.0 * (t - 1))] * (t - 1) + [3.0 * rho / 4.0]


def _rows(cell, r):
    d, n = cell["d"], cell["n"]
    X = np.random.default_rng([2020, PART[cell["part"]], d, n, r]).standard_normal(
        (n, d)
    )  # the old script's stream: every t and scale of (d, n) shares the rows
    if cell["part"] == "learner":
        X += cell["scale"] * math.sqrt(d) / 2.0 / math.sqrt(d)
    return X


def _ref_cov(algos, X, u, rhos):
    import torch

    n, d = X.shape
    args = SimpleNamespace(n=n, d=d, u=u, t=len(rhos), rho=rhos)
    return algos.cov_est(torch.tensor(X, dtype=torch.float32), args).double().numpy()


def _ref_mean(algos, X, r, rhos):
    return algos.multivariate_mean_iterative(
        X.copy(), np.zeros(X.shape[1]), r, len(rhos), rhos
    )


def _steps(X, cell, r):
    """Ours and the reference at ``t`` steps on the covariance or the mean."""
    if cell["part"] == "learner":
        return {}
    d, n, rho, t, part = cell["d"], cell["n"], cell["rho"], cell["t"], cell["part"]
    prior = cell["scale"] * math.sqrt(d)
    key = [2020, PART[part], d, n, r]
    rng = np.random.default_rng([*key, 1, t] if t != "auto" else [*key, 2])
    if part == "covariance":
        if t == "auto":
            plan = best_covariance_plan(n, d, rho, prior, beta=0.1)
        else:
            plan = covariance_plan(
                n, d, rho, prior, n_steps=t, early_share=0.25, beta=0.1
            )
        out = {"non-private": np.linalg.norm(np.cov(X, rowvar=False) - np.eye(d))}
        out["ours"] = np.linalg.norm(coinpress_covariance(X, plan, rng)[0] - np.eye(d))
    else:
        if t == "auto":
            plan = best_mean_plan(n, d, rho, prior, 1.0, beta=0.1)
        else:
            plan = mean_plan(
                n, d, rho, prior, 1.0, n_steps=t, early_share=0.25, beta=0.1
            )
        out = {"non-private": np.linalg.norm(X.mean(axis=0))}
        out["ours"] = np.linalg.norm(coinpress_mean(X, plan, rng))
    out["steps"], out["reference"] = plan.n_steps, np.nan
    algos = coinpress(cell["reference"])
    if algos is not None and t != "auto":
        reference_seed(*key, 0, t)
        if part == "covariance":
            error = _ref_cov(algos, X, prior, budgets(rho, t)) - np.eye(d)
        else:
            error = _ref_mean(algos, X, prior, budgets(rho, t))
        out["reference"] = np.linalg.norm(error)
    return dict(out, ratio=out["ours"] / out["reference"])


def _learner(X, cell, r):
    if cell["part"] != "learner":
        return {}
    d, n, rho, top = cell["d"], cell["n"], cell["rho"], cell["max_variance"]
    bound, key = cell["scale"] * math.sqrt(d), [2020, 3, d, n, r]
    mu, eye = np.full(d, bound / 2.0 / math.sqrt(d)), np.eye(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = MultivariateGaussian(
            rho=rho, min_variance=1.0, max_variance=top, mean_bound=bound,
            random_state=np.random.default_rng([*key, 1]),
        ).fit(X)  # fmt: skip
    out = {"cov ours": np.linalg.norm(est.covariance_ - eye)}
    out["mean ours"] = np.linalg.norm(est.mean_ - mu)
    out["cov steps"] = est.n_iterations_["covariance"]
    names = ["cov reference", "cov clipped", "mean reference"]
    names += ["cov ratio", "cov ratio clipped", "mean ratio"]
    algos = coinpress(cell["reference"])
    if algos is None:
        return dict(out, **dict.fromkeys(names, np.nan))
    reference_seed(*key, 0)
    pairs = (X[1 : n // 2 * 2 : 2] - X[0 : n // 2 * 2 : 2]) / math.sqrt(2.0)
    cov = _ref_cov(algos, pairs, top, budgets(0.75 * rho, 2))
    mean = math.sqrt(top) * _ref_mean(
        algos, X / math.sqrt(top), bound / math.sqrt(top), budgets(0.25 * rho, 2)
    )
    out["cov reference"] = np.linalg.norm(cov - eye)
    out["cov clipped"] = np.linalg.norm(project_psd_bounded(cov, top, floor=1.0) - eye)
    out["mean reference"] = np.linalg.norm(mean - mu)
    out["cov ratio"] = out["cov ours"] / out["cov reference"]
    out["cov ratio clipped"] = out["cov ours"] / out["cov clipped"]
    out["mean ratio"] = out["mean ours"] / out["mean reference"]
    return out


def _cells():
    T = [2, 3, 4, "auto"]
    cov = [(10, n, 10.0, 0.5) for n in (3000, 5000, 8000)] + [
        (2, 1000, 10.0, 0.5), (2, 3000, 10.0, 0.5), (100, 10_000, 10.0, 0.5),
        (100, 40_000, 10.0, 0.5), (100, 80_000, 10.0, 0.5),
    ]  # fmt: skip
    cov += [(10, 7000, u, 0.5) for u in (1.0, 100.0, 1e4)]
    cov += [(10, 8000, 10.0, rho) for rho in (0.005, 0.05)]
    mean = [(50, n, 10.0, 0.5) for n in (1000, 2000, 5000, 10_000)]
    mean += [(50, 2000, 10.0, rho) for rho in (0.01, 0.1)]
    mean += [(50, 2000, r, 0.5) for r in (1.0, 1000.0)]
    keys = ("d", "n", "scale", "rho")
    cells = [
        dict(zip(keys, c, strict=True), part=part, t=t)
        for part, grid in [("covariance", cov), ("mean", mean)]
        for c in grid
        for t in T
    ]
    learner = [
        (d, n, 10.0, rho)
        for d in (10, 50)
        for n in (2000, 8000, 20_000)
        for rho in (0.1, 0.5)
    ]
    cells += [
        dict(zip(keys, c, strict=True), part="learner", max_variance=1 + 1e-4)
        for c in learner
    ]
    cells += [
        dict(d=d, n=n, scale=10.0, rho=0.1, part="learner", max_variance=100.0)
        for d in (10, 50, 100)
        for n in (2000, 8000)
    ]
    return listed(cells, ["part", "d", "n", "scale", "rho", "max_variance", "t"])


STUDY = ListedStudy(
    name="gaussian_reference",
    title=__doc__.splitlines()[0],
    caption="Errors and ratios",
    grid=_cells(),
    zipped=True,
    split="part",
    data=_rows,
    methods={"steps": _steps, "learner": _learner},
    options={"reference": None},
    repeats=30,
    summary="median",
    quick={
        **{k: [v] for k, v in dict(d=10, n=3000, scale=10.0, rho=0.5).items()},
        "part": ["covariance", "learner"],
        "max_variance": [None, 1 + 1e-4],
        "t": [2, None],
        "repeats": 2,
    },  # fmt: skip
    docs="docs/user_guide/_bench_gaussian_reference.rst",
)
