"""Which backend should ``solver="auto"`` give the L1-norm MILP? The routes it drives, with bnb against today's chain.

``auto``'s choice for the exact L1-norm CSVM (:attr:`MIQP.l1`) decides three
default paths: the L1 route itself (``CSVM(..., penalty="l1")``), the
cardinality route's gene ranking (its screening and start,
:func:`csvm_stats.sparse.model.feature_ranking`) and the L1 base of stability
selection (:func:`csvm_stats.sparse.stability.stability_selection`). Where
the L1 optimum is not unique, a different backend can return a different
optimal point and so move those results. Each route is run twice in the same
process, one after the other on the same data (which goes first alternates
with the seed; an unrecorded warm-up of both comes first): ``chain`` with ``auto`` as
given (``--chain``: ``today`` measures the chain before bnb was moved first,
``current`` the library's own), and ``bnb`` with bnb put first for the L1 form.

Routes (``--routes``):

* ``srbct_l1``: SRBCT, EWS against the rest, ``tpr_min=0.9``, binomial margin,
  ``CSVM(penalty="l1", C=1)``, default split with ``random_state`` = seed,
  ``mip_gap=1e-4``;
* ``srbct_rank``: the same model with ``max_features=20``: the gene ranking,
  the 100 screened genes and the start's objective (the cardinality MIQP is
  built, not solved: its solve does not depend on the L1 backend);
* ``sim_l1``, ``sim_rank``, ``sim_stab``: ``benchmarks/sparse_simulation.py``'s
  data (n = 200, 1000 columns, 5 informative, distance 4, ``tpr_min=0.8``):
  the L1 route at C = 0.1; the ranking of ``max_features=5`` (50 screened
  columns); stability selection with the L1 base on ``STAB_GRID``
  (``--pairs`` complementary pairs).

Every fit has ``time_limit=60, clock="cpu"``; ``cpu_s`` is
``time.process_time`` around the whole fit. Results go to
``benchmarks/results/l1_auto.{csv,md}`` (``--out``).
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

import csvm_stats.optimization.solvers as solvers
import csvm_stats.sparse.model as sparse_model
from csvm_stats.data.datasets import load_dataset
from csvm_stats.models.model import CSVM
from csvm_stats.sparse.stability import stability_selection
from solve_time import markdown  # benchmarks/solve_time.py: a Markdown table without tabulate
from sparse_simulation import STAB_GRID, _model, draw
from sparse_srbct_miqp import build, captured_miqp

OUT = Path(__file__).resolve().parent / "results"
LIMIT = 60.0
_CHAIN = solvers._auto_chain
_SOLVE = solvers.solve
_USED: list[str] = []  # backends that solved an L1 MILP in the current variant


def _today(problem):
    """The chain before bnb was moved first for the L1 form (Gurobi when licensed, HiGHS, SCIP)."""
    chain = _CHAIN(problem)
    return [link for link in chain if not (problem.l1 is not None and link[0] == "bnb")]


def _bnb_first(problem):
    chain = _today(problem)
    return [("bnb", "measured: bnb first for the L1 form")] + chain if problem.l1 is not None else chain


def _tracked(problem, solver="auto", options=None):
    """``solve`` as the sparse routes call it, noting which backend solved each L1 MILP."""
    solution = _SOLVE(problem, solver, options)
    if problem.l1 is not None:
        _USED.append(solution.record.backend)
    return solution


def use(variant: str, chain: str) -> None:
    """Patch ``auto``'s chain for the variant."""
    solvers._auto_chain = _bnb_first if variant == "bnb" else (_today if chain == "today" else _CHAIN)
    sparse_model.solve = _tracked


def _used() -> str:
    names = sorted(set(_USED))
    _USED.clear()
    return "+".join(names)


def srbct_l1(seed: int, X, ews) -> dict:
    model = CSVM(ews, X, tpr_min=0.9, bound="binomial", positive=True, penalty="l1", C=1.0)
    start = time.process_time()
    res = model.fit(random_state=seed, time_limit=LIMIT, mip_gap=1e-4, clock="cpu")
    rec = res.solver
    return {"status": rec.status.value, "objective": rec.objective, "gap": rec.gap,
            "cpu_s": time.process_time() - start,
            "selected": " ".join(map(str, np.flatnonzero(res.engine_fit.coef))), "n_selected": res.n_selected,
            "heldout_tpr": res.rates.loc["tpr", "heldout_rate"], "tpr_lower": res.rates.loc["tpr", "lower"]}


def _ranking(make_problem) -> dict:
    """The ranking of a cardinality fit that stops once its MIQP is built."""
    seen = {}
    original = sparse_model.feature_ranking

    def keep(*args, **kwargs):
        seen["ranking"] = original(*args, **kwargs)
        return seen["ranking"]

    sparse_model.feature_ranking = keep
    start = time.process_time()
    try:
        problem = make_problem()
    finally:
        sparse_model.feature_ranking = original
    ranking = seen["ranking"]
    return {"cpu_s": time.process_time() - start, "start_objective": problem.objective(problem.start),
            "ranking_head": " ".join(map(str, ranking[:20])), "selected": " ".join(map(str, np.sort(ranking[:20])))}


def sim_l1(seed: int) -> dict:
    population, X, y = draw(seed, 4.0)
    start = time.process_time()
    res = _model(y, X, penalty="l1", C=0.1).fit(random_state=seed, time_limit=LIMIT, mip_gap=1e-4, clock="cpu")
    selected = np.flatnonzero(res.engine_fit.coef)
    w = res.params.to_numpy()[:-1]
    return {"status": res.solver.status.value, "objective": res.solver.objective, "gap": res.solver.gap,
            "cpu_s": time.process_time() - start, "selected": " ".join(map(str, selected)), "n_selected": selected.size,
            "true_found": int(np.isin(np.arange(5), selected).sum()),
            "true_tpr": population.true_rates(w, float(res.params.iloc[-1]))["tpr"],
            "tpr_lower": res.rates.loc["tpr", "lower"]}


def sim_rank(seed: int) -> dict:
    _, X, y = draw(seed, 4.0)
    return _ranking(lambda: captured_miqp(lambda: _model(y, X, max_features=5).fit(
        random_state=seed, time_limit=LIMIT, clock="cpu")))


def sim_stab(seed: int, pairs: int) -> dict:
    _, X, y = draw(seed, 4.0)
    start = time.process_time()
    chosen = stability_selection(_model(y, X, penalty="l1"), STAB_GRID, n_pairs=pairs, random_state=seed,
                                 time_limit=LIMIT, clock="cpu")
    names = list(chosen.fit.model.exog_names)
    columns = sorted(names.index(f) for f in chosen.selected)
    frequency = chosen.table["frequency"].reindex(names).to_numpy()
    return {"cpu_s": time.process_time() - start, "C_chosen": chosen.C, "selected": " ".join(map(str, columns)),
            "n_selected": len(columns), "true_found": int(np.isin(np.arange(5), columns).sum()),
            "frequency": " ".join(f"{v:.2f}" for v in frequency[frequency > 0.1]),
            "failed_fits": int(chosen.table["failed"].iloc[0])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--routes", nargs="+", default=["srbct_l1", "srbct_rank", "sim_l1", "sim_rank", "sim_stab"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--chain", choices=["today", "current"], default="today")
    parser.add_argument("--out", default="l1_auto")
    args = parser.parse_args()
    X, y = load_dataset("srbct")
    ews = pd.Series(y.to_numpy() < 0, name="EWS")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    for variant in ("chain", "bnb"):  # warm-up (imports, compiled kernels, the licence check): not recorded
        use(variant, args.chain)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sim_rank(args.seeds[0])
        _used()
    rows = []
    for route in args.routes:
        for seed in args.seeds:
            for variant in ("chain", "bnb") if seed % 2 == 0 else ("bnb", "chain"):  # alternate who goes first
                use(variant, args.chain)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if route == "srbct_l1":
                        row = srbct_l1(seed, X, ews)
                    elif route == "srbct_rank":
                        row = _ranking(lambda: build(seed, X, ews, 20))
                    elif route == "sim_l1":
                        row = sim_l1(seed)
                    elif route == "sim_rank":
                        row = sim_rank(seed)
                    else:
                        row = sim_stab(seed, args.pairs)
                rows.append({"route": route, "seed": seed, "variant": variant, "l1_backend": _used(), **row,
                             "commit": commit, "load": round(os.getloadavg()[0], 1)})
                print(rows[-1], flush=True)
                pd.DataFrame(rows).to_csv(OUT / f"{args.out}.csv", index=False)
    frame = pd.DataFrame(rows)
    (OUT / f"{args.out}.md").write_text(markdown(frame.drop(columns=["commit"])) + "\n")


if __name__ == "__main__":
    main()
