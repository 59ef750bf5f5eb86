r"""Results of a CSVM fit: coefficients, predictions, rate table and confidence statements.

The decision function is :math:`f(x) = w^\top \phi(s(x)) + b` with :math:`s`
the column standardisation fitted on :math:`I \cup J` and :math:`\phi` the
engine's feature map (the identity for the linear kernel); a point is
classified positive when :math:`f(x) \ge 0`. In guarantee mode b is the
order-statistic intercept set on the held-out sample, not the CSVM's own.

What is reported about each rate (see :mod:`csvm_stats.inference.certification`):

* the anchor-sample rate, labelled *in-sample*: the optimisation chose (w, b)
  to satisfy it, so the margin built into the required count does not make it
  a valid confidence statement;
* the held-out rate with its exact one-sided Clopper-Pearson lower bound, and
  the Bonferroni-joint bound when several rates are reported;
* in guarantee mode, for the guaranteed rate, the order-statistic guarantee
  ``P(true rate >= target) >= 1 - alpha``.

The probabilities (``predict_proba``, ``calibration``, the EBB ensembles) are
the job of :mod:`csvm_stats.models.results_probability`, which
:class:`CSVMResults` inherits.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.inference.certification import (
    ALL_RATES,
    NO_HOLDOUT,
    NO_HOLDOUT_STATEMENT,
    NOT_INDEPENDENT,
    NOT_INDEPENDENT_STATEMENT,
    ONE_SIDED,
    ORDER_STATISTIC,
    RATE_LABELS,
    RateBounds,
    balanced_bounds,
    count_correct,
    floor2,
    guarantee_statement,
    interval_statement,
    level_percent,
    one_sided_bounds,
    statement,
    two_sided_bounds,
)
from csvm_stats.inference.bounds import AdjustedTarget
from csvm_stats.probability.ebb import EBB
from csvm_stats.models.fitstate import FittedState
from csvm_stats.models.results_base import SAMPLES, FitResults, predictive_rows
from csvm_stats.models.results_probability import PROBABILITY_METHODS, ProbabilityResults
from csvm_stats.optimization.kernels import FeatureMap
from csvm_stats.optimization.problem import RATE_KINDS as RATES
from csvm_stats.optimization.solvers.base import SolveRecord, Status
from csvm_stats.reporting.summary import Summary, build_summary

__all__ = ["CSVMResults", "PROBABILITY_METHODS", "ProbabilityResults", "capped_note", "solver_notes"]

#: Training points with y f(x) <= 1 + SUPPORT_TOL count as support vectors.
SUPPORT_TOL = 1e-6
#: w counts as numerically zero when max |w'phi(x)| <= ZERO_RULE_RTOL * max(1, |b|) (:attr:`CSVMResults.degenerate`).
ZERO_RULE_RTOL = 1e-6


def _counts(sample: str, rate: str, counts: dict[str, tuple[int, int]]) -> dict[str, Any]:
    """``<sample>_n``, ``<sample>_correct`` and ``<sample>_rate`` of one rate (balanced accuracy: no count)."""
    if rate == "bacc":
        (n_pos, k_pos), (n_neg, k_neg) = counts["tpr"], counts["tnr"]
        value = (k_pos / n_pos + k_neg / n_neg) / 2 if n_pos and n_neg else np.nan
        return {f"{sample}_n": n_pos + n_neg, f"{sample}_correct": pd.NA, f"{sample}_rate": value}
    n, k = counts[rate]
    return {f"{sample}_n": n, f"{sample}_correct": k, f"{sample}_rate": k / n if n else np.nan}



def capped_note(what: str, adj: AdjustedTarget) -> str:
    """The footer note for a target whose margin needs more anchor points than there are (capped at 1)."""
    return (
        f"The {what} target {adj.target:g} with the {adj.bound} margin needs more than all {adj.n} anchor points; "
        "it was capped at 1 (every anchor point of the class must be correct). "
        f"The margin stays below 1 from n = {adj.min_n} anchor points."
    )


def solver_notes(record: SolveRecord, feature_map: FeatureMap, big_m: float | None, model_name: str) -> list[str]:
    """Footer notes on how far the fitted rule is from the exact optimum: time limit, big-M model, truncated map.

    ``model_name`` names the exact model (``"CSVM"``, ``"multiclass CSVM"``) in the note for a user's
    ``big_m`` below a proven bound (``record.exact`` False).
    """
    notes = []
    if record.status is Status.TIME_LIMIT:
        stop = (f"{record.reason[0].upper()}{record.reason[1:]}," if record.reason  # ended before the limit
                else "The solver stopped at the time limit")
        notes.append(
            f"{stop} with a relative gap of {record.gap:.2%}; "
            "the classifier is the best one found, not a proven optimum."
        )
    if record.exact is False:
        notes.append(
            f"big_m={big_m:g} is below the proven bound of some anchor point's margin, so the classifier solves "
            f"a big-M approximation, not the exact {model_name}; big_m=None (the default) solves the exact model."
        )
    if not feature_map.exact:
        notes.append(
            f"The kernel feature map is truncated to rank {feature_map.rank} of {feature_map.numerical_rank}; "
            "the fitted classifier solves an approximation of the kernel CSVM."
        )
    return notes

class CSVMResults(ProbabilityResults, FitResults):
    """A fitted CSVM. Built by :meth:`csvm_stats.CSVM.fit` from a ``FittedState``; read-only.

    The names shared with every model form (``confusion_matrix``,
    ``sample_roles``, ``requirements``, ``rates`` columns, the selection
    attributes) come from :class:`~csvm_stats.models.results_base.FitResults`.

    ``model`` is the model that was fitted, ``random_state`` the seed of the
    split and the solver (drawn by the fit when none was given),
    ``fit_options`` the keyword arguments that repeat the solve (the
    summary's solver table reads the limit and clock from them).

    Parameters
    ----------
    state : FittedState
        What the fit hands over (model, split, scaler, solution, seed, options).

    Examples
    --------
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.data.datasets import load_dataset
    >>> X, y = load_dataset("wisconsin")
    >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
    >>> res.random_state
    0
    """

    def __init__(self, state: FittedState) -> None:
        self.state = state
        self.model = state.model
        self.split = state.split
        self.scaler = state.scaler
        self.engine_fit = state.engine_fit
        self.adjusted = state.adjusted
        self.umbrella = state.umbrella
        self.random_state = state.random_state
        self.fit_options = state.fit_options
        self.intercept = self.engine_fit.intercept if self.umbrella is None else self.umbrella.intercept
        self._ensembles: dict[tuple[str, int, int], EBB] = {}

    # ------------------------------------------------------------------ decision and prediction
    def _features(self, X: np.ndarray) -> np.ndarray:
        """``phi(s(x))``: the rows in the space the CSVM (and the probability model) is fitted in."""
        return self.engine_fit.feature_map.transform(self.scaler.transform(X))

    def _scores(self, X: np.ndarray) -> np.ndarray:
        """``w' phi(s(x))`` without the intercept."""
        return self._features(X) @ self.engine_fit.coef

    @cached_property
    def fitted_features(self) -> np.ndarray:
        """``phi(s(x))`` of every row of the data (what the probability model reads)."""
        return self._features(self.model.exog.to_numpy())

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return self._scores(X) + self.intercept

    @cached_property
    def _fitted_scores(self) -> np.ndarray:
        return self.fitted_features @ self.engine_fit.coef

    @cached_property
    def _fitted_decision(self) -> np.ndarray:
        return self._fitted_scores + self.intercept

    def decision_function(self, newdata: Any = None) -> pd.Series:
        """Decision values f(x) (positive class when >= 0), indexed like the data.

        Parameters
        ----------
        newdata : DataFrame, array-like or None
            Rows with the model's predictor columns (through the formula when the
            model has one); ``None`` gives the rows the model was built on.

        Returns
        -------
        pandas.Series
            f(x) for each row, named ``"decision"``.

        Raises
        ------
        csvm_stats.exceptions.DataError
            ``newdata`` lacks a predictor column or has text in a numeric one.

        Examples
        --------
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> bool((res.decision_function(X.head(3)) >= 0).eq(res.predict(X.head(3)) == 1).all())
        True
        """
        if newdata is None:
            return pd.Series(self._fitted_decision, index=self.model.exog.index, name="decision")
        design = self.model.design_matrix(newdata)
        return pd.Series(self._decision(design.to_numpy()), index=design.index, name="decision")

    def predict(self, newdata: Any = None) -> pd.Series:
        """Predicted labels in the original coding (and type), indexed like the data.

        Parameters
        ----------
        newdata : DataFrame, array-like or None
            Rows with the model's predictor columns (through the formula when the
            model has one); ``None`` gives the rows the model was built on.

        Returns
        -------
        pandas.Series
            The predicted label of each row, in the coding of the response.

        Raises
        ------
        csvm_stats.exceptions.DataError
            ``newdata`` lacks a predictor column or has text in a numeric one.

        Examples
        --------
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> res.predict(X.head(3)).index.equals(X.head(3).index)
        True
        """
        decision = self.decision_function(newdata)
        return self.model.coding.decode(decision.to_numpy(), index=decision.index)

    # ------------------------------------------------------------------ parameters
    @property
    def is_linear(self) -> bool:
        return self.engine_fit.feature_map.kernel.is_linear

    @cached_property
    def params(self) -> pd.Series:
        """Linear kernel: coefficients by feature name (original units) and the intercept.

        Kernel: the coefficients of the feature-map components ``phi_1..phi_r`` and
        the intercept; :attr:`dual_coef` gives the same rule as a kernel expansion.
        """
        if self.is_linear:
            w, b = self.scaler.to_original(self.engine_fit.coef, self.intercept)
            names = self.model.exog_names
        else:
            w, b = self.engine_fit.coef, self.intercept
            names = [f"phi_{k + 1}" for k in range(w.size)]
        return pd.Series(np.r_[w, b], index=[*names, "Intercept"], name="coef")

    @cached_property
    def params_standardized(self) -> pd.Series | None:
        """Linear kernel: coefficients on the standardised columns (comparable across features)."""
        if not self.is_linear:
            return None
        names = self.model.exog_names
        return pd.Series(np.r_[self.engine_fit.coef, self.intercept], index=[*names, "Intercept"], name="coef (std)")

    @cached_property
    def dual_coef(self) -> pd.Series | None:
        """Kernel: a_t with ``f(x) = sum_t a_t K(s(x), s(x_t)) + b`` over the training and anchor rows."""
        a = self.engine_fit.feature_map.expansion_coefficients(self.engine_fit.coef)
        if a is None:
            return None
        rows = np.concatenate([self.split.train, self.split.anchor])
        return pd.Series(a, index=self.model.exog.index[rows], name="dual_coef")

    @cached_property
    def support(self) -> pd.Series:
        """Support information: training points on or inside the margin, anchor points kept correct."""
        y, f = self.model.y, self._fitted_decision
        train_margin = y[self.split.train] * f[self.split.train]
        fmap = self.engine_fit.feature_map
        return pd.Series(
            {
                "support vectors (training, y f(x) <= 1)": int(np.sum(train_margin <= 1 + SUPPORT_TOL)),
                "anchor points with z = 1": int(self.engine_fit.z.sum()),
                "feature-map rank": int(fmap.rank),
                "numerical rank": int(fmap.numerical_rank),
                "exact feature map": bool(fmap.exact),
            },
            name="support",
        )

    @property
    def solver(self) -> SolveRecord:
        """The solver record: status, objective, bound, gap, times, nodes, backend."""
        return self.engine_fit.record

    # ------------------------------------------------------------------ rates and statements
    def _sample(self, name: str) -> np.ndarray:
        return getattr(self.split, name)

    @property
    def classes(self) -> list[Any]:
        """The two labels (their own dtype), positive first: the order of :meth:`confusion_matrix`."""
        return [self.model.coding.positive, self.model.coding.negative]

    def _true_and_predicted(self, sample: str) -> tuple[np.ndarray, np.ndarray]:
        idx = self._sample(sample)
        true = np.where(self.model.y[idx] > 0, 0, 1)
        return true, np.where(self._fitted_decision[idx] >= 0, 0, 1)

    def _requirement_rows(self) -> list[tuple[Any, str, AdjustedTarget]]:
        """Keys: the positive label (sensitivity), the negative label (specificity), "all points" (accuracy)."""
        keys = {"tpr": self.model.coding.positive, "tnr": self.model.coding.negative, "acc": "all points"}
        return [(keys[rate], RATE_LABELS[rate], adj) for rate, adj in self.adjusted.items()]

    @cached_property
    def predictive_values(self) -> pd.DataFrame:
        r"""PPV and NPV on the held-out sample with exact two-sided (1 - alpha) Clopper-Pearson intervals.

        PPV = P(truly positive | called positive) = tp / (tp + fp), NPV =
        tn / (tn + fn). Unlike the sensitivity and specificity they depend on
        the prevalence: these are at the held-out sample's share of
        positives (column ``prevalence``; the stratified split keeps the
        data's), and in a population with prevalence :math:`\pi` they are
        :math:`\pi\,\mathrm{sens} / (\pi\,\mathrm{sens} + (1 - \pi)(1 - \mathrm{spec}))` and its analogue.
        In guarantee mode the held-out sample set the intercept, so no interval is given.
        """
        rows = predictive_rows(self.confusion_matrix("holdout").to_numpy(), self.model.alpha, self.umbrella is None)
        rows[1]["prevalence"] = rows[0]["prevalence"]  # both at the share of positives
        return pd.DataFrame(rows, index=["ppv", "npv"])

    @cached_property
    def confusion(self) -> pd.DataFrame:
        """Confusion counts (tp, fn, tn, fp, n) on the training, anchor and held-out samples."""
        rows = {}
        for name in SAMPLES:
            idx = self._sample(name)
            y, pred = self.model.y[idx], np.where(self._fitted_decision[idx] >= 0, 1.0, -1.0)
            rows[name] = {
                "tp": int(np.sum((y > 0) & (pred > 0))),
                "fn": int(np.sum((y > 0) & (pred < 0))),
                "tn": int(np.sum((y < 0) & (pred < 0))),
                "fp": int(np.sum((y < 0) & (pred > 0))),
                "n": int(idx.size),
            }
        return pd.DataFrame.from_dict(rows, orient="index")

    @cached_property
    def heldout_confusion(self) -> pd.DataFrame:
        """The held-out confusion matrix with text labels ("true 'a'", "predicted 'a'"); see :meth:`confusion_matrix`."""
        c = self.confusion.loc["holdout"]
        pos, neg = repr(self.model.coding.positive), repr(self.model.coding.negative)
        return pd.DataFrame(
            {f"predicted {pos}": [c["tp"], c["fp"]], f"predicted {neg}": [c["fn"], c["tn"]]},
            index=[f"true {pos}", f"true {neg}"],
        )

    @property
    def reported_rates(self) -> tuple[str, ...]:
        """The rates of the one-sided (and joint) statements: the constrained ones, or all three if none is."""
        return tuple(r for r in RATES if r in self.model.targets) or RATES

    def _bounds(self, rate: str, heldout: dict[str, tuple[int, int]]) -> RateBounds:
        """What is claimed about ``rate`` from the held-out counts (see :attr:`rates`)."""
        alpha, umbrella = self.model.alpha, self.umbrella
        if umbrella is not None and umbrella.rate == rate:
            return RateBounds(umbrella.target, np.nan, umbrella.target, ORDER_STATISTIC)
        if umbrella is not None and rate in ("acc", "bacc") and self.split.holdout.size:
            return RateBounds(np.nan, np.nan, np.nan, NOT_INDEPENDENT)
        if rate == "bacc":
            return balanced_bounds(heldout["tpr"], heldout["tnr"], alpha)
        n, k = heldout[rate]
        if rate in self.reported_rates:
            bounds = one_sided_bounds(k, n, alpha, len(self.reported_rates))
            return bounds if umbrella is None else RateBounds(bounds.lower, np.nan, bounds.lower, bounds.method)
        return two_sided_bounds(k, n, alpha)

    @cached_property
    def rates(self) -> pd.DataFrame:
        """Every rate (TPR, TNR, accuracy, balanced accuracy) on the anchor and the held-out sample.

        Columns: ``target`` p0; ``adjusted`` the rate the required anchor count
        represents; ``bound`` the margin; ``required`` the anchor count;
        ``anchor_n/anchor_correct/anchor_rate`` (in-sample); ``met`` whether the
        final classifier meets the required count on the anchor sample;
        ``heldout_n/heldout_correct/heldout_rate`` (the balanced accuracy has
        no count: the mean of the TPR and TNR). The rates of
        :attr:`reported_rates` get ``lower``, the separate one-sided (1 - alpha)
        lower bound, and ``joint_lower``, the Bonferroni-joint one; the other
        rates get the two-sided (1 - alpha) interval ``lower``-``upper``
        (exact Clopper-Pearson; for the balanced accuracy the mean of the TPR
        and TNR intervals at 1 - alpha/2 each). ``method`` says which;
        ``certified`` whether ``lower >= target``.
        """
        y, f = self.model.y, self._fitted_decision
        J, H = self.split.anchor, self.split.holdout
        anchor = {r: count_correct(y[J], f[J], r) for r in RATES}
        heldout = {r: count_correct(y[H], f[H], r) for r in RATES}
        table = {}
        for rate in ALL_RATES:
            adj = self.adjusted.get(rate)
            bounds = self._bounds(rate, heldout)
            target = self.model.targets.get(rate, np.nan)
            table[rate] = {
                "target": target,
                "adjusted": adj.adjusted if adj else np.nan,
                "bound": self.model.bound if adj else "",
                "required": adj.count if adj else pd.NA,
                **_counts("anchor", rate, anchor),
                "met": bool(anchor[rate][1] >= adj.count) if adj else pd.NA,
                **_counts("heldout", rate, heldout),
                "lower": bounds.lower,
                "upper": bounds.upper,
                "joint_lower": bounds.joint_lower,
                "method": bounds.method,
                "certified": bool(bounds.lower >= target) if adj and not np.isnan(bounds.lower) else pd.NA,
            }
        return pd.DataFrame.from_dict(table, orient="index")

    @cached_property
    def statements(self) -> pd.Series:
        """One plain sentence per rate, each holding separately at level 1 - alpha."""
        alpha = self.model.alpha
        out = {}
        for rate, row in self.rates.iterrows():
            bounds = RateBounds(row["lower"], row["upper"], row["joint_lower"], row["method"])
            if row["method"] == ORDER_STATISTIC:
                out[rate] = guarantee_statement(self.umbrella, int(row["heldout_correct"]))
            elif row["method"] == NO_HOLDOUT:
                out[rate] = NO_HOLDOUT_STATEMENT
            elif row["method"] == NOT_INDEPENDENT:
                out[rate] = NOT_INDEPENDENT_STATEMENT
            elif row["method"] == ONE_SIDED:
                out[rate] = statement(rate, row["lower"], row["heldout_correct"], row["heldout_n"], alpha)
            else:
                correct = None if pd.isna(row["heldout_correct"]) else int(row["heldout_correct"])
                out[rate] = interval_statement(rate, bounds, correct, int(row["heldout_n"]), alpha)
        return pd.Series(out, name="statement")

    @cached_property
    def joint_statement(self) -> str:
        """One sentence for all :attr:`reported_rates` at once (Bonferroni)."""
        rates, alpha = self.rates.loc[list(self.reported_rates)], self.model.alpha
        m = len(rates)
        if self.split.holdout.size == 0:
            return NO_HOLDOUT_STATEMENT
        parts = " and ".join(
            f"{RATE_LABELS[r]} >= {self._joint_text(r, row['joint_lower'])}" for r, row in rates.iterrows()
        )
        if m == 1:
            return f"With one statement the joint and the separate statement coincide: {parts}."
        if self.umbrella is not None:
            return (
                f"All {m} statements hold together with confidence at least {level_percent(m * alpha)} "
                f"(Bonferroni: {m} statements at {level_percent(alpha)} each): {parts}."
            )
        return (
            f"With {level_percent(alpha)} confidence, jointly: {parts} (Bonferroni: each bound at level "
            f"{level_percent(alpha, m)}; held-out counts as above)."
        )

    def _joint_text(self, rate: str, joint_lower: float) -> str:
        """A joint lower bound rounded down; the guaranteed rate's target as given."""
        if self.umbrella is not None and self.umbrella.rate == rate:
            return repr(float(self.umbrella.target))
        return floor2(joint_lower)

    @cached_property
    def guarantee_cost(self) -> pd.Series | None:
        """Guarantee mode: the other class's held-out correct count before and after the intercept moved."""
        if self.umbrella is None:
            return None
        other = "tnr" if self.umbrella.rate == "tpr" else "tpr"
        holdout = self.split.holdout
        y = self.model.y[holdout]
        n, before = count_correct(y, self._fitted_scores[holdout] + self.engine_fit.intercept, other)
        _, after = count_correct(y, self._fitted_decision[holdout], other)
        return pd.Series(
            {"rate": other, "n": n, "correct_csvm_intercept": before, "correct_guarantee_intercept": after,
             "csvm_intercept": self.engine_fit.intercept, "guarantee_intercept": self.intercept},
            name="guarantee cost",
        )

    # ------------------------------------------------------------------ warnings and summary
    @cached_property
    def degenerate(self) -> list[str]:
        r"""Messages if the rule is constant: w numerically zero, or one label on the anchor or held-out sample.

        w is numerically zero when :math:`\max |w^\top\phi(x)|` over the
        training and anchor rows is at most ``ZERO_RULE_RTOL`` times
        :math:`\max(1, |b|)`: small against the SVM's margin 1 on the
        standardised columns and against the intercept, so the sign of
        :math:`f` is the sign of b everywhere. Each message is also a
        :class:`~csvm_stats.exceptions.DegenerateRuleWarning` at fit time and a
        footer line of the summary.
        """
        coding = self.model.coding
        rows = np.concatenate([self.split.train, self.split.anchor])
        spread = float(np.max(np.abs(self._fitted_scores[rows]))) if rows.size else 0.0
        if spread <= ZERO_RULE_RTOL * max(1.0, abs(self.intercept)):
            side = "positive" if self.intercept >= 0 else "negative"
            label = coding.positive if self.intercept >= 0 else coding.negative
            return [
                f"w is numerically zero (largest |w'phi(x)| on the training and anchor samples {spread:.1e}, "
                f"intercept {self.intercept:.4g}): this classifier calls every point {side} ({label!r}). "
                f"Its {'true negative' if side == 'positive' else 'true positive'} rate is 0 whatever the "
                "statements about the other rates say."
            ]
        messages = []
        for name, what in (("anchor", "anchor sample J"), ("holdout", "held-out sample H")):
            idx = self._sample(name)
            positive = self._fitted_decision[idx] >= 0
            if idx.size and (positive.all() or not positive.any()):
                side, label = ("positive", coding.positive) if positive.all() else ("negative", coding.negative)
                messages.append(
                    f"On the {what} this classifier calls every point {side} ({label!r}, {idx.size} of {idx.size})."
                )
        return messages

    @cached_property
    def warnings(self) -> list[str]:
        """Everything the reader of the results must know (also the summary's footer)."""
        notes = list(self.degenerate)
        notes += [capped_note(RATE_LABELS[rate], adj) for rate, adj in self.adjusted.items() if adj.capped]
        return notes + solver_notes(self.solver, self.engine_fit.feature_map, self.model.big_m, "CSVM")

    def summary(self, *, timing: bool = True, detail: bool = False) -> Summary:
        """A :class:`~csvm_stats.reporting.summary.Summary` (text, HTML, LaTeX).

        ``timing=False`` leaves out the solve times, which differ between
        identical runs, so that the text can be compared with a stored copy.
        ``detail=True`` adds the internal terms (anchor counts and margin,
        joint bounds, the solver's formulation and objective).

        Parameters
        ----------
        timing : bool, default True
            Include the CPU and wall times (they differ between identical runs).
        detail : bool, default False
            Add the internal terms (anchor counts and margin, joint bounds, the solver's formulation and objective).

        Returns
        -------
        csvm_stats.reporting.summary.Summary
            A statsmodels ``Summary``: ``as_text()``, ``as_html()``, ``as_latex()``, ``tables``.

        Examples
        --------
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> text = res.summary(timing=False).as_text()
        >>> isinstance(text, str)
        True
        """
        return build_summary(self, timing=timing, detail=detail)

    def __repr__(self) -> str:
        return f"<CSVMResults: {self.model!r}, solver {self.solver.status.value}>"
