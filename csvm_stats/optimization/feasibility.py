r"""Can the rate requirements be met at all? A counting certificate over ties, exact for one predictor column.

A requirement counts anchor points j with :math:`y_j f(x_j) \ge 1`. Anchor
points with identical feature rows :math:`\phi_j` (ties: factor dummies,
rounded or discrete predictors) share the score :math:`f`, so of a tie group
g at most one class meets its margin (:math:`f \ge 1` and :math:`f \le -1`
exclude each other). Whatever the hyperplane, every group g therefore sides
with the positives (its :math:`p_g` positive points may count, none of its
:math:`n_g` negatives), with the negatives, or with neither, which is never
better. The attainable counts form the set

.. math::

    \{(TP, TN)\} \subseteq \Big\{\Big(\sum_{g \in P} p_g,\ \sum_{g \notin P} n_g\Big) : P \subseteq G\Big\},

a knapsack: :func:`count_frontier` computes the largest TN for every TP
exactly (dynamic programming over the groups holding both classes; a group
of one class always sides with it). If no pair meets every requirement
(:math:`TP \ge k_+`, :math:`TN \ge k_-`, :math:`TP + TN \ge k`), no
classifier of any kernel does: the model is infeasible, and the certificate
says which requirement falls short and by how much.

With one feature column (:math:`\phi` of rank one: a single numeric predictor
under the linear kernel) the scores are monotone in :math:`\phi`, so the
groups on the positive side are exactly those above a threshold (or below it,
for :math:`w < 0`), and each such split is attained by a steep enough w: the
certificate is then exact both ways. In general "feasible" only means the
counts do not rule the requirements out; its side assignment is a candidate
forced set that a hard-margin LP may confirm (bnb does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from csvm_stats.optimization.problem import RATE_NAMES, RateRequirement

DP_CELLS = 20_000_000  # groups x count values the knapsack may fill; beyond, the check says nothing
_NAMES = {"tpr": ("positive", "TPR"), "tnr": ("negative", "TNR"), "acc": ("", "accuracy")}


@dataclass(frozen=True)
class CountCheck:
    """The certificate's answer.

    ``feasible``: False when the counts rule the requirements out (``reason`` says which and by how much),
    True when a side assignment meets them (``forced``: its anchor points, a candidate forced set), None when
    the check was too large to run. ``exact``: a feasible answer guarantees a classifier (one column).
    """

    feasible: bool | None
    reason: str = ""
    forced: np.ndarray | None = None
    exact: bool = False


def tie_groups(phi: np.ndarray) -> np.ndarray:
    """The tie group of every row: rows with identical entries get one group id (0, 1, ...)."""
    if phi.shape[0] == 0:
        return np.empty(0, dtype=np.int64)
    _, inverse = np.unique(np.ascontiguousarray(phi), axis=0, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64)


def count_frontier(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""For every t, the largest :math:`\sum_{g \notin P} n_g` over subsets P with :math:`\sum_{g \in P} p_g = t`.

    Returns ``(best, choice)``: ``best[t]`` (-1: t not attainable) and ``choice[g, t]``, True when group g
    is in P on the way to ``best[t]`` after groups 0..g (for :func:`_sides`).
    """
    total = int(pos.sum())
    best = np.full(total + 1, -1, dtype=np.int64)
    best[0] = 0
    choice = np.zeros((pos.size, total + 1), dtype=bool)
    for g, (p, n) in enumerate(zip(pos.tolist(), neg.tolist())):
        stay = np.where(best >= 0, best + n, -1)
        take = np.full_like(best, -1)
        take[p:] = best[: total + 1 - p]
        choice[g] = take > stay
        best = np.maximum(stay, take)
    return best, choice


def _sides(choice: np.ndarray, pos: np.ndarray, t: int) -> np.ndarray:
    """Which groups are on the positive side in a subset reaching ``best[t]`` (backtracking :func:`count_frontier`)."""
    out = np.zeros(pos.size, dtype=bool)
    for g in range(pos.size - 1, -1, -1):
        if choice[g, t]:
            out[g] = True
            t -= int(pos[g])
    return out


def check_counts(phi_anchor: np.ndarray, y_anchor: np.ndarray, requirements: Sequence[RateRequirement],
                 forced: np.ndarray, dropped: np.ndarray) -> CountCheck:
    """The certificate of the module docstring for the anchor sample, with the points ``forced`` (must meet their
    margin) and ``dropped`` (cannot count) of a search's root."""
    counts = {req.kind: req.count for req in requirements}
    if not counts:
        return CountCheck(True, forced=forced.copy(), exact=True)
    positive = y_anchor > 0
    usable = ~dropped
    groups = tie_groups(phi_anchor)
    n_groups = int(groups.max(initial=-1)) + 1
    pos = np.bincount(groups[usable & positive], minlength=n_groups)
    neg = np.bincount(groups[usable & ~positive], minlength=n_groups)
    fixed_pos = np.bincount(groups[forced & positive], minlength=n_groups) > 0
    fixed_neg = np.bincount(groups[forced & ~positive], minlength=n_groups) > 0
    if (fixed_pos & fixed_neg).any():
        return CountCheck(False, "anchor points of both classes with identical predictor values must all meet "
                                 "their margins, which no score can")
    if phi_anchor.shape[1] == 1:
        pairs, sides_of = _threshold_pairs(phi_anchor[:, 0], groups, pos, neg, fixed_pos, fixed_neg)
        exact = True
    else:
        found = _knapsack_pairs(pos, neg, fixed_pos, fixed_neg)
        if found is None:
            return CountCheck(None)
        pairs, sides_of = found
        exact = False
    if pairs.shape[0] == 0:
        return CountCheck(False, "no threshold of the one predictor column puts every forced positive above every "
                                 "forced negative (or below)", exact=True)
    tp, tn = pairs[:, 0], pairs[:, 1]
    values = {"tpr": tp, "tnr": tn, "acc": tp + tn}
    slack = np.min([values[k] - c for k, c in counts.items()], axis=0)
    if slack.max() >= 0:
        side = sides_of(int(np.argmax(slack)))  # positive side per group
        chosen = usable & np.where(positive, side[groups], ~side[groups])
        return CountCheck(True, forced=chosen | forced, exact=exact)
    return CountCheck(False, _explain(values, counts, y_anchor, exact))


def _threshold_pairs(v: np.ndarray, groups: np.ndarray, pos: np.ndarray, neg: np.ndarray, fixed_pos: np.ndarray,
                     fixed_neg: np.ndarray):
    """(TP, TN) of every split of the sorted groups of one column: a prefix on one side, the rest on the other."""
    order = np.argsort(np.bincount(groups, weights=v, minlength=pos.size) / np.maximum(np.bincount(groups), 1))
    p, n = pos[order], neg[order]
    fp, fn = fixed_pos[order], fixed_neg[order]
    cuts = np.arange(order.size + 1)
    p_before, n_before = np.r_[0, np.cumsum(p)], np.r_[0, np.cumsum(n)]
    fp_before, fn_before = np.r_[0, np.cumsum(fp)], np.r_[0, np.cumsum(fn)]
    # rising scores (w >= 0): groups before the cut negative, after it positive; falling: the reverse
    rising = np.c_[p.sum() - p_before, n_before]
    rising_ok = (fp_before == 0) & (fn_before[-1] - fn_before == 0)
    falling = np.c_[p_before, n.sum() - n_before]
    falling_ok = (fn_before == 0) & (fp_before[-1] - fp_before == 0)
    pairs = np.r_[rising[rising_ok], falling[falling_ok]]
    which = np.r_[np.c_[np.zeros(rising_ok.sum()), cuts[rising_ok]], np.c_[np.ones(falling_ok.sum()),
                                                                            cuts[falling_ok]]].astype(int)
    if pairs.size == 0:
        return np.zeros((0, 2), dtype=np.int64), None

    def sides_of(k: int) -> np.ndarray:
        falls, cut = which[k]
        side_sorted = (cuts[:-1] < cut) if falls else (cuts[:-1] >= cut)
        side = np.zeros(order.size, dtype=bool)
        side[order] = side_sorted
        return side

    return pairs, sides_of


def _knapsack_pairs(pos: np.ndarray, neg: np.ndarray, fixed_pos: np.ndarray, fixed_neg: np.ndarray):
    """(TP, TN) of the count frontier: groups fixed by a forced point or holding one class take their side; the
    others (both classes, free) are the knapsack's items. ``None`` beyond DP_CELLS."""
    to_pos = fixed_pos | (~fixed_neg & (neg == 0))
    to_neg = ~to_pos & (fixed_neg | (pos == 0))
    mixed = ~to_pos & ~to_neg
    items = np.flatnonzero(mixed)
    if items.size * (int(pos[items].sum()) + 1) > DP_CELLS:
        return None
    best, choice = count_frontier(pos[items], neg[items])
    t = np.flatnonzero(best >= 0)
    base_tp, base_tn = int(pos[to_pos].sum()), int(neg[to_neg].sum())
    pairs = np.c_[base_tp + t, base_tn + best[t]]

    def sides_of(k: int) -> np.ndarray:
        side = to_pos.copy()
        side[items] = _sides(choice, pos[items], int(t[k]))
        return side

    return pairs, sides_of


def _explain(values: dict[str, np.ndarray], counts: dict[str, int], y_anchor: np.ndarray, exact: bool) -> str:
    """Which requirement cannot be met and by how much, given the others (or alone when they conflict too)."""
    sizes = {"tpr": int((y_anchor > 0).sum()), "tnr": int((y_anchor < 0).sum()), "acc": int(y_anchor.size)}
    parts = []
    for kind, count in counts.items():
        others = np.ones(values[kind].shape[0], dtype=bool)
        for other, c in counts.items():
            if other != kind:
                others &= values[other] >= c
        if not others.any():
            continue
        most = int(values[kind][others].max())
        held = ", ".join(f"{_NAMES[o][1]} >= {c}/{sizes[o]}" for o, c in counts.items() if o != kind)
        what = f"anchor {_NAMES[kind][0]}s" if _NAMES[kind][0] else "anchor points"
        parts.append(f"{RATE_NAMES[kind]} needs {count} of {sizes[kind]} {what} at margin >= 1, and at most {most} "
                     f"can be while {held} holds")
    if not parts:  # the others conflict among themselves: each alone
        for kind, count in counts.items():
            parts.append(f"{RATE_NAMES[kind]} alone reaches at most {int(values[kind].max())} of {sizes[kind]} "
                         f"(needs {count})")
    why = ("with one predictor column a linear rule is a threshold; relax a target or use a nonlinear kernel"
           if exact else
           "anchor points with identical predictor values share a score, so of each tie only one class can meet its "
           "margin, whatever the kernel; relax a target or add predictors that tell the tied points apart")
    return "; ".join(parts) + f" ({why})"
