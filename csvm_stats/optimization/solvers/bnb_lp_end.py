"""The clock and the end of the LP-node searches of bnb (multiclass: :mod:`~csvm_stats.optimization.solvers.bnb_multiclass`;
L1-norm: :mod:`~csvm_stats.optimization.solvers.bnb_l1`) run and report: one function for both.

The search runs with Ctrl-C setting its ``interrupted`` flag (bnb's
``_sigint_sets_flag``); its end is classified by
:func:`~csvm_stats.optimization.solvers.base.search_end` (optimal, limit with
a gap, infeasible when exhausted, unresolved or interrupted) and written into
a :class:`~csvm_stats.optimization.solvers.base.SolveRecord` with the
objective of the incumbent and the least open bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from csvm_stats.optimization.problem import MIQP
from csvm_stats.optimization.solvers._common import Stopwatch, relative_gap
from csvm_stats.optimization.solvers.base import (
    Solution,
    SolveRecord,
    Status,
    search_end,
)
from csvm_stats.optimization.solvers.bnb import BnbBackend, _sigint_sets_flag


class LPSearchClock:
    """The clock and prune level both LP-node searches share (mixed into their search classes, which set
    ``interrupted``, ``watch``, ``options`` and ``best``)."""

    interrupted: bool
    watch: Stopwatch
    options: Any
    best: tuple[float, Any] | None

    def elapsed(self) -> float:
        """Seconds on the limit's clock; raises ``KeyboardInterrupt`` after Ctrl-C."""
        if self.interrupted:
            raise KeyboardInterrupt
        return self.watch.charged(self.options.clock)

    def out_of_time(self) -> bool:
        return self.elapsed() >= self.options.time_limit

    def prune_level(self) -> float:
        """A node whose bound reaches this cannot hold a point better than the incumbent by the gap."""
        if self.best is None:
            return math.inf
        return self.best[0] - self.options.mip_gap * abs(self.best[0])


def count_bound(cost: np.ndarray, forced: np.ndarray, dropped: np.ndarray,
                groups: list[tuple[np.ndarray, int]], level: float) -> float:
    r"""A node's bound from single-point costs :math:`c_j` (a bound of every point with :math:`z_j = 1`).

    Drops (in ``dropped``, in place) the free points whose cost reaches the
    prune ``level``; then each group (anchor members, required count) still
    needs :math:`r = k - |F \cap G|` of its free points: more than it has is
    infeasible (``inf``), exactly as many forces them all (in ``forced``, in
    place; repeated until no group forces more, as groups may overlap), and
    otherwise the r-th smallest free cost bounds the node. The bound is the
    largest of these and of the forced points' costs.
    """
    dropped |= ~forced & (cost >= level)
    bound = float(cost[forced].max(initial=-math.inf))
    changed = True
    while changed:
        changed = False
        for members, count in groups:
            free = members[~forced[members] & ~dropped[members]]
            need = count - int(forced[members].sum())
            if need > free.size:
                return math.inf
            if need == free.size and need > 0:
                forced[free] = True
                bound = max(bound, float(cost[free].max()))
                changed = True
            elif need > 0:
                bound = max(bound, float(np.partition(cost[free], need - 1)[need - 1]))
    return bound


EXHAUSTED = "no choice of anchor points meeting the required counts admits a classifier (search exhausted)"


def run_lp_search(
    problem: MIQP, search: Any, watch: Stopwatch, *, formulation: str, message: Callable[[], str],
    gap_open: Callable[[float, float], bool],
) -> Solution:
    """Run ``search`` (``run()``, ``best``, ``lower_bound()``, ``unresolved``, ``nodes``) and report its end.

    ``gap_open(objective, bound)`` says whether a search that found a point
    ended with its gap still open (then :func:`search_end` reports why);
    ``message()`` is read after the run (its counts of LP solves).
    """
    try:
        with _sigint_sets_flag(search):
            status = search.run()
    except KeyboardInterrupt:
        status = Status.INTERRUPTED
    x = None if search.best is None else search.best[1]
    objective = problem.objective(x) if x is not None else math.nan
    bound = search.lower_bound() if x is not None else math.nan
    status, reason = search_end(status, x is not None, search.unresolved, x is not None and gap_open(objective, bound),
                                EXHAUSTED)
    wall, cpu = watch.elapsed()
    record = SolveRecord(
        status=status, objective=objective, best_bound=bound, gap=relative_gap(objective, bound),
        wall_time=wall, cpu_time=cpu, nodes=search.nodes, backend="bnb", backend_version=BnbBackend().version(),
        formulation=formulation, message=message(), reason=reason,
    )
    search.log.end(record)
    return Solution(record, x)
