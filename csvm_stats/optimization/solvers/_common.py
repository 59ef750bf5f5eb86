"""Small helpers shared by the backends: row iteration, timing and gap."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from csvm_stats.optimization.solvers.base import SolveRecord, Status

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

    def elapsed(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall0, time.process_time() - self.cpu0
