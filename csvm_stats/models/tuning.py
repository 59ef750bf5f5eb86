r"""Choosing (C, gamma) and estimating rates: grid search and nested cross-validation.

This is Algorithm 1 of the CSVM paper (Benitez-Pena et al.), made a library
driver. The data are cut into ``outer_folds`` stratified folds; for each outer
fold k the rest of the data (the outer training part) is used to choose
(C, gamma) by an inner stratified ``inner_folds``-fold cross-validation over a
grid, the chosen model is refitted on the whole outer training part and its
true positive rate, true negative rate and accuracy are measured on fold k.
Reported are the per-fold rates and their means and standard deviations
(sample SD, ``ddof=1``) over the outer folds.

Selection criteria, from the validation rates of one inner fold,

.. math::

    \text{accuracy},\qquad \text{G-mean} = \sqrt{TPR \cdot TNR},\qquad
    \text{Youden} = TPR + TNR - 1,

averaged over the inner folds; the pair with the largest mean wins and ties go
to the last pair in grid order (C outer, gamma inner), as the ``>=`` of
Algorithm 1 does.

The plain SVM minimises :math:`w'w + C\sum_i \xi_i`, the CSVM objective
without rate constraints; that is scikit-learn's ``SVC`` with ``C/2``, which
is used for it. Every CSVM is solved by :func:`csvm_stats.optimization.engine.fit_csvm`.

A :class:`CSVMSpec` asks for one constrained rate, either a fixed minimum
(``TNR >= 0.65``) or the tuned SVM's rate plus an improvement
(``TPR >= min(1, TPR0 + 0.025)``, the paper's Experiments 1 and 2). TPR0 and
TNR0 are the plain SVM's inner cross-validated rates at its chosen (C, gamma)
in the same outer training part, so no outer test point is used. The target
p0 becomes a required count on the anchor sample by
:func:`csvm_stats.inference.bounds.adjust_target` (Hoeffding, exact binomial or no
margin); a requirement above all anchor points is capped at all of them, as
the paper does, and the cap is recorded per fold.

Two protocols, both named in the results:

* ``"paper"`` - Algorithm 1 itself: for every grid pair and inner fold the
  CSVM is solved on the inner training part (time-limited, incumbent
  accepted) and validated, and the pair is chosen on those CSVM validation
  rates; then one CSVM per outer fold at that pair.
* ``"fast"`` - tune the plain SVM by inner cross-validation, then solve the
  CSVM once per outer fold at the SVM's chosen pair. Where the SVM chooses a
  small C the hinge loss is cheap and the CSVM meets its constraint mostly by
  shifting the intercept, at a large cost in the other class (australian,
  ``benchmarks/results/experiments_notes.md``); the paper's protocol avoids
  such pairs because it validates the CSVM itself.

Inside every fit the training part is split, stratified by class and seeded,
into a training sample I (share ``1 - anchor_fraction``) and an anchor sample
J (share ``anchor_fraction``, default 1/2). The paper does not say how it
splits I from J (Algorithm 1 only says ``I* u J*`` is the training part); an
even split balances the hinge-loss sample against the anchor sample on which
the Hoeffding margin :math:`\sqrt{\log(1/\alpha)/(2|J_c|)}` is computed.

``CSVMSpec(guarantee=True)`` is the held-out variant: the training part is
split into I, J and H (shares 1/2, 1/4, 1/4); the CSVM is fitted on I and J
and its intercept is then reset on H by the order-statistic rule
(:func:`csvm_stats.inference.certification.umbrella_intercept`). Caveat: H is drawn
from the outer training part *after* that part has been used for the
preprocessing, the inner tuning of (C, gamma) and the SVM rate that sets p0,
so the guarantee :math:`P(\text{true rate} \ge p_0) \ge 1 - \alpha` holds only
conditionally on those choices, not as strictly as in
:meth:`csvm_stats.models.model.CSVM.fit`, where H is set aside first. A target of 1
cannot be certified; such folds are recorded as failed with the reason.

Every fold's preprocessing (median / mode imputation, dummies for
categorical columns, standardisation) is fitted on that fold's training part
only (:class:`FoldPreprocessor`). Outer folds run in parallel through joblib
with any backend; every random choice derives from ``seed`` and the fold
number, so the results do not depend on the number of workers (a CSVM stopped
by its time limit can still differ between runs, because the incumbent found
in the time depends on the machine's speed).
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import Literal, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, parallel_config
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC
from tqdm.auto import tqdm

from csvm_stats.inference.bounds import AdjustedTarget, CappedTargetWarning, adjust_target
from csvm_stats.preprocessing.design import DEFAULT_FRACTIONS, Standardizer, split_samples
from csvm_stats.exceptions import CSVMError, DataError, NoSolutionError
from csvm_stats.optimization.solvers.base import SolverOptions

Criterion = Literal["accuracy", "gmean", "youden"]
CRITERIA: tuple[str, ...] = ("accuracy", "gmean", "youden")
PROTOCOLS: tuple[str, ...] = ("fast", "paper")


# --------------------------------------------------------------------------- rates


@dataclass(frozen=True)
class Rates:
    """True positive rate, true negative rate and accuracy of one set of predictions."""

    tpr: float
    tnr: float
    acc: float

    @classmethod
    def from_predictions(cls, y: np.ndarray, predicted: np.ndarray) -> Rates:
        """Rates of ``predicted`` against ``y`` (both in {-1, +1}); NaN for an absent class."""
        pos, neg = y > 0, y < 0
        tpr = float(np.mean(predicted[pos] > 0)) if pos.any() else math.nan
        tnr = float(np.mean(predicted[neg] < 0)) if neg.any() else math.nan
        return cls(tpr, tnr, float(np.mean(predicted == y)))

    def score(self, criterion: str) -> float:
        """The selection criterion: accuracy, G-mean sqrt(TPR TNR) or Youden TPR + TNR - 1."""
        if criterion == "accuracy":
            return self.acc
        if criterion == "gmean":
            return math.sqrt(self.tpr * self.tnr)
        if criterion == "youden":
            return self.tpr + self.tnr - 1.0
        raise DataError(f"criterion must be one of {CRITERIA}, got {criterion!r}.")

    def rate(self, name: str) -> float:
        """``"tpr"``, ``"tnr"`` or ``"acc"``."""
        return getattr(self, name)


def _mean_rates(rates: Sequence[Rates]) -> Rates:
    return Rates(*(float(np.mean([getattr(r, k) for r in rates])) for k in ("tpr", "tnr", "acc")))


# --------------------------------------------------------------------------- preprocessing


@dataclass(frozen=True)
class FoldPreprocessor:
    """Impute, encode and standardise with statistics of a training part only.

    Numeric columns: missing values get the training median. Categorical
    columns (pandas Categorical): missing values get the training mode, then
    one 0/1 dummy per category except the first (the categories come from the
    column's dtype, so every fold has the same columns). Finally every column
    is standardised with the training mean and population SD (a column
    constant on the training part keeps scale 1). Text columns that are not
    Categorical are refused.
    """

    columns: tuple[str, ...]
    fill: dict[str, object]
    levels: dict[str, tuple[object, ...]]
    standardizer: Standardizer

    @classmethod
    def fit(cls, X: pd.DataFrame) -> FoldPreprocessor:
        """Learn medians, modes and scaling from the training part ``X``."""
        X = _as_frame(X)
        fill: dict[str, object] = {}
        levels: dict[str, tuple[object, ...]] = {}
        for column in X.columns:
            values = X[column]
            if isinstance(values.dtype, pd.CategoricalDtype):
                levels[column] = tuple(values.cat.categories)
                counts = values.value_counts(sort=False)
                if counts.sum() == 0:
                    raise DataError(f"column {column!r} is missing in every training row; drop it.")
                fill[column] = counts.idxmax()
            elif pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
                if values.notna().sum() == 0:
                    raise DataError(f"column {column!r} is missing in every training row; drop it.")
                fill[column] = float(values.astype(float).median())
            else:
                raise DataError(
                    f"column {column!r} has dtype {values.dtype}; convert text columns to "
                    "pandas Categorical (X[col].astype('category')) so they get dummies."
                )
        partial = cls(tuple(X.columns), fill, levels, Standardizer.identity(0))
        encoded = partial._encode(X)
        return replace(partial, standardizer=Standardizer.fit(encoded))

    def _encode(self, X: pd.DataFrame) -> np.ndarray:
        blocks = []
        for column in self.columns:
            values = X[column]
            if column in self.levels:
                filled = values.fillna(self.fill[column])
                blocks.extend(
                    (filled == level).to_numpy(dtype=float)[:, None] for level in self.levels[column][1:]
                )
            else:
                blocks.append(values.astype(float).fillna(self.fill[column]).to_numpy()[:, None])
        return np.hstack(blocks) if blocks else np.empty((len(X), 0))

    def transform(self, X: pd.DataFrame) -> np.ndarray:
        """Imputed, dummy-coded and standardised matrix of ``X`` (same columns as at fit)."""
        X = _as_frame(X)
        if tuple(X.columns) != self.columns:
            raise DataError("transform needs the columns seen at fit, in the same order.")
        return self.standardizer.transform(self._encode(X))

    @property
    def feature_names(self) -> list[str]:
        """Names of the output columns (``column[level]`` for dummies)."""
        names: list[str] = []
        for column in self.columns:
            if column in self.levels:
                names.extend(f"{column}[{level}]" for level in self.levels[column][1:])
            else:
                names.append(column)
        return names


def _as_frame(X) -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        return X
    array = np.asarray(X, dtype=float)
    if array.ndim != 2:
        raise DataError(f"X must be two-dimensional, got shape {array.shape}.")
    return pd.DataFrame(array, columns=[f"x{k}" for k in range(array.shape[1])])


# --------------------------------------------------------------------------- specifications


@dataclass(frozen=True)
class Grid:
    """The (C, gamma) pairs searched; C is the CSVM's (``SVC`` gets ``C/2``).

    Parameters
    ----------
    C : tuple of float
        The C values (the CSVM's convention).
    gamma : tuple of float
        The RBF gamma values.

    Examples
    --------
    >>> from csvm_stats.models.tuning import Grid
    >>> len(Grid.paper().pairs())
    121
    """

    C: tuple[float, ...]
    gamma: tuple[float, ...]

    @classmethod
    def paper(cls) -> Grid:
        """C and gamma in 2^-5, ..., 2^5 (121 pairs), as in the paper.

        Returns
        -------
        Grid
            The 11 x 11 grid.

        Examples
        --------
        >>> from csvm_stats.models.tuning import Grid
        >>> len(Grid.paper().C)
        11
        """
        powers = tuple(2.0**k for k in range(-5, 6))
        return cls(powers, powers)

    def pairs(self) -> list[tuple[float, float]]:
        """All pairs, C in the outer loop and gamma in the inner loop.

        Returns
        -------
        list of tuple of float
            The (C, gamma) pairs.

        Raises
        ------
        csvm_stats.exceptions.DataError
            An empty grid or a non-positive value.

        Examples
        --------
        >>> from csvm_stats.models.tuning import Grid
        >>> Grid((1.0, 2.0), (0.5,)).pairs()
        [(1.0, 0.5), (2.0, 0.5)]
        """
        if not self.C or not self.gamma or min(self.C) <= 0 or min(self.gamma) <= 0:
            raise DataError("the grid needs at least one positive C and one positive gamma.")
        return [(c, g) for c in self.C for g in self.gamma]


@dataclass(frozen=True)
class RateRequirement:
    """One constrained rate: a fixed ``minimum``, or ``min(at_most, rate0 + above_svm)``.

    ``rate0`` is the tuned SVM's rate; ``at_most=1`` is the paper's cap. A
    lower cap keeps a target that a finite held-out sample can certify
    (``p0**n <= alpha`` needs n > log(alpha) / log(p0) class points).

    Parameters
    ----------
    rate : {"tpr", "tnr"}
        The constrained rate.
    minimum : float or None
        A fixed required rate.
    above_svm : float or None
        Required improvement over the tuned SVM's rate (exactly one of
        ``minimum`` and ``above_svm``).
    at_most : float, default 1.0
        Cap of ``rate0 + above_svm``.

    Raises
    ------
    csvm_stats.exceptions.DataError
        An unknown rate, both or neither of ``minimum`` and ``above_svm``, or a
        cap outside (0, 1].

    Examples
    --------
    >>> from csvm_stats.models.tuning import RateRequirement
    >>> RateRequirement("tpr", above_svm=0.025).rate
    'tpr'
    """

    rate: Literal["tpr", "tnr"]
    minimum: float | None = None
    above_svm: float | None = None
    at_most: float = 1.0

    def __post_init__(self) -> None:
        if self.rate not in ("tpr", "tnr"):
            raise DataError(f"rate must be 'tpr' or 'tnr', got {self.rate!r}.")
        if (self.minimum is None) == (self.above_svm is None):
            raise DataError("give exactly one of minimum= (a fixed target) and above_svm= (an improvement).")
        if not 0.0 < self.at_most <= 1.0:
            raise DataError(f"at_most must lie in (0, 1], got {self.at_most!r}.")

    def target(self, svm: Rates) -> float:
        """p0 for this fold, given the tuned SVM's inner cross-validated rates.

        Parameters
        ----------
        svm : Rates
            The tuned SVM's inner cross-validated rates.

        Returns
        -------
        float
            The target p0 of this fold.

        Examples
        --------
        >>> from csvm_stats.models.tuning import RateRequirement
        >>> RateRequirement("tpr", minimum=0.9).target(None)
        0.9
        """
        if self.minimum is not None:
            return float(self.minimum)
        return min(self.at_most, svm.rate(self.rate) + float(self.above_svm))

    @property
    def label(self) -> str:
        name = self.rate.upper()
        if self.minimum is not None:
            return f"{name} >= {self.minimum:g}"
        improved = f"{name}0 + {self.above_svm:g}"
        return f"{name} >= {improved}" if self.at_most == 1.0 else f"{name} >= min({self.at_most:g}, {improved})"


@dataclass(frozen=True)
class CSVMSpec:
    """A constrained model to evaluate: requirement, tuning criterion, margin, guarantee.

    Parameters
    ----------
    requirement : RateRequirement
        The constrained rate.
    criterion : {"accuracy", "gmean", "youden"}, default "accuracy"
        Tuning criterion of the inner loop.
    bound : {"hoeffding", "binomial", "none"}, default "hoeffding"
        Margin of the anchor count.
    alpha : float, default 0.05
        Level of the margin.
    guarantee : bool, default False
        The held-out variant (intercept set on H by the order-statistic rule).

    Raises
    ------
    csvm_stats.exceptions.DataError
        An unknown criterion.

    Examples
    --------
    >>> from csvm_stats.models.tuning import CSVMSpec, RateRequirement
    >>> CSVMSpec(RateRequirement("tnr", minimum=0.65), criterion="gmean").name
    'CSVM TNR >= 0.65 (gmean, hoeffding)'
    """

    requirement: RateRequirement
    criterion: Criterion = "accuracy"
    bound: Literal["hoeffding", "binomial", "none"] = "hoeffding"
    alpha: float = 0.05
    guarantee: bool = False

    def __post_init__(self) -> None:
        if self.criterion not in CRITERIA:
            raise DataError(f"criterion must be one of {CRITERIA}, got {self.criterion!r}.")

    @property
    def name(self) -> str:
        extra = ", held-out guarantee" if self.guarantee else ""
        return f"CSVM {self.requirement.label} ({self.criterion}, {self.bound}{extra})"


@dataclass(frozen=True)
class _Settings:
    protocol: str
    grid: Grid
    inner_folds: int
    anchor_fraction: float
    big_m: float | None
    solver: str
    options: SolverOptions
    seed: int


# --------------------------------------------------------------------------- per-fold work


def _fold_seed(*parts: int) -> int:
    """A seed for one fold from the user's seed and the fold's position (worker-independent)."""
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0])


def _svm_predict(X_train, y_train, X_test, C: float, gamma: float) -> np.ndarray:
    model = SVC(C=C / 2.0, kernel="rbf", gamma=gamma)
    return model.fit(X_train, y_train).predict(X_test)


@dataclass
class _InnerFold:
    """One inner fold, preprocessed, with squared distances for the RBF Gram matrices."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_valid: np.ndarray
    y_valid: np.ndarray
    seed: int
    sq_train: np.ndarray = field(init=False, repr=False)
    sq_valid: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.sq_train = euclidean_distances(self.X_train, squared=True)
        self.sq_valid = euclidean_distances(self.X_valid, self.X_train, squared=True)

    def svm_rates(self, grid: Grid) -> dict[tuple[float, float], Rates]:
        """Validation rates of the RBF SVM (``SVC`` with ``C/2``) at every grid pair."""
        rates = {}
        for gamma in grid.gamma:
            K_train, K_valid = np.exp(-gamma * self.sq_train), np.exp(-gamma * self.sq_valid)
            for C in grid.C:
                model = SVC(C=C / 2.0, kernel="precomputed").fit(K_train, self.y_train)
                rates[C, gamma] = Rates.from_predictions(self.y_valid, model.predict(K_valid))
        return rates


def _inner_folds(X: pd.DataFrame, y: np.ndarray, settings: _Settings, seed: int) -> list[_InnerFold]:
    splitter = StratifiedKFold(settings.inner_folds, shuffle=True, random_state=seed % 2**31)
    folds = []
    for j, (train, valid) in enumerate(splitter.split(np.zeros(len(y)), y)):
        prep = FoldPreprocessor.fit(X.iloc[train])
        folds.append(
            _InnerFold(prep.transform(X.iloc[train]), y[train], prep.transform(X.iloc[valid]), y[valid],
                       _fold_seed(seed, j))
        )
    return folds


def _select(scores: np.ndarray, pairs: list[tuple[float, float]]) -> tuple[float, float]:
    """Pair with the largest mean score; ties to the last pair in grid order; NaN never wins."""
    if np.all(np.isnan(scores)):
        raise NoSolutionError(
            "no grid pair could be validated: every inner CSVM fit failed; relax the requirement "
            "or raise the time limit."
        )
    best = np.nanmax(scores)
    return pairs[int(np.flatnonzero(scores == best)[-1])]


@dataclass(frozen=True)
class _CSVMOutcome:
    rates: Rates | None
    target: AdjustedTarget
    anchor_rate: float
    status: str
    solve_time: float
    message: str


def _required(spec: CSVMSpec, p0: float, n: int) -> AdjustedTarget:
    """Required anchor count for p0 on n class points; p0 = 1 (or a margin above 1) means all n."""
    if p0 >= 1.0:
        return AdjustedTarget(p0, 1.0, n, n, spec.bound, spec.alpha, True, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CappedTargetWarning)  # recorded in the fold table instead
        return adjust_target(p0, n, spec.alpha, spec.bound, what=spec.requirement.rate)


def _fit_and_score(
    spec: CSVMSpec, p0: float, C: float, gamma: float,
    X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
    settings: _Settings, seed: int,
) -> _CSVMOutcome:
    """Split the training part into I, J (and H), solve the CSVM, score it on the test part."""
    from csvm_stats.inference.certification import linear_scores, umbrella_intercept
    from csvm_stats.optimization.engine import fit_csvm

    fractions = DEFAULT_FRACTIONS if spec.guarantee else (
        1.0 - settings.anchor_fraction, settings.anchor_fraction, 0.0)
    split = split_samples(y_train, fractions, seed)
    rate = spec.requirement.rate
    y_anchor = y_train[split.anchor]
    in_class = y_anchor == (1 if rate == "tpr" else -1)
    target = _required(spec, p0, int(in_class.sum()))
    try:
        fit = fit_csvm(
            X_train[split.train], y_train[split.train], X_train[split.anchor], y_anchor,
            C=C, kernel="rbf", gamma=gamma, min_counts={rate: target.count}, big_m=settings.big_m,
            solver=settings.solver, options=settings.options,
        )
    except CSVMError as error:
        return _CSVMOutcome(None, target, math.nan, "failed", math.nan, f"{type(error).__name__}: {error}")
    anchor_rate = float(np.mean(fit.predict(X_train[split.anchor])[in_class] == y_anchor[in_class]))
    decision = fit.decision_function(X_test)
    message = fit.record.message
    if spec.guarantee:
        holdout = split.holdout
        scores, tolerance = linear_scores(fit.feature_map.transform(X_train[holdout]), fit.coef)
        try:
            reset = umbrella_intercept(scores, y_train[holdout], rate, p0, spec.alpha, tolerance=tolerance)
        except DataError as error:
            return _CSVMOutcome(None, target, anchor_rate, "failed", fit.record.wall_time,
                                f"guarantee: {error}")
        decision = fit.feature_map.transform(X_test) @ fit.coef + reset.intercept
        message = f"intercept reset on {reset.n} held-out points (rank {reset.rank})"
    predicted = np.where(decision >= 0, 1, -1)
    return _CSVMOutcome(Rates.from_predictions(y_test, predicted), target, anchor_rate,
                        fit.record.status.value, fit.record.wall_time, message)


def _paper_selection(
    spec: CSVMSpec, p0: float, inner: list[_InnerFold], settings: _Settings
) -> tuple[tuple[float, float], int]:
    """Algorithm 1's inner loop: validate the CSVM at every grid pair; returns the pair and #solves."""
    pairs = settings.grid.pairs()
    scores = np.full(len(pairs), math.nan)
    for g, (C, gamma) in enumerate(pairs):
        per_fold = [
            _fit_and_score(spec, p0, C, gamma, f.X_train, f.y_train, f.X_valid, f.y_valid, settings, f.seed)
            for f in inner
        ]
        if all(o.rates is not None for o in per_fold):
            scores[g] = np.mean([o.rates.score(spec.criterion) for o in per_fold])
    return _select(scores, pairs), len(pairs) * len(inner)


def _outer_fold(
    k: int, X: pd.DataFrame, y: np.ndarray, train: np.ndarray, test: np.ndarray,
    specs: Sequence[CSVMSpec], settings: _Settings,
) -> list[dict]:
    """Everything for outer fold k: inner SVM grid, SVM rows, one row per CSVM spec."""
    cpu_start = time.process_time()
    fold_seed = _fold_seed(settings.seed, k)
    inner = _inner_folds(X.iloc[train], y[train], settings, fold_seed)
    pairs = settings.grid.pairs()
    per_fold = [f.svm_rates(settings.grid) for f in inner]
    inner_rates = [[rates[pair] for rates in per_fold] for pair in pairs]
    prep = FoldPreprocessor.fit(X.iloc[train])
    X_train, X_test = prep.transform(X.iloc[train]), prep.transform(X.iloc[test])
    y_train, y_test = y[train], y[test]

    rows: list[dict] = []
    svm_choice: dict[str, tuple[tuple[float, float], Rates]] = {}
    criteria = sorted({s.criterion for s in specs} | {"accuracy"}, key=CRITERIA.index)
    for criterion in criteria:
        scores = np.array([np.mean([r.score(criterion) for r in per_pair]) for per_pair in inner_rates])
        pair = _select(scores, pairs)
        svm_choice[criterion] = (pair, _mean_rates(inner_rates[pairs.index(pair)]))
        start = time.perf_counter()
        rates = Rates.from_predictions(y_test, _svm_predict(X_train, y_train, X_test, *pair))
        rows.append(_row(k, f"SVM ({criterion})", pair, rates, time.perf_counter() - start, 0))

    for spec in specs:
        svm_pair, svm_rates = svm_choice[spec.criterion]
        p0 = spec.requirement.target(svm_rates)
        pair, solves = svm_pair, 0
        if settings.protocol == "paper":
            pair, solves = _paper_selection(spec, p0, inner, settings)
        outcome = _fit_and_score(spec, p0, *pair, X_train, y_train, X_test, y_test, settings,
                                 _fold_seed(fold_seed, 10**6))
        row = _row(k, spec.name, pair, outcome.rates, outcome.solve_time, solves + 1)
        row.update(
            rate0=svm_rates.rate(spec.requirement.rate), p0=p0, required=outcome.target.count,
            anchor_n=outcome.target.n, capped=outcome.target.capped, anchor_rate=outcome.anchor_rate,
            status=outcome.status, message=outcome.message,
        )
        rows.append(row)
    cpu = time.process_time() - cpu_start
    return [dict(row, fold_cpu_seconds=cpu) for row in rows]


def _row(k: int, model: str, pair: tuple[float, float], rates: Rates | None, seconds: float, solves: int) -> dict:
    nan = math.nan
    return dict(
        fold=k, model=model, C=pair[0], gamma=pair[1],
        tpr=rates.tpr if rates else nan, tnr=rates.tnr if rates else nan, acc=rates.acc if rates else nan,
        seconds=seconds, miqp_solves=solves, status="ok", message="",
    )


# --------------------------------------------------------------------------- driver and results


@dataclass(frozen=True)
class NestedCVResult:
    """Per-fold results of :func:`nested_cv` and their summary.

    ``folds`` has one row per (outer fold, model) with the chosen C and gamma,
    the outer-test TPR, TNR and accuracy, ``seconds`` spent in the final fit
    (for the CSVM the solver's wall time of the outer solve) and, for CSVM rows, the baseline rate
    (``rate0``), the target ``p0``, the required anchor count out of
    ``anchor_n``, whether the margin was capped at all anchor points, the rate
    reached on the anchor sample, the solver status and time, and the number
    of MIQP solves; ``fold_cpu_seconds`` is the CPU time of the whole outer
    fold (same value on each of its rows; a measure of work that does not
    depend on how busy the machine was). ``splits`` are the outer (train,
    test) positions.

    Parameters
    ----------
    folds : pandas.DataFrame
        One row per (outer fold, model).
    splits : list of tuple of numpy.ndarray
        The outer (train, test) positions.
    protocol : str
        ``"fast"``, ``"paper"`` or ``"sparse"``.
    wall_time : float
        Seconds the whole run took.

    Examples
    --------
    >>> import numpy as np
    >>> from csvm_stats.data.datasets import load_dataset
    >>> from csvm_stats.models.tuning import CSVMSpec, Grid, RateRequirement, nested_cv
    >>> X, y = load_dataset("wisconsin")
    >>> spec = CSVMSpec(RateRequirement("tpr", minimum=0.9), bound="binomial")
    >>> result = nested_cv(X, np.asarray(y), [spec], grid=Grid((1.0,), (0.03125,)), outer_folds=3,
    ...                    inner_folds=2, progress=False)
    >>> len(result.splits)
    3
    """

    folds: pd.DataFrame
    splits: list[tuple[np.ndarray, np.ndarray]] = field(repr=False)
    protocol: str
    wall_time: float

    def summary(self) -> pd.DataFrame:
        """Mean and sample SD over outer folds of TPR, TNR, accuracy per model, plus effort.

        Returns
        -------
        pandas.DataFrame
            One row per model: mean and SD of TPR, TNR and accuracy, and the effort.

        Examples
        --------
        >>> import numpy as np
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.models.tuning import Grid, nested_cv
        >>> X, y = load_dataset("wisconsin")
        >>> result = nested_cv(X, np.asarray(y), grid=Grid((1.0,), (0.03125,)), outer_folds=3, inner_folds=2, progress=False)
        >>> len(result.summary())
        1
        """
        grouped = self.folds.groupby("model", sort=False)
        table = grouped[["tpr", "tnr", "acc"]].agg(["mean", "std"])
        table.columns = [f"{rate}_{stat}" for rate, stat in table.columns]
        table["folds_ok"] = grouped["tpr"].count()
        table["miqp_solves"] = grouped["miqp_solves"].sum()
        table["solve_seconds"] = grouped["seconds"].sum()
        if "capped" in self.folds:
            table["capped_folds"] = grouped["capped"].apply(lambda c: int(c.fillna(False).astype(bool).sum()))
        return table

    @property
    def cpu_seconds(self) -> float:
        """CPU time of all outer folds (the work, whatever the machine's load)."""
        return float(self.folds.groupby("fold")["fold_cpu_seconds"].first().sum())

    @property
    def miqp_solves(self) -> int:
        """Total number of CSVM (MIQP) solves behind these results."""
        return int(self.folds["miqp_solves"].sum())


def _interactive() -> bool:
    return sys.stderr is not None and sys.stderr.isatty()


def nested_cv(
    X: pd.DataFrame | np.ndarray,
    y: pd.Series | np.ndarray,
    specs: Sequence[CSVMSpec] = (),
    *,
    protocol: Literal["fast", "paper"] = "fast",
    grid: Grid | None = None,
    outer_folds: int = 10,
    inner_folds: int = 10,
    anchor_fraction: float = 0.5,
    big_m: float | None = None,
    solver: str = "auto",
    options: SolverOptions | None = None,
    seed: int = 0,
    n_jobs: int = 1,
    backend: str | None = None,
    progress: bool | None = None,
) -> NestedCVResult:
    """Nested cross-validation of the tuned RBF SVM and of each CSVM in ``specs``.

    ``y`` holds -1/+1. The SVM is reported once per tuning criterion used
    (always accuracy). ``options`` default to the paper's 300 s limit with one
    solver thread. ``n_jobs`` and ``backend`` go to ``joblib.Parallel`` (any
    joblib backend: ``"loky"``, ``"threading"``, ``"dask"``, ...);
    ``progress=None`` shows a progress bar only on an interactive terminal.
    See the module docstring for the protocols and the I/J split.

    Parameters
    ----------
    X : pandas.DataFrame or numpy.ndarray
        Predictors (standardised inside the folds).
    y : pandas.Series or numpy.ndarray
        Labels -1/+1.
    specs : sequence of CSVMSpec
        The constrained models to evaluate beside the tuned SVM.
    protocol : {"fast", "paper"}, default "fast"
        ``"paper"`` solves the CSVM for every grid pair and inner fold
        (Algorithm 1); ``"fast"`` tunes the SVM and solves one CSVM per outer fold.
    grid : Grid or None
        The (C, gamma) pairs; default :meth:`Grid.paper`.
    outer_folds, inner_folds : int, default 10
        Stratified folds of the two loops.
    anchor_fraction : float, default 0.5
        Share of each training part that forms the anchor sample J.
    big_m : float or None
        ``None``: the exact CSVM; a number: the paper's big-M model.
    solver : str, default "auto"
        Backend of the CSVM solves.
    options : SolverOptions or None
        Time limit, gap, threads (default: the paper's 300 s, one thread).
    seed : int, default 0
        Seed of the folds and the splits.
    n_jobs : int, default 1
        joblib workers over the outer folds.
    backend : str or None
        joblib backend (``"loky"``, ``"threading"``, ``"dask"``, ...).
    progress : bool or None
        Progress bar; ``None``: only on an interactive terminal.

    Returns
    -------
    NestedCVResult
        Per-fold rates and their summary.

    Raises
    ------
    csvm_stats.exceptions.DataError
        Labels other than -1/+1, an unknown protocol, or too few points per
        class for the folds.

    Examples
    --------
    >>> import numpy as np
    >>> from csvm_stats.data.datasets import load_dataset
    >>> from csvm_stats.models.tuning import CSVMSpec, Grid, RateRequirement, nested_cv
    >>> X, y = load_dataset("wisconsin")
    >>> spec = CSVMSpec(RateRequirement("tpr", minimum=0.9), bound="binomial")
    >>> result = nested_cv(X, np.asarray(y), [spec], grid=Grid((1.0,), (0.03125,)), outer_folds=3,
    ...                    inner_folds=2, progress=False)
    >>> sorted(result.folds["model"].unique())[0]
    'CSVM TPR >= 0.9 (accuracy, binomial)'
    """
    frame = _as_frame(X).reset_index(drop=True)
    labels = np.asarray(y)
    if labels.shape != (len(frame),) or not np.isin(labels, (-1, 1)).all():
        raise DataError("y must be a vector of -1/+1 labels, one per row of X.")
    if protocol not in PROTOCOLS:
        raise DataError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}.")
    if not 0.0 < anchor_fraction < 1.0:
        raise DataError(f"anchor_fraction must lie strictly between 0 and 1, got {anchor_fraction!r}.")
    smallest = int(min((labels == 1).sum(), (labels == -1).sum()))
    if outer_folds < 2 or inner_folds < 2 or smallest < outer_folds * inner_folds / (outer_folds - 1):
        raise DataError(
            f"{outer_folds} outer x {inner_folds} inner folds need at least "
            f"{math.ceil(outer_folds * inner_folds / max(outer_folds - 1, 1))} points of each class "
            f"(the smaller class has {smallest}) and at least 2 folds each; use fewer folds."
        )
    settings = _Settings(
        protocol, grid or Grid.paper(), inner_folds, anchor_fraction, big_m, solver,
        options or SolverOptions(threads=1), seed,
    )
    splitter = StratifiedKFold(outer_folds, shuffle=True, random_state=seed % 2**31)
    splits = list(splitter.split(np.zeros(len(labels)), labels))
    start = time.perf_counter()
    tasks = (
        delayed(_outer_fold)(k, frame, labels, train, test, tuple(specs), settings)
        for k, (train, test) in enumerate(splits)
    )
    show = _interactive() if progress is None else progress
    # parallel_config (not Parallel(backend=)) also registers external backends such as "dask"
    with parallel_config(backend=backend) if backend else nullcontext():
        parallel = Parallel(n_jobs=n_jobs, return_as="generator")
        rows = [
            row
            for fold_rows in tqdm(parallel(tasks), total=len(splits), disable=not show, desc=f"{protocol} nested CV")
            for row in fold_rows
        ]
    return NestedCVResult(pd.DataFrame(rows), splits, protocol, time.perf_counter() - start)


# --------------------------------------------------------------------------- sparse CSVM: choosing C or s


@dataclass(frozen=True)
class SparsityChoice:
    """Cross-validated choice of a sparse CSVM's C or s: ``chosen`` and the per-value ``table``.

    Parameters
    ----------
    parameter : str
        ``"max_features"`` or ``"C"``.
    chosen : float
        The chosen value.
    table : pandas.DataFrame
        Mean validation rates per value.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from csvm_stats import CSVM
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
    >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
    >>> model = CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case", max_features=2)
    >>> from csvm_stats.models.tuning import choose_sparsity
    >>> choose_sparsity(model, [1, 2], folds=2).parameter
    'max_features'
    """

    parameter: str
    chosen: float
    table: pd.DataFrame


def _sparse_fold_score(model, rows_train, rows_valid, parameter, value, seed, fit_options) -> dict[str, float]:
    from csvm_stats.models.model import CSVM

    X, y = model.exog.iloc[rows_train], model.y[rows_train]
    kwargs = {f"{rate}_min": p0 for rate, p0 in model.targets.items()}
    kwargs.update(alpha=model.alpha, bound=model.bound, C=model.C, penalty=model.penalty,
                  max_features=model.max_features, screen=model.screen, standardize=model.standardize)
    kwargs[parameter] = value
    if kwargs["screen"] is not None and kwargs["max_features"] is not None:
        kwargs["screen"] = max(kwargs["screen"], kwargs["max_features"])
    train_share = DEFAULT_FRACTIONS[0] / (DEFAULT_FRACTIONS[0] + DEFAULT_FRACTIONS[1])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CappedTargetWarning)
            fold = CSVM(y, X, fractions=(train_share, 1.0 - train_share, 0.0), positive=1, **kwargs).fit(
                random_state=seed, **fit_options)
    except CSVMError:  # counted in the table's "failed" column
        return {"tpr": math.nan, "tnr": math.nan, "acc": math.nan, "n_selected": math.nan, "failed": 1.0}
    X_valid = model.exog.iloc[rows_valid]
    predicted = np.where(fold.decision_function(X_valid).to_numpy() >= 0, 1, -1)
    rates = Rates.from_predictions(model.y[rows_valid], predicted)
    return {"tpr": rates.tpr, "tnr": rates.tnr, "acc": rates.acc, "n_selected": float(fold.n_selected), "failed": 0.0}


def _choose_on_rows(
    model, rows: np.ndarray, grid: list, parameter: str, folds: int, criterion: str, seed: int,
    n_jobs: int | None, fit_options: dict,
) -> tuple[float, pd.DataFrame]:
    """Stratified ``folds``-fold CV of every grid value on ``rows`` only; the rule of :func:`choose_sparsity`."""
    splitter = StratifiedKFold(folds, shuffle=True, random_state=seed % 2**31)
    parts = list(splitter.split(np.zeros(rows.size), model.y[rows]))
    jobs = [(value, k) for value in grid for k in range(folds)]
    scores = Parallel(n_jobs=n_jobs)(
        delayed(_sparse_fold_score)(model, rows[parts[k][0]], rows[parts[k][1]], parameter, value,
                                    _fold_seed(seed, k) % 2**31, fit_options)
        for value, k in jobs
    )
    frame = pd.DataFrame(scores).assign(**{parameter: [v for v, _ in jobs]}).groupby(parameter).mean()
    frame["score"] = [Rates(r.tpr, r.tnr, r.acc).score(criterion) for r in frame.itertuples()]
    constrained = list(model.targets)
    frame["meets_targets"] = np.all([frame[rate] >= p0 for rate, p0 in model.targets.items()], axis=0) \
        if constrained else True
    if frame["meets_targets"].any():
        best = frame.loc[frame["meets_targets"], "score"]
    else:
        best = frame[constrained].mean(axis=1) if constrained else frame["score"]
    if best.isna().all():
        raise NoSolutionError("no value of the grid could be validated: every fold's fit failed; relax a target.")
    return best.index[int(np.nanargmax(best.to_numpy()))], frame  # first maximum: the smallest value


def _sparsity_grid(model, values: Sequence[float], criterion: str) -> tuple[str, list]:
    """The parameter a sparse model tunes (``max_features`` or ``C``) and the sorted grid; checks the model."""
    if getattr(model, "recall_min", None) is not None or not model.sparse:  # MulticlassCSVM has recall_min
        raise DataError("choosing a sparsity needs a two-class sparse model: CSVM(..., penalty='l1') or "
                        "CSVM(..., max_features=s) with tpr_min/tnr_min/acc_min.")
    if criterion not in CRITERIA:
        raise DataError(f"criterion must be one of {CRITERIA}, got {criterion!r}.")
    parameter = "max_features" if model.max_features is not None else "C"
    grid = sorted({int(v) if parameter == "max_features" else float(v) for v in values})
    if not grid:
        raise DataError(f"give at least one value of {parameter} to choose from.")
    return parameter, grid


def choose_sparsity(
    model,
    values: Sequence[float],
    *,
    folds: int = 5,
    criterion: Criterion = "accuracy",
    random_state: int = 0,
    n_jobs: int | None = None,
    solver: str = "auto",
    time_limit: float = 60.0,
) -> SparsityChoice:
    r"""Choose s (``max_features``) or C of a sparse :class:`~csvm_stats.models.model.CSVM` by cross-validation.

    Only the training and anchor samples of ``model.fit(random_state=...)``
    are used (stratified ``folds``-fold CV; inside each fold the training part
    is split into I and J in the model's 2:1 proportion and the model refitted
    with the candidate value), so the held-out sample stays untouched and a
    final ``fit`` with the same ``random_state`` keeps valid held-out
    statements. Rule: among the values whose mean validation rate meets
    every target of the model, the one with the largest mean ``criterion``
    (accuracy, G-mean or Youden); ties and, when no value meets the targets,
    the largest mean constrained rate go to the smaller value (fewer features).
    Folds run through joblib (any backend); results do not depend on ``n_jobs``.
    The table has the mean validation rates, features used, ``score`` and
    ``failed`` (share of folds whose fit had no solution) per value.

    Parameters
    ----------
    model : CSVM
        A sparse model (``max_features`` or ``penalty="l1"``).
    values : sequence of float
        Candidate s (or C) values.
    folds : int, default 5
        Stratified folds.
    criterion : {"accuracy", "gmean", "youden"}, default "accuracy"
        The rule's criterion.
    random_state : int, default 0
        The split (as in ``model.fit``) and the folds.
    n_jobs : int or None
        joblib workers.
    solver : str, default "auto"
        Backend.
    time_limit : float, default 60.0
        Per-fit limit.

    Returns
    -------
    SparsityChoice
        The chosen value and the per-value table.

    Raises
    ------
    csvm_stats.exceptions.DataError
        The model is not sparse, or the values or folds are invalid.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from csvm_stats import CSVM
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
    >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
    >>> model = CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case", max_features=2)
    >>> from csvm_stats.models.tuning import choose_sparsity
    >>> choice = choose_sparsity(model, [1, 2], folds=2)
    >>> choice.chosen in (1, 2)
    True
    """
    parameter, grid = _sparsity_grid(model, values, criterion)
    split = model._split(random_state)
    rows = np.sort(np.concatenate([split.train, split.anchor]))
    chosen, frame = _choose_on_rows(
        model, rows, grid, parameter, folds, criterion, random_state, n_jobs,
        {"solver": solver, "time_limit": time_limit},
    )
    return SparsityChoice(parameter, chosen, frame)


def nested_cv_sparsity(
    model,
    values: Sequence[float],
    *,
    outer_folds: int = 5,
    inner_folds: int = 5,
    criterion: Criterion = "accuracy",
    random_state: int = 0,
    n_jobs: int | None = None,
    solver: str = "auto",
    time_limit: float = 60.0,
) -> NestedCVResult:
    r"""Nested cross-validation of a sparse CSVM whose s (or C) is chosen by :func:`choose_sparsity`'s rule.

    The training and anchor samples of ``model.fit(random_state=...)`` are
    cut into ``outer_folds`` stratified folds (the held-out sample is never
    read, so a final fit with the same ``random_state`` keeps valid held-out
    statements). For each outer fold k the value is chosen by an inner
    ``inner_folds``-fold CV on the other folds (the rule of
    :func:`choose_sparsity`), the model refitted there with it (split 2:1
    into I and J) and its TPR, TNR and accuracy measured on fold k: an
    estimate of the rates of the whole procedure "choose s by CV, then fit".
    Returns a :class:`NestedCVResult` (protocol ``"sparse"``) with one row per
    outer fold: the chosen value (column ``max_features`` or ``C``), the
    outer-fold rates, ``n_selected``, ``fold_cpu_seconds`` and, as
    ``miqp_solves``, the number of sparse fits behind the fold (each is a
    ranking, a start and one MIQP or MILP).

    Parameters
    ----------
    model : CSVM
        A sparse model.
    values : sequence of float
        Candidate s (or C) values.
    outer_folds, inner_folds : int, default 5
        Stratified folds of the two loops.
    criterion : {"accuracy", "gmean", "youden"}, default "accuracy"
        The rule's criterion.
    random_state : int, default 0
        The split and the folds.
    n_jobs : int or None
        joblib workers.
    solver : str, default "auto"
        Backend.
    time_limit : float, default 60.0
        Per-fit limit.

    Returns
    -------
    NestedCVResult
        One row per outer fold (protocol ``"sparse"``).

    Raises
    ------
    csvm_stats.exceptions.DataError
        The model is not sparse, or the values or folds are invalid.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from csvm_stats import CSVM
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
    >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
    >>> model = CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case", max_features=2)
    >>> from csvm_stats.models.tuning import nested_cv_sparsity
    >>> len(nested_cv_sparsity(model, [1, 2], outer_folds=2, inner_folds=2).folds)
    2
    """
    parameter, grid = _sparsity_grid(model, values, criterion)
    split = model._split(random_state)
    rows = np.sort(np.concatenate([split.train, split.anchor]))
    smallest = int(min((model.y[rows] > 0).sum(), (model.y[rows] < 0).sum()))
    if outer_folds < 2 or inner_folds < 2 or smallest < outer_folds * inner_folds / (outer_folds - 1):
        raise DataError(
            f"{outer_folds} outer x {inner_folds} inner folds need at least "
            f"{math.ceil(outer_folds * inner_folds / max(outer_folds - 1, 1))} points of each class in the "
            f"training and anchor samples (the smaller class has {smallest}) and at least 2 folds each; use fewer folds."
        )
    fit_options = {"solver": solver, "time_limit": time_limit}
    name = f"sparse CSVM ({parameter} by inner CV, {criterion})"
    splitter = StratifiedKFold(outer_folds, shuffle=True, random_state=random_state % 2**31)
    splits = list(splitter.split(np.zeros(rows.size), model.y[rows]))
    start, records = time.perf_counter(), []
    for k, (train, test) in enumerate(splits):
        cpu_start, seed = time.process_time(), _fold_seed(random_state, k, 1) % 2**31
        chosen, _ = _choose_on_rows(model, rows[train], grid, parameter, inner_folds, criterion, seed, n_jobs, fit_options)
        score = _sparse_fold_score(model, rows[train], rows[test], parameter, chosen, seed, fit_options)
        value = {"C": chosen} if parameter == "C" else {"C": model.C, parameter: chosen}
        row = _row(k, name, (value["C"], math.nan), None if score["failed"] else
                   Rates(score["tpr"], score["tnr"], score["acc"]), math.nan, len(grid) * inner_folds + 1)
        row.update(value, n_selected=score["n_selected"], status="failed" if score["failed"] else "ok",
                   fold_cpu_seconds=time.process_time() - cpu_start)
        records.append(row)
    return NestedCVResult(pd.DataFrame(records), [(rows[a], rows[b]) for a, b in splits], "sparse",
                          time.perf_counter() - start)
