r"""Confidence statements about a fitted classifier's rates that actually hold.

A rate (TPR, TNR or accuracy) is the probability that a new point of the
relevant class (positives, negatives, all points) is classified correctly.
Its correctness indicators on n points are i.i.d. Bernoulli(p) **only if the
classifier does not depend on those points**. The CSVM chooses (w, b) with the
anchor sample J, so the paper's anchor-sample statement (Hoeffding margin on
J) is optimistic; this module therefore certifies on the held-out sample H,
which the optimisation never saw:

* :func:`heldout_bound` - k of n held-out points correct gives the exact
  one-sided Clopper-Pearson bound
  :math:`P(p \ge \mathrm{Beta}^{-1}(\alpha; k, n-k+1)) \ge 1 - \alpha`.
  For m statements at once the Bonferroni version uses :math:`\alpha/m` each.
  TPR and TNR are class-conditional, so the stratified split does not affect
  them; the held-out accuracy is measured at the data's class mix (the split
  keeps it), so its bound is about a population with that prevalence.
* :func:`two_sided_bounds` - the exact two-sided Clopper-Pearson interval
  for a rate that was not constrained; :func:`balanced_bounds` - the balanced
  accuracy :math:`(\mathrm{TPR} + \mathrm{TNR})/2` lies between the means of
  the TPR and TNR intervals at level :math:`1 - \alpha/2` each (Bonferroni).
* :func:`umbrella_intercept` - guarantee mode: keep the direction w chosen by
  the CSVM and set the intercept from the held-out scores of one class by the
  order-statistic rule (Neyman-Pearson umbrella algorithm, Tong, Feng and Li
  2018), so that :math:`P(\text{true rate} \ge p_0) \ge 1 - \alpha` exactly.
  The other class's held-out points are independent of that choice, so their
  Clopper-Pearson bound remains valid and measures the cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

import numpy as np

from csvm_stats.inference.bounds import binomial_min_n, clopper_pearson_interval, clopper_pearson_lower, order_statistic_rank
from csvm_stats.exceptions import DataError
from csvm_stats.optimization.problem import RATE_NAMES
from csvm_stats.preprocessing.wording import option

#: Every rate reported: the three that can be constrained and the balanced accuracy (TPR + TNR) / 2.
ALL_RATES: tuple[str, ...] = (*RATE_NAMES, "bacc")
RATE_LABELS = {**RATE_NAMES, "bacc": "balanced accuracy"}
RATE_UNITS = {"tpr": "positives", "tnr": "negatives", "acc": "points", "bacc": "points"}
_RATE_CLASS = {"tpr": 1.0, "tnr": -1.0}


def rate_points(y: np.ndarray, rate: str) -> np.ndarray:
    """Boolean mask of the points a rate is measured on (positives, negatives or all)."""
    if rate == "acc":
        return np.ones(y.shape, dtype=bool)
    return y == _RATE_CLASS[rate]


def count_correct(y: np.ndarray, decision: np.ndarray, rate: str) -> tuple[int, int]:
    """(n, correct) for ``rate``; a point is classified positive when its decision value is >= 0."""
    mask = rate_points(y, rate)
    predicted = np.where(decision[mask] >= 0, 1.0, -1.0)
    return int(mask.sum()), int(np.sum(predicted == y[mask]))


@dataclass(frozen=True)
class HeldoutBound:
    """Clopper-Pearson lower bounds from k of n held-out points, separate and joint."""

    n: int
    correct: int
    lower: float
    joint_lower: float

    @property
    def rate(self) -> float:
        return self.correct / self.n if self.n else float("nan")


def heldout_bound(correct: int, n: int, alpha: float, n_statements: int) -> HeldoutBound:
    """Separate (level alpha) and Bonferroni-joint (alpha / n_statements) lower bounds."""
    return HeldoutBound(
        n,
        correct,
        clopper_pearson_lower(correct, n, alpha),
        clopper_pearson_lower(correct, n, alpha / max(n_statements, 1)),
    )


#: The ``method`` column of the rate table.
ONE_SIDED = "clopper-pearson"
TWO_SIDED = "clopper-pearson 2-sided"
BALANCED = "mean of TPR, TNR"
NO_HOLDOUT = "none (no held-out points)"
NOT_INDEPENDENT = "none (H set the intercept)"


@dataclass(frozen=True)
class RateBounds:
    """What is claimed about one rate: ``lower`` (and ``upper`` for an interval) at level 1 - alpha,
    ``joint_lower`` for the Bonferroni-joint statement (NaN when the rate is not in it), ``method``."""

    lower: float
    upper: float
    joint_lower: float
    method: str


NO_BOUNDS = RateBounds(float("nan"), float("nan"), float("nan"), NO_HOLDOUT)


def one_sided_bounds(correct: int, n: int, alpha: float, n_statements: int) -> RateBounds:
    """One-sided lower bound and its Bonferroni-joint version (``n_statements`` rates at once)."""
    if n == 0:
        return NO_BOUNDS
    bound = heldout_bound(correct, n, alpha, n_statements)
    return RateBounds(bound.lower, float("nan"), bound.joint_lower, ONE_SIDED)


def two_sided_bounds(correct: int, n: int, alpha: float) -> RateBounds:
    """The exact two-sided (1 - alpha) Clopper-Pearson interval."""
    if n == 0:
        return NO_BOUNDS
    lower, upper = clopper_pearson_interval(correct, n, alpha)
    return RateBounds(lower, upper, float("nan"), TWO_SIDED)


def balanced_bounds(tpr: tuple[int, int], tnr: tuple[int, int], alpha: float) -> RateBounds:
    """Balanced accuracy from (n, correct) of the positives and the negatives.

    Both two-sided intervals at level 1 - alpha/2 hold together with
    probability at least 1 - alpha, and then (TPR + TNR) / 2 lies between the
    means of their ends.
    """
    (n_pos, k_pos), (n_neg, k_neg) = tpr, tnr
    if n_pos == 0 or n_neg == 0:
        return NO_BOUNDS
    lo_pos, up_pos = clopper_pearson_interval(k_pos, n_pos, alpha / 2)
    lo_neg, up_neg = clopper_pearson_interval(k_neg, n_neg, alpha / 2)
    return RateBounds((lo_pos + lo_neg) / 2, (up_pos + up_neg) / 2, float("nan"), BALANCED)


def mean_recall_bounds(counts: list[tuple[int, int]], alpha: float) -> RateBounds:
    """Balanced accuracy of K classes (the mean of their recalls) from each class's (n, correct).

    As :func:`balanced_bounds` for two classes: the K exact two-sided
    intervals at level 1 - alpha/K each hold together with probability at
    least 1 - alpha (Bonferroni), and then the mean recall lies between the
    means of their ends. NaN when a class has no points.
    """
    if not counts or any(n == 0 for n, _ in counts):
        return NO_BOUNDS
    K = len(counts)
    ends = np.array([clopper_pearson_interval(k, n, alpha / K) for n, k in counts])
    return RateBounds(float(ends[:, 0].mean()), float(ends[:, 1].mean()), float("nan"), f"mean of {K} recalls")


#: The ``method`` of a rate whose bound is the guarantee-mode target.
ORDER_STATISTIC = "order statistic"

#: Scores within this share of their own floating-point scale of the threshold count as tied with it.
TIE_RTOL = 1e-9


def linear_scores(phi: np.ndarray, coef: np.ndarray) -> tuple[np.ndarray, float]:
    r"""Scores :math:`s_i = w^\top\phi(x_i)` (no intercept) and the tie tolerance for them.

    The tolerance is ``TIE_RTOL`` times :math:`\max_i \sum_k |w_k \phi_k(x_i)|`,
    a bound on the size of the rounding error of any of the dot products (which
    depends on how they are summed); two scores closer than it are treated as
    equal, so a point equal to the threshold point is classified like it even
    when its score is computed again, in another order.
    """
    scores = phi @ coef
    scale = float(np.max(np.abs(phi) @ np.abs(coef))) if scores.size else 0.0
    return scores, TIE_RTOL * scale


@dataclass(frozen=True)
class UmbrellaIntercept:
    """An intercept set on held-out scores by the order-statistic rule.

    ``rank`` r and ``n`` say that the threshold is the r-th smallest of the n
    held-out class scores (for TNR, of the negated scores); the guarantee is
    ``P(true rate >= target) >= 1 - alpha`` with ``P(Bin(n, 1 - target) < r) <= alpha``.
    ``threshold`` is that score and ``tolerance`` the tie tolerance: every
    class score within ``tolerance`` of the threshold or beyond it is classified
    correct, so at least ``guaranteed_correct = n - r + 1`` held-out points are.
    """

    rate: str
    target: float
    alpha: float
    n: int
    rank: int
    intercept: float
    threshold: float
    tolerance: float

    @property
    def guaranteed_correct(self) -> int:
        """Held-out points of the class classified correct by construction: n - r + 1."""
        return self.n - self.rank + 1


def guarantee_rank(n: int, rate: str, target: float, alpha: float) -> int:
    """The order-statistic rank r for n held-out points of the class, or a :class:`DataError`.

    Called before solving, so that a held-out sample too small for guarantee
    mode is reported at once, not after the optimisation.
    """
    if rate not in _RATE_CLASS:
        raise DataError(
            f"guarantee mode sets one intercept for one class, so it applies to 'tpr' or 'tnr', not {rate!r}."
        )
    rank = order_statistic_rank(n, target, alpha)
    if rank is None:
        needed = binomial_min_n(target, alpha)
        raise DataError(
            f"guarantee mode for the {RATE_LABELS[rate]} >= {target:g} at alpha={alpha:g} needs at least "
            f"{needed} held-out {RATE_UNITS[rate]}, but the held-out sample has {n}. Enlarge the held-out "
            f"share ({option('fractions')}) or the data."
        )
    return rank


def umbrella_intercept(
    scores: np.ndarray, y: np.ndarray, rate: str, target: float, alpha: float, *, tolerance: float = 0.0
) -> UmbrellaIntercept:
    r"""Intercept b making ``P(rate of sign(scores + b) >= target) >= 1 - alpha``: guarantee mode's rule.

    The order-statistic (umbrella) rule: the threshold is the r-th smallest
    held-out score of the class, r the largest rank with
    ``P(Bin(n, 1 - target) < r) <= alpha`` (``guarantee_rank``), so the
    guarantee holds exactly for any distribution of the scores
    (:doc:`/user_guide/guarantee`). ``scores`` are the held-out values of :math:`w^\top\phi(x)` computed
    directly (never as a decision value minus an intercept, which can move a
    score by a rounding error), ``tolerance`` their tie tolerance
    (``linear_scores`` in this module). TPR: with :math:`t = s_{(r)}` the r-th smallest
    positive score, the rule classifies positive exactly the scores
    :math:`s \ge t - \text{tolerance}`: ``b = -(t - tolerance)``, and
    ``s + b >= 0`` holds exactly when ``s >= t - tolerance`` because a
    floating-point sum is zero only for equal magnitudes. TNR: with
    :math:`t = -u_{(r)}`, :math:`u = -s` on the negatives, the rule classifies
    negative exactly the scores :math:`s \le t + \text{tolerance}`: ``-b`` is
    the next float above ``t + tolerance``. Points tied with the threshold are
    thus counted as correct, which keeps the guarantee valid for discrete
    scores (ties only raise the guaranteed rate).

    Parameters
    ----------
    scores : ndarray of shape (n_samples,)
        Scores of the held-out points, :math:`w^\top\phi(x)` without the intercept.
    y : ndarray of shape (n_samples,)
        Their labels, +1 (positive) or -1 (negative).
    rate : {"tpr", "tnr"}
        The rate to guarantee: sensitivity (on the positives) or specificity (on the negatives).
    target : float
        The guaranteed rate :math:`p_0`, in (0, 1).
    alpha : float
        One minus the confidence level of the guarantee.
    tolerance : float, default 0.0
        Tie tolerance of the scores (``linear_scores`` in this module).

    Returns
    -------
    UmbrellaIntercept
        ``intercept`` (b), ``threshold``, ``rank`` r, ``n`` (held-out points of
        the class) and ``guaranteed_correct`` (n - r + 1).

    Raises
    ------
    csvm_stats.exceptions.DataError
        If ``rate`` is not "tpr" or "tnr", or the held-out sample has too few
        points of the class for the guarantee (fewer than
        ``binomial_min_n(target, alpha)``).

    Examples
    --------
    >>> import numpy as np
    >>> from csvm_stats.inference.certification import umbrella_intercept
    >>> scores = np.arange(-50, 150) / 100
    >>> y = np.where(np.arange(200) >= 40, 1, -1)
    >>> u = umbrella_intercept(scores, y, "tpr", target=0.9, alpha=0.05)
    >>> u.n, u.rank, u.threshold, u.guaranteed_correct
    (160, 10, -0.01, 151)
    >>> int(np.sum(scores[y == 1] + u.intercept >= 0))
    151
    """
    mask = rate_points(y, rate) if rate in _RATE_CLASS else np.zeros(y.shape, dtype=bool)
    n = int(mask.sum())
    rank = guarantee_rank(n, rate, target, alpha)
    if rate == "tpr":
        threshold = float(np.sort(scores[mask])[rank - 1])
        intercept = -(threshold - tolerance)
    else:
        threshold = -float(np.sort(-scores[mask])[rank - 1])
        intercept = -float(np.nextafter(threshold + tolerance, np.inf))
    return UmbrellaIntercept(rate, target, alpha, n, rank, intercept, threshold, float(tolerance))


def round_down(value: float, digits: int) -> str:
    """``value`` rounded DOWN to ``digits`` decimals in exact decimal arithmetic (a lower bound never rises).

    The binary value itself is rounded, so a bound stored as 0.9499999... prints as 0.94.
    """
    return str(Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_FLOOR))


def round_up(value: float, digits: int) -> str:
    """``value`` rounded UP to ``digits`` decimals in exact decimal arithmetic (an upper bound never falls)."""
    return str(Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_CEILING))


def floor2(value: float) -> str:
    """``value`` rounded DOWN to two decimals: a lower bound printed as 0.95 must not be 0.948."""
    return round_down(value, 2)


#: Confidence levels are printed with all their decimals up to this many (in percent), else rounded down.
LEVEL_DIGITS = 4


def level_percent(alpha: float, statements: int = 1) -> str:
    """The confidence level ``1 - alpha / statements`` in percent, with the decimals it has.

    ``alpha`` is read as the decimal it was written as (its shortest repr), so
    alpha = 0.025 gives "97.5%", 0.001 "99.9%", 0.05 / 3 "98.3333%" (rounded
    down after four decimals, never up).
    """
    level = (1 - Decimal(repr(float(alpha))) / statements) * 100
    if level.as_tuple().exponent < -LEVEL_DIGITS:  # type: ignore[operator]
        level = level.quantize(Decimal(1).scaleb(-LEVEL_DIGITS), rounding=ROUND_FLOOR)
    text = format(level.normalize(), "f")
    return f"{text}%"


def ordinal(k: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st, ..."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def statement(rate: str, lower: float, correct: int, n: int, alpha: float) -> str:
    """One plain sentence for a Clopper-Pearson held-out bound (the bound is rounded down)."""
    return (
        f"With {level_percent(alpha)} confidence the {RATE_LABELS[rate]} of this classifier is at least "
        f"{floor2(lower)} (held-out: {correct} of {n} {RATE_UNITS[rate]} correct; exact binomial bound)."
    )


def interval_statement(rate: str, bounds: RateBounds, correct: int | None, n: int, alpha: float) -> str:
    """One sentence for a two-sided interval (lower end rounded down, upper end up)."""
    if bounds.method == BALANCED:
        how = f"the mean of the exact two-sided TPR and TNR intervals at {level_percent(alpha / 2)} each"
    else:
        how = f"held-out: {correct} of {n} {RATE_UNITS[rate]} correct; exact two-sided binomial interval"
    return (
        f"With {level_percent(alpha)} confidence the {RATE_LABELS[rate]} of this classifier lies between "
        f"{floor2(bounds.lower)} and {round_up(bounds.upper, 2)} ({how})."
    )


NOT_INDEPENDENT_STATEMENT = (
    "No interval: in guarantee mode the held-out points of the guaranteed class set the intercept, so the "
    "held-out sample is not independent of the classifier for this rate; the guarantee and the other "
    "class's interval are the valid statements."
)


def guarantee_statement(g: UmbrellaIntercept, correct: int) -> str:
    """The sentence for an intercept set by the order-statistic rule; ``correct`` the held-out count.

    The target is printed as given (its shortest repr): the guarantee is about
    that value itself, not a bound computed from data.
    """
    return (
        f"With {level_percent(g.alpha)} confidence the {RATE_LABELS[g.rate]} of this classifier is at least "
        f"{float(g.target)!r} (intercept set on {g.n} held-out {RATE_UNITS[g.rate]}: threshold at the "
        f"{ordinal(g.rank)} smallest score, ties counted as correct; {correct} of {g.n} classified correct, "
        f"at least {g.guaranteed_correct} by construction; order-statistic rule, Tong, Feng and Li 2018)."
    )


NO_HOLDOUT_STATEMENT = (
    "No valid confidence statement can be made: the held-out sample is empty, and the anchor-sample rates are "
    "optimistic because the hyperplane was chosen to satisfy them (the margin assumes a classifier that does not "
    "depend on the anchor sample). Refit with a held-out share (fractions=) to obtain one."
)
