"""The summaries: golden texts (binary, multiclass, sparse, guarantee mode, detail view), renderings,
and what a summary says when little can be said (no requirement, tiny or empty held-out sample, constant rule)."""

from __future__ import annotations

import dataclasses
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from csvm_stats.inference.bounds import CappedTargetWarning
from csvm_stats.models.model import CSVM
from csvm_stats.reporting.summary import Summary

GOLDEN = Path(__file__).parent / "golden"
#: Exact and deterministic fits: SCIP, one thread, a gap it proves.
EXACT = {"solver": "scip", "time_limit": 60, "mip_gap": 1e-9, "threads": 1}


def _frame(n: int = 80, seed: int = 19) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sick = np.r_[np.ones(n // 2, dtype=bool), np.zeros(n // 2, dtype=bool)]
    return pd.DataFrame(
        {
            "outcome": pd.Categorical(np.where(sick, "case", "control"), categories=["control", "case"]),
            "age": np.round(rng.normal(50, 10, n) + 8 * sick, 1),
            "marker": np.round(rng.normal(0, 1, n) + 1.5 * sick, 2),
            "sex": rng.choice(["f", "m"], n),
        }
    )


def golden_results():
    """A small, well-separated problem whose optimum SCIP proves; fixed seed, one thread."""
    model = CSVM.from_formula("outcome ~ .", _frame(), tpr_min=0.8, bound="binomial", alpha=0.1)
    with pytest.warns(CappedTargetWarning, match="10 anchor points"):
        return model.fit(random_state=5, **EXACT)


def _quiet(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit()


def guarantee_results():
    model = CSVM.from_formula("outcome ~ .", _frame(200), tpr_min=0.8, bound="binomial")
    return _quiet(lambda: model.fit(random_state=2, guarantee=True, **EXACT))


def multiclass_results():
    rng = np.random.default_rng(4)
    n = 150
    kind = np.repeat(["ant", "bee", "wasp"], n // 3)
    centre = {"ant": (0.0, 0.0), "bee": (2.0, 0.0), "wasp": (1.0, 2.0)}
    xy = np.array([centre[k] for k in kind]) + rng.normal(size=(n, 2))
    frame = pd.DataFrame({"kind": kind, "x": xy[:, 0].round(2), "y": xy[:, 1].round(2),
                          "noise": rng.normal(size=n).round(2)})
    model = CSVM.from_formula("kind ~ .", frame, recall_min={"bee": 0.7}, bound="none")
    return _quiet(lambda: model.fit(random_state=1, **EXACT))


def sparse_results():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(160, 8)).round(2)
    y = np.where(X[:, 0] + X[:, 1] + 0.8 * rng.normal(size=160) > 0, "yes", "no")
    model = CSVM(pd.Series(y, name="response"), X, tpr_min=0.8, bound="binomial", max_features=2, positive="yes")
    return _quiet(lambda: model.fit(random_state=1, **EXACT))


def without_versions(text: str) -> str:
    """The golden copies do not pin the solver's version (detail view's Backend line)."""
    return re.sub(r"^(Backend\s+scip).*$", r"\1", text, flags=re.MULTILINE)


def _matches_golden(text: str, name: str) -> None:
    path = GOLDEN / name
    text = without_versions(text)
    if os.environ.get("CSVM_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


# ---------------------------------------------------------------------- golden texts
def test_summary_text_matches_golden_copy():
    _matches_golden(golden_results().summary(timing=False).as_text(), "csvm_summary.txt")


def test_detail_view_matches_golden_copy():
    _matches_golden(golden_results().summary(timing=False, detail=True).as_text(), "csvm_summary_detail.txt")


def test_guarantee_summary_matches_golden_copy():
    _matches_golden(guarantee_results().summary(timing=False).as_text(), "guarantee_summary.txt")


def test_multiclass_summary_matches_golden_copy():
    _matches_golden(multiclass_results().summary(timing=False).as_text(), "multiclass_summary.txt")


def test_sparse_summary_matches_golden_copy():
    _matches_golden(sparse_results().summary(timing=False).as_text(), "sparse_summary.txt")


# ---------------------------------------------------------------------- the user's words
INTERNAL_TERMS = ("anchor point", "margin (", "joint lower", "BACC", "epigraph", "feature-map", "Formulation",
                  "Best bound", "Nodes", "branch-and-bound",
                  # solver and calibration jargon (review r10 F-jargon): only in the detail view
                  "clock=", "Solver time", "CPU time (s)", "Platt scaling", "beta calibration", "Recalibration",
                  "hoeffding allowance", "binomial allowance")


@pytest.mark.parametrize("make", [golden_results, guarantee_results, multiclass_results, sparse_results])
def test_default_view_keeps_internal_terms_out_and_detail_keeps_them(make):
    res = make()
    text = res.summary(timing=False).as_text()
    for term in INTERNAL_TERMS:
        assert term not in text, term
    assert "Requirement sample (J, anchor)" in text and "Held-out sample (H)" in text
    assert "Result" in text and "proven optimal" in text and "60 s of elapsed (wall-clock) time" in text
    assert not re.search(r"^Solver +scip", text, flags=re.MULTILINE)
    detail = res.summary(timing=False, detail=True).as_text()
    assert "Formulation" in detail and "joint lower" in detail and "Margin (bound)" in detail
    assert "clock='wall'" in detail and re.search(r"^Solver +scip", detail, flags=re.MULTILINE)


def test_rates_in_clinical_words_with_exact_intervals_and_certification():
    res = golden_results()
    text = res.summary(timing=False).as_text()
    for label in ("Sensitivity (TPR)", "Specificity (TNR)", "Accuracy", "Balanced accuracy", "PPV (precision)", "NPV"):
        assert re.search(rf"^{re.escape(label)} ", text, flags=re.MULTILINE), label
    assert "certified" in text and "depend on the prevalence" in text
    pv = res.predictive_values
    c = res.confusion_matrix("holdout")
    tp, fp = c.loc["case", "case"], c.loc["control", "case"]
    assert (pv.loc["ppv", "heldout_correct"], pv.loc["ppv", "heldout_n"]) == (tp, tp + fp)
    from scipy import stats

    assert pv.loc["ppv", "lower"] == pytest.approx(stats.beta.ppf(0.05, tp, fp + 1))
    # the requirement is met on J (10/10) but not certified on H: said in words
    assert res.rates.loc["tpr", "met"] and not res.rates.loc["tpr", "certified"]
    flat = " ".join(text.split())
    assert "required 0.8; the held-out data support only >= 0.550 at 90%, so this requirement is NOT certified" in flat


def test_timing_view_gives_the_time_taken_in_words_and_the_detail_view_every_time():
    res = golden_results()
    text = res.summary().as_text()
    record = res.solver
    # one line: the whole fit's elapsed and CPU time; the solver's own times only in the detail view
    taken = re.search(r"^Time taken +(\S+) s elapsed, (\S+) s of computing \(CPU\) time$", text, flags=re.MULTILINE)
    assert taken and taken.groups() == (f"{record.fit_wall_time:.2f}", f"{record.fit_cpu_time:.2f}")
    assert "60 s of elapsed (wall-clock) time" in text and "Solver time" not in text and "CPU time (s)" not in text
    detail = res.summary(detail=True).as_text()
    assert "CPU time (s)" in detail and "Wall time (s)" in detail and "(clock='wall')" in detail
    assert f"{record.cpu_time:.2f} CPU, {record.wall_time:.2f} wall (the optimisation alone" in detail
    assert "Time taken" not in res.summary(timing=False).as_text()


def test_recalibration_only_in_the_detail_view_and_no_bare_zero_or_one_probability():
    res = golden_results()
    text = " ".join(res.summary(timing=False).as_text().split())
    detail = " ".join(res.summary(timing=False, detail=True).as_text().split())
    assert "Recalibration" not in text and "Recalibration beta calibration of the score" in detail
    # the largest fitted P of a 'case' call is 1 - 1e-5 or so: printed ">0.999", never "1" (reads as certainty)
    assert "'case' points with P from 0.184 to >0.999" in text
    assert not re.search(r"P from (0|1) |to (0|1) ", text)


def test_probability_text_never_prints_a_bare_zero_or_one():
    from csvm_stats.probability.fit_calibration import probability_text

    assert probability_text(7e-13) == "<0.001" and probability_text(0.0) == "<0.001"
    assert probability_text(0.99995) == ">0.999" and probability_text(1.0) == ">0.999"
    assert probability_text(0.312) == "0.312" and probability_text(0.001) == "0.001"


def test_guarantee_mode_samples_line_says_the_heldout_rows_set_the_intercept():
    text = " ".join(guarantee_results().summary(timing=False).as_text().split())
    assert "never used to fit the rule" not in text
    assert ("Held-out sample (H): 50 rows (25 'case', 25 'control'); its positives ('case') set the intercept "
            "(guarantee mode), so the sensitivity they certify holds by construction (order statistic), and the "
            "accuracy, balanced accuracy, PPV and NPV get no interval") in text
    # without guarantee mode the held-out sample is still described as never used
    assert "never used to fit the rule" in " ".join(golden_results().summary(timing=False).as_text().split())


def test_multiclass_guarantee_samples_line_and_no_overall_interval():
    rng = np.random.default_rng(4)
    n = 150
    kind = np.repeat(["ant", "bee", "wasp"], n // 3)
    centre = {"ant": (0.0, 0.0), "bee": (2.0, 0.0), "wasp": (1.0, 2.0)}
    xy = np.array([centre[k] for k in kind]) + rng.normal(size=(n, 2))
    data = pd.DataFrame({"kind": kind, "x": xy[:, 0], "y": xy[:, 1]})
    model = CSVM.from_formula("kind ~ .", data, recall_min={"bee": 0.7}, bound="none", fractions=(0.4, 0.2, 0.4))
    res = _quiet(lambda: model.fit(random_state=1, guarantee=True, **EXACT))
    text = " ".join(res.summary(timing=False).as_text().split())
    assert "never used to fit the rule" not in text
    assert "its rows of the guaranteed class(es) set the offsets (guarantee mode)" in text
    overall = res.overall_rates
    assert overall["lower"].isna().all() and (overall["method"] == "none (H set the rule)").all()
    assert "Accuracy: No interval: in guarantee mode" in text


# ---------------------------------------------------------------------- what cannot be said
def test_no_requirement_says_nothing_is_certified():
    res = _quiet(lambda: CSVM.from_formula("outcome ~ .", _frame(), alpha=0.1).fit(random_state=5, **EXACT))
    text = " ".join(res.summary(timing=False).as_text().split())
    assert "Requirements none (nothing was required, so nothing is certified)" in text
    assert "nothing was required of this fit (an ordinary SVM), so there is nothing to certify" in text
    assert res.rates["certified"].isna().all() and res.requirements.empty


def test_multiclass_without_requirement_says_so():
    rng = np.random.default_rng(5)
    kind = rng.choice(["ant", "bee", "wasp"], 150)
    frame = pd.DataFrame({"kind": kind, "x": rng.normal(size=150) + (kind == "bee"), "y": rng.normal(size=150)})
    res = _quiet(lambda: CSVM.from_formula("kind ~ .", frame).fit(random_state=5, **EXACT))  # several classes, none required
    text = " ".join(res.summary(timing=False).as_text().split())
    assert "nothing was required of this fit, so there is nothing to certify" in text


def test_tiny_heldout_sample_is_too_small_to_certify():
    model = CSVM.from_formula("outcome ~ .", _frame(), tpr_min=0.8, bound="none", fractions=(0.5, 0.4, 0.1))
    res = _quiet(lambda: model.fit(random_state=5, **EXACT))
    text = " ".join(res.summary(timing=False).as_text().split())
    assert "The held-out sample has only 4 positives" in text and "too small to certify" in text


def test_tiny_heldout_sample_in_a_multiclass_fit():
    frame = _frame()
    model = CSVM.from_formula("outcome ~ .", frame, recall_min={"case": 0.8}, bound="none", fractions=(0.5, 0.4, 0.1))
    res = _quiet(lambda: model.fit(random_state=5, **EXACT))
    text = " ".join(res.summary(timing=False).as_text().split())
    assert "The held-out sample has only 4 'case' rows" in text and "too small to certify" in text


def test_empty_heldout_sample_says_nothing_can_be_said():
    model = CSVM.from_formula("outcome ~ .", _frame(), tpr_min=0.8, bound="none", fractions=(0.6, 0.4, 0.0))
    res = _quiet(lambda: model.fit(random_state=5, **EXACT))
    text = " ".join(res.summary(timing=False).as_text().split())
    assert "There is no held-out sample, so nothing can be said about new data" in text
    assert "no held-out evidence" in text and "Held-out confusion matrix" not in text


def test_constant_rule_is_said_in_plain_words():
    from csvm_stats.models.results import CSVMResults

    res = golden_results()
    flat = dataclasses.replace(res.engine_fit, coef=res.engine_fit.coef * 1e-12, intercept=1.0)
    zero = CSVMResults(dataclasses.replace(res.state, engine_fit=flat))
    text = " ".join(zero.summary(timing=False).as_text().split())
    assert "The fitted rule ignores the predictors: this classifier calls every point positive ('case')" in text
    assert "w is numerically zero" not in text and "w is numerically zero" in " ".join(
        zero.summary(timing=False, detail=True).as_text().split())
    assert zero.predictive_values.loc["npv", "heldout_n"] == 0
    assert np.isnan(zero.predictive_values.loc["npv", "lower"])


# ---------------------------------------------------------------------- the object
def test_summary_renders_everywhere():
    res = golden_results()
    summary = res.summary()
    html = summary._repr_html_()
    assert html.startswith('<div class="csvm-summary">') and "<caption>Rates" in html
    latex = summary.as_latex()
    assert "\\begin{tabular}" in latex and "\\caption{Coefficients" in latex
    assert "With 90\\% confidence" in latex


def test_summary_object_layout():
    s = Summary("T")
    s.add_df(pd.DataFrame({"a": ["1", "22"]}, index=["x", "y"]), caption="numbers")
    s.add_paragraphs("words", {"P": "one paragraph"})
    s.add_text("careful & <sure>")
    text = s.as_text()
    assert text.splitlines()[0].strip() == "T" and "[1] careful & <sure>" in text
    assert "numbers" in text and "P: one paragraph" in text
    assert "careful &amp; &lt;sure&gt;" in s.as_html()
    assert "careful \\& <sure>" in s.as_latex()
    assert str(s) == text


def test_summary_is_a_statsmodels_summary():
    """A statsmodels user finds the object they know: tables, settings, extra_txt, add_dict, as_*."""
    from statsmodels.iolib.summary2 import Summary as StatsmodelsSummary

    summary = golden_results().summary(timing=False)
    assert isinstance(summary, StatsmodelsSummary)
    assert all(isinstance(t, pd.DataFrame) for t in summary.tables)
    assert len(summary.settings) == len(summary.tables)
    assert any(note.startswith("The requirement-sample rates") for note in summary.extra_txt)
    summary.add_dict({"extra key": 1.5})  # statsmodels' own method on our summary
    assert re.search(r"^extra key\s+1\.5000$", summary.as_text(), flags=re.MULTILINE)
    assert "extra key" in summary.as_html() and "extra key" in summary.as_latex()


@pytest.mark.parametrize("timing", [True, False])
def test_summary_names_the_positive_class(timing):
    text = golden_results().summary(timing=timing).as_text()
    assert re.search(r"^Positive class +'case'$", text, flags=re.MULTILINE)


# ---------------------------------------------------------------------- review r10: screening, overall rates
def test_screened_sparse_fit_is_not_headlined_proven_optimal():
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(120, 70)).round(2), columns=[f"g{j}" for j in range(70)])
    y = np.where(X["g0"] + X["g1"] + 0.5 * rng.normal(size=120) > 0, "yes", "no")
    model = CSVM(pd.Series(y, name="response"), X, tpr_min=0.8, bound="binomial", max_features=2, positive="yes")
    res = _quiet(lambda: model.fit(random_state=1, **EXACT))
    screening = res.engine_fit.screening
    assert not screening.exact and screening.n_features == 70
    k = screening.candidates.size
    for detail in (False, True):
        text = " ".join(res.summary(timing=False, detail=detail).as_text().split())
        result = re.search(r"Result (.*?) Time limit", text).group(1)
        assert result.startswith(f"proven optimal among the {k} screened columns only; a heuristic over all 70 "
                                 "columns"), result
    # without screening (8 columns) the Result row is unqualified
    text = " ".join(sparse_results().summary(timing=False).as_text().split())
    assert "Result proven optimal (relative gap" in text and "screened columns" not in text


def test_multiclass_overall_accuracy_and_balanced_accuracy_with_exact_intervals():
    from scipy import stats

    res = multiclass_results()
    overall = res.overall_rates
    c = res.confusion_matrix("holdout").to_numpy()
    n, k = int(c.sum()), int(np.trace(c))
    acc = overall.loc["accuracy"]
    assert (acc["heldout_n"], acc["heldout_correct"]) == (n, k)
    assert acc["heldout_rate"] == pytest.approx(k / n)
    alpha = res.model.alpha
    assert acc["lower"] == pytest.approx(stats.beta.ppf(alpha / 2, k, n - k + 1))
    assert acc["upper"] == pytest.approx(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    assert acc["method"] == "clopper-pearson 2-sided"
    # balanced accuracy: mean recall; its interval the mean of the K two-sided intervals at 1 - alpha/K
    K = c.shape[0]
    recalls = np.diag(c) / c.sum(axis=1)
    ends = [(stats.beta.ppf(alpha / K / 2, kk, nn - kk + 1) if kk else 0.0,
             stats.beta.ppf(1 - alpha / K / 2, kk + 1, nn - kk) if kk < nn else 1.0)
            for kk, nn in zip(np.diag(c), c.sum(axis=1))]
    bacc = overall.loc["balanced accuracy"]
    assert bacc["heldout_rate"] == pytest.approx(recalls.mean())
    assert bacc["lower"] == pytest.approx(np.mean([e[0] for e in ends]))
    assert bacc["upper"] == pytest.approx(np.mean([e[1] for e in ends]))
    assert bacc["method"] == f"mean of {K} recalls"
    text = " ".join(res.summary(timing=False).as_text().split())
    assert f"Accuracy {res.overall_rates.loc['accuracy', 'anchor_correct']}/39" in text
    assert f"{k}/{n} = {k / n:.3f}" in text
    assert "Accuracy: With 95% confidence the accuracy of this classifier lies between" in text
    assert "Balanced accuracy: With 95% confidence the balanced accuracy of this classifier lies between" in text
    assert "Accuracy" in " ".join(res.summary(timing=False, detail=True).as_text().split())
