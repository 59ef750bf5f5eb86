"""Venn-Abers predictor: exact against isotonic fits from scratch and against the PyPI package; edge cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import isotonic_regression

from csvm_stats.exceptions import DataError
from csvm_stats.probability.venn_abers import VennAbers, bagged, merge


def brute_force(scores: np.ndarray, labels: np.ndarray, s: float, label: int) -> float:
    """The isotonic fit to the calibration pairs plus (s, label), at s, ties pooled: fitted from scratch."""
    x, y = np.r_[scores, s], np.r_[labels, label].astype(float)
    c, inverse = np.unique(x, return_inverse=True)
    w = np.bincount(inverse).astype(float)
    fit = isotonic_regression(np.bincount(inverse, weights=y) / w, weights=w).x
    return float(fit[np.searchsorted(c, s)])


@pytest.mark.parametrize("seed", range(40))
def test_every_slot_equals_two_isotonic_fits_from_scratch(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    scores = np.round(rng.normal(size=n), int(rng.integers(0, 3)))  # rounding makes ties
    labels = (rng.random(n) < 1 / (1 + np.exp(-2 * scores))).astype(int)
    va = VennAbers.fit(scores, labels)
    new = np.r_[scores, rng.normal(size=15), scores.min() - 1, scores.max() + 1]
    p0, p1 = va.interval(new)
    for s, lo, hi in zip(new, p0, p1):
        assert lo == pytest.approx(brute_force(scores, labels, s, 0), abs=1e-12)
        assert hi == pytest.approx(brute_force(scores, labels, s, 1), abs=1e-12)
    assert np.all(p0 <= p1)


def test_agrees_with_the_venn_abers_package():
    package = pytest.importorskip("venn_abers")  # the PyPI package we judged against (test extra)
    old = np.geterr()
    try:
        rng = np.random.default_rng(3)
        scores = rng.normal(size=300)
        labels = (rng.random(300) < 1 / (1 + np.exp(-2 * scores))).astype(int)
        new = rng.normal(size=500)
        theirs = package.VennAbers()
        theirs.fit(np.column_stack([1 - scores, scores]), labels)
        merged, p0p1 = theirs.predict_proba(np.column_stack([1 - new, new]), p0_p1_output=True)
    finally:
        np.seterr(**old)  # the package switches numpy's divide warnings off at import
    va = VennAbers.fit(scores, labels)
    p0, p1 = va.interval(new)
    np.testing.assert_allclose(p0, p0p1[:, 0], atol=1e-12)
    np.testing.assert_allclose(p1, p0p1[:, 1], atol=1e-12)
    np.testing.assert_allclose(va.predict(new), merged[:, 1], atol=1e-12)


def test_probabilities_are_monotone_in_the_score_and_merged_lies_in_the_interval():
    rng = np.random.default_rng(5)
    scores = rng.normal(size=200)
    va = VennAbers.fit(scores, rng.random(200) < 1 / (1 + np.exp(-scores)))
    grid = np.sort(np.r_[np.linspace(-4, 4, 400), scores])
    p0, p1 = va.interval(grid)
    p = va.predict(grid)
    assert np.all(np.diff(p0) >= 0) and np.all(np.diff(p1) >= 0) and np.all(np.diff(p) >= 0)
    assert np.all((p0 <= p) & (p <= p1))
    np.testing.assert_allclose(p, merge(p0, p1))


def test_constant_scores_give_the_base_rate_interval():
    labels = np.array([1, 1, 1, 0, 0, 0, 0, 0, 0, 0])
    va = VennAbers.fit(np.zeros(10), labels)
    assert va.constant
    p0, p1 = va.interval(np.array([0.0, 5.0, -5.0]))
    # a constant decision function scores every new point the same: pooled (3 + l) / 11
    assert p0[0] == pytest.approx(3 / 11) and p1[0] == pytest.approx(4 / 11)
    # another score is above (or below) all ten: [3/11, 1] (or [0, 4/11])
    assert (p0[1], p1[1]) == pytest.approx((3 / 11, 1.0)) and (p0[2], p1[2]) == pytest.approx((0.0, 4 / 11))


def test_one_class_calibration_sample_gives_the_documented_interval():
    va = VennAbers.fit(np.arange(9.0), np.zeros(9))
    p0, p1 = va.interval(np.array([100.0, -100.0]))
    np.testing.assert_array_equal(p0, 0.0)  # nothing positive was seen
    assert p1[0] == pytest.approx(1.0)  # above every negative: the new point alone
    assert p1[1] == pytest.approx(0.1)  # below them all: pooled with the 9 negatives


def test_bad_input_names_the_problem():
    va = VennAbers.fit(np.array([0.0, 1.0]), np.array([0, 1]))
    with pytest.raises(DataError, match="missing or infinite"):
        va.predict(np.array([0.3, np.nan]))
    with pytest.raises(DataError, match="at least one calibration point"):
        VennAbers.fit(np.array([]), np.array([]))
    with pytest.raises(DataError, match="one label per score"):
        VennAbers.fit(np.array([0.0, 1.0]), np.array([1]))
    with pytest.raises(DataError, match="labels must be"):
        VennAbers.fit(np.array([0.0, 1.0]), np.array([2, 1]))


def test_lazy_slots_equal_the_complete_table():
    """fit computes a slot when a score first falls in it; the complete table (model files) agrees with it."""
    rng = np.random.default_rng(11)
    scores = np.round(rng.normal(size=150), 1)
    labels = (rng.random(150) < 1 / (1 + np.exp(-2 * scores))).astype(int)
    new = np.r_[rng.normal(size=40), scores[:10]]
    lazy = VennAbers.fit(scores, labels)
    first = lazy.interval(new)  # some slots only
    complete = VennAbers.fit(scores, labels)
    table = VennAbers(complete.scores, complete.p0, complete.p1, complete.n, complete.n_positive)
    for va in (lazy, complete, table):
        np.testing.assert_array_equal(va.interval(new), first)
    np.testing.assert_array_equal(lazy.p0, complete.p0)
    np.testing.assert_array_equal(lazy.p1, complete.p1)
    assert not np.isnan(complete.p0).any() and not np.isnan(complete.p1).any()
    for slot in range(0, 2 * complete.scores.size + 1, 7):  # every 7th slot against two fits from scratch
        j = slot // 2
        s = complete.scores[j] if slot % 2 else (
            complete.scores[0] - 1 if j == 0 else
            complete.scores[-1] + 1 if j == complete.scores.size else complete.scores[j - 1:j + 1].mean())
        assert complete.p0[slot] == pytest.approx(brute_force(scores, labels, s, 0), abs=1e-12)
        assert complete.p1[slot] == pytest.approx(brute_force(scores, labels, s, 1), abs=1e-12)


def test_bagged_is_the_mean_of_the_resamples_predictors_and_stays_monotone():
    rng = np.random.default_rng(8)
    scores = np.round(rng.normal(size=120), 1)  # ties: a resample may miss a tied group
    labels = (rng.random(120) < 1 / (1 + np.exp(-2 * scores))).astype(int)
    va = bagged(scores, labels, bags=7, seed=5)
    new = np.sort(np.r_[rng.normal(size=200), scores, scores.min() - 1, scores.max() + 1])
    draws = np.random.default_rng(5)
    expected = np.mean([VennAbers.fit(scores[d], labels[d]).interval(new)
                        for d in (draws.integers(0, 120, 120) for _ in range(7))], axis=0)
    np.testing.assert_allclose(va.interval(new), expected, atol=1e-12)
    p0, p1 = va.interval(new)
    assert np.all(np.diff(p0) >= 0) and np.all(np.diff(p1) >= 0) and np.all(p0 <= p1)
    assert (va.n, va.n_positive) == (120, int(labels.sum()))
    np.testing.assert_array_equal(bagged(scores, labels, bags=7, seed=5).p1, va.p1)  # reproducible


def test_predictors_compare_by_value():
    scores, labels = np.array([0.1, 0.4, 0.4, 0.9]), np.array([0, 1, 0, 1])
    a, b = VennAbers.fit(scores, labels), VennAbers.fit(scores, labels)
    a.interval(np.array([0.5]))  # one slot computed in a, none in b
    assert a == b and a == VennAbers(b.scores, b.p0, b.p1, b.n, b.n_positive)
    assert a != VennAbers.fit(scores, 1 - labels)


def test_a_score_within_the_tie_tolerance_of_a_calibration_score_is_tied_with_it():
    """The same point's decision value computed in another batch may differ in the last bits: same slot."""
    scores, labels = np.array([-1.0, 0.25, 0.25, 2.0, 3.0]), np.array([0, 1, 0, 1, 1])
    va = VennAbers.fit(scores, labels)
    near = np.array([0.25 * (1 + 1e-12), 0.25 * (1 - 1e-12), 2.0 + 1e-10])
    np.testing.assert_array_equal(va.slots(near), [3, 3, 5])
    assert va.slots(np.array([0.25 + 1e-6]))[0] == 4  # clearly between: its own slot
