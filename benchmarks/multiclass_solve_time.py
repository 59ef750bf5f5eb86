"""Solve times of the exact multiclass CSVM (issue 14 targets; issue 27 item 5: our own search).

Targets: SRBCT (83 x 2308, four classes, linear kernel, p >> n through the
row-space factorisation) proven optimal in under 60 s; iris/wine-size
problems under 10 s; issue 27: the multiclass studies at least as fast with
our branch-and-bound (``solver="bnb"``) as with Gurobi, no result depending on
Gurobi. Each formula problem is fitted with the default split (0.5/0.25/0.25,
stratified by class) for a few seeds and each backend (``--limit`` CPU
seconds, default 300); the two multiclass settings of ``benchmarks/routes.py``
(car with ``acc`` >= 0.9 and five Gaussian classes with two classes at 0.9,
``bound="binomial"``, split = seed) are fitted with a shorter limit
(``--hard-limit``, default 5 CPU s, as routes.py gives them). The table
reports the solver status, the relative gap, the solver's CPU time and the CPU
time of the whole ``fit()`` (feature map, warm start, solve, statements),
measured with ``time.process_time`` in this process, every fit on the CPU
clock. Run with ``nice -n 10 python benchmarks/multiclass_solve_time.py``;
results go to ``benchmarks/results/multiclass_solve_time.{csv,md}``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
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
from routes import DEFAULT_FRACTIONS, FIVE_CLASSES, MULTICLASS, _preprocessed, encode_classes, split_by_class


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


def hard_problem(name: str, seed: int) -> CSVM:
    """The multiclass settings of benchmarks/routes.py (split ``seed``), as its exact CSVM route builds them."""
    if name.startswith("car"):
        X_raw, labels = load_classes("car")
        y = labels.astype(str).to_numpy()
        _, positions = encode_classes(y)
        s = split_by_class(positions, DEFAULT_FRACTIONS, seed)
        X = _preprocessed(X_raw, np.concatenate([s.train, s.anchor]))
    else:
        X, y = FIVE_CLASSES.sample(400, np.random.default_rng(1000 + seed))
    return CSVM(y, X, alpha=0.05, fractions=DEFAULT_FRACTIONS, recall_min=MULTICLASS[name], bound="binomial")


def _fit_row(name: str, backend: str, seed: int, model: CSVM, limit: float) -> dict:
    started = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CappedTargetWarning)
        try:
            res = model.fit(random_state=seed, solver=backend, time_limit=limit, threads=1, clock="cpu")
        except LicenseLimitError:  # the size-limited pip licence: no result for this backend
            return {"problem": name, "backend": backend, "seed": seed, "status": "licence limit"}
    rec = res.solver
    return {
        "problem": name, "backend": backend, "seed": seed, "limit_cpu_s": limit, "status": rec.status.value,
        "exact": rec.exact, "gap": rec.gap, "solver_cpu_s": rec.cpu_time,
        "fit_cpu_s": time.process_time() - started, "nodes": rec.nodes, "objective": rec.objective,
        "bound": rec.best_bound, "warm_start_objective": res.engine_fit.warm_start_objective,
        "binaries": int(res.engine_fit.z.size), "formulation": rec.formulation,
    }


def run(seeds: list[int], backends: list[str], limit: float, hard_limit: float, parts: str) -> pd.DataFrame:
    rows = []
    for name, (frame, formula, targets) in problems().items() if "formula" in parts else ():
        for backend in backends:
            for seed in seeds:
                rows.append(_fit_row(name, backend, seed, CSVM.from_formula(formula, frame, recall_min=targets),
                                     limit))
                print(rows[-1], flush=True)
    for name in MULTICLASS if "routes" in parts else ():
        for backend in backends:
            for seed in seeds:
                rows.append(_fit_row(f"routes: {name}", backend, seed, hard_problem(name, seed), hard_limit))
                print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def to_markdown(table: pd.DataFrame) -> str:
    summary = table.groupby(["problem", "backend"], sort=False).agg(
        runs=("seed", "size"), limit=("limit_cpu_s", "max"), optimal=("status", lambda s: int((s == "optimal").sum())),
        max_gap=("gap", "max"), median_solver_cpu_s=("solver_cpu_s", "median"),
        max_solver_cpu_s=("solver_cpu_s", "max"), max_fit_cpu_s=("fit_cpu_s", "max"),
        binaries=("binaries", "max"),
    ).reset_index()
    lines = ["| problem | backend | runs | limit CPU s | optimal | max gap | median solver CPU s | max solver CPU s | "
             "max fit() CPU s | binaries |", "|" + "---|" * 10]
    for r in summary.itertuples(index=False):
        if not r.optimal and np.isnan(r.max_gap):
            lines.append(f"| {r.problem} | {r.backend} | {r.runs} | | 0 | model exceeds the size-limited licence | | | | |")
            continue
        lines.append(f"| {r.problem} | {r.backend} | {r.runs} | {r.limit:g} | {r.optimal} | {r.max_gap:.2e} | "
                     f"{r.median_solver_cpu_s:.2f} | {r.max_solver_cpu_s:.2f} | {r.max_fit_cpu_s:.2f} | {r.binaries} |")
    return "\n".join(lines) + "\n"


def per_seed(table: pd.DataFrame) -> str:
    """Objective and gap of every hard fit, backends side by side."""
    hard = table[table["problem"].str.startswith("routes:")]
    lines = ["| problem | seed | backend | status | objective | bound | gap | solver CPU s |", "|" + "---|" * 8]
    for r in hard.itertuples(index=False):
        lines.append(f"| {r.problem} | {r.seed} | {r.backend} | {r.status} | {getattr(r, 'objective', np.nan):.6g} | "
                     f"{getattr(r, 'bound', np.nan):.6g} | {getattr(r, 'gap', np.nan):.2%} | "
                     f"{getattr(r, 'solver_cpu_s', np.nan):.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--limit", type=float, default=300.0)
    parser.add_argument("--hard-limit", type=float, default=5.0)
    parser.add_argument("--parts", default="formula,routes", help="formula, routes or both (comma-separated)")
    args = parser.parse_args()
    backends = ["bnb", "scip", *(["gurobi"] if solvers.gurobi_usable() else [])]
    load = os.getloadavg()
    table = run(list(range(args.seeds)), backends, args.limit, args.hard_limit, args.parts)
    out = Path(__file__).resolve().parent / "results"
    stem = "multiclass_solve_time" + ("" if args.parts == "formula,routes" else "_" + args.parts.replace(",", "_"))
    table.to_csv(out / f"{stem}.csv", index=False)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    (out / f"{stem}.md").write_text(
        "# Multiclass CSVM solve times (benchmarks/multiclass_solve_time.py)\n\n"
        f"Commit {commit}; seeds {list(range(args.seeds))}; load average at the start "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (2 shared cores), at the end "
        f"{os.getloadavg()[0]:.1f}.\n\n"
        "Exact model (big_m=None), default split, recall_min as in the script; one thread; CPU clock for the "
        "limit; CPU seconds (time.process_time) measured side by side in one run. Default path: solver='auto', "
        "which is 'bnb' for these models (csvm_stats.optimization.solvers); formula studies through "
        "CSVM.from_formula, the routes settings through CSVM(y, X, recall_min=..., bound='binomial') as routes.py "
        "fits its exact CSVM route.\n\n"
        + to_markdown(table) + "\n## The routes settings, every fit\n\n" + per_seed(table)
    )
    print(to_markdown(table))


if __name__ == "__main__":
    main()
