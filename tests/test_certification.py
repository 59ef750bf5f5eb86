"""Held-out bounds, the order-statistic intercept and the Gaussian truth (certification, simulation)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from csvm_stats.inference.certification import (
    count_correct,
    heldout_bound,
    level_percent,
    linear_scores,
    round_down,
    round_up,
    statement,
    umbrella_intercept,
)
from csvm_stats.exceptions import DataError
from csvm_stats.data.simulation import GaussianClasses


def test_heldout_bound_separate_and_bonferroni():
    b = heldout_bound(114, 120, 0.05, 2)
    assert b.lower == pytest.approx(stats.beta.ppf(0.05, 114, 7))
    assert b.joint_lower == pytest.approx(stats.beta.ppf(0.025, 114, 7))
    assert b.joint_lower < b.lower < b.rate


def test_statement_wording():
    text = statement("tpr", 0.9123, 114, 120, 0.05)
    assert text == (
        "With 95% confidence the true positive rate of this classifier is at least 0.91 "
        "(held-out: 114 of 120 positives correct; exact binomial bound)."
    )


@pytest.mark.parametrize("rate", ["tpr", "tnr"])
def test_umbrella_intercept_keeps_the_promised_share(rate):
    rng = np.random.default_rng(1)
    y = np.r_[np.ones(60), -np.ones(60)]
    scores = rng.normal(size=120) + y
    g = umbrella_intercept(scores, y, rate, 0.9, 0.05)
    n, correct = count_correct(y, scores + g.intercept, rate)
    assert n == 60 and correct == n - g.rank + 1
    assert stats.binom.cdf(g.rank - 1, n, 0.1) <= 0.05 < stats.binom.cdf(g.rank, n, 0.1)


def test_umbrella_intercept_counts_ties_as_correct():
    y = -np.ones(40)
    scores = np.zeros(40)  # every negative exactly at the threshold
    g = umbrella_intercept(scores, y, "tnr", 0.9, 0.05)
    assert count_correct(y, scores + g.intercept, "tnr") == (40, 40)


def test_confidence_levels_keep_their_decimals():
    assert level_percent(0.05) == "95%" and level_percent(0.1) == "90%"
    assert level_percent(0.025) == "97.5%" and level_percent(0.001) == "99.9%"
    assert level_percent(0.005) == "99.5%" and level_percent(1e-6) == "99.9999%"
    assert level_percent(1e-7) == "99.9999%"  # rounded down after four decimals, never up to 100%
    assert level_percent(0.05, 3) == "98.3333%" and level_percent(0.05, 2) == "97.5%"
    assert statement("tpr", 0.9, 95, 100, 0.025).startswith("With 97.5% confidence")


@pytest.mark.parametrize("rate", ["tpr", "tnr"])
def test_umbrella_ties_on_binary_predictors_are_all_correct(rate):
    """Many held-out points share the threshold score; recomputing the scores must not flip them."""
    rng = np.random.default_rng(3)
    n = 400
    X = rng.integers(0, 2, size=(n, 3)).astype(float)
    X = (X - X.mean(axis=0)) / X.std(axis=0)  # standardised binary columns: inexact floats
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    w = np.array([0.7311, -0.2903, 0.1234])
    scores, tol = linear_scores(X, w)
    g = umbrella_intercept(scores, y, rate, 0.9, 0.05, tolerance=tol)
    rate_class = (y == 1) if rate == "tpr" else (y == -1)
    at_threshold = rate_class & (np.abs(scores - g.threshold) <= tol)
    assert at_threshold.sum() > 5  # the test is about ties
    # scores computed again in another order (as predict does, row by row and column-reversed)
    again = np.array([sum(X[i, ::-1] * w[::-1]) for i in range(n)])
    for s in (scores, again, X @ w):
        decision = s + g.intercept
        correct = (decision >= 0) if rate == "tpr" else (decision < 0)
        assert correct[at_threshold].all()
        assert correct[rate_class].sum() >= g.guaranteed_correct == g.n - g.rank + 1


def test_umbrella_intercept_needs_enough_points_and_one_class():
    y = np.r_[np.ones(10), -np.ones(10)]
    with pytest.raises(DataError, match="at least 29 held-out positives"):
        umbrella_intercept(np.zeros(20), y, "tpr", 0.9, 0.05)
    with pytest.raises(DataError, match="'tpr' or 'tnr'"):
        umbrella_intercept(np.zeros(20), y, "acc", 0.9, 0.05)


def test_gaussian_true_rates_match_monte_carlo():
    population = GaussianClasses(dim=3, distance=2.0)
    X, y = population.sample(200_000, np.random.default_rng(0))
    w, b = np.array([1.0, 0.5, -0.2]), 0.4
    truth = population.true_rates(w, b)
    n, k = count_correct(y, X @ w + b, "tpr")
    assert k / n == pytest.approx(truth["tpr"], abs=0.005)
    n, k = count_correct(y, X @ w + b, "tnr")
    assert k / n == pytest.approx(truth["tnr"], abs=0.005)


def test_statement_rounds_the_lower_bound_down():
    from csvm_stats.inference.certification import floor2, ordinal, statement

    assert floor2(0.948) == "0.94" and floor2(0.9999) == "0.99" and floor2(0.448997) == "0.44"
    # the float 0.95 is 0.94999999999999995559...: exact decimal rounding never rounds it up
    assert floor2(0.95) == "0.94" and floor2(np.nextafter(0.95, 1.0)) == "0.95"
    assert round_down(0.823879, 3) == "0.823" and round_up(0.823001, 3) == "0.824"
    assert round_down(0.0, 3) == "0.000" and round_up(1.0, 3) == "1.000"
    assert "at least 0.94 " in statement("tpr", 0.948, 52, 53, 0.05)
    assert [ordinal(k) for k in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"
    ]


def test_bound_functions_refuse_impossible_inputs():
    """Review finding: k > n gave NaN, p0 > 1 or alpha > 1 gave a negative sample size."""
    from csvm_stats.exceptions import DataError
    from csvm_stats.inference.bounds import (
        binomial_min_n, clopper_pearson_interval, clopper_pearson_lower, hoeffding_min_n,
    )

    with pytest.raises(DataError, match="between 0 and the number of trials"):
        clopper_pearson_lower(5, 3, 0.05)
    with pytest.raises(DataError, match="between 0 and the number of trials"):
        clopper_pearson_interval(-1, 3, 0.05)
    with pytest.raises(DataError, match="p0 must lie strictly between 0 and 1"):
        binomial_min_n(1.2, 0.05)
    with pytest.raises(DataError, match="alpha must lie strictly between 0 and 1"):
        hoeffding_min_n(0.9, 2)
