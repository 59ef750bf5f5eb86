"""The probability model beside the rule (csvm_stats.probability.score_model) and the base-rate bias it removes."""

from __future__ import annotations

import numpy as np
import pytest

from csvm_stats.exceptions import DataError
from csvm_stats.probability.score_model import (
    CV_FOLDS,
    MAX_COMPONENTS,
    SMALL_SAMPLE_FOLDS,
    SMALL_SAMPLE_ROWS,
    _folds,
    fit_probability_model,
    fit_score,
    fit_sigmoid,
    fold_count,
)
from csvm_stats.probability.venn_abers import VennAbers, merge


def _logistic(n: int, seed: int, shift: float = 0.0, p: int = 4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    a = np.array([1.5, -1.0, 0.5, 0.0])[:p]
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ a - shift)))).astype(float)
    return X, y, a


def test_score_recovers_the_logistic_direction():
    X, y, a = _logistic(2000, seed=1)
    coef, intercept, penalty, loo = fit_score(X, y)
    cosine = coef @ a / np.linalg.norm(coef) / np.linalg.norm(a)
    assert cosine > 0.99 and penalty > 0 and loo.shape == (2000,)


def test_folds_partition_the_rows_and_keep_both_classes_in_each():
    X, y, _ = _logistic(201, seed=2)
    folds = _folds(y)
    assert np.array_equal(np.sort(np.concatenate(folds)), np.arange(201))
    positives = [int(y[f].sum()) for f in folds]
    assert all(p > 0 and p < f.size for p, f in zip(positives, folds)) and max(positives) - min(positives) <= 1


@pytest.mark.parametrize("n", [60, 199, 200, 1000])
def test_small_samples_get_more_folds_never_more_than_the_smaller_class(n):
    """SMALL_SAMPLE_FOLDS below SMALL_SAMPLE_ROWS rows, CV_FOLDS from there on; capped by the smaller class."""
    y = (np.arange(n) % 3 == 0).astype(float)
    expected = SMALL_SAMPLE_FOLDS if n < SMALL_SAMPLE_ROWS else CV_FOLDS
    assert fold_count(y) == expected == len(_folds(y))
    few = np.r_[np.ones(3), np.zeros(n - 3)]
    assert fold_count(few) == min(expected, 3)
    assert fold_count(np.r_[np.ones(1), np.zeros(n - 1)]) == 2  # the floor (cross-fitting then refuses: fit_calibration)


def test_out_of_fold_scores_are_less_optimistic_than_the_fitted_ones():
    """Out-of-fold log loss of the chosen penalty is above the in-sample log loss of the final score."""
    X, y, _ = _logistic(300, seed=3)
    coef, intercept, _, oof = fit_score(X, y)
    eta = X @ coef + intercept
    loss = lambda z: np.mean(np.logaddexp(0, z) - y * z)  # noqa: E731
    assert loss(oof) > loss(eta)


def test_sigmoid_recalibration_matches_the_base_rate_exactly():
    """The cure of the base-rate bias: the intercept's score equation makes mean P = mean (smoothed) target."""
    rng = np.random.default_rng(3)
    scores = rng.standard_normal(500)
    y = (rng.random(500) < 1 / (1 + np.exp(-(2 * scores - 3)))).astype(float)  # about 10% positives
    a, b = fit_sigmoid(scores, y)
    p = 1 / (1 + np.exp(-(a * scores + b)))
    n_pos, n_neg = y.sum(), (1 - y).sum()
    target = np.where(y > 0, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    assert p.mean() == pytest.approx(target.mean(), abs=1e-8)
    assert abs(p.mean() - y.mean()) < 1 / 500


def test_venn_abers_merge_over_predicts_a_low_base_rate():
    """The cause of the old bias: with one score the merge p1 / (1 - p0 + p1) is (k + 1) / (m + 2), above k / m
    whenever k / m < 1/2 (and the isotonic steps of a real score repeat this in every low-probability block)."""
    m, k = 100, 10
    labels = np.r_[np.ones(k), np.zeros(m - k)]
    va = VennAbers.fit(np.zeros(m), labels)
    p0, p1 = va.interval(np.zeros(1))
    assert (p0[0], p1[0]) == pytest.approx((k / (m + 1), (k + 1) / (m + 1)))
    assert merge(p0, p1)[0] == pytest.approx((k + 1) / (m + 2)) and merge(p0, p1)[0] > k / m


def test_probability_model_is_unbiased_at_ten_percent_where_the_merge_is_not():
    """Twenty samples at 10% positives: the model's mean P stays at the base rate, the Venn-Abers merge above it."""
    model_bias, merge_bias = [], []
    for seed in range(20):
        X, y, _ = _logistic(800, seed=100 + seed, shift=3.2)
        fit, hold = slice(0, 600), slice(600, 800)
        model, h_scores = fit_probability_model(X[fit], y[fit], X[hold], y[hold])
        X_new, y_new, _ = _logistic(4000, seed=500 + seed, shift=3.2)
        truth = 1 / (1 + np.exp(-(X_new @ np.array([1.5, -1.0, 0.5, 0.0]) - 3.2)))
        model_bias.append(model.predict(X_new).mean() - truth.mean())
        merge_bias.append(VennAbers.fit(h_scores, y[hold]).predict(model.interval_score(X_new)).mean() - truth.mean())
    assert abs(np.mean(model_bias)) <= 0.01
    assert np.mean(merge_bias) > np.mean(model_bias)


def test_constant_features_give_the_base_rate_and_the_pooled_interval():
    rng = np.random.default_rng(4)
    y = (rng.random(120) < 0.3).astype(float)
    X = np.ones((120, 3))
    model, h_scores = fit_probability_model(X[:80], y[:80], X[80:], y[80:])
    assert np.all(model.coef == 0) and model.slope == 0.0
    va = VennAbers.fit(h_scores, y[80:])
    k, m = int(y[80:].sum()), 40
    p0, p1 = va.interval(model.interval_score(X[:5]))
    np.testing.assert_allclose(p0, k / (m + 1))
    np.testing.assert_allclose(p1, (k + 1) / (m + 1))
    np.testing.assert_allclose(model.predict(X[:5]), model.predict(X[:1])[0])  # one value: the smoothed base rate


def test_one_class_is_a_clear_error():
    X = np.random.default_rng(5).standard_normal((50, 2))
    with pytest.raises(DataError, match="both classes"):
        fit_probability_model(X[:30], np.zeros(30), X[30:], np.r_[np.ones(5), np.zeros(15)])


def test_many_columns_use_the_leading_principal_components():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((150, MAX_COMPONENTS + 20))
    y = (X[:, 0] + 0.3 * rng.standard_normal(150) > 0).astype(float)
    coef, intercept, _, _ = fit_score(X, y)
    assert coef.shape == (MAX_COMPONENTS + 20,) and np.isfinite(coef).all()
    ordered, _, _, _ = fit_score(X, y, ordered=True)  # columns taken as given, only the first MAX_COMPONENTS used
    assert np.all(ordered[MAX_COMPONENTS:] == 0)


def test_separable_data_stay_finite():
    X = np.r_[np.full((20, 1), -1.0), np.full((20, 1), 1.0)] + np.linspace(0, 0.1, 40)[:, None]
    y = np.r_[np.zeros(20), np.ones(20)]
    model, h = fit_probability_model(X, y, X, y)
    p = model.predict(X)
    assert np.isfinite(p).all() and p[:20].max() < 0.5 < p[20:].min()


def test_the_interval_score_never_sees_the_held_out_rows_and_the_point_score_uses_them():
    """[p0, p1] stays valid: its score is fitted on I u J alone (H's labels cannot move it); P's score uses H too."""
    X, y, _ = _logistic(400, seed=7)
    fit, hold = slice(0, 300), slice(300, 400)
    model, h_scores = fit_probability_model(X[fit], y[fit], X[hold], y[hold])
    flipped, h_flipped = fit_probability_model(X[fit], y[fit], X[hold], 1.0 - y[hold])
    assert model.n == 400 and model.interval_coef is not None
    assert not np.allclose(model.coef, flipped.coef)  # the point score reads H's labels
    np.testing.assert_array_equal(h_scores, h_flipped)  # the interval score does not
    np.testing.assert_allclose(h_scores, model.interval_score(X[hold]))
    np.testing.assert_allclose(model.interval_score(X[hold]), flipped.interval_score(X[hold]))
    moved, _ = fit_probability_model(X[fit], y[fit], X[hold] + 5.0, y[hold])  # H's features do not reach it either
    np.testing.assert_array_equal(moved.interval_coef, model.interval_coef)
    assert moved.interval_intercept == model.interval_intercept


def test_the_interval_score_falls_back_to_the_point_score_for_older_models():
    X, y, _ = _logistic(200, seed=8)
    model, _ = fit_probability_model(X[:150], y[:150], X[150:], y[150:])
    old = type(model)(model.coef, model.intercept, model.slope, model.offset, model.penalty, model.n)
    np.testing.assert_array_equal(old.interval_score(X), old.score(X))


@pytest.mark.parametrize("n", [40, 120])
def test_wide_design_spans_the_leading_principal_directions(n):
    """n < p: the design's directions come from the SVD of the rows (O(n^2 p), not an eigh of p x p) and span
    the same subspace as the leading eigenvectors of the centred cross-product."""
    from csvm_stats.probability.score_model import _Design

    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 300)) * np.linspace(3.0, 0.5, 300)
    basis = _Design.of(X, ordered=False).basis
    centred = X - X.mean(axis=0)
    _, eigvec = np.linalg.eigh(centred.T @ centred)
    k = min(MAX_COMPONENTS, n - 1)  # directions with positive variance (the centred rows have rank n - 1)
    reference = eigvec[:, ::-1][:, :k]
    np.testing.assert_allclose(basis[:, :k] @ basis[:, :k].T, reference @ reference.T, atol=1e-8)
    assert basis.shape == (300, min(MAX_COMPONENTS, n))
