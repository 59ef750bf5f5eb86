r"""The Neyman-Pearson route: any scikit-learn classifier with a threshold that carries a guarantee.

``NeymanPearson(endog, exog, estimator, tpr_min=0.9).fit()`` splits the rows
exactly as :class:`csvm_stats.models.model.CSVM` does (stratified and seeded,
:func:`csvm_stats.preprocessing.design.split_samples`; the same ``fractions``
and seed give the same training sample I, anchor sample J and held-out
sample H), fits a clone of ``estimator`` on :math:`I \cup J` and sets the
threshold of its score :math:`s(x)` (``decision_function``, else
``predict_proba``) on H by the umbrella order statistic of Tong, Feng and
Li (2018): with :math:`s_{(r)}` the r-th smallest held-out score of the
positives and r the largest rank with :math:`P(\mathrm{Bin}(n, 1 - p_0) < r) \le \alpha`,
the rule "positive when :math:`s(x) \ge s_{(r)}`" has
:math:`P(\mathrm{TPR} \ge p_0) \ge 1 - \alpha` (for the TNR the same on the
negated scores of the negatives). Ties with the threshold count as correct
for the guaranteed class, which only raises its rate. The rule is the
CSVM's guarantee mode with the CSVM's direction replaced by the estimator's
score: both call :func:`csvm_stats.inference.certification.umbrella_intercept`.

Several classes (``recall_min={label: p}``): the estimator's one-vs-rest
scores :math:`f_k(x)`, the constrained classes' scores raised by one common
shift t chosen on H at Sidak levels
(:func:`csvm_stats.multiclass.certification.guarantee_shift`, the multiclass
guarantee mode), so that all required recalls hold together with
probability at least :math:`1 - \alpha`.

The estimator never sees H, so the held-out rates of the other classes
have exact Clopper-Pearson intervals (:mod:`csvm_stats.inference.certification`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError
from csvm_stats.inference.bounds import check_probability
from csvm_stats.inference.certification import (
    RATE_LABELS,
    TIE_RTOL,
    UmbrellaIntercept,
    guarantee_rank,
    rate_points,
    umbrella_intercept,
)
from csvm_stats.models.fitstate import resolve_seed
from csvm_stats.models.learners import make_learner, score_method, scores
from csvm_stats.models.model import _design_frame
from csvm_stats.models.np_results import BinaryNPResults, MulticlassNPResults, NPState
from csvm_stats.multiclass.certification import GuaranteeShift, guarantee_shift
from csvm_stats.multiclass.design import encode_classes, split_by_class
from csvm_stats.preprocessing.design import DEFAULT_FRACTIONS, check_fractions, encode_labels, split_samples
from csvm_stats.preprocessing.formula import FormulaDesign, build_design
from csvm_stats.preprocessing.wording import option


@dataclass(frozen=True)
class Requirement:
    """What the route must guarantee: one class rate (``"tpr"``/``"tnr"``) or per-class recalls."""

    rate: str | None
    target: float | None
    recall_min: Mapping[Any, float] | None


def check_requirement(tpr_min: Any, tnr_min: Any, recall_min: Any) -> Requirement:
    """Exactly one of tpr_min, tnr_min and recall_min, with values strictly between 0 and 1."""
    given = [name for name, v in (("tpr_min", tpr_min), ("tnr_min", tnr_min), ("recall_min", recall_min))
             if v is not None]
    if len(given) != 1:
        raise DataError(
            "a Neyman-Pearson route sets one threshold, so it guarantees one requirement: give exactly one of "
            f"tpr_min, tnr_min (two classes) or recall_min={{label: p}} (any number of classes); got "
            f"{given or 'none'}. For a TPR and a TNR requirement at once use the CSVM (CSVM(..., tpr_min=, tnr_min=))."
        )
    if recall_min is not None:
        if not isinstance(recall_min, Mapping) or not recall_min:
            raise DataError(f"recall_min must be a non-empty mapping {{class label: required recall}}, got {recall_min!r}.")
        return Requirement(None, None, {k: check_probability(v, f"recall_min[{k!r}]") for k, v in recall_min.items()})
    rate, value = ("tpr", tpr_min) if tpr_min is not None else ("tnr", tnr_min)
    return Requirement(rate, check_probability(value, f"{rate}_min (the required {RATE_LABELS[rate]})"), None)


def _check_constant(values: np.ndarray, estimator: Any, method: str) -> None:
    if values.shape[0] and np.ptp(values, axis=0).max() == 0:
        raise DataError(
            f"The score of {type(estimator).__name__} ({method}) is the same for every held-out point, so no "
            "threshold can separate them: the estimator learned a constant rule. Check the predictors (a "
            "constant or wrongly read column), give the estimator more training data, or choose another estimator."
        )


def _check_classes_in_holdout(y_holdout: np.ndarray, classes: Sequence[Any], names: Sequence[str]) -> None:
    missing = [str(names[k]) for k, c in enumerate(classes) if not np.any(y_holdout == c)]
    if missing:
        raise DataError(
            f"The held-out sample has no point of the class(es) {missing}, so the threshold cannot be set or its "
            f"rates certified; enlarge the held-out share ({option('fractions')}), or use more data of that class."
        )


class NeymanPearson:
    """A scikit-learn classifier with a held-out threshold guaranteeing a rate (module docstring).

    Parameters
    ----------
    endog : labels, one per row (two classes for tpr_min/tnr_min, any number for recall_min).
    exog : predictors, an (n, p) array or a numeric DataFrame.
    estimator : a scikit-learn classifier with ``decision_function`` or
        ``predict_proba`` (cloned, never changed), or a learner's name:
        ``"logistic"``, ``"svc"``, ``"hgb"`` (:mod:`csvm_stats.models.learners`).
    tpr_min, tnr_min : the guaranteed true positive or true negative rate.
    recall_min : ``{class label: required recall}`` (several classes).
    alpha : P(a guaranteed rate is below its target) <= alpha.
    positive : the positive class (two classes); default the second level.
    fractions : the CSVM's (train, anchor, held-out) shares: the estimator is
        fitted on the training and anchor samples together, the threshold is
        set on the held-out sample.

    Examples
    --------
    >>> import numpy as np
    >>> from csvm_stats.data.datasets import load_dataset
    >>> from csvm_stats.models.neyman_pearson import NeymanPearson
    >>> X, labels = load_dataset("wisconsin")
    >>> data = X.assign(diagnosis=np.where(labels > 0, "benign", "malignant"))
    >>> model = NeymanPearson.from_formula("diagnosis ~ .", data, "logistic", tpr_min=0.9, positive="malignant")
    >>> res = model.fit(random_state=0)
    >>> res.rates.loc["tpr", "method"], bool(res.rates.loc["tpr", "certified"])
    ('order statistic', True)
    """

    def __init__(
        self,
        endog: Any,
        exog: Any,
        estimator: Any = None,
        *,
        tpr_min: float | None = None,
        tnr_min: float | None = None,
        recall_min: Mapping[Any, float] | None = None,
        alpha: float = 0.05,
        positive: Any = None,
        fractions: Sequence[float] = DEFAULT_FRACTIONS,
    ) -> None:
        self.exog = _design_frame(exog)
        if len(endog) != self.exog.shape[0]:
            raise DataError(f"endog has {len(endog)} rows but exog has {self.exog.shape[0]}; they must match.")
        self.endog = endog
        self.estimator = make_learner(estimator)
        self.method = score_method(self.estimator)
        self.requirement = check_requirement(tpr_min, tnr_min, recall_min)
        self.alpha = check_probability(alpha, "alpha")
        self.fractions = check_fractions(fractions)
        if self.fractions[2] == 0:
            raise DataError("the threshold is set on the held-out sample, so fractions needs a held-out share > 0.")
        self.multiclass = self.requirement.recall_min is not None
        if self.multiclass:
            if positive is not None:
                raise DataError("positive= names the positive class of tpr_min/tnr_min; recall_min names classes itself.")
            self.coding, self.y = encode_classes(endog)
            self.recall_min = {self.coding.position(k): p for k, p in self.requirement.recall_min.items()}
        else:
            self.coding, self.y = encode_labels(endog, positive)
            self.recall_min = {}
        self.formula: FormulaDesign | None = None

    @classmethod
    def from_formula(cls, formula: str, data: pd.DataFrame, estimator: Any = None, *, safe: bool = True,
                     ordered_contrasts: str = "treatment", **kwargs: Any) -> NeymanPearson:
        """Build the route from a formula (the grammar of :meth:`csvm_stats.CSVM.from_formula`).

        Parameters
        ----------
        formula : str
            ``"response ~ terms"``; parsed as data, never evaluated (``safe=True``).
        data : pandas.DataFrame
            The data.
        estimator : str, classifier or None
            ``"logistic"`` (``None``), ``"svc"``, ``"hgb"`` or a scikit-learn classifier.
        safe : bool, default True
            The library's own grammar; ``False`` hands the formula to formulaic (evaluates Python).
        ordered_contrasts : str, default "treatment"
            Coding of ordered factors, as in :meth:`~csvm_stats.CSVM.from_formula`.
        **kwargs
            The requirement and options of :class:`NeymanPearson`.

        Returns
        -------
        NeymanPearson
            The route, which keeps the formula to code new data.

        Examples
        --------
        >>> import numpy as np
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.models.neyman_pearson import NeymanPearson
        >>> X, labels = load_dataset("wisconsin")
        >>> data = X.assign(diagnosis=np.where(labels > 0, "benign", "malignant"))
        >>> model = NeymanPearson.from_formula("diagnosis ~ .", data, "logistic", tpr_min=0.9, positive="malignant")
        >>> res = model.fit(random_state=0)
        >>> res.predict(data.iloc[:3]).index.tolist()
        [0, 1, 2]
        """
        endog, exog, design = build_design(formula, data, safe=safe, ordered_contrasts=ordered_contrasts)
        model = cls(endog, exog, estimator, **kwargs)
        model.formula = design
        return model

    @property
    def exog_names(self) -> list[str]:
        return [str(c) for c in self.exog.columns]

    @property
    def targets(self) -> dict[str, float]:
        """``{rate: p0}`` of a two-class route (empty for several classes)."""
        r = self.requirement
        return {} if r.rate is None else {r.rate: float(r.target)}

    def design_matrix(self, newdata: Any) -> pd.DataFrame:
        """New data as design columns (through the formula when there is one), index kept.

        Parameters
        ----------
        newdata : DataFrame or array-like
            Rows with the model's predictor columns.

        Returns
        -------
        pandas.DataFrame
            The design columns the estimator takes.

        Examples
        --------
        >>> import numpy as np
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.models.neyman_pearson import NeymanPearson
        >>> X, labels = load_dataset("wisconsin")
        >>> data = X.assign(diagnosis=np.where(labels > 0, "benign", "malignant"))
        >>> model = NeymanPearson.from_formula("diagnosis ~ .", data, "logistic", tpr_min=0.9, positive="malignant")
        >>> res = model.fit(random_state=0)
        >>> model.design_matrix(data.iloc[:2]).shape
        (2, 30)
        """
        if self.formula is not None:
            return self.formula.transform(newdata)
        if isinstance(newdata, pd.DataFrame):
            missing = [str(c) for c in self.exog.columns if c not in newdata.columns]
            if missing:
                raise DataError(f"newdata lacks the column(s) {missing} the route was fitted on.")
            return _design_frame(newdata[list(self.exog.columns)])
        frame = _design_frame(newdata)
        if frame.shape[1] != self.exog.shape[1]:
            raise DataError(f"newdata has {frame.shape[1]} columns; the route was fitted on {self.exog.shape[1]}.")
        frame.columns = self.exog.columns
        return frame

    def _names(self) -> list[str]:
        return [str(level) for level in self.coding.levels]

    def fit(self, *, random_state: int | None = None) -> BinaryNPResults | MulticlassNPResults:
        """Split, fit the estimator on I u J, set the threshold on H; return the results.

        ``random_state`` seeds the split (drawn and kept in the results when
        ``None``); with the same seed and ``fractions`` a CSVM fit on the same
        data uses the same held-out rows.

        Parameters
        ----------
        random_state : int or None
            Seed of the split.

        Returns
        -------
        BinaryNPResults or MulticlassNPResults
            Rates, statements, predictions and probabilities of the route.

        Examples
        --------
        >>> import numpy as np
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.models.neyman_pearson import NeymanPearson
        >>> X, labels = load_dataset("wisconsin")
        >>> data = X.assign(diagnosis=np.where(labels > 0, "benign", "malignant"))
        >>> model = NeymanPearson.from_formula("diagnosis ~ .", data, "logistic", tpr_min=0.9, positive="malignant")
        >>> res = model.fit(random_state=0)
        >>> res.random_state, sorted(res.sample_roles.unique())
        (0, ['held-out', 'training'])
        """
        seed = resolve_seed(random_state)
        if self.multiclass:
            split = split_by_class(self.y, self.fractions, seed)
            classes: Sequence[Any] = range(self.coding.n_classes)
        else:
            split = split_samples(self.y, self.fractions, seed)
            classes = (1.0, -1.0)
        names = self._names() if self.multiclass else [repr(self.coding.positive), repr(self.coding.negative)]
        y_holdout = self.y[split.holdout]
        _check_classes_in_holdout(y_holdout, classes, names)
        if not self.multiclass:
            rate, target = self.requirement.rate, float(self.requirement.target)
            guarantee_rank(int(rate_points(y_holdout, rate).sum()), rate, target, self.alpha)  # before fitting
        fit_rows = np.sort(np.concatenate([split.train, split.anchor]))
        X = self.exog.to_numpy()
        codes = self.y.astype(int) if self.multiclass else (self.y > 0).astype(int)
        if np.unique(codes[fit_rows]).size < len(classes):
            raise DataError("the training and anchor samples lack a class; use more data of every class.")
        estimator = make_learner(self.estimator)
        start = time.process_time()
        estimator.fit(X[fit_rows], codes[fit_rows])
        raw = scores(estimator, X, self.method, len(classes), per_class=self.multiclass)
        _check_constant(raw[split.holdout], estimator, self.method)
        threshold: UmbrellaIntercept | GuaranteeShift
        if self.multiclass:
            threshold = guarantee_shift(raw[split.holdout], y_holdout, self.recall_min, self.alpha, self._names())
        else:
            h = raw[split.holdout]
            tolerance = TIE_RTOL * float(np.max(np.abs(h)))
            threshold = umbrella_intercept(h, y_holdout, rate, target, self.alpha, tolerance=tolerance)
        fit_time = time.process_time() - start
        state = NPState(self, split, estimator, codes, threshold, seed, fit_time)
        return MulticlassNPResults(state) if self.multiclass else BinaryNPResults(state)

    def __repr__(self) -> str:
        r = self.requirement
        what = f"{r.rate}_min={r.target:g}" if r.rate else f"recall_min={dict(r.recall_min)}"
        source = f"formula={self.formula.formula!r}" if self.formula else f"{self.exog.shape[1]} columns"
        return (f"NeymanPearson({type(self.estimator).__name__}, {source}, n={self.exog.shape[0]}, {what}, "
                f"alpha={self.alpha:g})")

