"""The Gaussian mechanism's exact curve and privacy loss distributions."""

import math

import numpy as np
import pytest
from scipy import stats

from dpcov.accounting import (
    gaussian_delta,
    gaussian_epsilon,
    gaussian_mu,
    zcdp_epsilon,
    zcdp_rho,
)
from dpcov.accounting._exact_curve import composed_loss, exact_rho, step_parameters
from dpcov.accounting._privacy_loss import PrivacyLoss


def _delta_by_quadrature(mu, epsilon):
    # E[(1 - e^(eps - L))_+] for L ~ N(mu^2/2, mu^2), integrated numerically:
    # an independent route to the closed form of Balle and Wang (2018).
    law = stats.norm(mu * mu / 2.0, mu)
    value = law.expect(lambda x: -math.expm1(epsilon - x), lb=epsilon, epsabs=1e-14)
    return value


@pytest.mark.parametrize("mu", [0.05, 0.3, 1.0, 4.0])
@pytest.mark.parametrize("epsilon", [0.0, 0.5, 2.0])
def test_gaussian_delta_is_the_expected_privacy_loss(mu, epsilon):
    expected = _delta_by_quadrature(mu, epsilon)
    assert gaussian_delta(mu, epsilon) == pytest.approx(expected, rel=1e-7, abs=1e-15)


def test_gaussian_delta_at_zero_is_the_total_variation():
    # delta(0) = 2 Phi(mu / 2) - 1: the total variation between N(0, 1) and
    # N(mu, 1).
    for mu in (0.1, 1.0, 3.0):
        assert gaussian_delta(mu, 0.0) == pytest.approx(
            2 * stats.norm.cdf(mu / 2) - 1, rel=1e-12
        )


def test_small_deltas_keep_their_digits():
    # Far in the tail the two terms of the curve agree to many digits: the
    # logarithms keep the difference (against mpmath-free quadrature).
    mu, epsilon = 0.5, 6.0
    expected = _delta_by_quadrature(mu, epsilon)
    assert expected < 1e-20
    assert gaussian_delta(mu, epsilon) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(
    ("epsilon", "delta", "ratio", "digits"),
    # The zCDP calibration's sigma over the exact curve's, as measured when
    # the accounting was planned: 1.087 at (0.1, 1e-6), 1.0725 at (1, 1e-6),
    # 1.065 at (3, 1e-6), 1.084 at (1, 1e-5); within half a unit of the last
    # digit given.
    [
        (0.1, 1e-6, 1.087, 3),
        (1.0, 1e-6, 1.0725, 4),
        (3.0, 1e-6, 1.065, 3),
        (1.0, 1e-5, 1.084, 3),
    ],
)
def test_zcdp_calibration_costs_what_was_measured(epsilon, delta, ratio, digits):
    mu = gaussian_mu(epsilon, delta)
    cks_mu = math.sqrt(2 * zcdp_rho(epsilon, delta))
    assert mu / cks_mu == pytest.approx(ratio, abs=0.5 * 10.0**-digits)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-3])
def test_inverses_sit_on_the_safe_side_of_the_curve(epsilon, delta):
    # The inverses keep the curve's error bound (relative 1e-11 or less
    # here) on the safe side: mu a hair below the root, epsilon a hair
    # above; 1e-8 relative moves either past it.
    mu = gaussian_mu(epsilon, delta)
    assert gaussian_delta(mu, epsilon) <= delta
    assert gaussian_delta(mu * (1 + 1e-8), epsilon) > delta
    found = gaussian_epsilon(mu, delta)
    assert gaussian_delta(mu, found) <= delta
    assert gaussian_delta(mu, found * (1 - 1e-8)) > delta


def test_curve_error_bound_against_high_precision():
    # The bound on the computed curve's relative error (CURVE_ERROR times a
    # model of its cancellations) holds against 60-digit arithmetic where
    # mpmath is installed (it comes with dp_accounting).
    mpmath = pytest.importorskip("mpmath")
    from dpcov.accounting._conversions import _gaussian_curve, _gaussian_curve_error

    mpmath.mp.dps = 60
    for mu in np.logspace(-5, 2, 15):
        for x in (-1.0, 0.0, 1e-6, 1e-3, 0.1, 1.0, 5.0, 40.0):
            m, e = mpmath.mpf(mu), mpmath.mpf(x)
            first, second = mpmath.ncdf(m / 2 - e / m), mpmath.ncdf(-m / 2 - e / m)
            true = first - mpmath.exp(e) * second
            if true < mpmath.mpf("1e-290"):
                continue
            error = abs(mpmath.mpf(float(_gaussian_curve(mu, x)[0])) - true) / true
            assert error <= _gaussian_curve_error(mu, x)


def test_curve_edge_cases():
    assert gaussian_delta(0.0, 1.0) == 0.0
    assert gaussian_delta(math.inf, 1.0) == 1.0
    assert gaussian_epsilon(0.0, 1e-6) == 0.0
    assert gaussian_epsilon(1.0, 0.0) == math.inf
    assert gaussian_epsilon(1e-3, 0.5) == 0.0  # (0, 0.5)-DP already
    assert gaussian_mu(math.inf, 1e-6) == math.inf
    # Far arguments: no NaN, no negative zero, no overflow.
    for mu, epsilon in ((1e-160, 1.0), (1.0, 1e308), (1e-3, 1e3)):
        value = gaussian_delta(mu, epsilon)
        assert value == 0.0 and math.copysign(1.0, value) == 1.0
    assert gaussian_delta(1e300, 1.0) == 1.0
    assert math.isfinite(gaussian_mu(1e300, 1e-6))
    assert gaussian_epsilon(1e160, 1e-6) == math.inf
    # epsilon = 0: delta(0) = erf(mu / (2 sqrt 2)), inverted directly.
    mu = gaussian_mu(0.0, 1e-12)
    assert gaussian_delta(mu, 0.0) <= 1e-12 < gaussian_delta(mu * (1 + 1e-8), 0.0)
    for bad in (lambda: gaussian_mu(1.0, 0.0), lambda: gaussian_epsilon(1.0, 1.0)):
        with pytest.raises(ValueError, match="delta"):
            bad()
    with pytest.raises(ValueError, match="mu"):
        gaussian_delta(-1.0, 1.0)


# -- privacy loss distributions ------------------------------------------------


@pytest.mark.parametrize("mu", [0.2, 1.0, 3.0])
def test_gaussian_loss_is_the_exact_curve_raised_by_its_error(mu):
    # The Gaussian part is not discretised: its delta is the curve, raised
    # by the curve's error bound (relative 1e-12 or less at these mu).
    # (Epsilons where delta is above 1e-12: the quadrature's own accuracy.)
    loss = PrivacyLoss.gaussian(mu)
    for epsilon in (0.0, 0.3, 1.0):
        exact = _delta_by_quadrature(mu, epsilon)
        assert exact <= loss.delta(epsilon) <= exact * (1 + 1e-9)


def test_composed_gaussians_are_one_gaussian():
    # mu_1 and mu_2 compose to sqrt(mu_1^2 + mu_2^2) (Dong, Roth and Su 2022).
    composed = PrivacyLoss.gaussian(0.3).compose(PrivacyLoss.gaussian(0.4))
    assert composed.mu == pytest.approx(0.5, rel=1e-15)
    for epsilon in (0.2, 1.0, 2.0):
        exact = _delta_by_quadrature(0.5, epsilon)
        assert exact <= composed.delta(epsilon) <= exact * (1 + 1e-9)


def _randomized_response_delta(epsilon, k, target):
    # k pure epsilon-DP steps, each dominated by randomized response: L =
    # (2j - k) epsilon with j ~ Binomial(k, e^eps / (1 + e^eps)) (Kairouz, Oh
    # and Viswanath 2015).
    j = np.arange(k + 1)
    losses = (2 * j - k) * epsilon
    weights = stats.binom.pmf(j, k, 1 / (1 + math.exp(-epsilon)))
    above = losses > target
    return float(np.dot(-np.expm1(target - losses[above]), weights[above]))


@pytest.mark.parametrize("k", [1, 3, 10])
def test_pure_steps_compose_as_randomized_response(k):
    # epsilon on the grid: the rounding up moves no loss.
    epsilon = 0.25
    loss = PrivacyLoss()
    for _ in range(k):
        loss = loss.compose(PrivacyLoss.pure(epsilon))
    # delta raises its sum of m products by 2 m u for their rounding.
    rounding = 2 * loss.probabilities.size * np.finfo(float).eps
    for target in (0.0, 0.4, 1.0):
        exact = _randomized_response_delta(epsilon, k, target)
        assert exact * (1 - 1e-13) <= loss.delta(target) <= exact * (1 + 2 * rounding)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_bounded_range_loss_matches_its_curve(epsilon):
    # One epsilon-bounded-range step: delta(eps') = (e^(eps/2) - e^(eps'/2))^2
    # / (e^eps - 1) for 0 <= eps' <= eps (the largest over the two-point
    # worst cases of Dong, Durfee and Rogers 2020, at t = (eps + eps') / 2);
    # the grid's rounding moves it by at most one step.
    loss = PrivacyLoss.bounded_range(epsilon)

    def curve(target):
        # (The same expectation below 0: the formula holds on (-eps, eps).)
        return (math.exp(epsilon / 2) - math.exp(target / 2)) ** 2 / math.expm1(epsilon)

    for share in (0.0, 0.3, 0.7):
        target = share * epsilon
        assert curve(target) <= loss.delta(target)
        assert loss.delta(target) <= curve(target - loss.spacing) * (1 + 1e-12)
    assert loss.probabilities.sum() == pytest.approx(1.0, rel=1e-12)


def test_bounded_range_is_between_its_pure_bounds():
    # epsilon-BR is epsilon-DP, so randomized response at epsilon bounds it;
    # and it is tighter than randomized response at epsilon (it is
    # epsilon^2 / 8-zCDP against epsilon^2 / 2).
    epsilon = 1.0
    br, rr = PrivacyLoss.bounded_range(epsilon), PrivacyLoss.pure(epsilon)
    for target in (0.0, 0.2, 0.5):
        assert br.delta(target) < rr.delta(target)


def test_epsilon_inverts_delta():
    loss = PrivacyLoss.gaussian(0.5).compose(PrivacyLoss.bounded_range(0.2))
    epsilon = loss.epsilon(1e-6)
    assert loss.delta(epsilon) <= 1e-6
    assert loss.delta(epsilon - 1e-6) > 1e-6
    assert PrivacyLoss().epsilon(1e-6) == 0.0
    with pytest.raises(ValueError, match="same grid"):
        loss.compose(PrivacyLoss.pure(0.1, spacing=1e-3))


def test_against_dp_accounting():
    # Google's dp_accounting, where installed: its PLD of the same Gaussian
    # and pure parts, composed, at the same grid.
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    common = pytest.importorskip("dp_accounting.pld.common")
    theirs = pld.from_gaussian_mechanism(
        standard_deviation=1 / 0.4, value_discretization_interval=1e-4
    ).compose(
        pld.from_privacy_parameters(
            common.DifferentialPrivacyParameters(0.3, 0.0),
            value_discretization_interval=1e-4,
        )
    )
    ours = PrivacyLoss.gaussian(0.4).compose(PrivacyLoss.pure(0.3))
    for epsilon in (0.5, 1.0, 2.0):
        # Theirs discretises the Gaussian part too, on a grid of 1e-4: a loss
        # moved by 1e-4 changes delta by under 1e-3 relative where the
        # curve's log-slope is below 10, as here.
        assert ours.delta(epsilon) == pytest.approx(
            theirs.get_delta_for_epsilon(epsilon), rel=1e-3
        )


# -- the budget a fit may run at ---------------------------------------------


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
def test_gaussian_steps_run_at_the_analytic_gaussian(epsilon):
    # Steps that are all Gaussian compose to one Gaussian with mu =
    # sqrt(2 rho g): at the budget found, mu is the analytic Gaussian's for
    # the ask (the closed form of Balle and Wang 2018, not a search).
    shares = {"gaussian": [0.25, 0.7]}
    rho = exact_rho(epsilon, 1e-6, shares)
    mu = step_parameters(rho, shares)[0]
    assert 0.99 <= mu / gaussian_mu(epsilon, 1e-6) <= 1.0
    assert gaussian_delta(mu, epsilon) <= 1e-6
    # One noise scale for every step: sigma_i = Delta_i / sqrt(2 rho s_i).
    assert rho >= zcdp_rho(epsilon, 1e-6)


@pytest.mark.parametrize(
    "shares",
    [
        {"gaussian": [0.45, 0.45], "pure": [0.1]},  # a private radius (sparse vector)
        {"gaussian": [0.9, 1 / 64], "bounded_range": [1 / 16]},  # a threshold search
    ],
)
@pytest.mark.parametrize("epsilon", [0.25, 1.0])
def test_mixed_steps_spend_the_ask_on_the_composed_curve(shares, epsilon):
    # With pure or bounded-range steps the composed loss is searched: its
    # delta at epsilon lands in [delta / 2, delta] (the criterion;
    # the search stops within RHO_PRECISION), and the budget is never below
    # the zCDP calibration's.
    rho = exact_rho(epsilon, 1e-6, shares)
    assert rho >= zcdp_rho(epsilon, 1e-6)
    delta = composed_loss(*step_parameters(rho, shares)).delta(epsilon)
    assert 0.5e-6 <= delta <= 1e-6


def test_mixed_budget_against_dp_accounting():
    # The same steps in dp_accounting's PLD accountant, at the budget found:
    # within 1% of the ask (the criterion; its discretisation of
    # the Gaussian part differs from our exact one).
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    common = pytest.importorskip("dp_accounting.pld.common")
    shares = {"gaussian": [0.45, 0.45], "pure": [0.1]}
    rho = exact_rho(1.0, 1e-6, shares)
    mu, (pure,), _ = step_parameters(rho, shares)
    theirs = pld.from_gaussian_mechanism(
        standard_deviation=1 / mu, value_discretization_interval=1e-4
    ).compose(
        pld.from_privacy_parameters(
            common.DifferentialPrivacyParameters(pure, 0.0),
            value_discretization_interval=1e-4,
        )
    )
    assert theirs.get_delta_for_epsilon(1.0) == pytest.approx(1e-6, rel=0.01)


def test_exact_rho_refuses_bad_asks():
    with pytest.raises(ValueError, match="delta"):
        exact_rho(1.0, 0.0, {"gaussian": [1.0]})
    with pytest.raises(ValueError, match="kinds"):
        exact_rho(1.0, 1e-6, {"laplace": [1.0]})
    for epsilon in (math.inf, 0.0):
        with pytest.raises(ValueError, match="epsilon"):
            exact_rho(epsilon, 1e-6, {"gaussian": [0.5], "pure": [0.5]})
    # Shares that spend more than the budget, or no number: refused (with
    # them the budget found would not hold).
    for shares in ({"gaussian": [1.0, 1.0]}, {"gaussian": [-1.0]}, {"pure": [np.nan]}):
        with pytest.raises(ValueError, match="share"):
            exact_rho(1.0, 1e-6, shares)
    # No Gaussian step and nothing else: the zCDP calibration.
    assert exact_rho(1.0, 1e-6, {}) == zcdp_rho(1.0, 1e-6)


def test_a_ledger_of_gaussian_releases_on_the_exact_curve():
    # The accounting chapter's example: ten GaussianCovariance fits with
    # data_norm, each asked for (1, 1e-6), each one Gaussian release at the
    # analytic Gaussian's mu. The ledger of Gaussian-DP fits composes to
    # sqrt(10) mu, (3.52, 1e-6) on the exact curve; through zCDP the same
    # fits would read (3.77, 1e-6). (Calibrated through zCDP, with 7% more
    # noise, they read (3.49, 1e-6) and were (3.26, 1e-6)-DP.)
    from dpcov.accounting import BudgetAccountant, GaussianDP
    from dpcov.covariance import GaussianCovariance

    accountant = BudgetAccountant(delta=1e-6)
    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(1000, 3))
    for seed in range(10):
        GaussianCovariance(
            epsilon=1.0,
            delta=1e-6,
            data_norm=1.0,
            assume_centered=True,
            accountant=accountant,
            random_state=seed,
        ).fit(X)
    mu = gaussian_mu(1.0, 1e-6)
    assert accountant.ledger[0][1] == GaussianDP(mu)
    total = accountant.total()
    assert total.mu == pytest.approx(math.sqrt(10) * mu, rel=1e-15)
    assert accountant.epsilon == gaussian_epsilon(total.mu, 1e-6)
    assert round(accountant.epsilon, 2) == 3.52
    assert round(zcdp_epsilon(accountant.rho, 1e-6), 2) == 3.77
    old = math.sqrt(2 * zcdp_rho(1.0, 1e-6))
    assert round(zcdp_epsilon(10 * zcdp_rho(1.0, 1e-6), 1e-6), 2) == 3.49
    assert round(gaussian_epsilon(math.sqrt(10) * old, 1e-6), 2) == 3.26


def test_the_ledger_example_against_dp_accounting():
    # The chapter's dp_accounting snippet: one fit's event read back as its
    # ask, and ten fits' ledger as the accountant's exact total, within 1%
    # (dp_accounting's PLD grid rounds pessimistically).
    pld = pytest.importorskip("dp_accounting.pld")
    from dpcov.accounting import BudgetAccountant, to_dp_event
    from dpcov.covariance import GaussianCovariance

    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(1000, 3))
    ledger = BudgetAccountant(delta=1e-6)
    est = GaussianCovariance(
        epsilon=1.0, delta=1e-6, data_norm=1.0, accountant=ledger, random_state=0
    )
    event, relation = to_dp_event(est.fit(X).guarantee_)
    one = pld.PLDAccountant(relation).compose(event).get_epsilon(1e-6)
    assert one == pytest.approx(1.0, rel=0.01)
    for _ in range(9):
        est.fit(X)
    event, relation = to_dp_event(ledger)
    ten = pld.PLDAccountant(relation).compose(event).get_epsilon(1e-6)
    assert ten == pytest.approx(ledger.epsilon, rel=0.01)
    assert round(ledger.epsilon, 2) == 3.52


@pytest.mark.parametrize(
    ("mu", "delta"),
    [
        (1.0, 0.3829249225480262),  # one ulp above delta(0): within the error
        (1e-30, 1e-16),  # tiny mu: the computed curve lost its digits
        (1e-15, 1e-40),
        (61129.63609661357, 2.3424442892741946e-19),  # large mu: z1's rounding
    ],
)
def test_gaussian_epsilon_is_safe_where_the_curve_is_hard(mu, delta):
    # Found by a review: these raised, or returned an epsilon below the true
    # root. The upper bound of the curve (its error bound, or Phi(z1) where
    # that bound is useless) is what the inverse solves.
    from dpcov.accounting._conversions import _gaussian_curve_above

    epsilon = gaussian_epsilon(mu, delta)
    assert _gaussian_curve_above(mu, epsilon)[0] <= delta


@pytest.mark.parametrize(
    ("epsilon", "delta"),
    [(1e-18, 1e-19), (1e-27, 1e-40), (1e-15, 1e-40), (2112637850.7644794, 1.3e-07)],
)
def test_gaussian_mu_is_safe_where_the_curve_is_hard(epsilon, delta):
    from dpcov.accounting._conversions import _gaussian_curve_above

    mu = gaussian_mu(epsilon, delta)
    assert _gaussian_curve_above(mu, epsilon)[0] <= delta


def test_subnormal_deltas_are_refused():
    # A subnormal delta has no bounded relative error: refused, not answered.
    for call in (
        lambda: gaussian_mu(1.0, 5e-324),
        lambda: gaussian_epsilon(1.0, 5e-324),
    ):
        with pytest.raises(ValueError, match="normal float"):
            call()


def test_privacy_loss_edges():
    # Grid points a few ulps below the exact sum of rounded-up losses are
    # raised (20 pure steps at 0.1: the top loss 2.0000000000000001 > 2);
    # a Gaussian part too small to compute gives a pessimistic delta, never
    # NaN; shares that cost nothing, or next to nothing, end the search.
    loss = PrivacyLoss()
    for _ in range(20):
        loss = loss.compose(PrivacyLoss.pure(0.1))
    assert loss.delta(2.0) > 0
    tiny = PrivacyLoss.gaussian(1e-160).compose(PrivacyLoss.pure(0.3))
    assert math.isfinite(tiny.delta(0.1)) and tiny.delta(0.1) >= PrivacyLoss.pure(
        0.3
    ).delta(0.1)
    for shares in ({"pure": [0.0]}, {"pure": [5e-324]}):
        assert exact_rho(1.0, 1e-6, shares) >= zcdp_rho(1.0, 1e-6)
    for shares in ({"gaussian": ["0.5"]}, {"gaussian": [True]}):
        with pytest.raises(ValueError, match="share"):
            exact_rho(1.0, 1e-6, shares)
