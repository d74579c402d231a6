"""AdaptiveCov: a private clipping threshold and a private choice of mechanism.

Dong, Liang and Yi (2022), Algorithm 3 ("tail-sensitive"). Clipping the rows at
a threshold ``tau`` trades noise (decreasing in ``tau``) for bias (increasing
as ``tau`` shrinks). AdaptiveCov scores the thresholds ``tau = R, R/2, R/4,
...`` by an upper bound on the root mean square error of clipping there (a
private bound on the clipping bias and the predicted noise), picks one with the
exponential mechanism, and runs the better of GaussCov and SeparateCov on the
rows clipped at it.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from functools import partial
from numbers import Integral, Real

import numpy as np

from .._config import get_config
from ..accounting import PureDP, split_budget
from ..mechanisms import calibrate_additive, exponential_mechanism
from ..mechanisms._sensitivity import rank_one_monotone_sensitivity
from ..utils._docstrings import fill_doc
from ..utils._gram import is_dask_array, row_statistics
from ..utils._gram._binned import BinnedSums, binned_grams_fit
from ..utils._gram._units import source_rows
from ..utils._sklearn_compat import Interval
from ._base import BasePrivateCovariance
from ._gauss import gauss_noise, gauss_release
from ._separate import separate_noise, separate_release

#: Budget shares of AdaptiveCov's steps (they sum to 1: sequential
#: composition). The reference code spends 1/8 on the trace and 1/8 on the
#: search, which costs the final mechanism a factor sqrt(4/3) = 1.155 in noise
#: where clipping does not help; 1/16 in all costs sqrt(16/15) = 1.033 (zCDP).
#: The trace (sensitivity R^2/n) needs little of it: 1/64 goes to the trace and
#: 3/64 to the search, whose noise (in rows) decides how far it can clip.
STEP_SHARES = {"trace": 0.015625, "threshold": 0.046875, "final": 0.9375}
#: Default constant ``c`` in front of SeparateCov's predicted eigenvector error
#: ``c sqrt(T ||E||)`` (see :func:`predicted_errors`).
DEFAULT_SEPARATE_CONSTANT = 0.5


def predicted_errors(
    tau,
    *,
    trace_bound,
    n_features,
    gauss_std,
    vector_std,
    value_std,
    separate_constant=DEFAULT_SEPARATE_CONSTANT,
):
    """Predicted Frobenius errors of GaussCov and SeparateCov at threshold ``tau``.

    Utility only: the predictions drive AdaptiveCov's choices and depend on
    public values and the private trace bound alone.

    - GaussCov adds a symmetric matrix whose ``d (d + 1) / 2`` free entries
      have standard deviation ``s = tau**2 gauss_std``: its expected squared
      Frobenius norm is exactly ``d**2 s**2``, so the prediction is ``s d``.
    - SeparateCov: the ``d`` eigenvalues get noise of standard deviation
      ``tau**2 value_std`` (expected squared norm ``d tau**4 value_std**2``;
      sorting can only bring them closer); the eigenvectors are those of a
      noisy matrix whose noise ``E`` has operator norm about
      ``2 sqrt(d) tau**2 vector_std`` (the edge of the semicircle law). The
      eigenvector error is at most ``2 sqrt(tr ||E||)`` (Dong, Liang and Yi
      2022, proof of Theorem 1), where the trace ``tr`` of the clipped second
      moment is at most ``min(trace_bound, tau**2)``; the prediction is
      ``c sqrt(tr ||E||)``, and the two terms are added in quadrature.

    Parameters
    ----------
    tau : float or ndarray
        Clipping threshold(s).
    trace_bound : float
        Upper bound on the trace of the second moment (of the unclipped rows).
    n_features : int
        ``d``.
    gauss_std : float
        Standard deviation of GaussCov's entry noise at radius 1.
    vector_std : float
        Standard deviation of SeparateCov's matrix noise at radius 1.
    value_std : float
        Standard deviation of SeparateCov's eigenvalue noise at radius 1.
    separate_constant : float, default=0.5
        ``c``. The worst case over spectra of trace ``tr`` (flat spectra
        near the detection threshold ``||E|| / 2``) gives about 1; 0.5 is the
        first-order (Davis-Kahan) value for eigenvalues twice ``||E||``; on
        nearly isotropic data the eigenvector error nearly vanishes.

    Returns
    -------
    gauss : float or ndarray
        Predicted error of GaussCov.
    separate : float or ndarray
        Predicted error of SeparateCov.
    """
    d = n_features
    square = np.square(tau)
    gauss = square * gauss_std * d
    values = square * value_std * math.sqrt(d)
    # In one dimension the eigenvector is exact.
    operator = 2.0 * math.sqrt(d) * square * vector_std if d > 1 else 0.0
    trace = np.minimum(trace_bound, square)
    vectors = separate_constant * np.sqrt(trace * operator)
    return gauss, np.sqrt(values**2 + vectors**2)


def bias_bin_sums(norms, radius, n_thresholds):
    """Per-bin counts and sums of squared norms, for :func:`clipping_bias`.

    With ``u = min(||x|| / R, 1)``, a row falls in bin ``j >= 1`` when ``u``
    is in ``(2**-j, 2**-(j-1)]``: exactly the rows that the thresholds
    ``tau_k = R 2**-k`` with ``k >= j`` clip. Rows in bins ``>= n_thresholds``
    (no threshold of the grid clips them) and zero norms are not counted.
    Sums over disjoint sets of rows add up, so the chunks of a pass (or the
    blocks of a Dask array) are summed.

    Parameters
    ----------
    norms : ndarray of shape (n_samples,)
        Row norms, at most ``radius`` (larger ones, from rounding, count as
        ``radius``).
    radius : float
        ``R``.
    n_thresholds : int
        Number ``K`` of grid points.

    Returns
    -------
    sums : ndarray of shape (2, n_thresholds), dtype float64
        Row 0: the number of rows in bins ``0, ..., K - 1`` (bin 0 is always
        empty); row 1: the sum of their ``u**2``.
    """
    unit = np.minimum(norms[norms > 0] / radius, 1.0)
    # u = m 2**e with m in [0.5, 1), exactly: u is in (2**-j, 2**-(j-1)] for
    # j = 1 - e, or j = 2 - e when u = 2**(e-1) is a power of two. Exact, so
    # a row is in bin j if and only if u > 2**-k for every k >= j.
    mantissa, exponent = np.frexp(unit)
    bins = 1 - exponent.astype(np.int64) + (mantissa == 0.5)
    kept = bins < n_thresholds
    bins, unit = bins[kept], unit[kept]
    counts = np.bincount(bins, minlength=n_thresholds)
    squares = np.bincount(bins, weights=unit * unit, minlength=n_thresholds)
    return np.stack([counts.astype(np.float64), squares])


def clipping_bias_from_sums(sums):
    """``n B(tau_k) / R**2`` for every threshold, from :func:`bias_bin_sums`.

    Parameters
    ----------
    sums : ndarray of shape (2, n_thresholds)
        Per-bin counts and sums of ``u**2`` (summed over chunks, if any).

    Returns
    -------
    bias : ndarray of shape (n_thresholds,)
        ``sum_i (u_i**2 - 4**-k)_+`` for ``k = 0, ..., K - 1``.
    """
    counts, squares = sums
    k = np.arange(counts.shape[0])
    # The rows above tau_k are those of bins j <= k (bias_bin_sums), so
    # sum_i (u_i^2 - 4^-k)_+ = sum_{j <= k} (squares_j - 4^-k counts_j).
    # Rounding of the sums can only leave a tiny negative value: 0 is the
    # exact bound's floor.
    bias = np.cumsum(squares) - 4.0 ** (-k) * np.cumsum(counts)
    return np.maximum(bias, 0.0)


def clipping_bias(norms, radius, n_thresholds):
    """The clipping bias ``n B(tau_k) / R**2`` at the thresholds ``tau_k = R 2**-k``.

    ``B(tau) = (1/n) sum_i (||x_i||**2 - tau**2)_+`` bounds the operator
    norm of the bias that clipping the rows at ``tau`` adds to the second
    moment (Dong, Liang and Yi 2022, Lemma 9: clipping row ``x`` changes
    ``x x^T`` by a rank-one matrix of norm ``||x||**2 - tau**2``). Each row
    contributes ``(u**2 - 4**-k)_+``, a number in ``[0, 1]``, to the query
    of threshold ``k``, so every query has sensitivity 1 under replace-one
    neighbours. The paper charges each row the upper edge of its dyadic bin
    instead, which overstates the bias by up to 4 times; the exact sum is a
    tighter bound with the same sensitivity.

    Parameters
    ----------
    norms : ndarray of shape (n_samples,)
        Row norms, at most ``radius``.
    radius : float
        ``R``.
    n_thresholds : int
        Number ``K`` of grid points.

    Returns
    -------
    bias : ndarray of shape (n_thresholds,)
        ``n B(tau_k) / R**2`` for ``k = 0, ..., K - 1``.
    """
    return clipping_bias_from_sums(bias_bin_sums(norms, radius, n_thresholds))


def threshold_scores(bias, noise):
    """Scores of the clipping thresholds for the exponential mechanism, in rows.

    Clipping the rows at ``tau`` moves the second moment by a bias matrix
    ``D(tau)`` with ``||D||_F <= B(tau)`` (Lemma 9's bound,
    :func:`clipping_bias`), and the final mechanism adds zero-mean noise of
    root mean square Frobenius norm ``E(tau)`` (:func:`predicted_errors`), so
    ``E ||D + noise||_F**2 = ||D||_F**2 + E(tau)**2`` and
    ``sqrt(B(tau)**2 + E(tau)**2)`` bounds the root mean square error. In rows
    (multiplied by ``n / R**2``) the score of ``tau_k`` is minus that bound.
    ``sqrt(b**2 + e**2)`` is 1-Lipschitz in ``b`` and ``e`` is public, so each
    score has sensitivity 1 (that of the bias query).

    Thresholds past the first whose predicted noise is at most one row are
    left out: every deeper threshold clips more (its bias bound is at least
    that threshold's) and saves less than one row of noise, so none can score
    better by more than the sensitivity, and a long tail of such candidates
    would only take probability from the good ones.

    Parameters
    ----------
    bias : ndarray of shape (n_thresholds,)
        ``n B(tau_k) / R**2`` (:func:`clipping_bias`).
    noise : ndarray of shape (n_thresholds,)
        ``n E(tau_k) / R**2``, non-increasing in ``k`` (public).

    Returns
    -------
    scores : ndarray of shape (m,)
        ``-sqrt(bias_k**2 + noise_k**2)`` for the ``m <= n_thresholds``
        candidates ``k = 0, ..., m - 1``.
    """
    small = np.flatnonzero(noise <= 1.0)
    m = small[0] + 1 if small.size else noise.shape[0]
    return -np.hypot(bias[:m], noise[:m])


@fill_doc
class AdaptiveCovariance(BasePrivateCovariance):
    """Tail-sensitive private covariance with a private clipping threshold.

    AdaptiveCov [1]_ privately estimates an upper bound on the trace, then
    picks a clipping threshold among ``tau = R, R/2, R/4, ...`` with the
    exponential mechanism, scoring each by an upper bound on the error of
    clipping there: a private bound on the clipping bias combined with the
    predicted noise of the better of GaussCov and SeparateCov at that
    threshold. It then runs the mechanism with the smaller predicted error on
    the rows clipped at the chosen threshold. On data whose norms are skewed
    (most rows short, a few long) it can be much more accurate than either
    mechanism alone.

    With ``delta > 0`` (or ``rho`` set) every step is Gaussian or
    pure-DP-within-zCDP and the fit is rho-zCDP, hence
    (``epsilon``, ``delta``)-DP; with ``delta=0`` every step is pure DP
    (AdaptiveLapCov) and the fit is pure ``epsilon``-DP. With a public norm
    bound (``data_norm`` or ``bounds``) or a private radius (neither given),
    asked for (``epsilon``, ``delta``), the fit runs at the largest rho whose
    Gaussian steps, radius search and threshold search stay (``epsilon``,
    ``delta``)-DP on their composed privacy loss distribution (``guarantee_``
    a :class:`~dpcov.accounting.ProfileDP`): 7% less noise at (1, 1e-6) than
    through zCDP (2-7% with a private radius). Guarantees are with respect to
    replacing one row, given that rows are clipped to ``data_norm_``.

    Read more in the :ref:`User Guide <covariance>`.

    Parameters
    ----------
    {epsilon}
    {delta}
    {rho}
    {data_norm}
    {bounds}
    {max_rows_per_group}
    {neighbours}
    {assume_centered}
    {projection}
    {eigenvalue_floor}
    {shrinkage}
    {store_precision}
    {store_raw}
    {accountant}
    {random_state}
    beta : float, default=0.1
        The private trace bound is an upper bound with probability
        ``1 - beta/8``. It affects accuracy only, not privacy.
    n_thresholds : int, default=80
        Number ``K`` of clipping thresholds ``R 2**-k`` on the grid (as in the
        reference code); those past the first whose predicted noise is below
        one row are not candidates (:func:`threshold_scores`). Privacy does
        not depend on it.
    separate_constant : float, default=None
        Constant ``c`` in front of SeparateCov's predicted eigenvector error
        ``c sqrt(tr ||E||)`` (:func:`predicted_errors`). ``None`` uses 0.5;
        the bound in the proof of Dong, Liang and Yi (2022), Theorem 1, has 2.
        Any value is private: it only changes which threshold and mechanism are
        picked.

    Attributes
    ----------
    {covariance_attributes}
    clip_threshold_ : float
        The private clipping threshold ``tau*`` the final mechanism used, on
        the rows it saw (centred rows when ``assume_centered=False``, whose
        bound ``data_norm_ + ||location_||`` can exceed ``data_norm_``).
    mechanism_ : {"gaussian", "separate"}
        The final mechanism that was picked.
    trace_bound_ : float
        The private upper bound on the trace of the second moment.

    See Also
    --------
    sklearn.covariance.EmpiricalCovariance : The non-private estimator.
    GaussianCovariance : Noise on every entry.
    SeparateCovariance : Trace-sensitive private covariance.

    Notes
    -----
    Neighbouring datasets differ in one row (replace-one); ``n_samples`` is
    public (with ``groups``, read persons for rows; with
    ``neighbours="add_remove"``, ``n`` is the released count).
    With the processed rows of norm at most ``R``, the covariance
    share ``B`` of the budget is split as: trace ``B/64``, threshold search
    ``3B/64``, final mechanism ``15B/16`` (``STEP_SHARES``; the reference code
    spends ``B/8, B/8, 3B/4``). The steps compose (sequential composition of
    zCDP, or of pure DP), so the fit spends ``B``:

    - Trace: sensitivity ``R**2 / n``; Gaussian (or Laplace) noise plus a
      shift that makes it an upper bound with probability ``1 - beta/8``.
    - Threshold: the exponential mechanism over the grid ``tau_k = R 2**-k``
      with the scores ``-sqrt(b_k**2 + e_k**2)`` in rows
      (:func:`threshold_scores`). The bias bound ``b_k = n B(tau_k) / R**2 =
      sum_i (||y_i||**2 - tau_k**2)_+ / R**2`` has sensitivity 1 (each row
      contributes a number in ``[0, 1]``; Dong, Liang and Yi 2022, Lemma 9),
      and the predicted error ``e_k = n E(tau_k) / R**2``
      (:func:`predicted_errors`) depends only
      on public values (``n``, ``d``, the budget, ``tau``) and the private
      trace bound, a released value; ``sqrt(b**2 + e**2)`` is 1-Lipschitz in
      ``b``. So every score has sensitivity 1 and the choice is
      ``epsilon_threshold``-DP (McSherry and Talwar 2007). Under zCDP it runs
      at ``epsilon = sqrt(8 rho_threshold)``: the exponential mechanism is
      ``epsilon``-bounded range, hence ``epsilon**2 / 8``-zCDP (Durfee and
      Rogers 2019; Cesar and Rogers 2021).
    - Final: GaussCov or SeparateCov at ``15B/16`` on the rows clipped at
      ``tau*``, calibrated to row norm ``tau*``; the choice of mechanism is
      post-processing of the trace bound and ``tau*``.

    Choices (utility only). The mechanisms are compared by their predicted
    Frobenius errors, the metric of Dong, Liang and Yi (2022), Section 7:
    ``s d`` for GaussCov (the exact root mean square of its noise, entry
    standard deviation ``s``) and, for SeparateCov, its eigenvalue noise
    ``sqrt(d) s_lambda`` combined in quadrature with ``0.5 sqrt(tr ||E||)``
    for its eigenvectors, where ``||E|| = 2 sqrt(d) s_E`` is the semicircle
    edge of its matrix noise and ``tr <= min(trace bound, tau**2)``. Bias and
    noise add in quadrature because the noise has mean zero. Thresholds past
    the first whose predicted noise is below one row are not candidates (none
    of them can score better by more than the sensitivity).

    Departures from the paper and the reference code: the threshold is chosen
    by the exponential mechanism on the error bound rather than by the sparse
    vector technique stopping at the first ``tau`` whose bias bound exceeds
    the predicted noise. Where the noise is large (``d >= 100``, small
    ``rho``) the queries differ by fewer rows than the sparse vector's noise,
    so the first crossing is decided by the noise and the search stops at
    ``tau = R`` (no clipping) in most fits, while the exponential mechanism
    only errs in proportion to the number of poor thresholds, and its
    ``epsilon`` is twice the sparse vector's at the same zCDP budget. Also:
    the shares above; predicted errors instead of high-probability bounds with
    the empirical 1/6 (1/14 under pure DP) in front of SeparateCov's
    eigenvector term; the mechanism is chosen at ``tau*``, the threshold it
    runs at (the code compares at ``tau*/2``, which picks GaussCov where
    SeparateCov is 2-3 times more accurate); the GaussCov term scales with
    ``tau**2`` (the code: ``tau``); the bias bound is the exact sum of Lemma 9
    rather than the paper's charge of each row's dyadic bin edge (up to 4
    times larger; same sensitivity); the trace bound is clipped at ``R**2``.

    References
    ----------
    .. [1] Dong, W., Liang, Y. and Yi, K. "Differentially Private Covariance
       Revisited". NeurIPS 2022, Algorithm 3 and Theorems 3-4.
       https://arxiv.org/abs/2205.14324.
    .. [2] McSherry, F. and Talwar, K. "Mechanism Design via Differential
       Privacy". FOCS 2007.
    .. [3] Cesar, M. and Rogers, R. "Bounding, Concentrating, and Truncating:
       Unifying Privacy Loss Composition for Data Analytics". ALT 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.covariance import AdaptiveCovariance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20000, 5))
    >>> X /= 10 * np.linalg.norm(X, axis=1, keepdims=True)  # norms 0.1 ...
    >>> X[:20] *= 10                                        # ... and a few 1.0
    >>> est = AdaptiveCovariance(epsilon=1.0, data_norm=1.0, assume_centered=True,
    ...                          random_state=0).fit(X)
    >>> est.clip_threshold_ < 1.0
    True
    """

    # Every mechanism has an exact sampler (secure_noise; read by _check_budget).
    _hardened_noise = True

    _parameter_constraints: dict = {
        **BasePrivateCovariance._parameter_constraints,
        "beta": [Interval(Real, 0, 1, closed="neither")],
        "n_thresholds": [Interval(Integral, 1, None, closed="left")],
        "separate_constant": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-6,
        rho=None,
        data_norm=None,
        bounds=None,
        max_rows_per_group=None,
        neighbours="replace",
        assume_centered=False,
        projection="clamp",
        eigenvalue_floor=0.0,
        shrinkage="auto",
        store_precision=True,
        store_raw=False,
        accountant=None,
        random_state=None,
        beta=0.1,
        n_thresholds=80,
        separate_constant=None,
    ):
        super().__init__(
            epsilon=epsilon,
            delta=delta,
            rho=rho,
            data_norm=data_norm,
            bounds=bounds,
            max_rows_per_group=max_rows_per_group,
            neighbours=neighbours,
            assume_centered=assume_centered,
            projection=projection,
            eigenvalue_floor=eigenvalue_floor,
            shrinkage=shrinkage,
            store_precision=store_precision,
            store_raw=store_raw,
            accountant=accountant,
            random_state=random_state,
        )
        self.beta = beta
        self.n_thresholds = n_thresholds
        self.separate_constant = separate_constant

    def _clipped_sums(self):
        # The mean's sum only: the Gram matrix comes after the threshold.
        return {"total": not self.assume_centered}

    def _first_pass(self, X, plan, *, lazy):
        # With a public bound and no centring, nothing is released before the
        # threshold: the first read is the norm pass itself (on Dask, the one
        # read of the fit), still before the fit is recorded.
        if plan.find_radius or not self.assume_centered:
            return super()._first_pass(X, plan, lazy=lazy)
        rows = partial(
            row_statistics, X, box=plan.box, clip_norm=plan.data_norm, check_finite=True
        )
        return self._norm_pass(
            rows, radius=plan.data_norm, n_features=plan.n_features, lazy=lazy
        )

    def _reads_raw_norms_again(self):
        # The norm pass and the Gram pass at the threshold both clip the raw
        # rows (without a box), whether the radius is given or private.
        return self.bounds is None

    def _release_shares(self):
        # The trace bound and the final mechanism are Gaussian, the threshold
        # search an exponential mechanism (bounded range), at STEP_SHARES.
        return {
            "gaussian": [STEP_SHARES["trace"], STEP_SHARES["final"]],
            "bounded_range": [STEP_SHARES["threshold"]],
        }

    def _release(self, X, *, box, clip_norm, center, radius, budget, rng, sums):
        # The steps of Algorithm 3, as methods; they draw from rng in this
        # order: the trace bound, the threshold search, the final mechanism.
        n_samples, n_features = X.shape
        # (X may stand for the rows with a released count: source_rows.)
        lazy = is_dask_array(source_rows(X))
        steps = split_budget(budget, STEP_SHARES)
        # A pass over the processed rows clip(box(x), clip_norm) - center.
        # (Dask: the entries are checked again, in case the source changed.)
        rows = partial(
            row_statistics,
            X,
            box=box,
            clip_norm=clip_norm,
            center=center,
            check_finite=lazy,
        )
        norm_sums = sums
        # The norm pass is the only read that sums squared norms: when the
        # first read was the norm pass (_first_pass), its sums are here.
        if sums.square_norm is None:
            norm_sums = self._norm_pass(
                rows, radius=radius, n_features=n_features, lazy=lazy
            )
        trace_bound = self._release_trace_bound(
            norm_sums, steps["trace"], radius=radius, n_samples=n_samples, rng=rng
        )
        errors = self._error_predictor(
            steps["final"], trace_bound, n_samples=n_samples, n_features=n_features
        )
        k_star = self._search_threshold(
            norm_sums,
            errors,
            steps["threshold"],
            radius=radius,
            n_samples=n_samples,
            rng=rng,
        )
        tau_star, use_gauss = self._choose_final(k_star, errors, radius=radius)
        release = self._final_release(
            rows if norm_sums.binned is None else norm_sums.binned,
            steps["final"],
            tau_star=tau_star,
            use_gauss=use_gauss,
            radius=radius,
            n_samples=n_samples,
            rng=rng,
        )
        release.split = {
            "trace": steps["trace"],
            "threshold": steps["threshold"],
            **release.split,
        }
        release.attributes = {
            "clip_threshold_": tau_star,
            "mechanism_": "gaussian" if use_gauss else "separate",
            "trace_bound_": trace_bound,
        }
        return release

    def _norm_pass(self, rows, *, radius, n_features, lazy=False):
        """The sum of the squared norms and their bin sums, in one pass.

        On a Dask array the same read also bins the Gram matrices on the grid
        of thresholds, from which the final Gram matrix follows at whichever
        threshold is chosen (``dpcov.utils._gram._binned``: twice the flops of
        one Gram matrix, one read fewer); in memory the final Gram matrix
        comes in a second read at the chosen threshold.
        """
        # One pass over the processed rows for the trace and the bin counts of
        # their norms (sums over rows: no per-row vector is kept).
        bins = None
        binned = lazy and get_config()["binned_reads"]
        if binned and binned_grams_fit(self.n_thresholds, n_features):
            bins = radius * 2.0 ** -np.arange(self.n_thresholds)
        return rows(
            square_norm=True,
            norm_sums=partial(
                bias_bin_sums, radius=radius, n_thresholds=self.n_thresholds
            ),
            gram=bins is not None,
            bins=bins,
        )

    def _release_trace_bound(self, norm_sums, budget, *, radius, n_samples, rng):
        """Step 1: the private upper bound on the trace of the second moment."""
        law = "laplace" if isinstance(budget, PureDP) else "gaussian"
        # 1. Private upper bound on the trace (1/n) sum |y|^2: sensitivity R^2/n.
        unit = rank_one_monotone_sensitivity(radius**2, n_samples)
        trace_noise = calibrate_additive(
            budget, l2_sensitivity=unit, l1_sensitivity=unit
        )
        # Shift so that it is an upper bound with probability 1 - beta/8:
        # P(sigma Z < -sigma sqrt(2 log(8/beta))) <= beta/8 (Gaussian tail) and
        # P(Lap(b) < -b log(4/beta)) = beta/8.
        if law == "gaussian":
            shift = trace_noise.scale * math.sqrt(2.0 * math.log(8.0 / self.beta))
        else:
            shift = trace_noise.scale * math.log(4.0 / self.beta)
        trace = norm_sums.square_norm / n_samples
        return float(
            np.clip(trace_noise.add(trace, rng) + shift, 1e-16 * radius**2, radius**2)
        )

    def _error_predictor(self, final, trace_bound, *, n_samples, n_features):
        """Step 2: the predicted errors of the final mechanisms, a function of tau."""
        # 2. Predicted Frobenius errors of the final mechanisms at threshold
        # tau. Every noise scale is proportional to tau^2: take the standard
        # deviations at tau = 1 from the calibrations the mechanisms use.
        shape = dict(n_samples=n_samples, n_features=n_features, radius=1.0)
        _, vector_noise, value_noise = separate_noise(final, **shape)
        stds = dict(
            gauss_std=gauss_noise(final, **shape).std,
            vector_std=vector_noise.std,
            value_std=value_noise.std,
        )
        constant = self.separate_constant
        if constant is None:
            constant = DEFAULT_SEPARATE_CONSTANT
        return partial(
            predicted_errors,
            trace_bound=trace_bound,
            n_features=n_features,
            separate_constant=constant,
            **stds,
        )

    def _search_threshold(self, norm_sums, errors, budget, *, radius, n_samples, rng):
        """Step 3: the index of the threshold the exponential mechanism picks."""
        # 3. Threshold choice: the exponential mechanism on minus a bound on
        # the RMS error of clipping at tau_k (threshold_scores), in rows. The
        # prediction depends only on public values and the private trace
        # bound, so each score has the bias query's sensitivity 1
        # (clipping_bias) and the choice is epsilon-DP (McSherry and Talwar
        # 2007) and epsilon**2/8-zCDP (bounded range: Cesar and Rogers 2021).
        taus = radius * 2.0 ** -np.arange(self.n_thresholds)
        noise = n_samples * np.minimum(*errors(taus)) / radius**2
        bias = clipping_bias_from_sums(norm_sums.norm_sums)
        scores = threshold_scores(bias, noise)
        epsilon = budget.exponential_epsilon()
        return exponential_mechanism(scores, epsilon=epsilon, rng=rng)

    def _choose_final(self, k_star, errors, *, radius):
        """Step 4: the clipping threshold and whether GaussCov runs there."""
        # 4. The mechanism with the smaller predicted error at the chosen
        # threshold (Theorem 3's proof bounds the error by bias(tau*) plus
        # min(E_G(tau*), E_S(tau*))): post-processing of k_star and the trace
        # bound.
        tau_star = radius * 2.0**-k_star
        gauss_error, separate_error = errors(tau_star)
        return tau_star, bool(gauss_error <= separate_error)

    def _final_release(
        self, rows, budget, *, tau_star, use_gauss, radius, n_samples, rng
    ):
        """Step 5: the final mechanism on the rows clipped at ``tau_star``."""
        # Calibrated to row norm tau_star: the rows it sees are clipped there
        # (no second clip when tau_star is the processed rows' bound already).
        # ``rows`` is the read of the processed rows, or their Gram matrices
        # binned on the grid of thresholds (BinnedSums).
        if isinstance(rows, BinnedSums):
            gram = rows.clipped(tau_star)[1]
        else:
            final_clip = tau_star if tau_star < radius else None
            gram = rows(final_clip=final_clip, gram=True).gram
        mechanism = gauss_release if use_gauss else separate_release
        return mechanism(
            gram / n_samples,
            n_samples=n_samples,
            radius=tau_star,
            budget=budget,
            rng=rng,
        )
