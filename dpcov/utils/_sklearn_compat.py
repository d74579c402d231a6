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
    "check_params_always",
    "validate_parameter_constraints",
]


def check_params_always(estimator):
    """Validate an estimator's parameters even when scikit-learn would not.

    ``sklearn.config_context(skip_parameter_validation=True)`` skips the
    declarative validation of ``fit``; a private estimator must still refuse
    out-of-range privacy parameters, so its ``fit`` calls this.

    Parameters
    ----------
    estimator : estimator instance
        Has ``_parameter_constraints``.
    """
    validate_parameter_constraints(
        estimator._parameter_constraints,
        estimator.get_params(deep=False),
        caller_name=type(estimator).__name__,
    )
