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
passes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from csvm_stats.optimization.svm_dual import SVMDual

SIGMA_FLOOR = 1e-3  # a free column keeps sigma >= this times k / |F| (it can come back)
SMO_STEPS = 20000  # SMO steps per pass
RELAX_TOL = 1e-4  # relative agreement of primal value and dual bound at which a node's relaxation stops


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
    value: float  # primal value of (w, b) in the relaxation (inf: a forced margin is missed)
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

    def primal_value(self, w: np.ndarray, b: float, features: Features, rows: np.ndarray) -> tuple[float, np.ndarray]:
        """The relaxation's objective at (w, b) (inf when a forced anchor margin is missed by more than 1e-6) and
        the minimising sigma of the free columns."""
        rho, sigma = k_support(np.abs(w[features.free]), features.budget)
        anchors = rows[rows >= self.n_train]
        if anchors.size and np.min(self.y[anchors] * (self.X[anchors] @ w + b)) < 1.0 - 1e-6:
            return math.inf, sigma
        margins = self.y[: self.n_train] * (self.X[: self.n_train] @ w + b)
        hinge = float(self.cw @ np.maximum(0.0, 1.0 - margins))
        return float(w[features.inside] @ w[features.inside]) + rho + hinge, sigma

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
        ``rounds`` passes; the bound returned is the best of the passes (each is valid)."""
        free = features.free
        k = features.budget
        share = k / max(1, int(free.sum()))
        sigma = np.zeros(features.inside.size)
        sigma[features.inside] = 1.0
        if sigma0 is None:
            sigma[free] = share
        else:
            sigma[free] = np.clip(sigma0[free], SIGMA_FLOOR * share, 1.0)
        best, alpha, point = None, alpha0, None
        for _ in range(max(1, rounds)):
            w, b, alpha, converged = self.solve_sigma(sigma, rows, alpha)
            bound = dual_bound(alpha, self.y, self.X, rows, features)
            if best is None or bound.value > best.value:
                best = bound
            value, fresh = self.primal_value(w, b, features, rows)
            point = (w, b, value, converged, fresh)
            if best.value >= stop_value or (converged and value - best.value <= rel_tol * max(abs(value), 1e-12)):
                break
            sigma[free] = np.maximum(fresh, SIGMA_FLOOR * share)
        w, b, value, converged, fresh = point
        done = converged and value - best.value <= rel_tol * max(abs(value), 1e-12)
        sigma_out = sigma.copy()
        sigma_out[free] = fresh
        return Relaxed(best, w, b, value, sigma_out, alpha, done)
