r"""The time limit of a whole fit: one budget on one clock, shared by every phase.

``time_limit`` bounds the whole ``fit`` (standardising, the kernel
factorisation, the warm start, the model's set-up, the search, the
certification), not only the solver. A :class:`FitBudget` is started where
the fit starts, on the clock the options name (``"wall"``: elapsed seconds;
``"cpu"``: this process's CPU seconds, every thread counted, so that load on
a shared machine does not shorten the search). Each phase reads it:

- steps that improve a point in rounds (the warm start's SVM fits, the
  search) check a :class:`Deadline` between rounds and stop with the best
  point so far (*anytime*);
- one long call that cannot be split (LAPACK's eigendecomposition of an
  n x n kernel matrix, scikit-learn's liblinear) runs in a worker thread
  (:meth:`FitBudget.call`): the fit waits for it in short slices, so Ctrl-C
  and the time limit are seen within a fraction of a second; an abandoned
  call finishes in the background (its CPU time still counts for the
  process, and Python waits for it before exiting) and its result is dropped;
- numba's compilation of the kernels on their first use after an install is
  not charged (:mod:`~csvm_stats.optimization.jit_clock`; the record keeps
  its seconds, ``compile_wall_time`` and ``compile_cpu_time``);
- the solver gets what the earlier phases left (:meth:`FitBudget.solver_options`), less a
  reserve for its last round between two clock reads and the work after it: the
  CPU those cost (measured on the warm start's rounds, :class:`StepCost`) times
  the wall seconds the fit has been getting per CPU second (:meth:`FitBudget.slowdown`;
  1 on the CPU clock). Under load a round of 0.1 CPU-s takes a second of wall
  time or more, which the wall clock would otherwise overrun by.

The budget remembers the phase in which the limit ran out
(:attr:`FitBudget.limit_phase`) and stamps it, the clock, the limit and the
CPU and wall time of the whole fit on the solve record (:meth:`FitBudget.stamp`).
A Ctrl-C (SIGINT, ``KeyboardInterrupt``) anywhere in the fit is re-raised as a
``KeyboardInterrupt`` that names the phase and the time spent (:meth:`FitBudget.interrupts`).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TypeVar

from csvm_stats.exceptions import NoSolutionError
from csvm_stats.optimization.blas import one_blas_thread
from csvm_stats.optimization.jit_clock import compile_seconds, compile_seconds_on

CLOCKS: tuple[str, ...] = ("wall", "cpu")
T = TypeVar("T")
Stamped = TypeVar("Stamped")  # a SolveRecord (csvm_stats.optimization.solvers.base, which imports this module)
Options = TypeVar("Options")  # a SolverOptions
WAIT_SLICE = 0.05  # seconds the fit waits on a worker thread between two looks at the clock and for Ctrl-C


def clock_reader(clock: str) -> Callable[[], float]:
    """The function that reads ``clock`` for time limits: ``time.perf_counter`` (``"wall"``) or
    ``time.process_time`` (``"cpu"``) less the seconds numba has spent compiling kernels on that clock
    (:mod:`~csvm_stats.optimization.jit_clock`: a first use's compilation is not charged to any limit)."""
    if clock not in CLOCKS:
        raise ValueError(f"clock must be one of {CLOCKS}, got {clock!r}.")
    raw = time.process_time if clock == "cpu" else time.perf_counter
    return lambda: raw() - compile_seconds_on(clock)


class Deadline:
    """A reading of a clock by which a step must stop (``at = inf``: never).

    ``steps`` (a budget's :class:`StepCost`, or ``None``) collects the CPU seconds of the rounds a step runs
    between two looks at this deadline (:meth:`note_step`), from which the budget reserves time for the search's
    last round (:meth:`FitBudget.solver_options`).
    """

    def __init__(self, read: Callable[[], float], at: float, steps: StepCost | None = None) -> None:
        self.read, self.at, self.steps = read, float(at), steps

    def expired(self) -> bool:
        """Whether the clock has reached the deadline."""
        return self.read() >= self.at

    def left(self) -> float:
        """Seconds until the deadline (0 once it has passed; ``inf`` for none)."""
        return max(0.0, self.at - self.read())

    def note_step(self, cpu_seconds: float, work: float) -> None:
        """Record one round between two looks at the clock: its CPU seconds and its ``work`` (any unit
        proportional to its cost, e.g. SMO steps times rows read)."""
        if self.steps is not None:
            self.steps.note(cpu_seconds, work)


class StepCost:
    """The CPU cost of rounds of work, measured on a fit's earlier steps: the largest cost per unit of work and
    the largest work of one round."""

    def __init__(self) -> None:
        self.per_work = 0.0
        self.largest = 0.0

    def note(self, cpu_seconds: float, work: float) -> None:
        if work > 0:
            self.per_work = max(self.per_work, cpu_seconds / work)
            self.largest = max(self.largest, float(work))

    def round_cpu(self, work: float) -> float:
        """CPU seconds of a round of at most ``work`` units (no more than the largest round seen: a later solve
        warm-started from these points does not run longer rounds)."""
        return self.per_work * min(float(work), self.largest)


NO_DEADLINE = Deadline(time.perf_counter, math.inf)
ABANDONED = object()  # what FitBudget.call returns for a call left running at its deadline


class FitBudget:
    """The time limit of a whole fit on one clock (module docstring).

    ``time_limit`` seconds on ``clock``, counted from construction. Nested
    steps may take a :meth:`part` of what is left: a budget of its own whose
    time the parent counts too (the same clock runs for both).
    """

    def __init__(self, time_limit: float, clock: str = "wall") -> None:
        self.read = clock_reader(clock)
        self.time_limit, self.clock = float(time_limit), clock
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()
        self.compile0 = compile_seconds()
        self.started = self.read()
        self.phase = "set-up"
        self.limit_phase = ""  # the phase in which the limit ran out ("": not yet)
        self.interrupted_in = ""  # the phase a Ctrl-C stopped ("": none)
        self.phase_times: dict[str, tuple[float, float]] = {}  # phase: (wall, CPU) seconds spent in it so far
        self.step_cost = StepCost()  # CPU per unit of SMO work, measured by the warm start's rounds

    @classmethod
    def of(cls, options) -> FitBudget:
        """A budget of ``options.time_limit`` seconds on ``options.clock``, started now."""
        return cls(options.time_limit, options.clock)

    def spent(self) -> float:
        """Seconds used on the budget's clock."""
        return self.read() - self.started

    def remaining(self) -> float:
        """Seconds left (0 once the limit is reached)."""
        return max(0.0, self.time_limit - self.spent())

    def expired(self) -> bool:
        """Whether the limit is reached (and, the first time, in which phase: :attr:`limit_phase`)."""
        if self.spent() < self.time_limit:
            return False
        self.limit_phase = self.limit_phase or self.phase
        return True

    def deadline(self, share: float = 1.0) -> Deadline:
        """The clock reading by which ``share`` of the whole limit (counted from the start) is used (its rounds'
        costs are noted in :attr:`step_cost`)."""
        return Deadline(self.read, self.started + share * self.time_limit, self.step_cost)

    def slowdown(self) -> float:
        """Seconds on the budget's clock per CPU second of this process so far: at least 1 on the wall clock (a
        shared machine gives the fit a share of a core: at load 22 on 2 cores about 11 wall seconds per CPU
        second), 1 on the CPU clock."""
        if self.clock == "cpu":
            return 1.0
        wall, cpu = (spent - (now - then) for spent, now, then in zip(self.times(), compile_seconds(), self.compile0))
        return max(1.0, wall / cpu) if cpu > 0 else 1.0  # numba's compilation left out, as from the limit

    def part(self, share: float) -> FitBudget:
        """A budget of ``share`` of what is left, started now, on the same clock."""
        return FitBudget(share * self.remaining(), self.clock)

    def solver_options(self, options: Options, reserve_cpu: float = 0.0) -> Options:
        """``options`` with the time limit cut to what is left of the budget less ``reserve_cpu`` CPU seconds on
        the budget's clock (times :meth:`slowdown`): the solver's last round between two looks at the clock and
        the fit's work after the search, which would otherwise run past the limit (module docstring)."""
        left = max(0.0, self.remaining() - reserve_cpu * self.slowdown())
        return replace(options, time_limit=left, clock=self.clock)

    def times(self) -> tuple[float, float]:
        """Wall and CPU seconds since the budget started."""
        return time.perf_counter() - self.wall0, time.process_time() - self.cpu0

    @contextmanager
    def running(self, phase: str) -> Iterator[None]:
        """Name the phase that runs inside the block; at its end, note whether the limit ran out in it."""
        before, self.phase = self.phase, phase
        wall0, cpu0 = time.perf_counter(), time.process_time()
        try:
            yield
        except KeyboardInterrupt:
            self.interrupted_in = self.interrupted_in or phase
            raise
        finally:
            self.expired()
            self.phase = before
            wall, cpu = self.phase_times.get(phase, (0.0, 0.0))
            self.phase_times[phase] = (wall + time.perf_counter() - wall0, cpu + time.process_time() - cpu0)

    def stamp(self, record: Stamped) -> Stamped:
        """``record`` with the whole fit's times (and the part of them numba spent compiling, not charged to the
        limit), the limit, its clock, the phase in which it ran out and the wall and CPU seconds of every phase so
        far (``phase_times``: a nested phase's time also counts for the phase
        around it)."""
        self.expired()
        wall, cpu = self.times()
        compile_wall, compile_cpu = (now - then for now, then in zip(compile_seconds(), self.compile0))
        phases = tuple((name, round(w, 6), round(c, 6)) for name, (w, c) in self.phase_times.items())
        return replace(record, clock=self.clock, time_limit=self.time_limit, fit_wall_time=wall, fit_cpu_time=cpu,
                       compile_wall_time=compile_wall, compile_cpu_time=compile_cpu, limit_phase=self.limit_phase,
                       phase_times=phases)

    def call(self, func: Callable[..., T], *args, what: str, deadline: Deadline | None = None) -> T | object:
        """``func(*args)`` in a worker thread, waited for in slices of WAIT_SLICE seconds.

        Ctrl-C while waiting raises ``KeyboardInterrupt`` at once. At
        ``deadline`` (default: the end of the budget) the call is abandoned
        (it finishes in the background; its result is dropped) and
        :data:`ABANDONED` is returned; callers that cannot go on without the
        result raise (see :meth:`require`). ``what`` names the thread. An
        exception of ``func`` is raised here.

        The worker holds the one-BLAS-thread limit of :mod:`csvm_stats.optimization.blas`
        itself, so that a fit that leaves it early never restores BLAS's
        threads while it still runs LAPACK (changing OpenBLAS's thread count
        under a running call was seen to deadlock the process at exit), and it
        is not a daemon: Python waits for it before it exits rather than tear
        BLAS down under it.
        """
        deadline = deadline or self.deadline()
        box: dict[str, object] = {}

        def work() -> None:
            try:
                box["value"] = one_blas_thread(func)(*args)
            except BaseException as err:  # noqa: BLE001 - handed to the waiting thread
                box["error"] = err

        worker = threading.Thread(target=work, name=f"csvm-{what}", daemon=False)
        worker.start()
        while worker.is_alive():
            worker.join(WAIT_SLICE)
            if worker.is_alive() and deadline.expired():
                self.expired()
                return ABANDONED
        if "error" in box:
            raise box["error"]  # type: ignore[misc]
        return box["value"]  # type: ignore[return-value]

    def require(self, func: Callable[..., T], *args, what: str) -> T:
        """:meth:`call` for a step the fit cannot do without: the limit running out in it raises
        :class:`~csvm_stats.exceptions.NoSolutionError` naming the step and the limit."""
        result = self.call(func, *args, what=what)
        if result is ABANDONED:
            raise NoSolutionError(
                f"the time limit ({self.time_limit:g} s on the {self.clock} clock, for the whole fit) ran out during "
                f"{what}, before any classifier was found; raise time_limit."
            )
        return result  # type: ignore[return-value]

    @contextmanager
    def interrupts(self) -> Iterator[None]:
        """Re-raise a Ctrl-C inside the block as ``KeyboardInterrupt`` naming the phase and the time spent."""
        try:
            yield
        except KeyboardInterrupt as err:
            if err.args and str(err.args[0]).startswith("the fit was interrupted"):
                raise
            wall, cpu = self.times()
            detail = f" ({err.args[0]})" if err.args else ""
            phase = self.interrupted_in or self.phase
            message = (f"the fit was interrupted by the user during the {phase} after {wall:.1f} s "
                       f"({cpu:.1f} CPU-s){detail}")
            raise KeyboardInterrupt(message).with_traceback(err.__traceback__) from None
