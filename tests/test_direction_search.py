"""The joint-count heuristic (csvm_stats.optimization.direction_search) and the counting certificate
(csvm_stats.optimization.feasibility) against brute force on small anchor samples: the certificate never calls a
feasible problem infeasible, the heuristic never returns a rule that misses a requirement, and a fit that finds
no rule says how close it came."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from csvm_stats.exceptions import NoSolutionError
from csvm_stats.optimization import engine
from csvm_stats.optimization.direction_search import search_directions, shortfall
from csvm_stats.optimization.feasibility import check_counts
from csvm_stats.optimization.problem import rate_requirements
from csvm_stats.optimization.solvers import Solution, SolveRecord, SolverOptions, Status
from csvm_stats.optimization.warmstart import joint_count_start


def separable(phi: np.ndarray, y: np.ndarray) -> bool:
    """Is there (w, b) with y_j (w'phi_j + b) >= 1 for every row (LP)?"""
    if y.size == 0:
        return True
    A = -y[:, None] * np.hstack([phi, np.ones((y.size, 1))])
    res = linprog(np.zeros(A.shape[1]), A_ub=A, b_ub=-np.ones(y.size), bounds=(None, None), method="highs")
    return res.status == 0


def feasible_by_enumeration(phi: np.ndarray, y: np.ndarray, counts: dict[str, int]) -> bool:
    """Some subset of anchor points meeting the counts is separable with margin 1: the counts can be met."""
    n = y.size
    for chosen in itertools.product((False, True), repeat=n):
        s = np.array(chosen)
        got = {"tpr": int((s & (y > 0)).sum()), "tnr": int((s & (y < 0)).sum()), "acc": int(s.sum())}
        if all(got[k] >= c for k, c in counts.items()) and separable(phi[s], y[s]):
            return True
    return False


@st.composite
def anchor_problems(draw):
    """A small anchor sample (both classes) on 1-3 discrete columns (ties) or continuous ones, and counts."""
    n = draw(st.integers(4, 8))
    p = draw(st.integers(1, 3))
    discrete = draw(st.booleans())
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    phi = rng.integers(0, 3, size=(n, p)).astype(float) if discrete else rng.normal(size=(n, p))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    sizes = {"tpr": int((y > 0).sum()), "tnr": int((y < 0).sum()), "acc": n}
    kinds = draw(st.sampled_from([("tpr", "tnr"), ("acc",), ("tpr", "acc"), ("tpr", "tnr", "acc"), ("tnr",)]))
    counts = {k: draw(st.integers(1, sizes[k])) for k in kinds}
    return phi, y, counts


@settings(max_examples=60, deadline=None, derandomize=True)
@given(anchor_problems())
def test_certificate_never_calls_a_feasible_problem_infeasible(problem):
    phi, y, counts = problem
    n = y.size
    check = check_counts(phi, y, rate_requirements(y, counts), np.zeros(n, bool), np.zeros(n, bool))
    feasible = feasible_by_enumeration(phi, y, counts)
    if feasible:
        assert check.feasible is not False, check.reason
    if check.feasible and check.exact:
        assert feasible


@settings(max_examples=60, deadline=None, derandomize=True)
@given(anchor_problems())
def test_direction_search_returns_only_rules_that_meet_the_counts(problem):
    phi, y, counts = problem
    requirements = rate_requirements(y, counts)
    found = search_directions(phi[:0], y[:0], phi, y, requirements, lambda weights: np.zeros(phi.shape[1]))
    if found.direction is not None:
        short, t, met = shortfall(phi @ found.direction, y, requirements)
        assert short == 0 and all(met[k] >= c for k, c in counts.items())
    else:  # what it reports is what its closest rule meets
        assert found.closest.short > 0
    if not feasible_by_enumeration(phi, y, counts):
        assert found.direction is None


def test_shortfall_equals_a_scan_of_every_threshold():
    rng = np.random.default_rng(3)
    scores, y = np.round(rng.normal(size=40), 1), np.where(rng.random(40) < 0.4, 1.0, -1.0)
    requirements = rate_requirements(y, {"tpr": 14, "tnr": 20})
    short, _, _ = shortfall(scores, y, requirements)
    best = min(max(0, 14 - int(((scores > t) & (y > 0)).sum())) + max(0, 20 - int(((scores < t) & (y < 0)).sum()))
               for t in np.r_[scores - 1e-9, scores + 1e-9])
    assert short == best


def gaussian(n: int, seed: int):
    """The synthetic instance of benchmarks/solve_time.py: mean shift 1 and 0.5 on the first two of 10 columns."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, 10))
    X[:, 0] += y
    X[:, 1] += 0.5 * y
    return X, y


def test_joint_count_start_meets_requirements_the_shifted_svm_misses():
    """TPR and TNR >= 0.88 on 200 anchor points: no scaled, shifted SVM meets both (checked), the search does."""
    from csvm_stats.optimization.warmstart import shifted_intercept_start

    X, y = gaussian(400, 5)
    Xi, yi, Xj, yj = X[:200], y[:200], X[200:], y[200:]
    counts = {"tpr": int(np.ceil(0.88 * (yj > 0).sum())), "tnr": int(np.ceil(0.88 * (yj < 0).sum()))}
    requirements = rate_requirements(yj, counts)
    weight = np.ones(200)
    assert shifted_intercept_start(Xi, yi, Xj, yj, C=1.0, weight=weight, requirements=requirements) is None
    start, closest = joint_count_start(Xi, yi, Xj, yj, C=1.0, weight=weight, requirements=requirements)
    assert start is not None and closest.short == 0
    margins = yj * (Xj @ start.w + start.b)
    assert int((margins[yj > 0] >= 1 - 1e-9).sum()) >= counts["tpr"]
    assert int((margins[yj < 0] >= 1 - 1e-9).sum()) >= counts["tnr"]
    assert start.objective == pytest.approx(start.w @ start.w + np.maximum(0, 1 - yi * (Xi @ start.w + start.b)).sum())


def test_a_fit_without_a_rule_says_how_close_it_came(monkeypatch):
    """The search ends without a solution (a stand-in backend that finds none): the error and the record name the
    closest rule the heuristics found, how far short it is and what was tried."""
    X, y = gaussian(200, 1)
    X[:, 0] *= 0.1  # barely separated classes: TPR and TNR >= 0.95 are out of reach of every direction tried
    Xi, yi, Xj, yj = X[:100], y[:100], X[100:], y[100:]
    counts = {"tpr": int((yj > 0).sum()) - 1, "tnr": int((yj < 0).sum()) - 1}

    def no_solution(problem, solver, options):
        record = SolveRecord(status=Status.NO_SOLUTION, objective=np.nan, best_bound=np.nan, gap=np.inf,
                             wall_time=0.1, cpu_time=0.1, nodes=1, backend="stand-in", backend_version="",
                             formulation="")
        return Solution(record, None)

    monkeypatch.setattr(engine, "solve", no_solution)
    with pytest.raises(NoSolutionError) as err:
        engine.fit_csvm(Xi, yi, Xj, yj, min_counts=counts, options=SolverOptions(time_limit=30, clock="cpu"))
    message = str(err.value)
    assert "The closest rule found (" in message and "short)" in message
    assert "linear discriminants" in message and "target-set linear program" in message
    assert "No proof of infeasibility" in message


def test_a_proven_infeasible_fit_names_the_closest_rule():
    """XOR classes: bnb proves that no hyperplane meets TPR 20/20 and TNR 19/20 (continuous predictors: the counting
    certificate cannot); the error says so and how close the heuristics came."""
    from csvm_stats.exceptions import InfeasibleConstraintsError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    yj = y[40:]
    counts = {"tpr": int((yj > 0).sum()), "tnr": int((yj < 0).sum()) - 1}
    with pytest.raises(InfeasibleConstraintsError) as err:
        engine.fit_csvm(X[:40], y[:40], X[40:], yj, min_counts=counts, solver="bnb")
    message = str(err.value)
    assert "the bnb search proved that no hyperplane meets them" in message
    assert "the closest rule found (" in message and "short)" in message
