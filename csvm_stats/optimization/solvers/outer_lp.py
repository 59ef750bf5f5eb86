r"""The node relaxation of a separable MIQP as a linear outer approximation, re-solved by HiGHS's dual simplex.

For an :class:`~csvm_stats.optimization.problem.MIQP` with diagonal
:math:`Q = \mathrm{diag}(q)` the relaxation of a node (binaries continuous in
:math:`[0, 1]` except the fixed ones) is

.. math::

    \min\; \sum_{k: q_k > 0} q_k t_k + c^\top x \quad\text{s.t.}\quad
    \ell \le Ax \le u,\; x_{lo} \le x \le x_{hi},\;
    t_k \ge 2 a x_k - a^2\ (a \in \mathcal{A}_k).

Each row in :math:`t_k` is a tangent of the convex :math:`x_k^2` at a point
a, so the linear program is a relaxation of the quadratic one and its optimum
is a lower bound of the node **whatever cuts it holds** (an outer
approximation). The loop of :meth:`OuterLP.solve` adds the tangents at the
LP's own point until the true objective there, :math:`x^\top Qx + c^\top x`,
is within a tolerance of the LP value (Kelley's cutting planes on a separable
function: each round removes the LP's point). The epigraphs are in the units
of :math:`x_k^2`, not of the objective: the LP meets a row only to an absolute
tolerance (1e-7), and on a tiny objective (SRBCT: 0.009 over 248 coordinates)
that tolerance on :math:`q_k x_k^2` would be a large share of the gap. Cuts are valid for every node,
so they are kept for the whole search, and the dual simplex re-solves a node
from the previous basis after the bounds change.

Indicator constraints (:attr:`MIQP.indicators`, rows without a proven big-M)
enter as rows that :meth:`OuterLP.set_indicators` switches on
(:math:`a^\top x \ge r`) for binaries fixed at one and off (no lower end)
otherwise: a relaxation of the node either way.

A *linear* objective (Q = 0, the L1-norm CSVM of
:mod:`~csvm_stats.optimization.solvers.bnb_l1`) has no epigraph columns and
no cut loop: one LP per call, and a finite ``stop_value`` is handed to the dual
simplex as its objective bound, so a node whose LP value reaches it stops
early (the dual simplex's objective only rises, so the LP's optimum is at
least the bound: a valid prune). :meth:`OuterLP.set_entries` and
:meth:`OuterLP.set_row_lower` change matrix entries and row bounds in place
(the big-M constants the L1 search tightens from its incumbents).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from csvm_stats.optimization.problem import MIQP
from csvm_stats.optimization.solvers._common import INF
from csvm_stats.optimization.solvers.highs import _highs_version, _import_highs, quiet_model, set_colwise_matrix

CUT_SHARE = 0.1  # the tangents left out in a round may undercut the objective by this share of the tolerance in all


def _finite(v: np.ndarray) -> np.ndarray:
    """HiGHS's infinity for infinite entries."""
    return np.where(np.isfinite(v), v, np.sign(v) * INF)


@dataclass(frozen=True)
class LPPoint:
    """A solved node relaxation: ``value`` (lower bound), ``x`` (the MIQP's variables), ``true`` (its objective)
    and the reduced costs of the binaries. ``infeasible``: the node has no point; ``x is None`` otherwise: HiGHS
    stopped without an optimal LP (``value`` is then ``-inf``)."""

    infeasible: bool
    value: float
    x: np.ndarray | None
    true: float
    reduced: np.ndarray | None


class OuterLP:
    """One HiGHS LP for the whole search: the MIQP's rows, epigraph columns, the tangent pool and indicator rows."""

    def __init__(self, problem: MIQP, threads: int | None = None) -> None:
        if not problem.separable:
            raise ValueError("the outer approximation needs a diagonal Q.")
        highs = _import_highs()
        _highs_version()  # the first instance of the process is made quietly
        self.problem = problem
        q = problem.Q.diagonal()
        self.quad = np.flatnonzero(q > 0)
        self.q = q[self.quad]
        n, nq = problem.n_vars, self.quad.size
        self.n = n
        A, lo, hi = problem.A, problem.row_lo, problem.row_hi
        ind = problem.indicators
        self.n_base = A.shape[0]
        if ind is not None:
            A = sp.vstack([A, ind.A]).tocsr()
            lo = np.r_[lo, np.full(ind.rhs.size, -np.inf)]
            hi = np.r_[hi, np.full(ind.rhs.size, np.inf)]
        lp = highs.HighsLp()
        Ac = sp.hstack([A, sp.csr_matrix((A.shape[0], nq))]).tocsc()
        lp.num_col_, lp.num_row_ = n + nq, A.shape[0]
        cost = np.r_[problem.c.astype(float), np.ones(nq)]
        cost[self.quad] = 0.0
        cost[n:] = self.q
        lp.col_cost_ = cost
        reach = np.maximum(problem.lb[self.quad] ** 2, problem.ub[self.quad] ** 2)
        lp.col_lower_ = np.r_[_finite(problem.lb), np.zeros(nq)]
        lp.col_upper_ = np.r_[_finite(problem.ub), _finite(reach)]
        lp.row_lower_, lp.row_upper_ = _finite(lo), _finite(hi)
        set_colwise_matrix(highs, lp, Ac)
        model = quiet_model(highs, lp, threads)
        self.model, self.highs = model, highs
        self.indicator_on = np.zeros(0 if ind is None else ind.rhs.size, dtype=bool)
        self.cuts = 0
        self.lp_solves = 0
        self.time_left: Callable[[], float] | None = None  # seconds the search has left (set by the search)
        for point in (*problem.tangent_points, np.zeros(n)):
            self.add_cuts(point)

    def add_cuts(self, x: np.ndarray, only_violated_by: np.ndarray | None = None) -> int:
        """Tangents of every :math:`x_k^2` at ``x`` (only where ``only_violated_by`` is True, if given)."""
        keep = np.ones(self.quad.size, dtype=bool) if only_violated_by is None else only_violated_by
        k = int(keep.sum())
        if k == 0:
            return 0
        a, cols = x[self.quad][keep], self.quad[keep]
        index = np.column_stack([self.n + np.flatnonzero(keep), cols]).ravel().astype(np.int32)
        value = np.column_stack([np.ones(k), -2.0 * a]).ravel()
        self.model.addRows(k, -a * a, np.full(k, INF), index.size, (2 * np.arange(k)).astype(np.int32), index,
                           value)
        self.cuts += k
        return k

    def set_bounds(self, columns: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
        """Bounds of some of the MIQP's columns (a node's fixings)."""
        if columns.size:
            self.model.changeColsBounds(columns.size, columns.astype(np.int32), lower.astype(float),
                                        upper.astype(float))

    def set_indicators(self, on: np.ndarray) -> None:
        """Switch indicator row k on (``on[k]``: its binary is fixed at one) or off."""
        ind = self.problem.indicators
        changed = np.flatnonzero(on != self.indicator_on)
        if ind is None or changed.size == 0:
            return
        rows = (self.n_base + changed).astype(np.int32)
        lower = np.where(on[changed], ind.rhs[changed], -INF)
        self.model.changeRowsBounds(rows.size, rows, lower, np.full(rows.size, INF))
        self.indicator_on = on.copy()

    def set_entries(self, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> None:
        """Set the matrix entries ``(rows[k], cols[k])`` to ``values[k]`` (rows of the MIQP's A, then the
        indicator rows)."""
        for r, c, v in zip(rows, cols, values):
            self.model.changeCoeff(int(r), int(c), float(v))

    def set_row_lower(self, rows: np.ndarray, lower: np.ndarray) -> None:
        """Lower ends of some rows (upper ends: none); ``-inf`` switches a row off."""
        if rows.size:
            self.model.changeRowsBounds(rows.size, rows.astype(np.int32), _finite(lower.astype(float)),
                                        np.full(rows.size, INF))

    def add_column(self, lower: float, upper: float) -> int:
        """A new column without cost or entries (linear objective only: the epigraph columns follow the
        MIQP's); its index. The LP's points keep the MIQP's variables only."""
        if self.quad.size:
            raise ValueError("extra columns are for a linear objective only.")
        self.model.addCol(0.0, float(_finite(np.array([lower]))[0]), float(_finite(np.array([upper]))[0]), 0,
                          np.zeros(0, dtype=np.int32), np.zeros(0))
        return self.model.getNumCol() - 1

    def add_rows(self, rows: sp.csr_matrix, lower: np.ndarray, upper: np.ndarray) -> None:
        """Rows over the LP's columns, kept for the whole search (valid inequalities of every node)."""
        rows = rows.tocsr()
        self.model.addRows(rows.shape[0], _finite(lower.astype(float)), _finite(upper.astype(float)), rows.nnz,
                           rows.indptr[:-1].astype(np.int32), rows.indices.astype(np.int32),
                           rows.data.astype(float))

    def _run(self) -> None:
        """One HiGHS run, limited to the time the search has left: HiGHS's limit counts wall seconds, at least the
        CPU seconds of this process, so it never lets a CPU-clock search overrun either (a stopped run returns no
        point, and the search's own clock check ends it). HiGHS compares its limit with the model's total run time
        over every run, so the limit is that total plus the time left."""
        if self.time_left is not None:
            left = max(float(self.time_left()), 1e-3)
            self.model.setOptionValue("time_limit", float(self.model.getRunTime()) + left)
        self.model.run()

    def _solve_linear(self, stop_value: float) -> LPPoint:
        """One LP (no epigraphs); with a finite ``stop_value`` the dual simplex stops once its objective reaches
        it (an infeasible-looking point: ``value`` = ``stop_value``, ``x`` None)."""
        status = self.highs.HighsModelStatus
        self.model.setOptionValue("objective_bound", float(stop_value) if math.isfinite(stop_value) else INF)
        self._run()
        self.lp_solves += 1
        code = self.model.getModelStatus()
        if code in (status.kInfeasible, status.kUnboundedOrInfeasible):
            return LPPoint(True, math.inf, None, math.inf, None)
        if code == status.kObjectiveBound:
            return LPPoint(False, float(stop_value), None, math.inf, None)
        if code != status.kOptimal:
            return LPPoint(False, -math.inf, None, math.inf, None)
        solution = self.model.getSolution()
        x = np.asarray(solution.col_value)[: self.n]
        value = float(self.model.getInfo().objective_function_value)
        return LPPoint(False, value, x, value, np.asarray(solution.col_dual)[self.problem.binary])

    def solve(self, tol: float, rounds: int, stop_value: float = math.inf) -> LPPoint:
        """Cutting-plane rounds: until the true objective at the LP's point is within ``tol`` of the LP value,
        the LP value reaches ``stop_value`` (the node is pruned), or ``rounds`` LPs were solved. A linear
        objective takes one LP (module docstring)."""
        if self.quad.size == 0:
            return self._solve_linear(stop_value)
        status = self.highs.HighsModelStatus
        point = LPPoint(False, -math.inf, None, math.inf, None)
        for _ in range(max(1, rounds)):
            self._run()
            self.lp_solves += 1
            code = self.model.getModelStatus()
            if code in (status.kInfeasible, status.kUnboundedOrInfeasible):
                return LPPoint(True, math.inf, None, math.inf, None)
            if code != status.kOptimal:
                return point  # numerical trouble: the last proven value (or none)
            solution = self.model.getSolution()
            values = np.asarray(solution.col_value)
            x, t = values[: self.n], values[self.n:]
            value = float(self.model.getInfo().objective_function_value)
            true = self.problem.objective(x)
            reduced = np.asarray(solution.col_dual)[self.problem.binary]
            point = LPPoint(False, value, x, true, reduced)
            if value >= stop_value or true - value <= tol:
                return point
            under = self.q * (x[self.quad] ** 2 - t)  # in objective units
            if self.add_cuts(x, under > CUT_SHARE * tol / self.quad.size) == 0:
                return point
        return point
