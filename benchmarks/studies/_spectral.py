"""What the spectral and reproduction studies share beyond the harness."""


def old_seed(r):
    """The seed the ported scripts gave repetition ``r`` (kept for their tables)."""
    return 1000 * r + 7
