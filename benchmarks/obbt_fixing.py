r"""Issue 27, idea 2 as a fixing: do anchor points proven met in every better solution make bnb's tree smaller?

A point j with :math:`g_j = \min\{\text{obj}(w, b) : y_j(w^\top x_j + b) \le 1\} > UB` meets its margin in every
solution better than the incumbent UB, so :math:`z_j = 1` may be fixed (optimality-based bound tightening; the
built-in :mod:`csvm_stats.optimization.tightening` uses a ball for w and an interval for b, which fix none on these
instances). This script computes the exact :math:`g_j` (HiGHS QPs, :mod:`lagrangian_ceiling`) for the points at
margin >= 1 at the root, fixes those above ``--ub`` in the MIQP handed to bnb (``problem.lb``), and runs bnb;
``--mode base`` runs it unchanged. Instances: the variant grid of ``solve_time.py``. The fit's CPU seconds are
printed apart from the fixing's (an upper bound on what a built-in version would cost).

Run ``python benchmarks/obbt_fixing.py --seed 27 --ub 149.76 --mode fix`` and the same with ``--mode base``, each
in a fresh process.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import solve_time as st
from lagrangian_ceiling import Instance

from csvm_stats.optimization.engine import fit_csvm
from csvm_stats.optimization.solvers import SolverOptions, bnb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--ub", type=float, required=True, help="an incumbent's objective (bnb's)")
    parser.add_argument("--mode", choices=["fix", "base"], required=True)
    parser.add_argument("--variant", default="accuracy >= 0.8", choices=[v[0] for v in st.VARIANTS])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--limit", type=float, default=20.0, help="CPU seconds of the fit")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    _, p, shift, kind, target = next(v for v in st.VARIANTS if v[0] == args.variant)
    inst = Instance(args.n, args.seed, p, shift, kind, target)
    none = np.zeros(inst.nj, dtype=bool)
    _, margins = inst.root()
    cpu = time.process_time()
    fixed = none.copy()
    if args.mode == "fix":
        for j in np.flatnonzero(margins >= 1.0):
            fixed[j] = inst.svm(none, (j, 1.0))[0] > args.ub * (1.0 + 1e-6)
    fix_cpu = time.process_time() - cpu
    st.warm_up()
    X, y = st.synthetic(args.n, p=p, seed=args.seed, shift=shift)
    I, J = st.split(y, args.seed)
    solve = bnb.BnbBackend.solve

    def with_fixings(self, problem, options):
        z = problem.blocks["z"]
        assert z.stop - z.start == inst.nj  # one binary per member of the requirement, in the order of J
        problem.lb[z.start + np.flatnonzero(fixed)] = 1.0
        return solve(self, problem, options)

    bnb.BnbBackend.solve = with_fixings
    cpu = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_csvm(X[I], y[I], X[J], y[J], C=1.0, kernel="linear", min_counts={kind: inst.count}, solver="bnb",
                       options=SolverOptions(time_limit=args.limit, clock="cpu"))
    rec = fit.record
    row = dict(mode=args.mode, variant=args.variant, seed=args.seed, n=args.n, ub_for_fixing=args.ub,
               fixed=int(fixed.sum()), at_margin_1=int((margins >= 1.0).sum()), fix_cpu_s=fix_cpu,
               status=rec.status.value, objective=rec.objective, bound=rec.best_bound, gap=rec.gap, nodes=rec.nodes,
               svm_solves=rec.svm_solves, cpu_s=time.process_time() - cpu, load=os.getloadavg()[0])
    st.emit(row, args.out)


if __name__ == "__main__":
    main()
