"""Tests of the command line (dpcov.cli), the demo and the progress bar."""

import io
import os

import numpy as np
import pytest

import dpcov.cli._demo
from dpcov.cli import main
from dpcov.cli._demo import (
    demo_estimators,
    demo_pcas,
    load_unit_digits,
    n_demo_cells,
    run_demo,
)
from dpcov.cli._progress import Progress

FAST = ["demo", "--repeats", "1", "--epsilons", "1,10"]


def test_digits_scaled_by_public_bound():
    X = load_unit_digits()
    assert X.shape == (1797, 64)
    assert np.linalg.norm(X, axis=1).max() <= 1.0


@pytest.mark.slow
def test_demo_table():
    lines = []
    errors = run_demo((1.0, 100.0), repeats=2, out=lines.append)
    names = [*demo_estimators(1e-6), "zero matrix", *demo_pcas(1e-6, 10)]
    assert list(errors) == names
    assert any(line.startswith("AdaptiveCov") for line in lines)
    # At eps = 100 every zCDP estimator is far closer than at eps = 1, and
    # every PCA captures more variance.
    for name, values in errors.items():
        if "delta=1e-06" in name and name.startswith("PCA"):
            assert values[1] > values[0]
        elif "delta=1e-06" in name:
            assert values[1] < values[0]


@pytest.mark.slow
def test_cli_demo(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main([*FAST, "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "eps=10" in out and "SeparateCov" in out
    assert os.listdir(tmp_path) == []


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
    cells = n_demo_cells([1.0, 10.0], 1e-6)
    assert f"] {cells}/{cells} " in err and err.endswith("\n")
    assert "\r" not in out and "AdaptiveCov" in out
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
