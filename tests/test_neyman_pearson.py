"""The Neyman-Pearson route: scikit-learn contract, the shared order statistic, the CSVM's split, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.estimator_checks import parametrize_with_checks

from csvm_stats import CSVM
from csvm_stats.exceptions import DataError
from csvm_stats.inference.bounds import binomial_min_n, order_statistic_rank
from csvm_stats.inference.certification import umbrella_intercept
from csvm_stats.interfaces.neyman_pearson import NeymanPearsonClassifier
from csvm_stats.models.neyman_pearson import NeymanPearson


@parametrize_with_checks(
    [NeymanPearsonClassifier(LogisticRegression(), tpr_min=0.7, alpha=0.5, fractions=(0.3, 0.2, 0.5), random_state=0)],
    expected_failed_checks=lambda est: {
        # Venn-Abers probabilities are monotone in the decision value, so predict (decision >= 0) is the
        # threshold results_.probability_threshold on them, which is not 1/2: argmax(predict_proba) differs.
        "check_classifiers_train": "predict is P >= results_.probability_threshold, not argmax(predict_proba)",
        # 10 rows: 5 held-out rows cannot certify a TPR by the order statistic; the error names the smallest n.
        "check_fit2d_1feature": "10 rows are too few for the held-out order statistic (a DataError names the n needed)",
    },
)
def test_sklearn_contract(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def cancer() -> pd.DataFrame:
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    data = X.iloc[:, :6].copy()
    data.columns = [f"x{k}" for k in range(6)]
    data["y"] = np.where(y == 1, "benign", "malignant")
    data.index = [f"row{k}" for k in range(len(data))]
    return data


def test_same_split_as_the_csvm_and_roles(cancer):
    route = NeymanPearson.from_formula("y ~ .", cancer, "logistic", tpr_min=0.9).fit(random_state=3)
    csvm = CSVM.from_formula("y ~ .", cancer, tpr_min=0.9)
    split = csvm._split(3)
    assert np.array_equal(route.split.holdout, split.holdout)
    roles = route.sample_roles
    assert roles.index.equals(cancer.index)
    assert set(roles) == {"training", "held-out"}
    assert np.array_equal(np.flatnonzero(roles.to_numpy() == "held-out"), split.holdout)


def test_threshold_is_the_shared_umbrella_rule(cancer):
    res = NeymanPearson.from_formula("y ~ .", cancer, "logistic", tnr_min=0.95).fit(random_state=1)
    H = res.split.holdout
    raw = res._fitted_raw[H]
    y = res.model.y[H]
    expected = umbrella_intercept(raw, y, "tnr", 0.95, 0.05, tolerance=res.umbrella.tolerance)
    assert res.umbrella == expected
    n_neg = int(np.sum(y < 0))
    assert res.umbrella.rank == order_statistic_rank(n_neg, 0.95, 0.05)
    # at least n - r + 1 held-out negatives are correct by construction
    n, k = res.heldout_counts("tnr")
    assert k >= n - res.umbrella.rank + 1
    assert res.rates.loc["tnr", "method"] == "order statistic"
    assert res.rates.loc["tpr", "lower"] <= res.rates.loc["tpr", "heldout_rate"] <= res.rates.loc["tpr", "upper"]
    text = str(res.summary(timing=False))
    assert "order statistic" in text and "Neyman-Pearson" in text


def test_predict_probabilities_and_formula_newdata(cancer):
    res = NeymanPearson.from_formula("y ~ .", cancer, "svc", tpr_min=0.9).fit(random_state=0)
    new = cancer.drop(columns="y").iloc[:20]
    pred = res.predict(new)
    assert pred.index.equals(new.index) and set(pred) <= {"benign", "malignant"}
    p = res.predict_proba(new)
    f = res.decision_function(new)
    assert ((p >= 0) & (p <= 1)).all()
    order = np.argsort(f.to_numpy())
    assert np.all(np.diff(p.to_numpy()[order]) >= -1e-12)  # monotone in the decision value
    assert res.calibration.method == "held-out"


def test_classifier_wrapper_and_multiclass():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 600)
    X = rng.normal(size=(600, 2)) + np.c_[y, -y]
    clf = NeymanPearsonClassifier("logistic", recall_min={2: 0.9}, random_state=0).fit(X, y)
    assert clf.decision_function(X).shape == (600, 3)
    proba = clf.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1)
    rates = clf.results_.rates
    assert rates.loc["2", "method"] == "order statistic"
    H = clf.results_.split.holdout
    pred = clf.predict(X[H])
    correct = int(np.sum(pred[y[H] == 2] == 2))
    assert correct >= rates.loc["2", "heldout_n"] - clf.results_.shift.ranks[2] + 1


class NoScore(ClassifierMixin, BaseEstimator):
    """A classifier with predict only (no decision_function, no predict_proba)."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


def test_bad_input(cancer):
    X = cancer.drop(columns="y").to_numpy()
    y = cancer["y"].to_numpy()
    with pytest.raises(DataError, match="neither decision_function nor predict_proba.*CalibratedClassifierCV"):
        NeymanPearsonClassifier(NoScore(), tpr_min=0.9).fit(X, y)
    # too small a held-out sample: the error names the smallest n that can certify
    small = cancer.iloc[np.r_[0:40, 300:340]]
    needed = binomial_min_n(0.99, 0.05)
    with pytest.raises(DataError, match=f"needs at least {needed} held-out"):
        NeymanPearson.from_formula("y ~ .", small, "logistic", tpr_min=0.99).fit(random_state=0)
    # a class missing from the held-out sample
    with pytest.raises(DataError, match="held-out sample has no point of the class"):
        NeymanPearson(y[:40].tolist() + ["x"], np.r_[X[:40], X[:1]], "logistic", recall_min={"x": 0.5}).fit(random_state=0)
    # a constant score
    constant = pd.DataFrame({"c": np.ones(len(y)), "d": np.zeros(len(y))})
    with pytest.raises(DataError, match="same for every held-out point"):
        NeymanPearson(y, constant, "logistic", tpr_min=0.9).fit(random_state=0)
    with pytest.raises(DataError, match="exactly one of"):
        NeymanPearson(y, X, "logistic", tpr_min=0.9, tnr_min=0.9)
    with pytest.raises(DataError, match="did you mean 'svc'"):
        NeymanPearson(y, X, "svcc", tpr_min=0.9)


def test_command_line_np_route(cancer, tmp_path, capsys):
    from csvm_stats.interfaces.cli import main

    path = tmp_path / "data.csv"
    cancer.to_csv(path, index=False)
    assert main(["fit", str(path), "-f", "y ~ .", "--tpr-min", "0.9", "--method", "np", "--estimator", "svc"]) == 0
    out = capsys.readouterr().out
    assert "Neyman-Pearson route Results" in out and "StandardScaler -> SVC" in out
    assert main(["fit", str(path), "-f", "y ~ .", "--tpr-min", "0.9", "--method", "np", "--kernel", "rbf"]) == 5
    assert "--kernel belong to the CSVM" in capsys.readouterr().err


def test_model_files_for_linear_learners_only(cancer, tmp_path):
    from csvm_stats.interfaces.persistence import load_model

    res = NeymanPearson.from_formula("y ~ .", cancer, "logistic", tpr_min=0.9).fit(random_state=0)
    path = res.save(tmp_path / "route.csvm")
    loaded = load_model(path)
    new = cancer.drop(columns="y").iloc[:50]
    assert loaded.predict(new).astype(str).tolist() == res.predict(new).astype(str).tolist()
    np.testing.assert_allclose(loaded.decision_function(new).to_numpy(), res.decision_function(new).to_numpy(),
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(loaded.predict_proba(new).to_numpy(), res.predict_proba(new).to_numpy())
    assert "order statistic" in loaded.report["summary_text"]
    for learner in ("svc", "hgb"):
        other = NeymanPearson.from_formula("y ~ .", cancer, learner, tpr_min=0.9).fit(random_state=0)
        with pytest.raises(DataError, match="cannot be saved safely.*pickle"):
            other.save(tmp_path / f"{learner}.csvm")
