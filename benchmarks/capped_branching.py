"""Issue 27: bnb with and without capped dropped points, two trees side by side (results/issue27_count_bounds.md, 5).

Each case runs one fit per tree, the trees at the same time in fresh processes (working directory ``/`` and
``PYTHONPATH`` = the tree, so each imports its own ``csvm_stats``), and prints one JSON line per fit; the CPU
seconds are the fit's own and the limit is on the CPU clock. A case is ``kind:n:seed:limit`` with kind one of
the variant grid's instances (``benchmarks/solve_time.py``: ``acc``, ``p20``, ``tnr``, ``close``, ``tpr95``) or
``bench`` (the benchmark instance, TPR >= 0.9, split seed 0)::

    python benchmarks/capped_branching.py --trees main=/work/main caps=/work/wt/caps --cases acc:1000:0:20 p20:1000:27:60
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

CASES = {"acc": (10, 1.0, "acc", 0.8), "p20": (20, 1.0, "tpr", 0.9), "tnr": (10, 1.0, "tnr", 0.9),
         "close": (5, 0.5, "tpr", 0.9), "tpr95": (10, 1.0, "tpr", 0.95), "bench": (10, 1.0, "tpr", 0.9)}


def one_fit(case: str, n: int, seed: int, limit: float) -> dict:
    """The fit of one case in this process (numba compiled first, on a small problem)."""
    import warnings

    import numpy as np

    import csvm_stats
    from csvm_stats.optimization.engine import fit_csvm
    from csvm_stats.optimization.solvers import SolverOptions

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from solve_time import split, synthetic

    p, shift, kind, target = CASES[case]
    X, y = synthetic(n, p=p, seed=seed, shift=shift)
    I, J = split(y, 0 if case == "bench" else seed)
    size = {"tpr": int((y[J] > 0).sum()), "tnr": int((y[J] < 0).sum()), "acc": len(J)}[kind]
    count = int(np.ceil(target * size))
    fit_csvm(X[I][:60], y[I][:60], X[J][:60], y[J][:60], C=1.0, kernel="linear", min_counts={kind: 5},
             solver="bnb", options=SolverOptions(time_limit=5, clock="cpu"))
    load, cpu0 = os.getloadavg()[0], time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_csvm(X[I], y[I], X[J], y[J], C=1.0, kernel="linear", min_counts={kind: count}, solver="bnb",
                       options=SolverOptions(time_limit=limit, clock="cpu"))
    r = fit.record
    return {"tree": str(Path(csvm_stats.__file__).resolve().parents[1]), "case": case, "n": n, "seed": seed,
            "status": r.status.value, "obj": round(r.objective, 3), "bound": round(r.best_bound, 3),
            "gap": round(r.gap, 4), "solves": r.svm_solves, "nodes": r.nodes,
            "cpu": round(time.process_time() - cpu0, 2), "load": round(load, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", nargs="+", default=[], help="name=path of each tree")
    parser.add_argument("--cases", nargs="+", default=[], help="kind:n:seed:limit")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child: run this case here
    args = parser.parse_args()
    if args.one:
        case, n, seed, limit = args.one.split(":")
        print(json.dumps(one_fit(case, int(n), int(seed), float(limit))), flush=True)
        return
    for case in args.cases:
        children = [subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--one", case], cwd="/",
                                     env={**os.environ, "PYTHONPATH": tree.split("=", 1)[1]},
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                    for tree in args.trees]
        for child in children:
            print(child.communicate()[0].strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
