"""Shrinkage toward zero and the noise warning, measured on real tables.

Every covariance estimator, zCDP (``delta=1e-6``) and pure DP (``delta=0``), at
epsilon 1, 4 and 16, fitted with ``shrinkage="auto"`` (the default) and with
``shrinkage=None`` (the raw release) on the same seeds, on three of
scikit-learn's bundled tables with public per-feature ranges written from what
the features measure, not read off the rows:

- wine (178 x 13) and breast_cancer (569 x 30): the ranges of
  ``bench_pipeline.py`` (see its docstring);
- diabetes (442 x 10, unscaled: ``load_diabetes(scaled=False)``): age
  [0, 100] years, sex [1, 2] (its coding), body-mass index [10, 60] kg/m2,
  mean arterial pressure [40, 160] mmHg, total serum cholesterol [50, 400]
  mg/dL, LDL [0, 300] mg/dL, HDL [0, 150] mg/dL, total/HDL cholesterol ratio
  [0, 15], log serum triglycerides [2, 8] (ln mg/dL), blood glucose
  [40, 300] mg/dL.

The error of a fit is ``||C_hat - C||_F / ||C||_F`` in the original units, with
``C`` scikit-learn's ``EmpiricalCovariance`` of the table (the zero matrix
scores 1). The tables give the median over the repetitions of each cell and,
for the warning, the share of fits with error 0.9 or more that warned
(``NoiseDominatedWarning``) and the share of fits with error below 0.5 that
warned.

``--regression`` also measures the cells where releases are already good: the
sensor table (``dpcov.datasets.make_sensor_table``, 20,000 rows, its public
ranges) at epsilon 1 and the Zipf cells (n, d, N, rho) = (20000, 100, 1,
0.1), (5000, 100, 8, 0.1), (20000, 10, 4, 0.01) of Dong, Liang and Yi (2022)
(``data_norm=1``, ``assume_centered=True``, target ``X^T X / n``): the mean
error over the seeded fits with the default and with ``shrinkage=None``, and
their paired standard error.

    python benchmarks/bench_shrinkage.py --repeats 10 --out benchmarks/results
    python benchmarks/bench_shrinkage.py --regression --repeats 100 \
        --out benchmarks/results

write ``shrinkage.json`` and ``shrinkage.rst`` (``shrinkage_regression.*``
with ``--regression``); ``--quick`` for a smoke run. Run on the code before
shrinkage existed with ``--no-shrinkage-param`` (writes
``shrinkage_before.*``), then

    python benchmarks/bench_shrinkage.py --out benchmarks/results \
        --docs docs/user_guide/_bench_shrinkage.rst

writes the user guide's tables from the three runs.
"""

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.covariance import EmpiricalCovariance
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine

from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.datasets import make_sensor_table, make_zipf_norms
from dpcov.exceptions import NoiseDominatedWarning

try:  # run as a script from the repository root or from benchmarks/
    from _machine import cpu_model
    from bench_pipeline import cancer_bounds, wine_bounds
except ImportError:  # pragma: no cover
    from benchmarks._machine import cpu_model
    from benchmarks.bench_pipeline import cancer_bounds, wine_bounds

EPSILONS = [1.0, 4.0, 16.0]
GUARANTEES = {"zCDP": 1e-6, "pure": 0.0}
ESTIMATORS = {
    "GaussCov": GaussianCovariance,
    "SeparateCov": SeparateCovariance,
    "AdaptiveCov": AdaptiveCovariance,
    "NuclearLaplace": NuclearLaplaceCovariance,
    "EigenSampling": EigenSamplingCovariance,
}
SETTINGS = {"auto": "auto", "None": None}
#: Public ranges of the unscaled diabetes features (see the docstring).
DIABETES_BOUNDS = (
    np.array([0.0, 1.0, 10.0, 40.0, 50.0, 0.0, 0.0, 0.0, 2.0, 40.0]),
    np.array([100.0, 2.0, 60.0, 160.0, 400.0, 300.0, 150.0, 15.0, 8.0, 300.0]),
)
#: (n, d, N, rho) of the Zipf cells where releases are already good.
ZIPF_ESTIMATORS = ["GaussCov", "SeparateCov", "AdaptiveCov"]
ZIPF_CELLS = [(20_000, 100, 1, 0.1), (5_000, 100, 8, 0.1), (20_000, 10, 4, 0.01)]


def tables():
    """(name, X, public bounds) of each real table."""
    wine, cancer = load_wine(), load_breast_cancer()
    diabetes = load_diabetes(scaled=False)
    return [
        ("wine", wine.data, wine_bounds(wine.feature_names)),
        ("breast_cancer", cancer.data, cancer_bounds(cancer.feature_names)),
        ("diabetes", diabetes.data, DIABETES_BOUNDS),
    ]


def _fit(cls, X, params, shrinkage_param):
    """(covariance, warned, signal_to_noise_, shrinkage_) of one fit."""
    if shrinkage_param is not None:
        params = {**params, **shrinkage_param}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = cls(**params).fit(X)
    warned = any(issubclass(w.category, NoiseDominatedWarning) for w in caught)
    return (
        est.covariance_,
        warned,
        float(est.signal_to_noise_),
        float(getattr(est, "shrinkage_", 0.0)),
    )


def _table_cell(table, name, guarantee, epsilon, repeats, has_param):
    label, X, bounds = table
    target = EmpiricalCovariance().fit(X).covariance_
    scale = np.linalg.norm(target)
    cls = ESTIMATORS[name]
    runs = []
    for rep in range(repeats):
        seed = 1000 * rep + 11
        params = dict(
            epsilon=epsilon,
            delta=GUARANTEES[guarantee],
            bounds=bounds,
            random_state=seed,
        )
        settings = SETTINGS if has_param else {"before": None}
        for setting, value in settings.items():
            extra = {"shrinkage": value} if has_param else None
            cov, warned, snr, shrink = _fit(cls, X, params, extra)
            runs.append(
                dict(
                    table=label,
                    estimator=name,
                    guarantee=guarantee,
                    epsilon=epsilon,
                    setting=setting,
                    seed=seed,
                    error=float(np.linalg.norm(cov - target) / scale),
                    warned=warned,
                    signal_to_noise=snr,
                    shrinkage=shrink,
                )
            )
    return runs


def _regression_cell(cell, name, repeats):
    """Runs of one regression cell: (kind, parameters) -> per-seed errors."""
    kind = cell[0]
    runs = []
    for rep in range(repeats):
        seed = 1000 * rep + 13
        if kind == "sensor":
            table = make_sensor_table(20_000, random_state=seed)
            X = table.data
            target = EmpiricalCovariance().fit(X).covariance_
            params = dict(epsilon=1.0, delta=cell[1], bounds=table.bounds)
        else:
            n, d, N, rho = cell[1:]
            X = make_zipf_norms(n, d, n_buckets=N, random_state=seed)
            target = X.T @ X / n
            params = dict(rho=rho, data_norm=1.0, assume_centered=True)
        errors = {}
        for setting, value in SETTINGS.items():
            cov, _, _, _ = _fit(
                ESTIMATORS[name],
                X,
                {**params, "random_state": seed},
                {"shrinkage": value},
            )
            errors[setting] = float(np.linalg.norm(cov - target))
        runs.append(errors)
    return runs


def _median(runs, **where):
    errors = [r["error"] for r in runs if all(r[k] == v for k, v in where.items())]
    return float(np.median(errors)) if errors else float("nan")


def warning_figures(runs):
    """(share of fits with error >= 0.9 that warned, of fits < 0.5 that warned)."""
    bad = [r["warned"] for r in runs if r["error"] >= 0.9]
    good = [r["warned"] for r in runs if r["error"] < 0.5]

    def share(warned):
        return (float(np.mean(warned)) if warned else float("nan"), len(warned))

    return share(bad), share(good)


def _rst_tables(runs, settings):
    lines = []
    for table in ["wine", "breast_cancer", "diabetes"]:
        lines += [f"**{table}** (median relative error over the fits)", ""]
        header = ["Estimator", "Guarantee"] + [
            f"eps={eps:g} {s}" for eps in EPSILONS for s in settings
        ]
        rows = []
        for name in ESTIMATORS:
            for guarantee in GUARANTEES:
                cells = [
                    f"{_median(runs, table=table, estimator=name, guarantee=guarantee, epsilon=eps, setting=s):.3g}"  # noqa: E501
                    for eps in EPSILONS
                    for s in settings
                ]
                rows.append([name, guarantee] + cells)
        lines += _grid(header, rows) + [""]
    lines += ["**The warning** (share of fits that warned)", ""]
    header = ["Setting", "error >= 0.9: warned", "error < 0.5: warned"]
    rows = []
    for s in settings:
        (bad, n_bad), (good, n_good) = warning_figures(
            [r for r in runs if r["setting"] == s]
        )
        rows.append([s, f"{bad:.1%} of {n_bad}", f"{good:.1%} of {n_good}"])
    lines += _grid(header, rows)
    return lines


def _grid(header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(cells):
        return (
            "| "
            + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True))
            + " |"
        )  # noqa: E501

    return [
        rule,
        line(header),
        rule.replace("-", "="),
        *[x for r in rows for x in (line(r), rule)],
    ]  # noqa: E501


def _paper_cells():
    """(label, kind, parameters) of the cells of bench_dly22.py and bench_adk19.py."""
    try:  # run as a script from the repository root or from benchmarks/
        import bench_adk19 as adk
        import bench_dly22 as dly
    except ImportError:  # pragma: no cover
        from benchmarks import bench_adk19 as adk
        from benchmarks import bench_dly22 as dly
    points = [dict(dly.DEFAULTS)]
    for key, values in dly.SWEEPS.items():
        points += [{**dly.DEFAULTS, key: v} for v in values if v != dly.DEFAULTS[key]]
    for n in dly.FIG2["n"]:
        points += [dict(n=n, d=d, rho=0.1, N=1) for d in dly.FIG2["d"]]
    for n in dly.SKEWED["n"]:
        for rho in dly.SKEWED["rho"]:
            points.append(dict(n=n, d=dly.SKEWED["d"], rho=rho, N=dly.SKEWED["N"]))
    cells = [
        (f"dly22 n={p['n']} d={p['d']} rho={p['rho']:g} N={p['N']}", "dly22", p, name)
        for p in points
        for name in ZIPF_ESTIMATORS
    ]
    for dataset in ["wine", "diabetes"]:
        for panel, delta in adk.PANELS.items():
            for eps in adk.EPSILONS:
                for name, cls, extra in adk.ESTIMATORS:
                    cells.append(
                        (
                            f"adk19 {dataset} {panel} eps={eps:g}",
                            "adk19",
                            dict(dataset=dataset, epsilon=eps, delta=delta),
                            (name, cls, extra),
                        )
                    )
    return cells, adk


def _paper_cell(cell, repeats, adk):
    label, kind, point, method = cell
    diffs, auto, none = [], [], []
    for rep in range(repeats):
        if kind == "dly22":
            X = make_zipf_norms(
                point["n"], point["d"], n_buckets=point["N"], random_state=rep
            )
            cls, extra = ESTIMATORS[method], {}
            params = dict(rho=point["rho"])
        else:
            X = adk.load(point["dataset"])
            _, cls, extra = method
            params = dict(epsilon=point["epsilon"], delta=point["delta"])
        target = X.T @ X / X.shape[0]
        params = dict(
            data_norm=1.0,
            assume_centered=True,
            random_state=1000 * rep + 7,
            **params,
            **extra,
        )
        errors = {
            setting: float(
                np.linalg.norm(_fit(cls, X, params, {"shrinkage": value})[0] - target)
            )
            for setting, value in SETTINGS.items()
        }
        auto.append(errors["auto"])
        none.append(errors["None"])
        diffs.append(errors["auto"] - errors["None"])
    diffs = np.array(diffs)
    name = method if kind == "dly22" else method[0]
    return dict(
        cell=label,
        estimator=name,
        auto=float(np.mean(auto)),
        none=float(np.mean(none)),
        paired_se=float(diffs.std(ddof=1) / np.sqrt(len(diffs))),
    )


def write_docs(results, path):
    """The user guide's include: the tables, the warning, the regression cells."""

    def figures(runs):
        (bad, n_bad), (good, n_good) = warning_figures(runs)
        return f"{bad:.1%} of {n_bad}", f"{good:.1%} of {n_good}"

    runs = json.loads((results / "shrinkage.json").read_text())
    before = json.loads((results / "shrinkage_before.json").read_text())
    tables_text = "\n".join(_rst_tables(runs, list(SETTINGS)))
    tables_text = tables_text[: tables_text.index("**The warning**")].rstrip()
    rows = [
        ["before shrinkage existed", *figures(before)],
        [
            'shrinkage="auto" (default)',
            *figures([r for r in runs if r["setting"] == "auto"]),
        ],  # noqa: E501
        ["shrinkage=None", *figures([r for r in runs if r["setting"] == "None"])],
    ]
    warn = "\n".join(
        _grid(["Fits", "error >= 0.9: warned", "error < 0.5: warned"], rows)
    )
    regression = (results / "shrinkage_regression.rst").read_text().rstrip()
    path.write_text(
        f""".. Generated by benchmarks/bench_shrinkage.py --docs (see its docstring).

Median relative Frobenius error in original units over 10 fits per cell
(``auto``: the default; ``None``: the raw release; the zero matrix scores 1),
on scikit-learn's tables with public ranges written from what the features
measure (listed in ``benchmarks/bench_shrinkage.py``):

{tables_text}

The warning, over all the fits above (3 tables, 5 estimators, 2 guarantees,
3 budgets, 10 fits; "before" is the code before shrinkage existed, whose
figure compared the top released eigenvalue with the noise's in unit
coordinates):

{warn}

Where releases are already good: mean Frobenius error over 100 seeded fits,
default against ``shrinkage=None`` on the same seeds, with the paired
standard error (sensor table at ``epsilon = 1``, zCDP ``delta=1e-6`` and pure
``delta=0``; Zipf cells ``n d N rho``, zCDP):

{regression}
"""
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--regression", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument(
        "--no-shrinkage-param",
        action="store_true",
        help="for code that has no shrinkage parameter (the figures before)",
    )
    parser.add_argument(
        "--paper",
        action="store_true",
        help="every cell of bench_dly22.py and bench_adk19.py, auto against None",
    )
    parser.add_argument(
        "--docs",
        type=Path,
        default=None,
        help="write the user guide's include from the results in --out",
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    if args.paper:
        cells, adk = _paper_cells()
        repeats = 2 if args.quick else args.repeats
        report = Parallel(n_jobs=args.n_jobs)(
            delayed(_paper_cell)(cell, repeats, adk) for cell in cells
        )
        worse = [r for r in report if r["auto"] - r["none"] > max(r["paired_se"], 0.0)]
        header = ["Cell", "Estimator", "auto", "None", "paired s.e."]
        rows = [
            [
                r["cell"],
                r["estimator"],
                f"{r['auto']:.4g}",
                f"{r['none']:.4g}",
                f"{r['paired_se']:.2g}",
            ]
            for r in report
            if r["auto"] != r["none"]
        ]
        (args.out / "shrinkage_paper.json").write_text(json.dumps(report))
        text = "\n".join(_grid(header, rows)) if rows else "(no cell changed)"
        text += (
            f"\n\n{len(report)} cells, {len(rows)} changed, "
            f"{len(worse)} worse than None by more than one paired s.e."
        )
        (args.out / "shrinkage_paper.rst").write_text(text + "\n")
        print(text)
        print(f"{time.perf_counter() - start:.0f} s on {cpu_model()}")
        return
    if args.docs is not None:
        write_docs(args.out, args.docs)
        return
    start = time.perf_counter()
    if args.regression:
        cells = [("sensor", 1e-6), ("sensor", 0.0)] + [("zipf", *c) for c in ZIPF_CELLS]
        repeats = 5 if args.quick else args.repeats
        # Zipf cells: the estimators of Dong, Liang and Yi (2022).
        jobs = [
            (cell, name)
            for cell in cells
            for name in ESTIMATORS
            if cell[0] == "sensor" or name in ZIPF_ESTIMATORS
        ]
        results = Parallel(n_jobs=args.n_jobs)(
            delayed(_regression_cell)(cell, name, repeats) for cell, name in jobs
        )
        report = []
        for (cell, name), runs in zip(jobs, results, strict=True):
            diff = np.array([r["auto"] - r["None"] for r in runs])
            report.append(
                dict(
                    cell=list(cell),
                    estimator=name,
                    auto=float(np.mean([r["auto"] for r in runs])),
                    none=float(np.mean([r["None"] for r in runs])),
                    paired_se=float(diff.std(ddof=1) / np.sqrt(len(diff))),
                    runs=runs,
                )
            )
        header = ["Cell", "Estimator", "auto", "None", "paired s.e.", "auto - None"]
        rows = [
            [
                " ".join(map(str, r["cell"])),
                r["estimator"],
                f"{r['auto']:.4g}",
                f"{r['none']:.4g}",
                f"{r['paired_se']:.2g}",
                f"{(r['auto'] - r['none']) / r['paired_se']:+.2f} s.e."
                if r["paired_se"] > 0
                else "0",
            ]
            for r in report
        ]
        (args.out / "shrinkage_regression.json").write_text(json.dumps(report))
        text = "\n".join(_grid(header, rows))
        (args.out / "shrinkage_regression.rst").write_text(text + "\n")
        print(text)
    else:
        repeats = 2 if args.quick else args.repeats
        jobs = [
            (table, name, guarantee, eps)
            for table in tables()
            for name in ESTIMATORS
            for guarantee in GUARANTEES
            for eps in EPSILONS
        ]
        results = Parallel(n_jobs=args.n_jobs)(
            delayed(_table_cell)(*job, repeats, not args.no_shrinkage_param)
            for job in jobs
        )
        runs = [r for cell in results for r in cell]
        settings = ["before"] if args.no_shrinkage_param else list(SETTINGS)
        name = "shrinkage_before" if args.no_shrinkage_param else "shrinkage"
        (args.out / f"{name}.json").write_text(json.dumps(runs))
        text = "\n".join(_rst_tables(runs, settings))
        (args.out / f"{name}.rst").write_text(text + "\n")
        print(text)
    print(f"{time.perf_counter() - start:.0f} s on {cpu_model()}")


if __name__ == "__main__":
    main()
