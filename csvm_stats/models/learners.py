"""Learners by name, and the score a Neyman-Pearson route thresholds.

R users, the command line and :func:`csvm_stats.models.routes.compare_routes`
choose a scikit-learn classifier by name (:data:`LEARNERS`):

* ``"logistic"`` - ``StandardScaler`` then ``LogisticRegression(max_iter=1000)``;
* ``"svc"`` - ``StandardScaler`` then ``SVC()`` (RBF kernel, C = 1, gamma "scale");
* ``"hgb"`` - ``HistGradientBoostingClassifier(random_state=0)``.

:func:`score_method` says which method gives the score of a classifier:
``decision_function`` when it has one, else ``predict_proba`` (the column of
the positive class, or every class's column); :func:`scores` computes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from csvm_stats.exceptions import DataError
from csvm_stats.preprocessing.validation import did_you_mean

#: The learners R users and the command line choose by name.
LEARNERS: dict[str, Callable[[], BaseEstimator]] = {
    "logistic": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
    "svc": lambda: make_pipeline(StandardScaler(), SVC()),
    "hgb": lambda: HistGradientBoostingClassifier(random_state=0),
}

SCORE_METHODS: tuple[str, ...] = ("decision_function", "predict_proba")


def make_learner(estimator: Any) -> BaseEstimator:
    """A fresh (unfitted) clone of ``estimator``, or the learner of that name (:data:`LEARNERS`)."""
    if estimator is None:
        return LEARNERS["logistic"]()
    if isinstance(estimator, str):
        if estimator not in LEARNERS:
            raise DataError(
                f"estimator must be a scikit-learn classifier or one of {tuple(LEARNERS)}, got "
                f"{estimator!r}{did_you_mean(estimator, tuple(LEARNERS))}."
            )
        return LEARNERS[estimator]()
    if not (hasattr(estimator, "fit") and hasattr(estimator, "get_params")):
        raise DataError(
            f"estimator must be a scikit-learn classifier (with fit and get_params) or one of {tuple(LEARNERS)}, "
            f"got {type(estimator).__name__}."
        )
    return clone(estimator)


def describe_estimator(estimator: Any) -> str:
    """``"StandardScaler -> SVC"`` for a pipeline, else the class name."""
    steps = getattr(estimator, "steps", None)
    if steps:
        return " -> ".join(type(step).__name__ for _, step in steps)
    return type(estimator).__name__


def score_method(estimator: Any) -> str:
    """``"decision_function"`` if ``estimator`` has it, else ``"predict_proba"``, else a :class:`DataError`."""
    for method in SCORE_METHODS:
        if hasattr(estimator, method):
            return method
    raise DataError(
        f"{type(estimator).__name__} has neither decision_function nor predict_proba, so it gives no score to "
        "set a threshold on. Use a classifier with a score, or wrap this one in "
        "sklearn.calibration.CalibratedClassifierCV, which adds predict_proba."
    )


def scores(estimator: Any, X: Any, method: str, n_classes: int, *, per_class: bool = False) -> np.ndarray:
    """The score of a fitted ``estimator`` trained on labels 0..K-1 (:func:`shape_scores` of its ``method``)."""
    raw = np.asarray(getattr(estimator, method)(X), dtype=float)
    return shape_scores(raw, n_classes, per_class=per_class, source=f"{type(estimator).__name__}.{method}")


def shape_scores(raw: np.ndarray, n_classes: int, *, per_class: bool = False, source: str = "the score") -> np.ndarray:
    """Scores as the routes use them: (n,) for two classes, (n, K) for several or with ``per_class``.

    Two classes: the decision value of class 1, or its probability (column 1).
    Per class: one column per class; a one-dimensional two-class score s
    becomes the columns ``(-s/2, s/2)``, whose difference is s.
    """
    raw = np.asarray(raw, dtype=float)
    if n_classes == 2 and not per_class:
        return raw[:, 1] if raw.ndim == 2 else raw
    if raw.ndim == 1:
        return np.column_stack([-raw / 2, raw / 2])
    if raw.shape[1] != n_classes:
        raise DataError(
            f"{source} gives {raw.shape[1]} columns for {n_classes} classes; a one-vs-rest score per class is "
            "needed (for SVC use decision_function_shape='ovr')."
        )
    return raw
