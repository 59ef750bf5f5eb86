r"""Fit one CSVM: data -> feature map -> warm start -> MIQP -> backend -> fit.

:func:`fit_csvm` is the array-level kernel of the library, with the checks
that keep its errors readable and nothing else, so that the model layer, the
bootstrap and the tuning loops can call it many times.

The problem solved is (``NOTES.md`` section 1)

.. math::

    \min\; w^\top w + C \sum_{i \in I} s_i \xi_i \quad \text{s.t.}\quad
    y_i (w^\top\phi(x_i) + b) \ge 1 - \xi_i,\;
    y_j (w^\top\phi(x_j) + b) \ge 1 - M_j (1 - z_j),\;
    \sum_{j \in J_c} z_j \ge k_c,

with :math:`\phi` the identity for the linear kernel and the factorised
feature map of :mod:`csvm_stats.optimization.kernels` otherwise. With J empty and no
constraint this is scikit-learn's ``SVC`` with ``C/2``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from csvm_stats.exceptions import DataError, InfeasibleConstraintsError, NoSolutionError, SolverError
from csvm_stats.optimization.blas import one_blas_thread
from csvm_stats.optimization.budget import FitBudget
from csvm_stats.optimization.direction_search import Closest
from csvm_stats.optimization.feasibility import check_counts
from csvm_stats.optimization.kernels import FeatureMap, Kernel, factorise, linear_map, resolve_kernel
from csvm_stats.optimization.problem import (
    MIQP, RATE_KINDS, RATE_NAMES, CSVMProblem, anchor_indicators, build_primal, constrained_anchor_points,
    rate_requirements,
)
from csvm_stats.optimization.solvers import Solution, SolveRecord, SolverOptions, Status, solve
from csvm_stats.optimization.solvers.base import UNRESOLVED_END
from csvm_stats.optimization.solvers._common import relative_gap
from csvm_stats.preprocessing.wording import option
from csvm_stats.optimization.warmstart import (
    WarmStart, chunk_work, gram_matrix, joint_count_start, shifted_intercept_start, svm_reference,
)

DEFAULT_BIG_M: float | None = None  # exact: proven per-point constants (see csvm_stats.optimization.problem)


@dataclass(frozen=True)
class CSVMFit:
    """A solved CSVM: ``f(x) = coef' phi(x) + intercept``, positive class when ``f >= 0``.

    ``z`` has one entry per anchor point; ``constrained_anchor`` lists the
    anchor points that some rate counts (the only ones in the MIQP) and
    ``big_m`` their constants ``M_j``.
    """

    coef: np.ndarray
    intercept: float
    feature_map: FeatureMap
    z: np.ndarray
    record: SolveRecord
    objective: float
    C: float
    min_counts: Mapping[str, int]
    big_m: np.ndarray = field(repr=False)
    constrained_anchor: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=int), repr=False)
    warm_start_objective: float | None = None

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """Decision values ``w' phi(x) + b`` for the rows of ``X``."""
        return self.feature_map.transform(X) @ self.coef + self.intercept

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Labels in {-1, +1} (``+1`` when the decision value is at least 0)."""
        return np.where(self.decision_function(X) >= 0.0, 1, -1)


def _as_matrix(X, name: str) -> np.ndarray:
    A = np.asarray(X, dtype=float)
    if A.ndim != 2:
        raise DataError(f"{name} must be a 2-d array (rows = observations), got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        rows = np.flatnonzero(~np.isfinite(A).all(axis=1))
        raise DataError(
            f"{name} has NaN or infinite values in {rows.size} row(s) (first: {rows[:5].tolist()}); "
            "impute or drop them before fitting."
        )
    return A


def _as_labels(y, n: int, name: str) -> np.ndarray:
    v = np.asarray(y)
    if v.shape != (n,):
        raise DataError(f"{name} must have one label per row ({n}), got shape {v.shape}.")
    if v.size and not np.isin(v, (-1, 1)).all():
        raise DataError(f"{name} must be coded -1/+1 at this level; got values {np.unique(v)[:5].tolist()}.")
    return v.astype(float)


def check_fit_inputs(X_train, X_anchor, *, C: float, big_m: float | None,
                     sample_weight) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The design matrices of I and J (finite, the same columns) and the training weights, checked with C and M.

    Shared by the binary and the multiclass engine; labels are checked by each (their codings differ).
    """
    X_i = _as_matrix(X_train, "X_train")
    X_j = _as_matrix(X_anchor, "X_anchor") if np.size(X_anchor) else np.empty((0, X_i.shape[1]))
    if X_j.shape[1] != X_i.shape[1]:
        raise DataError(f"X_anchor has {X_j.shape[1]} columns but X_train has {X_i.shape[1]}.")
    if not (np.isfinite(C) and C > 0):
        raise DataError(f"C must be a positive number, got {C!r}.")
    if big_m is not None and not big_m > 0:
        raise DataError(f"big_m must be positive or None, got {big_m!r}.")
    weight = np.ones(X_i.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if weight.shape != (X_i.shape[0],) or not np.all(np.isfinite(weight)) or np.any(weight <= 0):
        raise DataError("sample_weight must be positive and finite, one per training row.")
    return X_i, X_j, weight


WARM_START_SHARE = 0.4  # the warm start stops by this share of the whole fit's time limit (anytime)
REFERENCE_SHARE = 0.5  # the plain SVM on I (tightening and a lower bound) stops by this share
SEARCH_RESERVE_ROUNDS = 2  # the search ends this many SMO rounds before the limit: one in flight, one for the end


def raise_for_status(record: SolveRecord, described: str, model: str, hint: str) -> None:
    """Raise the readable error of a solve that found no classifier; return for a solution.

    ``described`` names the requirements, ``model`` the kernel and big-M, ``hint`` the fix for infeasibility.
    """
    if record.status is Status.INFEASIBLE:
        why = f": {record.reason}" if record.reason else f"; {hint}"  # a backend's reason names its own fix
        raise InfeasibleConstraintsError(f"no classifier meets {described} ({model}){why}.")
    if record.status is Status.NO_SOLUTION and record.reason == UNRESOLVED_END:
        raise NoSolutionError(
            f"the {record.backend} solver found no classifier that meets {described} in {record.wall_time:.1f} s "
            f"({record.cpu_time:.1f} CPU-s): {record.reason}. Try {option('solver', 'scip')}, or relax a target."
        )
    if record.status is Status.NO_SOLUTION:
        where = f" (the limit ran out during the {record.limit_phase})" if record.limit_phase else ""
        limit = (f"the time limit of {record.time_limit:g} s ({record.clock} clock, whole fit)" if record.clock
                 else "the time limit")
        closest = f" {record.reason[0].upper()}{record.reason[1:]}." if record.reason else ""
        raise NoSolutionError(
            f"the {record.backend} solver stopped after {record.wall_time:.1f} s ({record.cpu_time:.1f} CPU-s) "
            f"without finding a solution "
            f"that meets {described}: {limit} was reached{where}.{closest} Raise time_limit or relax a target."
        )
    if record.status is Status.ERROR:
        raise SolverError(f"the {record.backend} solver failed ({record.message}).")


def no_search(problem: MIQP) -> Solution:
    """The answer when the time limit ran out before the search: the problem's start, nothing proven (no solver ran;
    :func:`keep_start` adds the bound the fit has)."""
    record = SolveRecord(
        status=Status.TIME_LIMIT, objective=problem.objective(problem.start), best_bound=-math.inf, gap=math.inf,
        wall_time=0.0, cpu_time=0.0, nodes=0, backend="none", backend_version="",
        formulation="no search: the time limit ran out before it", message="the warm start is the classifier",
    )
    return Solution(record, problem.start)


def keep_start(solution: Solution, problem: MIQP, lower: float | None) -> Solution:
    """A solve stopped by the limit, completed from what the fit knows before the solver.

    Without a solution of its own (the limit ran out before the solver read the
    start) the problem's start is the incumbent (status ``TIME_LIMIT``); ``lower``,
    the plain SVM's dual value on I (every CSVM point is a point of that SVM, so
    it bounds the optimum from below), replaces a weaker reported bound.
    """
    record, x = solution.record, solution.x
    if record.status not in (Status.TIME_LIMIT, Status.NO_SOLUTION):
        return solution
    if x is None and problem.start is not None:
        x = problem.start
        record = replace(record, status=Status.TIME_LIMIT, objective=problem.objective(x))
    bound = record.best_bound
    if lower is not None and math.isfinite(lower) and not (math.isfinite(bound) and bound >= lower):
        bound = lower
    return Solution(replace(record, best_bound=bound, gap=relative_gap(record.objective, bound)), x)


def _counts_may_be_met(phi_anchor: np.ndarray, y_anchor: np.ndarray, requirements) -> bool:
    """Whether the counting certificate (:mod:`csvm_stats.optimization.feasibility`) leaves the requirements open."""
    none = np.zeros(y_anchor.shape[0], dtype=bool)
    return check_counts(phi_anchor, y_anchor, requirements, none, none).feasible is not False


def _anchor_sizes(y_anchor: np.ndarray) -> dict[str, int]:
    """How many anchor points each rate counts: positives, negatives, all."""
    return {"tpr": int((y_anchor > 0).sum()), "tnr": int((y_anchor < 0).sum()), "acc": int(y_anchor.size)}


def check_min_counts(min_counts: Mapping[str, int], y_anchor: np.ndarray) -> dict[str, int]:
    """Validate required anchor counts against the anchor sample's class sizes."""
    sizes = _anchor_sizes(y_anchor)
    out: dict[str, int] = {}
    for kind, count in min_counts.items():
        if kind not in RATE_KINDS:
            raise DataError(f"unknown rate constraint {kind!r}; use one of {RATE_KINDS}.")
        if sizes[kind] == 0:
            what = {"tpr": "positive", "tnr": "negative", "acc": ""}[kind]
            raise DataError(
                f"the anchor sample has no {what} points, so the {RATE_NAMES[kind]} constraint cannot be "
                "imposed; enlarge the anchor sample or stratify the split."
            )
        if not 0 <= int(count) <= sizes[kind]:
            raise DataError(f"the {RATE_NAMES[kind]} constraint asks for {count} of {sizes[kind]} anchor points.")
        out[kind] = int(count)
    return out


def _describe_constraints(min_counts: Mapping[str, int], y_anchor: np.ndarray) -> str:
    sizes = _anchor_sizes(y_anchor)
    return ", ".join(f"{RATE_NAMES[k]} >= {c}/{sizes[k]} anchor points" for k, c in min_counts.items())


@one_blas_thread
def fit_csvm(
    X_train,
    y_train,
    X_anchor,
    y_anchor,
    *,
    C: float = 1.0,
    kernel: str | Callable | Kernel = "linear",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 1.0,
    rank: int | None = None,
    min_counts: Mapping[str, int] | None = None,
    big_m: float | None = DEFAULT_BIG_M,
    sample_weight=None,
    solver: str = "auto",
    options: SolverOptions | None = None,
    warm_start: bool = True,
    budget: FitBudget | None = None,
) -> CSVMFit:
    """Solve the CSVM on training sample I and anchor sample J (module docstring).

    ``min_counts`` maps ``"tpr"``, ``"tnr"``, ``"acc"`` to the number of anchor
    points of the positive class, the negative class or all that must satisfy
    their margin constraint (see ``csvm_stats.inference.bounds.adjust_target``).
    ``big_m=None`` solves the exact model (proven per-point constants or
    indicator constraints), the default; a number M is the paper's big-M model,
    exact only when M is at least every proven bound (``fit.record.exact``).
    ``sample_weight`` gives training multiplicities. BLAS runs on one thread
    during the fit (:mod:`csvm_stats.optimization.blas`: on these sizes threaded OpenBLAS spends more CPU
    than it saves).

    ``options.time_limit`` bounds the whole call on ``options.clock``
    (:mod:`csvm_stats.optimization.budget`): the kernel factorisation, the warm
    start (anytime, stopped by WARM_START_SHARE of the limit), the plain SVM
    on I (by REFERENCE_SHARE; one short SMO round when that share is spent),
    the model's set-up and the search, which gets what is left less
    SEARCH_RESERVE_ROUNDS rounds of its SMO (their CPU measured on the warm
    start's rounds, scaled to the wall clock by the fit's wall seconds per CPU
    second: ``FitBudget.solver_options``).
    When no shifted SVM meets requirements that the counting certificate leaves
    open, ``csvm_stats.optimization.warmstart.joint_count_start`` searches
    directions for the counts; a fit that ends without a rule names the closest
    one it found (``record.reason``). ``budget`` is the caller's budget when this fit is part of a
    larger one (the model's ``fit``, the sparse routes). Ctrl-C raises
    ``KeyboardInterrupt`` naming the phase.

    Raises :class:`~csvm_stats.exceptions.InfeasibleConstraintsError`,
    :class:`~csvm_stats.exceptions.NoSolutionError` (stopped without any solution),
    :class:`~csvm_stats.exceptions.SolverError` or :class:`~csvm_stats.exceptions.DataError`.

    Parameters
    ----------
    X_train, y_train : numpy.ndarray
        Training sample I (standardised columns) and its -1/+1 labels.
    X_anchor, y_anchor : numpy.ndarray
        Anchor sample J and its labels.
    C : float, default 1.0
        Weight of the hinge loss.
    kernel : str, callable or Kernel, default "linear"
        The kernel.
    gamma : float or "scale", default "scale"
        RBF and polynomial kernel parameter.
    degree : int, default 3
        Polynomial degree.
    coef0 : float, default 1.0
        Polynomial kernel offset.
    rank : int or None
        Truncated kernel factorisation (``None``: exact).
    min_counts : mapping or None
        ``{"tpr"|"tnr"|"acc": required anchor count}``.
    big_m : float or None
        ``None``: the exact model; a number: the paper's big-M model.
    sample_weight : array-like or None
        Training multiplicities.
    solver : str, default "auto"
        Backend.
    options : SolverOptions or None
        Time limit, gap, threads, clock.
    warm_start : bool, default True
        Start from the shifted SVM.
    budget : FitBudget or None
        The caller's whole-fit budget (``csvm_stats.optimization.budget.FitBudget``)
        when this solve is one part of a larger fit; ``None`` starts a new one
        from ``options.time_limit`` and ``options.clock``.

    Returns
    -------
    CSVMFit
        Coefficients, intercept, feature map and the solve record.

    Raises
    ------
    csvm_stats.exceptions.InfeasibleConstraintsError
        No classifier meets the counts.
    csvm_stats.exceptions.NoSolutionError
        The solver stopped without any solution.
    csvm_stats.exceptions.SolverError
        The backend failed.
    csvm_stats.exceptions.DataError
        Invalid inputs.

    Examples
    --------
    >>> import numpy as np
    >>> from csvm_stats import fit_csvm
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 3)); y = np.where(X[:, 0] > 0, 1, -1)
    >>> fit = fit_csvm(X[:80], y[:80], X[80:], y[80:], min_counts={"tpr": int((y[80:] == 1).sum()) - 1})
    >>> fit.record.status.value
    'optimal'
    """
    options = options or SolverOptions()
    if budget is not None:
        return _fit_csvm(X_train, y_train, X_anchor, y_anchor, C, kernel, gamma, degree, coef0, rank, min_counts,
                         big_m, sample_weight, solver, options, warm_start, budget)
    budget = FitBudget.of(options)
    with budget.interrupts():
        return _fit_csvm(X_train, y_train, X_anchor, y_anchor, C, kernel, gamma, degree, coef0, rank, min_counts,
                         big_m, sample_weight, solver, options, warm_start, budget)


def _fit_csvm(X_train, y_train, X_anchor, y_anchor, C, kernel, gamma, degree, coef0, rank, min_counts, big_m,
              sample_weight, solver: str, options: SolverOptions, warm_start: bool, budget: FitBudget) -> CSVMFit:
    """:func:`fit_csvm` on a running budget."""
    X_i, X_j, weight = check_fit_inputs(X_train, X_anchor, C=C, big_m=big_m, sample_weight=sample_weight)
    y_i = _as_labels(y_train, X_i.shape[0], "y_train")
    y_j = _as_labels(y_anchor, X_j.shape[0], "y_anchor") if X_j.shape[0] else np.empty(0)
    if not ((y_i > 0).any() and (y_i < 0).any()):
        raise DataError("the training sample has only one class; a classifier needs both classes in it.")
    counts = check_min_counts(min_counts or {}, y_j)

    with budget.running("kernel factorisation"):
        reference = np.vstack([X_i, X_j])
        kern = resolve_kernel(kernel, reference, gamma=gamma, degree=degree, coef0=coef0)
        fmap, phi = budget.require(factorise, kern, reference, rank, what="the kernel factorisation")
        phi_i, phi_j = phi[: X_i.shape[0]], phi[X_i.shape[0] :]
        # one Gram matrix for every SVM fit (None for narrow rows: linear memory)
        gram = budget.require(gram_matrix, phi, what="the Gram matrix") if warm_start else None

    requirements = rate_requirements(y_j, counts)
    start: WarmStart | None = None
    closest: Closest | None = None  # the rule closest to the requirements, when no start meets them
    svm_ref = None
    with budget.running("warm start"):
        if warm_start:
            start = shifted_intercept_start(phi_i, y_i, phi_j, y_j, C=C, weight=weight, requirements=requirements,
                                            gram=gram, deadline=budget.deadline(WARM_START_SHARE))
            if start is None and requirements and _counts_may_be_met(phi_j, y_j, requirements):
                # no shifted SVM meets them, and the counting certificate does not rule them out (else the
                # search proves it at once and says why): search directions for the counts
                start, closest = joint_count_start(phi_i, y_i, phi_j, y_j, C=C, weight=weight,
                                                   requirements=requirements, gram=gram,
                                                   deadline=budget.deadline(WARM_START_SHARE))
            svm_ref = svm_reference(phi_i, y_i, C, weight, gram, deadline=budget.deadline(REFERENCE_SHARE))
    with budget.running("model set-up"):
        # Anchor points that no rate counts carry no constraint in the exact model
        # (z_j = 0 switches theirs off): they leave the MIQP.
        kept = constrained_anchor_points(requirements, y_j.size)
        phi_k, y_k = phi_j[kept], y_j[kept]
        x0 = upper = None
        if start is not None:
            x0 = np.r_[start.w, start.b, start.xi, start.z[kept]]
            upper = start.objective
        build = dict(C=C, min_counts=counts, big_m=big_m, sample_weight=weight, upper=upper,
                     reference=svm_ref if start is not None else None)
        problem: CSVMProblem = build_primal(phi_i, y_i, phi_k, y_k, start=x0, **build)
        if start is not None and problem.miqp.max_violation(x0) > 1e-6 * max(1.0, upper):
            # the user's M is smaller than the warm start needs: the start is not feasible for this
            # model, and its objective is no upper bound on the model's optimum (no tightening from it)
            problem = build_primal(phi_i, y_i, phi_k, y_k, **{**build, "upper": None, "reference": None})

    with budget.running("search"):
        if budget.expired() and problem.miqp.start is not None:
            solution = no_search(problem.miqp)  # not even the solver's set-up: the limit has run out
        else:
            rows = X_i.shape[0] + kept.size
            reserve = SEARCH_RESERVE_ROUNDS * budget.step_cost.round_cpu(chunk_work(rows, phi.shape[1]))
            solution = solve(problem.miqp, solver, budget.solver_options(options, reserve))
        solution = keep_start(solution, problem.miqp, None if svm_ref is None else svm_ref.dual)
        if solution.record.status in (Status.TIME_LIMIT, Status.NO_SOLUTION) and not solution.record.reason:
            budget.limit_phase = budget.limit_phase or "search"  # stopped at its share (the reserve is left)
    record = budget.stamp(replace(solution.record, exact=problem.exact))
    if record.status is Status.NO_SOLUTION and closest is not None and not record.reason:
        record = replace(record, reason=closest.describe())
    if record.status is Status.INFEASIBLE and closest is not None and not record.reason and closest.short > 0:
        record = replace(record, reason=f"the {record.backend} search proved that no hyperplane meets them; "
                                        f"{closest.describe(proven=True)}")
    hint = (
        "constraints on both classes can be infeasible for a linear kernel; relax a target, use an RBF kernel"
        if {"tpr", "tnr"} <= counts.keys() or "acc" in counts
        else "raise big_m or use big_m=None"
    )
    raise_for_status(record, _describe_constraints(counts, y_j), f"{kern.describe()} kernel, big_m={big_m}", hint)
    x = solution.x
    blocks = problem.miqp.blocks
    coef, b = x[blocks["w"]], float(x[blocks["b"]][0])
    if kern.is_linear and fmap.reference is not None:  # back from the factorised map to the columns
        coef = fmap.reference.T @ fmap.expansion_coefficients(coef)
        fmap = linear_map(X_i.shape[1], fmap.rank, fmap.numerical_rank)
    z = anchor_indicators(y_j * (phi_j @ x[blocks["w"]] + b), kept, x[blocks["z"]])
    return CSVMFit(
        coef=coef,
        intercept=b,
        feature_map=fmap,
        z=z,
        record=record,
        objective=record.objective,
        C=float(C),
        min_counts=counts,
        big_m=problem.big_m,
        constrained_anchor=kept,
        warm_start_objective=None if start is None else start.objective,
    )
