"""Solver backends behind one protocol, a string-keyed registry and ``"auto"``.

Backends import their solver lazily, inside ``solve``; nothing probes every
solver at import time. ``"auto"`` means Gurobi when it is installed with a
licence that takes the model (a problem without binaries only in its MIQP
form), otherwise SCIP; a licence error during a Gurobi
solve falls back to SCIP with a :class:`SolverFallbackWarning`.
"""

from __future__ import annotations

import warnings
from functools import cache

from csvm_stats.exceptions import LicenseLimitError, SolverUnavailableError
from csvm_stats.problem import MIQP
from csvm_stats.solvers.base import Backend, Solution, SolveRecord, SolverOptions, Status
from csvm_stats.solvers.gurobi import GurobiBackend
from csvm_stats.solvers.highs import HighsBackend, is_linear
from csvm_stats.solvers.scip import ScipBackend

__all__ = [
    "Backend", "Solution", "SolveRecord", "SolverOptions", "Status",
    "SOLVERS", "SolverFallbackWarning", "get_backend", "solve",
]

SOLVERS: tuple[str, ...] = ("auto", "scip", "scip-tangents", "gurobi", "gurobi-miqp", "gurobi-oa", "highs")
SIZE_LIMITED_LINEAR = 2000  # variables or constraints the pip licence allows for a linear model
SIZE_LIMITED_QUADRATIC = 200  # variables it allows once the objective is quadratic
_size_limited_licence: list[bool] = []  # set once a licence error has been seen in this process


class SolverFallbackWarning(UserWarning):
    """``solver="auto"`` could not use Gurobi for this model and used HiGHS or SCIP."""


def get_backend(name: str) -> Backend:
    """The backend registered under ``name`` (``"auto"`` is resolved by :func:`solve`)."""
    if name == "scip":
        return ScipBackend("nonlinear")
    if name == "scip-tangents":
        return ScipBackend("tangents")
    if name == "gurobi":
        return GurobiBackend("auto")
    if name == "gurobi-miqp":
        return GurobiBackend("miqp")
    if name == "gurobi-oa":
        return GurobiBackend("oa")
    if name == "highs":
        return HighsBackend()
    raise ValueError(f"solver must be one of {SOLVERS}, got {name!r}.")


@cache
def gurobi_usable() -> bool:
    """Whether gurobipy imports and an environment starts (checked once per process)."""
    return GurobiBackend().available()


def solve(problem: MIQP, solver: str = "auto", options: SolverOptions | None = None) -> Solution:
    """Solve ``problem`` with the named backend, resolving ``"auto"``."""
    options = options or SolverOptions()
    if solver != "auto":
        backend = get_backend(solver)
        if not backend.available():
            raise SolverUnavailableError(
                f"solver {solver!r} is not available here (not installed or no licence); "
                "use solver='scip' (always installed) or solver='auto'."
            )
        return backend.solve(problem, options)
    too_big = _size_limited_licence and max(problem.n_vars, problem.n_rows) > SIZE_LIMITED_LINEAR
    # Without binaries the outer approximation is a cutting-plane loop over LPs,
    # slow to high accuracy (measured: 28 s against SCIP's 0.4 s on Wisconsin);
    # such a problem goes to Gurobi only when its MIQP fits the pip licence.
    continuous_and_large = problem.binary.size == 0 and problem.n_vars > SIZE_LIMITED_QUADRATIC
    if gurobi_usable() and not too_big and not continuous_and_large:
        try:
            return GurobiBackend("auto").solve(problem, options)
        except LicenseLimitError as err:
            _size_limited_licence.append(True)
            fallback = "HiGHS" if is_linear(problem) else "SCIP"
            warnings.warn(f"{err} Falling back to {fallback} for this model.", SolverFallbackWarning, stacklevel=2)
    return (HighsBackend() if is_linear(problem) else ScipBackend()).solve(problem, options)
