"""Private product distributions over {0, 1}^d (Kamath, Li, Singhal and Ullman 2019)."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils.validation import check_is_fitted

from ..accounting import BudgetAccountant
from ..base import PrivateEstimatorMixin, warn_if_noise_dominated
from ..mechanisms import _noise
from ..utils._docstrings import fill_doc
from ..utils._gram._units import refuse_groups
from ..utils._input import validate_rows
from ..utils._random import check_random_state
from ..utils._sklearn_compat import (
    Interval,
    Options,
    StrOptions,
    _fit_context,
    check_params_always,
)
from ..utils.validation import check_n_draws
from ._ppde import (
    naive_product_release,
    ppde_min_samples,
    ppde_release,
    ppde_schedule,
)

#: Why fit refuses groups (a person-level form is future work).
_ROWS_ONLY = "its private coordinates count rows"

# Fitted attributes that only method="ppde" sets (removed by a later fit with
# method="gaussian", so that no stale plan is left behind).
_PPDE_ATTRIBUTES = (
    "n_rounds_",
    "block_sizes_",
    "orientation_size_",
    "upper_bounds_",
    "truncation_radii_",
    "flipped_",
    "set_in_round_",
)


def default_min_probability(n_samples):
    """The "auto" floor on the estimated marginals, ``1 / (2 (n + 1))``.

    It is the smallest value that the add-1/2 (Krichevsky-Trofimov) estimate
    ``(count + 1/2) / (n + 1)`` can take, so a non-private smoothed estimate
    would never go below it; it keeps log-likelihoods finite. A function of
    ``n`` only, which is public under replace-one neighbours.

    Parameters
    ----------
    n_samples : int
        Number of training rows.

    Returns
    -------
    floor : float
        ``1 / (2 (n + 1))``.

    Examples
    --------
    >>> from dpcov.distributions._product import default_min_probability
    >>> default_min_probability(999)
    0.0005
    """
    return 1.0 / (2.0 * (n_samples + 1))


@fill_doc
class ProductBernoulli(PrivateEstimatorMixin, DensityMixin, BaseEstimator):
    """Private product of Bernoulli distributions over {0, 1}^d.

    Estimates the marginals ``p_j = P(x_j = 1)`` of a distribution over
    binary rows that is modelled as a product of independent Bernoullis, and
    releases them as ``probabilities_``; ``score_samples`` gives the
    log-likelihood of rows and ``sample`` draws new ones. The fit is
    rho-zCDP, hence (``epsilon``, ``delta``)-DP, with respect to replacing one
    row, for any input (after binarization every row lies in ``{0, 1}^d``,
    so no norm bound is needed). Two mechanisms are available: the Gaussian
    mechanism on the empirical marginals (``method="gaussian"``, default),
    and PPDE of Kamath, Li, Singhal and Ullman [1]_ (``method="ppde"``),
    which adds less noise to small marginals at the price of splitting the
    rows into about ``log2(d) + 2`` disjoint blocks.

    Read more in the :ref:`User Guide <product_bernoulli>`.

    Parameters
    ----------
    {epsilon_zcdp}
    {delta_zcdp}
    {rho}
    method : {"gaussian", "ppde"}, default="gaussian"
        "gaussian": one Gaussian mechanism on the empirical marginals (noise
        of standard deviation ``sqrt(d) / (n sqrt(2 rho))`` on every
        coordinate). "ppde": Algorithm 7 of [1]_ (see Notes); it needs
        many rows (``fit`` refuses below the public requirement of
        ``dpcov.distributions._ppde.ppde_min_samples``, 54,927 at
        ``d=1000, rho=0.5``) and, in dpcov's benchmark, it is more accurate
        than "gaussian" only from a few tens of thousands of features.
    orientation : {"private", "known"}, default="private"
        "known" asserts, publicly, that every marginal is at most 1/2 (e.g.
        sparse binary features); the estimates are then clipped to
        ``[min_probability_, 1/2]`` (free post-processing), and PPDE skips its
        orientation step, which would otherwise spend a tenth of the rows.
        The assertion must not be checked on the data; if it is false the fit
        stays private but is biased.
    binarize : float or None, default=None
        Threshold for binarizing the input, as in
        :class:`sklearn.naive_bayes.BernoulliNB`: entries above it count as 1,
        the others as 0. None means the input must already be binary (every
        entry 0 or 1; anything else raises a ValueError). The threshold is a
        public parameter; binarizing is row by row, so it costs no privacy.
    min_probability : "auto" or float, default="auto"
        The estimates are clipped to ``[min_probability, 1 - min_probability]``
        (post-processing), so that log-likelihoods stay finite: a noisy
        marginal can be 0 where a held-out row has a 1. "auto" uses ``1 / (2 (n
        + 1))`` (``default_min_probability``), the smallest value of the
        add-1/2 (Krichevsky-Trofimov) estimate; 0 keeps the clipped release
        as is. In [0, 1/2).
    beta : float, default=0.1
        Failure probability of PPDE's truncation radii and of its public
        sample-size requirement, in (0, 1). Ignored by "gaussian".
    {accountant}
    {random_state}

    Attributes
    ----------
    probabilities_ : ndarray of shape (n_features,)
        Estimated marginals: the private release, clipped to
        ``[min_probability_, 1 - min_probability_]`` (``[min_probability_,
        1/2]`` with ``orientation="known"``).
    noise_std_ : ndarray of shape (n_features,)
        Standard deviation of the Gaussian noise in each coordinate's
        estimate: public for "gaussian"; for "ppde" it is that of the round
        that set the coordinate, a function of the private outputs only.
    min_probability_ : float
        The floor used (public: a function of ``n_samples``).
    signal_to_noise_ : float
        Median over the coordinates of ``min(p_j, 1 - p_j) / noise_std_[j]``
        (``p = probabilities_``; ``inf`` where the noise is zero): the released
        probability of each coin's rarer outcome over its noise. Computed from
        the release and public values only. Below 1 most marginals are
        mostly noise, and ``fit`` warns with
        :class:`~dpcov.exceptions.NoiseDominatedWarning`. See Notes.
    n_rounds_ : int
        PPDE only: number of rounds, the final one included (public plan).
    block_sizes_ : ndarray of shape (`n_rounds_`,)
        PPDE only: rows of each round (public plan).
    orientation_size_ : int
        PPDE only: rows of the orientation step, 0 when the orientation is
        known (public plan).
    upper_bounds_ : ndarray of shape (`n_rounds_`,)
        PPDE only: bound ``u_r`` on the marginals still active in each round,
        in the flipped frame (public plan).
    truncation_radii_ : ndarray of shape (`n_rounds_`,)
        PPDE only: truncation radius ``B_r`` of each round, from ``u_r`` and
        the number of active coordinates (a function of earlier private
        outputs; NaN for a round left with no coordinates).
    flipped_ : ndarray of bool of shape (n_features,)
        PPDE only: coordinates whose noisy orientation mean exceeded 1/2
        (post-processing of the private orientation step; all False when the
        orientation is known).
    set_in_round_ : ndarray of int of shape (n_features,)
        PPDE only: round that set each coordinate (post-processing of the
        private rounds).
    {privacy_attributes_zcdp}
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    sklearn.naive_bayes.BernoulliNB : Non-private per-class Bernoulli products.
    sklearn.neighbors.KernelDensity : Non-private density estimation.

    Notes
    -----
    **Privacy unit.** Neighbouring datasets differ in one row (replace-one);
    ``n_samples`` and ``n_features`` are public. Rows are binarized (or
    checked to be binary) first, so every row the mechanisms see lies in
    ``{0, 1}^d``. With ``binarize=None`` the data's domain is ``{0, 1}^d``
    itself: the guarantee covers neighbours in that domain, and a dataset
    with a non-binary entry is outside it and refused (the message names no
    row or value). Set ``binarize`` to make every finite real row part of
    the domain.

    **"gaussian".** The empirical marginals have L2 sensitivity ``sqrt(d) /
    n``: two rows of ``{0, 1}^d`` differ by a vector of ``{-1, 0, 1}^d``.
    Gaussian noise of standard deviation ``sqrt(d) / (n sqrt(2 rho))`` makes
    the release rho-zCDP; clipping is post-processing. ``budget_split_`` is
    ``{"marginals": ZCDP(rho)}``.

    **"ppde"** ([1]_, Algorithm 7, with thresholds derived for dpcov). A
    public shuffle assigns the rows to disjoint blocks. Step 0 (private
    orientation, a tenth of the rows) releases the noisy mean (sensitivity
    ``sqrt(d) / n_0``) and flips the coordinates above 1/2. Then
    ``R = ceil(log2(u_1 d))`` rounds halve a bound ``u_r`` (from ``u_1 =
    5/8``, or 1/2 with a known orientation) until it is at most ``1 / d``,
    and a final round follows; each releases the mean of its block's rows,
    restricted to the still-active coordinates and truncated to the L2 radius
    ``B_r = sqrt(mu + sqrt(2 mu L) + 2 L / 3)`` (``mu = u_r |S_r|``,
    Bernstein), plus Gaussian noise; coordinates whose noisy value exceeds
    ``u_r / 4`` are set (clipped to ``[u_r / 8, u_r]``) and leave. The
    truncated mean has L2 sensitivity ``min(sqrt(2) B_r, sqrt(|S_r|)) /
    n_r``: truncation is a projection onto a ball, hence 1-Lipschitz (the
    ``sqrt(|S_r|)`` term), and two truncated binary rows lie in the
    nonnegative orthant, so their distance is at most ``sqrt(2) B_r``, not
    the paper's ``2 B_r``. Each step is rho-zCDP on its own block and reads
    no other row; what a step does depends only on the earlier private
    outputs. By (adaptive) parallel composition the fit is rho-zCDP, not
    ``rho`` times the number of steps; ``budget_split_`` records this as one
    entry, ``{"blocks (parallel composition)": ZCDP(rho)}``. Before reading
    the data, ``fit`` checks that the steps whose inputs are public (the
    orientation step and round 1) can meet the error margins of the paper's
    invariant (1/8 and ``u_1 / 8``) with probability ``1 - beta``, and
    raises a ValueError stating the number of rows needed otherwise.

    **Default.** PPDE's noise on a small marginal scales with the
    truncation radius (down to about ``sqrt(log n)``) instead of
    ``sqrt(d)``, but each round sees only ``n / (log2(d) + 2)`` rows, which
    multiplies the sampling error and the noise on the large marginals. In
    dpcov's benchmark (``python -m benchmarks run product``, rho=0.5, exact TV
    bounds through the Bhattacharyya coefficient) "gaussian" has the
    smaller TV at ``d`` up to 5,000 at every ``n`` (``d=1000``, sparse
    marginals, ``n=2e5``: TV at most 0.066 against 0.19; ``d=5000``,
    ``n=2e6``: 0.067 against 0.12), the two are about even at ``d=20000``
    (``n=1e7``: 0.10 against 0.12), and PPDE wins at ``d=50000`` (``n=1e7``:
    0.26 against 0.44; ``n=3e7``: 0.11 against 0.14), sizes that only fit
    in memory as sparse matrices. Hence "gaussian" is the default.

    **Signal to noise.** A marginal's information is in its rarer outcome:
    ``p_j = 0.02`` released with noise of standard deviation 0.05 cannot be
    told from 0 or from 0.1, although ``1 - p_j`` is far above the noise.
    So each coordinate's figure is ``min(p_j, 1 - p_j) / noise_std_[j]``,
    symmetric under relabelling 0 and 1 (which PPDE's orientation step
    does), and meaningful for a biased coin whatever the other marginals
    are (unlike their spread, which is zero when all coins are alike).
    ``signal_to_noise_`` is the median over the coordinates, so one rare
    feature does not trigger the warning, but a fit where most marginals
    are within their noise of 0 or 1 does.

    A seeded fit (``random_state`` not None) is reproducible and therefore
    not private against whoever knows the seed.

    References
    ----------
    .. [1] Kamath, G., Li, J., Singhal, V. and Ullman, J. "Privately Learning
       High-Dimensional Distributions". COLT 2019, Section 5.
       https://arxiv.org/abs/1805.00216.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.distributions import ProductBernoulli
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((20000, 4)) < [0.5, 0.3, 0.1, 0.01]).astype(float)
    >>> est = ProductBernoulli(epsilon=1.0, delta=1e-6, random_state=0).fit(X)
    >>> est.probabilities_.round(2)
    array([0.5 , 0.3 , 0.1 , 0.01])
    >>> est.sample(3, random_state=0).shape
    (3, 4)
    """

    # zCDP only: delta=0 without rho is refused (read by dpcov's DP checks).
    _zcdp_only = True
    _default_score = "log_likelihood"
    # Every mechanism has an exact sampler (secure_noise; read by _check_budget).
    _hardened_noise = True
    # Rows must lie in {0, 1}^d (dpcov's DP checks then give binary data).
    _binary_input = True

    _parameter_constraints: dict = {
        # epsilon = inf (no noise) is allowed for testing.
        "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "rho": [
            Interval(Real, 0, None, closed="neither"),
            Options(Real, {np.inf}),
            None,
        ],
        "method": [StrOptions({"gaussian", "ppde"})],
        "orientation": [StrOptions({"private", "known"})],
        "binarize": [None, Interval(Real, None, None, closed="both")],
        "min_probability": [
            StrOptions({"auto"}),
            Interval(Real, 0, 0.5, closed="left"),
        ],
        "beta": [Interval(Real, 0, 1, closed="neither")],
        "accountant": [BudgetAccountant, None],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-6,
        rho=None,
        method="gaussian",
        orientation="private",
        binarize=None,
        min_probability="auto",
        beta=0.1,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.method = method
        self.orientation = orientation
        self.binarize = binarize
        self.min_probability = min_probability
        self.beta = beta
        self.accountant = accountant
        self.random_state = random_state

    def _binary_rows(self, X, *, reset, method):
        # Validated rows as a bool array; the same rule in fit and score.
        X = validate_rows(self, X, reset=reset, dtype=None, method=method)
        if self.binarize is not None:
            return X > self.binarize
        if X.dtype == np.bool_:
            return X
        if not np.all((X == 0) | (X == 1)):
            raise ValueError(
                f"{type(self).__name__} models rows in {{0, 1}}^d: with "
                "binarize=None every entry of X must be 0 or 1. Pass "
                "binarize=threshold to map the entries above a threshold to 1."
            )
        return X != 0

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, groups=None):
        """Fit the private product distribution to X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Binary training data (every entry 0 or 1), or any numeric data
            when ``binarize`` is set. Not modified.
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
        # Declarative validation is skipped under skip_parameter_validation=True;
        # a private estimator validates its parameters regardless.
        check_params_always(self)
        budget = self._check_budget()  # before the data are read
        X = self._binary_rows(X, reset=True, method="fit")
        rng = self._noise_generator(budget)
        n_samples, n_features = X.shape

        if self.method == "ppde":
            # Public pre-check (n, d, rho, beta only), before any row is used.
            n_min = ppde_min_samples(
                n_features, rho=budget.rho, orientation=self.orientation, beta=self.beta
            )
            if n_samples < n_min:
                raise ValueError(
                    f"method='ppde' needs at least {n_min} samples at "
                    f"n_features={n_features}, rho={budget.rho:.4g}, "
                    f"orientation={self.orientation!r}, beta={self.beta}: below "
                    "that, its first step cannot meet the error margin of the "
                    f"algorithm's invariant; got {n_samples}. Use "
                    "method='gaussian' (more accurate at most sizes), more rows "
                    "or a larger budget."
                )
            # Every step runs at the whole budget on its own disjoint block.
            self._spend_budget(budget)
            release = ppde_release(
                X, rho=budget.rho, rng=rng, orientation=self.orientation, beta=self.beta
            )
            split = {"blocks (parallel composition)": budget}
        else:
            self._spend_budget(budget)
            release = naive_product_release(X, rho=budget.rho, rng=rng)
            split = {"marginals": budget}

        # Post-processing: the floor keeps log-likelihoods finite; a known
        # orientation (public) bounds every marginal by 1/2.
        if self.min_probability == "auto":
            floor = default_min_probability(n_samples)
        else:
            floor = float(self.min_probability)
        ceiling = 0.5 if self.orientation == "known" else 1.0 - floor
        self.probabilities_ = np.clip(release.marginals, floor, ceiling)
        self.noise_std_ = release.noise_std
        self.min_probability_ = floor

        if self.method == "ppde":
            plan = ppde_schedule(n_samples, n_features, orientation=self.orientation)
            self.n_rounds_ = plan.n_rounds
            self.block_sizes_ = np.array(plan.block_sizes, dtype=np.intp)
            self.orientation_size_ = plan.n_orientation
            self.upper_bounds_ = np.array(plan.upper_bounds)
            self.truncation_radii_ = np.array([step.radius for step in release.rounds])
            self.flipped_ = release.flipped
            self.set_in_round_ = release.set_in_round
        else:
            for name in _PPDE_ATTRIBUTES:
                if hasattr(self, name):
                    delattr(self, name)

        self._record_privacy(budget, split)
        # Signal to noise, from the release and public values only (Notes).
        rarer = np.minimum(self.probabilities_, 1.0 - self.probabilities_)
        noise = self.noise_std_
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.where(noise > 0, rarer / noise, np.inf)
        self.signal_to_noise_ = float(np.median(ratios))
        warn_if_noise_dominated(
            self,
            self.signal_to_noise_,
            what="typical marginal",
            remedy="Use a larger budget or more rows, or release fewer features.",
        )
        return self

    def score_samples(self, X):
        """Log-likelihood of each row under the fitted product distribution.

        ``sum_j x_j log(p_j) + (1 - x_j) log(1 - p_j)`` with ``p =
        probabilities_`` (post-processing of the release; no privacy cost on
        the training data, but scoring other private data is a release about
        them).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Binary rows (binarized with ``binarize`` when it is set).

        Returns
        -------
        log_likelihood : ndarray of shape (n_samples,)
            Natural-log likelihood of each row (``-inf`` only with
            ``min_probability=0``).
        """
        check_is_fitted(self)
        X = self._binary_rows(X, reset=False, method="score_samples")
        with np.errstate(divide="ignore"):
            log_p = np.log(self.probabilities_)
            log_q = np.log1p(-self.probabilities_)
        out = np.empty(X.shape[0])
        # Chunks of rows keep the (rows x d) temporary near 32 MiB.
        step = max(1, (1 << 22) // max(1, X.shape[1]))
        for start in range(0, X.shape[0], step):
            chunk = X[start : start + step]
            out[start : start + step] = np.where(chunk, log_p, log_q).sum(axis=1)
        return out

    def score(self, X, y=None):
        """Mean log-likelihood of the rows of X (higher is better).

        For model selection (``GridSearchCV``) on held-out rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Binary rows (binarized with ``binarize`` when it is set).
        y : Ignored
            Not used, present for API consistency by convention.

        Returns
        -------
        score : float
            Mean of :meth:`score_samples`.
        """
        return float(np.mean(self.score_samples(X)))

    def sample(self, n_samples=1, random_state=None):
        """Draw binary rows from the fitted product distribution.

        Post-processing of the release: sampling costs no privacy.

        Parameters
        ----------
        n_samples : int, default=1
            Number of rows to draw, positive.
        random_state : int, numpy.random.Generator, RandomState or None, \
default=None
            Source of the draws (None: fresh operating-system entropy).

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            Rows of 0.0 and 1.0; coordinate ``j`` is 1 with probability
            ``probabilities_[j]``, independently.
        """
        check_is_fitted(self)
        check_n_draws(n_samples)
        rng = check_random_state(random_state)
        draws = _noise.synthetic_uniform(
            rng, (int(n_samples), self.probabilities_.shape[0])
        )
        return (draws < self.probabilities_).astype(np.float64)
