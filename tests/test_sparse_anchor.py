"""The cardinality route keeps only the anchor points a rate counts in its MIQP (as engine.fit_csvm does)."""

from __future__ import annotations

import numpy as np

import csvm_stats.sparse.model as sparse_model
from csvm_stats.sparse.model import fit_cardinality_csvm


def test_unconstrained_anchor_points_leave_the_cardinality_miqp(monkeypatch):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(120, 8))
    y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=120) > 0, 1.0, -1.0)
    X_i, y_i, X_j, y_j = X[:80], y[:80], X[80:], y[80:]
    seen = []
    real_solve = sparse_model.solve

    def spy(problem, solver, options):
        seen.append(problem)
        return real_solve(problem, solver, options)

    monkeypatch.setattr(sparse_model, "solve", spy)
    n_pos = int((y_j > 0).sum())
    fit = fit_cardinality_csvm(X_i, y_i, X_j, y_j, max_features=2, min_counts={"tpr": n_pos - 1}, solver="scip")
    cardinality = next(problem for problem in seen if "v" in problem.blocks)
    z_block = cardinality.blocks["z"]
    assert z_block.stop - z_block.start == n_pos  # only the positives: TPR counts them
    np.testing.assert_array_equal(fit.constrained_anchor, np.flatnonzero(y_j > 0))
    assert fit.z.shape == (y_j.size,)
    margins = y_j * (X_j @ fit.coef + fit.intercept)
    negatives = y_j < 0  # outside the model: z says whether the margin is met
    np.testing.assert_array_equal(fit.z[negatives], (margins[negatives] >= 1.0 - 1e-9).astype(float))
    assert fit.z[y_j > 0].sum() >= n_pos - 1
