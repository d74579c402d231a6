"""Tests of ``dpcov fit`` (the dpcov.cli package)."""

import json
import os
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import dpcov
from dpcov.accounting import ZCDP, ApproxDP, GaussianDP, PureDP, compose, zcdp_rho
from dpcov.accounting._dp_events import dp_event_spec
from dpcov.cli import main
from dpcov.cli._atomic import write_atomically
from dpcov.cli._estimators import ESTIMATORS, resolve_estimator
from dpcov.cli._ledger import _locked
from dpcov.cli._parser import parse_param
from dpcov.cli._reading import is_header
from dpcov.cli._report import to_json
from dpcov.covariance import GaussianCovariance, SeparateCovariance
from dpcov.decomposition import ExactSubspace


@pytest.fixture
def data(tmp_path, monkeypatch):
    """Rows of norm <= 1 in x.npy and (with a header) x.csv; cwd is tmp_path."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    X /= np.linalg.norm(X, axis=1).max()
    np.save(tmp_path / "x.npy", X)
    with open(tmp_path / "x.csv", "w") as handle:
        handle.write("a,b,c,d\n")
        np.savetxt(handle, X, delimiter=",", fmt="%.17g")
    return X


def _without_hints(err):
    # NoiseDominatedWarning is a legitimate one-line hint on the small test
    # data of these tests (its content is tested in the covariance tests).
    return "".join(
        line
        for line in err.splitlines(keepends=True)
        if "dominated by noise" not in line
    )


def _cli_env():
    # A subprocess runs the dpcov under test (not an installed copy) on one
    # BLAS thread.
    root = os.path.dirname(os.path.dirname(os.path.abspath(dpcov.__file__)))
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "OPENBLAS_NUM_THREADS": "1"}


#: The estimator of the tests that need just one fit.
_FIT = ["-e", "gauss", "--data-norm", "1"]


def _guarantee(data):
    # Inverse of to_json for a guarantee.
    fields = {k: float(v) for k, v in data.items() if k != "notion"}
    return {"pure": PureDP, "zCDP": ZCDP, "approx": ApproxDP}[data["notion"]](**fields)


def _check_report(report, estimator):
    assert report["estimator"] == type(estimator).__name__
    assert report["guarantee_"] == to_json(estimator.guarantee_)
    assert report["epsilon_spent_"] == pytest.approx(estimator.epsilon_spent_)
    assert report["delta_spent_"] == pytest.approx(estimator.delta_spent_)
    split = [_guarantee(g) for g in report["budget_split_"].values()]
    composed = compose(split)
    if isinstance(estimator.guarantee_, GaussianDP):
        # Gaussian steps only: recorded as the one Gaussian mechanism.
        composed = GaussianDP.of_gaussian_steps(composed.rho)
    composed = to_json(composed)
    assert composed.pop("notion") == report["guarantee_"]["notion"]
    for key, value in composed.items():
        assert value == pytest.approx(report["guarantee_"][key], rel=1e-9)
    assert report["dpcov_version"]


def test_fit_npy_separate(data, tmp_path, capsys):
    argv = ["fit", "x.npy", "-e", "separate", "--data-norm", "1"]
    assert main([*argv, "--random-state", "0"]) == 0
    expected = SeparateCovariance(data_norm=1.0, random_state=0).fit(data)
    released = np.load(tmp_path / "x.separatecovariance.npy")
    np.testing.assert_array_equal(released, expected.covariance_)
    report = json.loads((tmp_path / "x.separatecovariance.json").read_text())
    _check_report(report, expected)
    assert report["params"]["data_norm"] == 1.0
    assert report["params"]["random_state"] == 0
    assert (report["n_samples"], report["n_features"]) == data.shape
    assert report["input"] == "x.npy"
    assert report["output"] == {
        "path": "x.separatecovariance.npy",
        "attribute": "covariance_",
        "shape": [4, 4],
    }
    np.testing.assert_allclose(report["attributes"]["location_"], expected.location_)
    assert report["attributes"]["data_norm_"] == 1.0
    assert "precision_" in report["attributes_not_inlined"]
    out = capsys.readouterr().out
    assert "x.separatecovariance.npy" in out and "GaussianDP(mu=" in out


def test_fit_secure_noise(data, tmp_path, capsys):
    # --secure-noise: the exact samplers, recorded in the report; an
    # estimator without them, or a seed, is refused before the data are read
    # (nothing written).
    argv = ["fit", "x.npy", "-e", "gauss", "--data-norm", "1", "--secure-noise"]
    assert main(argv) == 0
    report = json.loads((tmp_path / "x.gaussiancovariance.json").read_text())
    assert report["noise_sampler_"] == "discrete"
    assert main(["fit", "x.npy", "-e", "separate", "--data-norm", "1"]) == 0
    report = json.loads((tmp_path / "x.separatecovariance.json").read_text())
    assert report["noise_sampler_"] == "numpy"
    capsys.readouterr()
    refused = ["fit", "x.npy", "-e", "eigen-sampling", "--secure-noise", "-o", "e.npy"]
    assert main(refused) == 1
    assert "no hardened sampler" in capsys.readouterr().err
    assert main([*argv, "--random-state", "0", "-o", "s.npy"]) == 1
    assert "cannot seed hardened noise" in capsys.readouterr().err
    assert not (tmp_path / "e.npy").exists() and not (tmp_path / "s.npy").exists()


def test_fit_csv_pca(data, tmp_path):
    argv = ["fit", "x.csv", "-e", "PCA", "--n-components", "2", "--data-norm", "1"]
    assert main([*argv, "-o", "pca.npy", "--report", "r.json", "-q"]) == 0
    components = np.load(tmp_path / "pca.npy")
    assert components.shape == (2, 4)
    np.testing.assert_allclose(components @ components.T, np.eye(2), atol=1e-10)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["feature_names"] == ["a", "b", "c", "d"]
    assert report["params"]["n_components"] == 2
    assert report["output"]["attribute"] == "components_"
    assert len(report["attributes"]["explained_variance_"]) == 2
    assert report["n_samples"] == 300


def test_fit_multivariate_gaussian_csv_output(data, tmp_path):
    base = ["fit", "x.csv", "-e", "gaussian", "--random-state", "3", "-q"]
    base += ["--param", "n_iterations=3"]
    assert main([*base, "-o", "g.csv"]) == 0
    assert main([*base, "-o", "g.npy", "--report", "g2.json"]) == 0
    # %.17g round-trips float64 exactly.
    np.testing.assert_array_equal(
        np.loadtxt(tmp_path / "g.csv", delimiter=","), np.load(tmp_path / "g.npy")
    )
    report = json.loads((tmp_path / "g.json").read_text())
    assert report["estimator"] == "MultivariateGaussian"
    assert report["params"]["n_iterations"] == 3
    assert report["output"]["attribute"] == "covariance_"
    assert len(report["attributes"]["mean_"]) == 4


def test_fit_exact_subspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    basis = rng.integers(-5, 6, size=(2, 6))
    X = (rng.integers(-9, 10, size=(200, 2)) @ basis).astype(float)
    np.save("s.npy", X)
    argv = ["fit", "s.npy", "-e", "exact-subspace", "--n-components", "2"]
    argv += ["--param", "assume_centered=True", "--random-state", "0", "-q"]
    assert main(argv) == 0
    expected = ExactSubspace(n_components=2, assume_centered=True, random_state=0)
    expected.fit(X)
    np.testing.assert_array_equal(np.load("s.exactsubspace.npy"), expected.components_)
    report = json.loads((tmp_path / "s.exactsubspace.json").read_text())
    assert report["guarantee_"]["notion"] == "approx"
    _check_report(report, expected)


def test_fit_attribute_and_bernoulli(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    np.save("b.npy", (rng.random((500, 3)) < 0.4).astype(float))
    assert main(["fit", "b.npy", "-e", "bernoulli", "-q", "-o", "p.csv"]) == 0
    assert np.loadtxt("p.csv", delimiter=",").shape == (3,)
    argv = ["fit", "b.npy", "-e", "bernoulli", "-q", "--attribute", "noise_std_"]
    assert main(argv) == 0
    report = json.loads((tmp_path / "b.productbernoulli.json").read_text())
    assert report["output"]["attribute"] == "noise_std_"
    assert "probabilities_" in report["attributes"]


def test_fit_warning_is_one_line(tmp_path, monkeypatch, capsys):
    # d = 10 > exact_max_dim = 8: NuclearLaplaceCovariance warns that its
    # noise comes from a Gibbs chain. The warning shows as one line.
    monkeypatch.chdir(tmp_path)
    X = np.random.default_rng(0).normal(size=(100, 10))
    np.save("w.npy", X / np.linalg.norm(X, axis=1).max())
    argv = ["fit", "w.npy", "-e", "nuclear", "--data-norm", "1", "-q"]
    assert main([*argv, "--param", "n_sweeps=2"]) == 0
    err = _without_hints(capsys.readouterr().err)
    assert err.startswith("dpcov: warning: ") and err.count("\n") == 1
    assert "total-variation" in err


def test_fit_quiet_and_progress(data, capsys):
    argv = ["fit", "x.npy", "-e", "gauss", "--data-norm", "1", "--progress"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "3/3" in captured.err and "\r" in captured.err
    assert "wrote" in captured.out
    assert main([*argv, "--quiet"]) == 0
    out, err = capsys.readouterr()
    # --quiet silences the bar and the summary; warnings still show.
    assert out == "" and _without_hints(err) == ""
    # Without --progress the bar shows only on a terminal.
    assert main(argv[:-1]) == 0
    assert _without_hints(capsys.readouterr().err) == ""


def _write_bad_files(tmp_path):
    with open(tmp_path / "bad.csv", "w") as handle:
        handle.write("a,b,c\n0.1,0.2,0.3\n0.1,s3cr3t,0.3\n")
    with open(tmp_path / "nan.csv", "w") as handle:
        handle.write("0.1,0.2\n0.1,nan\n")
    with open(tmp_path / "ragged.csv", "w") as handle:
        handle.write("0.1,0.2,0.3\n0.1,0.2\n")
    with open(tmp_path / "one.csv", "w") as handle:
        handle.write("0.1,0.2\n")
    np.save(tmp_path / "inf.npy", np.array([[0.1, np.inf], [0.0, 0.0]]))
    np.save(tmp_path / "flat.npy", np.zeros(3))
    (tmp_path / "x.txt").write_text("1\n")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["x.npy", "-e", "nope"], "unknown estimator 'nope'; valid names: "),
        (["x.npy", "-e", "gauss", "--param", "foo=1"], "no parameter 'foo'"),
        (["x.npy", "-e", "gaussian", "--data-norm", "1"], "no parameter 'data_norm'"),
        (["x.npy", "-e", "gauss", "--epsilon", "-1"], "'epsilon' parameter"),
        (["x.npy", "-e", "gauss", "--attribute", "nope_"], "no fitted attribute"),
        (["missing.csv", "-e", "gauss"], "missing.csv: no such file"),
        (["bad.csv", "-e", "gauss"], "column 2 is not numeric"),
        (["bad.csv", "-e", "gauss", "--header"], "column 2 ('b') is not numeric"),
        (["nan.csv", "-e", "gauss"], "pass --header if it names the columns"),
        (["nan.csv", "-e", "gauss", "--no-header"], "column 2 has a missing value"),
        (["inf.npy", "-e", "gauss"], "column 2 has an infinite value"),
        (["inf.npy", "-e", "gauss", "--header"], "a .npy file has no header"),
        (["ragged.csv", "-e", "gauss", "--no-header"], "different numbers of fields"),
        (["flat.npy", "-e", "gauss"], "expected a 2-D array"),
        (["x.txt", "-e", "gauss"], "unsupported file type"),
        (
            [
                "one.csv",
                "-e",
                "pca",
                "--no-header",
                "--data-norm",
                "1",
                "--n-components",
                "2",
            ],
            "n_components=2 must be between 1 and min(n_samples, n_features)=1",
        ),
        (["x.npy", "-e", "gauss", "-o", "nodir/c.npy"], "directory does not exist"),
        (["x.npy", "-e", "gauss", "-o", "x.npy"], "refusing to overwrite the input"),
        (["x.npy", "-e", "gauss", "-o", "c.txt"], "must end in .npy or .csv"),
        (["x.npy", "-e", "exact-subspace", "--n-components", "2"], "no private"),
    ],
)
def test_fit_errors(argv, message, data, tmp_path, capsys):
    _write_bad_files(tmp_path)
    before = sorted(os.listdir(tmp_path))
    contents = {name: (tmp_path / name).read_bytes() for name in before}
    assert main(["fit", *argv]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("dpcov: error: ")
    assert message in err
    assert "s3cr3t" not in err
    assert sorted(os.listdir(tmp_path)) == before
    assert {name: (tmp_path / name).read_bytes() for name in before} == contents


def test_fit_usage_errors(data):
    with pytest.raises(SystemExit) as exc:
        main(["fit", "x.npy", "-e", "gauss", "--param", "novalue"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["fit", "x.csv", "-e", "gauss", "--header", "--no-header"])
    assert exc.value.code == 2


def test_parse_param():
    assert parse_param("covariance=top_k") == ("covariance", "top_k")
    assert parse_param("assume_centered=True") == ("assume_centered", True)
    assert parse_param("beta = 0.2") == ("beta", 0.2)
    assert parse_param("method='ppde'") == ("method", "ppde")


def test_resolve_estimator():
    for name, cls in ESTIMATORS.items():
        assert resolve_estimator(name.upper()) is cls
    assert resolve_estimator("Eigen_Sampling").__name__ == "EigenSamplingCovariance"
    assert resolve_estimator("gaussian").__name__ == "MultivariateGaussian"


@pytest.mark.slow
def test_fit_subprocess_exit_code(data, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "dpcov", "fit", "missing.csv", "-e", "gauss"],
        cwd=tmp_path,
        env=_cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == ["dpcov: error: missing.csv: no such file"]


def test_write_failure_leaves_nothing(data, tmp_path, monkeypatch, capsys):
    # The release's temporary file is written, then finishing the report's
    # fails: neither file appears and no temporary file is left.
    before = sorted(os.listdir(tmp_path))
    calls = []

    def chmod(path):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr("dpcov.cli._atomic._chmod_default", chmod)
    assert main(["fit", "x.npy", "-e", "gauss", "--data-norm", "1"]) == 1
    err = _without_hints(capsys.readouterr().err)
    assert err == "dpcov: error: cannot write the output: No space left on device\n"
    assert sorted(os.listdir(tmp_path)) == before

    def full_disk(handle):
        raise OSError(28, "No space left on device")

    path = tmp_path / "a.npy"
    with pytest.raises(OSError):
        write_atomically([(path, lambda h: h.write(b"x")), (tmp_path / "b", full_disk)])
    assert sorted(os.listdir(tmp_path)) == before


# --- the ledger: accounting across command-line fits ---------------------


def test_ledger_records_fits_and_refuses_before_reading(data, tmp_path, capsys):
    # Pure fits at epsilon 0.4 under a pure cap of 1: two fit, the third is
    # refused before the input is opened (a missing file proves it) and
    # nothing is written.
    argv = ["fit", "x.npy", "-e", "gauss", "--data-norm", "1", "--delta", "0"]
    cap = ["--ledger", "budget.json", "--max-epsilon", "1", "--max-delta", "0"]
    assert main([*argv, "--epsilon", "0.4", *cap, "-o", "a.npy"]) == 0
    assert (
        main([*argv, "--epsilon", "0.4", "--ledger", "budget.json", "-o", "b.npy"]) == 0
    )
    ledger = json.loads((tmp_path / "budget.json").read_text())
    assert ledger["cap"] == {"epsilon": 1.0, "delta": 0.0, "rho": None}
    assert [f["guarantee"] for f in ledger["fits"]] == [
        {"notion": "pure", "epsilon": 0.4}
    ] * 2
    assert ledger["total"]["guarantee"] == {"notion": "pure", "epsilon": 0.8}
    # Each fit's dp_accounting event, as data (to_dp_event builds it).
    spec, relation = dp_event_spec(PureDP(0.4))
    assert spec["type"] == "RandomizedResponseDpEvent"
    assert [f["dp_event"] for f in ledger["fits"]] == [
        {"event": spec, "neighboring_relation": relation}
    ] * 2
    report = json.loads((tmp_path / "b.json").read_text())
    assert report["ledger"]["n_fits"] == 2 and "accountant" not in report["params"]
    capsys.readouterr()
    before = sorted(os.listdir(tmp_path))
    argv[1] = "missing.npy"
    status = main([*argv, "--epsilon", "0.4", "--ledger", "budget.json", "-o", "c.npy"])
    assert status == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "refused before reading the data" in err[0]
    assert sorted(os.listdir(tmp_path)) == before
    assert json.loads((tmp_path / "budget.json").read_text()) == ledger


def test_ledger_composes_zcdp_fits(data, tmp_path):
    # Fits at (1, 1e-6) under a cap of (1.5, 1e-6): zCDP composition admits
    # two (1.451, 1e-6), not three (1.806, 1e-6); adding epsilons would admit
    # only one.
    argv = ["fit", "x.npy", "-e", "separate", "--data-norm", "1", "--ledger", "l.json"]
    cap = ["--max-epsilon", "1.5", "--max-delta", "1e-6"]
    assert main([*argv, *cap, "-q", "-o", "first.npy"]) == 0
    assert main([*argv, "-q", "-o", "second.npy"]) == 0
    assert main([*argv, "-q", "-o", "third.npy"]) == 1
    ledger = json.loads((tmp_path / "l.json").read_text())
    rho = ledger["fits"][0]["guarantee"]["rho"]
    assert len(ledger["fits"]) == 2
    assert ledger["total"]["guarantee"]["rho"] == pytest.approx(2 * rho)
    assert ledger["total"]["epsilon"] == pytest.approx(1.4510, abs=1e-4)
    assert not (tmp_path / "third.npy").exists()


def test_ledger_cap_cannot_change_and_needs_a_ledger(data, tmp_path, capsys):
    argv = ["fit", "x.npy", "-e", "separate", "--data-norm", "1", "-q"]
    assert (
        main([*argv, "--ledger", "l.json", "--max-epsilon", "5", "--max-delta", "1e-6"])
        == 0
    )
    assert main([*argv, "--ledger", "l.json", "--max-epsilon", "50"]) == 1
    assert "cannot be changed" in capsys.readouterr().err
    assert main([*argv, "--max-epsilon", "5"]) == 1
    assert "need --ledger" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{}")
    assert main([*argv, "--ledger", "bad.json"]) == 1
    assert "not a dpcov ledger" in capsys.readouterr().err


def test_ledger_keeps_a_fit_that_failed_after_it_was_recorded(tmp_path, monkeypatch):
    # Random rows lie near no line: ApproximateSubspace's private answer is
    # bottom after its private steps ran, so the ledger records the fit while
    # no output or report is written.
    monkeypatch.chdir(tmp_path)
    np.save("r.npy", np.random.default_rng(0).normal(size=(4000, 5)))
    argv = ["fit", "r.npy", "-e", "approximate-subspace", "--n-components", "1"]
    assert main([*argv, "--ledger", "l.json", "--random-state", "0"]) == 1
    ledger = json.loads((tmp_path / "l.json").read_text())
    assert ledger["fits"] == [
        {
            "label": "ApproximateSubspace",
            "guarantee": {"notion": "approx", "epsilon": 1.0, "delta": 1e-6},
            "unit": "row",
            "relation": "replace",
            "dp_event": None,  # (no dp_accounting event: (epsilon, delta) only)
        }
    ]
    assert sorted(os.listdir(tmp_path)) == ["l.json", "r.npy"]


def test_headerless_csv_with_a_bad_first_row_reveals_nothing(tmp_path, capsys):
    # A first row mixing numbers and text may be a header or a bad data row:
    # the command asks which, without quoting it. Declared data, its text
    # cell is named by position.
    path = tmp_path / "bad.csv"
    path.write_text("0.1234,SECRET,0.5\n0.2,0.3,0.4\n")
    argv = ["fit", str(path), "-e", "separate", "--data-norm", "1"]
    assert main([*argv, "-o", str(tmp_path / "o.npy")]) == 1
    err = capsys.readouterr().err
    assert "pass --header if it names the columns, or --no-header" in err
    assert main([*argv, "-o", str(tmp_path / "o.npy"), "--no-header"]) == 1
    err += capsys.readouterr().err
    assert "column 2 is not numeric" in err and "SECRET" not in err
    assert "0.1234" not in err
    assert sorted(os.listdir(tmp_path)) == ["bad.csv"]


def test_ledger_with_an_infinite_cap_is_valid_json(data, tmp_path):
    argv = ["fit", "x.npy", "-e", "separate", "--data-norm", "1", "-q"]
    assert main([*argv, "--ledger", "l.json", "--max-rho", "inf"]) == 0
    ledger = json.loads((tmp_path / "l.json").read_text())
    assert ledger["cap"]["rho"] == "inf" and len(ledger["fits"]) == 1
    # The stored cap reads back: the same cap given again is accepted.
    assert main([*argv, "--ledger", "l.json", "--max-rho", "inf", "-o", "b.npy"]) == 0


@pytest.mark.slow
def test_concurrent_fits_on_one_ledger_cannot_both_pass_its_cap(data, tmp_path):
    # Two processes race for a cap that admits one fit: the ledger's lock
    # makes the second see the first's record, so exactly one releases.
    cmd = [sys.executable, "-m", "dpcov", "fit", "x.npy", "-e", "gauss"]
    cmd += ["--delta", "0", "--epsilon", "1", "--data-norm", "1", "-q"]
    cmd += ["--ledger", "l.json", "--max-epsilon", "1", "--max-delta", "0"]
    runs = [
        subprocess.Popen(
            [*cmd, "-o", f"out{i}.npy"],
            cwd=tmp_path,
            env=_cli_env(),
            stderr=subprocess.PIPE,
        )
        for i in range(2)
    ]
    codes = sorted(run.wait(timeout=120) for run in runs)
    for run in runs:
        run.stderr.close()
    assert codes == [0, 1]
    ledger = json.loads((tmp_path / "l.json").read_text())
    assert len(ledger["fits"]) == 1
    assert sum((tmp_path / f"out{i}.npy").exists() for i in range(2)) == 1
    assert not (tmp_path / "l.json.lock").exists()


# --- headers ----------------------------------------------------------------


def test_is_header():
    assert is_header(["a", "b"]) and is_header([" age ", "Income (USD)"])
    for row in (
        ["2019", "2020", "2021"],
        ["NA", "NA"],
        ["a", ""],
        ["a", "nan"],
        ["id", "1"],
        ["inf", "x"],
        [],
    ):
        assert not is_header(row), row


def test_header_flags(tmp_path, monkeypatch, capsys):
    # A numeric header and a first row of NAs are refused unless a flag says
    # what they are; with the flag each is read as told.
    monkeypatch.chdir(tmp_path)
    rows = "0.1,0.2\n0.3,0.1\n0.2,0.4\n"
    (tmp_path / "years.csv").write_text("2019,2020\n" + rows)
    (tmp_path / "na.csv").write_text("NA,NA\n" + rows)
    argv = ["-e", "gauss", "--data-norm", "1", "-q"]
    for name, names in (("years.csv", ["2019", "2020"]), ("na.csv", ["NA", "NA"])):
        assert main(["fit", name, *argv]) == 1
        err = capsys.readouterr().err
        assert "pass --header if it names the columns, or --no-header" in err
        assert "2019" not in err and "NA," not in err
        assert main(["fit", name, *argv, "--header", "-o", "h.npy"]) == 0
        report = json.loads((tmp_path / "h.json").read_text())
        assert report["n_samples"] == 3 and report["feature_names"] == names
    assert main(["fit", "years.csv", *argv, "--no-header", "-o", "n.npy"]) == 0
    report = json.loads((tmp_path / "n.json").read_text())
    assert report["n_samples"] == 4 and "feature_names" not in report
    # Unasked, a row of text only is a header, and the summary says so.
    (tmp_path / "t.csv").write_text("x,y\n" + rows)
    assert main(["fit", "t.csv", "-e", "gauss", "--data-norm", "1"]) == 0
    out = capsys.readouterr().out
    assert "read 3 rows of 2 columns from t.csv, after a header row" in out


# --- bad input: nothing from the data in any message -------------------------

#: Cells (and their likely renderings) that no output of the command may hold.
SECRETS = (
    "Alice",
    "Smith",
    "SSN-123",
    "Patient",
    "1234.5678",
    "1234.57",
    "2019",
    "1e308",
    "e+308",
    "1e309",
    "caf",
)

_PCA = ["-e", "pca", "--n-components", "1", "--data-norm", "1"]
_ASK = "pass --header if it names the columns, or --no-header if it is data"


def _case(name, content, flags, message, id):
    return pytest.param(name, content, flags, message, id=id)


# (file, content, flags, message; None where the input is accepted)
BAD_INPUTS = [
    _case(
        "t.csv",
        "Alice,Smith,F\nBob,Smith,M\n",
        [],
        "column 1 is not numeric",
        "headerless-text",
    ),
    _case(
        "t.csv",
        "Alice,Smith,F\nBob,Smith,M\n",
        ["--no-header"],
        "column 1 is not numeric",
        "text-declared-data",
    ),
    _case("t.csv", "Alice,Smith,F\n", [], "no data rows", "one-text-row"),
    _case(
        "t.csv",
        "a,b,c\n0.1,0.2,0.3\n0.5,SSN-123-45-6789,0.1\n",
        [],
        "column 2 is not numeric",
        "ssn-cell",
    ),
    _case(
        "t.csv",
        "a,b,c\n0.1,0.2,0.3\n0.5,SSN-123-45-6789,0.1\n",
        ["--header"],
        "column 2 ('b') is not numeric",
        "ssn-cell-declared-header",
    ),
    _case(
        "t.csv",
        "a,b,c\n1234.5678,Patient-Alice-0,0.1\n0.1,0.2,0.3\n",
        [],
        "column 2 is not numeric",
        "number-beside-text",
    ),
    _case("t.csv", "1234.5678,Patient-Alice-0\n0.1,0.2\n", [], _ASK, "mixed-first-row"),
    _case(
        "t.csv",
        "a,b\n1234.5678,0.2\n0.3,NaN\n",
        [],
        "column 2 has a missing value",
        "nan-cell",
    ),
    _case(
        "t.csv",
        "a,b\n1234.5678,NA\n0.3,0.2\n",
        [],
        "column 2 has a missing value",
        "na-cell",
    ),
    _case(
        "t.csv",
        "a,b\n1234.5678,0.2\n,0.3\n",
        [],
        "column 1 has a missing value",
        "empty-cell",
    ),
    _case("t.csv", "NA,NA\n1234.5678,0.2\n0.3,0.1\n", [], _ASK, "na-first-row"),
    _case(
        "t.csv",
        "a,b\n1234.5678,0.2\n0.3,-inf\n",
        [],
        "column 2 has an infinite value",
        "inf-cell",
    ),
    _case(
        "t.csv",
        "a,b\n1234.5678,0.2\n0.3,1e309\n",
        [],
        "column 2 has an infinite value",
        "overflowing-cell",
    ),
    _case(
        "t.csv",
        "a,b,c\n1234.5678,0.2,0.3\n0.4,0.5\n",
        [],
        "different numbers of fields (expected 3)",
        "ragged-row",
    ),
    _case(
        "t.csv",
        "a,b,c\n1234.5678,0.2\n0.3,0.1\n",
        ["--header"],
        "the header has 3 fields, the rows 2",
        "header-wider-than-rows",
    ),
    _case("t.csv", "", [], "empty file", "empty-file"),
    _case("t.csv", "\n\n", ["--no-header"], "empty file", "blank-lines"),
    _case("t.csv", "a,b,c\n", [], "no data rows", "header-only"),
    _case("t.csv", "a,b,c\n", ["--header"], "no data rows", "header-only-declared"),
    _case("t.csv", "1234.5678,0.25\n", [], _ASK, "one-row"),
    _case(
        "t.csv",
        "1234.5678,0.25\n",
        ["--no-header", "-e", "pca", "--n-components", "2", "--data-norm", "1"],
        "must be between 1 and min(n_samples, n_features)=1",
        "one-row-pca",
    ),
    _case(
        "t.csv",
        "2019,2020,2021\n0.1,0.2,0.3\n0.3,0.2,0.1\n",
        [],
        _ASK,
        "numeric-header",
    ),
    _case("t.csv", b"a,b\n0.1,caf\xe9\n", [], "not UTF-8 text", "latin-1"),
    _case(
        "t.npy",
        np.array([[0.1, np.nan], [1234.5678, 0.2]]),
        [],
        "column 2 has a missing value",
        "nan-npy",
    ),
    _case(
        "t.npy",
        np.array([[0.1, 0.2], [1234.5678, np.inf]]),
        [],
        "column 2 has an infinite value",
        "inf-npy",
    ),
    _case(
        "t.npy",
        np.array([1234.5678, 0.1]),
        [],
        "expected a 2-D array, got 1-D",
        "1-d-npy",
    ),
    _case("t.npy", np.full((2, 2, 2), 1234.5678), [], "got 3-D", "3-d-npy"),
    _case(
        "t.npy",
        np.array([[1234.5678, "Alice"]], dtype=object),
        [],
        "holds Python objects",
        "object-npy",
    ),
    _case(
        "t.npy",
        np.array([[1234.5678 + 1j, 0.1]]),
        [],
        "not a numeric array (dtype complex128)",
        "complex-npy",
    ),
    # A date's unit follows the cells' precision: named by its kind.
    _case(
        "t.npy",
        np.array([["2020-01-01T12:34", "2021-05-06T07:08"]], dtype="datetime64"),
        [],
        "not a numeric array (dtype dates)",
        "dates-npy",
    ),
    _case("t.npy", np.zeros((0, 3)), [], "no data rows", "no-rows-npy"),
    _case(
        "t.npy",
        np.array([[1234.5678, 0.1]]),
        ["--header"],
        "has no header",
        "header-flag-on-npy",
    ),
    # Accepted: a huge finite value is clipped to --data-norm like any other.
    _case("t.csv", "a,b\n1e308,1e308\n0.1,0.2\n0.2,0.1\n", [], None, "huge-finite"),
    _case(
        "t.npy",
        np.array([[1e308, -1e308], [0.1, 0.2], [0.2, 0.1]]),
        [*_PCA],
        None,
        "huge-finite-pca",
    ),
    # Accepted: n = 1 is public, and the covariance estimators fit it.
    _case("t.csv", "1234.5678,0.25\n", ["--no-header"], None, "one-row-gauss"),
]


@pytest.mark.parametrize("name, content, flags, message", BAD_INPUTS)
def test_bad_input_matrix(name, content, flags, message, tmp_path, monkeypatch, capsys):
    # Each bad input fails with one line of our own, naming at most a column;
    # no cell, no traceback, and nothing written: not the output, not the
    # ledger, no lock or temporary file.
    monkeypatch.chdir(tmp_path)
    if isinstance(content, np.ndarray):
        np.save(name, content, allow_pickle=True)
    else:
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(name, mode) as handle:
            handle.write(content)
    cap = ["--ledger", "l.json", "--max-epsilon", "5", "--max-delta", "1e-6"]
    status = main(["fit", name, *_FIT, *flags, *cap, "-o", "out.npy"])
    out, err = capsys.readouterr()
    for secret in SECRETS:
        assert secret not in out + err, secret
    assert "Traceback" not in out + err
    err = _without_hints(err)
    if message is None:
        assert status == 0 and err == ""
        assert len(json.loads((tmp_path / "l.json").read_text())["fits"]) == 1
        assert sorted(os.listdir(tmp_path)) == sorted(
            [name, "l.json", "out.json", "out.npy"]
        )
        return
    assert status == 1 and out == ""
    assert err.startswith("dpcov: error: ") and err.count("\n") == 1
    assert message in err
    assert os.listdir(tmp_path) == [name]


# --- errors and warnings from the fit ------------------------------------------


def _secret_data(tmp_path):
    X = np.full((20, 2), 0.01)
    X[0, 0] = 0.1234
    np.save(tmp_path / "s.npy", X)


def test_fit_error_quoting_the_data_is_withheld(tmp_path, monkeypatch, capsys):
    # A message raised outside dpcov's code could quote the data: only its
    # type is named. dpcov's own messages state public values and are shown.
    monkeypatch.chdir(tmp_path)
    _secret_data(tmp_path)

    def leaky_fit(self, X, y=None):
        raise ValueError(f"bad first cell {X[0, 0]}")

    monkeypatch.setattr(GaussianCovariance, "fit", leaky_fit)
    argv = ["fit", "s.npy", *_FIT, "--ledger", "l.json"]
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert err == (
        "dpcov: error: GaussianCovariance: the fit failed (ValueError); its "
        "message is not shown, as it comes from outside dpcov and could quote "
        "the data\n"
    )

    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "s.npy", np.full((3, 2), 0.1234))
    assert main(["fit", "s.npy", "-e", "gaussian", "--no-header"]) == 1
    err = capsys.readouterr().err
    assert "minimum of 4 is required by MultivariateGaussian" in err
    assert "0.1234" not in err
    assert sorted(os.listdir(tmp_path)) == ["s.npy"]


def test_unexpected_error_prints_no_message_or_traceback(
    data, tmp_path, monkeypatch, capsys
):
    def broken(*args, **kwargs):
        raise RuntimeError("cell 0.1234 in row 7")

    monkeypatch.setattr("dpcov.cli._fit.build_report", broken)
    assert main(["fit", "x.npy", *_FIT]) == 1
    out, err = capsys.readouterr()
    err = _without_hints(err)
    assert err.startswith("dpcov: error: unexpected RuntimeError") and out == ""
    assert "0.1234" not in err and "Traceback" not in err and err.count("\n") == 1


def test_warnings_from_outside_dpcov_are_not_quoted(tmp_path, monkeypatch, capsys):
    # NumPy's floating-point warnings have fixed texts and show as they are;
    # the text of any other warning from outside dpcov is withheld.
    monkeypatch.chdir(tmp_path)
    _secret_data(tmp_path)
    original = GaussianCovariance.fit

    def noisy_fit(self, X, y=None):
        warnings.warn(f"first cell {X[0, 0]}", UserWarning, stacklevel=1)
        np.array([1e308]) * 10.0
        return original(self, X)

    monkeypatch.setattr(GaussianCovariance, "fit", noisy_fit)
    assert main(["fit", "s.npy", *_FIT, "-q"]) == 0
    err = _without_hints(capsys.readouterr().err)
    assert err.splitlines() == [
        "dpcov: warning: UserWarning from tests (its text is not shown: it comes "
        "from outside dpcov and could quote the data)",
        "dpcov: warning: overflow encountered in multiply",
    ]


# --- the ledger's cap and lock -------------------------------------------------


def test_ledger_max_epsilon_alone_is_refused_at_creation(data, tmp_path, capsys):
    argv = ["fit", "x.npy", *_FIT, "-q", "--ledger", "l.json", "--max-epsilon", "3"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "--max-epsilon needs --max-delta" in err
    assert "--max-delta 1e-6" in err and "--max-delta 0" in err
    assert not (tmp_path / "l.json").exists()
    # An existing ledger keeps its cap: --max-epsilon alone just repeats it.
    assert main([*argv, "--max-delta", "1e-6"]) == 0
    assert main([*argv, "-o", "b.npy"]) == 0
    assert len(json.loads((tmp_path / "l.json").read_text())["fits"]) == 2


_PURE = ["--delta", "0", "--epsilon", "0.6"]


@pytest.mark.parametrize(
    "cap, accepted, refused, total, refusal",
    [
        (
            ["--max-epsilon", "1.5", "--max-delta", "1e-6"],
            [[], []],
            [],
            "2 fits, total (epsilon=1.45104, delta=1e-06), cap (epsilon=1.5, "
            "delta=1e-06)",
            "it would bring the ledger's total to (epsilon=1.80641, delta=1e-06), "
            "over its cap (epsilon=1.5, delta=1e-06) (2 fits recorded)",
        ),
        (
            ["--max-epsilon", "1", "--max-delta", "0"],
            [_PURE],
            _PURE,
            "1 fit, total epsilon=0.6, cap epsilon=1 (pure DP)",
            "it would bring the ledger's total to epsilon=1.2, over its cap "
            "epsilon=1 (pure DP) (1 fit recorded)",
        ),
        (
            ["--max-epsilon", "1", "--max-delta", "0"],
            [_PURE],
            [],
            "1 fit, total epsilon=0.6, cap epsilon=1 (pure DP)",
            f"its guarantee, {ZCDP(zcdp_rho(1.0, 1e-6))!r}, is not pure DP, and "
            "the ledger's cap is epsilon=1 (pure DP), which only pure-DP fits "
            "(--delta 0) keep (1 fit recorded)",
        ),
        (
            ["--max-rho", "0.03"],
            [[]],
            ["-e", "exact-subspace", "--n-components", "1"],
            "1 fit, total rho=0.024356, cap rho=0.03",
            "its guarantee, ApproxDP(epsilon=1.0, delta=1e-06), has no zCDP "
            "form, and the ledger's cap is rho=0.03 (1 fit recorded)",
        ),
    ],
)
def test_ledger_speaks_in_the_caps_units(
    data, capsys, cap, accepted, refused, total, refusal
):
    # The summary gives the total in the cap's units, and a refusal says why
    # in them too.
    base = ["fit", "x.npy", "--ledger", "l.json", *cap]
    for i, extra in enumerate(accepted):
        assert main([*base, *_FIT, *extra, "-o", f"{i}.npy"]) == 0
    assert f"ledger l.json: {total}\n" in capsys.readouterr().out
    estimator = _FIT if "-e" not in refused else []
    assert main([*base, *estimator, *refused, "-o", "last.npy"]) == 1
    err = capsys.readouterr().err
    assert err.endswith(f": refused before reading the data: {refusal}\n")


def test_ledger_lock_is_exclusive_and_removed(tmp_path):
    # The second run waits on the first's lock file, which the first removes
    # as it lets go; the second then locks a fresh file and removes it too.
    path = tmp_path / "l.json"
    order = []

    def second():
        with _locked(path):
            order.append("second")

    with _locked(path):
        assert os.listdir(tmp_path) == ["l.json.lock"]
        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.2)  # the second run now waits on this lock file
        order.append("first")
    thread.join(timeout=10)
    assert order == ["first", "second"]
    assert os.listdir(tmp_path) == []


def test_bounds_option_scalar_and_file(data, tmp_path, capsys):
    # --bounds LO,HI and a two-row file give the estimator's bounds; the fit
    # equals the Python one with the same parameters.
    base = ["fit", "x.npy", "-e", "gauss", "--random-state", "0", "-q"]
    assert main([*base, "--bounds=-1,1", "-o", "s.npy"]) == 0
    expected = GaussianCovariance(bounds=(-1.0, 1.0), random_state=0).fit(data)
    np.testing.assert_allclose(np.load("s.npy"), expected.covariance_)
    lower, upper = -np.ones(4), np.array([1.0, 2.0, 3.0, 4.0])
    np.savetxt(tmp_path / "b.csv", np.vstack([lower, upper]), delimiter=",")
    assert main([*base, "--bounds", "b.csv", "-o", "f.npy"]) == 0
    expected = GaussianCovariance(bounds=(lower, upper), random_state=0).fit(data)
    np.testing.assert_allclose(np.load("f.npy"), expected.covariance_)
    report = json.loads((tmp_path / "f.json").read_text())
    assert report["params"]["bounds"] == [lower.tolist(), upper.tolist()]


def test_bounds_option_errors(data, tmp_path, capsys):
    base = ["fit", "x.npy", "-e", "gauss", "-q"]
    with pytest.raises(SystemExit):
        main([*base, "--bounds", "zero,one"])
    assert "LOWER,UPPER" in capsys.readouterr().err
    np.savetxt(tmp_path / "three.csv", np.zeros((3, 4)), delimiter=",")
    with pytest.raises(SystemExit):
        main([*base, "--bounds", "three.csv"])
    assert "expected two rows" in capsys.readouterr().err
    assert main([*base, "--bounds=0,1", "--data-norm", "1"]) == 1
    assert "not both" in capsys.readouterr().err


def test_fit_accountant_copy_error_is_one_line(monkeypatch, capsys):
    # AccountantCopyError is no Exception (searches must let it through): the
    # command still shows it as one line, exit status 1, no traceback.
    import dpcov.cli as cli
    from dpcov.exceptions import AccountantCopyError

    def refuse(args):
        raise AccountantCopyError("Estimator: this BudgetAccountant is a copy")

    monkeypatch.setattr(cli, "run_fit", refuse)
    assert main(["fit", "x.npy", *_FIT]) == 1
    err = capsys.readouterr().err
    assert err == "dpcov: error: Estimator: this BudgetAccountant is a copy\n"


def test_bounds_private_finds_the_ranges_privately(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    np.save(tmp_path / "t.npy", rng.normal([1013.0, 0.05], [12.0, 0.01], (6000, 2)))
    argv = ["fit", "t.npy", "-e", "adaptive", "--bounds", "private", "-o", "c.npy"]
    assert main(argv) == 0
    report = json.loads((tmp_path / "c.json").read_text())
    assert "bounds" in json.dumps(report)
    assert np.load(tmp_path / "c.npy").shape == (2, 2)
    capsys.readouterr()
    # Too few rows: the minimum is said, nothing is written.
    np.save(tmp_path / "small.npy", np.ones((50, 2)))
    assert main(["fit", "small.npy", "-e", "gauss", "--bounds", "private"]) != 0
    assert "samples at this budget" in capsys.readouterr().err


def test_semicolon_file_read_with_commas_hints_the_delimiter(tmp_path):
    from dpcov.cli._errors import CommandError
    from dpcov.cli._reading import read_matrix

    (tmp_path / "s.csv").write_text("alcohol;malic_acid\n14.2;1.71\n13.2;1.78\n")
    with pytest.raises(CommandError, match="pass --delimiter ';'") as info:
        read_matrix(tmp_path / "s.csv", header=True)
    assert "14.2" not in str(info.value) and "1.71" not in str(info.value)


def test_ragged_row_names_neither_its_line_nor_its_cells(tmp_path):
    # The privacy model: an input outside the domain is refused naming a
    # column at most, never which row (it would pick out an individual).
    from dpcov.cli._errors import CommandError
    from dpcov.cli._reading import read_matrix

    (tmp_path / "r.csv").write_text("a,b,c\n1234.5678,0.2,0.3\n0.4,0.5\n")
    with pytest.raises(CommandError, match="different numbers of fields") as info:
        read_matrix(tmp_path / "r.csv", header=True)
    message = str(info.value).split("r.csv: ", 1)[1]
    assert "1234" not in message and "0.4" not in message
    assert "line" not in message and "row 3" not in message


def test_models_fit_with_a_target_column(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(6000, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.normal(0, 0.1, 6000)
    with open(tmp_path / "reg.csv", "w") as handle:
        handle.write("a,b,c,y\n")
        np.savetxt(handle, np.c_[X, y], delimiter=",", fmt="%.6f")
    argv = ["fit", "reg.csv", "-e", "linear-regression", "--target", "y"]
    argv += ["--bounds=-1,1", "--param", "target_bounds=(-5, 5)", "-o", "c.npy"]
    # Seeded: unseeded, the largest coefficient error at epsilon = 1 on 6000
    # rows exceeded 0.2 in 3.5% of 200 fits (median 0.10, 99th percentile
    # 0.23), which failed CI once. 0.3 is above that 99th percentile; the
    # test checks that the target column reaches the model, not its accuracy.
    assert main([*argv, "--random-state", "0"]) == 0
    np.testing.assert_allclose(np.load(tmp_path / "c.npy"), [1.0, -2.0, 0.5], atol=0.3)
    labels = (X[:, 0] > 0).astype(int)
    with open(tmp_path / "cls.csv", "w") as handle:
        handle.write("a,b,c,label\n")
        np.savetxt(handle, np.c_[X, labels], delimiter=",", fmt="%.6f")
    argv = ["fit", "cls.csv", "-e", "lda", "--target", "4", "--data-norm", "2"]
    assert main([*argv, "--param", "classes=[0, 1]", "-o", "l.npy"]) == 0
    assert np.load(tmp_path / "l.npy").shape == (1, 3)  # two classes: one row
    # Per-feature ranges found privately (a quarter of the budget).
    argv = ["fit", "cls.csv", "-e", "lda", "--target", "label", "--bounds", "private"]
    assert main([*argv, "--param", "classes=[0, 1]", "-o", "p.npy"]) == 0
    assert np.load(tmp_path / "p.npy").shape == (1, 3)
    capsys.readouterr()
    for bad, message in [
        (["fit", "reg.csv", "-e", "ridge", "--bounds=-1,1"], "pass --target"),
        (["fit", "reg.csv", "-e", "gauss", "--target", "y"], "fits no target"),
        (
            ["fit", "reg.csv", "-e", "ridge", "--target", "9", "--bounds=-1,1"],
            "names no column",
        ),
    ]:
        assert main(bad) != 0
        assert message in capsys.readouterr().err


def test_a_group_column_fits_persons(tmp_path, monkeypatch, capsys):
    # --group-column names the person of each row (read, not a feature) and
    # --max-rows-per-group bounds a person's rows: the release is the
    # estimator's person-level fit, the report and the summary state no row
    # count, and the ledger records the unit.
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    groups = rng.integers(0, 800, size=3000)
    X = rng.normal(size=(800, 3))[groups] + 0.3 * rng.normal(size=(3000, 3))
    with open(tmp_path / "visits.csv", "w") as handle:
        handle.write("a,patient,b,c\n")
        np.savetxt(handle, np.c_[X[:, :1], groups, X[:, 1:]], delimiter=",", fmt="%.6f")
    argv = ["fit", "visits.csv", "-e", "gauss", "--data-norm", "3", "-o", "c.npy"]
    argv += ["--group-column", "patient", "--max-rows-per-group", "5"]
    argv += ["--random-state", "0", "--ledger", "l.json"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "3000" not in out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = GaussianCovariance(
            data_norm=3.0, max_rows_per_group=5, random_state=0
        ).fit(np.round(X, 6), groups=groups)
    np.testing.assert_allclose(np.load("c.npy"), expected.covariance_, rtol=1e-12)
    report = json.loads((tmp_path / "c.json").read_text())
    assert report["n_samples"] is None and report["privacy_unit"] == "person"
    assert report["feature_names"] == ["a", "b", "c"]
    ledger = json.loads((tmp_path / "l.json").read_text())
    assert [fit["unit"] for fit in ledger["fits"]] == ["person"]
    # A reloaded ledger keeps the unit of each fit.
    assert main([*argv[:-2], "--ledger", "l.json", "-o", "d.npy"]) == 0
    ledger = json.loads((tmp_path / "l.json").read_text())
    assert [fit["unit"] for fit in ledger["fits"]] == ["person", "person"]
    capsys.readouterr()
    for bad, message in [
        (argv[:6] + ["--group-column", "patient"], "come together"),
        (argv[:6] + ["--max-rows-per-group", "5"], "come together"),
        (
            ["fit", "visits.csv", "-e", "exact-subspace", "--n-components", "1"]
            + ["--group-column", "2", "--max-rows-per-group", "5"],
            "no parameter 'max_rows_per_group'",
        ),
    ]:
        assert main(bad) != 0
        assert message in capsys.readouterr().err


def test_add_remove_states_no_row_count(tmp_path, monkeypatch, capsys):
    # Under neighbours="add_remove" the number of rows is private: the
    # summary and the report do not state it; the report gives the released
    # count, as such.
    monkeypatch.chdir(tmp_path)
    X = np.random.default_rng(0).normal(size=(3001, 3))
    np.savetxt(tmp_path / "d.csv", X, delimiter=",")
    argv = ["fit", "d.csv", "--no-header", "-e", "gauss", "--data-norm", "3"]
    argv += ["--param", "neighbours=add_remove", "-o", "c.npy", "--random-state", "0"]
    assert main(argv) == 0
    assert "3001" not in capsys.readouterr().out
    report = json.loads((tmp_path / "c.json").read_text())
    assert report["n_samples"] is None and report["neighbours"] == "add_remove"
    assert report["released_count"] != 3001
