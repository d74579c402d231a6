"""Tests of the command line (__main__ module) and the demo."""

import numpy as np
import pytest

from dpcov.__main__ import main
from dpcov._demo import demo_estimators, demo_pcas, load_unit_digits, run_demo


def test_digits_scaled_by_public_bound():
    X = load_unit_digits()
    assert X.shape == (1797, 64)
    assert np.linalg.norm(X, axis=1).max() <= 1.0


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


def test_cli_demo(capsys):
    assert main(["demo", "--epsilons", "1,10", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "eps=10" in out and "SeparateCov" in out


@pytest.mark.parametrize("argv", [[], ["demo", "--epsilons", "0,1"], ["fit"]])
def test_cli_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2


@pytest.mark.parametrize("argv", [["demo", "--delta", "1"], ["demo", "--repeats", "0"]])
def test_cli_value_errors(argv, capsys):
    assert main(argv) == 2
    assert "error" in capsys.readouterr().err
