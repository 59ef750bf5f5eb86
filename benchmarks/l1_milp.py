"""The L1-norm CSVM MILP on every backend, side by side (issue 27, item 5: "the L1 MILP where HiGHS stalls").

Instance generator (``instance(seed)``): two Gaussian classes
(:class:`csvm_stats.data.simulation.GaussianClasses`, ``dim=500``,
``distance=2``, ``informative=5``: the class means 2 apart along
(e_1 + ... + e_5)/sqrt 5, the other 495 columns pure noise), n = 300 points
(150 positive) drawn with ``numpy.random.default_rng(seed)``, shuffled by the
same generator; the first 150 are the training sample I, the last 150 the
anchor sample J. Requirement TPR >= 0.8 on J (``ceil(0.8 * positives of J)``
anchor positives with margin >= 1), C = 1, unit weights.

The model is the one ``CSVM(..., penalty="l1").fit`` solves
(:func:`csvm_stats.sparse.model.fit_l1_csvm`): the shifted-intercept warm
start polished by the L1 LP (:func:`csvm_stats.sparse.model._l1_start`), its
objective U giving the proven big-M constants
(:func:`csvm_stats.optimization.problem.build_l1_primal`, ``big_m=None``:
exact); 1301 variables (150 binaries), 301 rows. Every backend then solves
that same MILP with the warm start as MIP start, ``time_limit=60,
clock="cpu", mip_gap=1e-4, threads=1``, each in a fresh process one after the
other. ``cpu_s`` is the CPU time of the solve as the process measured it
(every thread); ``gap`` is the backend's own (objective - bound) / objective;
``gap_to_best`` is (best objective any backend found on that seed - the backend's bound) / that
objective: how much of the gap is the bound's.
Gurobi runs only where its pip licence takes the model (a row says so
otherwise). ``bnb-nocuts`` is an ablation: bnb without the cost cuts of its
node LPs (``bnb_l1.COST_CUTS = False``). ``--jobs 2`` runs two solves at once
(CPU seconds are per process, so the limits stay comparable; the load is
stated).

Run: ``python benchmarks/l1_milp.py --jobs 2`` (``--seeds 0 1 2 --limit 60``);
results in ``benchmarks/results/l1_milp.{csv,md}``. ``--n 90 --dim 15 --stem
l1_milp_small`` and ``--n 200 --dim 50 --stem l1_milp_medium`` give the same
generator at smaller sizes (``l1_milp_small.md``, ``l1_milp_medium.md``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from solve_time import (
    markdown,  # benchmarks/solve_time.py: a Markdown table without tabulate
)

from csvm_stats.data.simulation import GaussianClasses
from csvm_stats.optimization.budget import FitBudget
from csvm_stats.optimization.problem import build_l1_primal
from csvm_stats.optimization.solvers import SolverOptions, solve
from csvm_stats.sparse.model import _l1_start

N, DIM, INFORMATIVE, DISTANCE, TPR, C = 300, 500, 5, 2.0, 0.8, 1.0
BACKENDS = ("bnb", "highs", "scip", "gurobi", "bnb-nocuts")
OUT = Path(__file__).resolve().parent / "results"


def instance(seed: int, n: int = N, dim: int = DIM) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                             dict[str, int]]:
    """The instance of the module docstring (n points, dim columns): ``(X_i, y_i, X_j, y_j, min_counts)``."""
    rng = np.random.default_rng(seed)
    X, y = GaussianClasses(dim=dim, distance=DISTANCE, informative=INFORMATIVE).sample(n, rng)
    order = rng.permutation(n)
    X, y = X[order], y[order]
    half = n // 2
    X_i, y_i, X_j, y_j = X[:half], y[:half], X[half:], y[half:]
    return X_i, y_i, X_j, y_j, {"tpr": math.ceil(TPR * (y_j > 0).sum())}


def model(seed: int, limit: float, n: int = N, dim: int = DIM):
    """The MILP of the module docstring (warm start within ``limit`` CPU-s)."""
    X_i, y_i, X_j, y_j, counts = instance(seed, n, dim)
    weight = np.ones(y_i.size)
    options = SolverOptions(time_limit=limit, clock="cpu", threads=1)
    x0, upper = _l1_start(X_i, y_i, X_j, y_j, C, counts, weight, "auto", options, FitBudget.of(options))
    return build_l1_primal(X_i, y_i, X_j, y_j, C=C, min_counts=counts, big_m=None, sample_weight=weight, start=x0,
                           upper=upper).miqp


def one(seed: int, backend: str, limit: float, n: int = N, dim: int = DIM) -> dict:
    """One solve (in this process): the row of the table."""
    problem = model(seed, limit, n, dim)
    row = {"n": n, "dim": dim, "seed": seed, "backend": backend, "n_vars": problem.n_vars, "start": problem.objective(problem.start)}
    options = SolverOptions(time_limit=limit, clock="cpu", mip_gap=1e-4, threads=1)
    if backend == "bnb-nocuts":  # ablation: bnb without the cost cuts of its node LPs
        from csvm_stats.optimization.solvers import bnb_l1

        bnb_l1.COST_CUTS = False
    cpu0 = time.process_time()
    try:
        record = solve(problem, backend.split("-")[0], options).record
    except Exception as err:  # noqa: BLE001 - a backend that cannot take the model is a row of the table
        return {**row, "status": f"{type(err).__name__}: {str(err)[:80]}", "cpu_s": time.process_time() - cpu0}
    return {**row, "status": record.status.value, "objective": record.objective, "bound": record.best_bound,
            "gap": record.gap, "nodes": record.nodes, "cpu_s": time.process_time() - cpu0,
            "solver_cpu_s": record.cpu_time}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--limit", type=float, default=60.0)
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS))
    parser.add_argument("--n", type=int, default=N, help="points (half I, half J)")
    parser.add_argument("--dim", type=int, default=DIM, help="columns")
    parser.add_argument("--stem", default="l1_milp", help="results/<stem>.{csv,md}")
    parser.add_argument("--jobs", type=int, default=1, help="solves at once (each in its own process)")
    parser.add_argument("--one", nargs=2, metavar=("SEED", "BACKEND"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(int(args.one[0]), args.one[1], args.limit, args.n, args.dim)))
        return
    rows = []

    def run(job: tuple[int, str]) -> dict:
        seed, backend = job
        done = subprocess.run([sys.executable, __file__, "--one", str(seed), backend, "--limit", str(args.limit),
                               "--n", str(args.n), "--dim", str(args.dim)],
                              check=False, capture_output=True, text=True,
                              timeout=20 * args.limit + 600)
        lines = done.stdout.strip().splitlines()
        return (json.loads(lines[-1]) if lines else
                {"seed": seed, "backend": backend, "status": f"crashed: {done.stderr.strip()[-200:]}"})

    jobs = [(seed, backend) for seed in args.seeds for backend in args.backends]
    with ThreadPoolExecutor(args.jobs) as pool:  # CPU seconds are per process: parallel runs stay comparable
        for row in pool.map(run, jobs):
            rows.append(row)
            print(row, flush=True)
            pd.DataFrame(rows).to_csv(OUT / f"{args.stem}.csv", index=False)
    write_report(pd.DataFrame(rows), _provenance(args), args.stem)


def _provenance(args: argparse.Namespace) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=False, capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"Run at commit {commit} (`python benchmarks/l1_milp.py {' '.join(sys.argv[1:])}`), seeds {args.seeds}, "
            f"limit {args.limit:g} CPU-s per solve, load average at the end {load} on 2 shared cores.")


def write_report(frame: pd.DataFrame, provenance: str = "", stem: str = "l1_milp") -> None:
    if "objective" in frame:
        best = frame.groupby("seed")["objective"].transform("min")
        frame = frame.assign(gap_to_best=((best - frame["bound"]) / best).where(frame["objective"].notna()))
    columns = [c for c in ("n", "dim", "seed", "backend", "status", "objective", "bound", "gap", "gap_to_best", "nodes", "cpu_s",
                           "start") if c in frame]
    size = f"n = {frame['n'].iloc[0]}, {frame['dim'].iloc[0]} columns" if "n" in frame else ""
    other = (f"The settings below at n = {frame['n'].iloc[0]} and {frame['dim'].iloc[0]} columns (the text gives "
             f"the default size's numbers).\n\n" if "n" in frame and frame["n"].iloc[0] != N else "")
    text = [f"# The L1-norm CSVM MILP on every backend (issue 27, item 5){': ' + size if size else ''}", "",
            other + "\n\n".join(__doc__.split("\n\n")[1:4]), "", provenance, "", markdown(frame[columns].round(4)),
            ""]
    (OUT / f"{stem}.md").write_text("\n".join(text))
    print("\n".join(text))


if __name__ == "__main__":
    main()
