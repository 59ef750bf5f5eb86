r"""A short gene list for the multiclass CSVM: one cardinality budget shared by all class columns.

The multiclass CSVM of :mod:`csvm_stats.multiclass.problem` (scores
:math:`f_k(x) = w_k^\top x + b_k`, rule argmax, per-class recall
requirements on the anchor sample) with binary feature indicators
:math:`v_f` shared by the K classes:

.. math::

    |W_{kf}| \le M_{kf} v_f \ (k = 1..K),\qquad \sum_f v_f \le s,

so the rule reads at most s columns, whatever the class (a gene list, not
one list per class). It is :func:`csvm_stats.optimization.problem.with_group_cardinality`
applied to :func:`csvm_stats.multiclass.problem.build_multiclass_primal`, one
more problem form of the solver layer; the pairs :math:`(W_{kf}, v_f)` are
perspective pairs, so SCIP and Gurobi use the relaxation
:math:`t_{kf} v_f \ge W_{kf}^2`.

As for two classes (:mod:`csvm_stats.sparse.model`): the columns are
*ranked* (first the support of one-vs-rest L1-penalised linear SVMs on
:math:`I \cup J`, by the largest :math:`|w|` over classes, then the rest by
the norm over classes of the multiclass warm start's W); the *start* is the
exact multiclass CSVM on the s best-ranked columns, whose objective U gives
the proven bounds :math:`M_{kf}` (every solution at least as good has
:math:`|W_{kf}| \le \sqrt{U}`). **Screening rule**: the MIQP sees the K best-ranked
columns (all when there are at most ``EXACT_UP_TO`` of
:mod:`csvm_stats.sparse.model`, else
``max(SCREEN_FACTOR * s, SCREEN_MIN)``, or ``screen=K``); the result is the
optimum over all columns (to the gap) only when K is the number of columns,
otherwise over subsets of the screened columns, a heuristic for the full
problem (:attr:`Screening.exact` is False).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from csvm_stats.exceptions import DataError, InfeasibleConstraintsError
from csvm_stats.multiclass.engine import MulticlassFit, check_class_counts, fit_multiclass_csvm
from csvm_stats.multiclass.problem import build_multiclass_primal, constrained_anchor, multiclass_scale
from csvm_stats.multiclass.warmstart import MARGIN_TOL, class_margins, multiclass_start
from csvm_stats.optimization.kernels import linear_map
from csvm_stats.optimization.problem import with_group_cardinality
from csvm_stats.optimization.solvers import SolverOptions
from csvm_stats.sparse.model import ZERO_TOL, Screening, _solve, default_screen


@dataclass(frozen=True)
class MulticlassSparseFit(MulticlassFit):
    """A multiclass fit on at most ``max_features`` columns: ``coef`` (K, p), zero outside the selection."""

    max_features: int | None = None
    screening: Screening | None = None

    @property
    def selected(self) -> np.ndarray:
        """Indices of the columns some class uses."""
        return np.flatnonzero(np.abs(self.coef).max(axis=0) > ZERO_TOL)


def multiclass_ranking(X: np.ndarray, y: np.ndarray, n_classes: int, C: float, start_W: np.ndarray) -> np.ndarray:
    """All column indices, best first (module docstring): L1 one-vs-rest support, then the start's norms."""
    svc = LinearSVC(C=C / 2.0, penalty="l1", loss="squared_hinge", dual=False, max_iter=20000, tol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        l1 = np.abs(np.atleast_2d(svc.fit(X, y).coef_)).max(axis=0)
    norms = np.linalg.norm(start_W, axis=0)
    key = np.where(l1 > ZERO_TOL, l1 + norms.max() + 1.0, norms)
    return np.argsort(-key, kind="stable")


def fit_multiclass_cardinality(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_anchor: np.ndarray,
    y_anchor: np.ndarray,
    n_classes: int,
    *,
    max_features: int,
    C: float = 1.0,
    min_counts: Mapping[int, int] | None = None,
    sample_weight: np.ndarray | None = None,
    solver: str = "auto",
    options: SolverOptions | None = None,
    screen: int | None = None,
    class_names=None,
) -> MulticlassSparseFit:
    """The multiclass CSVM reading at most ``max_features`` columns (module docstring), on standardised columns.

    Labels are class positions ``0..n_classes-1``; ``min_counts`` maps a class
    position to its required anchor count, as in
    :func:`csvm_stats.multiclass.engine.fit_multiclass_csvm`.
    """
    options = options or SolverOptions()
    X_i, X_j = np.asarray(X_train, dtype=float), np.asarray(X_anchor, dtype=float)
    y_i, y_j = np.asarray(y_train, dtype=int), np.asarray(y_anchor, dtype=int)
    p, K = X_i.shape[1], int(n_classes)
    if isinstance(max_features, bool) or not isinstance(max_features, (int, np.integer)) or not 1 <= max_features <= p:
        raise DataError(f"max_features must be an integer in 1..{p} (the columns), got {max_features!r}.")
    weight = np.ones(X_i.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    counts = check_class_counts(min_counts or {}, y_j, K)
    size = default_screen(max_features, p) if screen is None else int(screen)
    if not max_features <= size:
        raise DataError(f"screen={screen} keeps fewer columns than max_features={max_features}; raise it.")
    size = min(size, p)
    anchor_index = constrained_anchor(y_j, counts)
    full_start = multiclass_start(X_i, y_i, X_j, y_j, K, C=C, weight=weight, min_counts=counts, anchor_index=anchor_index)
    start_W = np.zeros((K, p)) if full_start is None else full_start.W
    ranking = multiclass_ranking(np.vstack([X_i, X_j]), np.r_[y_i, y_j], K, C, start_W)
    top = ranking[:max_features]
    try:
        restricted = fit_multiclass_csvm(
            X_i[:, top], y_i, X_j[:, top], y_j, K, C=C, min_counts=counts, big_m=None, sample_weight=weight,
            solver=solver, options=options, class_names=class_names,
        )
    except InfeasibleConstraintsError as err:
        raise InfeasibleConstraintsError(
            f"no classifier on the {max_features} best-ranked columns meets the recall requirements, so the "
            f"gene-list route has no start; raise max_features or relax a target ({err})."
        ) from err
    candidates = np.sort(ranking[:size])
    W0 = np.zeros((K, size))
    W0[:, np.searchsorted(candidates, top)] = restricted.coef
    b0 = restricted.intercept
    Xc_i, Xc_j = X_i[:, candidates], X_j[:, candidates]
    xi0 = np.maximum(0.0, 1.0 - class_margins(Xc_i @ W0.T + b0, y_i))
    z0 = (class_margins(Xc_j[anchor_index] @ W0.T + b0, y_j[anchor_index]) >= 1.0 - MARGIN_TOL).astype(float)
    upper = float(np.sum(W0 * W0) + C * weight @ xi0)
    x0 = np.r_[multiclass_scale(K, size, upper) * W0.ravel(), b0, xi0, z0]
    problem = build_multiclass_primal(
        Xc_i, y_i, Xc_j, y_j, K, C=C, min_counts=counts, big_m=None, sample_weight=weight, start=x0, upper=upper,
    )
    members = (np.arange(K)[None, :] * size + np.arange(size)[:, None]) + problem.miqp.blocks["w"].start
    miqp = with_group_cardinality(problem.miqp, members, max_features)
    rule = (
        "all columns (no screening)" if size == p
        else f"the {size} best-ranked of {p} columns (L1 one-vs-rest support first, then the warm start's norms)"
    )
    solution = _solve(replace(problem, miqp=miqp), solver, options, f"multiclass CSVM with at most {max_features} features")
    x = solution.x
    W, b, z = problem.read(x[: problem.miqp.n_vars])
    W = np.where(x[miqp.blocks["v"]][None, :] > 0.5, W, 0.0)
    coef = np.zeros((K, p))
    coef[:, candidates] = np.where(np.abs(W) > ZERO_TOL, W, 0.0)
    return MulticlassSparseFit(
        coef=coef,
        intercept=b,
        feature_map=linear_map(p),
        z=np.round(z),
        anchor_index=anchor_index,
        record=solution.record,
        C=float(C),
        min_counts=counts,
        big_m=problem.big_m,
        warm_start_objective=upper,
        max_features=int(max_features),
        screening=Screening(candidates, p, rule),
    )

