"""Solve times of the CSVM engine against a scikit-learn SVC fit on the same data.

Each row solves one CSVM (training sample I and anchor sample J, a 50/50
stratified split) and, in the same loop and just before it, times
scikit-learn's ``SVC`` (C/2, same kernel) on I u J, the plain SVM the CSVM
generalises; the ratio of the two is what the targets are stated in, so that
machine load affects both alike. Rate targets: p0 = 0.95 with the exact
binomial margin at alpha = 0.05.

Run ``python benchmarks/solve_time.py`` (about 10 minutes); it prints the
table and writes ``benchmarks/results/solve_time.{md,csv}``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from csvm_stats.bounds import adjust_target
from csvm_stats.engine import fit_csvm
from csvm_stats.exceptions import CSVMError
from csvm_stats.solvers import SolverOptions, gurobi_usable

RESULTS = Path(__file__).resolve().parent / "results"


def wisconsin() -> tuple[np.ndarray, np.ndarray]:
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), np.where(y == 1, 1.0, -1.0)


def synthetic(n: int, p: int = 10, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two overlapping Gaussian classes: mean shift 1 and 0.5 on the first two columns."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, p))
    X[:, 0] += y
    X[:, 1] += 0.5 * y
    return X, y


def svc_time(X: np.ndarray, y: np.ndarray, kernel: str, repeats: int = 5) -> float:
    """Median wall time of ``SVC(C=0.5)`` on the data (the CSVM's C = 1)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        SVC(kernel=kernel, C=0.5, gamma="scale").fit(X, y)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def one_case(name, X, y, *, kernel, kind, solver, split_seed, time_limit, rank=None) -> dict:
    I, J = train_test_split(np.arange(len(y)), test_size=0.5, stratify=y, random_state=split_seed)
    members = y[J] > 0 if kind == "tpr" else y[J] < 0
    count = adjust_target(0.95, int(members.sum()), 0.05, "binomial").count
    reference = svc_time(X, y, kernel)
    t0 = time.perf_counter()
    row = dict(data=name, n=len(y), kernel=kernel + ("" if rank is None else f" (rank {rank})"),
               constraint=f"{kind.upper()} >= {count}/{int(members.sum())}", split=split_seed, solver=solver)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = fit_csvm(X[I], y[I], X[J], y[J], C=1.0, kernel=kernel, rank=rank, min_counts={kind: count},
                           solver=solver, options=SolverOptions(time_limit=time_limit))
        rec = fit.record
        row.update(backend=rec.backend, formulation=rec.formulation, status=rec.status.value,
                   solve_s=rec.wall_time, nodes=rec.nodes, gap=rec.gap)
    except CSVMError as err:
        row.update(backend=solver, formulation="", status=f"error: {type(err).__name__}", solve_s=np.nan, nodes=0, gap=np.nan)
    total = time.perf_counter() - t0
    row.update(total_s=total, svc_s=reference, ratio=total / reference)
    return row


def markdown(table: pd.DataFrame) -> str:
    """A Markdown table without the optional tabulate dependency."""
    head = "| " + " | ".join(map(str, table.columns)) + " |"
    rule = "|" + "---|" * table.shape[1]
    body = ["| " + " | ".join(map(str, row)) + " |" for row in table.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="Wisconsin linear only, one split")
    args = parser.parse_args()
    solvers = ["scip"] + (["gurobi"] if gurobi_usable() else [])
    Xw, yw = wisconsin()
    rows = []
    for split in range(1 if args.quick else args.splits):
        for kind in ("tpr", "tnr"):
            for solver in solvers:
                rows.append(one_case("wisconsin", Xw, yw, kernel="linear", kind=kind, solver=solver,
                                     split_seed=split, time_limit=args.time_limit))
                print(pd.DataFrame(rows[-1:]).to_string(header=len(rows) == 1, index=False), flush=True)
    if not args.quick:
        cases = [("wisconsin", Xw, yw, "rbf", None), ("wisconsin", Xw, yw, "rbf", 100)]
        cases += [("synthetic", *synthetic(n), "linear", None) for n in (1000, 2000, 5000)]
        for name, X, y, kernel, rank in cases:
            rows.append(one_case(name, X, y, kernel=kernel, kind="tpr", solver="scip", split_seed=0,
                                 time_limit=args.time_limit, rank=rank))
            print(pd.DataFrame(rows[-1:]).to_string(header=False, index=False), flush=True)
    table = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    stem = "solve_time_quick" if args.quick else "solve_time"
    table.to_csv(RESULTS / f"{stem}.csv", index=False)
    fmt = table.copy()
    for col in ("solve_s", "total_s", "svc_s"):
        fmt[col] = fmt[col].map(lambda v: f"{v:.3f}")
    fmt["gap"] = fmt["gap"].map(lambda v: f"{v:.2e}")
    fmt["ratio"] = fmt["ratio"].map(lambda v: f"{v:.0f}x")
    (RESULTS / f"{stem}.md").write_text(
        "# CSVM solve time against a scikit-learn SVC fit (same run)\n\n"
        f"time limit {args.time_limit:g} s; total_s = warm start + model build + solve; "
        "ratio = total_s / svc_s.\n\n" + markdown(fmt) + "\n"
    )
    print(f"\nwritten to {RESULTS / stem}.md")


if __name__ == "__main__":
    main()
