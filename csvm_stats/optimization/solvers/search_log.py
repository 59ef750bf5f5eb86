"""The progress log of the ``"bnb"`` searches (``SolverOptions(verbose=True)``), like the other solvers' logs.

A header and a row when the search starts, a row about every :data:`LOG_PERIOD` seconds of the clock the time
limit counts, and a closing line with the record's status; printed to standard output. Rows show the nodes
solved, the nodes waiting, the incumbent (``-`` before one), the lower bound and the relative gap. With ``verbose=False`` nothing is printed and a row
costs one comparison.
"""

from __future__ import annotations

import math

from csvm_stats.optimization.solvers.base import SolveRecord, SolverOptions

LOG_PERIOD = 1.0  # seconds between two rows
_ROW = "{:>10} {:>10} {:>14} {:>14} {:>9} {:>9}"


def _value(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.6g}"


class SearchLog:
    """Progress rows of one search (module docstring)."""

    def __init__(self, options: SolverOptions, what: str) -> None:
        self.on = bool(options.verbose)
        self.clock = options.clock
        self.next = 0.0
        if self.on:
            print(f"bnb: {what}; {options.time_limit:.3g} s of the time limit left for the search "
                  f"({options.clock} clock), relative gap {options.mip_gap:g}", flush=True)
            print(_ROW.format("nodes", "waiting", "incumbent", "bound", "gap", "time (s)"), flush=True)

    def due(self, elapsed: float) -> bool:
        """Is a row due at ``elapsed`` seconds (never with ``verbose=False``)?"""
        return self.on and elapsed >= self.next

    def row(self, elapsed: float, nodes: int, waiting: int, incumbent: float | None, bound: float) -> None:
        """Print a row and schedule the next one."""
        self.next = elapsed + LOG_PERIOD
        gap = "-"
        if incumbent is not None and math.isfinite(incumbent) and math.isfinite(bound):
            gap = f"{abs(incumbent - bound) / max(abs(incumbent), 1e-10):.2%}"
        print(_ROW.format(nodes, waiting, _value(incumbent), _value(bound), gap, f"{elapsed:.1f}"), flush=True)

    def end(self, record: SolveRecord) -> None:
        """The closing line: status, objective, bound, gap, nodes and times."""
        if self.on:
            gap = f"{record.gap:.2%}" if math.isfinite(record.gap) else "-"
            print(f"bnb: {record.status.value}; objective {_value(record.objective)}, bound "
                  f"{_value(record.best_bound)}, gap {gap}; {record.nodes} nodes, "
                  f"{record.cpu_time:.2f} CPU-s, {record.wall_time:.2f} s wall", flush=True)
