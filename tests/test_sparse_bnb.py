"""bnb's search for the cardinality CSVM: the perspective relaxation and the search against brute force.

Brute force enumerates every s-subset of at most 8 columns and solves the
exact CSVM on it (SCIP, gap 1e-7); the search must reach that optimum to the
requested gap, and no bound it reports (the root's dual bound, the children's
bounds of every feature, the record's final bound) may exceed the optimum
(tolerance: the SMO solver's KKT tolerance relative to the objective).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

from csvm_stats.exceptions import InfeasibleConstraintsError
from csvm_stats.optimization import perspective
from csvm_stats.optimization.engine import fit_csvm
from csvm_stats.optimization.perspective import (
    Features, PerspectiveRelaxation, child_bounds, k_support, top_sum,
)
from csvm_stats.optimization.problem import build_primal, with_cardinality
from csvm_stats.optimization.solvers import SolverOptions, Status, _auto_chain, solve
from csvm_stats.optimization.solvers.base import UNCONVERGED_END
from csvm_stats.sparse.model import fit_cardinality_csvm

TIGHT = SolverOptions(mip_gap=1e-7, feasibility_tol=1e-7)
BOUND_TOL = 1e-6  # relative: bounds are valid up to the dual solver's tolerance


def _toy(n: int, p: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X[:, :2].sum(axis=1) + 0.9 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


CASES = {  # name: (n, p, s, seed, requirement as shares of the anchor class sizes)
    "no requirement": (60, 7, 2, 1, {}),
    "tpr, free anchors": (70, 8, 3, 2, {"tpr": 0.8}),
    "tpr and tnr": (70, 6, 2, 4, {"tpr": 0.6, "tnr": 0.6}),
    "accuracy": (70, 7, 3, 5, {"acc": 0.85}),
}


@functools.cache
def _case(name: str) -> tuple:
    """Data, counts, s and the brute-force optimum with the optimal subsets' objectives."""
    n, p, s, seed, shares = CASES[name]
    X, y = _toy(n, p, seed)
    X_i, y_i, X_j, y_j = X[: n * 2 // 3], y[: n * 2 // 3], X[n * 2 // 3:], y[n * 2 // 3:]
    sizes = {"tpr": int((y_j > 0).sum()), "tnr": int((y_j < 0).sum()), "acc": y_j.size}
    counts = {kind: int(math.floor(share * sizes[kind])) for kind, share in shares.items()}
    values = {}
    for S in itertools.combinations(range(p), s):
        try:
            fit = fit_csvm(X_i[:, list(S)], y_i, X_j[:, list(S)], y_j, C=1.0, min_counts=counts, big_m=None,
                           solver="scip", options=TIGHT)
        except InfeasibleConstraintsError:  # no classifier on these columns meets the requirements
            values[S] = math.inf
        else:
            values[S] = fit.objective
    assert math.isfinite(min(values.values()))
    return X_i, y_i, X_j, y_j, counts, s, values


@pytest.mark.parametrize("name", list(CASES))
def test_search_reaches_the_brute_force_optimum_and_its_bound_stays_below(name):
    X_i, y_i, X_j, y_j, counts, s, values = _case(name)
    best = min(values.values())
    fit = fit_cardinality_csvm(X_i, y_i, X_j, y_j, max_features=s, C=1.0, min_counts=counts, solver="bnb",
                               options=TIGHT)
    record = fit.record
    assert record.backend == "bnb" and record.status is Status.OPTIMAL
    assert fit.selected.size <= s
    assert abs(fit.objective - best) <= 1e-5 * max(1.0, best)
    assert record.best_bound <= best * (1 + BOUND_TOL)


def _root(name: str):
    """The relaxation of a case and its data (stacked rows; SMO box C/2 = 0.5 on I)."""
    X_i, y_i, X_j, y_j, counts, s, values = _case(name)
    X, y = np.vstack([X_i, X_j]), np.r_[y_i, y_j]
    relaxation = PerspectiveRelaxation(X, y, np.r_[np.full(y_i.size, 0.5), np.full(y_j.size, np.inf)], y_i.size,
                                       np.ones(y_i.size), 1e-9)
    return relaxation, X_i.shape[1], s, values


def _problem(name: str):
    """The cardinality MIQP of a case, tightened from the start of its best subset (as the sparse route does)."""
    X_i, y_i, X_j, y_j, counts, s, values = _case(name)
    S = list(min(values, key=values.get))
    fit = fit_csvm(X_i[:, S], y_i, X_j[:, S], y_j, C=1.0, min_counts=counts, big_m=None, solver="scip",
                   options=TIGHT)
    w = np.zeros(X_i.shape[1])
    w[S] = fit.coef
    xi = np.maximum(0.0, 1.0 - y_i * (X_i @ w + fit.intercept))
    start = np.r_[w, fit.intercept, xi, fit.z]
    primal = build_primal(X_i, y_i, X_j, y_j, C=1.0, min_counts=counts, big_m=None, sample_weight=np.ones(y_i.size),
                          start=start, upper=float(w @ w + xi.sum()))
    return with_cardinality(primal, s).miqp, values


@pytest.mark.parametrize("rounds", [1, 3, 50])
def test_relaxation_bounds_and_child_bounds_never_exceed_the_optima(rounds):
    """Without requirements, the root's bound at any number of passes (converged or not) is below the optimum,
    and each feature's two child bounds below the best subset without / with that feature."""
    relaxation, p, s, values = _root("no requirement")
    rows = np.arange(relaxation.n_train)  # no requirement: no anchor row counts
    features = Features(np.zeros(p, dtype=bool), np.zeros(p, dtype=bool), s)
    rel = relaxation.relax(features, rows, None, None, math.inf, rounds)
    best = min(values.values())
    assert rel.bound.value <= best * (1 + BOUND_TOL)
    assert rel.value >= rel.bound.value - BOUND_TOL  # weak duality between the relaxation's primal and dual
    off, on = child_bounds(rel.bound, features)
    for f in range(p):
        without = min(v for S, v in values.items() if f not in S)
        within = min(v for S, v in values.items() if f in S)
        assert off[f] <= without * (1 + BOUND_TOL)
        assert on[f] <= within * (1 + BOUND_TOL)


def test_converged_root_relaxation_is_tighter_than_the_plain_svm_and_exact_when_s_is_p():
    relaxation, p, s, values = _root("no requirement")
    rows = np.arange(relaxation.n_train)
    loose = relaxation.relax(Features(np.zeros(p, bool), np.zeros(p, bool), p), rows, None, None, math.inf, 1)
    tight = relaxation.relax(Features(np.zeros(p, bool), np.zeros(p, bool), s), rows, None, None, math.inf, 400)
    assert loose.bound.value < tight.bound.value  # the budget binds: the perspective sees it
    assert abs(loose.value - loose.bound.value) <= 1e-6 * loose.value  # s = p: an SVM, solved exactly


@pytest.mark.parametrize("rounds", [3, 400])
def test_relaxation_with_forced_anchors_returns_a_feasible_point_whose_value_bounds_it_from_above(rounds):
    """With the optimum's anchor points forced (SMO meets their margins only to its tolerance), the point
    returned meets every forced margin, its value is the relaxation's objective there, the dual bound stays
    below it and below the optimum, and with enough passes the two agree."""
    X_i, y_i, X_j, y_j, counts, s, values = _case("tpr and tnr")
    S = list(min(values, key=values.get))
    fit = fit_csvm(X_i[:, S], y_i, X_j[:, S], y_j, C=1.0, min_counts=counts, big_m=None, solver="scip",
                   options=TIGHT)
    forced = y_j * (X_j[:, S] @ fit.coef + fit.intercept) >= 1.0 - 1e-7
    assert forced.sum() >= sum(counts.values())
    X, y = np.vstack([X_i, X_j]), np.r_[y_i, y_j]
    relaxation = PerspectiveRelaxation(X, y, np.r_[np.full(y_i.size, 0.5), np.full(y_j.size, np.inf)], y_i.size,
                                       np.ones(y_i.size), 1e-5)
    rows = np.r_[np.arange(y_i.size), y_i.size + np.flatnonzero(forced)]
    features = Features(np.zeros(X.shape[1], dtype=bool), np.zeros(X.shape[1], dtype=bool), s)
    rel = relaxation.relax(features, rows, None, None, math.inf, rounds, 1e-6)
    best = min(values.values())
    assert rel.bound.value <= best * (1 + BOUND_TOL)
    assert math.isfinite(rel.value) and rel.value >= rel.bound.value - BOUND_TOL
    assert np.min(y_j[forced] * (X_j[forced] @ rel.w + rel.b)) >= 1.0 - 1e-9
    hinge = np.maximum(0.0, 1.0 - y_i * (X_i @ rel.w + rel.b)).sum()
    assert rel.value == pytest.approx(k_support(np.abs(rel.w), s)[0] + hinge, rel=1e-9)
    assert rounds < 400 or rel.value - rel.bound.value <= 1e-4 * rel.value  # primal and dual agree


def test_k_support_is_the_minimum_over_the_budget_polytope():
    rng = np.random.default_rng(0)
    for _ in range(50):
        a = np.abs(rng.normal(size=9)) * (rng.random(9) < 0.8)
        k = int(rng.integers(1, 9))
        rho, sigma = k_support(a, k)
        assert sigma.sum() <= k + 1e-9 and np.all((sigma >= 0) & (sigma <= 1 + 1e-12))
        on = a > 0
        assert abs(rho - float(np.sum(a[on] ** 2 / sigma[on]))) <= 1e-9 * max(1.0, rho)
        for _ in range(20):  # any feasible sigma gives at least rho
            trial = rng.random(9)
            trial *= min(1.0, k / trial.sum())
            assert rho <= float(np.sum(a[on] ** 2 / trial[on])) + 1e-9
        if np.count_nonzero(a) <= k:
            assert abs(rho - float(a @ a)) <= 1e-12 * max(1.0, rho)
    assert top_sum(np.array([3.0, 1.0, 2.0]), 2) == 5.0 and top_sum(np.array([1.0]), 0) == 0.0
    assert k_support(np.array([1.0, 0.0]), 0)[0] == math.inf


def test_time_limited_search_reports_the_limit_with_a_valid_bound():
    problem, values = _problem("tpr, free anchors")
    solution = solve(problem, "bnb", SolverOptions(time_limit=0.0, mip_gap=1e-7, clock="cpu"))
    record = solution.record
    assert record.status is Status.TIME_LIMIT  # the start is kept
    assert problem.max_violation(solution.x) <= 1e-6
    assert record.best_bound <= min(values.values()) * (1 + BOUND_TOL)
    assert "time limit" in record.outcome and record.gap >= 0


def test_search_ending_with_the_gap_open_before_the_limit_does_not_say_the_limit_stopped_it(monkeypatch):
    """One SMO step per relaxation pass: nodes close on relaxations that did not converge, so the search ends,
    well within its limit, with the gap above mip_gap. The incumbent is kept (TIME_LIMIT), the reason says why."""
    monkeypatch.setattr(perspective, "SMO_STEPS", 1)
    problem, values = _problem("tpr, free anchors")
    solution = solve(problem, "bnb", SolverOptions(time_limit=600.0, mip_gap=1e-7, feasibility_tol=1e-7, clock="cpu"))
    record = solution.record
    assert record.status is Status.TIME_LIMIT and record.gap > 1e-7 and record.cpu_time < 600.0
    assert record.reason == UNCONVERGED_END
    assert record.outcome == f"{UNCONVERGED_END}: best classifier found kept, relative gap {record.gap:.2%}"
    assert "time limit reached" not in record.outcome
    assert problem.max_violation(solution.x) <= 1e-6
    assert record.best_bound <= min(values.values()) * (1 + BOUND_TOL)


def test_search_solution_meets_the_miqp_and_auto_tries_bnb_before_scip():
    problem, values = _problem("tpr and tnr")
    names = [name for name, _ in _auto_chain(problem)]
    assert problem.cardinality is not None and names.index("bnb") < names.index("scip")
    solution = solve(problem, "bnb", TIGHT)
    assert problem.max_violation(solution.x) <= 1e-6
    assert abs(solution.record.objective - min(values.values())) <= 1e-5 * max(1.0, min(values.values()))
