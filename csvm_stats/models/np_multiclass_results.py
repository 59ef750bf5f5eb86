r"""Results of a Neyman-Pearson route with several classes (``recall_min={label: p}``).

The rule is the argmax of the estimator's one-vs-rest class scores with the
constrained classes' scores raised by one common shift t set on H at Sidak
levels (:func:`csvm_stats.multiclass.certification.guarantee_shift`). What is
claimed: each required recall by the order statistic at level
:math:`1 - (1 - \alpha)^{1/m}` for m constrained classes, so all of them hold
together with probability at least :math:`1 - \alpha`; the other classes'
recalls by exact Clopper-Pearson lower bounds on H (their held-out points did
not set the shift). The common API (``confusion_matrix``, ``sample_roles``,
``requirements``, ``predictive_values``) comes from
:class:`~csvm_stats.models.np_base.NPResultsBase`.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.inference.certification import ORDER_STATISTIC, level_percent
from csvm_stats.models.np_base import NPResultsBase, NPState
from csvm_stats.multiclass.certification import (
    argmax_rule,
    guarantee_recall_statement,
    recall_bounds,
    recall_counts,
    recall_statement,
    sidak,
)
from csvm_stats.multiclass.probability import MulticlassCalibration, calibration_from_pairs, probability_frame
from csvm_stats.multiclass.probability import holdout_is_enough as multiclass_holdout_is_enough


class MulticlassNPResults(NPResultsBase):
    """Several classes: argmax of the estimator's class scores with the constrained classes shifted by t.

    Parameters
    ----------
    state : NPState
        The fit (model, split, fitted estimator, common shift, seed, CPU time),
        made by :meth:`csvm_stats.models.neyman_pearson.NeymanPearson.fit`.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from csvm_stats import NeymanPearsonClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = NeymanPearsonClassifier(recall_min={2: 0.8}, fractions=(0.4, 0.2, 0.4), random_state=0).fit(X, y)
    >>> res = clf.results_
    >>> res.rates.shape[0]
    3
    """

    def __init__(self, state: NPState) -> None:
        super().__init__(state)
        self.shift = state.threshold
        self.offsets = self.shift.offsets(np.zeros(self.n_classes))

    @property
    def classes(self) -> list[Any]:
        return list(self.model.coding.levels)

    @property
    def _names(self) -> list[str]:
        return [str(c) for c in self.classes]

    @cached_property
    def _fitted_scores(self) -> np.ndarray:
        return self._fitted_raw + self.offsets

    def decision_function(self, newdata: Any = None) -> pd.DataFrame:
        """The class scores with the shift, one column per class, indexed like the data.

        Parameters
        ----------
        newdata : DataFrame, array-like or None
            Rows with the predictors (through the formula when the route has
            one); ``None`` gives the rows the route was built on.

        Returns
        -------
        pandas.DataFrame
            One column per class.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> X, y = load_iris(return_X_y=True)
        >>> clf = NeymanPearsonClassifier(recall_min={2: 0.8}, fractions=(0.4, 0.2, 0.4), random_state=0).fit(X, y)
        >>> res = clf.results_
        >>> res.decision_function().shape
        (150, 3)
        """
        if newdata is None:
            values, index = self._fitted_scores, self.model.exog.index
        else:
            design = self._design(newdata)
            values, index = self._raw(design.to_numpy()) + self.offsets, design.index
        return pd.DataFrame(values, index=index, columns=pd.Index(self.classes, name="class"))

    def predict(self, newdata: Any = None) -> pd.Series:
        """The class of the largest shifted score.

        Parameters
        ----------
        newdata : DataFrame, array-like or None
            Rows with the predictors (through the formula when the route has
            one); ``None`` gives the rows the route was built on.

        Returns
        -------
        pandas.Series
            One label per row.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> X, y = load_iris(return_X_y=True)
        >>> clf = NeymanPearsonClassifier(recall_min={2: 0.8}, fractions=(0.4, 0.2, 0.4), random_state=0).fit(X, y)
        >>> res = clf.results_
        >>> res.predict().size
        150
        """
        scores = self.decision_function(newdata)
        return self.model.coding.decode(argmax_rule(scores.to_numpy()), index=scores.index)

    @cached_property
    def calibration(self) -> MulticlassCalibration:
        """One-vs-rest Venn-Abers on the unshifted class margins (:mod:`csvm_stats.multiclass.probability`)."""
        y, H = self.model.y, self.split.holdout
        if multiclass_holdout_is_enough(y[H], self.n_classes):
            return calibration_from_pairs("held-out", self._fitted_raw[H], y[H], 0)
        raw, labels, folds = self._cross_fitted_pairs()
        return calibration_from_pairs("cross-fitted", raw, labels.astype(int), folds)

    @property
    def ready_calibration(self) -> MulticlassCalibration | None:
        if "calibration" in vars(self) or multiclass_holdout_is_enough(self.model.y[self.split.holdout], self.n_classes):
            return self.calibration
        return None

    def predict_proba(self, newdata: Any = None, *, interval: bool = False) -> pd.DataFrame:
        """Normalised one-vs-rest Venn-Abers probabilities (with ``interval=True`` also p0, p1 per class).

        Parameters
        ----------
        newdata : DataFrame, array-like or None
            Rows with the predictors (through the formula when the route has
            one); ``None`` gives the rows the route was built on.
        interval : bool, default False
            Also return each class's Venn-Abers interval.

        Returns
        -------
        pandas.DataFrame
            One column per class (rows summing to 1), or with the intervals.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> X, y = load_iris(return_X_y=True)
        >>> clf = NeymanPearsonClassifier(recall_min={2: 0.8}, fractions=(0.4, 0.2, 0.4), random_state=0).fit(X, y)
        >>> res = clf.results_
        >>> res.predict_proba().shape
        (150, 3)
        """
        design = self._design(newdata)
        raw = self._fitted_raw if newdata is None else self._raw(design.to_numpy())
        return probability_frame(self.calibration, raw, design.index, self.classes, interval)

    def _true_positions(self, rows: np.ndarray) -> np.ndarray:
        return self.model.y[rows].astype(int)

    def _predicted_positions(self, rows: np.ndarray) -> np.ndarray:
        return argmax_rule(self._fitted_scores[rows])

    def _requirement_texts(self) -> list[tuple[Any, str, float]]:
        return [(self.classes[k], f"recall of {self.classes[k]!r}", float(p))
                for k, p in sorted(self.model.recall_min.items())]

    @cached_property
    def heldout_confusion(self) -> pd.DataFrame:
        """Held-out counts with text labels ("true a", "predicted a"); see :meth:`confusion_matrix`."""
        matrix = self.confusion_matrix("holdout")
        return pd.DataFrame(matrix.to_numpy(), index=[f"true {n}" for n in self._names],
                            columns=[f"predicted {n}" for n in self._names])

    @cached_property
    def rates(self) -> pd.DataFrame:
        """One row per class, the columns of the CSVM's multiclass rate table (anchor columns empty)."""
        K, alpha, H = self.n_classes, self.model.alpha, self.split.holdout
        n, correct = recall_counts(self.model.y[H], argmax_rule(self._fitted_scores[H]), K)
        bounds = recall_bounds(n, correct, alpha, 1)
        table = {}
        for k, name in enumerate(self._names):
            target = self.model.recall_min.get(k, np.nan)
            guaranteed = k in self.shift.classes
            lower = target if guaranteed else bounds[k].lower
            table[name] = {
                "target": target, "adjusted": np.nan, "bound": "", "required": pd.NA,
                "anchor_n": 0, "anchor_correct": pd.NA, "anchor_rate": np.nan, "met": pd.NA,
                "heldout_n": int(n[k]), "heldout_correct": int(correct[k]), "heldout_rate": bounds[k].rate,
                "lower": lower, "joint_lower": target if guaranteed else np.nan,
                "method": ORDER_STATISTIC if guaranteed else "clopper-pearson",
                "certified": True if guaranteed else pd.NA,
            }
        return pd.DataFrame.from_dict(table, orient="index")

    @cached_property
    def statements(self) -> pd.Series:
        """One sentence per class (constrained: the guarantee at the Sidak level; others: a lower bound)."""
        out = {}
        for k, (name, row) in enumerate(self.rates.iterrows()):
            if k in self.shift.classes:
                out[name] = guarantee_recall_statement(name, self.shift, k)
            else:
                out[name] = recall_statement(name, row["lower"], row["heldout_correct"], row["heldout_n"],
                                             self.model.alpha)
        return pd.Series(out, name="statement")

    @cached_property
    def joint_statement(self) -> str:
        """All required recalls together at 1 - alpha (Sidak over the constrained classes)."""
        names = [self._names[k] for k in self.shift.classes]
        parts = " and ".join(f"recall of {n!r} >= {float(self.model.recall_min[k])!r}"
                             for n, k in zip(names, self.shift.classes))
        return (f"With {level_percent(self.model.alpha)} confidence, jointly: {parts} (order-statistic rule at level "
                f"{level_percent(sidak(self.model.alpha, len(names)))} per class; the classes' held-out points are "
                "independent, so the levels multiply (Sidak)).")

    @cached_property
    def warnings(self) -> list[str]:
        return []

    def __repr__(self) -> str:
        return f"<MulticlassNPResults: {self.model!r}>"
