"""Default probabilities of a fitted CSVM: the probability model, held-out or cross-fitted (fit_calibration)."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest

from csvm_stats.exceptions import DataError
from csvm_stats.probability.fit_calibration import MIN_HOLDOUT, fit_cross_fitted_model, planned_route
from csvm_stats.models.model import CSVM
from csvm_stats.models.results import CSVMResults
from csvm_stats.probability.score_model import fit_score, fit_sigmoid, fold_count
from csvm_stats.probability.venn_abers import VennAbers

FAST = {"time_limit": 30, "threads": 1}


def make_frame(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    sick = rng.random(n) < 1 / (1 + np.exp(-(1.5 * x[:, 0] - x[:, 1])))
    return pd.DataFrame({"status": np.where(sick, "sick", "healthy"), "x1": x[:, 0], "x2": x[:, 1]},
                        index=pd.Index([f"p{k}" for k in range(n)], name="patient"))


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return make_frame(400)


@pytest.fixture(scope="module")
def held_out(frame):
    return CSVM.from_formula("status ~ x1 + x2", frame, tpr_min=0.8, bound="binomial").fit(random_state=0, **FAST)


def _rule_check_is_true(results, rows=None) -> None:
    """The rule check counts what the rule and P do on its sample (H on the held-out route, every row otherwise)."""
    h = results.split.holdout if rows is None else rows
    p = results.predict_proba().to_numpy()[h]
    called = results.decision_function().to_numpy()[h] >= 0
    rule = results.calibration.rule
    assert rule.n == h.size and rule.disagree == int(np.sum(called != (p >= 0.5)))
    if called.any():
        np.testing.assert_allclose(rule.positive_range, (p[called].min(), p[called].max()), rtol=1e-12)
    if (~called).any():
        np.testing.assert_allclose(rule.negative_range, (p[~called].min(), p[~called].max()), rtol=1e-12)


def test_the_docs_say_that_p_is_fitted_on_every_row_and_the_interval_on_the_training_and_anchor_rows():
    """The held-out route's P model sees H (the test below); the docs once said it was fitted on I u J (review r8 F8)."""
    from pathlib import Path

    import csvm_stats.interfaces.sklearn as sklearn_module

    repo = Path(__file__).resolve().parents[1]
    pages = {path: path.read_text() for path in [*(repo / "docs").rglob("*.md"), repo / "README.md"]}
    pages[Path(sklearn_module.__file__)] = sklearn_module.__doc__
    wrong = re.compile(r"(?:logistic|probability) model fitted beside the rule on the training and anchor rows")
    assert not [str(path) for path, text in pages.items() if wrong.search(" ".join(text.split()))]
    guide = " ".join((repo / "docs" / "user_guide" / "getting_started.md").read_text().split())
    assert "comes from a logistic model fitted beside the rule on all the rows (training, anchor and held-out)" in guide
    assert "the same regression fitted on the training and anchor rows alone, calibrated on the held-out sample" in guide


def test_held_out_route_is_the_probability_model_with_the_venn_abers_interval_of_its_score(held_out, frame):
    cal = held_out.calibration
    h = held_out.split.holdout
    rows = np.concatenate([held_out.split.train, held_out.split.anchor])
    assert cal.method == "held-out" and cal.predictor.n == h.size and cal.model.n == rows.size + h.size
    features = held_out.fitted_features
    expected = VennAbers.fit(cal.model.interval_score(features[h]), held_out.model.y[h])
    np.testing.assert_array_equal(cal.predictor.p0, expected.p0)
    np.testing.assert_array_equal(cal.predictor.p1, expected.p1)
    new = frame.drop(columns="status").iloc[[5, 1, 9]]
    table = held_out.predict_interval(new)
    assert list(table.index) == ["p5", "p1", "p9"] and list(table.columns) == ["p0", "p1", "p"]
    assert np.all(table["p0"] <= table["p1"]) and table["p"].between(0, 1).all()
    np.testing.assert_allclose(table["p"], cal.model.predict(features[[5, 1, 9]]), rtol=1e-12)
    p = held_out.predict_proba(new)
    assert p.name == "P('sick')" and np.allclose(p.to_numpy(), table["p"].to_numpy())
    _rule_check_is_true(held_out)


def test_held_out_probability_beats_the_rules_own_score_on_the_truth(held_out):
    """The data follow a logistic truth; the probability model is closer to it than Venn-Abers on the rule's f."""
    x = make_frame(4000, seed=11).drop(columns="status")
    truth = 1 / (1 + np.exp(-(1.5 * x["x1"] - x["x2"]))).to_numpy()
    h = held_out.split.holdout
    f = held_out.decision_function().to_numpy()
    old = VennAbers.fit(f[h], held_out.model.y[h]).predict(held_out.decision_function(x).to_numpy())
    new = held_out.predict_proba(x).to_numpy()
    assert np.mean((new - truth) ** 2) < np.mean((old - truth) ** 2)


def test_held_out_route_has_no_threshold_and_says_why(held_out):
    with pytest.raises(DataError, match="not a threshold on P"):
        held_out.probability_threshold
    assert np.isnan(held_out.calibration.threshold)


def test_summary_names_the_model_the_points_and_the_rule_check(held_out):
    text = held_out.summary(timing=False).as_text()
    rule = held_out.calibration.rule
    assert f"Venn-Abers interval on {held_out.split.holdout.size} held-out points" in text
    assert f"differs from P >= 1/2 on {rule.disagree} of {rule.n} held-out points" in text
    assert "is not\n" in repr(text) or "is not" in text
    assert "not a confidence interval for the true P(y | x)" in " ".join(text.split())


def test_guarantee_mode_rule_check_uses_the_moved_intercept(frame):
    res = CSVM.from_formula("status ~ x1 + x2", frame, tpr_min=0.8, bound="binomial").fit(
        random_state=1, guarantee=True, **FAST
    )
    assert res.calibration.method == "held-out" and res.umbrella is not None
    _rule_check_is_true(res)


def test_without_held_out_sample_the_calibration_is_cross_fitted(frame):
    """No H: the probability model's sigmoid and Venn-Abers interval on its out-of-fold scores; no CSVM refit."""
    res = CSVM.from_formula("status ~ x1 + x2", frame, fractions=(1.0, 0.0, 0.0)).fit(random_state=0, **FAST)
    assert planned_route(res) == "cross-fitted"
    cal = res.calibration
    rows = res.split.train  # every row, in the split's order
    y01 = (res.model.y[rows] > 0).astype(float)
    assert cal.method == "cross-fitted" and cal.folds == fold_count(y01)
    assert cal.predictor.n == cal.model.n == len(frame)
    coef, intercept, _, out_of_fold = fit_score(res.fitted_features[rows], y01)  # rounding: BLAS threads may differ
    np.testing.assert_allclose(cal.model.coef, coef, rtol=1e-9)
    assert (cal.model.slope, cal.model.offset) == pytest.approx(fit_sigmoid(out_of_fold, y01), rel=1e-9)
    expected = VennAbers.fit(out_of_fold, y01)
    np.testing.assert_allclose(cal.predictor.scores, expected.scores, rtol=1e-9)
    np.testing.assert_allclose(cal.predictor.p1, expected.p1, rtol=1e-12)
    table = res.predict_interval(frame.drop(columns="status"))
    np.testing.assert_allclose(table["p"], cal.model.predict(res.fitted_features), rtol=1e-12)
    assert np.all(table["p0"] <= table["p1"])
    _rule_check_is_true(res, np.arange(len(frame)))
    with pytest.raises(DataError, match="not a threshold on P"):
        res.probability_threshold
    text = " ".join(res.summary(timing=False).as_text().split())
    assert f"logistic model, cross-fitted on {len(frame)} out-of-fold scores" in text
    assert f"differs from P >= 1/2 on {cal.rule.disagree} of {len(frame)} fitted points" in text
    assert "here of out-of-fold scores, without a finite-sample guarantee" in text


@pytest.mark.filterwarnings("ignore::csvm_stats.exceptions.DegenerateRuleWarning")  # C = 1 calls every point negative
def test_cross_fitted_probabilities_have_no_base_rate_bias():
    """Issue 23: at 10% positives the old merge p1 / (1 - p0 + p1) over-predicted; the sigmoid's intercept equation
    makes the mean of P on the calibration pairs the smoothed base rate, and the fit's mean P follows it."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(600, 3))
    sick = rng.random(600) < 1 / (1 + np.exp(-(1.5 * x[:, 0] - x[:, 1] - 3.2)))
    data = pd.DataFrame({"status": np.where(sick, "sick", "healthy"), "x1": x[:, 0], "x2": x[:, 1], "x3": x[:, 2]})
    res = CSVM.from_formula("status ~ .", data, fractions=(1.0, 0.0, 0.0)).fit(random_state=0, **FAST)
    cal = res.calibration
    assert cal.method == "cross-fitted" and 0.05 < sick.mean() < 0.15
    rows = res.split.train
    y01 = sick[rows].astype(float)
    _, _, _, out_of_fold = fit_score(res.fitted_features[rows], y01)
    n_pos, n_neg = y01.sum(), y01.size - y01.sum()
    smoothed = np.where(y01 > 0, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2)).mean()
    assert cal.model.probability(out_of_fold).mean() == pytest.approx(smoothed, abs=1e-6)
    assert abs(res.predict_proba().mean() - sick.mean()) < 0.01
    p0, p1 = cal.predictor.interval(out_of_fold)
    assert np.mean(p1 / (1 - p0 + p1)) > cal.model.probability(out_of_fold).mean()  # the merge leans high


def test_constant_features_give_the_base_rate_and_the_pooled_interval_when_cross_fitted():
    y01 = np.r_[np.ones(6), np.zeros(24)]
    model, scores = fit_cross_fitted_model(np.ones((30, 2)), y01, np.ones((0, 2)), np.zeros(0))
    assert np.all(model.coef == 0) and np.ptp(scores) == 0
    p = model.predict(np.ones((3, 2)))
    assert np.allclose(p, np.mean(np.r_[np.full(6, 7 / 8), np.full(24, 1 / 26)]))
    va = VennAbers.fit(scores, y01)
    p0, p1 = va.interval(model.score(np.ones((1, 2))))
    assert (p0[0], p1[0]) == pytest.approx((6 / 31, 7 / 31))


def test_tied_rows_get_the_same_probability_and_interval_on_both_routes(held_out, frame):
    new = frame.drop(columns="status").iloc[[3, 3, 8, 8]]
    free = CSVM.from_formula("status ~ x1 + x2", frame, fractions=(1.0, 0.0, 0.0)).fit(random_state=0, **FAST)
    for res in (held_out, free):
        table = res.predict_interval(new).to_numpy()
        np.testing.assert_array_equal(table[0], table[1])
        np.testing.assert_array_equal(table[2], table[3])
        # a score tied (within 1e-9, relative) with a calibration score is pooled with it: an odd slot
        tied = res.calibration.predictor.scores[[4]] * (1 + 1e-12)
        assert res.calibration.predictor.slots(tied)[0] == 2 * 4 + 1


def test_missing_values_in_new_data_are_refused_on_the_cross_fitted_route(frame):
    free = CSVM.from_formula("status ~ x1 + x2", frame, fractions=(1.0, 0.0, 0.0)).fit(random_state=0, **FAST)
    new = pd.DataFrame({"x1": [0.1, np.nan], "x2": [0.0, 1.0]})
    with pytest.raises(DataError, match="missing"):
        free.predict_proba(new)
    with pytest.raises(DataError, match="missing"):
        free.predict_interval(new)


def test_small_held_out_sample_switches_to_cross_fitting():
    small = make_frame(120, seed=2)
    res = CSVM.from_formula("status ~ x1 + x2", small, tnr_min=0.7, bound="none").fit(random_state=0, **FAST)
    assert res.split.holdout.size < MIN_HOLDOUT
    cal = res.calibration
    assert cal.method == "cross-fitted" and cal.predictor.n == len(small)
    assert cal.model.n == res.split.train.size + res.split.anchor.size


def _record_fits(monkeypatch, model_class) -> list[dict]:
    """The keyword arguments of every later ``model_class.fit`` call."""
    calls: list[dict] = []
    fit = model_class.fit

    def recording_fit(self, **kwargs):
        calls.append(kwargs)
        return fit(self, **kwargs)

    monkeypatch.setattr(model_class, "fit", recording_fit)
    return calls


def test_cross_fitted_route_refits_no_csvm(monkeypatch):
    """The cross-fitted route's out-of-fold scores come from the probability model's own folds: no CSVM refit."""
    small = make_frame(120, seed=2)
    res = CSVM.from_formula("status ~ x1 + x2", small, tnr_min=0.7, bound="none").fit(
        random_state=7, time_limit=25, threads=1, clock="cpu"
    )
    calls = _record_fits(monkeypatch, CSVM)
    assert res.calibration.method == "cross-fitted"
    assert calls == []


def test_multiclass_cross_fitted_refits_repeat_the_fit_options(monkeypatch):
    from csvm_stats.multiclass.model import MulticlassCSVM
    from csvm_stats.multiclass.simulation import GaussianMulticlass

    X, y = GaussianMulticlass(np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])).sample(30, np.random.default_rng(1))
    res = MulticlassCSVM(y, X).fit(random_state=5, time_limit=20, threads=1, solver="scip")
    calls = _record_fits(monkeypatch, MulticlassCSVM)
    res.predict_proba()
    assert res.calibration.method == "cross-fitted"
    expected = {"solver": "scip", "mip_gap": 1e-4, "threads": 1, "random_state": 5, "warm_start": True, "clock": "wall"}
    k = res.calibration.folds
    assert [{n: v for n, v in c.items() if n != "time_limit"} for c in calls] == [expected] * k
    # one budget for all refits: refit j gets at most its equal share of what is left of the fit's 20 s
    assert all(0 <= c["time_limit"] <= 20 / (k - j) for j, c in enumerate(calls))


@pytest.mark.parametrize("case", ["one class", "6 points"])
def test_held_out_sample_of_one_class_or_under_10_points_is_cross_fitted(case):
    """Issue 11's edges: H with one class, H smaller than 10 points -> cross-fitted, never a silent 0.5."""
    data = make_frame(160, seed=6)
    sick = np.flatnonzero(data["status"].to_numpy() == "sick")
    healthy = np.flatnonzero(data["status"].to_numpy() == "healthy")
    holdout = healthy[:60] if case == "one class" else np.r_[sick[:3], healthy[:3]]
    rest = np.setdiff1d(np.arange(len(data)), holdout)
    samples = {"train": rest[::2], "anchor": rest[1::2], "holdout": holdout}
    res = CSVM.from_formula("status ~ x1 + x2", data, samples=samples).fit(random_state=0, **FAST)
    assert planned_route(res) == "cross-fitted"
    cal = res.calibration
    assert cal.method == "cross-fitted" and cal.predictor.n == len(data)
    p = res.predict_proba(data)
    assert p.nunique() > 10 and p.between(0, 1).all()
    _rule_check_is_true(res, np.arange(len(data)))


def test_constant_rule_keeps_informative_probabilities_and_the_check_says_so(held_out, frame):
    """f constant (w = 0): the rule calls every point positive; P still comes from the probability model."""
    flat = dataclasses.replace(held_out.engine_fit, coef=held_out.engine_fit.coef * 0.0, intercept=1.0)
    zero = CSVMResults(dataclasses.replace(held_out.state, engine_fit=flat))
    assert zero.calibration.method == "held-out"
    p = zero.predict_proba(frame.drop(columns="status"))
    assert p.nunique() > 100
    rule = zero.calibration.rule
    assert np.isnan(rule.negative_range[0]) and rule.disagree == int(np.sum(p.to_numpy()[zero.split.holdout] < 0.5))


def test_too_little_data_is_a_clear_error_not_a_silent_half():
    tiny = make_frame(8, seed=4)
    tiny.loc[tiny.index[:3], "status"] = "sick"
    tiny.loc[tiny.index[3:], "status"] = "healthy"
    res = CSVM.from_formula("status ~ x1 + x2", tiny, fractions=(1.0, 0.0, 0.0)).fit(random_state=0, **FAST)
    with pytest.raises(DataError, match="at least 10 points with both classes"):
        res.predict_proba()


def test_missing_values_in_new_data_are_refused(held_out):
    new = pd.DataFrame({"x1": [0.1, np.nan], "x2": [0.0, 1.0]})
    with pytest.raises(DataError):
        held_out.predict_proba(new)


def test_bootstrap_methods_on_request_and_bad_methods(held_out, frame):
    new = frame.drop(columns="status").iloc[:4]
    p = held_out.predict_proba(new, method="cebb1", n_bootstrap=10, random_state=1)
    assert ((p >= 0) & (p <= 1)).all()
    assert held_out.probability_ensemble(variant="cebb1", n_bootstrap=10, random_state=1).variant == "cebb1"
    with pytest.raises(DataError, match="interval=True needs method='venn-abers' or 'ebb-va'"):
        held_out.predict_proba(new, method="ebb", interval=True)
    with pytest.raises(DataError, match="method must be one of"):
        held_out.predict_proba(new, method="platt")


def test_ebb_va_on_request_gives_an_interval(held_out, frame):
    new = frame.drop(columns="status").iloc[:6]
    table = held_out.predict_proba(new, method="ebb-va", interval=True, n_bootstrap=10, random_state=1)
    assert list(table.columns) == ["p0", "p1", "p"]
    assert np.all((table["p0"] <= table["p"]) & (table["p"] <= table["p1"]))


def test_cross_fitted_model_file_and_cli_give_the_fits_probabilities(tmp_path, frame):
    """The model file stores the cross-fitted route's probability model: a loaded model and `--proba` agree."""
    from csvm_stats.interfaces.cli import EXIT_OK, main
    from csvm_stats.interfaces.persistence import load_model, save_model

    free = CSVM.from_formula("status ~ x1 + x2", frame, fractions=(1.0, 0.0, 0.0)).fit(random_state=0, **FAST)
    path = save_model(free, tmp_path / "free.csvm")
    saved = load_model(path)
    assert saved.calibration_method == "cross-fitted" and saved.probability_model is not None
    new = frame.drop(columns="status").iloc[:7]
    pd.testing.assert_frame_equal(saved.predict_proba(new, interval=True), free.predict_interval(new),
                                  check_exact=False, rtol=1e-12)
    new.to_csv(tmp_path / "new.csv", index=False)
    out = tmp_path / "p.csv"
    assert main(["predict", str(path), str(tmp_path / "new.csv"), "--proba", "--output", str(out)]) == EXIT_OK
    table = pd.read_csv(out)
    np.testing.assert_allclose(table["p"], free.predict_proba(new).to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(table[["p0", "p1"]], free.predict_interval(new)[["p0", "p1"]], rtol=1e-9)
