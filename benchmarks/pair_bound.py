"""Issue 27: a second-order count bound at bnb's root, measured (results/issue27_count_bounds.md, section 6).

At the root of a variant-grid instance (``benchmarks/solve_time.py``), after bnb's single-anchor costs c_j, this
solves D(F0 u {j, k}) for every pair of free points below margin 1 (the pairs' lower bounds for the others: max of
their single costs, D being monotone) and reports the least t for which the graph on the free points (vertices
with c_j <= t, edges with pair cost <= t) has a core in which each of at least ``need`` vertices keeps ``need - 1``
neighbours: a clique of ``need`` points, which every solution's forced set contains, needs such a core, so t bounds
the optimum from below, as the r-th smallest c_j does for single points. Run (a wrapper: bnb is stopped after its
root's costs)::

    python benchmarks/pair_bound.py p20 1000 27
    python benchmarks/pair_bound.py acc 1000 0
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from csvm_stats.optimization.engine import fit_csvm
from csvm_stats.optimization.solvers import SolverOptions, bnb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solve_time import split, synthetic


class Stop(Exception):
    pass

def core_ok(n, lb_pair, cost, t, need):
    """Is there a subset of >= need vertices in which each has >= need-1 neighbours (vertex cost <= t, edge lb <= t)?"""
    alive = cost <= t
    adj = (lb_pair <= t) & alive[:, None] & alive[None, :]
    np.fill_diagonal(adj, False)
    while True:
        deg = adj[alive][:, alive].sum(1)
        idx = np.flatnonzero(alive)
        bad = idx[deg < need - 1]
        if bad.size == 0:
            return alive.sum() >= need
        alive[bad] = False
        if alive.sum() < need:
            return False

def experiment(self, forced, dropped, bound, root, heap, origin=None):
    members, count = self.members[0], self.counts[0]
    free = members[~forced[members] & ~dropped[members]]
    need = count - int(forced[members].sum())
    margins = self.y_j * (self.phi_j @ root.w + root.b)
    hard = free[margins[free] < 1.0 - self.forced_tol]
    single = self.cost[free]
    kth = np.partition(single, need - 1)[need - 1]
    t0 = time.process_time()
    H = hard[np.argsort(self.cost[hard])]
    nH = len(H)
    pair = np.full((nH, nH), np.inf)
    for a in range(nH):
        for b in range(a + 1, nH):
            two = forced.copy(); two[H[a]] = two[H[b]] = True
            r = self.relax(two, root.packed, np.inf, self.tol)
            pair[a, b] = pair[b, a] = np.inf if r is None else r.dual
    # all free points: non-hard cost = their single cost; pair lb = max of singles for pairs with a non-hard point
    pos = {j: i for i, j in enumerate(free)}
    nF = len(free)
    lb = np.maximum.outer(single, single)
    for a in range(nH):
        for b in range(nH):
            if a != b:
                lb[pos[H[a]], pos[H[b]]] = max(lb[pos[H[a]], pos[H[b]]], pair[a, b])
    cands = np.unique(np.r_[single, pair[np.isfinite(pair)]])
    cands = cands[cands >= kth]
    lo, hi = 0, len(cands) - 1
    if not core_ok(nF, lb, single, cands[hi], need):
        pb = np.inf
    else:
        while lo < hi:
            mid = (lo + hi) // 2
            if core_ok(nF, lb, single, cands[mid], need):
                hi = mid
            else:
                lo = mid + 1
        pb = cands[lo]
    print(f"root {root.dual:.3f} single-count bound {kth:.3f} pair-core bound {pb:.3f}; hard {nH}, free {nF}, need {need}; "
          f"pairs {nH*(nH-1)//2} in {time.process_time()-t0:.1f} CPU-s; median pair excess over max single "
          f"{np.median((pair - np.maximum.outer(self.cost[H], self.cost[H]))[np.triu_indices(nH, 1)]):.3f}", flush=True)
    raise Stop

bnb._Search._process = experiment
case, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
p, shift, kind, target = {"acc": (10, 1.0, "acc", 0.8), "p20": (20, 1.0, "tpr", 0.9), "tnr": (10, 1.0, "tnr", 0.9)}[case]
X, y = synthetic(n, p=p, seed=seed, shift=shift); I, J = split(y, seed)
size = {"tpr": int((y[J] > 0).sum()), "tnr": int((y[J] < 0).sum()), "acc": len(J)}[kind]
count = int(np.ceil(target * size))
try:
    fit_csvm(X[I], y[I], X[J], y[J], C=1.0, kernel="linear", min_counts={kind: count}, solver="bnb",
             options=SolverOptions(time_limit=600, clock="cpu"))
except Stop:
    pass
