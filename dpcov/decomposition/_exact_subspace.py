"""Private exact subspace estimation (Singhal and Steinke, 2021, Section 3)."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
import math
from numbers import Integral

from ..accounting import ApproxDP
from ..accounting._composition import _left
from ..exceptions import NoStableSubspace
from ..mechanisms import _noise
from ..mechanisms._stability import stability_noise, stability_threshold
from ..utils._docstrings import fill_doc
from ..utils._exact import (
    IntegerSpan,
    direction,
    integer_matrix,
    max_hyperplane_count,
    rref,
)
from ..utils._gram._units import refuse_groups
from ..utils._pairs import pair_differences
from ..utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
)
from ._subspace_base import BaseSubspace

#: Why fit refuses groups (a person-level form is future work).
_ROWS_ONLY = (
    "its sample-and-aggregate blocks are blocks of rows, and one person's rows "
    "would have to share one block"
)

#: Largest public worst-case work of the exact hyperplane count (see
#: hyperplane_work; about 20 s), and number of k-subsets
#: ("gap") that fit accepts.
MAX_HYPERPLANE_WORK = 2 * 10**7
MAX_ENUMERATION = 10**5


def subspace_score(X, span):
    """Score ``q = c - m`` of a subspace on integer rows (exact).

    ``c`` is the number of rows in the subspace, ``m`` the largest number in
    one of its proper subspaces (a hyperplane of it). The score has
    sensitivity 1 under replacing a row (Singhal and Steinke 2021, Section 3).

    Parameters
    ----------
    X : ndarray of object (Python int) of shape (n, d)
        Integer rows (see :func:`dpcov.utils._exact.integer_rows`).
    span : IntegerSpan
        The subspace.

    Returns
    -------
    count : int
        ``c``.
    hyperplane : int
        ``m``.
    """
    inside = span.contains(X)
    coords = span.coordinates(X[inside])
    return int(inside.sum()), max_hyperplane_count(coords, span.dim)


def enumerate_scores(X, k):
    """Scores of every k-dimensional span of rows (exact enumeration).

    Every k-dimensional subspace with a positive score is spanned by rows, so
    this covers all candidates of ``selection="gap"``. Cost: ``C(n, k)`` spans.

    Parameters
    ----------
    X : ndarray of object (Python int) of shape (n, d)
        Integer rows.
    k : int
        Dimension.

    Returns
    -------
    scores : dict of key to (IntegerSpan, int)
        Each distinct span and its score ``q``.
    """
    lines = {}
    for row in X.tolist():
        if any(row):
            lines.setdefault(direction(row), row)
    scores = {}
    for subset in itertools.combinations(lines.values(), k):
        pivots, reduced = rref(subset)
        if len(pivots) < k:
            continue
        span = IntegerSpan(pivots, reduced)
        if span.key not in scores:
            count, hyperplane = subspace_score(X, span)
            scores[span.key] = (span, count - hyperplane)
    return scores


def hyperplane_work(n, k):
    """Public worst-case cost of the bounded hyperplane search of "majority".

    The search only decides whether some hyperplane of the candidate holds
    ``stop_at`` of its ``c`` rows. It branches on at most ``c - stop_at + 1``
    rows at each of the ``k - 2`` levels above the plane, where one hashing
    pass of ``O(n)`` settles it, and a positive ``stop_at`` needs ``c`` about
    ``n / 2`` above it: at most ``C(n / 2 + k - 2, k - 2)`` passes. Exact
    integers grow by about a factor 2 in length per level, hence the
    ``2 ** (k - 2)``.

    Parameters
    ----------
    n : int
        Rows.
    k : int
        Dimension.

    Returns
    -------
    work : int
        ``C(n // 2 + k - 2, k - 2) * n * 2 ** (k - 2)`` (``n`` for ``k <= 2``).

    Examples
    --------
    >>> from dpcov.decomposition._exact_subspace import hyperplane_work
    >>> hyperplane_work(1000, 3)
    1002000
    """
    if k <= 2:
        return n
    return math.comb(n // 2 + k - 2, k - 2) * n * 2 ** (k - 2)


def search_trials(k, failure):
    """Number of random k-subsets that find a majority subspace w.p. >= 1 - failure.

    When a subspace has score ``q > n / 2``, each point sampled uniformly
    lies in it and outside the span of the earlier ones (a proper subspace)
    with probability ``> 1/2``, so one trial finds it with probability
    ``> 2**-k``; ``R`` independent trials all miss with probability at most
    ``(1 - 2**-k)**R``.

    Parameters
    ----------
    k : int
        Dimension.
    failure : float
        Allowed miss probability, in (0, 1).

    Returns
    -------
    trials : int
        The smallest ``R`` with ``(1 - 2**-k)**R <= failure``.

    Examples
    --------
    >>> from dpcov.decomposition._exact_subspace import search_trials
    >>> search_trials(3, 1e-7)
    121
    """
    return math.ceil(math.log(failure) / math.log1p(-(2.0**-k)))


def majority_search(X, k, trial_rows):
    """The most populated span among the sampled k-subsets of rows.

    Parameters
    ----------
    X : ndarray of object (Python int) of shape (n, d)
        Integer rows.
    k : int
        Dimension.
    trial_rows : ndarray of int of shape (R, k)
        Row indices of each trial, drawn independently of the data.

    Returns
    -------
    span : IntegerSpan or None
        The span with the largest count among those found (None if no trial
        drew k independent rows).
    inside : ndarray of bool of shape (n,) or None
        Which rows lie in it (its count ``c`` is ``inside.sum()``).
    """
    found = []  # (count, span, inside), counted once each
    for trial in trial_rows:
        rows = X[trial]
        known = None
        for _, span, _ in found:
            if span.contains(rows).all():
                known = span
                break
        if known is not None:
            # Rows inside a known span either span it or are dependent:
            # nothing new either way.
            continue
        pivots, reduced = rref(rows.tolist())
        if len(pivots) < k:
            continue
        span = IntegerSpan(pivots, reduced)
        inside = span.contains(X)
        found.append((int(inside.sum()), span, inside))
        found.sort(key=lambda item: -item[0])
    if not found:
        return None, None
    _, span, inside = found[0]
    return span, inside


@fill_doc
class ExactSubspace(BaseSubspace):
    """Private subspace of data lying exactly in a k-dimensional subspace.

    Releases the k-dimensional subspace through the origin that contains
    most rows, when it is the stable winner, or raises
    :class:`~dpcov.exceptions.NoStableSubspace` (the bottom outcome, itself
    a private answer). (``epsilon``, ``delta``)-DP with respect to replacing
    one row, with ``delta > 0``: a stability argument, with no pure or zCDP
    form. No norm bound is needed: only incidences (which rows lie in which
    subspaces) are used, decided exactly.

    Succeeds with certainty when all but ``l`` rows lie in a k-dimensional
    subspace ``S``, no subspace of dimension below ``k`` holds more than
    ``l`` rows, and ``n >= 4 l + 4 B + 4`` ("majority") or
    ``n >= 3 l + 4 B + 3`` ("gap"), with ``B = log(1 + (e**epsilon - 1) /
    (2 delta)) / epsilon`` (about 13.7 at ``epsilon=1, delta=1e-6``): the
    sample size does not grow with ``n_features`` [1]_.

    Read more in the :ref:`User Guide <exact_subspace>`.

    Parameters
    ----------
    n_components : int or None, default=None
        Dimension ``k`` of the subspace; None means ``n_features`` (the
        whole space).
    epsilon : float, default=1.0
        Privacy-loss parameter, positive (``epsilon <= 1`` is the paper's
        regime). ``inf`` drops the noise and keeps the bare stability test
        (not private; for testing).
    delta : float, default=1e-6
        In (0, 1); choose it well below ``1 / n_samples``. Must be positive.
    selection : {"majority", "gap"}, default="majority"
        "majority" (a majority-margin test): a random search over spans of
        k sampled rows finds the unique subspace with score above ``n / 2``,
        if there is one, and the margin by which it clears ``n / 2`` passes
        a noisy stability test; tolerates fewer than ``n / 4`` outliers.
        The search misses with probability at most ``delta_search``
        (a tenth of ``delta``, see Notes). "gap" (a noisy-gap test): exact
        enumeration of all ``C(n, k)`` spans and a noisy test on the gap
        between the two best scores; tolerates fewer than ``n / 3``
        outliers, but costs ``C(n, k)`` span scores (refused above
        ``1e5``).
    n_outliers : int or None, default=None
        Public number ``l`` of rows the user expects outside the subspace,
        used only to check before reading the data that ``n`` meets the
        certain-success bound above (a ValueError says how many rows are
        needed). None skips the check.
    assume_centered : bool, default=False
        If True, the subspace passes through the origin (the paper's
        setting) and the rows are used as they are. If False, the rows are
        paired up (``X[2i + 1] - X[2i]``) and the differences are used: they
        lie in the direction space of an affine subspace that holds the
        rows, whose offset is not released; this halves the rows. A pair
        whose difference overflows float64 is represented by half of it,
        ``X[2i + 1] / 2 - X[2i] / 2`` (the same line through the origin).
    {accountant}
    {random_state}

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Orthonormal basis of the released subspace (from its exact reduced
        row echelon basis, then orthonormalised in floating point).
    n_components_ : int
        Dimension ``k``.
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
        ``delta`` (the search's share included).
    rho_spent_ : float
        ``inf``: an (epsilon, delta)-DP guarantee with ``delta > 0`` bounds no
        zCDP parameter.
    budget_split_ : dict of str to ApproxDP
        "selection": the stability test; with "majority", also "search":
        ``(0, (1 + e**epsilon) delta_search)``, the price of a random search
        that may miss (total variation to the exhaustive search). They add
        up to ``guarantee_``.
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
    ApproximateSubspace : Data close to, not exactly in, a subspace.
    PCA : Private principal axes from a private covariance.

    Notes
    -----
    **Score.** For a subspace ``S`` let ``c(S)`` count the rows in ``S``
    and ``m(S)`` the most rows in one proper subspace of ``S``;
    ``q(S) = c(S) - m(S)``. Replacing a row changes ``c`` and ``m`` by at
    most 1 each, in the same direction (a row in ``T`` inside ``S`` is in
    ``S``), so ``q`` has sensitivity 1. At most one subspace has
    ``q > n / 2`` (for two incomparable subspaces ``c(S) + c(S') <= n +
    c(S & S')`` and ``c(S & S') <= m(S)``; nested ones use ``m(S') >=
    c(S)``).

    **"majority" is (epsilon, delta)-DP.** Let ``S1`` be the subspace with
    ``q > n / 2`` (if any) and ``v = q(S1) - n / 2``, ``-inf`` if none.
    Release ``S1`` when ``v + Z > 1 + A``, ``Z ~ TLap(1, epsilon,
    delta_rel)`` on ``[-A, A]``. A release needs ``v > 1``; then ``S1`` has
    score above ``n / 2`` on every neighbour, so it is the candidate on both,
    and the outcome is a post-processing of ``v + Z`` ((epsilon,
    delta_rel)-DP by the truncated Laplace mechanism). If both neighbours
    have ``v <= 1``, both output bottom surely. The search is random: if
    ``v > 1``, a trial of ``k`` uniformly drawn rows spans ``S1`` with
    probability above ``2**-k``, so ``R = log(delta_s) / log(1 - 2**-k)``
    trials all miss with probability at most ``delta_s``, and a miss only
    turns a release into bottom (no other subspace can have
    ``q > n / 2``). The implemented mechanism is within total variation
    ``delta_s`` of the exact one on every dataset, hence (epsilon,
    delta_rel + (1 + e**epsilon) delta_s)-DP. This estimator takes
    ``(1 + e**epsilon) delta_s = delta / 10`` and ``delta_rel = 0.9
    delta``, so the total is ``delta``.

    **"gap" is (epsilon, delta)-DP.** Let ``q1`` be the best score over all
    k-dimensional subspaces, ``S1`` its maximiser and ``q2`` the best score
    of any other (0 if none is positive); ``g = q1 - q2`` has sensitivity 2.
    Release ``S1`` when ``g + Z > 2 + A``, ``Z ~ TLap(2, epsilon, delta)``.
    A release needs ``g > 2``, and then ``S1`` is the unique maximiser on
    every neighbour; the rest is as above.

    The selection rule of the paper ([1]_, Algorithm 1), read as a noisy
    argmax with a bottom candidate scored relative to the runner-up, is not
    private in the worst case when the candidates are data-dependent;
    "majority" and "gap" are provable replacements, with the proofs above.

    **No signal-to-noise figure.** Unlike the noise-addition estimators,
    this class has no ``signal_to_noise_`` and never warns with
    :class:`~dpcov.exceptions.NoiseDominatedWarning`: the noise of the
    stability test decides only whether the subspace is released (otherwise
    the fit raises), not how far it is off, so there is no noise scale to
    compare the released projector with. The noisy score cannot be released
    itself (on a neighbouring dataset it may not exist).

    **Exact arithmetic.** The uniqueness and sensitivity facts are lattice
    facts (a point in ``S`` and in ``S'`` is in ``S & S'``) that fail for
    membership up to a floating-point tolerance, which could make
    neighbours release different subspaces. So every float row is converted
    exactly to a primitive integer vector on the same line (floats are
    dyadic rationals), and membership, spans and hyperplane counts use exact
    integer and rational arithmetic: the proof holds for the values passed,
    as they are. The flip side: rows computed in floating point (say
    ``Z @ B``) are generally *not* exactly in a subspace, and then the
    answer is bottom. Use integer or exactly representable data (or round
    the data onto a rational grid whose spacing is public and that keeps the
    structure); for data only close to a subspace use
    :class:`ApproximateSubspace`.

    **Cost.** ``m(S)`` (the most rows on a hyperplane of ``S``) is NP-hard
    as ``k`` grows; it is computed exactly by a branch and bound that only
    decides the comparison the test needs, at a worst-case cost of about
    ``C(n / 2 + k - 2, k - 2) n 2**(k - 2)`` steps (refused above ``2e7``, a
    public check on ``n`` and ``k``: ``k = 3`` up to about 4,400 rows,
    ``k = 4`` up to about 340). Running time depends on the data (a timing
    side channel, out of scope like for every dpcov estimator).

    References
    ----------
    .. [1] Singhal, V. and Steinke, T. "Privately Learning Subspaces".
       NeurIPS 2021. https://arxiv.org/abs/2106.00001

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.decomposition import ExactSubspace
    >>> rng = np.random.default_rng(0)
    >>> basis = rng.integers(-5, 6, size=(2, 6))
    >>> X = (rng.integers(-9, 10, size=(200, 2)) @ basis).astype(float)
    >>> est = ExactSubspace(n_components=2, assume_centered=True,
    ...                     random_state=0).fit(X)
    >>> est.components_.shape
    (2, 6)
    >>> bool(np.allclose(X, est.inverse_transform(est.transform(X))))
    True
    """

    # What is released is a function of the data; the randomness only decides
    # whether (read by dpcov's DP checks).
    _deterministic_release = True

    _parameter_constraints: dict = {
        **BaseSubspace._parameter_constraints,
        "selection": [StrOptions({"majority", "gap"})],
        "n_outliers": [Interval(Integral, 0, None, closed="left"), None],
    }

    def __init__(
        self,
        n_components=None,
        *,
        epsilon=1.0,
        delta=1e-6,
        selection="majority",
        n_outliers=None,
        assume_centered=False,
        accountant=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.selection = selection
        self.n_outliers = n_outliers
        self.assume_centered = assume_centered
        self.accountant = accountant
        self.random_state = random_state

    def required_samples(self, n_outliers=0, n_components=1):
        """Return the rows that guarantee success with ``n_outliers`` outliers.

        A public quantity: ``4 l + 4 B + 4`` ("majority") or ``3 l + 4 B +
        3`` ("gap"), times 2 unless ``assume_centered`` (the pairing), with
        ``B`` the truncated Laplace bound at sensitivity 1 and ``l =
        max(n_outliers, n_components - 1)``: the second assumption of the
        paper (no subspace of lower dimension holds more than ``l`` rows)
        needs ``l >= k - 1``, as ``k - 1`` rows span a hyperplane.

        Parameters
        ----------
        n_outliers : int, default=0
            Rows off the subspace.
        n_components : int, default=1
            Dimension ``k``.

        Returns
        -------
        n_samples : int
            Rows that make the release certain.
        """
        n_outliers = max(n_outliers, n_components - 1)
        epsilon, delta = self.epsilon, self.delta
        if self.selection == "majority":
            delta = 0.9 * delta  # the test's share (class Notes)
        if math.isinf(epsilon):
            bound = 0.0
        else:
            bound = math.log1p(math.expm1(epsilon) / (2.0 * delta)) / epsilon
        if self.selection == "majority":
            needed = 4 * n_outliers + 4 * bound + 4
        else:
            needed = 3 * n_outliers + 4 * bound + 3
        needed = math.floor(needed) + 1
        return needed if self.assume_centered else 2 * needed

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, groups=None):
        """Release the subspace that holds the rows of X, or raise.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; used exactly as given (no clipping is needed).
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
        NoStableSubspace
            The private answer is bottom: no subspace won stably.
        """
        refuse_groups(groups, name=type(self).__name__, reason=_ROWS_ONLY)
        X, budget, rng, k = self._start_fit(X)
        n_samples, n_features = X.shape
        # Public checks (n, d and the parameters) before any arithmetic on
        # the rows: n is the number of rows or of pair differences.
        n = n_samples if self.assume_centered else n_samples // 2
        minimum = 3 if self.assume_centered else 6
        if n_samples < minimum:
            raise ValueError(
                f"ExactSubspace needs at least {minimum} samples "
                f"(n_samples={n_samples}): a release needs a score above n/2 + 1."
            )
        if self.n_outliers is not None:
            needed = self.required_samples(self.n_outliers, k)
            if n_samples < needed:
                raise ValueError(
                    f"n_samples={n_samples} is below the {needed} rows that make "
                    f"the release certain with n_outliers={self.n_outliers} at "
                    f"epsilon={self.epsilon}, delta={self.delta} "
                    f"(selection={self.selection!r})."
                )
        if hyperplane_work(n, k) > MAX_HYPERPLANE_WORK:
            raise ValueError(
                f"n_components={k} with {n} rows is beyond the exact search "
                f"(up to {hyperplane_work(n, k):.2g} > "
                f"{MAX_HYPERPLANE_WORK:.0e} steps; the problem is NP-hard in k). "
                "Use fewer rows or ApproximateSubspace."
            )
        if self.selection == "gap" and math.comb(n, k) > MAX_ENUMERATION:
            raise ValueError(
                f'selection="gap" enumerates C({n}, {k}) = {math.comb(n, k)} '
                f"spans, more than {MAX_ENUMERATION}; use "
                'selection="majority".'
            )

        self._spend_budget(budget)  # every check above used public values only
        rows = X if self.assume_centered else pair_differences(X)
        integers = integer_matrix(rows)
        if self.selection == "gap":
            span, released = self._select_gap(integers, k, budget, rng)
            split = {"selection": budget}
        else:
            span, released, split = self._select_majority(integers, k, budget, rng)
        if not released:
            raise NoStableSubspace(
                "No subspace of dimension "
                f"{k} won the private stability test (the private answer is "
                "bottom). Certain success needs all but l rows in one "
                f"{k}-dimensional subspace, exactly (see the Notes on exact "
                "arithmetic), and at least "
                f"{self.required_samples(0, k)} rows here with l <= {k - 1} rows "
                "off it, more with more (see required_samples) (n_samples="
                f"{n_samples}). The budget is spent: refitting on the same "
                "data is a new release."
            )
        basis = span.orthonormal_basis().astype(X.dtype, copy=False)
        self._record(basis, k, budget, split)
        return self

    def _select_gap(self, integers, k, budget, rng):
        scores = enumerate_scores(integers, k)
        ranked = sorted(scores.values(), key=lambda item: -item[1])
        if not ranked:
            return None, False
        best, q1 = ranked[0]
        q2 = max(ranked[1][1], 0) if len(ranked) > 1 else 0
        z = stability_noise(rng, 2.0, budget.epsilon, budget.delta)
        threshold = stability_threshold(2.0, budget.epsilon, budget.delta)
        return best, (q1 - q2) + z > threshold

    def _select_majority(self, integers, k, budget, rng):
        n = integers.shape[0]
        epsilon, delta = budget.epsilon, budget.delta
        # (1 + e^eps) delta_s = delta / 10 goes to the search, the rest to the
        # test, so that the two add up to delta (class Notes).
        search_share = delta / 10.0
        if math.isinf(epsilon):
            delta_s = search_share
        else:
            delta_s = search_share / (1.0 + math.exp(min(epsilon, 700.0)))
        # delta - search_share rounded down: the two add up to at most delta.
        delta_test = _left(delta, [search_share])
        trials = _noise.indices(rng, n, (search_trials(k, delta_s), k))
        span, inside = majority_search(integers, k, trials)
        split = {
            "search": ApproxDP(0.0, search_share),
            "selection": ApproxDP(epsilon, delta_test),
        }
        z = stability_noise(rng, 1.0, epsilon, delta_test)
        if span is None:
            return None, False, split
        # Release iff v + z > threshold with v = c - m - n/2 (and v = -inf
        # when c - m <= n/2, which can never pass since z <= A): that is
        # m < c - n/2 + z - threshold, decided exactly by a bounded search.
        count = int(inside.sum())
        limit = count - n / 2.0 + z - stability_threshold(1.0, epsilon, delta_test)
        stop_at = math.ceil(limit)
        if stop_at <= 0:
            return span, False, split
        coords = span.coordinates(integers[inside])
        hyperplane = max_hyperplane_count(coords, k, stop_at=stop_at)
        return span, hyperplane < stop_at, split
