r"""bnb's primal heuristics: the upper bounds of the branch-and-bound (:mod:`csvm_stats.optimization.solvers.bnb`).

*Upper bounds.* The direction w of nodes that are not pruned (and of the
root's single-anchor costs and leaves) with the best intercept for the
requirements (:mod:`csvm_stats.optimization.intercept_shift`: the objective is
convex and piecewise linear in b, each requirement's count a step function of
b; O(n log n) for accuracy too; the direction is also tried scaled up), the
warm start, and a local search from it before the root's costs
(:meth:`_PrimalHeuristics._local_search`: swaps of one binding anchor point).

*Which node directions are tried.* Every node's direction cost as much as
its SVM solve under an accuracy requirement (six scales, each an O(n log n)
intercept search: 12.5 of the 25 CPU-s of a 10 CPU-s search at n = 2000 under
cProfile), while on the variant grid (seed 27, n = 2000) the local search's
incumbent was not improved in the first 20 CPU-s of any of the four open
variants (later it can be: closer means 812.7 -> 805.0 by 60 CPU-s), and at
n = 1000 (p = 20) handing the search the optimum from the start saved 2% of
its SVM solves. So node
directions are tried on every ``stride``-th solved node: the stride starts at
1, doubles (up to MAX_SHIFT_STRIDE) after SHIFT_PATIENCE tries in a row that
do not improve the incumbent, and falls back to 1 when one does. Leaves, the
root, the root's costs and the local search always try theirs. The rule
counts nodes, never time, so the search stays deterministic; it only decides
which feasible points are looked at, never what is pruned.
"""

from __future__ import annotations

import math

import numpy as np

from csvm_stats.optimization.intercept_shift import best_shift
from csvm_stats.optimization.solvers.bnb_nodes import _Packed
from csvm_stats.optimization.warmstart import SCALE_FACTORS

ONE_CLASS_FACTORS: tuple[float, ...] = (1.0, 1.5)  # scales of a node direction under TPR-only or TNR-only
MARGIN_TOL = 1e-9  # margin tolerance of an upper-bound point (as in the warm start)
LOCAL_SEARCH_SHARE = 0.1  # share of the time limit the primal local search may take
LOCAL_SEARCH_GAIN = 1e-6  # relative decrease of D(M) that counts as a local-search improvement
SHIFT_PATIENCE = 32  # node directions tried in a row without improving the incumbent before the stride doubles
MAX_SHIFT_STRIDE = 64  # the largest stride between two tried node directions


class _PrimalHeuristics:
    """Upper bounds of a bnb search (module docstring); mixed into :class:`~csvm_stats.optimization.solvers.bnb._Search`,
    whose data, relaxations and clock they use."""

    shift_turn = 0  # solved nodes since the last tried node direction
    shift_stride = 1
    shift_misses = 0  # tried node directions in a row that did not improve the incumbent

    def node_shift(self, w: np.ndarray) -> None:
        """Try a solved node's direction when its turn has come (module docstring)."""
        self.shift_turn += 1
        if self.shift_turn < self.shift_stride:
            return
        self.shift_turn = 0
        before = math.inf if self.best is None else self.best[0]
        self.shift(w)
        if self.best is not None and self.best[0] < before:
            self.shift_stride, self.shift_misses = 1, 0
            return
        self.shift_misses += 1
        if self.shift_misses >= SHIFT_PATIENCE:
            self.shift_stride, self.shift_misses = min(2 * self.shift_stride, MAX_SHIFT_STRIDE), 0

    def shift(self, w: np.ndarray, factors: tuple[float, ...] | None = None) -> float:
        """Upper bound: the best intercept (and scale) for direction w; update the incumbent; its value.

        Default scales: SCALE_FACTORS when requirements on both classes may need a
        longer w to be met at all; else ONE_CLASS_FACTORS (an intercept alone meets
        them, and larger scales were measured never to win).
        """
        d = self.d
        if factors is None:
            one_class = {req.kind for req in d.requirements} in ({"tpr"}, {"tnr"})
            factors = ONE_CLASS_FACTORS if one_class else SCALE_FACTORS
        found = best_shift(w, self.phi_i, self.y_i, self.phi_j, self.y_j, d.C, d.weight, d.requirements, factors)
        if found is None:
            return math.inf
        self._offer(*found)
        return found[0]

    def _offer(self, value: float, w: np.ndarray, b: float) -> None:
        """Keep (w, b) when it meets every requirement and beats the incumbent."""
        margins = self.y_j * (self.phi_j @ w + b)
        for members, count in zip(self.members, self.counts):
            if int((margins[members] >= 1.0 - MARGIN_TOL).sum()) < count:
                return
        if self.best is None or value < self.best[0]:
            self.best = (value, w.copy(), float(b))

    def _seed(self, forced: np.ndarray) -> None:
        """Primal heuristic without a warm start: the counting certificate's side assignment as a forced set; when a
        hyperplane separates it (LP), its relaxation's direction meets the requirements (an incumbent)."""
        if not self._separable(np.flatnonzero(forced)):
            return
        relaxation = self.relax(forced, tol=self.tol)
        if relaxation is not None:
            self.shift(relaxation.w)

    def _top_set(self, w: np.ndarray, b: float) -> np.ndarray:
        """The root's forced points and, for each requirement, its ``count`` members of largest margin at (w, b)
        (never a point dropped at the root)."""
        margins = np.where(self.dropped0, -np.inf, self.y_j * (self.phi_j @ w + b))
        forced = self.forced0.copy()
        for members, count in zip(self.members, self.counts):
            forced[members[np.argsort(-margins[members], kind="stable")[:count]]] = True
        return forced

    def _without(self, point: _Packed, rows: np.ndarray) -> _Packed:
        """A dual point with ``rows`` set to zero, made feasible again (the heavier class's alphas scaled down:
        they stay in their boxes): a warm start for a forced set without those rows."""
        alpha = np.zeros(self.dual.y.shape[0])
        alpha[point[0]] = point[1]
        alpha[rows] = 0.0
        positive = self.dual.y > 0
        pos, neg = alpha[positive].sum(), alpha[~positive].sum()
        alpha[positive if pos > neg else ~positive] *= min(pos, neg) / max(pos, neg, 1e-300)
        kept = np.flatnonzero(alpha).astype(np.int32)
        return kept, alpha[kept]

    def _local_search(self) -> None:
        """Primal heuristic from the incumbent: swap one binding anchor point for the best-placed others.

        M is the top set (:meth:`_top_set`) of the incumbent and D(M) its relaxation, whose
        solution meets the requirements. A move leaves out one forced point s of M
        with alpha_s > 0 (largest first), solves D(M - s), takes the top set M' of that
        solution and solves D(M'); it is taken when D(M') < D(M) (first improvement),
        and the search stops when no move improves or at LOCAL_SEARCH_SHARE of the time
        limit. The direction of every accepted D(M) is offered as an upper bound (:meth:`shift`).
        With every point of every requirement needed (a target capped at the whole class)
        no swap exists and it does nothing.
        On the synthetic benchmark it takes the incumbent 377.9 to 362.8 (optimum 362.0) in 37 SVM
        solves at n = 2000, and 1138.4 to 1125.9 in 23 at n = 5000.
        """
        if all(count >= int((~self.dropped0[members]).sum()) for members, count in zip(self.members, self.counts)):
            return  # every point is needed: the model is one convex QP, which the root solves
        if self.elapsed() >= LOCAL_SEARCH_SHARE * self.options.time_limit:
            return  # its share is spent (by the root itself on a large problem): its first solve would overrun
        n_i = self.phi_i.shape[0]
        forced = self._top_set(self.best[1], self.best[2])
        current = self.relax(forced, tol=self.tol)
        while current is not None:
            self.shift(current.w)
            alpha_j = current.alpha[n_i:]
            binding = np.flatnonzero(forced & ~self.forced0 & (alpha_j > 0))
            for s in binding[np.argsort(-alpha_j[binding], kind="stable")]:
                if self.elapsed() >= LOCAL_SEARCH_SHARE * self.options.time_limit:
                    return
                fewer = forced.copy()
                fewer[s] = False
                step = self.relax(fewer, self._without(current.packed, n_i + np.array([s])), tol=self.tol)
                if step is None:
                    continue
                moved = self._top_set(step.w, step.b)
                candidate = self.relax(moved, self._without(step.packed, n_i + np.flatnonzero(fewer & ~moved)),
                                       tol=self.tol)
                if candidate is not None and candidate.dual < current.dual - LOCAL_SEARCH_GAIN * abs(current.dual):
                    forced, current = moved, candidate
                    break
            else:
                return
