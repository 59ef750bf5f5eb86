"""The branch-and-bound backend against brute force, SCIP and Gurobi; its statuses."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from csvm_stats import solvers
from csvm_stats.engine import fit_csvm
from csvm_stats.exceptions import InfeasibleConstraintsError, NoSolutionError, SolverError
from csvm_stats.problem import build_primal, rate_requirements
from csvm_stats.solvers import SolverOptions, Status

TIGHT = SolverOptions(mip_gap=1e-9, feasibility_tol=1e-9, time_limit=120)
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
            S_ = np.array(S, dtype=int)
            problem = build_primal(Xi, yi, Xj[S_], yj[S_], C=C, min_counts={"acc": len(S)} if S else {},
                                   big_m=None, sample_weight=weight)
            solution = solvers.solve(problem.miqp, "scip", TIGHT)
            if solution.record.status is Status.OPTIMAL:
                best = min(best, solution.record.objective)
            else:
                assert solution.record.status is Status.INFEASIBLE
    return best


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
