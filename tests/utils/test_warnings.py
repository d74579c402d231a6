"""Warnings at the user's line, and the warning of a seeded release."""

import inspect
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

import dpcov
from dpcov.cli import main
from dpcov.covariance import GaussianCovariance, SeparateCovariance
from dpcov.decomposition import PCA
from dpcov.exceptions import NoiseDominatedWarning, SeededNoiseWarning
from dpcov.model_selection import PrivateSearchCV
from dpcov.utils._warnings import user_frame

ZEROS = np.zeros((2000, 4))  # every release on these rows is pure noise


def _pipeline(final):
    return Pipeline([("public", FunctionTransformer()), ("private", final)])


def _next_line():
    # The line after the caller's: where the route below calls scikit-learn
    # or dpcov, the line the warning must name.
    return inspect.currentframe().f_back.f_lineno + 1


# Every way a user reaches a fit: directly, through scikit-learn's pipelines
# (set_output wraps fit_transform: one frame more than fit), searches and
# cross-validation, and through dpcov's search. Each fits and returns the
# line of its call.
def _fit(est):
    line = _next_line()
    est.fit(ZEROS)
    return line


def _pipeline_fit(est):
    pipe = _pipeline(est)
    line = _next_line()
    pipe.fit(ZEROS)
    return line


def _pipeline_fit_transform(est):
    pipe = _pipeline(PCA(2, data_norm=1.0, random_state=est.random_state))
    line = _next_line()
    pipe.fit_transform(ZEROS)
    return line


def _grid_search(est):
    search = GridSearchCV(est, {"epsilon": [0.5, 1.0]}, cv=2)
    line = _next_line()
    search.fit(ZEROS)
    return line


def _cross_validate(est):
    line = _next_line()
    cross_validate(est, ZEROS, cv=2)
    return line


def _private_search(est):
    search = PrivateSearchCV(
        est, {"data_norm": [1.0]}, n_iter=2, random_state=est.random_state
    )
    line = _next_line()
    search.fit(ZEROS)
    return line


ROUTES = {
    "fit": _fit,
    "Pipeline.fit": _pipeline_fit,
    "Pipeline.fit_transform": _pipeline_fit_transform,
    "GridSearchCV": _grid_search,
    "cross_validate": _cross_validate,
    "PrivateSearchCV": _private_search,
}


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("category", [NoiseDominatedWarning, SeededNoiseWarning])
def test_warnings_name_the_users_line(route, category):
    # Seeded: a noise-dominated release is then certain, not just likely
    # (the figure of pure noise is above 1 now and then).
    est = SeparateCovariance(data_norm=1.0, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = ROUTES[route](est)
    mine = [w for w in caught if issubclass(w.category, category)]
    assert mine, f"no {category.__name__} through {route}"
    assert {(w.filename, w.lineno) for w in mine} == {(__file__, line)}


def test_a_seeded_release_warns_without_quoting_the_seed():
    X = np.random.default_rng(0).normal(size=(2000, 3)) / 3.0
    for seed, kind in [
        (987654, "an integer seed"),
        (np.random.RandomState(987654), "a numpy RandomState"),
        (np.random.default_rng(987654), "a numpy Generator"),
    ]:
        with pytest.warns(SeededNoiseWarning, match=kind) as record:
            GaussianCovariance(data_norm=1.0, random_state=seed).fit(X)
        assert "987654" not in str(record[0].message)
        assert "random_state=None" in str(record[0].message)


def test_no_seed_warning_without_noise_to_rebuild():
    # Nothing to regenerate: no seed, an infinite budget (no noise), or the
    # hardened noise (every private draw from the operating system's
    # CSPRNG, whatever random_state is).
    X = np.random.default_rng(0).normal(size=(2000, 3)) / 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededNoiseWarning)
        GaussianCovariance(data_norm=1.0).fit(X)
        PCA(2, epsilon=np.inf, data_norm=1.0, random_state=0).fit(X)
        with dpcov.config_context(secure_noise=True):
            GaussianCovariance(data_norm=1.0, random_state=0).fit(X)


def test_user_frame_skips_dpcov_sklearn_and_joblib():
    # Called from a test, the walk stops at once; called through
    # scikit-learn's and joblib's frames (a FunctionTransformer run by a
    # Pipeline under joblib.Parallel), it comes back here.
    from joblib import Parallel, delayed

    assert user_frame().f_code.co_filename == __file__
    frames = Parallel(n_jobs=1)(delayed(user_frame)() for _ in range(1))
    assert frames[0].f_code.co_filename == __file__


def test_cli_shows_the_seed_warning(tmp_path, monkeypatch, capsys):
    # The command line has no user's line: the warning is one line on
    # standard error, and only with --random-state.
    monkeypatch.chdir(tmp_path)
    X = np.random.default_rng(0).normal(size=(3000, 3))
    np.save("x.npy", X / np.linalg.norm(X, axis=1).max())
    argv = ["fit", "x.npy", "-e", "gauss", "--data-norm", "1", "-q"]
    assert main([*argv, "--random-state", "7"]) == 0
    err = capsys.readouterr().err
    assert "dpcov: warning: GaussianCovariance: random_state is an integer seed" in err
    assert main(argv) == 0
    assert "random_state" not in capsys.readouterr().err


@pytest.mark.slow
def test_a_script_on_standard_input_gets_the_warning():
    # python - < script: the warning names <stdin> and its line (the source
    # of a script read from standard input cannot be loaded; the warning
    # must not try).
    script = (
        "import numpy as np\n"
        "from dpcov.covariance import GaussianCovariance\n"
        "X = np.random.default_rng(0).normal(size=(2000, 3)) / 3\n"
        "GaussianCovariance(data_norm=1.0, random_state=0).fit(X)\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(dpcov.__file__)))
    env = {**os.environ, "PYTHONPATH": root, "OPENBLAS_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, "-"], input=script, capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("<stdin>:4: SeededNoiseWarning: Gaussian")
