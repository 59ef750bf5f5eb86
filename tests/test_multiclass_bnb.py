"""bnb on the multiclass CSVM against brute force: optimum, bounds, infeasibility; every backend on the same instances."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from test_multiclass_engine import brute_force, three_blobs

from csvm_stats.exceptions import InfeasibleConstraintsError, SolverError
from csvm_stats.multiclass.engine import fit_multiclass_csvm
from csvm_stats.multiclass.problem import build_multiclass_primal
from csvm_stats.multiclass.warmstart import class_margins
from csvm_stats.optimization import solvers
from csvm_stats.optimization.solvers import SolverOptions, Status

# bnb's node LPs meet rows to HiGHS's 1e-7: ask for a gap it can prove; SCIP and Gurobi as in the engine tests
OPTIONS = SolverOptions(mip_gap=1e-6, time_limit=600, clock="cpu")
BACKENDS = ["bnb", "scip"] + (["gurobi"] if solvers.gurobi_usable() else [])


def instance(seed: int, slack: int):
    """Three classes, 8 points each; classes 0 and 2 need all but ``slack`` of their anchor points."""
    X, y = three_blobs(8, seed=seed, spread=1.6)
    X_i, y_i, X_j, y_j = X[:15], y[:15], X[15:], y[15:]
    counts = {k: max(0, int(np.sum(y_j == k)) - slack) for k in (0, 2)}
    return X_i, y_i, X_j, y_j, counts


CASES = [(seed, slack) for seed in range(3) for slack in (1, 2)]


@pytest.fixture(scope="module")
def expected():
    """The brute-force optimum of every case (enumerated anchor indicators, one QP each)."""
    return {case: brute_force(*instance(*case)[:4], 1.0, instance(*case)[4]) for case in CASES}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_every_backend_matches_brute_force(case, backend, expected):
    X_i, y_i, X_j, y_j, counts = instance(*case)
    fit = fit_multiclass_csvm(X_i, y_i, X_j, y_j, 3, min_counts=counts, big_m=None, solver=backend, options=OPTIONS)
    assert fit.record.status is Status.OPTIMAL
    assert fit.record.objective == pytest.approx(expected[case], rel=1e-5, abs=1e-6)
    assert fit.record.best_bound <= expected[case] * (1 + 1e-6) + 1e-9
    margins = class_margins(fit.decision_function(X_j), y_j)
    for k, c in counts.items():
        assert np.sum(margins[y_j == k] >= 1 - 1e-6) >= c


@pytest.mark.parametrize("case", CASES[::3])
def test_bnb_without_a_start_matches_brute_force(case, expected):
    """No warm start: indicator rows instead of big-M; the search switches them on for forced points."""
    X_i, y_i, X_j, y_j, counts = instance(*case)
    fit = fit_multiclass_csvm(X_i, y_i, X_j, y_j, 3, min_counts=counts, big_m=None, solver="bnb", options=OPTIONS,
                              warm_start=False)
    assert fit.record.status is Status.OPTIMAL
    assert fit.record.objective == pytest.approx(expected[case], rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("limit", [1e-9, 0.02])
def test_bound_never_above_the_optimum_when_stopped_early(limit, expected):
    case = (1, 2)
    X_i, y_i, X_j, y_j, counts = instance(*case)
    problem = build_multiclass_primal(X_i, y_i, X_j, y_j, 3, C=1.0, min_counts=counts, big_m=None,
                                      sample_weight=np.ones(y_i.size))
    solution = solvers.solve(problem.miqp, "bnb", replace(OPTIONS, time_limit=limit))
    bound = solution.record.best_bound
    assert math.isnan(bound) or bound <= expected[case] * (1 + 1e-6) + 1e-9


def test_infeasible_requirements_agreed_by_every_backend():
    """Anchor points of class 0 duplicated with label 2: no argmax rule gets both right, yet both are required."""
    X_i, y_i, X_j, y_j, _ = instance(0, 1)
    X_j = np.vstack([X_j, X_j[y_j == 0][:2]])
    y_j = np.r_[y_j, np.full(2, 2)]
    counts = {0: int(np.sum(y_j == 0)), 2: int(np.sum(y_j == 2))}
    for backend in BACKENDS:
        with pytest.raises(InfeasibleConstraintsError):
            fit_multiclass_csvm(X_i, y_i, X_j, y_j, 3, min_counts=counts, big_m=None, solver=backend, options=OPTIONS)


def test_auto_takes_bnb_for_the_exact_multiclass_model():
    X_i, y_i, X_j, y_j, counts = instance(2, 1)
    fit = fit_multiclass_csvm(X_i, y_i, X_j, y_j, 3, min_counts=counts, big_m=None, solver="auto", options=OPTIONS)
    assert fit.record.choice.startswith("auto: bnb")
    assert fit.record.backend == "bnb"


def test_a_user_big_m_below_the_proven_constants_is_not_bnbs_model():
    """big_m smaller than a proven constant changes the model: bnb refuses it, naming the backend that can."""
    X_i, y_i, X_j, y_j, counts = instance(0, 1)
    with pytest.raises(SolverError, match="scip"):
        fit_multiclass_csvm(X_i, y_i, X_j, y_j, 3, min_counts=counts, big_m=1e-3, solver="bnb", options=OPTIONS)


def test_each_node_lp_is_limited_to_the_time_the_search_has_left():
    """HiGHS ran every node LP without a limit, so a 60-class fit with time_limit = 10 took 124 s (review r7 F11):
    the outer LP hands HiGHS the search's time left before every run (at least 1 ms)."""
    from csvm_stats.optimization.solvers.outer_lp import OuterLP

    X_i, y_i, X_j, y_j, counts = instance(1, 2)
    problem = build_multiclass_primal(X_i, y_i, X_j, y_j, 3, C=1.0, min_counts=counts, big_m=None,
                                      sample_weight=np.ones(y_i.size)).miqp
    lp = OuterLP(problem)
    seen = []
    run = lp.model.run

    def spy():
        seen.append(lp.model.getOptionValue("time_limit"))
        return run()

    lp.model.run = spy
    left = iter([2.5, -1.0, 7.0, 7.0, 7.0, 7.0, 7.0])
    lp.time_left = lambda: next(left)
    assert lp.solve(1e-6, 1).x is not None
    lp.solve(1e-6, 1)
    value = [v[1] if isinstance(v, tuple) else v for v in seen]
    assert value[0] == pytest.approx(2.5, abs=0.1)  # HiGHS's limit: its total run time so far plus the time left
    assert 1e-3 <= value[1] < 0.5  # no time left: 1 ms beyond the (short) run time so far
