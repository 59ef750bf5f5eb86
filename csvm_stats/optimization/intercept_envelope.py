r"""A bnb lower bound from dual points of the root's QP with the intercept held fixed (kernels at exact rank).

The additive bound (:mod:`csvm_stats.optimization.additive_bound`) starts from
one node's dual point :math:`\alpha`, optimal at the node's intercept. The
descendants that must force many more anchor points have their optimum at
another intercept :math:`b^*`, where :math:`\alpha`'s training rows are far
from optimal and the bound's one-row steps recover only part of the
difference (australian, RBF C = 8, gamma = 8, TNR 121 of 125: root bound
388.85 against the optimum 389.28; the search then enumerates which points
to give up).

For a fixed b the node QP's dual has no equality constraint,

.. math::

    g_b(\alpha) = \sum_t \alpha_t (1 - y_t b) - \tfrac12 \|w_\alpha\|^2,
    \qquad 0 \le \alpha_t \le U_t \ (t \in I), \quad \alpha_t \ge 0 \ (t \in F_0),

and every point of that box is feasible for the fixed-b dual of every node
(a node forces a superset of the root's points :math:`F_0`; its other rows
start at 0). So at the root we solve it for a few intercepts
:math:`b_1 < \dots < b_K` (:func:`_ascent`, coordinate ascent; any iterate is
feasible, so convergence only sharpens the bound) and bound a node's
descendants by the additive bound's terms (its module docstring) from these
points: for b in :math:`[b_k, b_{k+1}]` by the larger of the two from
:math:`\alpha_{b_k}` and :math:`\alpha_{b_{k+1}}` (each is valid for every b),
minimised over the interval rigorously as there (end tangents of the convex
part, the smaller end value of each monotone free term, the interval of
least bound split until it meets the least value seen, prunes, or the
refinement budget is spent); beyond :math:`b_1` and :math:`b_K` by the outer
points' values at the ends, which bound the tails only where the additive
bound's bracket conditions hold (the convex part slopes outwards and every
free term of the tail's side has vanished: checked, else no bound). The
points are placed where the root's envelope is least, one at a time.

Measured at the root of that fit: 17 points lift the bound to 389.249, above
the prune level (the additive bound from the root's own point: 388.85).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from csvm_stats.optimization.additive_bound import AdditiveBound, _base, _free_bound, _interval_lower

MAX_POINTS = 16  # fixed-intercept points placed at the root at most (besides the root's and the ends)
REFINEMENTS = 600  # interval splits per bound at most
REL_TOL = 1e-6  # stop refining once the bound is this close (relative) to the least value seen
ASCENT_SWEEPS = 2000  # coordinate-ascent sweeps per fixed-intercept point at most
ASCENT_WORK = 2e8  # ... and at most this many multiply-adds (a sweep costs rows^2)
ASCENT_TOL = 1e-9  # ... until no coordinate moves the dual by more than this
END_TRIES = 10  # attempts to place an end point beyond which the tail's free terms vanish
END_MARGIN = 1e-2  # how far beyond the last free term's zero an end point goes


@njit(cache=True)
def _ascent(Q, y, b, upper, alpha, sweeps, tol):
    """Coordinate ascent on :math:`g_b` over the box, from ``alpha`` (in place): every iterate is feasible.

    A coordinate without curvature (:math:`Q_{tt} = 0`: a zero kernel row, so :math:`g_b` is linear in it) goes
    to the end of its box its gradient points to, or stays where it is when that end is infinite.
    """
    n = alpha.shape[0]
    grad = (1.0 - y * b) - Q @ alpha
    for _ in range(sweeps):
        largest = 0.0
        for t in range(n):
            if Q[t, t] > 0.0:
                new = min(max(alpha[t] + grad[t] / Q[t, t], 0.0), upper[t])
            elif grad[t] > 0.0 and upper[t] < np.inf:
                new = upper[t]
            elif grad[t] < 0.0:
                new = 0.0
            else:
                continue
            d = new - alpha[t]
            if d != 0.0:
                largest = max(largest, abs(d * grad[t]))
                for s in range(n):
                    grad[s] -= d * Q[s, t]
                alpha[t] = new
        if largest < tol:
            break
    return alpha


@njit(cache=True)
def _tail(k, end, left, y, fs, alphas, upper, rho, base_rows, free_rows, starts, needs, disjoint, sums, sums_y,
          halves):
    """Lower bound of point k's additive bound on the half-line beyond ``end`` (left or right), ``-inf`` unless
    the bracket conditions hold at ``end``: the convex part slopes outwards, the tail side's free terms vanish."""
    f = fs[k]
    value, slope = _base(end, y, f, alphas[k], upper, rho, base_rows, sums[k], sums_y[k], halves[k])
    if (left and slope > 0.0) or (not left and slope < 0.0):
        return -np.inf
    for t in free_rows:
        if 1.0 - y[t] * (f[t] + end) > 0.0 and (y[t] < 0) == left:
            return -np.inf
    return value + _free_bound(end, end, y, f, rho, free_rows, starts, needs, disjoint, left, not left)


@njit(cache=True)
def _envelope(bs, y, fs, alphas, upper, rho, base_rows, free_rows, starts, needs, disjoint, sums, sums_y, halves,
              stop_value, budget, rel_tol):
    """The module docstring's bound (halved) and where it is least (``nan``: a tail).

    Interval i spans [lo, hi] between the points ``owner[i]`` and ``owner[i] + 1``; ``ends[i]`` holds the
    value and slope of both points' convex parts at both ends.
    """
    K = bs.shape[0]
    tails = min(_tail(0, bs[0], True, y, fs, alphas, upper, rho, base_rows, free_rows, starts, needs, disjoint,
                      sums, sums_y, halves),
                _tail(K - 1, bs[K - 1], False, y, fs, alphas, upper, rho, base_rows, free_rows, starts, needs,
                      disjoint, sums, sums_y, halves))
    cap = K + budget
    lo, hi, owner, lower = np.empty(cap), np.empty(cap), np.empty(cap, np.int64), np.empty(cap)
    ends = np.empty((cap, 2, 4))  # [interval, point o / o + 1, (value at lo, slope at lo, value at hi, slope at hi)]
    at = np.empty((K, 2, 2))  # [k, point k / point k + 1, (value, slope)] at b_k
    least_seen = np.inf  # the least pointwise bound: the minimum of the bound is at most this
    for k in range(K):
        for side in range(2):  # the point itself and its right neighbour at b_k
            q = min(k + side, K - 1)
            at[k, side, 0], at[k, side, 1] = _base(bs[k], y, fs[q], alphas[q], upper, rho, base_rows, sums[q],
                                                   sums_y[q], halves[q])
        least_seen = min(least_seen, at[k, 0, 0] + _free_bound(bs[k], bs[k], y, fs[k], rho, free_rows, starts,
                                                              needs, disjoint, False, False))
    m = K - 1
    for q in range(m):
        lo[q], hi[q], owner[q] = bs[q], bs[q + 1], q
        ends[q, 0, 0], ends[q, 0, 1] = at[q, 0, 0], at[q, 0, 1]  # point q at both ends
        ends[q, 0, 2], ends[q, 0, 3] = _base(bs[q + 1], y, fs[q], alphas[q], upper, rho, base_rows, sums[q],
                                             sums_y[q], halves[q])
        ends[q, 1, 0], ends[q, 1, 1] = at[q, 1, 0], at[q, 1, 1]  # point q + 1 at both ends
        ends[q, 1, 2], ends[q, 1, 3] = at[q + 1, 0, 0], at[q + 1, 0, 1]
        lower[q] = _interval(q, lo, hi, owner, ends, y, fs, rho, free_rows, starts, needs, disjoint)
    for _ in range(budget):
        q = np.argmin(lower[:m])
        best = min(lower[q], tails)
        if (best >= stop_value or least_seen < stop_value < np.inf or lower[q] > tails
                or best >= least_seen - rel_tol * abs(least_seen)):
            break
        mid, o = 0.5 * (lo[q] + hi[q]), owner[q]
        lo[m], hi[m], owner[m] = mid, hi[q], o
        hi[q] = mid
        point_mid = -np.inf
        for side in range(2):
            p = o + side
            a, d = _base(mid, y, fs[p], alphas[p], upper, rho, base_rows, sums[p], sums_y[p], halves[p])
            ends[m, side, 0], ends[m, side, 1] = a, d
            ends[m, side, 2], ends[m, side, 3] = ends[q, side, 2], ends[q, side, 3]
            ends[q, side, 2], ends[q, side, 3] = a, d
            point_mid = max(point_mid, a + _free_bound(mid, mid, y, fs[p], rho, free_rows, starts, needs, disjoint,
                                                       False, False))
        least_seen = min(least_seen, point_mid)
        lower[q] = _interval(q, lo, hi, owner, ends, y, fs, rho, free_rows, starts, needs, disjoint)
        lower[m] = _interval(m, lo, hi, owner, ends, y, fs, rho, free_rows, starts, needs, disjoint)
        m += 1
    q = np.argmin(lower[:m])
    if tails < lower[q]:
        return tails, np.nan
    return lower[q], 0.5 * (lo[q] + hi[q])


@njit(cache=True)
def _interval(i, lo, hi, owner, ends, y, fs, rho, free_rows, starts, needs, disjoint):
    """The larger of the two points' lower bounds over interval i."""
    value = -np.inf
    for side in range(2):
        e = ends[i, side]
        value = max(value, _interval_lower(lo[i], hi[i], e[0], e[1], e[2], e[3]) + _free_bound(
            lo[i], hi[i], y, fs[owner[i] + side], rho, free_rows, starts, needs, disjoint, False, False))
    return value


class InterceptEnvelope:
    """The bound of the module docstring for one bnb search: fixed-intercept points of the root's QP."""

    def __init__(self, additive: AdditiveBound, gram: np.ndarray, base_rows: np.ndarray) -> None:
        self.additive, self.gram, self.base_rows = additive, gram, base_rows
        y = additive.y
        self._q = (y[base_rows, None] * y[None, base_rows]) * gram[np.ix_(base_rows, base_rows)]
        self._points: dict[float, np.ndarray] = {}
        self._packed: tuple | None = None

    def add(self, b: float, start: np.ndarray) -> np.ndarray:
        """Solve the fixed-intercept dual at ``b`` from ``start`` (a full dual point in the box) and keep it."""
        rows = self.base_rows
        alpha = np.zeros_like(start)
        sweeps = int(min(ASCENT_SWEEPS, max(1.0, ASCENT_WORK / rows.size ** 2)))
        alpha[rows] = _ascent(self._q, self.additive.y[rows], float(b), self.additive.upper[rows],
                              np.clip(start[rows], 0.0, self.additive.upper[rows]), sweeps, ASCENT_TOL)
        self._points[float(b)] = alpha
        self._packed = None
        return alpha

    def nearest(self, b: float) -> np.ndarray:
        """The kept point whose intercept is nearest ``b`` (a warm start)."""
        return self._points[min(self._points, key=lambda c: abs(c - b))]

    def scores(self, alpha: np.ndarray) -> np.ndarray:
        r""":math:`f = K (\alpha \circ y)` on every row."""
        return self.gram @ (alpha * self.additive.y)

    def _pack(self) -> tuple:
        if self._packed is None:
            bs = np.array(sorted(self._points))
            alphas = np.array([self._points[b] for b in bs])
            fs = (alphas * self.additive.y) @ self.gram
            self._packed = (bs, alphas, fs, alphas.sum(axis=1), alphas @ self.additive.y,
                            0.5 * np.einsum("ki,ki->k", alphas * self.additive.y, fs))
        return self._packed

    def bound(self, forced: np.ndarray, dropped: np.ndarray, counts: list[int],
              stop_value: float = np.inf) -> tuple[float, float]:
        """Lower bound on D(F') of every descendant of a node (its sets), and where in b it is least (``nan``:
        a tail)."""
        sets = self.additive.node_sets(forced, dropped, counts)
        if sets is None:
            return np.inf, np.nan
        base_rows, free_rows, starts, needs = sets
        bs, alphas, fs, sums, sums_y, halves = self._pack()
        value, where = _envelope(bs, self.additive.y, fs, alphas, self.additive.upper, self.additive.rho, base_rows,
                                 free_rows, starts, needs, self.additive.disjoint, sums, sums_y, halves,
                                 stop_value / 2.0, REFINEMENTS, REL_TOL)
        return 2.0 * float(value), float(where)

    def __call__(self, forced: np.ndarray, dropped: np.ndarray, counts: list[int],
                 stop_value: float = np.inf) -> float:
        return self.bound(forced, dropped, counts, stop_value)[0]

    @classmethod
    def build(cls, additive: AdditiveBound, gram: np.ndarray, root_alpha: np.ndarray, root_b: float,
              target_b: float, forced: np.ndarray, dropped: np.ndarray, counts: list[int],
              level: float) -> InterceptEnvelope:
        """Points at the root (sets ``forced``, ``dropped``; its dual point and intercept): the root's own, one at
        ``target_b`` (the incumbent's intercept), an end point on each side beyond which the tail's free terms
        vanish, then up to MAX_POINTS where the root's envelope is least (until it reaches ``level``)."""
        n_i = additive.n_train
        envelope = cls(additive, gram, np.r_[np.arange(n_i), n_i + np.flatnonzero(forced)].astype(np.int64))
        envelope._points[float(root_b)] = root_alpha.copy()
        if target_b != root_b:
            envelope.add(target_b, root_alpha)
        sets = additive.node_sets(forced, dropped, counts)
        free_rows = np.empty(0, np.int64) if sets is None else sets[1]
        y = additive.y
        for side in (-1.0, 1.0):  # y = side: the free points whose terms vanish on that side's tail
            rows = free_rows[y[free_rows] == side]
            f = envelope.scores(root_alpha)
            end = side * max(side * root_b, side * target_b)
            for _ in range(END_TRIES):
                need = side * max(side * end, (side * (side - f[rows])).max(initial=-np.inf))
                if side * need <= side * end and end not in (root_b, target_b):
                    break
                end = need + side * END_MARGIN
                f = envelope.scores(envelope.add(end, envelope.nearest(end)))
        last = -np.inf
        for _ in range(MAX_POINTS):
            value, where = envelope.bound(forced, dropped, counts)
            if value >= level or not np.isfinite(where) or value <= last * (1.0 + REL_TOL):
                break
            last = value
            envelope.add(where, envelope.nearest(where))
        return envelope
