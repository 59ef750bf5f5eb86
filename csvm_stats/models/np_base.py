r"""What the two forms of a Neyman-Pearson route's results share, on the common results base.

:class:`NPResultsBase` derives from
:class:`~csvm_stats.models.results_base.FitResults`, the base of every CSVM
results object, so a route answers ``confusion_matrix(sample)``,
``sample_roles``, ``requirements``, ``min_counts``, ``classes``,
``predictive_values`` and the selection attributes (``None``: a route selects
no features) with the same names and shapes as a CSVM fit. What differs is
said where it differs:

* the estimator is fitted on the training and anchor samples together
  (:math:`I \cup J`), so :attr:`~NPResultsBase.sample_roles` has
  ``"training"`` for both and ``confusion_matrix("train")`` counts
  :math:`I \cup J`; there is no anchor constraint, so
  ``confusion_matrix("anchor")`` is an error that says so;
* a requirement is met on the held-out sample H by the order statistic, not
  on an anchor count: :attr:`~NPResultsBase.requirements` has ``anchor_n`` 0
  and no ``required`` count, and :attr:`~NPResultsBase.min_counts` is empty;
* H set the threshold, so the predictive values on H get no interval
  (:func:`~csvm_stats.models.results_base.predictive_rows` with
  ``independent=False``, as in the CSVM's guarantee mode).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from csvm_stats.exceptions import DataError
from csvm_stats.models.learners import scores as learner_scores, shape_scores
from csvm_stats.models.results_base import FitResults, predictive_rows
from csvm_stats.preprocessing.design import SampleSplit
from csvm_stats.probability.refits import DEFAULT_FOLDS
from csvm_stats.reporting.np_summary import build_np_summary
from csvm_stats.reporting.summary import Summary

ROLE_TRAINING, ROLE_HELDOUT = "training", "held-out"


@dataclass(frozen=True)
class NPState:
    """One fit of a route: the model, the split, the fitted estimator, the 0..K-1 codes it was fitted on,
    the threshold (:class:`~csvm_stats.inference.certification.UmbrellaIntercept` or
    :class:`~csvm_stats.multiclass.certification.GuaranteeShift`), the seed and the CPU seconds of the fit."""

    model: Any
    split: SampleSplit
    estimator: Any
    codes: np.ndarray
    threshold: Any
    random_state: int
    fit_time: float


class NPResultsBase(FitResults):
    """What both forms share: the split, the scores, the roles of the rows, the counts per sample,
    the requirements, the cross-fitted calibration pairs and the summary (module docstring).

    A subclass gives ``classes``, ``_predicted_positions(rows)`` (positions in
    :attr:`classes` of the predicted class of ``rows``) and ``_true_positions(rows)``.

    Parameters
    ----------
    state : NPState
        The fit (model, split, fitted estimator, threshold, seed, CPU time),
        made by :meth:`csvm_stats.models.neyman_pearson.NeymanPearson.fit`.

    Examples
    --------
    >>> from csvm_stats import NeymanPearsonClassifier
    >>> from csvm_stats.data.datasets import load_dataset
    >>> from csvm_stats.models.np_base import NPResultsBase
    >>> X, labels = load_dataset("wisconsin")
    >>> res = NeymanPearsonClassifier(tpr_min=0.9, random_state=0).fit(X, (labels < 0).astype(int)).results_
    >>> isinstance(res, NPResultsBase), res.confusion_matrix("holdout").shape
    (True, (2, 2))
    """

    #: The route has no anchor constraint, so nothing was adjusted on J.
    adjusted: dict[Any, Any] = {}

    def __init__(self, state: NPState) -> None:
        self.state = state
        self.model = state.model
        self.split = state.split
        self.estimator = state.estimator
        self.random_state = state.random_state
        self.fit_time = state.fit_time

    @property
    def n_classes(self) -> int:
        return len(self.model.coding.levels)

    def _raw(self, X: np.ndarray) -> np.ndarray:
        return learner_scores(self.estimator, X, self.model.method, self.n_classes, per_class=self.model.multiclass)

    @cached_property
    def _fitted_raw(self) -> np.ndarray:
        return self._raw(self.model.exog.to_numpy())

    def _design(self, newdata: Any) -> pd.DataFrame:
        return self.model.exog if newdata is None else self.model.design_matrix(newdata)

    # ------------------------------------------------------------------ the common results API
    @cached_property
    def sample_roles(self) -> pd.Series:
        """``"training"`` (the estimator was fitted on the row: I and J) or ``"held-out"`` (the threshold was set on it)."""
        roles = np.full(self.model.exog.shape[0], ROLE_TRAINING, dtype=object)
        roles[self.split.holdout] = ROLE_HELDOUT
        return pd.Series(roles, index=self.model.exog.index, name="sample", dtype=object)

    def _sample_rows(self, sample: str) -> np.ndarray:
        """The rows of ``"train"`` (I u J, what the estimator saw) or ``"holdout"``; ``"anchor"`` is an error."""
        if sample == "anchor":
            raise DataError(
                "a Neyman-Pearson route has no anchor sample: the estimator is fitted on the training and anchor "
                "rows together and the threshold is set on the held-out sample; use confusion_matrix('train') "
                "(the rows the estimator was fitted on) or confusion_matrix('holdout')."
            )
        if sample == "train":
            return np.sort(np.concatenate([self.split.train, self.split.anchor]))
        return self.split.holdout

    def _true_and_predicted(self, sample: str) -> tuple[np.ndarray, np.ndarray]:
        rows = self._sample_rows(sample)
        return self._true_positions(rows), self._predicted_positions(rows)

    def _true_positions(self, rows: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _predicted_positions(self, rows: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _requirement_texts(self) -> list[tuple[Any, str, float]]:
        """(key as in :attr:`requirements`, what is required in words, target) per requirement."""
        raise NotImplementedError

    @property
    def requirements(self) -> pd.DataFrame:
        """One row per requirement, keyed by the class label it is about (the columns of every fit's table).

        The requirement is met on the held-out sample by the order
        statistic, not on an anchor count: ``anchor_n`` is 0, ``required``
        is missing, ``adjusted`` is NaN and ``capped`` False.
        """
        rows = {key: {"rate": what, "target": target, "anchor_n": 0, "required": pd.NA, "adjusted": np.nan,
                      "capped": False} for key, what, target in self._requirement_texts()}
        frame = pd.DataFrame.from_dict(rows, orient="index",
                                       columns=["rate", "target", "anchor_n", "required", "adjusted", "capped"])
        frame.index.name = "requirement"
        return frame

    @property
    def min_counts(self) -> dict[Any, int]:
        """Empty: a route requires no count on an anchor sample (the threshold is set on H)."""
        return {}

    @property
    def predictive_values(self) -> pd.DataFrame:
        """Each class's predictive value on H (``P(true k | called k)``) with its held-out ``prevalence``.

        H set the threshold, so no interval is given (``method`` says so), as
        in the CSVM's guarantee mode. Two classes: rows ``ppv`` and ``npv``.
        """
        rows = predictive_rows(self.confusion_matrix("holdout").to_numpy(), self.model.alpha, independent=False)
        if not self.model.multiclass:
            rows[1]["prevalence"] = rows[0]["prevalence"]  # both at the share of positives
            return pd.DataFrame(rows, index=["ppv", "npv"])
        return pd.DataFrame(rows, index=pd.Index(self.classes, name="class"))

    # ------------------------------------------------------------------ probabilities, report
    def _cross_fitted_pairs(self) -> tuple[np.ndarray, np.ndarray, int]:
        """Out-of-fold raw scores on I u J (clones of the estimator) and the held-out scores; labels; folds."""
        rows = np.sort(np.concatenate([self.split.train, self.split.anchor]))
        codes = self.state.codes
        n_folds = int(min(DEFAULT_FOLDS, np.bincount(codes[rows]).min()))
        if n_folds < 2:
            raise DataError(
                "calibrated probabilities need a held-out sample of at least 50 points with 5 of every class, or "
                "2 training points of every class to cross-fit; use more data."
            )
        cv = StratifiedKFold(n_folds, shuffle=True, random_state=0)
        X = self.model.exog.to_numpy()
        oof = cross_val_predict(clone(self.estimator), X[rows], codes[rows], cv=cv, method=self.model.method)
        oof = shape_scores(oof, self.n_classes, per_class=self.model.multiclass)
        H = self.split.holdout
        return np.concatenate([oof, self._fitted_raw[H]]), np.concatenate([self.model.y[rows], self.model.y[H]]), n_folds

    def save(self, path: Any) -> Any:
        """Write a model file when the learner's score is linear (:mod:`csvm_stats.interfaces.np_files`); else a DataError.

        Logistic regression, a linear SVC (optionally after one
        ``StandardScaler``) are saved in the CSVM's format (two classes: the
        two-class form; several: the multiclass form with the shifted class
        scores), read by :func:`~csvm_stats.interfaces.persistence.load_model`;
        RBF SVC and gradient boosting are refused with the reason (no pickle).

        Parameters
        ----------
        path : str or pathlib.Path
            Where to write the file.

        Returns
        -------
        pathlib.Path
            The file written.

        Examples
        --------
        >>> import os, tempfile
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> res = NeymanPearsonClassifier(tpr_min=0.9, random_state=0).fit(X, (labels < 0).astype(int)).results_
        >>> path = res.save(os.path.join(tempfile.mkdtemp(), "np.csvm"))
        >>> os.path.exists(path)
        True
        """
        from csvm_stats.interfaces.np_files import save_np_model

        return save_np_model(self, path)

    def summary(self, *, timing: bool = True, detail: bool = False) -> Summary:
        """A :class:`~csvm_stats.reporting.summary.Summary` (text, HTML, LaTeX).

        Parameters
        ----------
        timing : bool, default True
            Include the fit time (it differs between identical runs); ``False`` gives a text that
            can be compared with a stored copy.
        detail : bool, default False
            Add the technical lines: the estimator's pipeline, the score method, alpha.

        Returns
        -------
        csvm_stats.reporting.summary.Summary
            A statsmodels ``Summary``: ``as_text()``, ``as_html()``, ``as_latex()``, ``tables``.

        Examples
        --------
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> res = NeymanPearsonClassifier(tpr_min=0.9, random_state=0).fit(X, (labels < 0).astype(int)).results_
        >>> isinstance(res.summary(timing=False).as_text(), str)
        True
        """
        return build_np_summary(self, timing=timing, detail=detail)
