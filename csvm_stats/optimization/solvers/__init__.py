"""Solver backends behind one protocol, a string-keyed registry and ``"auto"``.

Backends import their solver lazily, inside ``solve``; nothing probes every
solver at import time. ``"bnb"`` is our own branch-and-bound on the exact
two-class CSVM, its cardinality form (``max_features``;
:mod:`~csvm_stats.optimization.solvers.bnb_sparse`), the exact multiclass
CSVM and the exact L1-norm CSVM (:mod:`~csvm_stats.optimization.solvers.bnb_l1`,
on request only). ``"auto"`` (:func:`_auto_chain`) tries, in order: bnb first for the
exact two-class and multiclass CSVM; then Gurobi when it is installed with a
licence that takes the model (a problem without binaries only in its MIQP
form; a cardinality model only when its MIQP with perspective cones fits);
then bnb for a cardinality model; then HiGHS for a linear model (the L1-norm
CSVM, a MILP); SCIP last. Any failure of a backend (an exception or an error
status) falls back to the next one with a :class:`SolverFallbackWarning`
naming it. New backends are added to ``_BACKENDS`` (and ``SOLVERS``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import cache

from csvm_stats.exceptions import LicenseLimitError, SolverUnavailableError, warn_at_caller
from csvm_stats.optimization.problem import MIQP
from csvm_stats.optimization.solvers.base import (
    UNRESOLVED_END, Backend, Solution, SolveRecord, SolverOptions, Status,
)
from csvm_stats.optimization.solvers.bnb import BnbBackend  # noqa: F401  (re-exported: tests patch the two-class search here)
from csvm_stats.optimization.solvers.bnb_backend import BranchAndBound
from csvm_stats.optimization.solvers.gurobi import MIQP_VARIABLES, GurobiBackend, outer_approximation_first
from csvm_stats.optimization.solvers.highs import HighsBackend, is_linear
from csvm_stats.optimization.solvers.scip import ScipBackend
from csvm_stats.preprocessing.wording import option

__all__ = [
    "Backend", "Solution", "SolveRecord", "SolverOptions", "Status",
    "SOLVERS", "SolverFallbackWarning", "get_backend", "solve",
]

SOLVERS: tuple[str, ...] = ("auto", "bnb", "scip", "scip-tangents", "gurobi", "gurobi-miqp", "gurobi-oa", "highs")
SIZE_LIMITED_LINEAR = 2000  # variables or constraints the pip licence allows for a linear model
SIZE_LIMITED_QUADRATIC = MIQP_VARIABLES  # variables it allows once the objective is quadratic
_size_limited_licence: list[bool] = []  # set once a licence error has been seen in this process


class SolverFallbackWarning(UserWarning):
    """``solver="auto"`` could not use a backend for this model and used the next one.

    The warning names the backend and why (not installed, a size-limited
    licence, a failure); the solve record's ``choice`` says what was used.

    Examples
    --------
    >>> from csvm_stats.optimization.solvers import SolverFallbackWarning
    >>> issubclass(SolverFallbackWarning, UserWarning)
    True
    """


_BACKENDS: dict[str, Callable[[], Backend]] = {
    "bnb": BranchAndBound,  # every exact form: two-class, cardinality (bnb_sparse), multiclass (bnb_multiclass)
    "scip": lambda: ScipBackend("nonlinear"),
    "scip-tangents": lambda: ScipBackend("tangents"),
    "gurobi": lambda: GurobiBackend("auto"),
    "gurobi-miqp": lambda: GurobiBackend("miqp"),
    "gurobi-oa": lambda: GurobiBackend("oa"),
    "highs": HighsBackend,
}
_LABELS = {"scip": "SCIP", "gurobi": "Gurobi", "highs": "HiGHS"}


def get_backend(name: str) -> Backend:
    """The backend registered under ``name`` (``"auto"`` is resolved by :func:`solve`)."""
    try:
        return _BACKENDS[name]()
    except KeyError:
        raise ValueError(f"solver must be one of {SOLVERS}, got {name!r}.") from None


@cache
def gurobi_usable() -> bool:
    """Whether gurobipy imports and an environment starts (checked once per process)."""
    return GurobiBackend().available()


@cache
def _licence_probed_size_limited() -> bool:
    """Whether Gurobi's licence refuses a linear model beyond SIZE_LIMITED_LINEAR variables (probed once per
    process, so that ``"auto"`` skips Gurobi for such models without a failed solve and a warning)."""
    try:
        return GurobiBackend().size_limited(SIZE_LIMITED_LINEAR + 1)
    except Exception:  # noqa: BLE001 - a probe that fails says nothing; a real solve's error is still caught
        return False


def size_limited_licence() -> bool:
    """Whether this process's Gurobi licence is size-limited: probed, or a licence error seen in a solve."""
    return bool(_size_limited_licence) or (gurobi_usable() and _licence_probed_size_limited())


def _auto_chain(problem: MIQP) -> list[tuple[str, str]]:
    """The backends ``"auto"`` tries, in order, each with the reason; the last is always SCIP.

    Measured in ``benchmarks/results/solve_time.md`` (CPU time, side by side):
    on the exact primal CSVM, bnb proves Wisconsin (linear and RBF at exact
    rank) optimal where SCIP and Gurobi stop at the time limit or take 10-100x
    longer, and closes more of the gap on synthetic problems; so bnb goes
    first there. Otherwise Gurobi when licensed for the model, HiGHS for a
    linear model, SCIP last; except for a cardinality form (perspective pairs,
    ``max_features``) that Gurobi would take by its linear outer approximation
    (more than SIZE_LIMITED_QUADRATIC variables, or its MIQP plus one cone
    variable per pair beyond a size-limited licence): there SCIP's perspective
    cones reached the smaller gap, or optimality sooner, on all three SRBCT
    splits (``benchmarks/results/sparse_srbct.md`` as of commit 5718cf3, 60
    CPU-s: gap 0.5% vs 15%, 11% vs 40%, optimal in 9.8 vs 14.3 CPU-s), so
    Gurobi is not tried. Gurobi's MIQP with perspective cones (models it takes
    whole) stays first: it met 1% on all three splits where SCIP met it on two
    (the current ``sparse_srbct.md``). After it, an exact cardinality CSVM
    (:attr:`MIQP.cardinality`) goes to bnb's search over features
    (:mod:`~csvm_stats.optimization.solvers.bnb_sparse`) before SCIP: on SRBCT
    with ``max_features=20`` (too large for the pip licence) it reached a smaller
    gap than SCIP on all three splits (``benchmarks/results/sparse_srbct_k20.md``).
    The exact multiclass CSVM goes to bnb first
    (:mod:`csvm_stats.optimization.solvers.bnb_multiclass`): on the multiclass
    studies of ``benchmarks/results/multiclass_solve_time.md`` it proves the
    optimum in less CPU time than SCIP and Gurobi, and on the routes
    benchmark's settings (which Gurobi's pip licence cannot take) it is compared
    with SCIP at a fixed limit there.
    The exact L1-norm CSVM (:attr:`MIQP.l1`, a MILP) keeps Gurobi, HiGHS, SCIP.
    bnb (:mod:`~csvm_stats.optimization.solvers.bnb_l1`) reached the smallest
    gap of all four on three hard 300 x 500 seeds (``benchmarks/results/l1_milp.md``),
    but on the default paths this choice drives (the L1 route, the cardinality
    route's gene ranking, stability selection's L1 base; SRBCT and the sparse
    simulation, ``benchmarks/results/l1_auto.md``) both backends proved the
    optimum and returned the same genes in every measured fit, and bnb took
    more CPU time in most of them, so HiGHS stays; ``solver="bnb"`` takes the form on request.
    """
    limited = size_limited_licence()
    too_big = limited and max(problem.n_vars, problem.n_rows) > SIZE_LIMITED_LINEAR
    # Without binaries the outer approximation is a cutting-plane loop over LPs,
    # slow to high accuracy (measured: 28 s against SCIP's 0.4 s on Wisconsin);
    # such a problem goes to Gurobi only when its MIQP fits the pip licence.
    continuous_and_large = problem.binary.size == 0 and problem.n_vars > SIZE_LIMITED_QUADRATIC
    cones = 0 if problem.perspective is None else len(problem.perspective)  # Gurobi's MIQP adds a t per pair
    cones_too_many = limited and problem.n_vars + cones > SIZE_LIMITED_QUADRATIC
    cardinality_by_oa = cones > 0 and (outer_approximation_first(problem) or cones_too_many)
    chain = []
    if problem.csvm is not None:
        chain.append(("bnb", "exact primal CSVM: our branch-and-bound, the fastest measured"))
    if problem.multiclass is not None:
        chain.append(("bnb", "exact multiclass CSVM: our branch-and-bound, the fastest measured"))
    usable = gurobi_usable()
    if usable and not too_big and not continuous_and_large and not cardinality_by_oa:
        chain.append(("gurobi", "Gurobi is licensed for this model"))
    if problem.cardinality is not None:
        chain.append(("bnb", "exact cardinality CSVM: our branch-and-bound over features (perspective relaxation), "
                             "a smaller gap than SCIP's in the SRBCT benchmark"))
    if is_linear(problem):
        chain.append(("highs", "a linear model"))
    if usable and cardinality_by_oa:
        return chain + [("scip", "a cardinality form too large for Gurobi's MIQP: SCIP's perspective cones "
                                 "beat Gurobi's outer approximation in the benchmark")]
    return chain + [("scip", "the open-source default")]


def _raise_if_interrupted(solution: Solution) -> Solution:
    """Ctrl-C stops a solver inside its own SIGINT handler; turn that back into ``KeyboardInterrupt``."""
    record = solution.record
    if record.status is Status.INTERRUPTED:
        raise KeyboardInterrupt(f"the {record.backend} solve was interrupted by the user after {record.wall_time:.1f} s")
    return solution


def solve(problem: MIQP, solver: str = "auto", options: SolverOptions | None = None) -> Solution:
    """Solve ``problem`` with the named backend, resolving ``"auto"``.

    ``"auto"`` tries the backends of :func:`_auto_chain` in order and moves to
    the next one, with a :class:`SolverFallbackWarning` naming the failed
    backend and its error, whenever a backend raises, reports
    :attr:`Status.ERROR`, or ends before its limit with no classifier and no
    proof that none exists (``reason`` :data:`~csvm_stats.optimization.solvers.base.UNRESOLVED_END`);
    each next backend gets the time the previous ones left. Only the last
    backend's failure reaches the caller.
    An interrupted solve (Ctrl-C) raises ``KeyboardInterrupt`` from every route.
    """
    options = options or SolverOptions()
    if solver != "auto":
        backend = get_backend(solver)
        if not backend.available():
            raise SolverUnavailableError(
                f"solver {solver!r} is not available here (not installed or no licence); "
                f"use {option('solver', 'scip')} (always installed) or {option('solver', 'auto')}."
            )
        return _raise_if_interrupted(backend.solve(problem, options))
    chain = _auto_chain(problem)
    failed: list[str] = []
    for (name, why), (fallback, _) in zip(chain, chain[1:]):
        try:
            solution = _raise_if_interrupted(get_backend(name).solve(problem, options))
        except Exception as err:  # noqa: BLE001 - any backend failure moves on (KeyboardInterrupt is no Exception)
            if isinstance(err, LicenseLimitError):
                _size_limited_licence.append(True)
            reason = f"{type(err).__name__}: {err}"
        else:
            record = solution.record
            unresolved = record.status is Status.NO_SOLUTION and record.reason == UNRESOLVED_END
            if record.status is not Status.ERROR and not unresolved:
                return _chosen(solution, name, why, failed)
            reason = record.reason if unresolved else f"status error: {record.message}"
            spent = record.cpu_time if options.clock == "cpu" else record.wall_time
            options = replace(options, time_limit=max(options.time_limit - spent, 0.0))
        failed.append(name)
        warn_at_caller(
            f"solver='auto': the {_LABELS.get(name, name)} backend failed ({reason}). "
            f"Falling back to {_LABELS.get(fallback, fallback)} for this model.",
            SolverFallbackWarning,
        )
    name, why = chain[-1]
    return _chosen(_raise_if_interrupted(get_backend(name).solve(problem, options)), name, why, failed)


def _chosen(solution: Solution, name: str, why: str, failed: list[str]) -> Solution:
    """Record what ``"auto"`` chose and why in the solve record (``choice``)."""
    after = f"; after {', '.join(failed)} failed" if failed else ""
    record = replace(solution.record, choice=f"auto: {name} ({why}{after})")
    return Solution(record, solution.x)
