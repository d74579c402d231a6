"""The only module that imports private names from scikit-learn.

If scikit-learn moves one of these, this file is the one place to change.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import functools
import timeit
from contextlib import contextmanager, nullcontext

from sklearn.base import _fit_context as _sklearn_fit_context
from sklearn.decomposition._base import _BasePCA
from sklearn.pipeline import _name_estimators
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    Options,
    RealNotInt,
    StrOptions,
    validate_parameter_constraints,
)
from sklearn.utils.validation import _num_features, _num_samples

from .._config import config_context

try:
    # scikit-learn 1.5 and later (1.6 to 1.9 included).
    from sklearn.utils._user_interface import _print_elapsed_time
except ImportError:  # moved by a later scikit-learn: the same line, printed here

    @contextmanager
    def _print_elapsed_time(source, message=None):
        # Print, once the block has run, "[source] .... message, total=  0.0s"
        # (70 characters wide, as scikit-learn's); None prints nothing.
        if message is None:
            yield
            return
        start = timeit.default_timer()
        yield
        elapsed = timeit.default_timer() - start
        if elapsed > 60:
            total = f"{elapsed / 60:4.1f}min"
        else:
            total = f" {elapsed:5.1f}s"
        head, tail = f"[{source}] ", f" {message}, total={total}"
        print(f"{head}{'.' * (70 - len(head) - len(tail))}{tail}")


__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "_BasePCA",
    "Options",
    "RealNotInt",
    "StrOptions",
    "_fit_context",
    "_name_estimators",
    "_num_features",
    "_num_samples",
    "_print_elapsed_time",
    "check_params_always",
    "validate_parameter_constraints",
]


def _fit_context(*, prefer_skip_nested_validation):
    """scikit-learn's fit decorator, made all-or-nothing.

    Besides what scikit-learn's ``_fit_context`` does (parameter validation,
    the nested-validation config), a ``fit`` that raises leaves the estimator
    as it was before the call: the attributes set on the way (``n_features_in_``
    from validation, the attributes of an earlier fit overwritten before a
    later step failed) are rolled back, so no half-fitted estimator is left
    behind. The accountant is not rolled back: a fit that raised after
    recording its budget (a private "no result" answer) has spent it. An
    estimator cloned under ``secure_noise=True`` (``SECURE_AT_CLONE``) fits
    under it.

    Parameters
    ----------
    prefer_skip_nested_validation : bool
        As for scikit-learn's ``_fit_context``.

    Returns
    -------
    decorator : callable
        Decorates a ``fit``-like method.
    """
    validating = _sklearn_fit_context(
        prefer_skip_nested_validation=prefer_skip_nested_validation
    )

    def decorator(fit_method):
        validated_fit = validating(fit_method)

        @functools.wraps(fit_method)
        def fit(estimator, *args, **kwargs):
            state = dict(vars(estimator))
            try:
                with _hardened_if_cloned_so(estimator):
                    return validated_fit(estimator, *args, **kwargs)
            except BaseException:
                vars(estimator).clear()
                vars(estimator).update(state)
                raise

        return fit

    return decorator


#: Set by ``PrivateEstimatorMixin.__sklearn_clone__`` on a clone made under
#: ``secure_noise=True``: its fits run under it, in any thread or process.
SECURE_AT_CLONE = "_secure_noise_at_clone"


def _hardened_if_cloned_so(estimator):
    # secure_noise on for the fit of an estimator cloned under it (a
    # search's worker does not see the caller's config_context), else the
    # configuration as it is.
    if getattr(estimator, SECURE_AT_CLONE, False):
        return config_context(secure_noise=True)
    return nullcontext()


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
