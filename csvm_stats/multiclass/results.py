r"""Results of a multiclass CSVM fit: per-class scores, predictions, recalls and statements.

The scores are :math:`f_k(x) = w_k^\top \phi(s(x)) + b_k` (``s`` the
standardisation fitted on :math:`I \cup J`, :math:`\phi` the engine's feature
map) and the prediction is the class of the largest score. In guarantee mode
the offsets b are the CSVM's plus the shift set on the held-out sample
(:func:`csvm_stats.multiclass.certification.guarantee_shift`).

What is reported (see :mod:`csvm_stats.multiclass.certification`): every
class's recall on the anchor sample (*in-sample*: the optimisation chose the
rule to meet it) and on the held-out sample with its exact Clopper-Pearson
lower bound; the joint (Sidak) bound over the constrained classes (over
all classes when none is constrained); the full confusion matrix of each
sample; in guarantee mode the order-statistic guarantee for the constrained
classes, jointly at 1 - alpha.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any, Protocol

import numpy as np
import pandas as pd

from csvm_stats.inference.bounds import AdjustedTarget
from csvm_stats.inference.certification import (
    NO_HOLDOUT,
    NO_HOLDOUT_STATEMENT,
    RateBounds,
    floor2,
    level_percent,
    mean_recall_bounds,
    round_up,
    two_sided_bounds,
)
from csvm_stats.preprocessing.design import SampleSplit, Standardizer
from csvm_stats.models.results import capped_note, solver_notes
from csvm_stats.models.results_base import NOT_INDEPENDENT_PV, RATE_COLUMNS, FitResults, predictive_rows
from csvm_stats.multiclass.certification import (
    GuaranteeShift,
    argmax_rule,
    guarantee_recall_statement,
    recall_bounds,
    recall_counts,
    recall_statement,
    sidak,
)
from csvm_stats.multiclass.probability import (
    MulticlassCalibration,
    calibrate_multiclass,
    planned_route,
    probability_frame,
)
from csvm_stats.multiclass.design import ClassCoding
from csvm_stats.multiclass.engine import MulticlassFit
from csvm_stats.multiclass.summary import build_multiclass_summary
from csvm_stats.optimization.solvers.base import SolveRecord
from csvm_stats.preprocessing.formula import FormulaDesign
from csvm_stats.reporting.summary import Summary



class MulticlassSpec(Protocol):
    """What the results read of their model (:class:`~csvm_stats.multiclass.model.MulticlassCSVM` has it all)."""

    exog: pd.DataFrame
    y: np.ndarray
    coding: ClassCoding
    recall_min: dict[int, float]
    alpha: float
    bound: str
    big_m: float | None
    C: float
    standardize: bool
    formula: FormulaDesign | None

    @property
    def exog_names(self) -> list[str]: ...

    @property
    def classes(self) -> list[Any]: ...

    def design_matrix(self, newdata: Any) -> pd.DataFrame: ...

class MulticlassResults(FitResults):
    """A fitted multiclass CSVM. Built by :meth:`~csvm_stats.MulticlassCSVM.fit`; read-only.

    The names shared with every model form (``confusion_matrix``,
    ``sample_roles``, ``requirements``, ``rates`` columns, the selection
    attributes) come from :class:`~csvm_stats.models.results_base.FitResults`;
    the rate table, statements and requirements are keyed by the class
    labels in their own dtype.

    ``random_state`` is the seed of the split and the solver (drawn by the fit when none was given).

    Parameters
    ----------
    model : MulticlassSpec
        What was fitted (design, labels, requirements).
    split : SampleSplit
        The training, anchor and held-out positions.
    scaler : Standardizer
        The column scaling.
    fit : MulticlassFit
        The solver's solution.
    adjusted : dict
        The required anchor count of each constrained class.
    shift : GuaranteeShift or None
        Guarantee mode's common offset shift.
    random_state : int
        The seed of the fit.
    fit_options : mapping
        The solver options used.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from csvm_stats import CSVM
    >>> iris = load_iris(as_frame=True)
    >>> species = iris.target.map(dict(enumerate(iris.target_names)))
    >>> res = CSVM(species, iris.data, recall_min={"virginica": 0.8}, bound="none").fit(random_state=0)
    >>> res.random_state
    0
    """

    is_multiclass = True  # how r_api, persistence and the CLI tell it from a two-class fit

    def __init__(
        self,
        model: MulticlassSpec,
        split: SampleSplit,
        scaler: Standardizer,
        fit: MulticlassFit,
        adjusted: dict[int, AdjustedTarget],
        shift: GuaranteeShift | None,
        random_state: int,
        fit_options: Mapping[str, Any],
    ) -> None:
        self.model = model
        self.split = split
        self.scaler = scaler
        self.engine_fit = fit
        self.adjusted = adjusted
        self.shift = shift
        self.random_state = random_state
        self.fit_options = fit_options
        self.intercept = fit.intercept if shift is None else shift.offsets(fit.intercept)

    @property
    def classes(self) -> list[Any]:
        return self.model.classes

    @property
    def _names(self) -> list[str]:
        return [str(c) for c in self.classes]

    # ------------------------------------------------------------------ scores and prediction
    def _scores(self, X: np.ndarray) -> np.ndarray:
        return self.engine_fit.scores(self.scaler.transform(X)) + self.intercept

    @cached_property
    def _fitted_scores(self) -> np.ndarray:
        return self._scores(self.model.exog.to_numpy())

    def decision_function(self, newdata: Any = None) -> pd.DataFrame:
        """Scores f_k(x), one column per class (the prediction is the largest), indexed like the data.

        Parameters
        ----------
        newdata : DataFrame, array-like or None
            Rows with the model's predictor columns; ``None``: the rows the model was built on.

        Returns
        -------
        pandas.DataFrame
            One column per class.

        Raises
        ------
        csvm_stats.exceptions.DataError
            ``newdata`` lacks a column or has text in a numeric one.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from csvm_stats import CSVM
        >>> iris = load_iris(as_frame=True)
        >>> species = iris.target.map(dict(enumerate(iris.target_names)))
        >>> res = CSVM(species, iris.data, recall_min={"virginica": 0.8}, bound="none").fit(random_state=0)
        >>> list(res.decision_function(iris.data.head(2)).columns)
        ['setosa', 'versicolor', 'virginica']
        """
        if newdata is None:
            scores, index = self._fitted_scores, self.model.exog.index
        else:
            design = self.model.design_matrix(newdata)
            scores, index = self._scores(design.to_numpy()), design.index
        return pd.DataFrame(scores, index=index, columns=pd.Index(self.classes, name="class"))

    def predict(self, newdata: Any = None) -> pd.Series:
        """Predicted labels in the original coding (and type), indexed like the data.

        Parameters
        ----------
        newdata : DataFrame, array-like or None
            Rows with the model's predictor columns; ``None``: the rows the model was built on.

        Returns
        -------
        pandas.Series
            The class of the largest score for each row.

        Raises
        ------
        csvm_stats.exceptions.DataError
            ``newdata`` lacks a column or has text in a numeric one.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from csvm_stats import CSVM
        >>> iris = load_iris(as_frame=True)
        >>> species = iris.target.map(dict(enumerate(iris.target_names)))
        >>> res = CSVM(species, iris.data, recall_min={"virginica": 0.8}, bound="none").fit(random_state=0)
        >>> res.predict(iris.data.head(2)).shape
        (2,)
        """
        scores = self.decision_function(newdata)
        return self.model.coding.decode(argmax_rule(scores.to_numpy()), index=scores.index)

    def csvm_scores(self, newdata: Any = None) -> np.ndarray:
        """``(n, K)`` scores with the CSVM's own offsets (before a guarantee-mode shift): what is calibrated.

        Parameters
        ----------
        newdata : DataFrame, array-like or None
            Rows with the model's predictor columns; ``None``: the rows the model was built on.

        Returns
        -------
        numpy.ndarray of shape (n, K)
            The class scores before a guarantee-mode shift.

        Raises
        ------
        csvm_stats.exceptions.DataError
            ``newdata`` lacks a column or has text in a numeric one.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from csvm_stats import CSVM
        >>> iris = load_iris(as_frame=True)
        >>> species = iris.target.map(dict(enumerate(iris.target_names)))
        >>> res = CSVM(species, iris.data, recall_min={"virginica": 0.8}, bound="none").fit(random_state=0)
        >>> res.csvm_scores(iris.data.head(2)).shape
        (2, 3)
        """
        return self._unshifted(self._fitted_scores if newdata is None else self.decision_function(newdata).to_numpy())

    def _unshifted(self, scores: np.ndarray) -> np.ndarray:
        return scores - self.intercept + self.engine_fit.intercept

    # ------------------------------------------------------------------ probabilities
    @cached_property
    def calibration(self) -> MulticlassCalibration:
        """One-vs-rest Venn-Abers on the class margins (:mod:`csvm_stats.multiclass.probability`).

        Held-out when H has enough points of every class, else cross-fitted
        (the multiclass CSVM refitted on folds of I u J).
        """
        return calibrate_multiclass(self)

    @property
    def ready_calibration(self) -> MulticlassCalibration | None:
        """:attr:`calibration` when it is cheap (held-out) or already computed; None before a cross-fit."""
        if "calibration" in vars(self) or planned_route(self) == "held-out":
            return self.calibration
        return None

    def predict_proba(self, newdata: Any = None, *, interval: bool = False) -> pd.DataFrame:
        """P(y = k | x), one column per class, rows summing to 1, indexed like the data.

        ``interval=True``: columns ``(stat, class)`` with ``stat`` in ``p0``,
        ``p1`` (each class's one-vs-rest Venn-Abers interval) and ``p`` (the
        normalised probabilities). The class of largest probability need not
        be the predicted class (:mod:`csvm_stats.multiclass.probability`).

        Parameters
        ----------
        newdata : DataFrame, array-like or None
            Rows with the model's predictor columns; ``None``: the rows the model was built on.
        interval : bool, default False
            Also return each class's one-vs-rest interval.

        Returns
        -------
        pandas.DataFrame
            One column per class (rows sum to 1), or the ``(stat, class)`` columns.

        Raises
        ------
        csvm_stats.exceptions.DataError
            ``newdata`` lacks a column or has text in a numeric one.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from csvm_stats import CSVM
        >>> iris = load_iris(as_frame=True)
        >>> species = iris.target.map(dict(enumerate(iris.target_names)))
        >>> res = CSVM(species, iris.data, recall_min={"virginica": 0.8}, bound="none").fit(random_state=0)
        >>> round(float(res.predict_proba(iris.data.head(1)).sum(axis=1).iloc[0]), 6)
        1.0
        """
        scores = self.decision_function(newdata)
        return probability_frame(self.calibration, self._unshifted(scores.to_numpy()), scores.index, self.classes,
                                 interval)

    def predict_interval(self, newdata: Any = None) -> pd.DataFrame:
        """The one-vs-rest intervals and the normalised probabilities (:meth:`predict_proba` with ``interval=True``).

        Parameters
        ----------
        newdata : DataFrame, array-like or None
            Rows with the model's predictor columns; ``None``: the rows the model was built on.

        Returns
        -------
        pandas.DataFrame
            Columns ``(stat, class)`` with ``stat`` in ``p0``, ``p1``, ``p``.

        Raises
        ------
        csvm_stats.exceptions.DataError
            ``newdata`` lacks a column or has text in a numeric one.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from csvm_stats import CSVM
        >>> iris = load_iris(as_frame=True)
        >>> species = iris.target.map(dict(enumerate(iris.target_names)))
        >>> res = CSVM(species, iris.data, recall_min={"virginica": 0.8}, bound="none").fit(random_state=0)
        >>> res.predict_interval(iris.data.head(2)).shape
        (2, 9)
        """
        return self.predict_proba(newdata, interval=True)

    @property
    def probability_agreement(self) -> float:
        """Share of the fitted rows whose class of largest probability is the predicted class."""
        return self.calibration.agreement(self.csvm_scores(), self._fitted_scores)

    # ------------------------------------------------------------------ parameters
    @property
    def is_linear(self) -> bool:
        return self.engine_fit.feature_map.kernel.is_linear

    @cached_property
    def params(self) -> pd.DataFrame:
        """One column per class: coefficients by feature (original units, linear kernel) and the intercept.

        Kernel: the coefficients of the feature-map components ``phi_1..phi_r``.
        """
        coef = self.engine_fit.coef
        if self.is_linear:
            pairs = [self.scaler.to_original(coef[k], self.intercept[k]) for k in range(coef.shape[0])]
            values = np.column_stack([np.r_[w, b] for w, b in pairs])
            names = self.model.exog_names
        else:
            values = np.vstack([coef.T, self.intercept])
            names = [f"phi_{k + 1}" for k in range(coef.shape[1])]
        return pd.DataFrame(values, index=[*names, "Intercept"], columns=pd.Index(self.classes, name="class"))

    @cached_property
    def params_standardized(self) -> pd.DataFrame | None:
        """Linear kernel: coefficients on the standardised columns, one column per class."""
        if not self.is_linear:
            return None
        values = np.vstack([self.engine_fit.coef.T, self.intercept])
        return pd.DataFrame(values, index=[*self.model.exog_names, "Intercept"], columns=pd.Index(self.classes, name="class"))

    @property
    def solver(self) -> SolveRecord:
        """The solver record: status, objective, bound, gap, times, nodes, backend."""
        return self.engine_fit.record

    # ------------------------------------------------------------------ feature selection (max_features)
    @property
    def _selects(self) -> bool:
        return getattr(self.engine_fit, "max_features", None) is not None

    @cached_property
    def selected_features(self) -> pd.DataFrame | None:  # type: ignore[override]
        """The gene list (``max_features`` fits; ``None`` otherwise), largest ``coef_std_norm`` first.

        One column per class with its coefficients (original units) and
        ``coef_std_norm``, the Euclidean norm over the classes of the
        standardised coefficients (comparable across features).
        """
        if not self._selects:
            return None
        idx = np.asarray(self.engine_fit.selected, dtype=int)
        names = self.model.exog_names
        frame = self.params.iloc[idx].copy()
        frame.columns = pd.Index(self.classes, name="class")
        frame["coef_std_norm"] = np.linalg.norm(self.engine_fit.coef[:, idx], axis=0)
        frame.index = pd.Index([names[k] for k in idx], name="feature")
        return frame.iloc[np.argsort(-frame["coef_std_norm"].to_numpy(), kind="stable")]

    @property
    def n_selected(self) -> int | None:  # type: ignore[override]
        return None if not self._selects else int(np.asarray(self.engine_fit.selected).size)

    @property
    def exact(self) -> bool | None:  # type: ignore[override]
        """False when screening made the gene-list route a heuristic; ``None`` without selection."""
        if not self._selects:
            return None
        screening = self.engine_fit.screening
        return screening is None or screening.exact

    @property
    def route(self) -> str | None:  # type: ignore[override]
        """``"cardinality"`` for a gene list (``max_features``), ``None`` without selection."""
        return "cardinality" if self._selects else None

    # ------------------------------------------------------------------ confusion and recalls
    def _predicted(self, sample: str) -> tuple[np.ndarray, np.ndarray]:
        rows = getattr(self.split, sample)
        return self.model.y[rows], argmax_rule(self._fitted_scores[rows])

    def _true_and_predicted(self, sample: str) -> tuple[np.ndarray, np.ndarray]:
        return self._predicted(sample)

    def _requirement_rows(self) -> list[tuple[Any, str, AdjustedTarget]]:
        return [(self.classes[k], f"recall of {self.classes[k]!r}", adj) for k, adj in sorted(self.adjusted.items())]

    @property
    def confusion(self) -> pd.DataFrame:
        """The held-out confusion matrix."""
        return self.confusion_matrix("holdout")

    @property
    def joint_classes(self) -> tuple[int, ...]:
        """The classes of the joint statement: the constrained ones, or all when none is constrained."""
        return tuple(sorted(self.model.recall_min)) or tuple(range(len(self.classes)))

    @cached_property
    def rates(self) -> pd.DataFrame:
        """One row per class: target, anchor counts (in-sample), held-out recall and its bounds.

        Columns as :attr:`csvm_stats.models.results.CSVMResults.rates`; ``joint_lower``
        is the joint (Sidak) bound over :attr:`joint_classes` (empty for the others);
        in guarantee mode the constrained classes' bounds are the guaranteed targets.
        """
        K, alpha = len(self.classes), self.model.alpha
        a_n, a_k = recall_counts(*self._predicted("anchor"), K)
        h_n, h_k = recall_counts(*self._predicted("holdout"), K)
        joint = self.joint_classes
        bounds = recall_bounds(h_n, h_k, alpha, len(joint))
        table = {}
        for k, name in enumerate(self.classes):
            adj = self.adjusted.get(k)
            target = self.model.recall_min.get(k, np.nan)
            if self.shift is not None and k in self.shift.classes:
                method, lower, joint_lower = "order statistic", target, target
            elif h_n[k] == 0:
                method, lower, joint_lower = "none (no held-out points)", np.nan, np.nan
            else:
                method, lower = "clopper-pearson", bounds[k].lower
                joint_lower = bounds[k].joint_lower if k in joint and self.shift is None else np.nan
            table[name] = {
                "target": target,
                "adjusted": adj.adjusted if adj else np.nan,
                "bound": self.model.bound if adj else "",
                "required": adj.count if adj else pd.NA,
                "anchor_n": int(a_n[k]),
                "anchor_correct": int(a_k[k]),
                "anchor_rate": a_k[k] / a_n[k] if a_n[k] else np.nan,
                "met": bool(a_k[k] >= adj.count) if adj else pd.NA,
                "heldout_n": int(h_n[k]),
                "heldout_correct": int(h_k[k]),
                "heldout_rate": bounds[k].rate,
                "lower": lower,
                "upper": np.nan,  # one-sided lower bounds only
                "joint_lower": joint_lower,
                "method": method,
                "certified": bool(lower >= target) if adj and not np.isnan(lower) else pd.NA,
            }
        frame = pd.DataFrame(list(table.values()), columns=list(RATE_COLUMNS))
        frame.index = pd.Index(self.classes, name="class")
        return frame

    @cached_property
    def overall_rates(self) -> pd.DataFrame:
        """The accuracy and the balanced accuracy (mean of the class recalls), in-sample and on the held-out sample.

        Index ``["accuracy", "balanced accuracy"]``; columns ``anchor_n``,
        ``anchor_correct``, ``anchor_rate`` (the requirement sample, in-sample),
        ``heldout_n``, ``heldout_correct``, ``heldout_rate``, ``lower``,
        ``upper`` and ``method``. The accuracy gets the exact two-sided
        (1 - alpha) Clopper-Pearson interval; the balanced accuracy the mean of
        the K classes' exact two-sided recall intervals at 1 - alpha/K each
        (as the two-class balanced accuracy: mean of TPR and TNR at 1 - alpha/2).
        The accuracy depends on the class mix (here the held-out sample's,
        which the stratified split keeps from the data); the balanced accuracy
        weighs the classes equally. In guarantee
        mode the held-out sample set the offsets: no interval
        (``method`` ``"none (H set the rule)"``).
        Count columns of the balanced accuracy are NA (it is a mean of rates).

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from csvm_stats import CSVM
        >>> iris = load_iris(as_frame=True)
        >>> species = iris.target.map(dict(enumerate(iris.target_names)))
        >>> res = CSVM(species, iris.data, recall_min={"virginica": 0.8}, bound="none").fit(random_state=0)
        >>> res.overall_rates.index.tolist()
        ['accuracy', 'balanced accuracy']
        """
        K, alpha = len(self.classes), self.model.alpha
        rows = {}
        samples = {}
        for sample in ("anchor", "holdout"):
            y, pred = self._predicted(sample)
            n, k = recall_counts(y, pred, K)
            samples[sample] = (int(y.size), int(np.sum(y == pred)), n, k)
        a_total, a_correct, a_n, a_k = samples["anchor"]
        h_total, h_correct, h_n, h_k = samples["holdout"]
        guarantee = self.shift is not None and h_total > 0
        none = RateBounds(np.nan, np.nan, np.nan, NOT_INDEPENDENT_PV)
        acc = none if guarantee else two_sided_bounds(h_correct, h_total, alpha)
        bacc = none if guarantee else mean_recall_bounds([(int(n), int(k)) for n, k in zip(h_n, h_k)], alpha)
        if not guarantee and h_total and np.any(h_n == 0):
            bacc = RateBounds(np.nan, np.nan, np.nan, "none (a class has no held-out points)")

        def mean_recall(n: np.ndarray, k: np.ndarray) -> float:
            return float(np.mean(k / n)) if n.size and np.all(n > 0) else np.nan

        rows["accuracy"] = {
            "anchor_n": a_total, "anchor_correct": a_correct, "anchor_rate": a_correct / a_total if a_total else np.nan,
            "heldout_n": h_total, "heldout_correct": h_correct,
            "heldout_rate": h_correct / h_total if h_total else np.nan,
            "lower": acc.lower, "upper": acc.upper, "method": acc.method if h_total else NO_HOLDOUT,
        }
        rows["balanced accuracy"] = {
            "anchor_n": a_total, "anchor_correct": pd.NA, "anchor_rate": mean_recall(a_n, a_k),
            "heldout_n": h_total, "heldout_correct": pd.NA, "heldout_rate": mean_recall(h_n, h_k),
            "lower": bacc.lower, "upper": bacc.upper, "method": bacc.method if h_total else NO_HOLDOUT,
        }
        frame = pd.DataFrame.from_dict(rows, orient="index")
        for column in ("anchor_n", "anchor_correct", "heldout_n", "heldout_correct"):
            frame[column] = frame[column].astype("Int64")
        frame.index.name = "rate"
        return frame

    @cached_property
    def overall_statements(self) -> pd.Series:
        """One sentence each for the accuracy and the balanced accuracy
        (:attr:`~csvm_stats.multiclass.results.MulticlassResults.overall_rates`), each holding separately at
        1 - alpha."""
        alpha, K = self.model.alpha, len(self.classes)
        level = level_percent(alpha)
        out = {}
        for rate, row in self.overall_rates.iterrows():
            if row["method"] == NO_HOLDOUT:
                out[rate] = NO_HOLDOUT_STATEMENT
            elif pd.isna(row["lower"]):
                why = ("in guarantee mode the held-out points of the guaranteed classes set the offsets, so the "
                       "held-out sample is not independent of the classifier for this rate; the recall statements "
                       "are the valid ones" if row["method"] == NOT_INDEPENDENT_PV else row["method"])
                out[rate] = f"No interval: {why}."
            else:
                how = (f"held-out: {row['heldout_correct']} of {row['heldout_n']} points correct; exact two-sided "
                       "binomial interval" if rate == "accuracy" else
                       f"the mean of the {K} classes' exact two-sided recall intervals at "
                       f"{level_percent(alpha / K)} each")
                out[rate] = (f"With {level} confidence the {rate} of this classifier lies between "
                             f"{floor2(row['lower'])} and {round_up(row['upper'], 2)} ({how}).")
        return pd.Series(out, name="statement")

    @cached_property
    def predictive_values(self) -> pd.DataFrame:
        """Each class's precision (PPV: P(true class k | called k)) on the held-out sample, with its exact
        two-sided (1 - alpha) Clopper-Pearson interval and the class's held-out ``prevalence``.

        Unlike the recalls these depend on the class mix: they are at the
        held-out sample's (the stratified split keeps the data's). In
        guarantee mode the held-out sample set the offsets: no interval.
        """
        rows = predictive_rows(self.confusion_matrix("holdout").to_numpy(), self.model.alpha, self.shift is None)
        return pd.DataFrame(rows, index=pd.Index(self.classes, name="class"))

    @cached_property
    def statements(self) -> pd.Series:
        """One sentence per class, each holding separately (at 1 - alpha; in guarantee mode at the Sidak level)."""
        out = []
        for k, (_, row) in enumerate(self.rates.iterrows()):
            name = self._names[k]
            if self.shift is not None and k in self.shift.classes:
                out.append(guarantee_recall_statement(name, self.shift, k))
            elif row["heldout_n"] == 0:
                out.append(NO_HOLDOUT_STATEMENT)
            else:
                out.append(recall_statement(name, row["lower"], row["heldout_correct"], row["heldout_n"],
                                            self.model.alpha))
        return pd.Series(out, index=pd.Index(self.classes, name="class"), name="statement")

    @cached_property
    def joint_statement(self) -> str:
        """One sentence for the recalls of :attr:`joint_classes` at once (Sidak over independent classes)."""
        if self.split.holdout.size == 0:
            return NO_HOLDOUT_STATEMENT
        alpha, rates = self.model.alpha, self.rates
        names = [self._names[k] for k in self.joint_classes]
        parts = " and ".join(f"recall of {self._names[k]!r} >= {floor2(rates['joint_lower'].iloc[k])}"
                             for k in self.joint_classes)
        if self.shift is not None and len(names) == 1:
            return f"With {level_percent(alpha)} confidence: {parts} (guarantee mode: order-statistic rule)."
        if self.shift is not None:
            return (
                f"With {level_percent(alpha)} confidence, jointly: {parts} (guarantee mode: order-statistic rule at "
                f"level {level_percent(sidak(alpha, len(names)))} per class; the classes' held-out points are "
                "independent, so the levels multiply (Sidak))."
            )
        if len(names) == 1:
            return f"With one statement the joint and the separate statement coincide: {parts}."
        return (
            f"With {level_percent(alpha)} confidence, jointly: {parts} (Sidak: each bound at level "
            f"{level_percent(sidak(alpha, len(names)))}, the classes' held-out points being independent; "
            "held-out counts as above)."
        )

    @cached_property
    def guarantee_cost(self) -> pd.DataFrame | None:
        """Guarantee mode: held-out correct counts of every class with the CSVM's and the shifted offsets."""
        if self.shift is None:
            return None
        rows = self.split.holdout
        y = self.model.y[rows]
        K = len(self.classes)
        before = argmax_rule(self.csvm_scores()[rows])
        after = argmax_rule(self._fitted_scores[rows])
        n, k_before = recall_counts(y, before, K)
        _, k_after = recall_counts(y, after, K)
        return pd.DataFrame({"n": n, "correct_csvm_offsets": k_before, "correct_guarantee_offsets": k_after},
                            index=pd.Index(self.classes, name="class"))

    # ------------------------------------------------------------------ warnings and summary
    @cached_property
    def warnings(self) -> list[str]:
        """Everything the reader must know (also the summary's footer)."""
        notes = [capped_note(f"recall of class {self._names[k]!r}", adj)
                 for k, adj in self.adjusted.items() if adj.capped]
        return notes + solver_notes(self.solver, self.engine_fit.feature_map, self.model.big_m, "multiclass CSVM")

    def summary(self, *, timing: bool = True, detail: bool = False) -> Summary:
        """A :class:`~csvm_stats.reporting.summary.Summary` (text, HTML, LaTeX).

        ``timing=False`` omits run times; ``detail=True`` adds the internal terms (anchor counts, margin, solver).

        Parameters
        ----------
        timing : bool, default True
            Include run times.
        detail : bool, default False
            Add the internal terms (anchor counts, margin, solver).

        Returns
        -------
        csvm_stats.reporting.summary.Summary
            A statsmodels ``Summary``.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from csvm_stats import CSVM
        >>> iris = load_iris(as_frame=True)
        >>> species = iris.target.map(dict(enumerate(iris.target_names)))
        >>> res = CSVM(species, iris.data, recall_min={"virginica": 0.8}, bound="none").fit(random_state=0)
        >>> isinstance(res.summary(timing=False).as_text(), str)
        True
        """
        return build_multiclass_summary(self, timing=timing, detail=detail)

    def __repr__(self) -> str:
        return f"<MulticlassResults: {self.model!r}, solver {self.solver.status.value}>"
