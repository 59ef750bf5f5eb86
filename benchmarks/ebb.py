"""EBB benchmark: run time against a plain scikit-learn loop, and Brier scores against baselines.

Part 1 (speed): EBB with B bootstrap samples x 11 C values (linear kernel) on
Wisconsin, against a plain loop of ``sklearn.svm.SVC`` fits on the duplicated
bootstrap samples doing the same work (same samples, out-of-bag accuracy, test
scores), measured in the same run, alternating, best of ``--repeats``.

Part 2 (accuracy): over repeated stratified 80/20 splits of each data set
(preprocessing fitted on the training part: median/mode imputation, dummies,
standardisation - ``csvm_stats.models.tuning.FoldPreprocessor``), Brier scores of
P(y=+1|x) on the test part for EBB (best theta, and the eps-ensemble), CEBB1,
CEBB2, Platt, isotonic and Sollich's plug-in, overall and per class, next to
what the EBB paper reports (its Table 6 text: which method is best where).

    python benchmarks/ebb.py                 # full run, writes benchmarks/results/ebb.{md,json}
    python benchmarks/ebb.py --quick         # small settings to check the script
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.svm import SVC

from csvm_stats.probability.bootstrap import LIBSVM_MAX_ITER, bootstrap_multiplicities, svc_c
from csvm_stats.probability.calibration import brier_scores, calibrated_svc, sollich_svc_probabilities, tune_svc
from csvm_stats.data.datasets import load_dataset
from csvm_stats.probability.ebb import DEFAULT_C_GRID, EBB
from csvm_stats.models.tuning import FoldPreprocessor

RESULTS = Path(__file__).resolve().parent / "results"

PAPER_BEST = {
    "wisconsin": "EBB",
    "banknote": "EBB (best theta)",
    "leukemia": "EBB",
    "cervical": "EBB (best theta) / EBB",
    "australian": "Platt",
    "car": "Platt",
    "churn": "Platt",
    "german": "Platt",
    "heart": "Tao",
    "srbct": "Tao (MSE 0)",
    "votes": "(not in the paper)",
}
"""Best method per data set as the EBB paper's Table 6 discussion states it (numbers not in our copy)."""

METHODS = ("EBB best", "EBB", "CEBB1", "CEBB2", "Platt", "isotonic", "Sollich")


# --------------------------------------------------------------------------- part 1: speed
def plain_loop(X, y, X_test, S, C_grid):
    """The same work as EBB with plain SVC fits on duplicated samples: P(+|x,C) and mean OOB accuracy."""
    proba = np.zeros((X_test.shape[0], len(C_grid)))
    accuracy = np.zeros(len(C_grid))
    for c, C in enumerate(C_grid):
        for weight in S:
            rows = np.repeat(np.arange(y.size), weight)
            oob = weight == 0
            svm = SVC(kernel="linear", C=svc_c(C)).fit(X[rows], y[rows])
            accuracy[c] += np.mean(np.where(svm.decision_function(X[oob]) >= 0, 1, -1) == y[oob])
            proba[:, c] += svm.decision_function(X_test) >= 0
    return proba / len(S), accuracy / len(S)


def speed(n_bootstrap: int, repeats: int, seed: int) -> dict:
    X, y = load_dataset("wisconsin")
    split = StratifiedShuffleSplit(1, test_size=0.2, random_state=seed)
    train, test = next(split.split(X, y))
    prep = FoldPreprocessor.fit(X.iloc[train])
    X_tr, X_te = prep.transform(X.iloc[train]), prep.transform(X.iloc[test])
    y_tr = y.to_numpy()[train]
    S = bootstrap_multiplicities(y_tr, n_bootstrap, np.random.SeedSequence(seed))
    times: dict[str, list[float]] = {"plain SVC loop": [], "EBB n_jobs=1": [], "EBB n_jobs=2": []}
    cpu: dict[str, list[float]] = {"plain SVC loop": [], "EBB n_jobs=1": []}
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        loop_proba, loop_acc = plain_loop(X_tr, y_tr, X_te, S, DEFAULT_C_GRID)
        times["plain SVC loop"].append(time.perf_counter() - start)
        cpu["plain SVC loop"].append(time.process_time() - start_cpu)
        for jobs in (1, 2):
            start, start_cpu = time.perf_counter(), time.process_time()
            model = EBB(n_bootstrap=n_bootstrap, random_state=seed, n_jobs=jobs, progress=False).fit(X_tr, y_tr)
            model.predict_proba(X_te)
            assert model.n_unconverged_ == 0, "the loop runs libsvm without a cap; the comparison needs no capped fit"
            times[f"EBB n_jobs={jobs}"].append(time.perf_counter() - start)
            if jobs == 1:  # worker processes' CPU time is not counted by process_time, so n_jobs=2 has wall time only
                cpu["EBB n_jobs=1"].append(time.process_time() - start_cpu)
    best = {k: min(v) for k, v in times.items()}
    cpu_ratios = [loop / ebb for loop, ebb in zip(cpu["plain SVC loop"], cpu["EBB n_jobs=1"])]
    return {
        "n_train": int(y_tr.size),
        "n_test": int(test.size),
        "n_bootstrap": n_bootstrap,
        "n_C": len(DEFAULT_C_GRID),
        "n_fits": n_bootstrap * len(DEFAULT_C_GRID),
        "seconds": times,
        "cpu_seconds": cpu,
        "cpu_speedup_n_jobs_1": float(np.median(cpu_ratios)),
        "cpu_speedup_range": [float(min(cpu_ratios)), float(max(cpu_ratios))],
        "best_seconds": best,
        "speedup_n_jobs_1": best["plain SVC loop"] / best["EBB n_jobs=1"],
        "speedup_n_jobs_2": best["plain SVC loop"] / best["EBB n_jobs=2"],
        "max_abs_diff_P_theta": float(np.max(np.abs(loop_proba - model.proba_by_theta(X_te)))),
        "max_abs_diff_oob_accuracy": float(np.max(np.abs(loop_acc - model.reliability_))),
        "load_average": os.getloadavg(),
    }


# --------------------------------------------------------------------------- part 2: Brier scores
def one_split(name, X, y, train, test, args, seed, with_cebb2):
    prep = FoldPreprocessor.fit(X.iloc[train])
    X_tr, X_te = prep.transform(X.iloc[train]), prep.transform(X.iloc[test])
    y_tr, y_te = y[train], y[test]
    common = dict(n_bootstrap=args.bootstrap, random_state=seed, n_jobs=args.jobs, progress=False)
    probs: dict[str, np.ndarray] = {}
    timing: dict[str, float] = {}

    # CEBB1 only moves the threshold, so one fit gives EBB too: the same models and rho at t = 0
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # counted in n_unconverged_ and reported
        cebb1 = EBB(eps=args.eps, variant="cebb1", tpr_min=args.tpr, bound="none", **common).fit(X_tr, y_tr)
    timing["unconverged"] = cebb1.n_unconverged_
    probs["CEBB1"] = cebb1.predict_proba(X_te)[:, 1]
    share = np.column_stack([np.mean(cebb1.bootstrap_scores(X_te, t) >= 0, axis=1) for t in range(len(cebb1.rho_))])
    probs["EBB best"] = share[:, int(np.nanargmax(cebb1.reliability_))]
    probs["EBB"] = np.clip(share @ cebb1.rho_, 0.0, 1.0)  # rho sums to 1 up to rounding
    timing["EBB+CEBB1"] = time.perf_counter() - start

    cebb2_info = None
    if with_cebb2:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            cebb2 = EBB(
                eps=args.eps, variant="cebb2", tpr_min=args.tpr, bound="none", C_grid=args.cebb2_C,
                n_bootstrap=args.cebb2_bootstrap, random_state=seed, n_jobs=args.jobs, progress=False,
                time_limit=args.time_limit,
            ).fit(X_tr, y_tr)
        probs["CEBB2"] = cebb2.predict_proba(X_te)[:, 1]
        timing["CEBB2"] = time.perf_counter() - start
        cebb2_info = {"fits": cebb2.n_fits_, "optimal": cebb2.n_optimal_, "failed": cebb2.n_failed_,
                      "settled_by_svm": int((cebb2.fit_records_["status"] == "svm solution feasible").sum())}

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # same iteration cap as EBB's fits
        C = tune_svc(X_tr, y_tr, DEFAULT_C_GRID, folds=args.folds, seed=seed, max_iter=LIBSVM_MAX_ITER)
        for method, label in (("platt", "Platt"), ("isotonic", "isotonic")):
            model = calibrated_svc(method, C, max_iter=LIBSVM_MAX_ITER).fit(X_tr, y_tr)
            probs[label] = model.predict_proba(X_te)[:, list(model.classes_).index(1)]
        probs["Sollich"] = sollich_svc_probabilities(X_tr, y_tr, X_te, C, max_iter=LIBSVM_MAX_ITER)
    timing["baselines"] = time.perf_counter() - start

    scores = {m: brier_scores(y_te, p).__dict__ for m, p in probs.items()}
    return scores, timing, cebb2_info


def accuracy_table(args) -> dict:
    out = {}
    for name in args.datasets:
        X, y_series = load_dataset(name)
        y = y_series.to_numpy()
        with_cebb2 = name in args.cebb2_datasets
        n_splits = 1 if name in args.one_split else args.splits
        splits = StratifiedShuffleSplit(n_splits, test_size=0.2, random_state=0).split(X, y)
        runs = []
        for k, (train, test) in enumerate(splits):
            runs.append(one_split(name, X, y, train, test, args, k, with_cebb2 and k < args.cebb2_splits))
            print(f"  {name} split {k}: {runs[-1][1]}", file=sys.stderr, flush=True)
        methods = [m for m in METHODS if any(m in r[0] for r in runs)]
        summary = {}
        for m in methods:
            values = [r[0][m] for r in runs if m in r[0]]
            summary[m] = {
                part: [float(np.mean([v[part] for v in values])), float(np.std([v[part] for v in values]))]
                for part in ("overall", "positive", "negative")
            } | {"splits": len(values)}
        out[name] = {
            "n": int(y.size),
            "p_raw": int(X.shape[1]),
            "positives": int((y > 0).sum()),
            "brier": summary,
            "seconds": {k: float(np.mean([r[1][k] for r in runs if k in r[1]])) for k in ("EBB+CEBB1", "CEBB2", "baselines") if any(k in r[1] for r in runs)},
            "unconverged_fits": int(sum(r[1]["unconverged"] for r in runs)),
            "cebb2": [r[2] for r in runs if r[2] is not None],
            "paper_best": PAPER_BEST.get(name, ""),
        }
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"ebb_partial{('_' + args.tag) if args.tag else ''}.json").write_text(json.dumps(out, indent=1))
    return out


# --------------------------------------------------------------------------- report
def markdown(speed_result, table, args) -> str:
    lines = ["# EBB benchmark", ""]
    if speed_result:
        s = speed_result
        lines += [
            f"## Speed: B = {s['n_bootstrap']} x {s['n_C']} C values on Wisconsin ({s['n_fits']} fits, "
            f"n_train = {s['n_train']}), best of {len(s['seconds']['plain SVC loop'])}",
            "",
            "| run | seconds (best) | all runs |",
            "|---|---|---|",
        ]
        for k, v in s["seconds"].items():
            lines.append(f"| {k} | {min(v):.2f} | {', '.join(f'{t:.2f}' for t in v)} |")
        lines += [
            "",
            f"**CPU time, measured side by side (the figure to quote):** the plain loop takes "
            f"{s['cpu_speedup_n_jobs_1']:.1f}x the CPU seconds of EBB with one worker (median over the "
            f"{len(s['cpu_seconds']['plain SVC loop'])} alternating runs; range "
            f"{s['cpu_speedup_range'][0]:.1f}x-{s['cpu_speedup_range'][1]:.1f}x; loop "
            f"{', '.join(f'{t:.1f}' for t in s['cpu_seconds']['plain SVC loop'])} s, EBB "
            f"{', '.join(f'{t:.1f}' for t in s['cpu_seconds']['EBB n_jobs=1'])} s).",
            "",
            f"Wall-clock speed-up over the plain loop (best runs, sensitive to the load of the shared machine): "
            f"{s['speedup_n_jobs_1']:.2f}x with 1 worker, "
            f"{s['speedup_n_jobs_2']:.2f}x with 2 workers (target 3x). Machine load average during the run: "
            f"{', '.join(f'{x:.1f}' for x in s['load_average'])} (2 cores, shared with other jobs).",
            f"Agreement with the loop: max |P(+|x,C) difference| = {s['max_abs_diff_P_theta']:.3g}, "
            f"max |mean OOB accuracy difference| = {s['max_abs_diff_oob_accuracy']:.3g} "
            "(libsvm stops at tol 1e-3 in both; weighted and duplicated problems have the same optimum).",
            "",
        ]
    if table:
        lines += [
            f"## Brier scores (test part of {args.splits} stratified 80/20 splits, {', '.join(args.one_split) or 'none'}: "
            "1 split; mean; lower is better)",
            "",
            f"EBB/CEBB1: B = {args.bootstrap}, C in 2^(-5..5) (CSVM convention, SVC C/2), eps = {args.eps} for "
            f"the ensemble, reliability = OOB accuracy; EBB and CEBB1 share one set of fits (CEBB1 only moves "
            f"the threshold). CEBB1/CEBB2: TPR >= {args.tpr} on the training data "
            f"(bound 'none', as in the paper). CEBB2: B = {args.cebb2_bootstrap}, C in {args.cebb2_C}, "
            f"time limit {args.time_limit} s per fit, first {args.cebb2_splits} split(s) only. Baselines: C "
            f"tuned by {args.folds}-fold CV accuracy on the same grid; Platt = CalibratedClassifierCV(SVC, "
            "ensemble=False, sigmoid), isotonic likewise; Sollich = plug-in of the MAP SVM (no GP averaging). "
            "Tao et al. (2005) not run (method not pinned down). 'paper' = best method per the EBB paper's text. "
            f"All libsvm fits (EBB and baselines) stop at {LIBSVM_MAX_ITER} iterations (see the last table).",
            "",
        ]
        for part in ("overall", "positive", "negative"):
            lines += [f"### {part}", "", "| data | n | " + " | ".join(METHODS) + " | EBB <= Platt | paper |",
                      "|---|---|" + "---|" * (len(METHODS) + 2)]
            for name, r in table.items():
                cells = []
                for m in METHODS:
                    v = r["brier"].get(m)
                    cells.append("" if v is None else f"{v[part][0]:.4f}")
                ebb, platt = r["brier"]["EBB"][part][0], r["brier"]["Platt"][part][0]
                lines.append(f"| {name} | {r['n']} | " + " | ".join(cells) + f" | {'yes' if ebb <= platt else 'no'} | {r['paper_best']} |")
            lines.append("")
        wins = sum(r["brier"]["EBB"]["overall"][0] <= r["brier"]["Platt"]["overall"][0] for r in table.values())
        best_wins = sum(
            min(r["brier"]["EBB"]["overall"][0], r["brier"]["EBB best"]["overall"][0]) <= r["brier"]["Platt"]["overall"][0]
            for r in table.values()
        )
        lines += [
            f"EBB (ensemble) no worse than Platt overall on {wins} of {len(table)} data sets "
            f"(EBB or EBB-best: {best_wins} of {len(table)}); target: at least half.",
            "",
            "### CEBB2 fits",
            "",
            "| data | fits | proven optimal | of which settled by the SVM | no model |",
            "|---|---|---|---|---|",
        ]
        for name, r in table.items():
            for info in r["cebb2"]:
                lines.append(f"| {name} | {info['fits']} | {info['optimal']} | {info['settled_by_svm']} | {info['failed']} |")
        steps = ["EBB+CEBB1", "CEBB2", "baselines"]
        lines += ["", "### Seconds per split (mean), and EBB fits stopped at libsvm's iteration cap (all splits)", "",
                  "| data | " + " | ".join(steps) + " | capped fits |", "|---|" + "---|" * (len(steps) + 1)]
        for name, r in table.items():
            lines.append(f"| {name} | " + " | ".join(f"{r['seconds'][k]:.1f}" if k in r["seconds"] else "" for k in steps)
                         + f" | {r['unconverged_fits']} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny settings to check the script")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-table", action="store_true")
    parser.add_argument("--speed-bootstrap", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--bootstrap", type=int, default=100)
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--eps", type=float, default=0.01)
    parser.add_argument("--tpr", type=float, default=0.95)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--datasets", nargs="+",
                        default=["wisconsin", "australian", "german", "heart", "banknote", "votes", "srbct", "leukemia", "churn", "car", "cervical"])
    parser.add_argument("--one-split", nargs="*", default=["churn"], help="large data sets run on one split only")
    parser.add_argument("--cebb2-datasets", nargs="*", default=["heart", "wisconsin", "votes"])
    parser.add_argument("--cebb2-bootstrap", type=int, default=20)
    parser.add_argument("--cebb2-C", type=float, nargs="+", default=[0.125, 1.0, 8.0])
    parser.add_argument("--cebb2-splits", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--tag", default="", help="suffix of the result files")
    args = parser.parse_args(argv)
    if args.quick:
        args.speed_bootstrap, args.repeats, args.bootstrap, args.splits = 20, 1, 10, 1
        args.datasets, args.cebb2_datasets, args.cebb2_bootstrap, args.folds = ["wisconsin", "heart"], ["heart"], 2, 3
    speed_result = None if args.skip_speed else speed(args.speed_bootstrap, args.repeats, seed=0)
    if speed_result:
        print(json.dumps({k: v for k, v in speed_result.items() if k != "seconds"}, indent=1), flush=True)
    table = None if args.skip_table else accuracy_table(args)
    report = markdown(speed_result, table, args)
    print(report)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = "ebb" + (f"_{args.tag}" if args.tag else "") + ("_quick" if args.quick else "")
    (RESULTS / f"{stem}.md").write_text(report)
    (RESULTS / f"{stem}.json").write_text(json.dumps({"speed": speed_result, "brier": table, "args": vars(args)}, indent=1))
    (RESULTS / f"ebb_partial{('_' + args.tag) if args.tag else ''}.json").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
