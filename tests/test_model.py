"""The statsmodels-style CSVM: model, from_formula, fit, results (csvm_stats.models.model / results)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from csvm_stats.inference.bounds import CappedTargetWarning, adjust_target
from csvm_stats.exceptions import DataError
from csvm_stats.models.model import CSVM
from csvm_stats.models.results import CSVMResults

FAST = {"time_limit": 30, "threads": 1}


def make_frame(n: int = 160, seed: int = 0) -> pd.DataFrame:
    """Two numeric predictors, a three-level factor, an id column and a string response."""
    rng = np.random.default_rng(seed)
    sick = rng.random(n) < 0.5
    group = rng.choice(["a", "b", "c"], size=n)
    x1 = rng.normal(size=n) + 1.5 * sick
    x2 = rng.normal(size=n) - 0.5 * sick + 0.8 * (group == "c")
    return pd.DataFrame(
        {
            "status": np.where(sick, "sick", "healthy"),
            "x1": x1,
            "x2": x2,
            "group": pd.Categorical(group),
            "id": np.arange(n),
        },
        index=pd.Index([f"p{k}" for k in range(n)], name="patient"),
    )


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return make_frame()


@pytest.fixture(scope="module")
def fitted(frame) -> CSVMResults:
    model = CSVM.from_formula("status ~ . - id", frame, tpr_min=0.8, bound="binomial")
    return model.fit(random_state=1, **FAST)


def test_formula_dot_minus_id_codes_factors(fitted):
    assert fitted.model.exog_names == ["x1", "x2", "group[T.b]", "group[T.c]"]
    assert list(fitted.params.index) == ["x1", "x2", "group[T.b]", "group[T.c]", "Intercept"]
    assert fitted.model.coding.positive == "sick"  # second level of ("healthy", "sick")


def test_fit_returns_new_results_and_leaves_model_unchanged(frame):
    model = CSVM.from_formula("status ~ x1 + x2", frame, tnr_min=0.8, bound="binomial")
    before = dict(vars(model))
    r1 = model.fit(random_state=1, **FAST)
    r2 = model.fit(random_state=2, **FAST)
    assert r1 is not r2 and r1.model is model
    assert not np.array_equal(r1.split.anchor, r2.split.anchor)
    assert vars(model).keys() == before.keys()
    assert all(vars(model)[k] is before[k] for k in before)


def test_a_fit_without_seed_draws_one_keeps_it_and_can_be_repeated(frame, tmp_path):
    from csvm_stats.interfaces import r_api
    from csvm_stats.interfaces.persistence import load_model, save_model

    model = CSVM.from_formula("status ~ x1 + x2", frame, tpr_min=0.8, bound="binomial")
    first = model.fit(**FAST)
    seed = first.random_state
    assert isinstance(seed, int) and 0 <= seed < 10**9
    assert re.search(rf"^Random state \(seed\) +{seed}$", first.summary().as_text(), flags=re.MULTILINE)
    again = model.fit(random_state=seed, **FAST)
    assert np.array_equal(first.split.anchor, again.split.anchor)
    assert np.array_equal(first.split.holdout, again.split.holdout)
    np.testing.assert_allclose(again.params, first.params, rtol=1e-6, atol=1e-6)
    assert load_model(save_model(first, tmp_path / "m.csvm")).random_state == seed
    assert r_api.export(first)["random_state"] == seed
    assert model.fit(random_state=7, **FAST).random_state == 7


def test_rate_table_and_anchor_constraint(fitted):
    row = fitted.rates.loc["tpr"]
    expected = adjust_target(0.8, int(row["anchor_n"]), 0.05, "binomial")
    assert row["required"] == expected.count
    assert row["met"] and row["anchor_correct"] >= expected.count
    holdout = fitted.confusion.loc["holdout"]
    assert row["heldout_n"] == holdout["tp"] + holdout["fn"] and row["heldout_correct"] == holdout["tp"]
    assert row["lower"] < row["heldout_rate"] and row["method"] == "clopper-pearson"
    assert fitted.statements["tpr"].startswith("With 95% confidence the true positive rate of this classifier is at least")


def test_confusion_adds_up(fitted):
    c = fitted.confusion
    assert (c[["tp", "fn", "tn", "fp"]].sum(axis=1) == c["n"]).all()
    assert c["n"].sum() == len(fitted.model.y)


def test_predict_new_frame_keeps_index_and_labels(fitted, frame):
    new = frame.drop(columns="status").iloc[[5, 2, 9]]
    pred = fitted.predict(new)
    assert list(pred.index) == ["p5", "p2", "p9"]
    assert set(pred) <= {"sick", "healthy"}
    decision = fitted.decision_function(new)
    assert list(pred) == ["sick" if d >= 0 else "healthy" for d in decision]
    np.testing.assert_allclose(decision.to_numpy(), fitted.decision_function().loc[["p5", "p2", "p9"]].to_numpy())
    linear = new[["x1", "x2"]].to_numpy() @ fitted.params[["x1", "x2"]].to_numpy()
    dummies = fitted.params["group[T.b]"] * (new["group"] == "b") + fitted.params["group[T.c]"] * (new["group"] == "c")
    np.testing.assert_allclose(decision.to_numpy(), linear + dummies.to_numpy() + fitted.params["Intercept"])


def test_unseen_level_and_missing_column_are_errors(fitted, frame):
    new = frame.drop(columns="status").iloc[:3].copy()
    new["group"] = ["a", "b", "zzz"]
    with pytest.raises(DataError, match="not seen when the model was fitted"):
        fitted.predict(new)
    with pytest.raises(DataError, match="'x2'"):
        fitted.predict(frame.drop(columns=["status", "x2"]))


def test_factor_given_as_numbers_or_other_types(frame):
    """A factor given in another dtype (numbers read from a CSV) is read as its fitted levels when its values are
    those levels, else refused as unseen levels; the fitted model is never changed by the attempt (formulaic
    updates a spec's encoder state in place when a column's kind differs)."""
    data = frame.assign(grade=pd.Categorical(np.arange(len(frame)) % 3 + 1.0))
    fitted = CSVM.from_formula("status ~ x1 + grade + group", data, tpr_min=0.8, bound="binomial").fit(
        random_state=1, **FAST)
    design = fitted.model.formula
    kinds = {name: kind for name, (kind, _) in design.spec.encoder_state.items()}
    good = fitted.decision_function(data)
    as_float = data.assign(grade=data["grade"].astype(float))  # the same levels as numbers
    np.testing.assert_array_equal(fitted.decision_function(as_float).to_numpy(), good.to_numpy())
    with pytest.raises(DataError, match=r"'group' holds the level\(s\) \[2.0, 1.0\] not seen"):
        fitted.predict(data.assign(group=(data["group"] == "b") + 1.0))  # a text factor given as numbers
    with pytest.raises(DataError, match=r"'grade' holds the level\(s\) \[7.0\] not seen"):
        fitted.predict(as_float.assign(grade=7.0))
    assert {name: kind for name, (kind, _) in design.spec.encoder_state.items()} == kinds
    np.testing.assert_array_equal(fitted.decision_function(data).to_numpy(), good.to_numpy())


def test_a_column_named_like_the_intercept_literal_is_an_error_not_dropped():
    """formulaic merges a column named 1 with its intercept literal: refused with the fix, never dropped."""
    from csvm_stats.exceptions import FormulaError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    data = pd.DataFrame(X).assign(y=np.where(X[:, 1] > 0, "a", "b"))  # columns 0, 1, 2 (integers), y
    with pytest.raises(FormulaError, match=r"column\(s\) \['1'\].*intercept literal.*rename"):
        CSVM.from_formula("y ~ .", data, tpr_min=0.8, bound="binomial")
    renamed = data.rename(columns=lambda c: f"x{c}" if str(c) in ("0", "1") else c)
    model = CSVM.from_formula("y ~ .", renamed, tpr_min=0.8, bound="binomial")
    assert model.exog_names == ["x0", "x1", "2"]


@pytest.mark.parametrize(
    "labels, positive, expected_positive",
    [
        (lambda s: (s == "sick").astype(int), None, 1),
        (lambda s: s == "sick", None, True),
        (lambda s: s, "healthy", "healthy"),
        (lambda s: pd.Categorical(s, categories=["sick", "healthy"]), None, "healthy"),
    ],
)
def test_every_label_type(frame, labels, positive, expected_positive):
    y = pd.Series(labels(frame["status"]), index=frame.index, name="y")
    model = CSVM(y, frame[["x1", "x2"]], tpr_min=0.7, bound="none", positive=positive)
    res = model.fit(random_state=0, **FAST)
    assert res.model.coding.positive == expected_positive
    pred = res.predict()
    assert pred.index.equals(frame.index)
    assert set(pred.unique()) <= set(pd.unique(y))
    assert pred.dtype == y.dtype
    assert repr(expected_positive) in res.summary(timing=False).as_text()


def test_array_core_names_columns_and_checks_newdata():
    rng = np.random.default_rng(4)
    y = np.r_[np.ones(60), np.zeros(60)]
    X = rng.normal(size=(120, 2)) + y[:, None]
    res = CSVM(y, X, tnr_min=0.7, bound="none").fit(random_state=0, **FAST)
    assert list(res.params.index) == ["x1", "x2", "Intercept"]
    expected = [1.0 if d >= 0 else 0.0 for d in res.decision_function(X[:4])]
    assert res.predict(X[:4]).tolist() == expected
    assert res.predict(X[:4]).dtype.kind == "f"
    with pytest.raises(DataError, match="3 columns"):
        res.predict(np.zeros((2, 3)))


@pytest.mark.parametrize("bound", ["hoeffding", "binomial", "none"])
def test_each_margin_sets_the_required_count(frame, bound):
    model = CSVM.from_formula("status ~ x1 + x2", frame, tpr_min=0.75, bound=bound)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CappedTargetWarning)
        res = model.fit(random_state=0, **FAST)
        expected = adjust_target(0.75, int(res.rates.loc["tpr", "anchor_n"]), 0.05, bound)
    assert res.rates.loc["tpr", "required"] == expected.count
    assert res.rates.loc["tpr", "met"]


def test_capped_hoeffding_target_warns_and_is_noted(frame):
    model = CSVM.from_formula("status ~ x1 + x2", frame, tpr_min=0.9, bound="hoeffding")
    with pytest.warns(CappedTargetWarning, match="capped at 1"):
        res = model.fit(random_state=0, **FAST)
    assert any("capped at 1" in w for w in res.warnings)
    assert "capped at 1" in res.summary(timing=False).as_text()


def test_two_constraints_give_separate_and_joint_statements(frame):
    model = CSVM.from_formula("status ~ x1 + x2", frame, tpr_min=0.6, tnr_min=0.6, bound="none")
    res = model.fit(random_state=0, **FAST)
    rates = res.rates
    assert list(rates.index) == ["tpr", "tnr", "acc", "bacc"] and res.reported_rates == ("tpr", "tnr")
    constrained = rates.loc[["tpr", "tnr"]]
    assert (constrained["joint_lower"] < constrained["lower"]).all() and constrained["upper"].isna().all()
    assert (rates.loc[["acc", "bacc"], "method"] == ["clopper-pearson 2-sided", "mean of TPR, TNR"]).all()
    assert "Bonferroni" in res.joint_statement and "jointly" in res.joint_statement
    assert "separately" in res.summary(timing=False).as_text()


def test_no_constraint_reports_all_three_rates(frame):
    res = CSVM.from_formula("status ~ x1 + x2", frame).fit(random_state=0, **FAST)
    assert list(res.rates.index) == ["tpr", "tnr", "acc", "bacc"] and res.reported_rates == ("tpr", "tnr", "acc")
    assert res.rates["target"].isna().all() and res.rates["lower"].notna().all()


def test_every_rate_is_reported_with_an_exact_interval(fitted):
    """TPR is constrained (one-sided bound); TNR, accuracy and balanced accuracy get two-sided intervals."""
    from scipy import stats

    rates, alpha = fitted.rates, fitted.model.alpha
    assert list(rates.index) == ["tpr", "tnr", "acc", "bacc"]
    tnr = rates.loc["tnr"]
    k, n = int(tnr["heldout_correct"]), int(tnr["heldout_n"])
    assert tnr["method"] == "clopper-pearson 2-sided" and np.isnan(tnr["joint_lower"])
    assert tnr["lower"] == pytest.approx(stats.beta.ppf(alpha / 2, k, n - k + 1))
    assert tnr["upper"] == pytest.approx(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    bacc = rates.loc["bacc"]
    assert bacc["heldout_rate"] == pytest.approx((rates.loc["tpr", "heldout_rate"] + tnr["heldout_rate"]) / 2)
    assert bacc["lower"] < bacc["heldout_rate"] < bacc["upper"]
    c = fitted.heldout_confusion.to_numpy()
    assert c.sum() == fitted.split.holdout.size
    assert c[0, 0] == rates.loc["tpr", "heldout_correct"] and c[1, 1] == k
    text = fitted.summary(timing=False).as_text()
    for label in ("Sensitivity (TPR)", "Specificity (TNR)", "Accuracy", "Balanced accuracy", "PPV (precision)", "NPV"):
        assert re.search(rf"^{re.escape(label)} ", text, flags=re.MULTILINE)
    assert "Held-out confusion matrix" in text and "lies between" in fitted.statements["tnr"]


def test_a_constant_rule_is_flagged(frame):
    """An intercept that dominates (w numerically 0) and a rule constant on H both warn and get a footer line."""
    import dataclasses

    from csvm_stats.exceptions import DegenerateRuleWarning
    from csvm_stats.models.results import CSVMResults

    res = CSVM.from_formula("status ~ . - id", frame, tpr_min=0.8, bound="binomial").fit(random_state=1, **FAST)
    assert res.degenerate == []
    flat = dataclasses.replace(res.engine_fit, coef=res.engine_fit.coef * 1e-9, intercept=1.0)
    zero = CSVMResults(dataclasses.replace(res.state, engine_fit=flat))
    assert len(zero.degenerate) == 1 and "calls every point positive ('sick')" in zero.degenerate[0]
    assert "this classifier calls every point positive" in " ".join(zero.summary(timing=False).as_text().split())
    assert zero.rates.loc["tnr", "heldout_correct"] == 0
    shifted = dataclasses.replace(res.engine_fit, intercept=-1e3)  # w not zero, but every point negative
    negative = CSVMResults(dataclasses.replace(res.state, engine_fit=shifted))
    assert [m.split(" this")[0] for m in negative.degenerate] == ["On the anchor sample J", "On the held-out sample H"]
    assert all("calls every point negative ('healthy'" in m for m in negative.degenerate)
    data = frame.assign(x1=1.0, x2=1.0)
    model = CSVM.from_formula("status ~ x1 + x2", data, tpr_min=0.8, bound="binomial")
    with pytest.raises(DataError, match="Every predictor column .* is constant"):
        model.fit(random_state=1, **FAST)
    # a real case: all 18 anchor positives required (capped binomial margin); the optimum is w = 0, b = 1
    # (up to the backend's tolerances: flagged as w numerically zero or as constant on J and H)
    capped = CSVM.from_formula("status ~ x1 + x2", frame, tpr_min=0.8, bound="binomial")
    with pytest.warns(DegenerateRuleWarning, match="calls every point positive"):
        real = capped.fit(random_state=1, **FAST)
    assert real.rates.loc["tnr", "heldout_correct"] == 0 and "calls every point positive" in real.warnings[0]


def test_tiny_units_are_not_constant(frame):
    """Features in units of 1e-13 (or 1e300) give the same rule as in units of 1: the cut-off is relative."""
    model = CSVM.from_formula("status ~ . - id", frame, tpr_min=0.8, bound="binomial")
    base = model.fit(random_state=1, **FAST)
    for unit in (1e-13, 1e-300, 1e300):
        scaled = frame.assign(x1=frame["x1"] * unit, x2=frame["x2"] * unit)
        res = CSVM.from_formula("status ~ . - id", scaled, tpr_min=0.8, bound="binomial").fit(random_state=1, **FAST)
        np.testing.assert_allclose(res.params_standardized, base.params_standardized, rtol=1e-4, atol=1e-6)
        assert res.degenerate == []


def test_empty_holdout_says_no_statement(frame):
    model = CSVM.from_formula("status ~ x1 + x2", frame, tpr_min=0.8, bound="binomial", fractions=(0.6, 0.4, 0.0))
    res = model.fit(random_state=0, **FAST)
    assert np.isnan(res.rates.loc["tpr", "lower"])
    assert res.statements["tpr"].startswith("No valid confidence statement can be made")
    assert "No valid confidence statement" in res.summary(timing=False).as_text()


def test_guarantee_mode_holds_on_heldout_and_reports_cost():
    model = CSVM.from_formula("status ~ x1 + x2", make_frame(400, 3), tpr_min=0.85, bound="binomial")
    plain = model.fit(random_state=0, **FAST)
    sure = model.fit(random_state=0, guarantee=True, **FAST)
    np.testing.assert_allclose(sure.params.iloc[:-1], plain.params.iloc[:-1], rtol=1e-5, atol=1e-7)
    g = sure.umbrella
    row = sure.rates.loc["tpr"]
    assert row["method"] == "order statistic" and row["lower"] == 0.85
    assert row["heldout_correct"] == row["heldout_n"] - g.rank + 1
    cost = sure.guarantee_cost
    assert cost["rate"] == "tnr" and cost["csvm_intercept"] == plain.intercept
    assert "Guarantee mode moved the intercept" in sure.summary(timing=False).as_text()


def test_guarantee_needs_a_single_class_rate(frame):
    both = CSVM.from_formula("status ~ x1 + x2", frame, tpr_min=0.6, tnr_min=0.6, bound="none")
    with pytest.raises(DataError, match="say which rate"):
        both.fit(guarantee=True, **FAST)
    small = CSVM.from_formula("status ~ x1 + x2", frame, tpr_min=0.95, bound="none")
    with pytest.raises(DataError, match="held-out positives"):
        small.fit(guarantee=True, random_state=0, **FAST)


def test_guarantee_mode_checks_the_heldout_size_before_solving(frame, monkeypatch):
    def no_solve(*args, **kwargs):
        raise AssertionError("the CSVM was solved although guarantee mode could not be used")

    monkeypatch.setattr("csvm_stats.models.model.fit_csvm", no_solve)
    small = CSVM.from_formula("status ~ x1 + x2", frame, tpr_min=0.95, bound="none")
    with pytest.raises(DataError, match="needs at least 59 held-out positives"):
        small.fit(guarantee=True, random_state=0, **FAST)


@pytest.mark.parametrize("rate", ["tpr", "tnr"])
def test_guarantee_mode_with_binary_predictors_counts_threshold_ties_as_correct(rate):
    """Binary predictors: many held-out points share the threshold score, and all of them count.

    With this seed the old rule (threshold rebuilt as (w'x + b0) - b0) left the
    threshold point and its ties misclassified for both rates.
    """
    rng = np.random.default_rng(19)
    n = 240
    a, b, c = (rng.integers(0, 2, n) for _ in range(3))
    sick = rng.random(n) < 0.2 + 0.25 * a + 0.2 * b + 0.1 * c
    data = pd.DataFrame({"status": np.where(sick, "sick", "healthy"), "a": a, "b": b, "c": c})
    model = CSVM.from_formula("status ~ a + b + c", data, **{f"{rate}_min": 0.7}, bound="none")
    res = model.fit(random_state=2, guarantee=True, time_limit=10, threads=1)  # an incumbent suffices here
    g = res.umbrella
    holdout = res.split.holdout
    y = res.model.y[holdout]
    in_class = y == (1.0 if rate == "tpr" else -1.0)
    scores = res._fitted_scores[holdout]
    tied = in_class & (np.abs(scores - g.threshold) <= max(g.tolerance, 1e-12))
    assert tied.sum() > 1  # several held-out points share the threshold score
    predicted = res.predict(data.iloc[holdout]).to_numpy()
    wanted = "sick" if rate == "tpr" else "healthy"
    assert (predicted[tied] == wanted).all()
    row = res.rates.loc[rate]
    assert row["heldout_correct"] >= g.guaranteed_correct == g.n - g.rank + 1
    assert f"at least {g.guaranteed_correct} by construction" in res.statements[rate]
    assert res.statements[rate].startswith("With 95% confidence") and "at least 0.7 (" in res.statements[rate]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"tpr_min": 1.2}, "tpr_min"),
        ({"tpr_min": 0.0}, "tpr_min"),
        ({"alpha": 1.0}, "alpha"),
        ({"alpha": -0.1}, "alpha"),
        ({"bound": "chernoff"}, "bound"),
        ({"C": 0}, "C must be"),
        ({"fractions": (0.5, 0.5, 0.5)}, "fractions"),
    ],
)
def test_bad_arguments(frame, kwargs, message):
    with pytest.raises(DataError, match=message):
        CSVM.from_formula("status ~ x1 + x2", frame, **kwargs)


def test_formula_naming_a_missing_column(frame):
    with pytest.raises(DataError, match="'age'"):
        CSVM.from_formula("status ~ x1 + age", frame)
    with pytest.raises(DataError, match="response 'outcome'"):
        CSVM.from_formula("outcome ~ .", frame)


def test_no_positive_in_holdout(frame):
    positives = np.flatnonzero(frame["status"].to_numpy() == "sick")
    negatives = np.flatnonzero(frame["status"].to_numpy() == "healthy")
    samples = {
        "train": np.r_[positives[:40], negatives[:40]],
        "anchor": np.r_[positives[40:], negatives[40:60]],
        "holdout": negatives[60:],
    }
    model = CSVM.from_formula("status ~ x1 + x2", frame, tpr_min=0.8, bound="binomial", samples=samples)
    with pytest.raises(DataError, match="held-out sample has no positives"):
        model.fit(**FAST)


def test_missing_values_are_errors_not_dropped(frame):
    bad = frame.copy()
    bad.loc["p3", "x1"] = np.nan
    with pytest.raises(DataError, match="missing values"):
        CSVM.from_formula("status ~ x1 + x2", bad)
    bad = frame.copy()
    bad.loc["p3", "status"] = None
    with pytest.raises(DataError, match="missing value"):
        CSVM.from_formula("status ~ x1 + x2", bad)


def test_rbf_kernel_results(frame):
    res = CSVM.from_formula("status ~ x1 + x2", frame, tpr_min=0.8, bound="none", kernel="rbf").fit(random_state=0, **FAST)
    assert res.params.index[0] == "phi_1" and res.params_standardized is None
    assert res.dual_coef.index.isin(frame.index).all()
    assert res.support["exact feature map"]
    text = res.summary(timing=False).as_text()
    assert "Kernel solution" in text and "rbf(gamma=" in text


def test_truncated_kernel_rank_is_reported(frame):
    model = CSVM.from_formula("status ~ x1 + x2", frame, tpr_min=0.8, bound="none", kernel="rbf", rank=5)
    res = model.fit(random_state=0, **FAST)
    assert not res.support["exact feature map"] and res.support["feature-map rank"] == 5
    assert any("truncated to rank 5" in w for w in res.warnings)
    assert "truncated to rank 5" in res.summary(timing=False).as_text()


def test_predict_proba_uses_the_matching_ensemble(fitted, frame):
    assert fitted.probability_variant == "cebb1"
    new = frame.drop(columns="status").iloc[[3, 0, 7]]
    p = fitted.predict_proba(new, method="cebb1", n_bootstrap=20, random_state=1)
    assert list(p.index) == ["p3", "p0", "p7"] and p.name == "P('sick')"
    assert ((p >= 0) & (p <= 1)).all()
    again = fitted.predict_proba(new, method="cebb1", n_bootstrap=20, random_state=1)
    assert again.equals(p)
    assert fitted.probability_ensemble(n_bootstrap=20, random_state=1).variant == "cebb1"
    # the detail view names the matching ensemble (the plain view names the default probabilities only)
    assert "CEBB1 with predict_proba(method='cebb1')" in fitted.summary(timing=False, detail=True).as_text()
