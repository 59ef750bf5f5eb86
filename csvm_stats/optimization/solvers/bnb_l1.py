r"""``"bnb"`` on the L1-norm CSVM: branch-and-bound over the anchor indicators of the MILP, HiGHS LPs at the nodes.

The model is :func:`csvm_stats.optimization.problem.build_l1_primal` (exact,
:attr:`MIQP.l1`):

.. math::

    \min\; \mathbf 1^\top(w^+ + w^-) + C \sum_{i \in I} s_i \xi_i \quad\text{s.t.}\quad
    y_i(w^\top\phi_i + b) \ge 1 - \xi_i;\;
    y_j(w^\top\phi_j + b) \ge 1 - M_j(1 - z_j);\;
    \textstyle\sum_{j \in J_c} z_j \ge k_c,

:math:`w = w^+ - w^-`, :math:`z_j \in \{0, 1\}`.

*Nodes.* A node fixes some z at one (*forced*: the margin row is hard) or at
zero (*dropped*); the root's fixings are the model's proven ones, and anchor
points that no requirement counts are dropped (their z is in no row but their
own, so :math:`z_j = 0` loses nothing). Its relaxation is the MILP with the
other z in [0, 1], count rows included: one LP on one HiGHS model for the
whole search (:class:`~csvm_stats.optimization.solvers.outer_lp.OuterLP`, the
dual simplex re-solving from the previous basis after the bounds change). The
objective is linear, so the LP value is the node's bound and a point of the LP
that meets every count by its margins alone is a solution of the node at that
value (a leaf: closed).

*Incumbent-based big-M tightening*
(:mod:`~csvm_stats.optimization.solvers.l1_margins`). With an incumbent of
objective U, the least margin :math:`\ell_j(U)` of anchor point j over the
training rows and :math:`\text{objective} \le U` (an LP) makes
:math:`M_j = 1 - \ell_j` valid for every solution that could improve the
incumbent (about 7x smaller than the closed-form constants on a 300 x 500
instance); the node LP's entries are replaced in place. It runs after the
root's heuristics and again, up to TIGHTEN_ROUNDS times in all, when the
incumbent has fallen by TIGHTEN_GAIN since.

*Count bounds.* Class requirement c still needs
:math:`r_c = k_c - |F \cap J_c|` of its free points: more than it has prunes
the node, exactly as many forces them all. Single-point costs
:math:`c_j`, the root's LP with :math:`z_j = 1`, bound every node forcing j;
a node needing :math:`r_c` of the free points R costs at least the
:math:`r_c`-th smallest :math:`c_j` over R, and a point with
:math:`c_j` at or above the prune level is dropped everywhere. *Reduced-cost
fixing* drops a free point at zero in the node's LP whose reduced cost d
gives value + d at or above the prune level, and forces one at one
symmetrically.

*Incumbents.* Every node's direction w with its best intercept
(:func:`~csvm_stats.optimization.intercept_shift.best_shift`, O(n log n));
every POLISH_PERIOD-th node's *top set* (per requirement the :math:`k_c`
members of largest margin at the LP point) solved as an LP with those z at
one and the others at zero (the best point for that set); and a *swap local
search* from each new incumbent: leave out one binding point of its top set
(positive reduced cost, largest first), re-solve with the count row, take the
new top set and polish it; first improvement, at most SWAP_TRIES tries per
run. Every point is accepted only when the MILP's own rows hold
(:meth:`MIQP.max_violation`).

*Search.* Best bound first with dives: a node branches on the free point of a
requirement short of its count (forced plus met points) whose relaxed z is
the most fractional (ties: least margin); the child on the side z rounds to
is processed at once, the other waits with the parent's bound. Every choice
counts nodes and LPs, never time, so the search is deterministic; only the
time limit (on ``SolverOptions.clock``) stops it early. Only valid bounds
prune: LP values, the count bounds from LP costs and reduced costs, each
relative to the prune level (the incumbent less the gap).

*Stops* as every bnb search (:func:`~csvm_stats.optimization.solvers.base.search_end`):
optimal within ``mip_gap``; the time limit with the gap; infeasible when the
queue empties without a point; an early end with the gap open (an LP that
HiGHS did not solve) reported with its reason; Ctrl-C.
"""

from __future__ import annotations

import heapq
import itertools
import math

import numpy as np
import scipy.sparse as sp

from csvm_stats.optimization.intercept_shift import best_shift
from csvm_stats.optimization.problem import MIQP, CSVMData
from csvm_stats.optimization.solvers._common import Stopwatch, relative_gap
from csvm_stats.optimization.solvers.base import Solution, SolverOptions, Status
from csvm_stats.optimization.solvers.bnb_lp_end import (
    LPSearchClock,
    count_bound,
    run_lp_search,
)
from csvm_stats.optimization.solvers.search_log import SearchLog
from csvm_stats.optimization.solvers.bnb_nodes import _Node
from csvm_stats.optimization.solvers.l1_margins import MarginLP
from csvm_stats.optimization.solvers.outer_lp import LPPoint, OuterLP

MET_TOL = 1e-6  # a margin >= 1 - MET_TOL counts as met by an LP point (HiGHS meets rows to 1e-7)
MARGIN_TOL = 1e-9  # an incumbent's z is 1 where its margin is >= 1 - MARGIN_TOL
LIFT = 1e-7  # an LP point is scaled until its k_c-th margin in each requirement is 1 + LIFT
FRACTIONAL = 1e-6  # a relaxed z farther than this from 0 and 1 is fractional
VIOLATION_TOL = 1e-6  # relative violation of the MILP's rows an incumbent may have
POLISH_PERIOD = 10  # every POLISH_PERIOD-th node's top set is polished by an LP
SWAP_TRIES = 20  # binding points a swap local search leaves out at most (two LPs each)
TIGHTEN_ROUNDS = 2  # big-M tightening runs at most
COST_CUTS = True  # the single-point costs as rows of the node LPs (:meth:`_L1Search.cost_cuts`)
TIGHTEN_GAIN = 0.01  # relative fall of the incumbent since the last tightening that starts another


class _L1Search(LPSearchClock):
    """One branch-and-bound run (module docstring)."""

    def __init__(self, problem: MIQP, options: SolverOptions, watch: Stopwatch) -> None:
        self.problem, self.options, self.watch = problem, options, watch
        self.d: CSVMData = problem.l1
        blocks = problem.blocks
        self.w_pos, self.w_neg, self.b_col = blocks["w_pos"], blocks["w_neg"], blocks["b"].start
        z = blocks["z"]
        self.z_cols = np.arange(z.start, z.stop)
        n_j = self.z_cols.size
        self.members = [np.asarray(req.members, dtype=int) for req in self.d.requirements]
        self.counts = [int(req.count) for req in self.d.requirements]
        counted = np.zeros(n_j, dtype=bool)
        for members in self.members:
            counted[members] = True
        self.forced0 = problem.lb[self.z_cols] > 0.5
        self.dropped0 = (problem.ub[self.z_cols] < 0.5) | (~counted & ~self.forced0)
        self.always = self.forced0.copy()  # margin >= 1 in every good solution: dropping them is void
        self.cw = self.d.C * self.d.weight
        self.lp = OuterLP(problem, options.threads)
        self.lp.time_left = lambda: self.options.time_limit - self.elapsed()  # each LP stops at the limit
        self.root_value = -math.inf  # the root LP's value: a bound of every point
        self.margin_lp: MarginLP | None = None
        self._anchor_rows(problem)
        self.cost = np.full(n_j, -math.inf)  # c_j: a bound of every good point with z_j = 1
        self.best: tuple[float, np.ndarray] | None = None
        self.tightened_at = math.inf  # the incumbent's value at the last tightening
        self.tighten_runs = 0
        self.done_min = math.inf  # least bound of a node pruned, closed or left open
        self.unresolved = False
        self.nodes = 0
        self.interrupted = False  # set by Ctrl-C (bnb's _sigint_sets_flag)
        self.log = SearchLog(options, "branch-and-bound over anchor indicators (L1-norm CSVM)")
        self.counter = itertools.count()
        self.cut_count = 0
        if problem.start is not None:
            self._accept(np.asarray(problem.start, dtype=float))

    def _anchor_rows(self, problem: MIQP) -> None:
        """Each anchor point's margin row in the LP and its big-M constant (``inf``: an indicator row)."""
        n_j = self.z_cols.size
        self.row_of = np.full(n_j, -1)
        self.big_m = np.full(n_j, math.inf)
        A = problem.A.tocsc()
        for j, col in enumerate(self.z_cols):
            lo, hi = A.indptr[col], A.indptr[col + 1]
            rows, vals = A.indices[lo:hi], A.data[lo:hi]
            neg = vals < 0
            if neg.any():
                self.row_of[j], self.big_m[j] = int(rows[neg][0]), float(-vals[neg][0])
        if problem.indicators is not None:
            for k, col in enumerate(problem.indicators.binary):
                self.row_of[int(col) - self.z_cols[0]] = self.lp.n_base + k
        self.row_on = np.zeros(n_j, dtype=bool)  # indicator rows switched on (lower end 1)

    # ------------------------------------------------------------ incumbents
    def _accept(self, x: np.ndarray) -> bool:
        """Keep ``x`` (the MILP's variables) when its rows hold and it beats the incumbent."""
        value = self.problem.objective(x)
        if self.best is not None and value >= self.best[0]:
            return False
        if self.problem.max_violation(x) > VIOLATION_TOL * max(1.0, abs(value)):
            return False
        self.best = (value, x)
        return True

    def _margins(self, w: np.ndarray, b: float) -> np.ndarray:
        return self.d.y_anchor * (self.d.phi_anchor @ w + b)

    def offer(self, w: np.ndarray, b: float) -> bool:
        """The point (w, b) with its optimal slacks and z from its margins; when an LP's tolerance left a
        requirement's k_c-th margin just below 1, scaled until it is 1 + LIFT. True when it is the new incumbent."""
        d = self.d
        allowed = self.problem.ub[self.z_cols] > 0.5
        margins = self._margins(w, b)
        met = (margins >= 1.0 - MARGIN_TOL) & allowed
        if any(int(met[m].sum()) < c for m, c in zip(self.members, self.counts)):
            usable = np.where(allowed, margins, -np.inf)
            least = min((np.sort(usable[m])[-c] for m, c in zip(self.members, self.counts) if c), default=1.0)
            if 1.0 - 10 * MET_TOL < least < 1.0:
                w, b = w * (1.0 + LIFT) / least, b * (1.0 + LIFT) / least
                margins = self._margins(w, b)
        z = (margins >= 1.0 - MARGIN_TOL) & allowed
        xi = np.maximum(0.0, 1.0 - d.y_train * (d.phi_train @ w + b))
        return self._accept(np.r_[np.maximum(w, 0.0), np.maximum(-w, 0.0), b, xi, z.astype(float)])

    def shift(self, w: np.ndarray) -> bool:
        """Direction w with its best intercept for the requirements (the penalty does not depend on b)."""
        d = self.d
        found = best_shift(w, d.phi_train, d.y_train, d.phi_anchor, d.y_anchor, d.C, d.weight, d.requirements,
                           (1.0,))
        return found is not None and self.offer(found[1], found[2])

    def _wb(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        return x[self.w_pos] - x[self.w_neg], float(x[self.b_col])

    def top_set(self, w: np.ndarray, b: float, excluded: np.ndarray | None = None) -> np.ndarray:
        """The root's forced points and, per requirement, its k_c members of largest margin (never a dropped
        or ``excluded`` one)."""
        bad = self.dropped0 if excluded is None else self.dropped0 | excluded
        margins = np.where(bad, -np.inf, self._margins(w, b))
        chosen = self.forced0.copy()
        for members, count in zip(self.members, self.counts):
            chosen[members[np.argsort(-margins[members], kind="stable")[:count]]] = True
        return chosen & ~bad | self.forced0

    def polish(self, chosen: np.ndarray) -> LPPoint:
        """The LP with the z of ``chosen`` at one and all others at zero: the best point for that set."""
        self._load(chosen, ~chosen)
        point = self.lp.solve(0.0, 1)
        if point.x is not None:
            self.offer(*self._wb(point.x))
        return point

    def local_search(self) -> None:
        """Swap local search from the incumbent (module docstring)."""
        if self.best is None:
            return
        chosen = self.top_set(*self._wb(self.best[1]))
        current = self.polish(chosen)
        tries = 0
        while current.x is not None and tries < SWAP_TRIES and not self.out_of_time():
            reduced = np.zeros(self.z_cols.size) if current.reduced is None else current.reduced
            # z_j fixed at one with a positive reduced cost: lowering z_j would lower the objective
            binding = np.flatnonzero(chosen & ~self.forced0 & (reduced > 1e-9))
            moved = False
            for s in binding[np.argsort(-reduced[binding], kind="stable")]:
                if tries >= SWAP_TRIES or self.out_of_time():
                    return
                tries += 1
                without = np.zeros_like(chosen)
                without[s] = True
                forced = chosen & ~without
                self._load(forced, self.dropped0 | without)
                step = self.lp.solve(0.0, 1)
                if step.x is None:
                    continue
                candidate_set = self.top_set(*self._wb(step.x), excluded=without)
                candidate = self.polish(candidate_set)
                if candidate.x is not None and candidate.value < current.value * (1 - 1e-9) - 1e-12:
                    chosen, current, moved = candidate_set, candidate, True
                    break
            if not moved:
                return

    # ------------------------------------------------------------ bounds
    def _load(self, forced: np.ndarray, dropped: np.ndarray) -> None:
        """The node's fixings into the LP: z bounds, and indicator rows (no big-M yet) on for forced points."""
        self.lp.set_bounds(self.z_cols, forced.astype(float), (~dropped).astype(float))
        indicator = np.isinf(self.big_m) & (self.row_of >= 0)
        change = indicator & (forced != self.row_on)
        if change.any():
            idx = np.flatnonzero(change)
            self.lp.set_row_lower(self.row_of[idx], np.where(forced[idx], 1.0, -np.inf))
            self.row_on[idx] = forced[idx]

    def tighten(self) -> None:
        """Big-M tightening from the incumbent (module docstring; :mod:`l1_margins`)."""
        if self.best is None or self.tighten_runs >= TIGHTEN_ROUNDS:
            return
        if self.best[0] > self.tightened_at * (1.0 - TIGHTEN_GAIN):
            return
        self.tighten_runs += 1
        self.tightened_at = self.best[0]
        if self.margin_lp is None:
            self.margin_lp = MarginLP(self.d, self.options.threads)
        anchors = np.flatnonzero(~self.forced0 & ~self.dropped0)
        least = self.margin_lp.least_margins(self.best[0], anchors, self.out_of_time)
        new_m = np.maximum(1.0 - least, 0.0)
        better = np.isfinite(new_m) & (new_m < self.big_m[anchors] * (1.0 - 1e-9))
        for j, m in zip(anchors[better], new_m[better]):
            row = self.row_of[j]
            self.lp.set_entries(np.array([row]), np.array([self.z_cols[j]]), np.array([-m]))
            self.lp.set_row_lower(np.array([row]), np.array([1.0 - m]))
            self.big_m[j] = m
        always = anchors[least >= 1.0]
        self.forced0[always] = True
        self.always[always] = True

    def propagate(self, forced: np.ndarray, dropped: np.ndarray) -> float:
        """Count bounds per requirement (module docstring): the node's bound from the single-point costs
        (``inf``: no point), after dropping the free points whose cost reaches the prune level and forcing the rest
        of a requirement that needs all its free points."""
        return count_bound(self.cost, forced, dropped, list(zip(self.members, self.counts)), self.prune_level())

    def root_costs(self, point: LPPoint) -> None:
        r"""Single-point costs :math:`c_j` for the free points short of margin 1 at the root's LP point (least
        margin first); a cost at or above the prune level drops the point everywhere."""
        self.cost[:] = point.value
        margins = self._margins(*self._wb(point.x))
        hard = np.flatnonzero(~self.forced0 & ~self.dropped0 & (margins < 1.0 - MET_TOL))
        for j in hard[np.argsort(margins[hard], kind="stable")]:
            if self.out_of_time():
                return
            one = self.forced0.copy()
            one[j] = True
            self._load(one, self.dropped0)
            level = self.prune_level()
            found = self.lp.solve(0.0, 1, level)
            if found.infeasible:
                self.cost[j] = math.inf
            elif found.x is not None or found.value >= level:
                self.cost[j] = max(self.cost[j], found.value)
                if found.x is not None:
                    self.shift(self._wb(found.x)[0])
            if self.cost[j] >= level:
                self.dropped0[j] = True

    def cost_cuts(self) -> None:
        r"""The single-point costs as rows of the LP: :math:`t = c^\top x` (a new column) and
        :math:`t \ge L + (c_j - L) z_j` for every free point with :math:`c_j > L`, L the root's LP value. Valid
        for every good point: :math:`z_j = 1` costs at least :math:`c_j`, and every point at least L; with z
        fractional they bind the LP where the count bound (one point's cost) does not."""
        L = self.root_value
        free = ~self.forced0 & ~self.dropped0
        js = np.flatnonzero(free & np.isfinite(self.cost) & (self.cost > L + 1e-9 * max(1.0, abs(L))))
        if js.size == 0 or not math.isfinite(L):
            return
        t = self.lp.add_column(-math.inf, math.inf)
        c = self.problem.c
        nz = np.flatnonzero(c)
        k = js.size
        rows = np.r_[np.zeros(nz.size + 1, dtype=int), np.repeat(np.arange(1, k + 1), 2)]
        cols = np.r_[nz, t, np.column_stack([np.full(k, t), self.z_cols[js]]).ravel()]
        vals = np.r_[-c[nz], 1.0, np.column_stack([np.ones(k), -(self.cost[js] - L)]).ravel()]
        A = sp.csr_matrix((vals, (rows, cols)), shape=(k + 1, t + 1))
        self.lp.add_rows(A, np.r_[0.0, np.full(k, L)], np.r_[0.0, np.full(k, math.inf)])
        self.cut_count = k

    # ------------------------------------------------------------ nodes
    def _close(self, bound: float) -> None:
        self.done_min = min(self.done_min, bound)

    def process(self, node: _Node, heap: list[_Node]) -> _Node | None:
        """Solve a node; prune, close or branch it. Returns the child to dive into (``None``: none)."""
        self.nodes += 1
        forced, dropped = self.forced0.copy(), self.dropped0.copy()
        forced[node.forced], dropped[node.dropped] = True, True
        dropped &= ~self.always  # z_j = 0 where the margin always holds: the same points as z_j = 1
        clash = forced & dropped  # a forced point dropped since at the root: its cost reached the prune level
        if clash.any():
            self._close(max(node.bound, float(self.cost[clash].max())))
            return None
        bound = max(node.bound, self.propagate(forced, dropped))
        level = self.prune_level()
        if bound >= level:
            self._close(bound)
            return None
        self._load(forced, dropped)
        point = self.lp.solve(0.0, 1, level)
        if point.infeasible:
            return None
        if point.x is None:
            if point.value >= level:  # the dual simplex reached the prune level
                self._close(point.value)
            else:  # HiGHS stopped without an optimal LP: left open
                self.unresolved = True
                self._close(bound)
            return None
        bound = max(bound, point.value)
        w, b = self._wb(point.x)
        before = math.inf if self.best is None else self.best[0]
        self.shift(w)
        if self.nodes % POLISH_PERIOD == 0:
            self.polish(self.top_set(w, b))
        improved = self.best is not None and self.best[0] < before
        level = self.prune_level()
        if bound >= level:
            self._close(bound)
            return None
        zval = point.x[self.z_cols]
        free = ~forced & ~dropped
        if point.reduced is not None and math.isfinite(level):  # reduced-cost fixing
            dropped |= free & (zval <= FRACTIONAL) & (bound + point.reduced >= level)
            forced |= free & (zval >= 1 - FRACTIONAL) & (bound - point.reduced >= level)
            free = ~forced & ~dropped
        margins = self._margins(w, b)
        met = margins >= 1.0 - MET_TOL
        short = np.zeros(zval.size, dtype=bool)
        for members, count in zip(self.members, self.counts):
            if int((forced[members] | (met[members] & ~dropped[members])).sum()) < count:
                short[members] = True
        if not short.any():  # a leaf: the LP's point meets every count
            self.offer(w, b)
            self._close(bound)
            return None
        candidates = np.flatnonzero(short & free & ~met)
        if candidates.size == 0:
            self.unresolved = True  # short of a count without a free point to branch on
            self._close(bound)
            return None
        frac = np.minimum(zval[candidates], 1.0 - zval[candidates])
        order = np.lexsort((margins[candidates], -frac)) if frac.max() > FRACTIONAL else np.argsort(
            margins[candidates], kind="stable")
        j = int(candidates[order[0]])
        one = np.zeros(zval.size, dtype=bool)
        one[j] = True
        up = _Node(bound, next(self.counter), np.flatnonzero(forced & ~self.forced0 | one),
                   np.flatnonzero(dropped & ~self.dropped0))
        down = _Node(bound, next(self.counter), np.flatnonzero(forced & ~self.forced0),
                     np.flatnonzero((dropped | one) & ~self.dropped0))
        dive, wait = (up, down) if zval[j] >= 0.5 else (down, up)
        heapq.heappush(heap, wait)
        if improved:
            self.local_search()
        return dive

    def root(self) -> bool:
        """The root: LP, heuristics, local search, big-M tightening, costs. False when the root is infeasible."""
        forced, dropped = self.forced0.copy(), self.dropped0.copy()
        if self.propagate(forced, dropped) == math.inf:
            return False
        self._load(forced, dropped)
        point = self.lp.solve(0.0, 1)
        if point.infeasible:
            return False
        if point.x is None:
            return True
        self.root_value = point.value
        w, b = self._wb(point.x)
        self.shift(w)
        self.polish(self.top_set(w, b))
        self.local_search()
        if self.best is not None:
            self.tighten()
            self._load(forced, dropped)
            point = self.lp.solve(0.0, 1)
            if point.infeasible or point.x is None:
                return not point.infeasible
            self.root_value = max(self.root_value, point.value)
        self.root_costs(point)
        if COST_CUTS:
            self.cost_cuts()
        return True

    def run(self) -> Status:
        """The search loop; OPTIMAL when the queue empties (the caller reads infeasibility from no incumbent)."""
        if not self.root():
            return Status.OPTIMAL
        heap: list[_Node] = []
        current: _Node | None = _Node(self.root_value, next(self.counter), np.empty(0, dtype=int),
                                      np.empty(0, dtype=int))
        while True:
            now = self.elapsed()
            if self.log.due(now):
                self.log.row(now, self.nodes, len(heap), None if self.best is None else self.best[0],
                             min([self.lower_bound()] + [n.bound for n in heap[:1]]))
            if self.out_of_time():
                if current is not None:
                    heapq.heappush(heap, current)
                self._close(min((n.bound for n in heap), default=math.inf))
                return Status.TIME_LIMIT
            if current is None:
                self.tighten()
                while heap and heap[0].bound >= self.prune_level():
                    self._close(heapq.heappop(heap).bound)
                if not heap:
                    return Status.OPTIMAL
                current = heapq.heappop(heap)
            current = self.process(current, heap)

    def lower_bound(self) -> float:
        """The least bound over every node (never above the incumbent)."""
        return self.done_min if self.best is None else min(self.done_min, self.best[0])


class L1Bnb:
    """The search of the module docstring as a backend (exact L1-norm CSVMs only)."""

    name = "bnb"

    def solve(self, problem: MIQP, options: SolverOptions) -> Solution:
        watch = Stopwatch()
        search = _L1Search(problem, options, watch)

        def message() -> str:
            margin_solves = 0 if search.margin_lp is None else search.margin_lp.solves
            return f"{search.lp.lp_solves} node LP solves, {margin_solves} big-M tightening LPs"

        return run_lp_search(
            problem, search, watch,
            formulation="branch-and-bound over anchor indicators (L1-norm CSVM MILP, HiGHS LP nodes)",
            message=message,
            gap_open=lambda objective, bound: relative_gap(objective, bound) > options.mip_gap * (1 + 1e-9),
        )
