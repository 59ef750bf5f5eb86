"""bnb on the L1-norm CSVM (a MILP; :mod:`csvm_stats.optimization.solvers.bnb_l1`): brute force, HiGHS, infeasibility,
the time limit, determinism, the big-M tightening and the LP's in-place changes."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.optimize import linprog

from csvm_stats.exceptions import SolverError
from csvm_stats.optimization import solvers
from csvm_stats.optimization.problem import build_l1_primal
from csvm_stats.optimization.solvers import SolverOptions, Status, get_backend, solve
from csvm_stats.optimization.solvers.l1_margins import MarginLP
from csvm_stats.optimization.solvers.outer_lp import OuterLP
from csvm_stats.sparse.model import fit_l1_csvm

# bnb's node LPs meet rows to HiGHS's 1e-7: ask for a gap it can prove
OPTIONS = SolverOptions(mip_gap=1e-6, feasibility_tol=1e-7, time_limit=120, clock="cpu")


def _data(n_i: int, n_j: int, p: int, seed: int, noise: float = 1.2) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_i + n_j, p))
    y = np.where(X[:, :2].sum(axis=1) + noise * rng.normal(size=n_i + n_j) > 0, 1.0, -1.0)
    return X[:n_i], y[:n_i], X[n_i:], y[n_i:]


def _l1_with_hard(X_i, y_i, X_j, y_j, C: float, hard: np.ndarray) -> float:
    """min ||w||_1 + C sum xi with the anchor points ``hard`` at margin >= 1 (an independent LP); inf: none."""
    n, p = X_i.shape
    c = np.r_[np.ones(2 * p), 0.0, np.full(n, C)]
    yx = X_i * y_i[:, None]
    rows = [-np.hstack([yx, -yx, y_i[:, None], np.eye(n)])]
    rhs = [-np.ones(n)]
    if hard.size:
        yh = X_j[hard] * y_j[hard, None]
        rows.append(-np.hstack([yh, -yh, y_j[hard, None], np.zeros((hard.size, n))]))
        rhs.append(-np.ones(hard.size))
    bounds = [(0, None)] * (2 * p) + [(None, None)] + [(0, None)] * n
    res = linprog(c, A_ub=np.vstack(rows), b_ub=np.concatenate(rhs), bounds=bounds, method="highs")
    return float(res.fun) if res.status == 0 else math.inf


def brute_force(X_i, y_i, X_j, y_j, C: float, counts: dict[str, int]) -> float:
    """The optimum over every set of anchor points meeting the counts (the smallest sets suffice)."""
    members = {"tpr": np.flatnonzero(y_j > 0), "tnr": np.flatnonzero(y_j < 0)}
    choices = [itertools.combinations(members[k], c) for k, c in counts.items()]
    return min(_l1_with_hard(X_i, y_i, X_j, y_j, C, np.array(sorted(set().union(*sets)), dtype=int))
               for sets in itertools.product(*choices))


TINY = [(seed, counts) for seed in range(4) for counts in ({"tpr": "all-2"}, {"tpr": "all-1", "tnr": "all-2"})]


def _counts(y_j: np.ndarray, spec: dict[str, str]) -> dict[str, int]:
    size = {"tpr": int((y_j > 0).sum()), "tnr": int((y_j < 0).sum())}
    return {k: max(0, size[k] - int(v.split("-")[1])) for k, v in spec.items()}


@pytest.mark.parametrize("seed,spec", TINY)
def test_bnb_matches_brute_force_on_tiny_instances(seed, spec):
    X_i, y_i, X_j, y_j = _data(14, 10, 4, seed)
    counts = _counts(y_j, spec)
    expected = brute_force(X_i, y_i, X_j, y_j, 0.7, counts)
    fit = fit_l1_csvm(X_i, y_i, X_j, y_j, C=0.7, min_counts=counts, solver="bnb", options=OPTIONS)
    assert fit.record.backend == "bnb" and fit.record.status is Status.OPTIMAL
    assert "L1-norm" in fit.record.formulation
    assert fit.objective == pytest.approx(expected, rel=1e-5, abs=1e-7)
    assert fit.record.best_bound <= expected * (1 + 1e-6) + 1e-9
    margins = y_j * (X_j @ fit.coef + fit.intercept)
    for kind, c in counts.items():
        cls = y_j > 0 if kind == "tpr" else y_j < 0
        assert np.sum(margins[cls] >= 1 - 1e-6) >= c


@pytest.mark.parametrize("seed", [0, 2])
def test_bnb_without_a_start_uses_indicator_rows_and_matches_brute_force(seed):
    X_i, y_i, X_j, y_j = _data(14, 10, 4, seed)
    counts = _counts(y_j, {"tpr": "all-2"})
    fit = fit_l1_csvm(X_i, y_i, X_j, y_j, C=0.7, min_counts=counts, solver="bnb", options=OPTIONS, warm_start=False)
    assert np.isinf(fit.big_m).all()  # no start: indicator rows, switched on for forced points
    assert fit.record.status is Status.OPTIMAL
    assert fit.objective == pytest.approx(brute_force(X_i, y_i, X_j, y_j, 0.7, counts), rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bnb_matches_the_highs_optimum_on_small_instances(seed):
    X_i, y_i, X_j, y_j = _data(50, 40, 15, seed)
    counts = {"tpr": int(np.ceil(0.9 * (y_j > 0).sum()))}
    fits = {s: fit_l1_csvm(X_i, y_i, X_j, y_j, C=0.5, min_counts=counts, solver=s, options=OPTIONS)
            for s in ("bnb", "highs")}
    assert all(f.record.status is Status.OPTIMAL for f in fits.values())
    assert fits["bnb"].objective == pytest.approx(fits["highs"].objective, rel=1e-5)
    assert fits["bnb"].record.best_bound <= fits["highs"].objective * (1 + 1e-5)


def _infeasible():
    """Anchor points duplicated with both labels, and every one of them required: no hyperplane can do it."""
    X_i, y_i, X_j, y_j = _data(20, 6, 3, 5)
    X_j = np.vstack([X_j, X_j])
    y_j = np.r_[np.ones(6), -np.ones(6)]
    return X_i, y_i, X_j, y_j, {"tpr": 6, "tnr": 6}


@pytest.mark.parametrize("solver", ["bnb", "scip"])
def test_infeasible_instances_are_agreed(solver):
    X_i, y_i, X_j, y_j, counts = _infeasible()
    problem = build_l1_primal(X_i, y_i, X_j, y_j, C=1.0, min_counts=counts, big_m=None, sample_weight=np.ones(20))
    assert problem.miqp.l1 is not None and problem.miqp.indicators is not None
    solution = solve(problem.miqp, solver, OPTIONS)
    assert solution.record.status is Status.INFEASIBLE
    assert solution.x is None


def test_time_limit_is_honoured_and_the_bound_stays_valid():
    X_i, y_i, X_j, y_j = _data(150, 150, 200, 3, noise=2.0)
    counts = {"tpr": int(np.ceil(0.85 * (y_j > 0).sum()))}
    options = SolverOptions(time_limit=3.0, clock="cpu", mip_gap=1e-6)
    fit = fit_l1_csvm(X_i, y_i, X_j, y_j, C=1.0, min_counts=counts, solver="bnb", options=options)
    record = fit.record
    assert record.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    assert record.cpu_time <= 3.0 * 1.1 + 1.0
    assert record.best_bound <= record.objective + 1e-9
    assert record.gap < 1.0  # the root's LP value at least


def test_the_search_is_deterministic():
    X_i, y_i, X_j, y_j = _data(60, 60, 20, 4, noise=1.5)
    counts = {"tpr": int(np.ceil(0.9 * (y_j > 0).sum()))}
    runs = [fit_l1_csvm(X_i, y_i, X_j, y_j, C=1.0, min_counts=counts, solver="bnb", options=OPTIONS).record
            for _ in range(2)]
    assert runs[0].status is Status.OPTIMAL
    assert (runs[0].nodes, runs[0].objective, runs[0].message) == (runs[1].nodes, runs[1].objective, runs[1].message)


def test_bound_stays_below_the_optimum_at_a_loose_gap():
    X_i, y_i, X_j, y_j = _data(50, 40, 15, 1)
    counts = {"tpr": int(np.ceil(0.9 * (y_j > 0).sum()))}
    exact = fit_l1_csvm(X_i, y_i, X_j, y_j, C=0.5, min_counts=counts, solver="highs", options=OPTIONS).objective
    loose = fit_l1_csvm(X_i, y_i, X_j, y_j, C=0.5, min_counts=counts, solver="bnb",
                        options=replace(OPTIONS, mip_gap=0.05))
    assert loose.record.best_bound <= exact * (1 + 1e-6)
    assert loose.objective <= exact * 1.05 + 1e-9


def test_least_margins_bound_every_good_point():
    """l1_margins: the LP's least margin is below the margin of the optimum and of the warm start (both at most U)."""
    X_i, y_i, X_j, y_j = _data(50, 40, 15, 0)
    counts = {"tpr": int(np.ceil(0.9 * (y_j > 0).sum()))}
    fit = fit_l1_csvm(X_i, y_i, X_j, y_j, C=0.5, min_counts=counts, solver="highs", options=OPTIONS)
    U = fit.warm_start_objective
    problem = build_l1_primal(X_i, y_i, X_j, y_j, C=0.5, min_counts=counts, big_m=None, sample_weight=np.ones(50),
                              upper=U)
    least = MarginLP(problem.miqp.l1).least_margins(U, np.arange(y_j.size))
    margins = y_j * (X_j @ fit.coef + fit.intercept)
    assert np.all(least <= margins + 1e-7)
    assert np.all(1.0 - least <= problem.big_m + 1e-9)  # never looser than the closed-form constants
    assert np.median(1.0 - least) < 0.5 * np.median(problem.big_m)  # and much tighter here


def test_outer_lp_changes_entries_and_row_bounds_in_place():
    X_i, y_i, X_j, y_j = _data(30, 20, 6, 1)
    counts = {"tpr": int((y_j > 0).sum()) - 1}
    problem = build_l1_primal(X_i, y_i, X_j, y_j, C=1.0, min_counts=counts, big_m=None, sample_weight=np.ones(30),
                              upper=50.0).miqp
    z0 = problem.blocks["z"].start
    row = 30  # the first anchor point's big-M row
    m = -problem.A[row, z0]
    lp = OuterLP(problem)
    lp.set_entries(np.array([row]), np.array([z0]), np.array([-0.5 * m]))
    lp.set_row_lower(np.array([row]), np.array([1.0 - 0.5 * m]))
    A = problem.A.tolil()
    A[row, z0] = -0.5 * m
    lo = problem.row_lo.copy()
    lo[row] = 1.0 - 0.5 * m
    rebuilt = OuterLP(replace(problem, A=A.tocsr(), row_lo=lo))
    assert lp.solve(0.0, 1).value == pytest.approx(rebuilt.solve(0.0, 1).value, rel=1e-9, abs=1e-9)


def test_only_the_exact_model_carries_its_data_and_bnb_refuses_the_others():
    X_i, y_i, X_j, y_j = _data(30, 20, 6, 1)
    counts = {"tpr": int((y_j > 0).sum()) - 1}
    capped = build_l1_primal(X_i, y_i, X_j, y_j, C=1.0, min_counts=counts, big_m=1e-3, sample_weight=np.ones(30),
                             upper=50.0)
    assert not capped.exact and capped.miqp.l1 is None
    with pytest.raises(SolverError):
        get_backend("bnb").solve(capped.miqp, OPTIONS)


def test_auto_keeps_its_choice_for_the_l1_form():
    """The measurements (benchmarks/results/l1_milp.md, l1_auto.md) do not move "auto": on the routes it drives,
    bnb returned the same genes as HiGHS and took more CPU time in most fits, so bnb is not in the L1 chain."""
    X_i, y_i, X_j, y_j = _data(30, 20, 6, 1)
    problem = build_l1_primal(X_i, y_i, X_j, y_j, C=1.0, min_counts={"tpr": 5}, big_m=None,
                              sample_weight=np.ones(30), upper=50.0).miqp
    chain = [name for name, _ in solvers._auto_chain(problem)]
    assert "bnb" not in chain and "highs" in chain
