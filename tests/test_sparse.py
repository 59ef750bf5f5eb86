"""Sparse CSVM routes: the L1-norm MILP and the cardinality-constrained MIQP.

Each route is checked against an independent computation: the L1 route
against scipy's ``linprog`` (HiGHS) without a rate constraint and across
backends (and against the model without the valid tightening) with one; the
cardinality route against brute force over all subsets. Tolerances follow
the solvers' guarantees (relative gap 1e-7 requested, feasibility 1e-7).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from csvm_stats import solvers
from csvm_stats.engine import fit_csvm
from csvm_stats.exceptions import DataError, SolverError
from csvm_stats.problem import build_primal
from csvm_stats.solvers import SolverOptions
from csvm_stats.sparse import fit_cardinality_csvm, fit_l1_csvm

TIGHT = SolverOptions(mip_gap=1e-7, feasibility_tol=1e-7)
needs_gurobi = pytest.mark.skipif(not solvers.gurobi_usable(), reason="gurobipy is not installed or has no licence")


def _toy(n: int, p: int, informative: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X[:, :informative].sum(axis=1) + 0.8 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _objective_rel_close(a: float, b: float, rel: float = 1e-5) -> bool:
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def _linprog_l1_svm(X: np.ndarray, y: np.ndarray, C: float) -> float:
    """min sum(u + v) + C sum(xi) s.t. y_i((u - v)'x_i + b) + xi_i >= 1, written out independently."""
    n, p = X.shape
    c = np.r_[np.ones(2 * p), 0.0, np.full(n, C)]
    yx = X * y[:, None]
    A_ub = -np.hstack([yx, -yx, y[:, None], np.eye(n)])
    bounds = [(0, None)] * (2 * p) + [(None, None)] + [(0, None)] * n
    res = linprog(c, A_ub=A_ub, b_ub=-np.ones(n), bounds=bounds, method="highs")
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("solver", ["highs", "scip"])
@pytest.mark.parametrize("C", [0.05, 1.0])
def test_l1_route_equals_linprog_without_rate_constraint(solver, C):
    X, y = _toy(90, 12, 3, seed=1)
    # no anchor sample, and an anchor sample without a constraint: both are the plain L1 SVM on I
    expected = _linprog_l1_svm(X[:60], y[:60], C)
    for X_j, y_j in ((X[:0], y[:0]), (X[60:], y[60:])):
        fit = fit_l1_csvm(X[:60], y[:60], X_j, y_j, C=C, solver=solver, options=TIGHT)
        assert fit.record.status is solvers.Status.OPTIMAL
        assert _objective_rel_close(fit.objective, expected)
        hinge = np.maximum(0.0, 1.0 - y[:60] * (X[:60] @ fit.coef + fit.intercept))
        assert _objective_rel_close(np.abs(fit.coef).sum() + C * hinge.sum(), expected, 1e-4)


def _constrained(seed: int = 2):
    X, y = _toy(100, 10, 2, seed=seed)
    X_i, y_i, X_j, y_j = X[:60], y[:60], X[60:], y[60:]
    return X_i, y_i, X_j, y_j, {"tpr": int((y_j > 0).sum())}  # every anchor positive correct


def test_l1_route_with_rate_constraint_agrees_across_backends_and_without_tightening():
    X_i, y_i, X_j, y_j, counts = _constrained()
    fits = {s: fit_l1_csvm(X_i, y_i, X_j, y_j, C=0.5, min_counts=counts, solver=s, options=TIGHT) for s in ("highs", "scip")}
    # no warm start and no big-M: indicator constraints, no tightening (SCIP), an independent model
    plain = fit_l1_csvm(X_i, y_i, X_j, y_j, C=0.5, min_counts=counts, solver="scip", options=TIGHT, warm_start=False)
    for fit in (*fits.values(), plain):
        assert fit.record.status is solvers.Status.OPTIMAL
        assert _objective_rel_close(fit.objective, fits["highs"].objective, 1e-5)
        margins = y_j[y_j > 0] * (X_j[y_j > 0] @ fit.coef + fit.intercept)
        assert np.all(margins >= 1 - 1e-5)  # the constraint holds at the returned point
    assert np.isinf(plain.big_m).all()  # indicator constraints, no big-M at all
    # the constraint binds: it costs something over the unconstrained L1 SVM
    free = fit_l1_csvm(X_i, y_i, X_j, y_j, C=0.5, solver="highs", options=TIGHT)
    assert free.objective < fits["highs"].objective - 1e-6


@needs_gurobi
def test_l1_route_gurobi_agrees_under_its_size_cap():
    X_i, y_i, X_j, y_j, counts = _constrained()
    highs = fit_l1_csvm(X_i, y_i, X_j, y_j, C=0.5, min_counts=counts, solver="highs", options=TIGHT)
    gurobi = fit_l1_csvm(X_i, y_i, X_j, y_j, C=0.5, min_counts=counts, solver="gurobi", options=TIGHT)
    assert gurobi.record.backend == "gurobi" and gurobi.record.status is solvers.Status.OPTIMAL
    assert _objective_rel_close(gurobi.objective, highs.objective, 1e-5)


def test_highs_refuses_a_quadratic_model():
    X_i, y_i, X_j, y_j, counts = _constrained()
    problem = build_primal(X_i, y_i, X_j, y_j, C=1.0, min_counts=counts, big_m=10.0, sample_weight=np.ones(60))
    with pytest.raises(SolverError, match="linear problems only"):
        solvers.solve(problem.miqp, "highs")


@pytest.mark.parametrize("counts_of", [None, "tpr"])
def test_cardinality_route_equals_brute_force_over_all_subsets(counts_of):
    X, y = _toy(110, 6, 2, seed=3)
    X_i, y_i, X_j, y_j = X[:70], y[:70], X[70:], y[70:]
    counts = {} if counts_of is None else {"tpr": int((y_j > 0).sum())}
    s = 2
    best = min(
        fit_csvm(X_i[:, S], y_i, X_j[:, S], y_j, C=1.0, min_counts=counts, big_m=None, solver="scip", options=TIGHT).objective
        for S in map(list, itertools.combinations(range(6), s))
    )
    fit = fit_cardinality_csvm(X_i, y_i, X_j, y_j, max_features=s, C=1.0, min_counts=counts, solver="scip", options=TIGHT)
    assert fit.screening.exact
    assert fit.selected.size <= s
    assert _objective_rel_close(fit.objective, best, 1e-5)


def test_cardinality_route_screens_many_columns_and_says_so():
    X, y = _toy(80, 70, 3, seed=4)
    fit = fit_cardinality_csvm(X[:50], y[:50], X[50:], y[50:], max_features=3, C=1.0, solver="scip", screen=10)
    assert not fit.screening.exact and fit.screening.candidates.size == 10
    assert set(fit.selected) <= set(fit.screening.candidates) and fit.selected.size <= 3
    assert "10 best-ranked of 70" in fit.screening.rule


def test_bad_sparsity_arguments_name_the_fix():
    X, y = _toy(40, 5, 2, seed=5)
    with pytest.raises(DataError, match="max_features must be a positive integer"):
        fit_cardinality_csvm(X, y, X[:0], y[:0], max_features=0)
    from csvm_stats.model import CSVM

    with pytest.raises(DataError, match="penalty must be one of"):
        CSVM(y > 0, X, penalty="l0")
    with pytest.raises(DataError, match="exceeds the 5 columns"):
        CSVM(y > 0, X, max_features=6)
    with pytest.raises(DataError, match="need kernel='linear'"):
        CSVM(y > 0, X, penalty="l1", kernel="rbf")


@pytest.mark.parametrize("kw", [{"penalty": "l1", "C": 0.05}, {"max_features": 3}])
def test_model_sparse_fit_reports_selection_and_heldout_statements(kw):
    from csvm_stats.model import CSVM
    from csvm_stats.sparse_results import SELECTION_NOTE

    X, y = _toy(240, 20, 3, seed=6)
    res = CSVM(y > 0, X, tpr_min=0.8, bound="binomial", **kw).fit(random_state=0)
    chosen = res.selected_features
    assert 1 <= len(chosen) <= (3 if "max_features" in kw else 20)
    assert {"x1", "x2", "x3"} <= set(chosen.index)
    # the rule predicts with the selected columns only
    Xz = X.copy()
    others = [k for k in range(20) if f"x{k + 1}" not in chosen.index]
    Xz[:, others] = 0.0
    assert np.allclose(res.decision_function(Xz) - res.decision_function(X), res.params.iloc[others].to_numpy() @ (-X[:, others]).T)
    assert res.params.iloc[others].abs().max() == 0.0
    assert res.rates.loc["tpr", "heldout_n"] > 0 and res.rates.loc["tpr", "method"] == "clopper-pearson"
    assert SELECTION_NOTE in res.warnings
    assert res.rates.loc["tpr", "met"]


def test_sparse_summary_lists_the_selected_features_only():
    from csvm_stats.model import CSVM

    X, y = _toy(200, 30, 2, seed=7)
    res = CSVM(y > 0, X, tpr_min=0.8, bound="binomial", max_features=2).fit(random_state=1)
    text = res.summary(timing=False).as_text()
    assert "Selected features: 2 of 30" in text and "at most 2 features" in text
    assert all(name in text for name in res.selected_features.index)
    unselected = [f"x{k}" for k in range(3, 31) if f"x{k}" not in res.selected_features.index]
    assert not any(f"\n{name} " in text for name in unselected)
    assert "held-out statements hold for the selected classifier" in " ".join(text.split())
