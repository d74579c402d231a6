"""The input rows' norms, kept between the passes of one fit.

A fit with a private radius reads an in-memory ``X`` up to four times (the
norm counts, the clipped sum, the centred norms, the Gram matrix at the
threshold), and every pass starts from the same numbers: the L2 norms of
``X``'s raw rows, which the finiteness check and the clip to the radius
both need. Inside :func:`kept_row_norms` the first pass that computes a
chunk's norms keeps them, and the later passes over the same array and the
same chunks read them instead of computing them again: one read of the
chunk from memory less per pass (at ``n = 1e6, d = 100`` on 2 cores, 0.01 s
of a 0.03 s pass). The kept norms are those :func:`._rows._row_norms` gives
on the same rows, so every clip, count and sum is the same, bit for bit.

Kept only for a float64 NumPy array in memory (not a memmap: its rows are
read from disk, and ``n`` numbers may not be small there) with at least
``KEPT_FROM`` features, so that the norms cost at most ``1 / KEPT_FROM`` of
the input's memory. Nothing is kept beyond the context: the norms are
private values, dropped when the fit ends.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import mmap
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from ._rows import _row_norms

#: Norms are kept for inputs with at least this many features: at most an
#: eighth of the input's memory.
KEPT_FROM = 8

_KEPT = ContextVar("kept_row_norms", default=None)


class RowNorms:
    """The raw row norms of one array, filled chunk by chunk.

    Parameters
    ----------
    source : ndarray of shape (n_rows, n_features)
        The rows; identified by the object itself (``is``).

    A pass first calls :meth:`for_chunks` with its chunk size (before its
    threads start); then each chunk, of ``step`` rows from ``start``, is
    filled once, by the one thread that processes it, and read by the later
    passes with the same chunks (after the pass's threads have joined).
    The arrays handed out are read-only views.
    """

    def __init__(self, source):
        self.source = source
        self._norms = None  # (allocated by the first pass that reads them)
        # The chunk size the known chunks were computed for: a pass with
        # other chunks computes its own (the same numbers, per row, but the
        # bookkeeping stays one flag per chunk).
        self._step = None
        self._known = None

    def for_chunks(self, step):
        """Prepare for a pass in chunks of ``step`` rows.

        Parameters
        ----------
        step : int
            The pass's rows per chunk. Another size than the last pass's
            forgets which chunks are known (their norms are computed again).

        Returns
        -------
        self : RowNorms
        """
        if self._norms is None:
            # NaN until computed: a bookkeeping error would read NaN norms
            # (a refused pass), never small ones (unclipped rows).
            self._norms = np.full(self.source.shape[0], np.nan)
        if self._step != step:
            self._step = step
            self._known = np.zeros(-(-self.source.shape[0] // step), dtype=bool)
        return self

    def chunk(self, start, rows):
        """The norms of a chunk, kept or computed.

        Parameters
        ----------
        start : int
            The chunk's first row (a multiple of the pass's ``step``).
        rows : ndarray of shape (m, n_features)
            ``source[start:start + m]``.

        Returns
        -------
        norms : ndarray of shape (m,)
            A read-only view of the kept norms.
        """
        index = start // self._step
        stop = start + rows.shape[0]
        if not self._known[index]:
            self._norms[start:stop] = _row_norms(rows)
            self._known[index] = True
        view = self._norms[start:stop]
        view.flags.writeable = False
        return view


def _mapped(X):
    # Whether X's memory is a file's mapping: validation turns a memmap into
    # a plain ndarray whose base (at some depth) is the memmap.
    while X is not None:
        if isinstance(X, (np.memmap, mmap.mmap)):
            return True
        X = getattr(X, "base", None)
    return False


def _keeps(X):
    return (
        type(X) is np.ndarray
        and X.dtype == np.float64
        and X.ndim == 2
        and X.shape[1] >= KEPT_FROM
        and not _mapped(X)
    )


@contextmanager
def kept_row_norms(X, keep=True):
    """Within the context, passes over ``X`` share its rows' norms.

    Parameters
    ----------
    X : object
        The fit's validated input.
    keep : bool, default=True
        False for a fit that reads the raw norms once (the caller knows it
        from public parameters). The context does nothing then, for an
        input whose norms are not kept (see the module's description), and
        inside another such context (the outer one keeps).

    Yields
    ------
    None
    """
    if not keep or _KEPT.get() is not None or not _keeps(X):
        yield
        return
    token = _KEPT.set(RowNorms(X))
    try:
        yield
    finally:
        _KEPT.reset(token)


def row_norms_of(X):
    """The kept norms of ``X`` in this context.

    Parameters
    ----------
    X : object
        A pass's input.

    Returns
    -------
    kept : RowNorms or None
        None outside a context that keeps ``X``'s norms (the object itself).
    """
    kept = _KEPT.get()
    if kept is None or kept.source is not X:
        return None
    return kept
