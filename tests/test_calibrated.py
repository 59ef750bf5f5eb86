"""VennAbersClassifier: Venn-Abers around any classifier, CalibratedClassifierCV conventions."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_predict
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from csvm_stats.probability.calibrated import VennAbersClassifier
from csvm_stats.exceptions import DataError
from csvm_stats.probability.venn_abers import VennAbers


@parametrize_with_checks([VennAbersClassifier()])
def test_sklearn_contract(estimator, check):
    check(estimator)


def _data(n: int = 300, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-(2 * X[:, 0] - X[:, 1]))), "yes", "no")
    return X, y


def test_cross_fitted_scores_calibrate_the_refitted_estimator():
    X, y = _data()
    model = VennAbersClassifier(SVC(kernel="linear"), cv=5).fit(X, y)
    oof = cross_val_predict(SVC(kernel="linear"), X, y, cv=5, method="decision_function")
    expected = VennAbers.fit(oof, y == "yes")
    np.testing.assert_array_equal(model.calibrator_.p1, expected.p1)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba[:, 1], expected.predict(model.estimator_.decision_function(X)))
    interval = model.predict_interval(X)
    assert np.all((interval[:, 0] <= proba[:, 1]) & (proba[:, 1] <= interval[:, 1]))
    assert list(model.classes_) == ["no", "yes"]


def test_frozen_estimator_is_calibrated_on_held_out_data():
    X, y = _data(400, seed=1)
    fitted = LogisticRegression().fit(X[:200], y[:200])
    model = VennAbersClassifier(FrozenEstimator(fitted)).fit(X[200:], y[200:])
    expected = VennAbers.fit(fitted.decision_function(X[200:]), y[200:] == "yes")
    np.testing.assert_array_equal(model.calibrator_.p0, expected.p0)


def test_multiclass_is_refused():
    X, _ = _data(90)
    with pytest.raises(DataError, match="Only binary classification"):
        VennAbersClassifier().fit(X, np.arange(90) % 3)
