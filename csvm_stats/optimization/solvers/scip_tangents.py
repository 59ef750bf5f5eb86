r"""A SCIP constraint handler for :math:`t_k \ge x_k^2` by tangent cuts only.

SCIP's own nonlinear handler keeps :math:`t_k \ge x_k^2` as nonlinear
constraints and re-separates them with its full machinery, which on a dense
kernel CSVM made every LP round take seconds. This handler keeps the LP
relaxation linear: it enforces and separates the epigraphs with tangent cuts
:math:`t_k \ge 2 a x_k - a^2`, valid for every a and exact at :math:`x_k = a`,
as Gurobi's lazy constraints do in :mod:`csvm_stats.optimization.solvers.gurobi`. A
solution is accepted when :math:`x_k^2 - t_k \le \tau \max(1, x_k^2)`.
"""

from __future__ import annotations

import numpy as np

MAX_CUTS_PER_ROUND = 50


def make_tangent_handler(scip, x_vars: list, t_vars: list, tol: float):
    """Build the handler class around the variables (PySCIPOpt needs a subclass)."""

    class TangentCuts(scip.Conshdlr):
        n_cuts = 0

        def _values(self, solution=None) -> tuple[np.ndarray, np.ndarray]:
            model = self.model
            xv = np.array([model.getSolVal(solution, v) for v in x_vars])
            tv = np.array([model.getSolVal(solution, v) for v in t_vars])
            return xv, tv

        @staticmethod
        def _violated(xv: np.ndarray, tv: np.ndarray, threshold: float) -> np.ndarray:
            excess = xv * xv - tv
            scale = np.maximum(1.0, xv * xv)
            idx = np.flatnonzero(excess > threshold * scale)
            return idx[np.argsort(-excess[idx] / scale[idx])][:MAX_CUTS_PER_ROUND]

        def _add_cuts(self, xv: np.ndarray, idx: np.ndarray, as_rows: bool) -> None:
            model = self.model
            for k in idx:
                a = float(xv[k])
                if as_rows:  # a separating cut in the LP (global, removable)
                    row = model.createEmptyRowUnspec(lhs=-a * a, rhs=None, local=False, removable=True)
                    model.cacheRowExtensions(row)
                    model.addVarToRow(row, t_vars[k], 1.0)
                    model.addVarToRow(row, x_vars[k], -2.0 * a)
                    model.flushRowExtensions(row)
                    model.addCut(row, forcecut=True)
                    model.releaseRow(row)
                else:  # enforcement: a permanent linear constraint
                    model.addCons(t_vars[k] - 2.0 * a * x_vars[k] >= -a * a, removable=False)
                TangentCuts.n_cuts += 1

        def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason, completely):
            xv, tv = self._values(solution)
            ok = self._violated(xv, tv, tol).size == 0
            return {"result": scip.SCIP_RESULT.FEASIBLE if ok else scip.SCIP_RESULT.INFEASIBLE}

        def _enforce(self) -> dict:
            xv, tv = self._values()
            idx = self._violated(xv, tv, tol)
            if idx.size == 0:
                return {"result": scip.SCIP_RESULT.FEASIBLE}
            self._add_cuts(xv, idx, as_rows=False)
            return {"result": scip.SCIP_RESULT.CONSADDED}

        def consenfolp(self, constraints, nusefulconss, solinfeasible):
            return self._enforce()

        def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
            return self._enforce()

        def conssepalp(self, constraints, nusefulconss):
            xv, tv = self._values()
            idx = self._violated(xv, tv, max(tol, 1e-6))
            if idx.size == 0:
                return {"result": scip.SCIP_RESULT.DIDNOTFIND}
            self._add_cuts(xv, idx, as_rows=True)
            return {"result": scip.SCIP_RESULT.SEPARATED}

        def conslock(self, constraint, locktype, nlockspos, nlocksneg):
            for v in x_vars:
                self.model.addVarLocks(v, nlockspos + nlocksneg, nlockspos + nlocksneg)
            for v in t_vars:  # lowering t can violate t >= x^2
                self.model.addVarLocks(v, nlockspos, nlocksneg)

    return TangentCuts
