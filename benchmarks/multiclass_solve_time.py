"""Solve times of the exact multiclass CSVM (issue 14 targets).

Targets: SRBCT (83 x 2308, four classes, linear kernel, p >> n through the
row-space factorisation) proven optimal in under 60 s; iris/wine-size
problems under 10 s. Each problem is fitted with the default split
(0.5/0.25/0.25, stratified by class) for a few seeds and each backend; the
table reports the solver status, the relative gap, the solver's CPU time and
the CPU time of the whole ``fit()`` (feature map, warm start, solve,
statements), measured with ``time.process_time`` in this process. Run with
``nice -n 10 python benchmarks/multiclass_solve_time.py``; results go to
``benchmarks/results/multiclass_solve_time.{csv,md}``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_iris, load_wine

from csvm_stats.optimization import solvers
from csvm_stats.inference.bounds import CappedTargetWarning
from csvm_stats.data.datasets import load_classes
from csvm_stats.exceptions import LicenseLimitError
from csvm_stats.models.model import CSVM


def problems() -> dict[str, tuple[pd.DataFrame, str, dict]]:
    """name -> (data frame, formula, recall_min)."""
    iris = load_iris(as_frame=True)
    iris_frame = iris.data.assign(species=pd.Categorical.from_codes(iris.target, list(iris.target_names)))
    wine = load_wine(as_frame=True)
    wine_frame = wine.data.assign(cultivar=pd.Categorical.from_codes(wine.target, ["c1", "c2", "c3"]))
    out = {
        "iris (150 x 4, 3 classes)": (iris_frame, "species ~ .", {"versicolor": 0.9, "virginica": 0.9}),
        "wine (178 x 13, 3 classes)": (wine_frame, "cultivar ~ .", {"c2": 0.9, "c3": 0.9}),
    }
    X, labels = load_classes("srbct")
    out["SRBCT (83 x 2308, 4 classes)"] = (X.assign(tumour=labels), "tumour ~ .",
                                           {"BL": 0.9, "EWS": 0.8, "NB": 0.8, "RMS": 0.8})
    X, labels = load_classes("car")
    out["car (1728 x 6 factors, 4 classes)"] = (X.assign(rating=labels), "rating ~ .", {"good": 0.8, "vgood": 0.8})
    return out


def run(seeds: list[int], backends: list[str]) -> pd.DataFrame:
    rows = []
    for name, (frame, formula, targets) in problems().items():
        for backend in backends:
            for seed in seeds:
                started = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", CappedTargetWarning)
                    try:
                        res = CSVM.from_formula(formula, frame, recall_min=targets).fit(
                            random_state=seed, solver=backend, time_limit=300, threads=1)
                    except LicenseLimitError:  # the size-limited pip licence: no result for this backend
                        rows.append({"problem": name, "backend": backend, "seed": seed, "status": "licence limit"})
                        continue
                rec = res.solver
                rows.append({
                    "problem": name, "backend": backend, "seed": seed, "status": rec.status.value,
                    "exact": rec.exact, "gap": rec.gap, "solver_cpu_s": rec.cpu_time,
                    "fit_cpu_s": time.process_time() - started, "nodes": rec.nodes, "objective": rec.objective,
                    "warm_start_objective": res.engine_fit.warm_start_objective,
                    "binaries": int(res.engine_fit.z.size), "formulation": rec.formulation,
                })
                print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def to_markdown(table: pd.DataFrame) -> str:
    summary = table.groupby(["problem", "backend"], sort=False).agg(
        runs=("seed", "size"), optimal=("status", lambda s: int((s == "optimal").sum())),
        max_gap=("gap", "max"), median_solver_cpu_s=("solver_cpu_s", "median"),
        max_solver_cpu_s=("solver_cpu_s", "max"), max_fit_cpu_s=("fit_cpu_s", "max"),
        binaries=("binaries", "max"),
    ).reset_index()
    lines = ["| problem | backend | runs | optimal | max gap | median solver CPU s | max solver CPU s | "
             "max fit() CPU s | binaries |", "|" + "---|" * 9]
    for r in summary.itertuples(index=False):
        if not r.optimal and np.isnan(r.max_gap):
            lines.append(f"| {r.problem} | {r.backend} | {r.runs} | 0 | model exceeds the size-limited licence | | | | |")
            continue
        lines.append(f"| {r.problem} | {r.backend} | {r.runs} | {r.optimal} | {r.max_gap:.2e} | "
                     f"{r.median_solver_cpu_s:.2f} | {r.max_solver_cpu_s:.2f} | {r.max_fit_cpu_s:.2f} | {r.binaries} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    backends = ["scip", *(["gurobi"] if solvers.gurobi_usable() else [])]
    table = run(list(range(args.seeds)), backends)
    out = Path(__file__).resolve().parent / "results"
    table.to_csv(out / "multiclass_solve_time.csv", index=False)
    (out / "multiclass_solve_time.md").write_text(
        "# Multiclass CSVM solve times (benchmarks/multiclass_solve_time.py)\n\n"
        "Exact model (big_m=None), default split, recall_min as in the script; one thread; CPU seconds "
        "(time.process_time) measured side by side in one run on the shared 2-core machine.\n\n" + to_markdown(table)
    )
    print(to_markdown(table))


if __name__ == "__main__":
    main()
