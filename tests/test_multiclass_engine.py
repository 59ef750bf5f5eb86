"""The multiclass CSVM engine: exact against brute force, the binary case, kernels and p >> n."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

from csvm_stats.optimization import solvers
from csvm_stats.optimization.engine import fit_csvm
from csvm_stats.exceptions import DataError
from csvm_stats.multiclass.engine import fit_multiclass_csvm
from csvm_stats.multiclass.problem import build_multiclass_primal, multiclass_scale
from csvm_stats.multiclass.warmstart import class_margins, multiclass_start
from csvm_stats.optimization.solvers import SolverOptions, Status

TIGHT = SolverOptions(mip_gap=1e-9, feasibility_tol=1e-9, time_limit=600, clock="cpu")  # CPU clock (SCIP, bnb): load never starves a run
needs_gurobi = pytest.mark.skipif(not solvers.gurobi_usable(), reason="gurobipy is not installed or has no licence")


def three_blobs(n_per: int, p: int = 2, seed: int = 0, spread: float = 1.3):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [2.0, 0.5], [0.8, 2.0]])
    X = np.vstack([rng.normal(centres[k, :p] if p <= 2 else np.r_[centres[k], np.zeros(p - 2)], spread, (n_per, p)) for k in range(3)])
    y = np.repeat(np.arange(3), n_per)
    order = rng.permutation(y.size)
    return X[order], y[order]


def _difference_row(x, own, rival, K, n):
    """Coefficients of f_own(x) - f_rival(x) over [W (class-major), b, ...] (independent of the library)."""
    p = x.size
    a = np.zeros(n)
    a[own * p : (own + 1) * p] += x
    a[rival * p : (rival + 1) * p] -= x
    a[K * p + own] += 1.0
    a[K * p + rival] -= 1.0
    return a


def _anchors_separable(anchor: list[np.ndarray], n_free: int) -> bool:
    """Whether the forced anchor rows alone admit a solution (an LP, scipy's HiGHS: independent of the library)."""
    from scipy.optimize import linprog

    if not anchor:
        return True
    A = np.array(anchor)[:, :n_free]
    res = linprog(np.zeros(n_free), A_ub=-A, b_ub=-np.ones(len(anchor)), bounds=[(None, None)] * n_free,
                  method="highs")
    if res.status not in (0, 2):
        raise AssertionError(f"brute force: the feasibility LP of an anchor set failed ({res.message})")
    return res.status == 0


def brute_force(X_i, y_i, X_j, y_j, C, counts, K=3):
    """Enumerate the anchor indicators; solve each convex QP with SLSQP (exact gradients); the best objective.

    A subset whose forced anchors cannot all reach margin 1 (an LP says so) is
    skipped; on any other subset the QP must solve - SLSQP, then
    trust-constr if SLSQP fails - or the brute force stops with an error
    (a failed subproblem silently skipped could hide the optimum).
    """
    from scipy.optimize import Bounds, LinearConstraint

    p, n_i = X_i.shape[1], y_i.size
    n = K * p + K + n_i
    members = np.flatnonzero(np.isin(y_j, list(counts)))
    train = []
    for i in range(n_i):
        for k in set(range(K)) - {y_i[i]}:
            row = _difference_row(X_i[i], y_i[i], k, K, n)
            row[K * p + K + i] = 1.0
            train.append(row)
    best = np.inf
    for z in itertools.product((0, 1), repeat=members.size):
        z = np.array(z)
        if any(z[y_j[members] == k].sum() < c for k, c in counts.items()):
            continue
        anchor = [_difference_row(X_j[j], y_j[j], k, K, n) for j in members[z == 1] for k in set(range(K)) - {y_j[j]}]
        if not _anchors_separable(anchor, K * p + K):
            continue
        A = np.array(train + anchor)
        problem = {
            "fun": lambda v: np.sum(v[: K * p] ** 2) + C * np.sum(v[K * p + K :]),
            "x0": np.r_[np.zeros(K * p + K), np.full(n_i, 10.0)],
            "jac": lambda v: np.r_[2 * v[: K * p], np.zeros(K), np.full(n_i, C)],
            "constraints": [LinearConstraint(A, 1.0, np.inf)],
            "bounds": Bounds(np.r_[np.full(K * p + K, -np.inf), np.zeros(n_i)], np.inf),
        }
        res = minimize(**problem, method="SLSQP", options={"maxiter": 5000, "ftol": 1e-12})
        if not res.success:
            res = minimize(**problem, method="trust-constr",
                           hess=lambda v: np.diag(np.r_[np.full(K * p, 2.0), np.zeros(K + n_i)]),
                           options={"maxiter": 20000, "gtol": 1e-10, "xtol": 1e-12})
        if not res.success or np.min(A @ res.x) < 1 - 1e-6:
            raise AssertionError(f"brute force: the QP of anchor set {members[z == 1].tolist()} did not solve "
                                 f"({res.message})")
        best = min(best, res.fun)
    return best


@pytest.fixture(scope="module")
def tiny():
    X, y = three_blobs(8, seed=3)
    X_i, y_i, X_j, y_j = X[:15], y[:15], X[15:], y[15:]
    counts = {k: int(np.sum(y_j == k)) for k in (0, 2)}  # every anchor point of classes 0 and 2
    counts[0] -= 1
    return X_i, y_i, X_j, y_j, counts


@pytest.mark.parametrize("big_m", [None, 100.0])
def test_exact_against_brute_force(tiny, big_m):
    X_i, y_i, X_j, y_j, counts = tiny
    expected = brute_force(X_i, y_i, X_j, y_j, 1.0, counts)
    fit = fit_multiclass_csvm(X_i, y_i, X_j, y_j, 3, C=1.0, min_counts=counts, big_m=big_m, solver="scip", options=TIGHT)
    assert fit.record.status is Status.OPTIMAL
    assert fit.record.objective == pytest.approx(expected, rel=1e-5, abs=1e-6)
    # the argmax rule meets the counts on the anchor points with margin 1
    margins = class_margins(fit.decision_function(X_j), y_j)
    for k, c in counts.items():
        assert np.sum(margins[y_j == k] >= 1 - 1e-5) >= c


def test_without_warm_start_indicator_model_same_optimum(tiny):
    X_i, y_i, X_j, y_j, counts = tiny
    with_start = fit_multiclass_csvm(X_i, y_i, X_j, y_j, 3, min_counts=counts, big_m=None, solver="scip", options=TIGHT)
    without = fit_multiclass_csvm(X_i, y_i, X_j, y_j, 3, min_counts=counts, big_m=None, solver="scip", options=TIGHT, warm_start=False)
    assert without.record.objective == pytest.approx(with_start.record.objective, rel=1e-5)


@needs_gurobi
def test_gurobi_agrees_with_scip(tiny):
    X_i, y_i, X_j, y_j, counts = tiny
    scip = fit_multiclass_csvm(X_i, y_i, X_j, y_j, 3, min_counts=counts, big_m=None, solver="scip", options=TIGHT)
    gurobi = fit_multiclass_csvm(X_i, y_i, X_j, y_j, 3, min_counts=counts, big_m=None, solver="gurobi", options=TIGHT)
    assert gurobi.record.objective == pytest.approx(scip.record.objective, rel=1e-4)


def test_two_classes_is_the_binary_csvm_with_twice_the_cost():
    X, y = three_blobs(20, seed=5)
    keep = y < 2
    X, y = X[keep], y[keep]
    X_i, y_i, X_j, y_j = X[:24], y[:24], X[24:], y[24:]
    k = int(np.sum(y_j == 1)) - 1
    multi = fit_multiclass_csvm(X_i, y_i, X_j, y_j, 2, C=1.0, min_counts={1: k}, big_m=None, solver="scip", options=TIGHT)
    binary = fit_csvm(X_i, 2.0 * y_i - 1, X_j, 2.0 * y_j - 1, C=2.0, min_counts={"tpr": k}, big_m=None, solver="scip", options=TIGHT)
    assert multi.record.objective == pytest.approx(binary.record.objective / 2, rel=1e-5)
    direction = multi.coef[1] - multi.coef[0]
    np.testing.assert_allclose(direction, binary.coef, atol=1e-3)


def test_more_columns_than_rows_row_space_equals_columns():
    """p >> n: the fit on the row-space factor has the optimum of the MIQP on the raw columns."""
    rng = np.random.default_rng(2)
    X, y = three_blobs(6, p=2, seed=7)
    X = np.hstack([X, rng.normal(0, 0.3, (X.shape[0], 28))])  # 18 rows, 30 columns
    X_i, y_i, X_j, y_j = X[:12], y[:12], X[12:], y[12:]
    counts = {0: int(np.sum(y_j == 0))}
    fit = fit_multiclass_csvm(X_i, y_i, X_j, y_j, 3, min_counts=counts, big_m=None, solver="scip", options=TIGHT)
    assert fit.coef.shape == (3, 30)
    raw = build_multiclass_primal(X_i, y_i, X_j, y_j, 3, C=1.0, min_counts=counts, big_m=None, sample_weight=np.ones(12))
    direct = solvers.solve(raw.miqp, "scip", TIGHT)
    assert fit.record.objective == pytest.approx(direct.record.objective, rel=1e-5)
    margins = class_margins(fit.decision_function(X_j), y_j)
    assert np.all(margins[y_j == 0] >= 1 - 1e-5)


def test_rbf_kernel_meets_counts_and_warm_start_is_feasible():
    X, y = three_blobs(30, seed=1, spread=1.6)
    X_i, y_i, X_j, y_j = X[:50], y[:50], X[50:], y[50:]
    counts = {k: int(np.sum(y_j == k)) for k in range(3)}  # every anchor point correct
    fit = fit_multiclass_csvm(X_i, y_i, X_j, y_j, 3, kernel="rbf", gamma=2.0, min_counts=counts, big_m=None, solver="scip")
    assert fit.record.status is Status.OPTIMAL
    margins = class_margins(fit.decision_function(X_j), y_j)
    assert np.all(margins >= 1 - 1e-5)


def test_warm_start_meets_the_counts():
    X, y = three_blobs(30, seed=4)
    X_i, y_i, X_j, y_j = X[:50], y[:50], X[50:], y[50:]
    counts = {1: int(np.sum(y_j == 1))}
    anchor = np.flatnonzero(y_j == 1)
    start = multiclass_start(X_i, y_i, X_j, y_j, 3, C=1.0, weight=np.ones(50), min_counts=counts, anchor_index=anchor)
    assert start is not None and start.z.sum() == counts[1]
    scale = multiclass_scale(3, 2, start.objective)
    x0 = np.r_[scale * start.W.ravel(), start.b, start.xi, start.z]
    problem = build_multiclass_primal(X_i, y_i, X_j, y_j, 3, C=1.0, min_counts=counts, big_m=None,
                                      sample_weight=np.ones(50), start=x0, upper=start.objective)
    assert problem.scale == scale
    assert problem.miqp.max_violation(x0) <= 1e-7
    assert problem.miqp.objective(x0) == pytest.approx(start.objective)
    np.testing.assert_allclose(problem.read(x0)[0], start.W)


def test_bad_inputs_are_named():
    X, y = three_blobs(5)
    with pytest.raises(DataError, match="no point of class"):
        fit_multiclass_csvm(X[y < 2], y[y < 2], X[:3], y[:3], 3)
    with pytest.raises(DataError, match="asks for"):
        fit_multiclass_csvm(X, y, X[:3], y[:3], 3, min_counts={int(y[0]): 5})


def test_time_limit_counts_the_whole_fit(monkeypatch):
    """The solver gets what the warm start left of the time limit (as in the binary engine)."""
    import time

    import csvm_stats.multiclass.engine as engine

    start, seen = engine.multiclass_start, []

    def slow_start(*args, **kwargs):
        time.sleep(0.3)  # at least 0.3 s pass on the wall clock, whatever the load
        return start(*args, **kwargs)

    def spy(problem, solver, options):
        seen.append(options.time_limit)
        return solvers.solve(problem, solver, options)

    monkeypatch.setattr(engine, "multiclass_start", slow_start)
    monkeypatch.setattr(engine, "solve", spy)
    X, y = three_blobs(12, seed=3)
    fit = fit_multiclass_csvm(X[:24], y[:24], X[24:], y[24:], 3, min_counts={0: 2},
                              options=SolverOptions(time_limit=100.0, clock="wall"))
    assert fit.record.status is Status.OPTIMAL
    assert seen and seen[0] <= 100.0 - 0.3
