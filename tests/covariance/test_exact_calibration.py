"""Fits of Gaussian parts only, asked for (epsilon, delta), on the exact curve.

A fit whose every part is a Gaussian mechanism calibrated to its share of a
zCDP budget is one Gaussian mechanism with ``mu = sqrt(sum mu_i**2)`` (Dong,
Roth and Su, 2022); asked for (epsilon, delta) it runs at the largest ``mu``
of the analytic Gaussian (Balle and Wang, 2018, Theorem 8). The closed form
here is solved with SciPy, independently of dpcov's curve.
"""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.integrate import quad
from scipy.optimize import brentq

import dpcov
from dpcov.accounting import (
    ZCDP,
    BudgetAccountant,
    GaussianDP,
    ProfileDP,
    compose,
    zcdp_rho,
)
from dpcov.covariance import (
    AdaptiveCovariance,
    GaussianCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA
from dpcov.mechanisms import _noise
from dpcov.pipeline import PrivatePipeline
from tests._privacy_checks import (
    fitted_mechanism,
    gaussian_shift,
    recorded_calls,
    recorded_choices,
    recorded_releases,
)
from tests.covariance._rows import axis_rows


def _analytic_mu(epsilon, delta):
    # Balle and Wang (2018), Theorem 8: a Gaussian mechanism with
    # sensitivity over sigma mu is (epsilon, delta)-DP iff
    # Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) <= delta; the left side
    # increases with mu, so the largest mu is its root.
    def excess(mu):
        low = stats.norm.cdf(-mu / 2 - epsilon / mu)
        return stats.norm.cdf(mu / 2 - epsilon / mu) - math.exp(epsilon) * low - delta

    return brentq(excess, 1e-3, 50.0, xtol=1e-15, rtol=1e-15)


def _gaussian_with_bounded_range(mu, width, epsilon):
    # delta(epsilon) of a mu-GDP step composed with a width-bounded-range
    # step, whose dominating loss has density e^((w + x)/2) / (2 (e^w - 1))
    # on (-w, w) (Dong, Durfee and Rogers 2020): int f(x) delta_mu(eps - x).
    def gaussian(t):
        low = stats.norm.cdf(-t / mu - mu / 2)
        return stats.norm.cdf(-t / mu + mu / 2) - math.exp(t) * low

    def density(x):
        return math.exp((width + x) / 2) / (2 * math.expm1(width))

    value, _ = quad(lambda x: density(x) * gaussian(epsilon - x), -width, width)
    return value


def _rows(n=2000, d=6, seed=0):
    X = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(n, d))
    return X / np.linalg.norm(X, axis=1).max()


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
def test_one_gaussian_release_has_the_analytic_sigma(epsilon):
    # GaussianCovariance with data_norm R and assume_centered=True is one
    # release: X^T X / n plus Gaussian noise on its upper triangle, whose L2
    # sensitivity is sqrt(2) R^2 / n (Dong, Liang and Yi, 2022). The
    # analytic Gaussian's sigma for it is that over mu; the recorded draw's
    # scale must be at least it (to the roots' rounding, 1e-12: dpcov's
    # inverse of the curve errs on the safe side) and within 1% above it
    # (through zCDP it was 5.6-8.7% more).
    X = _rows()
    n = X.shape[0]
    est = GaussianCovariance(
        epsilon=epsilon, delta=1e-6, data_norm=1.0, assume_centered=True
    )
    with recorded_releases() as releases:
        est.set_params(random_state=0).fit(X)
    # The release is the fit's first draw (the shrinkage's and the noise
    # figure's draws after it are of public noise models).
    release = releases[0]
    analytic = math.sqrt(2) / (n * _analytic_mu(epsilon, 1e-6))
    assert release.law == "gaussian"
    assert 1 - 1e-12 <= release.scale / analytic <= 1.01
    zcdp_sigma = 1 / (n * math.sqrt(zcdp_rho(epsilon, 1e-6)))
    assert zcdp_sigma / release.scale > 1.05
    assert type(est.guarantee_) is GaussianDP
    assert est.guarantee_.mu <= _analytic_mu(epsilon, 1e-6) * (1 + 1e-12)
    assert est.epsilon_spent_ == pytest.approx(epsilon, rel=1e-12)
    assert est.epsilon_spent_ <= epsilon and est.delta_spent_ == 1e-6


@pytest.mark.parametrize(
    "make",
    [
        lambda: SeparateCovariance(data_norm=1.0),
        lambda: GaussianCovariance(bounds=(-1.0, 1.0)),
        lambda: GaussianCovariance(data_norm=1.0, neighbours="add_remove"),
        lambda: PCA(2, covariance=SeparateCovariance(), data_norm=1.0),
    ],
    ids=["separate", "public-box", "add-remove", "pca"],
)
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
def test_gaussian_parts_compose_to_the_analytic_mu(make, epsilon):
    # The fit's private draws come first, one per part of budget_split_
    # (the shrinkage's and the noise figure's after them are of public noise
    # models): all Gaussian, with no selection (a sparse vector, an
    # exponential mechanism) anywhere in the fit; their mu_i = sensitivity /
    # scale (recorded with each draw) compose to sqrt(sum mu_i**2), at most
    # the analytic mu (to the roots' rounding) and within 1% below it.
    est = make().set_params(epsilon=epsilon, delta=1e-6, random_state=0)
    with (
        recorded_releases() as releases,
        recorded_choices() as choices,
        recorded_calls(_noise, "noisy_above_threshold") as thresholds,
        recorded_calls(_noise, "add_laplace") as laplace,
    ):
        est.fit(_rows())
    assert not choices and not thresholds and not laplace
    private = releases[: len(est.budget_split_)]
    assert {release.law for release in private} == {"gaussian"}
    mus = [release.sensitivity / release.scale for release in private]
    analytic = _analytic_mu(epsilon, 1e-6)
    composed = math.sqrt(math.fsum(mu * mu for mu in mus))
    assert 0.99 <= composed / analytic <= 1 + 1e-12
    assert isinstance(est.guarantee_, GaussianDP)
    assert est.guarantee_.mu <= analytic * (1 + 1e-12)
    assert est.rho_spent_ == pytest.approx(analytic**2 / 2, rel=1e-9)


def test_neighbours_are_mu_apart():
    # A worst-case pair for the second moment: one row e1 replaced by e2.
    # The statistic (M[0, 0] - M[1, 1]) / sqrt(2) of the release moves by
    # Delta = sqrt(2) / n and carries noise of s.d. s, so the release's
    # projected laws on the two neighbours are N(m, s^2) and N(m + Delta,
    # s^2): their standardised shift is the fit's mu. At (8, 1e-6) the
    # analytic mu is 1.53 (through zCDP it was 1.45, 5.6% less); 20000 draws
    # a side give a standard error of 0.01, so 4 s.e. tell the two apart.
    a = axis_rows([60, 30, 10], 3)
    b = axis_rows([59, 31, 10], 3)
    params = dict(
        epsilon=8.0, delta=1e-6, data_norm=1.0, assume_centered=True, store_raw=True
    )

    def stat(X, seed):
        draw = fitted_mechanism(GaussianCovariance(random_state=0, **params), X)
        rng = np.random.default_rng(seed)
        raws = [draw(rng).raw for _ in range(20_000)]
        return np.array([(raw[0, 0] - raw[1, 1]) / math.sqrt(2) for raw in raws])

    shift, se = gaussian_shift(stat(a, 1), stat(b, 2))
    assert abs(shift - _analytic_mu(8.0, 1e-6)) < 4 * se


@pytest.mark.parametrize(
    "make",
    [
        lambda: GaussianCovariance(bounds="private"),
        lambda: PCA(2, bounds="private"),
    ],
    ids=["private-ranges", "pca-private-ranges"],
)
def test_fits_whose_plan_needs_the_rows_keep_the_zcdp_calibration(make):
    # Private ranges (an exponential mechanism per feature: too many
    # discrete parts for the composed curve): the fit stays at
    # zcdp_rho(epsilon, delta).
    est = make().set_params(epsilon=1.0, delta=1e-6, random_state=0)
    assert est.privacy_cost() == ZCDP(zcdp_rho(1.0, 1e-6))
    est.fit(_rows(n=20_000))
    assert type(est.guarantee_) is ZCDP


def _radius_fit(make, n_samples, **params):
    # One fit with every draw recorded: the additive releases, the private
    # radius's call (sparse vector or exponential mechanism, with the
    # epsilon it runs at) and AdaptiveCovariance's threshold search.
    from dpcov.covariance import _adaptive
    from dpcov.utils import _geometry

    est = make().set_params(random_state=0, **params)
    with (
        recorded_releases() as releases,
        recorded_calls(_geometry, "private_radius_from_counts") as vector,
        recorded_calls(_geometry, "private_radius_exponential") as exponential,
        recorded_calls(_adaptive, "exponential_mechanism") as searches,
        recorded_calls(_noise, "add_laplace") as laplace,
    ):
        est.fit(_rows(n=n_samples))
    assert not laplace and len(vector) + len(exponential) == 1
    pure = [call[1]["epsilon"] for call in vector]
    ranges = [call[1]["epsilon"] for call in exponential]
    ranges += [s["epsilon"] / s.get("sensitivity", 1.0) for _, s, _ in searches]
    private = releases[: len(est.budget_split_) - 1 - len(searches)]
    return est, private, pure, ranges


@pytest.mark.parametrize(
    "make",
    [
        lambda: GaussianCovariance(),
        lambda: SeparateCovariance(assume_centered=True),
        lambda: GaussianCovariance(neighbours="add_remove"),
        lambda: AdaptiveCovariance(),
        lambda: PCA(2),
    ],
    ids=["gauss", "separate-centred", "gauss-add-remove", "adaptive", "pca"],
)
@pytest.mark.parametrize("n_samples", [20_000, 600], ids=["vector", "exponential"])
def test_a_private_radius_with_gaussian_parts_on_the_composed_curve(make, n_samples):
    # The private radius is a sparse vector (pure epsilon-DP) where there are
    # enough rows, else an exponential mechanism (epsilon-bounded range);
    # either takes the same share (3/16), so the plan, calibrated before n
    # is known, is bounded by one profile: Gaussian steps and one
    # bounded-range step at that share (a pure epsilon step has range 2
    # epsilon). From every recorded draw: the Gaussian steps' mu, the
    # selections' epsilons; their composed loss (Dong, Durfee and Rogers
    # 2020 for the bounded-range steps, losses rounded up) has delta at
    # epsilon = 1 in [delta / 2, delta], and each Gaussian step has less
    # noise than at the zCDP calibration (rho = zcdp_rho(1, 1e-6)).
    from dpcov.accounting._exact_curve import composed_loss

    est, private, pure, ranges = _radius_fit(make, n_samples, epsilon=1.0, delta=1e-6)
    assert isinstance(est.guarantee_, ProfileDP)
    cost = est.privacy_cost()
    assert (est.guarantee_.mu, est.guarantee_.bounded_range) == (
        cost.mu,
        cost.bounded_range,
    )
    assert {release.law for release in private} == {"gaussian"}
    mu = math.sqrt(math.fsum((r.sensitivity / r.scale) ** 2 for r in private))
    # The recorded profile bounds what ran (to the draws' own rounding).
    assert mu <= est.guarantee_.mu * (1 + 1e-12)
    # Each selection within its bounded-range step, sorted side by side (a
    # pure step's range is twice its epsilon).
    ran = sorted([2 * e for e in pure] + ranges)
    bounds = sorted(est.guarantee_.bounded_range)
    assert len(ran) == len(bounds)
    assert all(e <= b * (1 + 1e-12) for e, b in zip(ran, bounds, strict=True))
    delta = composed_loss(mu, tuple(pure), tuple(ranges)).delta(1.0)
    assert 0.5e-6 <= delta <= 1e-6
    assert est.epsilon_spent_ <= 1.0
    _, before, _, _ = _radius_fit(make, n_samples, rho=zcdp_rho(1.0, 1e-6))
    ratios = [b.scale / a.scale for a, b in zip(private, before, strict=True)]
    assert 1.0 < min(ratios) and max(ratios) < 1.1


def test_rho_and_pure_asks_are_unchanged():
    est = GaussianCovariance(data_norm=1.0, rho=0.05, random_state=0).fit(_rows())
    assert type(est.guarantee_) is ZCDP
    assert est.guarantee_.rho == pytest.approx(0.05, rel=1e-12)
    est = GaussianCovariance(data_norm=1.0, epsilon=1.0, delta=0.0, random_state=0)
    assert type(est.fit(_rows()).guarantee_) is dpcov.accounting.PureDP


def test_hardened_noise_keeps_the_zcdp_calibration():
    # The exact curve is the continuous Gaussian's; it does not bound a
    # multivariate discrete Gaussian, so under secure_noise the fit runs at
    # zcdp_rho, whose analysis covers the discrete sampler (Canonne, Kamath
    # and Steinke, 2020): its noise is never below that.
    est = GaussianCovariance(epsilon=1.0, delta=1e-6, data_norm=1.0, random_state=0)
    with dpcov.config_context(secure_noise=True):
        assert est.privacy_cost() == ZCDP(zcdp_rho(1.0, 1e-6))
        est.fit(_rows())
    assert est.guarantee_ == ZCDP(zcdp_rho(1.0, 1e-6))
    composed = compose(est.budget_split_.values())
    assert composed.rho <= zcdp_rho(1.0, 1e-6)


def test_a_cap_counts_in_zcdp_and_calibrates_there():
    # A cap is a privacy filter in zCDP: under one the fit is calibrated in
    # zCDP, so a fit asked at the cap fits it; with no cap, the exact curve.
    X = _rows()
    capped = BudgetAccountant(epsilon=1.0, delta=1e-6)
    est = GaussianCovariance(
        epsilon=1.0, delta=1e-6, data_norm=1.0, accountant=capped, random_state=0
    ).fit(X)
    assert capped.ledger == [("GaussianCovariance", ZCDP(zcdp_rho(1.0, 1e-6)))]
    assert est.guarantee_ == ZCDP(zcdp_rho(1.0, 1e-6))
    ledger = BudgetAccountant(delta=1e-6)
    est.set_params(accountant=ledger).fit(X)
    ((_, recorded),) = ledger.ledger
    assert recorded == GaussianDP(est.guarantee_.mu)
    assert ledger.epsilon == 1.0


def test_pipeline_steps_run_at_the_cost_computed_before_the_fit():
    # A PrivatePipeline hands a later step its upstream range at fit time,
    # which would make it Gaussian only after its cost was computed; its
    # steps are calibrated in zCDP, so the pipeline's privacy_cost() is what
    # they spend, and a cap at it is met.
    X = _rows(n=5000)
    steps = [("pca", PCA(3, data_norm=1.0)), ("cov", GaussianCovariance())]
    planned = PrivatePipeline(steps).privacy_cost()
    assert planned == ZCDP(2 * zcdp_rho(1.0, 1e-6))
    accountant = BudgetAccountant(rho=planned.rho)
    pipe = PrivatePipeline(steps, accountant=accountant).set_params(
        pca__random_state=0, cov__random_state=1
    )
    pipe.fit(X)
    assert pipe.named_steps["cov"].data_norm_ is not None  # the hand-off
    assert type(pipe.named_steps["cov"].guarantee_) is ZCDP
    assert accountant.rho <= planned.rho
    # A Gaussian-only step under a pipeline's capped accountant is
    # calibrated in zCDP, as it is alone: asked at the cap, it fits.
    capped = BudgetAccountant(epsilon=1.0, delta=1e-6)
    step = GaussianCovariance(data_norm=1.0, random_state=0)
    PrivatePipeline([("cov", step)], accountant=capped).fit(X)
    assert capped.ledger[0][1] == ZCDP(zcdp_rho(1.0, 1e-6))


@pytest.mark.parametrize(
    "make",
    [
        lambda: AdaptiveCovariance(data_norm=1.0),
        lambda: AdaptiveCovariance(bounds=(-1.0, 1.0), assume_centered=True),
        lambda: AdaptiveCovariance(data_norm=1.0, neighbours="add_remove"),
        lambda: PCA(2, data_norm=1.0),
    ],
    ids=["adaptive", "adaptive-box-centred", "adaptive-add-remove", "pca-default"],
)
@pytest.mark.parametrize("epsilon", [0.25, 1.0])
def test_a_threshold_search_with_gaussian_parts_on_the_composed_curve(make, epsilon):
    # AdaptiveCovariance with a public norm bound: Gaussian steps (count,
    # mean, trace bound, final release) and one exponential mechanism (the
    # threshold, epsilon-bounded range). Every draw is recorded: the
    # Gaussian ones give mu = sqrt(sum (Delta_i / sigma_i)**2), the one
    # selection its epsilon; their composed privacy loss distribution
    # (Gaussian exact, the bounded-range step's dominating pair of Dong,
    # Durfee and Rogers 2020, losses rounded up) has delta at epsilon in
    # [delta / 2, delta]: the budget is spent, not exceeded. Each Gaussian
    # step's noise is below the zCDP calibration's (6-7%), never above.
    from dpcov.accounting._exact_curve import composed_loss
    from dpcov.covariance import _adaptive

    def fit(**params):
        est = make().set_params(random_state=0, **params)
        with (
            recorded_releases() as releases,
            recorded_calls(_adaptive, "exponential_mechanism") as searches,
            recorded_calls(_noise, "noisy_above_threshold") as thresholds,
            recorded_calls(_noise, "add_laplace") as laplace,
        ):
            est.fit(_rows(n=20_000))
        assert not thresholds and not laplace
        ((_, search, _),) = searches
        private = releases[: len(est.budget_split_) - 1]
        return est, private, search

    est, private, search = fit(epsilon=epsilon, delta=1e-6)
    assert isinstance(est.guarantee_, ProfileDP)
    assert {release.law for release in private} == {"gaussian"}
    mu = math.sqrt(math.fsum((r.sensitivity / r.scale) ** 2 for r in private))
    selection = search["epsilon"] / search.get("sensitivity", 1.0)
    # The recorded profile bounds what ran (to the draws' own rounding).
    assert mu <= est.guarantee_.mu * (1 + 1e-12)
    assert est.guarantee_.pure == ()
    assert selection <= est.guarantee_.bounded_range[0]
    delta = composed_loss(mu, (), (selection,)).delta(epsilon)
    assert 0.5e-6 <= delta <= 1e-6
    # The same curve by quadrature, without the grid: the Gaussian curve
    # shifted by the bounded-range loss x, averaged over its density.
    assert _gaussian_with_bounded_range(mu, selection, epsilon) <= delta
    assert est.epsilon_spent_ <= epsilon
    _, before, _ = fit(rho=zcdp_rho(epsilon, 1e-6))
    ratios = [b.scale / a.scale for a, b in zip(private, before, strict=True)]
    assert 1.0 < min(ratios) and max(ratios) < 1.1


def test_a_plan_off_its_calibration_stops_before_its_release(monkeypatch):
    # The guard of the composed-curve calibration: a plan whose shares are
    # not those the calibration assumed (a bug, simulated here) stops the
    # fit before anything is released; under add/remove, where the plan at
    # the released count is checked again, after the count only.
    from dpcov.utils import _geometry
    from dpcov.utils._private_count import UNBINDING_COUNT
    from dpcov.utils._private_radius import RADIUS_SHARE

    original = GaussianCovariance._profile_shares

    def shifted(self):
        shares = original(self)
        return None if shares is None else {**shares, "gaussian": [0.1, 0.7125]}

    with monkeypatch.context() as patch:
        patch.setattr(GaussianCovariance, "_profile_shares", shifted)
        accountant = BudgetAccountant()
        est = GaussianCovariance(epsilon=1.0, accountant=accountant, random_state=0)
        with (
            recorded_releases() as releases,
            pytest.raises(RuntimeError, match="nothing was spent"),
        ):
            est.fit(_rows(n=20_000))
        assert not releases and len(accountant) == 0

    unbounded = _geometry.unbounded_radius_share

    def uneven(budget, n_samples, *, even=False):
        # The sparse vector's zCDP share at a count the first check does not see.
        if n_samples < UNBINDING_COUNT:
            return RADIUS_SHARE, "sparse_vector"
        return unbounded(budget, n_samples, even=even)

    monkeypatch.setattr(_geometry, "unbounded_radius_share", uneven)
    est = GaussianCovariance(epsilon=1.0, neighbours="add_remove", random_state=0)
    with (
        recorded_releases() as releases,
        pytest.raises(RuntimeError, match="only the count was released"),
    ):
        est.fit(_rows(n=20_000))
    assert len(releases) == 1  # the count
