"""The summary object: golden text, HTML and LaTeX renderings (csvm_stats.reporting.summary)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from csvm_stats.inference.bounds import CappedTargetWarning
from csvm_stats.models.model import CSVM
from csvm_stats.reporting.summary import Summary

GOLDEN = Path(__file__).parent / "golden" / "csvm_summary.txt"


def golden_results():
    """A small, well-separated problem whose optimum SCIP proves; fixed seed, one thread."""
    rng = np.random.default_rng(19)
    n = 80
    sick = np.r_[np.ones(n // 2, dtype=bool), np.zeros(n // 2, dtype=bool)]
    frame = pd.DataFrame(
        {
            "outcome": pd.Categorical(np.where(sick, "case", "control"), categories=["control", "case"]),
            "age": np.round(rng.normal(50, 10, n) + 8 * sick, 1),
            "marker": np.round(rng.normal(0, 1, n) + 1.5 * sick, 2),
            "sex": rng.choice(["f", "m"], n),
        }
    )
    model = CSVM.from_formula("outcome ~ .", frame, tpr_min=0.8, bound="binomial", alpha=0.1)
    with pytest.warns(CappedTargetWarning, match="10 anchor points"):
        return model.fit(random_state=5, solver="scip", time_limit=60, mip_gap=1e-9, threads=1)


def without_versions(text: str) -> str:
    """The golden copy does not pin the solver's version."""
    return re.sub(r"^(Backend\s+scip).*$", r"\1", text, flags=re.MULTILINE)


def test_summary_text_matches_golden_copy():
    text = without_versions(golden_results().summary(timing=False).as_text())
    if os.environ.get("CSVM_UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()


def test_summary_is_deterministic_and_renders_everywhere():
    res = golden_results()
    summary = res.summary()
    assert "Wall time (s)" in summary.as_text() and "Wall time" not in res.summary(timing=False).as_text()
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
    assert any(note.startswith("The anchor-sample rates") for note in summary.extra_txt)
    summary.add_dict({"extra key": 1.5})  # statsmodels' own method on our summary
    assert re.search(r"^extra key\s+1\.5000$", summary.as_text(), flags=re.MULTILINE)
    assert "extra key" in summary.as_html() and "extra key" in summary.as_latex()


@pytest.mark.parametrize("timing", [True, False])
def test_summary_names_the_positive_class(timing):
    text = golden_results().summary(timing=timing).as_text()
    assert re.search(r"^Positive class +'case'$", text, flags=re.MULTILINE)
