r"""scikit-learn meta-estimator for the Neyman-Pearson route: :class:`NeymanPearsonClassifier`.

``NeymanPearsonClassifier(LogisticRegression(), tpr_min=0.9).fit(X, y)`` splits
the rows as the CSVM does (stratified, seeded by ``random_state``; the
training and anchor shares together train a clone of ``estimator``, the
held-out share sets the threshold of its score by the order statistic,
:mod:`csvm_stats.models.neyman_pearson`), so that
:math:`P(\mathrm{TPR} \ge 0.9) \ge 1 - \alpha`. The full results, with the
rate table, the statements and the summary, are kept as ``results_``.

Conventions: ``classes_`` sorted, ``classes_[1]`` positive (two classes);
``decision_function(X) >= 0`` predicts ``classes_[1]``; with ``recall_min``
``decision_function`` has one column per class and ``predict`` is its argmax.
``predict_proba`` gives the Venn-Abers probabilities of the results (monotone
in the decision value, so ``predict`` is the threshold
``results_.probability_threshold`` on them, not argmax).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from csvm_stats.exceptions import DataError
from csvm_stats.models.learners import make_learner, score_method
from csvm_stats.models.neyman_pearson import NeymanPearson
from csvm_stats.preprocessing.design import DEFAULT_FRACTIONS
from csvm_stats.preprocessing.validation import check_feature_table, check_labels_present


class NeymanPearsonClassifier(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """A classifier whose threshold guarantees a true positive rate, true negative rate or per-class recalls.

    Parameters
    ----------
    estimator : a scikit-learn classifier with ``decision_function`` or
        ``predict_proba``, or a learner's name ``"logistic"`` (the default),
        ``"svc"`` or ``"hgb"`` (:mod:`csvm_stats.models.learners`).
    tpr_min, tnr_min : the required rate of ``classes_[1]`` / ``classes_[0]``
        (give one of them, or ``recall_min``).
    recall_min : ``{label: required recall}`` for several classes.
    alpha : P(a guaranteed rate is below its requirement) <= alpha.
    fractions : the CSVM's (train, anchor, held-out) shares; the estimator is
        fitted on the first two together, the threshold set on the third.
    random_state : seeds the split (None: a seed is drawn, kept in ``results_.random_state``).

    Attributes
    ----------
    classes_ : the labels, sorted.
    results_ : :class:`~csvm_stats.models.np_results.BinaryNPResults` or
        :class:`~csvm_stats.models.np_multiclass_results.MulticlassNPResults` (``rates``,
        ``statements``, ``summary()``, ``sample_roles``).
    estimator_ : the fitted clone of ``estimator`` (fitted on class codes 0..K-1).
    n_features_in_, feature_names_in_ : as in scikit-learn.

    Examples
    --------
    >>> from csvm_stats import NeymanPearsonClassifier
    >>> from csvm_stats.data.datasets import load_dataset
    >>> X, labels = load_dataset("wisconsin")
    >>> y = (labels < 0).astype(int)   # 1 = malignant
    >>> clf = NeymanPearsonClassifier("logistic", tpr_min=0.9, random_state=0).fit(X, y)
    >>> clf.results_.rates.loc["tpr", "method"]
    'order statistic'
    >>> clf.predict(X.iloc[:3]).shape
    (3,)
    """

    def __init__(self, estimator=None, *, tpr_min=None, tnr_min=None, recall_min=None, alpha=0.05,
                 fractions=DEFAULT_FRACTIONS, random_state=None):
        self.estimator = estimator
        self.tpr_min = tpr_min
        self.tnr_min = tnr_min
        self.recall_min = recall_min
        self.alpha = alpha
        self.fractions = fractions
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self.recall_min is not None
        return tags

    def _seed(self) -> int | None:
        if self.random_state is None or isinstance(self.random_state, (int, np.integer)):
            return None if self.random_state is None else int(self.random_state)
        if isinstance(self.random_state, np.random.RandomState):
            return int(self.random_state.randint(0, 2**31 - 1))
        raise DataError(f"random_state must be None, an int or a RandomState, got {self.random_state!r}.")

    def fit(self, X, y):
        """Split, fit the estimator on the training rows, set the threshold on the held-out rows.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n, p)
            Numeric predictors.
        y : array-like, shape (n,)
            Class labels (two classes, or several with ``recall_min``).

        Returns
        -------
        NeymanPearsonClassifier
            ``self``, with ``results_``, ``estimator_`` and ``classes_``.

        Examples
        --------
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> y = (labels < 0).astype(int)   # 1 = malignant
        >>> NeymanPearsonClassifier(tnr_min=0.9, random_state=0).fit(X, y).classes_.tolist()
        [0, 1]
        """
        score_method(make_learner(self.estimator))  # an estimator without a score fails before any work
        try:
            check_feature_table(X)
        except DataError as error:  # the route splits and scores numeric rows; a Pipeline's own encoders never see X
            raise DataError(
                f"{error} NeymanPearsonClassifier hands its estimator numeric rows only, so a Pipeline that "
                "encodes text columns itself cannot be used here: code the columns first (e.g. pd.get_dummies), "
                "or use NeymanPearson.from_formula('y ~ .', data, estimator), which codes factors as dummies."
            ) from None
        if y is not None:
            check_labels_present(y)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise DataError(f"y has one class only ({self.classes_.tolist()}); a classifier needs examples of both.")
        if self.recall_min is None and self.classes_.size > 2:
            raise DataError(
                f"Only binary classification is supported with tpr_min/tnr_min; y has {self.classes_.size} classes: "
                "state the required recall of each class with recall_min={label: p}."
            )
        labels: Any = y
        kwargs: dict[str, Any] = {"recall_min": self.recall_min} if self.recall_min is not None else {
            "tpr_min": self.tpr_min, "tnr_min": self.tnr_min, "positive": self.classes_[1]}
        if self.recall_min is None:
            labels = pd.Series(y, dtype=object)
        model = NeymanPearson(labels, X, self.estimator, alpha=self.alpha, fractions=self.fractions, **kwargs)
        self.results_ = model.fit(random_state=self._seed())
        self.estimator_ = self.results_.estimator
        return self

    def decision_function(self, X) -> np.ndarray:
        """Two classes: score + intercept (``classes_[1]`` where >= 0); several: (n, K) shifted class scores.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n, p)
            Rows with the predictors the estimator was fitted on.

        Returns
        -------
        numpy.ndarray
            Shape (n,) for two classes, (n, K) for several.

        Examples
        --------
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> y = (labels < 0).astype(int)   # 1 = malignant
        >>> clf = NeymanPearsonClassifier(tpr_min=0.9, random_state=0).fit(X, y)
        >>> clf.decision_function(X.iloc[:4]).shape
        (4,)
        """
        check_is_fitted(self)
        check_feature_table(X)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.results_.decision_function(X).to_numpy()

    def predict(self, X) -> np.ndarray:
        """``classes_[1]`` where the decision value is at least 0; several classes: the largest shifted score's.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n, p)
            Rows with the predictors the estimator was fitted on.

        Returns
        -------
        numpy.ndarray
            One label of ``classes_`` per row.

        Examples
        --------
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> y = (labels < 0).astype(int)   # 1 = malignant
        >>> clf = NeymanPearsonClassifier(tpr_min=0.9, random_state=0).fit(X, y)
        >>> set(clf.predict(X)) <= {0, 1}
        True
        """
        scores = self.decision_function(X)
        if scores.ndim == 2:
            return self.classes_[scores.argmax(axis=1)]
        return np.where(scores >= 0, self.classes_[1], self.classes_[0])

    def predict_proba(self, X) -> np.ndarray:
        """Calibrated class probabilities, columns in ``classes_`` order.

        Two classes: Platt's sigmoid of the route's decision value, fitted on
        the held-out sample (cross-fitted when it is small), increasing in it,
        so the class rule is ``P >= results_.probability_threshold``, not
        ``P >= 1/2``; several classes: the route's per-class calibration
        (``results_.calibration``).

        Parameters
        ----------
        X : array-like or DataFrame, shape (n, p)
            Rows with the predictors the estimator was fitted on.

        Returns
        -------
        numpy.ndarray
            Shape (n, K), rows summing to 1.

        Examples
        --------
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> y = (labels < 0).astype(int)   # 1 = malignant
        >>> clf = NeymanPearsonClassifier(tpr_min=0.9, random_state=0).fit(X, y)
        >>> clf.predict_proba(X.iloc[:2]).shape
        (2, 2)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        p = self.results_.predict_proba(X).to_numpy()
        return p if p.ndim == 2 else np.column_stack([1.0 - p, p])

    def summary(self):
        """The fit's :class:`~csvm_stats.reporting.summary.Summary`.

        Returns
        -------
        Summary
            ``results_.summary()``: rate table, statements, samples (text, HTML, LaTeX).

        Examples
        --------
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> clf = NeymanPearsonClassifier(tpr_min=0.9, random_state=0).fit(X, (labels < 0).astype(int))
        >>> "Confidence statements" in clf.summary().as_text()
        True
        """
        check_is_fitted(self)
        return self.results_.summary()

    @classmethod
    def from_formula(cls, formula: str, data: pd.DataFrame, estimator: Any = None, **kwargs: Any) -> NeymanPearson:
        """The route for formula users: ``NeymanPearsonClassifier.from_formula("y ~ .", df, "svc", tpr_min=0.9).fit()``.

        Parameters
        ----------
        formula : str
            ``"response ~ terms"`` in the safe grammar of
            :meth:`csvm_stats.CSVM.from_formula`.
        data : pandas.DataFrame
            The data.
        estimator : str, classifier or None
            ``"logistic"`` (``None``), ``"svc"``, ``"hgb"`` or a scikit-learn classifier.
        **kwargs
            Keyword arguments of :class:`~csvm_stats.models.neyman_pearson.NeymanPearson`
            (``tpr_min``, ``tnr_min``, ``recall_min``, ``alpha``, ``positive``, ``fractions``).

        Returns
        -------
        NeymanPearson
            The statsmodels-shaped route; ``fit(random_state=...)`` gives results
            whose ``predict(newdata)`` codes new data through the formula.

        Examples
        --------
        >>> import numpy as np
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> data = X.assign(diagnosis=np.where(labels > 0, "benign", "malignant"))
        >>> model = NeymanPearsonClassifier.from_formula("diagnosis ~ .", data, tpr_min=0.9, positive="malignant")
        >>> res = model.fit(random_state=0)
        >>> res.predict(data.iloc[:2]).tolist() in (["malignant"] * 2, ["benign"] * 2, ["malignant", "benign"], ["benign", "malignant"])
        True
        """
        return NeymanPearson.from_formula(formula, data, estimator, **kwargs)
