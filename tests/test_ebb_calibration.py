"""Baselines for EBB: Platt, isotonic, Sollich's plug-in, and the Brier scores."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

from csvm_stats.probability.calibration import (
    brier_scores,
    calibrated_svc,
    sollich_probability,
    sollich_svc_probabilities,
    tune_svc,
)
from csvm_stats.exceptions import DataError


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    rows = np.random.default_rng(1).choice(y.size, 200, replace=False)
    return StandardScaler().fit_transform(X[rows][:, :10]), np.where(y[rows] == 1, 1, -1)


def test_brier_scores_overall_and_per_class():
    y = np.array([1, 1, -1, -1])
    p = np.array([1.0, 0.5, 0.5, 0.0])
    scores = brier_scores(y, p)
    assert scores.overall == pytest.approx(0.125)
    assert scores.positive == pytest.approx(0.125)
    assert scores.negative == pytest.approx(0.125)
    assert brier_scores(y, np.array([1.0, 1.0, 1.0, 1.0])).negative == 1.0


@pytest.mark.parametrize(
    "y, p, message",
    [([1, 0], [0.5, 0.5], "-1/\\+1"), ([1, -1], [0.5, 1.5], "\\[0, 1\\]"), ([1, -1], [0.5], "shape")],
)
def test_brier_scores_refuse_bad_input(y, p, message):
    with pytest.raises(DataError, match=message):
        brier_scores(np.array(y), np.array(p))


def test_sollich_probability_is_the_normalised_hinge_likelihood():
    f = np.array([-3.0, -1.0, -0.2, 0.0, 0.2, 1.0, 3.0])
    C = 0.7
    p = sollich_probability(f, C)
    hinge = lambda z: np.maximum(0.0, 1.0 - z)  # noqa: E731
    expected = np.exp(-C * hinge(f)) / (np.exp(-C * hinge(f)) + np.exp(-C * hinge(-f)))
    np.testing.assert_allclose(p, expected)
    np.testing.assert_allclose(p + sollich_probability(-f, C), 1.0)
    assert p[3] == 0.5 and np.all(np.diff(p) > 0)


def test_baselines_give_probabilities(cancer):
    X, y = cancer
    C = tune_svc(X[:150], y[:150], np.array([0.25, 1.0, 4.0]), folds=3)
    assert C in (0.25, 1.0, 4.0)
    for method in ("platt", "isotonic"):
        model = calibrated_svc(method, C).fit(X[:150], y[:150])
        assert model.ensemble is False
        p = model.predict_proba(X[150:])[:, list(model.classes_).index(1)]
        assert np.all((p >= 0) & (p <= 1))
        assert brier_scores(y[150:], p).overall < 0.15
    p = sollich_svc_probabilities(X[:150], y[:150], X[150:], C)
    assert brier_scores(y[150:], p).overall < 0.25
    with pytest.raises(DataError, match="method"):
        calibrated_svc("beta", 1.0)
