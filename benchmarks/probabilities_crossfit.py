"""Probability benchmark of the cross-fitted route: the estimator without a requirement, ``CSVMClassifier()``.

Issue 23 asks that the estimator without a requirement be measured
separately from the headline path (``benchmarks/probabilities.py``, the
formula with a requirement and its held-out sample). ``CSVMClassifier(kernel=...)``
with no requirement puts every row in the training sample (no held-out
sample), so its ``predict_proba`` takes the cross-fitted route of
:mod:`csvm_stats.probability.fit_calibration`. Columns, all fitted on the same
training rows of each repetition:

* ``cross-fitted`` (the library's route): the logistic probability model on
  the fit's feature map, its sigmoid and Venn-Abers interval fitted on its
  out-of-fold scores (``results_.predict_interval``). No CSVM refit.
* ``previous``: the route it replaces, recomputed here from the same fit:
  the CSVM refitted on 5 stratified folds (:mod:`csvm_stats.probability.refits`),
  the bagged Venn-Abers predictor of the refits' out-of-fold decision values
  (:func:`csvm_stats.probability.venn_abers.bagged`), merged as
  p1 / (1 - p0 + p1) and applied to the final f(x).
* ``rule sigmoid``: a candidate that keeps P monotone in f(x): Platt's
  sigmoid (:func:`csvm_stats.probability.score_model.fit_sigmoid`) on the
  same refits' out-of-fold decision values, applied to the final f(x).
* ``Platt`` / ``isotonic``: ``CalibratedClassifierCV(SVC(kernel, C), method,
  cv=5, ensemble=False)`` on the standardised training rows, C tuned by 5-fold
  accuracy on the grid 2^(-5..5) (as ``benchmarks/probabilities.py``).

Synthetic truths: the eight of ``benchmarks/probabilities.py`` (``TRUTHS``:
the project's logistic, nearly separable and radial truths, and the issue's
probit with an interaction, 10% and 15% positives, t(3) features, curved RBF
boundary), ``--reps`` repetitions (seeds 1000 + rep for the data,
``random_state=rep`` for the fit), ``--n-test`` test points. Real data
(``--datasets``): stratified 80/20 splits (``random_state=0``), preprocessing
fitted on the training part, linear kernel.

Scores: MSE to the true probability, Brier, log loss, ECE, bias (mean P minus
the mean true probability, or the test prevalence on real data), coverage of
the true probability by [p0, p1], the share of test points where the rule
(f >= 0) and P >= 1/2 disagree, and the CPU seconds of the calibration
(the library's route: ``results_.calibration``; previous: its refits and
bagging).

    nice -n 10 python benchmarks/probabilities_crossfit.py      # -> results/probabilities_crossfit.{md,json}
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
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probabilities import BASE_RATE_TRUTHS, TRUTHS  # noqa: E402  (the same truths as the headline benchmark)

from csvm_stats import CSVMClassifier  # noqa: E402
from csvm_stats.data.datasets import load_dataset  # noqa: E402
from csvm_stats.inference.bounds import CappedTargetWarning  # noqa: E402
from csvm_stats.models.tuning import FoldPreprocessor  # noqa: E402
from csvm_stats.probability.bootstrap import LIBSVM_MAX_ITER  # noqa: E402
from csvm_stats.probability.calibration import calibrated_svc, probability_scores, tune_svc  # noqa: E402
from csvm_stats.probability.ebb import DEFAULT_C_GRID  # noqa: E402
from csvm_stats.probability.refits import DEFAULT_FOLDS, refits_without, stratified_folds  # noqa: E402
from csvm_stats.probability.score_model import fit_sigmoid  # noqa: E402
from csvm_stats.probability.venn_abers import bagged, merge  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
METHODS = ("cross-fitted", "previous", "rule sigmoid", "Platt", "isotonic")
REAL = ("wisconsin", "australian", "german", "heart", "banknote", "votes")


def previous_route(results, X_te_decision: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The replaced route's (p0, p1, merged p) on test decision values, and its out-of-fold calibration pairs.

    The CSVM refitted on :data:`DEFAULT_FOLDS` stratified folds of the
    training and anchor rows; out-of-fold decision values (shifted by the
    fit's guarantee-mode intercept change, none here) and the fit's values on
    H (none here) calibrated by the bagged Venn-Abers predictor.
    """
    y, split = results.model.y, results.split
    rows = np.concatenate([split.train, split.anchor])
    n_folds = int(min(DEFAULT_FOLDS, np.sum(y[rows] > 0), np.sum(y[rows] < 0)))
    folds = stratified_folds(rows, y[rows], n_folds)
    shift = results.intercept - results.engine_fit.intercept
    f = results.decision_function().to_numpy()
    scores, labels = [f[split.holdout]], [y[split.holdout]]
    for fold_rows, refit in zip(folds, refits_without(results, folds)):
        scores.append(refit.decision_function().to_numpy()[fold_rows] + shift)
        labels.append(y[fold_rows])
    s, lab = np.concatenate(scores), np.concatenate(labels)
    p0, p1 = bagged(s, lab).interval(X_te_decision)
    return p0, p1, merge(p0, p1), np.column_stack([s, lab])


def run_methods(X_tr, y_tr, X_te, kernel: str, seed: int) -> tuple[dict, dict, dict]:
    """Probabilities, intervals and extras (rule calls, CPU) of every method on X_te (labels y in {0, 1})."""
    probs, intervals, extra = {}, {}, {}
    clock = time.process_time
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (ConvergenceWarning, CappedTargetWarning, UserWarning))
        clf = CSVMClassifier(kernel=kernel, random_state=seed).fit(X_tr, y_tr)
        res = clf.results_
        start = clock()
        calibration = res.calibration
        extra["crossfit_cpu"] = clock() - start
        extra["route"] = calibration.method
        table = res.predict_interval(X_te)
        probs["cross-fitted"], intervals["cross-fitted"] = table["p"].to_numpy(), table[["p0", "p1"]].to_numpy()
        f_te = res.decision_function(X_te).to_numpy()
        extra["called_positive"] = f_te >= 0
        start = clock()
        p0, p1, p, pairs = previous_route(res, f_te)
        extra["previous_cpu"] = clock() - start
        probs["previous"], intervals["previous"] = p, np.column_stack([p0, p1])
        a, b = fit_sigmoid(pairs[:, 0], (pairs[:, 1] > 0).astype(float))
        probs["rule sigmoid"] = 1.0 / (1.0 + np.exp(-(a * f_te + b)))
        scaler = StandardScaler().fit(X_tr)
        Xs, Xts = scaler.transform(X_tr), scaler.transform(X_te)
        start = clock()
        C = tune_svc(Xs, y_tr, DEFAULT_C_GRID, kernel=kernel, folds=5, seed=seed, max_iter=LIBSVM_MAX_ITER)
        for method, label in (("platt", "Platt"), ("isotonic", "isotonic")):
            m = calibrated_svc(method, C, kernel=kernel, max_iter=LIBSVM_MAX_ITER).fit(Xs, y_tr)
            probs[label] = m.predict_proba(Xts)[:, list(m.classes_).index(1)]
        extra["baselines_cpu"] = clock() - start
    return probs, intervals, extra


def scores_of(y_te, probs, intervals, extra, p_true=None) -> dict:
    """Scores of every method on one test set (y in {0, 1})."""
    y_pm = np.where(y_te > 0, 1, -1)
    target = float(np.mean(p_true)) if p_true is not None else float(np.mean(y_te))
    out = {}
    for m, p in probs.items():
        out[m] = probability_scores(y_pm, p, p_true) | {"bias": float(np.mean(p) - target),
                                                          "disagree": float(np.mean(extra["called_positive"] != (p >= 0.5)))}
        if m in intervals:
            lo, hi = intervals[m][:, 0], intervals[m][:, 1]
            out[m]["width"] = float(np.mean(hi - lo))
            if p_true is not None:
                out[m]["coverage"] = float(np.mean((lo <= p_true) & (p_true <= hi)))
    out["cpu"] = {k: extra[k] for k in ("crossfit_cpu", "previous_cpu", "baselines_cpu")}
    return out


def summarise(runs: list[dict]) -> dict:
    """Means over repetitions; ratios to Platt per repetition (mean and the worst), bias signs."""
    out = {}
    for m in METHODS:
        keys = [k for k in runs[0][m] if all(k in r[m] for r in runs)]
        out[m] = {k: float(np.mean([r[m][k] for r in runs])) for k in keys}
        if "mse_true" in runs[0][m]:
            out[m]["beats_platt"] = int(sum(r[m]["mse_true"] < r["Platt"]["mse_true"] for r in runs))
        out[m]["max_abs_bias"] = float(max(abs(r[m]["bias"]) for r in runs))
        out[m]["positive_bias_reps"] = int(sum(r[m]["bias"] > 0 for r in runs))
    out["cpu"] = {k: float(np.median([r["cpu"][k] for r in runs])) for k in runs[0]["cpu"]}
    out["runs"] = len(runs)
    return out


def synthetic(args, report) -> dict:
    table = {}
    for truth in args.truths:
        gen, prob, kernel, n = TRUTHS[truth]
        reps = args.base_rate_reps if truth in BASE_RATE_TRUTHS else args.reps
        runs = []
        for rep in range(reps):
            rng = np.random.default_rng(1000 + rep)
            X_tr, X_te = gen(rng, n), gen(rng, args.n_test)
            p_tr, p_te = prob(X_tr), prob(X_te)
            y_tr = (rng.random(n) < p_tr).astype(int)
            y_te = (rng.random(args.n_test) < p_te).astype(int)
            probs, intervals, extra = run_methods(X_tr, y_tr, X_te, kernel, rep)
            runs.append(scores_of(y_te, probs, intervals, extra, p_te))
            print(f"  {truth} rep {rep}: {extra['route']} new {runs[-1]['cross-fitted']['mse_true']:.4f} "
                  f"previous {runs[-1]['previous']['mse_true']:.4f} Platt {runs[-1]['Platt']['mse_true']:.4f}",
                  file=sys.stderr, flush=True)
        table[truth] = {"kernel": kernel, "n": n, "reps": reps, "scores": summarise(runs)}
        report({"synthetic": table})
    return table


def real_data(args, report) -> dict:
    table = {}
    for name in args.datasets:
        X, y_series = load_dataset(name)
        y = (y_series.to_numpy() > 0).astype(int)
        runs = []
        for k, (train, test) in enumerate(StratifiedShuffleSplit(args.splits, test_size=0.2, random_state=0).split(X, y)):
            prep = FoldPreprocessor.fit(X.iloc[train])
            X_tr, X_te = np.asarray(prep.transform(X.iloc[train]), float), np.asarray(prep.transform(X.iloc[test]), float)
            probs, intervals, extra = run_methods(X_tr, y[train], X_te, "linear", k)
            runs.append(scores_of(y[test], probs, intervals, extra))
            print(f"  {name} split {k}: new {runs[-1]['cross-fitted']['brier']:.4f} previous "
                  f"{runs[-1]['previous']['brier']:.4f} Platt {runs[-1]['Platt']['brier']:.4f} isotonic "
                  f"{runs[-1]['isotonic']['brier']:.4f}", file=sys.stderr, flush=True)
        table[name] = {"n": int(y.size), "splits": args.splits, "scores": summarise(runs)}
        report({"real": table})
    return table


def _cell(scores: dict, method: str, key: str, digits: int = 4) -> str:
    v = scores.get(method, {}).get(key)
    return "" if v is None else f"{v:.{digits}f}"


def markdown(result: dict) -> str:
    meta = result["meta"]
    lines = [
        "# Probabilities without a requirement: the cross-fitted route (benchmarks/probabilities_crossfit.py)",
        "",
        f"Path: `CSVMClassifier(kernel=<kernel>, random_state=rep).fit(X, y)` with no requirement (every row in the "
        f"training sample, no held-out sample: the cross-fitted route), `results_.predict_interval`. Commit "
        f"{meta['commit']}; "
        + (f"synthetic truths: {meta['n_test']} test points per repetition, data seeds 1000 + rep; "
           if "synthetic" in result else "")
        + ("real data: stratified 80/20 splits (random_state=0), preprocessing fitted on the training part; "
           if "real" in result else "")
        + f"CPU {meta['cpu_s']:.0f} s of this process; load average {meta['load_start']:.1f} at the start, "
        f"{meta['load_end']:.1f} at the end. Columns: module docstring. All figures are means over repetitions; "
        "'beats Platt' counts repetitions with a smaller MSE to the truth than tuned Platt.",
        "",
    ]
    if "synthetic" in result:
        lines += ["## Synthetic truths: MSE to the true probability", "",
                  "| truth | kernel | n | reps | cross-fitted | previous | rule sigmoid | Platt | isotonic | "
                  "cross-fitted / Platt | previous / Platt | beats Platt (new / previous) |",
                  "|" + "---|" * 12]
        for truth, row in result["synthetic"].items():
            s = row["scores"]
            platt = s["Platt"]["mse_true"]
            lines.append(
                f"| {truth} | {row['kernel']} | {row['n']} | {row['reps']} | "
                + " | ".join(_cell(s, m, "mse_true") for m in METHODS)
                + f" | {s['cross-fitted']['mse_true'] / platt:.2f} | {s['previous']['mse_true'] / platt:.2f} | "
                f"{s['cross-fitted']['beats_platt']} / {s['previous']['beats_platt']} of {row['reps']} |"
            )
        lines += ["", "## Synthetic truths: Brier score", "",
                  "| truth | " + " | ".join(METHODS) + " | cross-fitted / min(Platt, isotonic) |", "|" + "---|" * 7]
        for truth, row in result["synthetic"].items():
            s = row["scores"]
            best = min(s["Platt"]["brier"], s["isotonic"]["brier"])
            lines.append(f"| {truth} | " + " | ".join(_cell(s, m, "brier") for m in METHODS)
                         + f" | {s['cross-fitted']['brier'] / best:.3f} |")
        lines += ["", "## Base rate, interval, rule", "",
                  "Bias: mean P minus the mean true probability of the test points (mean over repetitions; in "
                  "brackets the largest |bias| of a repetition and the repetitions with a positive bias). Coverage: "
                  "share of test points whose true probability lies in [p0, p1] (no finite-sample guarantee on this "
                  "route). Disagree: share of test points where the rule f >= 0 and P >= 1/2 differ.", "",
                  "| truth | bias cross-fitted | bias previous | bias rule sigmoid | bias Platt | coverage cross-fitted "
                  "| coverage previous | width cross-fitted | disagree cross-fitted | disagree previous |",
                  "|" + "---|" * 10]
        for truth, row in result["synthetic"].items():
            s = row["scores"]

            def bias(m: str) -> str:
                return (f"{s[m]['bias']:+.4f} ({s[m]['max_abs_bias']:.4f}; {s[m]['positive_bias_reps']} of "
                        f"{row['reps']} > 0)")

            lines.append(
                f"| {truth} | {bias('cross-fitted')} | {bias('previous')} | {bias('rule sigmoid')} | {bias('Platt')} | "
                f"{_cell(s, 'cross-fitted', 'coverage', 3)} | {_cell(s, 'previous', 'coverage', 3)} | "
                f"{_cell(s, 'cross-fitted', 'width', 3)} | {_cell(s, 'cross-fitted', 'disagree', 4)} | "
                f"{_cell(s, 'previous', 'disagree', 4)} |"
            )
        lines += ["", "## Cost (median CPU seconds per repetition)", "",
                  "| truth | cross-fitted calibration | previous route (5 refits + bagging) | ratio | tuned Platt + isotonic |",
                  "|---|---|---|---|---|"]
        for truth, row in result["synthetic"].items():
            c = row["scores"]["cpu"]
            lines.append(f"| {truth} | {c['crossfit_cpu']:.4f} | {c['previous_cpu']:.3f} | "
                         f"{c['previous_cpu'] / max(c['crossfit_cpu'], 1e-9):.0f}x | {c['baselines_cpu']:.2f} |")
    if "real" in result:
        lines += ["", "## Real data (linear kernel): Brier score", "",
                  "| data set | n | splits | " + " | ".join(METHODS) + " | cross-fitted / min(Platt, isotonic) | "
                  "previous / min | bias cross-fitted | bias previous |", "|" + "---|" * 12]
        for name, row in result["real"].items():
            s = row["scores"]
            best = min(s["Platt"]["brier"], s["isotonic"]["brier"])
            lines.append(f"| {name} | {row['n']} | {row['splits']} | " + " | ".join(_cell(s, m, "brier") for m in METHODS)
                         + f" | {s['cross-fitted']['brier'] / best:.3f} | {s['previous']['brier'] / best:.3f} | "
                         f"{s['cross-fitted']['bias']:+.4f} | {s['previous']['bias']:+.4f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", nargs="+", default=["synthetic", "real"], choices=["synthetic", "real"])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--base-rate-reps", type=int, default=20, help="repetitions of the 10%% and 15%% truths")
    parser.add_argument("--n-test", type=int, default=10000)
    parser.add_argument("--truths", nargs="+", default=list(TRUTHS), choices=list(TRUTHS))
    parser.add_argument("--datasets", nargs="+", default=list(REAL))
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--tag", default="", help="suffix of the result files")
    args = parser.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=RESULTS.parent, check=False).stdout.strip()
    meta = {"commit": commit, "n_test": args.n_test, "load_start": os.getloadavg()[0], "argv": sys.argv[1:]}
    cpu0 = time.process_time()
    result: dict = {"meta": meta}
    stem = RESULTS / ("probabilities_crossfit" + (f"_{args.tag}" if args.tag else ""))

    def report(part: dict) -> None:
        result.update(part)
        meta.update(cpu_s=time.process_time() - cpu0, load_end=os.getloadavg()[0])
        stem.with_suffix(".json").write_text(json.dumps(result, indent=1))
        stem.with_suffix(".md").write_text(markdown(result))

    if "synthetic" in args.parts:
        synthetic(args, report)
    if "real" in args.parts:
        real_data(args, report)
    print(stem.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
