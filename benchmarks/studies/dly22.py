"""Dong, Liang and Yi (2022), Section 7.1: synthetic experiments, reproduced.

Mean Frobenius error ``||C - X^T X / n||_F`` of GaussCov, SeparateCov,
AdaptiveCov and the zero matrix on the paper's Zipf-norm rows
(:func:`dpcov.datasets.make_zipf_norms`, ``N`` buckets, skew 3), one
parameter varied at a time around ``n = 5e4, d = 200, rho = 0.1, N = 4``;
rows in the unit ball (``data_norm = 1``), ``assume_centered = True``,
eigenvalues clamped to ``[0, 1]``, no floor. A new data set per repetition;
the mechanisms see the same one with independent noise. ``A/min(G,S)``:
AdaptiveCov's mean error over the smaller of GaussCov's and SeparateCov's,
with the delta method's standard error on the paired repetitions. Beside
the paper: AdaptiveCov with the reference code's GaussCov term linear in
``tau`` in its threshold scores ("tau-linear"), on skewed norms in low
dimension. ``dly22_reference`` runs the authors' code beside dpcov.
"""

import importlib
import sys
import warnings
from contextlib import contextmanager, nullcontext
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from dpcov.covariance import (
    AdaptiveCovariance,
    GaussianCovariance,
    SeparateCovariance,
    _adaptive,
)
from dpcov.datasets import make_zipf_norms

from ..harness import Combined, Study, line_figure, ratio_se, rst_table
from ._spectral import old_seed

DPCOV = {
    "GaussCov": GaussianCovariance,
    "SeparateCov": SeparateCovariance,
    "AdaptiveCov": AdaptiveCovariance,
}
LINEAR = "AdaptiveCov (tau-linear)"


@contextmanager
def _tau_linear_search():
    """AdaptiveCov whose threshold scores charge GaussCov ``tau R``, not ``tau**2``.

    The array call of ``predicted_errors`` is the threshold choice (patched),
    the scalar call the choice of mechanism at ``tau*`` (left as is); the
    term is public, so privacy is unaffected.
    """
    exact = _adaptive.predicted_errors

    def linear(tau, **kwargs):
        gauss, separate = exact(tau, **kwargs)
        if np.ndim(tau):  # R = 1 here: tau R = tau
            gauss = np.asarray(tau) * kwargs["gauss_std"] * kwargs["n_features"]
        return gauss, separate

    _adaptive.predicted_errors = linear
    try:
        yield
    finally:
        _adaptive.predicted_errors = exact


def _params(cell, seed, **extra):
    return dict(
        rho=cell["rho"],
        data_norm=1.0,
        assume_centered=True,
        projection="clamp",
        eigenvalue_floor=0.0,
        random_state=seed,
        **extra,
    )


def _zipf(cell, r):
    X = make_zipf_norms(
        cell["n"], cell["d"], n_buckets=cell["N"], random_state=old_seed(r)
    )
    return X, X.T @ X / cell["n"]


def _error(name, linear=False):
    def method(data, cell, r):
        X, target = data
        est = DPCOV[name](**_params(cell, old_seed(r)))
        with (
            warnings.catch_warnings(),
            _tau_linear_search() if linear else nullcontext(),
        ):
            warnings.simplefilter("ignore")  # seeded and noisy fits, on purpose
            return float(np.linalg.norm(est.fit(X).covariance_ - target))

    return method


class _Sweep(Study):
    def table(self, rows, grid, repeats):
        ratios = {"A/min(G,S)": "AdaptiveCov", "lin/min(G,S)": LINEAR}
        ratios = {k: m for k, m in ratios.items() if m in self.methods}
        for row in rows:
            runs = row["runs"]
            base = min(["GaussCov", "SeparateCov"], key=lambda m: row[m][0])
            for key, m in ratios.items():
                row[key] = ratio_se(runs[m], runs[base])
        head = super().table(rows, grid, repeats).split("\n\n")[0]
        varied = [k for k in grid if len(grid[k]) > 1] or list(grid)
        return head + "\n\n" + rst_table(rows, [*varied, *self.methods, *ratios])


def _part(name, title, linear=False, **grid):
    methods = {m: _error(m) for m in DPCOV}
    methods["Zero"] = lambda data, cell, r: float(np.linalg.norm(data[1]))
    if linear:
        methods[LINEAR] = _error("AdaptiveCov", linear=True)
    defaults = {"n": [50_000], "d": [200], "rho": [0.1], "N": [4]}
    return _Sweep(
        name=name,
        title=title,
        caption="Mean Frobenius error",
        grid={**defaults, **grid},
        data=_zipf,
        methods=methods,
        repeats=50,
        quick={"n": [2000], "d": [20], "repeats": 2},
    )


def _figure(rows):
    # A panel per sweep (the paper's Figure 2 as one per n), and AdaptiveCov's
    # ratio to the better of GaussCov and SeparateCov in every cell.
    lines, labels = [], []
    for row in rows:
        part = row["part"]
        if part in ("N", "d", "n", "rho"):
            lines.append({**row, "x": row[part], "panel": f"varying {part}"})
        elif part == "fig2":
            panel = f"varying d (N = 1, n = {row['n']})"
            lines.append({**row, "x": row["d"], "panel": panel})
        else:
            continue
        if not labels or labels[-1][0] != lines[-1]["panel"]:
            labels.append((lines[-1]["panel"], "d" if part == "fig2" else part))
    figure = line_figure(
        lines,
        x="x",
        series={m: m for m in [*DPCOV, "Zero"]},
        panel=lambda r: r["panel"],
        ylabel="Frobenius error",
        logx=True,
        logy=True,
        columns=4,
    )
    axes = figure.axes
    for ax, (_, label) in zip(axes, labels, strict=False):
        ax.set_xlabel(label)
    ratio = np.array([row["A/min(G,S)"] for row in rows])
    last = axes[len(labels)]
    last.set_visible(True)
    last.errorbar(
        np.arange(len(ratio)),
        ratio[:, 0],
        yerr=1.96 * ratio[:, 1],
        fmt="o",
        ms=3,
        color="C2",
    )
    last.axhline(1.0, color="grey", linewidth=1)
    last.set(
        title="AdaptiveCov / min(Gauss, Separate)",
        xlabel="cell (the tables in order)",
        ylabel="ratio of mean errors",
    )
    return figure


DLY22 = Combined(
    name="dly22",
    title=__doc__.splitlines()[0],
    grid={},
    parts=[
        _part("N", "varying N", N=[1, 2, 4, 8, 16, 32]),
        _part("d", "varying d", d=[10, 20, 50, 100, 200, 400]),
        _part("n", "varying n", n=[1_000, 5_000, 10_000, 50_000, 200_000]),
        _part("rho", "varying rho", rho=[1e-3, 1e-2, 1e-1, 1.0, 10.0]),
        _part(
            "fig2",
            "N = 1 (trace 1), rho = 0.1, varying d at three n (the paper's Figure 2)",
            N=[1],
            n=[1_000, 4_000, 16_000],
            d=[10, 20, 50, 100, 200, 400],
        ),
        _part(
            "skewed",
            "N = 8, d = 10, varying n and rho",
            linear=True,
            N=[8],
            d=[10],
            n=[5_000, 20_000],
            rho=[0.1, 1.0],
        ),
    ],
    docs="docs/user_guide/_bench_dly22.rst",
    figure=_figure,
    image="docs/_static/bench_dly22.png",
)


# dpcov against the authors' code (https://github.com/hkustDB/PrivateCovariance).
@cache
def _load_reference(path):
    """The authors' modules from a checkout, with two per-row loops vectorised.

    ``get_bincounts`` and ``convert_symm_mat`` are replaced by versions that
    return bit-identical arrays (the ``check`` option compares them on the
    first repetition); nothing else of their code is changed.
    """
    import torch

    torch.set_num_threads(1)
    sys.path.insert(0, str(Path(path).resolve()))
    functions = importlib.import_module("functions")
    algos = importlib.import_module("adaptive.algos")
    utils = importlib.import_module("adaptive.utils")
    original = (utils.get_bincounts, utils.convert_symm_mat)

    def get_bincounts(x_norm, n, t, k1=0):
        # Their loop: l1 = -floor(log2 x), plus one unless x > 2**-l1, at
        # least 1; counted when l1 < t. The same float operations at once.
        x = x_norm.reshape(-1).numpy()[:n]
        l1 = -np.floor(np.log2(x)).astype(np.int64)
        l1 = np.maximum(l1 + ~(x > 2.0 ** (-l1.astype(np.float64))), 1)
        return np.bincount(l1[l1 < t], minlength=t)[:t].astype(np.float64)

    def convert_symm_mat(ZZ, d):
        rows, cols = torch.triu_indices(d, d)
        S = torch.empty([d, d])
        S[rows, cols] = ZZ[0]
        S[cols, rows] = ZZ[0]
        return S

    utils.convert_symm_mat = convert_symm_mat
    algos.get_bincounts = get_bincounts
    fast = (get_bincounts, convert_symm_mat)
    return SimpleNamespace(
        torch=torch,
        data=functions.gen_synthetic_data_fix,
        algos=algos,
        pairs=(original, fast),
    )


def _ref_data(cell, r):
    """The authors' generator where their code is given, else dpcov's."""
    base = np.random.SeedSequence([cell["n"], cell["d"], cell["N"], r])
    seeds = [int(s) for s in base.generate_state(3) % (2**31 - 1)]
    ref = _load_reference(cell["reference"]) if cell["reference"] else None
    if ref is None:
        X = make_zipf_norms(
            cell["n"], cell["d"], n_buckets=cell["N"], random_state=seeds[0]
        )
        return None, X, X.T @ X / cell["n"], seeds
    Xt = ref.data(cell["d"], cell["n"], 3, cell["N"], seed=seeds[0])
    if cell["check"] and r == 0:
        _check_helpers(ref, Xt, cell)
    X = Xt.double().numpy()
    return Xt, X, X.T @ X / cell["n"], seeds


def _check_helpers(ref, Xt, cell):
    (bincounts, symmetric), (fast_bincounts, fast_symmetric) = ref.pairs
    x_norm = ref.torch.linalg.norm(Xt, dim=1, keepdim=True)
    for t in (8, 81):
        a, b = bincounts(x_norm, cell["n"], t), fast_bincounts(x_norm, cell["n"], t)
        assert np.array_equal(a, b), "get_bincounts differs"
    Z = ref.torch.normal(0, 1, size=(1, cell["d"] * (cell["d"] + 1) // 2))
    if cell["d"] <= 100:
        assert ref.torch.equal(symmetric(Z, cell["d"]), fast_symmetric(Z, cell["d"]))


def _versus(name):
    def method(data, cell, r):
        Xt, X, target, (_, ref_seed, our_seed) = data
        # No shrinkage toward zero: the authors' code has none.
        est = DPCOV[name](**_params(cell, our_seed, shrinkage=None))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # seeded and noisy fits, on purpose
            ours = float(np.linalg.norm(est.fit(X).covariance_ - target))
        if Xt is None:
            return {"dpcov": ours, "ref": np.nan}
        ref, (n, d), rho = _load_reference(cell["reference"]), Xt.shape, cell["rho"]
        calls = {
            "AdaptiveCov": lambda: ref.algos.AdaptiveCov(
                Xt, SimpleNamespace(total_budget=rho, n=n, d=d, beta=0.1)
            ),
            "GaussCov": lambda: ref.algos.GaussCov(Xt, n, d, rho, b_fleig=True),
            "SeparateCov": lambda: ref.algos.SeparateCov(Xt, n, d, rho, b_fleig=True),
        }
        ref.torch.manual_seed(ref_seed)
        np.random.seed(ref_seed % (2**32))  # noqa: NPY002 (their code draws from it)
        release = calls[name]().double().numpy()
        return {"dpcov": ours, "ref": float(np.linalg.norm(release - target))}

    return method


class _Versus(Study):
    def table(self, rows, grid, repeats):
        columns = [*grid]
        for row in rows:
            for m in DPCOV:
                runs = row["runs"]
                row[f"{m} ratio"] = ratio_se(runs[f"{m} dpcov"], runs[f"{m} ref"])
        for m in ["AdaptiveCov", "GaussCov", "SeparateCov"]:
            columns += [f"{m} dpcov", f"{m} ref", f"{m} ratio"]
        head = (
            f"Mean errors of dpcov and of the authors' code (ref), and their "
            f"ratio (± the delta method's standard error); {repeats} repetitions."
        )
        return head + "\n\n" + rst_table(rows, columns)


def _versus_part(d, repeats):
    return _Versus(
        name=f"d={d}",
        title=f"d = {d}",
        grid={
            "n": [1_000, 5_000, 20_000],
            "d": [d],
            "N": [1, 8],
            "rho": [0.01, 0.1, 1.0],
        },
        data=_ref_data,
        methods={m: _versus(m) for m in DPCOV},
        repeats=repeats,
        options={"reference": None, "check": False},
        quick={"n": [1_000], "d": [20], "N": [8], "rho": [0.1], "repeats": 2},
    )


REFERENCE = Combined(
    name="dly22_reference",
    title="dpcov's AdaptiveCov, GaussCov and SeparateCov against the authors' code",
    grid={},
    # Fewer repetitions where the errors spread less (larger d).
    parts=[_versus_part(10, 300), _versus_part(100, 100), _versus_part(400, 30)],
    docs="docs/user_guide/_bench_dly22_reference.rst",
)

STUDIES = [DLY22, REFERENCE]
