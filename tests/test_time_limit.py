"""The time limit of the whole fit (issue 27, item 3): budget, anytime warm start, what the record says.

No test times anything: limits of 0 s stop every phase at its first look at the clock, and generous
limits are never reached on these small problems, so the outcomes below hold on any machine under any load.
"""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pandas as pd
import pytest

from csvm_stats import CSVM
from csvm_stats.exceptions import NoSolutionError
from csvm_stats.optimization.budget import ABANDONED, Deadline, FitBudget
from csvm_stats.optimization.engine import fit_csvm, keep_start
from csvm_stats.optimization.problem import build_primal, rate_requirements
from csvm_stats.optimization.solvers import Solution, SolveRecord, SolverOptions, Status
from csvm_stats.optimization.warmstart import (
    MARGIN_TOL,
    shifted_intercept_start,
    svm_reference,
)

PASSED = Deadline(time.perf_counter, -math.inf)  # a deadline that has already passed


def synthetic(n: int, p: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, p))
    X[:, 0] += y
    return X, y


def test_accuracy_start_at_scale_meets_the_requirement():
    """An accuracy warm start on 1500 + 1500 rows (the O(n log n) intercept search): the point meets the count."""
    X, y = synthetic(3000)
    I, J = np.arange(1500), np.arange(1500, 3000)
    requirements = rate_requirements(y[J], {"acc": 1200})
    start = shifted_intercept_start(X[I], y[I], X[J], y[J], C=1.0, weight=np.ones(1500), requirements=requirements)
    margins = y[J] * (X[J] @ start.w + start.b)
    assert int((margins >= 1.0 - MARGIN_TOL).sum()) >= 1200
    hinge = np.maximum(0.0, 1 - y[I] * (X[I] @ start.w + start.b))
    assert start.objective == pytest.approx(start.w @ start.w + hinge.sum())


def test_warm_start_past_its_deadline_is_still_a_feasible_point_and_the_reference_a_valid_bound():
    X, y = synthetic(2000)
    I, J = np.arange(1000), np.arange(1000, 2000)
    count = int(0.9 * (y[J] > 0).sum())
    requirements = rate_requirements(y[J], {"tpr": count})
    start = shifted_intercept_start(X[I], y[I], X[J], y[J], C=1.0, weight=np.ones(1000), requirements=requirements,
                                    deadline=PASSED)
    margins = y[J] * (X[J] @ start.w + start.b)
    assert int((margins[y[J] > 0] >= 1.0 - MARGIN_TOL).sum()) >= count
    early = svm_reference(X[I], y[I], 1.0, np.ones(1000), deadline=PASSED)
    full = svm_reference(X[I], y[I], 1.0, np.ones(1000))
    assert early.dual <= full.dual + 1e-9 * abs(full.dual)  # weak duality at any stopping point
    assert full.dual <= start.objective  # every CSVM point is a point of the SVM on I


def test_fit_with_a_zero_limit_keeps_the_warm_start_and_says_where_the_limit_ran_out():
    X, y = synthetic(1000)
    count = int(0.9 * (y[500:] > 0).sum())
    fit = fit_csvm(X[:500], y[:500], X[500:], y[500:], min_counts={"tpr": count},
                   options=SolverOptions(time_limit=0.0, clock="cpu"))
    rec = fit.record
    assert rec.status is Status.TIME_LIMIT
    assert rec.clock == "cpu" and rec.time_limit == 0.0 and rec.limit_phase != ""
    assert rec.fit_cpu_time >= rec.cpu_time and rec.fit_wall_time >= rec.wall_time
    assert math.isfinite(rec.gap) and rec.best_bound <= rec.objective  # the plain SVM's dual bounds the optimum
    assert rec.outcome.startswith("time limit (0 s, cpu clock) reached during the ")
    margins = y[500:] * fit.decision_function(X[500:])
    assert int((margins[y[500:] > 0] >= 1 - 1e-6).sum()) >= count


def test_fit_within_its_limit_records_both_clocks_and_the_outcome(wisconsin):
    X, y = wisconsin
    count = int(0.9 * (y[300:] > 0).sum())
    fit = fit_csvm(X[:300, :5], y[:300], X[300:, :5], y[300:], min_counts={"tpr": count},
                   options=SolverOptions(time_limit=600.0))
    rec = fit.record
    assert rec.status is Status.OPTIMAL and rec.limit_phase == "" and rec.clock == "wall"
    assert rec.outcome.startswith("optimal")
    assert rec.fit_wall_time >= rec.wall_time and rec.fit_cpu_time >= rec.cpu_time


def test_model_fit_reports_the_clock_cpu_and_wall_time_in_the_record_and_summary(wisconsin):
    X, y = wisconsin
    frame = pd.DataFrame(X[:, :4], columns=["a", "b", "c", "d"]).assign(label=(y > 0).astype(int))
    res = CSVM.from_formula("label ~ .", frame, tpr_min=0.9, bound="binomial").fit(
        time_limit=600.0, clock="cpu", random_state=0)
    rec = res.solver
    assert rec.clock == "cpu" and rec.time_limit == 600.0
    assert rec.fit_cpu_time >= rec.cpu_time and rec.fit_wall_time >= rec.wall_time
    text = res.summary().as_text()  # plain words: one line for the time taken, the limit's clock in words
    for row in (f"{rec.fit_wall_time:.2f} s elapsed, {rec.fit_cpu_time:.2f} s of computing (CPU) time",
                "600 s of computing (CPU) time", "proven optimal"):
        assert row in text
    assert "clock=" not in text and "Solver time (s)" not in text
    detail = res.summary(detail=True).as_text()  # every time, and the option's own name
    for row in ("Wall time (s)", "CPU time (s)", "Solver time (s)", "600 s of computing (CPU) time (clock='cpu')"):
        assert row in detail
    assert "CPU time (s)" not in res.summary(timing=False, detail=True).as_text()
    assert "Time taken" not in res.summary(timing=False).as_text()


def test_sparse_fit_shares_the_budget_and_records_it(wisconsin):
    X, y = wisconsin
    frame = pd.DataFrame(X[:, :8], columns=[f"x{k}" for k in range(8)]).assign(label=(y > 0).astype(int))
    res = CSVM.from_formula("label ~ .", frame, tpr_min=0.9, bound="binomial", max_features=3).fit(
        solver="scip", time_limit=600.0, clock="cpu", random_state=0)
    assert res.solver.clock == "cpu" and res.solver.fit_cpu_time >= res.solver.cpu_time


def test_without_a_start_a_zero_limit_names_the_limit():
    X, y = synthetic(600)
    with pytest.raises(NoSolutionError, match="time limit of 0 s \\(cpu clock, whole fit\\) was reached"):
        fit_csvm(X[:300], y[:300], X[300:], y[300:], min_counts={"tpr": int((y[300:] > 0).sum())},
                 warm_start=False, solver="scip", options=SolverOptions(time_limit=0.0, clock="cpu"))


def test_keep_start_makes_the_start_the_incumbent_with_the_svm_bound():
    X, y = synthetic(200)
    I, J = np.arange(100), np.arange(100, 200)
    req = rate_requirements(y[J], {"tpr": 10})
    start = shifted_intercept_start(X[I], y[I], X[J], y[J], C=1.0, weight=np.ones(100), requirements=req)
    x0 = np.r_[start.w, start.b, start.xi, start.z]
    problem = build_primal(X[I], y[I], X[J], y[J], C=1.0, min_counts={"tpr": 10}, big_m=None,
                           sample_weight=np.ones(100), start=x0, upper=start.objective).miqp
    empty = SolveRecord(status=Status.NO_SOLUTION, objective=math.nan, best_bound=-math.inf, gap=math.inf,
                        wall_time=0.0, cpu_time=0.0, nodes=0, backend="bnb", backend_version="", formulation="")
    kept = keep_start(Solution(empty, None), problem, lower=0.5 * start.objective)
    assert kept.record.status is Status.TIME_LIMIT and kept.x is x0
    assert kept.record.objective == pytest.approx(start.objective)
    assert kept.record.best_bound == 0.5 * start.objective and kept.record.gap == pytest.approx(0.5)


def test_budget_call_is_left_at_its_deadline_and_passes_errors_on():
    budget = FitBudget(60.0, "wall")
    release = threading.Event()
    assert budget.call(release.wait, 30.0, what="a long step", deadline=PASSED) is ABANDONED
    release.set()
    with pytest.raises(ZeroDivisionError):
        budget.call(lambda: 1 / 0, what="a failing step")
    assert budget.call(lambda: None, what="a step returning None") is None
    with pytest.raises(NoSolutionError, match="ran out during a long step"):
        FitBudget(0.0, "cpu").require(time.sleep, 1.0, what="a long step")


def test_budget_interrupts_name_the_phase():
    budget = FitBudget(60.0, "cpu")
    with pytest.raises(KeyboardInterrupt, match="interrupted by the user during the warm start after"):
        with budget.interrupts(), budget.running("warm start"):
            raise KeyboardInterrupt


def test_multiclass_fit_shares_the_budget_and_a_zero_limit_keeps_its_start():
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True, as_frame=True)
    wine = X.assign(cultivar=pd.Categorical(np.array(["barolo", "grignolino", "barbera"])[y]))
    model = CSVM.from_formula("cultivar ~ .", wine, recall_min={"barbera": 0.7}, bound="none")
    res = model.fit(random_state=0, solver="scip", time_limit=600.0, clock="cpu")
    assert res.solver.clock == "cpu" and res.solver.fit_cpu_time >= res.solver.cpu_time
    try:  # the warm start (liblinear, in a worker thread) is kept if it ends in the fit's first wait, else left
        stopped = model.fit(random_state=0, solver="scip", time_limit=0.0, clock="cpu").solver
    except NoSolutionError as err:
        assert "time limit of 0 s (cpu clock, whole fit) was reached" in str(err)
    else:
        assert stopped.status is Status.TIME_LIMIT and stopped.limit_phase != ""


def _limit_record(**fields) -> SolveRecord:
    base = dict(status=Status.TIME_LIMIT, objective=10.0, best_bound=-math.inf, gap=math.inf, wall_time=1.0,
                cpu_time=1.0, nodes=0, backend="bnb", backend_version="", formulation="", clock="wall",
                time_limit=5.0, limit_phase="warm start")
    return SolveRecord(**{**base, **fields})


def test_every_stop_says_what_happened_in_the_record_and_the_summary_rows():
    """Optimal, the limit with a gap or without a bound, no solution with the closest rule, infeasible with the
    reason: the record's outcome and the summary's Result row say each in words."""
    from csvm_stats.reporting.plain import solver_table

    def result(record):
        table = solver_table(record, {"time_limit": 5.0, "clock": "wall"}, timing=False, detail=False)
        return str(table.loc["Result"].iloc[0]) if "Result" in table.index else str(table.iloc[0, 0])

    no_bound = _limit_record()
    assert no_bound.outcome == ("time limit (5 s, wall clock) reached during the warm start: best classifier found "
                                "kept, gap unknown (no lower bound yet)")
    assert "gap unknown" in result(no_bound) and "inf" not in result(no_bound)
    with_gap = _limit_record(best_bound=9.0, gap=0.1, limit_phase="search")
    assert with_gap.outcome.endswith("during the search: best classifier found kept, relative gap 10.00%")
    assert "relative gap 10.00%" in result(with_gap)
    early = _limit_record(best_bound=9.0, gap=0.1, limit_phase="", reason="the search ended before the limit")
    assert early.outcome == "the search ended before the limit: best classifier found kept, relative gap 10.00%"
    assert result(early) == ("not proven optimal: the search ended before the limit, with the best rule found "
                             "(relative gap 10.00%)")
    closest = "the closest rule found (x) has true positive rate 9/10 (needs 10) (1 short)"
    none = _limit_record(status=Status.NO_SOLUTION, objective=math.nan, reason=closest)
    assert none.outcome.endswith(f"no classifier found ({closest})")
    infeasible = _limit_record(status=Status.INFEASIBLE, reason="true positive rate needs 10 of 10")
    assert infeasible.outcome == "infeasible: no classifier meets the requirements (true positive rate needs 10 of 10)"
    assert _limit_record(status=Status.OPTIMAL, gap=0.0).outcome == "optimal"
    assert _limit_record(status=Status.INTERRUPTED).outcome == "interrupted by the user"


def test_phase_times_are_on_the_record():
    X, y = np.random.default_rng(0).normal(size=(120, 3)), np.tile([1.0, -1.0], 60)
    X[:, 0] += y
    fit = fit_csvm(X[:80], y[:80], X[80:], y[80:], min_counts={"tpr": 15}, options=SolverOptions(time_limit=60))
    names = [name for name, _, _ in fit.record.phase_times]
    assert names == ["kernel factorisation", "warm start", "model set-up", "search"]
    assert all(wall >= 0 and cpu >= 0 for _, wall, cpu in fit.record.phase_times)


def test_numba_compilation_is_not_charged_to_the_time_limit():
    """Review r10 F-jit-budget: a first fit compiled the kernels (10-40 CPU-s) inside its time limit and stopped
    without a classifier; compilation is now timed by numba's events and left out of every limit's clock."""
    import time

    import numba

    from csvm_stats.optimization.budget import FitBudget, clock_reader
    from csvm_stats.optimization.jit_clock import compile_seconds
    from csvm_stats.optimization.solvers._common import Stopwatch

    budget, watch, charged = FitBudget(60.0, "cpu"), Stopwatch(), clock_reader("cpu")
    before, raw0, charged0 = compile_seconds(), time.process_time(), charged()

    @numba.njit(cache=False)
    def fresh_kernel(x):  # a new function: compiled on this call, whatever the disk cache holds
        total = 0.0
        for i in range(x.shape[0]):
            total += np.sin(x[i]) * np.cos(x[i] * 0.5)
        return total

    fresh_kernel(np.arange(10.0))
    compiled = compile_seconds()[1] - before[1]
    raw, spent = time.process_time() - raw0, charged() - charged0
    assert compiled > 0.01  # numba reported the compilation
    assert spent == pytest.approx(raw - compiled, abs=1e-3)
    assert budget.spent() <= raw - compiled + 0.05 and watch.charged("cpu") <= raw - compiled + 0.05
    record = budget.stamp(_limit_record(status=Status.OPTIMAL, gap=0.0))
    assert record.compile_cpu_time == pytest.approx(compiled, abs=1e-3) and record.compile_wall_time > 0
