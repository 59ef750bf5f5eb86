r"""``"bnb"`` on the multiclass CSVM: branch-and-bound over the anchor indicators.

The model is the one of :mod:`csvm_stats.multiclass.problem`: per constrained
anchor point j a binary :math:`z_j` (j classified correctly with margin 1 by
the argmax rule), rows :math:`f_{y_j}(x_j) - f_k(x_j) \ge 1 - M_{jk}(1 - z_j)`
with proven constants (indicator rows where none is proven) and one count row
:math:`\sum_{j \in J_c} z_j \ge k_c` per constrained class c.

*Nodes.* A node fixes some z at one (*forced*: the margin rows are hard) or
zero (*dropped*: they are void); the root's fixings are the model's proven
ones. Its relaxation is the MIQP with the other z continuous in [0, 1], count
rows included, solved as a linear outer approximation of the quadratic
objective (:mod:`csvm_stats.optimization.solvers.outer_lp`): its value is a
lower bound of every point below the node at any stage of the cut loop, and
the dual simplex re-solves each node from the previous basis.

*Count bounds per class.* Class c still needs :math:`r_c = k_c - |F \cap J_c|`
of its free points: a node with :math:`r_c` above its free points is
infeasible, one with exactly :math:`r_c` forces them all (before its LP). The
relaxation's count rows carry the rest; *reduced-cost fixing* drops a free
point at zero in the LP whose reduced cost d gives the LP's value + d at or above the
prune level (forcing it cannot lead to a better point), and forces one at one
symmetrically.

*Leaves and incumbents.* Where the LP's point meets every count with margin
rows alone (each class has :math:`k_c` anchor points with margin
:math:`\ge 1 - 10^{-6}`), it is a point of the model up to the LP's
tolerance: the node is closed once the cut loop has brought its true
objective within half the optimality gap of its bound. The direction W of
every node goes through the warm start's offset shift and scaling
(:func:`csvm_stats.multiclass.warmstart.shifted_start`), which returns a point
that meets the counts exactly; it becomes the incumbent when it beats it and
the MIQP's rows hold at it (:meth:`MIQP.max_violation`). The warm start is
the first incumbent.

*Branching and search.* A node that is not a leaf branches on the free point
of a class short of its count (forced plus met points) whose relaxed z is the
most fractional (ties and integral z: the least margin); the child on the side
z rounds to is processed at once (a dive), the other waits in a best-bound
queue with the parent's bound.

*Stops.* Every loop reads the clock of ``SolverOptions.clock``; Ctrl-C stops
the search with ``KeyboardInterrupt`` (bnb's handler). The reported bound is
the least bound of the waiting nodes, of the nodes closed, and of the pruned
ones (never above the incumbent).
"""

from __future__ import annotations

import heapq
import itertools
import math

import numpy as np

from csvm_stats.multiclass.warmstart import class_margins, shifted_start
from csvm_stats.optimization.problem import MIQP, MulticlassData
from csvm_stats.optimization.solvers._common import Stopwatch
from csvm_stats.optimization.solvers.base import Solution, SolverOptions, Status
from csvm_stats.optimization.solvers.bnb_lp_end import LPSearchClock, count_bound, run_lp_search
from csvm_stats.optimization.solvers.bnb_nodes import _Node
from csvm_stats.optimization.solvers.outer_lp import OuterLP
from csvm_stats.optimization.solvers.search_log import SearchLog

MET_TOL = 1e-6  # an anchor margin >= 1 - MET_TOL counts as met by a relaxation's point
CUT_ROUNDS = 50  # cutting-plane LPs per node at most
CLOSE_SHARE = 0.5  # a leaf is closed once its true objective is within this share of the gap of its bound
FRACTIONAL = 1e-6  # a relaxed z farther than this from 0 and 1 is fractional
HEURISTIC_FACTORS: tuple[float, ...] = (1.0, 1.5)  # scales of a node's direction offered as an incumbent
LIFT = 1e-7  # a relaxation's point is scaled until its k_c-th margin in each class is 1 + LIFT
VIOLATION_TOL = 1e-6  # relative violation of the MIQP's rows an incumbent may have
ROOT_COST_SHARE = 0.3  # share of the time limit the root's single-point costs may take


class _MulticlassSearch(LPSearchClock):
    """One branch-and-bound run (module docstring)."""

    def __init__(self, problem: MIQP, options: SolverOptions, watch: Stopwatch) -> None:
        self.problem, self.options, self.watch = problem, options, watch
        self.d: MulticlassData = problem.multiclass
        z = problem.blocks["z"]
        self.z_cols = np.arange(z.start, z.stop)
        self.forced0 = problem.lb[self.z_cols] > 0.5
        self.dropped0 = problem.ub[self.z_cols] < 0.5
        y = self.d.y_anchor
        self.classes = [(np.flatnonzero(y == c), int(k)) for c, k in sorted(self.d.min_counts.items())]
        ind = problem.indicators
        self.indicator_z = None if ind is None else np.asarray(ind.binary) - z.start
        self.lp = OuterLP(problem, options.threads)
        self.lp.time_left = lambda: self.options.time_limit - self.elapsed()  # each LP stops at the limit
        self.best: tuple[float, np.ndarray] | None = None
        self.done_min = math.inf  # least bound of a node pruned, closed or left open
        self.unresolved = False
        self.nodes = 0
        self.interrupted = False  # set by Ctrl-C (bnb's _sigint_sets_flag)
        self.log = SearchLog(options, "branch-and-bound over anchor indicators (multiclass)")
        self.counter = itertools.count()
        self.r = self.d.phi_train.shape[1]
        self.cost = np.full(self.z_cols.size, -math.inf)  # c_j: a bound of every point with z_j = 1 (root costs)
        if problem.start is not None:
            self._accept(problem.start)

    # ------------------------------------------------------------ incumbents
    def _accept(self, x: np.ndarray) -> None:
        """Keep ``x`` (the MIQP's variables) when the rows hold and it beats the incumbent."""
        value = self.problem.objective(x)
        if self.best is not None and value >= self.best[0]:
            return
        if self.problem.max_violation(x) <= VIOLATION_TOL * max(1.0, abs(value)):
            self.best = (value, x)

    def _offer(self, x: np.ndarray) -> None:
        """The direction of a relaxation's point through the offset shift (module docstring).

        Tied margins at exactly 1 in two classes make the shift raise their offsets in turn (each raise
        lowers the other class's margins); scaling the point first so that every class's k_c-th margin
        is 1 + LIFT leaves nothing to shift when the point meets the counts.
        """
        d = self.d
        K = d.n_classes
        W = x[self.problem.blocks["w"]].reshape(K, self.r) / d.scale
        b = x[self.problem.blocks["b"]]
        margins = class_margins(d.phi_anchor @ W.T + b, d.y_anchor)
        least = min((np.sort(margins[members])[-count] for members, count in self.classes if count), default=1.0)
        if 0.0 < least < 1.0 + LIFT:  # margins are linear in (W, b): scaled, each class meets its count with room
            W, b = W * (1.0 + LIFT) / least, b * (1.0 + LIFT) / least
        found = shifted_start(W, b, d.phi_train, d.y_train, d.phi_anchor, d.y_anchor, C=d.C, weight=d.weight,
                              min_counts=d.min_counts, anchor_index=np.arange(d.y_anchor.size),
                              factors=HEURISTIC_FACTORS)
        if found is None or (self.best is not None and found.objective >= self.best[0]):
            return
        z = found.z * (~self.dropped0)
        self._accept(np.r_[d.scale * found.W.ravel(), found.b, found.xi, z])

    # ------------------------------------------------------------ nodes
    def _propagate(self, forced: np.ndarray, dropped: np.ndarray) -> float:
        """Count bounds per class (module docstring): the node's bound from the single-point costs (``inf``:
        no point), after dropping the free points whose cost reaches the prune level and forcing the rest of a
        class that needs all its free points."""
        return count_bound(self.cost, forced, dropped, self.classes, self.prune_level())

    def _relax(self, forced: np.ndarray, dropped: np.ndarray, level: float):
        """The node's LP point (:meth:`OuterLP.solve`) under its fixings."""
        self.lp.set_bounds(self.z_cols, forced.astype(float), (~dropped).astype(float))
        if self.indicator_z is not None:
            self.lp.set_indicators(forced[self.indicator_z])
        scale = abs(self.best[0]) if self.best is not None else 1.0
        tol = CLOSE_SHARE * self.options.mip_gap * max(scale, 1e-12)
        return self.lp.solve(tol, CUT_ROUNDS, level)

    def process(self, node: _Node, heap: list[_Node]) -> _Node | None:
        """Solve a node; prune, close or branch it. Returns the child to dive into (``None``: none)."""
        self.nodes += 1
        forced, dropped = self.forced0.copy(), self.dropped0.copy()
        forced[node.forced], dropped[node.dropped] = True, True
        bound = max(node.bound, self._propagate(forced, dropped))
        level = self.prune_level()
        if bound >= level:
            self.done_min = min(self.done_min, bound)
            return None
        point = self._relax(forced, dropped, level)
        if point.infeasible:
            return None
        if point.x is None:  # HiGHS stopped without an optimal LP: left open
            self.unresolved = True
            self.done_min = min(self.done_min, node.bound)
            return None
        bound = max(bound, point.value)
        self._offer(point.x)
        level = self.prune_level()
        if bound >= level:
            self.done_min = min(self.done_min, bound)
            return None
        x = point.x
        zval = x[self.z_cols]
        free = ~forced & ~dropped
        if point.reduced is not None and math.isfinite(level):  # reduced-cost fixing, from the LP's own value
            # (bound may be the count bound, which the LP's reduced costs say nothing about: only the LP's value
            # plus a reduced cost bounds a child's LP)
            dropped |= free & (zval <= FRACTIONAL) & (point.value + point.reduced >= level)
            forced |= free & (zval >= 1 - FRACTIONAL) & (point.value - point.reduced >= level)
            free = ~forced & ~dropped
        d = self.d
        W = x[self.problem.blocks["w"]].reshape(d.n_classes, self.r) / d.scale
        margins = class_margins(d.phi_anchor @ W.T + x[self.problem.blocks["b"]], d.y_anchor)
        met = margins >= 1.0 - MET_TOL
        short = np.zeros(zval.size, dtype=bool)
        for members, count in self.classes:
            if int((forced[members] | (met[members] & ~self.dropped0[members])).sum()) < count:
                short[members] = True
        if not short.any():  # a leaf: the LP's point meets every count
            close = CLOSE_SHARE * self.options.mip_gap * max(abs(point.true), 1e-12)
            if point.true - point.value > close:  # more cuts at the leaf's own scale (the LP keeps its fixings)
                point = self.lp.solve(close, CUT_ROUNDS, level)
                if point.x is None:
                    self.unresolved = True
                    self.done_min = min(self.done_min, bound)
                    return None
                bound = max(bound, point.value)
                self._offer(point.x)
            self.unresolved |= point.true - point.value > close and bound < self.prune_level()
            self.done_min = min(self.done_min, bound)
            return None
        candidates = np.flatnonzero(short & free & ~met)
        if candidates.size == 0:
            self.unresolved = True  # a relaxation point short of a count without a free point to branch on
            self.done_min = min(self.done_min, bound)
            return None
        frac = np.minimum(zval[candidates], 1.0 - zval[candidates])
        order = np.lexsort((margins[candidates], -frac)) if frac.max() > FRACTIONAL else np.argsort(
            margins[candidates], kind="stable")
        j = int(candidates[order[0]])
        up = _Node(bound, next(self.counter), np.flatnonzero(forced & ~self.forced0 | (np.arange(zval.size) == j)),
                   np.flatnonzero(dropped & ~self.dropped0))
        dropped_j = dropped.copy()
        dropped_j[j] = True
        down = _Node(bound, next(self.counter), np.flatnonzero(forced & ~self.forced0),
                     np.flatnonzero(dropped_j & ~self.dropped0))
        dive, wait = (up, down) if zval[j] >= 0.5 else (down, up)
        heapq.heappush(heap, wait)
        return dive

    def root_costs(self) -> None:
        r"""Single-point costs :math:`c_j`: the root's relaxation with :math:`z_j = 1`, for the free points that
        the root's LP point leaves short of margin 1 (least margin first, within ROOT_COST_SHARE of the limit).

        The root's LP with one more fixing is a relaxation of every node forcing j, so :math:`c_j` bounds
        them; a class that still needs r of its free points needs some r of them at one, so every point
        below the node costs at least the r-th smallest :math:`c_j` over them (:meth:`_propagate`).
        """
        forced, dropped = self.forced0.copy(), self.dropped0.copy()
        if self._propagate(forced, dropped) == math.inf:
            return
        point = self._relax(forced, dropped, math.inf)
        if point.x is None:
            return
        self.cost[:] = point.value
        self._offer(point.x)
        d = self.d
        W = point.x[self.problem.blocks["w"]].reshape(d.n_classes, self.r) / d.scale
        margins = class_margins(d.phi_anchor @ W.T + point.x[self.problem.blocks["b"]], d.y_anchor)
        hard = np.flatnonzero(~forced & ~dropped & (margins < 1.0 - MET_TOL))
        for j in hard[np.argsort(margins[hard], kind="stable")]:
            if self.elapsed() >= ROOT_COST_SHARE * self.options.time_limit:
                break
            one = forced.copy()
            one[j] = True
            found = self._relax(one, dropped, self.prune_level())
            if found.infeasible:
                self.cost[j] = math.inf
            elif found.x is not None:
                self.cost[j] = max(self.cost[j], found.value)
                self._offer(found.x)

    def run(self) -> Status:
        """The search loop; OPTIMAL when the queue empties (the caller reads infeasibility from no incumbent)."""
        self.root_costs()
        heap: list[_Node] = []
        current: _Node | None = _Node(-math.inf, next(self.counter), np.empty(0, dtype=int), np.empty(0, dtype=int))
        while True:
            now = self.elapsed()
            if self.log.due(now):
                self.log.row(now, self.nodes, len(heap), None if self.best is None else self.best[0],
                             min([self.lower_bound()] + [n.bound for n in heap[:1]]))
            if now >= self.options.time_limit:
                if current is not None:
                    heapq.heappush(heap, current)
                self.done_min = min(self.done_min, min((n.bound for n in heap), default=math.inf))
                return Status.TIME_LIMIT
            if current is None:
                while heap and heap[0].bound >= self.prune_level():
                    self.done_min = min(self.done_min, heapq.heappop(heap).bound)
                if not heap:
                    return Status.OPTIMAL
                current = heapq.heappop(heap)
            current = self.process(current, heap)

    def lower_bound(self) -> float:
        """The least bound over every node (never above the incumbent)."""
        bound = self.done_min
        if self.best is not None:
            bound = min(bound, self.best[0])
        return bound


class MulticlassBnb:
    """The search of the module docstring as a backend (exact multiclass CSVMs only)."""

    name = "bnb"

    def solve(self, problem: MIQP, options: SolverOptions) -> Solution:
        watch = Stopwatch()
        search = _MulticlassSearch(problem, options, watch)
        return run_lp_search(
            problem, search, watch,
            formulation="branch-and-bound over anchor indicators (outer-approximation LP nodes, HiGHS)",
            message=lambda: f"{search.lp.lp_solves} LP solves, {search.lp.cuts} tangent cuts",
            # a node left open without an accurate relaxation: nothing proven, but the limit did not stop it
            gap_open=lambda objective, bound: search.unresolved,
        )
