"""The intercept envelope bound (bnb, kernels at exact rank): valid against SCIP's exact node costs, and strong."""

from __future__ import annotations

import numpy as np
import pytest

from csvm_stats.optimization import intercept_envelope
from csvm_stats.optimization.intercept_envelope import InterceptEnvelope, _ascent
from csvm_stats.optimization.solvers import Status, bnb

from test_additive_bound import captured_search, cheapest_completion, rbf_problem
from test_anchor_symmetry import GAP, tie_problem
from test_bnb import TIGHT, brute_force


def root_envelope(search) -> InterceptEnvelope:
    """The envelope a search builds, from its root and incumbent (every point placed: no level)."""
    return InterceptEnvelope.build(search.additive, search.gram, search.root.alpha, search.root.b, search.best[2],
                                   search.forced0, search.dropped0, search.counts, np.inf)


def test_ascent_stays_in_the_box_and_never_lowers_the_fixed_intercept_dual():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(12, 2))
    y = np.where(rng.random(12) < 0.5, 1.0, -1.0)
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))
    Q = y[:, None] * y[None] * K
    upper = np.r_[np.full(9, 0.5), np.full(3, np.inf)]  # three hard rows
    b = 0.3

    def g(a):
        return a @ (1.0 - y * b) - 0.5 * a @ Q @ a

    alpha = np.zeros(12)
    previous = g(alpha)
    for sweeps in (1, 2, 5, 50):
        alpha = _ascent(Q, y, b, upper, alpha, sweeps, 0.0)
        assert np.all(alpha >= 0.0) and np.all(alpha <= upper)
        assert g(alpha) >= previous - 1e-12
        previous = g(alpha)
    grad = (1.0 - y * b) - Q @ alpha  # converged: the box's KKT conditions
    assert np.all(np.where(alpha <= 0.0, grad <= 1e-6, True))
    assert np.all(np.where(alpha >= upper, grad >= -1e-6, True))
    assert np.all(np.where((alpha > 0.0) & (alpha < upper), np.abs(grad) <= 1e-6, True))


def test_ascent_moves_coordinates_without_curvature_to_the_end_their_gradient_points_to():
    """A zero kernel row (Q_tt = 0): no division by zero; a soft row goes to its box end, a hard one stays."""
    rng = np.random.default_rng(4)
    phi = rng.normal(size=(6, 3))
    phi[[1, 4]] = 0.0  # row 1 soft, row 4 hard
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0, -1.0])
    Q = (y[:, None] * phi) @ (y[:, None] * phi).T
    upper = np.array([0.5, 0.5, 0.5, 0.5, np.inf, 0.5])
    b = -0.2  # 1 - y b > 0 for the positive rows: their gradient pushes up
    alpha = _ascent(Q, y, b, upper, np.zeros(6), 50, 0.0)
    assert np.all(np.isfinite(alpha)) and np.all(alpha >= 0.0) and np.all(alpha <= upper)
    assert alpha[1] == 0.5 and alpha[4] == 0.0


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("gamma", [0.3, 3.0, 30.0])
def test_envelope_never_exceeds_the_cost_of_a_descendant(seed, gamma, monkeypatch):
    """At the root and at nodes forcing or dropping random points: the envelope is at most D(F u S) (SCIP,
    exact) for every minimal completion S of the counts; requirements with overlapping members included."""
    Xi, yi, Xj, yj, counts, weight = rbf_problem(seed)
    fit, search = captured_search(monkeypatch, Xi, yi, Xj, yj, min_counts=counts, sample_weight=weight,
                                  kernel="rbf", gamma=gamma, solver="bnb", options=TIGHT)
    if search is None or search.best is None:
        return
    envelope = root_envelope(search)
    data = search.d
    rng = np.random.default_rng(seed)
    free0 = np.flatnonzero(~search.forced0 & ~search.dropped0)
    for trial in range(4):
        forced, dropped = search.forced0.copy(), search.dropped0.copy()
        if trial and free0.size:
            picked = rng.choice(free0, size=min(trial, free0.size), replace=False)
            forced[picked[: (trial + 1) // 2]] = True
            dropped[picked[(trial + 1) // 2:]] = True
        bound = envelope(forced, dropped, search.counts)
        cheapest = cheapest_completion(data, forced, dropped)
        assert bound <= cheapest + 1e-6 * max(1.0, abs(cheapest)), (trial, bound, cheapest)


@pytest.mark.parametrize("seed", range(6))
def test_bnb_with_the_envelope_from_the_start_equals_brute_force(seed, monkeypatch):
    """The envelope built before the first node (DEEP_SEARCH_AFTER = 0) on ties with duplicates and on local
    kernels: bnb finds the brute-force optimum and its bound stays below it."""
    monkeypatch.setattr(bnb, "DEEP_SEARCH_AFTER", 0)
    if seed % 2:
        Xi, yi, Xj, yj, counts, weight = tie_problem(seed)
        options, gamma = GAP, 2.0
    else:
        Xi, yi, Xj, yj, counts, weight = rbf_problem(100 + seed)
        options, gamma = TIGHT, 20.0
    fit, search = captured_search(monkeypatch, Xi, yi, Xj, yj, min_counts=counts, sample_weight=weight,
                                  kernel="rbf", gamma=gamma, solver="bnb", options=options)
    phi_i, phi_j = fit.feature_map.transform(Xi), fit.feature_map.transform(Xj)
    expected = brute_force(phi_i, yi, phi_j, yj, counts, weight)
    assert search.envelope is not None
    assert fit.record.status is Status.OPTIMAL
    assert fit.objective == pytest.approx(expected, rel=1e-6)
    assert fit.record.best_bound <= expected * (1 + 1e-6)


def test_envelope_beats_the_root_point_when_the_optimum_moves_the_intercept(monkeypatch):
    """Anchor points far from everything (each costs the same to force) that move the optimum's intercept: the
    envelope at the root is above the additive bound from the root's own point and within 0.5% of the optimum."""
    rng = np.random.default_rng(11)
    Xi = rng.normal(size=(40, 3))
    yi = np.where(Xi[:, 0] + rng.normal(scale=0.5, size=40) > 0, 1.0, -1.0)
    Xj = rng.normal(size=(14, 3)) * 8.0
    yj = -np.ones(14)
    fit, search = captured_search(monkeypatch, Xi, yi, Xj, yj, min_counts={"tnr": 12}, kernel="rbf", gamma=4.0,
                                  solver="bnb", options=TIGHT)
    assert fit.record.status is Status.OPTIMAL
    envelope = root_envelope(search)
    root = search.relax(search.forced0, tol=1e-10)
    additive = search.additive(root.alpha, root.b, search.forced0, search.dropped0, search.counts)
    bound = envelope(search.forced0, search.dropped0, search.counts)
    assert additive < bound <= fit.objective * (1 + 1e-9)
    assert bound >= 0.995 * fit.objective, (additive, bound, fit.objective)
    assert intercept_envelope.MAX_POINTS >= len(envelope._points) - 4  # root, target, two ends, the placed ones
