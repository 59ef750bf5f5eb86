"""The summary object: statsmodels' ``Summary`` with captioned tables and footer notes.

:class:`Summary` is a :class:`statsmodels.iolib.summary2.Summary`: its
``tables`` are DataFrames with their ``settings`` (index, header,
float_format, align), ``extra_txt`` holds the footer notes, ``title`` the
title, and ``add_df``, ``add_dict``, ``add_array``, ``add_text`` (a footer
note) and ``add_title`` work as in statsmodels. It adds a caption per table
(``add_df(..., caption=...)``) and sections of running text
(:meth:`Summary.add_paragraphs`), and renders everything as plain text
(``str``, ``as_text``), HTML (``as_html``, ``_repr_html_``) and LaTeX
(``as_latex``) with each table at its natural width.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.iolib import summary2

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
