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

**Stability selection** (:func:`stability_selection`, the route recommended
for *finding* the informative features): the base procedure is the L1-norm
CSVM at a C small enough that a fit keeps at least one and at most

.. math:: q = \sqrt{v\,(2\pi - 1)\,p}

of the p features, the largest such C of a given grid (one fit on I and J
per grid value; the choice reads only how many features each fit keeps). The stable set is the features with
:math:`\hat\pi_f \ge \pi` (default :math:`\pi = 0.6`). This inverts the
bound :math:`E[V] \le q^2 / ((2\pi - 1) p)` on the number V of falsely
selected features (Meinshausen and Buhlmann 2010, Theorem 1) for a target v
of expected false selections (default 1). That bound is proven for
half-samples drawn without replacement and exchangeable noise features; with
the bootstrap used here it is a guide for choosing q, not a guarantee, and
the results do not claim it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from csvm_stats.exceptions import CSVMError, DataError
from csvm_stats.sparse.model import fit_sparse_csvm
from csvm_stats.sparse.path import SparsityPath, sparsity_path


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


@dataclass(frozen=True)
class StabilitySelection:
    r"""The outcome of :func:`stability_selection`.

    ``C`` is the base fit's C, ``q`` the most features a base fit may keep,
    ``threshold`` the frequency :math:`\pi`, ``table`` the selection
    frequencies of the refits at ``C`` with a column ``stable``, ``path`` the
    fits over the C grid (``path.table["n_selected"]`` chose ``C``).
    """

    C: float
    q: float
    threshold: float
    table: pd.DataFrame
    path: SparsityPath

    @property
    def selected(self) -> list[str]:
        """The stable features, most often chosen first."""
        return self.table.index[self.table["stable"]].tolist()


def stability_selection(
    model: Any,
    C_values: Sequence[float],
    *,
    threshold: float = 0.6,
    expected_false: float = 1.0,
    n_bootstrap: int = 100,
    random_state: int = 0,
    n_jobs: int | None = None,
    solver: str = "auto",
    time_limit: float = 300.0,
    clock: str = "wall",
) -> StabilitySelection:
    """Stability selection with the L1-norm CSVM as base procedure (module docstring).

    ``model`` is a ``CSVM(..., penalty="l1")``; its C is replaced by the
    largest value of ``C_values`` whose fit (split of ``random_state``) keeps
    between 1 and q features, and the bootstrap refits of that fit give the
    frequencies. Only the training and anchor samples are used, so a CSVM
    refitted on the stable features with the same ``random_state`` keeps
    valid held-out statements. ``solver``, ``time_limit`` and ``clock`` (what
    the limit counts, as in ``CSVM.fit``) hold for the grid fits and the refits.
    """
    if getattr(model, "penalty", None) != "l1" or model.max_features is not None:
        raise DataError("stability_selection takes an L1-norm CSVM as base procedure: CSVM(..., penalty='l1').")
    if not 0.5 < threshold <= 1.0:
        raise DataError(f"threshold must be in (0.5, 1], got {threshold!r} (Meinshausen and Buhlmann use 0.6 to 0.9).")
    if not expected_false > 0:
        raise DataError(f"expected_false must be positive, got {expected_false!r}.")
    q = math.sqrt(expected_false * (2.0 * threshold - 1.0) * len(model.exog_names))
    path = sparsity_path(model, C_values, random_state=random_state, solver=solver, time_limit=time_limit,
                         clock=clock)
    if "n_selected" not in path.table:  # no grid value gave a fit: say why, not "no C keeps 1 to q"
        raise DataError(
            f"no fit of the C grid succeeded (first error: {path.table['error'].iloc[0]}); fix that fit first "
            "(path.table of sparsity_path lists every grid value's error)."
        )
    kept = path.table["n_selected"]
    eligible = kept.index[(kept >= 1) & (kept <= q)]
    if eligible.empty:
        raise DataError(
            f"no C of the grid keeps between 1 and q = {q:.1f} features (a fit keeping none selects nothing); "
            "add C values between those keeping none and those keeping more."
        )
    C = float(eligible.max())
    fit = path.results[[r.engine_fit.C for r in path.results].index(C)]
    table = fit.selection_stability(n_bootstrap=n_bootstrap, random_state=random_state, n_jobs=n_jobs,
                                    solver=solver, time_limit=time_limit)
    table["stable"] = table["frequency"] >= threshold
    return StabilitySelection(C, q, float(threshold), table, path)
