r"""The best intercept (and scale) for a direction, in O(n log n) for every kind of requirement.

bnb offers the direction w of every node it does not prune as an upper bound:
the CSVM objective at scale s and intercept b,

.. math::

    h_s(b) = s^2 w^\top w + C \sum_{i \in I} c_i \max(0, 1 - y_i(s f_i + b)),
    \qquad f = \Phi w,

is convex and piecewise linear in b with breakpoints :math:`t_i = y_i - s f_i`,
minimised at a weighted median :math:`b^*` of them. An anchor point meets its
margin (to half of MARGIN_TOL, robust to rounding) on a half-line of b: a positive one for
:math:`b \ge 1 - s f_j`, a negative one for :math:`b \le -1 - s f_j`. So each
requirement's count is a step function of b, counted for all candidate b at
once by binary search in the sorted thresholds, and the set of b meeting every
requirement is a union of closed intervals whose ends are anchor thresholds.
By convexity the best feasible b is :math:`b^*` when it is feasible, else the
nearest feasible threshold left of :math:`b^*` or right of it. The result is
the exact minimum over b (the warm start's scan of the breakpoints,
:func:`csvm_stats.optimization.warmstart.best_shift`, reaches the same value with
an O(n^2) feasibility test, which took two thirds of bnb's time under an
accuracy requirement).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from csvm_stats.optimization.problem import RateRequirement

MARGIN_TOL = 1e-9  # a margin >= 1 - MARGIN_TOL counts as met (as in the warm start and bnb)
HALF_TOL = MARGIN_TOL / 2  # the tolerance of the thresholds here (rounding never takes a pick past MARGIN_TOL)


def _weighted_median(t: np.ndarray, cw: np.ndarray, y: np.ndarray) -> float:
    """A minimiser of :math:`\\sum_i c_i \\max(0, 1 - y_i(f_i + b))` (breakpoints ``t``): the slope in b is
    :math:`-W_+ + \\sum_{t_i < b} c_i`, so the first breakpoint where the cumulative weight reaches W_+."""
    order = np.argsort(t, kind="stable")
    k = int(np.searchsorted(np.cumsum(cw[order]), cw[y > 0].sum()))
    return float(t[order[min(k, t.size - 1)]])


def _counts(b: np.ndarray, lo_sorted: np.ndarray, hi_sorted: np.ndarray) -> np.ndarray:
    """Members met at each b: positives with threshold <= b plus negatives with threshold >= b."""
    return np.searchsorted(lo_sorted, b, side="right") + (hi_sorted.size - np.searchsorted(hi_sorted, b, side="left"))


class _SortedScores:
    """One requirement's members' scores for one direction, each class sorted in decreasing order, so that the
    thresholds of every scale come out sorted without a sort: both kinds of threshold fall as the score grows."""

    def __init__(self, f_anchor: np.ndarray, y_anchor: np.ndarray, req: RateRequirement) -> None:
        f, y = f_anchor[req.members], y_anchor[req.members]
        self.pos = -np.sort(-f[y > 0])
        self.neg = -np.sort(-f[y < 0])
        self.count = req.count

    def thresholds(self, factor: float) -> tuple[np.ndarray, np.ndarray]:
        """Sorted thresholds at scale ``factor``: a positive member is met for b >= its ``lo``, a negative one for
        b <= its ``hi``, to half of MARGIN_TOL (so that an intercept accepted here meets MARGIN_TOL when the
        margins are computed directly, whatever the rounding)."""
        return 1.0 - HALF_TOL - factor * self.pos, -1.0 + HALF_TOL - factor * self.neg


def _feasible(b: np.ndarray, thresholds: Sequence[tuple[np.ndarray, np.ndarray]],
              counts: Sequence[int]) -> np.ndarray:
    ok = np.ones(b.shape[0], dtype=bool)
    for (lo, hi), count in zip(thresholds, counts):
        if count > 0:
            ok &= _counts(b, lo, hi) >= count
    return ok


def feasible_mask(b: np.ndarray, s_anchor: np.ndarray, y_anchor: np.ndarray,
                  requirements: Sequence[RateRequirement]) -> np.ndarray:
    """Which intercepts ``b`` meet every requirement with anchor scores ``s_anchor`` (O((n + len(b)) log n))."""
    return _feasible(b, [_SortedScores(s_anchor, y_anchor, req).thresholds(1.0) for req in requirements],
                     [req.count for req in requirements])


def _best_intercept(s_train: np.ndarray, y_train: np.ndarray, cw: np.ndarray,
                    thresholds: Sequence[tuple[np.ndarray, np.ndarray]], counts: Sequence[int]) -> float | None:
    b_star = _weighted_median(y_train - s_train, cw, y_train)
    ends = np.concatenate([[b_star]] + [np.concatenate(pair) for pair in thresholds])
    ok = _feasible(ends, thresholds, counts)
    if not ok.any():
        return None
    if ok[0]:
        return b_star
    feasible = ends[ok]
    left, right = feasible[feasible <= b_star], feasible[feasible >= b_star]
    picks = [x.max() for x in (left,) if x.size] + [x.min() for x in (right,) if x.size]
    values = [float(cw @ np.maximum(0.0, 1.0 - y_train * (s_train + b))) for b in picks]
    return float(picks[int(np.argmin(values))])


def best_intercept(s_train: np.ndarray, y_train: np.ndarray, cw: np.ndarray, s_anchor: np.ndarray,
                   y_anchor: np.ndarray, requirements: Sequence[RateRequirement]) -> float | None:
    """The b minimising the hinge sum among those meeting every requirement (``None``: no b does)."""
    return _best_intercept(s_train, y_train, cw,
                           [_SortedScores(s_anchor, y_anchor, req).thresholds(1.0) for req in requirements],
                           [req.count for req in requirements])


def best_shift(w0: np.ndarray, phi_train: np.ndarray, y_train: np.ndarray, phi_anchor: np.ndarray,
               y_anchor: np.ndarray, C: float, weight: np.ndarray, requirements: Sequence[RateRequirement],
               factors: Sequence[float]) -> tuple[float, np.ndarray, float] | None:
    """``(objective, w, b)`` of the best scaled (by ``factors``) and shifted version of direction ``w0`` meeting
    every requirement (``None``: none does). The anchor scores are sorted once for all scales."""
    f_train, f_anchor = phi_train @ w0, phi_anchor @ w0
    ww = float(w0 @ w0)
    cw = C * weight
    sorted_scores = [_SortedScores(f_anchor, y_anchor, req) for req in requirements]
    counts = [req.count for req in requirements]
    best: tuple[float, np.ndarray, float] | None = None
    for factor in factors:
        s_train = factor * f_train
        b = _best_intercept(s_train, y_train, cw, [sc.thresholds(factor) for sc in sorted_scores], counts)
        if b is None:
            continue
        value = factor * factor * ww + float(cw @ np.maximum(0.0, 1.0 - y_train * (s_train + b)))
        if best is None or value < best[0]:
            best = (value, factor * w0, b)
    return best
