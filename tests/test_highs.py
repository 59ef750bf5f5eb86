"""The HiGHS backend's clocks: ``clock="cpu"`` counts this process's CPU seconds, not wall seconds."""

from __future__ import annotations

import time

import numpy as np
import pytest

from csvm_stats.optimization import solvers
from csvm_stats.optimization.problem import build_l1_primal
from csvm_stats.optimization.solvers import SolverOptions, Status
from csvm_stats.optimization.solvers import highs as highs_module
from csvm_stats.optimization.solvers._common import Stopwatch


class _BusyElsewhere(Stopwatch):
    """A stopwatch whose CPU clock reads a day ahead: as if the process had spent its CPU before the solve."""

    def elapsed(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall0, time.process_time() - self.cpu0 + 86400.0


def _milp():
    """An L1-norm CSVM (a MILP with binaries) that HiGHS does not finish in presolve."""
    rng = np.random.default_rng(5)
    n, p = 160, 6
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, p))
    X[:, 0] += 0.7 * y
    yj = y[n // 2 :]
    return build_l1_primal(X[: n // 2], y[: n // 2], X[n // 2 :], yj, C=1.0,
                           min_counts={"tpr": int((yj > 0).sum()) - 3}, big_m=50.0, sample_weight=np.ones(n // 2)).miqp


@pytest.mark.parametrize("clock", ["cpu", "wall"])
def test_highs_time_limit_counts_the_requested_clock(clock, monkeypatch):
    monkeypatch.setattr(highs_module, "Stopwatch", _BusyElsewhere)
    solution = solvers.solve(_milp(), "highs", SolverOptions(time_limit=3600.0, clock=clock))
    if clock == "cpu":  # the CPU clock is past the limit at HiGHS's first interrupt check
        assert solution.record.status in (Status.TIME_LIMIT, Status.NO_SOLUTION)
    else:  # wall time is far below the limit: HiGHS solves the model
        assert solution.record.status is Status.OPTIMAL
