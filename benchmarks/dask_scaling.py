"""Scaling out through joblib's dask backend: what a fit costs on a dask.distributed cluster.

Two workloads, each run side by side under three joblib set-ups in one
process: ``sequential`` (``n_jobs=1``), ``loky`` (joblib's default process
pool, ``n_jobs=2``) and ``dask`` (a ``dask.distributed.LocalCluster`` with 2
worker processes of 1 thread each, through ``joblib.parallel_config("dask")``):

1. ``fits``: ``--fits`` independent CSVM fits, the default path
   ``CSVM.from_formula("diagnosis ~ .", wisconsin, tpr_min=0.9, bound="binomial",
   kernel="rbf").fit(random_state=seed, clock="cpu")`` with seeds 0, 1, ...
   (Wisconsin breast cancer, 569 x 30; RBF kernel, C = 1, gamma "scale");
   each task reports its own CPU seconds, so the per-fit CPU cost and the
   wall-clock cost per fit (wall time / number of fits) are both measured.
2. ``nested_cv``: :func:`csvm_stats.models.tuning.nested_cv` with the fast
   protocol on Wisconsin (``--outer`` x ``--inner`` folds, a 3 x 3 (C, gamma)
   grid, one CSVM: TPR >= min(1, TPR0 + 0.025), Hoeffding margin), its outer
   folds dispatched by joblib (``backend="dask"`` for the cluster).

The cluster's start-up (worker processes importing csvm_stats) is timed on
its own and not charged to the fits; loky's pool is started the same way
(one warm-up call) before it is timed. The machine is a shared 2-core one, so
wall-clock speed-ups are bounded by 2 and by the other jobs' load (the load
average is recorded). Writes ``benchmarks/results/dask_scaling.json`` and
``.md``.

    python benchmarks/dask_scaling.py              # 16 fits, 5 x 3 nested CV
    python benchmarks/dask_scaling.py --fits 4 --outer 3 --inner 2   # quick
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, parallel_config

from csvm_stats.data.datasets import load_dataset
from csvm_stats.models.model import CSVM
from csvm_stats.models.tuning import CSVMSpec, Grid, RateRequirement, nested_cv

RESULTS = Path(__file__).resolve().parent / "results"


def wisconsin() -> pd.DataFrame:
    X, labels = load_dataset("wisconsin")
    return X.assign(diagnosis=pd.Categorical(np.where(labels > 0, "benign", "malignant")))


def one_fit(seed: int) -> dict:
    """One default-path RBF fit; its own CPU time, status and held-out lower bound."""
    started = time.process_time()
    res = CSVM.from_formula("diagnosis ~ .", wisconsin(), tpr_min=0.9, kernel="rbf", bound="binomial",
                            positive="malignant").fit(random_state=seed, clock="cpu", time_limit=60)
    return {"seed": seed, "cpu_s": time.process_time() - started, "status": res.solver.status.value}


def run_fits(setup: str, seeds: list[int], client=None) -> dict:
    started = time.perf_counter()
    if setup == "sequential":
        rows = [one_fit(s) for s in seeds]
    elif setup == "loky":
        rows = Parallel(n_jobs=2, backend="loky")(delayed(one_fit)(s) for s in seeds)
    else:
        with parallel_config(backend="dask"):
            rows = Parallel()(delayed(one_fit)(s) for s in seeds)
    wall = time.perf_counter() - started
    cpu = [r["cpu_s"] for r in rows]
    return {"setup": setup, "fits": len(rows), "wall_s": wall, "wall_per_fit_s": wall / len(rows),
            "cpu_per_fit_median_s": float(np.median(cpu)), "cpu_total_s": float(np.sum(cpu)),
            "statuses": sorted({r["status"] for r in rows}), "load": os.getloadavg()[0]}


def run_nested(setup: str, outer: int, inner: int) -> dict:
    X, labels = load_dataset("wisconsin")
    spec = CSVMSpec(RateRequirement("tpr", above_svm=0.025))
    grid = Grid((1.0, 4.0, 16.0), (2.0**-5, 2.0**-3, 2.0**-1))
    kwargs = {"sequential": {"n_jobs": 1}, "loky": {"n_jobs": 2, "backend": "loky"},
              "dask": {"n_jobs": -1, "backend": "dask"}}[setup]
    started = time.perf_counter()
    result = nested_cv(X, np.asarray(labels), [spec], grid=grid, outer_folds=outer, inner_folds=inner,
                       seed=0, progress=False, **kwargs)
    wall = time.perf_counter() - started
    table = result.summary()
    return {"setup": setup, "outer_folds": outer, "inner_folds": inner, "grid_pairs": len(grid.pairs()),
            "wall_s": wall, "wall_per_outer_fold_s": wall / outer, "load": os.getloadavg()[0],
            "table": None if table is None else str(table)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=16)
    parser.add_argument("--outer", type=int, default=5)
    parser.add_argument("--inner", type=int, default=3)
    args = parser.parse_args(argv)
    from dask.distributed import Client, LocalCluster

    # Warm-up in this process (numba kernels compiled and cached on disk) so no set-up pays a compile.
    one_fit(999)
    started = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    client.run(one_fit, 998)  # each worker imports csvm_stats and loads the cached kernels once
    startup = time.perf_counter() - started
    Parallel(n_jobs=2, backend="loky")(delayed(one_fit)(s) for s in (997, 996))  # loky's pool, started alike
    seeds = list(range(args.fits))
    fits, nested = [], []
    try:
        for setup in ("sequential", "loky", "dask"):
            fits.append(run_fits(setup, seeds, client))
            print(f"fits {setup}: {fits[-1]['wall_per_fit_s']:.2f} s wall per fit, "
                  f"{fits[-1]['cpu_per_fit_median_s']:.2f} CPU-s per fit (median)", flush=True)
        for setup in ("sequential", "loky", "dask"):
            nested.append(run_nested(setup, args.outer, args.inner))
            print(f"nested_cv {setup}: {nested[-1]['wall_s']:.1f} s wall", flush=True)
    finally:
        client.close()
        cluster.close()
    out = {"python": platform.python_version(), "cpus": os.cpu_count(), "cluster": "LocalCluster(n_workers=2, threads_per_worker=1)",
           "cluster_startup_s": startup, "fits": fits, "nested_cv": nested,
           "fit_path": "CSVM.from_formula('diagnosis ~ .', wisconsin, tpr_min=0.9, kernel='rbf', bound='binomial', positive='malignant')"
                       ".fit(random_state=seed, clock='cpu', time_limit=60)"}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dask_scaling.json").write_text(json.dumps(out, indent=1))
    lines = ["# Scaling out: joblib's dask backend on a LocalCluster", "",
             f"Machine: {os.cpu_count()} cores shared with other jobs (load average in the tables). "
             f"Cluster: {out['cluster']}, started in {startup:.1f} s (not charged below).", "",
             f"Fits: `{out['fit_path']}`, seeds 0..{args.fits - 1}.", "",
             "| set-up | fits | wall s | wall s per fit | CPU s per fit (median) | load |", "|---|---|---|---|---|---|"]
    lines += [f"| {f['setup']} | {f['fits']} | {f['wall_s']:.1f} | {f['wall_per_fit_s']:.2f} | "
              f"{f['cpu_per_fit_median_s']:.2f} | {f['load']:.1f} |" for f in fits]
    lines += ["", f"nested_cv, fast protocol, Wisconsin, {args.outer} x {args.inner} folds, 3 x 3 grid, "
              "TPR >= min(1, TPR0 + 0.025):", "",
              "| set-up | wall s | wall s per outer fold | load |", "|---|---|---|---|"]
    lines += [f"| {n['setup']} | {n['wall_s']:.1f} | {n['wall_per_outer_fold_s']:.2f} | {n['load']:.1f} |" for n in nested]
    (RESULTS / "dask_scaling.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
