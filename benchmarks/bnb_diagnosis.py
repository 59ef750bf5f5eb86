"""Where bnb's bound is weak on the issue-27 variant grid: one instrumented fit per variant.

For each variant of :data:`solve_time.VARIANTS` (synthetic data and split of one seed) it fits the CSVM with
bnb and records, by wrapping the search's own steps (no change to the search):

- the root relaxation's bound D(F0), the single-anchor count bound after the root's costs, the warm start and
  the incumbent after the local search, the final incumbent and bound;
- the bound's trajectory: (CPU-s, SVM solves, nodes, bound of the node being solved, incumbent, open nodes)
  every 250 SVM solves;
- which anchor points are branched on: how many distinct ones, the share of positives, and quantiles of their
  margins at the root's solution (against the number of anchor points below margin 1 there).

Usage: ``python benchmarks/bnb_diagnosis.py LIMIT N SEED [VARIANT ...]`` (CPU-s limit, size, seed); prints one
JSON line per variant. Results of the issue-27 study: ``results/bnb_diagnosis.md``.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from csvm_stats.optimization.engine import fit_csvm
from csvm_stats.optimization.solvers import SolverOptions, bnb
from solve_time import VARIANTS, split, synthetic, warm_up

LOG: dict = {}


def instrument() -> None:
    """Wrap the search's steps so that they record into LOG."""
    search_cls = bnb._Search
    init, local, costs = search_cls.__init__, search_cls._local_search, search_cls._root_costs
    solve, branch = search_cls._solve, search_cls._branch_point

    def init_(self, *args, **kwargs):
        init(self, *args, **kwargs)
        LOG.clear()
        LOG.update(traj=[], branched=[], search=self)

    def local_(self, start=None, max_solves=None):
        if start is not None:  # a restart from the peeling heuristic (accuracy), not the root's local search
            local(self, start, max_solves)
            return
        LOG["root_dual"], LOG["incumbent_before_local_search"] = self.root.dual, self.best[0]
        local(self)
        LOG["incumbent_after_local_search"] = self.best[0]

    def costs_(self, forced, dropped, root):
        costs(self, forced, dropped, root)
        LOG["count_bound_after_root_costs"] = self._count_bound(forced, dropped)
        LOG["root_margins"] = self.y_j * (self.phi_j @ root.w + root.b)

    def solve_(self, node, heap):
        if self.svm_solves % 250 == 0:
            LOG["traj"].append((round(time.process_time(), 2), self.svm_solves, self.nodes, round(node.bound, 3),
                                None if self.best is None else round(self.best[0], 3), len(heap)))
        solve(self, node, heap)

    def branch_(self, j, forced, dropped):
        k = branch(self, j, forced, dropped)
        LOG["branched"].append(int(k))
        return k

    search_cls.__init__, search_cls._local_search, search_cls._root_costs = init_, local_, costs_
    search_cls._solve, search_cls._branch_point = solve_, branch_


def diagnose(name: str, n: int, limit: float, seed: int) -> dict:
    p, shift, kind, target = next(v[1:] for v in VARIANTS if v[0] == name)
    X, y = synthetic(n, p=p, seed=seed, shift=shift)
    I, J = split(y, seed)
    size = {"tpr": int((y[J] > 0).sum()), "tnr": int((y[J] < 0).sum()), "acc": len(J)}[kind]
    cpu0 = time.process_time()
    fit = fit_csvm(X[I], y[I], X[J], y[J], C=1.0, kernel="linear", min_counts={kind: int(np.ceil(target * size))},
                   solver="bnb", options=SolverOptions(time_limit=limit, clock="cpu"))
    rec = fit.record
    out = dict(name=name, n=n, seed=seed, status=rec.status.value, objective=rec.objective, bound=rec.best_bound,
               gap=rec.gap, cpu_s=time.process_time() - cpu0, svm_solves=rec.svm_solves, nodes=rec.nodes,
               warm_start=fit.warm_start_objective)
    out.update({k: LOG[k] for k in ("root_dual", "count_bound_after_root_costs", "incumbent_before_local_search",
                                    "incumbent_after_local_search") if k in LOG})
    branched = np.array(LOG["branched"], dtype=int)
    if "root_margins" in LOG and branched.size:
        margins, y_j = LOG["root_margins"], LOG["search"].y_j
        out.update(branched_distinct=int(np.unique(branched).size), branched_positive_share=float((y_j[branched] > 0).mean()),
                   branched_root_margin_q05_50_95=np.quantile(margins[branched], [0.05, 0.5, 0.95]).round(3).tolist(),
                   anchors_below_margin_1_at_root=int((margins < 1).sum()), anchors=int(margins.size))
    out["trajectory"] = LOG["traj"][:: max(1, len(LOG["traj"]) // 12)]
    return out


def main() -> None:
    limit, n, seed = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    warm_up()
    instrument()
    for name in sys.argv[4:] or [v[0] for v in VARIANTS]:
        print(json.dumps(diagnose(name, n, limit, seed), default=float), flush=True)


if __name__ == "__main__":
    main()
