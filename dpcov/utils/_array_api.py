"""Arrays of other libraries (the Python array API standard): where they live.

With scikit-learn's ``array_api_dispatch`` on (``sklearn.set_config`` or
``sklearn.config_context``; SciPy must run with ``SCIPY_ARRAY_API=1``), an
estimator that supports it reads an array of another namespace (PyTorch,
CuPy, array-api-strict) where it lives: the passes over the rows run on the
array's namespace and device (:mod:`dpcov.utils._gram._xp`), their ``d x d``
sums come to the host, the noise is drawn there (NumPy's or the hardened
samplers, so ``secure_noise`` keeps working) and the ``d x d`` algebra runs
there too, and the fitted arrays go back to the input's namespace and device.
Without dispatch, such an array is converted as scikit-learn converts it (or
refused where it cannot be).

This module tells such an array (:func:`array_api_input`), and a Dask array
(:func:`is_dask_array`, read by Dask, not by a namespace), and moves arrays
between the host and the input's namespace (:func:`to_host`,
:func:`to_namespace`), through scikit-learn's vendored array-api-compat.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import sys

import numpy as np
import sklearn
from scipy import sparse


def is_dask_array(X):
    """Whether ``X`` is a ``dask.array.Array`` (without importing Dask).

    Parameters
    ----------
    X : object
        Any object.

    Returns
    -------
    is_dask : bool
        True if Dask's array module is already imported and ``X`` is one of
        its arrays (an object that is not cannot be one).
    """
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def _is_numpy_namespace(xp):
    # array-api-compat's NumPy wrapper: vendored by scikit-learn from 1.7 on,
    # the installed package before.
    return xp.__name__ in {
        "numpy",
        "array_api_compat.numpy",
        "sklearn.externals.array_api_compat.numpy",
    }


def namespace_of(X):
    """``(xp, device)`` of an array of a namespace other than NumPy, else None.

    Whatever scikit-learn's configuration: for arrays already accepted (the
    passes dispatch on it).
    """
    if (
        isinstance(X, np.ndarray)
        or sparse.issparse(X)
        or is_dask_array(X)
        or not hasattr(X, "shape")
        or not hasattr(X, "dtype")
    ):
        return None
    try:
        from sklearn.utils._array_api import get_namespace_and_device
    except ImportError:  # scikit-learn without array API support
        return None
    try:
        # (Raises where SciPy's array API support is off: not such an array.)
        with sklearn.config_context(array_api_dispatch=True):
            xp, compliant, device = get_namespace_and_device(X)
    except Exception:  # noqa: BLE001 - any failure: not an array we can read
        return None
    if not compliant or _is_numpy_namespace(xp):
        return None
    return xp, device


def array_api_input(X):
    """``(xp, device)`` when X is another namespace's array under dispatch.

    None for NumPy arrays, sparse matrices, Dask arrays and anything else, and
    whenever scikit-learn's ``array_api_dispatch`` is off.
    """
    if not sklearn.get_config().get("array_api_dispatch", False):
        return None
    return namespace_of(X)


def float_dtype(xp, device):
    """The widest real floating dtype the device supports (float64 if any)."""
    try:
        dtypes = xp.__array_namespace_info__().dtypes(
            kind="real floating", device=device
        )
    except (AttributeError, TypeError, ValueError):
        return xp.float64
    return xp.float64 if "float64" in dtypes else xp.float32


def host_view(X):
    """A NumPy view of an array that lives in host memory, without a copy.

    PyTorch's CPU tensors and array-api-strict's arrays share their memory
    with NumPy through DLPack: the NumPy pass reads them as they are (its
    threads and its handling of rows beyond float64), faster than the
    namespace's own kernels on the CPU (measured with PyTorch 2.13's CPU
    backend: 4 to 8 times). None for an array on another device (a GPU), or
    one that DLPack cannot share.
    """
    if hasattr(X, "detach"):  # a PyTorch tensor that requires grad: its data
        X = X.detach()
    try:
        view = np.from_dlpack(X)
    except (AttributeError, BufferError, RuntimeError, TypeError, ValueError):
        return None
    return view if view.dtype in (np.float32, np.float64) else None


def to_host(array, xp):
    """A NumPy copy of an array of namespace ``xp`` (on the CPU)."""
    from sklearn.utils._array_api import _convert_to_numpy

    if hasattr(array, "detach"):  # (PyTorch: a tensor that requires grad)
        array = array.detach()
    return np.asarray(_convert_to_numpy(array, xp))


def as_host(value):
    """A NumPy array as it is; another namespace's array copied to the host."""
    namespace = namespace_of(value)
    return value if namespace is None else to_host(value, namespace[0])


def fitted_to_namespace(estimator, names, namespace):
    """Move the fitted arrays ``names`` of ``estimator`` (those set) to
    ``namespace``, a ``(xp, device)`` pair."""
    for name in names:
        value = getattr(estimator, name, None)
        if value is not None:
            setattr(estimator, name, to_namespace(value, *namespace))


def to_namespace(value, xp, device, dtype=None):
    """A host value as an array of namespace ``xp`` on ``device``.

    By default in the value's float dtype, or float32 on a device without
    float64 (Apple's MPS).
    """
    value = np.asarray(value)
    if dtype is None:
        dtype = getattr(xp, str(value.dtype), None)
        if value.dtype == np.float64:
            dtype = float_dtype(xp, device)
    return xp.asarray(value, dtype=dtype, device=device)


def _namespace_name(X):
    namespace = namespace_of(X)
    return "NumPy" if namespace is None else namespace[0].__name__.split(".")[-1]


def check_fitted_namespace(estimator, fitted, X, method):
    """Refuse X when it and the fitted arrays are of different namespaces.

    A fit on another namespace's arrays keeps its fitted arrays there; its
    methods compute with them, as scikit-learn's PCA does, so they take
    arrays of the same namespace, under ``array_api_dispatch``.
    """
    fitted_name, input_name = _namespace_name(fitted), _namespace_name(X)
    if fitted_name != input_name:
        raise TypeError(
            f"{type(estimator).__name__} was fitted on {fitted_name} arrays, and "
            f"{method} got {input_name} arrays: pass arrays of the fit's "
            "namespace (another namespace's under scikit-learn's "
            "array_api_dispatch), or refit."
        )


def device_eigh(xp, device):
    """A symmetric eigendecomposition of host matrices, run on ``device``.

    For :func:`dpcov.mechanisms._projection.eigh_with`: the ``d x d``
    projections of a fit whose rows live on a GPU run there (``d**3`` flops,
    minutes on a few cores at ``d = 4096``), their input and output crossing
    once each (``O(d**2)`` numbers). Only where the device has float64: a
    float32 eigendecomposition would lose the host's precision.
    """
    if float_dtype(xp, device) != xp.float64:
        return None

    def eigh(symmetric):
        values, vectors = xp.linalg.eigh(to_namespace(symmetric, xp, device))
        return to_host(values, xp), to_host(vectors, xp)

    return eigh
