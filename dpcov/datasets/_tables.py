"""A synthetic table with mixed scales and public per-feature ranges."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils import Bunch

from ..utils._random import check_random_state

# Weather-station readings: name, public range (what the sensors can report,
# known before any data), mean and standard deviation of the synthetic law.
_SENSORS = (
    ("temperature_c", (-40.0, 60.0), 12.0, 8.0),
    ("humidity_pct", (0.0, 100.0), 55.0, 9.0),
    ("pressure_hpa", (870.0, 1090.0), 1013.0, 12.0),
    ("wind_kmh", (0.0, 75.0), 30.0, 5.0),
    ("solar_wm2", (0.0, 1400.0), 700.0, 120.0),
    ("rain_mm", (0.0, 200.0), 100.0, 18.0),
    ("pm25_ugm3", (0.0, 500.0), 200.0, 38.0),
    ("co2_ppm", (300.0, 2000.0), 1100.0, 150.0),
)
# Loadings of the readings (standardised) on three weather factors; each
# reading keeps the rest of its unit variance as its own noise.
_LOADINGS = np.array(
    [
        [0.8, -0.3, 0.1],
        [-0.6, 0.5, 0.2],
        [0.1, -0.7, 0.0],
        [0.0, 0.6, -0.4],
        [0.7, -0.4, 0.1],
        [-0.2, 0.7, 0.3],
        [0.1, 0.1, 0.8],
        [0.2, 0.0, 0.7],
    ]
)


def make_sensor_table(n_samples=100_000, *, random_state=None):
    """Generate a table of weather-station readings with public ranges.

    Eight readings in their own units (degrees, percent, hectopascals, ...),
    so their scales differ by two orders of magnitude, drawn from a Gaussian
    law with three correlated factors. Each reading has a public range, what
    its sensor can report, known without looking at the data: pass it as the
    ``bounds`` of a dpcov estimator. The ranges sit at least five standard
    deviations from the means, so the readings are clipped to them with
    probability below 1e-6 per cell and ``covariance`` is the law's covariance
    up to that.

    Parameters
    ----------
    n_samples : int, default=100_000
        Number of rows.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the generator.

    Returns
    -------
    table : :class:`~sklearn.utils.Bunch`
        ``data`` (ndarray of shape (n_samples, 8)), ``bounds`` (the pair
        ``(lower, upper)`` of the public ranges), ``covariance`` (the law's
        covariance, ndarray of shape (8, 8)) and ``feature_names``.

    Examples
    --------
    >>> from dpcov.datasets import make_sensor_table
    >>> table = make_sensor_table(1000, random_state=0)
    >>> table.data.shape, table.feature_names[0]
    ((1000, 8), 'temperature_c')
    """
    rng = check_random_state(random_state)
    names = [name for name, *_ in _SENSORS]
    lower = np.array([low for _, (low, _), *_ in _SENSORS])
    upper = np.array([high for _, (_, high), *_ in _SENSORS])
    mean = np.array([m for *_, m, _ in _SENSORS])
    scale = np.array([s for *_, s in _SENSORS])
    unique = 1.0 - np.sum(_LOADINGS**2, axis=1)
    factors = rng.standard_normal((n_samples, _LOADINGS.shape[1]))
    noise = rng.standard_normal((n_samples, len(names))) * np.sqrt(unique)
    data = mean + scale * (factors @ _LOADINGS.T + noise)
    correlation = _LOADINGS @ _LOADINGS.T + np.diag(unique)
    return Bunch(
        data=np.clip(data, lower, upper),
        bounds=(lower, upper),
        covariance=correlation * np.outer(scale, scale),
        feature_names=names,
    )


def make_mixed_units_table(
    n_samples=20_000, *, n_features=12, missing_rate=0.0, random_state=None
):
    """Generate a table in mixed units, with missing cells if asked.

    The shape of a raw table: ``n_features`` readings whose scales run from
    ``1e-2`` to ``1e4`` (log-spaced), each with an offset of three times its
    scale from zero, correlated through three factors, and a share of cells
    missing at random (NaN). ``bounds`` holds ranges a designer of the table
    would know (the law's means plus or minus six of its standard
    deviations, which the data stay inside with probability above
    ``1 - 1e-8`` per cell); a user who has none can let an estimator find
    them privately (``bounds="private"``).

    Parameters
    ----------
    n_samples : int, default=20_000
        Number of rows.
    n_features : int, default=12
        Number of features, at least 3.
    missing_rate : float, default=0.0
        Probability that a cell is missing (NaN), independently of the rest.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the generator.

    Returns
    -------
    table : :class:`~sklearn.utils.Bunch`
        ``data`` (ndarray of shape (n_samples, n_features), NaN where a cell
        is missing), ``bounds`` (the pair ``(lower, upper)``), ``covariance``
        (the law's covariance) and ``feature_names``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.datasets import make_mixed_units_table
    >>> table = make_mixed_units_table(1000, missing_rate=0.05, random_state=0)
    >>> table.data.shape, bool(np.isnan(table.data).any())
    ((1000, 12), True)
    """
    if n_features < 3:
        raise ValueError(f"n_features must be at least 3, got {n_features!r}.")
    if not 0.0 <= missing_rate < 1.0:
        raise ValueError(f"missing_rate must lie in [0, 1), got {missing_rate!r}.")
    rng = check_random_state(random_state)
    scale = np.logspace(-2, 4, n_features)
    mean = 3.0 * scale
    # Three factors, loadings from a fixed pattern so the law is the same for
    # every seed; each reading keeps the rest of its unit variance.
    index = np.arange(n_features)
    loadings = 0.5 * np.stack(
        [np.cos(index), np.sin(2.0 * index), np.cos(3.0 * index + 1.0)], axis=1
    )
    unique = 1.0 - np.sum(loadings**2, axis=1)
    factors = rng.standard_normal((n_samples, 3))
    noise = rng.standard_normal((n_samples, n_features)) * np.sqrt(unique)
    data = mean + scale * (factors @ loadings.T + noise)
    lower, upper = mean - 6.0 * scale, mean + 6.0 * scale
    data = np.clip(data, lower, upper)
    if missing_rate > 0:
        data[rng.random(data.shape) < missing_rate] = np.nan
    correlation = loadings @ loadings.T + np.diag(unique)
    return Bunch(
        data=data,
        bounds=(lower, upper),
        covariance=correlation * np.outer(scale, scale),
        feature_names=[f"reading_{j}" for j in range(n_features)],
    )
