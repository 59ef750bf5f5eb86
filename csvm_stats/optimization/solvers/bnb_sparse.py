r"""Backend ``"bnb"`` on the cardinality CSVM: branch-and-bound over features and anchor points.

The model (:func:`csvm_stats.optimization.problem.with_cardinality`, exact
primal, :attr:`MIQP.cardinality`) is the CSVM with at most s non-zero
coefficients. A node fixes features on or off and anchor points forced
(:math:`z_j = 1`: hard margin) or dropped (:math:`z_j = 0`), as
:mod:`~csvm_stats.optimization.solvers.bnb` does for the anchors alone.

*Lower bounds.* The node's perspective relaxation
(:mod:`csvm_stats.optimization.perspective`): the squared k-support norm on
the free features, with the free anchor points and the count rows left out.
Its dual bound is valid at every dual point; the same point bounds both
children of every free feature at no cost, which fixes features whose child
cannot beat the incumbent (reduced-cost fixing) and gives the children their
bounds when they are queued. Anchor requirements propagate as in bnb: a
requirement that needs all its free points forces them; one that can no
longer be met prunes the node.

*Upper bounds.* At every node, the refit on the node's features on plus the
budget's largest :math:`|w_f|` of the relaxation (an SVM with the forced
anchors as hard margins, by SMO), its direction shifted to the best intercept
meeting every requirement (:func:`~csvm_stats.optimization.intercept_shift.best_shift`;
a support already refitted under the same forced anchors is not refitted again:
on SRBCT, s = 20, about half the nodes repeat one);
the MIQP's start (the exact CSVM on the best-ranked features); and a swap
search (:meth:`_Search.swaps`) from every new incumbent and from the refit of
every SWAP_PERIOD-th node: drop a chosen feature of small :math:`|w_f|`, add
one of large :math:`|u_f|` (the dual's pull on a column left out), move to
the first refit that improves (SRBCT, s = 20, split 0: the node refits alone
stopped at 0.14901 after 15 CPU-s, with the swaps from nodes at 0.14807).

*Branching.* A relaxation point that misses a requirement on the free anchor
points branches on that requirement's free point of lowest margin (forced,
dropped); else on the free feature whose :math:`\sigma_f` is most
fractional. Best bound first. A node is closed when its relaxation,
converged, is sparse and meets every requirement (then it is a solution).

Every stop is reported: optimal within ``mip_gap``, the time limit with the
gap, an end before the limit with the gap open (nodes closed on relaxations
that did not converge: status TIME_LIMIT, the record's ``reason`` saying so),
infeasible (no node left, no solution), interrupted (Ctrl-C).
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linprog

from csvm_stats.optimization.intercept_shift import best_shift
from csvm_stats.optimization.perspective import RELAX_TOL, Features, PerspectiveRelaxation, child_bounds, dual_bound
from csvm_stats.optimization.problem import MIQP, CardinalityData
from csvm_stats.optimization.solvers._common import Stopwatch, relative_gap
from csvm_stats.optimization.solvers.base import search_end, Solution, SolveRecord, SolverOptions, Status
from csvm_stats.optimization.solvers.bnb import MARGIN_TOL, BnbBackend, _sigint_sets_flag
from csvm_stats.optimization.solvers.search_log import SearchLog

NODE_ROUNDS = 30  # block-coordinate passes of a node's relaxation
LEAF_ROUNDS = 200  # passes before a sparse, feasible relaxation point is taken as the node's optimum
SHIFT_FACTORS: tuple[float, ...] = (1.0, 1.0 + 1e-7, 1.0 + 1e-5, 1.001, 1.5)  # scalings a refit direction may take
SWAP_ADD = 8  # swap search: columns to add (largest |u_f| left out)
SWAP_DROP = 6  # swap search: chosen columns to drop (smallest |w_f|)
SWAP_PERIOD = 20  # every SWAP_PERIOD-th node also starts a swap search from its own refit
SWAP_SHARE = 0.15  # share of the time limit the swap searches may take in all
ZERO = 1e-9  # |w_f| at or below this (relative to max |w|) counts as zero in a relaxation point


@dataclass(order=True)
class _Node:
    bound: float
    order: int
    features: Features = field(compare=False)
    forced: np.ndarray = field(compare=False)  # anchor mask
    dropped: np.ndarray = field(compare=False)
    alpha: np.ndarray | None = field(compare=False, default=None)
    sigma: np.ndarray | None = field(compare=False, default=None)


class _Search:
    """One branch-and-bound run on an exact cardinality CSVM."""

    def __init__(self, card: CardinalityData, problem: MIQP, options: SolverOptions, watch: Stopwatch) -> None:
        d = card.csvm
        self.d, self.s, self.problem, self.options, self.watch = d, card.max_features, problem, options, watch
        self.n_i, self.n_j = d.phi_train.shape[0], d.phi_anchor.shape[0]
        self.p = d.phi_train.shape[1]
        self.X = np.vstack([d.phi_train, d.phi_anchor])
        self.y = np.r_[d.y_train, d.y_anchor]
        self.cw = d.C * d.weight
        self.tol = float(np.clip(options.mip_gap, 1e-9, 1e-5))  # the dual solver's KKT tolerance
        self.rel_tol = min(RELAX_TOL, 0.1 * options.mip_gap)  # primal-dual agreement of a converged relaxation
        upper = np.r_[self.cw / 2.0, np.full(self.n_j, np.inf)]
        self.relaxation = PerspectiveRelaxation(self.X, self.y, upper, self.n_i, self.cw, self.tol)
        self.members = [np.asarray(req.members, dtype=int) for req in d.requirements]
        self.counts = [int(req.count) for req in d.requirements]
        z = problem.blocks["z"]
        self.z_lo, self.z_hi = problem.lb[z] > 0.5, problem.ub[z] > 0.5  # proven fixings
        self.best: tuple[float, np.ndarray, float] | None = None
        self.nodes = 0
        self.floor = math.inf  # least bound of a node pruned or closed
        self.unresolved = False
        self.interrupted = False
        self.log = SearchLog(options, "branch-and-bound over features and anchor points")
        self.counter = itertools.count()
        self.swap_time = 0.0
        self.swept: set[bytes] = set()  # supports the swap search started from
        self.refitted: dict[bytes, float] = {}  # (support, forced anchors) of the node refits -> the value offered

    # ------------------------------------------------------------- helpers
    def elapsed(self) -> float:
        if self.interrupted:
            raise KeyboardInterrupt
        return self.watch.charged(self.options.clock)

    def prune_level(self) -> float:
        if self.best is None:
            return math.inf
        return self.best[0] - self.options.mip_gap * abs(self.best[0])

    def rows(self, forced: np.ndarray) -> np.ndarray:
        return np.r_[np.arange(self.n_i), self.n_i + np.flatnonzero(forced)]

    def offer(self, w: np.ndarray) -> float:
        """The objective of the best scaled and shifted version of direction ``w`` (:data:`SHIFT_FACTORS`; inf:
        none meets the requirements), kept when it beats the incumbent."""
        if np.count_nonzero(w) > self.s:
            return math.inf
        d = self.d
        found = best_shift(w, d.phi_train, d.y_train, d.phi_anchor, d.y_anchor, d.C, d.weight, d.requirements,
                           SHIFT_FACTORS)
        if found is None:
            return math.inf
        value, w, b = found
        margins = d.y_anchor * (d.phi_anchor @ w + b)
        if np.any(margins[self.z_lo] < 1.0 - MARGIN_TOL):  # a proven fixing the point would contradict
            return math.inf
        if self.best is None or value < self.best[0]:
            self.best = (float(value), w.copy(), float(b))
        return float(value)

    def refit(self, support: np.ndarray, forced: np.ndarray, alpha: np.ndarray | None = None):
        """The SVM on the columns ``support`` with the ``forced`` anchors as hard margins: ``(w, b, alpha)``."""
        sigma = support.astype(float)
        w, b, alpha, _ = self.relaxation.solve_sigma(sigma, self.rows(forced), alpha, tol=self.tol)
        return w, b, alpha

    # ------------------------------------------------------------- anchors
    def propagate(self, forced: np.ndarray, dropped: np.ndarray) -> bool:
        """Force the free points of a requirement that needs them all (in place); False when one cannot be met."""
        changed = True
        while changed:
            changed = False
            for members, count in zip(self.members, self.counts):
                need = count - int(forced[members].sum())
                free = members[~forced[members] & ~dropped[members]]
                if need > free.size:
                    return False
                if 0 < need == free.size:
                    forced[free] = True
                    changed = True
        return True

    def missed(self, w: np.ndarray, b: float, forced: np.ndarray, dropped: np.ndarray) -> int | None:
        """A free anchor point to branch on when (w, b) misses a requirement (lowest margin), else ``None``."""
        margins = self.d.y_anchor * (self.d.phi_anchor @ w + b)
        met = forced | (~dropped & (margins >= 1.0 - 10 * self.tol))
        for members, count in zip(self.members, self.counts):
            if int(met[members].sum()) < count:
                free = members[~forced[members] & ~dropped[members]]
                return int(free[np.argmin(margins[free])])
        return None

    def separable(self, features: Features, forced: np.ndarray) -> bool:
        """Does some (w, b) on the allowed columns meet every forced margin (an LP)?"""
        cols = np.flatnonzero(~features.outside)
        idx = np.flatnonzero(forced)
        if idx.size == 0:
            return True
        A = -self.d.y_anchor[idx, None] * np.c_[self.d.phi_anchor[idx][:, cols], np.ones(idx.size)]
        res = linprog(np.zeros(cols.size + 1), A_ub=A, b_ub=-np.ones(idx.size), bounds=(None, None),
                      method="highs")
        return res.status != 2

    # ------------------------------------------------------------- primal
    def swaps(self, support: np.ndarray, value: float, forced: np.ndarray, deadline: float) -> None:
        """Swap search (module docstring) from the columns ``support`` (objective ``value``) until no swap
        improves or ``deadline``; every point it visits is offered as incumbent."""
        while self.elapsed() < deadline:
            key = support.tobytes()
            if key in self.swept:
                return
            self.swept.add(key)
            w, _, alpha = self.refit(support, forced)
            u = dual_bound(alpha, self.y, self.X, self.rows(forced), Features(support, ~support, self.s)).u
            outside = np.flatnonzero(~support)
            adds = outside[np.argsort(-np.abs(u[outside]))[:SWAP_ADD]]
            trials = []
            if support.sum() < self.s:  # room left: add the strongest pulls
                trial = support.copy()
                trial[adds[: self.s - int(support.sum())]] = True
                trials.append(trial)
            else:
                inside = np.flatnonzero(support)
                for g, f in itertools.product(inside[np.argsort(np.abs(w[inside]))[:SWAP_DROP]], adds):
                    trial = support.copy()
                    trial[g], trial[f] = False, True
                    trials.append(trial)
            for trial in trials:
                if self.elapsed() >= deadline:
                    return
                found = self.offer(self.refit(trial, forced, alpha)[0])
                if found < value * (1.0 - 1e-9):
                    support, value = trial, found
                    break
            else:
                return

    def search_swaps(self, forced: np.ndarray, support: np.ndarray | None = None, value: float = math.inf) -> None:
        """A swap search from ``support`` (default: the incumbent's) within what is left of SWAP_SHARE of the
        time limit."""
        if support is None:
            if self.best is None:
                return
            support, value = np.abs(self.best[1]) > 0, self.best[0]
        start = self.elapsed()
        budget = SWAP_SHARE * self.options.time_limit - self.swap_time
        if budget > 0:
            self.swaps(support, value, forced, start + budget)
            self.swap_time += self.elapsed() - start

    # ------------------------------------------------------------- search
    def run(self) -> Status:
        start = self.problem.start
        if start is not None:
            blocks = self.problem.blocks
            self.offer(np.where(start[blocks["v"]] > 0.5, start[blocks["w"]], 0.0))
        forced, dropped = self.z_lo.copy(), ~self.z_hi
        if not self.propagate(forced, dropped):
            return Status.OPTIMAL  # no node: infeasible unless the start stands
        root_forced = forced.copy()
        self.search_swaps(root_forced)
        features = Features(np.zeros(self.p, dtype=bool), np.zeros(self.p, dtype=bool), self.s).settled()
        heap = [_Node(-math.inf, next(self.counter), features, forced, dropped)]
        while heap:  # best bound first (plunging to the better child was measured no better on SRBCT)
            now = self.elapsed()
            if now >= self.options.time_limit:
                self.floor = min(self.floor, heap[0].bound)
                return Status.TIME_LIMIT
            if self.log.due(now):
                self.log.row(now, self.nodes, len(heap), None if self.best is None else self.best[0],
                             self.lower_bound(heap[0].bound))
            node = heapq.heappop(heap)
            if node.bound >= self.prune_level():
                self.floor = min(self.floor, node.bound)
                continue
            for child in self.process(node, root_forced):
                heapq.heappush(heap, child)
        return Status.OPTIMAL

    def process(self, node: _Node, root_forced: np.ndarray) -> list[_Node]:
        """Bound, fix and try to close ``node``; its children to search (none: pruned or closed)."""
        forced, dropped = node.forced.copy(), node.dropped.copy()
        features = node.features.settled()
        if not self.propagate(forced, dropped):
            return []  # no solution below this node
        rows = self.rows(forced)
        bound, alpha, sigma = node.bound, node.alpha, node.sigma
        while True:
            self.nodes += 1
            fixed = not features.free.any()
            rel = self.relaxation.relax(features, rows, alpha, sigma, self.prune_level(), 1 if fixed else NODE_ROUNDS,
                                        self.rel_tol)
            bound = max(bound, rel.bound.value)
            alpha, sigma = rel.alpha, rel.sigma
            if not math.isfinite(rel.value) and not self.separable(features, forced):
                return []  # no hyperplane on the allowed columns meets the forced margins
            if bound >= self.prune_level():
                self.floor = min(self.floor, bound)
                return []
            chosen = features.inside.copy()
            free = np.flatnonzero(features.free)
            top = free[np.argsort(-np.abs(rel.w[free]), kind="stable")[: features.budget]]
            chosen[top[np.abs(rel.w[top]) > 0]] = True
            incumbent = math.inf if self.best is None else self.best[0]
            key = chosen.tobytes() + forced.tobytes()
            value = self.refitted.get(key)
            if value is None:  # a support refitted before (with the same forced anchors) is not refitted again
                value = self.refitted[key] = self.offer(self.refit(chosen, forced, alpha)[0])
            if value < incumbent:
                self.search_swaps(root_forced)
            elif self.nodes % SWAP_PERIOD == 0 and math.isfinite(value):
                self.search_swaps(root_forced, chosen, value)
            if bound >= self.prune_level():
                self.floor = min(self.floor, bound)
                return []
            off, on = child_bounds(rel.bound, features)
            level = self.prune_level()
            to_in, to_out = features.free & (off >= level), features.free & (on >= level)
            if not (to_in.any() or to_out.any()):
                break
            if (to_in & to_out).any() or int((features.inside | to_in).sum()) > self.s:
                self.floor = min(self.floor, level)
                return []
            features = Features(features.inside | to_in, features.outside | to_out, self.s).settled()
            bound = max(bound, dual_bound(alpha, self.y, self.X, rows, features).value)
        return self.branch(rel, features, forced, dropped, bound)

    def branch(self, rel, features: Features, forced: np.ndarray, dropped: np.ndarray, bound: float) -> list[_Node]:
        free = np.flatnonzero(features.free)
        w = rel.w
        scale = max(float(np.abs(w).max()), 1e-300)
        sparse = int((np.abs(w[free]) > ZERO * scale).sum()) <= features.budget
        j = self.missed(w, rel.b, forced, dropped) if math.isfinite(rel.value) else None
        if j is None and (sparse or free.size == 0) and math.isfinite(rel.value):
            if not rel.converged and free.size:
                more = self.relaxation.relax(features, self.rows(forced), rel.alpha, rel.sigma, self.prune_level(),
                                             LEAF_ROUNDS, self.rel_tol)
                bound = max(bound, more.bound.value)
                if not more.converged:
                    self.unresolved = True
                w = more.w
            elif not rel.converged:
                self.unresolved = True
            self.offer(np.where(np.abs(w) > ZERO * scale, w, 0.0))
            self.floor = min(self.floor, bound)  # closed: its relaxation's optimum is a solution
            return []
        if j is None and free.size == 0:  # every feature fixed, forced margins not met: the LP said separable
            self.unresolved = True
            self.floor = min(self.floor, bound)
            return []
        children = []
        if j is not None:
            for side in (True, False):
                f2, d2 = forced.copy(), dropped.copy()
                (f2 if side else d2)[j] = True
                children.append(self.child(bound, features, f2, d2, rel.alpha, rel.sigma))
            return [c for c in children if c is not None]
        off, on = child_bounds(rel.bound, features)
        frac = np.minimum(rel.sigma[free], 1.0 - rel.sigma[free])
        f = int(free[np.argmax(frac)]) if frac.max() > 1e-9 else int(free[np.argmax(np.abs(w[free]))])
        children.append(self.child(max(bound, on[f]), Features(features.inside | _one(self.p, f), features.outside,
                                                               self.s), forced, dropped, rel.alpha, rel.sigma))
        children.append(self.child(max(bound, off[f]), Features(features.inside, features.outside | _one(self.p, f),
                                                                self.s), forced, dropped, rel.alpha, rel.sigma))
        return [c for c in children if c is not None]

    def child(self, bound: float, features: Features, forced: np.ndarray, dropped: np.ndarray, alpha: np.ndarray,
              sigma: np.ndarray) -> _Node | None:
        """A child node, or ``None`` when its bound already prunes it."""
        if bound >= self.prune_level():
            self.floor = min(self.floor, bound)
            return None
        return _Node(bound, next(self.counter), features, forced, dropped, alpha, sigma)

    def lower_bound(self, heap_min: float = math.inf) -> float:
        best = math.inf if self.best is None else self.best[0]
        return min(best, self.floor, heap_min)


def _one(p: int, f: int) -> np.ndarray:
    mask = np.zeros(p, dtype=bool)
    mask[f] = True
    return mask


class SparseBnbBackend:
    """The cardinality search (module docstring) on :attr:`MIQP.cardinality`; backend ``"bnb"``
    (:mod:`~csvm_stats.optimization.solvers.bnb_backend`) hands it those models."""

    name = "bnb"

    def version(self) -> str:
        return BnbBackend().version()

    def solve(self, problem: MIQP, options: SolverOptions) -> Solution:
        watch = Stopwatch()
        search = _Search(problem.cardinality, problem, options, watch)
        try:
            with _sigint_sets_flag(search):
                status = search.run()
        except KeyboardInterrupt:
            status = Status.INTERRUPTED
        x = None if search.best is None else self._vector(problem, search.best)
        bound = search.lower_bound() if x is not None else math.nan
        objective = problem.objective(x) if x is not None else math.nan
        # a node closed without a converged relaxation can leave the gap open at a normal end
        gap_open = x is not None and relative_gap(objective, bound) > options.mip_gap * (1 + 1e-9)
        status, reason = search_end(status, x is not None, search.unresolved, gap_open)
        wall, cpu = watch.elapsed()
        record = SolveRecord(
            status=status, objective=objective, best_bound=bound, gap=relative_gap(objective, bound),
            wall_time=wall, cpu_time=cpu, nodes=search.nodes, backend=self.name, backend_version=self.version(),
            formulation=f"branch-and-bound over features and anchor points (perspective relaxation, at most "
                        f"{search.s} of {search.p} features)",
            message=f"{search.relaxation.smo_steps} SMO steps", reason=reason,
        )
        search.log.end(record)
        return Solution(record, x)

    @staticmethod
    def _vector(problem: MIQP, best: tuple[float, np.ndarray, float]) -> np.ndarray:
        """The MIQP's variables ``[w, b, xi, z, v]`` at an incumbent."""
        d = problem.cardinality.csvm
        _, w, b = best
        xi = np.maximum(0.0, 1.0 - d.y_train * (d.phi_train @ w + b))
        margins = d.y_anchor * (d.phi_anchor @ w + b)
        z = ((margins >= 1.0 - MARGIN_TOL) & (problem.ub[problem.blocks["z"]] > 0.5)).astype(float)
        return np.r_[w, b, xi, z, (w != 0).astype(float)]
