"""Shared parameter and attribute descriptions for estimator docstrings.

A docstring names a shared entry as ``{name}`` on a line of its own (indented
like a parameter line); :func:`fill_doc` substitutes it. Only the names below
are replaced, so other braces in a docstring are left alone.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import textwrap

_ENTRIES = {
    "epsilon": """
epsilon : float, default=1.0
    Privacy-loss parameter, positive. With ``delta > 0`` the estimator runs
    its zCDP mechanism at the largest rho that implies
    (``epsilon``, ``delta``)-DP (Canonne-Kamath-Steinke conversion); with
    ``delta=0`` it runs its pure ``epsilon``-DP variant. Ignored when ``rho``
    is set. ``inf`` releases the non-private estimate (for testing only).""",
    "delta": """
delta : float, default=1e-6
    Failure probability of the (``epsilon``, ``delta``) guarantee, in [0, 1);
    choose it well below ``1 / n_samples``. ``delta=0`` selects the pure-DP
    variant (Laplace noise, L1 sensitivities).""",
    "rho": """
rho : float, default=None
    Budget in zero-concentrated DP, for users who account in zCDP. When set,
    the estimator is ``rho``-zCDP, ``epsilon`` is ignored and ``delta`` is
    only used to report the implied ``epsilon_spent_``.""",
    "epsilon_zcdp": """
epsilon : float, default=1.0
    Privacy-loss parameter, positive. The estimator runs at the largest rho
    whose zCDP guarantee implies (``epsilon``, ``delta``)-DP
    (Canonne-Kamath-Steinke conversion). Ignored when ``rho`` is set. ``inf``
    adds no noise (for testing only).""",
    "delta_zcdp": """
delta : float, default=1e-6
    Failure probability of the (``epsilon``, ``delta``) guarantee, in (0, 1);
    choose it well below ``1 / n_samples``. Gaussian noise has no pure-DP
    form, so ``delta=0`` is refused unless ``rho`` is set (then ``delta`` only
    serves to report ``epsilon_spent_``).""",
    "privacy_attributes_zcdp": """
guarantee_ : dpcov.accounting.ZCDP
    The guarantee of the whole fit (composition of its steps).
privacy_unit_ : {"row", "person"}
    Whom the guarantee protects: a row, or a person (a fit with
    ``groups`` and ``max_rows_per_group``; see :ref:`privacy_units`).
neighbours_ : {"replace", "add_remove"}
    The neighbouring relation the guarantee holds under (an
    ``"add_remove"`` fit holds under replacement too).
epsilon_spent_ : float
    Epsilon of the implied (epsilon, delta)-DP guarantee (``inf`` when
    ``rho`` is set and ``delta=0``).
delta_spent_ : float
    Delta of the guarantee.
rho_spent_ : float
    The zCDP parameter of the guarantee.
budget_split_ : dict of str to ZCDP
    Budget of each step, in the order the steps ran; they compose to
    ``guarantee_``.
noise_sampler_ : str
    The sampler of the fit's noise: ``"numpy"`` (floating point) or
    ``"discrete"`` (exact, under ``dpcov.set_config(secure_noise=True)``).""",
    "data_norm": """
data_norm : float, default=None
    Public bound on the L2 norm of each row; longer rows are scaled down to it
    (clipped), and all noise is calibrated to it. It must not be computed from
    the data. With ``None`` (and ``bounds=None``) a bound is found privately
    over the powers of two from 2**-32 to 2**32: by a sparse-vector search
    with 1/8 of the budget when there are enough rows for it (4,411 at
    ``epsilon=1, delta=1e-6``), else by the exponential mechanism with 3/16
    of the budget, which needs 272 rows at that budget (see
    :func:`dpcov.mechanisms.exponential_radius_min_samples`); with fewer,
    ``fit`` raises a ValueError that says how many and what to pass. Must lie
    in [1e-150, 1e150] (beyond, even the squared norms overflow).""",
    "bounds": """
bounds : tuple of (lower, upper) or "private", default=None
    Public range of each feature, for tables whose features have different
    scales: ``lower`` and ``upper`` are scalars or arrays of shape
    ``(n_features,)`` with ``lower < upper``, from knowledge of the domain
    (a sensor's range, a questionnaire's scale), never from the data. Each
    feature is clipped to its range and the box mapped onto ``[-1, 1]^d``
    (``z = (x - m) / h`` with midpoint ``m`` and half-width
    ``h = (upper - lower) / 2``); the mechanism runs there with the row-norm
    bound ``sqrt(n_features)``, and the fitted attributes come back in the
    original units. The noise on entry ``(i, j)`` of the covariance is
    ``h_i h_j`` times the noise in unit coordinates: a range twice as wide
    as needed costs four times the error on its feature's variance, and a
    range too narrow biases it (clipped values). ``"private"`` finds the
    ranges privately with a quarter of the budget (``budget_split_["bounds"]``):
    per feature a private median ``m`` and a private bound ``r`` on
    ``|x - m|``, by the exponential mechanism over public grids (see
    :ref:`private_ranges`), giving ``[m - r, m + r]`` in ``bounds_``; it
    needs a few thousand rows at ``epsilon=1`` (``fit`` says how many).
    Cannot be combined with ``data_norm``; with both None the row-norm bound
    is found privately.""",
    "max_rows_per_group": """
max_rows_per_group : int, default=None
    Public bound ``k`` on the rows one person contributes, with ``groups``
    passed to ``fit`` (the person of each row): the privacy unit is then the
    person, not the row. At most ``k`` rows of each person are kept, chosen
    at random among the person's rows; each person contributes the average
    of its rows' outer products (and of its rows, for the mean), clipped as
    a whole to the norm bound, so one person moves the fit by one row's
    worth whatever its number of rows, and the noise is calibrated to the
    number of persons. The guarantee is then for replacing one person's
    rows (their number included; the number of persons is public, the
    number of rows is not). ``None``: each row is a person, and passing
    ``groups`` is refused. See :ref:`privacy_units`.""",
    "max_rows_per_group_ssp": """
max_rows_per_group : int, default=None
    Public bound ``k`` on the rows one person contributes, with ``groups``
    passed to ``fit``: the privacy unit is then the person. At most ``k``
    rows of each person are kept, at random; each person contributes the
    average of its rows' terms ``u u^T`` and ``u t`` (in the same ranges as
    one row's), so the statistics' noise is unchanged and the fit weighs
    persons, not rows. See :ref:`privacy_units`.""",
    "neighbours": """
neighbours : {"replace", "add_remove"}, default="replace"
    The neighbouring relation. ``"replace"``: one unit (a row, or a person
    with ``groups``) replaced by any other; the number of rows (of persons
    with ``groups``) is public. ``"add_remove"``: one unit added or
    removed; that number is then private: the fit first releases a noisy
    count (1/16 of the budget, sensitivity 1, in ``released_count_``) and
    uses it wherever it would use the number of units (normalising, the
    plan, refusals for too few, which then come after the fit is recorded).
    The sums' noise keeps its replace-one calibration, which bounds adding
    or removing a unit too, and the count does not move under replacement:
    an ``"add_remove"`` fit holds under both relations at its budget. See
    :ref:`privacy_units`.""",
    "neighbours_ssp": """
neighbours : {"replace", "add_remove"}, default="replace"
    The neighbouring relation. ``"add_remove"``: one unit (a row, or a
    person with ``groups``) added or removed, so their number is private.
    Least squares reads no count: the coefficients solve the normal
    equations of the released sums, and adding or removing a unit moves
    ``U^T U`` by ``u u^T`` (Frobenius norm at most ``B**2``, below the
    replace-one bound ``sqrt(2) B**2``), its smallest eigenvalue by at
    most ``B**2`` and ``U^T t`` by ``u t`` (at most ``B``, below ``2 B``),
    so the replace-one noise bounds it, nothing is spent on a count, and
    the fit holds under both relations at its budget. With
    ``bounds="private"`` the ranges' plan needs the number of units: a
    noisy count (1/16 of the budget) is released first for it. See
    :ref:`privacy_units`.""",
    "prediction_noise_attributes": """
predicted_error_ : float
    The predicted root-mean-square error that the noise of the release adds
    to a prediction, in the target's units: a parametric bootstrap of the
    released statistics' public noise (see ``prediction_noise``), from the
    release and public values only.
signal_to_noise_ : float
    The spread of the predictions' signal (their spread less the noise's
    share of it) over the noise in them (both from the release); below 1
    the predictions are predicted no better than the intercept alone, and
    ``fit`` warns with :class:`~dpcov.exceptions.NoiseDominatedWarning`.
""",
    "assume_centered": """
assume_centered : bool, default=False
    If True, estimate the second-moment matrix ``X.T @ X / n`` about the
    origin, as the papers do, and set ``location_`` to zero. If False, first
    release a private mean (1/8 of the budget, projected onto the
    ``data_norm_`` ball), and estimate the second moment of the rows about it;
    the centred rows have norm at most ``data_norm_ + ||location_||``, which is
    the radius the covariance noise is calibrated to.""",
    "projection": """
projection : {"clamp", "feasible", "psd"}, default="clamp"
    Post-processing of the noisy symmetric matrix (free of privacy cost),
    applied to its eigenvalues: "clamp" clips them to ``[0, data_norm_**2]``
    (the eigenvalue clamp of every experiment of Dong, Liang and Yi, 2022);
    "feasible" projects onto the PSD matrices of trace at most
    ``data_norm_**2`` (the projection mechanism of Dong, Liang and Yi, 2022,
    Appendix C); "psd" only sets negative eigenvalues to zero. The first two
    are Frobenius projections onto convex sets that contain the true
    covariance, so (with ``eigenvalue_floor=0``) they never increase the
    Frobenius error.""",
    "eigenvalue_floor": """
eigenvalue_floor : "auto" or float, default=0.0
    Lower bound on the eigenvalues, part of the set the projection maps onto
    (``floor I <= S``). With 0 (the papers' setting) ``covariance_`` may be
    singular and ``precision_`` is then a pseudo-inverse; ``score`` stays
    finite regardless (it floors the eigenvalues of its model at the public
    noise level, see :meth:`score`). A positive floor makes ``precision_`` a
    true inverse, at a cost in Frobenius error when the covariance has
    eigenvalues below it; "auto" uses the standard deviation of the noise
    added to each eigenvalue or entry (a public quantity). With ``bounds``
    the floor applies in the box's unit coordinates. A floor above the
    largest eigenvalue the release can have (the squared row bound its
    mechanism ran at: ``data_norm_**2``, or AdaptiveCovariance's
    ``clip_threshold_**2``) is lowered to it.""",
    "shrinkage": """
shrinkage : "auto" or None, default="auto"
    Post-processing (free of privacy cost) that moves a noise-dominated
    estimate toward the zero matrix, which knows nothing (relative error 1).
    The projected estimate ``P`` is multiplied by the positive-part
    James-Stein factor ``s = max(0, 1 - kappa / ||P||**2)``, where ``kappa``
    estimates ``||P||**2 - <P, C>`` by rerunning the mechanism, with its
    public parameters and a fixed generator, on ``P`` itself (a parametric
    bootstrap), and both norms are Frobenius norms in the units of
    ``covariance_`` (the original units with ``bounds``). ``s`` is weighed
    by a test against estimates of pure noise: 0 (the zero matrix) up to
    the upper 2% quantile ``q`` of their energies, rising to the full factor
    at ``2 q``; the factor is applied only below 1/2, where the estimated
    signal-to-noise ratio is below 1. It reads the release and public values
    only. None keeps the release as it is. See the :ref:`User Guide
    <covariance_shrinkage>`.""",
    "store_precision": """
store_precision : bool, default=True
    Whether to store ``precision_``.""",
    "store_raw": """
store_raw : bool, default=False
    If True, also keep the noisy symmetric matrix before projection and floor
    in ``raw_covariance_`` (for research; it is a private release too).""",
    "accountant": """
accountant : dpcov.accounting.BudgetAccountant, default=None
    Ledger shared across fits. Before reading the data, ``fit`` asks it whether
    this fit's guarantee (:meth:`privacy_cost`) fits under its cap, and raises
    :class:`~dpcov.exceptions.BudgetExceeded` if not; it records the guarantee
    once the input is validated. ``sklearn.clone`` keeps the same accountant,
    so every fit of a ``GridSearchCV(n_jobs=1)`` is recorded; for
    ``n_jobs > 1`` use :func:`dpcov.model_selection.search_cost`.""",
    "random_state": """
random_state : int, numpy.random.Generator, RandomState or None, default=None
    Source of the noise. ``None`` (use this for real releases) seeds a new
    generator from operating-system entropy at every fit. A seed makes fits
    reproducible for tests and research, but a release made with a known seed
    is **not private** against whoever knows the seed. A Generator is advanced
    by each fit, but ``sklearn.clone`` (hence ``GridSearchCV`` and
    ``cross_validate``) copies it, so cloned estimators draw the *same* noise;
    only ``None`` gives independent noise across clones.""",
    "covariance_attributes": """
location_ : ndarray of shape (n_features,)
    Private mean (zero when ``assume_centered=True``).
covariance_ : ndarray of shape (n_features, n_features)
    Private covariance estimate: symmetric, PSD, post-processed as set by
    ``projection`` and ``eigenvalue_floor``.
precision_ : ndarray of shape (n_features, n_features)
    Pseudo-inverse of ``covariance_`` (stored only if ``store_precision``).
raw_covariance_ : ndarray of shape (n_features, n_features)
    The noisy matrix before post-processing (only if ``store_raw=True``).
data_norm_ : float
    Row-norm bound used: ``data_norm``, or the private radius; with
    ``bounds``, ``sqrt(n_features)``, the bound in the box's unit coordinates.
bounds_ : tuple of ndarray of shape (n_features,) or None
    The validated ``(lower, upper)`` when ``bounds`` is given, else None.
released_count_ : int or None
    Under ``neighbours="add_remove"``, the released (noisy, rounded, at
    least 1) number of units that the fit used in place of the private
    one; None under ``"replace"``, where that number is public.
noise_level_ : float
    Public scale of the largest eigenvalue the noise alone would give, in the
    mechanism's coordinates (the box's unit coordinates with ``bounds``):
    ``2 sqrt(d)`` times the entry noise's standard deviation for additive
    noise (the edge of the semicircle law), about ``sqrt(2 log(2 d))`` times
    the eigenvalue noise's for mechanisms that perturb eigenvalues.
shrinkage_ : float
    The shrinkage intensity applied, in ``[0, 1]``: ``covariance_`` is ``1 -
    shrinkage_`` times the projected release; 0 with ``shrinkage=None`` or
    a well-estimated release, 1 when the estimate is the zero matrix.
signal_to_noise_ : float
    Estimated Frobenius norm of the signal over that of the noise in the
    estimate, in the units of ``covariance_``: ``sqrt(s / (1 - s))`` with
    ``s`` the factor of ``shrinkage`` (0 when the estimate is within the
    noise), computed from the release and public values only, whatever
    ``shrinkage`` is. Below 1 the noise carries more energy than the signal
    (the estimate's relative error is then about 0.7 or more, or it is the
    zero matrix), and ``fit`` warns with
    :class:`~dpcov.exceptions.NoiseDominatedWarning`.
predicted_error_ : float
    The predicted root-mean-square Frobenius error of ``covariance_`` from
    the release's noise, ``sqrt(E ||covariance_ - C||_F**2)``, in the units
    of ``covariance_`` (original units with ``bounds``), where ``C`` is the
    covariance of the rows as the mechanism saw them (clipped to
    ``data_norm`` or the box): computed from the release and public values
    only (the noise figure the shrinkage uses), 0 without noise. NaN when
    the release was shrunk (``shrinkage_ > 0``, by more than half): its
    error is then mostly the truth's own norm, which no release can
    estimate. It leaves out the bias of clipping. See :ref:`error_figures`.
guarantee_ : dpcov.accounting.PureDP, ZCDP, GaussianDP or ProfileDP
    The guarantee of the whole fit (composition of its steps), naming its
    unit and relation: ``GaussianDP`` for a fit of Gaussian parts only
    asked for (epsilon, delta), ``ProfileDP`` for one that mixes them with
    a selection on a plan known from its parameters (see
    :ref:`exact_curve`).
privacy_unit_ : {"row", "person"}
    Whom the guarantee protects: a row, or a person (a fit with
    ``groups`` and ``max_rows_per_group``; see :ref:`privacy_units`).
neighbours_ : {"replace", "add_remove"}
    The neighbouring relation the guarantee holds under (an
    ``"add_remove"`` fit holds under replacement too).
epsilon_spent_ : float
    Epsilon of the guarantee (pure, or of the implied (epsilon, delta)-DP,
    on the exact curve for ``GaussianDP`` and ``ProfileDP``; ``inf`` for
    zCDP with ``delta=0``).
delta_spent_ : float
    Delta of the guarantee (0 for pure DP).
rho_spent_ : float
    The zCDP parameter of the guarantee (``epsilon**2 / 2`` for pure DP,
    ``mu**2 / 2`` for ``GaussianDP``, its parts' sum for ``ProfileDP``:
    larger than the rho an (epsilon, delta) ask converts to, for the same
    epsilon).
budget_split_ : dict of str to PureDP or ZCDP
    Budget of each step, in the order the steps ran; they compose to
    ``guarantee_`` (Gaussian steps at ``rho_i`` are ``sqrt(2 rho_i)``-GDP).
noise_sampler_ : str
    The sampler of the fit's noise: ``"numpy"`` (floating point) or
    ``"discrete"`` (exact, under ``dpcov.set_config(secure_noise=True)``).
n_features_in_ : int
    Number of features seen during ``fit``.
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of features seen during ``fit``. Defined only when `X`
    has feature names that are all strings.""",
}


def fill_doc(obj):
    """Substitute the shared entries named in ``obj.__doc__``.

    Parameters
    ----------
    obj : class or function
        Object whose docstring contains ``{name}`` lines.

    Returns
    -------
    obj : class or function
        The same object, docstring filled in.
    """
    doc = obj.__doc__
    for name, text in _ENTRIES.items():
        placeholder = "{" + name + "}"
        while placeholder in doc:
            start = doc.index(placeholder)
            line_start = doc.rfind("\n", 0, start) + 1
            indent = doc[line_start:start]
            body = textwrap.indent(text.strip("\n"), indent)[len(indent) :]
            doc = doc[:start] + body + doc[start + len(placeholder) :]
    obj.__doc__ = doc
    return obj
