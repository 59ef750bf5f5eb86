r"""Venn-Abers calibration around any binary classifier, in scikit-learn's ``CalibratedClassifierCV`` manner.

``VennAbersClassifier(estimator, cv=5).fit(X, y)`` computes out-of-fold
scores of ``estimator`` (``decision_function``, else the positive column of
``predict_proba``) by ``cross_val_predict`` over ``cv``, fits a clone of the
estimator on all of (X, y), and calibrates that classifier's scores by a
:class:`~csvm_stats.probability.venn_abers.VennAbers` predictor built on the
out-of-fold scores - as ``CalibratedClassifierCV(..., ensemble=False)``
does with a sigmoid or an isotonic fit. To calibrate an already fitted
classifier on held-out data instead (inductive Venn-Abers, with its
guarantee), wrap it in ``sklearn.frozen.FrozenEstimator`` and fit on the
held-out data: a frozen estimator is not refitted, so its scores on those
data are the calibration scores.

``predict_proba`` gives the merged probability p1 / (1 - p0 + p1),
``predict_interval`` the interval [p0, p1] of the positive class
``classes_[1]``, and ``predict`` the class of larger probability (the
``CalibratedClassifierCV`` convention).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.model_selection import cross_val_predict
from sklearn.svm import LinearSVC
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from csvm_stats.exceptions import DataError
from csvm_stats.probability.venn_abers import VennAbers, merge


def _scores(estimator, X) -> np.ndarray:
    if hasattr(estimator, "decision_function"):
        return np.asarray(estimator.decision_function(X), dtype=float)
    return np.asarray(estimator.predict_proba(X), dtype=float)[:, 1]


class VennAbersClassifier(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Venn-Abers probabilities for a binary classifier's scores (module docstring).

    Parameters
    ----------
    estimator : estimator or None
        A binary classifier with ``decision_function`` or ``predict_proba``;
        default ``LinearSVC()`` (as CalibratedClassifierCV).
    cv : int, splitter or iterable, default 5
        Folds for the out-of-fold scores, as in ``cross_val_predict``.

    Attributes
    ----------
    classes_ : the two labels; ``classes_[1]`` is the positive class.
    estimator_ : the estimator fitted on all the data.
    calibrator_ : the :class:`~csvm_stats.probability.venn_abers.VennAbers` predictor.

    Examples
    --------
    >>> from sklearn.svm import LinearSVC
    >>> from csvm_stats.probability.calibrated import VennAbersClassifier
    >>> from csvm_stats.data.datasets import load_dataset
    >>> X, y = load_dataset("wisconsin")
    >>> X = (X - X.mean()) / X.std()
    >>> va = VennAbersClassifier(LinearSVC(), cv=5).fit(X, y)
    >>> va.predict_proba(X.head(2)).shape
    (2, 2)
    """

    def __init__(self, estimator=None, *, cv=5):
        self.estimator = estimator
        self.cv = cv

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        """Out-of-fold scores, the estimator refitted on all rows, and the calibrator; returns ``self``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Two labels; ``classes_[1]`` is positive.

        Returns
        -------
        VennAbersClassifier
            ``self``, fitted.

        Raises
        ------
        csvm_stats.exceptions.DataError
            Not exactly two classes, or an estimator without scores.

        Examples
        --------
        >>> from sklearn.svm import LinearSVC
        >>> from csvm_stats.probability.calibrated import VennAbersClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> X = (X - X.mean()) / X.std()
        >>> va = VennAbersClassifier(LinearSVC(), cv=5).fit(X, y)
        >>> va.classes_.tolist()
        [-1, 1]
        """
        X, y = validate_data(self, X, y, dtype=None, ensure_all_finite=True)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size != 2:
            raise DataError(
                f"Only binary classification is supported: Venn-Abers calibrates one score and y has "
                f"{self.classes_.size} class(es). Recode the response into two classes."
            )
        base = LinearSVC() if self.estimator is None else self.estimator
        method = "decision_function" if hasattr(base, "decision_function") else "predict_proba"
        oof = cross_val_predict(clone(base), X, y, cv=self.cv, method=method)
        oof = oof[:, 1] if oof.ndim == 2 else oof
        self.estimator_ = clone(base).fit(X, y)
        self.calibrator_ = VennAbers.fit(oof, y == self.classes_[1])
        return self

    def predict_interval(self, X) -> np.ndarray:
        """(n, 2) interval ``[p0, p1]`` of P(``classes_[1]`` | x).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with the columns the estimator was fitted on.

        Returns
        -------
        numpy.ndarray of shape (n_samples, 2)
            The interval ``[p0, p1]``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            The classifier is not fitted.

        Examples
        --------
        >>> from sklearn.svm import LinearSVC
        >>> from csvm_stats.probability.calibrated import VennAbersClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> X = (X - X.mean()) / X.std()
        >>> va = VennAbersClassifier(LinearSVC(), cv=5).fit(X, y)
        >>> interval = va.predict_interval(X.head(3))
        >>> bool((interval[:, 0] <= interval[:, 1]).all())
        True
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=None, reset=False)
        p0, p1 = self.calibrator_.interval(_scores(self.estimator_, X))
        return np.column_stack([p0, p1])

    def predict_proba(self, X) -> np.ndarray:
        """(n, 2) merged probabilities, columns in ``classes_`` order.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with the columns the estimator was fitted on.

        Returns
        -------
        numpy.ndarray of shape (n_samples, 2)
            Merged probabilities, columns in ``classes_`` order.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            The classifier is not fitted.

        Examples
        --------
        >>> from sklearn.svm import LinearSVC
        >>> from csvm_stats.probability.calibrated import VennAbersClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> X = (X - X.mean()) / X.std()
        >>> va = VennAbersClassifier(LinearSVC(), cv=5).fit(X, y)
        >>> bool(((va.predict_proba(X) >= 0) & (va.predict_proba(X) <= 1)).all())
        True
        """
        interval = self.predict_interval(X)
        p = merge(interval[:, 0], interval[:, 1])
        return np.column_stack([1.0 - p, p])

    def predict(self, X) -> np.ndarray:
        """The class of larger probability (ties to ``classes_[1]``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with the columns the estimator was fitted on.

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
            The predicted labels.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            The classifier is not fitted.

        Examples
        --------
        >>> from sklearn.svm import LinearSVC
        >>> from csvm_stats.probability.calibrated import VennAbersClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> X = (X - X.mean()) / X.std()
        >>> va = VennAbersClassifier(LinearSVC(), cv=5).fit(X, y)
        >>> va.predict(X.head(2)).shape
        (2,)
        """
        p = self.predict_proba(X)[:, 1]
        return np.where(p >= 0.5, self.classes_[1], self.classes_[0])
