r"""Selection stability: how often each feature is chosen over bootstrap refits.

For b = 1..B the training sample I and the anchor sample J are resampled
with replacement, each class to its own size (so the required anchor counts
keep their meaning), and the sparse CSVM is refitted with the same route,
C, required counts and solver; the selection frequency of feature f is

.. math:: \hat\pi_f = \frac1B \sum_b 1[w^{(b)}_f \ne 0]

(stability selection, Meinshausen and Buhlmann 2010, with the bootstrap in
place of half-samples). A training row drawn k times enters with weight k;
an anchor row drawn k times appears k times, each with its own indicator.
The held-out sample is never used. Refits run through joblib (any backend,
e.g. dask via ``joblib.parallel_config(backend="dask")``); the resamples are
drawn from ``random_state`` before dispatch, so the table does not depend on
``n_jobs`` or the backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from csvm_stats.exceptions import CSVMError
from csvm_stats.sparse.model import fit_sparse_csvm


def _stratified_draw(y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row positions drawn with replacement within each class (class sizes kept)."""
    parts = [rng.choice(np.flatnonzero(y == label), size=int(np.sum(y == label))) for label in (1.0, -1.0)]
    return np.sort(np.concatenate(parts))


def _refit(X_i, y_i, X_j, y_j, draw_i, draw_j, fit_kwargs: Mapping[str, Any]) -> np.ndarray | None:
    """One bootstrap refit: the selected column indices (``None`` when the refit has no solution)."""
    rows, counts = np.unique(draw_i, return_counts=True)
    try:
        fit = fit_sparse_csvm(
            X_i[rows], y_i[rows], X_j[draw_j], y_j[draw_j], sample_weight=counts.astype(float), **fit_kwargs
        )
    except CSVMError:
        return None
    return fit.selected


def selection_frequencies(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_anchor: np.ndarray,
    y_anchor: np.ndarray,
    names: list[str],
    fit_kwargs: Mapping[str, Any],
    *,
    n_bootstrap: int = 100,
    random_state: int = 0,
    n_jobs: int | None = None,
) -> pd.DataFrame:
    """The selection-frequency table (module docstring), most often chosen first.

    Columns: ``frequency`` (share of the successful refits that chose the
    feature), ``count``, ``refits`` (successful refits; a refit fails when
    its resample admits no classifier meeting the constraints).
    """
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)) or n_bootstrap < 1:
        raise ValueError(f"n_bootstrap must be a positive integer, got {n_bootstrap!r}.")
    rng = np.random.default_rng(random_state)
    draws = [(_stratified_draw(y_train, rng), _stratified_draw(y_anchor, rng)) for _ in range(n_bootstrap)]
    selections = Parallel(n_jobs=n_jobs)(
        delayed(_refit)(X_train, y_train, X_anchor, y_anchor, d_i, d_j, fit_kwargs) for d_i, d_j in draws
    )
    done = [s for s in selections if s is not None]
    counts = np.zeros(len(names), dtype=int)
    for selected in done:
        counts[selected] += 1
    table = pd.DataFrame(
        {"frequency": counts / max(len(done), 1), "count": counts, "refits": len(done)},
        index=pd.Index(names, name="feature"),
    )
    return table.sort_values(["count"], ascending=False, kind="stable")
