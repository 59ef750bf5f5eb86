r"""Results of a Neyman-Pearson route (:class:`csvm_stats.models.neyman_pearson.NeymanPearson`).

The same names as the CSVM's results (:class:`csvm_stats.models.results.CSVMResults`,
:class:`csvm_stats.multiclass.results.MulticlassResults`): ``decision_function``,
``predict``, ``predict_proba`` (Venn-Abers, as for the CSVM), ``rates`` (the
same columns; the anchor columns are empty because the route has no anchor
constraint), ``statements``, ``joint_statement``, ``summary()``, and from the
common base (:class:`~csvm_stats.models.np_base.NPResultsBase`, a
:class:`~csvm_stats.models.results_base.FitResults`) ``confusion_matrix``,
``sample_roles`` (``"training"`` or ``"held-out"`` per row),
``requirements``, ``predictive_values``. This module holds the two-class
form; several classes are :mod:`csvm_stats.models.np_multiclass_results`.

What is claimed (two classes): the guaranteed rate by the order statistic,
:math:`P(\text{rate} \ge p_0) \ge 1 - \alpha`; the other class's rate by its
exact two-sided Clopper-Pearson interval on H at :math:`1 - \alpha` (its
held-out points did not set the threshold). The held-out points of the two
classes are independent given the labels (the split is stratified), so both
hold together with probability at least :math:`(1 - \alpha)^2`. The held-out
accuracy mixes the classes whose points set the threshold, so it gets no
interval. Several classes: :mod:`csvm_stats.multiclass.certification`'s
statements, with the estimator's scores in place of the CSVM's.

Probabilities (:class:`~csvm_stats.probability.fit_calibration.Calibration`
without a model): calibration pairs (decision value, label) are those of H
(held-out, inductive, when H has
:data:`~csvm_stats.probability.fit_calibration.MIN_HOLDOUT` points and
:data:`~csvm_stats.probability.fit_calibration.MIN_PER_CLASS` of each class),
else cross-fitted: out-of-fold scores of clones of the estimator on stratified
folds of :math:`I \cup J` with the held-out scores. On those pairs the point
probability is Platt's sigmoid :math:`P = \sigma(a f + b)` of the decision
value (maximum likelihood with Platt's smoothed targets; no base-rate bias:
``benchmarks/np_probabilities.py``), increasing in f when a > 0, so the rule
is "positive when P >= :math:`\sigma(b)`"; the interval :math:`[p_0, p_1]` is
the Venn-Abers predictor of the same pairs (bagged on the cross-fitted route,
as :mod:`csvm_stats.multiclass.probability` does for several classes), valid
in Venn's sense on the held-out route and not a confidence interval for
:math:`P(y = 1 \mid x)`.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.inference.certification import (
    ALL_RATES,
    NOT_INDEPENDENT,
    NOT_INDEPENDENT_STATEMENT,
    ORDER_STATISTIC,
    RATE_LABELS,
    RateBounds,
    count_correct,
    floor2,
    guarantee_statement,
    interval_statement,
    level_percent,
    round_up,
    two_sided_bounds,
)
from csvm_stats.models.np_base import NPResultsBase, NPState
from csvm_stats.models.np_multiclass_results import MulticlassNPResults
from csvm_stats.probability.fit_calibration import (
    Calibration,
    check_calibration_sample,
    holdout_is_enough,
)
from csvm_stats.probability.venn_abers import bagged

__all__ = ["BinaryNPResults", "MulticlassNPResults", "NPState"]


class BinaryNPResults(NPResultsBase):
    """A two-class route: decision ``s(x) + b`` with b set on H by the order statistic (positive when >= 0).

    Parameters
    ----------
    state : NPState
        The fit (model, split, fitted estimator, threshold, seed, CPU time),
        made by :meth:`csvm_stats.models.neyman_pearson.NeymanPearson.fit`.

    Examples
    --------
    >>> from csvm_stats import NeymanPearsonClassifier
    >>> from csvm_stats.data.datasets import load_dataset
    >>> X, labels = load_dataset("wisconsin")
    >>> res = NeymanPearsonClassifier(tpr_min=0.9, random_state=0).fit(X, (labels < 0).astype(int)).results_
    >>> res.rates.loc["tpr", "method"], res.sample_roles.size
    ('order statistic', 569)
    """

    def __init__(self, state: NPState) -> None:
        super().__init__(state)
        self.umbrella = state.threshold
        self.intercept = float(self.umbrella.intercept)

    # ------------------------------------------------------------------ decision and prediction
    @cached_property
    def _fitted_decision(self) -> np.ndarray:
        return self._fitted_raw + self.intercept

    def decision_function(self, newdata: Any = None) -> pd.Series:
        """``s(x) + b`` (positive class when >= 0), indexed like the data.

        Parameters
        ----------
        newdata : DataFrame, array-like or None
            Rows with the predictors (through the formula when the route has
            one); ``None`` gives the rows the route was built on.

        Returns
        -------
        pandas.Series
            The decision values.

        Examples
        --------
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> res = NeymanPearsonClassifier(tpr_min=0.9, random_state=0).fit(X, (labels < 0).astype(int)).results_
        >>> res.decision_function().size
        569
        """
        if newdata is None:
            return pd.Series(self._fitted_decision, index=self.model.exog.index, name="decision")
        design = self._design(newdata)
        return pd.Series(self._raw(design.to_numpy()) + self.intercept, index=design.index, name="decision")

    def predict(self, newdata: Any = None) -> pd.Series:
        """Predicted labels in the original coding, indexed like the data.

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
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> res = NeymanPearsonClassifier(tpr_min=0.9, random_state=0).fit(X, (labels < 0).astype(int)).results_
        >>> sorted(res.predict().unique())
        [0, 1]
        """
        decision = self.decision_function(newdata)
        return self.model.coding.decode(decision.to_numpy(), index=decision.index)

    # ------------------------------------------------------------------ probabilities
    @cached_property
    def calibration(self) -> Calibration:
        """Sigmoid and Venn-Abers of the decision values on H, else cross-fitted (module docstring)."""
        y, H, f = self.model.y, self.split.holdout, self._fitted_decision
        if holdout_is_enough(y[H]):
            return Calibration.of_rule_score("held-out", f[H], y[H], "held-out", f[H])
        check_calibration_sample(y, "The data")
        raw, labels, folds = self._cross_fitted_pairs()
        scores = raw + self.intercept
        return Calibration.of_rule_score("cross-fitted", scores, labels, "fitted", f, folds,
                                         predictor=bagged(scores, labels))

    @property
    def ready_calibration(self) -> Calibration | None:
        """:attr:`calibration` when it is cheap (held-out) or computed; None before a cross-fit."""
        if "calibration" in vars(self) or holdout_is_enough(self.model.y[self.split.holdout]):
            return self.calibration
        return None

    def predict_proba(self, newdata: Any = None, *, interval: bool = False) -> pd.Series | pd.DataFrame:
        """P(y = positive | x) (Platt's sigmoid of the decision value), or with ``interval=True`` the columns p0, p1, p.

        Parameters
        ----------
        newdata : DataFrame, array-like or None
            Rows with the predictors (through the formula when the route has
            one); ``None`` gives the rows the route was built on.
        interval : bool, default False
            Also return the Venn-Abers interval.

        Returns
        -------
        pandas.Series or pandas.DataFrame
            The probabilities (Series), or columns ``p0``, ``p1``, ``p``.

        Examples
        --------
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> res = NeymanPearsonClassifier(tpr_min=0.9, random_state=0).fit(X, (labels < 0).astype(int)).results_
        >>> res.predict_proba(interval=True).columns.tolist()
        ['p0', 'p1', 'p']
        """
        f = self.decision_function(newdata)
        p0, p1, p = self.calibration.predict(None, f.to_numpy())
        if interval:
            return pd.DataFrame({"p0": p0, "p1": p1, "p": p}, index=f.index)
        return pd.Series(p, index=f.index, name=f"P({self.model.coding.positive!r})")

    @property
    def probability_threshold(self) -> float:
        """The probability at decision 0: a point is called positive exactly when its P is at least this (NaN when
        the fitted sigmoid does not increase with the score; :attr:`calibration` says so)."""
        return self.calibration.threshold

    # ------------------------------------------------------------------ rates and statements
    @property
    def guaranteed_rate(self) -> str:
        return self.umbrella.rate

    @property
    def other_rate(self) -> str:
        return "tnr" if self.umbrella.rate == "tpr" else "tpr"

    @property
    def classes(self) -> list[Any]:
        """The two labels (their own dtype), positive first: the order of :meth:`confusion_matrix`."""
        return [self.model.coding.positive, self.model.coding.negative]

    def _true_positions(self, rows: np.ndarray) -> np.ndarray:
        return np.where(self.model.y[rows] > 0, 0, 1)

    def _predicted_positions(self, rows: np.ndarray) -> np.ndarray:
        return np.where(self._fitted_decision[rows] >= 0, 0, 1)

    def _requirement_texts(self) -> list[tuple[Any, str, float]]:
        key = self.model.coding.positive if self.guaranteed_rate == "tpr" else self.model.coding.negative
        return [(key, RATE_LABELS[self.guaranteed_rate], float(self.umbrella.target))]

    @cached_property
    def heldout_confusion(self) -> pd.DataFrame:
        """The held-out confusion matrix with text labels ("true 'a'", "predicted 'a'"); see :meth:`confusion_matrix`."""
        matrix = self.confusion_matrix("holdout")
        names = [repr(c) for c in self.classes]
        return pd.DataFrame(matrix.to_numpy(), index=[f"true {n}" for n in names],
                            columns=[f"predicted {n}" for n in names])

    def heldout_counts(self, rate: str) -> tuple[int, int]:
        """(n, correct) of ``rate`` on the held-out sample.

        Parameters
        ----------
        rate : {"tpr", "tnr"}
            The rate.

        Returns
        -------
        tuple of int
            Held-out points of the rate's class, and how many are classified correctly.

        Examples
        --------
        >>> from csvm_stats import NeymanPearsonClassifier
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> res = NeymanPearsonClassifier(tpr_min=0.9, random_state=0).fit(X, (labels < 0).astype(int)).results_
        >>> res.heldout_counts("tpr")
        (53, 52)
        """
        H = self.split.holdout
        return count_correct(self.model.y[H], self._fitted_decision[H], rate)

    def _bounds(self, rate: str) -> RateBounds:
        if rate == self.guaranteed_rate:
            return RateBounds(self.umbrella.target, np.nan, self.umbrella.target, ORDER_STATISTIC)
        if rate == self.other_rate:
            n, k = self.heldout_counts(rate)
            return two_sided_bounds(k, n, self.model.alpha)
        return RateBounds(np.nan, np.nan, np.nan, NOT_INDEPENDENT)

    @cached_property
    def rates(self) -> pd.DataFrame:
        """The CSVM's rate table (:attr:`csvm_stats.models.results.CSVMResults.rates`) for this route.

        The anchor columns are empty (no anchor constraint); ``lower`` is the
        guaranteed target for the guaranteed rate (``method`` "order
        statistic"), the exact two-sided interval ``lower``-``upper`` for the
        other class's rate, and nothing for the accuracies (H set the threshold).
        """
        table = {}
        H = self.split.holdout
        y, f = self.model.y[H], self._fitted_decision[H]
        for rate in ALL_RATES:
            if rate == "bacc":
                (n_p, k_p), (n_n, k_n) = count_correct(y, f, "tpr"), count_correct(y, f, "tnr")
                n, k, value = n_p + n_n, pd.NA, (k_p / n_p + k_n / n_n) / 2
            else:
                n, k = count_correct(y, f, rate)
                value = k / n
            bounds = self._bounds(rate)
            target = self.model.targets.get(rate, np.nan)
            table[rate] = {
                "target": target, "adjusted": np.nan, "bound": "", "required": pd.NA,
                "anchor_n": 0, "anchor_correct": pd.NA, "anchor_rate": np.nan, "met": pd.NA,
                "heldout_n": n, "heldout_correct": k, "heldout_rate": value,
                "lower": bounds.lower, "upper": bounds.upper, "joint_lower": bounds.joint_lower,
                "method": bounds.method,
                "certified": True if bounds.method == ORDER_STATISTIC else pd.NA,
            }
        return pd.DataFrame.from_dict(table, orient="index")

    @cached_property
    def statements(self) -> pd.Series:
        """One sentence per rate, each holding separately at level 1 - alpha."""
        out = {}
        for rate, row in self.rates.iterrows():
            if row["method"] == ORDER_STATISTIC:
                out[rate] = guarantee_statement(self.umbrella, int(row["heldout_correct"]))
            elif row["method"] == NOT_INDEPENDENT:
                out[rate] = NOT_INDEPENDENT_STATEMENT.replace("in guarantee mode", "in a Neyman-Pearson route")
            else:
                bounds = RateBounds(row["lower"], row["upper"], row["joint_lower"], row["method"])
                out[rate] = interval_statement(rate, bounds, int(row["heldout_correct"]), int(row["heldout_n"]),
                                               self.model.alpha)
        return pd.Series(out, name="statement")

    @cached_property
    def joint_statement(self) -> str:
        """The guarantee and the other class's interval together, at (1 - alpha)^2 (independent classes)."""
        alpha = self.model.alpha
        joint = round(2 * alpha - alpha**2, 12)  # 1 - (1 - alpha)^2, as the decimal it is
        other = self.rates.loc[self.other_rate]
        return (
            f"With confidence at least {level_percent(joint)} = (1 - {alpha!r})^2, jointly: "
            f"{RATE_LABELS[self.guaranteed_rate]} >= {float(self.umbrella.target)!r} and "
            f"{RATE_LABELS[self.other_rate]} between {floor2(other['lower'])} and {round_up(other['upper'], 2)} "
            "(the two classes' held-out points are independent given the labels, so the levels multiply)."
        )

    @cached_property
    def warnings(self) -> list[str]:
        """Notes for the reader: a rule that calls every held-out point one class."""
        H = self.split.holdout
        positive = self._fitted_decision[H] >= 0
        if positive.all() or not positive.any():
            side = "positive" if positive.all() else "negative"
            return [f"On the held-out sample this classifier calls every point {side}: the requirement is met "
                    "only by a constant rule here, so the other class's rate is (near) zero."]
        return []

    def __repr__(self) -> str:
        return f"<BinaryNPResults: {self.model!r}>"
