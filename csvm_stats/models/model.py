r"""The CSVM model in statsmodels' shape: an array core, ``from_formula`` and ``fit``.

``CSVM(endog, exog, tpr_min=0.9)`` holds the data and the specification;
``fit()`` splits the rows (stratified, seeded) into the training sample I, the
anchor sample J and the held-out certification sample H, standardises the
columns with statistics of :math:`I \cup J`, turns the required rates into
required anchor counts (:func:`csvm_stats.inference.bounds.adjust_target`), solves the
CSVM with the engine (:func:`csvm_stats.optimization.engine.fit_csvm`) and returns a new
:class:`~csvm_stats.models.results.CSVMResults`. The model itself is never changed
by ``fit``, so one model can be fitted with several seeds or solvers.

Default shares (train, anchor, held-out) = (0.5, 0.25, 0.25). The anchor
sample must be large enough for the margin (the exact binomial margin needs
29 anchor points of a class for p0 = 0.9 at alpha = 0.05, Hoeffding 150), and
the held-out sample large enough for a useful bound (the Clopper-Pearson
bound from 100 held-out points of a class with 95 correct is 0.898) and for
guarantee mode (29 points of the class for p0 = 0.9, alpha = 0.05).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.inference.bounds import BOUNDS, AdjustedTarget, adjust_target, check_probability
from csvm_stats.inference.certification import (
    RATE_LABELS,
    RATE_UNITS,
    guarantee_rank,
    linear_scores,
    rate_points,
    umbrella_intercept,
)
from csvm_stats.preprocessing.design import (
    DEFAULT_FRACTIONS,
    LabelCoding,
    SampleSplit,
    Standardizer,
    check_fractions,
    column_moments,
    encode_labels,
    explicit_split,
    split_samples,
)
from csvm_stats.optimization.budget import FitBudget
from csvm_stats.optimization.engine import fit_csvm
from csvm_stats.exceptions import DataError, DegenerateRuleWarning, warn_at_caller
from csvm_stats.models.fitstate import FittedState, resolve_seed
from csvm_stats.preprocessing.formula import FormulaDesign, build_design
from csvm_stats.preprocessing.wording import enlarge_share, option, option_name
from csvm_stats.models.results import CSVMResults
from csvm_stats.optimization.solvers import SOLVERS
from csvm_stats.optimization.solvers.base import SolverOptions
from csvm_stats.preprocessing.validation import (
    check_big_m,
    check_fit_options,
    check_flag,
    check_kernel_options,
    check_unique_columns,
)


def _design_frame(exog: Any) -> pd.DataFrame:
    """The predictors as a float DataFrame (columns ``x1..xp`` for an array)."""
    if isinstance(exog, pd.DataFrame):
        frame = exog
    else:
        arr = np.asarray(exog)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise DataError(f"exog must be two-dimensional (n rows, p columns), got shape {arr.shape}.")
        frame = pd.DataFrame(arr, columns=[f"x{k + 1}" for k in range(arr.shape[1])])
    check_unique_columns(frame, "exog")
    if frame.shape[0] == 0:
        raise DataError(f"exog has 0 rows (and {frame.shape[1]} columns); there is nothing to fit or predict.")
    non_numeric = [str(c) for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if non_numeric:
        raise DataError(
            f"exog has non-numeric column(s) {non_numeric}; code them as numbers, or use "
            "CSVM.from_formula, which codes factors as dummy columns."
        )
    frame = frame.astype(float)
    bad = ~np.isfinite(frame.to_numpy())
    if bad.any():
        cols = sorted({str(frame.columns[j]) for j in np.nonzero(bad)[1]})
        raise DataError(f"exog has missing or infinite values in column(s) {cols}; remove or impute them first.")
    return frame


#: Other problem forms that ``CSVM(...)`` builds when their test says so:
#: ``(applies(endog, recall_min), subclass)`` pairs, registered by the forms'
#: own packages (:mod:`csvm_stats.multiclass.model`), so that this module
#: needs no import of them and the import graph stays a tree.
_MODEL_FORMS: list[tuple[Callable[[Any, Any], bool], type[CSVM]]] = []


def register_model_form(applies: Callable[[Any, Any], bool], form: type[CSVM]) -> None:
    """Make ``CSVM(endog, exog, ..., recall_min=...)`` build ``form`` when ``applies(endog, recall_min)``."""
    if not (isinstance(form, type) and issubclass(form, CSVM)):
        raise TypeError(f"a model form must be a subclass of CSVM, not {form!r}")
    if all(registered is not form for _, registered in _MODEL_FORMS):
        _MODEL_FORMS.append((applies, form))


class CSVM:
    """Constrained support vector machine with required rates (TPR, TNR, accuracy).

    The max-margin SVM among the classifiers that classify at least a
    required number of anchor points of a class correctly (see the user
    guide's "Requirements and the three samples"): ``fit()`` splits the rows
    into training, anchor and held-out samples, solves the mixed-integer
    problem and returns a :class:`~csvm_stats.models.results.CSVMResults`
    with the held-out confidence statements.

    Parameters
    ----------
    endog : array-like
        Labels (0/1, bool, strings or a pandas Categorical), one per row.
    exog : array-like or pandas.DataFrame
        Predictors, an (n, p) array or a numeric DataFrame.
    tpr_min, tnr_min, acc_min : float or None
        Required true positive rate, true negative rate and accuracy, each
        strictly between 0 and 1, or ``None``.
    alpha : float, default 0.05
        Level of the confidence margins and statements (0 < alpha < 1).
    bound : {"hoeffding", "binomial", "none"}, default "hoeffding"
        Margin added to the required rates on the anchor sample: the paper's
        Hoeffding margin, the exact binomial one, or none.
    kernel : {"linear", "rbf", "poly"} or callable, default "linear"
        The kernel; the objective is ``w'w + C * sum(xi)`` (scikit-learn's
        SVC with C/2).
    C : float, default 1.0
        Weight of the hinge loss.
    gamma : float or "scale", default "scale"
        RBF and polynomial kernel parameter.
    degree : int, default 3
        Polynomial degree.
    coef0 : float, default 1.0
        Polynomial kernel offset.
    rank : int or None
        Truncate the kernel factorisation to this rank (an approximation the
        summary reports); ``None`` keeps the numerical rank (exact).
    big_m : float or None
        ``None`` (default) solves the exact CSVM with proven per-point big-M
        constants; a number M is the paper's big-M model.
    positive : object, optional
        The label of the positive class; default the second level.
    standardize : bool, default True
        Centre and scale the columns with statistics of the training and
        anchor samples (the held-out sample is never used).
    fractions : sequence of float, default (0.5, 0.25, 0.25)
        (train, anchor, held-out) shares; held-out may be 0.
    samples : mapping or None
        Explicit row positions instead of a random split:
        ``{"train": ..., "anchor": ..., "holdout": ...}``.
    penalty : {"l2", "l1"}, default "l2"
        ``"l1"`` solves the L1-norm CSVM ``min ||w||_1 + C sum(xi)`` (a MILP;
        :mod:`csvm_stats.sparse.model`, linear kernel only).
    max_features : int or None
        At most this many non-zero coefficients (the L2 CSVM with a
        cardinality budget).
    screen : int or None
        The MIQP of ``max_features`` sees only this many best-ranked columns
        (default rule in :mod:`csvm_stats.sparse.model`).
    recall_min : dict or None
        ``{class label: required recall}``; given, or with more than two
        classes in ``endog``, ``CSVM(...)`` builds the multiclass model
        :class:`csvm_stats.multiclass.model.MulticlassCSVM` instead.

    Raises
    ------
    csvm_stats.exceptions.DataError
        Invalid labels, predictors or parameters (the message names the fix).

    See Also
    --------
    CSVM.from_formula : build the model from a formula and a data frame.
    csvm_stats.CSVMClassifier : the scikit-learn estimator.

    Examples
    --------
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.data.datasets import load_dataset
    >>> X, y = load_dataset("wisconsin")
    >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
    >>> "tpr" in res.statements.index
    True
    """

    def __new__(cls, endog: Any = None, exog: Any = None, **kwargs: Any) -> CSVM:
        if cls is CSVM:
            for applies, form in _MODEL_FORMS:
                if applies(endog, kwargs.get("recall_min")):
                    return super().__new__(form)  # Python then runs form.__init__
        return super().__new__(cls)

    def __init__(
        self,
        endog: Any,
        exog: Any,
        *,
        tpr_min: float | None = None,
        tnr_min: float | None = None,
        acc_min: float | None = None,
        alpha: float = 0.05,
        bound: str = "hoeffding",
        kernel: str | Callable[[np.ndarray, np.ndarray], np.ndarray] = "linear",
        C: float = 1.0,
        gamma: float | str = "scale",
        degree: int = 3,
        coef0: float = 1.0,
        rank: int | None = None,
        big_m: float | None = None,
        positive: Any = None,
        standardize: bool = True,
        fractions: Sequence[float] = DEFAULT_FRACTIONS,
        samples: Mapping[str, Sequence[int]] | None = None,
        penalty: str = "l2",
        max_features: int | None = None,
        screen: int | None = None,
        recall_min: None = None,
    ) -> None:
        self.exog = _design_frame(exog)
        n = self.exog.shape[0]
        if len(endog) != n:
            raise DataError(f"endog has {len(endog)} rows but exog has {n}; they must match.")
        if isinstance(endog, pd.Series) and isinstance(exog, pd.DataFrame) and not endog.index.equals(exog.index):
            raise DataError("endog and exog have different row indexes; align them first.")
        self.endog = endog
        self.coding: LabelCoding
        self.coding, self.y = encode_labels(endog, positive)
        self.targets: dict[str, float] = {}
        for rate, value in (("tpr", tpr_min), ("tnr", tnr_min), ("acc", acc_min)):
            if value is not None:
                self.targets[rate] = check_probability(value, f"{rate}_min (the required {RATE_LABELS[rate]})")
        self.alpha = check_probability(alpha, "alpha")
        if bound not in BOUNDS:
            raise DataError(f"bound must be one of {BOUNDS}, got {bound!r}.")
        self.bound = bound
        if isinstance(C, bool) or not (isinstance(C, numbers.Real) and np.isfinite(C) and C > 0):
            raise DataError(f"C must be a positive number, got {C!r}.")
        self.C = float(C)
        check_kernel_options(kernel, gamma, degree, coef0, rank)
        self.kernel, self.gamma, self.degree, self.coef0, self.rank = kernel, gamma, degree, coef0, rank
        self.big_m = check_big_m(big_m)
        self.standardize = check_flag(standardize, "standardize")
        self.fractions = check_fractions(fractions)
        self.samples = None if samples is None else explicit_split(samples, n)
        self.formula: FormulaDesign | None = None
        self._set_sparsity(penalty, max_features, screen)

    def _set_sparsity(self, penalty: str, max_features: int | None, screen: int | None) -> None:
        from csvm_stats.sparse.model import check_sparsity

        check_sparsity(penalty, max_features, self.exog.shape[1])
        self.penalty, self.max_features, self.screen = penalty, max_features, screen
        if self.sparse and self.kernel != "linear":
            raise DataError("penalty='l1' and max_features select columns, so they need kernel='linear'.")
        if screen is not None and (max_features is None or isinstance(screen, bool) or int(screen) != screen
                                   or not max_features <= screen):
            raise DataError("screen (the columns the cardinality route keeps) needs max_features and an integer >= it.")

    @property
    def sparse(self) -> bool:
        """Whether the fit selects features (``penalty="l1"`` or ``max_features``)."""
        return self.penalty != "l2" or self.max_features is not None

    @classmethod
    def from_formula(
        cls, formula: str, data: pd.DataFrame, *, safe: bool = True, ordered_contrasts: str = "treatment", **kwargs: Any
    ) -> CSVM:
        """Build the model from a formula (``"y ~ x1 + x2"``, ``"y ~ ."``, ``"y ~ .-id"``) and a data frame.

        Keyword arguments are those of :class:`CSVM`. The formula spec is kept
        so that ``results.predict(newdata)`` codes new data the same way.

        ``safe=True`` (the default) treats the formula as data: it is parsed
        by our own grammar (:mod:`csvm_stats.preprocessing.formula_grammar`: column names,
        backquoted names, ``.``, ``+``, ``-``, ``:``, ``*``, ``**``, ``C(column)``,
        ``0``/``1``) and nothing in it is ever evaluated; anything else is a
        :class:`~csvm_stats.exceptions.FormulaError`. ``safe=False`` hands the
        text to formulaic, and then **the formula is code**: as in
        statsmodels/patsy, formulaic evaluates Python in terms (``np.log(x)``,
        ``{x ** 2}``, any call), so a formula string from an untrusted source
        can run arbitrary commands. Use ``safe=False`` only for formulas you
        wrote yourself; the command line, model files and the R package never
        use it. Safe is the default because a formula is often assembled from
        configuration or user input, and the cost of the default is small (compute
        transformed columns in the data frame); the unsafe mode is an explicit opt-in.

        ``ordered_contrasts`` is how ordered pandas Categoricals are coded:
        ``"treatment"`` (the default, as every other factor) or ``"poly"``,
        R's orthogonal polynomial contrasts (``contr.poly``, R's default for
        ordered factors), named ``column[.L]``, ``column[.Q]``, ... With
        ``"poly"`` a formula gives the same design, and so the same
        classifier, as R's ``csvm()`` under R's default ``options("contrasts")``
        (data from R through :func:`r_bridge.load_dataset` keep their ordered factors).

        Parameters
        ----------
        formula : str
            ``"response ~ terms"`` in the grammar above.
        data : pandas.DataFrame
            The rows, with the response and every column the formula names.
        safe : bool, default True
            Parse with the library's grammar (never evaluated); ``False`` hands
            the text to formulaic, which evaluates Python.
        ordered_contrasts : {"treatment", "poly"}, default "treatment"
            Coding of ordered Categoricals.
        **kwargs
            The keyword arguments of :class:`CSVM` (``tpr_min``, ``bound``, ...).

        Returns
        -------
        CSVM
            The model (or its multiclass form), ready to ``fit()``.

        Raises
        ------
        csvm_stats.exceptions.FormulaError
            The formula is not in the grammar or names a missing column.
        csvm_stats.exceptions.DataError
            The data or a keyword argument is invalid.

        Examples
        --------
        >>> import numpy as np
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> data = X.assign(diagnosis=np.where(labels > 0, "benign", "malignant"))
        >>> model = CSVM.from_formula("diagnosis ~ .", data, tpr_min=0.9, positive="malignant")
        >>> len(model.exog_names)
        30
        """
        endog, exog, design = build_design(formula, data, safe=safe, ordered_contrasts=ordered_contrasts)
        model = cls(endog, exog, **kwargs)
        model.formula = design
        return model

    @property
    def exog_names(self) -> list[str]:
        """Names of the design columns."""
        return [str(c) for c in self.exog.columns]

    def design_matrix(self, newdata: Any) -> pd.DataFrame:
        """New data as design columns (through the formula when there is one), index kept.

        Parameters
        ----------
        newdata : DataFrame or array-like
            Rows with the predictor columns the model was built on.

        Returns
        -------
        pandas.DataFrame
            The design columns, in the model's order, indexed like ``newdata``.

        Raises
        ------
        csvm_stats.exceptions.DataError
            A column is missing or the number of columns differs.

        Examples
        --------
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> model = CSVM(y, X, tpr_min=0.9)
        >>> model.design_matrix(X.head(2)).shape
        (2, 30)
        """
        if self.formula is not None:
            return self.formula.transform(newdata)
        if isinstance(newdata, pd.DataFrame):
            missing = [c for c in self.exog.columns if c not in newdata.columns]
            if missing:
                raise DataError(f"newdata lacks the column(s) {[str(c) for c in missing]} the model was fitted on.")
            return _design_frame(newdata[list(self.exog.columns)])
        frame = _design_frame(newdata)
        if frame.shape[1] != self.exog.shape[1]:
            raise DataError(f"newdata has {frame.shape[1]} columns; the model was fitted on {self.exog.shape[1]}.")
        frame.columns = self.exog.columns
        return frame

    def _split(self, random_state: int | None) -> SampleSplit:
        split = self.samples if self.samples is not None else split_samples(self.y, self.fractions, random_state)
        for rate in self.targets:
            n_anchor = int(rate_points(self.y[split.anchor], rate).sum())
            if n_anchor == 0:
                raise DataError(
                    f"The anchor sample has no {RATE_UNITS[rate]}, so the {RATE_LABELS[rate]} cannot be "
                    f"constrained; {enlarge_share('anchor')}."
                )
            if split.holdout.size and not rate_points(self.y[split.holdout], rate).any():
                raise DataError(
                    f"The held-out sample has no {RATE_UNITS[rate]}, so no statement about the "
                    f"{RATE_LABELS[rate]} can be made; {enlarge_share('held-out')}."
                )
        return split

    def anchor_targets(self, random_state: int) -> dict[Any, AdjustedTarget]:
        """The required anchor count of every target on the split of ``random_state``, without solving.

        ``fit(random_state=random_state)`` draws the same split and imposes
        these counts. A target the anchor sample cannot carry raises its
        :class:`~csvm_stats.inference.bounds.CappedTargetWarning` here (as
        ``fit`` does before its solve), naming the anchor size it needs; R's
        ``csvm()`` calls this first so that it can say so before the solve.

        Parameters
        ----------
        random_state : int
            The seed of the split, as given to ``fit``.

        Returns
        -------
        dict
            ``{rate: AdjustedTarget}``: the required count of each constrained rate.

        Raises
        ------
        csvm_stats.exceptions.DataError
            A requirement is invalid for this data.

        Examples
        --------
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> targets = CSVM(y, X, tpr_min=0.9, bound="binomial").anchor_targets(0)
        >>> sorted(targets)
        ['tpr']
        """
        return self._adjusted_targets(self._split(resolve_seed(random_state)))

    def _adjusted_targets(self, split: SampleSplit) -> dict[Any, AdjustedTarget]:
        """Each target as a required count on the anchor sample of ``split`` (capped ones warn)."""
        y_anchor = self.y[split.anchor]
        return {
            rate: adjust_target(p0, int(rate_points(y_anchor, rate).sum()), self.alpha, self.bound, what=RATE_LABELS[rate])
            for rate, p0 in self.targets.items()
        }

    def _guaranteed_rate(self, guarantee: bool | str) -> str | None:
        if guarantee is False:
            return None
        class_rates = [r for r in ("tpr", "tnr") if r in self.targets]
        one_of = f"{option_name('tpr_min')} and {option_name('tnr_min')}"
        if guarantee is True:
            if not class_rates:
                raise DataError(f"{option('guarantee', True)} needs one of {one_of}, the class rate to guarantee.")
            if len(class_rates) != 1:
                raise DataError(
                    f"{option('guarantee', True)} needs exactly one of {one_of}; with both required say which rate "
                    f"to guarantee: {option('guarantee', 'tpr')} or {option('guarantee', 'tnr')}."
                )
            return class_rates[0]
        if guarantee not in ("tpr", "tnr"):
            raise DataError(f"guarantee must be False, True, 'tpr' or 'tnr', got {guarantee!r}.")
        if guarantee not in self.targets:
            raise DataError(
                f"{option('guarantee', guarantee)} needs {option_name(guarantee + '_min')}, the rate to guarantee."
            )
        return guarantee

    def fit(
        self,
        *,
        solver: str = "auto",
        time_limit: float = 300.0,
        mip_gap: float = 1e-4,
        threads: int | None = None,
        verbose: bool = False,
        random_state: int | None = None,
        guarantee: bool | str = False,
        warm_start: bool = True,
        sparse_start: tuple[np.ndarray, float] | None = None,
        clock: str = "wall",
    ) -> CSVMResults:
        """Split, solve and certify; return a new :class:`CSVMResults`.

        ``random_state`` seeds the split and the solver; when it is ``None`` a
        seed is drawn and kept in ``results.random_state`` (and printed in the
        summary), so the fit can be repeated. ``guarantee=True``
        (or ``"tpr"``/``"tnr"``) keeps the direction w of the CSVM and sets the
        intercept on the held-out sample by the order-statistic rule, so that
        the true rate is at least its target with probability 1 - alpha.
        ``sparse_start`` (sparse fits only) is a start (w, b) on the
        standardised columns, e.g. the previous point of
        :func:`csvm_stats.sparse.path.sparsity_path`.

        ``time_limit`` bounds the whole fit (design, kernel factorisation,
        warm start, set-up, search, certification: :mod:`csvm_stats.optimization.budget`),
        counted in wall seconds or, with ``clock="cpu"``, in CPU seconds of
        this process (fair under machine load); the search gets what the
        earlier phases left. ``results.solver`` records the clock, the limit,
        the wall and CPU time of the whole fit and of the solver, and what
        happened (``results.solver.outcome``). Ctrl-C stops any phase with
        ``KeyboardInterrupt`` naming it.

        Parameters
        ----------
        solver : str, default "auto"
            ``"auto"``, ``"bnb"``, ``"scip"``, ``"gurobi"`` or ``"highs"`` (the
            backends of :mod:`csvm_stats.optimization.solvers`).
        time_limit : float, default 300.0
            Seconds the whole fit may take (on ``clock``); the best rule found is kept at the limit.
        mip_gap : float, default 1e-4
            Relative optimality gap at which the solver stops.
        threads : int or None
            Solver threads (``None``: the backend's default).
        verbose : bool, default False
            Print the solver's log.
        random_state : int or None
            Seed of the split and the solver; drawn and kept when ``None``.
        guarantee : bool or {"tpr", "tnr"}, default False
            Reset the intercept on the held-out sample by the order-statistic rule.
        warm_start : bool, default True
            Start the solver from the shifted-SVM feasible point.
        sparse_start : tuple of (ndarray, float) or None
            A start (w, b) for a sparse fit, on the standardised columns.
        clock : {"wall", "cpu"}, default "wall"
            What ``time_limit`` counts.

        Returns
        -------
        CSVMResults
            The fitted model: summary, rates, statements, predictions.

        Raises
        ------
        csvm_stats.exceptions.DataError
            A parameter is invalid or a sample is too small (for example too few
            held-out points for guarantee mode).
        csvm_stats.exceptions.InfeasibleConstraintsError
            No classifier meets the requirements on the anchor sample.
        csvm_stats.exceptions.SolverUnavailableError
            The named solver is not installed.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> data = X.assign(diagnosis=np.where(labels > 0, "benign", "malignant"))
        >>> res = CSVM.from_formula("diagnosis ~ .", data, tpr_min=0.9, bound="binomial",
        ...                         positive="malignant").fit(random_state=0)
        >>> res.solver.status.value
        'optimal'
        """
        if sparse_start is not None and not self.sparse:
            raise DataError("sparse_start is a start for penalty='l1' or max_features fits only.")
        check_fit_options(solver=solver, solver_names=SOLVERS, random_state=random_state, warm_start=warm_start)
        guaranteed = self._guaranteed_rate(guarantee)
        seed = resolve_seed(random_state)
        options = SolverOptions(
            time_limit=time_limit, mip_gap=mip_gap, threads=threads, verbose=verbose, seed=seed, clock=clock
        )
        budget = FitBudget.of(options)
        with budget.interrupts():
            state = self._fit_within(budget, options, solver, seed, guaranteed, warm_start, sparse_start)
        if self.sparse:
            from csvm_stats.sparse.results import SparseCSVMResults

            results: CSVMResults = SparseCSVMResults(state)
        else:
            results = CSVMResults(state)
        for message in results.degenerate:
            warn_at_caller(message, DegenerateRuleWarning)
        return results

    def _fit_within(self, budget: FitBudget, options: SolverOptions, solver: str, seed: int, guaranteed: str | None,
                    warm_start: bool, sparse_start: tuple[np.ndarray, float] | None) -> FittedState:
        """The fit on a running budget: split, standardise, solve, certify; the fitted state."""
        split = self._split(seed)
        if guaranteed is not None:
            if split.holdout.size == 0:
                raise DataError(
                    "guarantee mode sets the intercept on the held-out sample, which is empty; give it a share."
                )
            n_class = int(rate_points(self.y[split.holdout], guaranteed).sum())
            guarantee_rank(n_class, guaranteed, self.targets[guaranteed], self.alpha)  # before solving
        X = self.exog.to_numpy()
        y = self.y
        fit_rows = np.concatenate([split.train, split.anchor])
        if column_moments(X[fit_rows])[2].all():
            raise DataError(
                f"Every predictor column ({', '.join(self.exog_names[:5])}{', ...' if X.shape[1] > 5 else ''}) is "
                "constant on the training and anchor samples, so no rule can use them: a fit would call every "
                "point one class. Check the data (filtering, units, a column read as the wrong one)."
            )
        with budget.running("design matrix"):
            scaler = Standardizer.fit(X[fit_rows]) if self.standardize else Standardizer.identity(X.shape[1])
            Xs = scaler.transform(X)
        y_anchor = y[split.anchor]
        adjusted = self._adjusted_targets(split)
        if self.sparse:
            from csvm_stats.sparse.model import fit_sparse_csvm

            fit_function: Callable[..., Any] = partial(
                fit_sparse_csvm, penalty=self.penalty, max_features=self.max_features, screen=self.screen,
                start=sparse_start,
            )
        else:
            fit_function = partial(
                fit_csvm, kernel=self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0, rank=self.rank
            )
        engine_fit = fit_function(
            Xs[split.train],
            y[split.train],
            Xs[split.anchor],
            y_anchor,
            C=self.C,
            min_counts={rate: t.count for rate, t in adjusted.items()},
            big_m=self.big_m,
            solver=solver,
            options=options,
            warm_start=warm_start,
            budget=budget,
        )
        umbrella = None
        with budget.running("certification"):
            if guaranteed is not None:
                scores, tolerance = linear_scores(engine_fit.feature_map.transform(Xs[split.holdout]), engine_fit.coef)
                umbrella = umbrella_intercept(
                    scores, y[split.holdout], guaranteed, self.targets[guaranteed], self.alpha, tolerance=tolerance
                )
        fit_options = {"time_limit": options.time_limit, "mip_gap": options.mip_gap, "threads": options.threads,
                       "random_state": seed, "warm_start": warm_start, "clock": options.clock}
        engine_fit = replace(engine_fit, record=budget.stamp(engine_fit.record))  # the whole fit's times
        return FittedState(self, split, scaler, engine_fit, adjusted, umbrella, seed, fit_options)

    def __repr__(self) -> str:
        targets = ", ".join(f"{r}_min={v:g}" for r, v in self.targets.items()) or "no rate constraint"
        source = f"formula={self.formula.formula!r}" if self.formula else f"{self.exog.shape[1]} columns"
        sparsity = "" if not self.sparse else (
            f", max_features={self.max_features}" if self.max_features is not None else f", penalty={self.penalty!r}"
        )
        return f"CSVM({source}, n={self.exog.shape[0]}, {targets}, alpha={self.alpha:g}, bound={self.bound!r}{sparsity})"

