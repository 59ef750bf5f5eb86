r"""Cross-fitting a CSVM: stratified folds of the training and anchor rows, the fit repeated without each, one budget.

Used where calibration scores must come from the rule itself on rows it did
not see and there is no held-out sample big enough (the several-class route,
:mod:`csvm_stats.multiclass.probability`). The training and anchor rows
:math:`I \cup J` are cut into ``n_folds`` stratified folds (fixed seed: the
same data give the same folds); for fold k the same CSVM is fitted on the
training and anchor rows outside it (fold k joins the held-out rows), with
the fit's backend, seed, limits and clock (``results.fit_options``), and its
scores on fold k are the fold's calibration scores.

**Time.** The refits share one budget: the fit's ``time_limit`` for all of
them together, on the fit's clock (:class:`~csvm_stats.optimization.budget.FitBudget`),
not ``time_limit`` each. Refit j of k gets an equal share of what is left,
``remaining / (k - j)``, so a refit that finishes early leaves its time to
the next; a refit that reaches its share keeps its best rule so far, as any
time-limited fit does.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

import numpy as np
from sklearn.model_selection import StratifiedKFold

from csvm_stats.optimization.budget import FitBudget
from csvm_stats.preprocessing.design import explicit_split

#: Folds of the cross-fit.
DEFAULT_FOLDS = 5


class RefittableFit(Protocol):
    """A fit that can be repeated on other rows: ``model`` (``y``, ``samples``, ``fit``), ``split``, ``solver``,
    ``fit_options`` (the keyword arguments of the solve: seed, limits, clock)."""

    model: Any
    split: Any
    solver: Any
    fit_options: Mapping[str, Any]


def stratified_folds(rows: np.ndarray, y: np.ndarray, n_folds: int) -> list[np.ndarray]:
    """``n_folds`` stratified folds of ``rows`` (labels ``y`` of those rows), shuffled with a fixed seed."""
    cv = StratifiedKFold(n_folds, shuffle=True, random_state=0)
    return [rows[test] for _, test in cv.split(rows, y)]


def refits_without(results: RefittableFit, folds: list[np.ndarray], solver: str | None = None) -> Iterator[Any]:
    """The fit repeated without each fold in turn (module docstring), all under one time budget.

    Same backend (or ``solver``), seed, limits and clock as the fit: a
    degenerate fit can have optima that differ by the solver's tolerance, and
    a refit with another seed would then give other calibration scores, so
    other probabilities, for the same call.
    """
    options = dict(results.fit_options)
    budget = FitBudget(float(options.get("time_limit", float("inf"))), str(options.get("clock", "wall")))
    split = results.split
    for j, fold_rows in enumerate(folds):
        model = copy.copy(results.model)
        model.samples = explicit_split({"train": np.setdiff1d(split.train, fold_rows),
                                        "anchor": np.setdiff1d(split.anchor, fold_rows),
                                        "holdout": np.union1d(split.holdout, fold_rows)}, model.y.size)
        options["time_limit"] = budget.remaining() / (len(folds) - j)
        yield model.fit(solver=solver or results.solver.backend, **options)
