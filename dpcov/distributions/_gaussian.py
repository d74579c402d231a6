"""Private learning of a multivariate Gaussian (Kamath, Li, Singhal and Ullman 2019;
Biswas, Dong, Kamath and Ullman 2020)."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils.validation import check_is_fitted

from ..accounting import ZCDP, BudgetAccountant
from ..base import PrivateEstimatorMixin, warn_if_noise_dominated
from ..exceptions import NoiseDominatedWarning
from ..mechanisms import _noise
from ..mechanisms._projection import project_l2_ball, project_psd_bounded
from ..utils._docstrings import fill_doc
from ..utils._gram._units import refuse_groups
from ..utils._input import quiet_float_errors, validate_rows
from ..utils._pairs import pair_differences
from ..utils._random import check_random_state
from ..utils._sklearn_compat import (
    Interval,
    Options,
    StrOptions,
    _fit_context,
    check_params_always,
)
from ..utils._warnings import warn
from ..utils.validation import check_n_draws
from ._coinpress import (
    coinpress_centred_covariance,
    coinpress_covariance,
    coinpress_mean,
)
from ._gaussian_plan import PlanInputs, plan_gaussian, plan_mean
from ._klsu import naive_pce, naive_pce_noise, naive_pme, ppc

#: Why fit refuses groups (a person-level form is future work).
_ROWS_ONLY = "its recursive preconditioning clips and counts rows"


@dataclass(frozen=True)
class GaussianFit:
    """What a fit routine of :class:`MultivariateGaussian` releases.

    In the frame scaled by ``1 / sqrt(min_variance)``, before the final
    projections (eigenvalues onto ``[1, K]``, the mean onto its ball).

    Parameters
    ----------
    covariance : ndarray of shape (n_features, n_features)
        The released covariance (scaled frame).
    mean : ndarray of shape (n_features,)
        The released mean (scaled frame).
    split : dict of str to ZCDP
        The budget of each step (``budget_split_``).
    steps : dict of str to int
        The number of steps of each part (``n_iterations_``).
    noise : tuple (float, ndarray of shape (n_features, n_features))
        The final covariance step's public noise scale and the whitening it
        ran in (a release), for ``noise_level_``.
    """

    covariance: np.ndarray
    mean: np.ndarray
    split: dict
    steps: dict
    noise: tuple


#: Rows are brought within 2**LIMIT_EXPONENT in the frame scaled by
#: 1 / sqrt(min_variance) (see _scaled_rows).
LIMIT_EXPONENT = 1000


def _scaled_rows(X, scale):
    # X / scale, as float64, where every entry is below 2**1000 in magnitude:
    # a row with a larger entry (or whose division overflows) is scaled down
    # by a power of two so that its largest entry lies in [2**999, 2**1000).
    # This map of each row on its own (replace-one neighbours stay
    # neighbours) keeps the row's direction, and such a row lies beyond every
    # clipping radius of the fit (at most about 1e226 in this frame) either
    # way. It makes the later arithmetic safe: pair differences stay below
    # 2**1001, and a map of operator norm at most 1 keeps entries below
    # sqrt(d) 2**1000. Rows within the bound are exactly X / scale.
    limit = 2.0**LIMIT_EXPONENT
    with np.errstate(over="ignore"):
        scaled = np.asarray(X, dtype=np.float64) / scale
    # Largest and smallest entry: no n x d temporary for the magnitudes;
    # inf fails both comparisons.
    far = ~((scaled.max(axis=1) < limit) & (scaled.min(axis=1) > -limit))
    if far.any():
        rows = np.asarray(X[far], dtype=np.float64)
        with np.errstate(under="ignore"):
            # Exact powers of two: the row at magnitude 1, divided by the
            # scale (at most 1e75 then), and brought to [2**999, 2**1000).
            _, k = np.frexp(np.abs(rows).max(axis=1))
            rows = np.ldexp(rows, -k[:, np.newaxis]) / scale
            _, k = np.frexp(np.abs(rows).max(axis=1))
            scaled[far] = np.ldexp(rows, LIMIT_EXPONENT - k[:, np.newaxis])
    return scaled


def _pairs(X, rng):
    # Pair differences (x_2i - x_2i-1) / sqrt(2) ~ N(0, S) after a public
    # random permutation (so the result does not depend on the row order).
    # Each row enters one pair: replacing a row replaces one pair.
    order = _noise.permutation(rng, X.shape[0])
    return pair_differences(X[order]) / math.sqrt(2.0)


@fill_doc
class MultivariateGaussian(PrivateEstimatorMixin, DensityMixin, BaseEstimator):
    """Private Gaussian learner: mean and covariance by private preconditioning.

    Learns ``N(mean_, covariance_)`` from rows assumed to be drawn from a
    Gaussian ``N(mu, Sigma)``, given only weak public bounds ``min_variance I
    <= Sigma <= max_variance I`` and ``||mu|| <= mean_bound``. The fit is
    rho-zCDP (hence (``epsilon``, ``delta``)-DP) with respect to replacing one
    row, **for any data**: every release clips the rows to a public radius
    before adding Gaussian noise. Only the accuracy assumes Gaussian rows
    within the bounds.

    The sample cost grows only logarithmically in the bounds (a square root of
    a logarithm for the covariance), so the defaults are generous. The
    estimator first rescales the data by ``1 / sqrt(min_variance)``, so that
    ``I <= Sigma <= K I`` with ``K = max_variance / min_variance``.

    Read more in the :ref:`User Guide <gaussian>`.

    Parameters
    ----------
    {epsilon_zcdp}
    {delta_zcdp}
    {rho}
    min_variance : float, default=1e-4
        Public lower bound on the eigenvalues of the covariance; it must not be
        computed from the data. Privacy does not depend on it. With
        "coinpress" it only enters the choice of plan and the final eigenvalue
        floor (the first clipping radius comes from ``max_variance``); with
        "klsu" it sets the condition bound the recursion must reduce.
    max_variance : float, default=1e4
        Public upper bound on the eigenvalues of the covariance (must exceed
        ``min_variance``); it must not be computed from the data.
    mean_bound : float, default=1e4
        Public bound on the L2 norm of the mean; it must not be computed from
        the data.
    method : {{"coinpress", "klsu"}}, default="coinpress"
        "coinpress": the iterative estimators of [2]_ (all rows in every step,
        sequential composition). "klsu": the recursive preconditioning of [1]_
        (PPC, then NaivePCE and NaivePME on fresh rows, parallel composition);
        its constants are from the proofs and it needs far more rows.
    n_iterations : int or "auto", default="auto"
        Steps of each CoinPress iteration. "auto" chooses, for the covariance
        and the mean separately, the number of steps (up to 12) and the
        budget split between them with the smallest predicted error, from
        public quantities only. Ignored by "klsu", whose number of rounds
        follows from its public recursion.
    beta : float, default=0.1
        Failure probability of each step's accuracy bounds (it sets clipping
        radii and plans, never the privacy guarantee).
    {accountant}
    {random_state}

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Private mean (projected onto the ``mean_bound`` ball).
    covariance_ : ndarray of shape (n_features, n_features)
        Private covariance, with eigenvalues clipped to ``[min_variance,
        max_variance]`` (post-processing).
    precision_ : ndarray of shape (n_features, n_features)
        Inverse of ``covariance_``.
    n_iterations_ : dict of str to int
        Steps (or rounds) run by each part of the fit (public); 0 for a part
        released from its public prior.
    prior_parts_ : tuple of str
        The parts released from their public prior instead of the data:
        "covariance" (``min_variance * I``), "mean" (the zero vector, the
        centre of the ``mean_bound`` ball), both, or none (empty). With
        "coinpress" a part is taken from its prior where its plan predicts a
        larger error than the prior's; the choice reads public values only,
        before the data are read (see Notes). Always empty with "klsu".
    covariance_rows_ : {{"pairs", "centred"}}
        The rows the covariance was learnt from (public): "pairs" (pair
        differences of a public random pairing, ``n // 2`` rows) or
        "centred" (all ``n`` rows centred at a coarse private mean). With
        "coinpress" the planner chooses it from public values before the data
        are read (see Notes); "klsu" always uses pairs.
    mean_frame_ : {{"public", "whitened"}}
        The frame the mean was estimated in: "public" (the rows scaled by
        the public bounds) or "whitened" (by the released covariance). With
        "coinpress" it is the frame of the smaller planned error, chosen from
        public values before the data are read; "klsu" always whitens.
    noise_level_ : float
        Scale of the largest eigenvalue that the noise of the final
        covariance step alone would give, in the units of ``covariance_``:
        ``2 sqrt(d) sigma`` (the edge of the semicircle law; ``sigma`` the
        public noise scale of that step, in its whitened frame) times
        ``min_variance ||A^(-1)||**2``, where ``A`` is the whitening of that
        step (the identity for a one-step plan; otherwise computed from the
        earlier releases). See Notes.
    signal_to_noise_ : float
        Largest eigenvalue of ``covariance_`` over ``noise_level_``: computed
        from the release and public values only. Below 1 the fit is mostly
        noise (its mean too, being whitened by the released covariance), and
        ``fit`` warns with :class:`~dpcov.exceptions.NoiseDominatedWarning`.
        ``inf`` (and ``noise_level_`` 0) when the covariance is the public
        prior, which carries no noise; ``fit`` then warns that the prior was
        released.
    {privacy_attributes_zcdp}
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    sklearn.covariance.EmpiricalCovariance : The non-private Gaussian fit.
    dpcov.covariance.GaussianCovariance : Private covariance given a row-norm
        bound.

    Notes
    -----
    Neighbouring datasets differ in one row (replace-one); ``n_samples`` is
    public. The mean is unknown, so the covariance is learnt from pair
    differences ``(x_2i - x_2i-1) / sqrt(2) ~ N(0, Sigma)`` of a public random
    pairing (each row enters one pair, so replacing a row replaces one pair)
    or, with "coinpress", possibly from all rows centred at a coarse private
    mean (the centred layout, below; ``covariance_rows_``).

    **method="coinpress"**. The covariance gets a share ``1 - q`` of rho and
    the mean ``q``. **Never worse than the public prior**: each part has a
    public prior that needs no data, ``min_variance * I`` for the covariance
    (its Mahalanobis-Frobenius error ``||Sigma^(-1/2) C Sigma^(-1/2) -
    I||_F`` is at most ``sqrt(d) (1 - 1/K)`` for any ``Sigma`` within the
    bounds) and the zero vector for the mean (Mahalanobis error at most
    ``mean_bound / sqrt(min_variance)``). A part is fitted privately only
    where its plan predicts a smaller error than its prior's bound; the
    covariance's prediction is the plan's simulated error on public
    synthetic data at ``Sigma = min_variance I``, where the noise is largest
    against the signal, and the mean's is its planned radius scaled to an
    expected error. The candidates are ``q`` among 1/16, 1/8, 1/4, 1/2, 3/4
    and 15/16 with both parts private (where both predictions beat the
    priors), ``q = 1`` with the prior covariance (and the prior mean too
    where even the whole budget leaves the mean worse than its prior), and
    ``q = 0`` with the prior mean; the fit takes the one of smallest
    ``||E||_F**2 / 4 + ||v||**2 / 2`` (the KL divergence for small
    covariance and mean errors ``E`` and ``v`` in the Mahalanobis metric),
    each error being the predicted one, at most its prior's bound. A part
    from its prior gives its budget to the other part; the budget is charged
    in full whatever the choice (the guarantee is the one declared;
    ``budget_split_`` records what each part got, and a budget spent on
    neither part as "not spent (public prior)"), and ``prior_parts_`` names
    the parts from the prior. The plans and this choice read
    ``n_samples``, ``n_features``, the budget, ``beta`` and the public bounds
    only, before the data are read: releasing a prior is releasing a
    constant, so privacy is unchanged. At ``epsilon = inf`` (no noise) both
    parts are fitted.
    Covariance step ``i`` whitens the pairs by the current ``A`` (``w = A
    z``), clips them to ``c_i``, and releases ``PSD(W.T W / m + Y)`` with
    symmetric Gaussian noise ``Y`` of scale ``c_i**2 / (m sqrt(rho_i))``: the
    Frobenius sensitivity is ``sqrt(2) c_i**2 / m``. Then ``A <- (Z + eta_i
    I)^(-1/2) A``, post-processing; the last release gives ``A^(-1) Z
    A^(-T)``. The number of steps, their budgets, radii and ridges come from
    :func:`~dpcov.distributions.best_covariance_plan`, which simulates each
    candidate plan on public synthetic data. The mean is estimated in the
    frame whose planned bound promises the smaller Mahalanobis error: the
    public one (covariance at most ``max_variance``, mean within
    ``mean_bound``) or the one whitened by the released covariance (bound
    ``plan.upper[-1]``); both are public once the covariance is released
    (``mean_frame_``). Mean step ``i`` projects the rows onto a ball of
    public radius around the current centre and releases their mean with
    noise of scale ``2 c_i / (n sqrt(2 rho_i))``. Steps compose: the rhos add
    up to rho. Unlike the reference code of [2]_, the whitening acts on
    columns consistently (its order is wrong for three or more steps) and the
    PSD projection clips eigenvalues (it returns the matrix absolute value).

    **The centred layout** (``covariance_rows_ == "centred"``, "coinpress"
    only) keeps all ``n`` rows for the covariance, in three parts of shares
    ``q1``, ``1 - q1 - q3`` and ``q3`` of rho, each a run of the CoinPress
    iterations of [2]_. (1) A coarse mean ``mu1`` in
    the public frame (planned radius ``r1``, final noise scale ``sigma1``).
    (2) The covariance iteration, planned on ``n`` rows, on ``y = x - mu1``;
    since ``A y = A (x - mu) + A (mu - mu1)``, each step widens its radius
    to ``c' = sqrt(c**2 + 2 s sqrt(t) o + o**2)`` with ``o = (tau / sqrt(d))
    sqrt(d t / n + sigma1**2 ||A||_F**2)``, ``t = K`` at the first step and
    1 after, ``s = sqrt(2 ln(2 / beta))``, and recomputes the noise scale
    ``sqrt(2) c'**2 / (n sqrt(2 rho_i))`` and the ridges from ``c'``. (3) The
    final mean of ``x - mu1`` in the frame whitened by the released
    covariance, from the radius ``||A|| r1``; the mean is ``mu1`` plus it,
    mapped back. Privacy: ``mu1`` is an earlier release, so replacing one row
    replaces one ``y``; ``c'`` is a function of public values and of ``A``
    (earlier releases), so each covariance step's Frobenius sensitivity is
    ``sqrt(2) c'**2 / n`` and it is ``rho_i``-zCDP given the past; the mean
    steps keep the mean iteration's sensitivity. By adaptive composition the
    parts are ``(q1 + (1 - q1 - q3) + q3) rho = rho``-zCDP;
    ``budget_split_`` lists every step ("coarse mean step i", "covariance
    step i", "mean step i"). The layout competes with the candidates above,
    under the same objective, with ``(q1, q3)`` among (1/16, 1/16), (1/8,
    1/8), (1/4, 1/8) and (1/8, 1/4); its predicted covariance error is the
    plan's simulated error on ``n`` rows plus the bias ``d (1 / n +
    sigma1**2)`` of centring at ``mu1``, its predicted mean error the
    whitened frame's planned error, and a candidate predicted worse than a
    prior is dropped. These are public values, read before the data.

    **method="klsu"** ([1]_, Sections 3-4). The rows are split by a public
    random permutation into three thirds. PPC runs ``r`` rounds of NaivePCE
    at ``rho / r`` on the pairs of the first third (the number of rounds
    comes from a public recursion of the condition bound, which must reach 16;
    otherwise ``fit`` raises before reading the data); NaivePCE on the whitened
    pairs of the second third gives the covariance; NaivePME (KVMean on each
    coordinate at ``rho / d``) on the whitened rows of the last third gives the
    mean. A row lies in one third, and the later parts only use earlier
    releases, so the fit is rho-zCDP by parallel composition (not 3 rho).

    Clipping to ``[min_variance, max_variance]`` and projecting the mean onto
    its ball are post-processing onto sets that contain the truth.

    **Signal to noise.** The final covariance release is ``A^(-1) (W.T W / m
    + Y) A^(-T)`` (times ``min_variance``), with symmetric Gaussian noise
    ``Y`` of public scale ``sigma``, whose largest eigenvalue is about ``2
    sqrt(d) sigma``; mapped back it is at most ``||A^(-1)||**2`` times that,
    which is ``noise_level_``. ``signal_to_noise_`` compares the largest
    released eigenvalue with it. When the public bounds are wrong or the
    rows too few (say raw wine data, whose proline column has a variance of
    about 1e5 against the default ``max_variance=1e4``), the release is
    mostly noise and its eigenvalues are clipped to ``max_variance``, and
    ``fit`` warns with :class:`~dpcov.exceptions.NoiseDominatedWarning`. No
    such figure is given for the mean alone: a released mean near zero is
    the right answer for centred data, so its norm says nothing about the
    noise; the mean is whitened by the released covariance, so a noisy
    covariance spoils it too.

    Every check of the parameters and of the plan (``n_samples``,
    ``n_features`` and the parameters only) comes before any arithmetic on
    the rows. Rows of any finite size are accepted without an overflow: in
    the frame scaled by ``1 / sqrt(min_variance)``, a row with an entry
    beyond ``2**1000`` (about 1e301) is first scaled down by a power of two
    to that bound. This is a fixed map of each row (neighbours stay
    neighbours); it keeps the row's direction, and such a row lies beyond
    every clipping radius of the fit either way.

    References
    ----------
    .. [1] Kamath, G., Li, J., Singhal, V. and Ullman, J. "Privately Learning
       High-Dimensional Distributions". COLT 2019.
       https://arxiv.org/abs/1805.00216.
    .. [2] Biswas, S., Dong, Y., Kamath, G. and Ullman, J. "CoinPress:
       Practical Private Mean and Covariance Estimation". NeurIPS 2020.
       https://arxiv.org/abs/2006.06618.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.distributions import MultivariateGaussian
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(loc=3.0, size=(20_000, 3)) * [1.0, 3.0, 10.0]
    >>> est = MultivariateGaussian(epsilon=1.0, delta=1e-6, random_state=0)
    >>> est.fit(X).mean_.round(1)
    array([ 3.,  9., 30.])
    >>> np.sqrt(np.diag(est.covariance_)).round(0)
    array([ 1.,  3., 10.])
    """

    _parameter_constraints: dict = {
        # epsilon = inf (no noise) is allowed for testing.
        "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "rho": [
            Interval(Real, 0, None, closed="neither"),
            Options(Real, {np.inf}),
            None,
        ],
        # Squared scales must stay in float64's normal range.
        "min_variance": [Interval(Real, 1e-150, 1e150, closed="both")],
        "max_variance": [Interval(Real, 1e-150, 1e150, closed="both")],
        "mean_bound": [Interval(Real, 0, 1e150, closed="both")],
        "method": [StrOptions({"coinpress", "klsu"})],
        "n_iterations": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "beta": [Interval(Real, 0, 1, closed="neither")],
        "accountant": [BudgetAccountant, None],
        "random_state": ["random_state", np.random.Generator],
    }

    # Gaussian noise only: rho-zCDP, no pure-DP variant (read by dpcov's checks).
    _zcdp_only = True
    _default_score = "frobenius"

    def _supports_hardened_noise(self):
        # CoinPress adds Gaussian noise only (exact discrete sampler); KLSU's
        # coarse histogram draws the largest of many Gaussians by inverse CDF.
        return self.method == "coinpress"

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-6,
        rho=None,
        min_variance=1e-4,
        max_variance=1e4,
        mean_bound=1e4,
        method="coinpress",
        n_iterations="auto",
        beta=0.1,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.min_variance = min_variance
        self.max_variance = max_variance
        self.mean_bound = mean_bound
        self.method = method
        self.n_iterations = n_iterations
        self.beta = beta
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, groups=None):
        """Fit the private Gaussian to X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows (at least 4; at least 6 for ``method="klsu"``).
            ``X`` itself is not modified.
        y : Ignored
            Not used, present for API consistency by convention.
        groups : None
            Refused when given: this estimator protects rows only (see the
            user guide's "One person, many rows").

        Returns
        -------
        self : object
            Returns the instance itself.
        """
        refuse_groups(groups, name=type(self).__name__, reason=_ROWS_ONLY)
        check_params_always(self)
        if not self.min_variance < self.max_variance:
            raise ValueError(
                f"min_variance={self.min_variance!r} must be smaller than "
                f"max_variance={self.max_variance!r}."
            )
        # The budget is checked against the accountant before the data are read.
        budget = self._check_budget()
        X = validate_rows(self, X, ensure_min_samples=4)
        rng = self._noise_generator(budget)
        n_samples, n_features = X.shape

        # The known scaling: I <= Sigma / min_variance <= K I.
        scale = math.sqrt(self.min_variance)
        condition = self.max_variance / self.min_variance
        radius = self.mean_bound / scale
        # The public plan (from n, d and the parameters only) and its checks,
        # then the fit is recorded: all before any arithmetic on the rows.
        plan = plan_gaussian(
            PlanInputs(
                n_samples,
                n_features,
                budget,
                condition,
                radius,
                method=self.method,
                beta=self.beta,
                n_iterations=self.n_iterations,
                min_variance=self.min_variance,
                mean_bound=self.mean_bound,
            )
        )
        self._spend_budget(budget)
        X_scaled = _scaled_rows(X, scale)
        if self.method == "coinpress":
            release = self._fit_coinpress(X_scaled, plan, rng)
        else:
            release = self._fit_klsu(X_scaled, plan, rng)

        # Post-processing onto sets that contain the truth under the public
        # bounds: eigenvalues in [1, K] (scaled), the mean in its ball.
        covariance = project_psd_bounded(release.covariance, condition, floor=1.0)
        self.covariance_ = self.min_variance * covariance
        self.precision_ = linalg.pinvh(self.covariance_)
        self.mean_ = scale * project_l2_ball(release.mean, radius)
        self.n_iterations_ = release.steps
        coinpress = self.method == "coinpress"
        self.mean_frame_ = plan.frame if coinpress else "whitened"
        self.prior_parts_ = plan.prior_parts if coinpress else ()
        self.covariance_rows_ = plan.rows if coinpress else "pairs"
        self._record_privacy(budget, release.split)
        self._report_noise(release.noise, n_features)
        return self

    def _report_noise(self, noise, n_features):
        """The noise figure and the warnings, from the release and public values."""
        # Signal to noise, from the release and public values only: the final
        # step adds symmetric noise of public scale `sigma` in the frame of its
        # whitening A (itself a function of earlier releases); its largest
        # eigenvalue is about 2 sqrt(d) sigma (semicircle edge), and mapped
        # back by A^(-1) . A^(-T) at most ||A^(-1)||**2 times that.
        sigma, frame = noise
        inverse_norm = 1.0 / linalg.svdvals(frame)[-1]
        noise_level = (
            self.min_variance * 2.0 * math.sqrt(n_features) * sigma * inverse_norm**2
        )
        top = float(linalg.eigvalsh(self.covariance_)[-1])
        signal_to_noise = top / noise_level if noise_level > 0 else np.inf
        self.noise_level_ = float(noise_level)
        self.signal_to_noise_ = float(signal_to_noise)
        if self.prior_parts_:
            # Public values only: the choice was made before the data were read.
            parts = " and ".join(self.prior_parts_)
            warn(
                f"{type(self).__name__}: with this budget and number of rows a "
                f"private {parts} would be dominated by noise (its planned error "
                "exceeds that of the public prior: min_variance * I for the "
                "covariance, the zero vector for the mean), so the prior was "
                "released instead (prior_parts_). Use a larger budget or more "
                "rows, or give public bounds closer to the data.",
                NoiseDominatedWarning,
            )
        warn_if_noise_dominated(
            self,
            signal_to_noise,
            what="fitted Gaussian",
            remedy="Use a larger budget or more rows, or give public bounds "
            "closer to the data (min_variance, max_variance, mean_bound): "
            "rescaling the data to unit-order scales often helps.",
        )

    def _fit_coinpress(self, X, plan, rng):
        if plan.rows == "centred":
            return self._fit_centred(X, plan, rng)
        n_features = X.shape[1]
        condition, radius = plan.inputs.condition, plan.inputs.radius
        shares, cov_plan, frame, prior_parts = (
            plan.shares,
            plan.cov_plan,
            plan.frame,
            plan.prior_parts,
        )
        split = {}
        if "covariance" in prior_parts:
            # The public prior, min_variance * I: no noise, no data read.
            covariance, whitening = np.eye(n_features), np.eye(n_features)
            noise = (0.0, np.eye(n_features))
            steps = {"covariance": 0}
        else:
            pairs = _pairs(X, rng)
            covariance, whitening, last = coinpress_covariance(
                pairs, cov_plan, rng, return_frame=True
            )
            for i, rho_step in enumerate(cov_plan.rhos, start=1):
                split[f"covariance step {i}"] = ZCDP(rho_step)
            noise = (cov_plan.noise_scales[-1], last)
            steps = {"covariance": cov_plan.n_steps}
        if "mean" in prior_parts:
            # The centre of the public ball.
            mean = np.zeros(n_features)
            steps["mean"] = 0
        else:
            if frame == "whitened":
                upper = cov_plan.upper[-1]
                # ||A mu|| <= ||A|| ||mu||: the prior radius in the whitened
                # frame (A is released, so this is public).
                prior = np.linalg.norm(whitening, 2) * radius
            else:
                whitening, upper, prior = np.eye(n_features), condition, radius
            mean_plan = plan_mean(plan.inputs, shares["mean"].rho, prior, upper)
            whitened_mean = coinpress_mean(
                X, mean_plan, rng, transform=whitening if frame == "whitened" else None
            )
            mean = linalg.solve(whitening, whitened_mean)
            for i, rho_step in enumerate(mean_plan.rhos, start=1):
                split[f"mean step {i}"] = ZCDP(rho_step)
            steps["mean"] = mean_plan.n_steps
        if not split:
            # Both parts from the public prior: the budget is charged as
            # declared and recorded as not spent on the rows.
            split = dict(shares)
        return GaussianFit(covariance, mean, split, steps, noise)

    def _fit_centred(self, X, plan, rng):
        # The centred layout: (1) a coarse mean mu1 in the public frame, (2)
        # the covariance of y = x - mu1 on all n rows, (3) the final mean of
        # A y in the frame whitened by the released covariance. Replacing a
        # row of X replaces one row of y (mu1 is an earlier release), and
        # every radius reads public values and earlier releases only: each
        # part is zCDP at its budget and the three compose adaptively to
        # q1 + (1 - q1 - q3) + q3 = 1 of rho.
        shares, coarse_plan, cov_plan = plan.shares, plan.coarse_plan, plan.cov_plan
        split = {}
        coarse = coinpress_mean(X, coarse_plan, rng)
        for i, rho_step in enumerate(coarse_plan.rhos, start=1):
            split[f"coarse mean step {i}"] = ZCDP(rho_step)
        # mu1 is bounded (rows projected around public centres plus noise),
        # so x - mu1 stays finite for rows within _scaled_rows's bound.
        centred = X - coarse
        covariance, whitening, last, scales = coinpress_centred_covariance(
            centred,
            cov_plan,
            rng,
            mean_noise=coarse_plan.noise_scales[-1],
            condition=plan.inputs.condition,
            beta=plan.inputs.beta,
        )
        for i, rho_step in enumerate(cov_plan.rhos, start=1):
            split[f"covariance step {i}"] = ZCDP(rho_step)
        # ||A (mu - mu1)|| <= ||A|| r1, with A released: a public radius.
        prior = np.linalg.norm(whitening, 2) * coarse_plan.predicted_error
        mean_plan = plan_mean(
            plan.inputs, shares["mean"].rho, prior, cov_plan.upper[-1]
        )
        whitened_mean = coinpress_mean(centred, mean_plan, rng, transform=whitening)
        mean = coarse + linalg.solve(whitening, whitened_mean)
        for i, rho_step in enumerate(mean_plan.rhos, start=1):
            split[f"mean step {i}"] = ZCDP(rho_step)
        steps = {
            "coarse mean": coarse_plan.n_steps,
            "covariance": cov_plan.n_steps,
            "mean": mean_plan.n_steps,
        }
        return GaussianFit(covariance, mean, split, steps, (scales[-1], last))

    def _fit_klsu(self, X, plan, rng):
        n_samples, n_features = X.shape
        conditions, n_pre = plan.conditions, plan.n_pre
        budget, radius = plan.inputs.budget, plan.inputs.radius
        n_cov = n_pre
        rho = budget.rho
        order = _noise.permutation(rng, n_samples)
        parts = np.split(order, [n_pre, n_pre + n_cov])
        pre = pair_differences(X[parts[0]]) / math.sqrt(2.0)
        A = ppc(pre, conditions=conditions, rho=rho, beta=self.beta / 3, rng=rng)
        final = conditions[-1]
        cov_pairs = pair_differences(X[parts[1]]) / math.sqrt(2.0)
        whitened = naive_pce(
            cov_pairs,
            rho=rho,
            beta=self.beta / 3,
            condition=final,
            rng=rng,
            transform=A,
        )
        A_inv = linalg.inv(A)
        covariance = A_inv @ whitened @ A_inv.T
        covariance = (covariance + covariance.T) / 2.0
        # A is a product of I - P / 2 (P orthogonal projections): ||A|| <= 1,
        # so every partial sum of A x is at most ||x|| <= sqrt(d) 2**1000 (the
        # rows' bound, _scaled_rows) and nothing overflows for d < 2**44.
        whitened_mean = naive_pme(
            X[parts[2]] @ A.T,
            rho=rho,
            beta=self.beta / 3,
            condition=final,
            radius=np.linalg.norm(A, 2) * radius,
            rng=rng,
        )
        mean = A_inv @ whitened_mean
        # The three parts are disjoint and each later part uses only earlier
        # releases: parallel composition, rho in all.
        split = {"preconditioner, covariance, mean (disjoint rows)": budget}
        steps = {"preconditioner": len(conditions) - 1, "covariance": 1, "mean": 1}
        # NaivePCE's public noise scale, in the frame of A (for the hint).
        sigma, _ = naive_pce_noise(
            cov_pairs.shape[0], n_features, final, rho, self.beta / 3
        )
        return GaussianFit(covariance, mean, split, steps, (sigma, A))

    def _check_rows(self, X, method):
        check_is_fitted(self)
        return validate_rows(self, X, reset=False, method=method)

    def score_samples(self, X):
        """Log-density of each row under the fitted Gaussian.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
            ``log N(x; mean_, covariance_)`` for each row.
        """
        X = self._check_rows(X, "score_samples")
        factor = linalg.cholesky(self.covariance_, lower=True)
        with quiet_float_errors():
            z = linalg.solve_triangular(
                factor, (X - self.mean_).T, lower=True, check_finite=False
            )
            squares = (z**2).sum(axis=0)
        log_det = 2.0 * np.log(np.diag(factor)).sum()
        n_features = self.covariance_.shape[0]
        log_density = -0.5 * (squares + log_det + n_features * math.log(2.0 * math.pi))
        # Rows too extreme for float64 arithmetic: a density of zero.
        return np.where(np.isnan(log_density), -np.inf, log_density)

    def score(self, X, y=None):
        """Mean log-density of the rows (larger is better, for model selection).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to score.
        y : Ignored
            Not used, present for API consistency by convention.

        Returns
        -------
        score : float
            Average of :meth:`score_samples`.
        """
        return float(np.mean(self.score_samples(X)))

    def sample(self, n_samples=1, random_state=None):
        """Draw rows from the fitted Gaussian (post-processing, no privacy cost).

        Parameters
        ----------
        n_samples : int, default=1
            Number of rows.
        random_state : int, numpy.random.Generator, RandomState or None, \
default=None
            Source of randomness; None draws from operating-system entropy.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            The rows.
        """
        check_is_fitted(self)
        check_n_draws(n_samples)
        rng = check_random_state(random_state)
        factor = linalg.cholesky(self.covariance_, lower=True)
        n_features = self.covariance_.shape[0]
        draws = _noise.synthetic_gaussian(rng, (int(n_samples), n_features))
        return self.mean_ + draws @ factor.T
