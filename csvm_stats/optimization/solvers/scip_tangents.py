r"""A SCIP constraint handler for :math:`t_k \ge x_k^2` by tangent cuts only.

SCIP's own nonlinear handler keeps :math:`t_k \ge x_k^2` as nonlinear
constraints and re-separates them with its full machinery, which on a dense
kernel CSVM made every LP round take seconds. This handler keeps the LP
relaxation linear: it enforces and separates the epigraphs with tangent cuts
:math:`t_k \ge 2 a x_k - a^2`, valid for every a and exact at :math:`x_k = a`,
as Gurobi's lazy constraints do in :mod:`csvm_stats.optimization.solvers.gurobi`. A
solution is accepted when :math:`x_k^2 - t_k \le \tau \max(1, x_k^2)`.

A variable with a perspective binary v (``x_k = 0`` when ``v = 0``) gets the
perspective cuts :math:`t_k \ge 2 a x_k - a^2 v` with :math:`a = x_k / v`
at a point with :math:`v > 0`: they separate :math:`t_k v \ge x_k^2`, whose
integer points are those of :math:`t_k \ge x_k^2`.
"""

from __future__ import annotations

import numpy as np

MAX_CUTS_PER_ROUND = 50
PERSPECTIVE_MIN = 1e-6  # smallest v at which a perspective cut is formed (a = x / v)


def make_tangent_handler(scip, x_vars: list, t_vars: list, tol: float, v_vars: list | None = None):
    """Build the handler class around the variables (PySCIPOpt needs a subclass).

    ``v_vars[k]`` is the perspective binary of ``x_vars[k]`` or ``None``.
    """
    v_vars = list(v_vars) if v_vars is not None else [None] * len(x_vars)
    has_v = np.array([v is not None for v in v_vars], dtype=bool)

    class TangentCuts(scip.Conshdlr):
        n_cuts = 0

        def _values(self, solution=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            model = self.model
            xv = np.array([model.getSolVal(solution, v) for v in x_vars])
            tv = np.array([model.getSolVal(solution, v) for v in t_vars])
            vv = np.array([model.getSolVal(solution, v) if v is not None else 1.0 for v in v_vars])
            # a perspective point needs v > 0; near 0 the plain tangent (v taken as 1) is used
            vv = np.where(has_v & (vv > PERSPECTIVE_MIN), vv, 1.0)
            return xv, tv, vv

        @staticmethod
        def _violated(xv: np.ndarray, tv: np.ndarray, vv: np.ndarray, threshold: float) -> np.ndarray:
            square = xv * xv / vv
            excess = square - tv
            scale = np.maximum(1.0, square)
            idx = np.flatnonzero(excess > threshold * scale)
            return idx[np.argsort(-excess[idx] / scale[idx])][:MAX_CUTS_PER_ROUND]

        def _add_cuts(self, xv: np.ndarray, vv: np.ndarray, idx: np.ndarray, as_rows: bool) -> None:
            model = self.model
            for k in idx:
                a = float(xv[k] / vv[k])
                perspective = v_vars[k] is not None  # valid for every a, and stronger than the tangent
                if as_rows:  # a separating cut in the LP (global, removable)
                    row = model.createEmptyRowUnspec(lhs=0.0 if perspective else -a * a, rhs=None, local=False, removable=True)
                    model.cacheRowExtensions(row)
                    model.addVarToRow(row, t_vars[k], 1.0)
                    model.addVarToRow(row, x_vars[k], -2.0 * a)
                    if perspective:
                        model.addVarToRow(row, v_vars[k], a * a)
                    model.flushRowExtensions(row)
                    model.addCut(row, forcecut=True)
                    model.releaseRow(row)
                elif perspective:  # enforcement: a permanent linear constraint
                    model.addCons(t_vars[k] - 2.0 * a * x_vars[k] + a * a * v_vars[k] >= 0.0, removable=False)
                else:
                    model.addCons(t_vars[k] - 2.0 * a * x_vars[k] >= -a * a, removable=False)
                TangentCuts.n_cuts += 1

        def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason, completely):
            xv, tv, _ = self._values(solution)
            ok = self._violated(xv, tv, np.ones_like(xv), tol).size == 0  # the model itself: t_k >= x_k^2
            return {"result": scip.SCIP_RESULT.FEASIBLE if ok else scip.SCIP_RESULT.INFEASIBLE}

        def _enforce(self) -> dict:
            xv, tv, vv = self._values()
            idx = self._violated(xv, tv, np.ones_like(xv), tol)
            if idx.size == 0:
                return {"result": scip.SCIP_RESULT.FEASIBLE}
            self._add_cuts(xv, vv, idx, as_rows=False)
            return {"result": scip.SCIP_RESULT.CONSADDED}

        def consenfolp(self, constraints, nusefulconss, solinfeasible):
            return self._enforce()

        def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
            return self._enforce()

        def conssepalp(self, constraints, nusefulconss):
            xv, tv, vv = self._values()
            idx = self._violated(xv, tv, vv, max(tol, 1e-6))
            if idx.size == 0:
                return {"result": scip.SCIP_RESULT.DIDNOTFIND}
            self._add_cuts(xv, vv, idx, as_rows=True)
            return {"result": scip.SCIP_RESULT.SEPARATED}

        def conslock(self, constraint, locktype, nlockspos, nlocksneg):
            for v in x_vars:
                self.model.addVarLocks(v, nlockspos + nlocksneg, nlockspos + nlocksneg)
            for v in t_vars:  # lowering t can violate t >= x^2
                self.model.addVarLocks(v, nlockspos, nlocksneg)
            for v in v_vars:  # the perspective cuts' binaries (lowering v tightens t v >= x^2)
                if v is not None:
                    self.model.addVarLocks(v, nlockspos, nlocksneg)

    return TangentCuts
