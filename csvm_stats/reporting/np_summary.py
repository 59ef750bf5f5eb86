"""The report of a Neyman-Pearson route, built from the CSVM report's parts.

:func:`build_np_summary` fills a :class:`~csvm_stats.reporting.summary.Summary`
(statsmodels' ``summary2.Summary``) with the model and data, the rate table
(the CSVM's columns and number formats: observed counts, bounds rounded
outwards, the guaranteed target as given), the held-out confusion matrix, the
confidence statements and footer notes. The cells are formatted by the CSVM
report's own helpers and the rates carry the CSVM report's names
(``Sensitivity (TPR)``, ..., :data:`~csvm_stats.reporting.summary.RATE_WORDS`),
so both routes read alike; two classes also show PPV and NPV as point values
(the held-out rows set the threshold, so they get no interval, as in the
CSVM's guarantee mode). ``detail=True`` adds the estimator's pipeline, the
score method and alpha.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.inference.certification import ORDER_STATISTIC, level_percent, ordinal
from csvm_stats.models.learners import describe_estimator
from csvm_stats.reporting.document import Summary
from csvm_stats.reporting.plain import count_text, fmt, key_values, lower_text, upper_text
from csvm_stats.reporting.summary import RATE_NAMES_LOWER, RATE_WORDS

#: The named learners (:data:`csvm_stats.models.learners.LEARNERS`) in words.
LEARNER_WORDS = {
    "StandardScaler -> LogisticRegression": "logistic regression (predictors standardised)",
    "StandardScaler -> SVC": "support vector machine (SVC, predictors standardised)",
    "HistGradientBoostingClassifier": "gradient boosting (HistGradientBoostingClassifier)",
}


def _rate_label(res: Any, rate: Any) -> str:
    """A rate's row name: the CSVM report's words for two classes, the class label for several."""
    return str(rate) if res.model.multiclass else RATE_WORDS.get(str(rate), str(rate).upper())


def _model_table(res: Any, timing: bool, detail: bool) -> pd.DataFrame:
    model, split = res.model, res.split
    y = model.y
    fit_rows = np.concatenate([split.train, split.anchor])
    if model.multiclass:
        requirement = ", ".join(f"recall of {model.coding.levels[k]!r} >= {p:g}" for k, p in model.recall_min.items())
        classes = {"Classes": ", ".join(repr(c) for c in model.coding.levels)}
        rule = f"argmax of the class scores, constrained classes shifted by {res.shift.shift:+.4g} (set on H)"
    else:
        requirement = ", ".join(f"{RATE_NAMES_LOWER.get(rate, rate)} >= {p:g}" for rate, p in model.targets.items())
        classes = {"Positive class": repr(model.coding.positive), "Negative class": repr(model.coding.negative)}
        rule = (f"positive when score >= {res.umbrella.threshold:.6g}: the {ordinal(res.umbrella.rank)} smallest of "
                f"{res.umbrella.n} held-out scores (order statistic)")
        if res.umbrella.rate == "tnr":
            rule = (f"negative when score <= {res.umbrella.threshold:.6g}: the {ordinal(res.umbrella.rank)} largest of "
                    f"{res.umbrella.n} held-out scores (order statistic)")
    calibration = res.ready_calibration
    pairs: dict[str, Any] = {
        "Response": model.coding.name or "endog",
        "Formula": model.formula.formula if model.formula else "(arrays)",
        **classes,
        "Classifier": LEARNER_WORDS.get(describe_estimator(model.estimator), describe_estimator(model.estimator)),
    }
    if detail:
        pairs["Estimator"] = describe_estimator(model.estimator)
        pairs["Score"] = model.method
    pairs.update({
        "Requirement": requirement,
        "Observations": len(y),
        "Training sample (I u J)": fit_rows.size,
        "Held-out sample H": split.holdout.size,
        "Random state (seed)": res.random_state,
        "Confidence level": level_percent(model.alpha),
        **({"alpha": repr(float(model.alpha))} if detail else {}),
        "Threshold": rule,
        "Probabilities": calibration.describe() if calibration is not None
        else "Venn-Abers, cross-fitted (computed at the first predict_proba)",
    })
    if timing:
        if detail:
            pairs["Fit time (CPU s)"] = f"{res.fit_time:.2f}"
        else:
            pairs["Time taken"] = f"{res.fit_time:.2f} s of computing (CPU) time"
    return key_values(pairs)


def _rate_table(res: Any) -> pd.DataFrame:
    level = level_percent(res.model.alpha)
    rows = {}
    for rate, r in res.rates.iterrows():
        upper = r["upper"] if "upper" in r.index else np.nan
        rows[_rate_label(res, rate)] = {
            "target": fmt(r["target"], 3),
            "held-out": count_text(r["heldout_correct"], r["heldout_n"], r["heldout_rate"]),
            # a guaranteed rate's lower end is its target, exactly as required (order statistic)
            f"lower {level}": repr(float(r["target"])) if r["method"] == ORDER_STATISTIC else lower_text(r["lower"]),
            f"upper {level}": upper_text(upper),
            "method": r["method"],
        }
    if not res.model.multiclass:  # PPV and NPV: point values only (H set the threshold)
        for name, r in res.predictive_values.iterrows():
            rows[RATE_WORDS[str(name)]] = {
                "target": "", "held-out": count_text(r["heldout_correct"], r["heldout_n"], r["heldout_rate"]),
                f"lower {level}": lower_text(r["lower"]), f"upper {level}": upper_text(r["upper"]),
                "method": r["method"],
            }
    return pd.DataFrame.from_dict(rows, orient="index")


def _predictive_note(res: Any) -> str | None:
    """Why PPV and NPV have no interval, and the prevalence they are at (two classes)."""
    if res.model.multiclass:
        return None
    prevalence = res.predictive_values["prevalence"].iloc[0]
    at = "" if np.isnan(prevalence) else (
        f" They are at the held-out sample's share of {res.model.coding.positive!r}, {prevalence:.1%}; in a "
        "population with another prevalence they differ.")
    return ("PPV and NPV are point values on the held-out sample without interval: its rows of the guaranteed "
            "class set the threshold, so it is not independent of the classifier for them (as for the accuracy "
            "and balanced accuracy)." + at)


def build_np_summary(res: Any, *, timing: bool = True, detail: bool = False) -> Summary:
    """The route's report: model and data, rates with statements, confusion matrix, notes."""
    summary = Summary("Neyman-Pearson route Results")
    summary.add_df(_model_table(res, timing, detail), header=False, align="l", caption="Model and data")
    summary.add_df(_rate_table(res), caption="Rates on the held-out sample H")
    summary.add_df(res.heldout_confusion.astype(str), caption="Held-out confusion matrix (rows: true class)")
    statements = {_rate_label(res, k): str(v) for k, v in res.statements.items()}
    statements["Joint"] = res.joint_statement
    summary.add_paragraphs("Confidence statements", statements)
    guaranteed = [str(k) if res.model.multiclass else RATE_NAMES_LOWER.get(str(k), str(k))
                  for k, r in res.rates.iterrows() if r["method"] == ORDER_STATISTIC]
    summary.add_text(
        "The estimator was fitted on the training rows only; the threshold was set on the held-out points of the "
        f"guaranteed class(es) ({', '.join(guaranteed)}) by the order statistic (Tong, Feng and Li 2018), so the "
        "guarantee is about the true rate, not only these data. Each other statement holds separately at its level."
    )
    note = _predictive_note(res)
    if note:
        summary.add_text(note)
    calibration = res.ready_calibration
    if calibration is not None and not res.model.multiclass:
        summary.add_text(calibration.rule_statement(repr(res.model.coding.positive)) + ".")
    for note in res.warnings:
        summary.add_text(note)
    return summary
