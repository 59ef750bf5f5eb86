"""Probability benchmark on the path users take: ``CSVM.from_formula("y ~ .", data, tpr_min=0.9).fit()``.

Every probability of the headline column (``default``) comes from
``CSVM.from_formula("y ~ .", train, tpr_min=0.9, kernel=<kernel>).fit(random_state=rep)``
with its default split (I, J, H) = (0.5, 0.25, 0.25) and everything else at
its default; ``results.predict_interval(test)`` gives p0, p1 and p. That is
the held-out route of :mod:`csvm_stats.probability.fit_calibration` whenever H
has 50 points with 5 of each class (the column ``route`` says which route ran).

Baselines, fitted on the same rows the fit had (all training rows, the
columns standardised as the CSVM does): ``Platt`` and ``isotonic`` -
``CalibratedClassifierCV(SVC(kernel, C), method, cv=5, ensemble=False)`` with C
tuned by 5-fold cross-validated accuracy on the grid 2^(-5..5) (the kernel of
the row; RBF gamma "scale"). ``rule VA(H)`` is the previous default, kept for
comparison: the rule's own decision function calibrated by inductive
Venn-Abers on H and merged as p1 / (1 - p0 + p1) (computed from the same fit).
``no requirement`` (``--no-requirement``): the same formula without a rate
requirement, ``fractions=(1, 0, 0)`` as ``CSVMClassifier()`` uses, which takes
the cross-fitted route (5 CSVM refits), labelled separately.

Part 1, synthetic truths (true P(y = 1 | x) known; x ~ N(0, I_d) unless said):
logistic (d = 5, n = 300), nearly separable (steep logistic, n = 300), radial
(d = 2, RBF, n = 300) - the project's truths - and the issue's: probit with an
interaction (d = 6, n = 400), logistic with 10% and with 15% positives
(n = 600), heavy-tailed t(3) features (d = 5, n = 300), a curved boundary
(d = 2, RBF, n = 400). Test sets of ``--n-test`` points; ``--reps`` repetitions.

Part 2, real data: the 11 data sets of ``benchmarks/ebb.py``, 3 stratified
80/20 splits (churn, car: 1), preprocessing fitted on the training part.

Part 3, cost: CPU seconds of a default Wisconsin fit
(``CSVM.from_formula("y ~ .", wisconsin, tpr_min=0.9).fit()``) and of building
its probability model (``results.calibration``), alternating, median of 15.

Scores: MSE to the true probability, Brier, log loss (clipped at 1e-4), ECE
(10 bins), mean P minus the mean true probability of the test points (bias),
coverage of the true probability by [p0, p1], the share of test points whose
P lies outside [p0, p1], and the share where the rule (f >= 0) and P >= 1/2
disagree.

    nice -n 10 python benchmarks/probabilities.py                 # full run -> results/probabilities.{md,json}
    python benchmarks/probabilities.py --quick                    # reduced sizes, -> probabilities_quick.*
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.preprocessing import StandardScaler

from csvm_stats import CSVM
from csvm_stats.data.datasets import load_dataset
from csvm_stats.inference.bounds import CappedTargetWarning
from csvm_stats.models.tuning import FoldPreprocessor
from csvm_stats.probability.bootstrap import LIBSVM_MAX_ITER
from csvm_stats.probability.calibration import calibrated_svc, probability_scores, tune_svc
from csvm_stats.probability.ebb import DEFAULT_C_GRID
from csvm_stats.probability.venn_abers import VennAbers

RESULTS = Path(__file__).resolve().parent / "results"
DATASETS = ["wisconsin", "australian", "german", "heart", "banknote", "votes", "srbct", "leukemia", "churn", "car",
            "cervical"]
ONE_SPLIT = ("churn", "car")
TPR_MIN = 0.9
METHODS = ("default", "rule VA(H)", "no requirement", "Platt", "isotonic")
LOGISTIC_A = np.array([1.5, -1.0, 1.0, -0.5, 0.5])


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _gauss(d):
    return lambda rng, n: rng.standard_normal((n, d))


def _t3(d):
    return lambda rng, n: rng.standard_t(3, (n, d))


#: name: (features, true P(y = 1 | x), kernel, n)
TRUTHS = {
    "logistic": (_gauss(5), lambda X: sigmoid(X @ LOGISTIC_A), "linear", 300),
    "nearly separable": (_gauss(5), lambda X: sigmoid(8.0 * X @ (LOGISTIC_A / np.linalg.norm(LOGISTIC_A))),
                         "linear", 300),
    "radial": (_gauss(2), lambda X: sigmoid(2.5 * (np.sum(X**2, axis=1) - 1.39)), "rbf", 300),
    "probit interaction": (_gauss(6), lambda X: norm.cdf(0.8 * X[:, 0] - 0.6 * X[:, 1] + 0.5 * X[:, 2]
                                                         + 0.3 * X[:, 3] + 0.6 * X[:, 0] * X[:, 1]), "linear", 400),
    "10% positives": (_gauss(5), lambda X: sigmoid(X @ LOGISTIC_A - 3.6), "linear", 600),
    "15% positives": (_gauss(5), lambda X: sigmoid(X @ LOGISTIC_A - 2.9), "linear", 600),
    "t(3) features": (_t3(5), lambda X: sigmoid(X @ LOGISTIC_A), "linear", 300),
    "curved (rbf)": (_gauss(2), lambda X: sigmoid(3.0 * (X[:, 1] - 0.6 * X[:, 0] ** 2 + 0.4)), "rbf", 400),
}
BASE_RATE_TRUTHS = ("10% positives", "15% positives")


def _frame(X: np.ndarray, y=None) -> pd.DataFrame:
    frame = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(X.shape[1])])
    if y is not None:
        frame.insert(0, "y", y)
    return frame


def run_methods(X_tr, y_tr, X_te, kernel: str, args, seed: int) -> tuple[dict, dict, dict]:
    """Probabilities and intervals of every method on X_te (labels y in {0, 1}); extras (route, CPU, calls)."""
    probs, intervals, extra = {}, {}, {}
    clock = time.process_time
    train, test = _frame(X_tr, y_tr), _frame(X_te)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (ConvergenceWarning, CappedTargetWarning, UserWarning))
        res = CSVM.from_formula("y ~ .", train, tpr_min=TPR_MIN, kernel=kernel).fit(random_state=seed)
        start = clock()
        calibration = res.calibration
        extra["calibration_cpu"] = clock() - start
        extra["route"] = calibration.method
        table = res.predict_interval(test)
        probs["default"], intervals["default"] = table["p"].to_numpy(), table[["p0", "p1"]].to_numpy()
        extra["called_positive"] = (res.decision_function(test) >= 0).to_numpy()
        H, f = res.split.holdout, res.decision_function().to_numpy()
        if H.size and len(set(res.model.y[H])) == 2:
            va = VennAbers.fit(f[H], res.model.y[H])
            p0, p1 = va.interval(res.decision_function(test).to_numpy())
            probs["rule VA(H)"], intervals["rule VA(H)"] = p1 / (1 - p0 + p1), np.column_stack([p0, p1])
        if args.no_requirement:
            free = CSVM.from_formula("y ~ .", train, kernel=kernel, fractions=(1.0, 0.0, 0.0)).fit(random_state=seed)
            table = free.predict_interval(test)
            probs["no requirement"], intervals["no requirement"] = table["p"].to_numpy(), table[["p0", "p1"]].to_numpy()
        scaler = StandardScaler().fit(X_tr)
        Xs, Xts = scaler.transform(X_tr), scaler.transform(X_te)
        start = clock()
        C = tune_svc(Xs, y_tr, DEFAULT_C_GRID, kernel=kernel, folds=args.folds, seed=seed, max_iter=LIBSVM_MAX_ITER)
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
        out[m] = probability_scores(y_pm, p, p_true) | {"bias": float(np.mean(p) - target)}
        if m in intervals:
            lo, hi = intervals[m][:, 0], intervals[m][:, 1]
            out[m]["width"] = float(np.mean(hi - lo))
            out[m]["outside"] = float(np.mean((p < lo) | (p > hi)))
            if p_true is not None:
                out[m]["coverage"] = float(np.mean((lo <= p_true) & (p_true <= hi)))
    out["default"]["disagree"] = float(np.mean(extra["called_positive"] != (probs["default"] >= 0.5)))
    return out


def summarise(runs: list[dict]) -> dict:
    out = {}
    for m in METHODS:
        values = [r[m] for r in runs if m in r]
        if values:
            keys = [k for k in values[0] if all(k in v for v in values)]
            out[m] = {k: float(np.mean([v[k] for v in values])) for k in keys} | {"runs": len(values)}
    ratios = [r["default"]["mse_true"] / r["Platt"]["mse_true"] for r in runs if "mse_true" in r["default"]]
    if ratios:
        out["beats_platt"] = int(sum(x < 1 for x in ratios))
        out["max_abs_bias"] = float(max(abs(r["default"]["bias"]) for r in runs))
    return out


def draw(gen, prob, n: int, n_test: int, rng: np.random.Generator):
    """Training and test rows of a truth: ``(X_tr, y_tr, X_te, y_te, p_te)`` (labels drawn from P(y = 1 | x))."""
    X_tr, X_te = gen(rng, n), gen(rng, n_test)
    p_tr, p_te = prob(X_tr), prob(X_te)
    y_tr = (rng.random(n) < p_tr).astype(int)
    y_te = (rng.random(n_test) < p_te).astype(int)
    return X_tr, y_tr, X_te, y_te, p_te


def synthetic(args) -> dict:
    table = {}
    for truth in args.truths:
        gen, prob, kernel, n = TRUTHS[truth]
        n = args.n_train or n
        runs, routes, cpu = [], set(), []
        for rep in range(args.reps):
            X_tr, y_tr, X_te, y_te, p_te = draw(gen, prob, n, args.n_test, np.random.default_rng(1000 + rep))
            probs, intervals, extra = run_methods(X_tr, y_tr, X_te, kernel, args, rep)
            runs.append(scores_of(y_te, probs, intervals, extra, p_te))
            routes.add(extra["route"])
            cpu.append(extra["calibration_cpu"])
            print(f"  {truth} rep {rep}: {extra['route']} default {runs[-1]['default']['mse_true']:.4f} "
                  f"Platt {runs[-1]['Platt']['mse_true']:.4f}", file=sys.stderr, flush=True)
        table[truth] = {"kernel": kernel, "n": n, "reps": args.reps, "routes": sorted(routes),
                        "prevalence": float(np.mean([TRUTHS[truth][1](TRUTHS[truth][0](np.random.default_rng(7), 20000))])),
                        "calibration_cpu": float(np.median(cpu)), "scores": summarise(runs)}
        _partial(args, {"synthetic": table})
    return table


def real_data(args) -> dict:
    table = {}
    for name in args.datasets:
        X, y_series = load_dataset(name)
        y = (y_series.to_numpy() > 0).astype(int)
        n_splits = 1 if name in ONE_SPLIT else args.splits
        runs, routes = [], set()
        for k, (train, test) in enumerate(StratifiedShuffleSplit(n_splits, test_size=0.2, random_state=0).split(X, y)):
            prep = FoldPreprocessor.fit(X.iloc[train])
            X_tr, X_te = prep.transform(X.iloc[train]), prep.transform(X.iloc[test])
            probs, intervals, extra = run_methods(np.asarray(X_tr, float), y[train], np.asarray(X_te, float),
                                                  "linear", args, k)
            runs.append(scores_of(y[test], probs, intervals, extra))
            routes.add(extra["route"])
            print(f"  {name} split {k}: {extra['route']} default {runs[-1]['default']['brier']:.4f} "
                  f"Platt {runs[-1]['Platt']['brier']:.4f} isotonic {runs[-1]['isotonic']['brier']:.4f}",
                  file=sys.stderr, flush=True)
        table[name] = {"n": int(y.size), "splits": n_splits, "scores": summarise(runs), "routes": sorted(routes)}
        _partial(args, {"real": table})
    return table


def cost(args) -> dict:
    """Part 3: default Wisconsin fits and their probability models, linear and RBF alternating, CPU seconds."""
    X, y = load_dataset("wisconsin")
    data = _frame(np.asarray(X, float), (y.to_numpy() > 0).astype(int))
    kernels = ("linear", "rbf")
    fit_cpu = {k: [] for k in kernels}
    model_cpu = {k: [] for k in kernels}
    routes = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (CappedTargetWarning, UserWarning))
        for rep in range(args.cost_repeats + 1):
            for kernel in kernels:
                start = time.process_time()
                res = CSVM.from_formula("y ~ .", data, tpr_min=TPR_MIN, kernel=kernel).fit(random_state=rep)
                middle = time.process_time()
                calibration = res.calibration
                end = time.process_time()
                routes[kernel] = calibration.method
                if rep:  # the first pair warms up
                    fit_cpu[kernel].append(middle - start)
                    model_cpu[kernel].append(end - middle)
    out = {}
    for kernel in kernels:
        fit_s, model_s = statistics.median(fit_cpu[kernel]), statistics.median(model_cpu[kernel])
        out[kernel] = {"fit_cpu": fit_s, "model_cpu": model_s, "ratio": model_s / fit_s, "route": routes[kernel]}
    return out | {"repeats": args.cost_repeats}


def _suffix(args) -> str:
    return (f"_{args.tag}" if args.tag else "") + ("_quick" if args.quick else "")


def _partial(args, data) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"probabilities_partial{_suffix(args)}.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps(old | data, indent=1))


# --------------------------------------------------------------------------- report
def _cell(v, key, digits=4):
    return "" if v is None or key not in v else f"{v[key]:.{digits}f}"


def markdown(result, args) -> str:
    lines = ["# Probability benchmark: the formula path with a requirement", "",
             f"Headline column `default`: `CSVM.from_formula(\"y ~ .\", train, tpr_min={TPR_MIN}, kernel=...).fit()` "
             "with its default split, `predict_interval(test)`. Baselines `Platt` and `isotonic` fitted on the same "
             f"rows (C tuned by {args.folds}-fold CV accuracy on 2^(-5..5)). `rule VA(H)`: the previous default "
             "(the rule's own f calibrated by Venn-Abers on H, merged). Definitions: docstring of "
             "benchmarks/probabilities.py.", ""]
    run = result.get("run")
    if run:
        lines += [f"Run: commit {run['commit']}, load average at the end {run['load_average']} on {run['host_cpus']} "
                  f"cores; seeds: {run['seeds']}.", ""]
    methods = [m for m in METHODS if any(m in r["scores"] for part in ("synthetic", "real")
                                         for r in result.get(part, {}).values())]
    synth = result.get("synthetic")
    if synth:
        lines += [f"## Synthetic truths ({args.reps} repetitions, {args.n_test} test points each; means)", ""]
        lines += ["### Targets", "",
                  "| truth | kernel | n | route | default MSE | Platt MSE | ratio | <= 1.5x | default beats Platt | "
                  "Brier default | min(Platt, iso) | ratio | mean P - prevalence | max abs over reps |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for truth, r in synth.items():
            s = r["scores"]
            d, p = s["default"]["mse_true"], s["Platt"]["mse_true"]
            bd, bref = s["default"]["brier"], min(s["Platt"]["brier"], s["isotonic"]["brier"])
            lines.append(f"| {truth} | {r['kernel']} | {r['n']} | {', '.join(r['routes'])} | {d:.4f} | {p:.4f} | "
                         f"{d / p:.2f} | {'yes' if d <= 1.5 * p else 'no'} | {s['beats_platt']} of {r['reps']} | "
                         f"{bd:.4f} | {bref:.4f} | {bd / bref:.3f} | {s['default']['bias']:+.4f} | "
                         f"{s['max_abs_bias']:.4f} |")
        lines.append("")
        keys = (("mse_true", "MSE to the true probability"), ("brier", "Brier"), ("log_loss", "log loss"),
                ("ece", "ECE"), ("bias", "mean P - mean true probability"),
                ("coverage", "share of test points whose true probability lies in [p0, p1]"),
                ("width", "mean width p1 - p0"), ("outside", "share of test points with P outside [p0, p1]"))
        for key, title in keys:
            lines += [f"### {title}", "", "| truth | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
            for truth, r in synth.items():
                lines.append(f"| {truth} ({r['kernel']}) | "
                             + " | ".join(_cell(r["scores"].get(m), key) for m in methods) + " |")
            lines.append("")
        lines += ["### The rule and the probability (default)", "",
                  "| truth | share of test points where f >= 0 and P >= 1/2 disagree | calibration CPU ms (median) |",
                  "|---|---|---|"]
        for truth, r in synth.items():
            lines.append(f"| {truth} | {r['scores']['default']['disagree']:.4f} | {1000 * r['calibration_cpu']:.1f} |")
        lines.append("")
        base = [t for t in BASE_RATE_TRUTHS if t in synth]
        if base:
            lines += ["### Base rate (target |mean P - prevalence| <= 0.01)", "",
                      "| truth | prevalence | mean P - mean true P (default) | rule VA(H) | Platt | met |",
                      "|---|---|---|---|---|---|"]
            for t in base:
                s = synth[t]["scores"]
                b = s["default"]["bias"]
                lines.append(f"| {t} | {synth[t]['prevalence']:.3f} | {b:+.4f} | "
                             f"{s.get('rule VA(H)', {}).get('bias', float('nan')):+.4f} | {s['Platt']['bias']:+.4f} | "
                             f"{'yes' if abs(b) <= 0.01 else 'no'} |")
            lines.append("")
    real = result.get("real")
    if real:
        lines += [f"## Real data ({args.splits} stratified 80/20 splits; {', '.join(ONE_SPLIT)}: 1; means; "
                  "linear kernel)", ""]
        for key, title in (("brier", "Brier"), ("log_loss", "log loss"), ("ece", "ECE")):
            lines += [f"### {title}", "", "| data | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
            for name, r in real.items():
                lines.append(f"| {name} | " + " | ".join(_cell(r["scores"].get(m), key) for m in methods) + " |")
            lines.append("")
        met, rows = 0, []
        for name, r in real.items():
            s = r["scores"]
            ref = min(s["Platt"]["brier"], s["isotonic"]["brier"])
            d = s["default"]["brier"]
            ok = d <= 1.05 * ref
            met += ok
            rows.append(f"| {name} | {', '.join(r['routes'])} | {d:.4f} | {ref:.4f} | {d / ref:.3f} | "
                        f"{'yes' if ok else 'no'} | {s['default']['disagree']:.3f} |")
        lines += ["### Target: default Brier <= 1.05 x min(Platt, isotonic)", "",
                  "| data | route | default | min(Platt, isotonic) | ratio | met | rule vs P >= 1/2 disagree |",
                  "|---|---|---|---|---|---|---|", *rows, "",
                  f"Met on {met} of {len(real)} data sets (target: at least 9).", ""]
    c = result.get("cost")
    if c:
        lines += ["## Cost (Wisconsin, `CSVM.from_formula(\"y ~ .\", wisconsin, tpr_min=0.9, kernel=...).fit()`)", "",
                  f"CPU seconds, median of {c['repeats']} repeats, linear and RBF fits alternating "
                  "(target: probability model <= 10% of the fit).", "",
                  "| kernel | route | fit ms | probability model ms | ratio | met |", "|---|---|---|---|---|---|"]
        for kernel in ("linear", "rbf"):
            k = c.get(kernel)
            if k:
                lines.append(f"| {kernel} | {k['route']} | {1000 * k['fit_cpu']:.1f} | {1000 * k['model_cpu']:.2f} | "
                             f"{100 * k['ratio']:.1f}% | {'yes' if k['ratio'] <= 0.10 else 'no'} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="reduced sizes for iteration (3 reps, 5000 test points)")
    parser.add_argument("--parts", nargs="+", default=["synthetic", "real", "cost"])
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--n-train", type=int, default=0, help="training rows of every truth (0: each truth's own)")
    parser.add_argument("--n-test", type=int, default=20000)
    parser.add_argument("--cost-repeats", type=int, default=15)
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--truths", nargs="+", default=list(TRUTHS), choices=list(TRUTHS))
    parser.add_argument("--no-requirement", action="store_true",
                        help="also run the formula without a requirement (cross-fitted route, 5 CSVM refits)")
    parser.add_argument("--tag", default="", help="suffix of the result files")
    parser.add_argument("--combine", nargs="*", default=[], help="merge the json files of these --tag runs")
    args = parser.parse_args(argv)
    if args.quick:
        args.reps, args.n_test, args.splits, args.cost_repeats = 3, 5000, 1, 5
    result = {}
    if args.combine:
        for tag in args.combine:
            part = json.loads((RESULTS / f"probabilities_{tag}.json").read_text())
            for key in ("synthetic", "real", "cost", "run"):
                if key in part:
                    result[key] = result.get(key, {}) | part[key] if key not in ("cost", "run") else part[key]
        args.parts = []
    if "synthetic" in args.parts:
        result["synthetic"] = synthetic(args)
    if "real" in args.parts:
        result["real"] = real_data(args)
    if "cost" in args.parts:
        result["cost"] = cost(args)
    result["run"] = result.get("run") or {
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                 cwd=Path(__file__).parent).stdout.strip(),
        "load_average": [round(x, 1) for x in os.getloadavg()], "host_cpus": os.cpu_count(),
        "seeds": "synthetic rep r: data seed 1000 + r, fit random_state r; real split k: "
                 "StratifiedShuffleSplit(random_state=0), fit random_state k"}
    report = markdown(result, args)
    print(report)
    stem = "probabilities" + _suffix(args)
    (RESULTS / f"{stem}.md").write_text(report)
    (RESULTS / f"{stem}.json").write_text(json.dumps(result | {"args": vars(args)}, indent=1))
    (RESULTS / f"probabilities_partial{_suffix(args)}.json").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
