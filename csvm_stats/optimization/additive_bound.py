r"""A bnb lower bound that adds up what forcing many anchor points costs (strong for local kernels).

Notation of :mod:`csvm_stats.optimization.svm_dual`: a node forcing F has
the dual :math:`g(\alpha) = \sum_t \alpha_t - \tfrac12\|w_\alpha\|^2`,
:math:`w_\alpha = \sum_t \alpha_t y_t \phi_t`, and :math:`D(F) \ge 2 g(\alpha)`.
bnb's count bound only uses the *largest* single-anchor cost among the points
a node still needs; when the kernel is local (an RBF kernel with a large
gamma) forcing each anchor point costs about the same on its own and the
costs add up, so that bound is far below the truth and the search enumerates
which few points to drop. This bound adds them up, validly.

*Fixed intercept.* :math:`D(F) = \min_b P_b(F)`, where :math:`P_b` is the
node QP with b fixed; its dual has no equality constraint,
:math:`g_b(\alpha) = \sum_t \alpha_t (1 - y_t b) - \tfrac12\|w_\alpha\|^2`,
and the node's own :math:`\alpha` is feasible for it. For a descendant
forcing :math:`F' \supseteq F` and any step :math:`\tau` that keeps
:math:`\alpha + \tau` in the descendant's boxes,

.. math::

    g_b(\alpha + \tau) = g_b(\alpha) + \sum_t \tau_t v_t(b)
        - \tfrac12\Big\|\sum_t \tau_t y_t \phi_t\Big\|^2,
    \qquad v_t(b) = 1 - y_t(w_\alpha^\top \phi_t + b),

and :math:`\|\sum_t \tau_t y_t \phi_t\|^2 \le \sum_t \rho_t \tau_t^2` with
:math:`\rho_t = \sum_s |K_{ts}|` (Schur's bound: :math:`|\tau_s\tau_t| \le
(\tau_s^2 + \tau_t^2)/2`). The step separates by rows, so

.. math::

    D(F') \ge 2 \min_b \Big[ A(b) + \sum_{j \in F' \setminus F} h_j(b) \Big],
    \quad A(b) = g_b(\alpha) + \sum_{t \in I \cup F} \max_{\tau \in B_t}
        \big(\tau v_t(b) - \tfrac{\rho_t}{2}\tau^2\big),
    \quad h_j(b) = \frac{v_j(b)_+^2}{2\rho_j},

with boxes :math:`B_t = [-\alpha_t, U_t - \alpha_t]` on I and
:math:`[-\alpha_t, \infty)` on F (a newly forced point starts at 0). Every
descendant forces at least ``need`` free members of each requirement, so
the sum over :math:`F' \setminus F` is at least the sum of the ``need``
smallest :math:`h_j(b)` over the free members (per requirement; summed over
requirements whose members are disjoint, else the largest).

*The minimum over b, rigorously.* A is convex in b (a sum of maxima of
affine functions of b) with derivative :math:`A'(b) = -\sum_t y_t \tau_t^*(b)
- \sum_t y_t \alpha_t` (envelope theorem), and every :math:`h_j` is monotone
in b (its :math:`v_j` is affine in b). On a grid of intervals around the
node's intercept, wide enough that A slopes down on the left end and up on
the right one and that every free term vanishes on the tail where it
decreases (so the function's least value on a tail is its value at the
bracket's end), A is bounded below on each interval by its two end tangents
and each :math:`h_j` by its smaller end value; the least interval bound is the node's bound. Every
step is a lower bound: a coarse grid only weakens it.

Cost: O(rows) per evaluation of A: two per widening of the bracket, then at
most 2 GRID_HALF + 1 + REFINEMENTS points per call; below a node's SMO solve. It is strong when each row's kernel mass
sits on its diagonal (RBF with a large gamma); bnb uses it in Gram mode (a
kernel at exact rank), where it was measured to cut SVM solves from
gamma = 2^-2 up (paper-protocol australian fits) and to cost nothing visible
on Wisconsin at gamma = "scale".
"""

from __future__ import annotations

import numpy as np
from numba import njit

GRID_HALF = 8  # points of the first grid on each side of the node's intercept
REFINEMENTS = 64  # interval splits per bound at most
REL_TOL = 1e-4  # stop refining once the bound is this close (relative) to the least value seen
MAX_DOUBLINGS = 60  # widening steps of the bracket of A's minimum


def kernel_row_mass(gram: np.ndarray) -> np.ndarray:
    r""":math:`\rho_t = \sum_s |K_{ts}|`, the Schur bound's row weights (at least the diagonal)."""
    return np.abs(gram).sum(axis=1)


@njit(cache=True)
def _gain(v, lo, hi, rho):
    """max over tau in [lo, hi] of tau v - rho tau^2 / 2, and the maximiser."""
    tau = v / rho
    if tau < lo:
        tau = lo
    elif tau > hi:
        tau = hi
    return tau * v - 0.5 * rho * tau * tau, tau


@njit(cache=True)
def _base(b, y, f, alpha, upper, rho, base_rows, sum_alpha, sum_ya, half_ww):
    """A(b) and A'(b) over the training and forced rows."""
    value = sum_alpha - b * sum_ya - half_ww
    slope = -sum_ya
    for t in base_rows:
        v = 1.0 - y[t] * (f[t] + b)
        g, tau = _gain(v, -alpha[t], upper[t] - alpha[t], rho[t])
        value += g
        slope -= y[t] * tau
    return value, slope


@njit(cache=True)
def _free_cost(b, y, f, rho, t):
    v = 1.0 - y[t] * (f[t] + b)
    return 0.0 if v <= 0.0 else v * v / (2.0 * rho[t])


@njit(cache=True)
def _need_sum(values, need):
    """Sum of the ``need`` smallest entries (``need`` <= their number)."""
    if need <= 0:
        return 0.0
    if need >= values.shape[0]:
        return values.sum()
    return np.partition(values, need - 1)[:need].sum()


@njit(cache=True)
def _free_bound(low, high, y, f, rho, free_rows, starts, needs, disjoint, left_tail, right_tail):
    """Lower bound of the free rows' term on [low, high] (a tail: the limit side is unbounded)."""
    total = 0.0
    for r in range(needs.shape[0]):
        rows = free_rows[starts[r]:starts[r + 1]]
        values = np.empty(rows.shape[0])
        for q in range(rows.shape[0]):
            t = rows[q]
            # h_t is nonincreasing in b for y = +1 and nondecreasing for y = -1
            lo_end = 0.0 if (left_tail and y[t] < 0) else _free_cost(low, y, f, rho, t)
            hi_end = 0.0 if (right_tail and y[t] > 0) else _free_cost(high, y, f, rho, t)
            values[q] = min(lo_end, hi_end)
        part = _need_sum(values, needs[r])
        total = total + part if disjoint else max(total, part)
    return total


@njit(cache=True)
def _interval_lower(b1, b2, a1, d1, a2, d2):
    """Least value on [b1, b2] of a convex function known by its values and slopes at the ends."""
    if d1 >= 0.0:
        return a1
    if d2 <= 0.0:
        return a2
    cross = (a2 - a1 + d1 * b1 - d2 * b2) / (d1 - d2)  # where the two end tangents meet
    cross = min(max(cross, b1), b2)
    return a1 + d1 * (cross - b1)


@njit(cache=True)
def _bound(b0, y, f, alpha, upper, rho, base_rows, free_rows, starts, needs, disjoint, sum_alpha, sum_ya, half_ww,
           stop_value, budget, rel_tol):
    # the bracket: A' <= 0 at the left end and >= 0 at the right end (A is monotone beyond), every free
    # negative point met left of it and every free positive one right of it (their terms vanish beyond),
    # so the function's least value on each tail is its value at the bracket's end
    left_need, right_need = b0, b0
    for t in free_rows:
        if y[t] > 0:
            right_need = max(right_need, 1.0 - f[t])
        else:
            left_need = min(left_need, -1.0 - f[t])
    width, bracketed = 1.0, False
    for _ in range(MAX_DOUBLINGS):
        _, slope_left = _base(b0 - width, y, f, alpha, upper, rho, base_rows, sum_alpha, sum_ya, half_ww)
        _, slope_right = _base(b0 + width, y, f, alpha, upper, rho, base_rows, sum_alpha, sum_ya, half_ww)
        if slope_left <= 0.0 and slope_right >= 0.0 and b0 - width <= left_need and b0 + width >= right_need:
            bracketed = True
            break
        width *= 2.0
    if not bracketed:
        return -np.inf
    cap = 2 * GRID_HALF + budget
    lo_b, hi_b = np.empty(cap), np.empty(cap)
    lo_a, lo_d, hi_a, hi_d = np.empty(cap), np.empty(cap), np.empty(cap), np.empty(cap)
    lower = np.empty(cap)
    n = 2 * GRID_HALF + 1
    grid = np.empty(n)
    values = np.empty(n)
    slopes = np.empty(n)
    upper_est = np.inf  # the least value of A + B seen at a point: the minimum is at most this
    for k in range(n):
        s = (k - GRID_HALF) / GRID_HALF
        grid[k] = b0 + width * s * abs(s)  # finer near the node's intercept
        values[k], slopes[k] = _base(grid[k], y, f, alpha, upper, rho, base_rows, sum_alpha, sum_ya, half_ww)
        upper_est = min(upper_est, values[k] + _free_bound(grid[k], grid[k], y, f, rho, free_rows, starts, needs,
                                                           disjoint, False, False))
    tails = min(values[0] + _free_bound(grid[0], grid[0], y, f, rho, free_rows, starts, needs, disjoint, True, False),
                values[n - 1] + _free_bound(grid[n - 1], grid[n - 1], y, f, rho, free_rows, starts, needs,
                                            disjoint, False, True))
    m = n - 1
    for k in range(m):
        lo_b[k], hi_b[k] = grid[k], grid[k + 1]
        lo_a[k], lo_d[k], hi_a[k], hi_d[k] = values[k], slopes[k], values[k + 1], slopes[k + 1]
        lower[k] = _interval_lower(lo_b[k], hi_b[k], lo_a[k], lo_d[k], hi_a[k], hi_d[k]) + _free_bound(
            lo_b[k], hi_b[k], y, f, rho, free_rows, starts, needs, disjoint, False, False)
    # refine: split the interval of least bound until the bound meets the least value seen, prunes, or the
    # budget is spent
    for _ in range(budget):
        k = np.argmin(lower[:m])
        best = min(lower[k], tails)
        if best >= stop_value or best >= upper_est - rel_tol * abs(upper_est) or lower[k] > tails:
            break
        mid = 0.5 * (lo_b[k] + hi_b[k])
        a_mid, d_mid = _base(mid, y, f, alpha, upper, rho, base_rows, sum_alpha, sum_ya, half_ww)
        upper_est = min(upper_est, a_mid + _free_bound(mid, mid, y, f, rho, free_rows, starts, needs, disjoint,
                                                       False, False))
        lo_b[m], hi_b[m], lo_a[m], lo_d[m], hi_a[m], hi_d[m] = mid, hi_b[k], a_mid, d_mid, hi_a[k], hi_d[k]
        hi_b[k], hi_a[k], hi_d[k] = mid, a_mid, d_mid
        for q in (k, m):
            lower[q] = _interval_lower(lo_b[q], hi_b[q], lo_a[q], lo_d[q], hi_a[q], hi_d[q]) + _free_bound(
                lo_b[q], hi_b[q], y, f, rho, free_rows, starts, needs, disjoint, False, False)
        m += 1
    return 2.0 * min(lower[:m].min(), tails)


class AdditiveBound:
    """The bound of the module docstring for one bnb search (rows stacked as ``[I; J]``)."""

    def __init__(self, phi: np.ndarray, y: np.ndarray, upper: np.ndarray, rho: np.ndarray,
                 n_train: int, members: list[np.ndarray]) -> None:
        self.phi, self.y, self.upper, self.rho, self.n_train = phi, y, upper, rho, n_train
        self.members = members
        flat = np.concatenate(members) if members else np.empty(0, np.int64)
        self.disjoint = bool(np.unique(flat).size == flat.size)
        self._point: np.ndarray | None = None  # the dual point of the last call and its (w, f)
        self._fitted: tuple[np.ndarray, np.ndarray] = (np.empty(0), np.empty(0))

    def fitted(self, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`w_\alpha` and the scores :math:`f = \Phi w_\alpha` of a dual point, cached for the last point.

        The cache is keyed on the array object (``is``): bnb never changes a relaxation's dual point
        in place once it is returned, and calls the bound for a node and then for its children with the
        same point.
        """
        if alpha is not self._point:
            w = self.phi.T @ (alpha * self.y)
            self._point, self._fitted = alpha, (w, self.phi @ w)
        return self._fitted

    def node_sets(self, forced: np.ndarray, dropped: np.ndarray,
                  counts: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """A node's rows for :func:`_bound`: base rows (I and the forced points), free rows by requirement (their
        ``starts``) and each requirement's ``need``; ``None`` when a requirement cannot be met."""
        n_i = self.n_train
        base_rows = np.concatenate([np.arange(n_i), n_i + np.flatnonzero(forced)]).astype(np.int64)
        free_parts, needs = [], []
        for members, count in zip(self.members, counts):
            free = members[~forced[members] & ~dropped[members]]
            need = count - int(forced[members].sum())
            if need > free.size:
                return None
            free_parts.append(n_i + free)
            needs.append(max(need, 0))
        starts = np.concatenate([[0], np.cumsum([p.size for p in free_parts])]).astype(np.int64)
        free_rows = (np.concatenate(free_parts) if free_parts else np.empty(0)).astype(np.int64)
        return base_rows, free_rows, starts, np.asarray(needs, np.int64)

    def __call__(self, alpha: np.ndarray, b: float, forced: np.ndarray, dropped: np.ndarray,
                 counts: list[int], stop_value: float = np.inf) -> float:
        """Lower bound on D(F') of every descendant of a node (its sets and dual point ``alpha``)."""
        sets = self.node_sets(forced, dropped, counts)
        if sets is None:
            return np.inf
        w, f = self.fitted(alpha)
        return float(_bound(float(b), self.y, f, alpha, self.upper, self.rho, *sets, self.disjoint,
                            float(alpha.sum()), float(alpha @ self.y), 0.5 * float(w @ w), stop_value / 2.0,
                            REFINEMENTS, REL_TOL))
