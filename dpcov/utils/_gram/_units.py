"""Privacy units: the rows of one person, bounded as one contribution.

A table with several rows per person (visits per patient, sessions per
user) is protected per person when ``groups`` names the person of each row
and a public ``max_rows_per_group`` (``k``) bounds what a person gives:

1. **Rows.** At most ``k`` rows of each person are kept, chosen uniformly
   among the person's own rows (a random order within each person, never
   the table's order, which would favour early visits).
2. **One contribution.** Person ``p`` with ``k_p <= k`` kept (processed)
   rows ``y_1, ..., y_{k_p}`` contributes the averages
   ``A_p = (1/k_p) sum_i y_i y_i^T`` to the second moment and
   ``a_p = (1/k_p) sum_i y_i`` to the sum; the statistics are sums over the
   ``m`` persons, and ``m`` replaces the number of rows.
3. **Clipped as a whole.** A clip to norm ``r`` scales all of a person's
   rows by ``min(1, r / rho_p)``, where ``rho_p**2 = (1/k_p) sum_i |y_i|**2``
   is the trace of ``A_p`` (the person's root-mean-square norm), so that
   ``trace(A_p) <= r**2`` and ``|a_p| <= r`` (Jensen). A row on its own is
   the case ``k_p = 1``.

Why averaging, not a ``k``-row sensitivity: a sum of up to ``k`` clipped
rows per person moves by ``k`` rows' worth when a person changes, which is
group privacy and gains nothing over a row-level fit at ``epsilon / k``.
The average moves by one row's worth. Every second-moment bound dpcov's
covariance mechanisms use holds for any positive semi-definite term of
trace at most ``r**2``, not only for a rank-one ``y y^T`` (see
``dpcov.mechanisms._sensitivity``), so their calibrations stand with ``m``
persons in place of ``n`` rows. The target changes with the unit: each
person, not each row, weighs ``1/m``; under a model where every row has the
same second moment, whatever the person's number of rows, both targets
agree.

The neighbouring relation is replace-one *person*: the set of persons (so
``m``) is public, and one person's rows may change arbitrarily, their number
included, so the number of rows is private and nothing here reports it.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import contextlib
import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...exceptions import TooFewUnits
from .._input_messages import NonFiniteInput
from ._blocks import _chunk_rows
from ._rows import _MAX, _row_norms

ROUTING_HINT = (
    "Inside cross_val_score, GridSearchCV or a Pipeline, groups reach fit only "
    "through metadata routing: sklearn.set_config(enable_metadata_routing=True) "
    "and estimator.set_fit_request(groups=True)."
)


def check_group_parameters(groups, max_rows_per_group, *, name):
    """Refuse ``groups`` without ``max_rows_per_group``, or the reverse.

    Both or neither: ``groups`` alone would fit rows with an unbounded
    number per person, and ``max_rows_per_group`` alone means the groups
    were lost on their way to ``fit`` (a ``cross_val_score(..., groups=g)``
    without metadata routing gives them to the splitter only), where fitting
    rows as persons would silently break the per-person guarantee.
    """
    if groups is None and max_rows_per_group is None:
        return
    if groups is None:
        raise ValueError(
            f"{name} has max_rows_per_group={max_rows_per_group} but fit received "
            "no groups: pass groups=... (the person of each row) to fit. "
            + ROUTING_HINT
        )
    if max_rows_per_group is None:
        raise ValueError(
            f"{name}.fit received groups but max_rows_per_group is None: set "
            "max_rows_per_group, the public bound on the rows a person "
            "contributes (rows beyond it are left out at random). Without "
            "groups, each row is a person."
        )


def check_unit_input(X, groups, *, name):
    """Refuse, before any read, what the per-person fit does not support."""
    if not (isinstance(X, np.ndarray) or sp.issparse(X)):
        raise ValueError(
            f"{name}.fit with groups needs X in memory as a NumPy array or a "
            "SciPy sparse matrix (not a Dask array or another array namespace)."
        )
    check_groups(groups, X.shape[0], name=name)


def source_rows(X):
    """The rows a :class:`CountedRows` or :class:`UnitRows` stands for, or ``X``."""
    return X.X if isinstance(X, CountedRows | UnitRows) else X


def refuse_groups(groups, *, name, reason):
    """Refuse ``groups`` for an estimator that fits rows only, saying why.

    An estimator whose mechanism has no person-level form yet takes
    ``groups`` in ``fit`` (so that scikit-learn's metadata routing can hand
    them) only to refuse them clearly, before anything is read.
    """
    if groups is not None:
        raise ValueError(
            f"{name} does not fit persons (groups): {reason}. Fit it without "
            "groups to protect each row, or see the user guide's 'One person, "
            "many rows' for the estimators that protect persons."
        )


@contextlib.contextmanager
def persons_in_messages(active=True, *, released=False):
    """Refusals of a plan made for persons, or with a released count.

    The public checks before a fit (the minimum number of rows a private
    radius needs, ...) state the number of rows they were given. For a fit
    over persons (``active``) that number is the number of persons, which
    no message states: a ``ValueError`` raised inside the block is raised
    again with its count removed and "samples" read as "persons". With
    ``released`` (add/remove neighbours) the number given is the released
    count, which a message may state, as such.
    """
    if not (active or released):
        yield
        return
    try:
        yield
    except ValueError as error:
        got = r";? got (\d+)(?: samples?)?(?=[.;,])"
        if released:
            text = re.sub(got, r"; the released (noisy) count is \1", str(error))
        else:
            text = re.sub(got, "", str(error))
        if active:
            # (A bound that is the number of persons, as PCA's on
            # n_components, is named, not stated.)
            text = re.sub(
                r"min\(n_samples, n_features\)=\d+", "min(n_persons, n_features)", text
            )
            text = re.sub(r"\bsamples?\b", "persons", text)
        # After a released count, a refusal reads that count: a private
        # outcome (no result), which a search scores as such.
        raise (TooFewUnits if released else ValueError)(text) from None


@dataclass(frozen=True)
class CountedRows:
    """Rows whose number is private: ``shape`` reports a released count.

    Under add/remove neighbours the number of rows is private; a fit that
    released a noisy count wraps its rows in this, so that every step that
    reads ``X.shape[0]`` (normalising, plans, refusals) reads the released
    count, while :func:`~dpcov.utils._gram.row_statistics` sums over the
    rows themselves.
    """

    X: object
    count: int

    @property
    def shape(self):
        return (self.count, self.X.shape[1])

    @property
    def dtype(self):
        return self.X.dtype


@dataclass(frozen=True)
class UnitRows:
    """Rows grouped by person, for :func:`~dpcov.utils._gram.row_statistics`.

    It stands for the input in a fit: ``shape`` is ``(m, n_features)`` with
    ``m`` persons, and ``row_statistics`` sums over persons (see the module's
    description).

    Attributes
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The validated rows.
    rows : ndarray of shape (n_kept,)
        Indices of the kept rows, person after person.
    starts : ndarray of shape (m + 1,)
        Where each person's rows start in ``rows``.
    count : int, default=None
        Under add/remove neighbours, the released (noisy) number of persons,
        which ``shape`` then reports in place of ``m`` (private).
    """

    X: object
    rows: np.ndarray
    starts: np.ndarray
    count: int = None

    @classmethod
    def select(cls, X, groups, max_rows_per_group, rng, *, name):
        """Keep at most ``max_rows_per_group`` rows per person, at random.

        Parameters
        ----------
        X : ndarray or sparse matrix of shape (n_samples, n_features)
            Validated rows.
        groups : array-like of shape (n_samples,)
            The person of each row (any labels ``numpy.unique`` can sort).
        max_rows_per_group : int
            ``k``.
        rng : numpy.random.Generator
            Orders each person's rows (the selection is uniform among the
            person's rows; the guarantee holds for any selection).
        name : str
            The estimator, for messages.
        """
        rows, starts = kept_rows(groups, X.shape[0], max_rows_per_group, rng, name=name)
        return cls(X=X, rows=rows, starts=starts)

    @property
    def shape(self):
        if self.count is not None:
            return (self.count, self.X.shape[1])
        return (self.starts.size - 1, self.X.shape[1])

    @property
    def dtype(self):
        return self.X.dtype

    @property
    def mean_weights(self):
        """Each kept row's weight ``1 / k_p`` in sums, aligned with ``rows``.

        The sum over persons of each person's average.
        """
        counts = np.diff(self.starts)
        return np.repeat(1.0 / counts, counts)

    @property
    def count_weights(self):
        """Each kept row's weight in counts, aligned with ``rows``.

        ``2**-e`` for a person of ``k_p`` kept rows, ``e = ceil(log2 k_p)``:
        a person counts at most 1 (and more than 1/2) in any count, and the
        counts are sums of dyadic fractions, exact in float64, so two
        neighbours' counts differ by at most 1 exactly, as the exponential
        mechanisms over them assume (a weight ``1 / k_p`` would round).
        """
        counts = np.diff(self.starts)
        exponent = np.frexp(counts - 1)[1]
        return np.repeat(np.ldexp(1.0, -exponent), counts)

    def _check_left_out(self, step):
        # NaN or infinity in a row the selection left out is refused too.
        left_out = np.ones(self.X.shape[0], dtype=bool)
        left_out[self.rows] = False
        if not _rows_finite(self.X, np.flatnonzero(left_out), step):
            raise NonFiniteInput()

    def statistics(self, spec):
        """Sums over persons of their averaged, person-clipped rows.

        ``spec`` is the pass ``row_statistics`` planned (its box, clips,
        centre and the sums asked for); the steps are the same, each clip
        applied to the person as a whole; ``square_norm`` sums ``rho_p**2``
        and ``norm_sums`` maps the persons' ``rho_p`` (the root-mean-square
        norms entering the final clip). Returns the fields of a
        ``RowStatistics``, ``n_rows`` the number of persons.
        """
        if spec.transform is not None or spec.bins is not None:
            # (The covariance fits ask neither: a transform is the Gaussian
            # learners', binned sums read Dask arrays, which groups refuse.)
            raise ValueError(
                "row_statistics: rows grouped by person take no transform and no bins."
            )
        box, clip_norm, center, final_clip = (
            spec.box,
            spec.clip_norm,
            spec.center,
            spec.final_clip,
        )
        gram, total, square_total = spec.gram, spec.total, spec.square_total
        square_norm, norm_sums, check_finite = (
            spec.square_norm,
            spec.norm_sums,
            spec.check_finite,
        )
        chunk_rows = spec.chunk_rows
        m, d = self.starts.size - 1, self.X.shape[1]
        counts = np.diff(self.starts)
        sums = {}
        if gram:
            sums["gram"] = np.zeros((d, d))
        if total:
            sums["total"] = np.zeros(d)
        if square_total:
            sums["square_total"] = np.zeros(d)
        if square_norm:
            sums["square_norm"] = 0.0
        if norm_sums is not None:
            sums["norm_sums"] = _norm_sums_zeros(norm_sums)
        step = _chunk_rows(d, chunk_rows)
        # Chunks of whole persons, about `step` rows each (a person's rows
        # are at most max_rows_per_group).
        cuts = np.searchsorted(self.starts, np.arange(0, self.starts[-1], step))
        cuts = np.unique(np.r_[np.minimum(cuts, m), m])
        if check_finite:
            # Every row, kept or not: whether a fit refuses NaN or infinity
            # must not depend on which rows the selection kept.
            self._check_left_out(step)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            for a, b in zip(cuts[:-1], cuts[1:], strict=True):
                chunk = self.X[self.rows[self.starts[a] : self.starts[b]]]
                y = chunk.toarray() if sp.issparse(chunk) else np.array(chunk)
                y = y.astype(np.float64, copy=False)
                if check_finite and not np.isfinite(y).all():
                    raise NonFiniteInput()
                n_rows = counts[a:b]
                person = np.repeat(np.arange(b - a), n_rows)
                if box is not None:
                    lower, upper, middle, half = box
                    np.clip(y, lower, upper, out=y)
                    y -= middle
                    y /= half
                if clip_norm is not None:
                    y = _clip_persons(y, person, n_rows, clip_norm)[0]
                if center is not None:
                    y -= center
                if square_norm or norm_sums is not None or final_clip is not None:
                    y, rms = _clip_persons(y, person, n_rows, final_clip)
                    if square_norm:
                        sums["square_norm"] += float(np.sum(rms * rms))
                    if norm_sums is not None:
                        sums["norm_sums"] += np.asarray(norm_sums(rms))
                weight = 1.0 / n_rows[person]
                if total:
                    sums["total"] += weight @ y
                if square_total:
                    sums["square_total"] += weight @ (y * y)
                if gram:
                    z = y * np.sqrt(weight)[:, np.newaxis]
                    sums["gram"] += z.T @ z
        return {"n_rows": m, **sums}


def kept_rows(groups, n_samples, max_rows_per_group, rng, *, name):
    """At most ``max_rows_per_group`` rows of each person, chosen at random.

    Returns the indices of the kept rows, person after person (each
    person's in a uniformly random order), and where each person's start
    (``m + 1`` offsets). ``groups`` is checked first (one label per row).
    """
    groups = check_groups(groups, n_samples, name=name)
    _, codes = np.unique(groups, return_inverse=True)
    codes = codes.reshape(-1)
    # Sorted by person, then by a random key: each person's rows in a
    # uniformly random order; the first k of each are kept.
    order = np.lexsort((rng.random(codes.size), codes))
    sorted_codes = codes[order]
    # (No row, no person: an empty table under add/remove has none.)
    first = np.flatnonzero(np.diff(sorted_codes, prepend=-1) != 0)
    sizes = np.diff(np.r_[first, codes.size])
    rank = np.arange(codes.size) - np.repeat(first, sizes)
    kept = order[rank < max_rows_per_group]
    counts = np.minimum(sizes, max_rows_per_group)
    return kept, np.r_[0, np.cumsum(counts)]


def _rows_finite(X, rows, step):
    # Whether the rows ``rows`` of X are all finite, read ``step`` at a time.
    for start in range(0, rows.size, step):
        chunk = X[rows[start : start + step]]
        values = chunk.data if sp.issparse(chunk) else np.asarray(chunk)
        if not np.isfinite(values).all():
            return False
    return True


def check_groups(groups, n_samples, *, name):
    # A 1-D array of labels, one per row, without NaN; the message names no
    # label and no count.
    try:
        groups = np.asarray(groups)
    except Exception:
        groups = None
    if groups is None or groups.ndim != 1 or groups.shape[0] != n_samples:
        raise ValueError(
            f"{name}.fit: groups must be a 1-D array with one label per row of X."
        )
    if groups.dtype.kind == "f" and np.isnan(groups).any():
        raise ValueError(f"{name}.fit: groups contains NaN; give every row a person.")
    if groups.dtype.kind == "O":
        if any(label is None or label != label for label in groups):
            raise ValueError(
                f"{name}.fit: groups contains a missing label; give every row a person."
            )
        try:
            np.unique(groups)
        except TypeError:
            raise ValueError(
                f"{name}.fit: groups must be labels of one sortable type "
                "(all numbers or all strings)."
            ) from None
    return groups


def _norm_sums_zeros(norm_sums):
    empty = np.asarray(norm_sums(np.empty(0)))
    dtype = np.int64 if np.issubdtype(empty.dtype, np.integer) else np.float64
    return np.zeros(empty.shape, dtype=dtype)


def _clip_persons(y, person, n_rows, radius):
    """Scale each person's rows by ``min(1, radius / rho_p)``; the ``rho_p``.

    ``rho_p`` is the root-mean-square norm of the person's rows (``inf``
    beyond float64, where the person's rows are scaled by a power of two
    first, so that the result has norm ``radius`` as for any far person).
    ``radius=None`` computes ``rho_p`` only. ``y`` may be changed in place.
    """
    norms = _row_norms(y)
    starts = np.r_[0, np.cumsum(n_rows)[:-1]]
    peak = np.maximum.reduceat(norms, starts)
    # rho = peak sqrt(mean((|y| / peak)**2)): no square overflows.
    ratio = np.divide(
        norms, peak[person], out=np.zeros_like(norms), where=peak[person] > 0
    )
    rms = peak * np.sqrt(np.bincount(person, ratio * ratio) / n_rows)
    if radius is None:
        return y, rms
    scale = np.minimum(
        1.0, np.divide(radius, rms, out=np.ones_like(rms), where=rms > 0)
    )
    far = ~(rms <= _MAX) | ((rms > 0) & (scale < np.finfo(np.float64).tiny))
    if far.any():
        # A person far beyond the radius (rho beyond float64, or a factor
        # that is no normal float): its rows scaled by 2**-e, e from the
        # person's largest entry (exact), then to rho = radius as a whole.
        for p in np.flatnonzero(far):
            mine = person == p
            _, e = np.frexp(np.abs(y[mine]).max())
            part = np.ldexp(y[mine], -e)
            part_rms = np.sqrt(np.mean(np.einsum("ij,ij->i", part, part)))
            y[mine] = part * (radius / part_rms)
        scale[far] = 1.0
    y *= scale[person][:, np.newaxis]
    return y, rms
