"""The two-class CSVM report (and :class:`Summary`, the object every report is).

:class:`Summary` (:mod:`csvm_stats.reporting.document`) is a statsmodels
``summary2.Summary`` with captions and text sections. :func:`build_summary`
fills it for a two-class fit in the words of clinical reports (caret's
``confusionMatrix``, epiR's ``epi.tests``): the requirements and whether the
held-out sample certifies them, one line per sample saying what it is for,
sensitivity, specificity, accuracy, balanced accuracy, PPV and NPV with
exact (Clopper-Pearson) intervals, the solver in plain words (proven optimal
or not, the time limit and the time taken). The detail view (``detail=True``)
adds the internal terms: the anchor counts and margin, the Bonferroni-joint
bounds, the solver's name, clock option, own times, formulation, objective
and nodes, the probability model's recalibration, the kernel solution's ranks. Built with ``timing=False`` the report
contains nothing that changes between identical fits (no times, no node
count), so its text can be compared with a stored golden copy.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import numpy as np
import pandas as pd

from csvm_stats.inference.certification import (
    NO_HOLDOUT,
    ORDER_STATISTIC,
    RATE_UNITS,
    level_percent,
)
from csvm_stats.inference.bounds import clopper_pearson_lower
from csvm_stats.models.fitstate import ModelSpec
from csvm_stats.models.results_base import GUARANTEE_HOLDOUT_TEXT
from csvm_stats.optimization.engine import CSVMFit
from csvm_stats.optimization.solvers.base import SolveRecord
from csvm_stats.preprocessing.design import SampleSplit
from csvm_stats.probability.fit_calibration import NO_CALIBRATION_DESCRIPTION, Calibration
from csvm_stats.reporting.document import Summary
from csvm_stats.reporting.plain import (
    capped_text,
    certification_text,
    count_text,
    fmt,
    key_values,
    lower_text,
    samples_section,
    solver_table,
    upper_text,
)

__all__ = ["Summary", "SummarySource", "build_summary", "RATE_WORDS"]

#: The rates' names in the report (caret / epiR wording with the machine-learning name beside it).
RATE_WORDS = {
    "tpr": "Sensitivity (TPR)",
    "tnr": "Specificity (TNR)",
    "acc": "Accuracy",
    "bacc": "Balanced accuracy",
    "ppv": "PPV (precision)",
    "npv": "NPV",
}
#: The rates' names inside sentences.
RATE_NAMES_LOWER = {"tpr": "sensitivity", "tnr": "specificity", "acc": "accuracy", "bacc": "balanced accuracy"}


class SummarySource(Protocol):
    """What :func:`build_summary` reads of a fit (:class:`~csvm_stats.models.results.CSVMResults` has it all)."""

    model: ModelSpec
    split: SampleSplit
    engine_fit: CSVMFit
    umbrella: Any
    random_state: int
    adjusted: dict[str, Any]
    fit_options: Any

    @property
    def solver(self) -> SolveRecord: ...
    @property
    def is_linear(self) -> bool: ...
    @property
    def probability_variant(self) -> str: ...
    @property
    def ready_calibration(self) -> Calibration | None: ...
    @property
    def rates(self) -> pd.DataFrame: ...
    @property
    def predictive_values(self) -> pd.DataFrame: ...
    @property
    def reported_rates(self) -> tuple[str, ...]: ...
    @property
    def heldout_confusion(self) -> pd.DataFrame: ...
    @property
    def statements(self) -> pd.Series: ...
    @property
    def joint_statement(self) -> str: ...
    @property
    def params(self) -> pd.Series: ...
    @property
    def params_standardized(self) -> pd.Series | None: ...
    @property
    def support(self) -> pd.Series: ...
    @property
    def guarantee_cost(self) -> pd.Series | None: ...
    @property
    def degenerate(self) -> list[str]: ...
    @property
    def warnings(self) -> list[str]: ...


# ---------------------------------------------------------------------- model and samples
def _requirement_line(res: SummarySource) -> str:
    targets = res.model.targets
    if not targets:
        return "none (nothing was required, so nothing is certified)"
    return ", ".join(f"{RATE_NAMES_LOWER[r]} >= {p0:g}" for r, p0 in targets.items())


def _model_table(res: SummarySource, detail: bool) -> pd.DataFrame:
    model = res.model
    pairs: dict[str, Any] = {
        "Response": model.coding.name or "endog",
        "Formula": model.formula.formula if model.formula else "(arrays)",
        "Positive class": repr(model.coding.positive),
        "Negative class": repr(model.coding.negative),
        "Observations": len(model.y),
        "Requirements": _requirement_line(res),
        "Confidence level": level_percent(model.alpha),
        "Random state (seed)": res.random_state,
        "Kernel": res.engine_fit.feature_map.kernel.describe(),
        "C": f"{model.C:g}",
    }
    if res.umbrella is not None:
        pairs["Intercept"] = (f"set on the held-out {RATE_UNITS[res.umbrella.rate]} so that the "
                              f"{RATE_NAMES_LOWER[res.umbrella.rate]} is guaranteed (guarantee mode)")
    if detail:
        pairs["Standardised columns"] = model.standardize
        pairs["Margin (bound)"] = model.bound
        pairs["alpha"] = repr(float(model.alpha))
        if res.umbrella is None:
            pairs["Intercept"] = "CSVM optimum"
    pairs.update(_probability_rows(res, detail))
    return key_values(pairs)


def _probability_rows(res: SummarySource, detail: bool) -> dict[str, str]:
    """Which method gives predict_proba, on how many points, and the class rule on the probability scale."""
    ensembles = {"EBB probabilities": f"{res.probability_variant.upper()} with "
                                      f"predict_proba(method='{res.probability_variant}')"}
    calibration = res.ready_calibration
    if calibration is None:
        return {"Probabilities": NO_CALIBRATION_DESCRIPTION, **ensembles}
    recalibration = calibration.recalibration_line()
    return {
        "Probabilities": calibration.describe(),
        **({"Recalibration": recalibration} if recalibration and detail else {}),
        "Rule as probability": calibration.rule_line(repr(res.model.coding.positive)),
        **(ensembles if detail else {}),
    }


def _samples(res: SummarySource) -> dict[str, str]:
    y, coding = res.model.y, res.model.coding

    def describe(idx: np.ndarray) -> str:
        return f"{idx.size} rows ({int(np.sum(y[idx] > 0))} {coding.positive!r}, {int(np.sum(y[idx] < 0))} {coding.negative!r})"

    umbrella = res.umbrella
    role = None if umbrella is None else GUARANTEE_HOLDOUT_TEXT["binary"].format(
        units=f"{RATE_UNITS[umbrella.rate]} ({(coding.positive if umbrella.rate == 'tpr' else coding.negative)!r})",
        rate=RATE_NAMES_LOWER[umbrella.rate])
    return samples_section(res.split, describe, role)


# ---------------------------------------------------------------------- rates
def _rate_table(res: SummarySource, detail: bool) -> pd.DataFrame:
    level = level_percent(res.model.alpha)
    rows = {}
    for rate, r in res.rates.iterrows():
        guaranteed = r["method"] == ORDER_STATISTIC
        row = {
            "required": fmt(r["target"], 3),
            "requirement sample": count_text(r["anchor_correct"], r["anchor_n"], r["anchor_rate"]),
            "held-out": count_text(r["heldout_correct"], r["heldout_n"], r["heldout_rate"]),
            f"lower {level}": repr(float(r["lower"])) if guaranteed else lower_text(r["lower"]),
            f"upper {level}": upper_text(r["upper"]),
            "certified": fmt(r["certified"]),
        }
        if detail:
            row["required count"] = ("" if r["required"] is pd.NA
                                     else f"{r['required']}/{r['anchor_n']} ({r['adjusted']:.3f})")
            row["met"] = fmt(r["met"])
            row["joint lower"] = repr(float(r["joint_lower"])) if guaranteed else lower_text(r["joint_lower"])
            row["method"] = r["method"]
        rows[RATE_WORDS[str(rate)]] = row
    for name, r in res.predictive_values.iterrows():
        row = {"required": "", "requirement sample": "",
               "held-out": count_text(r["heldout_correct"], r["heldout_n"], r["heldout_rate"]),
               f"lower {level}": lower_text(r["lower"]), f"upper {level}": upper_text(r["upper"]), "certified": ""}
        if detail:
            row.update({"required count": "", "met": "", "joint lower": "", "method": r["method"]})
        rows[RATE_WORDS[str(name)]] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def _confusion_table(res: SummarySource) -> pd.DataFrame:
    return res.heldout_confusion.astype(str)


def _requirements_section(res: SummarySource) -> dict[str, str]:
    """One verdict per requirement, or what a fit without requirements can and cannot say."""
    rates = res.rates
    if not res.model.targets:
        return {"None": "nothing was required of this fit (an ordinary SVM), so there is nothing to certify; the "
                        "held-out intervals below describe the rule's rates."}
    out = {}
    for rate in res.model.targets:
        out[RATE_WORDS[rate]] = certification_text(RATE_NAMES_LOWER[rate], rates.loc[rate], res.model.alpha)
    return out


def _statements(res: SummarySource, detail: bool) -> dict[str, str]:
    statements = {RATE_WORDS[str(rate)]: str(text) for rate, text in res.statements.items()}
    if len(res.reported_rates) > 1:
        statements["Jointly"] = res.joint_statement
    return statements


# ---------------------------------------------------------------------- coefficients
def _coefficient_table(res: SummarySource) -> pd.DataFrame:
    std = res.params_standardized
    return pd.DataFrame(
        {"coef": [fmt(v) for v in res.params], "coef (standardised)": [fmt(v) for v in std]},
        index=res.params.index,
    )


def _kernel_table(res: SummarySource, detail: bool) -> pd.DataFrame:
    support = res.support
    if detail:
        return key_values(support.to_dict())
    return key_values({"support vectors (training rows on or inside the margin)":
                       support["support vectors (training, y f(x) <= 1)"]})


# ---------------------------------------------------------------------- notes
def _plain_constant(message: str) -> str:
    """A constant-rule message without the coefficient vector's notation."""
    return re.sub(r"^w is numerically zero \(.*?\): this classifier", "The fitted rule ignores the predictors: "
                  "this classifier", message)


def _small_heldout_notes(res: SummarySource) -> list[str]:
    """Requirements the held-out sample is too small to certify even with every point correct."""
    notes = []
    for rate, p0 in res.model.targets.items():
        row = res.rates.loc[rate]
        n = int(row["heldout_n"])
        if row["method"] in (ORDER_STATISTIC, NO_HOLDOUT) or n == 0:
            continue
        best = clopper_pearson_lower(n, n, res.model.alpha)
        if best < p0:
            notes.append(
                f"The held-out sample has only {n} {RATE_UNITS[rate]}: even with all of them correct it would "
                f"support a {RATE_NAMES_LOWER[rate]} of only >= {lower_text(best)} at "
                f"{level_percent(res.model.alpha)}, below the required {p0:g}. It is too small to certify this "
                "requirement; enlarge the held-out share (fractions=) or the data."
            )
    return notes


def _notes(res: SummarySource, detail: bool) -> list[str]:
    model, level = res.model, level_percent(res.model.alpha)
    notes = []
    if res.split.holdout.size == 0:
        notes.append("There is no held-out sample, so nothing can be said about new data: no interval, no "
                     "certification. Refit with a held-out share (fractions=) to obtain them.")
    else:
        notes.append(
            f"Lower and upper ends are exact (Clopper-Pearson) confidence bounds at {level}, each holding "
            "separately; a required rate gets a one-sided lower bound, the others two-sided intervals."
        )
        pv = res.predictive_values
        prevalence = pv["prevalence"].iloc[0]
        if res.umbrella is not None:
            notes.append("In guarantee mode the held-out rows of the guaranteed class set the intercept, so the "
                         "accuracy, balanced accuracy, PPV and NPV get no interval: the held-out sample is not "
                         "independent of the rule for them.")
        elif not np.isnan(prevalence):
            notes.append(
                f"PPV and NPV depend on the prevalence: these are at the held-out sample's share of "
                f"{model.coding.positive!r}, {prevalence:.1%} (the split keeps the data's); in a population with "
                "another prevalence they differ, while the sensitivity and specificity do not."
            )
    notes.append(
        "The requirement-sample rates are in-sample: the rule was chosen to meet the requirements there, so they "
        "are not evidence about new data. Only the held-out figures are."
        if not detail else
        "The anchor-sample rates are in-sample: the hyperplane was chosen to satisfy them, so the margin "
        f"({model.bound}) does not make them a confidence statement. Only the held-out statements hold."
    )
    notes += _small_heldout_notes(res)
    cost = res.guarantee_cost
    if cost is not None:
        notes.append(
            f"Guarantee mode moved the intercept from {cost['csvm_intercept']:.4f} to {cost['guarantee_intercept']:.4f}; "
            f"cost on the other class: held-out {RATE_NAMES_LOWER[cost['rate']]} {cost['correct_csvm_intercept']}/{cost['n']} "
            f"with the CSVM intercept, {cost['correct_guarantee_intercept']}/{cost['n']} with the guarantee intercept."
        )
    calibration = res.ready_calibration
    if calibration is not None:
        notes.append(calibration.rule_statement(repr(model.coding.positive)) + ".")
    if detail:
        return notes + list(res.warnings)
    units = {"tpr": f"{model.coding.positive!r} rows", "tnr": f"{model.coding.negative!r} rows", "acc": "rows"}
    notes += [_plain_constant(m) for m in res.degenerate]
    notes += [capped_text(RATE_NAMES_LOWER[rate], adj, units[rate]) for rate, adj in res.adjusted.items() if adj.capped]
    own = set(res.degenerate) | {w for w in res.warnings if "capped at 1" in w}
    return notes + [w for w in res.warnings if w not in own]


def build_summary(
    res: SummarySource, *, timing: bool = True, detail: bool = False,
    coefficients: tuple[str, pd.DataFrame] | None = None, selection_notes: tuple[str, ...] = (),
    title: str = "Constrained SVM (CSVM) Results",
) -> Summary:
    """The CSVM report (module docstring).

    ``coefficients`` = (caption, table) replaces the table of all coefficients
    (a sparse CSVM lists its selected features there); ``selection_notes``
    are footer notes on how they were selected.
    """
    summary = Summary(title)
    summary.add_df(_model_table(res, detail), header=False, align="l", caption="Model and data")
    summary.add_paragraphs("Samples", _samples(res))
    summary.add_df(solver_table(res.solver, res.fit_options, timing=timing, detail=detail,
                                screening=getattr(res.engine_fit, "screening", None)), header=False, align="l",
                   caption="Solver")
    summary.add_paragraphs("Requirements", _requirements_section(res))
    summary.add_df(_rate_table(res, detail),
                   caption=f"Rates (positive class {res.model.coding.positive!r}; held-out = evidence, "
                           "requirement sample = in-sample)")
    if res.split.holdout.size:
        summary.add_df(_confusion_table(res), caption="Held-out confusion matrix (rows: true class)")
    summary.add_paragraphs("Confidence statements", _statements(res, detail))
    if coefficients is not None:
        summary.add_df(coefficients[1], caption=coefficients[0])
    elif res.is_linear:
        summary.add_df(_coefficient_table(res), caption="Coefficients (decision f(x) >= 0 means positive)")
    else:
        summary.add_df(_kernel_table(res, detail), header=False, align="l", caption="Kernel solution")
    for note in (*_notes(res, detail), *selection_notes):
        summary.add_text(note)
    return summary
