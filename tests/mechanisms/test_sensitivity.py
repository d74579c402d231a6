"""Brute-force neighbour checks of every bound in dpcov.mechanisms._sensitivity.

Each case builds groups of datasets that differ in one row only (so any two
datasets of a group are replace-one neighbours): random rows, and extreme
rows on the boundary of the clipping ball or box (``+-r e_i``, the corners,
the diagonal), rows far outside it, and, where a bound is tight, the worst
pair known in closed form. The statistic is computed as the estimator
computes it (the same clipping, sums and maps), and its change between every
two datasets of a group must stay within the stated bound; where the bound is
tight, the worst pair attains it.
"""

import inspect
import math
from dataclasses import dataclass

import numpy as np
import pytest

from dpcov.distributions._ppde import truncated_binary_mean
from dpcov.impute._base import COUNT_WEIGHT
from dpcov.mechanisms import _sensitivity
from dpcov.mechanisms._projection import symmetric_eigvalsh
from dpcov.mechanisms._sensitivity import (
    ball_mean_sensitivities,
    binary_row_distance,
    box_mean_sensitivities,
    box_moment_sensitivities,
    class_statistics_sensitivities,
    eigenvalue_sensitivities,
    histogram_sensitivities,
    observed_sums_sensitivities,
    rank_one_frobenius_distance,
    rank_one_monotone_sensitivity,
    rank_one_nuclear_distance,
    second_moment_sensitivities,
    ssp_sensitivities,
)
from dpcov.preprocessing._data import SECOND_MOMENT_WEIGHT
from dpcov.utils._columns import column_observed_sums
from dpcov.utils._gram import row_statistics
from dpcov.utils._gram._rows import _clip
from dpcov.utils.validation import to_unit_box


def _l2(change):
    return float(np.linalg.norm(np.ravel(change)))


def _l1(change):
    return float(np.abs(np.ravel(change)).sum())


def _largest(change):
    return float(np.abs(np.ravel(change)).max())


def _frobenius(change):
    return float(np.linalg.norm(change, "fro"))


def _nuclear(change):
    return float(np.linalg.norm(change, "nuc"))


@dataclass
class Case:
    """A bound under test: the function, the statistic, its neighbours."""

    function: object
    statistic: object
    groups: list
    # (name of the norm, norm, bound, whether the worst pair attains it)
    norms: list


def _with_first(rest, rows):
    # One group: the rows of ``rest`` with each candidate put before them.
    return [np.vstack([row[np.newaxis], rest]) for row in rows]


def _ball_rows(radius, d, seed):
    # Candidates for a ball of radius r: +-r e_i, +-r (1, ..., 1) / sqrt(d),
    # the zero row, random rows on the sphere and inside, and rows far out.
    rng = np.random.default_rng(seed)
    eye = radius * np.eye(d)
    diagonal = radius * np.ones(d) / math.sqrt(d)
    sphere = rng.normal(size=(8, d))
    sphere *= radius / np.linalg.norm(sphere, axis=1, keepdims=True)
    inside = rng.uniform(-1.0, 1.0, size=(8, d)) * radius / math.sqrt(d)
    far = rng.normal(size=(4, d)) * 1e3 * radius
    return np.vstack(
        [eye, -eye, [diagonal, -diagonal, np.zeros(d)], sphere, inside, far]
    )


def _box_rows(lower, upper, seed):
    # Candidates for a box: its two opposite corners, random corners, random
    # rows inside, and rows far outside (clipped to a corner or a face).
    rng = np.random.default_rng(seed)
    d = lower.size
    signs = rng.choice([-1.0, 1.0], size=(8, d))
    center, half = (lower + upper) / 2.0, (upper - lower) / 2.0
    corners = center + half * signs
    inside = center + half * rng.uniform(-1.0, 1.0, size=(8, d))
    far = center + half * rng.normal(size=(4, d)) * 1e3
    return np.vstack([upper, lower, corners, inside, far])


# Second moments --------------------------------------------------------------


def _gram(radius):
    # Y^T Y of the rows clipped to the radius (the covariance family's pass).
    return lambda X: row_statistics(X, clip_norm=radius, gram=True).gram


def _rank_one_cases():
    # The worst pair: orthogonal rows of squared norm t (r e_1 and r e_2).
    t = 2.5
    radius = math.sqrt(t)
    rest = _ball_rows(radius, 4, seed=1)[-8:-4]
    groups = [_with_first(rest, _ball_rows(radius, 4, seed=2))]
    frobenius = Case(
        rank_one_frobenius_distance,
        _gram(radius),
        groups,
        [("Frobenius", _frobenius, rank_one_frobenius_distance(t), True)],
    )
    nuclear = Case(
        rank_one_nuclear_distance,
        _gram(radius),
        groups,
        [("nuclear", _nuclear, rank_one_nuclear_distance(t), True)],
    )
    return {"rank_one_frobenius": frobenius, "rank_one_nuclear": nuclear}


def _second_moment_case(d):
    # The estimators' statistic: the upper triangle of Y^T Y / n, which
    # carries the noise. L2: attained by r e_1 against r e_2 (a diagonal
    # change). L1: attained at d = 2 by orthogonal rows at the angle
    # phi = atan(1/2) / 2 from the axes (the change is R**2 (cos 2 phi,
    # sin 2 phi, -cos 2 phi), of L1 norm sqrt(5) R**2); for d > 2 the
    # Cauchy-Schwarz bound is not attained by a rank-one difference.
    radius, n = 1.5, 6
    candidates = _ball_rows(radius, d, seed=3)
    if d == 2:
        phi = math.atan(0.5) / 2.0
        worst = radius * np.array(
            [[math.cos(phi), math.sin(phi)], [-math.sin(phi), math.cos(phi)]]
        )
        candidates = np.vstack([candidates, worst])
    rest = _ball_rows(radius, d, seed=4)[-12:-7]
    upper = np.triu_indices(d)
    l2, l1 = second_moment_sensitivities(radius, n, d)
    return Case(
        second_moment_sensitivities,
        lambda X: (_gram(radius)(X) / n)[upper],
        [_with_first(rest, candidates)],
        [("L2", _l2, l2, True), ("L1", _l1, l1, d == 2)],
    )


def _eigenvalue_rows(radius):
    # The worst pair of Dong, Liang and Yi (2022), Lemmas 8 and 12: the other
    # rows give Y^T Y = diag(3, 1, 1) R**2; r e_1 gives eigenvalues
    # (4, 1, 1) R**2 and r e_2 gives (3, 2, 1) R**2: the sorted change is
    # (-1, 1, 0) R**2, of L2 norm sqrt(2) R**2 and L1 norm 2 R**2.
    eye = radius * np.eye(3)
    structured = np.vstack([eye[0], eye[0], eye[0], eye[1], eye[2]])
    random = _ball_rows(radius, 3, seed=5)[-12:-7]
    candidates = _ball_rows(radius, 3, seed=6)
    return [_with_first(structured, candidates), _with_first(random, candidates)]


def _eigenvalue_cases():
    radius, n = 1.25, 6
    l2, l1 = eigenvalue_sensitivities(radius, n)
    norms = [("L2", _l2, l2, True), ("L1", _l1, l1, True)]

    def values(X):
        # EigenSamplingCovariance's and SeparateCovariance's statistic.
        return symmetric_eigvalsh(_gram(radius)(X) / n)[::-1]

    def top_and_tail(X):
        # With n_components=1: the top eigenvalue and the sum of the others
        # (the worst pair: (4, 2) R**2 against (3, 3) R**2).
        sorted_values = values(X)
        return np.append(sorted_values[:1], sorted_values[1:].sum())

    groups = _eigenvalue_rows(radius)
    return {
        "eigenvalues": Case(eigenvalue_sensitivities, values, groups, norms),
        "eigenvalues_top_and_tail": Case(
            eigenvalue_sensitivities, top_and_tail, groups, norms
        ),
    }


def _monotone_cases():
    # Attained by a row of norm R against the zero row (or against a row
    # orthogonal to u, for the quadratic form).
    radius, n = 1.75, 6
    groups = _eigenvalue_rows(radius)
    bound = rank_one_monotone_sensitivity(radius**2, n)
    u = np.array([1.0, 0.0, 0.0])

    def trace(X):
        # AdaptiveCovariance's trace: the clipped rows' squared norms over n.
        return row_statistics(X, clip_norm=radius, square_norm=True).square_norm / n

    def quadratic_form(X):
        # EigenSamplingCovariance's score u^T (Y^T Y) u (a sum: n = 1).
        return u @ _gram(radius)(X) @ u

    def each_eigenvalue(X):
        return symmetric_eigvalsh(_gram(radius)(X) / n)

    return {
        "trace": Case(
            rank_one_monotone_sensitivity,
            trace,
            groups,
            [("absolute", _largest, bound, True)],
        ),
        "quadratic_form": Case(
            rank_one_monotone_sensitivity,
            quadratic_form,
            groups,
            [("absolute", _largest, rank_one_monotone_sensitivity(radius**2), True)],
        ),
        "each_eigenvalue": Case(
            rank_one_monotone_sensitivity,
            each_eigenvalue,
            groups,
            [("largest", _largest, bound, True)],
        ),
    }


# Means of rows in a ball or a box ---------------------------------------------


def _ball_mean_cases():
    # Attained by r e_1 against -r e_1 (L2) and by the diagonal against its
    # opposite (L1); in one dimension, by the two ends of the interval.
    radius, n, d = 2.0, 7, 5
    l2, l1 = ball_mean_sensitivities(radius, n, d)
    rest = _ball_rows(radius, d, seed=7)[-12:-6]
    ball = Case(
        ball_mean_sensitivities,
        lambda X: row_statistics(X, clip_norm=radius, total=True).total / n,
        [_with_first(rest, _ball_rows(radius, d, seed=8))],
        [("L2", _l2, l2, True), ("L1", _l1, l1, True)],
    )
    center, half_width = 0.3, 0.8
    values = np.random.default_rng(9).normal(center, 1.0, size=(n - 1, 1))
    ends = np.array([[center - half_width], [center + half_width], [1e6], [-1e6]])
    interval = Case(
        ball_mean_sensitivities,
        # KLSU's mean: values clipped to [c - w, c + w].
        lambda X: np.clip(X, center - half_width, center + half_width).mean(),
        [_with_first(values, np.vstack([ends, values + 0.5]))],
        [("absolute", _largest, ball_mean_sensitivities(half_width, n)[0], True)],
    )
    return {"ball_mean": ball, "interval_mean": interval}


LOWER = np.array([0.0, -5.0, 100.0, -1.0])
UPPER = np.array([10.0, 5.0, 300.0, 3.0])


def _box_cases():
    # Attained by the two opposite corners (the mean, and the L2 norm of the
    # moments), and for the moments' L1 norm by z = 1 against
    # z' = -1 / (2 w) in every coordinate.
    n, d = 6, LOWER.size
    center, half = (LOWER + UPPER) / 2.0, (UPPER - LOWER) / 2.0
    rest = _box_rows(LOWER, UPPER, seed=10)[-9:-4]
    candidates = _box_rows(LOWER, UPPER, seed=11)
    l2, l1 = box_mean_sensitivities(n, d)
    cases = {
        "box_mean": Case(
            box_mean_sensitivities,
            lambda X: row_statistics(X, box=(LOWER, UPPER), total=True).total / n,
            [_with_first(rest, candidates)],
            [("L2", _l2, l2, True), ("L1", _l1, l1, True)],
        )
    }
    for law, weight in SECOND_MOMENT_WEIGHT.items():
        maximiser = center - half / (2.0 * weight)

        def moments(X, weight=weight):
            # StandardScaler's vector (mean, w * second moment) of the unit
            # coordinates.
            sums = row_statistics(X, box=(LOWER, UPPER), total=True, square_total=True)
            return np.concatenate([sums.total / n, weight * (sums.square_total / n)])

        l2, l1 = box_moment_sensitivities(n, d, weight)
        cases[f"box_moments_{law}"] = Case(
            box_moment_sensitivities,
            moments,
            [_with_first(rest, np.vstack([candidates, maximiser]))],
            [("L2", _l2, l2, True), ("L1", _l1, l1, True)],
        )
    return cases


# Sums released with counts ----------------------------------------------------


def _class_statistics_case():
    # Attained (L2) by r e_1 against -r e_1 in one class, and (L2 and L1) by
    # the diagonal in class 0 against its opposite in class 1.
    radius, d, n_classes = 1.5, 4, 3
    weight = float(radius)
    rng = np.random.default_rng(12)
    rest = _ball_rows(radius, d, seed=13)[-12:-6]
    rest_labels = rng.integers(0, n_classes, size=rest.shape[0])
    group = [
        (X, np.append(label, rest_labels))
        for X in _with_first(rest, _ball_rows(radius, d, seed=14))
        for label in (0, 1)
    ]

    def statistic(dataset):
        # LinearDiscriminantAnalysis's vector (S_1, ..., S_K, w N_1, ..., w N_K).
        X, labels = dataset
        rows, _ = _clip(X, radius, owned=False)
        sums = np.zeros((n_classes, d))
        np.add.at(sums, labels, rows)
        counts = np.bincount(labels, minlength=n_classes).astype(np.float64)
        return np.concatenate([sums.ravel(), weight * counts])

    l2, l1 = class_statistics_sensitivities(radius, d, weight)
    return Case(
        class_statistics_sensitivities,
        statistic,
        [group],
        [("L2", _l2, l2, True), ("L1", _l1, l1, True)],
    )


def _observed_sums_cases():
    # Attained by the two opposite corners, every cell observed (and, for L2
    # at w = sqrt(3), by a corner against a row of missing cells as well).
    d = LOWER.size
    rng = np.random.default_rng(15)
    candidates = _box_rows(LOWER, UPPER, seed=16)
    holes = rng.random(candidates.shape) < 0.3
    holes[:2] = False
    candidates = np.where(holes, np.nan, candidates)
    candidates = np.vstack([candidates, np.full(d, np.nan), UPPER, LOWER])
    rest = _box_rows(LOWER, UPPER, seed=17)[-9:-4]
    rest[rng.random(rest.shape) < 0.3] = np.nan
    groups = [_with_first(rest, candidates)]
    l2, l1 = observed_sums_sensitivities(d)

    def statistic(weight):
        # SimpleImputer's vector (S, w N) of the observed unit coordinates.
        def observed(X):
            sums, counts = column_observed_sums(X, (LOWER, UPPER))
            return np.concatenate([sums, weight * counts])

        return observed

    return {
        "observed_sums_gaussian": Case(
            observed_sums_sensitivities,
            statistic(COUNT_WEIGHT["gaussian"]),
            groups,
            [("L2", _l2, l2, True)],
        ),
        "observed_sums_laplace": Case(
            observed_sums_sensitivities,
            statistic(COUNT_WEIGHT["laplace"]),
            groups,
            [("L1", _l1, l1, True)],
        ),
    }


def _ssp_statistics(dataset):
    # LinearRegression's U^T U and U^T t over rows u = (z, 1), z and t in the
    # unit box (here the box [-1, 1] itself).
    X, y = dataset
    d = X.shape[1]
    z = to_unit_box(X, -np.ones(d), np.ones(d))
    U = np.hstack([z, np.ones((z.shape[0], 1))])
    t = to_unit_box(y, np.array([-1.0]), np.array([1.0]))
    return U.T @ U, U.T @ t


def _smallest_eigenvalue(matrix):
    # AdaSSP's statistic: the smallest eigenvalue of U^T U.
    return float(np.linalg.eigvalsh(matrix)[0])


def _ssp_group(d, seed):
    rng = np.random.default_rng(seed)
    rows = _box_rows(-np.ones(d), np.ones(d), seed=seed)
    rest, candidates = rows[-9:-4], rows
    rest_y = rng.uniform(-1.0, 1.0, size=rest.shape[0])
    return [
        (np.vstack([row, rest]), np.append(t, rest_y))
        for row in candidates
        for t in (-1.0, 1.0, 0.3, 7.0)
    ]


def _ssp_cases():
    cases = {}
    for d in (1, 3):
        m = d + 1
        bounds = ssp_sensitivities(m)
        group = _ssp_group(d, seed=18 + d)
        upper = np.triu_indices(m)
        # The noisy Gram matrix carries its noise on the upper triangle; the
        # bound is the Frobenius one, attained by orthogonal corners (d odd)
        # but not by the upper triangle, whose change then has no diagonal
        # (every entry of u is +-1): only the bound is checked.
        cases[f"ssp_gram_{m}"] = Case(
            ssp_sensitivities,
            lambda dataset, upper=upper: _ssp_statistics(dataset)[0][upper],
            [group],
            [
                ("L2", _l2, bounds["gram"][0], False),
                ("L1", _l1, bounds["gram"][1], False),
            ],
        )
        # Attained by a corner with t = 1 against the same corner with t = -1.
        cases[f"ssp_cross_{m}"] = Case(
            ssp_sensitivities,
            lambda dataset: _ssp_statistics(dataset)[1],
            [group],
            [
                ("L2", _l2, bounds["cross"][0], True),
                ("L1", _l1, bounds["cross"][1], True),
            ],
        )
    # Smallest eigenvalue (Weyl): with d = 1, the other rows are copies of
    # u = (-1, 1), so U^T U = 6 u u^T has smallest eigenvalue 0; replacing one
    # copy by u' = (1, 1), orthogonal to u with |u'|**2 = 2, makes it
    # 4 u u^T + u' u'^T, of smallest eigenvalue 2 = B**2.
    copies = np.full((5, 1), -1.0)
    group = [
        (np.vstack([row, copies]), np.zeros(6))
        for row in np.array([[-1.0], [1.0], [0.5], [0.0], [9.0]])
    ]
    m = 2
    cases["ssp_lambda_min_2"] = Case(
        ssp_sensitivities,
        lambda dataset: _smallest_eigenvalue(_ssp_statistics(dataset)[0]),
        [group, _ssp_group(1, seed=21)],
        [("absolute", _largest, ssp_sensitivities(m)["lambda_min"][0], True)],
    )
    cases["ssp_lambda_min_4"] = Case(
        ssp_sensitivities,
        lambda dataset: _smallest_eigenvalue(_ssp_statistics(dataset)[0]),
        [_ssp_group(3, seed=22)],
        [("absolute", _largest, ssp_sensitivities(4)["lambda_min"][0], False)],
    )
    return cases


# Counts and binary rows -------------------------------------------------------


def _histogram_case():
    # KLSU's coarse histogram: bins of width w centred on j w, |j| <= J, the
    # values beyond counted in the outer bins. Attained by two values in
    # different bins.
    width, half = 0.5, 5
    rng = np.random.default_rng(23)
    rest = rng.normal(0.0, 1.0, size=(9, 1))
    candidates = np.array([[0.0], [0.26], [-0.24], [2.4], [1e9], [-1e9], [0.1]])

    def counts(values):
        index = np.clip(np.rint(values[:, 0] / width), -half, half).astype(np.int64)
        return np.bincount(index + half, minlength=2 * half + 1).astype(np.float64)

    l2, l1 = histogram_sensitivities()
    return Case(
        histogram_sensitivities,
        counts,
        [_with_first(rest, candidates)],
        [("L2", _l2, l2, True), ("L1", _l1, l1, True)],
    )


def _binary_row_cases():
    # Attained by two rows of disjoint supports of min(B**2, k / 2) ones
    # (B**2 = 4 is an integer), and without truncation by the all-ones row
    # against the zero row.
    k, n = 10, 8
    rng = np.random.default_rng(24)
    rest = (rng.random((n - 1, k)) < 0.4).astype(float)
    disjoint = np.zeros((2, k))
    disjoint[0, :4] = disjoint[1, 4:8] = 1.0
    candidates = np.vstack(
        [disjoint, np.ones(k), np.zeros(k), (rng.random((12, k)) < 0.5).astype(float)]
    )
    groups = [_with_first(rest, candidates)]
    cases = {}
    for name, radius in (("binary_rows_truncated", 2.0), ("binary_rows", math.inf)):
        cases[name] = Case(
            binary_row_distance,
            lambda X, radius=radius: truncated_binary_mean(X, radius),
            groups,
            [("L2", _l2, binary_row_distance(k, radius) / n, True)],
        )
    return cases


def _cases():
    cases = {}
    cases.update(_rank_one_cases())
    cases["second_moment_2"] = _second_moment_case(2)
    cases["second_moment_5"] = _second_moment_case(5)
    cases.update(_eigenvalue_cases())
    cases.update(_monotone_cases())
    cases.update(_ball_mean_cases())
    cases.update(_box_cases())
    cases["class_statistics"] = _class_statistics_case()
    cases.update(_observed_sums_cases())
    cases.update(_ssp_cases())
    cases["histogram"] = _histogram_case()
    cases.update(_binary_row_cases())
    return cases


CASES = _cases()


def test_every_sensitivity_has_a_neighbour_case():
    functions = {
        name
        for name, function in inspect.getmembers(_sensitivity, inspect.isfunction)
        if function.__module__ == _sensitivity.__name__ and not name.startswith("_")
    }
    assert functions == {case.function.__name__ for case in CASES.values()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_neighbour_moves_the_statistic_beyond_its_bound(name):
    case = CASES[name]
    largest = {norm_name: 0.0 for norm_name, *_ in case.norms}
    for group in case.groups:
        values = [case.statistic(dataset) for dataset in group]
        for i, value in enumerate(values):
            for other in values[i + 1 :]:
                change = np.asarray(other, dtype=float) - np.asarray(value, dtype=float)
                for norm_name, norm, _, _ in case.norms:
                    largest[norm_name] = max(largest[norm_name], norm(change))
    for norm_name, _, bound, tight in case.norms:
        assert largest[norm_name] <= bound * (1 + 1e-12), norm_name
        if tight:
            # The worst pair of the comment above is among the candidates.
            assert largest[norm_name] >= bound * (1 - 1e-9), norm_name


def test_box_moment_sensitivities_are_the_largest_change_over_a_grid():
    # Exhaustive check of the lemma in box_moment_sensitivities: over a grid of
    # one coordinate's old and new values z, z' in [-1, 1] (the box's
    # corners and the L1 maximiser included), the change of (z, w z^2) has
    # squared L2 norm at most 4 and L1 norm at most (2w + 1)^2 / (4w), and
    # both are attained.
    grid = np.union1d(
        np.linspace(-1, 1, 2001), [1 - math.sqrt(2), 1 - 1 / math.sqrt(2)]
    )
    z, z_new = np.meshgrid(grid, grid)
    for weight in (0.5, 1.0, SECOND_MOMENT_WEIGHT["laplace"], math.sqrt(2)):
        l2, l1 = box_moment_sensitivities(1, 1, weight)
        squared = (z - z_new) ** 2 + weight**2 * (z**2 - z_new**2) ** 2
        absolute = np.abs(z - z_new) + weight * np.abs(z**2 - z_new**2)
        assert squared.max() <= l2**2 * (1 + 1e-12)
        assert squared.max() == pytest.approx(l2**2)
        assert absolute.max() <= l1 * (1 + 1e-12)
        assert absolute.max() == pytest.approx(l1, rel=1e-6)
    # Per row of n and over d features: both scale as d / n (L1), sqrt(d) / n.
    assert box_moment_sensitivities(50, 9, math.sqrt(2)) == pytest.approx(
        (6 / 50, 9 * (2 * math.sqrt(2) + 1) ** 2 / (4 * math.sqrt(2)) / 50)
    )
    weight = SECOND_MOMENT_WEIGHT["laplace"]
    assert box_moment_sensitivities(1, 1, weight)[1] == pytest.approx(1 + math.sqrt(2))
    assert box_mean_sensitivities(50, 9) == (6 / 50, 18 / 50)
    with pytest.raises(ValueError, match="weight"):
        box_moment_sensitivities(1, 1, 1.5)


def test_class_statistics_refuse_a_count_weight_above_the_radius():
    # Above R, a change of class would move the vector by more than 2 R.
    with pytest.raises(ValueError, match="weight"):
        class_statistics_sensitivities(1.0, 3, 1.5)


def _person_terms(rng, d, t, n_pairs):
    """Pairs of PSD terms of trace <= t: a person's averaged outer products
    ``(1/k) sum y_i y_i^T`` after the person is clipped as a whole, with k
    from 1 to 6 (the rank-one rows among them), and the extreme pair of
    orthogonal rank-one terms of trace t."""
    pairs = [
        (
            t * np.outer(np.eye(d)[0], np.eye(d)[0]),
            t * np.outer(np.eye(d)[1], np.eye(d)[1]),
        )
    ]
    for _ in range(n_pairs):
        pair = []
        for _ in range(2):
            rows = rng.normal(size=(rng.integers(1, 7), d)) * rng.uniform(0.1, 3.0)
            term = rows.T @ rows / len(rows)
            pair.append(term * min(1.0, t / np.trace(term)))
        pairs.append(tuple(pair))
    return pairs


def test_second_moment_bounds_hold_for_a_person_s_psd_term():
    # dpcov.utils._gram._units: a person contributes a PSD term of trace <= t
    # (not rank one) in place of a row's y y^T. Every second-moment bound must
    # hold for such terms: the Frobenius and nuclear distances, the sorted
    # eigenvalues of a sum with one term replaced (L2 and L1), and the rise
    # of the trace, a quadratic form and each eigenvalue when a term is added
    # (between 0 and t).
    rng = np.random.default_rng(0)
    d, t = 4, 1.7
    base = rng.normal(size=(8, d))
    rest = base.T @ base
    for a, b in _person_terms(rng, d, t, 300):
        assert np.linalg.norm(a - b) <= rank_one_frobenius_distance(t) * (1 + 1e-12)
        nuclear = np.abs(np.linalg.eigvalsh(a - b)).sum()
        assert nuclear <= rank_one_nuclear_distance(t) * (1 + 1e-12)
        l2, l1 = eigenvalue_sensitivities(math.sqrt(t), 1)
        change = symmetric_eigvalsh(rest + a) - symmetric_eigvalsh(rest + b)
        assert np.linalg.norm(change) <= l2 * (1 + 1e-12)
        assert np.abs(change).sum() <= l1 * (1 + 1e-12)
        rise = symmetric_eigvalsh(rest + a) - symmetric_eigvalsh(rest)
        unit = rng.normal(size=d)
        unit /= np.linalg.norm(unit)
        bound = rank_one_monotone_sensitivity(t)
        for value in (*rise, np.trace(a), unit @ a @ unit):
            assert -1e-12 <= value <= bound * (1 + 1e-12)
