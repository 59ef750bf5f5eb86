"""Small helpers shared by the backends: row iteration, timing and gap."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from csvm_stats.optimization.jit_clock import compile_seconds
from csvm_stats.optimization.problem import MIQP
from csvm_stats.optimization.solvers.base import Solution, SolveRecord, SolverOptions, Status

INF = 1e20  # what the solvers treat as infinity


def finite_or_none(v: float) -> float | None:
    """``None`` for an infinite bound (the solvers' 'unbounded'), else the float."""
    return None if not np.isfinite(v) else float(v)


def perspective_partners(problem, index: np.ndarray) -> list[int | None]:
    """For each quadratic variable in ``index``: the binary of its :attr:`MIQP.perspective` pair, or ``None``."""
    pairs = {} if problem.perspective is None else {int(k): int(v) for k, v in problem.perspective}
    return [pairs.get(int(k)) for k in index]


def sparse_rows(A: sp.csr_matrix) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(column indices, values)`` for each row of a CSR matrix."""
    A = A.tocsr()
    for r in range(A.shape[0]):
        lo, hi = A.indptr[r], A.indptr[r + 1]
        yield A.indices[lo:hi], A.data[lo:hi]


def relative_gap(objective: float, bound: float) -> float:
    """``|objective - bound| / max(|objective|, 1e-10)``; ``inf`` when either is missing."""
    if not (math.isfinite(objective) and math.isfinite(bound)):
        return math.inf
    return abs(objective - bound) / max(abs(objective), 1e-10)


def solve_record(
    problem, values: np.ndarray | None, status: Status, bound: float, times: tuple[float, float], nodes: int,
    **about: str,
) -> SolveRecord:
    """The shared :class:`SolveRecord`: objective recomputed from the values, gap from the bound."""
    objective = problem.objective(values) if values is not None else math.nan
    return SolveRecord(
        status=status, objective=objective, best_bound=bound, gap=relative_gap(objective, bound),
        wall_time=times[0], cpu_time=times[1], nodes=nodes, **about,
    )


@dataclass
class Stopwatch:
    """Wall and CPU time of a block (the solvers run in this process)."""

    wall0: float = field(default_factory=time.perf_counter)
    cpu0: float = field(default_factory=time.process_time)
    compile0: tuple[float, float] = field(default_factory=compile_seconds)

    def elapsed(self) -> tuple[float, float]:
        """Wall and CPU seconds since the start (what the solve took)."""
        return time.perf_counter() - self.wall0, time.process_time() - self.cpu0

    def charged(self, clock: str) -> float:
        """Seconds on ``clock`` (``"cpu"`` or ``"wall"``) since the start, less numba's compilation meanwhile:
        what a time limit counts (:mod:`csvm_stats.optimization.jit_clock`)."""
        which = 1 if clock == "cpu" else 0
        return self.elapsed()[which] - (compile_seconds()[which] - self.compile0[which])


def time_left(watch: Stopwatch, options: SolverOptions) -> float:
    """Seconds of ``options.time_limit`` left since ``watch`` started, on ``options.clock`` (0 once spent).

    Backends build their model first and hand the solver only this, so that the
    build counts against the limit.
    """
    return max(0.0, options.time_limit - watch.charged(options.clock))


class CpuLimit:
    """Whether this process has used ``limit`` CPU seconds since ``watch`` started (``SolverOptions.clock="cpu"``
    for solvers whose own limit counts wall time: checked from their callbacks, which then stop the solve)."""

    def __init__(self, watch: Stopwatch, limit: float) -> None:
        self.watch, self.limit, self.fired = watch, float(limit), False

    def spent(self) -> bool:
        """True once the limit is reached (and from then on)."""
        self.fired = self.fired or self.watch.charged("cpu") >= self.limit
        return self.fired


EPIGRAPH_SHARE = 0.1  # the epigraphs' summed tolerance may use at most this share of the requested gap


def epigraph_scaled(problem: MIQP, options: SolverOptions) -> tuple[MIQP, np.ndarray | None]:
    r"""The problem in rescaled quadratic variables when the epigraphs' tolerance could fake the gap.

    A backend that keeps :math:`x_k^2` by an epigraph :math:`t_k \ge x_k^2`
    (SCIP; Gurobi's outer approximation) meets each of the m rows only to an
    absolute tolerance :math:`\varepsilon`, so its objective may undercut the
    true one by up to :math:`\varepsilon \sum_k Q_{kk}` and a status "optimal
    within gap :math:`\gamma`" is then not true when that exceeds a share of
    :math:`\gamma U` (U the objective of the start). This happens on tiny
    objectives (p >> n: measured U = 0.002 with 2000 rows, SCIP "optimal" at a
    true gap of 0.46%). The substitution :math:`x'_k = s_k x_k` with
    :math:`s_k = \sqrt{m Q_{kk} / U}` makes every :math:`Q'_{kk} = U / m`
    (entries of order one at the start), so the undercut is at most
    :math:`\varepsilon U`: relative to the objective. Returns the problem to
    hand to the solver and the factors s (``None``: unchanged: Q not
    diagonal, no start, or the undercut already small); the solver's values
    are read back by :func:`epigraph_unscaled`. Objective values and bounds
    are the same in both variables.
    """
    if problem.start is None or not problem.separable:
        return problem, None
    q = problem.Q.diagonal()
    quad = np.flatnonzero(q > 0)
    upper = problem.objective(problem.start)
    if quad.size == 0 or not upper > 0 or options.feasibility_tol * q[quad].sum() <= (
        EPIGRAPH_SHARE * options.mip_gap * upper
    ):
        return problem, None
    s = np.ones(problem.n_vars)
    s[quad] = np.sqrt(quad.size * q[quad] / upper)
    inv = sp.diags(1.0 / s)
    indicators = problem.indicators
    if indicators is not None:
        indicators = replace(indicators, A=(indicators.A @ inv).tocsr())
    scaled = replace(
        problem, Q=(inv @ problem.Q @ inv).tocsr(), c=problem.c / s, A=(problem.A @ inv).tocsr(),
        lb=problem.lb * s, ub=problem.ub * s, indicators=indicators, start=problem.start * s,
        tangent_points=tuple(point * s for point in problem.tangent_points),
    )
    return scaled, s


def epigraph_unscaled(problem: MIQP, solution: Solution, s: np.ndarray | None) -> Solution:
    """A solution of :func:`epigraph_scaled`'s problem in the original variables (record recomputed)."""
    if s is None or solution.x is None:
        return solution
    x = solution.x / s
    record = solution.record
    objective = problem.objective(x)
    return Solution(replace(record, objective=objective, gap=relative_gap(objective, record.best_bound)), x)
