"""The synthetic sensor table: public ranges and a known covariance."""

import numpy as np

from dpcov.datasets import make_sensor_table


def test_rows_lie_in_the_public_ranges_and_follow_the_covariance():
    n = 200_000
    table = make_sensor_table(n, random_state=0)
    lower, upper = table.bounds
    assert table.data.shape == (n, 8) and len(table.feature_names) == 8
    assert np.all((table.data >= lower) & (table.data <= upper))
    # The empirical covariance's entries have variance about
    # (s_ii s_jj + s_ij^2) / n for a Gaussian law, so its relative Frobenius
    # error is about sqrt(sum(s_ii s_jj + s_ij^2) / n) / ||S||_F; 4 times
    # that bounds it with a wide margin (clipping, below 1e-6 per cell, adds
    # nothing visible).
    cov = table.covariance
    expected = np.sqrt(
        np.sum(np.outer(np.diag(cov), np.diag(cov)) + cov**2) / n
    ) / np.linalg.norm(cov)
    error = np.linalg.norm(np.cov(table.data.T) - cov) / np.linalg.norm(cov)
    assert error < 4 * expected
    # Seeded: reproducible.
    again = make_sensor_table(10, random_state=0)
    np.testing.assert_array_equal(
        again.data, make_sensor_table(10, random_state=0).data
    )
