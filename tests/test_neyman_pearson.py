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
        # P is Platt's sigmoid of the decision value, increasing in it, so predict (decision >= 0) is the
        # threshold results_.probability_threshold on P, which is not 1/2: argmax(predict_proba) differs.
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


@pytest.mark.parametrize("fractions", [None, (0.6, 0.385, 0.015)])  # H of 3000 x 0.015 = 45 < 50: cross-fitted
def test_point_probability_is_platt_sigmoid_without_base_rate_bias(fractions):
    """P = sigma(a f + b) fitted on the calibration pairs (H, or cross-fitted when H is small): increasing in f,
    the rule is P >= threshold, and the mean of P on the pairs is their base rate (no merge bias at 10%)."""
    rng = np.random.default_rng(3)
    n = 3000
    X = rng.normal(size=(n, 3))
    y = (rng.random(n) < 1 / (1 + np.exp(-(1.5 * X[:, 0] - X[:, 1] - 3.0)))).astype(int)  # about 10% positive
    kwargs = {} if fractions is None else {"fractions": fractions}
    clf = NeymanPearsonClassifier("logistic", tnr_min=0.9, random_state=0, **kwargs).fit(X, y)
    res = clf.results_
    cal = res.calibration
    assert cal.method == ("held-out" if fractions is None else "cross-fitted")
    a, b = cal.sigmoid
    f = res.decision_function().to_numpy()
    p = res.predict_proba().to_numpy()
    np.testing.assert_allclose(p, 1 / (1 + np.exp(-(a * f + b))), rtol=1e-12)
    assert a > 0 and cal.is_threshold_rule
    assert res.probability_threshold == pytest.approx(1 / (1 + np.exp(-b)))
    called = res.predict().to_numpy() == 1
    assert np.array_equal(called, p >= res.probability_threshold)
    H = res.split.holdout
    pairs = f[H] if fractions is None else None
    if pairs is not None:  # the intercept equation: mean P on H = the smoothed base rate of H
        yh = y[H]
        k, m = yh.sum(), yh.size
        smoothed = (k * (k + 1) / (k + 2) + (m - k) / (m - k + 2)) / m
        assert p[H].mean() == pytest.approx(smoothed, abs=1e-6)
    assert abs(p.mean() - y.mean()) < 0.01
    text = " ".join(str(res.summary(timing=False)).split())
    assert f"exactly when P(1) >= {res.probability_threshold:.3g}" in text and "not a confidence interval" in text


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
    assert "Neyman-Pearson route Results" in out and "support vector machine (SVC, predictors standardised)" in out
    assert main(["fit", str(path), "-f", "y ~ .", "--tpr-min", "0.9", "--method", "np", "--kernel", "rbf"]) == 5
    assert "--kernel belong to the CSVM" in capsys.readouterr().err
    # a CSVM-only option typed at its default value is refused too (argparse leaves absent options None)
    for flags, name in ((["--bound", "hoeffding"], "--bound"), (["--time-limit", "300"], "--time-limit"),
                        (["-C", "1"], "-C"), (["--kernel", "linear"], "--kernel"), (["--guarantee"], "--guarantee")):
        assert main(["fit", str(path), "-f", "y ~ .", "--tpr-min", "0.9", "--method", "np", *flags]) == 5
        assert f"{name} belong to the CSVM" in capsys.readouterr().err
    # --estimator without --method np would be ignored by the CSVM: refused
    assert main(["fit", str(path), "-f", "y ~ .", "--tpr-min", "0.9", "--estimator", "logistic"]) == 5
    assert "--estimator chooses the learner of the Neyman-Pearson route" in capsys.readouterr().err


def test_command_line_csvm_fills_its_defaults(monkeypatch):
    """Absent CSVM options reach the CSVM at their documented defaults; given ones as typed."""
    from csvm_stats.interfaces import cli
    from csvm_stats.interfaces.cli_options import CSVM_DEFAULTS

    seen = {}

    class Stop(Exception):
        pass

    def record(formula, data, **kwargs):
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr("csvm_stats.models.model.CSVM.from_formula", staticmethod(record))
    monkeypatch.setattr(cli, "read_table", lambda path: pd.DataFrame({"y": [0, 1], "x": [0.0, 1.0]}))
    parser = cli.build_parser()
    for argv, expected in ((["--tpr-min", "0.9"], CSVM_DEFAULTS), (["--tpr-min", "0.9", "--bound", "binomial", "-C", "2"],
                                                                   {**CSVM_DEFAULTS, "bound": "binomial", "C": 2.0})):
        args = parser.parse_args(["fit", "data.csv", "-f", "y ~ x", *argv])
        with pytest.raises(Stop):
            cli.fit_command(args)
        for name in ("bound", "kernel", "C", "gamma", "degree", "penalty"):
            assert seen[name] == expected[name]


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


def test_results_share_the_common_api(cancer):
    """NP results are FitResults: confusion_matrix, requirements, predictive_values, selection attributes."""
    from csvm_stats.models.results_base import FitResults

    res = NeymanPearson.from_formula("y ~ .", cancer, "logistic", tpr_min=0.9, positive="malignant").fit(random_state=0)
    assert isinstance(res, FitResults)
    held = res.confusion_matrix("held-out")
    assert held.index.tolist() == ["malignant", "benign"] == held.columns.tolist()
    assert int(held.to_numpy().sum()) == res.split.holdout.size
    assert held.iloc[0, 0] == res.rates.loc["tpr", "heldout_correct"]
    assert held.iloc[1, 1] == res.rates.loc["tnr", "heldout_correct"]
    assert held.to_numpy().tolist() == res.heldout_confusion.to_numpy().tolist()
    train = res.confusion_matrix("train")  # I u J: the rows the estimator was fitted on
    assert int(train.to_numpy().sum()) == (res.sample_roles == "training").sum()
    with pytest.raises(DataError, match="no anchor sample"):
        res.confusion_matrix("anchor")
    req = res.requirements
    assert req.index.tolist() == ["malignant"] and req.loc["malignant", "target"] == 0.9
    assert req.loc["malignant", "anchor_n"] == 0 and res.min_counts == {}
    pv = res.predictive_values
    assert pv.index.tolist() == ["ppv", "npv"] and pv["lower"].isna().all()  # H set the threshold
    assert pv.loc["ppv", "heldout_correct"] == held.iloc[0, 0]
    assert res.selected_features is None and res.route is None and res.exact is None


def test_multiclass_results_share_the_common_api():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    res = NeymanPearson(y, X, "logistic", recall_min={2: 0.8}, fractions=(0.4, 0.2, 0.4)).fit(random_state=0)
    held = res.confusion_matrix("holdout")
    assert held.index.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(np.diag(held.to_numpy()), res.rates["heldout_correct"].to_numpy())
    assert res.requirements.index.tolist() == [2]
    assert res.predictive_values.shape[0] == 3


def test_multiclass_model_files_for_linear_learners(tmp_path):
    """A several-class route with a linear score is saved in the multiclass form (no pickle) and reads back."""
    from sklearn.datasets import load_iris

    from csvm_stats.interfaces.persistence import load_model

    X, y = load_iris(return_X_y=True, as_frame=True)
    data = X.set_axis([f"x{k}" for k in range(4)], axis=1).assign(species=np.array(["a", "b", "c"])[y])
    res = NeymanPearson.from_formula("species ~ .", data, "logistic", recall_min={"c": 0.8},
                                     fractions=(0.4, 0.2, 0.4)).fit(random_state=0)
    loaded = load_model(res.save(tmp_path / "route.csvm"))
    new = data.drop(columns="species")
    assert loaded.predict(new).tolist() == res.predict(new).tolist()
    np.testing.assert_allclose(loaded.decision_function(new).to_numpy(), res.decision_function(new).to_numpy(),
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(loaded.predict_proba(new).to_numpy(), res.predict_proba(new).to_numpy(), atol=1e-12)
    assert loaded.confusion.to_numpy().sum() == res.split.holdout.size
    hgb = NeymanPearson.from_formula("species ~ .", data, "hgb", recall_min={"c": 0.8},
                                     fractions=(0.4, 0.2, 0.4)).fit(random_state=0)
    with pytest.raises(DataError, match="cannot be saved safely.*pickle"):
        hgb.save(tmp_path / "hgb.csvm")


def test_text_columns_are_refused_with_the_routes_that_take_them():
    """NeymanPearsonClassifier scores numeric rows, so a Pipeline that encodes text columns itself never sees them
    (review r7 F12): the refusal names the columns and the two ways that work."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=60), "grp": rng.choice(["a", "b"], 60)})
    y = (X["x"] > 0).astype(int)
    with pytest.raises(DataError, match=r"non-numeric column\(s\) \['grp'\].*pd.get_dummies.*NeymanPearson.from_formula"):
        NeymanPearsonClassifier(LogisticRegression(), tpr_min=0.8, random_state=0).fit(X, y)


def test_summary_reads_like_the_csvm_summary_with_ppv_npv_and_plain_words(cancer):
    """Review r10 F-missing-rates / F-jargon: the CSVM's rate labels, PPV/NPV without interval and why, the
    technical lines (pipeline, score method, alpha, CPU time label) only in the detail view."""
    import re

    from csvm_stats.reporting.summary import RATE_WORDS

    res = NeymanPearson.from_formula("y ~ .", cancer, "logistic", tpr_min=0.9).fit(random_state=0)
    text = res.summary().as_text()
    for label in RATE_WORDS.values():  # same names, same order of rows as the CSVM summary
        assert re.search(rf"^{re.escape(label)} ", text, flags=re.MULTILINE), label
    assert not re.search(r"^(TPR|TNR|ACC|BACC) ", text, flags=re.MULTILINE)
    assert "Sensitivity (TPR): With 95% confidence" in text
    pv = res.predictive_values
    for name in ("ppv", "npv"):
        r = pv.loc[name]
        row = re.search(rf"^{re.escape(RATE_WORDS[name])} +(.*)$", text, flags=re.MULTILINE).group(1)
        assert f"{r['heldout_correct']}/{r['heldout_n']} = {r['heldout_rate']:.3f}" in row
        assert row.rstrip().endswith("none (H set the rule)")
    flat = " ".join(text.split())
    assert "PPV and NPV are point values on the held-out sample without interval: its rows of the guaranteed " \
           "class set the threshold" in flat
    assert f"{pv.loc['ppv', 'prevalence']:.1%}" in flat
    # plain words by default, the technical lines in detail
    assert "Classifier logistic regression (predictors standardised)" in flat
    assert "Requirement sensitivity >= 0.9" in flat and "Confidence level 95%" in flat
    assert f"Time taken {res.fit_time:.2f} s of computing (CPU) time" in flat
    for term in ("decision_function", "StandardScaler -> LogisticRegression", "alpha", "Fit time (CPU s)"):
        assert term not in text, term
    detail = " ".join(res.summary(detail=True).as_text().split())
    for term in ("Estimator StandardScaler -> LogisticRegression", "Score decision_function", "alpha 0.05",
                 f"Fit time (CPU s) {res.fit_time:.2f}"):
        assert term in detail, term
