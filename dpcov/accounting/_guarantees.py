"""The privacy guarantees: pure DP, zCDP and approximate DP."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from dataclasses import dataclass, field, fields
from fractions import Fraction
from numbers import Real

from ._conversions import (
    _check_nonnegative,
    _gaussian_mu_of_rho,
    _half_square,
    _pure_rho,
    _sum_half_squares,
    gaussian_epsilon,
    gaussian_mu,
    zcdp_epsilon,
)
from ._exact_curve import composed_loss, profile_epsilon

#: Whom a guarantee protects: one row, or one person with all its rows.
UNITS = ("row", "person")

#: The neighbouring relations a guarantee may hold under: one unit replaced
#: (the number of units public), or one unit added or removed.
RELATIONS = ("replace", "add_remove")

_LABELS = {"unit": "row", "relation": "replace"}

_LABELS_DOC = """unit : {"row", "person"}, default="row"
    Whom it protects (keyword only): one row, or one person with all its
    rows (see :ref:`privacy_units`).
relation : {"replace", "add_remove"}, default="replace"
    The neighbouring relation it holds under (keyword only): one unit
    replaced, or one unit added or removed (see :ref:`privacy_units`)."""


def _labels_documented(cls):
    # The three kinds' docstrings share the labels' entries ({labels}).
    cls.__doc__ = cls.__doc__.replace("{labels}", _LABELS_DOC.replace("\n", "\n    "))
    return cls


@dataclass(frozen=True, repr=False)
class _Labelled:
    # Whom a guarantee protects and under which relation: part of what it
    # states (two guarantees with other labels differ, and compose refuses
    # to add them), shown by repr where not the default.

    unit: str = field(default="row", kw_only=True)
    relation: str = field(default="replace", kw_only=True)

    def _check_labels(self):
        if self.unit not in UNITS:
            raise ValueError(f"unit must be 'row' or 'person', got {self.unit!r}.")
        if self.relation not in RELATIONS:
            raise ValueError(
                f"relation must be 'replace' or 'add_remove', got {self.relation!r}."
            )

    def _labels(self):
        return {"unit": self.unit, "relation": self.relation}

    def _parameters(self):
        # The numbers (epsilon, delta or rho), without the labels.
        return tuple(
            getattr(self, f.name) for f in fields(self) if f.name not in _LABELS
        )

    def __repr__(self):
        # The parameters, then the labels that are not the default.
        parts = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
            if f.name not in _LABELS
        ]
        parts += [
            f"{name}={getattr(self, name)!r}"
            for name, default in _LABELS.items()
            if getattr(self, name) != default
        ]
        return f"{type(self).__name__}({', '.join(parts)})"

    def under_replacement(self):
        """The replace-one guarantee this one implies.

        Replacing a unit is removing it and adding another, so an add/remove
        guarantee implies a replace-one guarantee at the cost of two steps
        (group privacy for two): ``2 epsilon`` (pure DP), ``4 rho`` (zCDP,
        whose group privacy is ``k**2 rho`` for ``k`` steps; Bun and Steinke,
        2016), ``2 mu`` (GDP; Dong, Roth and Su, 2022), ``(2 epsilon,
        (1 + exp(epsilon)) delta)`` (the guarantee applied twice:
        ``e^eps (e^eps P + delta) + delta``). The reverse does not hold (a
        replace-one fit may read the number of units). A dpcov fit under
        add/remove keeps its replace-one noise and holds under replacement at
        its own budget (see :ref:`privacy_units`); this conversion is for
        guarantees that do not say so.

        Returns
        -------
        guarantee : PureDP, ZCDP, GaussianDP or ApproxDP
            This guarantee when it holds under replacement already, else the
            converted one, with ``relation="replace"``.
        """
        if self.relation == "replace":
            return self
        return self._doubled()


@_labels_documented
@dataclass(frozen=True, repr=False)
class PureDP(_Labelled):
    """Pure epsilon-differential privacy.

    Parameters
    ----------
    epsilon : float
        Privacy-loss bound; ``inf`` means no privacy.
    {labels}

    Examples
    --------
    >>> from dpcov.accounting import PureDP
    >>> PureDP(1.0).to_zcdp()
    ZCDP(rho=0.5)
    """

    epsilon: float

    def __post_init__(self):
        _check_nonnegative("epsilon", self.epsilon)
        self._check_labels()

    def _doubled(self):
        return PureDP(2.0 * self.epsilon, unit=self.unit)

    def to_zcdp(self):
        """Return the zCDP guarantee implied by this one (``epsilon**2 / 2``).

        Returns
        -------
        guarantee : ZCDP
            ``ZCDP(epsilon**2 / 2)`` (Proposition 1.4 in (Bun and Steinke, 2016)),
            rounded up.
        """
        return ZCDP(_pure_rho(self.epsilon), **self._labels())

    def to_approx_dp(self, delta=0.0):
        """Return an (epsilon, delta) guarantee implied by this one.

        Parameters
        ----------
        delta : float, default=0.0
            Target delta. With ``delta > 0`` the epsilon is the smaller of this
            guarantee's epsilon and the one obtained through zCDP.

        Returns
        -------
        guarantee : ApproxDP
            The implied guarantee.
        """
        _check_nonnegative("delta", delta)
        if delta == 0:
            return ApproxDP(self.epsilon, 0.0, **self._labels())
        return ApproxDP(
            min(self.epsilon, zcdp_epsilon(self.to_zcdp().rho, delta)),
            delta,
            **self._labels(),
        )

    def fraction(self, share):
        """Return the guarantee of a step that gets ``share`` of this budget.

        Parameters
        ----------
        share : float
            A number in [0, 1].

        Returns
        -------
        guarantee : PureDP
            ``PureDP(share * epsilon)``.
        """
        return PureDP(share * self.epsilon, **self._labels())

    def pure_epsilon(self):
        """Epsilon of the largest pure-DP step that fits in this budget.

        Returns
        -------
        epsilon : float
            ``epsilon`` itself.
        """
        return self.epsilon

    def exponential_epsilon(self):
        """Epsilon of the largest exponential mechanism that fits in this budget.

        The exponential mechanism run at ``epsilon`` (selection probabilities
        proportional to ``exp(epsilon * score / (2 * sensitivity))``) is pure
        ``epsilon``-DP (McSherry and Talwar, 2007).

        Returns
        -------
        epsilon : float
            ``epsilon`` itself.
        """
        return self.epsilon


@_labels_documented
@dataclass(frozen=True, repr=False)
class ZCDP(_Labelled):
    """Rho-zero-concentrated differential privacy (Bun and Steinke, 2016).

    Parameters
    ----------
    rho : float
        The zCDP parameter; ``inf`` means no privacy.
    {labels}

    Examples
    --------
    >>> from dpcov.accounting import ZCDP
    >>> round(ZCDP(0.5).to_approx_dp(1e-6).epsilon, 4)
    5.2215
    """

    rho: float

    def __post_init__(self):
        _check_nonnegative("rho", self.rho)
        self._check_labels()

    def _doubled(self):
        # Group privacy for zCDP: k**2 rho for k steps (exact in floats).
        return ZCDP(4.0 * self.rho, unit=self.unit)

    def to_zcdp(self):
        """Return this guarantee (for symmetry with :class:`PureDP`).

        Returns
        -------
        guarantee : ZCDP
            ``self``.
        """
        return self

    def to_approx_dp(self, delta):
        """Return the (epsilon, delta) guarantee implied by this one.

        Parameters
        ----------
        delta : float
            Target delta in [0, 1). With ``delta=0`` epsilon is infinite (zCDP
            does not imply pure DP) unless ``rho=0``.

        Returns
        -------
        guarantee : ApproxDP
            The guarantee with epsilon from :func:`zcdp_epsilon`.
        """
        return ApproxDP(zcdp_epsilon(self.rho, delta), delta, **self._labels())

    def fraction(self, share):
        """Return the guarantee of a step that gets ``share`` of this budget.

        Parameters
        ----------
        share : float
            A number in [0, 1].

        Returns
        -------
        guarantee : ZCDP
            ``ZCDP(share * rho)``.
        """
        return ZCDP(share * self.rho, **self._labels())

    def pure_epsilon(self):
        """Epsilon of the largest pure-DP step that fits in this budget.

        A pure epsilon-DP mechanism is ``epsilon**2 / 2``-zCDP, so it fits in
        rho-zCDP when ``epsilon <= sqrt(2 rho)``.

        Returns
        -------
        epsilon : float
            ``sqrt(2 rho)``, rounded down so that ``epsilon**2 / 2 <= rho``
            holds exactly.
        """
        epsilon = math.sqrt(2.0 * self.rho)
        if math.isfinite(epsilon):
            while Fraction(epsilon) ** 2 / 2 > Fraction(self.rho):
                epsilon = math.nextafter(epsilon, 0.0)
        return epsilon

    def exponential_epsilon(self):
        """Epsilon of the largest exponential mechanism that fits in this budget.

        The exponential mechanism run at ``epsilon`` is ``epsilon``-bounded
        range (Durfee and Rogers, 2019), and an ``epsilon``-bounded-range
        mechanism is ``epsilon**2 / 8``-zCDP (Cesar and Rogers, 2021): four
        times less than the ``epsilon**2 / 2`` of a generic pure-DP step, so
        it runs at twice :meth:`pure_epsilon`.

        Returns
        -------
        epsilon : float
            ``sqrt(8 rho)``, rounded down so that ``epsilon**2 / 8 <= rho``
            holds exactly.
        """
        epsilon = math.sqrt(8.0 * self.rho)
        if math.isfinite(epsilon):
            while Fraction(epsilon) ** 2 / 8 > Fraction(self.rho):
                epsilon = math.nextafter(epsilon, 0.0)
        return epsilon


@_labels_documented
@dataclass(frozen=True, repr=False)
class GaussianDP(_Labelled):
    """Mu-Gaussian differential privacy (Dong, Roth and Su, 2022).

    A mechanism is ``mu``-GDP when telling two neighbours apart from its
    output is no easier than telling ``N(0, 1)`` from ``N(mu, 1)``. A
    Gaussian mechanism with L2 sensitivity ``Delta`` and noise standard
    deviation ``sigma`` is ``Delta / sigma``-GDP, and Gaussian mechanisms
    compose, adaptively, to ``mu = sqrt(sum mu_i**2)`` exactly (Corollary
    3.3). Its (epsilon, delta) guarantees are the analytic Gaussian curve of
    Balle and Wang (2018), :func:`gaussian_delta`, with no slack: a fit
    whose parts are all Gaussian, asked for (epsilon, delta), runs at the
    ``mu`` of :func:`gaussian_mu` and records this guarantee.

    ``mu``-GDP implies ``mu**2 / 2``-zCDP (:meth:`to_zcdp`), which is how it
    composes with pure-DP and zCDP guarantees.

    Parameters
    ----------
    mu : float
        Sensitivity over noise standard deviation; ``inf`` means no privacy.
    {labels}

    References
    ----------
    Dong, J., Roth, A. and Su, W. J. "Gaussian Differential Privacy".
    Journal of the Royal Statistical Society B, 2022.

    Balle, B. and Wang, Y.-X. "Improving the Gaussian Mechanism for
    Differential Privacy: Analytical Calibration and Optimal Denoising".
    ICML 2018, Theorem 8.

    Examples
    --------
    >>> from dpcov.accounting import GaussianDP, gaussian_mu
    >>> budget = GaussianDP(gaussian_mu(1.0, 1e-6))
    >>> round(budget.mu, 4), budget.to_approx_dp(1e-6).epsilon
    (0.2367, 1.0)
    >>> round(budget.to_zcdp().rho, 5)
    0.02801
    """

    mu: float

    def __post_init__(self):
        _check_nonnegative("mu", self.mu)
        self._check_labels()

    def _doubled(self):
        # Group privacy for two units: 2 mu (Dong, Roth and Su, 2022,
        # Theorem 2.14).
        return GaussianDP(2.0 * self.mu, unit=self.unit)

    def to_zcdp(self):
        """Return the zCDP guarantee implied by this one (``mu**2 / 2``).

        Returns
        -------
        guarantee : ZCDP
            ``ZCDP(mu**2 / 2)``, rounded up: a Gaussian mechanism's Renyi
            divergence of order alpha is ``alpha mu**2 / 2`` (Bun and
            Steinke, 2016, Proposition 1.6).
        """
        return ZCDP(_half_square(self.mu, up=True), **self._labels())

    @classmethod
    def of_gaussian_steps(cls, rho, **labels):
        """The guarantee of Gaussian steps whose zCDP budgets sum to ``rho``.

        Parameters
        ----------
        rho : float
            The sum of the steps' rhos (each step's noise ``sigma_i =
            Delta_i / sqrt(2 rho_i)``: ``sqrt(2 rho_i)``-GDP).
        **labels
            ``unit`` and ``relation``.

        Returns
        -------
        guarantee : GaussianDP
            ``GaussianDP(sqrt(2 rho))``, rounded up.
        """
        return cls(_gaussian_mu_of_rho(rho), **labels)

    def gaussian_rho(self):
        """The rho of Gaussian steps that together make up this guarantee.

        Gaussian steps calibrated to zCDP budgets ``rho_i`` (noise
        ``sigma_i = Delta_i / sqrt(2 rho_i)``) are ``sqrt(2 rho_i)``-GDP and
        compose to ``mu`` when the ``rho_i`` sum to ``mu**2 / 2``.

        Returns
        -------
        rho : float
            ``mu**2 / 2``, rounded down.
        """
        return _half_square(self.mu, up=False)

    def to_approx_dp(self, delta):
        """Return the (epsilon, delta) guarantee on the exact curve.

        Parameters
        ----------
        delta : float
            Target delta in [0, 1).

        Returns
        -------
        guarantee : ApproxDP
            The guarantee with epsilon from :func:`gaussian_epsilon`.
        """
        return ApproxDP(gaussian_epsilon(self.mu, delta), delta, **self._labels())

    def _holds_at(self, epsilon, delta):
        # Whether it is (epsilon, delta)-DP by the calibration's own test: mu
        # at most the analytic Gaussian's (to_approx_dp's epsilon, a root,
        # may read an ulp above the epsilon a fit was calibrated at).
        return self.mu <= gaussian_mu(float(epsilon), float(delta))


@_labels_documented
@dataclass(frozen=True, repr=False)
class ProfileDP(_Labelled):
    """The exact curve of Gaussian, pure-DP and bounded-range steps, composed.

    The guarantee of a fit whose steps are Gaussian mechanisms (composed to
    one, ``mu``-GDP), pure-DP steps (randomized response dominates each) and
    bounded-range steps (the exponential mechanism; Dong, Durfee and Rogers
    2020): its (epsilon, delta) curve is that of their composed privacy loss
    distributions, computed with every loss rounded up (an upper bound).
    Each part is also zCDP (``mu**2 / 2``, ``epsilon**2 / 2`` and
    ``epsilon**2 / 8``), which is how it composes with other fits.

    Parameters
    ----------
    mu : float
        The Gaussian steps' composed sensitivity in noise standard
        deviations.
    pure : tuple of float, default=()
        The pure-DP steps' epsilons.
    bounded_range : tuple of float, default=()
        The bounded-range steps' epsilons.
    {labels}

    Examples
    --------
    >>> from dpcov.accounting import ProfileDP
    >>> guarantee = ProfileDP(0.2, bounded_range=(0.1,))
    >>> round(guarantee.to_approx_dp(1e-6).epsilon, 3)
    0.867
    >>> round(guarantee.to_zcdp().rho, 5)
    0.02125
    """

    mu: float
    pure: tuple = ()
    bounded_range: tuple = ()

    def __post_init__(self):
        _check_nonnegative("mu", self.mu)
        for name in ("pure", "bounded_range"):
            values = tuple(getattr(self, name))
            for value in values:
                _check_nonnegative(name, value)
            object.__setattr__(self, name, tuple(float(v) for v in values))
        self._check_labels()

    def _doubled(self):
        # Group privacy for two units: each part at twice its parameter.
        return ProfileDP(
            2.0 * self.mu,
            tuple(2.0 * e for e in self.pure),
            tuple(2.0 * e for e in self.bounded_range),
            unit=self.unit,
        )

    def to_zcdp(self):
        """Return the zCDP guarantee implied by this one.

        Returns
        -------
        guarantee : ZCDP
            ``mu**2 / 2 + sum(pure**2) / 2 + sum(bounded_range**2) / 8``
            (Bun and Steinke 2016; Cesar and Rogers 2021), rounded up.
        """
        parts = [
            self.mu,
            *self.pure,
            *(e / 2.0 for e in self.bounded_range),  # (e/2)**2/2 = e**2/8
        ]
        return ZCDP(_sum_half_squares(parts, up=True), **self._labels())

    def to_approx_dp(self, delta):
        """Return the (epsilon, delta) guarantee on the composed curve.

        Parameters
        ----------
        delta : float
            Target delta in (0, 1).

        Returns
        -------
        guarantee : ApproxDP
            The smallest epsilon whose delta on the composed curve (an upper
            bound) is at most ``delta``, or the zCDP conversion's where that
            is smaller.
        """
        epsilon = min(
            profile_epsilon(self.mu, self.pure, self.bounded_range, delta),
            zcdp_epsilon(self.to_zcdp().rho, delta),
        )
        return ApproxDP(epsilon, delta, **self._labels())

    def _holds_at(self, epsilon, delta):
        # Whether it is (epsilon, delta)-DP by the calibration's own test:
        # the composed curve's delta at epsilon at most delta.
        loss = composed_loss(self.mu, self.pure, self.bounded_range)
        return loss.delta(float(epsilon)) <= delta


@_labels_documented
@dataclass(frozen=True, repr=False)
class ApproxDP(_Labelled):
    """Approximate (epsilon, delta)-differential privacy.

    Parameters
    ----------
    epsilon : float
        Privacy-loss bound.
    delta : float
        Failure probability, in [0, 1].
    {labels}

    Examples
    --------
    >>> from dpcov.accounting import ApproxDP, compose
    >>> compose([ApproxDP(0.5, 1e-6), ApproxDP(0.25, 0.0)])
    ApproxDP(epsilon=0.75, delta=1e-06)
    """

    epsilon: float
    delta: float

    def __post_init__(self):
        _check_nonnegative("epsilon", self.epsilon)
        _check_nonnegative("delta", self.delta)
        if self.delta > 1:
            raise ValueError(f"delta must be at most 1, got {self.delta!r}.")
        self._check_labels()

    def _doubled(self):
        # (2 eps, (1 + e^eps) delta), delta at most 1; rounded up by a
        # relative 1e-15, more than the rounding of exp and the product.
        delta = 0.0
        if self.delta > 0:
            growth = math.exp(self.epsilon) if self.epsilon < 700 else math.inf
            delta = min(1.0, (1.0 + growth) * self.delta * (1 + 1e-15))
        return ApproxDP(2.0 * self.epsilon, delta, unit=self.unit)


@_labels_documented
@dataclass(frozen=True, repr=False)
class SelectionDP(ApproxDP):
    """(epsilon, delta)-DP of the best of a random number of private runs.

    The guarantee of releasing only the best of ``K`` runs of a ``run``-private
    mechanism, ``K`` drawn from a truncated negative binomial law of shape
    ``shape`` (0: logarithmic, 1: geometric) or a Poisson law (``shape =
    inf``) with mean ``mean`` (Papernot and Steinke, 2022, Theorems 2 and 6):
    the ``(epsilon, delta)`` their Renyi bound gives, with the run and the law
    it was computed from, which
    :func:`~dpcov.accounting.to_dp_event` hands to dp_accounting as a
    ``RepeatAndSelectDpEvent``. Composes as an :class:`ApproxDP`.

    Parameters
    ----------
    epsilon : float
        Privacy-loss bound.
    delta : float
        Failure probability, in [0, 1].
    run : PureDP or ZCDP
        The guarantee of one run (its fit and its score together).
    mean : float
        The expected number of runs of the law drawn from (or a bound above
        it), at least 1.
    shape : float
        The law's shape: ``eta >= 0`` of the truncated negative binomial, or
        ``inf`` for the Poisson law.
    {labels}

    References
    ----------
    Papernot, N. and Steinke, T. "Hyperparameter Tuning with Renyi
    Differential Privacy". ICLR 2022.

    Examples
    --------
    >>> from dpcov.accounting import ZCDP
    >>> from dpcov.mechanisms import selection_guarantee
    >>> guarantee = selection_guarantee(ZCDP(0.01), mean=10, delta=1e-6)
    >>> guarantee.run, guarantee.shape
    (ZCDP(rho=0.01), 0.0)
    """

    run: object
    mean: float
    shape: float

    def __post_init__(self):
        super().__post_init__()
        if not isinstance(self.run, PureDP | ZCDP):
            name = type(self.run).__name__
            raise TypeError(f"run must be a PureDP or ZCDP guarantee, got {name}.")
        if not (isinstance(self.mean, Real) and 1 <= self.mean < math.inf):
            raise ValueError(f"mean must be a finite number >= 1, got {self.mean!r}.")
        if not (isinstance(self.shape, Real) and self.shape >= 0):
            raise ValueError(f"shape must be >= 0 (or inf), got {self.shape!r}.")

    def _parameters(self):
        # The numbers of the guarantee (the run and the law describe it).
        return (self.epsilon, self.delta)


def notion_of(guarantee):
    """The class a guarantee composes as: ApproxDP for a SelectionDP, else its own."""
    return ApproxDP if isinstance(guarantee, ApproxDP) else type(guarantee)
