"""The multiclass CSVM report, on the shared :class:`~csvm_stats.reporting.summary.Summary`.

Sections as for two classes (:mod:`csvm_stats.reporting.summary`): model and
data, one line per sample, the solver in plain words, each requirement's
verdict (certified on the held-out sample or not), the recall of every
class (requirement sample in-sample, held-out with its exact lower bound),
the accuracy and balanced accuracy over all classes with their exact held-out
intervals (:attr:`~csvm_stats.multiclass.results.MulticlassResults.overall_rates`),
the confidence statements, the held-out confusion matrix, and the
coefficients per class (a gene list's selected features only, with its
screening note); caveats as footer notes. ``detail=True`` adds the anchor
counts, the margin, the joint bounds and the solver's internals.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import pandas as pd

from csvm_stats.inference.bounds import clopper_pearson_lower
from csvm_stats.inference.certification import level_percent
from csvm_stats.models.results_base import GUARANTEE_HOLDOUT_TEXT
from csvm_stats.multiclass.certification import GuaranteeShift
from csvm_stats.multiclass.probability import MulticlassCalibration
from csvm_stats.optimization.solvers.base import SolveRecord
from csvm_stats.preprocessing.design import SampleSplit
from csvm_stats.probability.refits import DEFAULT_FOLDS
from csvm_stats.reporting.plain import (
    capped_text,
    certification_text,
    count_text,
    fmt,
    key_values,
    lower_text,
    samples_section,
    upper_text,
    screening_text,
    selection_caption,
    solver_table,
)
from csvm_stats.reporting.summary import Summary


class MulticlassSummarySource(Protocol):
    """What the report reads of a fit (:class:`~csvm_stats.multiclass.results.MulticlassResults` has it all)."""

    model: Any
    split: SampleSplit
    engine_fit: Any
    shift: GuaranteeShift | None
    random_state: int
    adjusted: dict[int, Any]
    fit_options: Any

    @property
    def classes(self) -> list[Any]: ...
    @property
    def solver(self) -> SolveRecord: ...
    @property
    def is_linear(self) -> bool: ...
    @property
    def ready_calibration(self) -> MulticlassCalibration | None: ...
    @property
    def probability_agreement(self) -> float: ...
    @property
    def rates(self) -> pd.DataFrame: ...
    @property
    def statements(self) -> pd.Series: ...
    @property
    def joint_statement(self) -> str: ...
    @property
    def confusion(self) -> pd.DataFrame: ...
    @property
    def params(self) -> pd.DataFrame: ...
    @property
    def params_standardized(self) -> pd.DataFrame | None: ...
    @property
    def selected_features(self) -> pd.DataFrame | None: ...
    @property
    def predictive_values(self) -> pd.DataFrame: ...
    @property
    def overall_rates(self) -> pd.DataFrame: ...
    @property
    def overall_statements(self) -> pd.Series: ...
    @property
    def guarantee_cost(self) -> pd.DataFrame | None: ...
    @property
    def warnings(self) -> list[str]: ...


def _requirement_line(res: MulticlassSummarySource) -> str:
    if not res.model.recall_min:
        return "none (nothing was required, so nothing is certified)"
    return ", ".join(f"recall of {res.classes[k]!r} >= {p0:g}" for k, p0 in sorted(res.model.recall_min.items()))


def _model_table(res: MulticlassSummarySource, detail: bool) -> pd.DataFrame:
    model = res.model
    pairs: dict[str, Any] = {
        "Response": model.coding.name or "endog",
        "Formula": model.formula.formula if model.formula else "(arrays)",
        "Classes": ", ".join(map(repr, res.classes)),
        "Rule": "the class with the largest score f_k(x) = w_k'x + b_k",
        "Observations": len(model.y),
        "Requirements": _requirement_line(res),
        "Confidence level": level_percent(model.alpha),
        "Random state (seed)": res.random_state,
        "Kernel": res.engine_fit.feature_map.kernel.describe(),
        "C": f"{model.C:g}",
    }
    if res.shift is not None:
        pairs["Offsets"] = ("set on the held-out sample so that the required recalls are guaranteed "
                            "(guarantee mode)")
    if detail:
        pairs["Big-M"] = "proven per row (exact model)" if model.big_m is None else f"min({model.big_m:g}, proven)"
        pairs["Standardised columns"] = model.standardize
        pairs["Margin (bound)"] = model.bound
        pairs["alpha"] = f"{model.alpha:g}"
        pairs["Offsets"] = "CSVM optimum" if res.shift is None else (
            f"CSVM optimum {res.shift.shift:+.4g} for the constrained classes (guarantee mode, set on held-out)")
    pairs["Probabilities"] = _probability_line(res)
    return key_values(pairs)


def _probability_line(res: MulticlassSummarySource) -> str:
    """The calibration of predict_proba, or the promise of a cross-fit (computed at the first predict_proba)."""
    calibration = res.ready_calibration
    if calibration is None:
        return f"softmax recalibration, cross-fitted ({DEFAULT_FOLDS} refits at the first predict_proba)"
    return calibration.describe()


def _samples(res: MulticlassSummarySource) -> dict[str, str]:
    y = res.model.y

    def describe(idx: np.ndarray) -> str:
        counts = np.bincount(y[idx], minlength=len(res.classes))
        return f"{idx.size} rows (" + ", ".join(f"{c!r}: {n}" for c, n in zip(res.classes, counts)) + ")"

    return samples_section(res.split, describe, None if res.shift is None else GUARANTEE_HOLDOUT_TEXT["multiclass"])


def _recall_table(res: MulticlassSummarySource, detail: bool) -> pd.DataFrame:
    level = level_percent(res.model.alpha)
    rows = {}
    precision = res.predictive_values
    for k, (label, r) in enumerate(res.rates.iterrows()):
        guaranteed = r["method"] == "order statistic"
        row = {
            "required": fmt(r["target"], 3),
            "requirement sample": count_text(r["anchor_correct"], r["anchor_n"], r["anchor_rate"]),
            "held-out": count_text(r["heldout_correct"], r["heldout_n"], r["heldout_rate"]),
            f"lower {level}": repr(float(r["lower"])) if guaranteed else lower_text(r["lower"]),
            "certified": fmt(r["certified"]),
        }
        pv = precision.iloc[k]
        row["precision (PPV)"] = count_text(pv["heldout_correct"], pv["heldout_n"], pv["heldout_rate"])
        row[f"PPV {level} interval"] = ("" if pd.isna(pv["lower"])
                                       else f"{lower_text(pv['lower'])}-{upper_text(pv['upper'])}")
        if detail:
            row["required count"] = ("" if r["required"] is pd.NA
                                     else f"{r['required']}/{r['anchor_n']} ({r['adjusted']:.3f})")
            row["met"] = fmt(r["met"])
            row["joint lower"] = repr(float(r["joint_lower"])) if guaranteed else lower_text(r["joint_lower"])
            row["method"] = r["method"]
        rows[str(label)] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def _overall_table(res: MulticlassSummarySource, detail: bool) -> pd.DataFrame:
    """Accuracy and balanced accuracy: requirement sample (in-sample), held-out, and the held-out interval."""
    level = level_percent(res.model.alpha)
    rows = {}
    for name, r in res.overall_rates.iterrows():
        row = {
            "requirement sample": count_text(r["anchor_correct"], r["anchor_n"], r["anchor_rate"]),
            "held-out": count_text(r["heldout_correct"], r["heldout_n"], r["heldout_rate"]),
            f"lower {level}": lower_text(r["lower"]),
            f"upper {level}": upper_text(r["upper"]),
        }
        if detail or pd.isna(r["lower"]):
            row["method"] = r["method"]
        rows[str(name).capitalize()] = row
    return pd.DataFrame.from_dict(rows, orient="index").fillna("")


def _requirements_section(res: MulticlassSummarySource) -> dict[str, str]:
    if not res.model.recall_min:
        return {"None": "nothing was required of this fit, so there is nothing to certify; the held-out bounds "
                        "below describe the rule's recalls."}
    rates = res.rates
    return {f"Recall of {res.classes[k]!r}": certification_text(f"recall of {res.classes[k]!r}", rates.iloc[k],
                                                                 res.model.alpha)
            for k in sorted(res.model.recall_min)}


def _confusion_table(res: MulticlassSummarySource) -> pd.DataFrame:
    matrix = res.confusion
    frame = matrix.astype(str)
    frame.index = [f"true {c}" for c in matrix.index]
    frame.columns = [f"pred {c}" for c in matrix.columns]
    return frame


#: Coefficient rows shown in the summary; with more non-zero features the largest (standardised) are shown.
MAX_COEFFICIENT_ROWS = 30


def _coefficient_table(res: MulticlassSummarySource) -> tuple[pd.DataFrame, str]:
    """The coefficient rows shown (no all-zero row; at most :data:`MAX_COEFFICIENT_ROWS`) and the caption."""
    selected = res.selected_features
    params = res.params
    p = params.shape[0] - 1
    if selected is not None:
        rows = params.loc[[*selected.index, "Intercept"]]
        caption = selection_caption(len(selected), p, f"a gene list of at most {res.engine_fit.max_features} "
                                    "features shared by all classes") + "; original units, prediction = largest score"
    else:
        std = res.params_standardized.iloc[:-1].to_numpy()
        size = np.linalg.norm(std, axis=1)
        nonzero = np.flatnonzero(size > 0)
        keep = nonzero[np.argsort(-size[nonzero], kind="stable")[:MAX_COEFFICIENT_ROWS]]
        rows = params.iloc[[*np.sort(keep), p]]
        shown = "" if keep.size == p else (
            f"; the {keep.size} of {p} features with the largest standardised coefficients"
            + ("" if nonzero.size == p else f" ({p - nonzero.size} are exactly zero)") + ", all in .params")
        caption = f"Coefficients per class (original units; prediction = largest score{shown})"
    table = pd.DataFrame({str(c): [fmt(v) for v in rows[c]] for c in rows.columns}, index=rows.index)
    return table, caption


def _notes(res: MulticlassSummarySource, detail: bool) -> list[str]:
    level = level_percent(res.model.alpha)
    notes = []
    if res.split.holdout.size == 0:
        notes.append("There is no held-out sample, so nothing can be said about new data: no bound, no "
                     "certification. Refit with a held-out share (fractions=) to obtain them.")
    else:
        notes.append(
            f"Each class's recall gets an exact (Clopper-Pearson) one-sided lower bound at {level}, holding separately"
            + ("" if res.shift is None else f" ({level_percent(res.shift.alpha_each)} for the guaranteed classes)")
            + "; the joint statement holds for its classes at once. Each class's precision (PPV, the share "
            "of its calls that are right) gets an exact two-sided interval; unlike the recall it depends on the "
            "class mix, here the held-out sample's (the split keeps the data's), as does the accuracy (exact "
            "two-sided interval). The balanced accuracy is the mean of the recalls; its interval is the mean of "
            f"the classes' exact two-sided recall intervals at {level_percent(res.model.alpha / len(res.classes))} "
            "each."
            + ("" if res.shift is None else " In guarantee mode the held-out rows of the guaranteed classes set "
               "the offsets, so the precision, accuracy and balanced accuracy get no interval.")
        )
    notes.append(
        "The requirement-sample recalls are in-sample: the rule was chosen to meet the requirements there, so "
        "they are not evidence about new data. Only the held-out figures are."
        if not detail else
        "The anchor-sample recalls are in-sample: the rule was chosen to meet them, so the margin "
        f"({res.model.bound}) does not make them a confidence statement. Only the held-out statements hold."
    )
    for k, p0 in sorted(res.model.recall_min.items()):
        n = int(res.rates["heldout_n"].iloc[k])
        best = clopper_pearson_lower(n, n, res.model.alpha)
        if res.shift is None and n and best < p0:
            notes.append(f"The held-out sample has only {n} {res.classes[k]!r} rows: even with all of them correct it "
                         f"would support a recall of only >= {lower_text(best)} at {level}, below the required "
                         f"{p0:g}. It is too small to certify this requirement; enlarge the held-out share "
                         "(fractions=) or the data.")
    cost = res.guarantee_cost
    if cost is not None:
        changes = "; ".join(f"{c}: {r['correct_csvm_offsets']}/{r['n']} -> {r['correct_guarantee_offsets']}/{r['n']}"
                            for c, r in cost.iterrows())
        notes.append(f"Guarantee mode: held-out correct counts with the CSVM's and the shifted offsets: {changes}.")
    if res.ready_calibration is not None:
        notes.append(
            "predict_proba: the class of largest probability need not be the predicted class (the rule is the "
            "argmax of the scores under the recall requirements, the probabilities a separate recalibration); "
            "[p0, p1] of a class is its one-vs-rest Venn-Abers interval, not a confidence interval; they agree on "
            f"{res.probability_agreement:.1%} of the {len(res.model.y)} fitted rows."
        )
    if res.selected_features is not None:
        notes.append(screening_text(res.engine_fit.screening))
        notes.append("The features were selected with the training and requirement samples only; the held-out "
                     "sample played no part, so the held-out statements hold for the selected rule.")
    if detail:
        return notes + list(res.warnings)
    notes += [capped_text(f"recall of {res.classes[k]!r}", adj, f"{res.classes[k]!r} rows")
              for k, adj in sorted(res.adjusted.items()) if adj.capped]
    return notes + [w for w in res.warnings if "capped at 1" not in w]


def build_multiclass_summary(res: MulticlassSummarySource, *, timing: bool = True, detail: bool = False) -> Summary:
    """The report of a multiclass fit (module docstring)."""
    summary = Summary("Multiclass Constrained SVM (CSVM) Results")
    summary.add_df(_model_table(res, detail), header=False, align="l", caption="Model and data")
    summary.add_paragraphs("Samples", _samples(res))
    summary.add_df(solver_table(res.solver, res.fit_options, timing=timing, detail=detail,
                                screening=getattr(res.engine_fit, "screening", None)), header=False, align="l",
                   caption="Solver")
    summary.add_paragraphs("Requirements", _requirements_section(res))
    summary.add_df(_recall_table(res, detail),
                   caption="Recall per class (held-out = evidence, requirement sample = in-sample)")
    if res.split.holdout.size:
        summary.add_df(_overall_table(res, detail),
                       caption="Accuracy over all classes (held-out = evidence, requirement sample = in-sample)")
    statements = {str(label): str(text) for label, text in res.statements.items()}
    statements["Joint"] = res.joint_statement
    if res.split.holdout.size:
        statements.update({str(rate).capitalize(): str(text) for rate, text in res.overall_statements.items()})
    summary.add_paragraphs("Confidence statements", statements)
    if res.split.holdout.size:
        summary.add_df(_confusion_table(res), caption="Held-out confusion matrix (rows: true class, columns: predicted)")
    if res.is_linear:
        table, caption = _coefficient_table(res)
        summary.add_df(table, caption=caption)
    for note in _notes(res, detail):
        summary.add_text(note)
    return summary
