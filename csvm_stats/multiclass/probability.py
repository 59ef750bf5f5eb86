r"""Calibrated probabilities for several classes: one-vs-rest inductive Venn-Abers on the class margins.

The binary route (:mod:`csvm_stats.probability.fit_calibration`) calibrates one
score. With K classes every class k gets its own score, the *margin*

.. math:: m_k(x) = f^0_k(x) - \max_{l \ne k} f^0_l(x),

(positive exactly when the CSVM's own offsets predict k), and its own
:class:`~csvm_stats.probability.venn_abers.VennAbers` predictor fitted on the
calibration pairs :math:`(m_k(x_i), [y_i = k])` (one-vs-rest Venn-Abers,
Manokhin 2017). :math:`f^0` are the scores with the CSVM's optimal offsets,
*before* a guarantee-mode shift: the guarantee shift is set on H, so scores
that contain it would depend on the calibration points, while :math:`f^0`
never does (the whole fit uses I and J only).

* **Interval:** :math:`[p^0_k(x), p^1_k(x)]` is class k's one-vs-rest
  Venn-Abers interval. Under exchangeability of the calibration points and the
  new point one of its ends is a calibrated probability of
  :math:`y = k` given :math:`m_k(x)` (Vovk, Petej and Fedorova 2015), for each
  class separately; it is a statement about each class, not about the vector.
* **Point probabilities:** a multinomial logistic recalibration of the K
  scores, :math:`p(x) = \mathrm{softmax}(A f^0(x) + c)` (matrix scaling; a
  K x K matrix A and K offsets), fitted by penalised maximum likelihood on
  the cross-fitted pairs, or on the held-out route on the scores of
  :func:`softmax_rows` (every row when the feature map has few columns
  against I, else J and H: more rows than H alone halve the error to the
  true posterior on Gaussian classes), its penalty chosen by
  :data:`SOFTMAX_FOLDS`-fold cross-validated log loss
  (scikit-learn's ``LogisticRegressionCV``) on the standardised scores. The
  probabilities sum to 1 by construction and use all K scores at once;
  the earlier point probabilities (the merged one-vs-rest Venn-Abers
  probabilities divided by their sum) were 11 to 14 times further from the
  true posterior than multinomial logistic regression on Gaussian classes
  (``benchmarks/multiclass_probabilities.py``). The :math:`p_k` need not lie
  in class k's interval: the interval is the one-vs-rest Venn-Abers statement
  (calibration in Venn's sense, not a confidence interval for
  :math:`P(y = k \mid x)`), the point probability a smoother fit.
* **Route:** held-out (inductive, the guarantee above) when H has at least
  :data:`~csvm_stats.probability.fit_calibration.MIN_HOLDOUT` points and
  :data:`~csvm_stats.probability.fit_calibration.MIN_PER_CLASS` of every
  class; else cross-fitted: the multiclass CSVM is refitted with the same
  settings on stratified folds of :math:`I \cup J`
  (:mod:`csvm_stats.probability.refits`; the refits share one budget, the
  fit's ``time_limit``), its scores on each left-out fold together with the
  final fit's scores on H are the calibration pairs, and the final fit's
  margins are calibrated on them by the average of
  :data:`~csvm_stats.probability.venn_abers.DEFAULT_BAGS` bootstrap
  Venn-Abers predictors per class
  (:func:`~csvm_stats.probability.venn_abers.bagged`; no finite-sample
  guarantee: the fold models are not the final model).

**Rule and probabilities.** The prediction is the argmax of the scores (with
the guarantee shift, if any). Each :math:`p_k` is non-decreasing in
:math:`m_k`, but the K calibration maps differ, so the class of largest
probability need not be the predicted class: under recall requirements the
rule deliberately favours the constrained classes. :meth:`MulticlassCalibration.agreement`
gives the share of points on which the two agree (reported in the summary and
measured in ``benchmarks/multiclass_probabilities.py``).
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from sklearn.linear_model import LogisticRegressionCV
from sklearn.model_selection import StratifiedKFold

from csvm_stats.exceptions import DataError
from csvm_stats.multiclass.certification import rival_margins
from csvm_stats.inference.bounds import CappedTargetWarning
from csvm_stats.probability.fit_calibration import MIN_CALIBRATION, MIN_HOLDOUT, MIN_PER_CLASS
from csvm_stats.probability.refits import DEFAULT_FOLDS, refits_without, stratified_folds
from csvm_stats.optimization.solvers.base import SolveRecord
from csvm_stats.preprocessing.design import SampleSplit
from csvm_stats.probability.venn_abers import DEFAULT_BAGS, VennAbers, bagged, merge



class CalibrationSource(Protocol):
    """What the calibration reads of a fit (:class:`~csvm_stats.multiclass.results.MulticlassResults` has it all).

    ``model`` is refitted on folds (copied, with other ``samples``) for the cross-fitted route.
    """

    model: Any
    split: SampleSplit
    engine_fit: Any

    @property
    def classes(self) -> list[Any]: ...
    @property
    def solver(self) -> SolveRecord: ...

    def csvm_scores(self, newdata: Any = None) -> np.ndarray: ...


def normalised(p: np.ndarray) -> np.ndarray:
    """Rows of positive numbers divided by their sums."""
    return p / p.sum(axis=1, keepdims=True)


#: Folds and penalties of the cross-validation that sets the softmax recalibration's penalty.
SOFTMAX_FOLDS = 5
SOFTMAX_PENALTIES = 10


@dataclass(frozen=True)
class SoftmaxRecalibration:
    """:math:`p(x) = \\mathrm{softmax}(A f^0(x) + c)` (module docstring); ``weights`` is A (K x K), ``offsets`` c."""

    weights: np.ndarray
    offsets: np.ndarray

    def predict(self, scores: np.ndarray) -> np.ndarray:
        """``(n, K)`` probabilities of the f^0 ``scores``."""
        z = np.asarray(scores, dtype=float) @ self.weights.T + self.offsets
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    @classmethod
    def fit(cls, scores: np.ndarray, labels: np.ndarray, n_classes: int) -> SoftmaxRecalibration:
        """Penalised multinomial logistic regression of the labels on the standardised scores (module docstring).

        A class with fewer than :data:`SOFTMAX_FOLDS` calibration points
        lowers the number of folds (at least 2); constant scores give the
        base rates.
        """
        scores = np.asarray(scores, dtype=float)
        centre, scale = scores.mean(axis=0), scores.std(axis=0)
        counts = np.bincount(labels, minlength=n_classes)
        if np.all(scale <= 1e-12 * np.maximum(1.0, np.abs(centre))) or counts.min() < 2:
            rates = (counts + 1.0) / (counts.sum() + n_classes)
            return cls(np.zeros((n_classes, n_classes)), np.log(rates))
        scale = np.where(scale > 0, scale, 1.0)
        folds = StratifiedKFold(int(min(SOFTMAX_FOLDS, counts.min())), shuffle=True, random_state=0)
        model = LogisticRegressionCV(Cs=SOFTMAX_PENALTIES, cv=folds, scoring="neg_log_loss", max_iter=1000,
                                     l1_ratios=(0.0,), use_legacy_attributes=False)
        model.fit((scores - centre) / scale, labels)
        coef = model.coef_ / scale  # back to the raw scores
        return cls(coef, model.intercept_ - coef @ centre)


@dataclass(frozen=True)
class MulticlassCalibration:
    """One-vs-rest Venn-Abers predictors on the class margins (module docstring).

    ``predictors[k]`` calibrates class k's margin; ``method`` is
    ``"held-out"`` or ``"cross-fitted"``; ``folds`` the number of refits (0
    for held-out); ``softmax`` the point probabilities' recalibration (None
    in model files written before it: then the normalised merged
    one-vs-rest probabilities).
    """

    method: str
    predictors: tuple[VennAbers, ...]
    folds: int = 0
    softmax: SoftmaxRecalibration | None = None

    @property
    def n(self) -> int:
        """Calibration points (the same for every class)."""
        return self.predictors[0].n

    def interval(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(p0, p1)``, each ``(n, K)``: every class's one-vs-rest interval at the scores f^0."""
        m = rival_margins(scores)
        ends = [va.interval(m[:, k]) for k, va in enumerate(self.predictors)]
        return np.column_stack([e[0] for e in ends]), np.column_stack([e[1] for e in ends])

    def predict(self, scores: np.ndarray) -> np.ndarray:
        """``(n, K)`` probabilities of the f^0 ``scores``, summing to 1 (module docstring)."""
        if self.softmax is None:
            return normalised(merge(*self.interval(scores)))
        return self.softmax.predict(scores)

    def agreement(self, scores: np.ndarray, rule_scores: np.ndarray) -> float:
        """Share of rows whose class of largest probability is the rule's class (argmax of ``rule_scores``)."""
        return float(np.mean(self.predict(scores).argmax(axis=1) == np.asarray(rule_scores).argmax(axis=1)))

    def describe(self) -> str:
        """One line for the summary: method and number of points."""
        where = (f"{self.n} held-out points" if self.method == "held-out"
                 else f"{self.n} points, {self.folds} refits, {DEFAULT_BAGS} bootstrap averages")
        if self.softmax is None:
            return f"Venn-Abers one-vs-rest on the class margins, {self.method} ({where}), normalised to sum to 1"
        return (f"softmax recalibration of the class scores, {self.method} ({where}); one-vs-rest Venn-Abers "
                "intervals on the class margins")


def probability_frame(
    calibration: MulticlassCalibration, scores: np.ndarray, index: pd.Index, classes: list, interval: bool
) -> pd.DataFrame:
    """:meth:`~csvm_stats.multiclass.results.MulticlassResults.predict_proba`'s table from the f^0 ``scores``: probabilities, or with the intervals.

    ``interval=True``: columns ``(stat, class)``, ``stat`` in ``p0``, ``p1``
    (one-vs-rest interval) and ``p`` (the probability, summing to 1 over the classes).
    """
    columns = pd.Index(classes, name="class")
    p0, p1 = calibration.interval(scores)
    p = pd.DataFrame(calibration.predict(scores), index=index, columns=columns)
    if not interval:
        return p
    parts = {"p0": pd.DataFrame(p0, index=index, columns=columns),
             "p1": pd.DataFrame(p1, index=index, columns=columns), "p": p}
    return pd.concat(parts, axis=1, names=["stat"])


def holdout_is_enough(y_holdout: np.ndarray, n_classes: int) -> bool:
    """True when H is large enough, with every class, for the held-out route."""
    counts = np.bincount(y_holdout, minlength=n_classes)
    return y_holdout.size >= MIN_HOLDOUT and bool(np.all(counts >= MIN_PER_CLASS))


def planned_route(results: CalibrationSource) -> str:
    """``"held-out"`` or ``"cross-fitted"``: the route :func:`calibration_pairs` takes, without computing it."""
    y_holdout = results.model.y[results.split.holdout]
    return "held-out" if holdout_is_enough(y_holdout, len(results.classes)) else "cross-fitted"


def calibration_pairs(
    results: CalibrationSource, *, folds: int = DEFAULT_FOLDS, solver: str | None = None
) -> tuple[str, np.ndarray, np.ndarray, int]:
    """``(method, scores, labels, folds)``: the f^0 scores ``(n, K)`` and class positions to calibrate on."""
    y, split, K = results.model.y, results.split, len(results.classes)
    f0 = results.csvm_scores()
    holdout = split.holdout
    if planned_route(results) == "held-out":
        return "held-out", f0[holdout], y[holdout], 0
    rows = np.concatenate([split.train, split.anchor])
    counts = np.bincount(y[rows], minlength=K)
    n_folds = int(min(folds, counts.min()))
    if y.size < MIN_CALIBRATION or n_folds < 2:
        names = ", ".join(f"{c}: {int(n)}" for c, n in zip(results.classes, counts))
        raise DataError(
            f"calibrated probabilities need either a held-out sample of at least {MIN_HOLDOUT} points with "
            f"{MIN_PER_CLASS} of every class, or at least 2 training and anchor points of every class to cross-fit "
            f"(and {MIN_CALIBRATION} points in all); the training and anchor rows have {names}. Use more data."
        )
    scores, labels = [f0[holdout]], [y[holdout]]
    folds = stratified_folds(rows, y[rows], n_folds)
    with warnings.catch_warnings():  # the fit itself already warned about capped targets
        warnings.simplefilter("ignore", CappedTargetWarning)
        for fold_rows, refit in zip(folds, refits_without(results, folds, solver)):
            scores.append(refit.csvm_scores()[fold_rows])
            labels.append(y[fold_rows])
    return "cross-fitted", np.concatenate(scores), np.concatenate(labels), n_folds


def calibrate_multiclass(
    results: CalibrationSource, *, folds: int = DEFAULT_FOLDS, solver: str | None = None
) -> MulticlassCalibration:
    """The calibration of ``results`` (module docstring): intervals on the pairs, the softmax on :func:`softmax_rows`."""
    return calibration_of(results, calibration_pairs(results, folds=folds, solver=solver))


def calibration_of(results: CalibrationSource, pairs: tuple[str, np.ndarray, np.ndarray, int]) -> MulticlassCalibration:
    """The calibration of ``results`` from its :func:`calibration_pairs` (module docstring)."""
    method, scores, labels, n_folds = pairs
    calibration = calibration_from_pairs(method, scores, labels, n_folds)
    if method == "cross-fitted":
        return calibration
    rows = softmax_rows(results)
    softmax = SoftmaxRecalibration.fit(results.csvm_scores()[rows], results.model.y[rows], len(results.classes))
    return dataclasses.replace(calibration, softmax=softmax)


#: The held-out route fits the softmax on every row when the feature map has at most this share of I's rows as columns.
IN_SAMPLE_RANK_SHARE = 0.1


def softmax_rows(results: CalibrationSource) -> np.ndarray:
    """Rows the held-out route's softmax recalibration is fitted on (module docstring).

    All rows when the feature map's rank r is at most
    :data:`IN_SAMPLE_RANK_SHARE` times the training rows (the scores of I and
    J are then nearly as honest as those of H: K(K + 1) parameters are fitted
    on them, and the rule's r per class moved them by O(r / |I|)); else J and
    H only (many columns: the training rows' scores are too extreme).
    """
    split = results.split
    rank = results.engine_fit.feature_map.rank
    if rank <= IN_SAMPLE_RANK_SHARE * split.train.size:
        return np.sort(np.concatenate([split.train, split.anchor, split.holdout]))
    return np.sort(np.concatenate([split.anchor, split.holdout]))


def calibration_from_pairs(method: str, scores: np.ndarray, labels: np.ndarray, folds: int) -> MulticlassCalibration:
    """Per class a Venn-Abers predictor on the margins of ``scores``, and the softmax recalibration of the scores."""
    m = rival_margins(scores)
    build = VennAbers.fit if method == "held-out" else bagged  # as the Neyman-Pearson route's calibrators
    predictors = tuple(build(m[:, k], labels == k) for k in range(scores.shape[1]))
    return MulticlassCalibration(method, predictors, folds, SoftmaxRecalibration.fit(scores, labels, scores.shape[1]))
