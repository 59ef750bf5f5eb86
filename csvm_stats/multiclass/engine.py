r"""Fit one multiclass CSVM: feature map -> warm start -> MIQP -> backend -> fit.

The array-level kernel, as :func:`csvm_stats.optimization.engine.fit_csvm` is for two
classes: labels are class positions ``0..K-1`` and the problem is the one of
:mod:`csvm_stats.multiclass.problem`. Kernels go through the factorised
feature map of :mod:`csvm_stats.optimization.kernels`, and so does the linear kernel with
more columns than rows (the row-space factorisation: each optimal
:math:`w_k` lies in the span of the rows of :math:`I \cup J`, so solving on
the factor loses nothing); a linear solution is mapped back to the columns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from csvm_stats.optimization.blas import one_blas_thread
from csvm_stats.optimization.budget import ABANDONED, FitBudget
from csvm_stats.optimization.engine import (
    DEFAULT_BIG_M, WARM_START_SHARE, check_fit_inputs, keep_start, raise_for_status,
)
from csvm_stats.exceptions import DataError
from csvm_stats.optimization.kernels import FeatureMap, Kernel, factorise, linear_map, resolve_kernel
from csvm_stats.multiclass.problem import build_multiclass_primal, constrained_anchor, multiclass_scale
from csvm_stats.multiclass.warmstart import MulticlassStart, multiclass_start
from csvm_stats.optimization.solvers import SolveRecord, SolverOptions, solve


@dataclass(frozen=True)
class MulticlassFit:
    """A solved multiclass CSVM: scores ``phi(x) @ coef.T + intercept``, rule argmax."""

    coef: np.ndarray
    intercept: np.ndarray
    feature_map: FeatureMap
    z: np.ndarray
    anchor_index: np.ndarray
    record: SolveRecord
    C: float
    min_counts: Mapping[int, int]
    big_m: np.ndarray = field(repr=False)
    warm_start_objective: float | None = None

    def scores(self, X: np.ndarray) -> np.ndarray:
        """``(n, K)`` class scores without offsets, :math:`w_k^\\top\\phi(x)`."""
        return self.feature_map.transform(X) @ self.coef.T

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """``(n, K)`` class scores :math:`f_k(x) = w_k^\\top\\phi(x) + b_k`."""
        return self.scores(X) + self.intercept


def check_class_counts(min_counts: Mapping[int, int], y_anchor: np.ndarray, n_classes: int) -> dict[int, int]:
    """Validate required anchor counts (class position -> count) against the anchor class sizes."""
    out: dict[int, int] = {}
    for k, count in min_counts.items():
        if not 0 <= int(k) < n_classes:
            raise DataError(f"class position {k!r} is not in 0..{n_classes - 1}.")
        size = int(np.sum(y_anchor == k))
        if size == 0:
            raise DataError(
                f"the anchor sample has no point of class {k}, so its recall cannot be constrained; "
                "enlarge the anchor sample."
            )
        if not 0 <= int(count) <= size:
            raise DataError(f"class {k} asks for {count} of its {size} anchor points.")
        out[int(k)] = int(count)
    return out


@one_blas_thread
def fit_multiclass_csvm(
    X_train,
    y_train,
    X_anchor,
    y_anchor,
    n_classes: int,
    *,
    C: float = 1.0,
    kernel: str | Callable | Kernel = "linear",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 1.0,
    rank: int | None = None,
    min_counts: Mapping[int, int] | None = None,
    big_m: float | None = DEFAULT_BIG_M,
    sample_weight=None,
    solver: str = "auto",
    options: SolverOptions | None = None,
    warm_start: bool = True,
    class_names: Sequence[str] | None = None,
    budget: FitBudget | None = None,
) -> MulticlassFit:
    """Solve the multiclass CSVM on training sample I and anchor sample J.

    ``y_*`` are class positions ``0..n_classes-1``; ``min_counts`` maps a
    class position to the number of its anchor points that must be
    classified correctly with margin 1. ``big_m=None`` is the exact model
    (proven per-row constants, indicator constraints where none is proven).
    ``class_names`` label the classes in error messages. ``options.time_limit``
    bounds the whole call as in :func:`csvm_stats.optimization.engine.fit_csvm`
    (``budget``: the caller's running budget): the factorisation and
    scikit-learn's warm start run in a worker thread that the fit leaves at the
    limit (the warm start by WARM_START_SHARE of it: the solve then starts
    without it), and the solver gets the rest. Ctrl-C raises ``KeyboardInterrupt``.

    Raises :class:`InfeasibleConstraintsError`, :class:`NoSolutionError`,
    :class:`SolverError` or :class:`DataError`.
    """
    options = options or SolverOptions()
    if budget is not None:
        return _fit_multiclass(X_train, y_train, X_anchor, y_anchor, n_classes, C, kernel, gamma, degree, coef0, rank,
                               min_counts, big_m, sample_weight, solver, options, warm_start, class_names, budget)
    budget = FitBudget.of(options)
    with budget.interrupts():
        return _fit_multiclass(X_train, y_train, X_anchor, y_anchor, n_classes, C, kernel, gamma, degree, coef0, rank,
                               min_counts, big_m, sample_weight, solver, options, warm_start, class_names, budget)


def _fit_multiclass(X_train, y_train, X_anchor, y_anchor, n_classes, C, kernel, gamma, degree, coef0, rank,
                    min_counts, big_m, sample_weight, solver: str, options: SolverOptions, warm_start: bool,
                    class_names, budget: FitBudget) -> MulticlassFit:
    """:func:`fit_multiclass_csvm` on a running budget."""
    X_i, X_j, weight = check_fit_inputs(X_train, X_anchor, C=C, big_m=big_m, sample_weight=sample_weight)
    y_i = np.asarray(y_train, dtype=int)
    y_j = np.asarray(y_anchor, dtype=int) if X_j.shape[0] else np.empty(0, dtype=int)
    if y_i.shape != (X_i.shape[0],) or y_j.shape != (X_j.shape[0],):
        raise DataError("y_train and y_anchor must have one class position per row.")
    K = int(n_classes)
    if K < 2 or np.any((y_i < 0) | (y_i >= K)) or np.any((y_j < 0) | (y_j >= K)):
        raise DataError(f"labels must be class positions 0..{K - 1} with at least two classes.")
    missing = sorted(set(range(K)) - set(y_i.tolist()))
    if missing:
        raise DataError(f"the training sample has no point of class(es) {missing}; every class must occur in it.")
    counts = check_class_counts(min_counts or {}, y_j, K)

    with budget.running("kernel factorisation"):
        reference = np.vstack([X_i, X_j])
        kern = resolve_kernel(kernel, reference, gamma=gamma, degree=degree, coef0=coef0)
        fmap, phi = budget.require(factorise, kern, reference, rank, what="the kernel factorisation")
        phi_i, phi_j = phi[: X_i.shape[0]], phi[X_i.shape[0] :]
    anchor_index = constrained_anchor(y_j, counts)

    start: MulticlassStart | None = None
    with budget.running("warm start"):
        if warm_start:
            found = budget.call(partial(multiclass_start, phi_i, y_i, phi_j, y_j, K, C=C, weight=weight,
                                        min_counts=counts, anchor_index=anchor_index),
                                what="the warm start", deadline=budget.deadline(WARM_START_SHARE))
            start = None if found is ABANDONED else found
    with budget.running("model set-up"):
        build = dict(C=C, min_counts=counts, big_m=big_m, sample_weight=weight)
        if start is None:
            problem = build_multiclass_primal(phi_i, y_i, phi_j, y_j, K, **build)
        else:
            x0 = np.r_[multiclass_scale(K, phi.shape[1], start.objective) * start.W.ravel(), start.b, start.xi,
                       start.z]
            problem = build_multiclass_primal(phi_i, y_i, phi_j, y_j, K, start=x0, upper=start.objective, **build)
            if problem.miqp.max_violation(x0) > 1e-6 * max(1.0, start.objective):
                # the user's M is smaller than the start needs: solve without the start
                problem = build_multiclass_primal(phi_i, y_i, phi_j, y_j, K, **build)

    with budget.running("search"):
        solution = keep_start(solve(problem.miqp, solver, budget.solver_options(options)), problem.miqp, None)
    record = budget.stamp(replace(solution.record, exact=problem.exact))
    names = [str(k) for k in range(K)] if class_names is None else [str(c) for c in class_names]
    described = ", ".join(f"{names[k]!r}: {c} of {int(np.sum(y_j == k))} anchor points" for k, c in counts.items())
    hint = "relax a target or use an RBF kernel" if big_m is None else "raise big_m or use big_m=None"
    raise_for_status(record, f"{described} with margin 1", f"{kern.describe()} kernel, big_m={big_m}", hint)
    W, b, z = problem.read(solution.x)
    if kern.is_linear and fmap.reference is not None:  # back from the row-space factor to the columns
        W = (fmap.reference.T @ fmap.projection @ W.T).T
        fmap = linear_map(X_i.shape[1], fmap.rank, fmap.numerical_rank)
    return MulticlassFit(
        coef=W,
        intercept=b,
        feature_map=fmap,
        z=np.round(z),
        anchor_index=anchor_index,
        record=record,
        C=float(C),
        min_counts=counts,
        big_m=problem.big_m,
        warm_start_objective=None if start is None else start.objective,
    )
