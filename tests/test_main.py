"""Tests of the command line (dpcov.cli), the demo and the progress bar."""

import io
import os

import numpy as np
import pytest

import dpcov.cli._demo
from dpcov.cli import main
from dpcov.cli._demo import (
    demo_estimators,
    digits_table,
    load_unit_digits,
    n_demo_cells,
    run_demo,
    synthetic_table,
)
from dpcov.cli._progress import Progress

FAST = ["demo", "--quick", "--epsilons", "1,10"]


def test_digits_scaled_by_public_bound():
    X = load_unit_digits()
    assert X.shape == (1797, 64)
    assert np.linalg.norm(X, axis=1).max() <= 1.0


def test_demo_table():
    lines = []
    table = synthetic_table(20_000)
    errors = run_demo(table, (1.0, 100.0), repeats=1, out=lines.append)
    names = [*demo_estimators(1e-6), "scikit-learn (not private)", "zero matrix"]
    assert list(errors) == names
    assert any(line.startswith("AdaptiveCovariance") for line in lines)
    assert any("lower is better" in line for line in lines)
    # At eps = 100 every zCDP estimator is far closer than at eps = 1.
    for name, values in errors.items():
        if "delta=1e-06" in name:
            assert values[1] < values[0]


@pytest.mark.slow
def test_demo_shows_where_privacy_is_cheap_and_where_not():
    # The default run's promise: on the 100,000-row table one private
    # estimate comes within twice scikit-learn's non-private (sampling) error
    # at the largest default budget, and on the digits the noise wins at
    # small budgets.
    lines = []
    table = synthetic_table()
    errors = run_demo(table, (0.25, 0.5, 1.0, 2.0, 4.0), out=lines.append)
    best = min(v[-1] for k, v in errors.items() if "(" in k and "not private" not in k)
    assert best <= 2.0 * table.nonprivate
    assert any(line.startswith("Privacy is cheap here") for line in lines)
    lines = []
    run_demo(digits_table(), (0.25, 0.5, 1.0, 2.0, 4.0), out=lines.append)
    assert any(line.startswith("The noise wins") for line in lines)


@pytest.mark.slow
def test_cli_demo(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main([*FAST, "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "eps=10" in out and "SeparateCovariance" in out and "digits" in out
    assert os.listdir(tmp_path) == []


def test_cli_demo_file(tmp_path, capsys):
    path = tmp_path / "rows.npy"
    rng = np.random.default_rng(0)
    np.save(path, rng.normal(size=(3000, 3)) / 3.0)
    argv = ["demo", "--dataset", str(path), "--quick", "--no-plot", "-q"]
    assert main(argv) == 1  # no public bound given
    assert "--data-norm" in capsys.readouterr().err
    assert main([*argv, "--data-norm", "2"]) == 0
    out = capsys.readouterr().out
    assert "rows.npy" in out and "n=3000, d=3" in out and "digits" not in out


@pytest.mark.slow
def test_cli_demo_plot(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    assert main([*FAST, "--plot", "demo.png"]) == 0
    assert (tmp_path / "demo.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "plot saved to demo.png" in capsys.readouterr().out
    # Default path, and no temporary file left behind.
    assert main([*FAST, "--quiet"]) == 0
    assert sorted(os.listdir(tmp_path)) == ["demo.png", "dpcov-demo.png"]
    assert "plot saved" not in capsys.readouterr().out


@pytest.mark.slow
def test_cli_demo_without_matplotlib(tmp_path, monkeypatch, capsys):
    def missing():
        raise ImportError("No module named 'matplotlib'")

    monkeypatch.setattr(dpcov.cli._demo, "import_matplotlib", missing)
    monkeypatch.chdir(tmp_path)
    # Not asked for explicitly: skipped with a note, exit status 0.
    assert main(FAST) == 0
    out, err = capsys.readouterr()
    assert "eps=10" in out
    assert err.count("\n") == 1 and "plot skipped" in err and "[plot]" in err
    # Asked for: an error before any computation.
    assert main([*FAST, "--plot", "p.png"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "[plot]" in err
    assert os.listdir(tmp_path) == []


def test_cli_demo_plot_errors(tmp_path, capsys):
    for plot in [str(tmp_path / "nodir" / "p.png"), str(tmp_path / "p.pdf")]:
        assert main([*FAST, "--plot", plot]) == 1
        out, err = capsys.readouterr()
        assert out == "" and err.startswith("dpcov: error: ")
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_cli_demo_progress(capsys):
    assert main([*FAST, "--no-plot", "--progress"]) == 0
    out, err = capsys.readouterr()
    cells = n_demo_cells([1.0, 10.0], 1e-6, 2)
    assert f"] {cells}/{cells} " in err and err.endswith("\n")
    assert "\r" not in out and "AdaptiveCovariance" in out
    assert main([*FAST, "--no-plot", "--progress", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "AdaptiveCov" in out


def test_progress_bar():
    stream = io.StringIO()
    with Progress(4, stream=stream, enabled=True, width=4) as bar:
        bar.update(0, label="start")
        bar.update(2, label="half")
        bar.echo("a table line", file=stream)
        bar.update(2)
    text = stream.getvalue()
    assert "\r[##  ] 2/4 half" in text and "a table line\n" in text
    assert text.endswith("\r[####] 4/4 half\n")
    quiet = io.StringIO()
    with Progress(4, stream=quiet, enabled=False) as bar:
        bar.update(label="x")
    assert quiet.getvalue() == ""
    # Enabled by default only on a terminal.
    assert not Progress(1, stream=io.StringIO()).enabled


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["demo", "--epsilons", "0,1"],
        ["fit"],
        ["demo", "--plot", "a.png", "--no-plot"],
    ],
)
def test_cli_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2


@pytest.mark.parametrize("argv", [["demo", "--delta", "1"], ["demo", "--repeats", "0"]])
def test_cli_value_errors(argv, capsys):
    assert main(argv) == 2
    assert "error" in capsys.readouterr().err
