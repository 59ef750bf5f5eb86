r"""Probabilities of a fitted CSVM: a probability model beside the rule, Venn-Abers intervals.

Two routes, by the size of the held-out sample H:

* **held-out** (when H has at least :data:`MIN_HOLDOUT` points and
  :data:`MIN_PER_CLASS` of each class; the default split of
  ``CSVM.from_formula(..., tpr_min=...).fit()``): a separate probability model
  (:mod:`csvm_stats.probability.score_model`): penalised logistic regression
  on the fit's feature map over :math:`I \cup J \cup H`, its penalty chosen
  by cross-validated log loss, recalibrated on the out-of-fold scores by
  Platt's sigmoid or, when Akaike's criterion prefers it, beta calibration
  (:func:`~csvm_stats.probability.score_model.fit_recalibration`). That gives the point probability P. The interval :math:`[p_0, p_1]`
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
* **cross-fitted** otherwise (H empty, small or of one class; e.g.
  ``CSVMClassifier()`` without a requirement, which puts every row in I): the
  same probability model, fitted on :math:`I \cup J` without needing H. P is
  the recalibration :math:`\sigma(a\,\eta + k\,g(\eta) + b)` (Platt's
  sigmoid when k = 0; :func:`~csvm_stats.probability.score_model.fit_recalibration`)
  fitted on the out-of-fold scores
  :math:`\eta_{-i}` of :math:`I \cup J` (each from the fold model of
  :func:`~csvm_stats.probability.score_model.fold_count` folds that did not
  see row i) and the scores of the rows of H, if any; its intercept
  equation makes the mean of P on those pairs the (smoothed) base rate, so
  there is no base-rate bias. The interval :math:`[p_0, p_1]` is the
  Venn-Abers predictor of the same pairs (out-of-fold scores, with H's),
  applied to the score :math:`\eta` of the model fitted on all of
  :math:`I \cup J`, as scikit-learn's ``CalibratedClassifierCV(ensemble=False)``
  applies a calibrator. Like cross-Venn-Abers it has **no finite-sample
  guarantee**: the fold models that scored the calibration pairs are not the
  model that scores a new point. No CSVM is refitted. As on the held-out
  route P is not a function of f(x); :class:`RuleCheck` counts, on all the
  fit's rows, how often the rule and P >= 1/2 disagree.
  (The route used before, the merge :math:`p_1/(1 - p_0 + p_1)` of bagged
  Venn-Abers of the CSVM refitted on 5 folds, leaned high at low prevalence
  - the merge gives :math:`(k+1)/(m+2)`, not :math:`k/m`, on a block of m
  points with k positives; +0.009 at 15% positives, above in 18 of 20
  repetitions - cost 5 CSVM refits, and had 1.09x-7.0x the mean squared
  error to the true probability of this route on the eight synthetic truths
  of ``benchmarks/probabilities_crossfit.py``, where this route had
  0.19x-0.98x that of tuned Platt scaling.)

Edges: H of one class or of fewer than :data:`MIN_HOLDOUT` points takes the
cross-fitted route; fewer than :data:`MIN_CALIBRATION` points, or one class,
in the whole data, or fewer than :data:`~csvm_stats.probability.score_model.CV_FOLDS`
points of a class among the training and anchor rows, is a
:class:`~csvm_stats.exceptions.DataError` (never a silent 1/2). A constant
feature map gives the constant score (the logit of the base rate): P is the
smoothed base rate of the calibration pairs and the interval the pooled
:math:`[k/(m+1), (k+1)/(m+1)]` of the m calibration points with k positives.
Tied scores are pooled; a new score within a relative 1e-9 of a calibration
score is tied with it. Missing or infinite predictors in new data are a
:class:`~csvm_stats.exceptions.DataError`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from csvm_stats.exceptions import DataError
from csvm_stats.optimization.blas import one_blas_thread
from csvm_stats.probability.score_model import (
    CV_FOLDS,
    ProbabilityModel,
    fit_probability_model,
    fit_recalibration,
    fit_score,
    fit_sigmoid,
    fold_count,
    sigmoid,
)
from csvm_stats.probability.venn_abers import DEFAULT_BAGS, VennAbers


class CalibratedFit(Protocol):
    """What calibration reads of a two-class fit (:class:`csvm_stats.models.results.CSVMResults`).

    ``model`` has ``y`` (labels coded -1/+1); ``split`` has the row indices
    ``train``, ``anchor`` and ``holdout``; ``engine_fit.feature_map`` the
    fit's feature map (``reference`` set for a factorised kernel map);
    ``fitted_features`` the feature-map rows of every row of the data.
    """

    model: Any
    split: Any
    engine_fit: Any

    def decision_function(self) -> Any: ...

    @property
    def fitted_features(self) -> np.ndarray: ...



#: Held-out points needed for the held-out (inductive) route, and of each class.
MIN_HOLDOUT = 50
MIN_PER_CLASS = 5
#: Fewest calibration points (with both classes) for any route.
MIN_CALIBRATION = 10
METHODS: tuple[str, ...] = ("held-out", "cross-fitted")
#: The summary's line when the data are too few for a calibration (predict_proba then says why).
NO_CALIBRATION_DESCRIPTION = "none: too few points of a class to calibrate (predict_proba says why)"


@dataclass(frozen=True)
class RuleCheck:
    """How the class rule f(x) >= 0 reads on the probability scale (module docstring), on ``sample``.

    ``n`` points of ``sample``; ``disagree`` of them have the rule's class
    other than the more probable class (P >= 1/2 for the positive class);
    ``positive_range`` and ``negative_range`` the smallest and largest P of the
    points called positive and negative (NaN when there are none);
    ``threshold`` the probability t of the rule's step and ``ties`` the points
    with P exactly t when P is a monotone function of f (a calibration of the
    rule's own score, :class:`Calibration` without a model); NaN and 0 when P
    comes from the probability model (both routes of a CSVM), which is not a
    function of f.
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
    r"""How a fit's probabilities were made: the route, the Venn-Abers predictor, the point probability.

    ``model`` is the :class:`~csvm_stats.probability.score_model.ProbabilityModel`
    (a two-class CSVM, both routes) and ``predictor`` calibrates its score.
    With ``model`` None (the Neyman-Pearson route) both calibrate the rule's
    own decision value f(x) on the same pairs (H, or the cross-fitted
    out-of-fold pairs): ``predictor`` gives the Venn-Abers interval and
    ``sigmoid`` = (a, b) the point probability :math:`P = \sigma(a f + b)`,
    Platt's sigmoid fitted by maximum likelihood on those pairs (its intercept
    equation makes the mean of P on them their smoothed base rate, so there is
    no base-rate bias; the merge :math:`p_1/(1 - p_0 + p_1)` used before leaned
    high at low prevalence, ``benchmarks/np_probabilities.py``). With a > 0, P
    is increasing in f and the rule is the threshold "positive when P >= t",
    t = :math:`\sigma(b)`. ``folds``: the folds behind the out-of-fold
    calibration scores (cross-fitted route; 0 on the held-out route); ``rule``
    the :class:`RuleCheck`.
    """

    method: str
    predictor: VennAbers
    folds: int = 0
    model: ProbabilityModel | None = None
    rule: RuleCheck | None = None
    sigmoid: tuple[float, float] | None = None

    @classmethod
    def of_rule_score(
        cls, method: str, scores: np.ndarray, labels: np.ndarray, sample: str, decision: np.ndarray, folds: int = 0,
        *, predictor: VennAbers | None = None,
    ) -> Calibration:
        r"""The calibration of a rule's own score f (no ``model``): Venn-Abers and Platt's sigmoid on the pairs
        ``(scores, labels)`` (labels -1/+1 or 0/1); the :class:`RuleCheck` on ``sample``'s decision values
        ``decision``. ``predictor`` replaces the plain Venn-Abers fit (e.g. a bagged one)."""
        y01 = (np.asarray(labels) > 0).astype(float)
        va = VennAbers.fit(scores, y01) if predictor is None else predictor
        calibration = cls(method, va, folds, sigmoid=fit_sigmoid(scores, y01))
        rule = RuleCheck.of(sample, calibration.point(decision), decision >= 0, calibration.threshold)
        return replace(calibration, rule=rule)

    def point(self, decision: np.ndarray) -> np.ndarray:
        r"""The point probability :math:`\sigma(a f + b)` of decision values f (a rule's own score; no ``model``)."""
        if self.sigmoid is None:
            raise ValueError("this calibration has a probability model; use predict with feature-map rows")
        a, b = self.sigmoid
        return sigmoid(a * np.asarray(decision, dtype=float) + b)

    def predict(self, features: np.ndarray, decision: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(p0, p1, p)`` of points given by their feature-map rows and decision values f(x)."""
        if self.model is None:
            p0, p1 = self.predictor.interval(decision)
            return p0, p1, self.point(decision)
        p0, p1 = self.predictor.interval(self.model.interval_score(features))
        return p0, p1, self.model.predict(features)

    @property
    def is_threshold_rule(self) -> bool:
        """True when P is an increasing function of f (no ``model`` and a sigmoid slope a > 0)."""
        return self.model is None and self.sigmoid is not None and self.sigmoid[0] > 0

    @property
    def threshold(self) -> float:
        """The probability at f(x) = 0 when P is increasing in f (:attr:`is_threshold_rule`); NaN otherwise."""
        if not self.is_threshold_rule:
            return float("nan")
        return float(self.point(np.zeros(1))[0])

    def _interval_words(self) -> str:
        if self.method == "held-out":
            return "on held-out points the fit never saw"
        return "here of out-of-fold scores, without a finite-sample guarantee"

    def describe(self) -> str:
        """One line for the summary: method and number of points."""
        va = self.predictor
        if self.model is not None and self.method == "held-out":
            return (f"logistic model on all {self.model.n} points, Venn-Abers interval on {va.n} held-out points "
                    f"({va.n_positive} positive)")
        if self.model is not None:
            return f"logistic model, cross-fitted on {va.n} out-of-fold scores ({va.n_positive} positive)"
        if self.method == "held-out":  # the rule's own score calibrated on H (the Neyman-Pearson route)
            return f"sigmoid and Venn-Abers of the score on {va.n} held-out points ({va.n_positive} positive)"
        return (f"sigmoid and Venn-Abers of the score, cross-fitted ({va.n} points, {self.folds} refits, "
                f"{DEFAULT_BAGS} bootstrap averages, {va.n_positive} positive)")

    def recalibration_line(self) -> str | None:
        """How the logistic score becomes P, in a few words (the summary's table); None without a model."""
        m = self.model
        if m is None:
            return None
        if m.curvature:
            return (f"beta calibration of the score (tail slopes {m.slope - m.curvature:.3g} below 0, "
                    f"{m.slope + m.curvature:.3g} above)")
        return f"Platt scaling of the score (slope {m.slope:.3g})"

    def rule_line(self, positive: str) -> str:
        """The class rule on the probability scale, in a few words (the summary's table)."""
        r = self.rule
        if self.is_threshold_rule:
            return f"{positive} when P >= {r.threshold:.3g} (P increases with the score)"
        return f"not a threshold on P; differs from P >= 1/2 on {r.disagree} of {r.n} {r.sample} points"

    def rule_statement(self, positive: str) -> str:
        """The class rule on the probability scale, in words (module docstring); true of the fit's points."""
        r = self.rule
        interval = (
            f"[p0, p1] is a Venn-Abers interval ({self._interval_words()}): one of p0, p1 is a calibrated "
            "probability (among points given that value the share of positives equals it); it is not a confidence "
            "interval for the true P(y | x)"
        )
        if self.is_threshold_rule:
            return (
                f"This classifier's probability is Platt's sigmoid of its score f(x), fitted on the "
                f"{self.predictor.n} calibration points, so it increases with f: a point is called {positive} "
                f"exactly when P({positive}) >= {r.threshold:.3g}, the probability at f(x) = 0 (under a rate "
                f"requirement it need not be 1/2; {r.ties} of the {r.n} {r.sample} points have P equal to it). "
                + interval + ", and P need not lie inside it"
            )

        def called(what: str, span: tuple[float, float]) -> str:
            if np.isnan(span[0]):
                return f"no point {what}"
            return f"{what} points with P from {probability_text(span[0])} to {probability_text(span[1])}"

        source = ("come from a logistic model fitted beside the rule" if self.model is not None else
                  "are a sigmoid of the score that does not increase with it (the score did not rank the "
                  "calibration points' classes)")
        return (
            f"The probabilities {source}, so the rule f(x) >= 0 is not "
            f"a threshold on P({positive}): on the {r.n} {r.sample} points it called "
            f"{called(positive, r.positive_range)} and {called('the other', r.negative_range)}, and it differs "
            f"from the more probable class (P >= 1/2) on {r.disagree} of them. " + interval
        )


#: Probabilities closer than this to 0 or 1 are printed as "<0.001" / ">0.999" (a printed 0 or 1 reads as certainty).
PROBABILITY_FLOOR = 0.001


def probability_text(p: float) -> str:
    """A probability in a sentence: 3 significant digits, "<0.001" or ">0.999" near 0 and 1 (never a bare 0 or 1:
    a fitted probability of exactly 0 or 1 is a floating-point underflow, not a certainty). No space after the
    sign, so that a wrapped line never separates it from its number."""
    if p < PROBABILITY_FLOOR:
        return f"<{PROBABILITY_FLOOR:g}"
    if p > 1.0 - PROBABILITY_FLOOR:
        return f">{1.0 - PROBABILITY_FLOOR:g}"
    return f"{p:.3g}"


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


def calibrate(results: CalibratedFit) -> Calibration:
    """The calibration of ``results`` (module docstring): held-out if H allows, else cross-fitted."""
    y, f, split = results.model.y, results.decision_function().to_numpy(), results.split
    holdout = split.holdout
    rows = np.concatenate([split.train, split.anchor])
    features = results.fitted_features
    ordered = results.engine_fit.feature_map.reference is not None  # columns = kernel eigen-directions
    y_rows, y_holdout = (y[rows] > 0).astype(float), (y[holdout] > 0).astype(float)
    if planned_route(results) == "held-out":
        model, h_scores = fit_probability_model(features[rows], y_rows, features[holdout], y_holdout, ordered=ordered)
        predictor = VennAbers.fit(h_scores, y[holdout])
        rule = RuleCheck.of("held-out", model.predict(features[holdout]), f[holdout] >= 0)
        return Calibration("held-out", predictor, model=model, rule=rule)
    check_calibration_sample(y, "The data")
    n_pos, n_neg = int(y_rows.sum()), int(y_rows.size - y_rows.sum())
    if min(n_pos, n_neg) < CV_FOLDS:
        raise DataError(
            f"the held-out sample is too small for calibration (needs {MIN_HOLDOUT} points, {MIN_PER_CLASS} of each "
            f"class) and the training and anchor rows have {n_pos} positive and {n_neg} negative points; "
            f"cross-fitting needs {CV_FOLDS} of each. Use more data, or method='ebb'."
        )
    model, scores = fit_cross_fitted_model(features[rows], y_rows, features[holdout], y_holdout, ordered=ordered)
    predictor = VennAbers.fit(scores, np.r_[y_rows, y_holdout])
    rule = RuleCheck.of("fitted", model.predict(features), f >= 0)
    return Calibration("cross-fitted", predictor, fold_count(y_rows), model=model, rule=rule)


@one_blas_thread
def fit_cross_fitted_model(
    features: np.ndarray, y01: np.ndarray, holdout_features: np.ndarray, holdout_y01: np.ndarray,
    *, ordered: bool = False,
) -> tuple[ProbabilityModel, np.ndarray]:
    """The cross-fitted route's model (module docstring) and its calibration scores.

    The score of :func:`~csvm_stats.probability.score_model.fit_score` on the
    rows of I u J (``features``, 0/1 labels ``y01``); the recalibration of
    :func:`~csvm_stats.probability.score_model.fit_recalibration` on the
    out-of-fold scores of those rows followed by the scores of the rows of H
    (``holdout_*``, possibly none). Returns the model and those scores, in
    that order (the pairs the Venn-Abers interval is fitted on).
    """
    coef, intercept, lam, out_of_fold = fit_score(features, y01, ordered=ordered)
    scores = np.r_[out_of_fold, np.asarray(holdout_features, dtype=float) @ coef + intercept]
    a, k, b = fit_recalibration(scores, np.r_[y01, holdout_y01])
    return ProbabilityModel(coef, intercept, a, b, lam, int(y01.size), curvature=k), scores
