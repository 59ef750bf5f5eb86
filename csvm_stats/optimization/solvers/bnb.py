r"""Backend ``"bnb"``: our own branch-and-bound over the anchor binaries of the exact CSVM.

A node splits the anchor points into *forced* F (:math:`z_j = 1`: the margin
constraint is hard), *dropped* (:math:`z_j = 0`: no constraint) and *free*.
Its relaxation drops the count constraints and the free points,

.. math::

    D(F) = \min_{w, b}\; w^\top w + C \sum_{i \in I} s_i \max(0, 1 - y_i(w^\top\phi_i + b))
    \quad\text{s.t.}\quad y_j(w^\top\phi_j + b) \ge 1 \ (j \in F),

an SVM on I plus F with F as hard margins. Its dual is solved by SMO
(:mod:`csvm_stats.optimization.svm_dual`), warm-started from the
parent's dual point; every dual-feasible point gives a valid lower bound
(weak duality), so the solve stops as soon as its bound prunes the node,
and inner nodes are solved to a loose KKT gap (LOOSE_TOL: a slightly weaker
bound in a third of the steps); a node whose solution meets the
requirements (a leaf) is solved again to the tight tolerance before it is
closed. An LP proves a forced set that no hyperplane separates infeasible (its dual is
unbounded).

*Lower bounds.* (1) :math:`D(F)`. (2) Single-anchor costs:
:math:`c_j = D(F_a \cup \{j\})` computed at an ancestor a bounds every node
below a that forces j (more constraints cost more). A requirement that still
needs r of the free points R needs a subset S of R with :math:`|S| \ge r`,
whose cost is at least :math:`\max_{j \in S} c_j`, hence at least the r-th
smallest :math:`c_j` over R. (3) A point with :math:`c_j` at or above the
incumbent is dropped (it cannot be in a better solution); a requirement left
with exactly r free points forces them all. (4) Nogoods (:class:`_Nogoods`):
a node pruned by its own relaxation's dual point :math:`\alpha` proves that
every node forcing :math:`N = \{j \in F: \alpha_j > 0\}` is pruned too; a
later node forcing N is pruned before its QP, and one forcing all of N but
one free point k drops k. On the synthetic n = 2000 benchmark they remove
42% of the node QPs (53,467 -> 30,824). (5) With a kernel at exact rank (Gram
mode), the additive bound (:mod:`csvm_stats.optimization.additive_bound`): the
(2) bound counts one point's cost, while with a local kernel the costs of the
r points add up; it bounds their sum from the node's dual point, for every
intercept. Paper-protocol australian fits, RBF C = 8: gamma = 32 proven with
320 SVM solves instead of 21,635 (1.3 vs 34.5 CPU-s), gamma = 2^-2 with 1,605
instead of 3,576. A search still open after DEEP_SEARCH_AFTER SVM solves
(Gram mode, :meth:`_Search._deepen`) adds two more: (6) the intercept
envelope (:mod:`csvm_stats.optimization.intercept_envelope`): the same sums
from dual points of the root's QP solved at a few fixed intercepts, which stay
tight where the optimum's intercept is far from the nodes' own; (7) orbits of
interchangeable anchor points (:mod:`csvm_stats.optimization.anchor_symmetry`:
isolated or duplicated points of one class), branched on in one order only,
at a proven slack that the prune level adds and the reported bound subtracts
(an optimal fit's gap can exceed ``mip_gap`` by it, at most about 1% of it).

*Upper bounds.* :mod:`csvm_stats.optimization.solvers.bnb_primal`: the best
intercept (and scale) of node directions, the warm start, a local search, and
under a requirement on both classes (accuracy) the peeling heuristic from the
root and from nodes on a stride.

*Infeasibility and ties.* Without a warm start (none met the requirements),
the counting certificate (:mod:`csvm_stats.optimization.feasibility`) runs
before the root: tied anchor points (identical feature rows) share a score, so
of each tie only one class can count; when no choice of sides meets the counts
the status is infeasible with the requirement that falls short and by how much
(``SolveRecord.reason``), and otherwise the chosen sides, if an LP separates
them, seed an incumbent. In the search a node that forces a point drops the
tied points of the other class (:meth:`_Search._drop_ties`).

*Search.* Best bound first with depth-first dives: a node whose solution
misses a requirement branches on the free point of that requirement with
the most violated margin; the dropped child has the same relaxation and is
processed at once (no SVM solve), the forced child waits with bound
:math:`\max(\text{bound}, c_j)`. Kernels come as the factorised feature map
(:mod:`csvm_stats.optimization.kernels`); with few columns the dual solver works on the
feature rows directly (no Gram matrix), so memory stays linear in n.

*Memory.* A waiting node keeps only what it adds to the root (its extra
forced and dropped anchor indices) and a reference to its parent's dual
point (nonzero rows and values; the forced children of one dive share it).
The dual points stored for waiting nodes hold at most DUAL_BUDGET_PER_ROW
entries per row of the stacked sample in all; beyond that budget a child is
warm-started from the point its parent started from (already stored: the
nearest stored ancestor's) or else the root's (feasible for every node, as
every node forces a superset of the root's points), which costs SMO steps,
never correctness.
"""

from __future__ import annotations

import heapq
import itertools
import math
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from scipy.optimize import linprog

from csvm_stats.exceptions import SolverError
from csvm_stats.optimization.problem import MIQP, CSVMData
from csvm_stats.optimization.solvers._common import Stopwatch, relative_gap
from csvm_stats.optimization.solvers.base import search_end, Solution, SolveRecord, SolverOptions, Status
from csvm_stats.optimization.solvers.bnb_nodes import _DualStore, _Node, _Nogoods, _Packed, _Relaxation, _scan_requirement
from csvm_stats.optimization.solvers.bnb_primal import MARGIN_TOL, _PrimalHeuristics
from csvm_stats.optimization.solvers.search_log import SearchLog
from csvm_stats.optimization.additive_bound import AdditiveBound, kernel_row_mass
from csvm_stats.optimization.anchor_symmetry import NO_ORBITS, SLACK_SHARE, find_orbits, propagate
from csvm_stats.optimization.feasibility import check_counts, tie_groups
from csvm_stats.optimization.intercept_envelope import InterceptEnvelope
from csvm_stats.optimization.svm_dual import SVMDual
from csvm_stats.optimization.warmstart import gram_matrix, smo_chunk

MIN_TOL = 1e-12  # the tightest KKT gap a leaf is solved to
LOOSE_TOL = 1e-2  # KKT gap of a node solve; a leaf is solved again to the tight tolerance
FORCED_TOL_FACTOR = 10.0  # a free margin >= 1 - factor * the dual solver's tolerance counts as met by a relaxation
CAP_TOL = 1e-3  # a forced margin below 1 - CAP_TOL: the relaxation's primal point is not trusted
ROOT_COST_SHARE = 0.3  # share of the time limit the root's single-anchor costs may take
DUAL_BUDGET_PER_ROW = 256  # dual entries that waiting nodes may keep in all, per row of the stacked sample
DEEP_SEARCH_AFTER = 200  # SVM solves before the orbits and the intercept envelope are set up (Gram mode; easy
# fits never pay for them)


class _Search(_PrimalHeuristics):
    """One branch-and-bound run on the data of an exact CSVM."""

    def __init__(self, data: CSVMData, problem: MIQP, options: SolverOptions, watch: Stopwatch) -> None:
        self.d, self.problem, self.options, self.watch = data, problem, options, watch
        self.phi_i, self.y_i = data.phi_train, data.y_train
        self.phi_j, self.y_j = data.phi_anchor, data.y_anchor
        self.cw = data.C * data.weight
        phi = np.vstack([self.phi_i, self.phi_j])
        upper = np.r_[self.cw / 2.0, np.full(self.phi_j.shape[0], np.inf)]  # forced anchor rows: hard margins
        self.tol = float(np.clip(options.mip_gap, 1e-9, 1e-5))  # the dual solver's KKT tolerance
        gram = gram_matrix(phi)
        self.dual = SVMDual(phi, np.r_[self.y_i, self.y_j], upper, gram, self.tol)
        self.chunk = smo_chunk(self.dual)  # SMO steps between two clock reads (a fraction of a CPU-second)
        self.train_rows = np.arange(self.phi_i.shape[0])
        self.forced_tol = FORCED_TOL_FACTOR * self.tol
        self.svm_solves = 0
        self.nodes = 0
        self.best: tuple[float, np.ndarray, float] | None = None  # objective, w, b
        self.closed_min = math.inf  # least bound of a node closed as solved or left unresolved
        self.pruned_min = math.inf  # least bound of a pruned node
        self.unresolved = False
        self.open_min = -math.inf  # least bound of an open node (nothing is proven before the root)
        self.counter = itertools.count()
        self.members = [np.ascontiguousarray(req.members, dtype=np.int64) for req in data.requirements]
        self.store = _DualStore(DUAL_BUDGET_PER_ROW * self.dual.y.shape[0])
        self.counts = [req.count for req in data.requirements]
        # the additive bound pays where kernel rows are local (an RBF kernel at exact rank, Gram mode); with
        # few feature columns (the linear kernel) every row's kernel mass dwarfs its diagonal and it cannot
        self.additive = None if gram is None else AdditiveBound(
            phi, self.dual.y, upper, kernel_row_mass(gram), self.phi_i.shape[0], self.members)
        self.interrupted = False  # set by Ctrl-C (_sigint_sets_flag)
        self.log = SearchLog(options, "branch-and-bound over anchor points")
        self.nogoods = _Nogoods()
        self.phi, self.gram = phi, gram
        self.orbits = NO_ORBITS  # interchangeable anchor points (Gram mode; found after the root's costs)
        self.orbit_of = np.full(self.phi_j.shape[0], -1, dtype=np.int64)
        self.envelope: InterceptEnvelope | None = None  # fixed-intercept points of the root (Gram mode, lazily)
        self.reason = ""  # why the requirements cannot be met (the counting certificate), when it proves so
        # tie groups of the anchor points (identical feature rows), kept when some group holds both classes
        groups = tie_groups(self.phi_j)
        self.n_ties = int(groups.max(initial=-1)) + 1
        both = (np.bincount(groups[self.y_j > 0], minlength=self.n_ties) > 0) & (
            np.bincount(groups[self.y_j < 0], minlength=self.n_ties) > 0)
        self.tie_group = groups if both.any() else None

    def elapsed(self) -> float:
        """Seconds on the clock that the time limit counts (wall or this process's CPU).

        Every loop of the search reads it, so it is also where Ctrl-C surfaces: it raises
        ``KeyboardInterrupt`` once :func:`_sigint_sets_flag` has set ``interrupted``.
        """
        if self.interrupted:
            raise KeyboardInterrupt
        return self.watch.charged(self.options.clock)

    # ---------------------------------------------------------------- bounds
    def prune_level(self) -> float:
        """A node whose bound reaches this is pruned: the incumbent less the optimality gap, plus the orbits' slack
        (which :meth:`lower_bound` subtracts)."""
        if self.best is None:
            return math.inf
        return self.best[0] - self.options.mip_gap * abs(self.best[0]) + self.orbits.slack_at(self.best[0])

    def objective(self, w: np.ndarray, b: float) -> float:
        return float(w @ w + self.cw @ np.maximum(0.0, 1.0 - self.y_i * (self.phi_i @ w + b)))

    def relax(self, forced: np.ndarray, start: tuple[np.ndarray, np.ndarray] | None = None,
              stop_value: float = math.inf, tol: float = LOOSE_TOL) -> _Relaxation | None:
        """D(F) by warm-started SMO; ``None`` when no hyperplane meets every forced margin.

        ``start`` is a dual point of an ancestor (its nonzero rows and values);
        the solve stops early once its bound reaches ``stop_value``, or at KKT gap ``tol``
        (the bound is valid at any tolerance, a loose one only weaker).
        """
        idx = np.flatnonzero(forced)
        active = np.concatenate([self.train_rows, self.phi_i.shape[0] + idx])
        alpha = None
        if start is not None:
            alpha = np.zeros(self.dual.y.shape[0])
            alpha[start[0]] = start[1]
        self.svm_solves += 1
        checked = False
        while True:
            sol = self.dual.solve(active, alpha, self.chunk, stop_value, tol)
            alpha = sol.alpha
            if sol.converged or sol.bound >= stop_value:
                break
            if sol.steps < self.chunk:  # stopped at stop_value by the solver's running value, short of the bound
                stop_value = math.inf
                continue
            if not checked:  # a dual that keeps growing: is the forced set separable at all?
                if not self._separable(idx):
                    return None
                checked = True
            if self.elapsed() >= self.options.time_limit:
                break
        margins = self.y_j[idx] * (self.phi_j[idx] @ sol.w + sol.b)
        met = sol.converged and (margins.size == 0 or margins.min() >= 1.0 - CAP_TOL)
        return _Relaxation(sol.w, sol.b, sol.bound, met, alpha, tol)

    def _separable(self, idx: np.ndarray) -> bool:
        """LP: is there (w, b) with y_j (w'phi_j + b) >= 1 for every j in idx?"""
        A = -self.y_j[idx, None] * np.hstack([self.phi_j[idx], np.ones((idx.size, 1))])
        res = linprog(np.zeros(A.shape[1]), A_ub=A, b_ub=-np.ones(idx.size), bounds=(None, None), method="highs")
        return res.status != 2  # 2: infeasible

    # ---------------------------------------------------------------- search
    def run(self) -> Status:
        n_j = self.phi_j.shape[0]
        z = self.problem.blocks["z"]
        self.forced0 = self.problem.lb[z] > 0.5  # proven to hold for every solution at least as good as the start
        self.dropped0 = self.problem.ub[z] < 0.5  # proven never to hold
        start = self.problem.start
        if start is not None:
            w0 = start[self.problem.blocks["w"]]
            self._offer(self.objective(w0, float(start[self.problem.blocks["b"]][0])), w0,
                        float(start[self.problem.blocks["b"]][0]))
        if self.elapsed() >= self.options.time_limit:
            return Status.TIME_LIMIT
        if self.best is None:  # no warm start: can the counts be met at all? (feasibility.check_counts)
            check = check_counts(self.phi_j, self.y_j, self.d.requirements, self.forced0, self.dropped0)
            if check.feasible is False:
                self.reason = check.reason
                return Status.INFEASIBLE
            if check.forced is not None:
                self._seed(check.forced)
        if self.elapsed() >= self.options.time_limit:
            return Status.TIME_LIMIT
        root = self.relax(self.forced0, tol=self.tol)
        self.nodes += 1
        if root is None:
            return Status.INFEASIBLE
        self.root_start = root.packed
        self.root = root
        self.open_min = root.dual
        self.shift(root.w)
        self.shift(np.zeros_like(root.w), factors=(1.0,))  # the constant rule: optimal when no direction pays
        if self.best is not None and root.dual < self.prune_level():  # else the root proves the incumbent optimal
            self._local_search()
        self.peeling = self.couples_classes()
        if self.peeling and (self.best is None or root.dual < self.prune_level()):
            self.root_peel(root)
        self.cost = np.full(n_j, root.dual)
        self._root_costs(self.forced0, self.dropped0, root)
        heap: list[_Node] = []
        self._process(self.forced0.copy(), self.dropped0.copy(), root.dual, root, heap)
        while heap:
            self.open_min = heap[0].bound
            now = self.elapsed()
            if now >= self.options.time_limit:
                return Status.TIME_LIMIT
            if self.log.due(now):
                self.log.row(now, self.nodes, len(heap), None if self.best is None else self.best[0],
                             self.lower_bound())
            if (self.envelope is None and self.additive is not None and self.best is not None
                    and self.svm_solves >= DEEP_SEARCH_AFTER):
                self._deepen()
            node = heapq.heappop(heap)
            if node.bound >= self.prune_level():
                self.pruned_min = min(self.pruned_min, node.bound)
            else:
                self._solve(node, heap)
            self.store.release(node.start)
        self.open_min = math.inf
        return Status.OPTIMAL

    def _deepen(self) -> None:
        """A search that did not close early (Gram mode, with an incumbent): orbits of interchangeable anchor points
        (:mod:`~csvm_stats.optimization.anchor_symmetry`; nodes processed from now on keep each orbit's order: every
        forced set still has its orbit image in the search, so the bound stays valid less the slack) and the
        intercept envelope (:mod:`~csvm_stats.optimization.intercept_envelope`). The incumbent only falls, so the
        orbits' slack, proven for sets that can beat today's incumbent, holds for the rest of the search."""
        self.orbits = find_orbits(self.gram, self.phi, self.dual.y, self.cw, self.phi_i.shape[0], self.members,
                                  ~self.forced0 & ~self.dropped0, self.best[0],
                                  SLACK_SHARE * self.options.mip_gap * abs(self.best[0]))
        self.orbit_of = self.orbits.orbit_of(self.phi_j.shape[0])
        self.envelope = InterceptEnvelope.build(self.additive, self.gram, self.root.alpha, self.root.b, self.best[2],
                                                self.forced0, self.dropped0, self.counts, self.prune_level())

    def _solve(self, node: _Node, heap: list[_Node]) -> None:
        """Solve a waiting node's relaxation, warm-started from its stored dual point, and branch on it."""
        forced, dropped = self.forced0.copy(), self.dropped0.copy()
        forced[node.forced], dropped[node.dropped] = True, True
        value, drop_value = self.nogoods.scan(forced, dropped)
        self.pruned_min = min(self.pruned_min, max(drop_value, node.bound))  # the sides forcing what it drops
        if value > -math.inf:
            self.pruned_min = min(self.pruned_min, max(value, node.bound))
            return
        if not self._break_symmetry(forced, dropped):
            return
        relaxation = self.relax(forced, self.root_start if node.start is None else node.start, self.prune_level())
        self.nodes += 1
        if relaxation is not None:
            if relaxation.dual < self.prune_level():  # pruned nodes: n = 2000 ran the same tree without them
                self.node_shift(relaxation.w)
                if self.peeling:
                    self.node_peel(forced, dropped, relaxation)
            self._process(forced, dropped, node.bound, relaxation, heap, node.start)

    def lower_bound(self) -> float:
        """The least bound over open, closed and pruned nodes (capped by the incumbent), less the orbits' slack."""
        values = [self.open_min, self.closed_min, self.pruned_min]
        if self.best is None:
            return min(values)
        return min(values + [self.best[0]]) - self.orbits.slack_at(self.best[0])

    def _break_symmetry(self, forced: np.ndarray, dropped: np.ndarray) -> bool:
        """Each orbit's part of a node made a prefix (:func:`propagate`, in place); ``False``: the node holds
        no forced set that keeps the orbits' order (no record: the search covers its sets' images)."""
        return self.orbits.count == 0 or propagate(forced, dropped, self.orbits.elems, self.orbits.starts,
                                                   self.orbits.count)

    def _drop_ties(self, forced: np.ndarray, dropped: np.ndarray) -> bool:
        """Drop (in place) the anchor points tied with a forced point of the other class: identical feature rows
        share a score, and f >= 1 excludes f <= -1. ``False``: the node forces both classes of one tie (no
        hyperplane meets its forced margins)."""
        if self.tie_group is None:
            return True
        g, positive = self.tie_group, self.y_j > 0
        forced_pos = np.zeros(self.n_ties, dtype=bool)
        forced_neg = np.zeros(self.n_ties, dtype=bool)
        forced_pos[g[forced & positive]] = True
        forced_neg[g[forced & ~positive]] = True
        if (forced_pos & forced_neg).any():
            return False
        dropped |= np.where(positive, forced_neg[g], forced_pos[g])
        return True

    def _branch_point(self, j: int, forced: np.ndarray, dropped: np.ndarray) -> int:
        """The free point to branch on instead of j: the last free member of j's orbit (forcing it forces the
        orbit's free members, dropping it drops nothing else), or j itself."""
        o = self.orbit_of[j]
        if o < 0:
            return j
        orbit = self.orbits.elems[self.orbits.starts[o]:self.orbits.starts[o + 1]]
        free = orbit[~forced[orbit] & ~dropped[orbit]]
        return int(free[-1])

    def _root_costs(self, forced: np.ndarray, dropped: np.ndarray, root: _Relaxation) -> None:
        """Single-anchor costs of the hardest free points of each requirement (module docstring)."""
        margins = self.y_j * (self.phi_j @ root.w + root.b)
        for members, count in zip(self.members, self.counts):
            free = members[~forced[members] & ~dropped[members]]
            need = count - int(forced[members].sum())
            if need <= 0:
                continue
            hard = free[np.argsort(margins[free])][: min(free.size, 2 * (free.size - need) + 10)]
            for j in hard[margins[hard] < 1.0 - self.forced_tol]:
                if self.elapsed() >= ROOT_COST_SHARE * self.options.time_limit:
                    return
                one = forced.copy()
                one[j] = True
                relaxation = self.relax(one, root.packed, self.prune_level())
                self.cost[j] = math.inf if relaxation is None else relaxation.dual
                if relaxation is not None:
                    self.shift(relaxation.w)

    def _count_bound(self, forced: np.ndarray, dropped: np.ndarray) -> float:
        """The single-cost bound of a node (:meth:`_scan`)."""
        return self._scan(forced, dropped)[0]

    def _scan(self, forced: np.ndarray, dropped: np.ndarray, margins: np.ndarray | None = None,
              met_level: float = math.inf) -> tuple[float, list[tuple[int, int, float, int, int]]]:
        """The single-cost bound of a node and :func:`_scan_requirement` of each requirement.

        The bound is every forced point's cost, and for each requirement that still needs r of
        its free points, the r-th smallest of their costs (``inf``: it cannot be met). Without
        ``margins`` no free point counts as met.
        """
        margins = self.cost if margins is None else margins
        rows = [_scan_requirement(members, forced, dropped, self.cost, count, margins, met_level)
                for members, count in zip(self.members, self.counts)]
        bound = float(self.cost[forced].max(initial=-math.inf))
        for need, n_free, kth, _, _ in rows:
            if need > n_free:
                return math.inf, rows
            bound = max(bound, kth)
        return bound, rows

    def _process(self, forced: np.ndarray, dropped: np.ndarray, bound: float, relaxation: _Relaxation,
                 heap: list[_Node], origin: _Packed | None = None) -> None:
        """Branch on a solved node (its sets, bound and relaxation) and dive through its dropped children.

        ``origin`` is the stored dual point the node was warm-started from (``None``: the root's).
        """
        bound = max(bound, relaxation.dual)
        if relaxation.dual >= self.prune_level():  # a nogood: its forced rows with alpha > 0
            support = relaxation.alpha[self.phi_i.shape[0]:] > 0
            self.nogoods.add(np.flatnonzero(forced & ~self.forced0 & support), relaxation.dual)
            self.pruned_min = min(self.pruned_min, bound)
            return
        margins = self.y_j * (self.phi_j @ relaxation.w + relaxation.b)
        while True:
            level = self.prune_level()
            fixed = ~forced & ~dropped & (self.cost >= level)  # reduced-cost fixing: the side forcing j is pruned
            if fixed.any():
                self.pruned_min = min(self.pruned_min, max(bound, float(self.cost[fixed].min())))
                dropped |= fixed
            kept = forced.copy()
            if not self._break_symmetry(kept, dropped):
                return
            if (kept != forced).any():  # the orbits force more: a node of its own
                self._push(heap, bound, kept, dropped, relaxation, origin)
                return
            count_bound, rows = self._scan(forced, dropped, margins, 1.0 - FORCED_TOL_FACTOR * relaxation.tol)
            bound = max(bound, count_bound)
            if self.additive is not None and bound < level:
                bound = max(bound, self.additive(relaxation.alpha, relaxation.b, forced, dropped, self.counts, level))
            if self.envelope is not None and bound < level:
                bound = max(bound, self.envelope(forced, dropped, self.counts, level))
            if bound >= level:
                self.pruned_min = min(self.pruned_min, bound)
                return
            force_all = np.zeros_like(forced)
            deficit, j = 0, -1  # the largest deficit of met free points and its worst free point
            for members, (need, n_free, _, n_met, worst) in zip(self.members, rows):
                if need > 0 and need == n_free:
                    force_all[members[~forced[members] & ~dropped[members]]] = True
                if need - n_met > deficit:
                    deficit, j = need - n_met, worst
            if force_all.any():
                self._push(heap, bound, forced | force_all, dropped, relaxation, origin)
                return
            if deficit == 0 and relaxation.tol > self.tol:  # a leaf: solve it to the tight tolerance
                relaxation = self.relax(forced, relaxation.packed, level, self.tol)
                if relaxation is None:
                    return
                bound = max(bound, relaxation.dual)
                margins = self.y_j * (self.phi_j @ relaxation.w + relaxation.b)
                self.shift(relaxation.w)
                continue
            if deficit == 0:  # the relaxation's solution is feasible up to the dual solver's tolerance:
                # scaling (w, b) by 1 / (least counted margin) makes it exact
                counted = forced | (~dropped & (margins >= 1.0 - self.forced_tol))
                least = float(margins[counted].min(initial=1.0))
                value = self.shift(relaxation.w / min(least, 1.0), factors=(1.0,)) if least > 0 else math.inf
                # the KKT tolerance is absolute (margin units): on a tiny objective the leaf's own
                # primal-dual gap can exceed mip_gap; tighten until it does not
                wide = value - relaxation.dual > self.options.mip_gap * abs(value) - self.orbits.slack_at(value)
                if wide and relaxation.tol > MIN_TOL:
                    relaxation = self.relax(forced, relaxation.packed, level, relaxation.tol / 100.0)
                    if relaxation is None:
                        return
                    bound = max(bound, relaxation.dual)
                    margins = self.y_j * (self.phi_j @ relaxation.w + relaxation.b)
                    continue
                self.closed_min = min(self.closed_min, bound)
                if wide or not relaxation.met or self.best is None:
                    self.unresolved = True
                return
            j = self._branch_point(j, forced, dropped)
            child = forced.copy()
            child[j] = True
            self._push(heap, bound, child, dropped.copy(), relaxation, origin, branched=j)
            dropped = dropped.copy()
            dropped[j] = True  # dive: the dropped child has the same relaxation
            self.nodes += 1

    def _push(self, heap: list[_Node], bound: float, forced: np.ndarray, dropped: np.ndarray,
              parent: _Relaxation, origin: _Packed | None, branched: int = -1) -> None:
        """Queue a node with its count bound (or record it as pruned) and its parent's dual point
        (beyond the store's budget: ``origin``, the point the parent was warm-started from).

        ``branched`` (-1: none) is the one point the node forces beyond a parent with the same dropped set whose
        count bound ``bound`` includes. Unless the checks here force or drop more, the node's count bound is then
        at most ``max(bound, cost[branched])``, and that is taken without a scan: its forced points' costs are the
        parent's and branched's, and in each requirement both the need and the free points lose branched at
        most, so the need-th smallest free cost can only fall (taking out one of the need smallest leaves the
        same value at rank need - 1; taking out a larger one, a smaller value there).
        """
        level = self.prune_level()
        dropped = dropped.copy()
        sizes = (int(forced.sum()), int(dropped.sum()))
        value, drop_value = self.nogoods.scan(forced, dropped)  # drops what the nogoods exclude
        self.pruned_min = min(self.pruned_min, max(drop_value, bound))
        bound = max(bound, value)
        if not self._break_symmetry(forced, dropped) or not self._drop_ties(forced, dropped):
            return
        if branched >= 0 and sizes == (int(forced.sum()), int(dropped.sum())):
            bound = max(bound, float(self.cost[branched]))
        elif bound < level:
            bound = max(bound, self._count_bound(forced, dropped))
        if self.additive is not None and bound < level:
            bound = max(bound, self.additive(parent.alpha, parent.b, forced, dropped, self.counts, level))
        if self.envelope is not None and bound < level:
            bound = max(bound, self.envelope(forced, dropped, self.counts, level))
        if bound >= level:
            self.pruned_min = min(self.pruned_min, bound)
            return
        extra_forced = np.flatnonzero(forced & ~self.forced0).astype(np.int32)
        extra_dropped = np.flatnonzero(dropped & ~self.dropped0).astype(np.int32)
        heapq.heappush(heap, _Node(bound, next(self.counter), extra_forced, extra_dropped,
                                   self.store.keep(parent.packed, origin)))


@contextmanager
def _sigint_sets_flag(search: _Search) -> Iterator[None]:
    """While the search runs (in the main thread), Ctrl-C only sets ``search.interrupted``; the
    search raises ``KeyboardInterrupt`` at its next clock read (:meth:`_Search.elapsed`).

    A ``KeyboardInterrupt`` raised by Python's own handler lands wherever the interpreter is,
    and was once seen lost (the interrupt test's child ran to its end with no error: the
    search spends most of its time in and around numba-compiled calls).
    """
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield  # not Python's KeyboardInterrupt handler (ignored, the caller's own, or not settable here): keep it
        return

    def flag(signum, frame) -> None:
        search.interrupted = True

    previous = signal.signal(signal.SIGINT, flag)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class BnbBackend:
    """Branch-and-bound over the anchor binaries (module docstring); exact primal CSVMs only."""

    name = "bnb"

    def available(self) -> bool:
        return True

    def version(self) -> str:
        from csvm_stats import __version__

        return f"csvm-stats {__version__}"

    def solve(self, problem: MIQP, options: SolverOptions) -> Solution:
        if problem.csvm is None:
            raise SolverError(
                "the bnb backend solves the exact primal CSVM only (big_m=None, linear or kernel through the "
                "feature map); use solver='scip' for this model."
            )
        watch = Stopwatch()
        search = _Search(problem.csvm, problem, options, watch)
        try:
            with _sigint_sets_flag(search):
                status = search.run()
        except KeyboardInterrupt:
            status = Status.INTERRUPTED
        x = None if search.best is None else self._vector(problem, search.best)
        # a leaf whose relaxation did not converge (or close) left open: no proof, but not a time limit
        status, reason = search_end(status, x is not None, search.unresolved, search.unresolved, search.reason)
        bound = search.lower_bound() if x is not None else math.nan
        objective = problem.objective(x) if x is not None else math.nan
        wall, cpu = watch.elapsed()
        record = SolveRecord(
            status=status, objective=objective, best_bound=bound, gap=relative_gap(objective, bound),
            wall_time=wall, cpu_time=cpu, nodes=search.nodes, backend=self.name, backend_version=self.version(),
            formulation="branch-and-bound over anchor points (warm-started SMO node QPs)",
            message=f"{search.svm_solves} SVM solves, {search.peel_solves} peeling QPs", svm_solves=search.svm_solves,
            reason=reason,
        )
        search.log.end(record)
        return Solution(record, x)

    @staticmethod
    def _vector(problem: MIQP, best: tuple[float, np.ndarray, float]) -> np.ndarray:
        """The MIQP's variables ``[w, b, xi, z]`` at an incumbent."""
        data = problem.csvm
        _, w, b = best
        xi = np.maximum(0.0, 1.0 - data.y_train * (data.phi_train @ w + b))
        margins = data.y_anchor * (data.phi_anchor @ w + b)
        z = ((margins >= 1.0 - MARGIN_TOL) & (problem.ub[problem.blocks["z"]] > 0.5)).astype(float)
        return np.r_[w, b, xi, z]
