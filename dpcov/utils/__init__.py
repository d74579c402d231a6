"""Validation, randomness and data-pass helpers shared by dpcov's estimators."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._random import check_random_state
from .validation import (
    check_approx_privacy_params,
    check_bounds,
    check_privacy_params,
    check_zcdp_privacy_params,
    privacy_spent,
)

__all__ = [
    "check_random_state",
    "check_approx_privacy_params",
    "check_bounds",
    "check_privacy_params",
    "check_zcdp_privacy_params",
    "privacy_spent",
]
