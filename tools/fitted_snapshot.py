"""Snapshot every estimator's seeded fit, to compare two commits bit for bit.

A refactor must not change a single bit of what a seeded fit releases. This
script fits every estimator under every guarantee it offers and every kind of
input it reads (dense float64 and float32, CSR, Dask, public bounds, the
private radius, centred or not), plus PCA's covariance options, the
searches, the hardened noise (with a seeded stand-in for the OS CSPRNG) and
the command line, and records every fitted attribute exactly (arrays as
bytes with their dtype and shape, numbers by ``repr``, nested estimators
recursively) or the error a fit raised::

    git checkout BASE && python tools/fitted_snapshot.py /tmp/base.pkl
    git checkout NEW && python tools/fitted_snapshot.py /tmp/new.pkl \\
        --compare /tmp/base.pkl

``--compare`` lists every case whose outcome differs and exits with status 1
if any does. About a minute on 2 cores.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import contextlib
import io
import json
import os
import pickle
import random
import sys
import tempfile
import warnings

import numpy as np
import scipy.sparse as sp

import dpcov
from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA, ApproximateSubspace, ExactSubspace
from dpcov.discriminant_analysis import LinearDiscriminantAnalysis
from dpcov.distributions import MultivariateGaussian, ProductBernoulli
from dpcov.impute import SimpleImputer
from dpcov.linear_model import LinearRegression, Ridge
from dpcov.mechanisms import _discrete
from dpcov.model_selection import PrivateSearchCV
from dpcov.pipeline import PrivatePipeline
from dpcov.preprocessing import BoundsScaler, PublicTransformer, StandardScaler


class _SeededSource:
    # The interface of ``secrets`` that the exact samplers use, seeded.
    def __init__(self, seed):
        self._random = random.Random(seed)

    def token_bytes(self, n):
        return self._random.randbytes(n)

    def randbelow(self, n):
        return self._random.randrange(n)

    def SystemRandom(self):
        return self._random


def _rows(n=6000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.linspace(2.0, 0.3, d) + np.linspace(1, -1, d)
    return X / 4.0


def _subspace_rows(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    basis = rng.integers(-3, 4, size=(2, 5))
    return (rng.integers(-9, 10, size=(n, 2)) @ basis).astype(float)


def _labelled_rows(n=6000, seed=0):
    # Three classes with shifted means, and a linear target with noise.
    X = _rows(n=n, seed=seed)
    rng = np.random.default_rng(seed + 1)
    classes = rng.integers(0, 3, size=n)
    X = X + 0.3 * classes[:, None]
    target = X @ np.linspace(1.0, -0.5, X.shape[1]) + 0.1 * rng.normal(size=n)
    return X, classes, np.clip(target, -2.0, 2.0)


def _missing_rows(n=6000, seed=0):
    X = _rows(n=n, seed=seed)
    rng = np.random.default_rng(seed + 2)
    X[rng.random(X.shape) < 0.1] = np.nan
    return X


def _binary_rows(n=8000, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((n, 5)) < [0.5, 0.3, 0.1, 0.05, 0.02]).astype(float)


def _inputs():
    X = _rows()
    yield "dense", X
    yield "float32", X.astype(np.float32)
    sparse = X.copy()
    sparse[np.abs(sparse) < 0.3] = 0.0
    yield "csr", sp.csr_matrix(sparse)
    try:
        import dask.array as da
    except ImportError:  # pragma: no cover - dask is a test dependency
        return
    yield "dask", da.from_array(X, chunks=(1000, X.shape[1]))


_COVARIANCES = [
    GaussianCovariance,
    SeparateCovariance,
    AdaptiveCovariance,
    EigenSamplingCovariance,
    NuclearLaplaceCovariance,
]
_GUARANTEES = {"zcdp": {"delta": 1e-6}, "pure": {"delta": 0.0}}
_GEOMETRIES = {
    "data_norm": {"data_norm": 2.0},
    "radius": {},
    "bounds": {"bounds": (-2.0, 2.0)},
    "centred": {"data_norm": 2.0, "assume_centered": True},
}


def _cases():
    # (name, factory of a fresh estimator, X, secure)
    for cls in _COVARIANCES:
        for guarantee, privacy in _GUARANTEES.items():
            for geometry, params in _GEOMETRIES.items():
                for kind, X in _inputs():
                    name = f"{cls.__name__}/{guarantee}/{geometry}/{kind}"
                    yield name, _factory(cls, privacy, params), X, False
    for covariance in (None, "top_k", SeparateCovariance(), AdaptiveCovariance()):
        for guarantee, privacy in _GUARANTEES.items():
            for kind, X in _inputs():
                params = dict(n_components=2, data_norm=2.0, covariance=covariance)
                name = f"PCA/{_label(covariance)}/{guarantee}/{kind}"
                yield name, _factory(PCA, privacy, params), X, False
        k = 2 if covariance == "top_k" else 0.9  # top_k samples k directions
        yield (
            f"PCA/{_label(covariance)}/radius",
            _factory(PCA, {}, dict(n_components=k, covariance=covariance)),
            _rows(),
            False,
        )
    for method in ("coinpress", "klsu"):
        yield (
            f"MultivariateGaussian/{method}",
            _factory(
                MultivariateGaussian,
                {},
                {"method": method, "min_variance": 0.5, "max_variance": 5.0},
            ),
            _rows(n=20_000) * 4.0,
            False,
        )
    for method in ("ppde", "gaussian"):
        yield (
            f"ProductBernoulli/{method}",
            _factory(ProductBernoulli, {}, {"method": method}),
            _binary_rows(),
            False,
        )
    for kind, X in _inputs():
        if kind == "csr":
            continue
        yield (
            f"StandardScaler/{kind}",
            _factory(StandardScaler, {}, {"bounds": (-2.0, 2.0)}),
            X,
            False,
        )
    for centred in (False, True):
        for cls in (ExactSubspace, ApproximateSubspace):
            yield (
                f"{cls.__name__}/centred={centred}",
                _factory(cls, {}, dict(n_components=2, assume_centered=centred)),
                _subspace_rows(),
                False,
            )
    for law in ("logarithmic", "geometric", "poisson"):
        yield (
            f"PrivateSearchCV/{law}",
            lambda law=law: PrivateSearchCV(
                SeparateCovariance(data_norm=2.0),
                {"data_norm": [0.5, 2.0, 8.0]},
                law=law,
                score_norm=2.0,
                random_state=0,
            ),
            _rows(),
            False,
        )
    yield from _supervised_cases()
    yield from _composite_cases()
    # Hardened noise (the exact samplers fed by a seeded source).
    for cls in (GaussianCovariance, SeparateCovariance, AdaptiveCovariance):
        for guarantee, privacy in _GUARANTEES.items():
            for geometry in ("data_norm", "radius"):
                yield (
                    f"secure/{cls.__name__}/{guarantee}/{geometry}",
                    _factory(cls, privacy, _GEOMETRIES[geometry]),
                    _rows(),
                    True,
                )
    # (A search under secure_noise draws its candidates from fresh OS
    # entropy whatever its random_state: no snapshot can reproduce it.)


def _supervised_cases():
    X, classes, target = _labelled_rows()
    box = {"bounds": (-2.0, 2.0)}
    for geometry, params in {
        "bounds": box,
        "private": {"bounds": "private"},
        "data_norm": {"data_norm": 2.0},
        "radius": {},
    }.items():
        for guarantee, privacy in _GUARANTEES.items():
            if guarantee == "pure" and geometry in ("private", "radius"):
                continue
            yield (
                f"LDA/{geometry}/{guarantee}",
                _factory(
                    LinearDiscriminantAnalysis,
                    privacy,
                    {**params, "classes": [0, 1, 2]},
                ),
                (X, classes),
                False,
            )
    for cls, extra in ((LinearRegression, {}), (Ridge, {"alpha": 2.0})):
        for geometry, params in {
            "bounds": box,
            "private": {"bounds": "private"},
        }.items():
            yield (
                f"{cls.__name__}/{geometry}",
                _factory(cls, {}, {**params, **extra, "target_bounds": (-2.0, 2.0)}),
                (X, target),
                False,
            )
    for strategy in ("mean", "median", "constant"):
        for geometry, params in {
            "bounds": box,
            "private": {"bounds": "private"},
        }.items():
            yield (
                f"SimpleImputer/{strategy}/{geometry}",
                _factory(SimpleImputer, {}, {**params, "strategy": strategy}),
                _missing_rows(),
                False,
            )
    yield (
        "StandardScaler/private",
        _factory(StandardScaler, {}, {"bounds": "private"}),
        _rows(),
        False,
    )


def _pipeline(*steps, **params):
    def make():
        return PrivatePipeline(list(steps), random_state=0, **params)

    return make


def _composite_cases():
    from sklearn.base import clone
    from sklearn.preprocessing import FunctionTransformer, Normalizer

    X, classes, target = _labelled_rows()
    missing = _missing_rows()
    box = (-2.0, 2.0)

    def chain(*steps, **params):
        return lambda: PrivatePipeline(
            [(name, clone(step)) for name, step in steps], random_state=0, **params
        )

    yield (
        "PrivatePipeline/impute-scale-pca-lda",
        chain(
            ("impute", SimpleImputer(bounds=box)),
            ("scale", StandardScaler()),
            ("pca", PCA(n_components=3)),
            ("lda", LinearDiscriminantAnalysis(classes=[0, 1, 2])),
            epsilon=2.0,
            delta=1e-6,
        ),
        (np.where(np.isnan(missing), np.nan, X), classes),
        False,
    )
    yield (
        "PrivatePipeline/private-ranges-ridge",
        chain(
            ("impute", SimpleImputer(bounds="private")),
            ("ridge", Ridge(target_bounds=box)),
            epsilon=1.0,
            delta=1e-6,
        ),
        (missing, target),
        False,
    )
    public = PublicTransformer(FunctionTransformer(np.tanh))
    yield (
        "PrivatePipeline/public-map-covariance",
        chain(
            ("scale", BoundsScaler(bounds=box)),
            ("tanh", public),
            ("cov", AdaptiveCovariance()),
            epsilon=1.0,
            delta=1e-6,
        ),
        _rows(),
        False,
    )
    sparse = _rows()
    sparse[np.abs(sparse) < 0.3] = 0.0
    yield (
        "PrivatePipeline/sparse-scale-cov",
        chain(
            ("norm", Normalizer()),
            ("cov", SeparateCovariance()),
            epsilon=1.0,
            delta=1e-6,
        ),
        sp.csr_matrix(sparse),
        False,
    )
    yield (
        "PrivateSearchCV/pipeline",
        lambda: PrivateSearchCV(
            PrivatePipeline(
                [
                    ("scale", StandardScaler(bounds=box)),
                    ("lda", LinearDiscriminantAnalysis(classes=[0, 1, 2])),
                ]
            ),
            {"lda__data_norm": [1.0, 3.0], "lda__priors": [None, [1 / 3] * 3]},
            epsilon=8.0,
            delta=1e-6,
            random_state=0,
        ),
        (X, classes),
        False,
    )
    yield (
        "PrivateSearchCV/ridge",
        lambda: PrivateSearchCV(
            Ridge(bounds=box, target_bounds=box),
            {"alpha": [0.1, 1.0, 10.0]},
            epsilon=1.0,
            delta=1e-6,
            random_state=0,
        ),
        (X, target),
        False,
    )


def _label(covariance):
    if covariance is None or isinstance(covariance, str):
        return str(covariance)
    return type(covariance).__name__


def _factory(cls, privacy, params):
    def make():
        kwargs = dict(params)
        if "covariance" in kwargs and not isinstance(
            kwargs["covariance"], (str, type(None))
        ):
            from sklearn.base import clone

            kwargs["covariance"] = clone(kwargs["covariance"])
        return cls(random_state=0, **privacy, **kwargs)

    return make


def _value(value, depth=0):
    # An exact, comparable record of a fitted value.
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return (
                "object-array",
                value.shape,
                [_value(v, depth) for v in value.ravel()],
            )
        return ("array", str(value.dtype), value.shape, value.tobytes())
    if sp.issparse(value):
        return ("sparse", _value(value.toarray(), depth))
    if isinstance(value, (float, np.floating)):
        return ("float", repr(float(value)))
    if isinstance(value, (bool, int, str, type(None), np.integer, np.bool_)):
        return ("scalar", repr(value))
    if isinstance(value, dict):
        return ("dict", [(repr(k), _value(v, depth)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_value(v, depth) for v in value])
    if hasattr(value, "get_params") and depth < 4:
        return ("estimator", type(value).__name__, _snapshot(value, depth + 1))
    return ("repr", repr(value))


def _snapshot(estimator, depth=0):
    return {
        key: _value(value, depth)
        for key, value in sorted(vars(estimator).items())
        if key.endswith("_") and not key.startswith("_")
    }


def _outcome(factory, X, secure):
    if secure:
        _discrete._source = _SeededSource(0)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with dpcov.config_context(secure_noise=secure):
                X, y = X if isinstance(X, tuple) else (X, None)
                estimator = factory().fit(X, y)
                applied = _applied(estimator, X, y)
        messages = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
        return {
            "fitted": _snapshot(estimator),
            "applied": applied,
            "warnings": messages,
        }
    except Exception as exc:  # noqa: BLE001 - the error is the outcome
        return {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        import secrets

        _discrete._source = secrets


def _applied(estimator, X, y):
    # What the fitted estimator hands on: its transform, predictions, score.
    rows = X[:50] if not hasattr(X, "compute") else X[:50].compute()
    if sp.issparse(rows):
        rows = rows.toarray()
    out = {}
    for method in ("transform", "predict", "predict_proba", "score"):
        if not hasattr(estimator, method):
            continue
        args = (rows,) if method != "score" or y is None else (rows, y[:50])
        try:
            value = getattr(estimator, method)(*args)
        except Exception as exc:  # noqa: BLE001 - the error is the outcome
            value = f"{type(exc).__name__}: {exc}"
        out[method] = _value(value)
    return out


def _cli_outcomes():
    # The command line's release and report for a few estimators, seeded.
    from dpcov.cli import main

    outcomes = {}
    X = _rows(n=3000)
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "x.npy"), X)
        np.savetxt(os.path.join(tmp, "x.csv"), X, delimiter=",", header="a,b,c,d,e")
        runs = {
            "gauss-npy": ["x.npy", "-e", "gauss", "--data-norm", "2"],
            "separate-csv": ["x.csv", "--header", "-e", "separate", "--data-norm", "2"],
            "adaptive-radius": ["x.npy", "-e", "adaptive"],
            "pca-csv-out": ["x.npy", "-e", "pca", "--data-norm", "2", "-o", "p.csv"],
            "gaussian": ["x.npy", "-e", "gaussian"],
        }
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            for name, argv in runs.items():
                for path in os.listdir(tmp):
                    if path not in ("x.npy", "x.csv"):
                        os.remove(path)
                out, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    status = main(["fit", *argv, "--random-state", "0", "-q"])
                files = {}
                for path in sorted(os.listdir(tmp)):
                    if path in ("x.npy", "x.csv"):
                        continue
                    with open(path, "rb") as handle:
                        data = handle.read()
                    if path.endswith(".json"):
                        report = json.loads(data)
                        report.pop("dpcov_version", None)
                        report.pop("created", None)
                        for key in list(report):
                            if "path" in key or "time" in key:
                                report.pop(key)
                        data = json.dumps(report, sort_keys=True)
                    files[path] = data
                outcomes[f"cli/{name}"] = {
                    "status": status,
                    "stdout": out.getvalue(),
                    "stderr": err.getvalue(),
                    "files": files,
                }
        finally:
            os.chdir(cwd)
    return outcomes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", help="where to write the snapshot (pickle)")
    parser.add_argument("--compare", help="an earlier snapshot to compare with")
    args = parser.parse_args(argv)
    snapshot = {}
    for name, factory, X, secure in _cases():
        snapshot[name] = _outcome(factory, X, secure)
    snapshot.update(_cli_outcomes())
    with open(args.output, "wb") as handle:
        pickle.dump(snapshot, handle)
    n_errors = sum("error" in v for v in snapshot.values())
    print(f"{len(snapshot)} cases ({n_errors} raised an error) -> {args.output}")
    if args.compare is None:
        return 0
    with open(args.compare, "rb") as handle:
        reference = pickle.load(handle)
    differ = sorted(
        name
        for name in set(snapshot) | set(reference)
        if snapshot.get(name) != reference.get(name)
    )
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(differ)} of {len(snapshot)} cases differ from {args.compare}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
