"""Shrinkage toward zero: public inputs only, and its risk against the raw release."""

import warnings

import numpy as np
import pytest
from scipy import stats

from dpcov.accounting import ZCDP
from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.covariance._gauss import gauss_release
from dpcov.covariance._separate import separate_release
from dpcov.covariance._shrinkage import (
    RAMP,
    TEST_LEVEL,
    applied_factor,
    bootstrap_energy,
    evidence_weight,
    factor_from_energies,
    null_energies,
    null_quantile,
    shrinkage_factor,
)
from dpcov.decomposition import PCA
from dpcov.exceptions import NoiseDominatedWarning

ESTIMATORS = [
    GaussianCovariance,
    SeparateCovariance,
    AdaptiveCovariance,
    EigenSamplingCovariance,
    NuclearLaplaceCovariance,
]


def _symmetric_noise(rng, d, sigma):
    upper = np.triu(rng.normal(0.0, sigma, size=(d, d)))
    return upper + np.triu(upper, 1).T


@pytest.mark.parametrize("signal", [0.0, 0.5, 1.0, 2.0, 30.0])
@pytest.mark.parametrize("keep_above", [False, True])
def test_risk_never_above_the_raw_release(signal, keep_above):
    # Gaussian noise on the p = d (d + 1) / 2 = 55 free entries (d = 10),
    # metric weights h in [1, 2]; kappa = E ||D E D||^2 = sum of the free
    # entries' variances. Bock (1975): the factor 1 - a / ||y||^2 has lower
    # risk than y for every truth when 0 < a <= 2 (sum v - 2 max v); here
    # max v is under 3% of sum v, so a = sum v is inside that range, and the
    # positive part lowers the risk further (Baranchik 1964). With the
    # estimator's rule (keep y when the factor is at least 1/2) the risk is
    # measured, at signal energies from 0 to 30 times the noise's. With 2000
    # paired draws the mean loss difference must be below three paired
    # standard errors; at zero signal the risk is a small part of the raw one
    # (the factor is 0 unless the noise's energy exceeds its mean, and small
    # then).
    rng = np.random.default_rng(0)
    d, sigma = 10, 1.0
    h = np.linspace(1.0, 2.0, d)
    W = np.outer(h, h)
    energy = sigma**2 * float(np.sum(W**2))
    base = _symmetric_noise(np.random.default_rng(1), d, 1.0)
    theta = base / np.linalg.norm(W * base) * np.sqrt(signal * energy)
    raw_loss, shrunk_loss = [], []
    for _ in range(2000):
        y = theta + _symmetric_noise(rng, d, sigma)
        s = shrinkage_factor(y, h, energy)
        if keep_above:
            s = applied_factor(s)
        raw_loss.append(np.sum((W * (y - theta)) ** 2))
        shrunk_loss.append(np.sum((W * (s * y - theta)) ** 2))
    diff = np.array(shrunk_loss) - np.array(raw_loss)
    assert diff.mean() <= 3 * diff.std(ddof=1) / np.sqrt(len(diff))
    if signal == 0.0:
        assert np.mean(shrunk_loss) < 0.1 * np.mean(raw_loss)


def test_bootstrap_of_an_additive_release_is_its_noise_energy():
    # GaussCov without projection: <Y*, Y* - S> has mean E ||D E D||^2 =
    # sigma^2 sum_ij h_i^2 h_j^2 (Stein's identity; exact in expectation).
    # 8 draws at d = 40 (820 free entries): the relative spread of one draw
    # is about sqrt(2 / 820) plus the cross term's, so 15% is over 4
    # standard errors of the mean of 8.
    rng = np.random.default_rng(2)
    d = 40
    X = rng.normal(size=(2000, d)) / (2 * np.sqrt(d))
    budget = ZCDP(0.5)
    release = gauss_release(
        X.T @ X / 2000, n_samples=2000, radius=1.0, budget=budget, rng=rng
    )
    h = rng.uniform(0.5, 2.0, size=d)
    kappa, null, error = bootstrap_energy(
        release.simulate, lambda raw: raw, release.raw, h
    )
    expected = release.noise_std**2 * float(np.sum(np.outer(h, h) ** 2))
    assert kappa == pytest.approx(expected, rel=0.15)
    assert np.mean(null) == pytest.approx(expected, rel=0.15)
    # Without the projection the draws' squared error is the noise's energy.
    assert error == pytest.approx(expected, rel=0.15)


def test_bootstrap_reads_public_inputs_only():
    # The bootstrap draws from a fixed generator: the same release and public
    # parameters give the same energies, whatever other generators did.
    rng = np.random.default_rng(4)
    X = rng.normal(size=(500, 5)) / 5
    release = separate_release(
        X.T @ X / 500, n_samples=500, radius=1.0, budget=ZCDP(0.5), rng=rng
    )
    h = np.array([1.0, 2.0, 3.0, 1.0, 0.5])
    first = bootstrap_energy(release.simulate, lambda raw: raw, release.raw, h)
    np.random.default_rng(99).normal(size=100)
    second = bootstrap_energy(release.simulate, lambda raw: raw, release.raw, h)
    assert first[0] == second[0] and first[2] == second[2]
    np.testing.assert_array_equal(first[1], second[1])


# AdaptiveCovariance is left out: centred on the noisy mean, zero rows become
# rows -e (e the mean's noise), which it clips at a threshold of their own
# scale, so its release holds that rank-one term as signal, not noise.
@pytest.mark.parametrize(
    "cls",
    [
        # Five nuclear fits at d = 20 (Gibbs sampler, and its bootstrap): 4 s.
        pytest.param(c, marks=pytest.mark.slow) if c is NuclearLaplaceCovariance else c
        for c in ESTIMATORS
        if c is not AdaptiveCovariance
    ],
)
def test_pure_noise_is_shrunk_to_the_target(cls):
    # Rows all zero, assume_centered: the release is the mechanism's noise.
    # The factor is 0 unless the estimate's energy exceeds the upper 2%
    # quantile of the energies of estimates of pure noise, and small just
    # above it, so over 5 seeds the factor kept is small.
    params = {"delta": 0.0} if cls is NuclearLaplaceCovariance else {}
    X = np.zeros((2000, 20))
    kept = []
    for seed in range(5):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = cls(
                data_norm=1.0, assume_centered=True, random_state=seed, **params
            ).fit(X)
        kept.append(1.0 - est.shrinkage_)
    assert max(kept) < 0.5
    assert np.median(kept) == 0.0
    assert est.signal_to_noise_ < 1


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_none_keeps_the_release_and_no_noise_shrinks_nothing(cls):
    params = {"delta": 0.0} if cls is NuclearLaplaceCovariance else {}
    X = np.random.default_rng(5).normal(size=(3000, 4)) / 4
    a = cls(data_norm=1.0, epsilon=np.inf, random_state=0, **params).fit(X)
    b = cls(
        data_norm=1.0, epsilon=np.inf, shrinkage=None, random_state=0, **params
    ).fit(X)
    np.testing.assert_allclose(a.covariance_, b.covariance_, rtol=1e-12)
    assert a.shrinkage_ == 0.0 == b.shrinkage_


def test_shrinkage_warns_with_the_figure():
    # The warning and the shrinkage read the same estimate: a release shrunk
    # more than halfway warns.
    with pytest.warns(NoiseDominatedWarning):
        est = GaussianCovariance(data_norm=1.0, random_state=0).fit(np.zeros((500, 8)))
    assert est.shrinkage_ > 0.5


def test_shrinkage_parameter_is_validated():
    with pytest.raises(ValueError, match="shrinkage"):
        GaussianCovariance(shrinkage="yes", data_norm=1.0).fit(np.zeros((10, 2)))


def test_pca_keeps_its_axes_when_the_covariance_is_shrunk():
    # An isotropic shrink does not move the eigenvectors: PCA's components
    # come from the release before the shrinkage (a zero matrix has none),
    # its explained variances from the shrunk covariance_.
    rng = np.random.default_rng(6)
    X = rng.normal(size=(400, 6)) * np.array([1.0, 0.6, 0.3, 0.2, 0.1, 0.1]) / 4
    fits = {}
    for setting in ("auto", None):
        estimator = GaussianCovariance(shrinkage=setting)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits[setting] = PCA(
                3, epsilon=0.3, data_norm=1.0, covariance=estimator, random_state=0
            ).fit(X)
    auto, raw = fits["auto"], fits[None]
    kept = 1.0 - auto.covariance_estimator_.shrinkage_
    assert kept < 1.0
    np.testing.assert_allclose(
        np.abs(auto.components_), np.abs(raw.components_), atol=1e-10
    )
    np.testing.assert_allclose(
        auto.explained_variance_, kept * raw.explained_variance_, rtol=1e-8
    )


@pytest.mark.parametrize("dof", [0.7, 1.0, 3.0, 40.0])
def test_null_quantile_is_the_scaled_chi_square_of_its_two_moments(dof):
    # Satterthwaite: m chi2_k / k has mean m and variance 2 m**2 / k.
    m = 3.0
    q = null_quantile(m, m * np.sqrt(2.0 / dof), 0.02)
    assert q == pytest.approx(m * stats.chi2.ppf(0.98, dof) / dof, rel=1e-10)
    assert null_quantile(m, 0.0) == m


def test_the_evidence_weight_ramps_from_the_quantile():
    q = 2.0
    assert evidence_weight(q, q) == 0.0 and evidence_weight(0.5 * q, q) == 0.0
    assert (
        evidence_weight((1 + RAMP) * q, q) == 1.0 and evidence_weight(10 * q, q) == 1.0
    )
    assert evidence_weight((1 + RAMP / 4) * q, q) == pytest.approx(0.25)
    # Just above the quantile the factor is small, far above it the
    # James-Stein factor itself.
    m, std = 1.0, 1.0
    q = null_quantile(m, std)
    assert factor_from_energies(1.01 * q, m, m, std) < 0.02
    assert factor_from_energies(100 * q, m, m, std) == pytest.approx(1 - m / (100 * q))


def test_few_effective_entries_keep_pure_noise_at_the_test_level():
    # Weights 1000 : 1 put the noise's energy on one entry: about one degree
    # of freedom, where the energy of pure noise exceeds its mean plus one
    # standard deviation in about 10% of draws. Fresh draws of a projected
    # pure-noise release pass the test's quantile (from the fixed draws) at
    # about its level, and the mean factor is small.
    rng = np.random.default_rng(7)
    d = 6
    h = np.array([1000.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    release = gauss_release(
        np.zeros((d, d)), n_samples=500, radius=1.0, budget=ZCDP(0.5), rng=rng
    )

    def project(raw):
        values, vectors = np.linalg.eigh(raw)
        return (vectors * np.maximum(values, 0.0)) @ vectors.T

    null = null_energies(release.simulate, project, h)
    q = null_quantile(null.mean(), null.std(ddof=1))
    factors, passed = [], []
    for _ in range(2000):
        estimate = project(_symmetric_noise(rng, d, release.noise_std))
        norm2 = float(np.sum((estimate * np.outer(h, h)) ** 2))
        passed.append(norm2 > q)
        factors.append(shrinkage_factor(estimate, h, null.mean(), null))
    assert np.mean(passed) <= 3 * TEST_LEVEL
    assert np.mean(factors) < 0.01


def test_a_strong_signal_on_the_widest_feature_is_kept():
    # One feature 1000 times wider than the others carries the signal (its
    # raw release within about 20% of the truth): the test on the release
    # before projection keeps it. A null of projected pure noise, whose
    # diagonal the projection inflates about sqrt(d) times, zeroed it.
    d, n = 20, 1000
    lower, upper = -np.ones(d), np.ones(d)
    lower[0], upper[0] = -1000.0, 1000.0
    X = np.zeros((n, d))
    X[:, 0] = np.where(np.arange(n) % 2, 700.0, -700.0)
    X[:, 1:] = np.random.default_rng(1).uniform(-0.05, 0.05, (n, d - 1))
    kept = [
        GaussianCovariance(
            epsilon=1.0,
            delta=1e-6,
            bounds=(lower, upper),
            assume_centered=True,
            random_state=seed,
        )
        .fit(X)
        .shrinkage_
        for seed in range(5)
    ]
    assert kept == [0.0] * 5
