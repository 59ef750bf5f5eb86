"""The CSVM engine: exactness against scikit-learn, backends, formulations, errors."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sklearn.svm import SVC

from csvm_stats.optimization import solvers
from csvm_stats.optimization.engine import fit_csvm
from csvm_stats.exceptions import (
    DataError,
    InfeasibleConstraintsError,
    LicenseLimitError,
    NoSolutionError,
)
from csvm_stats.optimization.kernels import factorise, resolve_kernel
from csvm_stats.optimization.problem import build_partial_dual, build_primal, rate_requirements
from csvm_stats.optimization.solvers import SolverFallbackWarning, SolverOptions, Status
from csvm_stats.optimization.warmstart import shifted_intercept_start

TIGHT = SolverOptions(mip_gap=1e-9, feasibility_tol=1e-9, time_limit=600, clock="cpu")  # CPU clock (SCIP, bnb): load never starves a run
needs_gurobi = pytest.mark.skipif(not solvers.gurobi_usable(), reason="gurobipy is not installed or has no licence")


def split(n: int, n_train: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    idx = np.random.default_rng(seed).permutation(n)
    return idx[:n_train], idx[n_train:]


def small_problem(wisconsin, n_train=60, n_anchor=50, p=8, seed=1):
    X, y = wisconsin
    idx = np.random.default_rng(seed).permutation(len(y))
    I, J = idx[:n_train], idx[n_train : n_train + n_anchor]
    return X[I, :p], y[I], X[J, :p], y[J]


def anchor_count_met(fit, X_j, y_j, kind):
    margin = y_j * fit.decision_function(X_j)
    members = {"tpr": y_j > 0, "tnr": y_j < 0, "acc": np.ones_like(y_j, bool)}[kind]
    return int((margin[members] >= 1 - 1e-6).sum()), int((margin[members] > 0).sum())


def svc_objective(svc, X, y):
    """The CSVM objective of a scikit-learn SVC fitted with C/2 (C = 1 here)."""
    return svc.coef_[0] @ svc.coef_[0] + np.maximum(0, 1 - y * svc.decision_function(X)).sum()


@pytest.fixture(scope="module")
def plain_fits(wisconsin):
    """J empty, no constraint, C = 1: our SCIP fit and scikit-learn's SVC with C = 0.5."""
    X, y = wisconsin
    return fit_csvm(X, y, X[:0], y[:0], C=1.0, solver="scip", options=TIGHT), SVC(kernel="linear", C=0.5, tol=1e-12).fit(X, y)


def test_no_anchor_no_constraint_equals_sklearn_svc_with_half_C(wisconsin, plain_fits):
    X, y = wisconsin
    fit, svc = plain_fits
    assert fit.record.status is Status.OPTIMAL
    # libsvm stops short of the optimum even at tol=1e-12 (objective 30.16906137
    # against 30.16905770 reached by SCIP and by Gurobi). By strong convexity
    # ||w - w*||^2 <= F(w) - F*, so an objective error e moves f(x) by up to
    # sqrt(e) ||x||: 2e-3 * 13 for libsvm's 3.7e-6, observed 3e-4 on Wisconsin
    # (||x|| up to 13). So: at least as good as libsvm, equal within 5e-4.
    assert fit.objective <= svc_objective(svc, X, y) + 1e-9
    assert fit.objective == pytest.approx(svc_objective(svc, X, y), rel=1e-6)
    np.testing.assert_allclose(fit.decision_function(X), svc.decision_function(X), atol=5e-4)


def certified_slack(record, options: SolverOptions, C: float, weight_sum: float) -> float:
    """How far a record's objective may lie from the true optimum F*, by what the solver guarantees.

    A solver's best bound is a valid lower bound on F* (a relaxation: the
    outer approximation's tangent cuts under-estimate every w_k^2), so
    ``objective - best_bound`` bounds how far above F* its point may be. Its
    point may also violate each row by up to the feasibility tolerance delta;
    then ``(w, b, xi + delta)`` is feasible, so its recomputed objective is at
    least ``F* - C * sum(s_i) * delta``.
    """
    return (record.objective - record.best_bound) + C * weight_sum * options.feasibility_tol


@needs_gurobi
def test_gurobi_outer_approximation_equals_scip_and_svc(wisconsin, plain_fits):
    X, y = wisconsin
    scip_fit, svc = plain_fits
    fit = fit_csvm(X, y, X[:0], y[:0], C=1.0, solver="gurobi-oa", options=TIGHT)
    assert "outer approximation" in fit.record.formulation and fit.record.status.has_solution
    # Both objectives lie within their certified slack of F*, so within the sum
    # of the two slacks of each other (the OA's own gap was 1.5e-6 here: its
    # cutting-plane loop converges slowly; 30.1690592 against 30.1690577).
    slack = sum(certified_slack(f.record, TIGHT, 1.0, len(y)) for f in (fit, scip_fit))
    assert abs(fit.objective - scip_fit.objective) <= slack
    assert fit.record.best_bound <= scip_fit.objective + certified_slack(scip_fit.record, TIGHT, 1.0, len(y))
    # F is 2-strongly convex in w: F(w, b) >= F* + ||w - w*||^2, so each w lies
    # within sqrt(its slack) of w*, and the two within the sum of those radii.
    radius = sum(np.sqrt(certified_slack(f.record, TIGHT, 1.0, len(y))) for f in (fit, scip_fit))
    assert np.linalg.norm(fit.coef - scip_fit.coef) <= radius
    svc_radius = np.sqrt(svc_objective(svc, X, y) - fit.record.best_bound) + radius
    assert np.linalg.norm(fit.coef - svc.coef_[0]) <= svc_radius


@needs_gurobi
def test_gurobi_takes_indicator_constraints(wisconsin):
    """Without a warm start and with big_m=None every anchor row is an indicator constraint."""
    Xi, yi, Xj, yj = small_problem(wisconsin, n_train=30, n_anchor=20, p=5, seed=16)
    counts = {"tpr": int((yj > 0).sum()) - 1}
    fits = {
        solver: fit_csvm(Xi, yi, Xj, yj, min_counts=counts, big_m=None, warm_start=False, solver=solver, options=TIGHT)
        for solver in ("scip", "gurobi-miqp", "gurobi-oa")
    }
    for solver, fit in fits.items():
        assert fit.record.status is Status.OPTIMAL, solver
        assert anchor_count_met(fit, Xj, yj, "tpr")[0] >= counts["tpr"]
    slack = 2 * certified_slack(fits["scip"].record, TIGHT, 1.0, len(yi))
    for solver in ("gurobi-miqp", "gurobi-oa"):
        assert abs(fits[solver].objective - fits["scip"].objective) <= slack + certified_slack(
            fits[solver].record, TIGHT, 1.0, len(yi)
        )


def test_anchor_points_without_a_rate_leave_the_model_and_the_optimum_is_unchanged(wisconsin):
    Xi, yi, Xj, yj = small_problem(wisconsin, n_train=40, n_anchor=40, p=6, seed=17)
    counts = {"tpr": int((yj > 0).sum()) - 2}
    fit = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, big_m=None, solver="scip", options=TIGHT)
    np.testing.assert_array_equal(fit.constrained_anchor, np.flatnonzero(yj > 0))
    assert fit.z.shape == yj.shape
    # the full model, every anchor point in it (indicator constraints, no tightening)
    full = build_primal(Xi, yi, Xj, yj, C=1.0, min_counts=counts, big_m=None, sample_weight=np.ones(len(yi)))
    assert full.miqp.indicators.binary.size == len(yj)
    reference = solvers.solve(full.miqp, "scip", TIGHT)
    assert reference.record.status is Status.OPTIMAL
    assert fit.objective == pytest.approx(reference.record.objective, rel=1e-6)


@pytest.mark.parametrize("kind", ["tpr", "tnr", "acc"])
def test_rate_constraints_hold_exactly_on_anchor(wisconsin, kind):
    X, y = wisconsin
    I, J = split(len(y), 285, seed=3)
    size = {"tpr": (y[J] > 0).sum(), "tnr": (y[J] < 0).sum(), "acc": len(J)}[kind]
    k = int(np.ceil((0.9 if kind == "acc" else 0.99) * size))
    fit = fit_csvm(X[I], y[I], X[J], y[J], C=1.0, min_counts={kind: k}, solver="scip")
    with_margin, correct = anchor_count_met(fit, X[J], y[J], kind)
    assert with_margin >= k and correct >= k
    # SCIP keeps w_f^2 by epigraphs t_f >= w_f^2, each met to feasibility_tol: its best point may be worse than the
    # start by up to that undercut summed over the p epigraphs (measured: 2.1e-6 here, p = 30)
    assert fit.objective <= fit.warm_start_objective + X.shape[1] * SolverOptions().feasibility_tol


@needs_gurobi
@pytest.mark.parametrize("kind", ["tpr", "tnr"])
def test_scip_and_gurobi_agree_on_small_problems(wisconsin, kind):
    Xi, yi, Xj, yj = small_problem(wisconsin)
    size = (yj > 0).sum() if kind == "tpr" else (yj < 0).sum()
    counts = {kind: int(size)}  # every anchor point of the class
    objectives = {}
    for solver in ("scip", "gurobi-miqp", "gurobi-oa"):
        fit = fit_csvm(Xi, yi, Xj, yj, C=1.0, min_counts=counts, solver=solver, options=TIGHT)
        assert fit.record.status is Status.OPTIMAL
        assert anchor_count_met(fit, Xj, yj, kind)[0] >= counts[kind]
        objectives[solver] = fit.objective
    ref = objectives["scip"]
    for solver, value in objectives.items():
        assert abs(value - ref) <= 1e-5 * abs(ref), objectives


def solve_partial_dual(Xi, yi, Xj, yj, kernel, counts, big_m, solver):
    """Reference: the paper's partial dual; returns (objective, decision function)."""
    R = np.vstack([Xi, Xj])
    problem = build_partial_dual(
        kernel(R, R), yi, yj, C=1.0, min_counts=counts, big_m=big_m, sample_weight=np.ones(len(yi))
    )
    sol = solvers.solve(problem, solver, TIGHT)
    assert sol.record.status is Status.OPTIMAL
    b = problem.blocks
    a = np.r_[sol.x[b["lambda"]], sol.x[b["mu"]]] * np.r_[yi, yj]
    beta = sol.x[b["beta"]][0]
    return sol.record.objective, lambda X: kernel(X, R) @ a + beta


@pytest.mark.parametrize("solver", ["scip", pytest.param("gurobi-miqp", marks=needs_gurobi)])
def test_feature_map_and_partial_dual_agree_on_small_rbf_problem(wisconsin, solver):
    Xi, yi, Xj, yj = small_problem(wisconsin, n_train=30, n_anchor=20, p=5, seed=4)
    counts = {"tpr": int((yj > 0).sum())}
    kernel = resolve_kernel("rbf", np.vstack([Xi, Xj]), gamma=0.2)
    fit = fit_csvm(Xi, yi, Xj, yj, C=1.0, kernel=kernel, min_counts=counts, big_m=1000.0, solver=solver, options=TIGHT)
    objective, dual_decision = solve_partial_dual(Xi, yi, Xj, yj, kernel, counts, 1000.0, solver)
    assert fit.objective == pytest.approx(objective, rel=1e-5)
    X_new = wisconsin[0][:40, :5]
    np.testing.assert_allclose(fit.decision_function(X_new), dual_decision(X_new), atol=1e-3)


def test_rbf_kernel_meets_constraints_on_both_classes(wisconsin):
    Xi, yi, Xj, yj = small_problem(wisconsin, n_train=80, n_anchor=60, p=10, seed=5)
    counts = {"tpr": int((yj > 0).sum()), "tnr": int((yj < 0).sum())}
    fit = fit_csvm(Xi, yi, Xj, yj, C=1.0, kernel="rbf", min_counts=counts, solver="scip")
    assert fit.feature_map.exact and fit.feature_map.rank == 140
    assert np.all(yj * fit.decision_function(Xj) >= 1 - 1e-6)


def test_truncated_rank_is_flagged_as_approximation(wisconsin):
    Xi, yi, Xj, yj = small_problem(wisconsin, seed=6)
    fit = fit_csvm(Xi, yi, Xj, yj, kernel="rbf", rank=20, solver="scip")
    assert not fit.feature_map.exact and fit.feature_map.rank == 20
    assert fit.feature_map.numerical_rank > 20


def test_exact_big_m_equals_paper_big_m_when_not_binding(wisconsin):
    Xi, yi, Xj, yj = small_problem(wisconsin, seed=7)
    counts = {"tpr": int((yj > 0).sum()) - 1}
    paper = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, big_m=100.0, solver="scip", options=TIGHT)
    exact = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, big_m=None, solver="scip", options=TIGHT)
    exact_cold = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, big_m=None, warm_start=False, solver="scip", options=TIGHT)
    assert paper.objective == pytest.approx(exact.objective, rel=1e-6)
    assert exact_cold.objective == pytest.approx(exact.objective, rel=1e-6)
    assert np.all(np.isfinite(exact.big_m)) and np.all(exact.big_m < 100.0)


def test_warm_start_is_feasible_and_bounds_are_valid(wisconsin):
    Xi, yi, Xj, yj = small_problem(wisconsin, seed=8)
    counts = {"tnr": int((yj < 0).sum())}
    w = np.ones(len(yi))
    start = shifted_intercept_start(Xi, yi, Xj, yj, C=1.0, weight=w, requirements=rate_requirements(yj, counts))
    x0 = np.r_[start.w, start.b, start.xi, start.z]
    problem = build_primal(Xi, yi, Xj, yj, C=1.0, min_counts=counts, big_m=None, sample_weight=w, start=x0, upper=start.objective)
    assert problem.miqp.max_violation(x0) <= 1e-9
    assert problem.miqp.objective(x0) == pytest.approx(start.objective)
    optimum = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, big_m=None, solver="scip", options=TIGHT)
    loose = build_primal(Xi, yi, Xj, yj, C=1.0, min_counts=counts, big_m=1e6, sample_weight=w)
    x_opt = np.r_[optimum.coef, optimum.intercept, np.maximum(0, 1 - yi * optimum.decision_function(Xi)), optimum.z]
    assert loose.miqp.max_violation(x_opt) <= 1e-5
    assert problem.miqp.max_violation(x_opt) <= 1e-5  # the tightened model keeps the optimum


def test_sample_weight_equals_duplicated_rows(wisconsin):
    Xi, yi, Xj, yj = small_problem(wisconsin, seed=9)
    w = np.random.default_rng(0).integers(1, 4, size=len(yi)).astype(float)
    weighted = fit_csvm(Xi, yi, Xj, yj, sample_weight=w, min_counts={"tpr": 20}, solver="scip", options=TIGHT)
    rep = np.repeat(np.arange(len(yi)), w.astype(int))
    dup = fit_csvm(Xi[rep], yi[rep], Xj, yj, min_counts={"tpr": 20}, solver="scip", options=TIGHT)
    assert weighted.objective == pytest.approx(dup.objective, rel=1e-6)


@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        (LicenseLimitError("the Gurobi licence cannot take this model"), "LicenseLimitError: the Gurobi licence"),
        (RuntimeError("Second argument should be a list of Var"), "RuntimeError: Second argument"),
        ("status", "status error: Gurobi status 12"),
    ],
)
def test_auto_falls_back_to_scip_on_any_backend_failure_with_a_warning(wisconsin, monkeypatch, failure, reason):
    def fail(self, problem, options):
        if failure == "status":
            record = solvers.SolveRecord(Status.ERROR, np.nan, np.nan, np.inf, 0.0, 0.0, 0, "gurobi", "", "MIQP",
                                         "Gurobi status 12")
            return solvers.Solution(record)
        raise failure

    monkeypatch.setattr(solvers, "gurobi_usable", lambda: True)
    monkeypatch.setattr(solvers.GurobiBackend, "solve", fail)
    monkeypatch.setattr(solvers.BnbBackend, "solve", fail)
    monkeypatch.setattr(solvers, "size_limited_licence", lambda: False)
    Xi, yi, Xj, yj = small_problem(wisconsin, seed=10)
    with pytest.warns(SolverFallbackWarning) as caught:
        fit = fit_csvm(Xi, yi, Xj, yj, min_counts={"tpr": 10}, solver="auto")
    messages = [str(w.message) for w in caught]
    assert any("the bnb backend failed" in m and "Falling back to Gurobi" in m for m in messages), messages
    assert any(f"the Gurobi backend failed ({reason}" in m and "Falling back to SCIP" in m for m in messages), messages
    assert fit.record.backend == "scip" and fit.record.choice.startswith("auto: scip")
    assert "after bnb, gurobi failed" in fit.record.choice


def test_auto_moves_on_when_bnb_ends_early_without_a_proof_and_passes_on_the_time_left(wisconsin, monkeypatch):
    """bnb ending before its limit with no classifier and no proof (UNRESOLVED_END) is no answer: auto warns and
    gives the next backend the rest of the limit; the error names the early end, never a reached time limit."""
    from csvm_stats.optimization.engine import raise_for_status
    from csvm_stats.optimization.solvers.base import UNRESOLVED_END

    def unresolved(self, problem, options):
        return solvers.Solution(solvers.SolveRecord(Status.NO_SOLUTION, np.nan, np.nan, np.inf, 3.0, 2.0, 7, "bnb",
                                                    "", "branch-and-bound", "", reason=UNRESOLVED_END))

    seen = []

    def scip(self, problem, options):
        seen.append(options)
        return solvers.Solution(solvers.SolveRecord(Status.INFEASIBLE, np.nan, np.nan, np.inf, 0.1, 0.1, 1, "scip",
                                                    "", "MIQP", "proven"))

    monkeypatch.setattr(solvers, "_auto_chain", lambda problem: [("bnb", "ours"), ("scip", "the default")])
    monkeypatch.setattr(solvers.BnbBackend, "solve", unresolved)
    monkeypatch.setattr(solvers.ScipBackend, "solve", scip)
    Xi, yi, Xj, yj = small_problem(wisconsin, seed=10)
    problem = build_primal(Xi, yi, Xj, yj, C=1.0, min_counts={"tpr": 10}, big_m=None,
                           sample_weight=np.ones(len(yi))).miqp
    with pytest.warns(SolverFallbackWarning, match="search ended before the time limit without a classifier"):
        solution = solvers.solve(problem, "auto", SolverOptions(time_limit=10.0, clock="cpu"))
    assert solution.record.backend == "scip" and "after bnb failed" in solution.record.choice
    assert seen[0].time_limit == pytest.approx(8.0)  # 10 CPU-s less the 2 bnb spent
    with pytest.raises(NoSolutionError, match="without proving that none exists") as caught:
        raise_for_status(unresolved(None, problem, None).record, "TPR >= 10", "linear kernel", "relax a target")
    assert "time limit" not in str(caught.value).replace("before the time limit", "")


def test_auto_chooses_bnb_for_the_exact_csvm_and_records_why(wisconsin):
    Xi, yi, Xj, yj = small_problem(wisconsin, seed=10)
    fit = fit_csvm(Xi, yi, Xj, yj, min_counts={"tpr": 10}, solver="auto")
    assert fit.record.backend == "bnb" and fit.record.choice.startswith("auto: bnb (exact primal CSVM")
    paper = fit_csvm(Xi, yi, Xj, yj, min_counts={"tpr": 10}, big_m=0.01, solver="auto")
    assert paper.record.exact is False and paper.record.backend != "bnb"


@needs_gurobi
def test_gurobi_licence_limit_is_reported(wisconsin):
    X, y = wisconsin
    with pytest.raises(LicenseLimitError, match="licence"):
        fit_csvm(X, y, X[:0], y[:0], solver="gurobi-miqp")


def test_infeasible_constraints_on_both_classes_name_the_constraints(wisconsin):
    X, y = wisconsin
    I, J = split(len(y), 200, seed=11)
    counts = {"tpr": int((y[J] > 0).sum()), "tnr": int((y[J] < 0).sum())}
    with pytest.raises(InfeasibleConstraintsError, match="true positive rate.*true negative rate"):
        fit_csvm(X[I, :2], y[I], X[J, :2], y[J], min_counts=counts, solver="scip")


def test_time_limit_without_incumbent_is_reported(wisconsin):
    X, y = wisconsin
    I, J = split(len(y), 285, seed=12)
    counts = {"tpr": int((y[J] > 0).sum())}
    with pytest.raises(NoSolutionError, match="without finding a solution"):
        fit_csvm(X[I], y[I], X[J], y[J], min_counts=counts, warm_start=False, solver="scip",
                 options=SolverOptions(time_limit=0.0))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda Xi, yi, Xj, yj: (Xi, np.ones_like(yi), Xj, yj), "only one class"),
        (lambda Xi, yi, Xj, yj: (Xi, np.where(yi > 0, 2.0, 0.0), Xj, yj), "coded -1/\\+1"),
        (lambda Xi, yi, Xj, yj: (np.where(np.arange(Xi.size).reshape(Xi.shape) == 7, np.nan, Xi), yi, Xj, yj), "NaN"),
        (lambda Xi, yi, Xj, yj: (Xi, yi, Xj[yj < 0], yj[yj < 0]), "no positive points"),
    ],
)
def test_bad_inputs_raise_clear_errors(wisconsin, mutate, message):
    Xi, yi, Xj, yj = mutate(*small_problem(wisconsin, seed=13))
    with pytest.raises(DataError, match=message):
        fit_csvm(Xi, yi, Xj, yj, min_counts={"tpr": 1}, solver="scip")


def test_kernel_feature_map_reproduces_gram_and_new_points(wisconsin):
    X = wisconsin[0][:60, :6]
    for name in ("rbf", "poly"):
        kernel = resolve_kernel(name, X)
        fmap, phi = factorise(kernel, X)
        np.testing.assert_allclose(phi @ phi.T, kernel(X, X), atol=1e-8)
        X_new = wisconsin[0][100:110, :6]
        np.testing.assert_allclose(fmap.transform(X_new) @ phi.T, kernel(X_new, X), atol=1e-6)
    custom = resolve_kernel(lambda A, B: (A @ B.T + 1.0) ** 2, X)
    assert custom.describe().startswith("callable")
    with pytest.raises(DataError, match="kernel must be one of"):
        resolve_kernel("sigmoidal", X)


def test_scip_tangent_formulation_reaches_the_same_optimum(wisconsin):
    Xi, yi, Xj, yj = small_problem(wisconsin, n_train=120, n_anchor=100, p=10, seed=14)
    counts = {"tnr": int((yj < 0).sum()) - 1}
    nonlinear = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, solver="scip", options=TIGHT)
    tangents = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, solver="scip-tangents", options=TIGHT)
    assert "tangent" in tangents.record.formulation and tangents.record.status is Status.OPTIMAL
    assert tangents.objective == pytest.approx(nonlinear.objective, rel=1e-5)


def test_linear_kernel_with_more_columns_than_rows_solves_on_the_row_space(wisconsin):
    rng = np.random.default_rng(15)
    X = rng.normal(size=(40, 300))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1.0, -1.0)
    Xi, yi, Xj, yj = X[:25], y[:25], X[25:], y[25:]
    counts = {"tpr": int((yj > 0).sum())}
    wide = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, solver="scip", options=TIGHT)
    assert wide.coef.shape == (300,) and wide.feature_map.exact and wide.feature_map.reference is None
    # the same problem through the explicit linear kernel callable (Gram factorisation)
    gram = fit_csvm(Xi, yi, Xj, yj, kernel=lambda A, B: A @ B.T, min_counts=counts, solver="scip", options=TIGHT)
    assert wide.objective == pytest.approx(gram.objective, rel=1e-6)
    np.testing.assert_allclose(wide.decision_function(X), gram.decision_function(X), atol=1e-4)
    assert np.all(yj[yj > 0] * wide.decision_function(Xj[yj > 0]) >= 1 - 1e-6)


def test_auto_solves_a_plain_svm_by_one_svm_solve_within_its_certified_gap(wisconsin, plain_fits):
    X, y = wisconsin
    fit = fit_csvm(X, y, X[:0], y[:0], solver="auto")
    assert fit.record.backend == "bnb" and fit.record.status is Status.OPTIMAL and fit.record.svm_solves == 1
    scip_fit = plain_fits[0]
    options = SolverOptions()
    slack = certified_slack(fit.record, options, 1.0, len(y)) + certified_slack(scip_fit.record, TIGHT, 1.0, len(y))
    assert abs(fit.objective - scip_fit.objective) <= slack and fit.record.gap <= options.mip_gap


def test_auto_sends_a_large_problem_without_binaries_and_not_the_csvm_to_scip(wisconsin):
    X, y = wisconsin
    problem = build_primal(X, y, X[:0], y[:0], C=1.0, min_counts={}, big_m=None, sample_weight=np.ones(len(y)))
    plain = dataclasses.replace(problem.miqp, csvm=None)
    solution = solvers.solve(plain, "auto")
    assert solution.record.backend == "scip" and solution.record.status is Status.OPTIMAL


def test_default_big_m_is_exact_where_a_fixed_m_is_not():
    """An anchor point far on the wrong side: M = 1 cannot drop it, the default (proven M_j) can."""
    rng = np.random.default_rng(18)
    Xi = rng.normal(size=(40, 2))
    yi = np.where(Xi[:, 0] > 0, 1.0, -1.0)
    Xj = np.r_[rng.normal(size=(12, 2)) + [2.0, 0.0], [[-6.0, 0.0]]]
    yj = np.ones(13)
    counts = {"tpr": 12}
    exact = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, solver="scip", options=TIGHT)
    assert exact.record.exact is True and np.all(np.isfinite(exact.big_m))
    fixed = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, big_m=1.0, solver="scip", options=TIGHT)
    assert fixed.record.exact is False
    # M = 1 forces margin >= 0 on the dropped point: a worse classifier than the CSVM's optimum
    assert fixed.objective > exact.objective * (1 + 1e-3)
    large = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, big_m=1e4, solver="scip", options=TIGHT)
    assert large.record.exact is True
    assert large.objective == pytest.approx(exact.objective, rel=1e-6)


@pytest.mark.parametrize(("n_features", "limited", "gurobi_tried"),
                         [(6, True, True), (80, False, True), (80, True, False), (300, False, False)])
def test_auto_skips_gurobi_outer_approximation_for_cardinality_forms(wisconsin, monkeypatch, n_features, limited,
                                                                     gurobi_tried):
    """Perspective pairs (max_features) in a model Gurobi would take by its outer approximation (more than 200
    variables, or its MIQP plus one cone variable per pair beyond a size-limited licence): SCIP, with the reason;
    a model Gurobi's MIQP takes whole stays with Gurobi."""
    rng = np.random.default_rng(3)
    n = 40
    X = rng.normal(size=(2 * n, n_features))
    y = np.where(rng.random(2 * n) < 0.5, 1.0, -1.0)
    miqp = build_primal(X[:n], y[:n], X[n:], y[n:], C=1.0, min_counts={"tpr": 5}, big_m=None,
                        sample_weight=np.ones(n)).miqp
    pairs = np.column_stack([np.arange(n_features), np.arange(n_features)])  # only their number matters here
    cardinality = dataclasses.replace(miqp, perspective=pairs, csvm=None)
    monkeypatch.setattr(solvers, "gurobi_usable", lambda: True)
    monkeypatch.setattr(solvers, "size_limited_licence", lambda: limited)
    chain = solvers._auto_chain(cardinality)
    assert ("gurobi" in [name for name, _ in chain]) is gurobi_tried
    assert chain[-1][0] == "scip"
    if not gurobi_tried:
        assert "perspective cones" in chain[-1][1]
    assert "gurobi" in [name for name, _ in solvers._auto_chain(dataclasses.replace(miqp, csvm=None))]


@pytest.mark.parametrize(
    ("status", "found", "unresolved", "gap_open", "expected"),
    [
        (Status.TIME_LIMIT, False, False, False, (Status.NO_SOLUTION, "")),
        (Status.OPTIMAL, False, False, False, (Status.INFEASIBLE, "proof")),
        (Status.INFEASIBLE, False, False, False, (Status.INFEASIBLE, "proof")),
        (Status.OPTIMAL, False, True, True, (Status.NO_SOLUTION, "unresolved")),
        (Status.OPTIMAL, True, True, True, (Status.TIME_LIMIT, "unconverged")),
        (Status.OPTIMAL, True, False, False, (Status.OPTIMAL, "")),
        (Status.TIME_LIMIT, True, False, True, (Status.TIME_LIMIT, "")),
        (Status.INTERRUPTED, True, False, True, (Status.INTERRUPTED, "")),
    ],
)
def test_search_end_names_every_way_a_search_stops(status, found, unresolved, gap_open, expected):
    from csvm_stats.optimization.solvers.base import UNCONVERGED_END, UNRESOLVED_END, search_end

    reasons = {"": "", "proof": "no rule meets the counts", "unresolved": UNRESOLVED_END,
               "unconverged": UNCONVERGED_END}
    assert search_end(status, found, unresolved, gap_open, "no rule meets the counts") == (
        expected[0], reasons[expected[1]])


@needs_gurobi
def test_auto_knows_a_size_limited_licence_before_any_solve_and_does_not_warn():
    """Review r10 F-auto-gurobi: the L1 ranking of max_features screening (4680 variables) tried Gurobi's pip
    licence and warned in every new process; the licence is now probed once per process (a 2001-variable empty
    model) and such a model goes straight to HiGHS."""
    import warnings

    from csvm_stats import CSVM
    from csvm_stats.optimization.solvers.gurobi import GurobiBackend

    limited = GurobiBackend().size_limited(solvers.SIZE_LIMITED_LINEAR + 1)
    assert solvers.size_limited_licence() is (limited or bool(solvers._size_limited_licence))
    if not limited:
        pytest.skip("this Gurobi licence is not size-limited")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2400))
    y = np.where(X[:, 0] + rng.normal(size=60) > 0, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SolverFallbackWarning)
        res = CSVM(y, X, tpr_min=0.6, bound="none", penalty="l1").fit(random_state=0, time_limit=60)
    assert res.solver.backend == "highs"
