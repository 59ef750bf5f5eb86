r"""Statements about per-class recalls of the argmax rule that actually hold.

The recall of class k is :math:`R_k = P(\hat y(X) = k \mid Y = k)`. The
held-out sample H is never seen by the optimisation, and its points of
class k are i.i.d. draws from class k. Moreover, given the labels and the fit
(which uses I and J only), the held-out points of *different* classes are
independent: the split is stratified by class, so which rows of each class go
to H depends on the labels and the seed only, and the rows are independent.
Events that each depend on one class's held-out points are therefore
independent, and m of them that each fail with probability at most
:math:`\alpha_m = 1 - (1 - \alpha)^{1/m}` (Sidak) all hold together with
probability at least :math:`(1 - \alpha_m)^m = 1 - \alpha` - slightly more
room per statement than Bonferroni's :math:`\alpha/m` (:func:`sidak`).

* :func:`recall_bounds` - k of n held-out points of the class classified
  correctly give the exact one-sided Clopper-Pearson bound; the joint version
  over m classes uses :math:`\alpha_m` each, so all m bounds hold together
  with probability at least :math:`1 - \alpha`.
* :func:`guarantee_shift` - guarantee mode. Let S be the constrained classes.
  Their offsets move together by a common shift t against the other classes:
  :math:`b_k(t) = b_k + t\,[k \in S]`. For :math:`k \in S` a point x of class
  k wins strictly iff :math:`A_k(x) > 0` and :math:`B_k(x) + t > 0`, with
  :math:`A_k = f_k - \max_{l \in S \setminus k} f_l` (the other constrained
  classes move with it) and :math:`B_k = f_k - \max_{l \notin S} f_l`, so
  the recall of every constrained class is non-decreasing in t, and x is
  correct iff :math:`t > \tau_k(x)` with :math:`\tau_k = -B_k` when
  :math:`A_k > 0` and :math:`+\infty` otherwise. The order-statistic rule
  (Tong, Feng and Li 2018; :func:`csvm_stats.inference.bounds.order_statistic_rank`)
  at level :math:`\alpha_{|S|}` picks :math:`t_k`, the r-th largest
  :math:`\tau_k` on :math:`H_k`, with
  :math:`P(P(\tau_k(X) \le t_k) < p_k) \le \alpha_{|S|}`; :math:`t_k` depends
  on :math:`H_k` only, so these |S| events are independent, and the shift
  :math:`t = \max_k t_k` (nudged up so that ties count as errors) is at
  least every :math:`t_k`, hence by monotonicity all required recalls hold
  together with probability at least :math:`1 - \alpha`. t depends only on
  the held-out points of S, so the Clopper-Pearson bounds of the other
  classes stay valid. When every class is constrained no shift changes
  anything (raising all offsets at once changes no decision); the rule then
  passes only if each class already has enough correct held-out points.

**Why one common shift, and not independent per-class offsets or Tian-Feng.**
The order-statistic rule is exact for a *one-parameter* family of rules,
fixed before H is seen, along which the recall is monotone: then "the recall
at the chosen parameter is below p" is the event that an order statistic of
i.i.d. values falls on the wrong side of a fixed quantile, a binomial event.
With independent offsets :math:`t_k` per constrained class, class k's recall
depends on the whole vector t (it falls when a rival's offset rises), and
the rivals' offsets are chosen on held-out data too (each :math:`t_l` must be
set knowing :math:`t_k`, so in any consistent choice, e.g. a fixed point of
"each class's order statistic given the others", every offset depends on
every class's held-out points). The failure event of class k is then
"the order statistic of :math:`H_k` at a *random* point :math:`t_{-k}`
misses", which the binomial argument does not bound; a bound valid at every
:math:`t_{-k}` at once needs a uniform (DKW-type) deviation bound over
orthants of score differences, which is much wider than the exact rule at
held-out sizes of tens to hundreds. Along any path t(s) the recalls of all
constrained classes are monotone only if every difference
:math:`t_k(s) - t_l(s)` (k, l in S) is constant, i.e. only for a common shift
plus fixed offsets - so the common shift is the exact rule for this family.
Tian and Feng (2024, NPMC-CX/ER) set per-class cost weights by maximising an
estimated dual on a held-out sample; their guarantee is an NP *oracle
property* (the errors approach their targets as the sample grows, under
conditions), not a finite-sample statement that all required recalls hold
with probability at least 1 - alpha, so it cannot replace this rule either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from csvm_stats.inference.bounds import binomial_min_n, clopper_pearson_lower, order_statistic_rank
from csvm_stats.inference.certification import HeldoutBound, floor2, level_percent, ordinal
from csvm_stats.exceptions import DataError
from csvm_stats.preprocessing.wording import option

TIE_NUDGE = 1e-9


def argmax_rule(scores: np.ndarray) -> np.ndarray:
    """Class positions of the largest score per row (the first on a tie)."""
    return np.asarray(scores).argmax(axis=1)


def rival_margins(scores: np.ndarray) -> np.ndarray:
    """``(n, K)``: each class's score minus the largest other score, :math:`f_k - \\max_{l \\ne k} f_l`.

    Positive exactly for the argmax class (0 for tied maxima).
    """
    scores = np.asarray(scores, dtype=float)
    order = np.sort(scores, axis=1)
    best, second = order[:, -1:], order[:, -2:-1]
    return scores - np.where(scores >= best, second, best)


def recall_counts(y: np.ndarray, predicted: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """``(n_k, correct_k)`` per class position."""
    n = np.bincount(y, minlength=n_classes)
    correct = np.bincount(y[predicted == y], minlength=n_classes)
    return n, correct


def confusion_counts(y: np.ndarray, predicted: np.ndarray, n_classes: int) -> np.ndarray:
    """``(K, K)`` counts, rows the true class, columns the predicted one."""
    out = np.zeros((n_classes, n_classes), dtype=int)
    np.add.at(out, (y, predicted), 1)
    return out


def sidak(alpha: float, m: int) -> float:
    """The level :math:`1 - (1 - \alpha)^{1/m}` of each of m independent statements that hold jointly at 1 - alpha."""
    return float(-np.expm1(np.log1p(-alpha) / max(int(m), 1)))


def recall_bounds(n: Sequence[int], correct: Sequence[int], alpha: float, n_statements: int) -> list[HeldoutBound]:
    """Separate (alpha) and joint (Sidak, :func:`sidak` over n_statements classes) bounds for each class."""
    alpha_each = sidak(alpha, n_statements)
    return [
        HeldoutBound(int(nk), int(ck), clopper_pearson_lower(int(ck), int(nk), alpha),
                    clopper_pearson_lower(int(ck), int(nk), alpha_each))
        for nk, ck in zip(n, correct)
    ]


@dataclass(frozen=True)
class GuaranteeShift:
    """The common shift of the constrained classes' offsets set on held-out scores.

    ``ranks[k]`` and ``n[k]``: class k's threshold is the r-th largest of its n
    held-out :math:`\\tau_k`; ``alpha_each`` the Sidak level over |S| classes.
    """

    classes: tuple[int, ...]
    targets: Mapping[int, float]
    alpha: float
    n: Mapping[int, int]
    ranks: Mapping[int, int]
    shift: float

    @property
    def alpha_each(self) -> float:
        return sidak(self.alpha, len(self.classes))

    def offsets(self, intercept: np.ndarray) -> np.ndarray:
        """The CSVM offsets with the shift added to the constrained classes."""
        out = np.asarray(intercept, dtype=float).copy()
        out[list(self.classes)] += self.shift
        return out


def _thresholds(scores: np.ndarray, k: int, constrained: np.ndarray) -> np.ndarray:
    """:math:`\\tau_k` of the module docstring for rows ``scores`` (offsets included) of class k."""
    own = scores[:, k]
    rivals_in = constrained.copy()
    rivals_in[k] = False
    a = own - scores[:, rivals_in].max(axis=1) if rivals_in.any() else np.full(own.shape, np.inf)
    b = own - scores[:, ~constrained].max(axis=1) if (~constrained).any() else np.full(own.shape, np.inf)
    return np.where(a > 0, -b, np.inf)


def guarantee_shift(
    scores: np.ndarray, y: np.ndarray, targets: Mapping[int, float], alpha: float, names: Sequence[str]
) -> GuaranteeShift:
    """The shift t of the module docstring from held-out ``scores`` (n, K, offsets included) and labels ``y``.

    ``names`` are the class labels for the error messages. Raises
    :class:`DataError` when a class has too few held-out points for the rule or
    no shift can meet its requirement.
    """
    K = scores.shape[1]
    classes = tuple(sorted(targets))
    constrained = np.zeros(K, dtype=bool)
    constrained[list(classes)] = True
    alpha_each = sidak(alpha, len(classes))
    ranks: dict[int, int] = {}
    sizes: dict[int, int] = {}
    shifts = []
    for k in classes:
        tau = _thresholds(scores[y == k], k, constrained)
        n = tau.size
        rank = order_statistic_rank(n, targets[k], alpha_each)
        if rank is None:
            raise DataError(
                f"guarantee mode for the recall of {names[k]!r} >= {targets[k]:g} at level {alpha_each:.4g} "
                f"(Sidak over {len(classes)} constrained class{'es' if len(classes) > 1 else ''}) needs at least "
                f"{binomial_min_n(targets[k], alpha_each)} held-out points of the class, but the held-out sample "
                f"has {n}. Enlarge the held-out share ({option('fractions')}) or the data."
            )
        t_k = float(np.sort(tau)[::-1][rank - 1])
        if np.isposinf(t_k):
            how = ("every class is constrained, so no common shift changes a decision"
                   if constrained.all() else "they lose to another constrained class whatever the shift")
            raise DataError(
                f"guarantee mode cannot certify the recall of {names[k]!r} >= {targets[k]:g}: more than "
                f"{rank - 1} of its {n} held-out points are misclassified and {how}. Relax a target, constrain "
                "fewer classes, or refit with another kernel or C."
            )
        ranks[k], sizes[k] = rank, n
        shifts.append(t_k)
    t = max(shifts)
    t = 0.0 if np.isneginf(t) else t + TIE_NUDGE * max(1.0, abs(t))
    return GuaranteeShift(classes, dict(targets), float(alpha), sizes, ranks, float(t))


def recall_statement(name: str, lower: float, correct: int, n: int, alpha: float, *, joint_of: int = 1) -> str:
    """One sentence for a Clopper-Pearson bound on a class's recall (rounded down)."""
    how = "exact binomial bound" if joint_of == 1 else f"exact binomial bound at level {level_percent(sidak(alpha, joint_of))}"
    return (
        f"With {level_percent(alpha)} confidence the recall of class {name!r} is at least {floor2(lower)} "
        f"(held-out: {correct} of {n} correct; {how})."
    )


def guarantee_recall_statement(name: str, g: GuaranteeShift, k: int) -> str:
    """The sentence for a constrained class in guarantee mode."""
    return (
        f"With {level_percent(g.alpha_each)} confidence the recall of class {name!r} is at least "
        f"{float(g.targets[k])!r} (offsets of the constrained classes shifted by {g.shift:+.4g} on the held-out "
        "sample: threshold at the "
        f"{ordinal(g.ranks[k])} largest of {g.n[k]} held-out values; order-statistic rule"
        + (f", Sidak over {len(g.classes)} classes)." if len(g.classes) > 1 else ").")
    )
