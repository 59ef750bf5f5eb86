r"""Model files of the Neyman-Pearson route, for the learners that can be saved safely.

A route whose score is a linear function of the design is a linear rule and
is written in the CSVM's own file format (:mod:`csvm_stats.interfaces.persistence`;
no pickle: ``load_model`` reads numbers and text, never code):

* two classes, :math:`s(x) = w^\top((x - m)/\sigma) + c`: the rule
  :math:`f(x) = s(x) + b` (b the order-statistic intercept) in the two-class
  form, with its calibration: the Venn-Abers arrays of f and, as the
  probability model (``calibration.model``, ``prob_coef``), the score
  :math:`\eta = f` with Platt's sigmoid (slope a, offset b), so a loaded file
  gives the route's :math:`P = \sigma(a f + b)` and interval;
* several classes, :math:`s_k(x) = w_k^\top((x - m)/\sigma) + c_k`: the rule
  "the class of the largest :math:`s_k(x) + t_k`" (:math:`t_k` the common
  shift on the constrained classes, 0 on the others) in the multiclass form
  (``"kind": "multiclass"``, :mod:`csvm_stats.multiclass.persistence`), with
  the one-vs-rest Venn-Abers calibration of the unshifted scores
  (``calibration.offsets`` = the :math:`c_k`). A two-class learner's single
  score s gives the class scores :math:`(-s/2, s/2)`, as the route uses them.

The learners with such a score: ``LogisticRegression``, ``LinearSVC`` and
``SVC(kernel="linear")``, alone or after a ``StandardScaler`` in a
``Pipeline`` (so ``"logistic"`` of :mod:`csvm_stats.models.learners`), with
the route's score taken from ``decision_function``. Every other learner is
refused with the reason: an RBF ``SVC`` (``"svc"``) would need its support
vectors and the route's one-vs-rest construction, and a tree ensemble
(``"hgb"``) can only be stored by pickle, which runs code when it is loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

from csvm_stats._version import __version__
from csvm_stats.exceptions import DataError
from csvm_stats.interfaces.persistence import (
    FORMAT_NAME,
    FORMAT_VERSION,
    _formula_fields,
    _label_kind,
    write_archive,
)
from csvm_stats.models.learners import describe_estimator


def _value(value: Any) -> Any:
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    return value


def np_report(results: Any) -> dict[str, Any]:
    """The route's report as plain values (for ``--format json``)."""
    rates = {str(k): {c: _value(v) for c, v in row.items()} for k, row in results.rates.iterrows()}
    return {
        "route": "neyman-pearson",
        "estimator": describe_estimator(results.model.estimator),
        "score": results.model.method,
        "random_state": int(results.random_state),
        "summary_text": str(results.summary(timing=False)),
        "statements": {str(k): str(v) for k, v in results.statements.items()},
        "joint_statement": results.joint_statement,
        "rates": rates,
        "samples": {"training": int(results.split.train.size + results.split.anchor.size),
                    "holdout": int(results.split.holdout.size)},
    }


def linear_parts(estimator: Any, method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(mean, scale, W, c)`` with scores ``W((x - mean)/scale) + c`` (one row per score) of a fitted linear
    learner whose route score is its ``decision_function``; else a DataError with the reason."""
    steps = list(estimator.steps) if isinstance(estimator, Pipeline) else [("model", estimator)]
    *before, (_, last) = steps
    linear = isinstance(last, (LogisticRegression, LinearSVC)) or (isinstance(last, SVC) and last.kernel == "linear")
    scalers = [step for _, step in before]
    if not linear or len(scalers) > 1 or any(not isinstance(s, StandardScaler) for s in scalers):
        raise DataError(
            f"a route around {describe_estimator(estimator)} cannot be saved safely: only a linear score "
            "(LogisticRegression, LinearSVC, SVC(kernel='linear'), optionally after one StandardScaler) is stored "
            "as numbers; an RBF SVC would need its support vectors and a tree ensemble can only be stored by "
            "pickle, which runs code when loaded. Refit the route from the data instead, or use learner 'logistic'."
        )
    if method != "decision_function":
        raise DataError(
            f"this route thresholds {describe_estimator(estimator)}'s {method}, which is not linear in x; only a "
            "route on decision_function (the default for these learners) can be saved."
        )
    if isinstance(last, SVC) and len(last.classes_) > 2:
        raise DataError(
            "a route around SVC(kernel='linear') with several classes cannot be saved: its one-vs-rest scores are "
            "built from one-vs-one machines, not one linear function per class; use LinearSVC or 'logistic'."
        )
    coef = np.atleast_2d(np.asarray(last.coef_, dtype=float))
    p = coef.shape[1]
    if scalers:
        s = scalers[0]
        mean = np.zeros(p) if s.mean_ is None else np.asarray(s.mean_, dtype=float)
        scale = np.ones(p) if s.scale_ is None else np.asarray(s.scale_, dtype=float)
    else:
        mean, scale = np.zeros(p), np.ones(p)
    return mean, scale, coef, np.atleast_1d(np.asarray(last.intercept_, dtype=float))


def _common_fields(results: Any, p: int) -> dict[str, Any]:
    """The metadata both forms write the same way."""
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "columns": list(results.model.exog_names),
        "formula": None if results.model.formula is None else _formula_fields(results.model.formula),
        "kernel": {"name": "linear", "gamma": None, "degree": 3, "coef0": 1.0, "rank": p, "numerical_rank": p,
                   "exact": True},
    }


def save_np_model(results: Any, path: str | Path) -> Path:
    """Write a route with a linear score (module docstring) to ``path``; refuse the rest with the reason."""
    mean, scale, W, c = linear_parts(results.estimator, results.model.method)
    arrays = {"scale_mean": mean, "scale_sd": np.where(scale > 0, scale, 1.0)}
    if results.model.multiclass:
        return _save_multiclass(results, path, W, c, arrays)
    if W.shape[0] != 1:
        raise DataError("this two-class route's learner has several score rows; it cannot be stored as one rule.")
    coding = results.model.coding
    calibration = results.calibration
    va = calibration.predictor
    metadata = _common_fields(results, W.shape[1]) | {
        "labels": {"levels": [_value(v) for v in coding.levels], "positive": _value(coding.positive),
                   "name": coding.name, "dtype": _label_kind(coding)},
        "intercept": float(c[0]) + float(results.intercept),
        "calibration": {"method": calibration.method, "n": va.n, "n_positive": va.n_positive,
                        "folds": calibration.folds},
        "report": np_report(results),
    }
    a, b = calibration.sigmoid
    metadata["calibration"]["model"] = {"intercept": metadata["intercept"], "slope": float(a), "offset": float(b),
                                        "penalty": 0.0, "n": va.n}
    arrays |= {"coef": W[0], "va_scores": va.scores, "va_p0": va.p0, "va_p1": va.p1, "prob_coef": W[0]}
    return write_archive(path, metadata, arrays)


def _save_multiclass(results: Any, path: str | Path, W: np.ndarray, c: np.ndarray,
                     arrays: dict[str, np.ndarray]) -> Path:
    """Several classes in the multiclass form (module docstring): scores ``W s(x) + c + shift``."""
    K = results.n_classes
    if W.shape[0] == 1 and K == 2:  # one two-class score s: the class scores (-s/2, s/2) of the route
        W, c = np.vstack([-W[0] / 2, W[0] / 2]), np.array([-c[0] / 2, c[0] / 2])
    if W.shape[0] != K:
        raise DataError(f"the learner gives {W.shape[0]} linear scores for {K} classes; it cannot be saved.")
    coding = results.model.coding
    calibration = results.calibration
    confusion = results.confusion_matrix("holdout")
    report = np_report(results) | {"confusion": {str(t): {str(q): int(confusion.loc[t, q]) for q in confusion.columns}
                                                 for t in confusion.index}}
    fields: dict[str, Any] = {"method": calibration.method, "n": calibration.predictors[0].n,
                              "folds": calibration.folds, "offsets": [float(v) for v in c],
                              "n_positive": [va.n_positive for va in calibration.predictors]}
    if calibration.softmax is not None:
        fields["softmax"] = {"weights": calibration.softmax.weights.tolist(),
                             "offsets": calibration.softmax.offsets.tolist()}
    for k, va in enumerate(calibration.predictors):
        arrays |= {f"va_scores_{k}": va.scores, f"va_p0_{k}": va.p0, f"va_p1_{k}": va.p1}
    metadata = _common_fields(results, W.shape[1]) | {
        "kind": "multiclass",
        "labels": {"levels": [_value(v) for v in coding.levels], "name": coding.name, "dtype": _label_kind(coding)},
        "intercept": [float(v) for v in c + results.offsets],
        "calibration": fields,
        "report": report,
    }
    arrays["coef"] = W
    return write_archive(path, metadata, arrays)
