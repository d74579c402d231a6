"""Print pip constraints pinning every declared lower bound to its floor.

CI's second environment installs ``.[test]`` with these constraints, so the
fast test lane runs on exactly the oldest versions pyproject.toml declares
(``numpy>=1.24`` becomes ``numpy==1.24``); a requirement without a lower bound
is left free. Reading the floors from pyproject.toml means they cannot drift
from what CI tests.

Usage: ``python3 .ci/floors.py [extra ...] > floors.txt`` (needs Python 3.11+
for tomllib; the environment it pins may be older).
"""

import re
import sys
from pathlib import Path

import tomllib

project = tomllib.loads(
    (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
)["project"]
requirements = list(project["dependencies"])
for extra in sys.argv[1:]:
    requirements += project["optional-dependencies"][extra]

pins = {}
for requirement in requirements:
    # "dask[array]>=2024.1" -> name "dask", floor "2024.1" (extras and any
    # upper bound do not change the floor).
    name = re.match(r"[A-Za-z0-9_.-]+", requirement).group().lower()
    floor = re.search(r">=\s*([^,;\s]+)", requirement)
    if floor is None:
        continue
    floor = floor.group(1)
    if pins.get(name, floor) != floor:
        sys.exit(f"{name} has two different floors: {pins[name]} and {floor}")
    pins[name] = floor

for name, floor in sorted(pins.items()):
    print(f"{name}=={floor}")
