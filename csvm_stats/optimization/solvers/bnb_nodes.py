r"""bnb's node records: waiting nodes, relaxations, the capped store of dual points, the per-requirement scan and
the nogoods (:mod:`csvm_stats.optimization.solvers.bnb` explains how the search uses them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numba import njit

_Packed = tuple[np.ndarray, np.ndarray]  # a dual point's nonzero rows and values


@dataclass(order=True)
class _Node:
    bound: float
    order: int
    forced: np.ndarray = field(compare=False)  # anchor indices forced beyond the root's
    dropped: np.ndarray = field(compare=False)  # anchor indices dropped beyond the root's
    start: _Packed | None = field(compare=False, default=None)  # a stored dual point (None: the root's)


@dataclass(frozen=True)
class _Relaxation:
    w: np.ndarray
    b: float
    dual: float
    met: bool  # the dual solver converged and every forced margin holds to CAP_TOL
    alpha: np.ndarray  # the dual point (warm start of the children)
    tol: float  # the KKT gap the dual solver was asked for

    @cached_property
    def packed(self) -> _Packed:
        """The dual point as (rows, values) of its nonzero entries (what a waiting node keeps; shared)."""
        rows = np.flatnonzero(self.alpha).astype(np.int32)
        return rows, self.alpha[rows]


class _DualStore:
    """Dual points kept for waiting nodes: at most ``budget`` nonzero entries in all, each point counted once."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self.peak = 0
        self._refs: dict[int, list] = {}  # id of a stored point -> [point, number of nodes holding it]

    def keep(self, point: _Packed, fallback: _Packed | None) -> _Packed | None:
        """``point`` for one more waiting node; beyond the budget ``fallback`` (a point already stored,
        the nearest stored ancestor's, or ``None``: the root's), which costs no memory."""
        entry = self._refs.get(id(point))
        if entry is None and self.used + point[0].size > self.budget:
            if fallback is None:
                return None
            point, entry = fallback, self._refs[id(fallback)]
        if entry is not None:
            entry[1] += 1
            return point
        self._refs[id(point)] = [point, 1]
        self.used += point[0].size
        self.peak = max(self.peak, self.used)
        return point

    def release(self, point: _Packed | None) -> None:
        """A node holding ``point`` has left the queue."""
        if point is None:
            return
        entry = self._refs[id(point)]
        entry[1] -= 1
        if entry[1] == 0:
            del self._refs[id(point)]
            self.used -= point[0].size


@njit(cache=True)
def _scan_requirement(members, forced, dropped, cost, count, margins, met_level):
    """One requirement at a node: ``(need, n_free, kth, n_met, worst)``.

    need = count minus its forced members; n_free = its members neither forced
    nor dropped; kth = the need-th smallest cost over them (``-inf`` when need
    <= 0, ``inf`` when need > n_free); n_met = free members with margin >=
    met_level; worst = the free member of least margin below it (-1: none).
    """
    need, n_free, n_met, worst = count, 0, 0, -1
    costs = np.empty(members.shape[0])
    for j in members:
        if forced[j]:
            need -= 1
        elif not dropped[j]:
            costs[n_free] = cost[j]
            n_free += 1
            if margins[j] >= met_level:
                n_met += 1
            elif worst < 0 or margins[j] < margins[worst]:
                worst = j
    if need <= 0:
        kth = -np.inf
    elif need > n_free:
        kth = np.inf
    else:
        kth = np.partition(costs[:n_free], need - 1)[need - 1]
    return need, n_free, kth, n_met, worst


@njit(cache=True)
def _scan_nogoods(forced, dropped, elems, starts, values, count):
    """Nogoods against a node: ``(value, drop_value)``.

    Nogood g is the index set ``elems[starts[g]:starts[g + 1]]`` with value
    ``values[g]`` (every value is at or above the prune level: nogoods are
    learned there, and the level only falls). value = that of a nogood the
    forced set contains (``-inf``: none). A nogood that misses a single free
    point k of the forced set drops k (``dropped[k] = True``, in place): the
    side forcing k has a bound of at least its value; drop_value is the least
    such value (``inf``: nothing dropped), which the caller records as pruned.
    """
    drop_value = np.inf
    for g in range(count):
        missing, n_missing = -1, 0
        for q in range(starts[g], starts[g + 1]):
            k = elems[q]
            if not forced[k]:
                n_missing += 1
                if n_missing > 1:
                    break
                missing = k
        if n_missing == 0:
            return values[g], drop_value
        if n_missing == 1 and not dropped[missing]:
            dropped[missing] = True
            drop_value = min(drop_value, values[g])
    return -np.inf, drop_value


class _Nogoods:
    r"""Forced sets proven not to lead below a value, learned from nodes pruned by their own relaxation.

    A node pruned by :math:`2 g(\alpha) \ge v` with dual point :math:`\alpha`: the
    point is dual-feasible for every forced set containing
    :math:`N = \{j \in F : \alpha_j > 0\}` (the other rows of F only add
    constraints; dropped and free points are not in the QP), so by weak duality
    every node forcing N has :math:`D \ge v`. The points forced at the root are
    left out of N (every node forces them). A nogood counts while v is at or
    above the prune level (which only falls).
    """

    def __init__(self) -> None:
        self.elems = np.zeros(1024, dtype=np.int64)
        self.starts = np.zeros(257, dtype=np.int64)
        self.values = np.zeros(256)
        self.count = 0

    def add(self, members: np.ndarray, value: float) -> None:
        """Learn nogood ``members`` (anchor indices) with value ``value``."""
        begin = self.starts[self.count]
        end = begin + members.size
        if end > self.elems.size:
            self.elems = np.resize(self.elems, max(2 * self.elems.size, end))
        if self.count + 1 >= self.values.size:
            self.values = np.resize(self.values, 2 * self.values.size)
            self.starts = np.resize(self.starts, self.values.size + 1)
        self.elems[begin:end] = members
        self.values[self.count] = value
        self.count += 1
        self.starts[self.count] = end

    def scan(self, forced: np.ndarray, dropped: np.ndarray) -> tuple[float, float]:
        """:func:`_scan_nogoods` over the nogoods learned so far (drops in ``dropped``, in place)."""
        value, drop_value = _scan_nogoods(forced, dropped, self.elems, self.starts, self.values, self.count)
        return float(value), float(drop_value)
