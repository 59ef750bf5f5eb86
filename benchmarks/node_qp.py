"""The SVM dual solver with and without Newton steps: bnb's node QPs replayed offline, and cold-start SVM fits.

The synthetic n = 2000 problem of ``solve_time.py`` (p = 10, TPR >= 0.9 on
J, 50/50 split) is searched by bnb for ``--limit`` CPU seconds while every
``--every``-th call of the node solver (:class:`~csvm_stats.optimization.svm_dual.SVMDual`)
is captured: its active rows, warm start, step cap, early-stop value and KKT
tolerance. Each captured QP is then solved again, in this process, by the
feature-mode SMO with ``newton=False`` (pair steps only, the solver before
Newton steps) and ``newton=True`` (the default), each timed in CPU seconds
(``time.process_time``; best of ``--repeats`` passes over the sample, which
damps the machine's load); the table reports CPU time, steps, how many QPs
converged, and the relative difference of the bounds (both are valid lower
bounds; a QP stopped early at the prune level or at the loose node tolerance
has bounds that may differ within it).

Second table: the plain SVM (box C / 2 = 0.5 on every row, tolerance 1e-5, no warm
start; the fit the warm start and the tightening run first) on the synthetic
data at n = 2000, 5000 and 20,000 and on Wisconsin (linear), with and without
Newton steps, CPU best of ``--repeats``.

Run ``nice -n 10 python benchmarks/node_qp.py``; it writes
``benchmarks/results/node_qp.md`` and ``node_qp.csv``.

``--gram``: the Gram-mode part instead (kernel fits, RBF at exact rank: the
cases of :func:`gram_cases`), written to ``benchmarks/results/node_qp_gram.md``:
node QPs captured from each case's search (and from australian TNR at gamma =
1, 2, 4) and replayed with pair steps only and with the default solver (CG
blocks on the free rows where the kernel is local), whole bnb fits with one
BLAS thread (fit_csvm's default) against BLAS's default threads, alternating,
CPU and wall seconds, and the kernel matrix's eigendecomposition both ways.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_info, threadpool_limits

from csvm_stats.optimization.engine import fit_csvm
from csvm_stats.optimization.solvers import SolverOptions
from csvm_stats.optimization.svm_dual import CG_PERIOD, SVMDual, local_kernel
from gram_side_by_side import cases
from solve_time import markdown, one_fit, split, synthetic, warm_up, wisconsin

RESULTS = Path(__file__).resolve().parent / "results"
GRAM_CASES = ("australian C=1 gamma=0.5 TNR", "australian C=8 gamma=8 TNR", "wisconsin C=1 gamma=scale TPR")
GRAM_REPLAYS = GRAM_CASES + ("australian C=1 gamma=1 TNR", "australian C=1 gamma=2 TNR", "australian C=2 gamma=4 TNR")


def capturing(every: int, run: Callable[[], object]) -> tuple[object, SVMDual, list[dict]]:
    """Call ``run`` (a bnb fit) while every ``every``-th node solver call is kept (inputs and the solver used);
    returns run's result, the search's node solver and its captured QPs."""
    captured: list[dict] = []
    calls = [0]
    solvers: list[SVMDual] = []
    original = SVMDual.solve

    def solve(self, active, alpha0, max_steps, stop_value=np.inf, tol=None):
        calls[0] += 1
        if calls[0] % every == 0:
            solvers.append(self)
            captured.append(dict(active=np.array(active), alpha0=None if alpha0 is None else alpha0.copy(),
                                 max_steps=max_steps, stop_value=stop_value, tol=tol))
        return original(self, active, alpha0, max_steps, stop_value, tol)

    SVMDual.solve = solve
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run()
    finally:
        SVMDual.solve = original
    print(result, f"{calls[0]} node solver calls, {len(captured)} captured", flush=True)
    dual = solvers[-1]  # the search's node solver (the warm start's SVM fits come first)
    return result, dual, [c for c, s in zip(captured, solvers) if s is dual]


def capture(n: int, every: int, limit: float) -> tuple[SVMDual, list[dict]]:
    """Run bnb on the synthetic problem and keep every ``every``-th node QP (inputs and the solver used)."""
    X, y = synthetic(n)
    I, J = split(y, 0)
    count = int(np.ceil(0.9 * (y[J] > 0).sum()))
    _, dual, qps = capturing(every, lambda: one_fit(X, y, I, J, kernel="linear", count=count, solver="bnb",
                                                    time_limit=limit))
    return dual, qps


def replay(dual: SVMDual, qps: list[dict], newton: bool, repeats: int, cg_forced: bool = False) -> pd.DataFrame:
    """Solve every captured QP again; CPU seconds per QP (best of ``repeats`` passes). ``cg_forced``: Gram mode's
    CG blocks also where the kernel is not local (for the measurement behind CG_LOCAL_MASS)."""
    solver = SVMDual(dual.phi, dual.y, dual.upper, dual.gram, dual.tol, newton=newton)
    if cg_forced:
        solver.cg_period = CG_PERIOD
    best = None
    for _ in range(repeats):
        rows = []
        for qp in qps:
            t0 = time.process_time()
            sol = solver.solve(qp["active"], qp["alpha0"], qp["max_steps"], qp["stop_value"], qp["tol"])
            rows.append(dict(cpu_s=time.process_time() - t0, steps=sol.steps, bound=sol.bound,
                             converged=sol.converged))
        run = pd.DataFrame(rows)
        best = run if best is None else best.assign(cpu_s=np.minimum(best.cpu_s, run.cpu_s))
    return best


def cold_fits(repeats: int) -> pd.DataFrame:
    """Plain SVMs from alpha = 0 with and without Newton steps (CPU best of ``repeats``)."""
    cases = [(f"synthetic n={n}", *synthetic(n)) for n in (2000, 5000, 20000)] + [("wisconsin", *wisconsin())]
    rows = []
    for name, X, y in cases:
        for newton in (False, True):
            dual = SVMDual(X, y, np.full(y.size, 0.5), None, 1e-5, newton=newton)
            times = []
            for _ in range(repeats):
                t0 = time.process_time()
                sol = dual.solve(np.arange(y.size), None, 10**8)
                times.append(time.process_time() - t0)
            rows.append(dict(data=name, newton=newton, cpu_s=min(times), steps=sol.steps, bound=sol.bound,
                             converged=sol.converged))
    return pd.DataFrame(rows)


def gram_cases(names: tuple[str, ...] = GRAM_CASES) -> list[tuple[str, dict]]:
    """Kernel fits of the Gram-mode part (RBF at exact rank, bnb; gram_side_by_side.cases): by default australian
    TNR at (C, gamma) = (1, 0.5) and (8, 8), and Wisconsin TPR."""
    every = cases()
    return [(name, every[name]) for name in names]


def gram_fit(case: dict, limit: float, blas_threads: bool = False) -> dict:
    """One bnb fit of a Gram-mode case; ``blas_threads``: BLAS with its default threads (fit_csvm without its
    one-thread limit)."""
    fit = fit_csvm.__wrapped__ if blas_threads else fit_csvm
    t0, w0 = time.process_time(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec = fit(**case, kernel="rbf", big_m=None, solver="bnb",
                  options=SolverOptions(time_limit=limit, clock="cpu")).record
    return dict(status=rec.status.value, objective=rec.objective, bound=rec.best_bound, svm_solves=rec.svm_solves,
                cpu_s=time.process_time() - t0, wall_s=time.perf_counter() - w0)


def gram_fits(limit: float, repeats: int) -> pd.DataFrame:
    """Every Gram-mode case fitted with one BLAS thread (the default) and with BLAS's own threads, alternating;
    CPU (median, least, most) and median wall seconds of ``repeats`` fits each."""
    rows = []
    for name, case in gram_cases():
        runs = {False: [], True: []}
        for _ in range(repeats):
            for threads in (True, False):
                runs[threads].append(gram_fit(case, limit, threads))
        for threads in (True, False):
            df = pd.DataFrame(runs[threads])
            rows.append(dict(case=name, blas=f"default threads ({blas_thread_count()})" if threads else "one thread",
                             status=df.status.iloc[-1], svm_solves=int(df.svm_solves.median()),
                             cpu_s_median=df.cpu_s.median(), cpu_s_min=df.cpu_s.min(), cpu_s_max=df.cpu_s.max(),
                             wall_s_median=df.wall_s.median()))
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def gram_replays(every: int, limit: float, repeats: int) -> pd.DataFrame:
    """Node QPs of every Gram-mode case (every ``every``-th of a bnb fit limited to ``limit`` CPU-s) replayed with
    pair steps only (``newton=False``) and with the default solver (CG blocks where the kernel is local)."""
    rows = []
    for name, case in gram_cases(GRAM_REPLAYS):
        _, dual, qps = capturing(every, lambda: gram_fit(case, limit))
        pair, blocks = replay(dual, qps, False, repeats), replay(dual, qps, True, repeats)
        forced = replay(dual, qps, True, repeats, cg_forced=True)
        rel = (blocks.bound - pair.bound) / pair.bound.abs()
        rows.append(dict(case=name, local_kernel=local_kernel(dual.gram), qps=len(qps),
                         rows_median=float(np.median([qp["active"].size for qp in qps])),
                         pair_cpu_s=pair.cpu_s.sum(), cpu_s=blocks.cpu_s.sum(), cpu_ratio=pair.cpu_s.sum() / blocks.cpu_s.sum(),
                         cg_forced_ratio=pair.cpu_s.sum() / forced.cpu_s.sum(),
                         pair_steps=int(pair.steps.sum()), steps=int(blocks.steps.sum()),
                         converged=f"{int(pair.converged.sum())} / {int(blocks.converged.sum())}",
                         rel_bound_q0=rel.min(), rel_bound_q50=rel.median(), rel_bound_q100=rel.max()))
        print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def gram_eigh(repeats: int) -> pd.DataFrame:
    """``np.linalg.eigh`` of an RBF kernel matrix (synthetic data, gamma = 0.1) with one BLAS thread and with
    BLAS's default threads; CPU and wall seconds, least of ``repeats``."""
    rows = []
    for n in (300, 558, 1000):
        X, _ = synthetic(n)
        sq = np.einsum("ij,ij->i", X, X)
        K = np.exp(-0.1 * np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0))
        for threads in (None, 1):
            cpu, wall = [], []
            for _ in range(repeats):
                with threadpool_limits(threads, "blas"):
                    t0, w0 = time.process_time(), time.perf_counter()
                    np.linalg.eigh(K)
                    cpu.append(time.process_time() - t0)
                    wall.append(time.perf_counter() - w0)
            rows.append(dict(n=n, blas=f"default threads ({blas_thread_count()})" if threads is None else "one thread",
                             cpu_s=min(cpu), wall_s=min(wall)))
    return pd.DataFrame(rows)


def blas_thread_count() -> int:
    """The most threads a loaded BLAS library uses now."""
    return max(lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas")


def gram_main(args: argparse.Namespace) -> None:
    """The Gram-mode part (``--gram``): writes ``node_qp_gram.md``."""
    load = os.getloadavg()[0]
    replays = gram_replays(args.gram_every, args.gram_limit, args.repeats)
    fits = gram_fits(args.gram_limit, args.repeats)
    eigh = gram_eigh(args.repeats)
    lines = [
        "# Kernel fits in Gram mode (RBF at exact rank, bnb)",
        "",
        f"Command: `nice -n 10 python benchmarks/node_qp.py --gram --repeats {args.repeats} "
        f"--gram-limit {args.gram_limit:g} --gram-every {args.gram_every}`. Cases: `node_qp.gram_cases`. "
        f"Load average before the run: {load:.1f}.",
        "",
        "## Node QPs replayed: pair steps only vs the default (CG blocks on the free rows where the kernel is local)",
        "",
        f"Every {args.gram_every}-th node QP of each case's bnb fit (limit {args.gram_limit:g} CPU-s), solved again "
        f"in this process by both solvers, CPU best of {args.repeats} passes. `local_kernel`: the CG blocks are on "
        "(svm_dual.local_kernel); elsewhere both columns run the same code (their ratio is the noise); "
        "cg_forced_ratio: pair-step CPU over CPU with the blocks forced on in every case. Relative "
        "bound difference (default - pair) / |pair|, least / median / largest (both are valid lower bounds; QPs "
        "stopped at the loose node tolerance or the prune level end at different points within it); "
        "converged: pair / default.",
        "",
        markdown(replays),
        "",
        "## Whole fits: BLAS threads",
        "",
        "CPU seconds (`time.process_time`, every thread of the process) and wall seconds of whole fits, each case "
        "fitted alternately with one BLAS thread (fit_csvm's default, `csvm_stats.optimization.blas`) and with "
        f"BLAS's default threads (`fit_csvm.__wrapped__`); {args.repeats} fits each, time limit "
        f"{args.gram_limit:g} CPU-s.",
        "",
        markdown(fits),
        "",
        "## The kernel matrix's eigendecomposition: BLAS threads",
        "",
        "`np.linalg.eigh` of an n x n RBF kernel matrix (the factorisation at exact rank), CPU and wall seconds, "
        f"least of {args.repeats}.",
        "",
        markdown(eigh),
        "",
    ]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "node_qp_gram.md").write_text("\n".join(lines))
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--every", type=int, default=100, help="capture every k-th node QP")
    parser.add_argument("--limit", type=float, default=300.0, help="CPU seconds of the captured bnb search")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--gram", action="store_true", help="the Gram-mode part instead (kernel fits; node_qp_gram.md)")
    parser.add_argument("--gram-limit", type=float, default=20.0, help="CPU seconds per Gram-mode fit")
    parser.add_argument("--gram-every", type=int, default=40, help="capture every k-th node QP (Gram-mode part)")
    args = parser.parse_args()
    warm_up()
    if args.gram:
        gram_main(args)
        return
    dual, qps = capture(args.n, args.every, args.limit)
    pair = replay(dual, qps, False, args.repeats)
    newton = replay(dual, qps, True, args.repeats)
    cold = cold_fits(args.repeats)
    rel = (newton.bound - pair.bound) / pair.bound.abs()
    table = pd.DataFrame([
        dict(solver=name, qps=len(df), cpu_s=df.cpu_s.sum(), steps=int(df.steps.sum()),
             median_steps=float(df.steps.median()), converged=int(df.converged.sum()))
        for name, df in (("pair steps only (newton=False)", pair), ("pair + Newton steps (newton=True)", newton))
    ])
    RESULTS.mkdir(exist_ok=True)
    pd.concat([pair.add_prefix("pair_"), newton.add_prefix("newton_")], axis=1).to_csv(RESULTS / "node_qp.csv",
                                                                                      index=False)
    q = np.quantile(rel, [0.0, 0.1, 0.5, 0.9, 1.0])
    lines = [
        f"# bnb node QPs replayed: pair steps only vs pair + Newton steps (synthetic n = {args.n})",
        "",
        f"{len(qps)} node QPs (every {args.every}-th of the search, limit {args.limit:g} CPU-s), each solved by "
        f"both solvers in one process; CPU seconds are the best of {args.repeats} passes. Command: "
        "`nice -n 10 python benchmarks/node_qp.py`.",
        "",
        markdown(table),
        "",
        f"CPU ratio {table.cpu_s[0] / table.cpu_s[1]:.2f}x, steps ratio {table.steps[0] / table.steps[1]:.1f}x.",
        "Relative bound difference (Newton - pair) / |pair|, quantiles 0 / 10 / 50 / 90 / 100%: "
        + " / ".join(f"{v:.2e}" for v in q) + " (both are valid lower bounds; QPs stopped at the prune level "
        "or at the loose node tolerance end at different points within it).",
        "",
        "## Cold-start SVM fits (box 0.5, tolerance 1e-5)",
        "",
        markdown(cold),
        "",
    ]
    (RESULTS / "node_qp.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
