"""Backend ``"bnb"``: our own branch-and-bound, one entry point for every exact problem form.

The form decides the search: an exact multiclass CSVM (:attr:`MIQP.multiclass`)
goes to :class:`~csvm_stats.optimization.solvers.bnb_multiclass.MulticlassBnb`;
an exact cardinality CSVM (:attr:`MIQP.cardinality`) and the exact two-class
CSVM go to :class:`~csvm_stats.optimization.solvers.bnb_sparse.SparseBnbBackend`,
which searches over features for the first and hands the second to
:class:`~csvm_stats.optimization.solvers.bnb.BnbBackend` (branching over anchor
points).
"""

from __future__ import annotations

from csvm_stats.optimization.problem import MIQP
from csvm_stats.optimization.solvers.base import Solution, SolverOptions
from csvm_stats.optimization.solvers.bnb import BnbBackend
from csvm_stats.optimization.solvers.bnb_multiclass import MulticlassBnb
from csvm_stats.optimization.solvers.bnb_sparse import SparseBnbBackend


class BranchAndBound:
    """Backend ``"bnb"`` (module docstring)."""

    name = "bnb"

    def available(self) -> bool:
        return True

    def version(self) -> str:
        return BnbBackend().version()

    def solve(self, problem: MIQP, options: SolverOptions) -> Solution:
        if problem.multiclass is not None:
            return MulticlassBnb().solve(problem, options)
        return SparseBnbBackend().solve(problem, options)
