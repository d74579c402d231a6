"""The Dask pass: a ``dask.array`` reduced by Dask, block by block.

Every block of whole rows runs the in-memory pass and returns its statistics
packed in one vector (:meth:`_DaskPass.run_packed`); Dask sums the vectors,
and :func:`_dask_sums` unpacks the sums on the client. Also
:func:`rows_in_blocks`.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from .._threads import single_threaded_blas


def rows_in_blocks(X):
    """A Dask array with each block holding whole rows (one column block).

    Merging column blocks multiplies a block's size by their number, so the
    rows are re-split to Dask's default block size at the same time.
    """
    if X.numblocks[1] == 1:
        return X
    return X.rechunk({0: "auto", 1: -1})


def _dask_sums(X, spec):
    # Each block (whole rows) runs the in-memory pass; Dask sums the packed
    # vectors. On Dask's threaded scheduler, the blocks' BLAS calls run
    # single-threaded: the scheduler's threads supply the parallelism, and
    # OpenBLAS threads on top of them oversubscribe the cores (10x slower when
    # measured on 2 cores, n = 2e6, d = 100). Workers of dask.distributed start
    # with one BLAS thread; the synchronous scheduler keeps BLAS's threads.
    import dask
    import dask.threaded

    X = rows_in_blocks(X)
    if spec.bins is not None:
        return _dask_binned(X, spec)
    shapes = spec.shapes(X.shape[1])
    sizes = [int(np.prod(shape)) for shape in shapes.values()]
    parts = X.map_blocks(
        spec.run_packed,
        chunks=((1,) * X.numblocks[0], (sum(sizes),)),
        dtype=np.float64,
        meta=np.empty((0, 0)),
    )
    total = parts.sum(axis=0)
    if dask.base.get_scheduler(collections=[total]) is dask.threaded.get:
        with single_threaded_blas():
            packed = total.compute()
    else:
        packed = total.compute()
    sums = {}
    offset = 0
    for (name, shape), size in zip(shapes.items(), sizes, strict=True):
        value = packed[offset : offset + size].reshape(shape)
        if name == "norm_sums" and spec.norm_sums_empty().dtype == np.int64:
            value = np.rint(value).astype(np.int64)
        sums[name] = value
        offset += size
    return sums


def _merged(*parts):
    # The sums of several blocks, added in their order, into the first: each
    # partial sum is consumed by exactly one merge task (Dask's local
    # schedulers never rerun a task on the same inputs; distributed workers
    # hold deserialised copies, and recompute lost ones from their tasks).
    sums = parts[0]
    for more in parts[1:]:
        for name, value in more.items():
            sums[name] += value
    return sums


#: Blocks' sums merged per task of the tree reduction of binned sums: two,
#: so that a task holds at most three sets of binned sums.
MERGE_WIDTH = 2


def _dask_binned(X, spec):
    # Binned sums (a BinGrams holds the bins present, so the sums have no
    # fixed size to pack): each block's dictionary of sums, merged by a tree
    # of delayed tasks, MERGE_WIDTH at a time, in the blocks' order; one read
    # of each block.
    import dask
    import dask.threaded

    parts = [dask.delayed(spec.run)(block) for block in X.to_delayed().ravel()]
    while len(parts) > 1:
        parts = [
            dask.delayed(_merged)(*parts[i : i + MERGE_WIDTH])
            for i in range(0, len(parts), MERGE_WIDTH)
        ]
    (total,) = parts
    if dask.base.get_scheduler(collections=[total]) is dask.threaded.get:
        with single_threaded_blas():
            return total.compute()
    return total.compute()


class _DaskPass:
    # The method of _Pass (_pass.py) that Dask runs on each block.

    def run_packed(self, block):
        # A Dask block's statistics as one row of float64 numbers (counts are
        # integers below 2**53, exact in float64).
        sums = self.run(block)
        return np.concatenate([np.ravel(value) for value in sums.values()])[np.newaxis]
