r"""Probabilities of a fitted CSVM: a probability model beside the rule, Venn-Abers intervals.

Two routes, by the size of the held-out sample H:

* **held-out** (when H has at least :data:`MIN_HOLDOUT` points and
  :data:`MIN_PER_CLASS` of each class; the default split of
  ``CSVM.from_formula(..., tpr_min=...).fit()``): a separate probability model
  (:mod:`csvm_stats.probability.score_model`): penalised logistic regression
  on the fit's feature map over :math:`I \cup J \cup H`, its penalty chosen
  by cross-validated log loss, recalibrated by a sigmoid on the out-of-fold
  scores. That gives the point probability P. The interval :math:`[p_0, p_1]`
  is the inductive Venn-Abers predictor, calibrated on H alone, of the same
  regression fitted on :math:`I \cup J` alone (the mean of its
  cross-validation fold models, its own penalty): H was seen by neither that score nor the rule's direction, so
  under exchangeability one of
  :math:`p_0, p_1` is a calibrated probability of y = 1 (calibration in Venn's
  sense: among points given that value, the share of positives equals it).
  It is **not** a confidence interval for :math:`P(y = 1 \mid x)` (the true
  probability lies inside it for a minority of points in
  ``benchmarks/probabilities.py``), and P need not lie inside it.
  P is not a function of the rule's f(x): the rule f(x) >= 0 and the more
  probable class (P >= 1/2) can disagree, and :class:`RuleCheck` counts how
  often on H.
* **cross-fitted** otherwise (H empty, small or of one class): the training
  and anchor rows are cut into ``folds`` stratified folds; for each fold the
  CSVM is refitted with the same settings on the training and anchor rows of
  the other folds, and its decision values on the fold's rows (shifted by the
  final fit's guarantee-mode intercept change, if any) become calibration
  scores, together with the final fit's scores on H. The final classifier's
  f(x) is then calibrated on them, as scikit-learn's
  ``CalibratedClassifierCV(ensemble=False)`` does, by the average of the
  Venn-Abers predictors of :data:`~csvm_stats.probability.venn_abers.DEFAULT_BAGS`
  bootstrap resamples of these pairs (:func:`~csvm_stats.probability.venn_abers.bagged`),
  merged as :math:`p_1 / (1 - p_0 + p_1)`. This keeps P a non-decreasing
  function of the final f(x), so the rule is a threshold t on P (the
  probability of the step that contains f = 0): points called positive have
  :math:`P \ge t`, points called negative :math:`P \le t`, and points with P
  exactly t (the rule's step) are called either way; :class:`RuleCheck`
  counts them. Like cross-Venn-Abers it has no finite-sample guarantee (the
  fold models are not the final model).

Edges: H of one class or of fewer than :data:`MIN_HOLDOUT` points takes the
cross-fitted route; fewer than :data:`MIN_CALIBRATION` points, or one class,
in the whole data is a :class:`~csvm_stats.exceptions.DataError` (never a
silent 1/2). A constant feature map gives the constant score and the
interval of the pooled base rate :math:`[k/(m+1), (k+1)/(m+1)]` of the m
calibration points with k positives. Tied scores are pooled; a new score
within a relative 1e-9 of a calibration score is tied with it. Missing or
infinite predictors in new data are a :class:`~csvm_stats.exceptions.DataError`.
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
from csvm_stats.probability.score_model import ProbabilityModel, fit_probability_model
from csvm_stats.probability.venn_abers import DEFAULT_BAGS, VennAbers, bagged, merge


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

    @property
    def fitted_features(self) -> np.ndarray: ...



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
class RuleCheck:
    """How the class rule f(x) >= 0 reads on the probability scale (module docstring), on ``sample``.

    ``n`` points of ``sample``; ``disagree`` of them have the rule's class
    other than the more probable class (P >= 1/2 for the positive class);
    ``positive_range`` and ``negative_range`` the smallest and largest P of the
    points called positive and negative (NaN when there are none);
    ``threshold`` the probability t of the rule's step and ``ties`` the points
    with P exactly t (cross-fitted route; NaN and 0 on the held-out route,
    where P is not a function of f).
    """

    sample: str
    n: int
    disagree: int
    positive_range: tuple[float, float]
    negative_range: tuple[float, float]
    threshold: float = float("nan")
    ties: int = 0

    @classmethod
    def of(cls, sample: str, p: np.ndarray, called_positive: np.ndarray, threshold: float = float("nan")) -> RuleCheck:
        """The check of probabilities ``p`` against the rule's calls on ``sample``."""
        def span(values: np.ndarray) -> tuple[float, float]:
            return (float(values.min()), float(values.max())) if values.size else (float("nan"), float("nan"))

        disagree = int(np.sum(called_positive != (p >= 0.5)))
        ties = int(np.sum(p == threshold)) if np.isfinite(threshold) else 0
        return cls(sample, int(p.size), disagree, span(p[called_positive]), span(p[~called_positive]), threshold, ties)


@dataclass(frozen=True)
class Calibration:
    """How a fit's probabilities were made: the route, the Venn-Abers predictor, the probability model.

    ``predictor`` calibrates the probability model's score (held-out route)
    or the rule's f(x) (cross-fitted route); ``model`` is the
    :class:`~csvm_stats.probability.score_model.ProbabilityModel` of the
    held-out route (None on the cross-fitted one); ``rule`` the
    :class:`RuleCheck`.
    """

    method: str
    predictor: VennAbers
    folds: int = 0
    model: ProbabilityModel | None = None
    rule: RuleCheck | None = None

    def predict(self, features: np.ndarray, decision: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(p0, p1, p)`` of points given by their feature-map rows and decision values f(x)."""
        if self.model is None:
            p0, p1 = self.predictor.interval(decision)
            return p0, p1, merge(p0, p1)
        p0, p1 = self.predictor.interval(self.model.interval_score(features))
        return p0, p1, self.model.predict(features)

    @property
    def threshold(self) -> float:
        """Cross-fitted route: the probability at f(x) = 0 (module docstring); NaN on the held-out route."""
        if self.model is not None:
            return float("nan")
        return self.predictor.threshold(0.0)

    def describe(self) -> str:
        """One line for the summary: method and number of points."""
        va = self.predictor
        if self.model is not None:
            return (f"logistic model on all {self.model.n} points, Venn-Abers interval on {va.n} held-out points "
                    f"({va.n_positive} positive)")
        if self.method == "held-out":  # the rule's own score calibrated on H (e.g. the Neyman-Pearson route)
            return f"Venn-Abers of the score on {va.n} held-out points ({va.n_positive} positive)"
        return (f"Venn-Abers, cross-fitted ({va.n} points, {self.folds} refits, {DEFAULT_BAGS} bootstrap averages, "
                f"{va.n_positive} positive)")

    def rule_line(self, positive: str) -> str:
        """The class rule on the probability scale, in a few words (the summary's table)."""
        r = self.rule
        if self.model is not None:
            return f"not a threshold on P; differs from P >= 1/2 on {r.disagree} of {r.n} held-out points"
        return f"{positive} when P > {r.threshold:.3g}; P = {r.threshold:.3g} ({r.ties} of {r.n} points) either way"

    def rule_statement(self, positive: str) -> str:
        """The class rule on the probability scale, in words (module docstring); true of the fit's points."""
        r = self.rule
        if self.model is not None:
            return (
                f"The probabilities come from a logistic model fitted beside the rule, so the rule f(x) >= 0 is not "
                f"a threshold on P({positive}): on the {r.n} held-out points it called {positive} points with P from "
                f"{r.positive_range[0]:.3g} to {r.positive_range[1]:.3g} and the other points with P from "
                f"{r.negative_range[0]:.3g} to {r.negative_range[1]:.3g}, and it differs from the more probable class "
                f"(P >= 1/2) on {r.disagree} of them. [p0, p1] is a Venn-Abers interval: one of p0, p1 is a "
                "calibrated probability (among points given that value the share of positives equals it); it is not "
                "a confidence interval for the true P(y | x)"
            )
        return (
            f"This classifier's probability is non-decreasing in f(x): every point called {positive} has "
            f"P({positive}) >= {r.threshold:.3g} and every other point P <= {r.threshold:.3g}; the {r.ties} of the "
            f"{r.n} {r.sample} points with P exactly {r.threshold:.3g} (the step containing f(x) = 0) are called either "
            "way. The threshold is where the rule f(x) >= 0 falls on the probability scale; under a rate requirement "
            "it need not be 1/2. [p0, p1] is a Venn-Abers interval ("
            + ("on held-out points the fit never saw" if self.method == "held-out"
               else "here cross-fitted, without a finite-sample guarantee")
            + "); it is not a confidence interval for the true P(y | x)"
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
    """The calibration of ``results`` (module docstring): held-out if H allows, else cross-fitted."""
    y, f, split = results.model.y, results.decision_function().to_numpy(), results.split
    holdout = split.holdout
    if planned_route(results) == "held-out":
        rows = np.concatenate([split.train, split.anchor])
        features = results.fitted_features
        ordered = results.engine_fit.feature_map.reference is not None  # columns = kernel eigen-directions
        model, h_scores = fit_probability_model(features[rows], (y[rows] > 0).astype(float), features[holdout],
                                                (y[holdout] > 0).astype(float), ordered=ordered)
        predictor = VennAbers.fit(h_scores, y[holdout])
        rule = RuleCheck.of("held-out", model.predict(features[holdout]), f[holdout] >= 0)
        return Calibration("held-out", predictor, model=model, rule=rule)
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
    predictor = bagged(np.concatenate(scores), np.concatenate(labels))
    t = predictor.threshold(0.0)
    rule = RuleCheck.of("fitted", predictor.predict(f), f >= 0, t)
    return Calibration("cross-fitted", predictor, n_folds, rule=rule)


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
