r"""Feature selection inside the CSVM: the L1-norm route and the cardinality route.

Both are array-level kernels like :func:`csvm_stats.optimization.engine.fit_csvm` (linear
kernel, columns already standardised) and return a :class:`SparseFit`, a
:class:`~csvm_stats.optimization.engine.CSVMFit` whose ``coef`` has one entry per column.

**L1 route** (``penalty="l1"``): :func:`csvm_stats.optimization.problem.build_l1_primal`,

.. math::

    \min\; \|w\|_1 + C \sum_{i \in I} s_i \xi_i

under the CSVM's margin and rate constraints, a mixed-integer linear program
(HiGHS, SCIP or Gurobi). A feasible point gives valid big-M constants
(:func:`csvm_stats.optimization.tightening.l1_primal_bounds`): the paper's shifted-intercept
start (:mod:`csvm_stats.optimization.warmstart`), polished by the LP with its anchor
indicators fixed.

**Cardinality route** (``max_features=s``): the L2 CSVM with binary feature
indicators :math:`v_f`, :math:`|w_f| \le M_f v_f`, :math:`\sum_f v_f \le s`
(Benitez-Pena, Blanquero, Carrizosa and Ramirez-Cobo 2019), a MIQP built by
:func:`csvm_stats.optimization.problem.with_cardinality`. The features are *ranked* by the
L1 route: first its support by decreasing :math:`|w_f|`, then the remaining
columns by decreasing :math:`|w_f|` of the plain SVM direction of the warm
start. The *start* is the L2 CSVM on the s best-ranked columns, solved
exactly (:func:`csvm_stats.optimization.engine.fit_csvm`); its objective U gives the
:math:`M_f` by the tightening of :mod:`csvm_stats.optimization.tightening`, valid for every
solution at least as good as the start.

**Screening rule.** Only the K best-ranked columns enter the MIQP (``screen=K``;
default all columns when there are at most ``EXACT_UP_TO``, else
``max(SCREEN_FACTOR * s, SCREEN_MIN)``). *Exactness condition*: the result is
the optimum of the cardinality-constrained CSVM over all columns (to the
solver's gap) when K is the number of columns; with K smaller it is the
optimum over subsets of the K screened columns only, a heuristic for the full
problem, and :attr:`Screening.exact` is False (the results and the summary
say so). No safe screening rule is used: the L1 support need not contain the
best s-subset.

**Time limit.** ``options.time_limit`` bounds the whole route on its clock
(:class:`~csvm_stats.optimization.budget.FitBudget`, shared with the model's
``fit``): the cardinality route ranks the features within RANKING_SHARE of
what is left, solves its start within START_SHARE of what is then left, and
gives the MILP/MIQP the rest; each step keeps its best point when its part
runs out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from csvm_stats.optimization.budget import FitBudget
from csvm_stats.optimization.engine import WARM_START_SHARE, CSVMFit, check_min_counts, fit_csvm, keep_start
from csvm_stats.exceptions import DataError, InfeasibleConstraintsError, NoSolutionError, SolverError
from csvm_stats.optimization.kernels import linear_map
from csvm_stats.optimization.problem import (
    CSVMProblem,
    anchor_indicators,
    build_l1_primal,
    build_primal,
    constrained_anchor_points,
    rate_requirements,
    read_coefficients,
    with_cardinality,
)
from csvm_stats.optimization.solvers import SolverOptions, Status, solve
from csvm_stats.optimization.solvers.base import UNRESOLVED_END
from csvm_stats.preprocessing.validation import check_choice, check_integer
from csvm_stats.preprocessing.wording import current_front_end, option, option_name
from csvm_stats.optimization.warmstart import shifted_intercept_start, svm_reference

PENALTIES: tuple[str, ...] = ("l2", "l1")
EXACT_UP_TO = 60  # screen nothing up to this many columns
SCREEN_FACTOR = 5
SCREEN_MIN = 50
#: |w_f| below this (standardised scale) counts as zero: the solvers' feasibility tolerance.
ZERO_TOL = 1e-6
RANKING_SHARE = 0.25  # share of the time left that the cardinality route's feature ranking may use
START_SHARE = 0.25  # share of the time then left that its start (the L2 CSVM on the top columns) may use


@dataclass(frozen=True)
class Screening:
    """Which columns the cardinality MIQP saw: ``candidates`` (indices, best-ranked first)."""

    candidates: np.ndarray
    n_features: int
    rule: str

    @property
    def exact(self) -> bool:
        """True when no column was screened out (the result is exact to the gap)."""
        return self.candidates.size == self.n_features


@dataclass(frozen=True)
class SparseFit(CSVMFit):
    """A sparse CSVM fit: ``coef`` on all columns (zeros outside the selection)."""

    penalty: str = "l1"
    max_features: int | None = None
    screening: Screening | None = None

    @property
    def selected(self) -> np.ndarray:
        """Indices of the columns with a non-zero coefficient."""
        return np.flatnonzero(np.abs(self.coef) > ZERO_TOL)


def check_sparsity(penalty: str, max_features: int | None, n_features: int) -> None:
    """Validate ``penalty`` and ``max_features`` with messages naming the fix."""
    check_choice(penalty, "penalty", PENALTIES)
    if check_integer(max_features, "max_features", none=True) is None:
        return
    if penalty != "l2":
        raise DataError(f"{option_name('max_features')} is the cardinality route of the L2 CSVM; use it with "
                        f"{option('penalty', 'l2')}. It is not offered with {option('penalty', 'l1')}, whose C already "
                        "sets how many features are kept.")
    if max_features > n_features:
        raise DataError(f"{option('max_features', max_features)} exceeds the {n_features} columns; lower it"
                        f"{' or use None' if current_front_end() == 'python' else ''}.")


def _raise_for(record, what: str) -> None:
    """The readable error of a solve without a solution (``record``: its :class:`SolveRecord`)."""
    if record.status is Status.INFEASIBLE:
        why = f": {record.reason}" if record.reason else "; relax a target or raise C"
        raise InfeasibleConstraintsError(f"no {what} meets the rate constraints{why}.")
    if record.status is Status.NO_SOLUTION and record.reason == UNRESOLVED_END:
        raise NoSolutionError(f"the {record.backend} solver found no solution of the {what} in {record.wall_time:.1f} s "
                              f"({record.cpu_time:.1f} CPU-s): {record.reason}. Try {option('solver', 'scip')}, or "
                              "relax a target.")
    if record.status is Status.NO_SOLUTION:
        where = f", during the {record.limit_phase}" if record.limit_phase else ""
        limit = (f"the time limit of {record.time_limit:g} s ({record.clock} clock, whole fit)" if record.clock
                 else "the time limit")
        closest = f" {record.reason[0].upper()}{record.reason[1:]}." if record.reason else ""
        raise NoSolutionError(f"the {record.backend} solver stopped after {record.wall_time:.1f} s "
                              f"({record.cpu_time:.1f} CPU-s) without a solution of the {what} ({limit} was "
                              f"reached{where}).{closest} Raise the time limit or relax a target.")
    if record.status is Status.ERROR:
        raise SolverError(f"the {record.backend} solver failed on the {what} ({record.message}).")


def _l1_start(X_i, y_i, X_j, y_j, C, counts, weight, solver, options,
              budget: FitBudget) -> tuple[np.ndarray, float] | None:
    """A feasible point of the L1 CSVM and its objective (``None`` when the shift finds none).

    The shifted-intercept start's anchor indicators are fixed and the L1 LP
    solved with them: a feasible point at least as good as the start.
    """
    requirements = rate_requirements(y_j, counts)
    start = shifted_intercept_start(X_i, y_i, X_j, y_j, C=C, weight=weight, requirements=requirements,
                                    deadline=budget.deadline(WARM_START_SHARE))
    if start is None:
        return None
    x0 = np.r_[np.maximum(start.w, 0.0), np.maximum(-start.w, 0.0), start.b, start.xi, start.z]
    upper = float(np.abs(start.w).sum() + C * weight @ start.xi)
    problem = build_l1_primal(X_i, y_i, X_j, y_j, C=C, min_counts=counts, big_m=None, sample_weight=weight, upper=upper)
    z = problem.miqp.blocks["z"]
    lb, ub = problem.miqp.lb.copy(), problem.miqp.ub.copy()
    lb[z], ub[z] = start.z, start.z
    if np.any(lb > ub):  # the start's z contradicts a proven fixing (only through rounding)
        return x0, upper
    fixed = replace(problem.miqp, lb=lb, ub=ub, binary=np.arange(0), start=None, l1=None)  # an LP
    solution = solve(fixed, "highs" if solver in ("auto", "bnb") else solver, budget.solver_options(options))
    if solution.x is None or solution.record.objective >= upper:
        return x0, upper
    return solution.x, float(solution.record.objective)


def _given_start(X_i, y_i, X_j, y_j, C, counts, weight, start, l1: bool) -> tuple[np.ndarray, float, np.ndarray, np.ndarray] | None:
    """A caller's ``(w, b)`` as a feasible point: ``(w, xi, z, objective)``; ``None`` when it misses a count.

    Used by the regularisation path: the previous grid point's solution meets
    the same constraints, so it is a valid MIP start for the next one.
    """
    w, b = np.asarray(start[0], dtype=float), float(start[1])
    xi = np.maximum(0.0, 1.0 - y_i * (X_i @ w + b))
    z = (y_j * (X_j @ w + b) >= 1.0 - 1e-9).astype(float)
    for req in rate_requirements(y_j, counts):
        if z[req.members].sum() < req.count:
            return None
    penalty = np.abs(w).sum() if l1 else float(w @ w)
    return w, float(penalty + C * weight @ xi), xi, z


def _solve(problem: CSVMProblem, solver: str, options: SolverOptions, what: str, budget: FitBudget | None = None):
    """The route's last solve on what is left of ``budget`` (default: ``options``'s limit from now; the start is
    kept when the limit stops the solver first)."""
    budget = budget or FitBudget.of(options)
    with budget.running("search"):
        solution = keep_start(solve(problem.miqp, solver, budget.solver_options(options)), problem.miqp, None)
    record = budget.stamp(replace(solution.record, exact=problem.exact))
    _raise_for(record, what)
    return replace(solution, record=record)


def fit_l1_csvm(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_anchor: np.ndarray,
    y_anchor: np.ndarray,
    *,
    C: float = 1.0,
    min_counts: Mapping[str, int] | None = None,
    big_m: float | None = None,
    sample_weight: np.ndarray | None = None,
    solver: str = "auto",
    options: SolverOptions | None = None,
    warm_start: bool = True,
    start: tuple[np.ndarray, float] | None = None,
    budget: FitBudget | None = None,
) -> SparseFit:
    """The L1-norm CSVM (module docstring) on standardised columns.

    ``big_m=None`` (the default here) uses the proven constants of the warm
    start; a number caps them (removing solutions when it is below them).
    ``start`` = (w, b), e.g. the previous point of a path, is used as the
    start when it meets the constraints and beats the module's own start.
    """
    options = options or SolverOptions()
    budget = budget or FitBudget.of(options)
    weight = np.ones(X_train.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    counts = check_min_counts(min_counts or {}, y_anchor)
    found = None
    if warm_start:
        with budget.running("warm start"):
            found = _l1_start(X_train, y_train, X_anchor, y_anchor, C, counts, weight, solver, options, budget)
    x0, upper = found if found is not None else (None, None)
    given = None if start is None else _given_start(
        X_train, y_train, X_anchor, y_anchor, C, counts, weight, start, l1=True)
    if given is not None and (upper is None or given[1] < upper):
        w, upper, xi, z = given
        x0 = np.r_[np.maximum(w, 0.0), np.maximum(-w, 0.0), float(start[1]), xi, z]
    problem = build_l1_primal(
        X_train, y_train, X_anchor, y_anchor, C=C, min_counts=counts, big_m=big_m, sample_weight=weight,
        start=x0, upper=upper,
    )
    if x0 is not None and problem.miqp.max_violation(x0) > 1e-6 * max(1.0, upper):
        problem = build_l1_primal(  # the user's M is below what the start needs
            X_train, y_train, X_anchor, y_anchor, C=C, min_counts=counts, big_m=big_m, sample_weight=weight,
            upper=upper,
        )
    solution = _solve(problem, solver, options, "L1-norm CSVM", budget)
    x, blocks = solution.x, problem.miqp.blocks
    coef = read_coefficients(problem.miqp, x)
    return SparseFit(
        coef=np.where(np.abs(coef) > ZERO_TOL, coef, 0.0),
        intercept=float(x[blocks["b"]][0]),
        feature_map=linear_map(X_train.shape[1]),
        z=np.round(x[blocks["z"]]),
        record=solution.record,
        objective=solution.record.objective,
        C=float(C),
        min_counts=counts,
        big_m=problem.big_m,
        warm_start_objective=upper,
        penalty="l1",
    )


def feature_ranking(
    X_train, y_train, X_anchor, y_anchor, *, C, min_counts, sample_weight, solver, options,
    budget: FitBudget | None = None,
) -> np.ndarray:
    """All column indices, best first: the L1 route's support by |w|, then the rest by the SVM's |w|.

    Within ``budget`` (default: ``options``'s limit): the L1 route's MILP and the SVM stop with their best point.
    """
    budget = budget or FitBudget.of(options)
    l1 = fit_l1_csvm(
        X_train, y_train, X_anchor, y_anchor, C=C, min_counts=min_counts, sample_weight=sample_weight,
        solver=solver, options=options, budget=budget,
    )
    svm = svm_reference(np.vstack([X_train, X_anchor]), np.r_[y_train, y_anchor], C,
                        np.r_[sample_weight, np.ones(y_anchor.shape[0])], deadline=budget.deadline())
    key = np.where(np.abs(l1.coef) > ZERO_TOL, np.abs(l1.coef) + np.abs(svm.w).max() + 1.0, np.abs(svm.w))
    return np.argsort(-key, kind="stable")


def default_screen(max_features: int, n_features: int) -> int:
    """K of the screening rule (module docstring)."""
    if n_features <= EXACT_UP_TO:
        return n_features
    return min(n_features, max(SCREEN_FACTOR * max_features, SCREEN_MIN))


def fit_cardinality_csvm(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_anchor: np.ndarray,
    y_anchor: np.ndarray,
    *,
    max_features: int,
    C: float = 1.0,
    min_counts: Mapping[str, int] | None = None,
    sample_weight: np.ndarray | None = None,
    solver: str = "auto",
    options: SolverOptions | None = None,
    screen: int | None = None,
    start: tuple[np.ndarray, float] | None = None,
    budget: FitBudget | None = None,
) -> SparseFit:
    """The L2 CSVM with at most ``max_features`` non-zero coefficients (module docstring).

    ``start`` = (w, b) with at most ``max_features`` non-zeros (e.g. the
    path's previous point) joins the candidates with its support and is the
    start when it meets the constraints and beats the restricted fit.
    """
    options = options or SolverOptions()
    budget = budget or FitBudget.of(options)
    p = X_train.shape[1]
    check_sparsity("l2", max_features, p)
    weight = np.ones(X_train.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    counts = check_min_counts(min_counts or {}, y_anchor)
    K = default_screen(max_features, p) if screen is None else int(screen)
    if not max_features <= K:
        raise DataError(f"{option('screen', screen)} keeps fewer columns than "
                        f"{option('max_features', max_features)}; raise it.")
    K = min(K, p)
    with budget.running("feature ranking"):
        ranking = feature_ranking(  # with solver='bnb' the ranking MILP goes to 'auto' (see l1_auto.md)
            X_train, y_train, X_anchor, y_anchor, C=C, min_counts=counts, sample_weight=weight,
            solver="auto" if solver == "bnb" else solver,
            options=options, budget=budget.part(RANKING_SHARE),
        )
    given = None
    if start is not None and np.count_nonzero(start[0]) <= max_features:
        given = _given_start(X_train, y_train, X_anchor, y_anchor, C, counts, weight, start, l1=False)
    candidates = np.sort(ranking[:K])
    if given is not None:
        candidates = np.union1d(candidates, np.flatnonzero(given[0]))
        K = candidates.size
    rule = (
        "all columns (no screening)" if K == p
        else f"the {K} best-ranked of {p} columns (L1-CSVM support first, then |w| of the plain SVM)"
    )
    top = ranking[:max_features]
    try:
        with budget.running("warm start"):
            restricted = fit_csvm(
                X_train[:, top], y_train, X_anchor[:, top], y_anchor, C=C, min_counts=counts, big_m=None,
                sample_weight=weight, solver=solver, options=options, budget=budget.part(START_SHARE),
            )
    except InfeasibleConstraintsError as err:
        raise InfeasibleConstraintsError(
            f"no classifier on the {max_features} best-ranked columns meets the rate constraints, so the "
            f"cardinality route has no start; raise max_features or relax a target ({err})."
        ) from err
    Xc_i, Xc_j = X_train[:, candidates], X_anchor[:, candidates]
    w0 = np.zeros(K)
    w0[np.searchsorted(candidates, top)] = restricted.coef
    b0 = restricted.intercept
    xi0 = np.maximum(0.0, 1.0 - y_train * (Xc_i @ w0 + b0))
    z0 = restricted.z
    upper = float(w0 @ w0 + C * weight @ xi0)
    if given is not None and given[1] < upper:
        w0, upper, xi0, z0 = given[0][candidates], given[1], given[2], given[3]
        b0 = float(start[1])
    with budget.running("model set-up"):
        reference = svm_reference(Xc_i, y_train, C, weight, deadline=budget.part(0.5).deadline())
    # as in engine.fit_csvm: anchor points no rate counts carry no constraint and leave the MIQP
    kept = constrained_anchor_points(rate_requirements(y_anchor, counts), y_anchor.size)
    problem = build_primal(
        Xc_i, y_train, Xc_j[kept], y_anchor[kept], C=C, min_counts=counts, big_m=None, sample_weight=weight,
        start=np.r_[w0, b0, xi0, z0[kept]], upper=upper, reference=reference,
    )
    problem = with_cardinality(problem, max_features)
    solution = _solve(problem, solver, options, f"CSVM with at most {max_features} features", budget)
    x, blocks = solution.x, problem.miqp.blocks
    w = np.where(x[blocks["v"]] > 0.5, x[blocks["w"]], 0.0)
    intercept = float(x[blocks["b"]][0])
    z = anchor_indicators(y_anchor * (Xc_j @ w + intercept), kept, x[blocks["z"]])
    coef = np.zeros(p)
    coef[candidates] = w
    return SparseFit(
        coef=np.where(np.abs(coef) > ZERO_TOL, coef, 0.0),
        intercept=intercept,
        feature_map=linear_map(p),
        z=z,
        record=solution.record,
        objective=solution.record.objective,
        C=float(C),
        min_counts=counts,
        big_m=problem.big_m,
        constrained_anchor=kept,
        warm_start_objective=upper,
        penalty="l2",
        max_features=int(max_features),
        screening=Screening(candidates, p, rule),
    )


def fit_sparse_csvm(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_anchor: np.ndarray,
    y_anchor: np.ndarray,
    *,
    penalty: str = "l1",
    max_features: int | None = None,
    screen: int | None = None,
    C: float = 1.0,
    min_counts: Mapping[str, int] | None = None,
    big_m: float | None = None,
    sample_weight: np.ndarray | None = None,
    solver: str = "auto",
    options: SolverOptions | None = None,
    warm_start: bool = True,
    start: tuple[np.ndarray, float] | None = None,
    budget: FitBudget | None = None,
) -> SparseFit:
    """The route the arguments name: ``max_features`` -> cardinality, else ``penalty="l1"``.

    ``budget``: the caller's running time budget (default: a new one of ``options.time_limit``)."""
    check_sparsity(penalty, max_features, X_train.shape[1])
    if max_features is not None:
        return fit_cardinality_csvm(
            X_train, y_train, X_anchor, y_anchor, max_features=max_features, C=C, min_counts=min_counts,
            sample_weight=sample_weight, solver=solver, options=options, screen=screen, start=start, budget=budget,
        )
    if penalty != "l1":
        raise DataError("fit_sparse_csvm needs penalty='l1' or max_features; the plain CSVM is engine.fit_csvm.")
    return fit_l1_csvm(
        X_train, y_train, X_anchor, y_anchor, C=C, min_counts=min_counts, big_m=big_m,
        sample_weight=sample_weight, solver=solver, options=options, warm_start=warm_start, start=start,
        budget=budget,
    )
