r"""Model files of the Neyman-Pearson route, for the learners that can be saved safely.

A two-class route whose score is a linear function of the design,
:math:`s(x) = w^\top((x - m)/\sigma) + c`, is a linear rule
:math:`f(x) = s(x) + b` (b the order-statistic intercept), so it is written in
the two-class format of :mod:`csvm_stats.interfaces.persistence` (no pickle;
``load_model`` reads it and returns a :class:`~csvm_stats.interfaces.persistence.SavedModel`
that predicts, gives the stored Venn-Abers probabilities and carries the
report). The learners with such a score:

* ``LogisticRegression``, ``LinearSVC`` and ``SVC(kernel="linear")``, alone or
  after a ``StandardScaler`` in a ``Pipeline`` (so ``"logistic"`` of
  :mod:`csvm_stats.models.learners`), fitted on two classes.

Every other learner is refused with the reason: an RBF ``SVC`` (``"svc"``)
would need its support vectors in the kernel form of the format, and a tree
ensemble (``"hgb"``) can only be stored by pickle, which runs code when it is
loaded; several classes (the multiclass file form stores a CSVM, not a
route's shifted scores) are refused too.
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


def linear_parts(estimator: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """``(mean, scale, w, c)`` with score ``w'((x - mean)/scale) + c`` of a fitted linear learner, or a DataError."""
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
    coef = np.asarray(last.coef_, dtype=float)
    if coef.shape[0] != 1:
        raise DataError("only two-class routes can be saved; this learner has several score rows.")
    p = coef.shape[1]
    if scalers:
        s = scalers[0]
        mean = np.zeros(p) if s.mean_ is None else np.asarray(s.mean_, dtype=float)
        scale = np.ones(p) if s.scale_ is None else np.asarray(s.scale_, dtype=float)
    else:
        mean, scale = np.zeros(p), np.ones(p)
    return mean, scale, coef[0], float(np.ravel(last.intercept_)[0])


def save_np_model(results: Any, path: str | Path) -> Path:
    """Write a two-class route with a linear score (module docstring) to ``path``; refuse the rest with the reason."""
    if getattr(results.model, "multiclass", True):
        raise DataError("only two-class Neyman-Pearson routes can be saved; this one has several classes.")
    mean, scale, w, c = linear_parts(results.estimator)
    coding = results.model.coding
    calibration = results.calibration
    va = calibration.predictor
    metadata = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "labels": {"levels": [_value(v) for v in coding.levels], "positive": _value(coding.positive),
                   "name": coding.name, "dtype": _label_kind(coding)},
        "columns": list(results.model.exog_names),
        "formula": None if results.model.formula is None else _formula_fields(results.model.formula),
        "kernel": {"name": "linear", "gamma": None, "degree": 3, "coef0": 1.0, "rank": int(w.size),
                   "numerical_rank": int(w.size), "exact": True},
        "intercept": c + float(results.intercept),
        "calibration": {"method": calibration.method, "n": va.n, "n_positive": va.n_positive,
                        "folds": calibration.folds},
        "report": np_report(results),
    }
    arrays = {"coef": w, "scale_mean": mean, "scale_sd": np.where(scale > 0, scale, 1.0),
              "va_scores": va.scores, "va_p0": va.p0, "va_p1": va.p1}
    return write_archive(path, metadata, arrays)
