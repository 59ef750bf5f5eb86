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
:meth:`csvm_stats.CSVM.fit`, where H is set aside first. A target of 1
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
from dataclasses import dataclass, field
from typing import Literal, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, parallel_config
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC
from tqdm.auto import tqdm

from csvm_stats.inference.bounds import AdjustedTarget, CappedTargetWarning, adjust_target
from csvm_stats.preprocessing.design import DEFAULT_FRACTIONS, split_samples
from csvm_stats.exceptions import CSVMError, DataError, NoSolutionError
from csvm_stats.optimization.solvers.base import SolverOptions
from csvm_stats.models.cv_results import NestedCVResult, _fold_seed, _row
from csvm_stats.models.cv_specs import (
    CRITERIA,
    PROTOCOLS,
    Criterion,
    CSVMSpec,
    FoldPreprocessor,
    Grid,
    RateRequirement,
    Rates,
    _as_frame,
    _mean_rates,
)
from csvm_stats.models.sparsity_tuning import SparsityChoice, choose_sparsity, nested_cv_sparsity

__all__ = [
    "CRITERIA",
    "PROTOCOLS",
    "CSVMSpec",
    "Criterion",
    "FoldPreprocessor",
    "Grid",
    "NestedCVResult",
    "RateRequirement",
    "Rates",
    "SparsityChoice",
    "choose_sparsity",
    "nested_cv",
    "nested_cv_sparsity",
]


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

# --------------------------------------------------------------------------- driver and results


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

