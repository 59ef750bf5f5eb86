"""The fast Newton solver of the probability model against a plain reference implementation.

``csvm_stats.probability.score_model`` trims numpy calls from its Newton
iterations (a general product for the weighted Gram matrix of narrow designs,
each fold's transposed rows copied once, one out-of-fold product per fold).
The benchmarks of ``benchmarks/probabilities.py`` were measured on the outputs
of the plain iteration below, so the model must give the same numbers up to
floating-point rounding: the point probability, the interval scores, the chosen
penalty, the sigmoid and the Venn-Abers interval, each to a relative 1e-9.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

from csvm_stats.probability import score_model
from csvm_stats.probability.score_model import NEWTON_STEPS, NEWTON_TOL, PATH_STEPS, PENALTY_GRID
from csvm_stats.probability.venn_abers import VennAbers


def _reference_newton(Z, y, lam, beta, steps=NEWTON_STEPS):
    """Newton's method for the penalised logistic loss, written out plainly (LU solve, explicit diagonal matrix)."""
    diagonal = np.full(Z.shape[1], lam + 1e-12)
    diagonal[0] = 1e-12
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(Z @ beta)))
        hessian = Z.T @ (Z * (p * (1.0 - p))[:, None]) + np.diag(diagonal)
        step = np.linalg.solve(hessian, Z.T @ (p - y) + (diagonal - 1e-12) * beta)
        beta = beta - step
        if np.abs(step).max() <= NEWTON_TOL * max(1.0, np.abs(beta).max()):
            break
    return beta


def _reference_cross_validated(Z, y01, path_steps=PATH_STEPS):
    """The penalty path on each fold, one fold and one penalty at a time."""
    top = float(np.sum(Z[:, 1:] ** 2))
    out_of_fold = np.empty((len(PENALTY_GRID), Z.shape[0]))
    fold_betas = []
    for test in score_model._folds(y01):
        train = np.setdiff1d(np.arange(Z.shape[0]), test)
        beta = np.zeros(Z.shape[1])
        beta[0] = score_model._base_logit(y01)
        betas = []
        for g, relative in enumerate(PENALTY_GRID):
            beta = _reference_newton(Z[train], y01[train], relative * top, beta, path_steps)
            out_of_fold[g, test] = Z[test] @ beta
            betas.append(beta)
        fold_betas.append(betas)
    losses = np.mean(np.logaddexp(0.0, out_of_fold) - y01 * out_of_fold, axis=1)
    g = int(np.argmin(losses))
    return np.mean([betas[g] for betas in fold_betas], axis=0), g, out_of_fold[g]


def _outputs(X, y, n_fit, ordered):
    model, h_scores = score_model.fit_probability_model(X[:n_fit], y[:n_fit], X[n_fit:], y[n_fit:], ordered=ordered)
    p0, p1 = VennAbers.fit(h_scores, y[n_fit:]).interval(model.interval_score(X))
    cross = score_model.fit_score(X[:n_fit], y[:n_fit], ordered=ordered)
    return {"P": model.predict(X), "interval score": h_scores, "p0": p0, "p1": p1,
            "penalty, slope, offset": np.array([model.penalty, model.slope, model.offset]),
            "coefficients": np.r_[model.coef, model.intercept, model.interval_coef, model.interval_intercept],
            "cross-fitted score": np.r_[cross[0], cross[1], cross[2], cross[3]]}


def _wisconsin():
    X, y = load_breast_cancer(return_X_y=True)
    order = np.random.default_rng(0).permutation(y.size)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X[order], (y[order] == 0).astype(float), 427, False


def _synthetic(n, d, seed, ordered):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.linspace(2.0, 0.1, d)
    eta = X[:, 0] - 0.7 * X[:, 1] + 0.5 * X[:, 0] * X[:, 2]
    return X, (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(float), (3 * n) // 4, ordered


@pytest.mark.parametrize("instance", [
    pytest.param(_wisconsin, id="wisconsin, 30 columns"),
    pytest.param(lambda: _synthetic(400, 6, 1, False), id="6 columns"),
    pytest.param(lambda: _synthetic(330, 90, 2, False), id="90 columns, 64 principal components"),
    pytest.param(lambda: _synthetic(520, 80, 3, True), id="80 ordered columns (a kernel map)"),
])
def test_the_model_equals_the_plain_reference_up_to_rounding(instance, monkeypatch):
    X, y, n_fit, ordered = instance()
    fast = _outputs(X, y, n_fit, ordered)
    monkeypatch.setattr(score_model, "_cross_validated", _reference_cross_validated)
    monkeypatch.setattr(score_model, "_newton_logistic",
                        lambda Z, Zt, y, lam, beta, steps=NEWTON_STEPS: _reference_newton(Z, y, lam, beta, steps))
    reference = _outputs(X, y, n_fit, ordered)
    for name, value in reference.items():
        scale = max(1.0, float(np.max(np.abs(value))))
        assert np.max(np.abs(fast[name] - value)) <= 1e-9 * scale, name
