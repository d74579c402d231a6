"""Summaries of paired repetitions."""

import numpy as np


def summarize(values, how="mean"):
    """``(centre, spread)`` of independent repetitions.

    ``how="mean"``: the mean and its standard error; ``how="median"``: the
    median and its 95% bootstrap interval ``(low, high)`` (a median's interval
    is rarely symmetric); ``how="share"``: the mean alone (of 0/1 outcomes).
    NaN values (a method that refused a repetition) are dropped; all NaN
    gives ``(nan, nan)``.
    """
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan") if how == "share" else (float("nan"), float("nan"))
    if how == "share":
        return float(values.mean())
    if how == "mean":
        se = values.std(ddof=1) / np.sqrt(values.size) if values.size > 1 else 0.0
        return float(values.mean()), float(se)
    if how == "median":
        low, high = bootstrap_interval(values) if values.size > 1 else (values[0],) * 2
        return float(np.median(values)), (float(low), float(high))
    raise ValueError(f"how must be 'mean', 'median' or 'share', got {how!r}")


def ratio_se(a, b):
    """``mean(a) / mean(b)`` and its delta-method standard error (paired)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    r = a.mean() / b.mean()
    se = np.std(a - r * b, ddof=1) / (np.sqrt(a.size) * b.mean()) if a.size > 1 else 0
    return float(r), float(se)


def paired_se(a, b):
    """Mean and standard error of ``a - b`` over paired repetitions."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else 0.0
    return float(diff.mean()), float(se)


def near_best(res, methods):
    """The best of ``methods`` and those within two paired standard errors of it.

    ``res[m]`` holds ``"mean"`` and ``"runs"`` (one value per repetition, paired
    across methods: the same data and seed); larger is better.
    """
    best = max(methods, key=lambda m: res[m]["mean"])
    top = np.array(res[best]["runs"])
    near = []
    for m in methods:
        diff = top - np.array(res[m]["runs"])
        sem = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else 0.0
        if diff.mean() <= 2.0 * sem:
            near.append(m)
    return best, near


def bootstrap_interval(values, statistic=np.median, *, level=0.95, n_boot=2000, rng=0):
    """A percentile bootstrap interval of ``statistic`` over ``values``.

    ``values`` are independent repetitions; ``statistic`` takes an ``axis``
    argument (``np.median``, ``np.mean``); ``rng`` (an int or a Generator)
    makes the resampling reproducible. Returns ``(low, high)``.
    """
    values = np.asarray(values, dtype=float)
    rng = np.random.default_rng(rng)
    picks = rng.integers(0, values.size, size=(n_boot, values.size))
    stats = statistic(values[picks], axis=1)
    tail = (1.0 - level) / 2.0
    return float(np.quantile(stats, tail)), float(np.quantile(stats, 1.0 - tail))
