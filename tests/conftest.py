"""Shared fixtures: the global random seed of statistical tests."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import os

import pytest

# The array API checks run in a child process where SCIPY_ARRAY_API=1 (see
# tests/test_array_api.py); elsewhere they are not collected, not even for
# doctests.
if os.environ.get("SCIPY_ARRAY_API") != "1":
    collect_ignore = ["array_api_checks.py"]


def _seeds():
    # DPCOV_TESTS_GLOBAL_RANDOM_SEED="all" sweeps seeds 0-99 (a scheduled job);
    # "a-b" a range; an int one seed. Default: 42.
    value = os.environ.get("DPCOV_TESTS_GLOBAL_RANDOM_SEED", "42")
    if value == "all":
        return list(range(100))
    if "-" in value:
        low, high = map(int, value.split("-"))
        return list(range(low, high + 1))
    return [int(value)]


@pytest.fixture(params=_seeds())
def global_random_seed(request):
    """Seed for statistical tests; tolerances are set so any seed passes w.h.p."""
    return request.param
