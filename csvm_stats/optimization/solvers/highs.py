r"""HiGHS backend through highspy (open source, MIT): linear programs and MILPs.

HiGHS solves :math:`\min c^\top x` subject to :math:`\ell \le Ax \le u`, bounds
and integrality by branch and bound on its dual simplex; it has no quadratic
objective together with integers and no indicator constraints. It therefore
takes exactly the linear forms of :mod:`csvm_stats.optimization.problem` (the L1-norm CSVM
of :func:`csvm_stats.optimization.problem.build_l1_primal`, whose anchor rows carry finite
big-M constants) and refuses any other :class:`~csvm_stats.optimization.problem.MIQP` with
a :class:`~csvm_stats.exceptions.SolverError` naming the backends that can.

HiGHS's own time limit counts wall seconds; with ``SolverOptions(clock="cpu")``
it is switched off and HiGHS's simplex, interior-point and MIP interrupt
callbacks stop the solve once this process has used the limit in CPU seconds
(reported as the time limit).
"""

from __future__ import annotations

import math
import os
import sys
from functools import cache

import numpy as np

from csvm_stats.exceptions import SolverError, SolverUnavailableError
from csvm_stats.optimization.problem import MIQP
from csvm_stats.optimization.solvers._common import INF, CpuLimit, Stopwatch, solve_record, time_left
from csvm_stats.optimization.solvers.base import Solution, SolverOptions, Status


def _import_highs():
    try:
        import highspy
    except ImportError as err:  # pragma: no cover - highspy is a hard dependency
        raise SolverUnavailableError("the HiGHS backend needs highspy: pip install highspy") from err
    return highspy


def set_colwise_matrix(highs, lp, A) -> None:
    """Put the constraint matrix ``A`` (a scipy CSC matrix) into the HighsLp ``lp``, column-wise."""
    lp.a_matrix_.format_ = highs.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data.astype(float)


def quiet_model(highs, lp, threads: int | None):
    """A HiGHS instance without output (and with ``threads`` when given) holding ``lp``."""
    model = highs.Highs()
    model.setOptionValue("output_flag", False)
    if threads is not None:
        model.setOptionValue("threads", int(threads))
    model.passModel(lp)
    return model


@cache
def _highs_version() -> str:
    """HiGHS's version, from a first instance whose copyright banner is kept off stdout.

    HiGHS writes the banner from C++ when the first instance of a process is
    made, before any option can be set; it would otherwise land in the CLI's
    output. Later instances print nothing.
    """
    highs = _import_highs()
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            model = highs.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    return f"HiGHS {model.versionMajor()}.{model.versionMinor()}.{model.versionPatch()}"


def is_linear(problem: MIQP) -> bool:
    """Whether ``problem`` has no quadratic term and no indicator constraint (what HiGHS takes)."""
    return problem.Q.count_nonzero() == 0 and problem.indicators is None


def _status(highs, model, n_solutions: bool) -> Status:
    s = highs.HighsModelStatus
    code = model.getModelStatus()
    if code == s.kOptimal:
        return Status.OPTIMAL
    if code in (s.kInfeasible, s.kUnboundedOrInfeasible):
        return Status.INFEASIBLE
    if code in (s.kInterrupt, s.kHighsInterrupt):
        return Status.INTERRUPTED
    if code in (s.kTimeLimit, s.kIterationLimit, s.kSolutionLimit, s.kMemoryLimit):
        return Status.TIME_LIMIT if n_solutions else Status.NO_SOLUTION
    return Status.ERROR


class HighsBackend:
    """Solve a linear :class:`~csvm_stats.optimization.problem.MIQP` (a MILP or an LP) with HiGHS."""

    name = "highs"

    def available(self) -> bool:
        try:
            _import_highs()
        except SolverUnavailableError:
            return False
        return True

    def version(self) -> str:
        return _highs_version()

    def solve(self, problem: MIQP, options: SolverOptions) -> Solution:
        if not is_linear(problem):
            raise SolverError(
                "HiGHS solves linear problems only (no quadratic objective with integers, no indicator "
                "constraints); use solver='scip' or solver='gurobi' for this model."
            )
        highs = _import_highs()
        version = self.version()  # the first instance, made quietly
        watch = Stopwatch()
        model = highs.Highs()
        model.setOptionValue("output_flag", bool(options.verbose))
        cpu_limit = CpuLimit(watch, options.time_limit) if options.clock == "cpu" else None
        if cpu_limit is not None:
            def stop(event) -> None:
                if cpu_limit.spent():
                    event.interrupt()

            for callback in (model.cbSimplexInterrupt, model.cbIpmInterrupt, model.cbMipInterrupt):
                callback.subscribe(stop)
        model.setOptionValue("mip_rel_gap", float(options.mip_gap))
        model.setOptionValue("primal_feasibility_tolerance", float(options.feasibility_tol))
        model.setOptionValue("mip_feasibility_tolerance", float(options.feasibility_tol))
        model.setOptionValue("random_seed", int(options.seed))
        if options.threads is not None:
            model.setOptionValue("threads", int(options.threads))

        lp = highs.HighsLp()
        A = problem.A.tocsc()
        lp.num_col_, lp.num_row_ = problem.n_vars, A.shape[0]
        lp.col_cost_ = problem.c.astype(float)
        lp.col_lower_ = np.where(np.isfinite(problem.lb), problem.lb, -INF)
        lp.col_upper_ = np.where(np.isfinite(problem.ub), problem.ub, INF)
        lp.row_lower_ = np.where(np.isfinite(problem.row_lo), problem.row_lo, -INF)
        lp.row_upper_ = np.where(np.isfinite(problem.row_hi), problem.row_hi, INF)
        set_colwise_matrix(highs, lp, A)
        if problem.binary.size:
            integrality = np.full(problem.n_vars, highs.HighsVarType.kContinuous)
            integrality[problem.binary] = highs.HighsVarType.kInteger
            lp.integrality_ = integrality.tolist()
        model.passModel(lp)
        if problem.start is not None:
            start = highs.HighsSolution()
            start.col_value = np.asarray(problem.start, dtype=float).tolist()
            start.value_valid = True
            model.setSolution(start)

        if cpu_limit is None:  # HiGHS counts wall seconds from run(): what the build above left
            model.setOptionValue("time_limit", time_left(watch, options))
        model.run()
        wall, cpu = watch.elapsed()
        info = model.getInfo()
        has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
        status = _status(highs, model, has_solution)
        if status is Status.INTERRUPTED and cpu_limit is not None and cpu_limit.fired:
            status = Status.TIME_LIMIT if has_solution else Status.NO_SOLUTION
        values = np.array(model.getSolution().col_value) if has_solution and status.has_solution else None
        if status is Status.INFEASIBLE:
            bound = math.nan
        elif problem.binary.size:
            bound = float(info.mip_dual_bound)
        else:
            bound = float(info.objective_function_value) if status is Status.OPTIMAL else -math.inf
        if values is not None and problem.binary.size:
            values[problem.binary] = np.round(values[problem.binary])
        record = solve_record(
            problem, values, status, bound, (wall, cpu), int(max(info.mip_node_count, 0)), backend=self.name,
            backend_version=version, formulation="linear program (MILP)",
            message=model.modelStatusToString(model.getModelStatus()),
        )
        return Solution(record, values)
