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

*Peeling (requirements on both classes, accuracy).* A count over both
classes couples them: the best intercept of a node direction trades the
positives it meets against the negatives, and the node QPs leave the free
points out altogether, so their directions often meet far fewer than the
count (synthetic accuracy >= 0.8, n = 1000, seed 3: 407 of the 500 anchor
points on the right side of the root's hyperplane, 301 at margin 1, for a
count of 400). The peeling heuristic (:meth:`_PrimalHeuristics._peel`)
starts from a node (forced F, dropped D) with the must-meet set
:math:`M = J \setminus D` (F included) and solves the SVM on I with the
points of M as margin rows of box U (a soft version of D(M): a hard-margin QP
on a set that no hyperplane separates has no solution),

.. math::

    P_U(M) = \min_{w, b}\; w^\top w + C\sum_{i \in I} s_i \max(0, 1 - y_i f_i)
    + 2U \sum_{j \in M} \max(0, 1 - y_j f_j), \qquad f = w^\top\phi + b,

warm-started from the node's dual point (clipped to the box). Each round
offers its direction to the best intercept and scale (:meth:`shift_point`:
a point meeting every requirement, or nothing) and peels M: its points with
margin below 1, most violated first, at most PEEL_SHARE of M's surplus over
the counts (at least one), never taking a requirement below its count (a
trimmed hinge: the points the fit gives up on stop pulling it). It stops
when no point of M is violated (then :math:`P_U(M) = D(M)`), at the counts,
or after PEEL_ROUNDS rounds; the best point of the rounds then starts the
swap local search (:meth:`_local_search`, at most PEEL_SEARCH_SOLVES QPs),
whose moves solve exact node QPs D(M') with |M'| = the counts. U is in units
of the largest training box; no single U was best (n = 1000, root only,
seeds 0, 3, 12: U = 2 gave 171.8, 300.0, 248.4; U = 5 170.2, 305.2, 255.8; U
= 10 171.8, 270.4, 301.8; U = 20 171.8, 312.8, 292.6, against 171.8, 332.5,
318.7 from the warm start and its local search), so the root peels once with each
of PEEL_BOXES and the nodes take them in turn. Nodes peel on every
``peel_stride``-th solved node: the stride starts at PEEL_STRIDE, doubles
(up to MAX_PEEL_STRIDE) after PEEL_PATIENCE peels in a row that do not
improve the incumbent, and falls back when one does; and a node peels only
while the peeling QPs from nodes are at most PEEL_BUDGET times the search's
SVM solves (a guard: at n = 1000, seed 2, 20 CPU-s, the stride alone gave
31 peels, 1,509 peeling QPs against 24,096 SVM solves, 1.7 CPU-s; the
budget barely binds there). Counts, never time. The heuristic only offers feasible points; it never prunes.
"""

from __future__ import annotations

import math

import numpy as np

from csvm_stats.optimization.intercept_shift import best_shift
from csvm_stats.optimization.solvers.bnb_nodes import _Packed, _Relaxation
from csvm_stats.optimization.svm_dual import SVMDual
from csvm_stats.optimization.warmstart import SCALE_FACTORS

ONE_CLASS_FACTORS: tuple[float, ...] = (1.0, 1.5)  # scales of a node direction under TPR-only or TNR-only
MARGIN_TOL = 1e-9  # margin tolerance of an upper-bound point (as in the warm start)
LOCAL_SEARCH_SHARE = 0.1  # share of the time limit the primal local search may take
LOCAL_SEARCH_GAIN = 1e-6  # relative decrease of D(M) that counts as a local-search improvement
SHIFT_PATIENCE = 32  # node directions tried in a row without improving the incumbent before the stride doubles
MAX_SHIFT_STRIDE = 64  # the largest stride between two tried node directions
PEEL_BOXES = (2.0, 5.0, 10.0, 20.0)  # boxes of the must-meet rows of the peeling QP (in training boxes), in turn
PEEL_SHARE = 0.15  # share of the must-meet surplus (over the counts) peeled per round
PEEL_ROUNDS = 60  # peeling QPs per peel at most
PEEL_TOL = 1e-2  # KKT gap of a peeling QP (its direction is only offered to the intercept search)
PEEL_SEARCH_SOLVES = 60  # QPs of the local search from a peel's best point at most
PEEL_STRIDE = 64  # solved nodes between two peels at first
PEEL_PATIENCE = 2  # peels in a row without improving the incumbent before the peel stride doubles
MAX_PEEL_STRIDE = 4096  # the largest stride between two peels
PEEL_BUDGET = 0.05  # peeling QPs from nodes at most, per SVM solve of the search


class _PrimalHeuristics:
    """Upper bounds of a bnb search (module docstring); mixed into :class:`~csvm_stats.optimization.solvers.bnb._Search`,
    whose data, relaxations and clock they use."""

    shift_turn = 0  # solved nodes since the last tried node direction
    shift_stride = 1
    shift_misses = 0  # tried node directions in a row that did not improve the incumbent
    peeling = False  # some requirement counts both classes: peel (set by the search after its root)
    peel_turn = 0  # solved nodes since the last peel
    peel_stride = PEEL_STRIDE
    peel_misses = 0  # peels in a row that did not improve the incumbent
    peel_solves = 0  # peeling QPs solved
    peels = 0  # peels from nodes
    node_peel_solves = 0  # peeling QPs of the peels from nodes
    soft: SVMDual | None = None  # the peeling QP's solver (built at the first peel)

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
        found = self.shift_point(w, factors)
        return math.inf if found is None else found[0]

    def shift_point(self, w: np.ndarray, factors: tuple[float, ...] | None = None
                    ) -> tuple[float, np.ndarray, float] | None:
        """:meth:`shift`, returning the point ``(value, w, b)`` it offered (``None``: no scale and intercept meet
        the requirements)."""
        d = self.d
        if factors is None:
            one_class = {req.kind for req in d.requirements} in ({"tpr"}, {"tnr"})
            factors = ONE_CLASS_FACTORS if one_class else SCALE_FACTORS
        found = best_shift(w, self.phi_i, self.y_i, self.phi_j, self.y_j, d.C, d.weight, d.requirements, factors)
        if found is not None:
            self._offer(*found)
        return found

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
        alpha = _balanced(alpha, self.dual.y)
        kept = np.flatnonzero(alpha).astype(np.int32)
        return kept, alpha[kept]

    def _local_search(self, start: tuple[float, np.ndarray, float] | None = None, max_solves: int | None = None
                      ) -> None:
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

        ``start`` (a point ``(value, w, b)`` meeting the requirements) replaces the incumbent as the
        starting point, and ``max_solves`` caps the QPs (a restart from the peeling heuristic: a cap
        on counts, not time, keeps the search deterministic; it still stops at the time limit).
        """
        if all(count >= int((~self.dropped0[members]).sum()) for members, count in zip(self.members, self.counts)):
            return  # every point is needed: the model is one convex QP, which the root solves
        until = LOCAL_SEARCH_SHARE * self.options.time_limit if max_solves is None else self.options.time_limit
        if self.elapsed() >= until:
            return  # its share is spent (by the root itself on a large problem): its first solve would overrun
        n_i = self.phi_i.shape[0]
        last = self.svm_solves + (max_solves if max_solves is not None else 1 << 62)
        _, w, b = self.best if start is None else start
        forced = self._top_set(w, b)
        current = self.relax(forced, tol=self.tol)
        while current is not None:
            self.shift(current.w)
            alpha_j = current.alpha[n_i:]
            binding = np.flatnonzero(forced & ~self.forced0 & (alpha_j > 0))
            for s in binding[np.argsort(-alpha_j[binding], kind="stable")]:
                if self.elapsed() >= until or self.svm_solves >= last:
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

    # ---------------------------------------------------------------- peeling
    def couples_classes(self) -> bool:
        """Does some requirement count anchor points of both classes (accuracy)? Only then the search peels."""
        return any(np.unique(self.y_j[members]).size > 1 for members in self.members)

    def node_peel(self, forced: np.ndarray, dropped: np.ndarray, relaxation: _Relaxation) -> None:
        """Peel from a solved node when its turn has come (module docstring)."""
        self.peel_turn += 1
        if self.peel_turn < self.peel_stride:
            return
        self.peel_turn = 0
        if self.node_peel_solves > PEEL_BUDGET * self.svm_solves:
            return  # over its budget: wait for the search to catch up (not a miss)
        self.peels += 1
        solves = self.peel_solves
        improved = self._peel(forced, dropped, relaxation, PEEL_BOXES[self.peels % len(PEEL_BOXES)])
        self.node_peel_solves += self.peel_solves - solves
        if improved:
            self.peel_stride, self.peel_misses = PEEL_STRIDE, 0
            return
        self.peel_misses += 1
        if self.peel_misses >= PEEL_PATIENCE:
            self.peel_stride, self.peel_misses = min(2 * self.peel_stride, MAX_PEEL_STRIDE), 0

    def _soft_dual(self, box: float) -> SVMDual:
        """The peeling QP's solver: the search's stacked sample, anchor rows boxed at ``box`` training boxes."""
        n_i, n_j = self.phi_i.shape[0], self.phi_j.shape[0]
        if self.soft is None:  # built at the first peel, with each requirement's membership mask (_peel_some)
            self.member_of = [np.isin(np.arange(n_j), members) for members in self.members]
            self.soft = SVMDual(self.dual.phi, self.dual.y, self.dual.upper, self.dual.gram, self.tol)
        self.soft.upper = np.r_[self.dual.upper[:n_i], np.full(n_j, box * float(self.dual.upper[:n_i].max(initial=0.5)))]
        return self.soft

    def root_peel(self, relaxation: _Relaxation) -> None:
        """Peel from the root's relaxation once with each box of PEEL_BOXES."""
        for box in PEEL_BOXES:
            self._peel(self.forced0, self.dropped0, relaxation, box)

    def _peel(self, forced: np.ndarray, dropped: np.ndarray, relaxation: _Relaxation, box: float) -> bool:
        """The peeling heuristic from a node's relaxation (module docstring); ``True`` when it improved the
        incumbent. ``forced`` and ``dropped`` are the node's sets (not changed)."""
        soft = self._soft_dual(box)
        before = math.inf if self.best is None else self.best[0]
        n_i = self.phi_i.shape[0]
        keep = ~dropped
        path_best: tuple[float, np.ndarray, float] | None = None
        alpha = np.zeros(soft.y.shape[0])
        alpha[relaxation.packed[0]] = relaxation.packed[1]
        alpha = _balanced(np.minimum(alpha, soft.upper), soft.y)
        for _ in range(PEEL_ROUNDS):
            if self.elapsed() >= self.options.time_limit:
                break
            active = np.concatenate([self.train_rows, n_i + np.flatnonzero(keep)])
            sol = soft.solve(active, alpha, self.chunk, tol=PEEL_TOL)
            self.peel_solves += 1
            alpha = sol.alpha
            found = self.shift_point(sol.w)
            if found is not None and (path_best is None or found[0] < path_best[0]):
                path_best = found
            margins = self.y_j * (self.phi_j @ sol.w + sol.b)
            inside = np.flatnonzero(keep & ~self.forced0)
            violated = inside[margins[inside] < 1.0 - self.forced_tol]
            if violated.size == 0:
                break
            order = violated[np.argsort(margins[violated], kind="stable")]
            surplus = min(int(keep[members].sum()) - count for members, count in zip(self.members, self.counts))
            peeled = self._peel_some(keep, order, max(1, math.ceil(PEEL_SHARE * surplus)))
            if peeled.size == 0:
                break
            alpha = alpha.copy()
            alpha[n_i + peeled] = 0.0
            alpha = _balanced(alpha, soft.y)
        if path_best is not None:
            solves = self.svm_solves
            self._local_search(path_best, PEEL_SEARCH_SOLVES)
            self.peel_solves += self.svm_solves - solves
            self.svm_solves = solves
        return self.best is not None and self.best[0] < before

    def _peel_some(self, keep: np.ndarray, order: np.ndarray, most: int) -> np.ndarray:
        """Take up to ``most`` points of ``order`` (in order) out of ``keep`` (in place), never a point whose
        requirement would fall below its count; the points taken out."""
        surplus = [int(keep[members].sum()) - count for members, count in zip(self.members, self.counts)]
        taken = []
        for j in order:
            if len(taken) >= most:
                break
            needed = [k for k, members in enumerate(self.members) if self.member_of[k][j]]
            if any(surplus[k] <= 0 for k in needed):
                continue
            for k in needed:
                surplus[k] -= 1
            keep[j] = False
            taken.append(j)
        return np.asarray(taken, dtype=np.int64)


def _balanced(alpha: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``alpha`` with sum y alpha = 0 again (in place): the heavier class's alphas scaled down (they stay in
    their boxes)."""
    positive = y > 0
    pos, neg = alpha[positive].sum(), alpha[~positive].sum()
    alpha[positive if pos > neg else ~positive] *= min(pos, neg) / max(pos, neg, 1e-300)
    return alpha
