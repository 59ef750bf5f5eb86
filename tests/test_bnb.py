"""The branch-and-bound backend against brute force, SCIP and Gurobi; its statuses."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from csvm_stats.optimization import solvers
from csvm_stats.optimization.engine import fit_csvm
from csvm_stats.exceptions import InfeasibleConstraintsError, NoSolutionError, SolverError
from csvm_stats.optimization.problem import build_primal, rate_requirements
from csvm_stats.optimization.solvers import SolverOptions, Status

TIGHT = SolverOptions(mip_gap=1e-9, feasibility_tol=1e-9, time_limit=600, clock="cpu")  # CPU clock: load never starves a run
KINDS = [{"tpr"}, {"tnr"}, {"acc"}, {"tpr", "tnr"}, {"acc", "tpr"}]


def brute_force(Xi, yi, Xj, yj, counts, weight, C=1.0) -> float:
    """The CSVM optimum by enumeration: every minimal set S of anchor points meeting the counts, forced.

    Forcing more points than a minimal set only adds constraints, so the
    optimum is the least over minimal sets of the convex QP "SVM on I with
    every point of S at margin >= 1" (solved by SCIP without binaries left).
    """
    requirements = rate_requirements(yj, counts)

    def meets(S: tuple[int, ...]) -> bool:
        return all(len(set(S) & set(req.members.tolist())) >= req.count for req in requirements)

    best = np.inf
    for size in range(len(yj) + 1):
        for S in itertools.combinations(range(len(yj)), size):
            if not meets(S) or any(meets(S[:k] + S[k + 1 :]) for k in range(len(S))):
                continue
            best = min(best, forced_cost(Xi, yi, Xj, yj, np.array(S, dtype=int), weight, C))
    return best


def forced_cost(Xi, yi, Xj, yj, S, weight, C=1.0) -> float:
    """D(S): the SVM on I with every anchor point of S at margin >= 1 (SCIP, no binaries left; inf: infeasible)."""
    problem = build_primal(Xi, yi, Xj[S], yj[S], C=C, min_counts={"acc": len(S)} if len(S) else {}, big_m=None,
                           sample_weight=weight)
    solution = solvers.solve(problem.miqp, "scip", TIGHT)
    if solution.record.status is Status.OPTIMAL:
        return solution.record.objective
    assert solution.record.status is Status.INFEASIBLE
    return np.inf


def random_problem(seed: int):
    rng = np.random.default_rng(seed)
    p, n_i, n_j = int(rng.integers(2, 4)), int(rng.integers(16, 28)), int(rng.integers(6, 9))
    X = rng.normal(size=(n_i + n_j, p))
    y = np.where(X[:, 0] + rng.normal(scale=1.0, size=n_i + n_j) > 0, 1.0, -1.0)
    y[:2], y[n_i : n_i + 2] = [1.0, -1.0], [1.0, -1.0]  # both classes in I and J
    X[rng.random(n_i + n_j) < 0.1] *= 4.0  # a few outliers
    weight = rng.integers(1, 4, size=n_i).astype(float) if seed % 3 == 0 else np.ones(n_i)
    kinds = KINDS[seed % len(KINDS)]
    Xj, yj = X[n_i:], y[n_i:]
    sizes = {"tpr": int((yj > 0).sum()), "tnr": int((yj < 0).sum()), "acc": n_j}
    counts = {k: max(1, sizes[k] - int(rng.integers(1, 3))) for k in kinds}
    return X[:n_i], y[:n_i], Xj, yj, counts, weight


@pytest.mark.parametrize("seed", range(20))
def test_bnb_equals_brute_force_on_small_random_problems(seed):
    Xi, yi, Xj, yj, counts, weight = random_problem(seed)
    expected = brute_force(Xi, yi, Xj, yj, counts, weight)
    if not np.isfinite(expected):
        with pytest.raises(InfeasibleConstraintsError):
            fit_csvm(Xi, yi, Xj, yj, min_counts=counts, sample_weight=weight, solver="bnb", options=TIGHT)
        return
    fit = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, sample_weight=weight, solver="bnb", options=TIGHT)
    assert fit.record.status is Status.OPTIMAL and fit.record.backend == "bnb"
    assert fit.objective == pytest.approx(expected, rel=1e-6)
    assert fit.record.best_bound <= expected * (1 + 1e-6)


def nogood_problem(seed: int):
    """No signal in two features, 11 anchor positives of which 3 may miss: deep enough trees that nodes
    are pruned by their own QP and later nodes meet their nogoods (brute force: 165 forced sets)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(23, 2))
    y = np.r_[np.where(rng.random(10) < 0.5, 1.0, -1.0), np.ones(11), -np.ones(2)]
    return X[:10], y[:10], X[10:], y[10:], {"tpr": 8}


def test_nogoods_never_cut_the_optimum(monkeypatch):
    """Every learned nogood (N, v) is a true bound (D(F0 u N) >= v by SCIP), the nogoods prune or drop at
    some nodes, and bnb still equals brute force."""
    from csvm_stats.optimization.solvers import bnb

    learned, searches, fired = [], [], []
    add, scan, run = bnb._Nogoods.add, bnb._Nogoods.scan, bnb._Search.run

    def spy_add(self, members, value):
        learned.append((members.copy(), value, searches[-1].forced0.copy()))
        add(self, members, value)

    def spy_scan(self, forced, dropped):
        before = dropped.copy()
        value, drop_value = scan(self, forced, dropped)
        fired.append(value > -np.inf or bool((dropped != before).any()))
        return value, drop_value

    def spy_run(self):
        searches.append(self)
        return run(self)

    monkeypatch.setattr(bnb._Nogoods, "add", spy_add)
    monkeypatch.setattr(bnb._Nogoods, "scan", spy_scan)
    monkeypatch.setattr(bnb._Search, "run", spy_run)
    for seed in (1, 7, 16, 26, 28):
        learned.clear()
        Xi, yi, Xj, yj, counts = nogood_problem(seed)
        weight = np.ones(yi.size)
        fit = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, solver="bnb", options=TIGHT)
        assert fit.record.status is Status.OPTIMAL
        assert fit.objective == pytest.approx(brute_force(Xi, yi, Xj, yj, counts, weight), rel=1e-6)
        d = searches[-1].d  # the model's anchor points (the anchor negatives carry no constraint: left out)
        for members, value, forced0 in learned:
            S = np.flatnonzero(forced0 | np.isin(np.arange(forced0.size), members))
            cost = forced_cost(d.phi_train, d.y_train, d.phi_anchor, d.y_anchor, S, d.weight, d.C)
            assert cost >= value * (1 - 1e-6)
    assert sum(fired) >= 5


def wisconsin_split(wisconsin, seed: int, n_train: int = 285):
    X, y = wisconsin
    idx = np.random.default_rng(seed).permutation(len(y))
    return X[idx[:n_train]], y[idx[:n_train]], X[idx[n_train:]], y[idx[n_train:]]


@pytest.mark.parametrize(("kind", "kernel"), [("tpr", "linear"), ("tnr", "linear"), ("tpr", "rbf")])
def test_bnb_equals_scip_on_medium_problems(wisconsin, kind, kernel):
    Xi, yi, Xj, yj = wisconsin_split(wisconsin, seed=21)
    if kernel == "rbf":
        Xi, yi, Xj, yj = Xi[:80, :10], yi[:80], Xj[:80, :10], yj[:80]
    members = yj > 0 if kind == "tpr" else yj < 0
    counts = {kind: int(np.ceil(0.97 * members.sum()))}
    options = SolverOptions(mip_gap=1e-7, feasibility_tol=1e-9, time_limit=600, clock="cpu")
    fits = {s: fit_csvm(Xi, yi, Xj, yj, kernel=kernel, min_counts=counts, solver=s, options=options)
            for s in ("bnb", "scip")}
    for fit in fits.values():
        assert fit.record.status is Status.OPTIMAL
    # both lie within their certified gap of the optimum (each bound is valid)
    slack = sum(f.objective - f.record.best_bound for f in fits.values()) + 1e-9 * fits["scip"].objective
    assert abs(fits["bnb"].objective - fits["scip"].objective) <= slack
    assert fits["bnb"].record.svm_solves > 0


def test_bnb_reports_infeasible_constraints(wisconsin):
    Xi, yi, Xj, yj = wisconsin_split(wisconsin, seed=22)
    counts = {"tpr": int((yj > 0).sum()), "tnr": int((yj < 0).sum())}
    with pytest.raises(InfeasibleConstraintsError):
        fit_csvm(Xi[:, :2], yi, Xj[:, :2], yj, min_counts=counts, solver="bnb")


def test_bnb_time_limit_with_and_without_incumbent(wisconsin):
    Xi, yi, Xj, yj = wisconsin_split(wisconsin, seed=23)
    counts = {"tpr": int((yj > 0).sum()) - 2}
    with pytest.raises(NoSolutionError, match="bnb"):
        fit_csvm(Xi, yi, Xj, yj, min_counts=counts, warm_start=False, solver="bnb",
                 options=SolverOptions(time_limit=0.0))
    fit = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, solver="bnb", options=SolverOptions(time_limit=0.0))
    assert fit.record.status is Status.TIME_LIMIT
    assert fit.objective == pytest.approx(fit.warm_start_objective)  # the warm start is the incumbent
    # nothing proven by the search before its root: the bound is the plain SVM's dual value on I (engine.keep_start)
    assert fit.record.best_bound <= fit.objective and np.isfinite(fit.record.gap)


def test_bnb_refuses_a_model_that_is_not_the_exact_csvm(wisconsin):
    Xi, yi, Xj, yj = wisconsin_split(wisconsin, seed=24)
    with pytest.raises(SolverError, match="exact primal CSVM"):
        fit_csvm(Xi, yi, Xj, yj, min_counts={"tpr": 10}, big_m=0.5, solver="bnb")


def test_linear_kernel_fit_memory_stays_linear_in_n():
    """n = 4000 rows, p = 3: an n x n Gram matrix would take 128 MB; the fit allocates far less."""
    import tracemalloc

    rng = np.random.default_rng(25)
    n = 4000
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, 3)) + 0.8 * y[:, None]
    tracemalloc.start()
    try:
        fit = fit_csvm(X[: n // 2], y[: n // 2], X[n // 2 :], y[n // 2 :], min_counts={"tpr": 700}, solver="bnb",
                       options=SolverOptions(time_limit=2.0, clock="cpu"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert fit.record.status.has_solution
    assert peak < 8 * n * n / 4, f"peak {peak / 1e6:.0f} MB"


def test_solver_options_clock_is_checked():
    with pytest.raises(ValueError, match="clock must be one of"):
        SolverOptions(clock="sundial")


def test_ordered_factor_design_with_duplicated_rows_is_proven_not_starved():
    """Two 10-level ordered factors (18 polynomial-contrast columns, most rows duplicated), as mlbench's
    BreastCancer ``Class ~ Cl.thickness + Cell.size``: libsvm crawled for minutes on the warm start's SVM fits,
    so bnb got no time and stopped with 0 nodes; the SMO fits take a fraction of a second."""
    import pandas as pd

    from csvm_stats import CSVM

    rng = np.random.default_rng(0)
    n = 699
    y = rng.random(n) < 0.35
    a = np.clip(np.round(np.where(y, rng.normal(7, 2.5, n), rng.normal(3, 1.5, n))), 1, 10).astype(int)
    b = np.clip(np.round(np.where(y, rng.normal(6.5, 2.7, n), rng.normal(1.3, 0.8, n))), 1, 10).astype(int)
    df = pd.DataFrame({"Class": pd.Categorical(np.where(y, "malignant", "benign"), categories=["benign", "malignant"]),
                       "a": pd.Categorical(a, categories=range(1, 11), ordered=True),
                       "b": pd.Categorical(b, categories=range(1, 11), ordered=True)})
    model = CSVM.from_formula("Class ~ a + b", df, tpr_min=0.9, bound="binomial")
    assert model.exog.shape[1] == 18
    record = model.fit(random_state=1, time_limit=60, solver="bnb").engine_fit.record
    assert record.status is Status.OPTIMAL and record.nodes >= 1


TINY_SOLVERS = ["bnb", "scip", "scip-tangents"] + (["gurobi-oa"] if solvers.gurobi_usable() else [])


@pytest.mark.parametrize("solver", TINY_SOLVERS)
def test_optimal_on_a_tiny_objective_means_its_gap(solver):
    """p >> n: the optimum is ~0.002. bnb: the SMO's absolute KKT tolerance left a leaf's own primal-dual gap
    at 1.6% and bnb said "optimal" with a 0.2% gap; leaves are now tightened until their gap is below mip_gap.
    SCIP (and Gurobi's outer approximation): 2000 epigraphs t_k >= w_k^2, each met to an absolute 1e-6, undercut
    the objective, and they said "optimal" at a true gap of 0.46% (0.9% with tangents); the w block is now
    rescaled (solvers._common.epigraph_scaled), so the undercut is at most feasibility_tol times the start's
    objective (1e-6 U, a hundredth of mip_gap when U is near the optimum): the true gap (the record's, from the
    returned point) is within mip_gap plus that."""
    rng = np.random.default_rng(3)
    y = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(60, 2000)) * 3.0
    X[:, 0] += 2 * y
    options = SolverOptions(time_limit=600, clock="cpu")
    fit = fit_csvm(X[:30], y[:30], X[30:], y[30:], min_counts={"tpr": int((y[30:] > 0).sum())}, solver=solver,
                   options=options)
    assert fit.objective < 0.01
    slack = 0.0 if solver == "bnb" else 0.5 * options.mip_gap  # the undercut, for a start within 50x the optimum
    assert fit.record.status is Status.OPTIMAL and fit.record.gap <= options.mip_gap + slack


def test_dual_store_keeps_its_budget_and_falls_back():
    """Waiting nodes' dual points: a shared point counts once; beyond the budget a node gets the fallback
    (its parent's own stored start, no new memory) or None (the root's point); memory is returned on release."""
    from csvm_stats.optimization.solvers.bnb import _DualStore

    def point(size: int):
        return np.arange(size, dtype=np.int32), np.ones(size)

    store = _DualStore(budget=5)
    a, b = point(3), point(4)
    assert store.keep(a, None) is a and store.keep(a, None) is a and store.used == 3
    assert store.keep(b, None) is None and store.used == 3
    assert store.keep(b, a) is a and store.used == 3
    for _ in range(3):
        store.release(a)
    store.release(None)
    assert store.used == 0 and store.peak == 3
    assert store.keep(b, None) is b and store.used == 4


def overlapping_problem(seed: int, n: int):
    """Two overlapping Gaussian classes in 4 features, halves I and J, TPR >= 0.9 on J."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, 4))
    X[:, 0] += y
    Xi, yi, Xj, yj = X[: n // 2], y[: n // 2], X[n // 2 :], y[n // 2 :]
    return Xi, yi, Xj, yj, {"tpr": int(np.ceil(0.9 * (yj > 0).sum()))}


@pytest.mark.parametrize("budget", [0, 1])
def test_bnb_stays_exact_when_the_stored_dual_points_run_out(budget, monkeypatch):
    """With (almost) no room for the parents' dual points, nodes are warm-started from the root's point or the
    nearest stored ancestor's: more SMO steps, the same proven optimum."""
    from csvm_stats.optimization.solvers import bnb

    Xi, yi, Xj, yj, counts = overlapping_problem(26, 400)
    options = SolverOptions(mip_gap=1e-7, time_limit=600, clock="cpu")
    reference = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, solver="bnb", options=options)
    fallbacks = []
    keep = bnb._DualStore.keep

    def counting_keep(store, point, fallback):
        kept = keep(store, point, fallback)
        fallbacks.append(kept is not point)
        assert store.used <= store.budget
        return kept

    monkeypatch.setattr(bnb, "DUAL_BUDGET_PER_ROW", budget)
    monkeypatch.setattr(bnb._DualStore, "keep", counting_keep)
    fit = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, solver="bnb", options=options)
    assert reference.record.status is Status.OPTIMAL and fit.record.status is Status.OPTIMAL
    assert len(fallbacks) >= 20 and any(fallbacks)  # nodes were queued, and beyond the budget fell back
    assert all(fallbacks) or budget > 0
    slack = (fit.objective - fit.record.best_bound) + (reference.objective - reference.record.best_bound)
    assert abs(fit.objective - reference.objective) <= slack + 1e-9 * reference.objective


def test_local_search_improves_the_warm_start_with_feasible_points(monkeypatch):
    """The local search only ever offers points meeting the requirements, and on an overlapping problem it
    lowers the warm start's objective before the root's costs; a dual point without some rows stays feasible."""
    from csvm_stats.optimization.solvers import bnb

    Xi, yi, Xj, yj, counts = overlapping_problem(27, 600)
    seen = []
    local_search = bnb._Search._local_search

    def spy(search, *args):
        if args:  # a restart from the peeling heuristic (accuracy requirements only; not this problem's)
            local_search(search, *args)
            return
        before = search.best[0]
        local_search(search)
        seen.append((before, search.best[0]))
        margins = search.y_j * (search.phi_j @ search.best[1] + search.best[2])
        assert all((margins[m] >= 1.0 - bnb.MARGIN_TOL).sum() >= c for m, c in zip(search.members, search.counts))
        point = search.relax(search.forced0 | search._top_set(search.best[1], search.best[2]), tol=1e-3).packed
        rows = point[0][-3:]
        kept, values = search._without(point, rows)
        alpha = np.zeros(search.dual.y.shape[0])
        alpha[kept] = values
        assert not np.isin(rows, kept).any() and (alpha >= 0).all() and (alpha <= search.dual.upper).all()
        assert abs(alpha @ search.dual.y) <= 1e-9 * alpha.sum()

    monkeypatch.setattr(bnb._Search, "_local_search", spy)
    fit = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, solver="bnb", options=SolverOptions(time_limit=600, clock="cpu"))
    assert fit.record.status is Status.OPTIMAL
    assert len(seen) == 1 and seen[0][1] < seen[0][0] * (1 - 1e-3)


def test_scan_nogoods_prunes_contained_sets_and_drops_the_one_missing_point():
    """A nogood the forced set contains prunes (its value); one missing a single free point drops it and
    reports its value (the side forcing that point is pruned); one missing two points, or a point already
    dropped, does nothing."""
    from csvm_stats.optimization.solvers.bnb import _Nogoods

    goods = _Nogoods()
    for members, value in [([1, 2, 6], 5.0), ([3, 4], 7.0), ([0, 5, 6], 8.0), ([2, 7], 9.0)] * 100:  # grows its arrays
        goods.add(np.array(members, dtype=np.int64), value)
    forced = np.zeros(8, dtype=bool)
    dropped = np.zeros(8, dtype=bool)
    forced[[1, 2, 3]], dropped[0] = True, True
    assert goods.scan(forced, dropped) == (-np.inf, 5.0)  # drops 6 ({1, 2, 6}), 4 ({3, 4}), 7 ({2, 7})
    assert dropped.tolist() == [True, False, False, False, True, False, True, True]
    assert goods.scan(forced, dropped) == (-np.inf, np.inf)  # nothing left to drop
    forced[6] = True
    assert goods.scan(forced, np.zeros(8, dtype=bool))[0] == 5.0
    forced[:] = False
    forced[0] = True
    assert goods.scan(forced, np.zeros(8, dtype=bool)) == (-np.inf, np.inf)  # each misses two points or more


@pytest.mark.parametrize("seed", range(12, 20))
def test_bnb_bound_stays_below_the_optimum_at_a_loose_gap(seed):
    """At mip_gap = 0.1 bnb may stop early, but its best bound must stay a lower bound of the optimum:
    points dropped by reduced-cost fixing or by a nogood leave pruned sides whose bounds count (seed 16
    reported a bound of 14.0 above the optimum 13.747 before)."""
    Xi, yi, Xj, yj, counts = nogood_problem(seed)
    weight = np.ones(len(yi))
    expected = brute_force(Xi, yi, Xj, yj, counts, weight)
    options = SolverOptions(mip_gap=0.1, feasibility_tol=1e-9, time_limit=600, clock="cpu")
    fit = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, sample_weight=weight, solver="bnb", options=options)
    assert fit.record.status is Status.OPTIMAL
    assert fit.record.best_bound <= expected * (1 + 1e-6)
    assert fit.objective >= expected * (1 - 1e-6)
    assert fit.objective - fit.record.best_bound <= 0.1 * fit.objective + 1e-9


def test_scan_requirement_counts_need_free_kth_cost_and_worst_unmet_point():
    """One requirement at a node: need, free members, the need-th smallest free cost, met free
    members and the free member of least margin below the met level (bnb's count bound and branching)."""
    from csvm_stats.optimization.solvers.bnb import _scan_requirement

    members = np.array([0, 2, 3, 5, 6], dtype=np.int64)
    forced = np.zeros(7, dtype=bool)
    dropped = np.zeros(7, dtype=bool)
    forced[2], dropped[5] = True, True  # free: 0, 3, 6
    cost = np.array([4.0, 9.0, 1.0, 7.0, 9.0, 0.5, 5.0])
    margins = np.array([0.2, 9.0, 9.0, 1.5, 9.0, -3.0, -0.4])
    need, n_free, kth, n_met, worst = _scan_requirement(members, forced, dropped, cost, 3, margins, 1.0)
    assert (need, n_free, n_met, worst) == (2, 3, 1, 6)  # point 6 (margin -0.4) is worse than point 0 (0.2)
    assert kth == 5.0  # the 2nd smallest of the free costs 4, 7, 5
    assert _scan_requirement(members, forced, dropped, cost, 1, margins, 1.0)[2] == -np.inf  # nothing needed
    assert _scan_requirement(members, forced, dropped, cost, 5, margins, 1.0)[2] == np.inf  # 4 needed, 3 free


@pytest.mark.parametrize("caller_handler", ["default", "ignore"])
def test_bnb_takes_over_ctrl_c_only_from_pythons_default_handler(wisconsin, monkeypatch, caller_handler):
    """During the search Ctrl-C sets bnb's flag instead of raising (only when Python's own
    KeyboardInterrupt handler is in place: an ignored SIGINT stays ignored); the handler is restored."""
    import signal

    from csvm_stats.optimization.solvers import bnb

    before = signal.default_int_handler if caller_handler == "default" else signal.SIG_IGN
    seen = []
    relax = bnb._Search.relax

    def spy(self, *args, **kwargs):
        seen.append(signal.getsignal(signal.SIGINT))
        return relax(self, *args, **kwargs)

    monkeypatch.setattr(bnb._Search, "relax", spy)
    previous = signal.signal(signal.SIGINT, before)
    try:
        Xi, yi, Xj, yj = wisconsin_split(wisconsin, seed=23)
        fit_csvm(Xi, yi, Xj, yj, min_counts={"tpr": int((yj > 0).sum()) - 2}, solver="bnb",
                 options=SolverOptions(time_limit=60.0, clock="cpu"))
        assert signal.getsignal(signal.SIGINT) is before
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen
    if caller_handler == "default":
        assert all(h not in (signal.default_int_handler, signal.SIG_IGN) for h in seen)
    else:
        assert all(h is signal.SIG_IGN for h in seen)


@pytest.mark.parametrize("kinds", [{"acc"}, {"tpr"}])
def test_branched_child_count_bound_needs_no_scan(kinds, monkeypatch):
    """A forced child of a branch (one more forced point, the same dropped set) takes max(parent bound, cost of
    the branched point) as its count bound without a scan: it equals the full scan's whenever the nogoods drop
    nothing more."""
    from csvm_stats.optimization.solvers import bnb

    rng = np.random.default_rng(5)
    n = 240
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, 4))
    X[:, 0] += y
    Xi, yi, Xj, yj = X[: n // 2], y[: n // 2], X[n // 2 :], y[n // 2 :]
    counts = {"acc": int(0.8 * len(yj))} if kinds == {"acc"} else {"tpr": int(np.ceil(0.9 * (yj > 0).sum()))}
    checked = []
    push = bnb._Search._push

    def spy(search, heap, bound, forced, dropped, parent, origin, branched=-1):
        if branched >= 0:
            more = dropped.copy()
            search.nogoods.scan(forced, more)
            if (more == dropped).all():
                assert max(bound, search._count_bound(forced, dropped)) == max(bound, float(search.cost[branched]))
                checked.append(branched)
        return push(search, heap, bound, forced, dropped, parent, origin, branched)

    monkeypatch.setattr(bnb._Search, "_push", spy)
    fit = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, solver="bnb", options=SolverOptions(time_limit=600, clock="cpu"))
    assert fit.record.status is Status.OPTIMAL
    assert len(checked) >= 5  # branches were taken (seed 5: 6 under TPR, more under accuracy)


def test_node_directions_are_tried_on_a_stride_that_doubles_without_improvement():
    """node_shift tries every stride-th node direction: the stride doubles after SHIFT_PATIENCE fruitless tries
    (up to MAX_SHIFT_STRIDE) and falls back to 1 when a try improves the incumbent."""
    from csvm_stats.optimization.solvers import bnb_primal

    class Heuristics(bnb_primal._PrimalHeuristics):
        def __init__(self):
            self.best, self.tries, self.improve_at = (10.0, None, 0.0), 0, -1

        def shift(self, w, factors=None):
            self.tries += 1
            if self.tries == self.improve_at:
                self.best = (self.best[0] - 1.0, None, 0.0)
            return self.best[0]

    patience = bnb_primal.SHIFT_PATIENCE
    h = Heuristics()
    for _ in range(patience):  # stride 1
        h.node_shift(None)
    assert (h.tries, h.shift_stride) == (patience, 2)
    for _ in range(2 * patience):  # stride 2: every other node
        h.node_shift(None)
    assert (h.tries, h.shift_stride) == (2 * patience, 4)
    h.improve_at = h.tries + 1
    for _ in range(4):  # the next try improves the incumbent
        h.node_shift(None)
    assert (h.tries, h.shift_stride, h.best[0]) == (2 * patience + 1, 1, 9.0)
    h.improve_at = -1
    for _ in range(10_000 * patience):
        h.node_shift(None)
    assert h.shift_stride == bnb_primal.MAX_SHIFT_STRIDE


@pytest.mark.parametrize("seed", [2, 7, 12])
def test_bnb_equals_brute_force_with_node_directions_almost_never_tried(seed, monkeypatch):
    """Node directions only offer feasible points: with the stride at its cap from the first try (leaves, the root,
    its costs and the local search still try theirs) bnb proves the same optimum, accuracy requirements included."""
    from csvm_stats.optimization.solvers import bnb_primal

    monkeypatch.setattr(bnb_primal, "SHIFT_PATIENCE", 0)
    monkeypatch.setattr(bnb_primal._PrimalHeuristics, "shift_stride", 10**9)
    Xi, yi, Xj, yj, counts, weight = random_problem(seed)
    expected = brute_force(Xi, yi, Xj, yj, counts, weight)
    fit = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, sample_weight=weight, solver="bnb", options=TIGHT)
    assert fit.record.status is Status.OPTIMAL
    assert fit.objective == pytest.approx(expected, rel=1e-6)
    assert fit.record.best_bound <= expected * (1 + 1e-6)


@pytest.mark.parametrize("seed", [2, 4, 7, 12, 14, 17])
def test_peeling_offers_only_feasible_points_and_bnb_stays_exact(seed, monkeypatch):
    """Under accuracy requirements the peeling heuristic (peeling from every solved node here) and its local
    search only offer points that meet every requirement, at their true objective, never below the brute-force
    optimum; and bnb still proves that optimum."""
    from csvm_stats.optimization.solvers import bnb_primal

    monkeypatch.setattr(bnb_primal, "PEEL_STRIDE", 1)
    monkeypatch.setattr(bnb_primal._PrimalHeuristics, "peel_stride", 1)
    Xi, yi, Xj, yj, counts, weight = random_problem(seed)
    assert "acc" in counts
    expected = brute_force(Xi, yi, Xj, yj, counts, weight)
    assert np.isfinite(expected)
    peel, offer = bnb_primal._PrimalHeuristics._peel, bnb_primal._PrimalHeuristics._offer
    inside, offered, peels = [False], [], []

    def spy_peel(search, *args):
        inside[0] = True
        try:
            peels.append(peel(search, *args))
        finally:
            inside[0] = False
        return peels[-1]

    def spy_offer(search, value, w, b):
        if inside[0]:
            margins = search.y_j * (search.phi_j @ w + b)
            met = all((margins[m] >= 1.0 - bnb_primal.MARGIN_TOL).sum() >= c
                      for m, c in zip(search.members, search.counts))
            offered.append((met, value, search.objective(w, b)))
        offer(search, value, w, b)

    monkeypatch.setattr(bnb_primal._PrimalHeuristics, "_peel", spy_peel)
    monkeypatch.setattr(bnb_primal._PrimalHeuristics, "_offer", spy_offer)
    fit = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, sample_weight=weight, solver="bnb", options=TIGHT)
    assert fit.record.status is Status.OPTIMAL
    assert fit.objective == pytest.approx(expected, rel=1e-6)
    assert fit.record.best_bound <= expected * (1 + 1e-6)
    assert peels and offered  # the root peels with every box at least
    for met, value, true in offered:
        assert met and value == pytest.approx(true, rel=1e-9) and value >= expected * (1 - 1e-6)


def test_peeling_takes_out_points_only_down_to_the_counts():
    """_peel_some takes points in the given order, skipping those whose requirement is at its count."""
    from csvm_stats.optimization.solvers import bnb_primal

    class Heuristics(bnb_primal._PrimalHeuristics):
        def __init__(self):
            self.members = [np.arange(6), np.array([0, 1, 2])]  # accuracy over 6 points, TPR over the first 3
            self.counts = [3, 2]
            self.member_of = [np.isin(np.arange(6), m) for m in self.members]

    h = Heuristics()
    keep = np.ones(6, dtype=bool)
    taken = h._peel_some(keep, np.array([0, 1, 3, 4, 5]), 10)
    # 0 goes (TPR 3 -> 2, accuracy 6 -> 5), 1 is skipped (TPR at its count), 3 and 4 go (accuracy 5 -> 3), 5 not
    assert taken.tolist() == [0, 3, 4] and keep.tolist() == [False, True, True, False, False, True]


def test_verbose_prints_the_search_log_and_quiet_prints_nothing(capsys):
    """verbose=True: bnb prints a header, progress rows and a closing line with the status (the other backends
    print their solver's log); verbose=False prints nothing."""
    Xi, yi, Xj, yj, counts, weight = random_problem(3)
    fit_csvm(Xi, yi, Xj, yj, min_counts=counts, sample_weight=weight, solver="bnb",
             options=SolverOptions(time_limit=60, clock="cpu", verbose=True))
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("bnb: branch-and-bound over anchor points;")
    assert out[1].split() == ["nodes", "waiting", "incumbent", "bound", "gap", "time", "(s)"]
    assert out[-1].startswith("bnb: optimal; objective ")
    fit_csvm(Xi, yi, Xj, yj, min_counts=counts, sample_weight=weight, solver="bnb",
             options=SolverOptions(time_limit=60, clock="cpu"))
    assert capsys.readouterr().out == ""
