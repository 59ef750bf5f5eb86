r"""Results of a Neyman-Pearson route (:class:`csvm_stats.models.neyman_pearson.NeymanPearson`).

The same names as the CSVM's results (:class:`csvm_stats.models.results.CSVMResults`,
:class:`csvm_stats.multiclass.results.MulticlassResults`): ``decision_function``,
``predict``, ``predict_proba`` (Venn-Abers, as for the CSVM), ``rates`` (the
same columns; the anchor columns are empty because the route has no anchor
constraint), ``statements``, ``joint_statement``, ``summary()``, plus
``sample_roles`` (``"training"`` or ``"held-out"`` per row).

What is claimed (two classes): the guaranteed rate by the order statistic,
:math:`P(\text{rate} \ge p_0) \ge 1 - \alpha`; the other class's rate by its
exact two-sided Clopper-Pearson interval on H at :math:`1 - \alpha` (its
held-out points did not set the threshold). The held-out points of the two
classes are independent given the labels (the split is stratified), so both
hold together with probability at least :math:`(1 - \alpha)^2`. The held-out
accuracy mixes the classes whose points set the threshold, so it gets no
interval. Several classes: :mod:`csvm_stats.multiclass.certification`'s
statements, with the estimator's scores in place of the CSVM's.

Probabilities: the Venn-Abers predictor of the decision values on H (held-out,
inductive, when H has :data:`~csvm_stats.probability.fit_calibration.MIN_HOLDOUT`
points and :data:`~csvm_stats.probability.fit_calibration.MIN_PER_CLASS` of each
class), else cross-fitted: out-of-fold scores of clones of the estimator on
stratified folds of :math:`I \cup J` with the held-out scores, calibrated by
the bagged Venn-Abers predictor, as :mod:`csvm_stats.multiclass.probability`
does for a CSVM of several classes.
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
from csvm_stats.models.learners import scores as learner_scores, shape_scores
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
from csvm_stats.preprocessing.design import SampleSplit
from csvm_stats.probability.fit_calibration import (
    Calibration,
    RuleCheck,
    check_calibration_sample,
    holdout_is_enough,
)
from csvm_stats.probability.refits import DEFAULT_FOLDS
from csvm_stats.probability.venn_abers import VennAbers, bagged, merge
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


class _NPResults:
    """What both forms share: the split, the scores, the roles of the rows, the cross-fitted calibration pairs."""

    route = "Neyman-Pearson"

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

    @cached_property
    def sample_roles(self) -> pd.Series:
        """``"training"`` (the estimator was fitted on the row) or ``"held-out"`` (the threshold was set on it)."""
        roles = np.full(self.model.exog.shape[0], ROLE_TRAINING, dtype=object)
        roles[self.split.holdout] = ROLE_HELDOUT
        return pd.Series(roles, index=self.model.exog.index, name="sample", dtype=object)

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

    def summary(self, *, timing: bool = True) -> Summary:
        """A :class:`~csvm_stats.reporting.summary.Summary` (text, HTML, LaTeX); ``timing=False`` omits the fit time."""
        return build_np_summary(self, timing=timing)


class BinaryNPResults(_NPResults):
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
        """Venn-Abers on the held-out decision values, else cross-fitted (module docstring)."""
        y, H, f = self.model.y, self.split.holdout, self._fitted_decision
        if holdout_is_enough(y[H]):
            predictor = VennAbers.fit(f[H], y[H])
            t = predictor.threshold(0.0)
            return Calibration("held-out", predictor, rule=RuleCheck.of("held-out", predictor.predict(f[H]), f[H] >= 0, t))
        check_calibration_sample(y, "The data")
        raw, labels, folds = self._cross_fitted_pairs()
        predictor = bagged(raw + self.intercept, labels)
        t = predictor.threshold(0.0)
        return Calibration("cross-fitted", predictor, folds, rule=RuleCheck.of("fitted", predictor.predict(f), f >= 0, t))

    @property
    def ready_calibration(self) -> Calibration | None:
        """:attr:`calibration` when it is cheap (held-out) or computed; None before a cross-fit."""
        if "calibration" in vars(self) or holdout_is_enough(self.model.y[self.split.holdout]):
            return self.calibration
        return None

    def predict_proba(self, newdata: Any = None, *, interval: bool = False) -> pd.Series | pd.DataFrame:
        """P(y = positive | x) (merged Venn-Abers), or with ``interval=True`` the columns p0, p1, p.

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
        p0, p1 = self.calibration.predictor.interval(f.to_numpy())
        p = merge(p0, p1)
        if interval:
            return pd.DataFrame({"p0": p0, "p1": p1, "p": p}, index=f.index)
        return pd.Series(p, index=f.index, name=f"P({self.model.coding.positive!r})")

    @property
    def probability_threshold(self) -> float:
        """The probability at decision 0: positive calls have P >= it."""
        return self.calibration.threshold

    # ------------------------------------------------------------------ rates and statements
    @property
    def guaranteed_rate(self) -> str:
        return self.umbrella.rate

    @property
    def other_rate(self) -> str:
        return "tnr" if self.umbrella.rate == "tpr" else "tpr"

    @cached_property
    def heldout_confusion(self) -> pd.DataFrame:
        """The held-out confusion matrix: rows the true class, columns the predicted class."""
        H = self.split.holdout
        y, pred = self.model.y[H], np.where(self._fitted_decision[H] >= 0, 1.0, -1.0)
        pos, neg = repr(self.model.coding.positive), repr(self.model.coding.negative)
        cells = [[int(np.sum((y == t) & (pred == p))) for p in (1.0, -1.0)] for t in (1.0, -1.0)]
        return pd.DataFrame(cells, index=[f"true {pos}", f"true {neg}"], columns=[f"predicted {pos}", f"predicted {neg}"])

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

    def save(self, path: Any) -> Any:
        """Write a model file when the learner's score is linear (:mod:`csvm_stats.interfaces.np_files`); else a DataError.

        Logistic regression, a linear SVC (optionally after one
        ``StandardScaler``) and two classes are saved in the CSVM's two-class
        format, read by :func:`~csvm_stats.interfaces.persistence.load_model`;
        RBF SVC and gradient boosting are refused with the reason.

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

    def __repr__(self) -> str:
        return f"<BinaryNPResults: {self.model!r}>"


class MulticlassNPResults(_NPResults):
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

    @cached_property
    def heldout_confusion(self) -> pd.DataFrame:
        """Held-out counts, rows the true class, columns the predicted one."""
        H = self.split.holdout
        pred = argmax_rule(self._fitted_scores[H])
        K = self.n_classes
        out = np.zeros((K, K), dtype=int)
        np.add.at(out, (self.model.y[H], pred), 1)
        return pd.DataFrame(out, index=[f"true {n}" for n in self._names], columns=[f"predicted {n}" for n in self._names])

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
