"""The estimators ``dpcov fit`` knows, by name, and their parameters."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import re

from ..covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from ..decomposition import PCA, ApproximateSubspace, ExactSubspace
from ..discriminant_analysis import LinearDiscriminantAnalysis
from ..distributions import MultivariateGaussian, ProductBernoulli
from ..linear_model import LinearRegression, Ridge
from ._errors import CommandError

#: Every public estimator, by class name.
ESTIMATORS = {
    cls.__name__: cls
    for cls in (
        GaussianCovariance,
        SeparateCovariance,
        AdaptiveCovariance,
        EigenSamplingCovariance,
        NuclearLaplaceCovariance,
        PCA,
        ExactSubspace,
        ApproximateSubspace,
        MultivariateGaussian,
        ProductBernoulli,
        LinearRegression,
        Ridge,
        LinearDiscriminantAnalysis,
    )
}

#: The estimators that fit a target (``--target``).
SUPERVISED = ("LinearRegression", "Ridge", "LinearDiscriminantAnalysis")


#: Short names (matched like class names: case, "-" and "_" ignored).
ALIASES = {
    "gauss": "GaussianCovariance",
    "separate": "SeparateCovariance",
    "adaptive": "AdaptiveCovariance",
    "eigen-sampling": "EigenSamplingCovariance",
    "nuclear": "NuclearLaplaceCovariance",
    "pca": "PCA",
    "exact-subspace": "ExactSubspace",
    "approximate-subspace": "ApproximateSubspace",
    "gaussian": "MultivariateGaussian",
    "bernoulli": "ProductBernoulli",
    "linear-regression": "LinearRegression",
    "ridge": "Ridge",
    "lda": "LinearDiscriminantAnalysis",
}


#: The attribute saved by default, when not ``covariance_``.
RELEASED_ATTRIBUTE = {
    "PCA": "components_",
    "ExactSubspace": "components_",
    "ApproximateSubspace": "components_",
    "ProductBernoulli": "probabilities_",
    "LinearRegression": "coef_",
    "Ridge": "coef_",
    "LinearDiscriminantAnalysis": "coef_",
}


#: Command-line options that set the estimator parameter of the same name.
PARAMETER_OPTIONS = (
    "epsilon",
    "delta",
    "rho",
    "data_norm",
    "bounds",
    "n_components",
    "max_rows_per_group",
)


def _key(name):
    return name.lower().replace("-", "").replace("_", "")


def resolve_estimator(name):
    """Return the estimator class that ``name`` designates.

    Parameters
    ----------
    name : str
        A class name or an alias from :data:`ALIASES`, in any case, with "-"
        and "_" ignored.

    Returns
    -------
    cls : type
        The estimator class.

    Examples
    --------
    >>> resolve_estimator("eigen-sampling").__name__
    'EigenSamplingCovariance'
    >>> resolve_estimator("pca").__name__
    'PCA'
    """
    table = {_key(n): n for n in ESTIMATORS}
    table.update({_key(alias): n for alias, n in ALIASES.items()})
    if _key(name) not in table:
        aliases = {n: a for a, n in ALIASES.items()}
        valid = ", ".join(f"{n} ({aliases[n]})" for n in ESTIMATORS)
        raise CommandError(f"unknown estimator {name!r}; valid names: {valid}")
    return ESTIMATORS[table[_key(name)]]


def documented_attributes(cls):
    """Names of the fitted attributes in the Attributes section of ``cls``.

    Parameters
    ----------
    cls : type
        An estimator class with a numpydoc docstring.

    Returns
    -------
    names : list of str
        Attribute names ending in "_", in the documented order.

    Examples
    --------
    >>> documented_attributes(PCA)[:2]
    ['components_', 'explained_variance_']
    """
    doc = cls.__doc__ or ""
    match = re.search(
        r"\n\s*Attributes\n\s*-+\n(.*?)(\n\s*\n\s*[A-Z][\w ]*\n\s*-+\n|$)", doc, re.S
    )
    if match is None:
        return []
    return re.findall(r"^ {4}(\w+_) :", match.group(1), re.M)


def build_estimator(cls, args):
    """Instantiate ``cls`` with the parameters given on the command line.

    Parameters
    ----------
    cls : type
        The estimator class.
    args : argparse.Namespace
        Parsed arguments of ``dpcov fit``.

    Returns
    -------
    estimator : estimator
        The unfitted estimator.
    """
    valid = cls().get_params(deep=False)
    given = {}
    for name in (*PARAMETER_OPTIONS, "random_state"):
        value = getattr(args, name)
        if value is not None:
            given[name] = ("--" + name.replace("_", "-"), value)
    for key, value in args.param or ():
        if key in given:
            raise CommandError(f"parameter {key!r} given twice")
        given[key] = (f"--param {key}", value)
    for name, (flag, _) in given.items():
        if name not in valid:
            raise CommandError(
                f"{cls.__name__} has no parameter {name!r} ({flag}); its "
                f"parameters: {', '.join(sorted(valid))}"
            )
    params = {name: value for name, (_, value) in given.items()}
    covariance = params.get("covariance")
    if isinstance(covariance, str) and covariance != "top_k":
        try:
            inner = resolve_estimator(covariance)
        except CommandError:
            inner = None
        if inner is not None and inner.__module__.startswith("dpcov.covariance"):
            params["covariance"] = inner()
    return cls(**params)
