"""The point probability's recalibration (csvm_stats.probability.score_model.fit_recalibration).

Platt's sigmoid, or its beta-calibration extension sigma(a eta + k g(eta) + b)
with g(eta) = 2 log cosh(eta / 2) when that fits the pairs better by more
than 1 in log likelihood; always an increasing map of the score, always
matching the smoothed base rate.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from csvm_stats.probability.score_model import (
    ProbabilityModel,
    bowl,
    fit_recalibration,
    fit_sigmoid,
    recalibration_logit,
    sigmoid,
)


def _targets(y: np.ndarray) -> np.ndarray:
    n_pos, n_neg = y.sum(), y.size - y.sum()
    return np.where(y > 0, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))


def _loss(logit: np.ndarray, y: np.ndarray) -> float:
    t = _targets(y)
    return float(np.sum(np.logaddexp(0, logit) - t * logit))


def _pairs(n: int, seed: int, slope_neg: float, slope_pos: float, offset: float = 0.0):
    """Scores with a true logit of slope ``slope_neg`` below 0 and ``slope_pos`` above (asymmetric tails)."""
    rng = np.random.default_rng(seed)
    s = rng.normal(0.0, 2.0, n)
    logit = np.where(s < 0, slope_neg * s, slope_pos * s) + offset
    y = (rng.random(n) < sigmoid(logit)).astype(float)
    return s, y


def test_bowl_is_two_log_cosh_and_stable_for_large_scores():
    s = np.array([-800.0, -3.0, 0.0, 0.5, 40.0, 800.0])
    g = bowl(s)
    assert g[2] == 0.0 and np.all(g >= 0) and np.all(np.isfinite(g))
    assert g[1] == pytest.approx(2 * np.log(np.cosh(1.5)), rel=1e-12)
    assert g[4] == pytest.approx(40 - 2 * np.log(2), rel=1e-12)
    assert bowl(-s) == pytest.approx(g)


def test_asymmetric_tails_get_the_extension_and_recover_it():
    """Pairs drawn from the extension itself (tail slopes a - k = 0.5 and a + k = 2) give back a and k."""
    rng = np.random.default_rng(1)
    s = rng.normal(0.0, 3.0, 20000)
    y = (rng.random(s.size) < sigmoid(recalibration_logit(s, 1.25, 0.75, -0.3))).astype(float)
    a, k, b = fit_recalibration(s, y)
    assert a == pytest.approx(1.25, abs=0.15) and k == pytest.approx(0.75, abs=0.15)
    assert _loss(recalibration_logit(s, a, k, b), y) < _loss(np.polyval(fit_sigmoid(s, y), s), y) - 1.0


def test_the_extension_must_gain_more_than_one_in_log_likelihood():
    """Platt's fit is kept unless the extension's log likelihood is higher by more than 1 (Akaike)."""
    for seed in range(20):
        s, y = _pairs(300, seed=seed, slope_neg=1.0, slope_pos=1.0, offset=-0.5)
        a, k, b = fit_recalibration(s, y)
        a0, b0 = fit_sigmoid(s, y)
        if k == 0.0:
            assert (a, b) == (a0, b0)
        else:
            assert _loss(recalibration_logit(s, a, k, b), y) < _loss(a0 * s + b0, y) - 1.0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 3.0), st.floats(0.0, 3.0), st.floats(-3.0, 3.0),
       st.integers(20, 400))
@example(8025, 0.0, 0.0, -3.0, 20)  # undamped Newton ran Platt's fit off to a = -1e10 here
def test_always_increasing_and_matching_the_smoothed_base_rate(seed, slope_neg, slope_pos, offset, n):
    s, y = _pairs(n, seed, slope_neg, slope_pos, offset)
    if y.min() == y.max():
        y[0] = 1.0 - y[0]
    a, k, b = fit_recalibration(s, y)
    if a > 0:
        assert abs(k) <= a * (1 + 1e-12)  # the derivative a + k tanh(eta / 2) is never negative
        grid = np.linspace(-60, 60, 2001)
        assert np.all(np.diff(sigmoid(recalibration_logit(grid, a, k, b))) >= -1e-12)  # rounding at the flat tail
    else:
        assert k == 0.0
    p = sigmoid(recalibration_logit(s, a, k, b))
    assert p.mean() == pytest.approx(_targets(y).mean(), abs=1e-6)  # the intercept's score equation


def test_a_score_that_does_not_rank_keeps_platt_and_constant_scores_the_base_rate():
    s, y = _pairs(500, seed=4, slope_neg=2.0, slope_pos=2.0)
    a, k, b = fit_recalibration(-s, y)
    assert a < 0 and k == 0.0
    a, k, b = fit_recalibration(np.full(50, 3.0), np.r_[np.ones(10), np.zeros(40)])
    assert (a, k) == (0.0, 0.0) and sigmoid(np.array(b)) == pytest.approx(11 / 12 * 10 / 50 + 1 / 42 * 40 / 50)


def test_probability_model_applies_the_curvature():
    m = ProbabilityModel(np.array([1.0, 0.0]), 0.0, 1.0, 0.2, curvature=0.5)
    eta = np.array([-2.0, 0.0, 3.0])
    assert m.probability(eta) == pytest.approx(sigmoid(eta + 0.5 * bowl(eta) + 0.2))
    assert ProbabilityModel(np.zeros(2), 0.0, 1.0, 0.2).probability(eta) == pytest.approx(sigmoid(eta + 0.2))


@pytest.mark.parametrize("centre", [100.0, -100.0, 40.0])
def test_scores_far_to_one_side_of_zero_stay_finite(centre):
    """There g(eta) = |eta| - 2 log 2 is collinear with eta and the intercept: a face's column is constant."""
    rng = np.random.default_rng(5)
    y = (rng.random(200) < 0.5).astype(float)
    s = rng.normal(centre, 5.0, 200) + 3.0 * y
    a, k, b = fit_recalibration(s, y)
    p = sigmoid(recalibration_logit(s, a, k, b))
    assert np.all(np.isfinite(p)) and a > 0 and abs(k) <= a
    assert p.mean() == pytest.approx(_targets(y).mean(), abs=1e-6)


def _scipy_recalibration(s: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Log losses of Platt's fit and of the constrained extension by an independent optimiser (scipy)."""
    from scipy.optimize import minimize

    t = _targets(y)
    F = np.column_stack([-np.logaddexp(0.0, -s), np.logaddexp(0.0, s), np.ones_like(s)])  # c1 log s - c0 log(1-s) + c

    def best(columns, bounds, x0):
        loss = lambda w: float(np.sum(np.logaddexp(0, columns @ w) - t * (columns @ w)))  # noqa: E731
        grad = lambda w: columns.T @ (sigmoid(columns @ w) - t)  # noqa: E731
        return minimize(loss, x0, jac=grad, method="L-BFGS-B", bounds=bounds,
                        options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 10_000}).fun

    platt = best(np.column_stack([s, np.ones_like(s)]), [(None, None)] * 2, np.zeros(2))
    extension = best(F, [(0, None), (0, None), (None, None)], np.array([1.0, 1.0, 0.0]))
    return platt, extension


@pytest.mark.parametrize("seed", range(12))
def test_the_choice_and_the_fit_agree_with_an_independent_optimiser(seed):
    """Against scipy's constrained optimum: the same log loss (1e-6 relative), and the extension chosen exactly
    when it gains more than 1 (cases on both sides of the threshold; a gain within 1e-3 of 1 is not judged)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(80, 600))
    s = rng.normal(rng.uniform(-1, 1), rng.uniform(1, 4), n)
    bend = rng.choice([0.0, 0.3, 0.6])
    y = (rng.random(n) < sigmoid(recalibration_logit(s, 1.0, bend * rng.choice([-1, 1]), 0.2))).astype(float)
    platt, extension = _scipy_recalibration(s, y)
    gain = platt - extension
    a, k, b = fit_recalibration(s, y)
    ours = _loss(recalibration_logit(s, a, k, b), y)
    if abs(gain - 1.0) > 1e-3:
        assert (k != 0.0) == (gain > 1.0)
        assert ours == pytest.approx(extension if gain > 1.0 else platt, rel=1e-6)
