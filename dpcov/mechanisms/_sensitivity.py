"""Sensitivities: how far replacing one row can move a statistic.

Every bound here is for replace-one neighbours (one of ``n`` rows replaced by
any other row of the same domain; ``n`` is public) and for the statistic
computed exactly. Each lemma is stated, proved (or cited) and computed once;
the estimators calibrate their noise by calling these functions, and
``tests/mechanisms/test_sensitivity.py`` checks each bound against brute-force
neighbouring pairs, extreme rows included. The arithmetic of each function is
that of the estimators before the bounds were gathered here, operation for
operation, so that their noise scales are unchanged to the last bit.

The second-moment bounds (the ``rank_one_*`` functions and those built on
them) use only that a row's term ``y y^T`` is positive semi-definite with
trace at most ``t``, never that it has rank one: each proof below goes
through for any such term. So they hold, with persons for rows, for a person
whose rows are averaged and clipped as a whole (``(1/k) sum_i y_i y_i^T``
of trace at most ``R**2``; see ``dpcov.utils._gram._units``).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

# Second moments: two rank-one PSD matrices -----------------------------------


def rank_one_frobenius_distance(trace_bound):
    """Largest Frobenius distance between two rank-one PSD matrices of trace ``t``.

    Biswas, Dong, Kamath and Ullman (2020); Dong, Liang and Yi (2022),
    Section 3.1: ``||y y^T - y' y'^T||_F <= sqrt(2) t`` when ``|y|**2`` and
    ``|y'|**2`` are at most ``t``.

    Parameters
    ----------
    trace_bound : float
        ``t``, the largest trace (squared row norm, over ``n`` for a mean) of
        one row's term.

    Returns
    -------
    distance : float
        ``sqrt(2) t``; it bounds the Frobenius (L2) change of a clipped
        second moment, and of the upper triangle that carries its noise.
    """
    # ||A - B||_F**2 = ||A||_F**2 + ||B||_F**2 - 2 <A, B>, with ||y y^T||_F =
    # |y|**2 <= t and <A, B> = (y.y')**2 >= 0: at most 2 t**2, attained by
    # orthogonal rows of squared norm t. (For PSD A, B of trace <= t alike:
    # ||A||_F <= tr A and <A, B> >= 0.)
    return math.sqrt(2.0) * trace_bound


def rank_one_nuclear_distance(trace_bound):
    """Largest nuclear-norm distance between two rank-one PSD matrices of trace ``t``.

    Direct (triangle inequality), as in d'Orsi and Novikov (2025) and Dong,
    Liang and Yi (2022), Lemma 12 (from Amin et al. 2019).

    Parameters
    ----------
    trace_bound : float
        ``t``, the largest trace of one row's term.

    Returns
    -------
    distance : float
        ``2 t``; it also bounds the L1 change of the sorted eigenvalues
        (removing a row lowers them by ``|y|**2`` in total, adding one raises
        them by ``|y'|**2`` in total).
    """
    # ||A - B||_* <= tr A + tr B <= 2 t (any PSD A, B), attained by
    # orthogonal rows (the difference then has eigenvalues t and -t).
    return 2.0 * trace_bound


def second_moment_sensitivities(radius, n_samples, n_features):
    """L2 and L1 sensitivities of the upper triangle of ``Y.T @ Y / n``.

    L2: :func:`rank_one_frobenius_distance` (Dong, Liang and Yi 2022,
    Section 3.1). L1: Cauchy-Schwarz on the diagonal and the off-diagonal
    entries apart, below Dong, Liang and Yi (2022), Lemma 11.

    Parameters
    ----------
    radius : float
        Row-norm bound ``R``.
    n_samples : int
        Number of rows ``n`` (public under replace-one neighbours).
    n_features : int
        Dimension ``d``.

    Returns
    -------
    l2 : float
        ``sqrt(2) R**2 / n``.
    l1 : float
        ``sqrt(d (d + 3) / 2) R**2 / n``.
    """
    scale = radius**2 / n_samples
    # L2 (Frobenius = upper triangle's L2 up to the mirrored entries): replacing
    # y by y' changes the matrix by (yy^T - y'y'^T)/n, whose Frobenius norm is
    # at most sqrt(2) R^2/n, tight for y orthogonal to y' (the change is then
    # diagonal in a basis of y, y'; for y = R e_1, y' = R e_2 the upper
    # triangle holds all of it).
    l2 = rank_one_frobenius_distance(scale)
    # L1 of the upper triangle u of D = (yy^T - y'y'^T)/n: by Cauchy-Schwarz on
    # the d diagonal and the d(d-1)/2 off-diagonal entries separately,
    # |u|_1 <= sqrt(d a) + sqrt(d(d-1)/2 b) with a = sum D_ii^2, b = sum_{i<j} D_ij^2
    # and a + 2b = |D|_F^2 <= 2 R^4/n^2; the maximum over a is
    # sqrt(d (d + 3) / 2) R^2 / n. It is below both sqrt(2) d R^2 / n (Dong,
    # Liang and Yi 2022, Lemma 11) and (d + 1) R^2 / n for every d, and tight at
    # d = 2.
    l1 = math.sqrt(n_features * (n_features + 3) / 2.0) * scale
    return l2, l1


def eigenvalue_sensitivities(radius, n_samples):
    """L2 and L1 sensitivities of the sorted eigenvalues of ``Y.T @ Y / n``.

    Dong, Liang and Yi (2022), Lemma 8 (L2, Weyl interlacing) and Lemma 12
    (L1, from Amin et al. 2019).

    Parameters
    ----------
    radius : float
        Row-norm bound ``R``.
    n_samples : int
        Number of rows ``n``.

    Returns
    -------
    l2 : float
        ``sqrt(2) R**2 / n``: the sorted eigenvalues move by at most the
        Frobenius norm of the change (:func:`rank_one_frobenius_distance`).
    l1 : float
        ``2 R**2 / n`` (:func:`rank_one_nuclear_distance`).
    """
    scale = radius**2 / n_samples
    return rank_one_frobenius_distance(scale), rank_one_nuclear_distance(scale)


def rank_one_monotone_sensitivity(squared_radius, n_samples=1):
    """Sensitivity of a statistic that each row raises by at most ``|y|**2 / n``.

    Weyl's inequality and direct: the trace ``sum |y|**2 / n``, a quadratic
    form ``u^T (Y^T Y / n) u`` of a unit ``u``, and each eigenvalue of
    ``Y^T Y / n`` rise by between 0 and ``|y|**2 / n`` when a row ``y`` is
    added.

    Parameters
    ----------
    squared_radius : float
        ``R**2``, the bound on a row's squared norm.
    n_samples : int, default=1
        ``n`` for a mean; 1 for a sum.

    Returns
    -------
    sensitivity : float
        ``R**2 / n`` (L1 and L2 alike: the statistic is a scalar).
    """
    # Replacing y by y' removes a rise in [0, |y|^2/n] and adds one in
    # [0, |y'|^2/n]: the statistic moves by at most R^2/n either way,
    # attained (for the trace) by y of norm R and y' = 0.
    return squared_radius / n_samples


# Means of rows in a ball or a box -------------------------------------------


def ball_mean_sensitivities(radius, n_samples, n_features=1):
    """L2 and L1 sensitivities of the mean of rows of L2 norm at most ``r``.

    Direct: two rows in a ball of radius ``r`` differ by at most ``2 r`` in
    L2, hence by at most ``2 r sqrt(d)`` in L1 (``|v|_1 <= sqrt(d) |v|_2``).

    Parameters
    ----------
    radius : float
        ``r``; for an interval ``[c - w, c + w]``, its half-width ``w``.
    n_samples : int
        ``n`` for a mean; 1 for a sum.
    n_features : int, default=1
        Dimension ``d``.

    Returns
    -------
    l2 : float
        ``2 r / n``.
    l1 : float
        ``2 r sqrt(d) / n``.
    """
    # Attained by r e_1 and -r e_1 (L2) and by r (1, ..., 1) / sqrt(d) and
    # its opposite (L1).
    return 2.0 * radius / n_samples, 2.0 * radius * math.sqrt(n_features) / n_samples


def box_mean_sensitivities(n_samples, n_features):
    """L2 and L1 sensitivities of the mean of rows in ``[-1, 1]^d``.

    Direct: two rows of the box differ by at most 2 in each coordinate.

    Parameters
    ----------
    n_samples : int
        Number of rows ``n`` (public under replace-one neighbours); 1 for a
        sum.
    n_features : int
        Dimension ``d``.

    Returns
    -------
    l2 : float
        ``2 sqrt(d) / n``.
    l1 : float
        ``2 d / n``.
    """
    # Replacing row z by z' moves the mean by (z' - z) / n, whose entries lie
    # in [-2/n, 2/n]: L2 norm at most 2 sqrt(d)/n, L1 norm at most 2d/n, both
    # attained by z = 1, z' = -1 (every entry).
    return 2.0 * math.sqrt(n_features) / n_samples, 2.0 * n_features / n_samples


def box_moment_sensitivities(n_samples, n_features, weight):
    """Sensitivities of ``(mean of z, weight * mean of z * z)`` for z in ``[-1, 1]^d``.

    Direct: a maximum over one coordinate's old and new values (derived
    below).

    Parameters
    ----------
    n_samples : int
        Number of rows ``n`` (public under replace-one neighbours).
    n_features : int
        Dimension ``d``.
    weight : float
        Weight ``w`` of the second moment, in ``[1/2, sqrt(2)]``.

    Returns
    -------
    l2 : float
        ``2 sqrt(d) / n``: the mean's own L2 sensitivity, whatever ``w`` in
        that range.
    l1 : float
        ``(2 w + 1)**2 / (4 w) * d / n``; ``(1 + sqrt(2)) d / n`` at
        ``w = (1 + sqrt(2)) / 2``.
    """
    if not 0.5 <= weight <= math.sqrt(2.0):
        raise ValueError(f"weight must lie in [1/2, sqrt(2)], got {weight!r}.")
    # Replacing row z by z' changes coordinate j of the pair by
    # ((z'_j - z_j), w (z'_j**2 - z_j**2)) / n. Write a = z_j - z'_j and
    # b = z_j + z'_j, so z_j**2 - z'_j**2 = a b; the box |z_j|, |z'_j| <= 1 is
    # |a| + |b| <= 2.
    # L2: each coordinate contributes a**2 (1 + w**2 b**2) / n**2, largest at
    # |a| = 2 - |b|: h(b) = (2 - b)**2 (1 + w**2 b**2) on [0, 2], with
    # h'(b) = 2 (2 - b) (2 w**2 b (1 - b) - 1) and 2 w**2 b (1 - b) <= w**2 / 2
    # <= 1 for w**2 <= 2: h decreases, its maximum is h(0) = 4 (z = 1,
    # z' = -1), and the d coordinates give 2 sqrt(d) / n, the mean's alone.
    l2 = 2.0 * math.sqrt(n_features) / n_samples
    # L1: each coordinate contributes |a| (1 + w |b|) / n <= (2 - b)(1 + w b) / n,
    # a concave quadratic in b whose maximum on [0, 2] is at b = 1 - 1/(2w)
    # (for w >= 1/2), with value (2 w + 1)**2 / (4 w).
    l1 = (2.0 * weight + 1.0) ** 2 / (4.0 * weight) * n_features / n_samples
    return l2, l1


# Sums released with counts ---------------------------------------------------


def class_statistics_sensitivities(radius, n_features, weight):
    """Sensitivities of the class sums and weighted counts ``(S_1.., w N_1..)``.

    Direct: a replaced row keeps its class (one sum moves by ``x' - x``) or
    changes class (``S_a`` loses ``x``, ``S_b`` gains ``x'``, two counts
    move by 1).

    Parameters
    ----------
    radius : float
        ``R``, the rows' norm bound.
    n_features : int
        ``d``.
    weight : float
        ``w``, the counts' weight, at most ``R``.

    Returns
    -------
    l2 : float
        ``2 R``: ``sqrt(2 R**2 + 2 w**2) <= 2 R`` for a change of class.
    l1 : float
        ``2 R sqrt(d) + 2 w``.
    """
    if not weight <= radius:
        raise ValueError("The counts' weight must be at most the rows' radius.")
    # The same class: the sums' own (ball_mean_sensitivities of a sum). A
    # change of class: L2 sqrt(|x|^2 + |x'|^2 + 2 w^2) <= 2 R for w <= R;
    # L1 |x|_1 + |x'|_1 + 2 w <= 2 R sqrt(d) + 2 w. Both attained.
    l2, l1 = ball_mean_sensitivities(radius, 1, n_features)
    return l2, l1 + 2.0 * weight


def observed_sums_sensitivities(n_features):
    """Sensitivities of the observed cells' sums and weighted counts ``(S, w N)``.

    Direct: per column, a replaced row moves ``(S_j, w N_j)`` by ``(z' - z,
    0)`` (both cells observed, ``|z' - z| <= 2``), by ``(+-z, +-w)`` (one
    missing) or not at all. For ``w <= sqrt(3)`` (L2) and ``w <= 1`` (L1)
    that is at most the sums' own change.

    Parameters
    ----------
    n_features : int
        Number of columns ``d``.

    Returns
    -------
    l2 : float
        ``2 sqrt(d)``, for count weights ``w <= sqrt(3)``.
    l1 : float
        ``2 d``, for count weights ``w <= 1``.
    """
    # Per column: L2 max(2, sqrt(1 + w^2)) = 2 and L1 max(2, 1 + w) = 2 at
    # those weights; the box sums' sensitivities (a sum: n = 1).
    return box_mean_sensitivities(1, n_features)


def ssp_sensitivities(n_columns):
    """Sensitivities of the sufficient statistics of least squares.

    Wang (2018), Algorithm 2: ``U^T U``, ``U^T t`` and the smallest eigenvalue
    of ``U^T U``, for rows ``u = (z, 1)`` with ``z`` in ``[-1, 1]^d`` (so
    ``|u|**2 <= B**2 = n_columns``) and targets ``t`` in ``[-1, 1]``.

    Parameters
    ----------
    n_columns : int
        Columns of ``U``: the features, plus one for the intercept.

    Returns
    -------
    sensitivities : dict of str to (float, float)
        ``(l2, l1)`` of ``"gram"`` (:func:`second_moment_sensitivities` of a
        sum of rows of norm ``B``), ``"cross"`` (``u t`` lies in the ball of
        radius ``B``: :func:`ball_mean_sensitivities` of a sum) and
        ``"lambda_min"`` (``B**2``, Weyl's inequality:
        :func:`rank_one_monotone_sensitivity`).
    """
    bound2 = float(n_columns)
    radius = math.sqrt(bound2)
    monotone = rank_one_monotone_sensitivity(bound2)
    return {
        "gram": second_moment_sensitivities(radius, 1, n_columns),
        "cross": ball_mean_sensitivities(radius, 1, n_columns),
        "lambda_min": (monotone, monotone),
    }


# Counts and binary rows ------------------------------------------------------


def histogram_sensitivities():
    """L2 and L1 sensitivities of the counts of a histogram.

    Direct: a replaced value leaves its bin and enters another.

    Returns
    -------
    l2 : float
        ``sqrt(2)``.
    l1 : float
        2.
    """
    # Two counts move by 1 (or none, within one bin): attained by any pair of
    # values in different bins.
    return math.sqrt(2.0), 2.0


def binary_row_distance(n_active, radius=math.inf):
    """Largest L2 distance between two truncated binary rows.

    For ``x, x'`` in ``{0, 1}^k`` and ``trunc_B`` the projection onto the
    L2 ball of radius ``B``, ``||trunc_B(x) - trunc_B(x')|| <= min(sqrt(2) B,
    sqrt(k))``, with equality up to rounding ``B**2`` to an integer:

    * projection onto a convex set is 1-Lipschitz, so the distance is at most
      ``||x - x'|| <= sqrt(k)`` (``x - x'`` lies in ``{-1, 0, 1}^k``);
    * ``trunc_B`` only rescales, so both truncated rows lie in the
      nonnegative orthant and have norm at most ``B``; their inner product is
      nonnegative, hence ``||a - b||**2 = ||a||**2 + ||b||**2 - 2 a.b <=
      2 B**2``. This is ``sqrt(2)`` below the generic ``2 B`` of two points
      of a ball (used by Kamath, Li, Singhal and Ullman, 2019, Section 5.1).

    Two rows with disjoint supports of ``min(B**2, k / 2)`` ones each attain
    the bound.

    Parameters
    ----------
    n_active : int
        Number of coordinates ``k``.
    radius : float, default=inf
        Truncation radius ``B``; ``inf`` means no truncation.

    Returns
    -------
    distance : float
        ``min(sqrt(2) B, sqrt(k))``.

    Examples
    --------
    >>> from dpcov.mechanisms._sensitivity import binary_row_distance
    >>> binary_row_distance(100)
    10.0
    >>> round(binary_row_distance(100, radius=2.0), 4)
    2.8284
    """
    return min(math.sqrt(2.0) * radius, math.sqrt(n_active))
