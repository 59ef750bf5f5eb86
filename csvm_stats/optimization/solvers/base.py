"""The solver protocol: one status set, one options record, one solution record.

Every backend translates a :class:`~csvm_stats.optimization.problem.MIQP` into its own
modelling layer, solves it and returns a :class:`Solution`, mapping its own
status codes onto :class:`Status` (the cvxpy pattern).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from csvm_stats.exceptions import DataError
from csvm_stats.optimization.budget import CLOCKS
from csvm_stats.preprocessing.validation import check_positive, check_solver_options


if TYPE_CHECKING:
    from csvm_stats.optimization.problem import MIQP


class Status(str, enum.Enum):
    """Outcome of a solve, shared by all backends."""

    OPTIMAL = "optimal"
    TIME_LIMIT = "time limit (incumbent)"
    INFEASIBLE = "infeasible"
    NO_SOLUTION = "no solution found"
    INTERRUPTED = "interrupted"  # the user pressed Ctrl-C (SIGINT); callers re-raise KeyboardInterrupt
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        return self in (Status.OPTIMAL, Status.TIME_LIMIT)


#: The record's ``reason`` when a branch-and-bound search ends before its time limit with the gap above
#: ``mip_gap`` because some node relaxations did not converge (status TIME_LIMIT: the best rule is kept).
UNCONVERGED_END = ("the search ended before the time limit with the gap open (node relaxations did not converge "
                   "to the gap)")
#: The record's ``reason`` when a branch-and-bound search ends before its time limit with no classifier and
#: without proving that none exists (status NO_SOLUTION): some node relaxations were not solved to the
#: accuracy a proof needs. ``solver="auto"`` then tries the next backend with the time that is left.
UNRESOLVED_END = ("the search ended before the time limit without a classifier and without proving that none "
                  "exists (node relaxations were not solved to the accuracy a proof needs)")


def search_end(status: Status, found: bool, unresolved: bool, gap_open: bool,
               infeasible_reason: str = "") -> tuple[Status, str]:
    """The status and ``reason`` a branch-and-bound search reports when it ends.

    ``status`` is what the search loop returned, ``found`` whether it holds a
    classifier, ``unresolved`` whether a node was closed without a relaxation
    accurate enough to prove anything, ``gap_open`` whether the gap is still
    above ``mip_gap`` at a normal end. At the limit with nothing found: NO_SOLUTION.
    A search that proved infeasibility itself, or an exhausted search with
    nothing found: INFEASIBLE (``infeasible_reason``),
    or NO_SOLUTION with :data:`UNRESOLVED_END` when a node was unresolved (no
    proof). An early end with a classifier and the gap open: TIME_LIMIT (the
    classifier is kept, as at the limit) with :data:`UNCONVERGED_END`.
    """
    if status is Status.TIME_LIMIT and not found:
        return Status.NO_SOLUTION, ""
    if status is Status.INFEASIBLE:  # proven before or during the search (e.g. the counting certificate)
        return status, infeasible_reason
    if status is Status.OPTIMAL and not found:
        return (Status.NO_SOLUTION, UNRESOLVED_END) if unresolved else (Status.INFEASIBLE, infeasible_reason)
    if status is Status.OPTIMAL and gap_open:
        return Status.TIME_LIMIT, UNCONVERGED_END
    return status, ""

@dataclass(frozen=True)
class SolverOptions:
    """Options every backend honours.

    ``time_limit`` is in seconds (the paper uses 300 s and accepts the
    incumbent); ``mip_gap`` is the relative optimality gap at which the search
    stops; ``feasibility_tol`` is the constraint tolerance (it also bounds how
    far an epigraph may undercut the quadratic, so it limits the accuracy of w:
    an objective error e moves w by about sqrt(e); SCIP and Gurobi's outer
    approximation rescale the quadratic variables when that undercut could
    reach a tenth of the gap); ``threads=None`` lets the
    solver decide. ``clock`` is what ``time_limit`` counts: ``"wall"`` seconds
    or ``"cpu"`` seconds of this process (fair under machine load; SCIP and
    bnb honour it, Gurobi and HiGHS through callbacks that stop the search).
    """

    time_limit: float = 300.0
    mip_gap: float = 1e-4
    feasibility_tol: float = 1e-6
    threads: int | None = None
    verbose: bool = False
    seed: int = 0
    clock: str = "wall"

    def __post_init__(self) -> None:
        """Refuse bad values here, before any backend sees them (a NaN or negative limit, a bool gap, ...)."""
        check_solver_options(
            time_limit=self.time_limit, mip_gap=self.mip_gap, threads=self.threads, verbose=self.verbose, seed=self.seed
        )
        check_positive(self.feasibility_tol, "feasibility_tol")
        if self.clock not in CLOCKS:
            raise DataError(f"clock must be one of {CLOCKS}, got {self.clock!r}.")


@dataclass(frozen=True)
class SolveRecord:
    """What a solve did: status, objective, bound, gap, times and effort.

    ``wall_time`` and ``cpu_time`` are the solver's own; a fit
    (:mod:`csvm_stats.optimization.budget`) adds the time limit of the whole
    fit (``time_limit`` seconds on the ``clock``), the wall and CPU seconds of
    the whole fit (``fit_wall_time``, ``fit_cpu_time``: feature map, warm
    start, set-up, search, certification) and ``limit_phase``, the phase in
    which the limit ran out (``""``: it did not), and ``phase_times``, the wall
    and CPU seconds of each phase. ``compile_wall_time`` and ``compile_cpu_time``
    are the part of the fit's times numba spent compiling kernels on their first
    use, which the limit does not charge (:mod:`csvm_stats.optimization.jit_clock`). :attr:`outcome` says in
    words what happened.
    """

    status: Status
    objective: float
    best_bound: float
    gap: float
    wall_time: float
    cpu_time: float
    nodes: int
    backend: str
    backend_version: str
    formulation: str
    message: str = ""
    exact: bool | None = None  # set by the engine: is the model solved the exact CSVM (None: not a CSVM fit)
    svm_solves: int = 0  # SVM (node QP) solves, for backends that count them (bnb)
    choice: str = ""  # with solver="auto": the backend chosen and why (see csvm_stats.optimization.solvers)
    reason: str = ""  # infeasible: which requirement cannot be met and by how much (when the backend knows);
    # no solution: the closest rule the fit's heuristics found and what they tried; TIME_LIMIT: why the search
    # ended before the limit with the gap open ("": the limit stopped it)
    clock: str = ""  # the clock the fit's time limit counted ("wall" or "cpu"; "" outside a fit)
    time_limit: float = math.nan  # the whole fit's limit, seconds on that clock
    fit_wall_time: float = math.nan  # wall seconds of the whole fit
    fit_cpu_time: float = math.nan  # CPU seconds of the whole fit (this process, every thread)
    compile_wall_time: float = 0.0  # wall seconds of the fit that numba spent compiling (not charged to the limit)
    compile_cpu_time: float = 0.0  # CPU seconds of the same
    limit_phase: str = ""  # the phase of the fit in which the time limit ran out ("": it did not)
    phase_times: tuple[tuple[str, float, float], ...] = ()  # (phase, wall s, CPU s) of every phase of the fit

    @property
    def outcome(self) -> str:
        """What happened, in words: optimal; the time limit (or, with a ``reason``, an earlier end of the search)
        with its gap and phase; infeasible; no solution."""
        if self.status is Status.OPTIMAL:
            return "optimal" + (f" (relative gap {self.gap:.2g})" if math.isfinite(self.gap) and self.gap > 0 else "")
        if self.status in (Status.TIME_LIMIT, Status.NO_SOLUTION):
            where = f" during the {self.limit_phase}" if self.limit_phase else ""
            limit = f" ({self.time_limit:g} s, {self.clock} clock)" if self.clock else ""
            found = (f"best classifier found kept, relative gap {self.gap:.2%}" if math.isfinite(self.gap)
                     else "best classifier found kept, gap unknown (no lower bound yet)")
            if self.status is Status.TIME_LIMIT and self.reason:  # the search ended before the limit
                return f"{self.reason}: {found}"
            if self.status is Status.NO_SOLUTION:
                found = "no classifier found" + (f" ({self.reason})" if self.reason else "")
            return f"time limit{limit} reached{where}: {found}"
        if self.status is Status.INFEASIBLE:
            return "infeasible: no classifier meets the requirements" + (f" ({self.reason})" if self.reason else "")
        if self.status is Status.INTERRUPTED:
            return "interrupted by the user"
        return f"solver error ({self.message})" if self.message else "solver error"


@dataclass(frozen=True)
class Solution:
    """A backend's answer: the record plus the variable values (or ``None``)."""

    record: SolveRecord
    x: np.ndarray | None = field(default=None, repr=False)


class Backend(Protocol):
    """A solver backend: ``name``, availability check and ``solve``."""

    name: str

    def available(self) -> bool: ...

    def version(self) -> str: ...

    def solve(self, problem: MIQP, options: SolverOptions) -> Solution: ...
