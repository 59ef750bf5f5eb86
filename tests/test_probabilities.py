"""Default probabilities of a fitted CSVM: the held-out probability model or cross-fitted Venn-Abers (fit_calibration)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from csvm_stats.exceptions import DataError
from csvm_stats.probability.fit_calibration import MIN_HOLDOUT, planned_route
from csvm_stats.models.model import CSVM
from csvm_stats.models.results import CSVMResults
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


def _consistent_with_rule(results, data) -> None:
    """Cross-fitted route: P > t only for points called positive, P < t only for the others (ties either way)."""
    p = results.predict_proba(data)
    called = results.predict(data) == results.model.coding.positive
    t = results.probability_threshold
    assert np.all(called[p > t]) and not np.any(called[p < t])


def _rule_check_is_true(results) -> None:
    """Held-out route: the rule check counts what the rule and P do on H."""
    h = results.split.holdout
    p = results.predict_proba().to_numpy()[h]
    called = results.decision_function().to_numpy()[h] >= 0
    rule = results.calibration.rule
    assert rule.n == h.size and rule.disagree == int(np.sum(called != (p >= 0.5)))
    np.testing.assert_allclose(rule.positive_range, (p[called].min(), p[called].max()), rtol=1e-12)
    np.testing.assert_allclose(rule.negative_range, (p[~called].min(), p[~called].max()), rtol=1e-12)


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
    res = CSVM.from_formula("status ~ x1 + x2", frame, fractions=(1.0, 0.0, 0.0)).fit(random_state=0, **FAST)
    assert planned_route(res) == "cross-fitted"
    assert "cross-fitted (5 refits at the first predict_proba)" in res.summary(timing=False).as_text()  # not computed by the summary
    cal = res.calibration
    assert cal.method == "cross-fitted" and cal.folds == 5 and cal.predictor.n == len(frame)
    _consistent_with_rule(res, frame)
    p = res.predict_proba().to_numpy()
    assert cal.rule.ties == int(np.sum(p == res.probability_threshold)) and cal.rule.n == len(frame)
    text = " ".join(res.summary(timing=False).as_text().split())
    assert f"P = {cal.threshold:.3g} ({cal.rule.ties} of {len(frame)} points) either way" in text
    assert "cross-fitted (400 points, 5 refits, 20 bootstrap averages" in res.summary(timing=False).as_text()


def test_small_held_out_sample_switches_to_cross_fitting():
    small = make_frame(120, seed=2)
    res = CSVM.from_formula("status ~ x1 + x2", small, tnr_min=0.7, bound="none").fit(random_state=0, **FAST)
    assert res.split.holdout.size < MIN_HOLDOUT
    cal = res.calibration
    assert cal.method == "cross-fitted" and cal.predictor.n == len(small)



def _record_fits(monkeypatch, model_class) -> list[dict]:
    """The keyword arguments of every later ``model_class.fit`` call."""
    calls: list[dict] = []
    fit = model_class.fit

    def recording_fit(self, **kwargs):
        calls.append(kwargs)
        return fit(self, **kwargs)

    monkeypatch.setattr(model_class, "fit", recording_fit)
    return calls


def test_cross_fitted_refits_repeat_the_fits_seed_limits_and_clock(monkeypatch):
    """A refit with a fresh seed gave other calibration scores on a degenerate fit (optima a solver tolerance
    apart), so two identical fits gave other probabilities (sklearn's check_fit_idempotent, 1 run in 12)."""
    small = make_frame(120, seed=2)
    res = CSVM.from_formula("status ~ x1 + x2", small, tnr_min=0.7, bound="none").fit(
        random_state=7, time_limit=25, threads=1, clock="cpu"
    )
    calls = _record_fits(monkeypatch, CSVM)
    assert res.calibration.method == "cross-fitted"
    expected = {"solver": res.solver.backend, "time_limit": 25, "mip_gap": 1e-4, "threads": 1, "random_state": 7,
                "warm_start": True, "clock": "cpu"}
    assert calls == [expected] * res.calibration.folds


def test_multiclass_cross_fitted_refits_repeat_the_fit_options(monkeypatch):
    from csvm_stats.multiclass.model import MulticlassCSVM
    from csvm_stats.multiclass.simulation import GaussianMulticlass

    X, y = GaussianMulticlass(np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])).sample(30, np.random.default_rng(1))
    res = MulticlassCSVM(y, X).fit(random_state=5, time_limit=20, threads=1, solver="scip")
    calls = _record_fits(monkeypatch, MulticlassCSVM)
    res.predict_proba()
    assert res.calibration.method == "cross-fitted"
    expected = {"solver": "scip", "time_limit": 20, "mip_gap": 1e-4, "threads": 1, "random_state": 5,
                "warm_start": True, "clock": "wall"}
    assert calls == [expected] * res.calibration.folds


@pytest.mark.parametrize("case", ["one class", "6 points"])
def test_held_out_sample_of_one_class_or_under_10_points_is_cross_fitted(case):
    """Issue 11's edges: H with one class, H smaller than 10 points -> cross-fitted Venn-Abers, never a silent 0.5."""
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
    _consistent_with_rule(res, data)


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
