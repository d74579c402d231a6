"""The budget accountant: a ledger of the fits on the same rows, with a cap."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import threading

from ..exceptions import AccountantCopyError, BudgetExceeded
from ._composition import (
    _bits_float,
    _float_bits,
    _left,
    compose,
    compose_fits,
    relabel,
)
from ._conversions import (
    _check_nonnegative,
    _pure_rho,
    gaussian_epsilon,
    zcdp_epsilon,
)
from ._guarantees import (
    _LABELS,
    RELATIONS,
    UNITS,
    ZCDP,
    ApproxDP,
    GaussianDP,
    ProfileDP,
    PureDP,
    notion_of,
)

#: The most pure and bounded-range parts a ledger's exact total composes
#: (their privacy loss distributions convolve at the product of their sizes).
EXACT_DISCRETE_PARTS = 4


class BudgetAccountant:
    """A ledger of the privacy spent by fits on the same rows, with a cap.

    Share one accountant across fits (pass it as the ``accountant`` parameter
    of every dpcov estimator, or record guarantees with :meth:`spend`). Before
    an estimator reads its data it asks the accountant whether its guarantee
    fits in what is left, and a fit that would exceed the cap raises
    :class:`~dpcov.exceptions.BudgetExceeded` without touching the data;
    otherwise the fit's guarantee is recorded once the input is validated,
    before any private step runs. A recorded fit stays recorded even if it
    fails later (its private steps may have run); fits are never refunded.

    The recorded guarantees compose as follows: pure-DP, zCDP and
    Gaussian-DP fits add up in zCDP (a pure ``epsilon``-DP fit counts
    ``epsilon**2 / 2``, a ``mu``-GDP fit ``mu**2 / 2``) and (epsilon,
    delta)-only fits (the stability-based subspace learners) add both
    parameters. The total (epsilon, delta) is reported with the tight
    conversion from zCDP of Canonne, Kamath and Steinke (2020), see
    :func:`zcdp_epsilon`, spending ``delta`` minus the (epsilon, delta) fits'
    deltas on the conversion; pure fits are also counted by adding their
    epsilons when that is smaller. A ledger of Gaussian-DP and profile fits
    only (fits asked for (epsilon, delta) with no cap on their accountant,
    whose parts are all Gaussian, or Gaussian and selections on a public
    plan) is also read on the exact curve of their composition (``mu =
    sqrt(sum mu_i**2)``, Dong, Roth and Su 2022; profiles while they hold at
    most ``EXACT_DISCRETE_PARTS`` pure or bounded-range steps), as for
    budgets fixed before the first fit; the smaller total is reported.

    A cap is a privacy filter: it is checked in zCDP (a Renyi filter,
    Feldman and Zrnic, 2021), which holds however each fit's budget was
    chosen from the results of the fits before it. So under a cap, a fit
    asked for (epsilon, delta) is calibrated in zCDP, the terms the cap
    counts, and not on an exact curve; except under a Gaussian-DP filter
    (``gaussian_only=True``), which counts on the Gaussian curve.

    The accountant is shared, not copied: :func:`copy.copy`,
    :func:`copy.deepcopy` and therefore :func:`sklearn.base.clone` of an
    estimator return the same accountant, so every clone that
    :class:`~sklearn.model_selection.GridSearchCV` fits (with ``n_jobs=1`` or a
    threading backend) records into it. Fits in other processes
    (``n_jobs > 1`` with the default process-based backend) would record into
    pickled copies that the caller never sees, so an unpickled accountant
    refuses to record or check any fit
    (:class:`~dpcov.exceptions.AccountantCopyError`, which scikit-learn's
    searches let through as their own error): leave the accountant out of
    such a search and account it with
    :func:`~dpcov.model_selection.search_cost`. Pickling a fitted estimator
    that holds an accountant still works; the loaded copy reads as the
    original did but records nothing. Save a ledger with :attr:`ledger`, not
    by pickling.

    Totals are compared with the cap exactly, with no slack: a fit is
    accepted when the total reported after it (:meth:`total`, :attr:`epsilon`
    or :attr:`rho`) is at most the cap, so no reported total ever exceeds
    the cap. Each total is a sum rounded once to the nearest float
    (:func:`math.fsum`), with a pure fit counted ``epsilon**2 / 2`` rounded
    up in zCDP: two fits at ``epsilon / 2``, or ten at 0.1 under a cap of
    1.0, fill the cap exactly. To spend exactly what is left, ask
    :meth:`remaining` for it.
    The composition of pure/zCDP fits with (epsilon, delta)-only fits is the
    approximate-zCDP composition of Bun and Steinke (2016, Section 8).

    Parameters
    ----------
    epsilon : float, default=None
        Cap on the total epsilon. With ``delta=0`` (the default) the cap is pure
        ``epsilon``-DP and only pure-DP fits are accepted; with ``delta > 0``
        it is (``epsilon``, ``delta``)-DP.
    delta : float, default=0.0
        Delta of the cap, in [0, 1); also the delta at which :attr:`epsilon`
        reports the total when no cap is set.
    rho : float, default=None
        Cap on the total in zCDP (pure fits count ``epsilon**2 / 2``).
        (epsilon, delta)-only fits have no zCDP guarantee and are refused.
        Exclusive with ``epsilon``.
    unit : {"row", "person"}, default="row"
        What the totals protect. A fit over persons (``groups`` with
        ``max_rows_per_group``) protects a person, and so each row (a row
        replaced is one person's rows changed, the labels being a public
        frame): a ``"row"`` ledger records both kinds of fit, its totals
        holding per row. A row-level fit does
        not protect a person with several rows (they add up), so a
        ``"person"`` ledger refuses it before it reads the data.
    relation : {"replace", "add_remove"}, default="replace"
        The neighbouring relation the totals hold under. A dpcov fit with
        ``neighbours="add_remove"`` holds under both relations at its budget
        (its noise keeps the replace-one calibration and its count does not
        move under replacement), so a ``"replace"`` ledger records both
        kinds; a fit under ``"replace"`` used the number of units as public,
        so an ``"add_remove"`` ledger refuses it. (A guarantee that holds
        under add/remove only, at ``epsilon``, holds under replacement at
        ``2 epsilon``: record it so in a ``"replace"`` ledger.)
    gaussian_only : bool, default=False
        Make the cap in (``epsilon``, ``delta``) a Gaussian-DP filter:
        only fits of Gaussian parts (:class:`GaussianDP`) are accepted, and
        their composition ``mu = sqrt(sum mu_i**2)`` must stay (``epsilon``,
        ``delta``)-DP on the exact curve, a filter that holds under fully
        adaptive composition (Smith and Thakurta 2022). Its fits are then
        calibrated on that curve, as without a cap; a fit with other steps
        is refused before it reads the data. Needs ``delta > 0``.

    Attributes
    ----------
    ledger : list of tuple (str, guarantee)
        Copy of the recorded fits: a label and a guarantee each.
    units : list of str
        The privacy unit of each recorded fit (``"row"`` or ``"person"``),
        in the ledger's order.
    relations : list of str
        The neighbouring relation of each recorded fit, in the ledger's
        order.

    See Also
    --------
    dpcov.model_selection.search_cost : The cost of a hyperparameter search.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.accounting import BudgetAccountant
    >>> from dpcov.covariance import SeparateCovariance
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(1000, 3))
    >>> accountant = BudgetAccountant(epsilon=1.0, delta=1e-6)
    >>> est = SeparateCovariance(epsilon=0.5, data_norm=1.0, accountant=accountant)
    >>> for _ in range(3):
    ...     _ = est.fit(X)
    >>> # three fits at (0.5, 1e-6) compose in zCDP to less than (1, 1e-6)
    >>> len(accountant), round(accountant.epsilon, 3)
    (3, 0.898)
    >>> est.fit(X)  # a fourth would exceed the cap
    Traceback (most recent call last):
    ...
    dpcov.exceptions.BudgetExceeded: SeparateCovariance: ZCDP(rho=...) would ...
    """

    def __init__(
        self,
        epsilon=None,
        delta=0.0,
        rho=None,
        unit="row",
        relation="replace",
        *,
        gaussian_only=False,
    ):
        if epsilon is not None and rho is not None:
            raise ValueError("set a cap in epsilon or in rho, not both.")
        if gaussian_only and (epsilon is None or not delta > 0):
            raise ValueError(
                "gaussian_only=True is a Gaussian-DP filter: it needs a cap in "
                "(epsilon, delta) with delta > 0."
            )
        if unit not in UNITS:
            raise ValueError(f"unit must be 'row' or 'person', got {unit!r}.")
        if relation not in RELATIONS:
            raise ValueError(
                f"relation must be 'replace' or 'add_remove', got {relation!r}."
            )
        if epsilon is not None:
            _check_nonnegative("epsilon", epsilon)
        if rho is not None:
            _check_nonnegative("rho", rho)
        _check_nonnegative("delta", delta)
        if delta >= 1:
            raise ValueError(f"delta must be smaller than 1, got {delta!r}.")
        self.epsilon_cap = None if epsilon is None else float(epsilon)
        self.delta_cap = float(delta)
        self.rho_cap = None if rho is None else float(rho)
        self.unit = unit
        self.relation = relation
        self.gaussian_only = bool(gaussian_only)
        self._ledger = []
        self._units = []
        self._relations = []
        self._lock = threading.Lock()

    # The accountant is shared state: copies (clone, deepcopy) are the same
    # object, so that every clone of an estimator records into it.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()
        # A copy made by pickling (joblib sends estimators to worker processes
        # that way) would record fits the original never sees: it refuses.
        self._detached = True

    def __len__(self):
        return len(self._ledger)

    def __repr__(self):
        if self.rho_cap is not None:
            cap = f"rho={self.rho_cap!r}"
        elif self.epsilon_cap is not None:
            cap = f"epsilon={self.epsilon_cap!r}, delta={self.delta_cap!r}"
            if self.gaussian_only:
                cap += ", gaussian_only=True"
        else:
            cap = f"delta={self.delta_cap!r}"
        return f"BudgetAccountant({cap}, n_fits={len(self)}, spent={self.spent()!r})"

    def spent(self):
        """The total guarantee of the recorded fits, in the cap's terms.

        With ``delta > 0`` (a cap in (epsilon, delta), or the delta asked of a
        ledger without cap) the total as (epsilon, delta)-DP at that delta,
        :attr:`epsilon`; otherwise :meth:`total` (pure DP, zCDP, or
        (epsilon, delta)-DP at the (epsilon, delta) fits' deltas). The repr
        shows it.

        Returns
        -------
        guarantee : PureDP, ZCDP or ApproxDP
            The total.

        Examples
        --------
        >>> from dpcov.accounting import ZCDP, BudgetAccountant
        >>> BudgetAccountant(delta=1e-6).spend(ZCDP(0.01)).spent()
        ApproxDP(epsilon=0.62..., delta=1e-06)
        >>> BudgetAccountant().spend(ZCDP(0.01)).spent()
        ZCDP(rho=0.01)
        """
        if self.delta_cap > 0 and self.rho_cap is None:
            return ApproxDP(self.epsilon, self.delta_cap, **self._labels())
        return self.total()

    def _labels(self):
        # The unit and relation the totals hold for.
        return {"unit": self.unit, "relation": self.relation}

    @property
    def ledger(self):
        """Copy of the recorded fits, as (label, guarantee) pairs."""
        return list(self._ledger)

    @staticmethod
    def _sums(entries):
        # The parameters of the entries, by kind (a Gaussian-DP fit counts
        # its rho, mu**2 / 2 rounded up).
        pure = [g.epsilon for _, g in entries if isinstance(g, PureDP)]
        rhos = [
            g.to_zcdp().rho
            for _, g in entries
            if isinstance(g, ZCDP | GaussianDP | ProfileDP)
        ]
        approx = [g for _, g in entries if isinstance(g, ApproxDP)]
        return pure, rhos, [g.epsilon for g in approx], [g.delta for g in approx]

    @staticmethod
    def _rho_total(pure, rhos):
        # Pure and zCDP fits in zCDP, summed with one rounding; a pure fit
        # counts epsilon**2 / 2 rounded up (PureDP.to_zcdp).
        return math.fsum([*rhos, *map(_pure_rho, pure)])

    @classmethod
    def _total_epsilon(cls, entries, delta, *, exact=True):
        # Smallest epsilon this accountant certifies at ``delta`` for the
        # entries (see the class docstring). Each candidate total is a sum
        # rounded once (math.fsum). With ``exact``, a ledger of Gaussian-DP
        # and profile fits only is also read on the exact curve of their
        # composition (for profiles, up to EXACT_DISCRETE_PARTS discrete
        # parts in all: their convolution's cost grows as its product); the
        # cap (a privacy filter) reads zCDP (``exact=False``).
        if not entries:
            return 0.0
        in_zcdp = cls._zcdp_total_epsilon(entries, delta)
        kinds = {notion_of(g) for _, g in entries}
        if not (exact and delta > 0 and kinds <= {GaussianDP, ProfileDP}):
            return in_zcdp
        # (Each fit read under the ledger's unit and relation, as in zCDP.)
        total = compose_fits(g for _, g in entries)
        if isinstance(total, GaussianDP):
            return min(in_zcdp, gaussian_epsilon(total.mu, delta))
        if len(total.pure) + len(total.bounded_range) > EXACT_DISCRETE_PARTS:
            return in_zcdp
        return min(in_zcdp, total.to_approx_dp(delta).epsilon)

    @classmethod
    def _zcdp_total_epsilon(cls, entries, delta):
        # The total of non-empty entries through zCDP (and pure DP).
        pure, rhos, approx_epsilons, approx_deltas = cls._sums(entries)
        rho = math.fsum(rhos)
        if rho == 0 and not any(approx_epsilons) and not any(approx_deltas):
            # All pure: their sum needs no delta; with delta > 0, counting
            # them in zCDP may be smaller (the same min as with zCDP fits, so
            # the total never drops when a zCDP fit is added).
            pure_sum = math.fsum(pure)
            if delta > 0:
                in_zcdp = zcdp_epsilon(cls._rho_total(pure, []), delta)
                return min(pure_sum, in_zcdp)
            return pure_sum
        if math.fsum(approx_deltas) > delta:
            return math.inf
        # What is left of delta for the conversion, rounded down.
        conversion_delta = _left(delta, approx_deltas)
        if rho == 0 and not pure:
            return math.fsum(approx_epsilons)
        if conversion_delta <= 0:
            # Nothing left for the zCDP conversion: only pure parts can count.
            return math.fsum([*approx_epsilons, *pure]) if rho == 0 else math.inf
        all_zcdp = zcdp_epsilon(cls._rho_total(pure, rhos), conversion_delta)
        converted = zcdp_epsilon(rho, conversion_delta) if rho else 0.0
        return min(
            math.fsum([*approx_epsilons, all_zcdp]),
            math.fsum([*approx_epsilons, *pure, converted]),
        )

    @property
    def epsilon(self):
        """Epsilon of the total (epsilon, delta)-DP guarantee, at the cap's delta.

        Pure-only ledgers report their epsilon sum (delta is then 0).
        """
        with self._lock:
            return self._total_epsilon(self._ledger, self.delta_cap)

    def epsilon_at(self, delta):
        """Epsilon of the total (epsilon, delta)-DP guarantee at ``delta``.

        Parameters
        ----------
        delta : float
            Target delta in [0, 1).

        Returns
        -------
        epsilon : float
            The smallest epsilon the accountant certifies (``inf`` when
            ``delta`` is smaller than the (epsilon, delta) fits' deltas, or 0
            with zCDP fits recorded).
        """
        _check_nonnegative("delta", delta)
        with self._lock:
            return self._total_epsilon(self._ledger, float(delta))

    @property
    def rho(self):
        """The total in zCDP (``inf`` once an (epsilon, delta)-only fit is in)."""
        with self._lock:
            pure, rhos, _, _ = self._sums(self._ledger)
            if any(isinstance(g, ApproxDP) for _, g in self._ledger):
                return math.inf
            return self._rho_total(pure, rhos)

    def total(self):
        """The composition of every recorded fit, as one guarantee.

        Returns
        -------
        guarantee : PureDP, ZCDP or ApproxDP
            ``PureDP`` when every fit is pure, ``ZCDP`` when none is an
            (epsilon, delta)-only fit, else ``ApproxDP`` at the cap's delta
            (:attr:`epsilon`), or, with no delta cap, at the sum of the
            (epsilon, delta) fits' deltas. ``PureDP(0.0)`` for an empty
            ledger.
        """
        with self._lock:
            entries = list(self._ledger)
        if not entries:
            return PureDP(0.0, **self._labels())
        kinds = {notion_of(g) for _, g in entries}
        if ApproxDP not in kinds:
            # Each fit read as the ledger reads it (it refused the others).
            return compose(relabel(g, **self._labels()) for _, g in entries)
        # Without a delta cap, report at the (epsilon, delta) fits' own deltas.
        delta = self.delta_cap or min(
            1.0, math.fsum(g.delta for _, g in entries if isinstance(g, ApproxDP))
        )
        return ApproxDP(self._total_epsilon(entries, delta), delta, **self._labels())

    def remaining(self):
        """The largest guarantee that one more fit may spend under the cap.

        Under a cap in epsilon with ``delta=0`` or in rho, this is the
        largest float that keeps the exact sum of the recorded parameters
        (pure fits counting ``epsilon**2 / 2`` rounded up under a rho cap)
        within the cap; under a cap in (epsilon, delta) with ``delta > 0``,
        the largest rho of one more zCDP fit that the cap accepts.
        ``accountant.spend(accountant.remaining())`` is accepted (unless
        another thread records a fit in between). Pass it on to the last fit,
        e.g. ``SeparateCovariance(rho=left.rho, ...)`` or
        ``SeparateCovariance(epsilon=left.epsilon, delta=0.0, ...)``.

        Returns
        -------
        guarantee : PureDP, ZCDP or None
            ``PureDP`` under a pure cap (``delta=0``); ``ZCDP`` under a cap in
            rho or in (epsilon, delta) with ``delta > 0``; ``GaussianDP``
            under a Gaussian-DP filter (``gaussian_only=True``); ``PureDP(0.0)`` or
            ``ZCDP(0.0)`` when the cap is reached; None when there is no cap.

        Examples
        --------
        >>> from dpcov.accounting import BudgetAccountant, PureDP
        >>> accountant = BudgetAccountant(epsilon=1.0)
        >>> _ = accountant.spend(PureDP(0.1)).spend(PureDP(0.2))
        >>> left = accountant.remaining()
        >>> left
        PureDP(epsilon=0.7)
        >>> accountant.spend(left).epsilon
        1.0
        """
        with self._lock:
            pure, rhos, _, _ = self._sums(self._ledger)
            if self.rho_cap is not None:
                return ZCDP(
                    _left(self.rho_cap, [*rhos, *map(_pure_rho, pure)]),
                    **self._labels(),
                )
            if self.epsilon_cap is None:
                return None
            if self.delta_cap == 0:
                # A pure cap holds pure fits only.
                return PureDP(_left(self.epsilon_cap, pure), **self._labels())

            kind = GaussianDP if self.gaussian_only else ZCDP

            def fits(value):
                remaining = [("remaining", kind(value))]
                return self._refusal(remaining, [self.unit], [self.relation]) is None

            if not fits(0.0):
                return kind(0.0, **self._labels())
            high = 1.0
            while fits(high):
                if math.isinf(high):
                    return kind(high, **self._labels())
                high *= 2.0
            # Bisect on the ordered bit patterns of the non-negative floats,
            # keeping fits(low) and not fits(high), down to adjacent floats.
            low, high = 0, _float_bits(high)
            while high - low > 1:
                middle = (low + high) // 2
                if fits(_bits_float(middle)):
                    low = middle
                else:
                    high = middle
            return kind(_bits_float(low), **self._labels())

    @property
    def units(self):
        """The privacy unit of each recorded fit, in the ledger's order."""
        with self._lock:
            return list(self._units)

    @property
    def relations(self):
        """The neighbouring relation of each recorded fit, in the ledger's order."""
        with self._lock:
            return list(self._relations)

    def _refusal(self, entries, units, relations=()):
        # Why adding ``entries`` would break the cap, the unit or the
        # relation (None if it would not).
        if self.relation == "add_remove" and any(r != "add_remove" for r in relations):
            return (
                "holds under replace-one neighbours only (the number of units "
                "was public to it), and this accountant's totals hold under "
                "add/remove neighbours (relation='add_remove'); fit with "
                "neighbours='add_remove', or record it in a replace-one "
                "accountant"
            )
        if self.unit == "person" and any(unit != "person" for unit in units):
            return (
                "is a row-level guarantee, which does not protect a person "
                "with several rows, and this accountant's totals protect "
                "persons (unit='person'); fit with groups and "
                "max_rows_per_group, or record it in a row-level accountant"
            )
        kinds = {notion_of(g) for _, g in entries}
        if self.gaussian_only:
            return self._gaussian_refusal(entries, kinds)
        if self.rho_cap is not None:
            if ApproxDP in kinds:
                return "an (epsilon, delta)-only guarantee has no zCDP form"
            pure, rhos, _, _ = self._sums(self._ledger + entries)
            total = self._rho_total(pure, rhos)
            if total > self.rho_cap:
                total, cap = _apart(total, self.rho_cap)
                return f"would bring the total to rho={total} > {cap}"
            return None
        if self.epsilon_cap is None:
            return None
        if self.delta_cap == 0 and kinds - {PureDP}:
            return "the cap is pure epsilon-DP, which only pure-DP fits keep"
        total = self._total_epsilon(self._ledger + entries, self.delta_cap, exact=False)
        return self._over_epsilon(total)

    def _over_epsilon(self, total, note=""):
        # Why a total epsilon breaks the cap (None if it does not).
        if total <= self.epsilon_cap:
            return None
        total, cap = _apart(total, self.epsilon_cap)
        return (
            f"would bring the total to epsilon={total} > {cap} "
            f"at delta={self.delta_cap:g}{note}"
        )

    def _gaussian_refusal(self, entries, kinds):
        # The Gaussian-DP filter (gaussian_only): Gaussian-DP fits only,
        # whose mu = sqrt(sum mu_i**2) stays within the cap's on the exact
        # curve (Smith and Thakurta 2022: the filter holds under fully
        # adaptive composition).
        if kinds - {GaussianDP}:
            return (
                "is not a Gaussian-DP guarantee, and this accountant is a "
                "Gaussian-DP filter (gaussian_only=True), which only fits of "
                "Gaussian parts keep"
            )
        mu = compose_fits(g for _, g in self._ledger + entries).mu
        return self._over_epsilon(
            gaussian_epsilon(mu, self.delta_cap), f" (mu={mu:.6g})"
        )

    def _entries(self, guarantee, label, unit, relation):
        # The entries ``guarantee`` adds, their units and their relations:
        # a guarantee's own (its unit and relation), or those given, which a
        # guarantee that names others contradicts.
        entries = self._labelled(guarantee, label)
        if isinstance(guarantee, BudgetAccountant):
            return entries, guarantee.units, guarantee.relations
        given = {"unit": unit, "relation": relation}
        for name, value in given.items():
            own = getattr(guarantee, name)
            if value is None:
                given[name] = own
            elif own != _LABELS[name] and own != value:
                raise ValueError(
                    f"{label}: the guarantee states {name}={own!r}, and it is "
                    f"recorded with {name}={value!r}."
                )
        if given["unit"] not in UNITS:
            raise ValueError(f"unit must be 'row' or 'person', got {given['unit']!r}.")
        if given["relation"] not in RELATIONS:
            raise ValueError(
                "relation must be 'replace' or 'add_remove', got "
                f"{given['relation']!r}."
            )
        entries = [(name, relabel(g, **given)) for name, g in entries]
        return entries, [given["unit"]], [given["relation"]]

    def _labelled(self, guarantee, label):
        if getattr(self, "_detached", False):
            # A BaseException, so that scikit-learn's searches do not turn it
            # into "All the fits failed" (see AccountantCopyError).
            raise AccountantCopyError(
                f"{label}: this BudgetAccountant is a pickled copy, and what it "
                "records never reaches the original ledger (joblib pickles "
                "estimators for its worker processes, e.g. GridSearchCV(n_jobs=2) "
                "or cross_validate(n_jobs=2); a model loaded from a file holds a "
                "copy too); fix: fit with n_jobs=1 or joblib's threading backend "
                "(joblib.parallel_config(backend='threading')), or leave the "
                "accountant out and charge dpcov.model_selection.search_cost("
                "search) to it after a search, or give a loaded model your "
                "accountant (set_params(accountant=...)). Nothing was recorded "
                "or read."
            )
        if guarantee is self:
            raise ValueError("an accountant cannot spend its own ledger.")
        if isinstance(guarantee, BudgetAccountant):
            return guarantee.ledger
        if not isinstance(guarantee, PureDP | ZCDP | GaussianDP | ProfileDP | ApproxDP):
            raise TypeError(
                "expected a PureDP, ZCDP, GaussianDP, ProfileDP or ApproxDP "
                "guarantee or a "
                f"BudgetAccountant, got {type(guarantee).__name__}."
            )
        return [(str(label), guarantee)]

    def check(self, guarantee, *, label="fit", unit=None, relation=None):
        """Raise if spending ``guarantee`` would exceed the cap; record nothing.

        Parameters
        ----------
        guarantee : PureDP, ZCDP, ApproxDP or BudgetAccountant
            What the next fit (or, for an accountant, every fit in its ledger)
            would spend.
        label : str, default="fit"
            Name used in the error message.
        unit : {"row", "person"} or None, default=None
            The fit's privacy unit; None reads the guarantee's own ``unit``
            (an accountant's entries keep theirs).
        relation : {"replace", "add_remove"} or None, default=None
            The fit's neighbouring relation; None reads the guarantee's own
            ``relation`` (an accountant's entries keep theirs).

        Raises
        ------
        BudgetExceeded
            If the total would exceed the cap, or the fit's unit or relation
            is not the accountant's (see its ``unit`` and ``relation``).
        """
        entries, units, relations = self._entries(guarantee, label, unit, relation)
        with self._lock:
            reason = self._refusal(entries, units, relations)
        if reason is not None:
            raise BudgetExceeded(self._message(label, guarantee, reason))

    def spend(self, guarantee, *, label="fit", unit=None, relation=None):
        """Record ``guarantee`` if it fits under the cap, atomically.

        Parameters
        ----------
        guarantee : PureDP, ZCDP, ApproxDP or BudgetAccountant
            What a fit spends; an accountant's whole ledger is recorded at once
            (for example the result of
            :func:`~dpcov.model_selection.search_cost`).
        label : str, default="fit"
            Label of the ledger entry (ignored for an accountant, whose labels
            are kept).
        unit : {"row", "person"} or None, default=None
            The fit's privacy unit; None reads the guarantee's own ``unit``
            (a fitted estimator's ``guarantee_`` names it). Ignored for an
            accountant, whose entries keep theirs.
        relation : {"replace", "add_remove"} or None, default=None
            The fit's neighbouring relation; None reads the guarantee's own
            ``relation``. Ignored for an accountant.

        Returns
        -------
        self : BudgetAccountant
            The accountant.

        Raises
        ------
        BudgetExceeded
            If the total would exceed the cap, or the fit's unit or relation
            is not the accountant's (see its ``unit`` and ``relation``);
            nothing is recorded.
        """
        entries, units, relations = self._entries(guarantee, label, unit, relation)
        with self._lock:
            reason = self._refusal(entries, units, relations)
            if reason is None:
                self._ledger.extend(entries)
                self._units.extend(units)
                self._relations.extend(relations)
        if reason is not None:
            raise BudgetExceeded(self._message(label, guarantee, reason))
        return self

    def _message(self, label, guarantee, reason):
        # Public values only: the guarantees and the cap.
        what = (
            f"{len(guarantee)} recorded fits"
            if isinstance(guarantee, BudgetAccountant)
            else repr(guarantee)
        )
        return (
            f"{label}: {what} {reason}; refused before reading the data "
            f"({len(self)} fits already recorded by {self!r})."
        )


def _apart(total, cap):
    # A total and a cap as text, with all digits when six would look equal.
    if f"{total:.6g}" == f"{cap:.6g}":
        return repr(total), repr(cap)
    return f"{total:.6g}", f"{cap:g}"
