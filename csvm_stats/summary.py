"""A printable report in statsmodels' manner: a title, captioned tables and footer notes.

:class:`Summary` renders the same content as plain text (``str``), HTML
(``as_html`` and ``_repr_html_`` for notebooks) and LaTeX (``as_latex``).
Built with ``timing=False`` it contains nothing that changes between
identical fits (no wall time, no node count), so its text can be compared
with a stored golden copy.
"""

from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from csvm_stats.certification import RATE_LABELS, RATE_UNITS

if TYPE_CHECKING:
    from csvm_stats.results import CSVMResults


@dataclass(frozen=True)
class SummaryTable:
    """A caption and a table of values shown with ``str``.

    ``align="right"`` right-aligns the value columns (numeric tables);
    ``"left"`` suits label/value lists.
    """

    caption: str
    frame: pd.DataFrame
    show_index: bool = True
    align: str = "right"

    @property
    def has_header(self) -> bool:
        return any(str(c) for c in self.frame.columns)

    def cells(self) -> list[list[str]]:
        """Rows of strings, the header row first when the columns are named."""
        header = ([""] if self.show_index else []) + [str(c) for c in self.frame.columns]
        rows = [header] if self.has_header else []
        for label, values in zip(self.frame.index, self.frame.itertuples(index=False)):
            rows.append(([str(label)] if self.show_index else []) + [str(v) for v in values])
        return rows

    def text_width(self) -> int:
        cells = self.cells()
        if not cells:
            return 0
        return sum(self._column_widths(cells)) + 2 * (len(cells[0]) - 1)

    @staticmethod
    def _column_widths(cells: list[list[str]]) -> list[int]:
        return [max(len(row[k]) for row in cells) for k in range(len(cells[0]))]

    def text_lines(self, width: int) -> list[str]:
        cells = self.cells()
        if not cells:
            return []
        cols = self._column_widths(cells)
        lines = []
        for i, row in enumerate(cells):
            pad = str.rjust if self.align == "right" else str.ljust
            parts = [row[0].ljust(cols[0])] + [pad(c, w) for c, w in zip(row[1:], cols[1:])]
            lines.append("  ".join(parts).rstrip())
            if i == 0 and self.has_header:
                lines.append("-" * width)
        return lines


@dataclass(frozen=True)
class SummaryText:
    """A caption and paragraphs of running text (wrapped to the summary's width)."""

    caption: str
    paragraphs: tuple[str, ...]


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
    "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


@dataclass
class Summary:
    """Title, sections (tables or text) and notes; print it, or use ``as_text``, ``as_html``, ``as_latex``."""

    title: str
    sections: list[SummaryTable | SummaryText] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add_table(self, caption: str, frame: pd.DataFrame, *, show_index: bool = True, align: str = "right") -> None:
        """Append a table; its cells are shown with ``str``."""
        self.sections.append(SummaryTable(caption, frame, show_index, align))

    def add_text(self, caption: str, paragraphs: list[str]) -> None:
        """Append a section of running text."""
        self.sections.append(SummaryText(caption, tuple(paragraphs)))

    def add_note(self, note: str) -> None:
        """Append a footer note (warnings and caveats)."""
        self.notes.append(note)

    @property
    def tables(self) -> list[SummaryTable]:
        """The table sections."""
        return [s for s in self.sections if isinstance(s, SummaryTable)]

    def _width(self) -> int:
        return max(78, len(self.title), *(t.text_width() for t in self.tables))

    def as_text(self) -> str:
        """Plain-text rendering with rules of ``=`` and ``-`` as in statsmodels."""
        width = self._width()
        lines = [self.title.center(width).rstrip(), "=" * width]
        for section in self.sections:
            lines.append(section.caption)
            lines.append("-" * width)
            if isinstance(section, SummaryTable):
                lines.extend(section.text_lines(width))
            else:
                for paragraph in section.paragraphs:
                    lines.extend(textwrap.wrap(paragraph, width=width, subsequent_indent="    "))
            lines.append("=" * width)
        for k, note in enumerate(self.notes, start=1):
            lines.extend(textwrap.wrap(f"[{k}] {note}", width=width, subsequent_indent="    "))
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.as_text()

    def as_html(self) -> str:
        """HTML rendering: one ``<table>`` per table with a ``<caption>``, notes as a list."""
        out = [f"<div class=\"csvm-summary\"><h4>{html.escape(self.title)}</h4>"]
        for section in self.sections:
            if isinstance(section, SummaryText):
                out.append(f"<p><b>{html.escape(section.caption)}</b></p>")
                out.extend(f"<p>{html.escape(p)}</p>" for p in section.paragraphs)
                continue
            out.append(f"<table class=\"simpletable\"><caption>{html.escape(section.caption)}</caption>")
            for i, row in enumerate(section.cells()):
                tag = "th" if i == 0 and section.has_header else "td"
                out.append("<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in row) + "</tr>")
            out.append("</table>")
        if self.notes:
            out.append("<ol class=\"notes\">" + "".join(f"<li>{html.escape(n)}</li>" for n in self.notes) + "</ol>")
        out.append("</div>")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        return self.as_html()

    def as_latex(self) -> str:
        """LaTeX rendering: one ``tabular`` per table, text as paragraphs, notes as an enumerated list."""
        out = [f"\\begin{{center}}\\textbf{{{_latex_escape(self.title)}}}\\end{{center}}"]
        for section in self.sections:
            if isinstance(section, SummaryText):
                out.append(f"\\paragraph{{{_latex_escape(section.caption)}}}")
                out.extend(_latex_escape(p) + "\n" for p in section.paragraphs)
                continue
            cells = section.cells()
            spec = "l" + ("r" if section.align == "right" else "l") * (len(cells[0]) - 1)
            out.append("\\begin{table}[htbp]\\centering")
            out.append(f"\\caption{{{_latex_escape(section.caption)}}}")
            out.append(f"\\begin{{tabular}}{{{spec}}}\n\\hline")
            for i, row in enumerate(cells):
                out.append(" & ".join(_latex_escape(c) for c in row) + " \\\\")
                if i == 0 and section.has_header:
                    out.append("\\hline")
            out.append("\\hline\n\\end{tabular}\n\\end{table}")
        if self.notes:
            out.append("\\begin{enumerate}")
            out.extend(f"\\item {_latex_escape(n)}" for n in self.notes)
            out.append("\\end{enumerate}")
        return "\n".join(out) + "\n"


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        return f"{value:.{digits}f}"
    return str(value)


def _key_values(pairs: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame({"": [_fmt(v) for v in pairs.values()]}, index=list(pairs))


def _model_table(res: CSVMResults) -> pd.DataFrame:
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
            "Kernel": kernel.describe(),
            "C": f"{model.C:g}",
            "Standardised columns": model.standardize,
            "Margin (bound)": model.bound,
            "alpha": f"{model.alpha:g}",
            "Intercept": intercept_rule,
            **_probability_rows(res),
        }
    )


def _probability_rows(res: CSVMResults) -> dict[str, str]:
    """Which method gives predict_proba, on how many points, and the class rule on the probability scale."""
    from csvm_stats.fit_calibration import pending_description, planned_route

    ensembles = f"{res.probability_variant.upper()} with predict_proba(method='{res.probability_variant}')"
    if planned_route(res) == "cross-fitted" and "calibration" not in vars(res):
        return {"Probabilities": pending_description(res), "EBB probabilities": ensembles}
    calibration = res.calibration
    return {
        "Probabilities": calibration.describe(),
        "Rule as probability": f"{res.model.coding.positive!r} when P >= {calibration.threshold:.3g}",
        "EBB probabilities": ensembles,
    }


def _solver_table(res: CSVMResults, timing: bool) -> pd.DataFrame:
    rec = res.solver
    pairs: dict[str, Any] = {
        "Backend": f"{rec.backend} {rec.backend_version}".strip(),
        "Formulation": rec.formulation,
        "Status": rec.status.value,
        "Objective": rec.objective,
        "Best bound": rec.best_bound,
        "Relative gap": f"{rec.gap:.2%}",
    }
    if timing:
        pairs["Wall time (s)"] = f"{rec.wall_time:.2f}"
        pairs["Nodes"] = rec.nodes
    return _key_values(pairs)


def _rate_table(res: CSVMResults) -> pd.DataFrame:
    rows = {}
    for rate, r in res.rates.iterrows():
        rows[rate.upper()] = {
            "target": _fmt(r["target"], 3),
            "required": "" if r["required"] is pd.NA else f"{r['required']}/{r['anchor_n']} ({r['adjusted']:.3f})",
            "anchor (in-sample)": f"{r['anchor_correct']}/{r['anchor_n']} = {r['anchor_rate']:.3f}",
            "met": _fmt(r["met"]),
            "held-out": "" if r["heldout_n"] == 0 else f"{r['heldout_correct']}/{r['heldout_n']} = {r['heldout_rate']:.3f}",
            f"lower {1 - res.model.alpha:.0%}": _fmt(r["lower"], 3),
            "joint lower": _fmt(r["joint_lower"], 3),
            "method": r["method"],
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def _coefficient_table(res: CSVMResults) -> pd.DataFrame:
    std = res.params_standardized
    return pd.DataFrame(
        {"coef": [_fmt(v) for v in res.params], "coef (standardised)": [_fmt(v) for v in std]},
        index=res.params.index,
    )


def build_summary(res: CSVMResults, *, timing: bool = True) -> Summary:
    """The CSVM report: model and data, solver, rates with statements, coefficients, notes."""
    summary = Summary("Constrained SVM (CSVM) Results")
    summary.add_table("Model and data", _model_table(res), align="left")
    summary.add_table("Solver", _solver_table(res, timing), align="left")
    summary.add_table("Rates (anchor = in-sample, held-out = certification sample)", _rate_table(res))
    statements = [f"{rate.upper()}: {text}" for rate, text in res.statements.items()]
    if len(statements) > 1:
        statements.append(f"Joint: {res.joint_statement}")
    summary.add_text("Confidence statements", statements)
    if res.is_linear:
        summary.add_table("Coefficients (decision f(x) >= 0 means positive)", _coefficient_table(res))
    else:
        summary.add_table("Kernel solution", _key_values(res.support.to_dict()), align="left")
    if len(res.rates) > 1 and res.split.holdout.size:
        summary.add_note(
            f"Each confidence statement holds separately at {1 - res.model.alpha:.0%}; "
            "for a statement about all rates at once use the joint one."
        )
    summary.add_note(
        "The anchor-sample rates are in-sample: the hyperplane was chosen to satisfy them, so the margin "
        f"({res.model.bound}) does not make them a confidence statement. Only the held-out statements hold."
    )
    cost = res.guarantee_cost
    if cost is not None:
        summary.add_note(
            f"Guarantee mode moved the intercept from {cost['csvm_intercept']:.4f} to {cost['guarantee_intercept']:.4f}; "
            f"cost on the other class: held-out {RATE_LABELS[cost['rate']]} {cost['correct_csvm_intercept']}/{cost['n']} "
            f"with the CSVM intercept, {cost['correct_guarantee_intercept']}/{cost['n']} with the guarantee intercept."
        )
    if "calibration" in vars(res):  # computed for the model table (held-out) or on request (cross-fitted)
        summary.add_note(res.calibration.rule_statement(repr(res.model.coding.positive)) + ".")
    for note in res.warnings:
        summary.add_note(note)
    return summary
