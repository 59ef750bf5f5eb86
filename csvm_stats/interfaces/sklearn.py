r"""scikit-learn estimator for the constrained SVM: :class:`CSVMClassifier`.

``CSVMClassifier(tpr_min=0.95).fit(X, y)`` follows scikit-learn's contract
(``__init__`` stores the arguments, ``fit`` validates and returns ``self``,
learned state ends in ``_``), so it works in ``Pipeline``, ``GridSearchCV``
and ``cross_validate``. Internally it is the array core of
:class:`csvm_stats.models.model.CSVM`: the rows of ``X`` are split (stratified,
seeded by ``random_state``) into the training sample I, the anchor sample J on
which the required rates are imposed, and an optional held-out sample H on
which the fitted rule's rates are certified; the CSVM

.. math::

    \min\; w^\top w + C \sum_{i \in I} \xi_i \quad\text{s.t. the hinge
    constraints on I and the required anchor counts on J}

is solved by :func:`csvm_stats.optimization.engine.fit_csvm`. The full results, with the
summary and the confidence statements, are kept as ``results_``.

Conventions
-----------
* **Two classes.** ``classes_`` holds the two labels sorted; ``classes_[1]``
  is the positive class (scikit-learn's convention, and R's second level):
  ``tpr_min`` constrains the rate of ``classes_[1]`` and ``tnr_min`` that of
  ``classes_[0]``. ``decision_function(X) >= 0`` predicts ``classes_[1]``.
* **Several classes** (or ``recall_min`` given): the multiclass CSVM of
  :mod:`csvm_stats.multiclass` with the required recall of each class in
  ``recall_min={label: p}``; ``decision_function`` returns one column per
  class of ``classes_`` and ``predict`` the class of the largest score.
  ``predict_proba`` (the default ``probability="venn-abers"``) gives
  one-vs-rest Venn-Abers probabilities of the class margins, normalised to
  sum to 1 (:mod:`csvm_stats.multiclass.probability`), and
  ``predict_interval`` an (n, K, 2) array of each class's interval
  [p0, p1]; the class of largest probability need not be ``predict``'s.
  The bootstrap ensembles are two-class methods.
* **C** is the CSVM's: objective ``w'w + C sum(xi)``, i.e. ``SVC(C=C/2)``.
  Without any rate constraint no anchor or held-out sample is drawn and the
  fit is that SVM on all rows.
* **Probabilities** (``probability="venn-abers"``, the default) are the
  results' (:mod:`csvm_stats.probability.fit_calibration`): a logistic
  probability model fitted beside the rule. With a held-out sample large
  enough it is fitted on all the rows (held-out ones included) and
  recalibrated on its out-of-fold scores, and the Venn-Abers interval is that
  of the same regression fitted on the training and anchor rows alone,
  calibrated on the held-out sample; else (e.g. without a requirement, when
  every row trains) the model is fitted on the training and anchor rows and
  its recalibration and interval on its out-of-fold scores (cross-fitted, no
  CSVM refit; the interval then has no finite-sample guarantee). Either way ``predict`` is not a
  threshold on P and can differ from ``argmax(predict_proba)``
  (``results_.calibration.rule`` counts how often, on the held-out sample or
  on every row). ``predict_interval`` gives the interval [p0, p1] (Venn
  calibration, not a confidence interval for the true probability).
  ``probability="ebb" | "cebb1" | "cebb2"`` fits the paper's bootstrap
  ensemble (:class:`csvm_stats.probability.ebb.EBB`) instead: ``"ebb"`` the plain
  ensemble, ``"cebb1"`` with its threshold moved to meet the one required
  class rate, ``"cebb2"`` with the CSVM inside (slow: one mixed-integer
  program per bootstrap sample and grid point). ``False`` offers no
  ``predict_proba``.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from csvm_stats.exceptions import DataError
from csvm_stats.models.model import CSVM
from csvm_stats.multiclass.model import MulticlassCSVM
from csvm_stats.preprocessing.validation import (
    KERNEL_PARAMETERS,
    check_feature_table,
    check_kernel_options,
    check_labels_present,
)
from csvm_stats.probability.ebb import EBB

PROBABILITY_VARIANTS: tuple[str, ...] = ("venn-abers", "ebb", "cebb1", "cebb2")


def _probability_requested(estimator: CSVMClassifier) -> bool:
    """``predict_proba`` is offered unless ``probability=False`` (or None)."""
    return estimator.probability is not False and estimator.probability is not None


def _venn_abers(estimator: CSVMClassifier) -> bool:
    """``predict_interval`` is offered with the Venn-Abers probabilities."""
    return estimator.probability in (True, "venn-abers") and _probability_requested(estimator)


class CSVMClassifier(ClassifierMixin, BaseEstimator):
    """Constrained SVM with required true positive / true negative rates or accuracy.

    Parameters
    ----------
    tpr_min, tnr_min, acc_min : float or None
        Required rate of ``classes_[1]``, of ``classes_[0]``, and accuracy on
        the anchor sample; ``None`` for none.
    alpha : float, default 0.05
        Level of the margin added to the required rates and of the held-out
        confidence statements.
    bound : {"hoeffding", "binomial", "none"}, default "hoeffding"
        Margin turning a required rate into a required anchor count: the
        paper's Hoeffding margin, the exact binomial one, or none.
    C : float, default 1.0
        Weight of the hinge loss (see :class:`csvm_stats.models.model.CSVM`).
    kernel : {"linear", "rbf", "poly"} or callable, default "linear"
        The kernel, or a callable returning the Gram matrix.
    gamma : float or "scale", default "scale"
        RBF and polynomial kernel parameter; ignored by the other kernels,
        as scikit-learn's ``SVC`` ignores it, so that one parameter grid can
        span several kernels (the formula API and the command line refuse a
        parameter the kernel does not use).
    degree : int, default 3
        Polynomial degree; ignored by the other kernels.
    coef0 : float, default 1.0
        Polynomial kernel offset; ignored by the other kernels.
    rank : int or None
        Truncated kernel factorisation (``None``: exact).
    big_m : float or None
        ``None``: the exact CSVM; a number: the paper's big-M model.
    penalty : {"l2", "l1"}, default "l2"
        ``"l1"``: the L1-norm CSVM (linear kernel; :mod:`csvm_stats.sparse.model`).
    max_features : int or None
        At most this many non-zero coefficients (linear kernel).
    screen : int or None
        Columns the cardinality MIQP sees (default rule in :mod:`csvm_stats.sparse.model`).
    anchor_size, holdout_size : float, default 0.25
        Shares of the rows for the anchor and the held-out sample when a rate
        is required (the rest trains); ignored, and all rows train, when no
        rate is required.
    standardize : bool, default True
        Centre and scale columns with the training and anchor rows.
    solver : str, default "auto"
        Backend (``"auto"``, ``"bnb"``, ``"scip"``, ``"gurobi"``, ``"highs"``).
    time_limit : float, default 60.0
        Per-fit time limit in seconds.
    mip_gap : float, default 1e-4
        Relative optimality gap.
    probability : {"venn-abers", "ebb", "cebb1", "cebb2"} or bool, default "venn-abers"
        ``"venn-abers"`` (or ``True``): calibrated probabilities of the CSVM's
        decision function; an EBB variant: fit that bootstrap ensemble as
        well; ``False``: no ``predict_proba``.
    n_bootstrap : int, default 100
        B of the ensemble (EBB variants only).
    random_state : int or None
        Seeds the sample split, the solver and the bootstrap.
    recall_min : dict or None
        ``{label: required recall}`` for any subset of the classes (the
        multiclass CSVM; with more than two classes only this applies).

    Attributes
    ----------
    classes_ : the labels, sorted; with two classes ``classes_[1]`` is positive.
    results_ : :class:`csvm_stats.models.results.CSVMResults` (``summary()``,
        ``rates``, ``statements``, ``solver``).
    coef_ : (1, p) coefficients on the original columns (linear kernel only);
        (K, p), one row per class, for the multiclass CSVM.
    intercept_ : (1,) intercept on the original columns (linear kernel only); (K,) for several classes.
    probability_estimator_ : with an EBB variant only, the fitted
        :class:`csvm_stats.probability.ebb.EBB` (after a ``StandardScaler`` when
        ``standardize``), fitted on all rows with its own grid of C values.
    n_features_in_, feature_names_in_ : as in scikit-learn.

    Examples
    --------
    >>> from csvm_stats import CSVMClassifier
    >>> from csvm_stats.data.datasets import load_dataset
    >>> X, y = load_dataset("wisconsin")
    >>> clf = CSVMClassifier(tpr_min=0.9, bound="binomial", random_state=0).fit(X, y)
    >>> clf.predict(X.head(3)).shape
    (3,)
    """

    def __init__(
        self,
        *,
        tpr_min=None,
        tnr_min=None,
        acc_min=None,
        alpha=0.05,
        bound="hoeffding",
        C=1.0,
        kernel="linear",
        gamma="scale",
        degree=3,
        coef0=1.0,
        rank=None,
        big_m=None,
        penalty="l2",
        max_features=None,
        screen=None,
        anchor_size=0.25,
        holdout_size=0.25,
        standardize=True,
        solver="auto",
        time_limit=60.0,
        mip_gap=1e-4,
        probability="venn-abers",
        n_bootstrap=100,
        random_state=None,
        recall_min=None,
    ):
        self.recall_min = recall_min
        self.tpr_min = tpr_min
        self.tnr_min = tnr_min
        self.acc_min = acc_min
        self.alpha = alpha
        self.bound = bound
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.rank = rank
        self.big_m = big_m
        self.penalty = penalty
        self.max_features = max_features
        self.screen = screen
        self.anchor_size = anchor_size
        self.holdout_size = holdout_size
        self.standardize = standardize
        self.solver = solver
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.probability = probability
        self.n_bootstrap = n_bootstrap
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # several classes unless a two-class option (a rate of one class, probabilities) is set
        binary_options = any(v is not None for v in (self.tpr_min, self.tnr_min, self.acc_min))
        ensemble = self.probability in ("ebb", "cebb1", "cebb2")  # the bootstrap ensembles are two-class methods
        tags.classifier_tags.multi_class = not (binary_options or ensemble)
        return tags

    # ------------------------------------------------------------------ fit
    def _constrained(self) -> bool:
        return any(v is not None for v in (self.tpr_min, self.tnr_min, self.acc_min)) or bool(self.recall_min)

    def _multiclass(self, classes: np.ndarray) -> bool:
        return classes.size > 2 or self.recall_min is not None

    def _fractions(self) -> tuple[float, float, float]:
        if not self._constrained():
            return (1.0, 0.0, 0.0)
        if any(isinstance(v, (str, bytes, bool)) or not isinstance(v, numbers.Real)
               for v in (self.anchor_size, self.holdout_size)):
            raise DataError(
                f"anchor_size ({self.anchor_size!r}) and holdout_size ({self.holdout_size!r}) must be numbers."
            )
        anchor, holdout = float(self.anchor_size), float(self.holdout_size)
        if not (0 < anchor < 1 and 0 <= holdout < 1 and anchor + holdout < 1):
            raise DataError(
                f"anchor_size ({self.anchor_size!r}) must be in (0, 1) and holdout_size ({self.holdout_size!r}) "
                "in [0, 1), with room left for the training sample (their sum below 1)."
            )
        return (1.0 - anchor - holdout, anchor, holdout)

    def _probability_variant(self) -> str | None:
        if not _probability_requested(self):
            return None
        variant = "venn-abers" if self.probability is True else self.probability
        if variant not in PROBABILITY_VARIANTS:
            raise DataError(
                f"probability must be False, True or one of {PROBABILITY_VARIANTS}, got {self.probability!r}."
            )
        return variant

    def _seed(self) -> int | None:
        if self.random_state is None or isinstance(self.random_state, (int, np.integer)):
            return None if self.random_state is None else int(self.random_state)
        if isinstance(self.random_state, np.random.RandomState):
            return int(self.random_state.randint(0, 2**31 - 1))
        raise DataError(f"random_state must be None, an int or a RandomState, got {self.random_state!r}.")

    def fit(self, X, y):
        """Split the rows, solve the CSVM (and the probability ensemble if requested); return ``self``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows (numeric).
        y : array-like of shape (n_samples,)
            Labels; with two classes ``classes_[1]`` (the larger label) is positive.

        Returns
        -------
        CSVMClassifier
            ``self``, fitted.

        Raises
        ------
        csvm_stats.exceptions.DataError
            Invalid data or parameters, or a sample too small for the requirement.
        csvm_stats.exceptions.InfeasibleConstraintsError
            No classifier meets the requirements on the anchor sample.

        Examples
        --------
        >>> from csvm_stats import CSVMClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> clf = CSVMClassifier(tpr_min=0.9, bound="binomial", random_state=0).fit(X, y)
        >>> clf.results_.solver.status.value
        'optimal'
        """
        check_feature_table(X)
        if y is not None:  # scikit-learn says "requires y to be passed" itself
            check_labels_present(y)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise DataError(f"y has one class only ({classes.tolist()}); a classifier needs examples of both classes.")
        variant = self._probability_variant()
        self.classes_ = classes
        if self._multiclass(classes):
            return self._fit_multiclass(X, y, variant)
        positive = (y == classes[1]).astype(np.int8)
        seed = self._seed()
        model = CSVM(
            positive,
            X,
            tpr_min=self.tpr_min,
            tnr_min=self.tnr_min,
            acc_min=self.acc_min,
            alpha=self.alpha,
            bound=self.bound,
            kernel=self.kernel,
            C=self.C,
            **self._kernel_parameters(),
            rank=self.rank,
            big_m=self.big_m,
            positive=1,
            standardize=self.standardize,
            fractions=self._fractions(),
            penalty=self.penalty,
            max_features=self.max_features,
            screen=self.screen,
        )
        self.results_ = model.fit(
            solver=self.solver, time_limit=self.time_limit, mip_gap=self.mip_gap, random_state=seed
        )
        if self.results_.is_linear:
            params = self.results_.params.to_numpy()
            self.coef_, self.intercept_ = params[None, :-1], params[-1:]
        if variant not in (None, "venn-abers"):
            self.probability_estimator_ = self._fit_probabilities(X, y, variant, seed)
        return self

    def _kernel_parameters(self) -> dict[str, Any]:
        """gamma, degree and coef0 for the model: each checked, and at its default where the kernel does not use it.

        scikit-learn's ``SVC`` ignores a parameter its kernel does not use, and grid searches over
        ``{"kernel": ["rbf", "poly"], "degree": [2, 3]}`` rely on it; the models refuse such a
        parameter, so it is passed at its default.
        """
        check_kernel_options("poly", self.gamma, self.degree, self.coef0, self.rank)  # the values themselves
        return {
            name: getattr(self, name) if not callable(self.kernel) and self.kernel in users else default
            for name, (default, users) in KERNEL_PARAMETERS.items()
        }

    def _fit_multiclass(self, X: np.ndarray, y: np.ndarray, variant: str | None):
        """The multiclass CSVM (several classes or ``recall_min``)."""
        if variant not in (None, "venn-abers"):
            raise DataError(
                f"Only binary classification is supported with probability={self.probability!r}: the bootstrap "
                "ensembles are two-class methods. Use probability='venn-abers' (or False) for several classes."
            )
        binary_only = [name for name in ("tpr_min", "tnr_min", "acc_min") if getattr(self, name) is not None]
        if binary_only:
            raise DataError(
                f"Only binary classification is supported with {binary_only}; y has {self.classes_.size} classes "
                "(or recall_min is set): state the required recall of each class with recall_min={label: p}."
            )
        model = MulticlassCSVM(
            y, X, recall_min=self.recall_min, alpha=self.alpha, bound=self.bound, kernel=self.kernel, C=self.C,
            **self._kernel_parameters(), rank=self.rank, big_m=self.big_m,
            standardize=self.standardize, fractions=self._fractions(),
        )
        self.results_ = model.fit(
            solver=self.solver, time_limit=float(self.time_limit), mip_gap=float(self.mip_gap), random_state=self._seed()
        )
        if self.results_.is_linear:
            params = self.results_.params.to_numpy()
            self.coef_, self.intercept_ = params[:-1].T.copy(), params[-1].copy()
        return self

    def _fit_probabilities(self, X: np.ndarray, y: np.ndarray, variant: str, seed: int | None):
        rates = {"tpr_min": self.tpr_min, "tnr_min": self.tnr_min, "acc_min": self.acc_min} if variant != "ebb" else {}
        kernel = self.kernel
        gamma_grid = None
        if kernel in ("rbf", "poly") and not isinstance(self.gamma, str):
            gamma_grid = [float(self.gamma)]
        ensemble = EBB(
            kernel=kernel,
            gamma_grid=gamma_grid,
            n_bootstrap=int(self.n_bootstrap),
            variant=variant,
            alpha=self.alpha,
            bound=self.bound,
            random_state=seed,
            solver=self.solver,
            time_limit=float(self.time_limit),
            **rates,
        )
        if self.standardize:
            return make_pipeline(StandardScaler(), ensemble).fit(X, y)
        return ensemble.fit(X, y)

    # ------------------------------------------------------------------ predict
    def decision_function(self, X) -> np.ndarray:
        """Two classes: f(x) = w'phi(x) + b, ``classes_[1]`` where f(x) >= 0; several: (n, K) class scores.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with the columns the estimator was fitted on.

        Returns
        -------
        numpy.ndarray
            (n,) decision values for two classes, (n, K) class scores for several.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            The estimator is not fitted.

        Examples
        --------
        >>> from csvm_stats import CSVMClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> clf = CSVMClassifier(tpr_min=0.9, bound="binomial", random_state=0).fit(X, y)
        >>> clf.decision_function(X.head(3)).shape
        (3,)
        """
        check_is_fitted(self)
        check_feature_table(X)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.results_.decision_function(X).to_numpy()

    def predict(self, X) -> np.ndarray:
        """Two classes: ``classes_[1]`` where the decision value is at least 0; several: the largest score's class.

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
            The estimator is not fitted.

        Examples
        --------
        >>> from csvm_stats import CSVMClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> clf = CSVMClassifier(tpr_min=0.9, bound="binomial", random_state=0).fit(X, y)
        >>> set(clf.predict(X.head(5))) <= set(clf.classes_)
        True
        """
        scores = self.decision_function(X)
        if scores.ndim == 2:
            return self.classes_[scores.argmax(axis=1)]
        return np.where(scores >= 0, self.classes_[1], self.classes_[0])

    @available_if(_probability_requested)
    def predict_proba(self, X) -> np.ndarray:
        """(n, 2) probabilities, columns in ``classes_`` order (the probability model's P, or the ensemble's).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with the columns the estimator was fitted on.

        Returns
        -------
        numpy.ndarray of shape (n_samples, n_classes)
            Probabilities, columns in ``classes_`` order; rows sum to 1.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            The estimator is not fitted.

        Examples
        --------
        >>> from csvm_stats import CSVMClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> clf = CSVMClassifier(tpr_min=0.9, bound="binomial", random_state=0).fit(X, y)
        >>> clf.predict_proba(X.head(3)).shape
        (3, 2)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if _venn_abers(self):
            p = self.results_.predict_proba(X).to_numpy()
            return p if p.ndim == 2 else np.column_stack([1.0 - p, p])
        return self.probability_estimator_.predict_proba(X)

    @available_if(_venn_abers)
    def predict_interval(self, X) -> np.ndarray:
        """Two classes: (n, 2) Venn-Abers interval ``[p0, p1]`` of P(``classes_[1]`` | x); several: (n, K, 2).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with the columns the estimator was fitted on.

        Returns
        -------
        numpy.ndarray
            (n, 2) interval ``[p0, p1]`` for two classes, (n, K, 2) for several.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            The estimator is not fitted.

        Examples
        --------
        >>> from csvm_stats import CSVMClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> clf = CSVMClassifier(tpr_min=0.9, bound="binomial", random_state=0).fit(X, y)
        >>> interval = clf.predict_interval(X.head(3))
        >>> bool((interval[:, 0] <= interval[:, 1]).all())
        True
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        table = self.results_.predict_interval(X)
        return np.stack([table["p0"].to_numpy(), table["p1"].to_numpy()], axis=-1)

    def summary(self):
        """The fit's :class:`~csvm_stats.reporting.summary.Summary` (rates, statements, solver, coefficients).

        Returns
        -------
        csvm_stats.reporting.summary.Summary
            The summary of ``results_``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            The estimator is not fitted.

        Examples
        --------
        >>> from csvm_stats import CSVMClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> clf = CSVMClassifier(tpr_min=0.9, bound="binomial", random_state=0).fit(X, y)
        >>> isinstance(clf.summary().as_text(), str)
        True
        """
        check_is_fitted(self)
        return self.results_.summary()
