"""SRBCT timing targets of the sparse CSVM (issues 15 and 27).

EWS (29 of 83 tumours) against the rest, 2308 genes, ``tpr_min=0.9`` (the
sensitivity for EWS), exact binomial margin (with about 7 anchor EWS it is
capped: every anchor EWS must be correct), default split 0.5/0.25/0.25 with
seeds 0..S-1. Per seed:

* ``l1``: ``CSVM(penalty="l1", C=1)``, solved by HiGHS (and SCIP with
  ``--with-l1-scip``); target: proven optimal in under 30 s;
* ``card``: ``CSVM(max_features=10)`` (default screening: the 50 best-ranked
  genes), stopping at a 1% gap, by SCIP (``scip``: the perspective cones
  :math:`w_f^2 \\le t_f v_f` in SCIP's nonlinear handler) and by ``auto``
  (Gurobi when licensed: its MIQP with the perspective cones when the model
  fits the pip licence, at most 200 variables with the cones' t_f, else the
  linear outer approximation with perspective cuts; ``formulation`` says
  which); target: within 1% gap in 60 s.

The time limit is ``--limit`` CPU seconds per solve (``clock="cpu"``: SCIP's
CPU clock, Gurobi and HiGHS through callbacks), so the runs
are comparable on a loaded machine. Reported: status, gap, the final solve's
CPU seconds (the solver record) and the whole fit's CPU seconds
(``time.process_time`` around ranking, warm starts and solve), measured side
by side in one run under ``nice -n 10`` on a shared 2-core machine. Results
go to ``benchmarks/results/sparse_srbct.{csv,md}``.

Issue 27 (``--max-features 20 --runs card:scip card:bnb``, results in
``sparse_srbct_k20.{csv,md}``): ``max_features=20`` (default screening: the
100 best-ranked genes), 1% gap in 60 CPU-s without Gurobi: SCIP against our
``bnb`` (branch-and-bound over features with the perspective relaxation,
:mod:`csvm_stats.optimization.solvers.bnb_sparse`), which ``auto`` now picks
for the cardinality form.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

from csvm_stats.data.datasets import load_dataset
from csvm_stats.models.model import CSVM
from solve_time import markdown  # benchmarks/solve_time.py: a Markdown table without tabulate

OUT = Path(__file__).resolve().parent / "results"
RUNS = [("l1", "highs"), ("card", "scip"), ("card", "auto")]


def run(seed: int, route: str, solver: str, X: pd.DataFrame, ews: pd.Series, limit: float, max_features: int = 10) -> dict:
    kwargs = {"penalty": "l1", "C": 1.0} if route == "l1" else {"max_features": max_features}
    model = CSVM(ews, X, tpr_min=0.9, bound="binomial", positive=True, **kwargs)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = model.fit(random_state=seed, solver=solver, time_limit=limit, mip_gap=1e-4 if route == "l1" else 1e-2,
                        clock="cpu")
    rec = res.solver
    return {
        "seed": seed, "route": route, "max_features": kwargs.get("max_features"), "solver": solver, "backend": rec.backend, "formulation": rec.formulation,
        "status": rec.status.value, "objective": rec.objective, "bound": rec.best_bound, "start": res.engine_fit.warm_start_objective,
        "gap": rec.gap, "nodes": rec.nodes, "limit_phase": rec.limit_phase, "solve_cpu_s": rec.cpu_time, "solve_wall_s": rec.wall_time,
        "fit_cpu_s": time.process_time() - start, "genes": res.n_selected, "exact_screening": res.exact,
        "heldout_tpr": res.rates.loc["tpr", "heldout_rate"], "tpr_lower": res.rates.loc["tpr", "lower"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--seed-list", type=int, nargs="+", help="these seeds instead of 0..seeds-1")
    parser.add_argument("--limit", type=float, default=60.0, help="CPU seconds per solve")
    parser.add_argument("--with-l1-scip", action="store_true")
    parser.add_argument("--report-only", action="store_true", help="rewrite the .md from the committed .csv")
    parser.add_argument("--max-features", type=int, default=10)
    parser.add_argument("--provenance", help="with --report-only: the provenance line of the merged runs")
    parser.add_argument("--runs", nargs="+", help="route:solver pairs instead of the default set, e.g. card:bnb")
    args = parser.parse_args()
    stem = "sparse_srbct" if args.max_features == 10 else f"sparse_srbct_k{args.max_features}"
    if args.seed_list and not args.report_only:  # one process per seed: its own file (merged with --report-only)
        stem += "_seed" + "-".join(map(str, args.seed_list))
    if args.report_only:
        parts = sorted(OUT.glob(f"{stem}_seed*.csv"))
        frame = pd.concat([pd.read_csv(part) for part in parts]) if parts else pd.read_csv(OUT / f"{stem}.csv")
        if parts:
            frame.sort_values(["seed"], kind="stable").to_csv(OUT / f"{stem}.csv", index=False)
            for part in parts:
                part.unlink()
        write_report(frame.sort_values(["seed"], kind="stable"), stem, args.provenance or "")
        return
    X, y = load_dataset("srbct")
    ews = pd.Series(y.to_numpy() < 0, name="EWS")  # load_dataset codes EWS as the negative class
    rows = []
    runs = RUNS + ([("l1", "scip")] if args.with_l1_scip else [])
    if args.runs:
        runs = [tuple(pair.split(":")) for pair in args.runs]
    for seed in args.seed_list or range(args.seeds):
        for route, solver in runs:
            rows.append(run(seed, route, solver, X, ews, args.limit, args.max_features))
            print(rows[-1], flush=True)
            pd.DataFrame(rows).to_csv(OUT / f"{stem}.csv", index=False)
    write_report(pd.DataFrame(rows), stem, _provenance(args))


def _provenance(args: argparse.Namespace) -> str:
    """Commit, command line and load average of this run."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"Run at commit {commit} (`python benchmarks/sparse_srbct.py {' '.join(sys.argv[1:])}`), seeds "
            f"{args.seed_list or list(range(args.seeds))} (the split's random_state), load average at the end {load} "
            f"on 2 shared cores; CPU seconds.")


def write_report(frame: pd.DataFrame, stem: str = "sparse_srbct", provenance: str = "") -> None:
    text = ["# SRBCT sparse CSVM timings (EWS vs rest, tpr_min 0.9, 2308 genes)", "", "\n\n".join(__doc__.split("\n\n")[2:4]), "",
            provenance, "", markdown(frame.round(4)), ""]
    (OUT / f"{stem}.md").write_text("\n".join(text))
    print("\n".join(text))


if __name__ == "__main__":
    main()
