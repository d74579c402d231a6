"""Private approximate subspace estimation (Singhal and Steinke, 2021, Section 4)."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral, Real

import numpy as np

from ..exceptions import NoHeavyCell, NoStableSubspace
from ..mechanisms import _noise
from ..mechanisms._histogram import stable_histogram, stable_histogram_threshold
from ..utils._docstrings import fill_doc
from ..utils._gram._units import refuse_groups
from ..utils._sklearn_compat import Interval, _fit_context
from ._subspace_base import BaseSubspace

#: Why fit refuses groups (a person-level form is future work).
_ROWS_ONLY = (
    "its sample-and-aggregate blocks are blocks of rows, and one person's rows "
    "would have to share one block"
)


def default_n_blocks(epsilon, delta, *, bad_fraction=0.1, beta=0.05):
    """Number of blocks ``t`` of the subsample-and-aggregate step.

    ``t = ceil((tau + (2 / epsilon) log(1 / (2 beta)))`` ``/ (1 - eta))``,
    with ``tau = 1 + (2 / epsilon) log(1 / (2 delta))`` the threshold of the
    stability histogram: if at least ``(1 - eta) t`` blocks fall in one
    cell, its noisy count clears ``tau`` except with probability ``beta``.

    Parameters
    ----------
    epsilon : float
        Privacy budget, positive (``inf`` gives 2).
    delta : float
        In (0, 1).
    bad_fraction : float, default=0.1
        Fraction ``eta`` of blocks allowed outside the heavy cell.
    beta : float, default=0.05
        Allowed probability that the noise hides the heavy cell.

    Returns
    -------
    n_blocks : int
        ``t``, at least 2.

    Examples
    --------
    >>> from dpcov.decomposition._approximate_subspace import default_n_blocks
    >>> default_n_blocks(1.0, 1e-6)
    36
    """
    tau = stable_histogram_threshold(epsilon, delta)
    slack = 0.0 if math.isinf(epsilon) else (2.0 / epsilon) * math.log(1.0 / (2 * beta))
    return max(2, math.ceil((tau + slack) / (1.0 - bad_fraction)))


def block_error(eigengap, n_features, block_size, n_components):
    """Typical distance of a block's top-k subspace to the true one.

    ``s = gamma (sqrt(d) + sqrt(m)) / (sqrt(m) - sqrt(k))`` (Gordon's bounds
    on the singular values of a Gaussian block and Wedin's theorem); a
    median-level form derived for dpcov, about twice the observed median.

    Parameters
    ----------
    eigengap : float
        ``gamma`` with ``lambda_{k+1} <= gamma**2 lambda_k``.
    n_features : int
        ``d``.
    block_size : int
        ``m``, above ``n_components``.
    n_components : int
        ``k``.

    Returns
    -------
    s : float
        The bound.
    """
    d, m, k = n_features, block_size, n_components
    return eigengap * (math.sqrt(d) + math.sqrt(m)) / (math.sqrt(m) - math.sqrt(k))


def predicted_error(cell_width, n_features, n_reference, n_components):
    """Predicted spectral error of the released projector from the cell width.

    ``alpha = l (sqrt(d) + sqrt(q)) / (sqrt(12) (sqrt(q) - sqrt(k)))``:
    rounding to a cell centre errs by a uniform ``l``-wide amount per
    coordinate (standard deviation ``l / sqrt(12)``), and Wedin's theorem
    divides by ``sigma_k`` of the projected reference points, about
    ``sqrt(q) - sqrt(k)``.

    Parameters
    ----------
    cell_width : float
        ``l``.
    n_features : int
        ``d``.
    n_reference : int
        ``q``, above ``n_components``.
    n_components : int
        ``k``.

    Returns
    -------
    alpha : float
        The prediction.
    """
    d, q, k = n_features, n_reference, n_components
    return (
        cell_width
        * (math.sqrt(d) + math.sqrt(q))
        / (math.sqrt(12.0) * (math.sqrt(q) - math.sqrt(k)))
    )


def split_blocks(X, order, n_repeats, n_blocks, block_size, *, pairs):
    """Disjoint blocks of rows, by a data-independent rule.

    The rows are reordered by the public permutation ``order``, paired up and
    differenced if ``pairs``, and cut into consecutive blocks; leftover rows
    are unused. Each row of X enters at most one block, so replacing one row
    changes at most one block.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The rows.
    order : ndarray of int of shape (n,)
        A permutation drawn independently of X.
    n_repeats, n_blocks, block_size : int
        Runs, blocks per run and rows per block.
    pairs : bool
        Whether to use pair differences.

    Returns
    -------
    blocks : ndarray of shape (n_repeats, n_blocks, block_size, d)
        The blocks.
    """
    used = n_repeats * n_blocks * block_size
    shape = (n_repeats, n_blocks, block_size, X.shape[1])
    if not pairs:
        rows = np.take(X, order[:used], axis=0).astype(np.float64, copy=False)
        return rows.reshape(shape)
    # pair_differences(X[order])[:used] in float64, from the rows it uses only
    # (np.take is faster than fancy indexing).
    upper = np.take(X, order[1 : 2 * used : 2], axis=0).astype(np.float64, copy=False)
    lower = np.take(X, order[0 : 2 * used : 2], axis=0).astype(np.float64, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):
        blocks = np.subtract(upper, lower).reshape(shape)
    far = ~np.isfinite(blocks).all(axis=(2, 3))
    if far.any():
        # A difference overflowed: the block is computed from its rows scaled
        # by 2**-k, with 2**k above their largest entry. That is the block
        # times 2**-k (exact scaling), which has the same subspace.
        upper, lower = upper.reshape(shape)[far], lower.reshape(shape)[far]
        peak = np.maximum(
            np.abs(upper).max(axis=(1, 2)), np.abs(lower).max(axis=(1, 2))
        )
        k = np.frexp(peak)[1][:, np.newaxis, np.newaxis]
        with np.errstate(under="ignore"):
            blocks[far] = np.ldexp(upper, -k) - np.ldexp(lower, -k)
    return blocks


def normalized_blocks(blocks):
    """Blocks with huge or tiny entries rescaled by a power of two.

    A block's top-k subspace does not change when the block is multiplied by
    a positive number, so this is exact post-processing of each block's
    subspace. A block whose largest entry lies outside ``[2**-400, 2**400]``
    is divided by ``2**k`` (exact), with ``2**k`` just above that entry; the
    others (ordinary data) are left as they are. Then the block's Gram
    matrix and SVD cannot overflow or lose the block to underflow.

    Parameters
    ----------
    blocks : ndarray of shape (t, m, d)
        Finite blocks of rows.

    Returns
    -------
    blocks : ndarray of shape (t, m, d)
        The blocks (the input itself if none needed rescaling).
    """
    peak = np.maximum(blocks.max(axis=(1, 2)), -blocks.min(axis=(1, 2)))
    far = (peak > 2.0**400) | ((peak < 2.0**-400) & (peak > 0))
    if far.any():
        blocks = blocks.copy()
        k = np.frexp(peak[far])[1][:, np.newaxis, np.newaxis]
        with np.errstate(under="ignore"):
            blocks[far] = np.ldexp(blocks[far], -k)
    return blocks


def block_projections(blocks, reference, n_components):
    """Project the reference points onto each block's top-k subspace.

    Parameters
    ----------
    blocks : ndarray of shape (t, m, d)
        Disjoint blocks of rows.
    reference : ndarray of shape (q, d)
        Public reference points.
    n_components : int
        ``k``.

    Returns
    -------
    projected : ndarray of shape (t, q * d)
        Row ``j``: the points ``Pi_j p_1, ..., Pi_j p_q`` concatenated, with
        ``Pi_j`` the projector onto the top-k right singular vectors of
        block ``j`` (the top eigenvectors of its uncentred second moment).
    """
    _, m, d = blocks.shape
    blocks = normalized_blocks(blocks)
    if m >= d:
        # The top-k right singular vectors of a block are the top-k
        # eigenvectors of its d x d Gram matrix: forming it and eigh cost
        # about m d**2 + d**3 per block against about 4 m d**2 + 8 d**3 for
        # the SVD (6 times faster at m = 14 d). Either is a function of the
        # block alone; they differ only in rounding (an error of order
        # eps sigma_1**2 / (sigma_k**2 - sigma_(k+1)**2) in the subspace).
        gram = np.swapaxes(blocks, 1, 2) @ blocks
        _, vectors = np.linalg.eigh(gram)  # ascending eigenvalues
        top = np.swapaxes(vectors[:, :, : -n_components - 1 : -1], 1, 2)
    else:
        _, _, vt = np.linalg.svd(blocks, full_matrices=False)
        top = vt[:, :n_components, :]  # (t, k, d)
    coefficients = top @ reference.T  # (t, k, q)
    projected = np.swapaxes(coefficients, 1, 2) @ top  # (t, q, d)
    return projected.reshape(blocks.shape[0], -1)


def grid_cells(points, cell_width, offset):
    """Cells of a randomly offset grid: ``floor(x / l - offset)``.

    Parameters
    ----------
    points : ndarray of shape (t, D)
        Points.
    cell_width : float
        ``l``.
    offset : float
        In [0, 1): the boundaries sit at ``(offset + i) l``.

    Returns
    -------
    cells : ndarray of int64 of shape (t, D)
        Integer cell coordinates.
    """
    return np.floor(points / cell_width - offset).astype(np.int64)


def cell_centre(cell, cell_width, offset):
    """Centre of a grid cell, ``l (cell + 1/2 + offset)``.

    Parameters
    ----------
    cell : ndarray of int of shape (D,)
        Cell coordinates.
    cell_width : float
        ``l``.
    offset : float
        The grid's offset.

    Returns
    -------
    centre : ndarray of shape (D,)
        The centre.
    """
    return cell_width * (cell + 0.5 + offset)


def subspace_distance(a, b):
    """Spectral norm of the difference of two rank-k projectors.

    Parameters
    ----------
    a, b : ndarray of shape (k, d)
        Orthonormal bases.

    Returns
    -------
    distance : float
        ``||A.T A - B.T B||_2``, the sine of the largest principal angle.
    """
    cosines = np.linalg.svd(a @ b.T, compute_uv=False)
    return float(np.sqrt(max(0.0, 1.0 - float(np.min(cosines)) ** 2)))


def boost(outputs, radius):
    """Select an output close to more than half of the runs (Algorithm 3).

    Parameters
    ----------
    outputs : list of (ndarray of shape (k, d) or None)
        Each run's basis, None for bottom.
    radius : float
        Accuracy radius ``alpha``; outputs within ``2 alpha`` agree.

    Returns
    -------
    index : int or None
        The run with the most agreeing runs (itself included) if that is
        more than half of all runs, else None.
    """
    found = [i for i, out in enumerate(outputs) if out is not None]
    best, support = None, 0
    for i in found:
        agree = sum(
            subspace_distance(outputs[i], outputs[j]) <= 2 * radius for j in found
        )
        if agree > support:
            best, support = i, agree
    return best if 2 * support > len(outputs) else None


@fill_doc
class ApproximateSubspace(BaseSubspace):
    """Private subspace of data close to a k-dimensional subspace.

    Subsample and aggregate (Algorithm 2 of [1]_): the rows are split into
    ``t`` disjoint blocks; each block's top-k principal subspace projects
    ``q`` public Gaussian reference points; the projections, as one vector
    in ``R^(q d)`` per block, fall into cells of a randomly offset grid; a
    stability-based histogram releases the cell that holds most blocks, and
    the subspace spanned by the cell centre's points is the output.
    (``epsilon``, ``delta``)-DP with respect to replacing one row, with
    ``delta > 0`` (no pure or zCDP form). No norm bound is needed: a row
    moves one block from one cell to another, whatever its value.

    The number of rows needed does not grow with ``n_features``, but the
    data must have a large multiplicative eigen-gap: with
    ``lambda_{k+1} <= gamma**2 lambda_k`` the error grows like
    ``gamma d**1.5 k**1.5 / sqrt(m)``. This is the estimator for nearly
    low-rank data in high dimension, where noise-addition PCA degrades with
    the dimension.

    Read more in the :ref:`User Guide <approximate_subspace>`.

    Parameters
    ----------
    n_components : int or None, default=None
        Dimension ``k`` of the subspace; None means ``n_features``.
    epsilon : float, default=1.0
        Privacy-loss parameter, positive. ``inf`` drops the histogram noise
        (not private; for testing).
    delta : float, default=1e-6
        In (0, 1); choose it well below ``1 / n_samples``. Must be positive.
    eigengap : float or None, default=None
        Public bound ``gamma`` on the eigen-gap ratio,
        ``lambda_{k+1}(Sigma) <= gamma**2 lambda_k(Sigma)``; it sets the cell
        width ``l = cell_scale * q * sqrt(k d) * s``, with ``s`` the typical
        block error (:func:`block_error`). ``fit`` refuses, before reading
        the data, if the predicted error for that width exceeds
        ``max_error``. None sets the width so that the predicted error is
        ``max_error`` and records in ``eigengap_`` the largest gap that
        width tolerates. Must not be computed from the data.
    max_error : float, default=0.1
        Target (``eigengap=None``) or tolerance (``eigengap`` set) for the
        predicted spectral error ``||P_hat - P||``, in (0, 1].
    n_blocks : int or None, default=None
        Number of blocks ``t`` per run; None uses :func:`default_n_blocks`
        (36 at ``epsilon=1, delta=1e-6``).
    n_reference : int or None, default=None
        Number of reference points ``q``, above ``k``; None uses ``4 k``.
    cell_scale : float, default=20.0
        ``c_l`` in the cell width (a default calibrated by simulation).
    bad_fraction : float, default=0.1
        Fraction of blocks allowed outside the heavy cell, used by the
        default ``n_blocks``.
    beta : float, default=0.05
        Probability that the noise hides a heavy cell, used by the default
        ``n_blocks``.
    n_repeats : int, default=1
        Boosting (Algorithm 3): the rows are split into ``n_repeats``
        disjoint parts, each runs the algorithm at the full budget (parallel
        composition), and the output is a run within ``2 max_error`` of
        more than half of the runs (error at most 3 times a run's). 1 means
        no boosting.
    assume_centered : bool, default=False
        If True, the rows are taken to have mean zero. If False, pairs of
        rows are differenced (``X[2i + 1] - X[2i]``, after the public
        shuffle), which removes the mean and keeps the principal subspace,
        with half as many rows.
    {accountant}
    {random_state}

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Orthonormal basis of the released subspace: the top-k left singular
        vectors of the decoded reference points.
    n_components_ : int
        Dimension ``k``.
    n_blocks_ : int
        Blocks per run, ``t``.
    block_size_ : int
        Rows per block, ``m`` (public: from ``n_samples``). Must exceed
        ``k``; at least ``4 k`` is recommended, and the implied
        ``eigengap_`` shrinks as ``m`` does.
    n_reference_ : int
        Reference points, ``q``.
    cell_width_ : float
        Grid cell width ``l`` (public).
    eigengap_ : float
        ``eigengap``, or the largest gap the cell width tolerates.
    predicted_error_ : float
        Predicted spectral error of the release (public, from ``l``).
    reference_points_ : ndarray of shape (n_repeats, n_reference, n_features)
        The public reference points of each run (data-independent).
    grid_offsets_ : ndarray of shape (n_repeats,)
        The public grid offset of each run (data-independent).
    guarantee_ : dpcov.accounting.ApproxDP
        (``epsilon``, ``delta``) of the fit.
    privacy_unit_ : {"row", "person"}
        Whom the guarantee protects: a row, or a person (a fit with
        ``groups`` and ``max_rows_per_group``; see :ref:`privacy_units`).
    neighbours_ : {"replace", "add_remove"}
        The neighbouring relation the guarantee holds under (an
        ``"add_remove"`` fit holds under replacement too).
    epsilon_spent_ : float
        ``epsilon``.
    delta_spent_ : float
        ``delta``.
    rho_spent_ : float
        ``inf``: an (epsilon, delta)-DP guarantee with ``delta > 0`` bounds no
        zCDP parameter.
    budget_split_ : dict of str to ApproxDP
        "histogram": the stability histogram of each run (runs on disjoint
        rows compose in parallel).
    noise_sampler_ : str
        The sampler of the fit's noise: ``"numpy"`` (floating point) or
        ``"discrete"`` (exact, under ``dpcov.set_config(secure_noise=True)``).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    ExactSubspace : Data exactly in a subspace, up to outliers.
    PCA : Private principal axes from a private covariance.

    Notes
    -----
    **Privacy.** The shuffle, the pairing, the split into blocks, the
    reference points and the grid offset are drawn before the data are read
    and do not depend on them. Replacing one row changes one block, hence
    one concatenated vector, hence moves one item of the histogram from one
    cell to another. The stability histogram (Laplace noise of scale
    ``2 / epsilon`` on the non-empty cells, released above ``tau = 1 + (2 /
    epsilon) log(1 / (2 delta))``) is (``epsilon``, ``delta``)-DP under that
    change; choosing the heaviest released cell, requiring a noisy count of
    at least ``t / 2``, decoding its centre and taking singular vectors are
    post-processing. Boosting runs on disjoint rows (parallel composition)
    and selects by post-processing.

    **Rows of any finite size.** A block's subspace does not change when the
    block is multiplied by a positive number. A block of pair differences
    where one overflows float64 is computed from its rows scaled by a power
    of two, and a block with an entry beyond ``2**400`` (or all below
    ``2**-400``) is rescaled by one before its SVD: both are exact scalings,
    so extreme rows raise no overflow and leave no inf or NaN.

    **Accuracy** assumes Gaussian rows with the eigen-gap ``eigengap``; the
    constants (``q = 4 k``, ``cell_scale = 20``, the typical-value block
    error) are dpcov's, calibrated by simulation, not the paper's. Nothing
    checks the assumption on the data (that would cost privacy): a wrong
    ``eigengap`` gives :class:`~dpcov.exceptions.NoHeavyCell` or a poor
    subspace.

    **No signal-to-noise figure.** Unlike the noise-addition estimators,
    this class has no ``signal_to_noise_`` and never warns with
    :class:`~dpcov.exceptions.NoiseDominatedWarning`: the noise of the
    stability test decides only whether the subspace is released (otherwise
    the fit raises), not how far it is off, so there is no noise scale to
    compare the released projector with. The noisy count of the chosen
    cell always clears its public threshold ``t / 2`` when a subspace is
    released, so a figure built on it could never fall below 1;
    ``predicted_error_`` (public) states the accuracy expected under the
    assumptions.

    References
    ----------
    .. [1] Singhal, V. and Steinke, T. "Privately Learning Subspaces".
       NeurIPS 2021. https://arxiv.org/abs/2106.00001

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.decomposition import ApproximateSubspace
    >>> rng = np.random.default_rng(0)
    >>> basis = np.linalg.qr(rng.normal(size=(50, 2)))[0].T
    >>> X = rng.normal(size=(2000, 2)) @ basis + 1e-9 * rng.normal(size=(2000, 50))
    >>> est = ApproximateSubspace(n_components=2, random_state=1).fit(X)
    >>> est.components_.shape
    (2, 50)
    >>> bool(np.linalg.norm(est.get_projection() - basis.T @ basis, 2) < 0.1)
    True
    """

    _parameter_constraints: dict = {
        **BaseSubspace._parameter_constraints,
        "eigengap": [Interval(Real, 0, None, closed="neither"), None],
        "max_error": [Interval(Real, 0, 1, closed="right")],
        "n_blocks": [Interval(Integral, 2, None, closed="left"), None],
        "n_reference": [Interval(Integral, 2, None, closed="left"), None],
        "cell_scale": [Interval(Real, 0, None, closed="neither")],
        "bad_fraction": [Interval(Real, 0, 0.5, closed="left")],
        "beta": [Interval(Real, 0, 0.5, closed="neither")],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        n_components=None,
        *,
        epsilon=1.0,
        delta=1e-6,
        eigengap=None,
        max_error=0.1,
        n_blocks=None,
        n_reference=None,
        cell_scale=20.0,
        bad_fraction=0.1,
        beta=0.05,
        n_repeats=1,
        assume_centered=False,
        accountant=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.eigengap = eigengap
        self.max_error = max_error
        self.n_blocks = n_blocks
        self.n_reference = n_reference
        self.cell_scale = cell_scale
        self.bad_fraction = bad_fraction
        self.beta = beta
        self.n_repeats = n_repeats
        self.assume_centered = assume_centered
        self.accountant = accountant
        self.random_state = random_state

    def _geometry(self, n_samples, n_features, k):
        # Every public quantity of the fit, from the parameters and the shape.
        t = self.n_blocks
        if t is None:
            t = default_n_blocks(
                self.epsilon, self.delta, bad_fraction=self.bad_fraction, beta=self.beta
            )
        q = 4 * k if self.n_reference is None else self.n_reference
        if q <= k:
            raise ValueError(f"n_reference={q} must exceed n_components={k}.")
        rows = n_samples if self.assume_centered else n_samples // 2
        m = rows // (t * self.n_repeats)
        if m <= k:
            per_row = 1 if self.assume_centered else 2
            raise ValueError(
                f"ApproximateSubspace needs blocks of more than k = {k} rows "
                f"(4 k = {4 * k} recommended): n_repeats={self.n_repeats} x "
                f"n_blocks={t} x {k + 1} rows = "
                f"{per_row * self.n_repeats * t * (k + 1)} samples"
                + ("" if self.assume_centered else " (pairs are differenced)")
                + f", got n_samples={n_samples}."
            )
        d = n_features
        spread = self.cell_scale * q * math.sqrt(k * d)
        if self.eigengap is None:
            width = self.max_error * math.sqrt(12.0) * (math.sqrt(q) - math.sqrt(k))
            width /= math.sqrt(d) + math.sqrt(q)
            gap = width / (spread * block_error(1.0, d, m, k))
        else:
            gap = self.eigengap
            width = spread * block_error(gap, d, m, k)
        alpha = predicted_error(width, d, q, k)
        if alpha > self.max_error * (1 + 1e-9):
            raise ValueError(
                f"With eigengap={gap:.3g} the cell width is {width:.3g} and the "
                f"predicted error {alpha:.3g} exceeds max_error={self.max_error}; "
                "the result would be uninformative. A smaller eigengap (if the "
                "data have it), more rows per block or a smaller cell_scale "
                "lower it."
            )
        return t, m, q, width, gap, alpha

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, groups=None):
        """Release the approximate principal subspace of X, or raise.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (no clipping is needed).
        y : Ignored
            Not used, present for API consistency by convention.
        groups : None
            Refused when given: this estimator protects rows only (see the
            user guide's "One person, many rows").

        Returns
        -------
        self : object
            Returns the instance itself.

        Raises
        ------
        NoHeavyCell
            The private answer is bottom: no cell held enough blocks.
        NoStableSubspace
            With boosting, no run agreed with more than half of the runs.
        """
        refuse_groups(groups, name=type(self).__name__, reason=_ROWS_ONLY)
        X, budget, rng, k = self._start_fit(X)
        n_samples, d = X.shape
        t, m, q, width, gap, alpha = self._geometry(n_samples, d, k)
        repeats = self.n_repeats

        # Public randomness, drawn before the data are read.
        order = _noise.permutation(rng, n_samples)
        reference = _noise.gaussian(rng, 1.0, (repeats, q, d))
        offsets = _noise.uniform(rng, repeats)
        # Projections have entries below the reference norms: check that the
        # cell coordinates fit in int64 with room (a public check).
        if np.max(np.linalg.norm(reference, axis=2)) / width > 2.0**52:
            raise ValueError(
                f"The cell width {width:.3g} is too small for float64 cell "
                "coordinates; raise eigengap or max_error."
            )

        self._spend_budget(budget)  # every check above used public values only
        rows = split_blocks(X, order, repeats, t, m, pairs=not self.assume_centered)

        outputs = []
        for r in range(repeats):
            outputs.append(
                self._run(rows[r], reference[r], offsets[r], k, width, budget, rng)
            )
        if repeats == 1:
            chosen = 0
            if outputs[0] is None:
                raise NoHeavyCell(
                    f"No grid cell held half of the t={t} blocks of m={m} rows "
                    f"(cell width {width:.3g}, for eigengap {gap:.3g}; the private "
                    "answer is bottom). The eigen-gap may be larger than assumed, "
                    "or n_samples too small for these epsilon and delta. The "
                    "budget is spent: refitting on the same data is a new release."
                )
        else:
            chosen = boost(outputs, alpha)
            if chosen is None:
                failed = sum(out is None for out in outputs)
                raise NoStableSubspace(
                    f"No run was within 2 x {alpha:.3g} of more than half of the "
                    f"{repeats} runs ({failed} returned no heavy cell; the private "
                    "answer is bottom). The budget is spent: refitting on the "
                    "same data is a new release."
                )

        self._record(
            outputs[chosen].astype(X.dtype, copy=False),
            k,
            budget,
            {"histogram": budget},
        )
        self.n_blocks_ = t
        self.block_size_ = m
        self.n_reference_ = q
        self.cell_width_ = width
        self.eigengap_ = gap
        self.predicted_error_ = alpha
        self.reference_points_ = reference
        self.grid_offsets_ = offsets
        return self

    def _run(self, blocks, reference, offset, k, width, budget, rng):
        # One run of Algorithm 2 on t disjoint blocks; None for bottom.
        t, _, d = blocks.shape
        projected = block_projections(blocks, reference, k)
        cells = grid_cells(projected, width, offset)
        heavy, counts = stable_histogram(
            cells, epsilon=budget.epsilon, delta=budget.delta, rng=rng
        )
        if heavy.shape[0] == 0 or counts[0] < t / 2:
            return None
        points = cell_centre(heavy[0], width, offset).reshape(-1, d)  # (q, d)
        left, _, _ = np.linalg.svd(points.T, full_matrices=False)
        return left[:, :k].T
