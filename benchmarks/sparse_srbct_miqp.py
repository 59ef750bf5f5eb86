"""The SRBCT cardinality MIQP itself, SCIP against bnb on the same model (issue 27, item 5).

``benchmarks/sparse_srbct.py`` times the user's path; there ``solver="scip"``
also ranks the features with SCIP, whose L1 optimum can differ from
HiGHS's (ties), so SCIP and ``auto`` may screen different genes. Here the
model is built once per split exactly as ``CSVM(..., max_features=s).fit()``
with ``solver="auto"`` builds it (ranking, screening to 100 genes, start,
tightening; EWS vs rest, ``tpr_min=0.9``, binomial margin, default split with
``random_state`` = seed) and then solved by each backend with the same limit
on the solver alone (``--limit`` CPU seconds, ``mip_gap=0.01``). Results go
to ``benchmarks/results/sparse_srbct_miqp_k<s>[_seed<seed>].csv`` (one file
per process; ``sparse_srbct.py --report-only`` style merging is done by hand).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
import warnings
from pathlib import Path

import pandas as pd

import csvm_stats.sparse.model as sparse_model
from csvm_stats.data.datasets import load_dataset
from csvm_stats.models.model import CSVM
from csvm_stats.optimization.solvers import SolverOptions, solve

OUT = Path(__file__).resolve().parent / "results"


class _Built(Exception):
    """Raised by the capture hook once the cardinality model is built (the fit stops there)."""

    def __init__(self, problem) -> None:
        super().__init__("built")
        self.problem = problem


def captured_miqp(fit):
    """The cardinality MIQP that calling ``fit()`` builds (its solve is skipped: the fit stops there)."""
    original = sparse_model._solve

    def capture(problem, solver, options, what, budget=None):
        if "v" in problem.miqp.blocks:
            raise _Built(problem.miqp)
        return original(problem, solver, options, what, budget)

    sparse_model._solve = capture
    try:
        fit()
    except _Built as built:
        return built.problem
    finally:
        sparse_model._solve = original
    raise RuntimeError("the fit finished without building a cardinality model")


def build(seed: int, X: pd.DataFrame, ews: pd.Series, max_features: int):
    """The cardinality MIQP of the default ``auto`` fit of split ``seed``."""

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            CSVM(ews, X, tpr_min=0.9, bound="binomial", positive=True, max_features=max_features).fit(
                random_state=seed, solver="auto", time_limit=600, clock="cpu")

    return captured_miqp(fit)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed-list", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--max-features", type=int, default=20)
    parser.add_argument("--limit", type=float, default=60.0)
    parser.add_argument("--solvers", nargs="+", default=["scip", "bnb"])
    args = parser.parse_args()
    X, y = load_dataset("srbct")
    ews = pd.Series(y.to_numpy() < 0, name="EWS")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    rows = []
    for seed in args.seed_list:
        problem = build(seed, X, ews, args.max_features)
        for solver in args.solvers:
            start = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rec = solve(problem, solver, SolverOptions(time_limit=args.limit, mip_gap=1e-2, clock="cpu")).record
            rows.append({
                "seed": seed, "max_features": args.max_features, "solver": solver, "status": rec.status.value,
                "objective": rec.objective, "bound": rec.best_bound, "gap": rec.gap, "nodes": rec.nodes,
                "solve_cpu_s": time.process_time() - start, "start": problem.objective(problem.start),
                "n_vars": problem.n_vars, "commit": commit, "load": round(os.getloadavg()[0], 1),
            })
            print(rows[-1], flush=True)
    name = f"sparse_srbct_miqp_k{args.max_features}_seed{'-'.join(map(str, args.seed_list))}.csv"
    pd.DataFrame(rows).to_csv(OUT / name, index=False)


if __name__ == "__main__":
    main()
