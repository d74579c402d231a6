"""Statistics the benchmark scripts share."""

import numpy as np


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
