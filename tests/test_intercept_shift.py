"""The O(n log n) best intercept (csvm_stats.optimization.intercept_shift) against an O(n^2) scan of every breakpoint."""

from __future__ import annotations

import numpy as np
import pytest

from csvm_stats.optimization.intercept_shift import best_shift, feasible_mask
from csvm_stats.optimization.problem import rate_requirements
from csvm_stats.optimization.warmstart import SCALE_FACTORS


def scan_best_shift(w0, phi_train, y_train, phi_anchor, y_anchor, C, weight, requirements, factors):
    """Reference: every hinge breakpoint and anchor threshold as a candidate intercept, each checked directly.

    The objective is convex and piecewise linear in b and the feasible set a union of intervals whose ends are
    anchor thresholds, so the best feasible b is among these candidates (a threshold's margin met to 1e-9).
    """
    best = None
    for factor in factors:
        w = factor * w0
        s_train, s_anchor = phi_train @ w, phi_anchor @ w
        for b in np.unique(np.r_[y_anchor - s_anchor, y_train - s_train]):
            met = y_anchor * (s_anchor + b) >= 1.0 - 1e-9
            if not all(met[r.members].sum() >= r.count for r in requirements):
                continue
            value = w @ w + C * weight @ np.maximum(0.0, 1.0 - y_train * (s_train + b))
            if best is None or value < best:
                best = value
    return best


@pytest.mark.parametrize("seed", range(40))
def test_best_shift_equals_the_breakpoint_scan(seed):
    rng = np.random.default_rng(seed)
    n_i, n_j, p = int(rng.integers(5, 60)), int(rng.integers(4, 60)), int(rng.integers(1, 4))
    X = rng.normal(size=(n_i + n_j, p))
    if seed % 3 == 0:
        X = np.round(X)  # ties
    y = np.where(X[:, 0] + rng.normal(size=n_i + n_j) > 0, 1.0, -1.0)
    y[:2], y[n_i:n_i + 2] = [1.0, -1.0], [1.0, -1.0]
    yj = y[n_i:]
    sizes = {"tpr": int((yj > 0).sum()), "tnr": int((yj < 0).sum()), "acc": n_j}
    kinds = [("acc",), ("tpr",), ("tnr",), ("tpr", "tnr"), ("acc", "tnr")][seed % 5]
    counts = {k: int(rng.integers(1, sizes[k] + 1)) for k in kinds}
    req = rate_requirements(yj, counts)
    weight = rng.integers(1, 3, n_i).astype(float)
    w0 = rng.normal(size=p)
    ours = best_shift(w0, X[:n_i], y[:n_i], X[n_i:], yj, 1.3, weight, req, SCALE_FACTORS)
    scan = scan_best_shift(w0, X[:n_i], y[:n_i], X[n_i:], yj, 1.3, weight, req, SCALE_FACTORS)
    assert (ours is None) == (scan is None)
    if ours is None:
        return
    value, w, b = ours
    assert value == pytest.approx(scan, rel=1e-7, abs=1e-7)  # thresholds at half the margin tolerance
    assert feasible_mask(np.array([b]), X[n_i:] @ w, yj, req)[0]
    margins = yj * (X[n_i:] @ w + b) >= 1 - 1e-9  # met when computed directly, as bnb checks an incumbent
    assert all(margins[r.members].sum() >= r.count for r in req)
    assert value == pytest.approx(w @ w + 1.3 * weight @ np.maximum(0, 1 - y[:n_i] * (X[:n_i] @ w + b)))


def test_feasible_mask_counts_each_requirement():
    y = np.array([1.0, 1.0, -1.0, -1.0])
    s = np.array([2.0, 0.0, -2.0, 0.0])
    req = rate_requirements(y, {"acc": 3})
    # b = -1: positives met where s >= 2 (one), negatives where s <= 0 (two): 3; b = 0: 1 + 1; b = 1: 2 + 1
    np.testing.assert_array_equal(feasible_mask(np.array([-1.0, 0.0, 1.0]), s, y, req), [True, False, True])
