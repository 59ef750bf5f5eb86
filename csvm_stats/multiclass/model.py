r"""The multiclass CSVM model: ``CSVM.from_formula("type ~ .", data, recall_min={...})``.

:class:`MulticlassCSVM` is reached through :class:`csvm_stats.models.model.CSVM`
whenever ``recall_min`` is given or the response has more than two classes,
so the user writes ``CSVM.from_formula("type ~ .", data, recall_min={"BL": 0.9,
"EWS": 0.8}).fit()``. ``fit()`` splits the rows stratified by class into the
training sample I, the anchor sample J and the held-out sample H,
standardises with statistics of :math:`I \cup J`, turns each required recall
into a required anchor count (:func:`csvm_stats.inference.bounds.adjust_target`, the
margin of the chosen ``bound``), solves the multiclass CSVM
(:func:`csvm_stats.multiclass.engine.fit_multiclass_csvm`, exact by default:
``big_m=None``) and certifies on H (:mod:`csvm_stats.multiclass.certification`).
With two classes and ``recall_min`` this is the binary CSVM with cost 2C
(see :mod:`csvm_stats.multiclass.problem`); ``tpr_min``/``tnr_min`` remain the
binary interface.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.inference.bounds import BOUNDS, AdjustedTarget, adjust_target, check_probability
from csvm_stats.preprocessing.design import DEFAULT_FRACTIONS, SampleSplit, Standardizer, check_fractions, explicit_split
from csvm_stats.exceptions import DataError
from csvm_stats.models.fitstate import resolve_seed
from csvm_stats.models.model import CSVM, _design_frame, register_model_form
from csvm_stats.multiclass.certification import guarantee_shift
from csvm_stats.multiclass.design import ClassCoding, encode_classes, split_by_class
from csvm_stats.multiclass.engine import fit_multiclass_csvm
from csvm_stats.optimization.budget import FitBudget
from csvm_stats.multiclass.results import MulticlassResults
from csvm_stats.optimization.solvers.base import SolverOptions
from csvm_stats.preprocessing.validation import check_integer, check_kernel_options
from csvm_stats.preprocessing.wording import current_front_end, enlarge_share, option, option_name
from csvm_stats.sparse.multiclass import fit_multiclass_cardinality


def check_gene_list(
    max_features: Any, screen: Any, kernel: Any, big_m: Any, n_columns: int
) -> tuple[int | None, int | None]:
    """Validate ``max_features`` and ``screen`` of the gene-list route, with messages naming the fix."""
    if max_features is None:
        if screen is not None:
            raise DataError("screen (the columns the gene-list route keeps) needs max_features.")
        return None, None
    max_features = check_integer(max_features, "max_features (at most the number of columns)", 1, n_columns)
    if kernel != "linear":
        raise DataError(f"{option_name('max_features')} selects columns, so it needs {option('kernel', 'linear')}.")
    if big_m is not None:
        raise DataError("the gene-list route (max_features) uses proven big-M constants only; leave big_m=None.")
    if screen is not None and check_integer(screen, "screen") < max_features:
        raise DataError(f"{option('screen', screen)} keeps fewer columns than "
                        f"{option('max_features', max_features)}; raise it.")
    return max_features, None if screen is None else int(screen)


def wants_multiclass(endog: Any, recall_min: Any) -> bool:
    """Whether :class:`CSVM` should build a :class:`MulticlassCSVM`: recall_min given or more than two classes."""
    if recall_min is not None:
        return True
    if endog is None:
        return False
    try:
        values = pd.Series(np.asarray(endog, dtype=object).ravel()) if not isinstance(endog, pd.Series) else endog
        return values.dropna().nunique() > 2
    except (TypeError, ValueError):
        return False


def _refuse_two_class_options(endog: Any, names: list[str]) -> None:
    """Two-class options without ``recall_min``: the response has more than two classes; name them with counts.

    A stray value ('' among 'case'/'control', 0.5 among 0/1) makes a two-class response a three-class
    one; the problem is the response, not a conflict of options (review r11 F8).
    """
    coding, codes = encode_classes(endog)  # its own errors (one class, a measurement) come first
    levels = list(coding.levels)
    if len(levels) <= 2:
        return
    counts = np.bincount(codes, minlength=len(levels))
    what = f"the response {coding.name!r}" if coding.name is not None else "the response"
    listed = ", ".join(f"{level!r} ({count} row{'' if count == 1 else 's'})" for level, count in zip(levels, counts))
    order = np.argsort(counts, kind="stable")
    odd = [levels[i] for i in order[: len(levels) - 2]]
    flags = " and ".join(option_name(name) for name in names)
    raise DataError(
        f"{what} has {len(levels)} classes: {listed}; {flags} need{'s' if len(names) == 1 else ''} exactly two "
        f"classes (a positive and a negative). If {', '.join(map(repr, odd))} "
        f"{'is a stray value' if len(odd) == 1 else 'are stray values'}, remove or recode those rows; for a model "
        f"of all {len(levels)} classes, state the required recall of each class with "
        f"{option('recall_min', {levels[order[-1]]: 0.9}, more=True)} instead."
    )


class MulticlassCSVM(CSVM):
    """Multiclass constrained SVM with required per-class recalls (argmax of per-class scores).

    Parameters
    ----------
    endog : array-like
        Class labels (strings, numbers, bool or a Categorical), at least two classes.
    exog : array-like or pandas.DataFrame
        Predictors, an (n, p) array or a numeric DataFrame.
    recall_min : mapping or None
        ``{class label: required recall}`` for any subset of the classes
        (each strictly between 0 and 1), or ``None``.
    alpha : float, default 0.05
        Level of the margins and of the held-out statements.
    bound : {"hoeffding", "binomial", "none"}, default "hoeffding"
        Margin turning a required recall into an anchor count.
    kernel : {"linear", "rbf", "poly"} or callable, default "linear"
        As for :class:`CSVM`; the objective is ``sum_k ||w_k||^2 + C * sum(xi)``
        (Crammer-Singer hinge).
    C : float, default 1.0
        Weight of the hinge loss.
    gamma : float or "scale", default "scale"
        RBF and polynomial kernel parameter.
    degree : int, default 3
        Polynomial degree.
    coef0 : float, default 1.0
        Polynomial kernel offset.
    rank : int or None
        Truncated kernel factorisation (``None``: exact).
    big_m : float or None
        ``None`` (default) solves the exact model with proven per-row
        constants (indicator constraints where none is proven); a number caps them.
    standardize : bool, default True
        As for :class:`CSVM`.
    fractions : sequence of float, default (0.5, 0.25, 0.25)
        As for :class:`CSVM`.
    samples : mapping or None
        As for :class:`CSVM`.
    tpr_min, tnr_min, acc_min, positive, penalty : None
        Options of the two-class model, accepted only to be refused with a
        message (:class:`CSVM` passes every argument here).
    max_features : int or None
        A gene list shared by all classes: at most ``max_features`` columns
        enter any class score (linear kernel only; :mod:`csvm_stats.sparse.multiclass`).
    screen : int or None
        The MIQP sees the ``screen`` best-ranked columns (that module's rule).

    Raises
    ------
    csvm_stats.exceptions.DataError
        Invalid labels, predictors, requirements or two-class options.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from csvm_stats import CSVM
    >>> iris = load_iris(as_frame=True)
    >>> species = iris.target.map(dict(enumerate(iris.target_names)))
    >>> res = CSVM(species, iris.data, recall_min={"virginica": 0.8}, bound="none").fit(random_state=0)
    >>> type(res).__name__
    'MulticlassResults'
    """

    def __init__(
        self,
        endog: Any,
        exog: Any,
        *,
        recall_min: Mapping[Any, float] | None = None,
        alpha: float = 0.05,
        bound: str = "hoeffding",
        kernel: str | Callable[[np.ndarray, np.ndarray], np.ndarray] = "linear",
        C: float = 1.0,
        gamma: float | str = "scale",
        degree: int = 3,
        coef0: float = 1.0,
        rank: int | None = None,
        big_m: float | None = None,
        standardize: bool = True,
        fractions: Sequence[float] = DEFAULT_FRACTIONS,
        samples: Mapping[str, Sequence[int]] | None = None,
        tpr_min: float | None = None,
        tnr_min: float | None = None,
        acc_min: float | None = None,
        positive: Any = None,
        penalty: str = "l2",
        max_features: int | None = None,
        screen: int | None = None,
    ) -> None:
        if penalty != "l2":
            raise DataError(
                f"penalty={penalty!r} is not offered with several classes or recall_min: the L1-norm CSVM is "
                "implemented for the two-class rates (tpr_min, tnr_min, acc_min) only. For a sparse rule with "
                "per-class recalls use max_features=s (a gene list of at most s columns shared by all classes)."
            )
        binary_only = {k: v for k, v in (("tpr_min", tpr_min), ("tnr_min", tnr_min), ("acc_min", acc_min),
                                          ("positive", positive)) if v is not None}
        if binary_only and recall_min is None:
            _refuse_two_class_options(endog, sorted(binary_only))
        if binary_only:
            sensitivity = ("recall_min={positive: p}" if current_front_end() == "python"
                           else f"{option_name('recall_min')} POSITIVE=P")
            raise DataError(
                f"{[option_name(name) for name in sorted(binary_only)]} belong to the two-class model and cannot be "
                f"combined with per-class recalls (they name rates of a positive and a negative class, "
                f"{option_name('recall_min')} names classes); with several classes (or {option_name('recall_min')}) "
                f"state the required recall of each class: {option('recall_min', {'label': 0.9}, more=True)} (for "
                f"two classes, {sensitivity} is the sensitivity)."
            )
        self.exog = _design_frame(exog)
        n = self.exog.shape[0]
        if len(endog) != n:
            raise DataError(f"endog has {len(endog)} rows but exog has {n}; they must match.")
        if isinstance(endog, pd.Series) and isinstance(exog, pd.DataFrame) and not endog.index.equals(exog.index):
            raise DataError("endog and exog have different row indexes; align them first.")
        self.endog = endog
        self.coding: ClassCoding
        self.coding, self.y = encode_classes(endog)
        self.recall_min: dict[int, float] = {}
        if recall_min is not None and not isinstance(recall_min, Mapping):
            raise DataError(f"recall_min must map class labels to required recalls, got {recall_min!r}.")
        if recall_min is not None and not recall_min:
            raise DataError(
                "recall_min={} states no recall to guarantee; give at least one, e.g. recall_min={'label': 0.9}, "
                "or leave recall_min out (None) for a fit without recall constraints."
            )
        for label, value in (recall_min or {}).items():
            k = self.coding.position(label)
            self.recall_min[k] = check_probability(value, f"recall_min[{label!r}] (the required recall)")
        self.targets = {}  # the binary rates: none
        self.alpha = check_probability(alpha, "alpha")
        if bound not in BOUNDS:
            raise DataError(f"bound must be one of {BOUNDS}, got {bound!r}.")
        self.bound = bound
        if isinstance(C, bool) or not (isinstance(C, numbers.Real) and np.isfinite(C) and C > 0):
            raise DataError(f"C must be a positive number, got {C!r}.")
        self.C = float(C)
        check_kernel_options(kernel, gamma, degree, coef0, rank)
        self.kernel, self.gamma, self.degree, self.coef0, self.rank = kernel, gamma, degree, coef0, rank
        self.max_features, self.screen = check_gene_list(max_features, screen, kernel, big_m, self.exog.shape[1])
        if big_m is not None and not (isinstance(big_m, numbers.Real) and big_m > 0):
            raise DataError(f"big_m must be a positive number or None, got {big_m!r}.")
        self.big_m = big_m
        self.standardize = bool(standardize)
        self.fractions = check_fractions(fractions)
        self.samples = None if samples is None else explicit_split(samples, n)
        self.formula = None

    @property
    def classes(self) -> list[Any]:
        """The class labels in position order."""
        return list(self.coding.levels)

    def class_name(self, k: int) -> str:
        """The label of class position ``k``, as text.

        Parameters
        ----------
        k : int
            Position of the class in ``classes``.

        Returns
        -------
        str
            Its label.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from csvm_stats import CSVM
        >>> iris = load_iris(as_frame=True)
        >>> species = iris.target.map(dict(enumerate(iris.target_names)))
        >>> CSVM(species, iris.data, recall_min={"virginica": 0.8}).class_name(0)
        'setosa'
        """
        return str(self.coding.levels[k])

    def _split(self, random_state: int | None) -> SampleSplit:
        split = self.samples if self.samples is not None else split_by_class(self.y, self.fractions, random_state)
        K = self.coding.n_classes
        missing = sorted(set(range(K)) - set(self.y[split.train].tolist()))
        if missing:
            raise DataError(
                f"the training sample has no point of class(es) {[self.class_name(k) for k in missing]}; every "
                "class needs training points (more data, or a larger training share)."
            )
        for k in self.recall_min:
            if not np.any(self.y[split.anchor] == k):
                raise DataError(
                    f"the anchor sample has no point of class {self.class_name(k)!r}, so its recall cannot be "
                    f"constrained; {enlarge_share('anchor')}."
                )
        return split

    def _adjusted_targets(self, split: SampleSplit) -> dict[int, AdjustedTarget]:
        """Each constrained class's required recall as a required count of its anchor points (with the margin)."""
        y_anchor = self.y[split.anchor]
        return {
            k: adjust_target(p0, int(np.sum(y_anchor == k)), self.alpha, self.bound,
                             what=f"recall of {self.class_name(k)!r}")
            for k, p0 in self.recall_min.items()
        }

    def fit(
        self,
        *,
        solver: str = "auto",
        time_limit: float = 300.0,
        mip_gap: float = 1e-4,
        threads: int | None = None,
        verbose: bool = False,
        random_state: int | None = None,
        guarantee: bool = False,
        warm_start: bool = True,
        clock: str = "wall",
    ) -> MulticlassResults:
        """Split, solve and certify; return a new :class:`~csvm_stats.multiclass.results.MulticlassResults`.

        ``random_state`` seeds the split and the solver (drawn and kept in
        ``results.random_state`` when ``None``). ``guarantee=True`` shifts the constrained classes' offsets on the
        held-out sample so that every required recall holds with probability
        at least 1 - alpha jointly (``csvm_stats.multiclass.certification.guarantee_shift``).
        ``time_limit`` bounds the whole fit (:mod:`csvm_stats.optimization.budget`;
        the gene-list route's own steps take their time from the options),
        in wall seconds or, with ``clock="cpu"``, CPU seconds of this process;
        ``results.solver`` records the clock, the limit, the whole fit's times
        and what happened. Ctrl-C stops any phase with ``KeyboardInterrupt``.

        Parameters
        ----------
        solver : str, default "auto"
            Backend (SCIP or Gurobi).
        time_limit : float, default 300.0
            Seconds the whole fit may take (on ``clock``); the best rule found is kept at the limit.
        mip_gap : float, default 1e-4
            Relative optimality gap.
        threads : int or None
            Solver threads.
        verbose : bool, default False
            Print the solver's log.
        random_state : int or None
            Seed of the split and the solver; drawn and kept when ``None``.
        guarantee : bool, default False
            Shift the constrained classes' offsets on the held-out sample (joint guarantee).
        warm_start : bool, default True
            Start from the shifted one-vs-rest / Crammer-Singer point.
        clock : {"wall", "cpu"}, default "wall"
            What ``time_limit`` counts.

        Returns
        -------
        MulticlassResults
            The fitted model.

        Raises
        ------
        csvm_stats.exceptions.DataError
            Invalid options, or a held-out sample too small for guarantee mode.
        csvm_stats.exceptions.InfeasibleConstraintsError
            No classifier meets the requirements on the anchor sample.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from csvm_stats import CSVM
        >>> iris = load_iris(as_frame=True)
        >>> species = iris.target.map(dict(enumerate(iris.target_names)))
        >>> res = CSVM(species, iris.data, recall_min={"virginica": 0.8}, bound="none").fit(random_state=0)
        >>> res.classes
        ['setosa', 'versicolor', 'virginica']
        """
        if guarantee in ("tpr", "tnr"):
            raise DataError(
                f"{option('guarantee', guarantee)} names a two-class rate; with several classes (or "
                f"{option_name('recall_min')}) guarantee mode covers every constrained class at once: "
                f"{option('guarantee', True)}."
            )
        if guarantee not in (True, False):
            shown = option("guarantee", guarantee) if isinstance(guarantee, str) else f"guarantee={guarantee!r}"
            raise DataError(
                f"{shown} is not a guarantee mode: with several classes (or {option_name('recall_min')}) it is "
                f"{option('guarantee', True)} (every constrained class at once) or {option('guarantee', False)}."
            )
        if guarantee and not self.recall_min:
            raise DataError(f"{option('guarantee', True)} needs {option_name('recall_min')}, the recalls to guarantee.")
        seed = resolve_seed(random_state)
        options = SolverOptions(time_limit=time_limit, mip_gap=mip_gap, threads=threads, verbose=verbose,
                                seed=seed, clock=clock)
        budget = FitBudget.of(options)
        with budget.interrupts():
            return self._fit_within(budget, options, solver, seed, guarantee, warm_start)

    def _fit_within(self, budget: FitBudget, options: SolverOptions, solver: str, seed: int, guarantee: bool,
                    warm_start: bool) -> MulticlassResults:
        """The fit on a running budget: split, standardise, solve, certify."""
        split = self._split(seed)
        if guarantee and split.holdout.size == 0:
            raise DataError("guarantee mode sets the offsets on the held-out sample, which is empty; give it a share.")
        X = self.exog.to_numpy()
        fit_rows = np.concatenate([split.train, split.anchor])
        with budget.running("design matrix"):
            scaler = Standardizer.fit(X[fit_rows]) if self.standardize else Standardizer.identity(X.shape[1])
            Xs = scaler.transform(X)
        y, y_anchor = self.y, self.y[split.anchor]
        adjusted = self._adjusted_targets(split)
        counts = {k: t.count for k, t in adjusted.items()}
        if self.max_features is None:
            engine_fit = fit_multiclass_csvm(
                Xs[split.train], y[split.train], Xs[split.anchor], y_anchor, self.coding.n_classes,
                C=self.C, kernel=self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0, rank=self.rank,
                min_counts=counts, big_m=self.big_m, solver=solver,
                options=options, warm_start=warm_start, class_names=self.coding.levels, budget=budget,
            )
        else:
            if not warm_start:
                raise DataError("the gene-list route (max_features) needs its warm start; use warm_start=True.")
            engine_fit = fit_multiclass_cardinality(
                Xs[split.train], y[split.train], Xs[split.anchor], y_anchor, self.coding.n_classes,
                max_features=self.max_features, screen=self.screen, C=self.C, min_counts=counts, solver=solver,
                options=budget.solver_options(options), class_names=self.coding.levels,
            )
        shift = None
        with budget.running("certification"):
            if guarantee:
                held = engine_fit.decision_function(Xs[split.holdout])
                names = [self.class_name(k) for k in range(self.coding.n_classes)]
                shift = guarantee_shift(held, y[split.holdout], self.recall_min, self.alpha, names)
        fit_options = {"time_limit": options.time_limit, "mip_gap": options.mip_gap, "threads": options.threads,
                       "random_state": seed, "warm_start": warm_start, "clock": options.clock}
        engine_fit = replace(engine_fit, record=budget.stamp(engine_fit.record))  # the whole fit's times
        return MulticlassResults(self, split, scaler, engine_fit, adjusted, shift, seed, fit_options)

    def __repr__(self) -> str:
        targets = ", ".join(f"{self.class_name(k)}>={v:g}" for k, v in self.recall_min.items()) or "no recall constraint"
        source = f"formula={self.formula.formula!r}" if self.formula else f"{self.exog.shape[1]} columns"
        genes = "" if self.max_features is None else f", max_features={self.max_features}"
        return (f"CSVM({source}, n={self.exog.shape[0]}, {self.coding.n_classes} classes, recall_min: {targets}, "
                f"alpha={self.alpha:g}, bound={self.bound!r}{genes})")


register_model_form(wants_multiclass, MulticlassCSVM)
