"""Held-out bounds, the order-statistic intercept and the Gaussian truth (certification, simulation)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from csvm_stats.certification import count_correct, heldout_bound, statement, umbrella_intercept
from csvm_stats.exceptions import DataError
from csvm_stats.simulation import GaussianClasses


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
    from csvm_stats.certification import floor2, ordinal, statement

    assert floor2(0.948) == "0.94" and floor2(0.95) == "0.95" and floor2(0.9999) == "0.99"
    assert "at least 0.94 " in statement("tpr", 0.948, 52, 53, 0.05)
    assert [ordinal(k) for k in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"
    ]
