"""Timing as same-run ratios, and peak memory.

Absolute times depend on the machine and on what else it runs; a ratio of two
calls timed in the same run, interleaved round by round, does much less. So
timing studies report each call's time and its ratio to a baseline call
timed beside it.
"""

import time
import tracemalloc

import numpy as np


def time_calls(calls, *, rounds=5, baseline=None, rng=0, settle=0.0):
    """Time each of ``calls`` (name -> no-argument callable) over ``rounds``.

    Each round runs every call once, in a random order (seeded by ``rng``) so
    that no call always runs on a warm or a cold cache. With ``settle``, each
    call starts that many seconds after the last one ended: OpenBLAS's
    threads spin-wait for about 0.1 s after a multi-threaded call, taking
    the cores from whatever runs next (measured on 2 cores: a fit on two
    threads took 0.22 s right after a 200000 x 100 ``X.T @ X``, 0.18 s after
    0.1 s of rest). Returns, per name,
    ``{"best": s, "median": s}`` and, where ``baseline`` names a call,
    ``"ratio"``: the median over rounds of the per-round ratio to the
    baseline (paired, so the machine's drift cancels).
    """
    rng = np.random.default_rng(rng)
    names = list(calls)
    times = {name: [] for name in names}
    for _ in range(rounds):
        for i in rng.permutation(len(names)):
            time.sleep(settle)
            start = time.perf_counter()
            calls[names[i]]()
            times[names[i]].append(time.perf_counter() - start)
    out = {}
    for name in names:
        t = np.array(times[name])
        out[name] = {"best": float(t.min()), "median": float(np.median(t))}
        if baseline is not None:
            ratio = t / np.array(times[baseline])
            out[name]["ratio"] = float(np.median(ratio))
    return out


def peak_mib(call):
    """Peak memory that Python and NumPy allocate during ``call()``, in MiB.

    tracemalloc sees NumPy's allocations (not BLAS's private workspaces), which
    is what a fit adds beyond its input.
    """
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
