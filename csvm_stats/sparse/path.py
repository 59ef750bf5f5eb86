r"""The regularisation path of a sparse CSVM: coefficients and rates over a grid of C or s.

:func:`sparsity_path` refits one sparse model (``penalty="l1"`` or
``max_features``) over a grid of C (the L1 route: larger C, more features)
or of s (the cardinality route), all on the *same* split (one seed), each fit
warm-started from the previous one: the constraints do not depend on C, and
an s-sparse solution is feasible for every larger s, so the previous
solution is a valid MIP start (:func:`csvm_stats.sparse.model.fit_sparse_csvm`,
``start=``). Grids are walked in increasing order.

Every point reports the features used, its solver record and, from its
:class:`~csvm_stats.sparse.results.SparseCSVMResults`, the anchor and
held-out rates with the held-out lower bounds. Each point's held-out
statement is valid for that point; **choosing** the point by its held-out
rate would make the chosen statement optimistic (a selection over the grid).
Choose by cross-validation on I and J instead
(:func:`csvm_stats.models.tuning.choose_sparsity`), or read the held-out column of
the chosen point only.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from csvm_stats.exceptions import CSVMError, DataError
from csvm_stats.optimization.solvers.base import CLOCKS


@dataclass(frozen=True)
class SparsityPath:
    """The path: ``table`` (one row per grid value), ``coefficients`` (features x grid) and the fits.

    Parameters
    ----------
    parameter : str
        ``"max_features"`` or ``"C"``.
    table : pandas.DataFrame
        One row per grid value.
    coefficients : pandas.DataFrame
        Features x grid values.
    results : tuple
        The fits (``None`` where a grid point had no solution).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from csvm_stats import CSVM
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
    >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
    >>> from csvm_stats.sparse.path import sparsity_path
    >>> path = sparsity_path(CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case", max_features=2), [2, 3], random_state=0)
    >>> path.coefficients.shape[1]
    2
    """

    parameter: str
    table: pd.DataFrame
    coefficients: pd.DataFrame
    results: tuple[Any, ...]


def _grid(values: Sequence[float], parameter: str) -> list[float]:
    grid = sorted({float(v) if parameter == "C" else int(v) for v in values})
    if not grid:
        raise DataError(f"the {parameter} grid is empty; give at least one value.")
    return grid


def sparsity_path(
    model: Any,
    values: Sequence[float],
    *,
    random_state: int = 0,
    solver: str = "auto",
    time_limit: float = 300.0,
    mip_gap: float = 1e-4,
    clock: str = "wall",
) -> SparsityPath:
    """Refit the sparse ``model`` (a :class:`~csvm_stats.models.model.CSVM`) over ``values`` of its parameter.

    The parameter is s (``max_features``) for a cardinality model, C for an
    L1 model; ``clock`` is what ``time_limit`` counts, as in ``CSVM.fit``.
    A grid point without a solution (e.g. no s-sparse classifier
    meets the constraints) is recorded with its error and skipped as a start.

    Parameters
    ----------
    model : CSVM
        A sparse model (``max_features`` or ``penalty="l1"``).
    values : sequence of float
        The grid of s or C.
    random_state : int, default 0
        The split, the same for every grid point.
    solver : str, default "auto"
        Backend.
    time_limit : float, default 300.0
        Per-fit limit.
    mip_gap : float, default 1e-4
        Relative gap.
    clock : {"wall", "cpu"}, default "wall"
        What ``time_limit`` counts.

    Returns
    -------
    SparsityPath
        One row per grid value, the coefficients and the fits.

    Raises
    ------
    csvm_stats.exceptions.DataError
        The model is not sparse, or the grid is empty or invalid.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from csvm_stats import CSVM
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
    >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
    >>> from csvm_stats.sparse.path import sparsity_path
    >>> path = sparsity_path(CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case", max_features=2), [2, 3], random_state=0)
    >>> len(path.table)
    2
    """
    if not model.sparse:
        raise DataError("sparsity_path needs a sparse model: CSVM(..., penalty='l1') or CSVM(..., max_features=s).")
    if clock not in CLOCKS:  # else every grid point would record the same error
        raise DataError(f"clock must be one of {CLOCKS}, got {clock!r}.")
    parameter = "max_features" if model.max_features is not None else "C"
    rows, fits, coefs = [], [], {}
    start = None
    for value in _grid(values, parameter):
        point = copy.copy(model)
        if parameter == "C":
            point.C = value
        else:
            point._set_sparsity(model.penalty, value, None if model.screen is None else max(model.screen, value))
        cpu_start = time.process_time()
        try:
            res = point.fit(random_state=random_state, solver=solver, time_limit=time_limit, mip_gap=mip_gap,
                            sparse_start=start, clock=clock)
        except CSVMError as error:
            rows.append({parameter: value, "error": f"{type(error).__name__}: {error}"})
            continue
        cpu = time.process_time() - cpu_start
        start = (res.engine_fit.coef, res.engine_fit.intercept)
        row: dict[str, Any] = {parameter: value, "n_selected": res.n_selected, "objective": res.solver.objective,
                               "status": res.solver.status.value, "gap": res.solver.gap, "cpu_s": cpu,
                               "exact": res.exact, "error": ""}
        for rate, r in res.rates.iterrows():
            row[f"{rate}_anchor"] = r["anchor_rate"]
            row[f"{rate}_heldout"] = r["heldout_rate"]
            row[f"{rate}_lower"] = r["lower"]
        rows.append(row)
        fits.append(res)
        coefs[value] = pd.Series(res.engine_fit.coef, index=res.model.exog_names)
    table = pd.DataFrame(rows).set_index(parameter)
    coefficients = pd.DataFrame(coefs)
    coefficients = coefficients.loc[(coefficients != 0).any(axis=1)]
    return SparsityPath(parameter, table, coefficients, tuple(fits))
