"""Whole kernel fits (bnb, RBF at exact rank) by this code tree and another, side by side in one run.

Each fit runs in a fresh process whose ``PYTHONPATH`` is one of the two trees
(this one, or ``--before DIR``, e.g. ``git archive <commit> | tar -x -C DIR``),
alternating tree by tree and case by case; it prints one JSON line with its
status, SVM solves and the CPU seconds of the fit (``time.process_time``,
after the numba kernels are compiled or loaded). Cases (:func:`cases`):
node_qp.py's Gram-mode cases (australian TNR at (C, gamma) = (1, 0.5) and
(8, 8), Wisconsin TPR) and australian TPR >= 0.888 at (1, 0.5) and (2, 4),
which bnb proves within the limit. Run
``nice -n 10 python benchmarks/gram_side_by_side.py --before DIR [--limit 20 --repeats 2]``;
it writes ``benchmarks/results/gram_side_by_side.md`` and ``.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
SIDE_BY_SIDE = ("australian C=1 gamma=0.5 TNR", "australian C=8 gamma=8 TNR", "australian C=1 gamma=0.5 TPR",
                "australian C=2 gamma=4 TPR", "wisconsin C=1 gamma=scale TPR")
sys.path.insert(0, str(HERE))
from paper_protocol_cost import TARGETS, target_count, training_part  # noqa: E402
from solve_time import markdown, split, warm_up, wisconsin  # noqa: E402

from csvm_stats.data.datasets import data_dir  # noqa: E402
from csvm_stats.inference.bounds import adjust_target  # noqa: E402
from csvm_stats.optimization.engine import fit_csvm  # noqa: E402
from csvm_stats.optimization.solvers import SolverOptions  # noqa: E402


def cases() -> dict[str, dict]:
    """Fit arguments by case name: australian (paper_protocol_cost.py's training part, Hoeffding margin) and
    Wisconsin (solve_time.py's split 0, C = 1, gamma "scale", TPR >= 0.95 with the binomial margin); this
    script runs SIDE_BY_SIDE of them, node_qp.py --gram others too."""
    X, y, I, J = training_part("australian")
    out = {}
    for C, gamma, rate in ((1.0, 0.5, "tnr"), (8.0, 8.0, "tnr"), (1.0, 0.5, "tpr"), (2.0, 4.0, "tpr"), (1.0, 1.0, "tnr"),
                           (1.0, 2.0, "tnr"), (2.0, 4.0, "tnr")):
        _, k = target_count(y[J], rate, TARGETS["australian"][rate])
        out[f"australian C={C:g} gamma={gamma:g} {rate.upper()}"] = dict(
            X_train=X[I], y_train=y[I], X_anchor=X[J], y_anchor=y[J], C=C, gamma=gamma, min_counts={rate: k})
    X, y = wisconsin()
    I, J = split(y, 0)
    count = adjust_target(0.95, int((y[J] > 0).sum()), 0.05, "binomial").count
    out["wisconsin C=1 gamma=scale TPR"] = dict(X_train=X[I], y_train=y[I], X_anchor=X[J], y_anchor=y[J], C=1.0,
                                                gamma="scale", min_counts={"tpr": count})
    return out


def one(case: str, limit: float) -> dict:
    """One fit of ``case`` by the csvm_stats this process imports."""
    warm_up()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        rec = fit_csvm(**cases()[case], kernel="rbf", big_m=None, solver="bnb",
                       options=SolverOptions(time_limit=limit, clock="cpu")).record
        cpu = time.process_time() - t0
    return dict(case=case, status=rec.status.value, objective=rec.objective, bound=rec.best_bound,
                svm_solves=rec.svm_solves, cpu_s=cpu)


def run(tree: Path, case: str, limit: float) -> dict:
    """One fit in a fresh process importing csvm_stats from ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "CSVM_DATA_DIR": str(data_dir())}  # the other tree's ../shared may not exist
    out = subprocess.run([sys.executable, __file__, "--one", case, "--limit", str(limit)], env=env, cwd=tree,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="the other code tree (its csvm_stats is imported)")
    parser.add_argument("--limit", type=float, default=20.0, help="CPU seconds per fit")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--label", help="what the other tree is, for the report (default: its folder's name)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.limit)))
        return
    trees = {"before": args.before.resolve(), "this": HERE.parent}
    rows = []
    for _ in range(args.repeats):
        for case in SIDE_BY_SIDE:
            for name, tree in trees.items():
                rows.append(dict(code=name, **run(tree, case, args.limit)))
                print(rows[-1], flush=True)
    RESULTS.mkdir(exist_ok=True)
    with (RESULTS / "gram_side_by_side.jsonl").open("w") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
    table = pd.DataFrame([
        dict(case=case, code=code, status=runs[-1]["status"], svm_solves="/".join(str(r["svm_solves"]) for r in runs),
             cpu_s="/".join(f"{r['cpu_s']:.2f}" for r in runs), cpu_s_median=float(np.median([r["cpu_s"] for r in runs])),
             solves_per_cpu_s=sum(r["svm_solves"] for r in runs) / sum(r["cpu_s"] for r in runs))
        for case in SIDE_BY_SIDE for code in trees
        for runs in [[r for r in rows if r["case"] == case and r["code"] == code]]
    ])
    lines = [
        "# Kernel fits, two code trees side by side (bnb, RBF at exact rank)",
        "",
        f"Command: `nice -n 10 python benchmarks/gram_side_by_side.py --before DIR --limit {args.limit:g} "
        f"--repeats {args.repeats}`; before = {args.label or args.before.name}, this = the tree of the script. Each fit in a fresh "
        "process, alternating; CPU seconds of the fit (numba kernels compiled before it). Every run listed "
        f"(`/`); a fit at the limit ({args.limit:g} CPU-s) is compared by its SVM solves per CPU-second. Load average "
        f"at the end: {os.getloadavg()[0]:.1f}.",
        "",
        markdown(table),
        "",
    ]
    (RESULTS / "gram_side_by_side.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
