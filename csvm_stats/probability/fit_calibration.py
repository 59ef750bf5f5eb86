r"""Venn-Abers calibration of a fitted CSVM's own decision function.

The default probabilities of :class:`~csvm_stats.models.results.CSVMResults` are a
:class:`~csvm_stats.probability.venn_abers.VennAbers` predictor on the decision values
:math:`f(x)` of points the optimisation never saw:

* **held-out** (inductive Venn-Abers, the guarantee): when the held-out sample
  H has at least :data:`MIN_HOLDOUT` points and :data:`MIN_PER_CLASS` of each
  class, the calibration pairs are :math:`(f(x_h), y_h)`, h in H. The
  direction w never depends on H (in guarantee mode only the intercept does,
  and a shift of every score leaves Venn-Abers unchanged), so under
  exchangeability the interval :math:`[p_0, p_1]` of a new point contains a
  calibrated probability.
* **cross-fitted** otherwise (H empty, small or of one class): the training
  and anchor rows are cut into ``folds`` stratified folds; for each fold the
  CSVM is refitted with the same settings on the training and anchor rows of
  the other folds, and its decision values on the fold's rows (shifted by the
  final fit's guarantee-mode intercept change, if any) become calibration
  scores, together with the final fit's scores on H. The final classifier's
  f(x) is then calibrated on them, as scikit-learn's
  ``CalibratedClassifierCV(ensemble=False)`` does, by the average of the
  Venn-Abers predictors of :data:`~csvm_stats.probability.venn_abers.DEFAULT_BAGS`
  bootstrap resamples of these pairs (:func:`~csvm_stats.probability.venn_abers.bagged`:
  bagging lowers the variance of the isotonic step function; on the logistic
  truth of ``benchmarks/probabilities.py`` it cuts the error to the true
  probability by about a sixth). Unlike cross-Venn-Abers
  proper (Vovk, Petej and Fedorova 2015), which merges the intervals of the
  fold models, this keeps the probability a monotone function of the final
  f(x), so the class rule is a threshold on the probability; like
  cross-Venn-Abers it has no finite-sample guarantee (the fold models are not
  the final model).

Edges: H of one class or of fewer than :data:`MIN_HOLDOUT` points takes the
cross-fitted route; fewer than :data:`MIN_CALIBRATION` points, or one class,
in the whole data is a :class:`~csvm_stats.exceptions.DataError` (never a
silent 1/2). A constant decision function (w = 0) gives every point the
pooled interval :math:`[k/(m+1), (k+1)/(m+1)]` of the m calibration points
with k positives (their base rate, the new point counted with either label).
Tied scores are pooled; a new score within a relative 1e-9 of a calibration
score is tied with it. Missing or infinite predictors in new data are a
:class:`~csvm_stats.exceptions.DataError`.

Because the probability is non-decreasing in f(x), the rule "positive when
:math:`f(x) \ge 0`" reads on the probability scale as: every point called
positive has :math:`P \ge t` and every point called negative :math:`P \le t`,
with :math:`t` the probability at f = 0 (:attr:`Calibration.threshold`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from sklearn.model_selection import StratifiedKFold

from csvm_stats.preprocessing.design import explicit_split
from csvm_stats.exceptions import DataError
from csvm_stats.probability.venn_abers import DEFAULT_BAGS, VennAbers, bagged


class CalibratedFit(Protocol):
    """What calibration reads of a two-class fit (:class:`csvm_stats.models.results.CSVMResults`).

    ``model`` has ``y`` (labels coded -1/+1), ``samples`` and ``fit(solver=,
    **fit_options)``; ``split`` has the row indices ``train``, ``anchor`` and
    ``holdout``; ``fit_options`` the keyword arguments of the solve (seed,
    limits, clock), so that every refit repeats the fit on other rows.
    """

    model: Any
    split: Any
    intercept: float
    engine_fit: Any
    solver: Any
    fit_options: Mapping[str, Any]

    def decision_function(self) -> Any: ...


#: Held-out points needed for the held-out (inductive) route, and of each class.
MIN_HOLDOUT = 50
MIN_PER_CLASS = 5
#: Fewest calibration points (with both classes) for any route.
MIN_CALIBRATION = 10
DEFAULT_FOLDS = 5
METHODS: tuple[str, ...] = ("held-out", "cross-fitted")
#: The summary's line for a cross-fitted calibration not computed yet (it refits the CSVM).
PENDING_DESCRIPTION = f"Venn-Abers, cross-fitted ({DEFAULT_FOLDS} refits at the first predict_proba)"


@dataclass(frozen=True)
class Calibration:
    """How a fit's probabilities were calibrated: the route, its predictor and its size."""

    method: str
    predictor: VennAbers
    folds: int = 0

    @property
    def threshold(self) -> float:
        """The probability at f(x) = 0: positive calls have P >= it, negative calls P <= it."""
        return self.predictor.threshold(0.0)

    def describe(self) -> str:
        """One line for the summary: method and number of points."""
        va = self.predictor
        where = (f"{va.n} held-out points" if self.method == "held-out"
                 else f"{va.n} points, {self.folds} refits, {DEFAULT_BAGS} bootstrap averages")
        return f"Venn-Abers, {self.method} ({where}, {va.n_positive} positive)"

    def rule_statement(self, positive: str) -> str:
        """The class rule on the probability scale, in words."""
        t = self.threshold
        return (
            f"This classifier calls a point {positive} when P({positive}) >= {t:.3g}: the Venn-Abers probability "
            f"is monotone in f(x), so every point called {positive} has P >= {t:.3g} and every other point "
            f"P <= {t:.3g}. The threshold is where the rule f(x) >= 0 falls on the probability scale; under a "
            "rate requirement it need not be 1/2"
        )


def holdout_is_enough(y_holdout: np.ndarray) -> bool:
    """True when H is large enough, with both classes, for the held-out route."""
    return (
        y_holdout.size >= MIN_HOLDOUT
        and int(np.sum(y_holdout > 0)) >= MIN_PER_CLASS
        and int(np.sum(y_holdout < 0)) >= MIN_PER_CLASS
    )


def planned_route(results: CalibratedFit) -> str:
    """``"held-out"`` or ``"cross-fitted"``: the route :func:`calibrate` takes, without computing it."""
    return "held-out" if holdout_is_enough(results.model.y[results.split.holdout]) else "cross-fitted"


def check_calibration_sample(y: np.ndarray, what: str) -> None:
    """At least :data:`MIN_CALIBRATION` labels with both classes, or a :class:`DataError` saying so."""
    n_pos, n_neg = int(np.sum(y > 0)), int(np.sum(y < 0))
    if y.size < MIN_CALIBRATION or n_pos == 0 or n_neg == 0:
        raise DataError(
            f"{what} has {y.size} points ({n_pos} positive, {n_neg} negative); calibrated probabilities need "
            f"at least {MIN_CALIBRATION} points with both classes. Use more data, or method='ebb'."
        )


def calibrate(results: CalibratedFit, *, folds: int = DEFAULT_FOLDS, solver: str | None = None) -> Calibration:
    """The Venn-Abers calibration of ``results`` (module docstring): held-out if H allows, else cross-fitted."""
    y, f, split = results.model.y, results.decision_function().to_numpy(), results.split
    holdout = split.holdout
    if planned_route(results) == "held-out":
        return Calibration("held-out", VennAbers.fit(f[holdout], y[holdout]))
    rows = np.concatenate([split.train, split.anchor])
    check_calibration_sample(y, "The data")
    n_folds = int(min(folds, np.sum(y[rows] > 0), np.sum(y[rows] < 0)))
    if n_folds < 2:
        raise DataError(
            f"the held-out sample is too small for calibration (needs {MIN_HOLDOUT} points, {MIN_PER_CLASS} of "
            "each class) and the training and anchor rows have fewer than 2 points of a class to cross-fit; "
            "use more data, or method='ebb'."
        )
    shift = results.intercept - results.engine_fit.intercept
    scores, labels = [f[holdout]], [y[holdout]]
    for fold_rows in _folds(rows, y[rows], n_folds):
        refit = _refit_without(results, fold_rows, solver)
        scores.append(refit.decision_function().to_numpy()[fold_rows] + shift)
        labels.append(y[fold_rows])
    return Calibration("cross-fitted", bagged(np.concatenate(scores), np.concatenate(labels)), n_folds)


def _folds(rows: np.ndarray, y: np.ndarray, n_folds: int) -> list[np.ndarray]:
    cv = StratifiedKFold(n_folds, shuffle=True, random_state=0)
    return [rows[test] for _, test in cv.split(rows, y)]


def _refit_without(results: CalibratedFit, fold_rows: np.ndarray, solver: str | None) -> CalibratedFit:
    """The same CSVM fitted on the training and anchor rows outside ``fold_rows`` (the rest held out).

    Same backend, seed, limits and clock as the fit (``results.fit_options``):
    a degenerate fit can have optima that differ by the solver's tolerance,
    and a refit with another seed would then give other calibration scores,
    so other probabilities, for the same call.
    """
    split = results.split
    train = np.setdiff1d(split.train, fold_rows)
    anchor = np.setdiff1d(split.anchor, fold_rows)
    holdout = np.union1d(split.holdout, fold_rows)
    model = copy.copy(results.model)
    model.samples = explicit_split({"train": train, "anchor": anchor, "holdout": holdout}, model.y.size)
    return model.fit(solver=solver or results.solver.backend, **results.fit_options)
