"""Report pieces every CSVM summary shares, in the words of its readers.

The default view of a summary uses the words of clinical reports
(caret's ``confusionMatrix``, epiR's ``epi.tests``): sensitivity,
specificity, requirement sample, held-out sample, proven optimal. The
internal terms (anchor, margin, Bonferroni-joint bound, formulation, nodes)
appear only in the detail view (``summary(detail=True)``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.inference.certification import level_percent, round_down, round_up
from csvm_stats.models.results_base import ROLE_TEXT
from csvm_stats.optimization.solvers.base import SolveRecord, Status

#: The samples' names in the summary.
SAMPLE_TITLES = {"train": "Training sample (I)", "anchor": "Requirement sample (J, anchor)",
                 "holdout": "Held-out sample (H)"}


def fmt(value: Any, digits: int = 4) -> str:
    """A cell: empty for missing, yes/no for a flag, ``digits`` decimals for a float."""
    if value is None or value is pd.NA or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        return f"{value:.{digits}f}"
    return str(value)


def key_values(pairs: Mapping[str, Any]) -> pd.DataFrame:
    """A two-column key/value table (no header)."""
    return pd.DataFrame({"value": [fmt(v) for v in pairs.values()]}, index=list(pairs))


def count_text(correct: Any, n: Any, rate: float) -> str:
    """``"k/n = rate"`` (only the rate when there is no count); empty without points."""
    if n is pd.NA or n == 0 or rate is pd.NA or np.isnan(rate):
        return ""
    return f"{rate:.3f}" if correct is pd.NA else f"{int(correct)}/{int(n)} = {rate:.3f}"


def lower_text(value: float) -> str:
    """A lower bound to 3 decimals, rounded down (empty when there is none)."""
    return "" if pd.isna(value) else round_down(value, 3)


def upper_text(value: float) -> str:
    """An upper bound to 3 decimals, rounded up (empty when there is none)."""
    return "" if pd.isna(value) else round_up(value, 3)


def samples_section(split: Any, describe: Callable[[np.ndarray], str],
                    holdout_role: str | None = None) -> dict[str, str]:
    """One line per sample: its size (``describe(rows)``) and what it is for.

    ``holdout_role`` replaces the held-out sample's role (guarantee mode:
    :data:`~csvm_stats.models.results_base.GUARANTEE_HOLDOUT_TEXT`, its rows set the rule).
    """
    roles = {**ROLE_TEXT, **({"holdout": holdout_role} if holdout_role else {})}
    return {SAMPLE_TITLES[name]: f"{describe(getattr(split, name))}; {roles[name]}."
            for name in ("train", "anchor", "holdout")}


def _screened_text(screening: Any) -> str:
    """The qualification of a proof when screening kept only some columns (empty without screening)."""
    if screening is None or screening.exact:
        return ""
    return (f" among the {screening.candidates.size} screened columns only; a heuristic over all "
            f"{screening.n_features} columns")


def _result_text(record: SolveRecord, screening: Any = None) -> str:
    screened = _screened_text(screening)
    if record.status is Status.OPTIMAL:
        if screened:
            return f"proven optimal{screened} (relative gap {record.gap:.2%})"
        return f"proven optimal (relative gap {record.gap:.2%})"
    if record.status is Status.TIME_LIMIT:
        during = f" during the {record.limit_phase}" if record.limit_phase else ""
        gap = (f"relative gap {record.gap:.2%}" if np.isfinite(record.gap)
               else "gap unknown: no lower bound was reached")
        if screened:
            gap += f"; the search was{screened}"
        if record.reason:  # the search ended before the limit (SolveRecord.reason)
            return f"not proven optimal: {record.reason}, with the best rule found ({gap})"
        return f"not proven optimal: stopped at the time limit{during} with the best rule found ({gap})"
    return record.outcome + (f" (the search was{screened})" if screened else "")


def _seconds(value: float) -> str:
    return f"{value:.2f} s"


def solver_table(record: SolveRecord, fit_options: Mapping[str, Any], *, timing: bool, detail: bool,
                 screening: Any = None) -> pd.DataFrame:
    """The solver in plain words: proven optimal or not, the gap, the time limit, the time taken.

    ``screening`` (a sparse fit's :class:`~csvm_stats.sparse.model.Screening`)
    qualifies the result when only some columns were searched. ``timing``
    adds the time taken (it differs between identical runs); the default view
    gives the whole fit's elapsed and computing (CPU) time in one line.
    ``detail`` adds the solver's name, the clock option, the solver's own
    times beside the whole fit's, the backend's version and choice, the
    formulation, objective, best bound and (with ``timing``) the node count.
    """
    clock = str(fit_options.get("clock", "wall"))
    limit = fit_options.get("time_limit")
    pairs: dict[str, Any] = {"Result": _result_text(record, screening)}
    if detail:
        pairs["Solver"] = record.backend
    if limit is not None:
        kind = "computing (CPU)" if clock == "cpu" else "elapsed (wall-clock)"
        pairs["Time limit"] = f"{float(limit):g} s of {kind} time" + (f" (clock={clock!r})" if detail else "")
    if timing:
        whole = np.isfinite(record.fit_wall_time)  # the whole fit's times (the solver's alone outside a fit)
        cpu = record.fit_cpu_time if whole else record.cpu_time
        wall = record.fit_wall_time if whole else record.wall_time
        if detail:
            pairs["CPU time (s)"] = f"{cpu:.2f}"
            pairs["Wall time (s)"] = f"{wall:.2f}"
            if whole:
                pairs["Solver time (s)"] = (f"{record.cpu_time:.2f} CPU, {record.wall_time:.2f} wall (the "
                                            "optimisation alone, part of the fit's times above)")
        else:
            pairs["Time taken"] = f"{_seconds(wall)} elapsed, {_seconds(cpu)} of computing (CPU) time"
    if detail:
        pairs["Backend"] = f"{record.backend} {record.backend_version}".strip()
        if record.choice:
            pairs["Chosen by"] = record.choice
        pairs["Formulation"] = record.formulation
        pairs["Objective"] = record.objective
        pairs["Best bound"] = record.best_bound
        if timing:
            pairs["Nodes"] = record.nodes
    return key_values(pairs)


def certification_text(what: str, row: pd.Series, alpha: float) -> str:
    """One requirement's plain verdict: certified, not certified (with what H supports), or no evidence."""
    target, lower = float(row["target"]), row["lower"]
    level = level_percent(alpha)
    met = "" if row["met"] is pd.NA else (
        f"; on the requirement sample the rule got {row['anchor_correct']}/{row['anchor_n']} right "
        f"({'met' if row['met'] else 'not met'})")
    if row["certified"] is pd.NA or pd.isna(lower):
        return (f"required {target:g}; no held-out evidence ({row['method']}), so it is not certified{met}.")
    if row["method"] == "order statistic":
        return f"required {target:g}; certified by construction at {level} (guarantee mode: the held-out rows set the rule)."
    if row["certified"]:
        return f"required {target:g}; certified: the held-out data support >= {round_down(lower, 3)} at {level}{met}."
    return (f"required {target:g}; the held-out data support only >= {round_down(lower, 3)} at {level}, so this "
            f"requirement is NOT certified{met}.")


def capped_text(what: str, adj: Any, units: str) -> str:
    """A capped requirement in plain words (the detail view keeps the margin's own note)."""
    return (f"The {what} requirement {adj.target:g} asks for more than the requirement sample's {adj.n} {units} "
            f"can show at this confidence (after the allowance for chance), so it was capped at 1: every one of "
            f"them had to be classified correctly. From {adj.min_n} {units} on it would not be capped.")


def selection_caption(n_selected: int, p: int, how: str) -> str:
    """The caption of the selected-features block."""
    return f"Selected features: {n_selected} of {p} ({how})"


def screening_text(screening: Any) -> str:
    """The screening note of a selection (exact, or a heuristic restricted to the screened columns)."""
    if screening is None or screening.exact:
        return "Every column was considered in the selection (no screening), so it is exact up to the solver's gap."
    return (f"Screening kept {screening.rule}; the selection is the best among subsets of those columns only, a "
            f"heuristic for all {screening.n_features} columns (pass screen= the number of columns for the exact "
            "problem).")
