"""Exact discrete Laplace and discrete Gaussian samplers, and their grids.

The hardened noise of ``dpcov.set_config(secure_noise=True)``. Floating-point
samplers are open to the attack of Mironov (CCS 2012): the set of floats a
textbook Laplace release can output depends on its input, so the low bits of
one output can tell two neighbouring datasets apart. Here a release is
``g * (round(v / g) + Z)``, where ``g = 2**-k`` is a public grid step and
``Z`` is an integer drawn *exactly* from the discrete Laplace or discrete
Gaussian law of Canonne, Kamath and Steinke (NeurIPS 2020), Algorithms 1-3:
integer arithmetic only, and every random bit from the operating system's
CSPRNG (:mod:`secrets`). Whatever ``v`` is, the output lies on the grid
``g Z``, and its law is exactly the one the privacy proof uses.

The samplers are vectorised: the Bernoulli and geometric steps run on numpy
arrays of 64-bit integers, one round per step over the draws still pending.
The rare draws whose integers would leave 64 bits continue, from the state
they reached, in Python's arbitrary-precision integers, so no step is ever
approximated or truncated.

Guarantees (the grid and the scale are public):

* Discrete Gaussian: for an integer shift ``mu``, the Renyi divergence of
  order ``alpha`` between ``N_Z(mu, t**2)`` and ``N_Z(0, t**2)`` is at most
  ``alpha mu**2 / (2 t**2)``, the continuous Gaussian's (Canonne, Kamath and
  Steinke 2020, Section 2). Divergences of independent coordinates add, so
  adding ``N_Z(0, t**2)`` to each coordinate of an integer vector whose L2
  sensitivity is ``D`` is ``D**2 / (2 t**2)``-zCDP, the same as the
  continuous Gaussian of the same scale.
* Discrete Laplace (the geometric mechanism of Ghosh, Roughgarden and
  Sundararajan, STOC 2009): ``P(z) / P(z') = exp((|z'| - |z|) / t) <=
  exp(|z - z'| / t)``, and over independent coordinates the exponents add:
  adding ``P(z) ~ exp(-|z| / t)`` to each coordinate of an integer vector
  whose L1 sensitivity is ``D`` is ``D / t``-DP.

The sensitivities are those of the statistic computed exactly; the float
sums dpcov computes differ from it by rounding errors far below one grid
step.

Timing is out of scope: the samplers loop until a draw is accepted, so their
running time depends on the noise drawn (Jin, McMurtry, Rubinstein and
Ohrimenko, IEEE S&P 2022, time the samplers of Canonne, Kamath and Steinke).
Vectorisation over the coordinates of a release blurs it, not for a single
coordinate.

Rounding to the grid moves each coordinate by at most ``g / 2``, so the
integer vector ``round(v / g)`` has sensitivity at most ``D / g + sqrt(m)``
(L2) or ``D / g + m`` (L1) over ``m`` coordinates; the scale ``t`` is chosen
(exactly, in rationals) so that the discrete mechanism's guarantee is at most
that of the continuous mechanism it replaces.

The number of runs of a private selection (Papernot and Steinke, ICLR 2022)
is drawn exactly too, for the logarithmic, geometric and Poisson laws
(:func:`logarithmic_count`, :func:`geometric_count`, :func:`poisson_count`):
chains of Bernoulli draws with rational probabilities, ``randbelow(den) <
num`` in Python integers, and a rejection step whose acceptance probability
turns the chain's law into the target law exactly. The float parameter
(``gamma`` or the mean) is taken as the exact rational it is, so the law
sampled is exactly the one whose guarantee dpcov computes from that float.
Their running time grows with the count drawn, as the selection's own running
time does (timing is out of scope, as above).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import secrets
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

#: The grid is at least this many times finer than the noise scale and than
#: the sensitivity per coordinate: the noise's standard deviation grows by a
#: factor at most ``1 + 2**-9`` (rounding slack plus the scale rounded up to
#: a whole number of grid steps), and rounding moves a value by at most
#: ``2**-11`` noise standard deviations.
GRID_REFINEMENT = 2**10
#: Relative margin on the scale, covering the rounding of the float scale
#: (``sensitivity / sqrt(2 rho)``, a few ulps) that the estimators compute.
SCALE_MARGIN = Fraction(1, 2**40)
#: Source of every random bit: the operating system's CSPRNG. Tests replace it
#: with a seeded object of the same interface (``token_bytes``, ``randbelow``,
#: ``SystemRandom``) to make the statistical checks reproducible.
_source = secrets

#: Largest denominator ``den * K`` of the vectorised Bernoulli steps: draws
#: beyond it continue in Python integers.
_WORD_BOUND = 2**62
#: Largest integer part of the discrete Gaussian's acceptance exponent kept
#: in 64-bit words (larger ones, |Y| beyond about 2**31 t, go to Python).
_WHOLE_BOUND = 2**62
#: Largest discrete Gaussian scale (in grid steps) of the vectorised path,
#: so that ``2 t**2`` times the first few ``K`` stays below ``_WORD_BOUND``.
_GAUSSIAN_T_BOUND = 2**28


def _words(n):
    # n uniform 64-bit words from the operating system's CSPRNG.
    return np.frombuffer(_source.token_bytes(8 * n), dtype=np.uint64)


def _mask(x):
    # 2**e - 1 >= x for uint64 x < 2**63, with e the bit length of x or one
    # more: float(x) rounds to nearest, which never lowers the bit length
    # (frexp's exponent) and raises it only when x rounds up to a power of
    # two. A mask above x - 1 only lowers the acceptance rate of the
    # rejection step, never its exactness.
    exponent = np.frexp(x.astype(np.float64))[1]
    mask = (np.uint64(1) << np.minimum(exponent, 63).astype(np.uint64)) - np.uint64(1)
    # A shift by 64 is not portable: x rounded up to 2**63 takes all 64 bits.
    return np.where(exponent >= 64, np.uint64(2**64 - 1), mask)


def uniform_below(bound):
    """Exact uniform integers in ``[0, bound)``, from the OS CSPRNG.

    Rejection sampling on masked 64-bit words: each try succeeds with
    probability above 1/2.

    Parameters
    ----------
    bound : int or array-like of int
        Exclusive upper bounds, in ``[1, 2**63]``.

    Returns
    -------
    values : ndarray of uint64
        One uniform integer per bound.
    """
    bound = np.atleast_1d(np.asarray(bound, dtype=np.uint64))
    if bound.size and bound.min() < 1:
        raise ValueError("uniform_below needs bounds of at least 1.")
    mask = _mask(bound - np.uint64(1))
    out = np.empty(bound.shape, dtype=np.uint64)
    todo = np.arange(bound.size)
    while todo.size:
        draw = _words(todo.size) & mask[todo]
        ok = draw < bound[todo]
        out[todo[ok]] = draw[ok]
        todo = todo[~ok]
    return out


def _bernoulli_exp_unit_scalar(num, den, k=1):
    # Canonne, Kamath and Steinke (2020), Algorithm 1, from the state K = k:
    # Bernoulli(exp(-num / den)) for 0 <= num <= den, in Python integers.
    while _source.randbelow(den * k) < num:
        k += 1
    return k % 2 == 1


def bernoulli_exp_scalar(num, den):
    """Exact ``Bernoulli(exp(-num / den))`` for Python integers, any size.

    Parameters
    ----------
    num : int
        Non-negative numerator.
    den : int
        Positive denominator.

    Returns
    -------
    outcome : bool
        The draw.
    """
    whole, rest = divmod(num, den)
    # exp(-gamma) = exp(-1)**floor(gamma) * exp(-(gamma - floor(gamma))).
    for _ in range(whole):
        if not _bernoulli_exp_unit_scalar(1, 1):
            return False
    return _bernoulli_exp_unit_scalar(rest, den)


def _bernoulli_exp_unit(num, den):
    # Vectorised Algorithm 1: Bernoulli(exp(-num / den)) for 0 <= num <= den
    # (uint64 arrays). K advances while Bernoulli(num / (den K)) succeeds; the
    # outcome is "K odd". A draw whose next den * K would pass _WORD_BOUND
    # continues in Python integers from the same K.
    n = num.shape[0]
    k = np.ones(n, dtype=np.uint64)
    out = np.empty(n, dtype=bool)
    active = np.arange(n)
    while active.size:
        large = den[active] > np.uint64(_WORD_BOUND) // k[active]
        for i in active[large]:
            out[i] = _bernoulli_exp_unit_scalar(int(num[i]), int(den[i]), int(k[i]))
        active = active[~large]
        success = uniform_below(den[active] * k[active]) < num[active]
        stopped = active[~success]
        out[stopped] = (k[stopped] % np.uint64(2)) == 1
        active = active[success]
        k[active] += np.uint64(1)
    return out


def _exp_minus_one_trials(n):
    # n independent Bernoulli(exp(-1)) draws (Algorithm 1 with gamma = 1).
    ones = np.ones(n, dtype=np.uint64)
    return _bernoulli_exp_unit(ones, ones)


def bernoulli_exp(num, den):
    """Exact ``Bernoulli(exp(-num / den))``, vectorised.

    Canonne, Kamath and Steinke (2020), Algorithm 1, with
    ``exp(-gamma) = exp(-1)**floor(gamma) exp(-(gamma - floor(gamma)))``.

    Parameters
    ----------
    num : array-like of int
        Non-negative numerators, below ``2**63``.
    den : array-like of int
        Positive denominators, below ``2**63``.

    Returns
    -------
    outcome : ndarray of bool
        One draw per pair.
    """
    num = np.atleast_1d(np.asarray(num, dtype=np.uint64))
    den = np.broadcast_to(np.asarray(den, dtype=np.uint64), num.shape)
    whole, rest = np.divmod(num, den)
    return _bernoulli_exp_split(whole, rest, den)


def _discrete_laplace_scalar(t):
    # Algorithm 2 of Canonne, Kamath and Steinke (2020), s = 1, in Python
    # integers (for scales beyond 64-bit words).
    while True:
        u = _source.randbelow(t)
        if not bernoulli_exp_scalar(u, t):
            continue
        v = 0
        while _bernoulli_exp_unit_scalar(1, 1):
            v += 1
        x = u + t * v
        negative = _source.randbelow(2) == 1
        if negative and x == 0:
            continue
        return -x if negative else x


def _geometric_exp_minus_one(n):
    # Successes of Bernoulli(exp(-1)) before the first failure: the
    # geometric law P(V = v) = (1 - 1/e) e**-v.
    count = np.zeros(n, dtype=np.int64)
    active = np.arange(n)
    while active.size:
        active = active[_exp_minus_one_trials(active.size)]
        count[active] += 1
    return count


def discrete_laplace(scale, size):
    """Exact discrete Laplace draws: ``P(z) ~ exp(-|z| / scale)`` on the integers.

    Canonne, Kamath and Steinke (2020), Algorithm 2 with ``s = 1``,
    ``t = scale``, vectorised.

    Parameters
    ----------
    scale : int
        Positive integer scale ``t``.
    size : int
        Number of draws.

    Returns
    -------
    draws : ndarray of object (Python int) of shape (size,)
        The draws (Python integers: no bound on their size).
    """
    t = _check_scale(scale)
    if t >= _WORD_BOUND:
        # Beyond 64-bit words: Algorithm 2 in Python integers, draw by draw.
        out = np.empty(size, dtype=object)
        out[:] = [_discrete_laplace_scalar(t) for _ in range(size)]
        return out
    out = np.empty(size, dtype=object)
    pending = np.arange(size)
    while pending.size:
        n = pending.size
        u = uniform_below(np.full(n, t, dtype=np.uint64))
        # Keep U with probability exp(-U / t): U is then the fractional part
        # (in steps of 1/t) of an exponential variable of mean t.
        keep = bernoulli_exp(u, np.uint64(t))
        u = u[keep]
        v = _geometric_exp_minus_one(u.size)
        # X = U + t V, exactly, in Python integers.
        x = u.astype(object) + v.astype(object) * t
        negative = uniform_below(np.full(u.size, 2, dtype=np.uint64)) == 1
        accept = ~(negative & (x == 0))  # -0 would double-count zero
        x[negative] = -x[negative]
        keep[np.flatnonzero(keep)[~accept]] = False  # kept and accepted
        out[pending[keep]] = x[accept]
        pending = pending[~keep]
    return out


def discrete_gaussian(scale, size):
    """Exact discrete Gaussian draws: ``P(z) ~ exp(-z**2 / (2 scale**2))``.

    Canonne, Kamath and Steinke (2020), Algorithm 3, with the discrete
    Laplace proposal of scale ``t = scale`` (the algorithm is exact for any
    positive ``t``; ``t = sigma`` accepts about 76% of proposals): accept
    ``Y`` with probability ``exp(-(|Y| - t)**2 / (2 t**2))``.

    Parameters
    ----------
    scale : int
        Positive integer ``sigma`` (in grid steps).
    size : int
        Number of draws.

    Returns
    -------
    draws : ndarray of object (Python int) of shape (size,)
        The draws.
    """
    t = _check_scale(scale)
    out = np.empty(size, dtype=object)
    pending = np.arange(size)
    den = 2 * t * t
    while pending.size:
        y = discrete_laplace(t, pending.size)
        # gamma = (|Y| - t)**2 / (2 t**2) = whole + rest / den, exactly.
        gap = np.abs(y) - t
        square = gap * gap
        whole, rest = square // den, square % den
        # With t <= _GAUSSIAN_T_BOUND, rest < den <= 2**57 fits in 64 bits;
        # the draws whose integer part does not (|Y| beyond about 2**31 t),
        # and every draw of a larger t, go to Python integers.
        small = whole < _WHOLE_BOUND
        if t > _GAUSSIAN_T_BOUND:
            small[:] = False
        accept = np.empty(y.shape[0], dtype=bool)
        accept[small] = _bernoulli_exp_split(
            whole[small].astype(np.uint64), rest[small].astype(np.uint64), den
        )
        for i in np.flatnonzero(~small):
            accept[i] = bernoulli_exp_scalar(int(square[i]), den)
        out[pending[accept]] = y[accept]
        pending = pending[~accept]
    return out


def _bernoulli_exp_split(whole, rest, den):
    # Bernoulli(exp(-(whole + rest / den))) with whole, rest uint64 arrays and
    # rest < den: the integer part as Bernoulli(exp(-1)) rounds, then
    # Algorithm 1 on the fraction (as in bernoulli_exp).
    out = np.ones(whole.shape[0], dtype=bool)
    done = np.zeros(whole.shape[0], dtype=np.uint64)
    active = np.flatnonzero(whole > 0)
    while active.size:
        success = _exp_minus_one_trials(active.size)
        out[active[~success]] = False
        active = active[success]
        done[active] += np.uint64(1)
        active = active[done[active] < whole[active]]
    passed = np.flatnonzero(out)
    den = np.broadcast_to(np.asarray(den, dtype=np.uint64), whole.shape)
    out[passed] = _bernoulli_exp_unit(rest[passed], den[passed])
    return out


def _check_scale(scale):
    if isinstance(scale, bool) or not isinstance(scale, (int, np.integer)):
        raise TypeError(f"scale must be an integer, got {type(scale).__name__}.")
    if scale < 1:
        raise ValueError(f"scale must be a positive integer, got {scale}.")
    return int(scale)


def discrete_laplace_pmf(z, scale):
    """Probability mass of the discrete Laplace law (for tests).

    ``P(z) = (1 - q) / (1 + q) q**|z|`` with ``q = exp(-1 / scale)``.
    """
    q = math.exp(-1.0 / scale)
    return (1.0 - q) / (1.0 + q) * q ** np.abs(np.asarray(z, dtype=float))


def discrete_gaussian_pmf(z, scale):
    """Probability mass of the discrete Gaussian law (for tests).

    Normalised by the sum over ``|z| <= 40 scale + 40`` (the rest is below
    ``exp(-800)``).
    """
    support = np.arange(-40 * scale - 40, 40 * scale + 41, dtype=float)
    total = np.exp(-(support**2) / (2.0 * scale**2)).sum()
    z = np.asarray(z, dtype=float)
    return np.exp(-(z**2) / (2.0 * scale**2)) / total


def _power_of_two_at_most(x):
    # The largest power of two <= x, for a positive finite float x.
    mantissa, exponent = math.frexp(x)
    return math.ldexp(1.0, exponent - 1)


def _ceil_sqrt(m):
    root = math.isqrt(m)
    return root if root * root == m else root + 1


@dataclass(frozen=True)
class GridNoise:
    """A discrete additive mechanism on a public grid, with its guarantee.

    Parameters
    ----------
    law : {"gaussian", "laplace"}
        Discrete Gaussian (zCDP) or discrete Laplace (pure DP).
    step : float
        The grid step ``g``, a power of two.
    scale : int
        The scale ``t`` of the integer noise, in grid steps (the discrete
        Gaussian's ``sigma``, the discrete Laplace's ``t``).
    sensitivity : fractions.Fraction
        Sensitivity of the rounded statistic ``round(v / g)``, in grid steps
        (L2 for the Gaussian, L1 for the Laplace).
    """

    law: str
    step: float
    scale: int
    sensitivity: Fraction

    @property
    def guarantee(self):
        """Exact rho (zCDP, discrete Gaussian) or epsilon (pure DP, Laplace).

        ``D**2 / (2 t**2)`` or ``D / t`` (see the module's docstring), a
        :class:`fractions.Fraction`.
        """
        if self.law == "gaussian":
            return self.sensitivity**2 / (2 * self.scale**2)
        return self.sensitivity / self.scale


def grid_noise(law, scale, sensitivity, n_coordinates):
    """The grid and integer scale that replace a continuous additive mechanism.

    The continuous mechanism adds ``N(0, scale**2)`` (``law="gaussian"``,
    ``rho0 = sensitivity**2 / (2 scale**2)``-zCDP) or ``Laplace(scale)``
    (``law="laplace"``, ``eps0 = sensitivity / scale``-DP) to ``m``
    coordinates. Its replacement rounds them to the grid ``g Z`` and adds
    integer noise of scale ``t`` grid steps, where

    * ``g`` is the largest power of two at most ``scale / 2**10`` and at most
      ``sensitivity / (2**10 s)``, with ``s = ceil(sqrt(m))`` (Gaussian) or
      ``s = m`` (Laplace);
    * rounding moves each coordinate by at most ``g / 2``, so the rounded
      statistic has sensitivity ``D = sensitivity / g + s`` grid steps (the
      triangle inequality);
    * ``t = ceil(D scale / sensitivity (1 + 2**-40))``, in exact rationals,
      so that ``D**2 / (2 t**2) <= rho0`` (Gaussian) and ``D / t <= eps0``
      (Laplace): the discrete mechanism is at least as private as the
      continuous one, with a relative margin of ``2**-40`` for the rounding
      of the float ``scale`` computed from the budget.

    The noise's standard deviation is at most ``(1 + 2**-9)`` times the
    continuous one.

    Parameters
    ----------
    law : {"gaussian", "laplace"}
        The continuous law replaced.
    scale : float
        Its scale (Gaussian standard deviation or Laplace ``b``), positive.
    sensitivity : float
        L2 (Gaussian) or L1 (Laplace) sensitivity of the statistic, positive.
    n_coordinates : int
        Number ``m`` of coordinates released together.

    Returns
    -------
    noise : GridNoise
        The grid, the integer scale and the sensitivity in grid steps.

    Examples
    --------
    >>> from dpcov.mechanisms._discrete import grid_noise
    >>> noise = grid_noise("gaussian", 2.0, 1.0, 4)
    >>> noise.step, noise.scale, float(noise.guarantee) <= 1.0 / 8.0
    (0.00048828125, 4101, True)
    """
    if law not in ("gaussian", "laplace"):
        raise ValueError(f"law must be 'gaussian' or 'laplace', got {law!r}.")
    if not (0 < scale < math.inf and 0 < sensitivity < math.inf):
        raise ValueError("scale and sensitivity must be positive and finite.")
    slack = _ceil_sqrt(n_coordinates) if law == "gaussian" else int(n_coordinates)
    step = min(
        _power_of_two_at_most(scale / GRID_REFINEMENT),
        _power_of_two_at_most(sensitivity / (GRID_REFINEMENT * slack)),
    )
    rounded = Fraction(sensitivity) / Fraction(step) + slack
    t = integer_scale(rounded, scale, sensitivity)
    return GridNoise(law=law, step=step, scale=t, sensitivity=rounded)


def integer_scale(grid_sensitivity, scale, sensitivity):
    """The integer noise scale that costs at most what the continuous one did.

    ``t = ceil(D scale / sensitivity (1 + 2**-40))`` (at least 1), in exact
    rationals: ``D / t <= sensitivity / scale``, so a mechanism whose privacy
    loss grows as ``D / t`` (discrete Laplace) or ``(D / t)**2`` (discrete
    Gaussian) spends at most what the continuous one of scale ``scale`` and
    sensitivity ``sensitivity`` spends.

    Parameters
    ----------
    grid_sensitivity : int or fractions.Fraction
        ``D``, the sensitivity in grid steps.
    scale : float
        The continuous mechanism's scale.
    sensitivity : float
        The continuous mechanism's sensitivity, positive.

    Returns
    -------
    t : int
        The integer scale.
    """
    ratio = Fraction(scale) / Fraction(sensitivity)
    # math.ceil of a Fraction is exact (Fraction.__ceil__, integer division).
    return max(1, math.ceil(Fraction(grid_sensitivity) * ratio * (1 + SCALE_MARGIN)))


def integer_noise(law, scale, size):
    """Exact integer noise: discrete Gaussian or discrete Laplace draws.

    Parameters
    ----------
    law : {"gaussian", "laplace"}
        The law.
    scale : int
        Its integer scale.
    size : int
        Number of draws.

    Returns
    -------
    draws : ndarray of object (Python int) of shape (size,)
        The draws.
    """
    sampler = discrete_gaussian if law == "gaussian" else discrete_laplace
    return sampler(scale, size)


def to_grid(value, step):
    """Round floats to the grid ``step Z``: the integers ``round(value / step)``.

    Parameters
    ----------
    value : ndarray of float
        Finite values.
    step : float
        A power of two.

    Returns
    -------
    ints : ndarray of object (Python int)
        ``round(value / step)`` (halves to even), exactly: dividing by a power
        of two is exact in floating point unless it overflows, and a finite
        float converts to a Python integer exactly.
    """
    with np.errstate(over="ignore"):
        scaled = np.rint(np.asarray(value, dtype=float).ravel() / step)
    if not np.all(np.isfinite(scaled)):
        raise ValueError(
            "A statistic is too large for the noise grid (it overflows a float "
            "once divided by the grid step); the noise scale is out of range."
        )
    if scaled.size and np.abs(scaled).max() < 2.0**62:
        return scaled.astype(np.int64).astype(object)
    return np.array([int(x) for x in scaled.tolist()] or [], dtype=object)


def from_grid(ints, step, shape):
    """Floats ``step * ints`` (post-processing of the exact integer release).

    Exact while ``|ints| < 2**53``; beyond, the conversion rounds to the
    nearest float, a deterministic function of the release.
    """
    out = np.array([float(x) for x in ints.tolist()], dtype=float) * step
    return out.reshape(shape)


def exponential_index(scores, coefficient):
    """Exact exponential mechanism over a finite set: ``P(j) ~ exp(c s_j)``.

    Rejection sampling: an index ``j`` uniform on the set (OS CSPRNG) is kept
    with probability ``exp(-c (max s - s_j))``, drawn exactly by
    :func:`bernoulli_exp_scalar` on the rationals of the float scores and of
    ``c`` (every finite float is a rational). The output law is exactly the
    mechanism's (Canonne, Kamath and Steinke 2020, Section 5.1, use the same
    Bernoulli for it; Ilvento, CCS 2020, samples it in base 2). The expected
    number of tries is at most the number of candidates. Its running time
    depends on the scores: timing channels are out of scope.

    Parameters
    ----------
    scores : array-like of float
        Finite scores.
    coefficient : float
        ``c = epsilon / (2 sensitivity)``, positive (``inf``: a uniform
        choice among the maximisers).

    Returns
    -------
    index : int
        The chosen index.
    """
    exact = [Fraction(float(s)) for s in np.asarray(scores, dtype=float).ravel()]
    top = max(exact)
    if math.isinf(coefficient):
        best = [j for j, s in enumerate(exact) if s == top]
        return best[_source.randbelow(len(best))]
    c = Fraction(coefficient)
    while True:
        j = _source.randbelow(len(exact))
        gamma = c * (top - exact[j])
        if bernoulli_exp_scalar(gamma.numerator, gamma.denominator):
            return j


def secure_permutation(n):
    """A uniformly random permutation of ``range(n)`` from the OS CSPRNG.

    :meth:`random.SystemRandom.shuffle` (Fisher-Yates on exact uniform
    integers from :func:`os.urandom`).
    """
    order = list(range(n))
    _source.SystemRandom().shuffle(order)
    return np.array(order, dtype=np.intp)


def secure_indices(n, size=None):
    """Uniform indices in ``range(n)`` (with replacement) from the OS CSPRNG."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}.")
    if size is None:
        return _source.randbelow(n)
    shape = (size,) if np.ndim(size) == 0 else tuple(size)
    count = int(np.prod(shape))
    draws = uniform_below(np.full(count, n, dtype=np.uint64))
    return draws.astype(np.intp).reshape(shape)


# --- the number of runs of a private selection ------------------------------


def _bernoulli(num, den):
    # Exact Bernoulli(num / den) for Python integers 0 <= num <= den, den >= 1:
    # randbelow(den) is uniform on {0, ..., den - 1}, and num of those den
    # values are below num.
    return _source.randbelow(den) < num


def _success_probability(gamma):
    # The float gamma as the exact rational it is (every finite float is one).
    if not 0 < gamma <= 1:
        raise ValueError(f"gamma must be in (0, 1], got {gamma!r}.")
    return Fraction(gamma)


def geometric_count(gamma):
    """Exact geometric draw on 1, 2, ...: ``P(K = k) = gamma (1 - gamma)**(k - 1)``.

    Start at ``K = 1`` and add one while a ``Bernoulli(1 - gamma)`` draw
    succeeds: ``K = k`` needs ``k - 1`` successes and then a failure, of
    probability ``(1 - gamma)**(k - 1) gamma``. ``gamma`` is used as the exact
    rational that the float is. It takes ``E[K] = 1 / gamma`` Bernoulli
    draws, one :func:`secrets.randbelow` each: one draw took about 16 us at
    a mean of 10 and 1.5 ms at a mean of 1000 (measured on one core of the
    development machine, Python 3.11, the OS CSPRNG).

    Parameters
    ----------
    gamma : float
        Success probability, in ``(0, 1]`` (``1``: always 1).

    Returns
    -------
    k : int
        The draw, at least 1.
    """
    g = _success_probability(gamma)
    if g == 1:
        return 1
    a, b = g.numerator, g.denominator  # gamma = a / b, 1 - gamma = (b - a) / b
    k = 1
    while _bernoulli(b - a, b):
        k += 1
    return k


def logarithmic_count(gamma):
    """Exact logarithmic draw: ``P(K = k) = (1 - gamma)**k / (k log(1 / gamma))``.

    The law of shape 0 of Papernot and Steinke (ICLR 2022), Definition 1,
    sampled exactly by rejection. With ``p = 1 - gamma``, the proposal is a
    chain: ``K' = 1``, and while a ``Bernoulli(p k / (k + 1))`` draw (``k``
    the current ``K'``) succeeds, ``K'`` grows by one. Then ``P(K' >= k) =
    prod_{j < k} p j / (j + 1) = p**(k - 1) / k`` and ``P(K' = k) =
    (p**(k - 1) / k) (1 - p k / (k + 1))``. Accepting ``K' = k`` with
    probability ``gamma / (1 - p k / (k + 1)) = gamma (k + 1) / (1 + k
    gamma)``, at most 1 because ``1 - p k / (k + 1) >= 1 - p = gamma``,
    leaves ``gamma p**(k - 1) / k``, proportional to ``p**k / k``: the
    logarithmic law. A rejected proposal starts over.

    Each proposal is accepted with probability ``gamma log(1 / gamma) / p``,
    so the expected number of proposals is the law's mean ``p / (gamma
    log(1 / gamma))``, each of expected length ``E[K'] = log(1 / gamma) /
    p``: ``mean (log(1 / gamma) / p + 1)`` Bernoulli draws in all (the
    chain's ``K'`` draws, its last failure included, and the acceptance
    step), about ``mean log(mean)``, on the rationals of the float ``gamma``
    in Python integers. One draw took about 70 us at a mean of 10 and 12 ms
    at a mean of 1000 (measured as for :func:`geometric_count`).

    Parameters
    ----------
    gamma : float
        The law's parameter, in ``(0, 1]`` (``1``: always 1).

    Returns
    -------
    k : int
        The draw, at least 1.
    """
    g = _success_probability(gamma)
    if g == 1:
        return 1
    a, b = g.numerator, g.denominator  # gamma = a / b, p = (b - a) / b
    while True:
        k = 1
        # Go on with probability p k / (k + 1) = (b - a) k / (b (k + 1)).
        while _bernoulli((b - a) * k, b * (k + 1)):
            k += 1
        # Accept with probability gamma (k + 1) / (1 + k gamma), which is
        # a (k + 1) / (b + k a) in integers.
        if _bernoulli(a * (k + 1), b + k * a):
            return k


def _poisson_small(num, den):
    # Exact Poisson(r), r = num / den <= 1/2, by rejection (see poisson_count).
    while True:
        k = 0
        # Go on with probability r / (k + 1) = num / (den (k + 1)).
        while _bernoulli(num, den * (k + 1)):
            k += 1
        # Accept with probability (1 - r) (k + 1) / (k + 1 - r), which is
        # (den - num) (k + 1) / (den (k + 1) - num) in integers.
        if _bernoulli((den - num) * (k + 1), den * (k + 1) - num):
            return k


def poisson_count(mean):
    """Exact Poisson draw: ``P(K = k) = exp(-mean) mean**k / k!``.

    ``mu``, the float ``mean`` as the exact rational it is, is split into
    ``n = ceil(2 mu)`` equal parts ``r = mu / n <= 1/2``, and ``K`` is the sum
    of ``n`` independent ``Poisson(r)`` draws (a sum of independent Poisson
    variables is Poisson, of the summed mean). Each ``Poisson(r)`` is drawn
    by rejection: the proposal chain ``K' = 0``, and while a ``Bernoulli(r /
    (k + 1))`` draw (``k`` the current ``K'``) succeeds, ``K'`` grows by one,
    so that ``P(K' >= k) = r**k / k!`` and ``P(K' = k) = (r**k / k!) (1 - r
    / (k + 1))``; accepting ``K' = k`` with probability ``(1 - r) / (1 - r /
    (k + 1)) = (1 - r) (k + 1) / (k + 1 - r)``, at most 1 because ``r / (k +
    1) <= r``, leaves ``(1 - r) r**k / k!``, proportional to the Poisson law.
    A proposal is accepted with probability ``(1 - r) exp(r) >= exp(1/2) / 2
    > 0.82``, so the cost is linear in ``mu`` (about ``6.4 mu`` Bernoulli
    draws): one draw took about 100 us at a mean of 10 and 9 ms at a mean of
    1000 (measured as for :func:`geometric_count`).

    Parameters
    ----------
    mean : float
        The mean, finite and non-negative (``0``: always 0).

    Returns
    -------
    k : int
        The draw, at least 0.
    """
    if not 0 <= mean < math.inf:
        raise ValueError(f"mean must be finite and non-negative, got {mean!r}.")
    mu = Fraction(mean)
    n = math.ceil(2 * mu)  # exact: Fraction.__ceil__
    if n == 0:
        return 0
    r = mu / n
    return sum(_poisson_small(r.numerator, r.denominator) for _ in range(n))
