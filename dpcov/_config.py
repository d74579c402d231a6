"""Global configuration of dpcov, in the style of :func:`sklearn.set_config`.

Two settings. ``secure_noise``: when true, every noise draw of a private
release comes from exact discrete samplers fed by the operating system's
CSPRNG instead of numpy's floating-point samplers (see
:mod:`dpcov.mechanisms._discrete`). ``binned_reads``: whether a fit on a Dask
array gathers, in the read that counts the rows' norms, the sums it needs at
whichever radius or threshold it will release (one read fewer, twice the
flops of a Gram matrix; see the user guide's "Scaling up").

Where a setting lives matters for a security switch:

* :func:`set_config` sets the process-wide value, seen by every thread
  (joblib's threading backend included);
* :func:`config_context` overrides it in the current thread only, for the
  duration of a block: other threads and processes do not see it, except
  through a dpcov estimator cloned in the block (:func:`sklearn.base.clone`),
  or cloned from one so made, which keeps ``secure_noise=True`` for its own
  fits wherever they run (every fit of a scikit-learn search in the block);
* a new *process* (joblib's default "loky" backend, multiprocessing) starts
  from the environment variable ``DPCOV_SECURE_NOISE`` (``1`` or ``true``),
  read when dpcov is imported. :func:`set_config` also sets the variable, so
  processes started afterwards inherit the value; worker processes already
  running (joblib reuses its workers) do not.

Every fitted estimator records the sampler it used in ``noise_sampler_``:
check it after parallel fits.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import threading
from contextlib import contextmanager

__all__ = ["get_config", "set_config", "config_context"]

_TRUE = {"1", "true", "yes", "on"}
_global_config = {
    "secure_noise": os.environ.get("DPCOV_SECURE_NOISE", "").strip().lower() in _TRUE,
    "binned_reads": True,
}
# Per-thread overrides set by config_context (a dict per thread).
_threadlocal = threading.local()


def _overrides():
    if not hasattr(_threadlocal, "overrides"):
        _threadlocal.overrides = {}
    return _threadlocal.overrides


def _check_bool(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}.")


def get_config():
    """Retrieve the current values of dpcov's configuration.

    Returns
    -------
    config : dict
        Keys are the parameter names of :func:`set_config`.

    See Also
    --------
    config_context : Context manager for the configuration.
    set_config : Set the configuration.

    Examples
    --------
    >>> import dpcov
    >>> dpcov.get_config()["secure_noise"]
    False
    """
    # A copy, so that the caller cannot change the configuration by mistake.
    return {**_global_config, **_overrides()}


def set_config(secure_noise=None, binned_reads=None):
    """Set dpcov's configuration, for the whole process.

    Every thread sees the new value, except inside a :func:`config_context`
    block that overrides it. The environment variable ``DPCOV_SECURE_NOISE``
    is set too, so that processes started afterwards inherit the value;
    worker processes already running do not (see :mod:`dpcov._config`).

    Parameters
    ----------
    secure_noise : bool, default=None
        If True, private releases draw their noise from the exact discrete
        Gaussian and discrete Laplace samplers of Canonne, Kamath and Steinke
        (NeurIPS 2020), on a public grid, with randomness from the operating
        system's CSPRNG (:mod:`secrets`): the floating-point attacks of
        Mironov (CCS 2012) do not apply. Estimators with no exact sampler
        raise :class:`~dpcov.exceptions.NoHardenedSampler` in ``fit``. A
        fitted estimator records the sampler it used in ``noise_sampler_``.
        If None, the setting is unchanged. Global default: False.
    binned_reads : bool, default=None
        If True, a fit on a Dask array whose clipping radius (or
        AdaptiveCovariance's threshold) is found privately sums the rows
        binned by norm on the public grid of candidates in the read that
        counts the norms, so that the sums at the released point follow
        without reading again: GaussianCovariance reads its data once,
        AdaptiveCovariance and PCA twice. The binned Gram matrices cost twice
        the flops of one: where a read costs less than a Gram pass (data in
        the page cache of one machine), False is faster (a read per step, as
        in memory). The release is the same either way, up to rounding.
        In-memory fits never bin. If None, the setting is unchanged. Global
        default: True.

    See Also
    --------
    config_context : Context manager for the configuration.
    get_config : Retrieve the current configuration.

    Examples
    --------
    >>> import dpcov
    >>> dpcov.set_config(secure_noise=True)
    >>> dpcov.get_config()["secure_noise"]
    True
    >>> dpcov.set_config(secure_noise=False)
    """
    if secure_noise is not None:
        _check_bool("secure_noise", secure_noise)
        _global_config["secure_noise"] = secure_noise
        # Fail closed in processes started from now on (they re-import dpcov).
        os.environ["DPCOV_SECURE_NOISE"] = "1" if secure_noise else "0"
    if binned_reads is not None:
        _check_bool("binned_reads", binned_reads)
        _global_config["binned_reads"] = binned_reads


@contextmanager
def config_context(*, secure_noise=None, binned_reads=None):
    """Context manager for dpcov's configuration, in the current thread.

    The previous configuration is restored on exit, also when the block
    raises. Other threads keep the process-wide value of :func:`set_config`.

    Parameters
    ----------
    secure_noise : bool, default=None
        See :func:`set_config`. If None, the setting is unchanged.
    binned_reads : bool, default=None
        See :func:`set_config`. If None, the setting is unchanged.

    Yields
    ------
    None.

    See Also
    --------
    set_config : Set the configuration.
    get_config : Retrieve the current configuration.

    Examples
    --------
    >>> import numpy as np
    >>> import dpcov
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> with dpcov.config_context(secure_noise=True):
    ...     cov = dpcov.GaussianCovariance(epsilon=1.0, data_norm=5.0).fit(X)
    >>> cov.noise_sampler_
    'discrete'
    """
    overrides = _overrides()
    saved = overrides.copy()
    if secure_noise is not None:
        _check_bool("secure_noise", secure_noise)
        overrides["secure_noise"] = secure_noise
    if binned_reads is not None:
        _check_bool("binned_reads", binned_reads)
        overrides["binned_reads"] = binned_reads
    try:
        yield
    finally:
        overrides.clear()
        overrides.update(saved)
