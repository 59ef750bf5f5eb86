"""The counting certificate of infeasibility (csvm_stats.optimization.feasibility) against enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from csvm_stats.exceptions import InfeasibleConstraintsError
from csvm_stats.optimization.engine import fit_csvm
from csvm_stats.optimization.feasibility import check_counts, count_frontier, tie_groups
from csvm_stats.optimization.problem import rate_requirements
from csvm_stats.optimization.solvers import Status
from test_bnb import TIGHT, brute_force


def test_count_frontier_equals_enumeration_of_subsets():
    rng = np.random.default_rng(0)
    for _ in range(20):
        m = int(rng.integers(1, 7))
        pos, neg = rng.integers(0, 4, m), rng.integers(0, 4, m)
        best, _ = count_frontier(pos, neg)
        expected = np.full(int(pos.sum()) + 1, -1)
        for P in itertools.product([False, True], repeat=m):
            P = np.array(P)
            t = int(pos[P].sum())
            expected[t] = max(expected[t], int(neg[~P].sum()))
        np.testing.assert_array_equal(best, expected)


def test_tie_groups_joins_identical_rows_only():
    phi = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1e-12]])
    g = tie_groups(phi)
    assert g[0] == g[2] and len({g[0], g[1], g[3]}) == 3


def achievable(v: np.ndarray, y: np.ndarray, counts: dict[str, int]) -> bool:
    """One column: does some (w, b) meet the counts? Every score order is a threshold; w large, w = 0 included."""
    values = np.unique(v)
    mids = np.r_[values[0] - 1, (values[:-1] + values[1:]) / 2, values[-1] + 1]
    for sign, t in itertools.product((1.0, -1.0), mids):
        f = 1e6 * sign * (v - t)  # a steep rule with its threshold at t
        tp, tn = int(((f >= 1) & (y > 0)).sum()), int(((f <= -1) & (y < 0)).sum())
        if tp >= counts.get("tpr", 0) and tn >= counts.get("tnr", 0) and tp + tn >= counts.get("acc", 0):
            return True
    return False


@pytest.mark.parametrize("seed", range(30))
def test_one_column_certificate_is_exact(seed):
    """One discrete predictor (ties): the certificate says feasible exactly when some threshold rule meets the counts,
    and its forced set is then met by a steep rule."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 30))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    v = np.round(rng.normal(size=n) + 0.7 * y * rng.random()) if seed % 2 else rng.integers(0, 4, n).astype(float)
    sizes = {"tpr": int((y > 0).sum()), "tnr": int((y < 0).sum()), "acc": n}
    kinds = [("tpr", "tnr"), ("acc",), ("acc", "tpr"), ("tpr", "tnr", "acc")][seed % 4]
    counts = {k: int(rng.integers(sizes[k] // 2, sizes[k] + 1)) for k in kinds}
    check = check_counts(v[:, None], y, rate_requirements(y, counts), np.zeros(n, bool), np.zeros(n, bool))
    assert check.feasible is achievable(v, y, counts)
    if check.feasible:
        assert check.exact
        f = check.forced
        # a steep threshold rule meets every forced point: the positive ones all above the negative ones (or below)
        assert (v[f & (y > 0)].min(initial=np.inf) > v[f & (y < 0)].max(initial=-np.inf)
                or v[f & (y > 0)].max(initial=-np.inf) < v[f & (y < 0)].min(initial=np.inf))
        got = {"tpr": int((f & (y > 0)).sum()), "tnr": int((f & (y < 0)).sum()), "acc": int(f.sum())}
        assert all(got[k] >= c for k, c in counts.items())
    else:
        assert "at most" in check.reason


def tied_problem(seed: int):
    """Small problems on two discrete predictors (many ties in the anchor sample), requirements on both classes."""
    rng = np.random.default_rng(seed)
    n_i, n_j = 14, 9
    X = rng.integers(0, 3, size=(n_i + n_j, 2)).astype(float)
    y = np.where(X.sum(axis=1) + rng.normal(scale=1.0, size=n_i + n_j) > 2, 1.0, -1.0)
    y[:2], y[n_i : n_i + 2] = [1.0, -1.0], [1.0, -1.0]
    Xj, yj = X[n_i:], y[n_i:]
    sizes = {"tpr": int((yj > 0).sum()), "tnr": int((yj < 0).sum()), "acc": n_j}
    kinds = [("tpr", "tnr"), ("acc",), ("acc", "tnr")][seed % 3]
    counts = {k: max(1, sizes[k] - int(rng.integers(0, 3))) for k in kinds}
    return X[:n_i], y[:n_i], Xj, yj, counts


@pytest.mark.parametrize("seed", range(12))
def test_bnb_with_the_certificate_equals_brute_force_on_tied_problems(seed):
    """No warm start (bnb runs the certificate): bnb's answer, infeasible or optimal, is brute force's, and the
    certificate never calls a feasible problem infeasible."""
    Xi, yi, Xj, yj, counts = tied_problem(seed)
    weight = np.ones(len(yi))
    expected = brute_force(Xi, yi, Xj, yj, counts, weight)
    n = len(yj)
    check = check_counts(Xj, yj, rate_requirements(yj, counts), np.zeros(n, bool), np.zeros(n, bool))
    if check.feasible is False:
        assert not np.isfinite(expected)
    if not np.isfinite(expected):
        with pytest.raises(InfeasibleConstraintsError):
            fit_csvm(Xi, yi, Xj, yj, min_counts=counts, solver="bnb", options=TIGHT, warm_start=False)
        return
    fit = fit_csvm(Xi, yi, Xj, yj, min_counts=counts, solver="bnb", options=TIGHT, warm_start=False)
    assert fit.record.status is Status.OPTIMAL
    assert fit.objective == pytest.approx(expected, rel=1e-6)


def test_ordered_factor_infeasibility_is_proven_at_once_and_explained():
    """One 10-level ordered factor (9 polynomial-contrast columns: any score per level), as mlbench's BreastCancer
    ``Class ~ Cl.thickness`` with TPR and TNR >= 0.9: the levels overlap too much; bnb ran minutes before."""
    import pandas as pd

    from csvm_stats import CSVM

    rng = np.random.default_rng(3)
    n = 699
    y = rng.random(n) < 0.35
    a = np.clip(np.round(np.where(y, rng.normal(7, 2.5, n), rng.normal(3, 1.5, n))), 1, 10).astype(int)
    df = pd.DataFrame({"Class": pd.Categorical(np.where(y, "malignant", "benign"), categories=["benign", "malignant"]),
                       "a": pd.Categorical(a, categories=range(1, 11), ordered=True)})
    model = CSVM.from_formula("Class ~ a", df, tpr_min=0.9, tnr_min=0.9, bound="binomial", alpha=0.1)
    with pytest.raises(InfeasibleConstraintsError, match=r"at most \d+ can be while"):
        model.fit(random_state=1, time_limit=60, solver="bnb", clock="cpu")


def test_certificate_respects_the_roots_forced_and_dropped_points():
    y = np.array([1.0, -1.0, 1.0, -1.0])
    phi = np.array([[0.0], [0.0], [1.0], [1.0]])
    req = rate_requirements(y, {"tpr": 1, "tnr": 1})
    free = np.zeros(4, bool)
    assert check_counts(phi, y, req, free, free).feasible
    forced = np.array([True, False, False, True])  # a positive at 0, a negative at 1: a falling rule meets both
    assert check_counts(phi, y, req, forced, free).feasible
    both = np.array([True, True, False, False])  # both classes of one tie forced
    assert check_counts(phi, y, req, both, free).feasible is False
    dropped = np.array([True, False, True, False])  # no positive can count
    assert check_counts(phi, y, req, free, dropped).feasible is False


def test_one_column_forced_points_no_threshold_separates():
    y = np.array([1.0, -1.0, 1.0, -1.0])
    phi = np.array([[0.0], [1.0], [2.0], [3.0]])
    req = rate_requirements(y, {"tpr": 1, "tnr": 1})
    forced = np.array([True, True, True, False])  # positives at 0 and 2, a negative at 1: no threshold
    check = check_counts(phi, y, req, forced, np.zeros(4, bool))
    assert check.feasible is False and "no threshold" in check.reason
