"""The warm-startable SMO node solver of bnb: optimum, valid bound at any stop, warm start, forced margins."""

from __future__ import annotations

import numpy as np
import pytest

from csvm_stats.optimization.svm_dual import CG_FIRST, SVMDual, local_kernel
from sklearn.svm import SVC


def sample(seed: int, n: int = 120, p: int = 4):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, p))
    X[:, 0] += y
    return X, y


def primal(X, y, w, b, upper, rows):
    """The node objective 2 (w'w/2 + sum U_t max(0, 1 - y_t(w'x_t + b))) on finite-box rows; inf if a hard row fails."""
    m = y[rows] * (X[rows] @ w + b)
    hard = ~np.isfinite(upper[rows])
    if np.any(m[hard] < 1.0 - 1e-6):
        return np.inf
    return float(w @ w + 2.0 * upper[rows][~hard] @ np.maximum(0.0, 1.0 - m[~hard]))


@pytest.mark.parametrize("mode", ["features", "gram"])
def test_smo_matches_libsvm_and_its_bound_is_valid_at_any_stop(mode):
    X, y = sample(0)
    n_i = 80
    upper = np.r_[np.full(n_i, 0.5), np.full(y.size - n_i, np.inf)]
    dual = SVMDual(X, y, upper, X @ X.T if mode == "gram" else None, tol=1e-7)
    rows = np.arange(n_i)
    solution = dual.solve(rows, None, 10**6)
    assert solution.converged
    svc = SVC(kernel="linear", C=0.5, tol=1e-7).fit(X[:n_i], y[:n_i])  # libsvm's C is the box, C / 2
    coef = svc.dual_coef_[0]
    w = coef @ X[:n_i][svc.support_]
    libsvm_dual = 2.0 * (np.abs(coef).sum() - 0.5 * w @ w)
    assert solution.bound == pytest.approx(libsvm_dual, rel=1e-6)
    assert primal(X, y, solution.w, solution.b, upper, rows) == pytest.approx(solution.bound, rel=1e-5)
    # hard margins on the five anchor points the SVM gets most wrong; cold and warm starts agree
    margins = y[n_i:] * (X[n_i:] @ solution.w + solution.b)
    active = np.r_[rows, n_i + np.argsort(margins)[:5]]
    cold = dual.solve(active, None, 10**6)
    warm = dual.solve(active, solution.alpha, 10**6)
    assert cold.converged and warm.converged
    assert warm.bound == pytest.approx(cold.bound, rel=1e-6)
    value = primal(X, y, warm.w, warm.b, upper, active)
    assert value == pytest.approx(warm.bound, rel=1e-4)
    for steps in (0, 1, 7, 50):  # weak duality: every stopping point bounds the optimum from below
        partial = dual.solve(active, solution.alpha, steps)
        assert partial.bound <= warm.bound * (1 + 1e-9)
        assert partial.bound >= solution.bound * (1 - 1e-9)  # a child never bounds below its parent


def test_smo_stops_early_at_the_requested_value():
    X, y = sample(1)
    upper = np.r_[np.full(80, 0.5), np.full(40, np.inf)]
    dual = SVMDual(X, y, upper, None, tol=1e-7)
    full = dual.solve(np.arange(80), None, 10**6)
    early = dual.solve(np.arange(80), None, 10**6, stop_value=0.5 * full.bound)
    assert not early.converged and early.steps < full.steps
    assert 0.5 * full.bound <= early.bound <= full.bound * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_feature_mode_newton_steps_reach_the_pair_step_optimum_with_hard_rows(seed):
    """Feature mode (pair steps + Newton steps on the free rows) against Gram mode and feature mode with
    pair steps only: the same D(F) to the KKT tolerance on random problems with hard rows; every stop is dual feasible
    and bounds D(F) from below. Seed 7 has more free rows than a Newton step takes (pair steps only)."""
    rng = np.random.default_rng(seed)
    p = 120 if seed == 7 else int(rng.integers(2, 8))
    n_i, n_f = int(rng.integers(100, 160)), int(rng.integers(1, 8))
    X, y = sample(100 + seed, n=n_i + 40, p=p)
    upper = np.r_[np.full(n_i, 0.5) * rng.integers(1, 4, size=n_i), np.full(40, np.inf)]
    gram = SVMDual(X, y, upper, X @ X.T, tol=1e-9)
    plain = gram.solve(np.arange(n_i), None, 10**7)
    # hard rows that w = e_0 / min(y x_0) separates (so D(F) is finite) and the plain SVM misses
    margins = y[n_i:] * (X[n_i:] @ plain.w + plain.b)
    candidates = np.flatnonzero(y[n_i:] * X[n_i:, 0] > 0.2)
    anchors = n_i + candidates[np.argsort(margins[candidates])][:n_f]
    active = np.r_[np.arange(n_i), anchors]
    feat = SVMDual(X, y, upper, None, tol=1e-9)
    exact = gram.solve(active, plain.alpha, 10**7)
    newton = feat.solve(active, plain.alpha, 10**7)
    pairs = SVMDual(X, y, upper, None, tol=1e-9, newton=False).solve(active, plain.alpha, 10**7)
    assert exact.converged and newton.converged and pairs.converged
    assert newton.bound == pytest.approx(exact.bound, rel=1e-7)
    assert pairs.bound == pytest.approx(exact.bound, rel=1e-7)
    assert primal(X, y, newton.w, newton.b, upper, active) == pytest.approx(exact.bound, rel=1e-5)
    for steps in (1, 2, 5, 30):
        partial = feat.solve(active, plain.alpha, steps)
        alpha = partial.alpha[active]
        assert np.all(alpha >= 0.0) and np.all(alpha <= upper[active])
        assert abs(y[active] @ alpha) <= 1e-9 * max(1.0, alpha.sum())
        assert plain.bound * (1 - 1e-9) <= partial.bound <= exact.bound * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_gram_mode_cg_blocks_reach_the_pair_step_optimum_with_hard_rows(seed):
    """Gram mode with a local kernel (RBF, gamma = 2 on 10 columns: CG blocks on the free rows) against Gram mode
    with pair steps only: the same D(F) to the KKT tolerance with 1-7 hard rows and rows at their box limits; every
    stop, before and after the first block, is dual feasible and lies between the parent's bound and D(F)."""
    rng = np.random.default_rng(seed)
    n_i, n_f = int(rng.integers(100, 160)), int(rng.integers(1, 8))
    X, y = sample(200 + seed, n=n_i + 40, p=10)
    sq = np.einsum("ij,ij->i", X, X)
    K = np.exp(-2.0 * np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0))
    lam, V = np.linalg.eigh(K)
    phi = V * np.sqrt(np.maximum(lam, 0.0))  # the exact-rank feature map: phi phi' = K
    upper = np.r_[0.4 * rng.integers(1, 4, size=n_i), np.full(40, np.inf)]
    assert local_kernel(K)
    blocks = SVMDual(phi, y, upper, K, tol=1e-9)
    pairs = SVMDual(phi, y, upper, K, tol=1e-9, newton=False)
    assert blocks.cg_period > 0 and pairs.cg_period == 0
    plain = pairs.solve(np.arange(n_i), None, 10**7)
    margins = y[n_i:] * (phi[n_i:] @ plain.w + plain.b)
    active = np.r_[np.arange(n_i), n_i + np.argsort(margins)[:n_f]]  # hard rows the plain SVM misses most
    exact = pairs.solve(active, plain.alpha, 10**7)
    cg = blocks.solve(active, plain.alpha, 10**7)
    assert exact.converged and cg.converged
    assert cg.steps < exact.steps  # the blocks ran (each counts as one step)
    assert cg.bound == pytest.approx(exact.bound, rel=1e-7)
    assert primal(phi, y, cg.w, cg.b, upper, active) == pytest.approx(exact.bound, rel=1e-5)
    for steps in (1, CG_FIRST - 1, CG_FIRST, CG_FIRST + 1, CG_FIRST + 40):
        partial = blocks.solve(active, plain.alpha, steps)
        alpha = partial.alpha[active]
        assert np.all(alpha >= 0.0) and np.all(alpha <= upper[active])
        assert abs(y[active] @ alpha) <= 1e-9 * max(1.0, alpha.sum())
        assert plain.bound * (1 - 1e-9) <= partial.bound <= exact.bound * (1 + 1e-9)
