"""Seconds this process has spent compiling numba kernels, which time limits do not charge.

The engine's kernels are compiled by numba on their first call after an
install or upgrade (10-40 CPU seconds in all, cached on disk afterwards; a
kernel called with new argument types compiles again). That is a cost of the
machine's first use, not of the fit that happens to trigger it, so a fit's
time limit must not pay for it: with ``time_limit=10`` a first fit would
otherwise spend its budget compiling and stop without a classifier.

numba announces each compilation with a ``"numba:compile"`` event (nested
for the kernels a kernel calls); a listener registered when this module is
imported adds up the wall and CPU seconds of the outermost ones.
:func:`compile_seconds` reads the totals; the budget's clocks
(:func:`csvm_stats.optimization.budget.clock_reader`) and the solvers'
stopwatches subtract what accrued while they ran. Loading compiled kernels
from the disk cache raises no event and is charged (about 0.3 CPU-s for a
process's first fit).
"""

from __future__ import annotations

import threading
import time

from numba.core import event

_lock = threading.Lock()
_totals = [0.0, 0.0]  # wall, CPU seconds of finished outermost compilations


class _CompileTimer(event.Listener):
    """Adds the wall and CPU seconds of each outermost numba compilation to the totals."""

    def __init__(self) -> None:
        self.depth = 0
        self.started = (0.0, 0.0)

    def on_start(self, _event: event.Event) -> None:
        with _lock:
            if self.depth == 0:
                self.started = (time.perf_counter(), time.process_time())
            self.depth += 1

    def on_end(self, _event: event.Event) -> None:
        with _lock:
            self.depth -= 1
            if self.depth == 0:
                _totals[0] += time.perf_counter() - self.started[0]
                _totals[1] += time.process_time() - self.started[1]


event.register("numba:compile", _CompileTimer())


def compile_seconds() -> tuple[float, float]:
    """Wall and CPU seconds this process has spent compiling numba kernels so far (finished compilations)."""
    with _lock:
        return _totals[0], _totals[1]


def compile_seconds_on(clock: str) -> float:
    """:func:`compile_seconds` on one clock: ``"cpu"`` or ``"wall"``."""
    wall, cpu = compile_seconds()
    return cpu if clock == "cpu" else wall
