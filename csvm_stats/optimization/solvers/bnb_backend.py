"""Backend ``"bnb"``: our own branch-and-bound, one entry point for every exact problem form.

The form decides the search: an exact multiclass CSVM (:attr:`MIQP.multiclass`)
goes to :class:`~csvm_stats.optimization.solvers.bnb_multiclass.MulticlassBnb`;
an exact L1-norm CSVM (:attr:`MIQP.l1`, a MILP) to
:class:`~csvm_stats.optimization.solvers.bnb_l1.L1Bnb` (HiGHS LPs at the nodes);
an exact cardinality CSVM (:attr:`MIQP.cardinality`) to
:class:`~csvm_stats.optimization.solvers.bnb_sparse.SparseBnbBackend` (branching
over features too); any other cardinality form (a multiclass gene list, a big-M
form) is refused with the solvers that take it; the exact two-class CSVM goes to
:class:`~csvm_stats.optimization.solvers.bnb.BnbBackend` (branching over anchor
points).
"""

from __future__ import annotations

from csvm_stats.exceptions import SolverError
from csvm_stats.optimization.problem import MIQP
from csvm_stats.optimization.solvers.base import Solution, SolverOptions
from csvm_stats.optimization.solvers.bnb import BnbBackend
from csvm_stats.optimization.solvers.bnb_l1 import L1Bnb
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
        if problem.l1 is not None:
            return L1Bnb().solve(problem, options)
        if problem.cardinality is not None:
            return SparseBnbBackend().solve(problem, options)
        if problem.perspective is not None:
            raise SolverError("the bnb backend searches over features only for the two-class cardinality CSVM "
                              "in its exact L2 primal form (big_m=None); this model (a multiclass gene list, or "
                              "a big-M form) needs solver='scip' or solver='auto'.")
        return BnbBackend().solve(problem, options)
