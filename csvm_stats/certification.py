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
* :func:`umbrella_intercept` - guarantee mode: keep the direction w chosen by
  the CSVM and set the intercept from the held-out scores of one class by the
  order-statistic rule (Neyman-Pearson umbrella algorithm, Tong, Feng and Li
  2018), so that :math:`P(\text{true rate} \ge p_0) \ge 1 - \alpha` exactly.
  The other class's held-out points are independent of that choice, so their
  Clopper-Pearson bound remains valid and measures the cost.
"""

from __future__ import annotations

import math

from dataclasses import dataclass

import numpy as np

from csvm_stats.bounds import binomial_min_n, clopper_pearson_lower, order_statistic_rank
from csvm_stats.exceptions import DataError
from csvm_stats.problem import RATE_NAMES as RATE_LABELS

RATE_UNITS = {"tpr": "positives", "tnr": "negatives", "acc": "points"}
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


@dataclass(frozen=True)
class UmbrellaIntercept:
    """An intercept set on held-out scores by the order-statistic rule.

    ``rank`` r and ``n`` say that the threshold is the r-th smallest of the n
    held-out class scores; the guarantee is
    ``P(true rate >= target) >= 1 - alpha`` with ``P(Bin(n, 1 - target) < r) <= alpha``.
    """

    rate: str
    target: float
    alpha: float
    n: int
    rank: int
    intercept: float


def umbrella_intercept(scores: np.ndarray, y: np.ndarray, rate: str, target: float, alpha: float) -> UmbrellaIntercept:
    """Intercept b making ``P(rate of sign(scores + b) >= target) >= 1 - alpha``.

    ``scores`` are the held-out values of :math:`w'\\phi(x)` (no intercept).
    TPR: with :math:`s_{(r)}` the r-th smallest positive score, ``b = -s_(r)``
    classifies positive every score :math:`\\ge s_{(r)}`. TNR: with
    :math:`u = -s` on the negatives and :math:`u_{(r)}` its r-th smallest, b is
    the largest float below :math:`u_{(r)}`, so every :math:`u \\ge u_{(r)}` is
    classified negative. Counting ties at the threshold as correct keeps the
    guarantee valid for discrete scores as well.
    """
    if rate not in _RATE_CLASS:
        raise DataError(
            f"guarantee mode sets one intercept for one class, so it applies to 'tpr' or 'tnr', not {rate!r}."
        )
    mask = rate_points(y, rate)
    n = int(mask.sum())
    rank = order_statistic_rank(n, target, alpha)
    if rank is None:
        needed = binomial_min_n(target, alpha)
        raise DataError(
            f"guarantee mode for the {RATE_LABELS[rate]} >= {target:g} at alpha={alpha:g} needs at least "
            f"{needed} held-out {RATE_UNITS[rate]}, but the held-out sample has {n}. Enlarge the held-out "
            "share (fractions=) or the data."
        )
    class_scores = scores[mask] if rate == "tpr" else -scores[mask]
    threshold = float(np.sort(class_scores)[rank - 1])
    intercept = -threshold if rate == "tpr" else float(np.nextafter(threshold, -np.inf))
    return UmbrellaIntercept(rate, target, alpha, n, rank, intercept)


def floor2(value: float) -> str:
    """``value`` rounded DOWN to two decimals: a lower bound printed as 0.95 must not be 0.948."""
    return f"{math.floor(value * 100 + 1e-9) / 100:.2f}"


def ordinal(k: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st, ..."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def statement(rate: str, lower: float, correct: int, n: int, alpha: float, *, joint_of: int = 1) -> str:
    """One plain sentence for a Clopper-Pearson held-out bound (the bound is rounded down)."""
    level = 1 - alpha
    how = "exact binomial bound" if joint_of == 1 else f"exact binomial bound at level {1 - alpha / joint_of:.4g}, Bonferroni over {joint_of} statements"
    return (
        f"With {level:.0%} confidence the {RATE_LABELS[rate]} of this classifier is at least {floor2(lower)} "
        f"(held-out: {correct} of {n} {RATE_UNITS[rate]} correct; {how})."
    )


def guarantee_statement(g: UmbrellaIntercept) -> str:
    """The sentence for an intercept set by the order-statistic rule."""
    return (
        f"With {1 - g.alpha:.0%} confidence the {RATE_LABELS[g.rate]} of this classifier is at least "
        f"{floor2(g.target)} (intercept set on {g.n} held-out {RATE_UNITS[g.rate]}: threshold at the "
        f"{ordinal(g.rank)} smallest score; order-statistic rule, Tong, Feng and Li 2018)."
    )


NO_HOLDOUT_STATEMENT = (
    "No valid confidence statement can be made: the held-out sample is empty, and the anchor-sample rates are "
    "optimistic because the hyperplane was chosen to satisfy them (the margin assumes a classifier that does not "
    "depend on the anchor sample). Refit with a held-out share (fractions=) to obtain one."
)
