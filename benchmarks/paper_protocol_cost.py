"""What one CSVM solve of the paper's full protocol costs: australian, RBF, bnb against SCIP, CPU time.

One inner training part of the paper's Algorithm 1 (10 x 10 folds: 81% of the
690 rows, split 50/50 into I and J), TPR >= 0.88 with the Hoeffding margin,
three (C, gamma) pairs of the paper's grid, 30 CPU-s per fit. The full
protocol needs 121 pairs x 10 outer x 10 inner folds x 2 experiments =
24,200 such solves per data set; ``experiments_notes.md`` turns the measured
times into its cost. Run ``nice -n 10 python benchmarks/paper_protocol_cost.py``
(about 2 CPU-minutes; ``--solvers bnb`` for bnb alone); it prints one JSON line per fit.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parent))
from experiments import load  # noqa: E402
from solve_time import warm_up  # noqa: E402

from csvm_stats.inference.bounds import adjust_target  # noqa: E402
from csvm_stats.optimization.engine import fit_csvm  # noqa: E402
from csvm_stats.optimization.solvers import SolverOptions  # noqa: E402


def main() -> None:
    solvers = sys.argv[sys.argv.index("--solvers") + 1 :] if "--solvers" in sys.argv else ["bnb", "scip"]
    X, y = load("australian")
    X, y = X.to_numpy(float), np.asarray(y, float)
    outer = next(StratifiedKFold(10, shuffle=True, random_state=0).split(X, y))[0]
    inner = next(StratifiedKFold(10, shuffle=True, random_state=0).split(X[outer], y[outer]))[0]
    rows = outer[inner]
    Xs, ys = StandardScaler().fit_transform(X[rows]), y[rows]
    I, J = train_test_split(np.arange(len(ys)), test_size=0.5, stratify=ys, random_state=0)
    n_pos = int((ys[J] > 0).sum())
    k = adjust_target(0.88, n_pos, 0.05, "hoeffding").count
    warm_up()  # bnb's numba kernels compiled (or loaded from cache) before timing
    for C, gamma in [(8.0, 2**-4), (0.5, 2**-5), (32.0, 2**-2)]:
        for solver in solvers:
            t0 = time.process_time()
            fit = fit_csvm(Xs[I], ys[I], Xs[J], ys[J], C=C, kernel="rbf", gamma=gamma, min_counts={"tpr": k},
                           solver=solver, options=SolverOptions(time_limit=30, clock="cpu"))
            rec = fit.record
            print(json.dumps(dict(C=C, gamma=gamma, solver=solver, n=len(ys), k=k, npos=n_pos,
                                  status=rec.status.value, gap=rec.gap, cpu=time.process_time() - t0,
                                  svm=rec.svm_solves)), flush=True)


if __name__ == "__main__":
    main()
