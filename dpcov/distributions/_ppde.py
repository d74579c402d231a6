"""Private marginals of product distributions on {0, 1}^d (Kamath et al. 2019, Sec. 5).

Two mechanisms release the vector of marginals ``p`` of a product of
Bernoulli distributions, both rho-zCDP with respect to replacing one row
(``n`` public):

* :func:`naive_product_release`, the Gaussian mechanism on the empirical
  marginals (L2 sensitivity ``sqrt(d) / n``);
* :func:`ppde_release`, PPDE of Kamath, Li, Singhal and Ullman (2019,
  Algorithm 7): rounds on disjoint blocks of rows, each a Gaussian mechanism
  on the mean of rows truncated to a radius that shrinks with the bound
  ``u_r`` on the marginals still in play, so that small marginals get less
  noise. Each row feeds exactly one round: parallel composition, rho-zCDP in
  all (not rho times the number of rounds).

The public plan of PPDE (:func:`ppde_schedule`) depends only on ``n``, ``d``
and the parameters; the truncation radius of a round (:func:`ppde_truncation_radius`)
also depends on how many coordinates are still active, a post-processing of
the earlier rounds' private outputs (adaptive parallel composition).

:func:`bernoulli_tv_bounds` gives exact two-sided bounds on the total
variation distance between two product distributions (Bhattacharyya
coefficient), the accuracy measure of the tests and the benchmark.

No function here imports scikit-learn; every random draw goes through
:mod:`dpcov.mechanisms._noise`.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from ..mechanisms import _noise, gaussian_scale
from ..mechanisms._sensitivity import binary_row_distance

#: Share of the rows spent on the orientation step when orientation is private.
ORIENTATION_FRACTION = 0.1
#: Bound on every (oriented) marginal after a private orientation step whose
#: error is at most 1/8: ``1/2 + 1/8``.
ORIENTED_BOUND = 0.625


@dataclass(frozen=True)
class PPDESchedule:
    """The public plan of PPDE: computed from ``n``, ``d`` and parameters only.

    Parameters
    ----------
    n_orientation : int
        Rows of the orientation step (0 when the orientation is known).
    block_sizes : tuple of int
        Rows of each round: the partitioning rounds, then the final round.
    upper_bounds : tuple of float
        Bound ``u_r`` on the oriented marginals still active at the start of
        each round, ``u_1 / 2**(r - 1)``; the last one is at most ``1 / d``.
    """

    n_orientation: int
    block_sizes: tuple
    upper_bounds: tuple

    @property
    def n_rounds(self):
        """Number of rounds, the final one included (``R_p + 1``)."""
        return len(self.block_sizes)

    @property
    def n_blocks(self):
        """Number of disjoint blocks of rows (orientation step included)."""
        return self.n_rounds + (self.n_orientation > 0)


@dataclass
class RoundRecord:
    """What one step of a product-distribution release did.

    Every field is public (from the plan) or a post-processing of the private
    outputs of this or earlier steps; ``rows`` is the public assignment of
    row indices to the step.

    Parameters
    ----------
    rows : ndarray of int
        Indices of the rows of ``X`` the step read (each exactly once).
    active : ndarray of int
        Coordinates the step released.
    upper_bound : float
        Bound ``u_r`` on the active oriented marginals (1 for the naive and
        orientation steps, which assume nothing).
    radius : float
        Truncation radius ``B_r`` (``inf``: no truncation).
    sensitivity : float
        L2 sensitivity of the step's statistic under replace-one.
    sigma : float
        Standard deviation of the Gaussian noise on each active coordinate.
    noisy : ndarray of shape (len(active),)
        The private release: the (truncated) mean of the rows on the active
        coordinates, plus noise (in the oriented frame for PPDE rounds).
    locked : ndarray of int
        Coordinates whose estimate this step set (empty for the orientation
        step).
    """

    rows: np.ndarray
    active: np.ndarray
    upper_bound: float
    radius: float
    sensitivity: float
    sigma: float
    noisy: np.ndarray
    locked: np.ndarray


@dataclass
class ProductRelease:
    """Output of :func:`naive_product_release` and :func:`ppde_release`.

    Parameters
    ----------
    marginals : ndarray of shape (d,)
        Estimated marginals, in [0, 1] (post-processed private release).
    noise_std : ndarray of shape (d,)
        Standard deviation of the noise on the step that set each estimate.
    rounds : list of RoundRecord
        The steps that released marginals, in order.
    orientation : RoundRecord or None
        The private orientation step of PPDE, if it ran.
    flipped : ndarray of bool of shape (d,)
        Coordinates that PPDE flipped (``x_j -> 1 - x_j``); all False for
        the naive release and for a known orientation.
    set_in_round : ndarray of int of shape (d,)
        Index (in ``rounds``) of the step that set each estimate.
    """

    marginals: np.ndarray
    noise_std: np.ndarray
    rounds: list
    orientation: RoundRecord = None
    flipped: np.ndarray = None
    set_in_round: np.ndarray = field(default=None)


def _as_binary(rows):
    # Nonzero entries count as 1: the mechanisms then stay private for any
    # input, since every row they see lies in {0, 1}^d. A sparse input stays
    # sparse (CSR with boolean data, no explicit zeros).
    if sparse.issparse(rows):
        rows = sparse.csr_array(rows, copy=True)
        rows.sum_duplicates()
        rows.data = rows.data != 0
        rows.eliminate_zeros()
        return rows
    rows = np.asarray(rows)
    return rows if rows.dtype == np.bool_ else rows != 0


def _oriented_block(X, rows, active, flips):
    # Rows ``rows`` of X (all rows when None), binary, restricted to the
    # coordinates ``active`` (in that order), with the coordinates where
    # ``flips`` is True complemented. Dense input gives a bool ndarray, sparse
    # input a boolean CSR array. X itself is never written.
    block = _as_binary(X if rows is None else X[rows])
    if active.size < block.shape[1]:
        # take is several times faster than [:, active] on dense bool arrays.
        block = block[:, active] if sparse.issparse(block) else block.take(active, 1)
    if not flips.any():
        return block
    if not sparse.issparse(block):
        return block ^ flips
    # Complement the flipped columns densely (n_r x |flipped|), keep the others
    # sparse, and put the columns back in the order of ``active``.
    flipped, kept = np.flatnonzero(flips), np.flatnonzero(~flips)
    complement = sparse.csr_array(~block[:, flipped].toarray())
    stacked = sparse.hstack([block[:, kept], complement], format="csr")
    inverse = np.empty(flips.size, dtype=np.intp)
    inverse[np.concatenate([kept, flipped])] = np.arange(flips.size)
    return stacked[:, inverse]


def _truncated_column_sums(block, radius):
    # Column sums of trunc_B(x_i) over the rows of a binary block (dense bool
    # or boolean CSR). ||x||**2 is the number of ones of a row; only rows above
    # B**2 are scaled, by B / ||x||: subtract (1 - B / ||x||) x for those rows,
    # densified a chunk at a time.
    if sparse.issparse(block):
        counts = np.asarray(block.sum(axis=0), dtype=np.float64).ravel()
        squared = np.diff(block.indptr)
    else:
        counts = block.sum(axis=0, dtype=np.int64).astype(np.float64)
        squared = np.count_nonzero(block, axis=1)
    if not math.isfinite(radius):
        return counts
    over = np.flatnonzero(squared > radius**2)
    step = max(1, (1 << 22) // max(1, block.shape[1]))
    for start in range(0, over.size, step):
        chunk = over[start : start + step]
        dense = block[chunk]
        dense = dense.toarray() if sparse.issparse(dense) else dense
        shrink = 1.0 - radius / np.sqrt(squared[chunk])
        counts -= shrink @ dense.astype(np.float64)
    return counts


def truncated_binary_mean(rows, radius):
    """Mean of binary rows, each scaled down to L2 norm at most ``radius``.

    Parameters
    ----------
    rows : ndarray or sparse matrix of shape (m, k)
        Rows in ``{0, 1}^k`` (bool or numeric; nonzero counts as 1), ``m >= 1``.
    radius : float
        Truncation radius ``B`` (``inf``: the plain mean).

    Returns
    -------
    mean : ndarray of shape (k,)
        ``mean_i trunc_B(x_i)`` with ``trunc_B(x) = x min(1, B / ||x||)``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.distributions._ppde import truncated_binary_mean
    >>> rows = np.array([[1, 1, 1, 1], [1, 0, 0, 0]])
    >>> truncated_binary_mean(rows, 1.0)
    array([0.75, 0.25, 0.25, 0.25])
    """
    rows = _as_binary(rows)
    return _truncated_column_sums(rows, radius) / rows.shape[0]


def naive_product_release(X, *, rho, rng):
    """Gaussian mechanism on the empirical marginals (the plain baseline).

    rho-zCDP with respect to replacing one row of ``X`` (``n`` public):
    the marginals ``mean_i x_i`` have L2 sensitivity ``sqrt(d) / n`` on
    ``{0, 1}^d``, and the noise has standard deviation ``sqrt(d) / (n
    sqrt(2 rho))`` on every coordinate. The estimate is the noisy mean
    clipped to [0, 1] (post-processing).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
        Rows in ``{0, 1}^d`` (bool or numeric; nonzero counts as 1).
    rho : float
        Budget in zCDP, positive (``inf``: no noise).
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    release : ProductRelease
        One step reading every row.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.distributions._ppde import naive_product_release
    >>> X = np.random.default_rng(0).random((1000, 5)) < 0.3
    >>> release = naive_product_release(X, rho=np.inf, rng=np.random.default_rng(0))
    >>> bool(np.all(release.marginals == X.mean(axis=0)))
    True
    >>> naive_product_release(X, rho=0.5, rng=np.random.default_rng(0)).rounds[0].sigma
    0.002236...
    """
    n, d = X.shape
    mean = truncated_binary_mean(X, math.inf)
    # Replace-one: x - x' lies in {-1, 0, 1}^d, so the mean moves by at most
    # sqrt(d) / n in L2 (attained by x = 1, x' = 0); see binary_row_distance.
    sensitivity = binary_row_distance(d) / n
    # Gaussian mechanism: sigma = Delta_2 / sqrt(2 rho) is rho-zCDP
    # (Bun-Steinke 2016, Prop. 1.6; Kamath, Li, Singhal and Ullman 2019,
    # Lemma 2.7).
    sigma = gaussian_scale(sensitivity, rho)
    noisy = _noise.add_gaussian(rng, mean, sigma, sensitivity)
    everything = np.arange(d)
    step = RoundRecord(
        rows=np.arange(n),
        active=everything,
        upper_bound=1.0,
        radius=math.inf,
        sensitivity=sensitivity,
        sigma=sigma,
        noisy=noisy,
        locked=everything,
    )
    return ProductRelease(
        marginals=np.clip(noisy, 0.0, 1.0),
        noise_std=np.full(d, sigma),
        rounds=[step],
        orientation=None,
        flipped=np.zeros(d, dtype=bool),
        set_in_round=np.zeros(d, dtype=np.intp),
    )


def ppde_schedule(n_samples, n_features, *, orientation="private"):
    """The public plan of PPDE: orientation block, rounds, block sizes, bounds.

    With a private orientation the first ``floor(n / 10)`` rows (after the
    public shuffle) orient the coordinates and the marginals are then at most
    ``u_1 = 5/8``; with a known orientation (every ``p_j <= 1/2``, asserted
    publicly) ``u_1 = 1/2`` and no rows are spent. There are ``R_p = ceil(log2(u_1
    d))`` partitioning rounds (the smallest ``R_p >= 0`` with ``u_1 / 2**R_p
    <= 1 / d``) and one final round, on equal blocks of the remaining rows
    (the first ``(n - n_0) mod (R_p + 1)`` blocks get one more row, so every
    row is used).

    Parameters
    ----------
    n_samples : int
        Number of rows ``n`` (public under replace-one neighbours).
    n_features : int
        Dimension ``d``.
    orientation : {"private", "known"}, default="private"
        Whether step 0 (private orientation) runs.

    Returns
    -------
    schedule : PPDESchedule
        The plan.

    Examples
    --------
    >>> from dpcov.distributions._ppde import ppde_schedule
    >>> plan = ppde_schedule(1000, 16, orientation="known")
    >>> plan.block_sizes, plan.upper_bounds
    ((250, 250, 250, 250), (0.5, 0.25, 0.125, 0.0625))
    """
    if orientation not in ("private", "known"):
        raise ValueError(
            f"orientation must be 'private' or 'known', got {orientation!r}."
        )
    if orientation == "private":
        # At least one row, so that step 0 runs whenever it is asked for.
        n_orientation = max(1, int(math.floor(ORIENTATION_FRACTION * n_samples)))
        u_first = ORIENTED_BOUND
    else:
        n_orientation = 0
        u_first = 0.5
    n_partition = 0
    while u_first * n_features > 2.0**n_partition:  # exact: powers of two
        n_partition += 1
    n_rounds = n_partition + 1
    base, extra = divmod(n_samples - n_orientation, n_rounds)
    sizes = tuple(base + (r < extra) for r in range(n_rounds))
    bounds = tuple(u_first / 2.0**r for r in range(n_rounds))
    return PPDESchedule(n_orientation, sizes, bounds)


def ppde_truncation_radius(upper_bound, n_active, n_rows, n_rounds, beta):
    """Truncation radius ``B_r`` of a PPDE round (Bernstein form).

    ``B_r = sqrt(mu + sqrt(2 mu L) + 2 L / 3)`` with ``mu = u_r k`` and ``L =
    log(2 n_r n_rounds / beta)``. If the ``k`` active marginals are at most
    ``u_r``, ``||x||**2`` is a sum of independent Bernoullis of mean at most
    ``mu``, and Bernstein's inequality gives ``P(||x||**2 > mu + t) <=
    exp(-t**2 / (2 (mu + t / 3))) <= exp(-L)`` for ``t = sqrt(2 mu L) +
    2 L / 3``; a union bound over the ``n_r`` rows and ``n_rounds`` rounds
    leaves probability at most ``beta / 2`` that any row is truncated.

    Privacy does not depend on this choice: any radius that is public or a
    function of earlier private outputs is allowed.

    Parameters
    ----------
    upper_bound : float
        ``u_r``.
    n_active : int
        ``k = |S_r|``.
    n_rows : int
        ``n_r``, positive.
    n_rounds : int
        ``R_p + 1``.
    beta : float
        Failure probability, in (0, 1).

    Returns
    -------
    radius : float
        ``B_r``.

    Examples
    --------
    >>> from dpcov.distributions._ppde import ppde_truncation_radius
    >>> round(ppde_truncation_radius(0.01, 100, 1000, 5, 0.1), 3)
    3.671
    """
    log_term = math.log(2.0 * n_rows * n_rounds / beta)
    mu = upper_bound * n_active
    return math.sqrt(mu + math.sqrt(2.0 * mu * log_term) + 2.0 * log_term / 3.0)


def ppde_round(rows, *, upper_bound, n_rounds, beta, rho, rng):
    """One PPDE round: noisy truncated mean of a block of binary rows.

    rho-zCDP with respect to replacing one row of ``rows``: the truncated
    mean has L2 sensitivity ``min(sqrt(2) B_r, sqrt(k)) / n_r``
    (:func:`binary_row_distance`).

    Parameters
    ----------
    rows : ndarray or sparse matrix of shape (n_r, k)
        The block, restricted to the ``k`` active coordinates and oriented.
    upper_bound : float
        ``u_r``, the bound on the active marginals.
    n_rounds : int
        ``R_p + 1``, for the union bound in the radius.
    beta : float
        Failure probability of the radius.
    rho : float
        Budget in zCDP, positive (``inf``: no noise).
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    noisy : ndarray of shape (k,)
        Truncated mean plus ``N(0, sigma**2)`` on each coordinate.
    radius : float
        ``B_r`` (:func:`ppde_truncation_radius`).
    sensitivity : float
        ``min(sqrt(2) B_r, sqrt(k)) / n_r``.
    sigma : float
        ``sensitivity / sqrt(2 rho)``.
    """
    n_rows, n_active = rows.shape
    radius = ppde_truncation_radius(upper_bound, n_active, n_rows, n_rounds, beta)
    mean = truncated_binary_mean(rows, radius)
    # Replace-one changes one truncated row: the truncated mean moves by at
    # most min(sqrt(2) B_r, sqrt(k)) / n_r (binary_row_distance: truncation is
    # 1-Lipschitz, and truncated binary rows lie in the nonnegative orthant).
    sensitivity = binary_row_distance(n_active, radius) / n_rows
    # Gaussian mechanism at the full budget: the rounds read disjoint blocks
    # (parallel composition, as in the proof of Kamath, Li, Singhal and Ullman
    # 2019, Theorem 5.1; see ppde_release for the adaptive version).
    sigma = gaussian_scale(sensitivity, rho)
    noisy = _noise.add_gaussian(rng, mean, sigma, sensitivity)
    return noisy, radius, sensitivity, sigma


def ppde_release(X, *, rho, rng, orientation="private", beta=0.1):
    """PPDE: private marginals of a product distribution, less noise on small ones.

    Kamath, Li, Singhal and Ullman (2019), Algorithm 7, with truncation radii
    and lock-in thresholds derived for dpcov:

    0. (``orientation="private"``) on the first ``n_0`` rows of a public
       shuffle, the Gaussian mechanism on the mean (sensitivity ``sqrt(d) /
       n_0``); coordinates whose noisy mean exceeds 1/2 are flipped
       (``x_j -> 1 - x_j``), so that, if its error is below 1/8, every
       oriented marginal is at most ``u_1 = 5/8``;
    1. partitioning rounds ``r = 1..R_p`` on fresh blocks: the noisy mean of
       the rows truncated to ``B_r`` (:func:`ppde_round`) on the active
       coordinates ``S_r``; those with noisy value above ``u_r / 4`` are set
       to ``clip(value, u_r / 8, u_r)`` and leave; ``u_{r+1} = u_r / 2``;
    2. a final round sets the remaining coordinates to ``clip(value, 0,
       u_F)``, ``u_F <= 1 / d``;
    3. flipped coordinates are un-flipped: ``q_j -> 1 - q_j``.

    rho-zCDP with respect to replacing one row (``n`` public): the shuffle
    and the plan are data-independent, each row is read by exactly one step,
    each step is a rho-zCDP Gaussian mechanism given the earlier outputs,
    and what a step does (its coordinates ``S_r``, radius, flips) depends
    only on earlier private outputs. By adaptive parallel composition (a
    changed row lies in one block: the steps before it do not read it, the
    steps after it read identical blocks given the earlier outputs) the whole
    release is rho-zCDP.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
        Rows in ``{0, 1}^d`` (bool or numeric; nonzero counts as 1). Only
        accessed as ``X.shape`` and ``X[indices]`` (rows), once per step; a
        sparse (CSR) input is processed without densifying it.
    rho : float
        Budget in zCDP of every step, hence of the release; positive.
    rng : numpy.random.Generator
        Source of the shuffle and the noise.
    orientation : {"private", "known"}, default="private"
        "known": every marginal is asserted (publicly) to be at most 1/2, and
        step 0 is skipped.
    beta : float, default=0.1
        Failure probability of the truncation radii (:func:`ppde_truncation_radius`).

    Returns
    -------
    release : ProductRelease
        Estimates, noise levels and per-step records (with the row indices
        each step read).

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.distributions._ppde import ppde_release
    >>> p = [0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.9, 0.0]
    >>> X = np.random.default_rng(0).random((20000, 8)) < p
    >>> release = ppde_release(X, rho=1.0, rng=np.random.default_rng(0))
    >>> np.round(release.marginals, 2)
    array([0.5 , 0.2 , 0.1 , 0.05, 0.02, 0.01, 0.9 , 0.  ])
    >>> len(release.rounds), release.flipped.nonzero()[0], release.set_in_round
    (4, array([6]), array([0, 0, 1, 2, 3, 3, 1, 3]))
    """
    n, d = X.shape
    plan = _checked_schedule(n, d, orientation)
    n_rounds = plan.n_rounds
    orientation_rows, blocks = _shuffled_blocks(plan, n, rng)

    flipped = np.zeros(d, dtype=bool)
    orientation_step = None
    if plan.n_orientation:
        flipped, orientation_step = _orientation_step(X, orientation_rows, rho, rng)

    estimate = np.zeros(d)
    noise_std = np.zeros(d)
    set_in_round = np.full(d, -1, dtype=np.intp)
    active = np.arange(d)
    records = []
    for r, (rows, u) in enumerate(zip(blocks, plan.upper_bounds, strict=True)):
        if active.size == 0:
            # Nothing left to estimate: the block is not read.
            records.append(_unread_round(rows, active, u))
            continue
        record, lock, value = _block_round(
            X,
            rows,
            active,
            flipped,
            upper_bound=u,
            final=r == n_rounds - 1,
            n_rounds=n_rounds,
            beta=beta,
            rho=rho,
            rng=rng,
        )
        estimate[record.locked] = value[lock]
        noise_std[record.locked] = record.sigma
        set_in_round[record.locked] = r
        records.append(record)
        active = active[~lock]

    estimate[flipped] = 1.0 - estimate[flipped]
    return ProductRelease(
        marginals=estimate,
        noise_std=noise_std,
        rounds=records,
        orientation=orientation_step,
        flipped=flipped,
        set_in_round=set_in_round,
    )


def _checked_schedule(n, d, orientation):
    # The public plan (ppde_schedule), refused unless every block has a row.
    plan = ppde_schedule(n, d, orientation=orientation)
    if min(plan.block_sizes) < 1 or plan.n_orientation > n:
        raise ValueError(
            f"PPDE needs at least one row per block ({plan.n_blocks} blocks at "
            f"d={d} with orientation={orientation!r}), got n={n}."
        )
    return plan


def _shuffled_blocks(plan, n, rng):
    # The rows of each block.
    # Public randomness, drawn before any row is read: a uniform shuffle
    # assigns rows to blocks, whatever their values.
    order = _noise.permutation(rng, n)
    bounds = np.cumsum((plan.n_orientation,) + plan.block_sizes)
    # blocks[0] is the orientation block (empty when the orientation is known).
    orientation_rows, *blocks = np.split(order, bounds[:-1])
    return orientation_rows, blocks


def _orientation_step(X, rows, rho, rng):
    # Step 0: the private flips (coordinates whose noisy mean exceeds 1/2)
    # and the step's record.
    d = X.shape[1]
    mean = truncated_binary_mean(X[rows], math.inf)  # each row read once
    # Plain mean of n_0 rows of {0, 1}^d: L2 sensitivity sqrt(d) / n_0
    # (binary_row_distance without truncation).
    sensitivity = binary_row_distance(d) / rows.size
    # Gaussian mechanism, rho-zCDP on its own block (parallel composition).
    sigma = gaussian_scale(sensitivity, rho)
    noisy = _noise.add_gaussian(rng, mean, sigma, sensitivity)
    flipped = noisy > 0.5
    step = RoundRecord(
        rows=rows,
        active=np.arange(d),
        upper_bound=1.0,
        radius=math.inf,
        sensitivity=sensitivity,
        sigma=sigma,
        noisy=noisy,
        locked=np.zeros(0, dtype=np.intp),
    )
    return flipped, step


def _unread_round(rows, active, upper_bound):
    # The record of a round with no active coordinate: its block is not read.
    return RoundRecord(
        rows=rows[:0],
        active=active,
        upper_bound=upper_bound,
        radius=math.nan,
        sensitivity=0.0,
        sigma=0.0,
        noisy=np.zeros(0),
        locked=active,
    )


def _block_round(
    X, rows, active, flipped, *, upper_bound, final, n_rounds, beta, rho, rng
):
    # One round on its block (ppde_round, then the lock-in): its record, the
    # mask of the active coordinates it sets, and their values.
    u = upper_bound
    # The block's rows on the active coordinates, oriented: flipping is a
    # fixed bijection of {0, 1}^k given the private flips, so neighbouring
    # blocks stay neighbouring.
    block = _oriented_block(X, rows, active, flipped[active])
    noisy, radius, sensitivity, sigma = ppde_round(
        block, upper_bound=u, n_rounds=n_rounds, beta=beta, rho=rho, rng=rng
    )
    # Post-processing of the private values from here on.
    lock, value = _lock_in(noisy, u, final)
    record = RoundRecord(
        rows=rows,
        active=active,
        upper_bound=u,
        radius=radius,
        sensitivity=sensitivity,
        sigma=sigma,
        noisy=noisy,
        locked=active[lock],
    )
    return record, lock, value


def _lock_in(noisy, upper_bound, final):
    # Which active coordinates a round sets, and their values (clipped); the
    # final round sets them all.
    u = upper_bound
    if final:
        lock = np.ones(noisy.size, dtype=bool)
        value = np.clip(noisy, 0.0, u)
    else:
        lock = noisy > u / 4.0
        value = np.clip(noisy, u / 8.0, u)
    return lock, value


def ppde_step_error(n_rows, n_active, *, variance, sigma, beta):
    """High-probability error bound of one step of PPDE (no truncation).

    With probability at least ``1 - beta``, every one of the ``k`` noisy
    values is within ``E = sqrt(2 v L / m) + 2 L / (3 m) + sigma sqrt(2 L)``
    of its marginal, where ``L = log(4 k / beta)``, ``m`` is the number of
    rows and ``v`` bounds the marginals' variances ``p (1 - p)``: Bernstein's
    inequality for the empirical mean (two-sided, union over ``k``, failure
    ``beta / 2``) plus the Gaussian tail ``P(|Z| > s) <= 2 exp(-s**2 / 2)``
    (union over ``k``, failure ``beta / 2``).

    Parameters
    ----------
    n_rows : int
        ``m``, positive.
    n_active : int
        ``k``, positive.
    variance : float
        ``v``: 1/4 for unconstrained marginals, ``u (1 - u)`` when every
        marginal is at most ``u <= 1/2``.
    sigma : float
        Noise standard deviation of the step.
    beta : float
        Failure probability, in (0, 1).

    Returns
    -------
    error : float
        ``E``.
    """
    log_term = math.log(4.0 * n_active / beta)
    sampling = math.sqrt(2.0 * variance * log_term / n_rows)
    sampling += 2.0 * log_term / (3.0 * n_rows)
    return sampling + sigma * math.sqrt(2.0 * log_term)


def _variance_bound(upper_bound):
    return 0.25 if upper_bound >= 0.5 else upper_bound * (1.0 - upper_bound)


def ppde_public_requirements(
    n_samples, n_features, *, rho, orientation="private", beta=0.1
):
    """Error bound against margin for the PPDE steps whose inputs are public.

    The orientation step must err by at most 1/8 (so every oriented marginal is
    at most 5/8) and round ``r`` by at most ``u_r / 8`` (the invariant of
    Kamath, Li, Singhal and Ullman 2019, Claims 5.13-5.14: coordinates that
    move on satisfy ``p_j <= u_{r+1}``, locked ones ``p_j >= u_r / 8``). Only
    the orientation step and round 1 (``S_1`` is every coordinate) have a
    public active set; later rounds' ``|S_r|`` is a private output, so their
    requirement cannot be checked before the fit without leaking
    (:func:`ppde_step_error` with ``k = d`` gives a worst case). The failure
    probability ``beta / 2`` left after truncation is split equally over the
    steps.

    Parameters
    ----------
    n_samples : int
        ``n``.
    n_features : int
        ``d``.
    rho : float
        Budget in zCDP (``inf``: no noise).
    orientation : {"private", "known"}, default="private"
        As in :func:`ppde_release`.
    beta : float, default=0.1
        Failure probability.

    Returns
    -------
    requirements : list of (str, float, float)
        ``(step, error bound, margin)`` for each public step; the plan is
        adequate when every error bound is at most its margin.
    """
    plan = ppde_schedule(n_samples, n_features, orientation=orientation)
    beta_step = beta / (2.0 * plan.n_blocks)
    out = []
    d = n_features
    if plan.n_orientation:
        sigma = gaussian_scale(binary_row_distance(d) / plan.n_orientation, rho)
        error = ppde_step_error(
            plan.n_orientation, d, variance=0.25, sigma=sigma, beta=beta_step
        )
        out.append(("orientation", error, 1.0 / 8.0))
    u = plan.upper_bounds[0]
    m = plan.block_sizes[0]
    if m > 0:
        radius = ppde_truncation_radius(u, d, m, plan.n_rounds, beta)
        sigma = gaussian_scale(binary_row_distance(d, radius) / m, rho)
        error = ppde_step_error(
            m, d, variance=_variance_bound(u), sigma=sigma, beta=beta_step
        )
    else:
        error = math.inf
    out.append(("round 1", error, u / 8.0))
    return out


def ppde_min_samples(n_features, *, rho, orientation="private", beta=0.1):
    """Fewest rows for which every public PPDE step meets its error margin.

    The smallest ``n`` at which every step of
    :func:`ppde_public_requirements` has its error bound within its margin
    (found by bisection; the bounds decrease as ``n`` grows).

    Parameters
    ----------
    n_features : int
        ``d``.
    rho : float
        Budget in zCDP.
    orientation : {"private", "known"}, default="private"
        As in :func:`ppde_release`.
    beta : float, default=0.1
        Failure probability.

    Returns
    -------
    n_min : int
        The requirement.

    Examples
    --------
    >>> from dpcov.distributions._ppde import ppde_min_samples
    >>> ppde_min_samples(1000, rho=0.5)
    54927
    """

    def adequate(n):
        return all(
            error <= margin
            for _, error, margin in ppde_public_requirements(
                n, n_features, rho=rho, orientation=orientation, beta=beta
            )
        )

    high = 64
    while not adequate(high):
        high *= 2
    low = high // 2
    # adequate(high), and low is inadequate or below 64: bisect.
    while high - low > 1:
        mid = (low + high) // 2
        if adequate(mid):
            high = mid
        else:
            low = mid
    return high


def bernoulli_tv_bounds(p, q):
    """Exact two-sided bounds on the total variation between two Bernoulli products.

    With the Bhattacharyya coefficient ``BC = prod_j (sqrt(p_j q_j) +
    sqrt((1 - p_j) (1 - q_j)))``, ``1 - BC <= TV <= sqrt(1 - BC**2)``
    (the Hellinger bounds: ``TV >= H**2`` and ``TV <= H sqrt(2 - H**2)``
    with ``H**2 = 1 - BC``). ``BC`` is computed as a sum of logarithms, so
    thousands of coordinates do not underflow.

    Parameters
    ----------
    p, q : array-like of shape (d,)
        Marginals, in [0, 1].

    Returns
    -------
    lower : float
        ``1 - BC``.
    upper : float
        ``sqrt(1 - BC**2)``.

    Examples
    --------
    >>> from dpcov.distributions._ppde import bernoulli_tv_bounds
    >>> bernoulli_tv_bounds([0.5], [0.5])
    (0.0, 0.0)
    >>> [round(b, 4) for b in bernoulli_tv_bounds([0.5], [0.6])]
    [0.0051, 0.1005]
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore"):
        log_bc = float(np.sum(np.log(np.sqrt(p * q) + np.sqrt((1.0 - p) * (1.0 - q)))))
    log_bc = min(log_bc, 0.0)  # rounding can push a factor a hair above 1
    lower = 0.0 - math.expm1(log_bc)  # 0.0 - 0.0 is 0.0, not -0.0
    upper = math.sqrt(0.0 - math.expm1(2.0 * log_bc))
    return lower, upper
