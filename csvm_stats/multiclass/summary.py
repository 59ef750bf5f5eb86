"""The multiclass CSVM report, on the shared :class:`~csvm_stats.reporting.summary.Summary`.

Sections: model and data, solver, per-class recalls (anchor in-sample,
held-out with bounds), the confidence statements, the held-out confusion
matrix, the coefficients per class; caveats as footer notes.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import pandas as pd

from csvm_stats.inference.certification import level_percent, round_down
from csvm_stats.multiclass.certification import GuaranteeShift
from csvm_stats.multiclass.probability import MulticlassCalibration
from csvm_stats.optimization.solvers.base import SolveRecord
from csvm_stats.preprocessing.design import SampleSplit
from csvm_stats.probability.fit_calibration import DEFAULT_FOLDS
from csvm_stats.reporting.summary import Summary, _fmt, _key_values, _solver_table



class MulticlassSummarySource(Protocol):
    """What the report reads of a fit (:class:`~csvm_stats.multiclass.results.MulticlassResults` has it all)."""

    model: Any
    split: SampleSplit
    engine_fit: Any
    shift: GuaranteeShift | None
    random_state: int

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
    def guarantee_cost(self) -> pd.DataFrame | None: ...
    @property
    def warnings(self) -> list[str]: ...


def _model_table(res: MulticlassSummarySource) -> pd.DataFrame:
    model, split = res.model, res.split
    y = model.y

    def sample(idx: np.ndarray) -> str:
        counts = np.bincount(y[idx], minlength=len(res.classes))
        return f"{idx.size} (" + ", ".join(f"{c}: {n}" for c, n in zip(res.classes, counts)) + ")"

    offsets = "CSVM optimum" if res.shift is None else (
        f"CSVM optimum {res.shift.shift:+.4g} for the constrained classes (guarantee mode, set on held-out)"
    )
    return _key_values(
        {
            "Response": model.coding.name or "endog",
            "Formula": model.formula.formula if model.formula else "(arrays)",
            "Classes": ", ".join(map(str, res.classes)),
            "Rule": "argmax of the class scores f_k(x) = w_k'x + b_k",
            "Observations": len(y),
            "Training sample I": sample(split.train),
            "Anchor sample J": sample(split.anchor),
            "Held-out sample H": sample(split.holdout),
            "Random state (seed)": res.random_state,
            "Kernel": res.engine_fit.feature_map.kernel.describe(),
            "C": f"{model.C:g}",
            "Big-M": "proven per row (exact model)" if model.big_m is None else f"min({model.big_m:g}, proven)",
            "Standardised columns": model.standardize,
            "Margin (bound)": model.bound,
            "alpha": f"{model.alpha:g}",
            "Offsets": offsets,
            "Probabilities": _probability_line(res),
        }
    )


def _probability_line(res: MulticlassSummarySource) -> str:
    """The calibration of predict_proba, or the promise of a cross-fit (computed at the first predict_proba)."""
    calibration = res.ready_calibration
    if calibration is None:
        return f"Venn-Abers one-vs-rest, cross-fitted ({DEFAULT_FOLDS} refits at the first predict_proba)"
    return calibration.describe()


def _recall_table(res: MulticlassSummarySource) -> pd.DataFrame:
    rows = {}
    for name, r in res.rates.iterrows():
        rows[name] = {
            "target": _fmt(r["target"], 3),
            "required": "" if r["required"] is pd.NA else f"{r['required']}/{r['anchor_n']} ({r['adjusted']:.3f})",
            "anchor (in-sample)": f"{r['anchor_correct']}/{r['anchor_n']}" + (
                f" = {r['anchor_rate']:.3f}" if r["anchor_n"] else ""),
            "met": _fmt(r["met"]),
            "held-out": "" if r["heldout_n"] == 0 else f"{r['heldout_correct']}/{r['heldout_n']} = {r['heldout_rate']:.3f}",
            f"lower {level_percent(res.model.alpha)}": "" if pd.isna(r["lower"]) else round_down(r["lower"], 3),
            "joint lower": "" if pd.isna(r["joint_lower"]) else round_down(r["joint_lower"], 3),
            "method": r["method"],
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def _confusion_table(res: MulticlassSummarySource) -> pd.DataFrame:
    matrix = res.confusion
    frame = matrix.astype(str)
    frame.index = [f"true {c}" for c in matrix.index]
    frame.columns = [f"pred {c}" for c in matrix.columns]
    return frame


#: Coefficient rows shown in the summary; with more features the largest (standardised) are shown.
MAX_COEFFICIENT_ROWS = 30


def _coefficient_table(res: MulticlassSummarySource) -> tuple[pd.DataFrame, int]:
    """The coefficient rows shown (at most :data:`MAX_COEFFICIENT_ROWS` features) and the number of features."""
    params = res.params
    features = params.index[:-1]
    if features.size > MAX_COEFFICIENT_ROWS:
        size = np.linalg.norm(res.params_standardized.iloc[:-1].to_numpy(), axis=1)
        keep = np.sort(np.argsort(-size, kind="stable")[:MAX_COEFFICIENT_ROWS])
        params = params.iloc[[*keep, len(features)]]
    table = pd.DataFrame({str(c): [_fmt(v) for v in params[c]] for c in params.columns}, index=params.index)
    return table, features.size


def build_multiclass_summary(res: MulticlassSummarySource, *, timing: bool = True) -> Summary:
    """The report of a multiclass fit (module docstring)."""
    summary = Summary("Multiclass Constrained SVM (CSVM) Results")
    summary.add_df(_model_table(res), header=False, align="l", caption="Model and data")
    summary.add_df(_solver_table(res, timing), header=False, align="l", caption="Solver")
    summary.add_df(_recall_table(res), caption="Recall per class (anchor = in-sample, held-out = certification sample)")
    statements = {str(name): str(text) for name, text in res.statements.items()}
    statements["Joint"] = res.joint_statement
    summary.add_paragraphs("Confidence statements", statements)
    if res.split.holdout.size:
        summary.add_df(_confusion_table(res), caption="Held-out confusion matrix (rows: true class, columns: predicted)")
    if res.is_linear:
        table, n_features = _coefficient_table(res)
        shown = "" if len(table) - 1 == n_features else (
            f"; the {len(table) - 1} of {n_features} features with the largest standardised coefficients, all in .params")
        summary.add_df(table, caption=f"Coefficients per class (original units; prediction = largest score{shown})")
    summary.add_text(
        f"Each per-class statement holds separately at {level_percent(res.model.alpha)}"
        + ("" if res.shift is None else f" ({level_percent(res.shift.alpha_each)} for the guaranteed classes)")
        + "; the joint statement holds for its classes at once."
    )
    summary.add_text(
        "The anchor-sample recalls are in-sample: the rule was chosen to meet them, so the margin "
        f"({res.model.bound}) does not make them a confidence statement. Only the held-out statements hold."
    )
    cost = res.guarantee_cost
    if cost is not None:
        changes = "; ".join(f"{c}: {r['correct_csvm_offsets']}/{r['n']} -> {r['correct_guarantee_offsets']}/{r['n']}"
                            for c, r in cost.iterrows())
        summary.add_text(f"Guarantee mode: held-out correct counts with the CSVM's and the shifted offsets: {changes}.")
    calibration = res.ready_calibration
    if calibration is not None:
        summary.add_text(
            "predict_proba: the class of largest probability need not be the predicted class (the rule is the "
            "argmax of the scores under the recall requirements, the probabilities a separate recalibration); "
            "[p0, p1] of a class is its one-vs-rest Venn-Abers interval, not a confidence interval; they agree on "
            f"{res.probability_agreement:.1%} of the {len(res.model.y)} fitted rows."
        )
    for note in res.warnings:
        summary.add_text(note)
    return summary
