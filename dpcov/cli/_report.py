"""The JSON report of ``dpcov fit``: parameters, guarantee, split, releases."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import dataclasses
import math

import numpy as np

from .._version import __version__
from ._estimators import documented_attributes

_NOTIONS = {
    "PureDP": "pure",
    "ZCDP": "zCDP",
    "GaussianDP": "GDP",
    "ProfileDP": "profile",
    "ApproxDP": "approx",
    "SelectionDP": "selection",
}


#: Fitted attributes reported in their own fields, or duplicates of others.
_REPORTED_APART = {
    "guarantee_",
    "budget_split_",
    "epsilon_spent_",
    "delta_spent_",
    "rho_spent_",
    "n_features_in_",
    "feature_names_in_",
}


def to_json(value):
    """Convert ``value`` to JSON-safe data.

    Guarantees (:mod:`dpcov.accounting` dataclasses) become ``{"notion":
    "pure" | "zCDP" | "GDP" | "profile" | "approx" | "selection",
    <fields>}``, arrays lists, non-finite floats the strings "inf", "-inf"
    and "nan" (strict JSON has no such numbers), and anything else without a
    JSON form its ``repr``.

    Parameters
    ----------
    value : object
        What to convert.

    Returns
    -------
    data : object
        ``None``, bool, int, float, str, list or dict.

    Examples
    --------
    >>> from dpcov.accounting import ZCDP
    >>> to_json({"step": ZCDP(0.5), "x": np.array([1.0, np.inf])})
    {'step': {'notion': 'zCDP', 'rho': 0.5}, 'x': [1.0, 'inf']}
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else str(value)
    if isinstance(value, np.ndarray):
        return to_json(value.tolist())
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        notion = _NOTIONS.get(type(value).__name__, type(value).__name__)
        # (A guarantee's unit and relation, keyword fields, only where they
        # are not the default, as its repr.)
        fields = [
            f
            for f in dataclasses.fields(value)
            if not (f.kw_only and getattr(value, f.name) == f.default)
        ]
        return {
            "notion": notion,
            **{f.name: to_json(getattr(value, f.name)) for f in fields},
        }
    return repr(value)


def _small(value):
    # Scalars, 1-D numeric arrays and flat dicts of scalars go into the report.
    if isinstance(value, (bool, int, float, str, np.generic)):
        return True
    if isinstance(value, np.ndarray):
        return value.ndim <= 1 and value.dtype.kind in "biuf"
    if isinstance(value, dict):
        return all(
            isinstance(v, (bool, int, float, str, np.generic)) for v in value.values()
        )
    return False


def public_row_count(estimator, X):
    """The number of rows of ``X`` if the fit treats it as public, else None.

    It is public for a row-level fit under replace-one neighbours only: over
    persons, and under add/remove neighbours, it is private.
    """
    row_level = getattr(estimator, "privacy_unit_", "row") == "row"
    if row_level and getattr(estimator, "neighbours_", "replace") == "replace":
        return int(X.shape[0])
    return None


def build_report(estimator, *, X, input_path, output_path, attribute, feature_names):
    """The JSON report of a fit: parameters, guarantee, split and releases.

    Only documented fitted attributes are reported (dpcov's docstrings audit
    each as a private release or a public quantity).

    Parameters
    ----------
    estimator : estimator
        The fitted estimator.
    X : ndarray of shape (n_samples, n_features)
        The data (only its shape is reported).
    input_path, output_path : str
        The files read and written.
    attribute : str
        The attribute saved to ``output_path``.
    feature_names : list of str or None
        The CSV header, if any.

    Returns
    -------
    report : dict
        JSON-safe data.
    """
    released = np.asarray(getattr(estimator, attribute))
    unit = getattr(estimator, "privacy_unit_", "row")
    neighbours = getattr(estimator, "neighbours_", "replace")
    report = {
        "dpcov_version": __version__,
        "estimator": type(estimator).__name__,
        "params": to_json(estimator.get_params(deep=False)),
        "input": str(input_path),
        # Over persons, or under add/remove, the number of rows is private:
        # not stated (an add/remove fit's released count is, as such).
        "n_samples": public_row_count(estimator, X),
        "n_features": int(X.shape[1]),
        "privacy_unit": unit,
        "neighbours": neighbours,
    }
    if getattr(estimator, "released_count_", None) is not None:
        report["released_count"] = int(estimator.released_count_)
    if feature_names is not None:
        report["feature_names"] = feature_names
    report["output"] = {
        "path": str(output_path),
        "attribute": attribute,
        "shape": list(released.shape),
    }
    for name in (
        "guarantee_",
        "epsilon_spent_",
        "delta_spent_",
        "rho_spent_",
        "noise_sampler_",
    ):
        if hasattr(estimator, name):
            report[name] = to_json(getattr(estimator, name))
    if hasattr(estimator, "budget_split_"):
        report["budget_split_"] = to_json(estimator.budget_split_)
    inline, other = {}, []
    for name in documented_attributes(type(estimator)):
        if name in _REPORTED_APART or name == attribute or not hasattr(estimator, name):
            continue
        value = getattr(estimator, name)
        if _small(value):
            inline[name] = to_json(value)
        else:
            other.append(name)
    report["attributes"] = inline
    report["attributes_not_inlined"] = other
    return report
