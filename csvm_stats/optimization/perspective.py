r"""The perspective relaxation of the cardinality-constrained CSVM, solved through its dual.

With feature indicators :math:`v_f` and at most s of them on, the convex hull
of :math:`\{(w_f, v_f, t_f): t_f \ge w_f^2,\ w_f (1 - v_f) = 0,\ v_f \in \{0,1\}\}`
is :math:`t_f v_f \ge w_f^2` (the perspective), so the relaxation of a node that
fixes the features ``inside`` on, the features ``outside`` off and leaves the
set F free under the budget :math:`k = s - |\text{inside}|` is

.. math::

    R = \min_{w, b, \sigma}\; \sum_{f \in \text{inside}} w_f^2 + \sum_{f \in F} \frac{w_f^2}{\sigma_f}
        + \sum_{i \in I} c_i \max(0, 1 - y_i(w^\top x_i + b))
    \quad\text{s.t.}\quad 0 \le \sigma \le 1,\ \sum_{f \in F} \sigma_f \le k,
    \ w_{\text{outside}} = 0,\ y_j(w^\top x_j + b) \ge 1\ (j \in \text{forced anchors}).

Minimising over :math:`\sigma` first gives the squared *k-support norm*
:math:`\rho_k(w_F)` (Argyriou, Foygel and Srebro 2012): with
:math:`a_1 \ge a_2 \ge \dots` the sorted :math:`|w_f|`,
:math:`\rho_k = \sum_{f \le r} a_f^2 + (\sum_{f > r} a_f)^2 / (k - r)`, r the
unique index with :math:`a_r > T_r / (k - r) \ge a_{r+1}`; the minimiser is
:math:`\sigma_f = \min(1, a_f / \tau)`. For a w with at most k non-zeros on F,
:math:`\rho_k(w_F) = \|w_F\|^2`: the relaxation is exact at sparse points.

*Dual.* For fixed :math:`\sigma` the problem is an SVM on the columns scaled
by :math:`\sqrt{\sigma_f}` (:class:`~csvm_stats.optimization.svm_dual.SVMDual`,
box :math:`c_i / 2`, forced anchors unbounded). With
:math:`u = \sum_t \alpha_t y_t x_t` its Lagrangian gives, for every dual point
:math:`\alpha` (:math:`0 \le \alpha_i \le c_i / 2`, :math:`\alpha_j \ge 0`,
:math:`\sum_t y_t \alpha_t = 0`),

.. math::

    R \;\ge\; \min_\sigma 2\Big(\sum_t \alpha_t - \tfrac12 \sum_f \sigma_f u_f^2\Big)
      = 2 \sum_t \alpha_t - \|u_{\text{inside}}\|^2 - \mathrm{top}_k(u_F^2),

:math:`\mathrm{top}_k` the sum of the k largest entries: the conjugate of
:math:`\rho_k` is the top-k sum of squares. This **bound is valid at any
dual point**, converged or not. The same :math:`\alpha` bounds both children
of a feature branch at no cost (:func:`child_bounds`): with
:math:`q = u_F^2` sorted, rank r(f) of f,

.. math::

    R_{f \text{ off}} \ge R(\alpha) + [r(f) \le k]\,(q_f - q_{(k+1)}),\qquad
    R_{f \text{ on}} \ge R(\alpha) + [r(f) > k]\,(q_{(k)} - q_f),

which also fixes features: a child whose bound reaches the incumbent is cut.

*Solving.* Block coordinates on the jointly convex :math:`(w, \sigma)`:
the SVM for fixed :math:`\sigma` by warm-started SMO, then the closed-form
:math:`\sigma` above (kept at least SIGMA_FLOOR times its budget share, so no
column leaves for good), until the primal value
:math:`\sum w_{\text{inside}}^2 + \rho_k(w_F) + \text{hinge}` and the dual
bound agree to ``rel_tol``, the bound reaches ``stop_value``, or ``rounds``
passes; the passes run in one compiled loop. SMO meets the forced margins
only to its tolerance, so a pass's point missing them by m (at most REPAIR)
is scaled by :math:`1/(1-m)` before its value is read (a feasible point: the
value stays an upper bound on R, and nodes converge instead of running every
pass).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from csvm_stats.optimization.svm_dual import BLOCK_PERIOD, SVMDual, _smo_features, _summary

SIGMA_FLOOR = 1e-3  # a free column keeps sigma >= this times k / |F| (it can come back)
SMO_STEPS = 20000  # SMO steps per pass
RELAX_TOL = 1e-4  # relative agreement of primal value and dual bound at which a node's relaxation stops
REPAIR = 1e-3  # a pass's (w, b) missing a forced margin by at most this is scaled up to meet it (else value inf)


def top_sum(q: np.ndarray, k: int) -> float:
    """Sum of the ``k`` largest entries of ``q`` (0 for k <= 0)."""
    if k <= 0 or q.size == 0:
        return 0.0
    if k >= q.size:
        return float(q.sum())
    return float(np.partition(q, q.size - k)[q.size - k:].sum())


def k_support(a: np.ndarray, k: int) -> tuple[float, np.ndarray]:
    r""":math:`\rho_k` of the magnitudes ``a`` (>= 0) and its minimiser :math:`\sigma` (module docstring).

    ``k = 0``: :math:`\rho = 0` when every a is 0, else infinite (then :math:`\sigma = 0`).
    """
    a = np.ascontiguousarray(a, dtype=float)
    sigma = np.zeros(a.size)
    return _k_support(a, int(k), sigma), sigma


@njit(cache=True)
def _k_support(a, k, sigma):  # pragma: no cover - compiled
    nonzero = 0
    total = 0.0
    for f in range(a.size):
        if a[f] > 0.0:
            nonzero += 1
            total += a[f] * a[f]
    if nonzero == 0:
        return 0.0
    if k <= 0:
        return math.inf
    if nonzero <= k:
        for f in range(a.size):
            if a[f] > 0.0:
                sigma[f] = 1.0
        return total
    order = np.argsort(-a)
    s = a[order]
    tail = 0.0
    for f in range(s.size):
        tail += s[f]
    head = 0.0  # sum of squares of the r entries at sigma = 1
    for r in range(k):
        tau = tail / (k - r)
        if s[r] <= tau and (r == 0 or s[r - 1] > tau):
            for f in range(r):
                sigma[order[f]] = 1.0
            for f in range(r, s.size):
                sigma[order[f]] = s[f] / tau
            return head + tail * tau
        head += s[r] * s[r]
        tail -= s[r]
    return math.inf  # not reached: a split index always exists


@dataclass(frozen=True)
class Features:
    """A node's feature state: ``inside`` (on), ``outside`` (off), the rest free under ``budget`` = s - |inside|."""

    inside: np.ndarray  # bool mask
    outside: np.ndarray  # bool mask
    max_features: int

    @property
    def free(self) -> np.ndarray:
        return ~(self.inside | self.outside)

    @property
    def budget(self) -> int:
        return self.max_features - int(self.inside.sum())

    def settled(self) -> Features:
        """Propagated: budget 0 turns every free feature off; room for all free features turns them on."""
        free = self.free
        if self.budget <= 0:
            return Features(self.inside, self.outside | free, self.max_features)
        if free.sum() <= self.budget:
            return Features(self.inside | free, self.outside, self.max_features)
        return self


@dataclass(frozen=True)
class DualBound:
    """The bound :math:`R(\\alpha)` of a dual point and what the children's bounds need."""

    value: float
    sum_alpha: float  # 2 sum(alpha) after the drift correction
    u: np.ndarray  # sum_t alpha_t y_t x_t (every column)


def dual_bound(alpha: np.ndarray, y: np.ndarray, X: np.ndarray, rows: np.ndarray, features: Features) -> DualBound:
    r"""R(alpha) of the module docstring on the stacked rows ``X[rows]``.

    The rounding drift of :math:`\sum_t y_t \alpha_t` is removed first by
    scaling down the alphas of the heavier class (which stays in the box),
    as in :mod:`csvm_stats.optimization.svm_dual`.
    """
    a = alpha[rows]
    yr = y[rows]
    pos, neg = float(a[yr > 0].sum()), float(a[yr < 0].sum())
    scale = np.where(yr > 0, neg / pos if pos > neg else 1.0, pos / neg if neg > pos else 1.0)
    a = a * scale
    u = X[rows].T @ (a * yr)
    q = u * u
    value = 2.0 * float(a.sum()) - float(q[features.inside].sum()) - top_sum(q[features.free], features.budget)
    return DualBound(value, 2.0 * float(a.sum()), u)


def child_bounds(bound: DualBound, features: Features) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of the children ``f off`` and ``f on`` for every free f from one dual point (module docstring);
    entries outside F are ``nan``."""
    free = np.flatnonzero(features.free)
    k = features.budget
    off, on = np.full(features.inside.size, np.nan), np.full(features.inside.size, np.nan)
    q = bound.u[free] ** 2
    order = np.argsort(-q, kind="stable")
    rank = np.empty(free.size, dtype=int)
    rank[order] = np.arange(free.size)
    sorted_q = q[order]
    q_k = sorted_q[k - 1] if 0 < k <= free.size else 0.0  # the k-th largest
    q_k1 = sorted_q[k] if k < free.size else 0.0  # the (k+1)-th
    off[free] = bound.value + np.where(rank < k, q - q_k1, 0.0)
    on[free] = bound.value + np.where(rank >= k, q_k - q, 0.0)
    return off, on


@dataclass(frozen=True)
class Relaxed:
    """A node's relaxation: the best bound, the last primal point, sigma and the dual point."""

    bound: DualBound
    w: np.ndarray
    b: float
    value: float  # primal value of (w, b) in the relaxation (inf: a forced margin is missed by more than REPAIR)
    sigma: np.ndarray
    alpha: np.ndarray
    converged: bool


class PerspectiveRelaxation:
    """Solves node relaxations (module docstring) of one stacked sample ``[I; J]``.

    ``X`` stacked feature rows, ``y`` labels, ``upper`` the SMO box (``c_i / 2``
    on I, ``inf`` on the anchor rows), ``n_train`` the rows of I.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, upper: np.ndarray, n_train: int, cw: np.ndarray, tol: float):
        self.X, self.y, self.upper, self.n_train, self.cw, self.tol = X, y, upper, n_train, cw, tol
        self.smo_steps = 0

    def solve_sigma(self, sigma: np.ndarray, rows: np.ndarray, alpha0: np.ndarray | None,
                    tol: float | None = None) -> tuple[np.ndarray, float, np.ndarray, bool]:
        """The SVM with columns scaled by sqrt(sigma): ``(w, b, alpha, converged)`` in the original columns."""
        cols = np.flatnonzero(sigma > 0)
        scale = np.sqrt(sigma[cols])
        dual = SVMDual(self.X[:, cols] * scale, self.y, self.upper, None, self.tol if tol is None else tol)
        sol = dual.solve(rows, alpha0, SMO_STEPS)
        self.smo_steps += sol.steps
        w = np.zeros(self.X.shape[1])
        w[cols] = scale * sol.w
        return w, float(sol.b), sol.alpha, sol.converged

    def relax(self, features: Features, rows: np.ndarray, alpha0: np.ndarray | None, sigma0: np.ndarray | None,
              stop_value: float, rounds: int, rel_tol: float = RELAX_TOL) -> Relaxed:
        """Block coordinates from ``(alpha0, sigma0)`` until converged, pruned (bound >= ``stop_value``) or
        ``rounds`` passes; the bound returned is the best of the passes (each is valid). The passes run in one
        compiled loop (:func:`_relax_rounds`)."""
        free = features.free
        k = features.budget
        share = k / max(1, int(free.sum()))
        sigma = np.zeros(features.inside.size)
        sigma[features.inside] = 1.0
        if sigma0 is None:
            sigma[free] = share
        else:
            sigma[free] = np.clip(sigma0[free], SIGMA_FLOOR * share, 1.0)
        alpha = np.zeros(self.y.size) if alpha0 is None else alpha0.copy()
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        out = _relax_rounds(self.X, self.y, self.upper, self.cw, self.n_train, rows, alpha, sigma, free,
                            features.inside, k, SIGMA_FLOOR * share, float(stop_value), max(1, int(rounds)),
                            float(rel_tol), self.tol, SMO_STEPS, BLOCK_PERIOD)
        best_value, best_sum, best_u, w, b, value, fresh, converged, done, steps = out
        self.smo_steps += int(steps)
        sigma_out = sigma.copy()
        sigma_out[free] = fresh[free]
        return Relaxed(DualBound(float(best_value), float(best_sum), best_u), w, float(b), float(value), sigma_out,
                       alpha, bool(done))


@njit(cache=True)
def _relax_rounds(X, y, upper, cw, n_train, rows, alpha, sigma, free, inside, k, floor, stop_value, rounds, rel_tol,
                  tol, max_steps, block_period):  # pragma: no cover - compiled
    """The passes of :meth:`PerspectiveRelaxation.relax` (``alpha`` and ``sigma`` updated in place).

    Each pass: SMO on the columns scaled by sqrt(sigma)
    (:func:`~csvm_stats.optimization.svm_dual._smo_features`), the dual bound
    :func:`dual_bound` of the new alpha, the relaxation's value at its (w, b)
    and the closed-form sigma. A point missing a forced margin by
    m <= REPAIR is first scaled by 1 / (1 - m), which meets them all, so the
    value is that of a feasible point (an upper bound on the relaxation; inf
    beyond REPAIR). Returns ``(best bound, its 2 sum(alpha), its u, w, b,
    value, the last minimising sigma, SMO converged, relaxation converged,
    SMO steps)``.
    """
    n, p = X.shape
    cols = np.flatnonzero(sigma > 0.0)
    free_idx = np.flatnonzero(free)
    inside_idx = np.flatnonzero(inside)
    yr = y[rows]
    Xr = X[rows]
    best_value, best_sum, best_u = -np.inf, 0.0, np.zeros(p)
    w = np.zeros(p)
    b, value, converged, steps = 0.0, np.inf, False, 0
    fresh = np.zeros(p)
    for _ in range(rounds):
        scale = np.sqrt(sigma[cols])
        phi = np.ascontiguousarray(X[:, cols] * scale)
        sq = np.empty(n)
        for t in range(n):
            sq[t] = phi[t] @ phi[t]
        moved, gap = _smo_features(phi, y, upper, sq, alpha, rows, tol, max_steps, np.inf, block_period)
        steps += moved
        converged = gap <= tol
        ws, b, _ = _summary(phi, y, upper, alpha, rows)
        w = np.zeros(p)
        w[cols] = scale * ws
        # the dual bound (dual_bound: drift of sum y alpha removed by scaling the heavier class down)
        a = alpha[rows].copy()
        pos, neg = 0.0, 0.0
        for t in range(a.size):
            if yr[t] > 0:
                pos += a[t]
            else:
                neg += a[t]
        for t in range(a.size):
            if yr[t] > 0 and pos > neg:
                a[t] *= neg / pos
            elif yr[t] < 0 and neg > pos:
                a[t] *= pos / neg
        u = Xr.T @ (a * yr)
        q = u * u
        bound = 2.0 * a.sum() - q[inside_idx].sum()
        if k > 0 and free_idx.size > 0:
            qs = np.sort(q[free_idx])[::-1]
            bound -= qs[: min(k, qs.size)].sum()
        if bound > best_value:
            best_value, best_sum, best_u = bound, 2.0 * a.sum(), u
        # the primal value at (w, b) and the minimising sigma of the free columns
        fresh = np.zeros(p)
        af = np.abs(w[free_idx])
        sig_f = np.zeros(af.size)
        rho = _k_support(af, k, sig_f)
        fresh[free_idx] = sig_f
        miss = 0.0  # the largest miss of a forced margin
        for t in rows:
            if t >= n_train:
                miss = max(miss, 1.0 - y[t] * (X[t] @ w + b))
        value = np.inf
        if miss <= REPAIR:
            if miss > 0.0:  # (w, b) / (1 - miss) meets every forced margin
                w = w / (1.0 - miss)
                b = b / (1.0 - miss)
                rho /= (1.0 - miss) ** 2
            hinge = 0.0
            for t in range(n_train):
                hinge += cw[t] * max(0.0, 1.0 - y[t] * (X[t] @ w + b))
            value = w[inside_idx] @ w[inside_idx] + rho + hinge
        agree = converged and value - best_value <= rel_tol * max(abs(value), 1e-12)
        if best_value >= stop_value or agree:
            break
        for f in free_idx:
            sigma[f] = max(fresh[f], floor)
    done = converged and value - best_value <= rel_tol * max(abs(value), 1e-12)
    return best_value, best_sum, best_u, w, b, value, fresh, converged, done, steps

