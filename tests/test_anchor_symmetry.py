"""Orbits of interchangeable anchor points (bnb, kernels at exact rank): never cut the optimum."""

from __future__ import annotations

import numpy as np
import pytest

from csvm_stats.optimization.anchor_symmetry import NO_ORBITS, find_orbits, propagate, slack
from csvm_stats.optimization.solvers import SolverOptions, Status, bnb

from test_additive_bound import captured_search
from test_bnb import brute_force, forced_cost

GAP = SolverOptions(mip_gap=1e-7, feasibility_tol=1e-9, time_limit=600, clock="cpu")  # room for the orbits' slack


def tie_problem(seed: int):
    """Anchor points of one class far apart (forcing any costs the same: ties), one duplicated, and a decoy of the
    same class among the training points (not interchangeable with the others)."""
    rng = np.random.default_rng(seed)
    n_i, p, n_far = int(rng.integers(14, 20)), 3, int(rng.integers(4, 6))
    Xi = rng.normal(size=(n_i, p))
    yi = np.where(Xi[:, 0] + rng.normal(scale=0.7, size=n_i) > 0, 1.0, -1.0)
    yi[:2] = [1.0, -1.0]
    far = rng.normal(size=(n_far, p)) * 8.0 + 12.0 * np.eye(n_far, p)  # alone in the kernel's reach
    kind = "tnr" if seed % 2 else "tpr"
    sign = -1.0 if kind == "tnr" else 1.0
    decoy = rng.normal(size=(1, p))
    decoy[0, 0] = -1.5 * sign  # among the other class: costly to force
    Xj = np.vstack([far, far[:1], decoy, rng.normal(size=(1, p)), rng.normal(size=(1, p)) * 8.0])
    yj = np.r_[np.full(n_far + 1, sign), sign, -sign, -sign]
    counts = {kind: int((yj == sign).sum()) - int(rng.integers(1, 3))}
    if seed % 3 == 2:
        counts["acc"] = yj.size - 3  # overlapping requirements
    weight = rng.integers(1, 3, size=n_i).astype(float) if seed % 2 else np.ones(n_i)
    return Xi, yi, Xj, yj, counts, weight


def test_propagate_makes_each_orbit_a_prefix_and_detects_a_broken_order():
    elems, starts = np.array([3, 1, 4, 0, 2], dtype=np.int64), np.array([0, 3, 5], dtype=np.int64)
    forced, dropped = np.zeros(6, bool), np.zeros(6, bool)
    forced[4], dropped[0] = True, True  # orbit (3, 1, 4): 4 forced; orbit (0, 2): 0 dropped
    assert propagate(forced, dropped, elems, starts, 2)
    assert forced.tolist() == [False, True, False, True, True, False]  # 3 and 1 come before 4
    assert dropped.tolist() == [True, False, True, False, False, False]  # 2 comes after 0
    forced, dropped = np.zeros(6, bool), np.zeros(6, bool)
    forced[1], dropped[3] = True, True  # 1 forced after a dropped 3: no forced set keeps the order
    assert not propagate(forced, dropped, elems, starts, 2)


def test_slack_grows_with_the_moves_and_refuses_large_ones():
    assert slack(0.0, 0.0, 10.0) == 0.0
    assert slack(1e-9, 0.0, 10.0) == pytest.approx(2e-8, rel=1e-6)
    assert slack(0.0, 3e-7, 10.0) == pytest.approx(3e-7)
    assert slack(0.6, 0.0, 10.0) == np.inf and slack(0.0, np.inf, 10.0) == np.inf


@pytest.mark.parametrize("seed", range(8))
def test_bnb_with_orbits_equals_brute_force_on_ties_and_duplicates(seed, monkeypatch):
    """Ties among isolated anchor points and a duplicated one: bnb finds orbits and the brute-force optimum, and
    every swap inside an orbit keeps the cost of a forced set to within the reported slack (SCIP, exact)."""
    monkeypatch.setattr(bnb, "DEEP_SEARCH_AFTER", 0)  # orbits from the first node on
    Xi, yi, Xj, yj, counts, weight = tie_problem(seed)
    fit, search = captured_search(monkeypatch, Xi, yi, Xj, yj, min_counts=counts, sample_weight=weight,
                                  kernel="rbf", gamma=2.0, solver="bnb", options=GAP)
    phi_i, phi_j = fit.feature_map.transform(Xi), fit.feature_map.transform(Xj)
    expected = brute_force(phi_i, yi, phi_j, yj, counts, weight)
    assert fit.record.status is Status.OPTIMAL
    assert fit.objective == pytest.approx(expected, rel=1e-6)
    assert fit.record.best_bound <= expected * (1 + 1e-6)
    orbits = search.orbits
    assert orbits.count >= 1 and 0.0 <= orbits.slack_at(fit.objective) <= 0.02 * GAP.mip_gap * fit.objective
    data = search.d
    rng = np.random.default_rng(seed)
    for o in range(orbits.count):
        orbit = orbits.elems[orbits.starts[o]:orbits.starts[o + 1]]
        others = np.setdiff1d(np.flatnonzero(~search.forced0 & ~search.dropped0), orbit)
        for _ in range(2):
            inside = rng.choice(orbit, size=int(rng.integers(1, orbit.size)), replace=False)
            swapped = rng.permutation(orbit)[:inside.size]
            rest = rng.choice(others, size=min(others.size, 1), replace=False) if others.size else others
            costs = [forced_cost(data.phi_train, data.y_train, data.phi_anchor, data.y_anchor,
                                 np.r_[np.flatnonzero(search.forced0), S, rest].astype(int), data.weight, data.C)
                     for S in (inside, swapped)]
            assert costs[1] == pytest.approx(costs[0], rel=1e-6, abs=1e-7)  # SCIP's tolerance; the slack is below


def test_no_orbits_without_an_incumbent_or_a_budget():
    gram = np.eye(4)
    members = [np.arange(2)]
    free = np.ones(2, bool)
    args = (gram, gram, np.ones(4), np.ones(2), 2, members, free)
    assert find_orbits(*args, incumbent=np.inf, budget=1.0) is NO_ORBITS
    assert find_orbits(*args, incumbent=1.0, budget=0.0) is NO_ORBITS
    orbits = find_orbits(*args, incumbent=1.0, budget=1e-6)
    assert orbits.count == 1 and sorted(orbits.elems.tolist()) == [0, 1] and orbits.slack_at(1.0) <= 1e-6
    assert orbits.slack_at(0.25) < orbits.slack_at(1.0)  # a lower incumbent bounds w more tightly


@pytest.mark.parametrize("seed", range(6))
def test_orbits_at_a_loose_gap_keep_the_bound_below_the_optimum(seed, monkeypatch):
    """mip_gap = 1e-2 (the orbits' slack grows with it): the reported bound stays at or below the brute-force
    optimum, the incumbent within the gap, and the reported gap within mip_gap plus the slack (1% of it)."""
    monkeypatch.setattr(bnb, "DEEP_SEARCH_AFTER", 0)
    loose = SolverOptions(mip_gap=1e-2, feasibility_tol=1e-9, time_limit=600, clock="cpu")
    Xi, yi, Xj, yj, counts, weight = tie_problem(20 + seed)
    fit, search = captured_search(monkeypatch, Xi, yi, Xj, yj, min_counts=counts, sample_weight=weight,
                                  kernel="rbf", gamma=2.0, solver="bnb", options=loose)
    phi_i, phi_j = fit.feature_map.transform(Xi), fit.feature_map.transform(Xj)
    expected = brute_force(phi_i, yi, phi_j, yj, counts, weight)
    assert fit.record.status is Status.OPTIMAL
    assert fit.record.best_bound <= expected * (1 + 1e-9)
    assert expected * (1 - 1e-9) <= fit.objective <= expected * (1 + 1.01 * loose.mip_gap)
    assert fit.record.gap <= 1.01 * loose.mip_gap
