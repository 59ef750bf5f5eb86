"""csvm_stats.interfaces.r_api: the plain-value entry point R calls (no R needed here)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from csvm_stats.interfaces import r_api
from csvm_stats.exceptions import DataError
from csvm_stats.models.model import CSVM

NAMES = ["u", "v", "w"]
OPTIONS = {"tpr_min": 0.8, "bound": "binomial", "random_state": 3.0, "time_limit": 20.0}


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(160, 3))
    labels = np.where(x[:, 0] - 0.5 * x[:, 2] + 0.6 * rng.normal(size=160) > 0, "yes", "no")
    return x, labels


@pytest.fixture(scope="module")
def results(data):
    x, labels = data
    return r_api.fit(x, NAMES, labels, "yes", dict(OPTIONS))["results"]


@pytest.fixture(scope="module")
def exported(results):
    return r_api.export(results)


def _assert_plain(value, where="export"):
    """Only what reticulate turns into plain R vectors and lists."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str), where
            _assert_plain(item, f"{where}[{key!r}]")
    elif isinstance(value, np.ndarray):
        assert value.ndim == 1 and value.dtype.kind in "fiuUb", f"{where}: {value.dtype}, ndim {value.ndim}"
    else:
        assert isinstance(value, (str, float, int, bool)), f"{where}: {type(value).__name__}"


def test_api_version_is_an_integer():
    assert r_api.api_version() == r_api.API_VERSION == 3
    versions = r_api.environment()
    assert versions["api_version"] == "3" and versions["numpy"] == np.__version__


def test_fit_equals_the_python_fit_on_the_same_split(data, results):
    x, labels = data
    direct = CSVM(
        pd.Series(labels, dtype=object), pd.DataFrame(x, columns=NAMES), tpr_min=0.8, bound="binomial", positive="yes"
    ).fit(random_state=3, time_limit=20.0)
    np.testing.assert_allclose(results.params.to_numpy(), direct.params.to_numpy(), rtol=1e-6, atol=1e-8)
    pd.testing.assert_frame_equal(results.rates, direct.rates)
    assert list(results.params.index) == [*NAMES, "Intercept"]


def test_export_is_plain_and_matches_the_results(results, exported):
    _assert_plain(exported)
    assert exported["api_version"] == 3
    assert list(exported["coef_names"]) == NAMES
    np.testing.assert_array_equal(exported["coef"], results.params.to_numpy()[:-1])
    assert exported["intercept"] == results.params["Intercept"]
    assert (exported["positive"], exported["negative"]) == ("yes", "no")
    assert list(exported["rate_names"]) == ["tpr", "tnr", "acc", "bacc"]
    rates = exported["rates"]
    assert set(rates) == set(r_api.RATE_COLUMNS)
    assert rates["heldout_correct"][0] == results.rates.loc["tpr", "heldout_correct"]
    assert rates["met"][0] == float(results.rates.loc["tpr", "met"])
    assert exported["statements"][0] == results.statements["tpr"]
    assert exported["summary_text"].startswith(" ") and "Confidence statements" in exported["summary_text"]
    assert exported["solver"]["status"] == results.solver.status.value
    assert sum(exported["samples"].values()) == exported["n"] == 160
    assert re.search(r"^Response +y$", exported["summary_text"], flags=re.MULTILINE)


def test_predict_gives_classes_and_decision_values(data, results):
    x, _ = data
    out = r_api.predict(results, x[:7], ["class", "decision"])
    np.testing.assert_allclose(out["decision"], results.decision_function(x[:7]).to_numpy())
    assert list(out["class"]) == list(results.predict(x[:7]))
    assert set(r_api.predict(results, x[:2], "decision")) == {"decision", "warnings", "warning_kinds"}


def test_predict_rejects_unknown_types_and_wrong_widths(data, results):
    x, _ = data
    with pytest.raises(DataError, match="type must be among"):
        r_api.predict(results, x, "response")
    with pytest.raises(DataError, match="3 columns"):
        r_api.predict(results, x[:, :2], "class")


def test_probabilities_come_from_the_results_ensemble(data, results):
    x, _ = data
    probabilities = r_api.predict(results, x[:4], "prob")["prob"]
    assert probabilities.shape == (4,) and ((probabilities >= 0) & (probabilities <= 1)).all()
    np.testing.assert_allclose(probabilities, results.predict_proba(x[:4]).to_numpy())


def test_options_are_checked_not_ignored(data):
    x, labels = data
    with pytest.raises(DataError, match='^unknown argument "tpr_mn"; did you mean "tpr_min"\\?$'):
        r_api.fit(x, NAMES, labels, "yes", {"tpr_mn": 0.9})
    with pytest.raises(DataError, match='^unknown arguments "gama", "zzz"; csvm\\(\\) takes C, acc_min, alpha'):
        r_api.fit(x, NAMES, labels, "yes", {"gama": 1.0, "zzz": 2.0})
    with pytest.raises(DataError, match="whole number"):
        r_api.fit(x, NAMES, labels, "yes", {"random_state": 1.5})
    with pytest.raises(DataError, match="TRUE or FALSE"):
        r_api.fit(x, NAMES, labels, "yes", {"standardize": 1.0})
    with pytest.raises(DataError, match="single value"):
        r_api.fit(x, NAMES, labels, "yes", {"C": [1.0, 2.0]})


def test_shapes_and_labels_are_checked(data):
    x, labels = data
    with pytest.raises(DataError, match="labels for 160 rows"):
        r_api.fit(x, NAMES, labels[:-1], "yes")
    with pytest.raises(DataError, match=r"2 columns \(one per name\), got shape \(160, 3\)"):
        r_api.fit(x, ["u", "v"], labels, "yes")
    with pytest.raises(DataError, match="single class"):
        r_api.fit(x, NAMES, np.full(160, "yes"), "yes")


def test_a_single_column_arrives_as_a_bare_string(data):
    x, labels = data
    one = r_api.fit(x[:, 0], "u", labels, "yes", {"random_state": 1, "time_limit": 20.0})["results"]
    assert list(r_api.export(one)["coef_names"]) == ["u"]


def test_python_warnings_are_handed_over_as_strings(data):
    x, labels = data
    out = r_api.fit(
        x, NAMES, labels, "yes", {"tpr_min": 0.95, "bound": "hoeffding", "random_state": 1, "time_limit": 20.0}
    )
    assert isinstance(out["warnings"], np.ndarray) and out["warnings"].dtype.kind == "U"
    assert any("capped at 1" in message for message in out["warnings"])
    quiet = r_api.fit(x, NAMES, labels, "yes", {"random_state": 1, "time_limit": 20.0})
    assert quiet["warnings"].size == 0
    assert list(out["warning_kinds"]) == ["CappedTargetWarning"]


def test_anchor_requirements_name_the_sizes_each_margin_needs(data):
    x, labels = data
    out = r_api.fit(x, NAMES, labels, "yes", {"tpr_min": 0.95, "bound": "hoeffding", "random_state": 1, "time_limit": 20.0})
    anchor = r_api.export(out["results"])["anchor"]
    assert list(anchor["rate"]) == ["tpr"] and bool(anchor["capped"][0])
    assert anchor["hoeffding"][0] == 600 and anchor["binomial"][0] == 59  # ceil(log 20 / (2 0.05^2)), ceil(log .05 / log .95)
    assert anchor["n"][0] == out["results"].rates.loc["tpr", "anchor_n"]


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_a_model_loaded_from_the_exported_bytes_predicts_as_the_fit(data, kernel):
    x, labels = data
    fitted = r_api.fit(x, NAMES, labels, "yes", {**OPTIONS, "kernel": kernel})["results"]
    model_file = r_api.export(fitted)["model_file"]
    assert model_file.dtype == np.uint8
    for raw in (model_file, bytearray(model_file.tobytes())):  # uint8 values, or R's raw vector via reticulate
        loaded = r_api.load(raw)
        again = r_api.predict(loaded, x[:20], ["class", "decision"])
        direct = r_api.predict(fitted, x[:20], ["class", "decision"])
        np.testing.assert_allclose(again["decision"], direct["decision"], rtol=1e-12, atol=1e-12)
        assert list(again["class"]) == list(direct["class"])


def test_anchor_check_says_before_the_solve_what_the_fit_will_require(data, monkeypatch):
    x, labels = data
    options = {"tpr_min": 0.9, "bound": "hoeffding", "random_state": 3.0, "time_limit": 20.0}
    check = r_api.anchor_check(x, NAMES, labels, "yes", dict(options))
    _assert_plain({key: value for key, value in check.items()}, "anchor_check")
    assert check["bound"] == "hoeffding" and check["alpha"] == 0.05
    assert list(check["anchor"]["rate"]) == ["tpr"] and bool(check["anchor"]["capped"][0])
    assert int(check["anchor"]["hoeffding"][0]) == 150 and int(check["anchor"]["binomial"][0]) == 29
    assert list(check["warning_kinds"]) == ["CappedTargetWarning"]
    fitted = r_api.fit(x, NAMES, labels, "yes", dict(options))
    exported = r_api.export(fitted["results"])
    for key in ("n", "capped", "hoeffding", "binomial"):  # the same split and counts as the fit
        np.testing.assert_array_equal(check["anchor"][key], exported["anchor"][key])
    with pytest.raises(DataError, match="random_state"):
        r_api.anchor_check(x, NAMES, labels, "yes", {"tpr_min": 0.9})


def test_python_fit_warns_about_a_capped_target_before_the_solve(data, monkeypatch):
    import csvm_stats.models.model as model_module
    from csvm_stats.inference.bounds import CappedTargetWarning

    x, labels = data
    seen_before_solve: list[bool] = []
    solve = model_module.fit_csvm

    def recording_solve(*args, **kwargs):
        seen_before_solve.append(any(issubclass(w.category, CappedTargetWarning) for w in caught))
        return solve(*args, **kwargs)

    monkeypatch.setattr(model_module, "fit_csvm", recording_solve)
    model = CSVM(pd.Series(labels), pd.DataFrame(x, columns=NAMES), positive="yes", tpr_min=0.9)
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(random_state=3, time_limit=20)
    assert seen_before_solve == [True]
    assert "n = 150 anchor points" in str(next(w.message for w in caught if w.category is CappedTargetWarning))


def test_anchor_check_multiclass_reports_a_capped_class_before_the_solve():
    from csvm_stats.multiclass.r_entry import anchor_check_multiclass, export_multiclass, fit_multiclass

    rng = np.random.default_rng(0)
    x = rng.normal(size=(150, 2)) + np.repeat([[0, 0], [3, 0], [0, 3]], 50, axis=0)
    labels = np.repeat(["a", "b", "c"], 50)
    options = {"random_state": 1.0, "bound": "binomial", "time_limit": 20.0}
    check = anchor_check_multiclass(x, ["u", "v"], labels, ["c"], [0.95], dict(options))
    assert list(check["anchor"]["rate"]) == ["c"] and bool(check["anchor"]["capped"][0])
    assert int(check["anchor"]["binomial"][0]) == 59 and list(check["warning_kinds"]) == ["CappedTargetWarning"]
    exported = export_multiclass(fit_multiclass(x, ["u", "v"], labels, ["c"], [0.95], dict(options))["results"])
    for key in ("rate", "n", "capped"):  # the same split and counts as the fit
        np.testing.assert_array_equal(check["anchor"][key], exported["anchor"][key])


@pytest.mark.parametrize("classes", [2, 3])
def test_the_clock_option_reaches_the_sparse_solves(classes, monkeypatch):
    """R's ``clock = "cpu"`` crosses to every solve of a sparse fit (two classes and a multiclass gene list)."""
    import csvm_stats.sparse.model as sparse_model

    clocks = []
    real_solve = sparse_model.solve

    def spy(problem, solver, options):
        clocks.append(options.clock)
        return real_solve(problem, solver, options)

    monkeypatch.setattr(sparse_model, "solve", spy)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(150, 4))
    labels = np.array(["a", "b", "c"])[np.argmax(x[:, :classes], axis=1)]
    options = {"bound": "binomial", "random_state": 1.0, "time_limit": 20.0, "max_features": 2, "clock": "cpu"}
    if classes == 2:
        fitted = r_api.fit(x, ["u", "v", "w", "z"], labels, "b", {**options, "tpr_min": 0.8})
    else:
        from csvm_stats.multiclass.r_entry import fit_multiclass

        fitted = fit_multiclass(x, ["u", "v", "w", "z"], labels, ["a"], [0.8], options)
    assert fitted["results"].engine_fit.selected.size <= 2
    assert clocks and set(clocks) == {"cpu"}
    with pytest.raises(DataError, match="clock must be one of"):
        r_api.fit(x, ["u", "v", "w", "z"], labels, "b", {**options, "clock": "sundial"})


def test_sample_roles_follow_the_split_row_by_row(results, exported):
    """Each row's sample, in the data's order, is the split's: I is training, J anchor, H held-out."""
    roles = exported["sample_roles"]
    assert roles.shape == (160,) and set(roles) == {"training", "anchor", "held-out"}
    for role, rows in zip(("training", "anchor", "held-out"), (results.split.train, results.split.anchor,
                                                                results.split.holdout)):
        assert (roles[rows] == role).all() and (roles == role).sum() == rows.size


def test_sample_roles_use_the_results_own_series_when_there_is_one(results):
    """When the results carry ``sample_roles`` (a Series indexed like the data), the export takes it as is."""
    from csvm_stats.interfaces.r_values import sample_roles

    class WithRoles:
        model = results.model
        split = results.split
        sample_roles = pd.Series(["anchor"] * 159 + [None])

    assert list(sample_roles(WithRoles())) == ["anchor"] * 159 + [""]
    WithRoles.sample_roles = pd.Series(["anchor"] * 3)
    with pytest.raises(DataError, match="3 values for 160 rows"):
        sample_roles(WithRoles())


def test_exported_probability_rule_counts_where_the_rule_and_p_disagree(data, results, exported):
    """H has 40 points: the cross-fitted route; P comes from the model beside the rule, so no threshold."""
    x, _ = data
    assert results.calibration.method == "cross-fitted"
    assert np.isnan(exported["probability_threshold"])
    assert exported["calibration"].startswith("logistic model, cross-fitted on 160 out-of-fold scores")
    p = results.predict_proba(x).to_numpy()
    called = results.predict(x).to_numpy() == "yes"
    disagree = int(np.sum(called != (p >= 0.5)))
    assert f"differs from the more probable class (P >= 1/2) on {disagree} of them" in exported["probability_rule"]


def test_call_hands_over_every_warning_with_the_value(data):
    """r_api.call: the value, and the warnings both the call's own recording and its parts raised."""
    x, labels = data
    options = {"tpr_min": 0.95, "bound": "hoeffding", "random_state": 1.0, "time_limit": 20.0}
    fitted = r_api.call("fit", x, NAMES, labels, "yes", options)
    assert set(fitted) == {"value", "warnings", "warning_kinds"} and set(fitted["value"]) == {"results"}
    assert list(fitted["warning_kinds"]) == ["CappedTargetWarning"]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing escapes call(): the calibration's refits warn inside it
        exported = r_api.call("export", fitted["value"]["results"])
    assert exported["value"]["api_version"] == 3
    assert exported["warnings"].dtype.kind == "U" and len(exported["warnings"]) == len(exported["warning_kinds"])
    assert set(exported["warning_kinds"]) <= {"CappedTargetWarning", "DegenerateRuleWarning"}
    with pytest.raises(DataError, match="unknown entry point 'eval'"):
        r_api.call("eval", "1 + 1")
