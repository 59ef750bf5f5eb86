"""SCIP backend through PySCIPOpt (open source; always available; the default).

SCIP takes no quadratic objective, so :math:`x^\\top Q x` moves into the
constraints through epigraph variables. For a diagonal Q (the primal CSVM)
each quadratic variable gets its own epigraph, :math:`t_k \\ge x_k^2`, and the
objective is :math:`\\sum_k Q_{kk} t_k + c^\\top x`: SCIP separates each
one-dimensional convex constraint with gradient cuts, which gives a tighter
relaxation than a single epigraph of the whole sum. A non-diagonal Q (the
partial dual) gets one epigraph :math:`t \\ge x^\\top Q x`. A variable with a
:attr:`~csvm_stats.optimization.problem.MIQP.perspective` binary v gets the
perspective :math:`x_k^2 \\le t_k v` (a rotated cone) instead, and its cuts are
the perspective cuts :math:`t_k \\ge 2 a x_k - a^2 v`.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from csvm_stats.exceptions import SolverUnavailableError
from csvm_stats.optimization.problem import MIQP
from csvm_stats.optimization.solvers.scip_tangents import make_tangent_handler
from csvm_stats.optimization.solvers._common import (
    Stopwatch, epigraph_scaled, epigraph_unscaled, finite_or_none, perspective_partners, solve_record, sparse_rows,
    time_left,
)
from csvm_stats.optimization.solvers.base import Solution, SolverOptions, Status

_STATUS = {
    "optimal": Status.OPTIMAL,
    "gaplimit": Status.OPTIMAL,  # stopped at the requested relative gap
    "infeasible": Status.INFEASIBLE,
    "inforunbd": Status.INFEASIBLE,
    "timelimit": Status.TIME_LIMIT,
    "nodelimit": Status.TIME_LIMIT,
    "userinterrupt": Status.INTERRUPTED,  # Ctrl-C: SCIP's own SIGINT handler stopped the solve
    "memlimit": Status.TIME_LIMIT,
    "sollimit": Status.TIME_LIMIT,
    "bestsollimit": Status.TIME_LIMIT,
    "stallnodelimit": Status.TIME_LIMIT,
    "totalnodelimit": Status.TIME_LIMIT,
}


FORMULATIONS: tuple[str, ...] = ("tangents", "nonlinear")
NLP_HEURISTICS: tuple[str, ...] = ("subnlp", "nlpdiving", "mpec", "undercover", "multistart")
BUILD_CHECK = 1000  # rows added between two looks at the clock while the model is built


def _import_scip():
    try:
        import pyscipopt
    except ImportError as err:  # pragma: no cover - pyscipopt is a hard dependency
        raise SolverUnavailableError(
            "the SCIP backend needs PySCIPOpt: pip install pyscipopt"
        ) from err
    return pyscipopt


@cache
def _scip_version() -> str:
    """SCIP's and PySCIPOpt's versions (a SCIP model is created once to ask)."""
    scip = _import_scip()
    return f"SCIP {scip.Model().version()} (PySCIPOpt {scip.__version__})"


class ScipBackend:
    """Solve an :class:`~csvm_stats.optimization.problem.MIQP` with SCIP.

    ``formulation`` is ``"nonlinear"`` or ``"tangents"`` (module docstring);
    ``params`` are SCIP parameters set after ours, e.g.
    ``{"timing/clocktype": 1}`` to measure the time limit in CPU seconds.
    """

    name = "scip"

    def __init__(self, formulation: str = "nonlinear", params: dict | None = None) -> None:
        if formulation not in FORMULATIONS:
            raise ValueError(f"formulation must be one of {FORMULATIONS}, got {formulation!r}.")
        self.formulation = formulation
        self.params = dict(params or {})

    def available(self) -> bool:
        try:
            _import_scip()
        except SolverUnavailableError:
            return False
        return True

    def version(self) -> str:
        return _scip_version()

    def solve(self, problem: MIQP, options: SolverOptions) -> Solution:
        scaled, factors = epigraph_scaled(problem, options)  # the epigraphs' tolerance stays relative
        return epigraph_unscaled(problem, self._solve(scaled, options), factors)

    def _solve(self, problem: MIQP, options: SolverOptions) -> Solution:
        scip = _import_scip()
        watch = Stopwatch()
        model = scip.Model()
        if not options.verbose:
            model.hideOutput()
        if options.clock == "cpu":
            model.setParam("timing/clocktype", 1)
        model.setParam("limits/gap", float(options.mip_gap))
        model.setParam("numerics/feastol", float(options.feasibility_tol))
        model.setParam("randomization/randomseedshift", int(options.seed))
        if options.threads is not None:
            model.setParam("parallel/maxnthreads", int(options.threads))
        # SCIP's NLP-based primal heuristics (subnlp, nlpdiving, ...) call Ipopt at
        # many nodes and dominated the run time on the CSVM (measured: 5-60 s
        # against under 1.5 s without them on Wisconsin). With a warm start the
        # incumbent is already good, so all heuristics are switched off; without
        # one only the NLP-based ones are.
        if problem.start is not None:
            model.setHeuristics(scip.SCIP_PARAMSETTING.OFF)
        else:
            for heuristic in NLP_HEURISTICS:
                model.setParam(f"heuristics/{heuristic}/freq", -1)
        # Pseudo-cost branching instead of reliability (strong) branching: strong
        # branching re-solves the nonlinear relaxation per candidate and cost
        # more than it saved here (measured: 8.5 s against 14.5 s over six
        # Wisconsin problems).
        model.setParam("branching/pscost/priority", 100000)
        for key, value in self.params.items():
            model.setParam(key, value)

        is_binary = np.zeros(problem.n_vars, dtype=bool)
        is_binary[problem.binary] = True
        x = [
            model.addVar(
                vtype="B" if is_binary[k] else "C",
                lb=finite_or_none(problem.lb[k]),
                ub=finite_or_none(problem.ub[k]),
                obj=float(problem.c[k]),
            )
            for k in range(problem.n_vars)
        ]
        if not self._add_rows(model, problem, x, watch, options):
            wall, cpu = watch.elapsed()  # the limit ran out while the model was built: no solve
            record = solve_record(problem, None, Status.NO_SOLUTION, -math.inf, (wall, cpu), 0, backend=self.name,
                                  backend_version=self.version(), formulation="(model not built: time limit)",
                                  message="the time limit ran out while the SCIP model was built")
            return Solution(record, None)
        epigraph = self._add_epigraph(model, problem, x, options)

        if problem.start is not None:
            sol = model.createSol()
            for k, v in enumerate(problem.start):
                model.setSolVal(sol, x[k], float(v))
            for t, value in epigraph.start_values(problem.start):
                model.setSolVal(sol, t, value)
            model.addSol(sol, free=True)

        model.setParam("limits/time", time_left(watch, options))  # the build above counted against the limit
        model.optimize()
        wall, cpu = watch.elapsed()
        status = _STATUS.get(model.getStatus(), Status.ERROR)
        has_sol = model.getNSols() > 0
        if status is Status.TIME_LIMIT and not has_sol:
            status = Status.NO_SOLUTION
        values = np.array([model.getVal(v) for v in x]) if has_sol and status.has_solution else None
        bound = float(model.getDualbound()) if status is not Status.INFEASIBLE else math.nan
        record = solve_record(
            problem, values, status, bound, (wall, cpu), int(model.getNNodes()), backend=self.name,
            backend_version=self.version(), formulation=epigraph.description, message=model.getStatus(),
        )
        return Solution(record, values)

    @staticmethod
    def _add_rows(model, problem: MIQP, x: list, watch: Stopwatch, options: SolverOptions) -> bool:
        """Add the rows and indicator constraints; ``False`` when the time limit ran out first (checked every
        BUILD_CHECK rows: building a model of 10^5 rows in Python takes seconds)."""
        scip = _import_scip()
        for r, ((cols, vals), lo, hi) in enumerate(zip(sparse_rows(problem.A), problem.row_lo, problem.row_hi)):
            if r % BUILD_CHECK == 0 and time_left(watch, options) <= 0:
                return False
            expr = scip.quicksum(float(v) * x[c] for c, v in zip(cols, vals))
            if lo == hi:
                model.addCons(expr == float(lo))
                continue
            if np.isfinite(lo):
                model.addCons(expr >= float(lo))
            if np.isfinite(hi):
                model.addCons(expr <= float(hi))
        ind = problem.indicators
        if ind is not None:
            for k, (cols, vals) in enumerate(sparse_rows(ind.A)):
                expr = scip.quicksum(float(v) * x[c] for c, v in zip(cols, vals))
                model.addConsIndicator(expr >= float(ind.rhs[k]), binvar=x[int(ind.binary[k])])
        return True

    def _add_epigraph(self, model, problem: MIQP, x: list, options: SolverOptions) -> "_Epigraph":
        scip = _import_scip()
        Q = problem.Q.tocoo()
        if problem.separable and self.formulation == "tangents":
            keep = Q.data != 0
            idx, q = Q.row[keep], Q.data[keep]
            ts = [model.addVar(lb=0.0, obj=float(qk)) for qk in q]
            xs = [x[int(k)] for k in idx]
            vs = [None if v is None else x[v] for v in perspective_partners(problem, idx)]
            handler = make_tangent_handler(scip, xs, ts, 2.0 * options.feasibility_tol, vs)()
            model.includeConshdlr(
                handler, "csvm_tangents", "t_k >= x_k^2 by tangent cuts", sepapriority=1, enfopriority=-1,
                chckpriority=-1, sepafreq=1, propfreq=-1, eagerfreq=-1, maxprerounds=0, needscons=True,
            )
            model.addPyCons(model.createCons(handler, "tangents", propagate=False))
            _add_tangents(model, problem, x, ts, idx)
            return _Epigraph(ts, [lambda s, k=int(k): s[k] ** 2 for k in idx],
                             "linear outer approximation (tangent cuts" + _perspective_note(problem) + ")")
        if problem.separable:
            keep = Q.data != 0
            idx, q = Q.row[keep], Q.data[keep]
            ts = [model.addVar(lb=0.0, obj=float(qk)) for qk in q]
            for t, k, v in zip(ts, idx, perspective_partners(problem, idx)):
                model.addCons(x[int(k)] * x[int(k)] <= (t if v is None else t * x[v]))
            _add_tangents(model, problem, x, ts, idx)
            return _Epigraph(ts, [lambda s, k=int(k): s[k] ** 2 for k in idx],
                             "epigraph per coordinate (t_k >= w_k^2" + _perspective_note(problem) + ")")
        t = model.addVar(lb=0.0, obj=1.0)
        quad = scip.quicksum(float(v) * x[int(i)] * x[int(j)] for i, j, v in zip(Q.row, Q.col, Q.data))
        model.addCons(quad <= t)
        return _Epigraph([t], [lambda s: float(s @ (problem.Q @ s))], "single epigraph (t >= x'Qx)")


def _perspective_note(problem: MIQP) -> str:
    """``"; perspective for N pairs"`` when the problem carries perspective pairs, else ``""`` (for the record)."""
    return "" if problem.perspective is None else f"; perspective t_k v >= x_k^2 for {len(problem.perspective)} pairs"


def _add_tangents(model, problem: MIQP, x: list, ts: list, idx: np.ndarray) -> None:
    """Tangent cuts t_k >= 2 a_k x_k - a_k^2 (perspective: - a_k^2 v) at the problem's tangent points (all valid)."""
    partners = perspective_partners(problem, idx)
    for point in problem.tangent_points:
        for t, k, v in zip(ts, idx, partners):
            a = float(point[int(k)])
            if v is None:
                model.addCons(t - 2.0 * a * x[int(k)] >= -a * a)
            else:
                model.addCons(t - 2.0 * a * x[int(k)] + a * a * x[v] >= 0.0)


class _Epigraph:
    """Epigraph variables and how to compute their values at a start point."""

    def __init__(self, variables: list, values, description: str) -> None:
        self.variables = variables
        self.values = values
        self.description = description

    def start_values(self, start: np.ndarray):
        for t, f in zip(self.variables, self.values):
            yield t, float(f(start))
