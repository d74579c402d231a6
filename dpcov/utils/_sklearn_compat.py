"""The only module that imports private names from scikit-learn.

If scikit-learn moves one of these, this file is the one place to change.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn.base import _fit_context
from sklearn.decomposition._base import _BasePCA
from sklearn.utils._param_validation import (
    Interval,
    Options,
    RealNotInt,
    StrOptions,
    validate_parameter_constraints,
)

__all__ = [
    "Interval",
    "_BasePCA",
    "Options",
    "RealNotInt",
    "StrOptions",
    "_fit_context",
    "validate_parameter_constraints",
]
