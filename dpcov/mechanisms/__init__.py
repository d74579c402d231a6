"""Differentially private mechanisms: noise, calibration, selection, projection.

This layer knows nothing of scikit-learn. Each mechanism separates calibration
(a noise scale from a sensitivity and a budget) from sampling (a draw from a
``numpy.random.Generator``), and every draw goes through one module
(``dpcov.mechanisms._noise``) so that a hardened sampler can replace it. The
algorithms that compose these primitives sit beside their estimators, in
:mod:`dpcov.covariance` and :mod:`dpcov.distributions`.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._additive import AdditiveNoise, calibrate_additive
from ._bingham import bingham_envelope, bingham_moments, sample_bingham
from ._calibration import (
    bounded_range_epsilon,
    exponential_scale,
    gaussian_scale,
    laplace_scale,
    truncated_laplace_params,
)
from ._eigen_sampling import sample_eigenvectors, sampled_overlaps
from ._exponential import exponential_mechanism, exponential_probabilities
from ._histogram import stable_histogram, stable_histogram_threshold
from ._nuclear import (
    haar_orthogonal,
    nuclear_profile_exact,
    nuclear_profile_gibbs,
    sample_nuclear_laplace,
)
from ._projection import (
    project_capped_simplex,
    project_feasible,
    project_l2_ball,
    project_psd,
    project_psd_bounded,
    spectral_map,
)
from ._radius import (
    DEFAULT_RADIUS_GRID,
    exponential_radius_accuracy,
    exponential_radius_min_samples,
    exponential_radius_probabilities,
    exponential_radius_scores,
    private_radius,
    private_radius_exponential,
    private_radius_from_counts,
    private_radius_min_samples,
    radius_counts,
)
from ._ranges import (
    median_probabilities,
    private_median,
    private_ranges_min_samples,
)
from ._selection import (
    RUN_LAWS,
    draw_run_count,
    run_count_law,
    run_count_pmf,
    selection_guarantee,
    selection_run_budget,
)
from ._sparse_vector import (
    above_threshold,
    above_threshold_accuracy,
    above_threshold_scales,
)
from ._stability import stability_noise, stability_test, stability_threshold
from ._tails import covariance_deviation, gaussian_norm_tail, wigner_norm_bound

__all__ = [
    "AdditiveNoise",
    "calibrate_additive",
    "bingham_envelope",
    "bingham_moments",
    "covariance_deviation",
    "gaussian_norm_tail",
    "wigner_norm_bound",
    "bounded_range_epsilon",
    "exponential_scale",
    "exponential_mechanism",
    "exponential_probabilities",
    "gaussian_scale",
    "laplace_scale",
    "above_threshold",
    "above_threshold_accuracy",
    "above_threshold_scales",
    "DEFAULT_RADIUS_GRID",
    "private_radius",
    "private_radius_from_counts",
    "private_radius_min_samples",
    "private_radius_exponential",
    "exponential_radius_accuracy",
    "exponential_radius_min_samples",
    "exponential_radius_probabilities",
    "exponential_radius_scores",
    "radius_counts",
    "median_probabilities",
    "private_median",
    "private_ranges_min_samples",
    "project_capped_simplex",
    "project_feasible",
    "project_l2_ball",
    "project_psd",
    "project_psd_bounded",
    "haar_orthogonal",
    "nuclear_profile_exact",
    "nuclear_profile_gibbs",
    "sample_bingham",
    "sample_nuclear_laplace",
    "sample_eigenvectors",
    "sampled_overlaps",
    "spectral_map",
    "stability_noise",
    "stability_test",
    "stability_threshold",
    "stable_histogram",
    "stable_histogram_threshold",
    "truncated_laplace_params",
    "RUN_LAWS",
    "draw_run_count",
    "run_count_law",
    "run_count_pmf",
    "selection_guarantee",
    "selection_run_budget",
]
