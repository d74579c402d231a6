"""No budget split, composition or report exceeds what was asked, exactly.

Issue 17: every ``epsilon_spent_``, ``delta_spent_``, ``rho_spent_`` and
``guarantee_``, and every total, is at most the budget asked for, not even
one ulp above it; and every ``delta`` in (0, 1) converts to zCDP.
"""

import math
import random
from fractions import Fraction

import numpy as np
import pytest

from dpcov.accounting import (
    ZCDP,
    ApproxDP,
    BudgetAccountant,
    GaussianDP,
    ProfileDP,
    PureDP,
    compose,
    gaussian_mu,
    split_budget,
    zcdp_epsilon,
    zcdp_rho,
)
from dpcov.accounting._composition import _even_share, _left
from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA, ApproximateSubspace, ExactSubspace
from dpcov.distributions import MultivariateGaussian, ProductBernoulli
from dpcov.distributions._coinpress import step_budgets
from dpcov.exceptions import NoHeavyCell, NoStableSubspace
from dpcov.utils import (
    check_privacy_params,
    check_zcdp_privacy_params,
    privacy_spent,
)


def _value(guarantee):
    return guarantee.epsilon if isinstance(guarantee, PureDP) else guarantee.rho


def _log_uniform(rng, low, high):
    return math.exp(rng.uniform(math.log(low), math.log(high)))


# Shares as the estimators write them: a remainder after fixed shares, equal
# shares, or normalised weights (EigenSamplingCovariance's directions).
_FIXED = (0.125, 0.25, 0.1, 0.2, 0.3, 1.0 / 3.0, 0.05, 0.75)


def _random_shares(rng):
    k = rng.randint(1, 6)
    style = rng.randrange(3)
    if style == 0:
        shares = [rng.choice(_FIXED) for _ in range(k - 1)]
        if sum(shares) >= 1.0:
            shares = [1.0 / k] * (k - 1)
        shares.append(1.0 - sum(shares))
    elif style == 1:
        shares = [1.0 / k] * k
    else:
        weights = [rng.random() ** 2 + 1e-3 for _ in range(k)]
        total = sum(weights)
        shares = [w / total for w in weights]
    return {f"step {i}": share for i, share in enumerate(shares)}


def _split_twice(rng, budget):
    # A split, one of whose parts is split again (AdaptiveCovariance's final
    # step, CoinPress's iterations): the leaves, the first split and the
    # second, with the budget each came from.
    split = split_budget(budget, _random_shares(rng))
    name = rng.choice(list(split))
    inner = split_budget(split[name], _random_shares(rng))
    leaves = [g for key, g in split.items() if key != name] + list(inner.values())
    return leaves, [(list(split.values()), budget), (list(inner.values()), split[name])]


def _exact_sum_at_most(parts, whole):
    # sum(parts) <= whole in exact arithmetic: floats are n / 2**k, so bring
    # them to the smallest common power of two as integers.
    ratios = [x.as_integer_ratio() for x in [*parts, whole]]
    bits = max(d.bit_length() for _, d in ratios)
    ints = [n << (bits - d.bit_length()) for n, d in ratios]
    return sum(ints[:-1]) <= ints[-1]


def _assert_within(parts, whole):
    # The float composition and the exact sum of the parts.
    assert _value(compose(parts)) <= _value(whole)
    assert _exact_sum_at_most([_value(g) for g in parts], _value(whole))


# --- the conversion for every delta in (0, 1) ------------------------------

_EPSILONS = (1e-3, 0.1, 0.15, 1.0, 10.0, 100.0)
_LARGE_DELTAS = (0.2, 0.25, 0.3, 0.49, 0.5, 0.7, 0.9, 0.99, 0.999)


def _cks_on_a_grid(rho, delta):
    # Corollary 13 of Canonne, Kamath and Steinke (2020) in alpha itself,
    # minimised on a fine grid (independent of zcdp_epsilon's search).
    alpha = 1.0 + np.geomspace(1e-9, 1e6, 200_001)
    values = alpha * rho + (
        -math.log(delta) + (alpha - 1) * np.log1p(-1 / alpha) - np.log(alpha)
    ) / (alpha - 1)
    return max(float(values.min()), 0.0)


@pytest.mark.parametrize("delta", _LARGE_DELTAS)
def test_zcdp_rho_for_large_delta(delta):
    for epsilon in _EPSILONS:
        rho = zcdp_rho(epsilon, delta)
        # The largest rho: it converts to at most epsilon, a little more
        # would not.
        assert 0 < rho and zcdp_epsilon(rho, delta) <= epsilon
        assert zcdp_epsilon(rho * (1 + 1e-9), delta) > epsilon
        assert zcdp_epsilon(rho, delta) == pytest.approx(epsilon, rel=1e-9)
        assert check_privacy_params(epsilon, delta) == ZCDP(rho)
        assert check_zcdp_privacy_params(epsilon, delta) == ZCDP(rho)
    # For large delta the conversion certifies less than rho: the root lies
    # beyond the old bracket (0, epsilon].
    if delta >= 0.25:
        assert zcdp_rho(0.1, delta) > 0.1


@pytest.mark.parametrize("delta", (1e-6, 0.2, 0.5, 0.9, 0.999))
@pytest.mark.parametrize("rho", (1e-3, 0.1, 1.0, 10.0))
def test_zcdp_epsilon_matches_a_grid_for_large_delta(rho, delta):
    assert zcdp_epsilon(rho, delta) == pytest.approx(
        _cks_on_a_grid(rho, delta), rel=1e-6, abs=1e-9
    )


def test_zcdp_epsilon_is_zero_where_the_bound_is_negative():
    # (0, delta)-DP: at delta = 0.5 the infimum is negative for small rho.
    assert _cks_on_a_grid(1e-3, 0.5) == 0.0
    assert zcdp_epsilon(1e-3, 0.5) == 0.0
    assert zcdp_rho(1e-9, 0.5) > 1e-3


@pytest.mark.parametrize("delta", (0.25, 0.5, 0.9, 0.999))
def test_fits_with_large_delta(delta):
    # It used to end inside SciPy ("f(a) and f(b) must have different signs").
    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(100, 3))
    for epsilon in (0.1, 1.0):
        est = SeparateCovariance(
            epsilon=epsilon, delta=delta, data_norm=1.0, random_state=0
        ).fit(X)
        assert est.epsilon_spent_ <= epsilon and est.delta_spent_ == delta
        # Gaussian parts only: on the exact curve, at most the analytic mu.
        assert est.guarantee_.mu <= gaussian_mu(epsilon, delta)


# --- splits and compositions -----------------------------------------------


def test_split_and_compose_never_exceed_the_budget():
    # 10,000 random budgets (half pure, half zCDP), each split in random
    # shares and one part split again: every composition, and the exact sum
    # of the parts, is at most what was split. With the shares rounded to
    # nearest, 0.2 + 0.8 * 0.75 already exceeds 0.8 by half an ulp.
    rng = random.Random(17)
    for i in range(10_000):
        kind = PureDP if i % 2 else ZCDP
        budget = kind(_log_uniform(rng, 1e-6, 1e3))
        leaves, splits = _split_twice(rng, budget)
        for parts, whole in splits:
            _assert_within(parts, whole)
        _assert_within(leaves, budget)
        if kind is PureDP:
            epsilon, delta, _ = privacy_spent(compose(leaves), 1e-6)
            assert epsilon <= budget.epsilon and delta == 0.0


def test_split_is_the_products_rounded_down_only_when_needed():
    split = split_budget(PureDP(1.0), {"a": 0.125, "b": 0.125, "c": 0.75})
    assert split == {"a": PureDP(0.125), "b": PureDP(0.125), "c": PureDP(0.75)}
    split = split_budget(ZCDP(0.8), {"a": 0.25, "b": 0.75})
    # 0.8 * 0.75 rounds up, half an ulp over 0.8 in all; the largest part
    # gives up one ulp.
    assert not _exact_sum_at_most([0.8 * 0.25, 0.8 * 0.75], 0.8)
    assert split == {"a": ZCDP(0.2), "b": ZCDP(math.nextafter(0.8 * 0.75, 0.0))}
    assert _exact_sum_at_most([0.2, split["b"].rho], 0.8)
    # Shares off by rounding (summing to 1 + 1e-13) still fit.
    split = split_budget(ZCDP(2.0), {"a": 0.5, "b": 0.5 + 1e-13})
    _assert_within(list(split.values()), ZCDP(2.0))
    assert split_budget(PureDP(math.inf), {"a": 0.5, "b": 0.5}) == {
        "a": PureDP(math.inf),
        "b": PureDP(math.inf),
    }


def test_even_shares_and_what_is_left():
    rng = random.Random(3)
    for _ in range(500):
        total = _log_uniform(rng, 1e-9, 1e3)
        n_parts = rng.randint(1, 49)
        share = _even_share(total, n_parts)
        assert Fraction(share) * n_parts <= Fraction(total)
        assert Fraction(math.nextafter(share, math.inf)) * n_parts > Fraction(total)
        parts = [share] * (n_parts - 1) + [_log_uniform(rng, 1e-12, total) / n_parts]
        left = _left(total, parts)
        assert sum(map(Fraction, parts)) + Fraction(left) <= Fraction(total)
        assert sum(map(Fraction, parts)) + Fraction(
            math.nextafter(left, math.inf)
        ) > Fraction(total)
        rhos = step_budgets(total, n_parts, 0.25)
        assert len(rhos) == n_parts and sum(map(Fraction, rhos)) <= Fraction(total)
    assert _even_share(math.inf, 3) == math.inf
    assert _left(1.0, [0.5, 0.75]) == 0.0


def test_pure_and_zcdp_conversions_are_rounded_the_safe_way():
    rng = random.Random(5)
    for _ in range(2000):
        epsilon = _log_uniform(rng, 1e-6, 1e3)
        # A pure step is never counted for less than epsilon**2 / 2 ...
        assert Fraction(PureDP(epsilon).to_zcdp().rho) >= Fraction(epsilon) ** 2 / 2
        # ... and the pure step that fits in rho-zCDP is at most sqrt(2 rho).
        rho = _log_uniform(rng, 1e-9, 1e3)
        fitted = ZCDP(rho).pure_epsilon()
        assert Fraction(fitted) ** 2 / 2 <= Fraction(rho)
        assert PureDP(fitted).to_zcdp().rho <= rho
        assert Fraction(math.nextafter(fitted, math.inf)) ** 2 / 2 > Fraction(rho)


def _random_ask(rng):
    epsilon = _log_uniform(rng, 1e-3, 1e2)
    delta = 0.0 if rng.random() < 0.25 else _log_uniform(rng, 1e-12, 0.99)
    rho = None if rng.random() < 0.7 else _log_uniform(rng, 1e-4, 1e2)
    return epsilon, delta, rho


def _check_reports(n_settings, seed):
    # Budget from the parameters, split (twice) and composed back, then
    # reported as the estimators do: never above what was asked.
    rng = random.Random(seed)
    for _ in range(n_settings):
        epsilon, delta, rho = _random_ask(rng)
        budget = check_privacy_params(epsilon, delta, rho)
        leaves, splits = _split_twice(rng, budget)
        for parts, whole in splits:
            _assert_within(parts, whole)
        composed = compose(leaves)
        asked = epsilon if rho is None else None
        spent_epsilon, spent_delta, spent_rho = privacy_spent(
            composed, delta, epsilon=asked
        )
        assert spent_delta <= delta
        if rho is None:
            assert spent_epsilon <= epsilon, (epsilon, delta)
        else:
            assert spent_rho <= rho


def test_reports_never_exceed_the_ask():
    # A fast sample of the conversion (zcdp_rho takes a few milliseconds).
    _check_reports(200, seed=0)


@pytest.mark.slow
def test_reports_never_exceed_the_ask_10000_settings():
    _check_reports(10_000, seed=1)


def test_privacy_spent_caps_a_conversion_one_ulp_above():
    # The composed rho is at most the rho derived from (epsilon, delta), yet
    # its conversion may round above epsilon: then epsilon is reported.
    rng = random.Random(11)
    found = 0
    for _ in range(100):
        epsilon = _log_uniform(rng, 1e-2, 1e2)
        delta = _log_uniform(rng, 1e-12, 0.5)
        rho = zcdp_rho(epsilon, delta)
        smaller = math.nextafter(rho, 0.0)
        if zcdp_epsilon(smaller, delta) > epsilon:
            found += 1
            assert privacy_spent(ZCDP(smaller), delta, epsilon=epsilon)[0] == epsilon
        assert privacy_spent(ZCDP(smaller), delta, epsilon=epsilon)[0] <= epsilon
    assert found  # about one rho in ten
    # Without the asked epsilon the conversion is reported as computed.
    assert privacy_spent(ZCDP(0.5), 1e-6)[0] == zcdp_epsilon(0.5, 1e-6)


# --- the accountant's cap --------------------------------------------------


def test_accountant_totals_never_exceed_the_cap():
    rng = random.Random(23)
    for i in range(300):
        if i % 2:
            cap, kind = _log_uniform(rng, 1e-3, 1e2), PureDP
            acc = BudgetAccountant(epsilon=cap)
        else:
            cap, kind = _log_uniform(rng, 1e-4, 1e2), ZCDP
            acc = BudgetAccountant(rho=cap)
        parts = list(split_budget(kind(cap), _random_shares(rng)).values())
        for part in parts:
            acc.spend(part)
        left = acc.remaining()
        acc.spend(left)
        total = acc.total()
        assert type(total) is kind and _value(total) <= cap
        assert (acc.epsilon if kind is PureDP else acc.rho) <= cap
        assert _value(acc.remaining()) <= math.ulp(cap)


def test_remaining_under_an_epsilon_delta_cap():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    acc.spend(ZCDP(zcdp_rho(0.5, 1e-6))).spend(PureDP(0.1))
    left = acc.remaining()
    assert isinstance(left, ZCDP) and left.rho > 0
    acc.spend(left)
    assert acc.epsilon <= 1.0
    with pytest.raises(Exception, match="would bring the total"):
        acc.spend(ZCDP(math.nextafter(left.rho, math.inf) * 1.001))
    assert BudgetAccountant().remaining() is None
    full = BudgetAccountant(epsilon=1.0, delta=1e-6).spend(ApproxDP(1.0, 1e-6))
    assert full.remaining() == ZCDP(0.0)


# --- fitted estimators -----------------------------------------------------


def _datasets():
    rng = np.random.default_rng(0)
    real = rng.normal(size=(200, 3)) / 4.0
    basis = rng.integers(-3, 4, size=(2, 4))
    planar = (rng.integers(-9, 10, size=(400, 2)) @ basis).astype(float)
    binary = (rng.random((200, 4)) < [0.5, 0.3, 0.1, 0.02]).astype(float)
    return real, planar, binary


def _estimators():
    real, planar, binary = _datasets()
    zeros = np.zeros((200, 3))
    return [
        (GaussianCovariance(data_norm=1.0), real),
        (SeparateCovariance(data_norm=1.0, assume_centered=True), real),
        (AdaptiveCovariance(data_norm=1.0), zeros),
        (EigenSamplingCovariance(data_norm=1.0), real),
        (NuclearLaplaceCovariance(data_norm=1.0), real),
        (PCA(data_norm=1.0), real),
        (PCA(n_components=2, data_norm=1.0, covariance="top_k"), real),
        (MultivariateGaussian(), 4.0 * real),
        (
            MultivariateGaussian(method="klsu", min_variance=1.0, max_variance=10.0),
            4.0 * real,
        ),
        (ProductBernoulli(), binary),
        (ExactSubspace(n_components=2), planar),
        (ApproximateSubspace(n_components=2), planar),
    ]


def _at_most(a, b):
    # Parameter by parameter (a profile's parts one by one).
    assert type(a) is type(b), (a, b)
    for x, y in zip(vars(a).values(), vars(b).values(), strict=True):
        if isinstance(x, tuple):
            assert len(x) == len(y), (a, b)
            assert all(u <= v for u, v in zip(x, y, strict=True)), (a, b)
        else:
            assert x <= y, (a, b)


def _fit_and_check(est, X, epsilon, delta, rho):
    approx_only = getattr(est, "_approx_dp_only", False)
    params = {"epsilon": epsilon, "delta": delta, "random_state": 0}
    if "rho" in est.get_params():
        params["rho"] = rho
    elif rho is not None:
        return False
    est.set_params(**params)
    if delta == 0 and (approx_only or getattr(est, "_zcdp_only", False)):
        if rho is None or approx_only:
            with pytest.raises(ValueError):
                est.fit(X)
            return False
    try:
        est.fit(X)
    except (NoStableSubspace, NoHeavyCell):
        return False  # a private "no answer" at a small budget
    except ValueError as error:
        if "needs" not in str(error):
            raise
        return False  # a public pre-check: too few rows for this budget
    cost = est.privacy_cost()
    _at_most(est.guarantee_, cost)
    recorded = est.guarantee_
    if isinstance(recorded, GaussianDP):
        # Gaussian steps whose zCDP budgets compose to at most mu**2 / 2.
        recorded = ZCDP(recorded.gaussian_rho())
    elif isinstance(recorded, ProfileDP):
        # Steps at shares of the rho the profile was computed at.
        recorded = est._running_budget(cost)
    _at_most(compose(est.budget_split_.values()), recorded)
    assert est.delta_spent_ <= delta
    if rho is None:
        assert est.epsilon_spent_ <= epsilon, (type(est).__name__, epsilon, delta)
    else:
        assert est.rho_spent_ <= rho
    if not approx_only:
        assert est.rho_spent_ <= _value(cost.to_zcdp())
    return True


_ASKS = [(0.15, 0.0, None), (1.0, 1e-6, None), (0.7, 0.5, None), (2.0, 1e-9, 0.05)]


@pytest.mark.parametrize("epsilon, delta, rho", _ASKS)
def test_fitted_budgets_never_exceed_the_ask(epsilon, delta, rho):
    for est, X in _estimators():
        _fit_and_check(est, X, epsilon, delta, rho)


@pytest.mark.slow
def test_fitted_budgets_never_exceed_the_ask_random():
    # 300 random budgets per estimator, the pure 0.15 among them.
    rng = random.Random(2)
    asks = [(0.15, 0.0, None)] + [_random_ask(rng) for _ in range(299)]
    for est, X in _estimators():
        fitted = sum(_fit_and_check(est, X, *ask) for ask in asks)
        assert fitted >= 50, (type(est).__name__, fitted)
