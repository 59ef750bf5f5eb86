r"""Gurobi backend through gurobipy, in two formulations.

``miqp``
    The MIQP as stated: quadratic objective :math:`x^\top Q x + c^\top x`.
``oa``
    Outer approximation for a diagonal Q: each quadratic variable gets an
    epigraph :math:`t_k \ge x_k^2`, represented only by tangent cuts
    :math:`t_k \ge 2 a x_k - a^2`, which are valid for every a. The model is
    therefore linear; cuts are added lazily at every incumbent candidate that
    violates :math:`t_k \ge x_k^2` (so an accepted solution is feasible for the
    true problem up to the cut tolerance) and as user cuts at fractional nodes.
    Its best bound is a valid lower bound of the true objective.

A variable with a :attr:`~csvm_stats.optimization.problem.MIQP.perspective`
binary v gets, in ``oa``, the perspective cuts :math:`t_k \ge 2 a x_k - a^2 v`
(:math:`a = x_k / v` at a node with v > 0) and, in ``miqp``, the rotated cone
:math:`x_k^2 \le t_k v` in place of its objective term.

The pip licence of gurobipy allows at most 200 variables once the objective is
quadratic and 2000 variables or constraints for a linear model; the licence
error (errno 10010) appears only at ``optimize()``. ``formulation="auto"`` tries
the MIQP and, on that error, the linear outer approximation; if that is too
large too, :class:`~csvm_stats.exceptions.LicenseLimitError` is raised so that
``solver="auto"`` can fall back to SCIP. The licence banner is suppressed by
starting an empty environment with ``OutputFlag=0``.
"""

from __future__ import annotations

import math

import numpy as np

from csvm_stats.exceptions import LicenseLimitError, SolverError, SolverUnavailableError
from csvm_stats.optimization.problem import MIQP
from csvm_stats.optimization.solvers._common import (
    CpuLimit, Stopwatch, epigraph_scaled, epigraph_unscaled, perspective_partners, solve_record, sparse_rows,
    time_left,
)
from csvm_stats.optimization.solvers.base import CLOCKS, Solution, SolverOptions, Status

LICENSE_ERRNO = 10010
CUT_TOL = 1e-7  # relative violation of t_k >= x_k^2 that triggers a cut (at most feasibility_tol / 100)
FORMULATIONS: tuple[str, ...] = ("auto", "miqp", "oa")
MIQP_VARIABLES = 200  # variables the pip licence allows once the objective is quadratic
PERSPECTIVE_MIN = 1e-6  # smallest v at which a perspective cut is formed (a = x / v)


def _import_gurobi():
    try:
        import gurobipy
    except ImportError as err:
        raise SolverUnavailableError(
            "the Gurobi backend needs gurobipy: pip install 'csvm-stats[gurobi]' (the pip licence "
            "solves models up to 200 variables with a quadratic objective, 2000 when linear); "
            "or use solver='scip'."
        ) from err
    return gurobipy


def outer_approximation_first(problem: MIQP) -> bool:
    """Whether formulation ``"auto"`` takes ``problem`` by the linear outer approximation straight away
    (a separable Q and more than MIQP_VARIABLES variables: beyond what the pip licence's MIQP takes)."""
    return problem.separable and problem.n_vars > MIQP_VARIABLES


def _status(model, gp) -> Status:
    code = model.Status
    if code == gp.GRB.OPTIMAL:
        return Status.OPTIMAL
    if code in (gp.GRB.INFEASIBLE, gp.GRB.INF_OR_UNBD):
        return Status.INFEASIBLE
    if code == gp.GRB.INTERRUPTED:
        return Status.INTERRUPTED
    if code in (gp.GRB.TIME_LIMIT, gp.GRB.NODE_LIMIT, gp.GRB.SOLUTION_LIMIT, gp.GRB.SUBOPTIMAL):
        return Status.TIME_LIMIT if model.SolCount > 0 else Status.NO_SOLUTION
    return Status.ERROR


class GurobiBackend:
    """Solve an :class:`~csvm_stats.optimization.problem.MIQP` with Gurobi (``formulation`` as above)."""

    name = "gurobi"

    def __init__(self, formulation: str = "auto") -> None:
        if formulation not in FORMULATIONS:
            raise ValueError(f"formulation must be one of {FORMULATIONS}, got {formulation!r}.")
        self.formulation = formulation

    def available(self) -> bool:
        try:
            gp = _import_gurobi()
            with gp.Env(empty=True) as env:
                env.setParam("OutputFlag", 0)
                env.start()
        except Exception:  # noqa: BLE001 - any failure means "not usable here"
            return False
        return True

    def size_limited(self, n_vars: int) -> bool:
        """Whether the licence refuses a model of ``n_vars`` variables (the pip licence: errno LICENSE_ERRNO
        at ``optimize()`` beyond 2000), probed on an empty model of that size (about 0.1 s)."""
        gp = _import_gurobi()
        with gp.Env(empty=True) as env:
            env.setParam("OutputFlag", 0)
            env.start()
            with gp.Model(env=env) as model:
                model.addVars(n_vars)
                try:
                    model.optimize()
                except gp.GurobiError as err:
                    if err.errno == LICENSE_ERRNO:
                        return True
                    raise
        return False

    def version(self) -> str:
        gp = _import_gurobi()
        return "Gurobi {}.{}.{}".format(*gp.gurobi.version())

    def solve(self, problem: MIQP, options: SolverOptions) -> Solution:
        if self.formulation == "oa" or (self.formulation == "auto" and outer_approximation_first(problem)):
            return self._solve(problem, options, outer_approximation=True)
        try:
            return self._solve(problem, options, outer_approximation=False)
        except LicenseLimitError:
            if self.formulation == "miqp" or not problem.separable:
                raise
            return self._solve(problem, options, outer_approximation=True)

    def _solve(self, problem: MIQP, options: SolverOptions, *, outer_approximation: bool) -> Solution:
        if not outer_approximation:
            return self._solve_model(problem, options, outer_approximation=False)
        scaled, factors = epigraph_scaled(problem, options)  # the tangent cuts' tolerance stays relative
        return epigraph_unscaled(problem, self._solve_model(scaled, options, outer_approximation=True), factors)

    def _solve_model(self, problem: MIQP, options: SolverOptions, *, outer_approximation: bool) -> Solution:
        gp = _import_gurobi()
        watch = Stopwatch()
        with gp.Env(empty=True) as env:
            env.setParam("OutputFlag", 1 if options.verbose else 0)
            env.start()
            with gp.Model(env=env) as model:
                self._set_params(model, options)
                x = self._build_linear_part(model, problem, gp)
                cuts = _TangentCuts(model, problem, x, gp, min(CUT_TOL, options.feasibility_tol / 100)) if outer_approximation else None
                if cuts is None:
                    model.setObjective(_quadratic_objective(model, problem, x, gp), gp.GRB.MINIMIZE)
                if cuts is not None:
                    cuts.add_tangents(problem.tangent_points)
                if problem.start is not None:
                    x.Start = problem.start
                    if cuts is not None:
                        cuts.set_start(problem.start)
                converged = True
                stopper = _CpuLimit(watch, options.time_limit) if options.clock == "cpu" else None
                try:
                    if cuts is not None and problem.binary.size == 0:
                        converged = cuts.kelley(watch, options.time_limit, CLOCKS.index(options.clock))  # an LP: no MIP callback
                    else:
                        if options.clock == "wall":  # Gurobi counts from optimize(): what the build left
                            model.Params.TimeLimit = time_left(watch, options)
                        model.optimize(_callback(cuts, stopper))
                except gp.GurobiError as err:
                    if err.errno == LICENSE_ERRNO:
                        raise LicenseLimitError(
                            f"the Gurobi licence cannot take this model ({problem.n_vars} variables, "
                            f"{problem.n_rows} constraints, {'linear' if outer_approximation else 'quadratic'} "
                            "objective); use solver='scip' or a full Gurobi licence."
                        ) from err
                    raise SolverError(f"Gurobi failed: {err}") from err
                wall, cpu = watch.elapsed()
                status = _status(model, gp)
                if stopper is not None and stopper.fired and status is Status.INTERRUPTED:
                    status = Status.TIME_LIMIT if model.SolCount > 0 else Status.NO_SOLUTION
                if status is Status.OPTIMAL and not converged:  # the cutting-plane loop stopped short
                    status = Status.TIME_LIMIT
                values = np.asarray(x.X, dtype=float) if status.has_solution else None
                bound = float(model.ObjBound) if status.has_solution else math.nan
                formulation = (
                    f"linear outer approximation ({cuts.n_cuts} tangent cuts{', perspective' if cuts.has_v.any() else ''})"
                    if cuts is not None else "MIQP" + (" with perspective cones" if problem.perspective is not None else "")
                )
                record = solve_record(
                    problem, values, status, bound, (wall, cpu), int(model.NodeCount), backend=self.name,
                    backend_version=self.version(), formulation=formulation, message=f"Gurobi status {model.Status}",
                )
                return Solution(record, values)

    @staticmethod
    def _set_params(model, options: SolverOptions) -> None:
        # with clock="cpu" the limit is enforced by _CpuLimit in the callback (Gurobi counts wall time only)
        model.Params.TimeLimit = float(options.time_limit) if options.clock == "wall" else _import_gurobi().GRB.INFINITY
        model.Params.MIPGap = float(options.mip_gap)
        model.Params.FeasibilityTol = max(1e-9, float(options.feasibility_tol))
        model.Params.Seed = int(options.seed)
        if options.threads is not None:
            model.Params.Threads = int(options.threads)

    @staticmethod
    def _build_linear_part(model, problem: MIQP, gp):
        vtype = np.full(problem.n_vars, gp.GRB.CONTINUOUS)
        vtype[problem.binary] = gp.GRB.BINARY
        lb = np.where(np.isfinite(problem.lb), problem.lb, -gp.GRB.INFINITY)
        ub = np.where(np.isfinite(problem.ub), problem.ub, gp.GRB.INFINITY)
        x = model.addMVar(problem.n_vars, lb=lb, ub=ub, vtype=vtype)
        lo, hi = problem.row_lo, problem.row_hi
        equal = lo == hi
        lower = np.isfinite(lo) & ~equal
        upper = np.isfinite(hi) & ~equal
        if equal.any():
            model.addMConstr(problem.A[equal], x, "=", lo[equal])
        if lower.any():
            model.addMConstr(problem.A[lower], x, ">", lo[lower])
        if upper.any():
            model.addMConstr(problem.A[upper], x, "<", hi[upper])
        ind = problem.indicators
        if ind is not None:
            xs = x.tolist()  # gurobipy Var objects: a LinExpr takes no MVar elements
            for k, (cols, vals) in enumerate(sparse_rows(ind.A)):
                expr = gp.LinExpr(vals.tolist(), [xs[int(c)] for c in cols])
                model.addGenConstrIndicator(xs[int(ind.binary[k])], True, expr, gp.GRB.GREATER_EQUAL, float(ind.rhs[k]))
        return x


def _quadratic_objective(model, problem: MIQP, x, gp):
    """x'Qx + c'x, each diagonal term with a perspective binary v as t_k subject to x_k^2 <= t_k v."""
    Q = problem.Q.tocoo()
    xs = x.tolist()
    partners = perspective_partners(problem, Q.row)
    terms = []
    for i, j, q, v in zip(Q.row, Q.col, Q.data, partners):
        if i == j and v is not None:
            t = model.addVar(lb=0.0)
            model.addQConstr(xs[int(i)] * xs[int(i)] <= t * xs[v])
            terms.append(float(q) * t)
        else:
            terms.append(float(q) * xs[int(i)] * xs[int(j)])
    return gp.quicksum(terms) + gp.quicksum(float(problem.c[k]) * xs[k] for k in np.flatnonzero(problem.c))


class _CpuLimit(CpuLimit):
    """Stop the solve once this process has used ``limit`` CPU seconds (``SolverOptions.clock="cpu"``).

    Checked at every callback; the stop is reported as the time limit, not as an interruption.
    """

    def __call__(self, model, where) -> None:
        if not self.fired and self.spent():
            model.terminate()


def _callback(cuts: "_TangentCuts | None", stopper: _CpuLimit | None):
    """The callback Gurobi runs: the tangent cuts and/or the CPU-time limit (``None`` when neither)."""
    if cuts is None and stopper is None:
        return None

    def callback(model, where) -> None:
        if cuts is not None:
            cuts.callback(model, where)
        if stopper is not None:
            stopper(model, where)

    return callback


class _TangentCuts:
    """Epigraph variables t_k >= x_k^2 kept as lazily generated tangent cuts."""

    def __init__(self, model, problem: MIQP, x, gp, tol: float) -> None:
        if not problem.separable:
            raise SolverError("the outer-approximation formulation needs a diagonal quadratic objective.")
        Q = problem.Q.tocoo()
        keep = Q.data != 0
        index = Q.row[keep].astype(int)
        self.gp = gp
        self.model = model
        self.xq = [x.tolist()[k] for k in index]
        self.vq = [None if v is None else x.tolist()[v] for v in perspective_partners(problem, index)]
        self.has_v = np.array([v is not None for v in self.vq], dtype=bool)
        t = model.addMVar(index.size, lb=0.0)
        self.t = t.tolist()
        model.setObjective(problem.c @ x + Q.data[keep] @ t, gp.GRB.MINIMIZE)
        model.Params.LazyConstraints = 1
        model.Params.PreCrush = 1  # user cuts at nodes refer to the original variables
        self.n_cuts = 0
        self.tol = tol

    def _cut(self, k: int, a: float):
        """The tangent at a, or the perspective cut t_k >= 2 a x_k - a^2 v_k (valid for every a)."""
        if self.vq[k] is not None:
            return self.t[k] >= 2.0 * a * self.xq[k] - a * a * self.vq[k]
        return self.t[k] >= 2.0 * a * self.xq[k] - a * a

    def _separate(self, xv: np.ndarray, tv: np.ndarray, vv: np.ndarray | None, tol: float, add) -> None:
        """Cut every k with x_k^2 / v_k - t_k above ``tol`` (relative); v = 1 without a perspective pair."""
        v = np.ones_like(xv) if vv is None else np.where(self.has_v & (vv > PERSPECTIVE_MIN), vv, 1.0)
        square = xv * xv / v
        for k in np.flatnonzero(square - tv > tol * np.maximum(1.0, square)):
            add(self._cut(int(k), float(xv[k] / v[k])))
            self.n_cuts += 1

    def set_start(self, start: np.ndarray) -> None:
        """Start t at x_k^2 (the start's tangent, among the tangent points, keeps it feasible)."""
        for k, var in enumerate(self.xq):
            a = float(start[var.index])
            self.t[k].Start = a * a

    def add_tangents(self, points) -> None:
        """Tangent cuts at the problem's tangent points, before the solve."""
        for point in points:
            for k, var in enumerate(self.xq):
                self.model.addConstr(self._cut(k, float(point[var.index])))
                self.n_cuts += 1

    def kelley(self, watch: Stopwatch, time_limit: float, clock: int = 0, max_rounds: int = 500, keep: int = 4) -> bool:
        """Cutting-plane loop for a problem without binaries: solve, cut, repeat.

        Only the ``keep`` newest cuts of each coordinate stay in the model (the
        tangents nearest the optimum), so it stays within the size-limited licence.
        Returns whether the last point meets every epigraph within the cut
        tolerance; ``False`` when the round limit or the time limit (of the
        whole loop; ``clock`` 0 wall, 1 CPU time, as ``Stopwatch.elapsed``) stopped it first.
        """
        model = self.model
        history: list[list] = [[] for _ in self.xq]
        for _ in range(max_rounds):
            model.Params.TimeLimit = max(0.0, time_limit - watch.elapsed()[clock])
            model.optimize()
            if model.Status != self.gp.GRB.OPTIMAL:
                return False
            xv = np.array([v.X for v in self.xq])
            tv = np.array([v.X for v in self.t])
            violated = np.flatnonzero(xv * xv - tv > self.tol * np.maximum(1.0, xv * xv))
            if violated.size == 0:
                return True
            if watch.elapsed()[clock] >= time_limit:
                return False
            for k in violated:
                history[k].append(model.addConstr(self._cut(int(k), float(xv[k]))))
                self.n_cuts += 1
                if len(history[k]) > keep:
                    model.remove(history[k].pop(0))
        return False

    def callback(self, model, where) -> None:
        gp = self.gp
        if where == gp.GRB.Callback.MIPSOL:  # a candidate incumbent must meet t_k >= x_k^2 itself
            xv = np.asarray(model.cbGetSolution(self.xq))
            tv = np.asarray(model.cbGetSolution(self.t))
            self._separate(xv, tv, None, self.tol, model.cbLazy)
        elif where == gp.GRB.Callback.MIPNODE and model.cbGet(gp.GRB.Callback.MIPNODE_STATUS) == gp.GRB.OPTIMAL:
            xv = np.asarray(model.cbGetNodeRel(self.xq))
            tv = np.asarray(model.cbGetNodeRel(self.t))
            vv = np.asarray(model.cbGetNodeRel([v if v is not None else self.xq[0] for v in self.vq])) if self.has_v.any() else None
            self._separate(xv, tv, vv, 1e-4, model.cbCut)
