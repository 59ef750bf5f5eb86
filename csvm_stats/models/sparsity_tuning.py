"""Choosing a sparse CSVM's C or s by cross-validation, alone or inside nested cross-validation."""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.model_selection import StratifiedKFold

from csvm_stats.inference.bounds import CappedTargetWarning
from csvm_stats.preprocessing.design import DEFAULT_FRACTIONS
from csvm_stats.exceptions import CSVMError, DataError, NoSolutionError
from csvm_stats.models.cv_results import NestedCVResult, _fold_seed, _row
from csvm_stats.models.cv_specs import CRITERIA, Criterion, Rates


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
    r"""Nested cross-validation of a sparse CSVM whose s (or C) is chosen by :func:`~csvm_stats.models.tuning.choose_sparsity`'s rule.

    The training and anchor samples of ``model.fit(random_state=...)`` are
    cut into ``outer_folds`` stratified folds (the held-out sample is never
    read, so a final fit with the same ``random_state`` keeps valid held-out
    statements). For each outer fold k the value is chosen by an inner
    ``inner_folds``-fold CV on the other folds (the rule of
    :func:`~csvm_stats.models.tuning.choose_sparsity`), the model refitted there with it (split 2:1
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
