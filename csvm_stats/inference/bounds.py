r"""Confidence margins, exact binomial bounds and order-statistic thresholds.

All functions are about one rate p (TPR, TNR or accuracy) estimated from n
independent 0/1 indicators.

* :func:`hoeffding_target` - the paper's margin: to claim p > p0 at level
  alpha require :math:`\hat p \ge p_0^* = p_0 + \sqrt{\log(1/\alpha)/(2n)}`.
* :func:`binomial_count` - the exact margin: the smallest count k with
  :math:`P(\mathrm{Bin}(n, p_0) \ge k) \le \alpha`.
* :func:`clopper_pearson_lower` - the exact one-sided lower confidence bound
  :math:`\mathrm{Beta}^{-1}(\alpha; k, n - k + 1)`;
  :func:`clopper_pearson_interval` - the exact two-sided interval
  :math:`[\mathrm{Beta}^{-1}(\alpha/2; k, n-k+1),\ \mathrm{Beta}^{-1}(1-\alpha/2; k+1, n-k)]`.
* :func:`order_statistic_rank` - the Neyman-Pearson umbrella rule (Tong, Feng
  and Li 2018): with continuous scores, classifying a point as "correct" when
  its score is at least the r-th smallest of n held-out scores gives an error
  rate :math:`F(s_{(r)}) \sim \mathrm{Beta}(r, n - r + 1)`, so
  :math:`P(\text{rate} < p_0) = P(\mathrm{Bin}(n, 1 - p_0) < r)`; the largest r
  with that probability at most alpha is returned.

The margins are valid only for a classifier that does not depend on the n
points; see :mod:`csvm_stats.models.results` for how the library reports this.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from csvm_stats.exceptions import DataError, warn_at_caller

BoundName = Literal["hoeffding", "binomial", "none"]
BOUNDS: tuple[str, ...] = ("hoeffding", "binomial", "none")


class CappedTargetWarning(UserWarning):
    """An adjusted target exceeded 1 and was capped at 1 (all points required).

    Examples
    --------
    >>> import warnings
    >>> from csvm_stats.inference.bounds import CappedTargetWarning, adjust_target
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = adjust_target(0.9, 20, 0.05, "hoeffding", what="TPR")
    >>> any(issubclass(w.category, CappedTargetWarning) for w in caught)
    True
    """


def check_probability(value: float, name: str) -> float:
    """Return ``value`` as float if it is a number strictly between 0 and 1, else raise (text is never converted)."""
    if isinstance(value, (str, bytes, bool)):
        raise DataError(f"{name} must be a number strictly between 0 and 1, got {value!r}.")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise DataError(f"{name} must be a number strictly between 0 and 1, got {value!r}.") from None
    if not (0.0 < v < 1.0) or math.isnan(v):
        raise DataError(f"{name} must lie strictly between 0 and 1, got {value!r}.")
    return v


def _check_count(k: int, n: int) -> None:
    """A count of successes must lie in 0..n (a bound for k > n or k < 0 means nothing)."""
    if not 0 <= k <= max(n, 0):
        raise DataError(f"a count of successes must lie between 0 and the number of trials n = {n}, got k = {k}.")


def hoeffding_target(p0: float, n: int, alpha: float) -> float:
    """The paper's adjusted target ``p0 + sqrt(log(1/alpha) / (2 n))`` (not capped)."""
    return p0 + math.sqrt(math.log(1.0 / alpha) / (2.0 * n))


def hoeffding_min_n(p0: float, alpha: float) -> int:
    """Smallest n for which the Hoeffding target stays at or below 1.

    Parameters
    ----------
    p0 : float
        The required rate, in (0, 1).
    alpha : float
        Level.

    Returns
    -------
    int
        The smallest number of anchor points of the class.

    Examples
    --------
    >>> from csvm_stats.inference.bounds import hoeffding_min_n
    >>> hoeffding_min_n(0.9, 0.05)
    150
    """
    p0, alpha = check_probability(p0, "p0"), check_probability(alpha, "alpha")
    return math.ceil(math.log(1.0 / alpha) / (2.0 * (1.0 - p0) ** 2))


def binomial_count(p0: float, n: int, alpha: float) -> int | None:
    """Smallest k with ``P(Bin(n, p0) >= k) <= alpha``, or ``None`` if even k = n fails."""
    ks = np.arange(n + 1)
    tail = stats.binom.sf(ks - 1, n, p0)  # P(X >= k)
    ok = np.nonzero(tail <= alpha)[0]
    return int(ok[0]) if ok.size else None


def binomial_min_n(p0: float, alpha: float) -> int:
    """Smallest n with ``p0**n <= alpha``: below it no count certifies p > p0.

    Parameters
    ----------
    p0 : float
        The rate to certify, in (0, 1).
    alpha : float
        Level.

    Returns
    -------
    int
        The smallest number of class points.

    Examples
    --------
    >>> from csvm_stats.inference.bounds import binomial_min_n
    >>> binomial_min_n(0.9, 0.05)
    29
    """
    p0, alpha = check_probability(p0, "p0"), check_probability(alpha, "alpha")
    return math.ceil(math.log(alpha) / math.log(p0))


@dataclass(frozen=True)
class AdjustedTarget:
    """A required rate turned into a required count on n anchor points.

    ``target`` is the user's p0, ``adjusted`` the rate the count represents
    (``count / n`` rounded up from the margin), ``capped`` says whether the
    margin pushed the requirement above 1 and it was capped (all n points).
    """

    target: float
    adjusted: float
    count: int
    n: int
    bound: str
    alpha: float
    capped: bool
    min_n: int | None


def adjust_target(p0: float, n: int, alpha: float, bound: str = "hoeffding", *, what: str = "rate") -> AdjustedTarget:
    """Required count on ``n`` anchor points for the rate ``what`` to certify ``p0``.

    ``bound="hoeffding"`` uses :func:`hoeffding_target`, ``"binomial"`` uses
    :func:`binomial_count` and ``"none"`` requires ``ceil(p0 n)``. A requirement
    above n is capped at n (as the paper does) with a
    :class:`CappedTargetWarning` naming the sample size that would be needed.
    """
    p0 = check_probability(p0, f"the required {what}")
    alpha = check_probability(alpha, "alpha")
    if bound not in BOUNDS:
        raise DataError(f"bound must be one of {BOUNDS}, got {bound!r}.")
    if n < 1:
        raise DataError(f"the anchor sample has no points for the {what} constraint; enlarge the anchor sample.")
    min_n: int | None = None
    if bound == "hoeffding":
        p_star = hoeffding_target(p0, n, alpha)
        count = math.ceil(p_star * n - 1e-9)
        min_n = hoeffding_min_n(p0, alpha)
    elif bound == "binomial":
        k = binomial_count(p0, n, alpha)
        count = n + 1 if k is None else k
        min_n = binomial_min_n(p0, alpha)
    else:
        count = math.ceil(p0 * n - 1e-9)
    capped = count > n
    if capped:
        warn_at_caller(
            f"The {what} target {p0:g} with the {bound} margin at alpha={alpha:g} needs more than all "
            f"{n} anchor points; it is capped at 1 (every anchor point must be classified correctly), "
            f"and no statement at level {alpha:g} follows from it. The margin stays below 1 from "
            f"n = {min_n} anchor points on.",
            CappedTargetWarning,
        )
        count = n
    return AdjustedTarget(p0, count / n, count, n, bound, alpha, capped, min_n)


def clopper_pearson_lower(k: int, n: int, alpha: float) -> float:
    """Exact one-sided (1 - alpha) lower confidence bound for p from k successes in n.

    Parameters
    ----------
    k : int
        Successes.
    n : int
        Trials.
    alpha : float
        One minus the confidence level.

    Returns
    -------
    float
        The bound (0 when k = 0).

    Examples
    --------
    >>> from csvm_stats.inference.bounds import clopper_pearson_lower
    >>> round(clopper_pearson_lower(53, 53, 0.05), 4)
    0.945
    """
    _check_count(k, n)
    if n <= 0:
        return float("nan")
    if k <= 0:
        return 0.0
    return float(stats.beta.ppf(alpha, k, n - k + 1))


def clopper_pearson_interval(k: int, n: int, alpha: float) -> tuple[float, float]:
    """Exact two-sided (1 - alpha) confidence interval for p from k successes in n (NaN for n = 0).

    Parameters
    ----------
    k : int
        Successes.
    n : int
        Trials.
    alpha : float
        One minus the confidence level.

    Returns
    -------
    tuple of float
        The lower and upper bound.

    Examples
    --------
    >>> from csvm_stats.inference.bounds import clopper_pearson_interval
    >>> [round(b, 4) for b in clopper_pearson_interval(85, 89, 0.05)]
    [0.8889, 0.9876]
    """
    _check_count(k, n)
    if n <= 0:
        return float("nan"), float("nan")
    lower = 0.0 if k <= 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    upper = 1.0 if k >= n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lower, upper


def order_statistic_rank(n: int, p0: float, alpha: float) -> int | None:
    """Largest rank r with ``P(Bin(n, 1 - p0) < r) <= alpha`` (umbrella rule), or ``None``.

    Keeping as "correct" every point whose score is at least the r-th smallest
    of n held-out scores of the class gives ``P(true rate < p0) <= alpha``.
    ``None`` means n is too small (``p0**n > alpha``).
    """
    if n < 1:
        return None
    r = np.arange(1, n + 1)
    prob_violation = stats.binom.cdf(r - 1, n, 1.0 - p0)
    ok = np.nonzero(prob_violation <= alpha)[0]
    return int(r[ok[-1]]) if ok.size else None
