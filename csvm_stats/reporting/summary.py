"""The summary object: statsmodels' ``Summary`` with captioned tables and footer notes.

:class:`Summary` is a :class:`statsmodels.iolib.summary2.Summary`: its
``tables`` are DataFrames with their ``settings`` (index, header,
float_format, align), ``extra_txt`` holds the footer notes, ``title`` the
title, and ``add_df``, ``add_dict``, ``add_array``, ``add_text`` (a footer
note) and ``add_title`` work as in statsmodels. It adds a caption per table
(``add_df(..., caption=...)``) and sections of running text
(:meth:`Summary.add_paragraphs`), and renders everything as plain text
(``str``, ``as_text``), HTML (``as_html``, ``_repr_html_``) and LaTeX
(``as_latex``) with each table at its natural width. Built with
``timing=False`` the CSVM summary contains nothing that changes between
identical fits (no wall time, no node count), so its text can be compared
with a stored golden copy.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np
import pandas as pd
from statsmodels.iolib import summary2

from csvm_stats.inference.certification import (
    ORDER_STATISTIC,
    RATE_LABELS,
    RATE_UNITS,
    level_percent,
    round_down,
    round_up,
)
from csvm_stats.preprocessing.design import SampleSplit
from csvm_stats.optimization.engine import CSVMFit
from csvm_stats.probability.fit_calibration import PENDING_DESCRIPTION, Calibration
from csvm_stats.models.fitstate import ModelSpec
from csvm_stats.optimization.solvers.base import SolveRecord

_ALIGN = {"l": str.ljust, "c": str.center, "r": str.rjust}

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
    "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


class Summary(summary2.Summary):
    """Title, captioned tables, text sections and footer notes (statsmodels' ``summary2.Summary``).

    Print it, or use ``as_text``, ``as_html``, ``as_latex``. Each entry of
    ``settings`` has statsmodels' keys plus ``caption`` (may be empty) and
    ``paragraphs`` (true for a text section: a one-column frame whose index
    labels its paragraphs).
    """

    def __init__(self, title: str = "") -> None:
        super().__init__()
        self.add_title(title)

    def add_df(
        self,
        df: pd.DataFrame,
        index: bool = True,
        header: bool = True,
        float_format: str = "%.4f",
        align: str = "r",
        *,
        caption: str = "",
    ) -> None:
        """Append a table (statsmodels' ``add_df``) with an optional caption."""
        if align not in _ALIGN:
            raise ValueError(f"align must be one of {sorted(_ALIGN)}, got {align!r}.")
        super().add_df(df, index=index, header=header, float_format=float_format, align=align)
        self.settings[-1].update(caption=caption, paragraphs=False)

    def add_paragraphs(self, caption: str, paragraphs: Mapping[str, str]) -> None:
        """Append a section of running text, one labelled paragraph per entry (``label: text``)."""
        frame = pd.DataFrame({"text": list(paragraphs.values())}, index=list(paragraphs))
        self.add_df(frame, header=False, align="l", caption=caption)
        self.settings[-1]["paragraphs"] = True

    @property
    def notes(self) -> list[str]:
        """The footer notes (statsmodels' ``extra_txt``)."""
        return list(self.extra_txt)

    # ------------------------------------------------------------------ cells
    def _cells(self, k: int) -> list[list[str]]:
        """Rows of strings of table k, the header row first when it has one."""
        frame, setting = self.tables[k], self.settings[k]
        show_index, fmt = setting["index"], setting["float_format"]

        def cell(value: Any) -> str:
            if isinstance(value, (float, np.floating)):
                return "" if np.isnan(value) else fmt % value
            return str(value)

        rows = []
        if setting["header"]:
            rows.append(([""] if show_index else []) + [str(c) for c in frame.columns])
        for label, values in zip(frame.index, frame.itertuples(index=False)):
            rows.append(([str(label)] if show_index else []) + [cell(v) for v in values])
        return rows

    def _is_text(self, k: int) -> bool:
        return bool(self.settings[k].get("paragraphs", False))

    def _caption(self, k: int) -> str:
        return str(self.settings[k].get("caption", ""))

    @staticmethod
    def _widths(cells: list[list[str]]) -> list[int]:
        return [max(len(row[j]) for row in cells) for j in range(len(cells[0]))] if cells else []

    def _width(self) -> int:
        widths = [
            sum(w) + 2 * (len(w) - 1)
            for k in range(len(self.tables))
            if not self._is_text(k) and (w := self._widths(self._cells(k)))
        ]
        return max(78, len(self.title or ""), *widths)

    # ------------------------------------------------------------------ renderings
    def as_text(self) -> str:
        """Plain-text rendering with rules of ``=`` and ``-`` as in statsmodels."""
        width = self._width()
        lines = [(self.title or "").center(width).rstrip(), "=" * width]
        for k in range(len(self.tables)):
            if self._caption(k):
                lines.extend([self._caption(k), "-" * width])
            cells = self._cells(k)
            if self._is_text(k):
                for label, text in cells:
                    lines.extend(textwrap.wrap(f"{label}: {text}", width=width, subsequent_indent="    "))
            elif cells:
                widths = self._widths(cells)
                pad = _ALIGN[self.settings[k]["align"]]
                first = 1 if self.settings[k]["index"] else 0
                for i, row in enumerate(cells):
                    parts = [c.ljust(w) for c, w in zip(row[:first], widths)]
                    parts += [pad(c, w) for c, w in zip(row[first:], widths[first:])]
                    lines.append("  ".join(parts).rstrip())
                    if i == 0 and self.settings[k]["header"]:
                        lines.append("-" * width)
            lines.append("=" * width)
        for k, note in enumerate(self.extra_txt, start=1):
            lines.extend(textwrap.wrap(f"[{k}] {note}", width=width, subsequent_indent="    "))
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.as_text()

    def as_html(self) -> str:
        """HTML rendering: one ``<table>`` per table with a ``<caption>``, notes as a list."""
        out = [f"<div class=\"csvm-summary\"><h4>{html.escape(self.title or '')}</h4>"]
        for k in range(len(self.tables)):
            caption = html.escape(self._caption(k))
            if self._is_text(k):
                out.append(f"<p><b>{caption}</b></p>")
                out.extend(f"<p>{html.escape(label)}: {html.escape(text)}</p>" for label, text in self._cells(k))
                continue
            out.append(f"<table class=\"simpletable\"><caption>{caption}</caption>")
            for i, row in enumerate(self._cells(k)):
                tag = "th" if i == 0 and self.settings[k]["header"] else "td"
                out.append("<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in row) + "</tr>")
            out.append("</table>")
        if self.extra_txt:
            out.append("<ol class=\"notes\">" + "".join(f"<li>{html.escape(n)}</li>" for n in self.extra_txt) + "</ol>")
        out.append("</div>")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        return self.as_html()

    def as_latex(self, label: str = "") -> str:
        """LaTeX rendering: one ``tabular`` per table, text as paragraphs, notes as an enumerated list.

        ``label`` (as in statsmodels) is attached to the first table.
        """
        out = [f"\\begin{{center}}\\textbf{{{_latex_escape(self.title or '')}}}\\end{{center}}"]
        labelled = False
        for k in range(len(self.tables)):
            caption = _latex_escape(self._caption(k))
            cells = self._cells(k)
            if self._is_text(k):
                out.append(f"\\paragraph{{{caption}}}")
                out.extend(f"{_latex_escape(lab)}: {_latex_escape(text)}\n" for lab, text in cells)
                continue
            if not cells:
                continue
            first = 1 if self.settings[k]["index"] else 0
            spec = "l" * first + self.settings[k]["align"] * (len(cells[0]) - first)
            out.append("\\begin{table}[htbp]\\centering")
            out.append(f"\\caption{{{caption}}}")
            if label and not labelled:
                out.append(f"\\label{{{label}}}")
                labelled = True
            out.append(f"\\begin{{tabular}}{{{spec}}}\n\\hline")
            for i, row in enumerate(cells):
                out.append(" & ".join(_latex_escape(c) for c in row) + " \\\\")
                if i == 0 and self.settings[k]["header"]:
                    out.append("\\hline")
            out.append("\\hline\n\\end{tabular}\n\\end{table}")
        if self.extra_txt:
            out.append("\\begin{enumerate}")
            out.extend(f"\\item {_latex_escape(n)}" for n in self.extra_txt)
            out.append("\\end{enumerate}")
        return "\n".join(out) + "\n"

    def _repr_latex_(self) -> str:
        return self.as_latex()


class SummarySource(Protocol):
    """What :func:`build_summary` reads of a fit (:class:`~csvm_stats.models.results.CSVMResults` has it all)."""

    model: ModelSpec
    split: SampleSplit
    engine_fit: CSVMFit
    umbrella: Any
    random_state: int

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
    def warnings(self) -> list[str]: ...


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        return f"{value:.{digits}f}"
    return str(value)


def _key_values(pairs: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame({"value": [_fmt(v) for v in pairs.values()]}, index=list(pairs))


def _model_table(res: SummarySource) -> pd.DataFrame:
    model, split, y = res.model, res.split, res.model.y

    def sample(idx: np.ndarray) -> str:
        return f"{idx.size} ({int(np.sum(y[idx] > 0))} positive)"

    kernel = res.engine_fit.feature_map.kernel
    intercept_rule = (
        "CSVM optimum"
        if res.umbrella is None
        else f"order statistic on held-out {RATE_UNITS[res.umbrella.rate]} (guarantee mode)"
    )
    return _key_values(
        {
            "Response": model.coding.name or "endog",
            "Formula": model.formula.formula if model.formula else "(arrays)",
            "Positive class": repr(model.coding.positive),
            "Negative class": repr(model.coding.negative),
            "Observations": len(y),
            "Training sample I": sample(split.train),
            "Anchor sample J": sample(split.anchor),
            "Held-out sample H": sample(split.holdout),
            "Random state (seed)": res.random_state,
            "Kernel": kernel.describe(),
            "C": f"{model.C:g}",
            "Standardised columns": model.standardize,
            "Margin (bound)": model.bound,
            "alpha": repr(float(model.alpha)),
            "Intercept": intercept_rule,
            **_probability_rows(res),
        }
    )


def _probability_rows(res: SummarySource) -> dict[str, str]:
    """Which method gives predict_proba, on how many points, and the class rule on the probability scale."""
    ensembles = f"{res.probability_variant.upper()} with predict_proba(method='{res.probability_variant}')"
    calibration = res.ready_calibration
    if calibration is None:
        return {"Probabilities": PENDING_DESCRIPTION, "EBB probabilities": ensembles}
    return {
        "Probabilities": calibration.describe(),
        "Rule as probability": calibration.rule_line(repr(res.model.coding.positive)),
        "EBB probabilities": ensembles,
    }


def _solver_table(res: SummarySource, timing: bool) -> pd.DataFrame:
    rec = res.solver
    pairs: dict[str, Any] = {
        "Backend": f"{rec.backend} {rec.backend_version}".strip(),
        **({"Chosen by": rec.choice} if rec.choice else {}),
        "Formulation": rec.formulation,
        "Status": rec.status.value,
        "Objective": rec.objective,
        "Best bound": rec.best_bound,
        "Relative gap": f"{rec.gap:.2%}",
    }
    if timing:
        pairs.update(rec.timing_rows())  # wall and CPU time of the whole fit, the limit and its clock, the outcome
        pairs["Nodes"] = rec.nodes
    return _key_values(pairs)


def _bound_text(value: float, method: str, *, upper: bool = False) -> str:
    """A bound to 3 decimals, rounded outwards (lower down, upper up); a guarantee's target as given."""
    if method == ORDER_STATISTIC and not upper:
        return repr(float(value))
    if np.isnan(value):
        return ""
    return round_up(value, 3) if upper else round_down(value, 3)


def _observed(r: pd.Series, sample: str) -> str:
    n, correct, rate = r[f"{sample}_n"], r[f"{sample}_correct"], r[f"{sample}_rate"]
    if n == 0 or np.isnan(rate):
        return ""
    return f"{rate:.3f}" if correct is pd.NA else f"{correct}/{n} = {rate:.3f}"


def _rate_table(res: SummarySource) -> pd.DataFrame:
    level = level_percent(res.model.alpha)
    rows = {}
    for rate, r in res.rates.iterrows():
        rows[rate.upper()] = {
            "target": _fmt(r["target"], 3),
            "required": "" if r["required"] is pd.NA else f"{r['required']}/{r['anchor_n']} ({r['adjusted']:.3f})",
            "anchor (in-sample)": _observed(r, "anchor"),
            "met": _fmt(r["met"]),
            "held-out": _observed(r, "heldout"),
            f"lower {level}": _bound_text(r["lower"], r["method"]),
            f"upper {level}": _bound_text(r["upper"], r["method"], upper=True),
            "joint lower": _bound_text(r["joint_lower"], r["method"]),
            "method": r["method"],
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def _confusion_table(res: SummarySource) -> pd.DataFrame:
    return res.heldout_confusion.astype(str)


def _coefficient_table(res: SummarySource) -> pd.DataFrame:
    std = res.params_standardized
    return pd.DataFrame(
        {"coef": [_fmt(v) for v in res.params], "coef (standardised)": [_fmt(v) for v in std]},
        index=res.params.index,
    )


def build_summary(
    res: SummarySource, *, timing: bool = True, coefficients: tuple[str, pd.DataFrame] | None = None,
    title: str = "Constrained SVM (CSVM) Results",
) -> Summary:
    """The CSVM report: model and data, solver, rates with statements, coefficients, notes.

    ``coefficients`` = (caption, table) replaces the table of all coefficients
    (the sparse CSVM lists its selected features there).
    """
    summary = Summary(title)
    summary.add_df(_model_table(res), header=False, align="l", caption="Model and data")
    summary.add_df(_solver_table(res, timing), header=False, align="l", caption="Solver")
    summary.add_df(_rate_table(res), caption="Rates (anchor = in-sample, held-out = certification sample)")
    if res.split.holdout.size:
        summary.add_df(_confusion_table(res), caption="Held-out confusion matrix (rows: true class)")
    statements = {str(rate).upper(): str(text) for rate, text in res.statements.items()}
    if len(res.reported_rates) > 1:
        statements["Joint"] = res.joint_statement
    summary.add_paragraphs("Confidence statements", statements)
    if coefficients is not None:
        summary.add_df(coefficients[1], caption=coefficients[0])
    elif res.is_linear:
        summary.add_df(_coefficient_table(res), caption="Coefficients (decision f(x) >= 0 means positive)")
    else:
        summary.add_df(_key_values(res.support.to_dict()), header=False, align="l", caption="Kernel solution")
    if res.split.holdout.size:
        joint = " and ".join(RATE_LABELS[r] for r in res.reported_rates)
        summary.add_text(
            f"Each confidence statement holds separately at {level_percent(res.model.alpha)} (the intervals are "
            f"two-sided); the joint statement covers the {joint} at once."
            if len(res.reported_rates) > 1
            else f"Each confidence statement holds separately at {level_percent(res.model.alpha)} (the intervals "
            "are two-sided); for several at once use a Bonferroni level."
        )
    summary.add_text(
        "The anchor-sample rates are in-sample: the hyperplane was chosen to satisfy them, so the margin "
        f"({res.model.bound}) does not make them a confidence statement. Only the held-out statements hold."
    )
    cost = res.guarantee_cost
    if cost is not None:
        summary.add_text(
            f"Guarantee mode moved the intercept from {cost['csvm_intercept']:.4f} to {cost['guarantee_intercept']:.4f}; "
            f"cost on the other class: held-out {RATE_LABELS[cost['rate']]} {cost['correct_csvm_intercept']}/{cost['n']} "
            f"with the CSVM intercept, {cost['correct_guarantee_intercept']}/{cost['n']} with the guarantee intercept."
        )
    calibration = res.ready_calibration
    if calibration is not None:
        summary.add_text(calibration.rule_statement(repr(res.model.coding.positive)) + ".")
    for note in res.warnings:
        summary.add_text(note)
    return summary
