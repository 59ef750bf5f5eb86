"""Probability benchmark: Venn-Abers defaults against EBB, CEBB1, Platt, isotonic and logistic regression.

Part 1 (real data): the 11 data sets and splits of ``benchmarks/ebb.py``
(stratified 80/20 splits with ``random_state=0``, preprocessing fitted on the
training part), linear kernel, C tuned by cross-validated accuracy on the
paper's grid (the same C for every SVM-based method).

Part 2 (synthetic truths, the true P(y=1|x) known): logistic
(x ~ N(0, I5), P = sigmoid(a'x)), nearly separable (the same with a steep
sigmoid) and radial (x ~ N(0, I2), P = sigmoid(2.5 (|x|^2 - 1.39)), RBF kernel
with gamma fixed at scikit-learn's "scale" value); n = 300 training points,
20,000 test points per repetition.

Methods (P of the positive class on the test part):

* ``VA default`` - what ``CSVMClassifier().predict_proba`` and a CSVM fitted
  without a held-out sample give: the CSVM on all training rows, its decision
  function calibrated by cross-fitted Venn-Abers (5 refits; the mean of the
  Venn-Abers predictors of 20 bootstrap resamples of the out-of-fold pairs);
* ``VA held-out`` - ``CSVM(...).fit().predict_proba``: the default
  (0.5, 0.25, 0.25) split, inductive Venn-Abers on the held-out 25%;
* ``EBB`` - the paper's headline EBB (all theta, weights = OOB accuracy);
  ``EBB eps=0`` (best theta only) and ``EBB eps=0.05`` from the same fits;
* ``CEBB1`` - TPR >= 0.95 on the training data, bound 'none' (as ebb.py);
* ``EBB+VA`` - EBB's probabilities calibrated by Venn-Abers on each training
  point's out-of-bag EBB probability (the fits that did not draw it);
* ``Platt SVC()`` - ``CalibratedClassifierCV(SVC(), ensemble=False)``, all
  scikit-learn defaults (RBF, C = 1); ``Platt`` and ``isotonic`` - the same
  with the tuned SVM (the kernel of the row);
* ``logistic`` - ``LogisticRegression`` (on quadratic features for the radial truth).

Scores: Brier, log loss (clipped at 1e-4), ECE (10 bins), MSE to the true
probability and coverage of the true probability by [p0, p1] (synthetic).
The cost of the calibration next to a default fit is measured by
``benchmarks/venn_abers_speed.py``.

    nice -n 10 python benchmarks/probabilities.py            # full run -> results/probabilities.{md,json}
    python benchmarks/probabilities.py --quick               # check the script
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler
from sklearn.svm import SVC

from csvm_stats import CSVM
from csvm_stats.probability.bootstrap import LIBSVM_MAX_ITER, bootstrap_multiplicities
from csvm_stats.probability.calibration import calibrated_svc, probability_scores, tune_svc
from csvm_stats.data.datasets import load_dataset
from csvm_stats.probability.ebb import DEFAULT_C_GRID, EBB, out_of_bag_proba
from csvm_stats.models.tuning import FoldPreprocessor
from csvm_stats.probability.venn_abers import VennAbers

RESULTS = Path(__file__).resolve().parent / "results"
DATASETS = ["wisconsin", "australian", "german", "heart", "banknote", "votes", "srbct", "leukemia", "churn", "car", "cervical"]
METHODS = ("VA default", "VA held-out", "EBB", "EBB eps=0", "EBB eps=0.05", "CEBB1", "EBB+VA",
           "Platt SVC()", "Platt", "isotonic", "logistic")
INTERVAL_METHODS = ("VA default", "VA held-out", "EBB+VA")
LOGISTIC_A = np.array([1.5, -1.0, 1.0, -0.5, 0.5])


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


TRUTHS = {
    "logistic": (5, lambda X: sigmoid(X @ LOGISTIC_A), "linear"),
    "nearly separable": (5, lambda X: sigmoid(8.0 * X @ (LOGISTIC_A / np.linalg.norm(LOGISTIC_A))), "linear"),
    "radial": (2, lambda X: sigmoid(2.5 * (np.sum(X**2, axis=1) - 1.39)), "rbf"),
}


def ebb_weights(reliability: np.ndarray, eps: float) -> np.ndarray:
    """EBB's rho for a given eps (the formula of csvm_stats.probability.ebb)."""
    kept = np.where(reliability >= np.nanmax(reliability) - eps, np.nan_to_num(reliability), 0.0)
    return kept / kept.sum()


def oob_ebb(model: EBB, X_tr: np.ndarray, y_tr: np.ndarray, B: int, seed: int) -> np.ndarray:
    """Each training point's EBB probability from the fits whose bootstrap sample left it out."""
    y_pm = np.where(y_tr == model.classes_[1], 1, -1)
    S = bootstrap_multiplicities(y_pm, B, np.random.SeedSequence(seed))  # the samples EBB drew
    return out_of_bag_proba(model.ensembles_, model.rho_, X_tr, S)


def run_methods(X_tr, y_tr, X_te, kernel: str, gamma, args, seed: int, cache: Path | None = None
                ) -> tuple[dict, dict, dict]:
    """Probabilities (and intervals) of every method on X_te, and CPU seconds per method.

    With ``cache`` (an .npz path), the methods that do not use csvm_stats' default
    probabilities (C tuning, EBB, CEBB1, EBB+VA, Platt, isotonic, logistic) are read from it
    when present and stored in it otherwise; the two Venn-Abers defaults are always recomputed.
    """
    if cache is not None and cache.exists():
        with np.load(cache, allow_pickle=False) as stored:
            fixed = {k: stored[k] for k in stored.files}
        C = float(fixed.pop("_C"))
        seconds = {k[4:]: float(fixed.pop(k)) for k in [k for k in fixed if k.startswith("_cpu")]}
        intervals = {k[4:]: fixed.pop(k) for k in [k for k in fixed if k.startswith("_iv_")]}
        probs = fixed
    else:
        C, probs, intervals, seconds = fixed_methods(X_tr, y_tr, X_te, kernel, gamma, args, seed)
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            np.savez(cache, _C=C, **probs, **{f"_iv_{k}": v for k, v in intervals.items()},
                     **{f"_cpu{k}": v for k, v in seconds.items()})
    clock = time.process_time
    csvm_kw = dict(C=C, kernel=kernel, standardize=False, **({"gamma": gamma} if kernel == "rbf" else {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for label, fractions in (("VA default", (1.0, 0.0, 0.0)), ("VA held-out", (0.5, 0.25, 0.25))):
            if label == "VA default" and args.skip_crossfit_above and y_tr.size > args.skip_crossfit_above:
                continue
            start = clock()
            res = CSVM(y_tr, X_tr, fractions=fractions, **csvm_kw).fit(random_state=seed)
            table = res.predict_interval(X_te)
            probs[label], intervals[label] = table["p"].to_numpy(), table[["p0", "p1"]].to_numpy()
            seconds[label] = clock() - start
            seconds[label + " route"] = res.calibration.method
    return probs, intervals, seconds


def ebb_methods(X_tr, y_tr, X_te, kernel: str, gamma, args, seed: int, probs: dict, intervals: dict,
                seconds: dict) -> None:
    """EBB (all theta, eps = 0, eps = 0.05), CEBB1 and EBB+VA into ``probs``, ``intervals`` and ``seconds``."""
    clock = time.process_time
    start = clock()
    gamma_grid = {"gamma_grid": [gamma]} if kernel == "rbf" else {}
    model = EBB(kernel=kernel, n_bootstrap=args.bootstrap, variant="cebb1", tpr_min=0.95, bound="none",
                random_state=seed, progress=False, **gamma_grid).fit(X_tr, y_tr)
    probs["CEBB1"] = model.predict_proba(X_te)[:, 1]
    share = np.column_stack([np.mean(model.bootstrap_scores(X_te, t) >= 0, axis=1) for t in range(len(model.rho_))])
    for label, eps in (("EBB", np.inf), ("EBB eps=0", 0.0), ("EBB eps=0.05", 0.05)):
        probs[label] = np.clip(share @ ebb_weights(model.reliability_, eps), 0.0, 1.0)
    seconds["EBB+CEBB1"] = clock() - start
    start = clock()  # the CEBB1 fit holds EBB's models and weights (all theta); only its threshold moved
    oob = oob_ebb(model, X_tr, y_tr, args.bootstrap, seed)
    seen = ~np.isnan(oob)
    va = VennAbers.fit(oob[seen], y_tr[seen])
    p0, p1 = va.interval(probs["EBB"])
    probs["EBB+VA"], intervals["EBB+VA"] = p1 / (1 - p0 + p1), np.column_stack([p0, p1])
    seconds["EBB+VA"] = clock() - start


def fixed_methods(X_tr, y_tr, X_te, kernel: str, gamma, args, seed: int) -> tuple[float, dict, dict, dict]:
    """The tuned C and the probabilities of the methods other than csvm_stats' defaults (run_methods)."""
    probs, intervals, seconds = {}, {}, {}
    clock = time.process_time
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = clock()
        C = tune_svc(X_tr, y_tr, DEFAULT_C_GRID, kernel=kernel, gamma=gamma, folds=args.folds, seed=seed,
                     max_iter=LIBSVM_MAX_ITER)
        seconds["tune C"] = clock() - start

        if not args.skip_ebb:
            ebb_methods(X_tr, y_tr, X_te, kernel, gamma, args, seed, probs, intervals, seconds)

        start = clock()
        platt = CalibratedClassifierCV(SVC(), ensemble=False).fit(X_tr, y_tr)
        probs["Platt SVC()"] = platt.predict_proba(X_te)[:, list(platt.classes_).index(1)]
        for method, label in (("platt", "Platt"), ("isotonic", "isotonic")):
            m = calibrated_svc(method, C, kernel=kernel, gamma=gamma, max_iter=LIBSVM_MAX_ITER).fit(X_tr, y_tr)
            probs[label] = m.predict_proba(X_te)[:, list(m.classes_).index(1)]
        logistic = LogisticRegression(max_iter=5000)
        if kernel == "rbf":
            logistic = make_pipeline(PolynomialFeatures(2), StandardScaler(), logistic)
        logistic.fit(X_tr, y_tr)
        probs["logistic"] = logistic.predict_proba(X_te)[:, list(logistic.classes_).index(1)]
        seconds["baselines"] = clock() - start
    return float(C), probs, intervals, seconds


def scores_of(y_te, probs, intervals, p_true=None) -> dict:
    out = {}
    for m, p in probs.items():
        out[m] = probability_scores(y_te, p, p_true)
        if m in intervals:
            lo, hi = intervals[m][:, 0], intervals[m][:, 1]
            out[m]["width"] = float(np.mean(hi - lo))
            if p_true is not None:
                out[m]["coverage"] = float(np.mean((lo <= p_true) & (p_true <= hi)))
    return out


def summarise(runs: list[dict]) -> dict:
    out = {}
    for m in METHODS:
        values = [r[m] for r in runs if m in r]
        if values:
            out[m] = {k: float(np.mean([v[k] for v in values])) for k in values[0]} | {"runs": len(values)}
    return out


def real_data(args, table: dict | None = None) -> dict:
    """Part 1; data sets already in ``table`` (a resumed partial run) are kept, not rerun."""
    table = dict(table or {})
    for name in args.datasets:
        if name in table:
            continue
        X, y_series = load_dataset(name)
        y = y_series.to_numpy()
        n_splits = 1 if name in args.one_split else args.splits
        runs, routes = [], []
        for k, (train, test) in enumerate(StratifiedShuffleSplit(n_splits, test_size=0.2, random_state=0).split(X, y)):
            prep = FoldPreprocessor.fit(X.iloc[train])
            X_tr, X_te = prep.transform(X.iloc[train]), prep.transform(X.iloc[test])
            probs, intervals, seconds = run_methods(X_tr, y[train], X_te, "linear", "scale", args, k,
                                                    _cache(args, f"{name}_{k}"))
            runs.append(scores_of(y[test], probs, intervals))
            routes.append(seconds)
            print(f"  {name} split {k}: {seconds}", file=sys.stderr, flush=True)
        table[name] = {"n": int(y.size), "splits": n_splits, "scores": summarise(runs),
                       "routes": sorted({r.get('VA held-out route', '') for r in routes})}
        _partial(args, {"real": table})
    return table


def synthetic(args) -> dict:
    table = {}
    for truth in args.truths:
        dim, prob, kernel = TRUTHS[truth]
        runs = []
        for rep in range(args.reps):
            rng = np.random.default_rng(1000 + rep)
            X_tr, X_te = rng.standard_normal((args.n_train, dim)), rng.standard_normal((args.n_test, dim))
            p_tr, p_te = prob(X_tr), prob(X_te)
            y_tr = np.where(rng.random(args.n_train) < p_tr, 1, -1)
            y_te = np.where(rng.random(args.n_test) < p_te, 1, -1)
            gamma = 1.0 / (dim * X_tr.var()) if kernel == "rbf" else "scale"
            probs, intervals, seconds = run_methods(X_tr, y_tr, X_te, kernel, gamma, args, rep,
                                                    _cache(args, f"{truth.replace(' ', '_')}_{rep}_n{args.n_train}_t{args.n_test}"))
            runs.append(scores_of(y_te, probs, intervals, p_te))
            print(f"  {truth} rep {rep}: {seconds}", file=sys.stderr, flush=True)
            if rep == 0:
                diagram = {m: _reliability_curve(y_te, p) for m, p in probs.items()}
        table[truth] = {"kernel": kernel, "reps": args.reps, "scores": summarise(runs), "reliability_rep0": diagram}
        _partial(args, {"synthetic": table})
    return table


def _reliability_curve(y, p, bins: int = 10) -> list[list[float]]:
    """[mean p, observed positive share, count] per non-empty equal-width bin."""
    idx = np.minimum((p * bins).astype(int), bins - 1)
    return [[float(p[idx == b].mean()), float(np.mean(y[idx == b] > 0)), int(np.sum(idx == b))]
            for b in range(bins) if np.any(idx == b)]


EBB_METHODS = ("EBB", "EBB eps=0", "EBB eps=0.05", "CEBB1", "EBB+VA")


def carry_ebb(result: dict, old: dict) -> list[str]:
    """Fill the EBB columns of truths and data sets run without them from an earlier results file; those filled."""
    filled = []
    for part in ("synthetic", "real"):
        for name, r in result.get(part, {}).items():
            if "EBB" not in r["scores"]:
                r["scores"] |= {m: old[part][name]["scores"][m] for m in EBB_METHODS}
                if "reliability_rep0" in r:
                    r["reliability_rep0"] |= {m: old[part][name]["reliability_rep0"][m] for m in EBB_METHODS}
                filled.append(name)
    return filled


def _cache(args, key: str) -> Path | None:
    """Where the fixed methods of one split or repetition are cached (``--cache``), or None."""
    if not args.cache:
        return None
    ebb = "noebb" if args.skip_ebb else f"B{args.bootstrap}"
    return Path(args.cache) / f"{key}_{ebb}_f{args.folds}{'_quick' if args.quick else ''}.npz"


def _suffix(args) -> str:
    """File name suffix of a run: ``--tag`` and ``_quick``."""
    return (f"_{args.tag}" if args.tag else "") + ("_quick" if args.quick else "")


def _partial(args, data) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"probabilities_partial{_suffix(args)}.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps(old | data, indent=1))


# --------------------------------------------------------------------------- report
def _cell(v, key):
    return "" if v is None or key not in v else f"{v[key]:.4f}"


def markdown(result, args) -> str:
    lines = ["# Probability benchmark", "",
             f"Settings: EBB/CEBB1 B = {args.bootstrap} bootstrap samples per C (the paper: 500; reduced for "
             f"compute on a shared 2-core machine), C grid 2^(-5..5); C of every SVM-based method tuned by "
             f"{args.folds}-fold CV accuracy; log loss clipped at 1e-4; ECE over 10 equal-width bins. "
             "Method definitions: docstring of benchmarks/probabilities.py.", ""]
    if result.get("ebb_from"):
        lines += [f"The EBB columns ({', '.join(EBB_METHODS)}) of {', '.join(result['ebb_from'])} are those of the "
                  f"previous run ({args.ebb_label or args.ebb_from}: same splits, seeds and EBB code), "
                  "not rerun for lack of CPU time on the shared machine. Every other data set and truth was rerun in "
                  "full; there the largest difference from the previous run (Brier, and MSE to the truth) is "
                  + ", ".join(f"{m} {d:.1e}" for m, d in result["ebb_check"].items())
                  + ". So EBB, its eps variants and CEBB1 are what a rerun gives; EBB+VA is not (not investigated; "
                  "most likely the Venn-Abers tie tolerance added after that run, as EBB's vote shares tie often), "
                  "so the carried EBB+VA values are the old code's.", ""]
    real = result.get("real")
    if real:
        fewer = {}
        for name, r in real.items():
            if r["splits"] != args.splits:
                fewer.setdefault(r["splits"], []).append(name)
        lines += [f"## Real data ({args.splits} stratified 80/20 splits as benchmarks/ebb.py"
                  + "".join(f"; {', '.join(names)}: the first {k} split{'s' if k > 1 else ''}"
                            for k, names in sorted(fewer.items())) + "; means)", ""]
        for key, title in (("brier", "Brier"), ("log_loss", "log loss"), ("ece", "ECE")):
            lines += [f"### {title}", "", "| data | " + " | ".join(METHODS) + " |", "|---|" + "---|" * len(METHODS)]
            for name, r in real.items():
                lines.append(f"| {name} | " + " | ".join(_cell(r["scores"].get(m), key) for m in METHODS) + " |")
            lines.append("")
        met, rows = 0, []
        for name, r in real.items():
            s = r["scores"]
            ref = min(s["Platt"]["brier"], s["isotonic"]["brier"])
            default = s.get("VA default", s["VA held-out"])["brier"]
            ok = default <= 1.05 * ref
            met += ok
            rows.append(f"| {name} | {default:.4f} | {s['VA held-out']['brier']:.4f} | {ref:.4f} | "
                        f"{default / ref:.3f} | {'yes' if ok else 'no'} | {', '.join(r['routes'])} |")
        lines += ["### Target: default Brier <= 1.05 x min(Platt, isotonic)", "",
                  "| data | VA default | VA held-out | min(Platt, isotonic) | ratio | met | held-out route |",
                  "|---|---|---|---|---|---|---|", *rows, "",
                  f"Met on {met} of {len(real)} data sets (target: at least 9)."
                  + (" Where 'VA default' was not run (more training rows than --skip-crossfit-above), the "
                     "held-out value stands in." if args.skip_crossfit_above else ""), ""]
    synth = result.get("synthetic")
    if synth:
        lines += [f"## Synthetic truths ({args.reps} repetitions, n = {args.n_train} training, "
                  f"{args.n_test} test points; means)", ""]

        keys = (("mse_true", "MSE to the true probability"), ("brier", "Brier"), ("log_loss", "log loss"),
                ("ece", "ECE"), ("coverage", "coverage of the true probability by [p0, p1]"),
                ("width", "mean width p1 - p0"))
        for key, title in keys:
            methods = INTERVAL_METHODS if key in ("coverage", "width") else METHODS
            lines += [f"### {title}", "", "| truth | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
            for truth, r in synth.items():
                lines.append(f"| {truth} ({r['kernel']}) | " + " | ".join(_cell(r["scores"].get(m), key) for m in methods) + " |")
            lines.append("")
        lines += ["### Targets: default error to the truth <= 1.5 x tuned Platt and below EBB", "",
                  "| truth | VA default | Platt (tuned) | ratio | <= 1.5x | EBB | better than EBB |", "|---|---|---|---|---|---|---|"]
        for truth, r in synth.items():
            s = r["scores"]
            d, p = s["VA default"]["mse_true"], s["Platt"]["mse_true"]
            e = s["EBB"]["mse_true"] if "EBB" in s else float("nan")  # nan: run with --skip-ebb
            lines.append(f"| {truth} | {d:.4f} | {p:.4f} | {d / p:.2f} | {'yes' if d <= 1.5 * p else 'no'} | "
                         f"{e:.4f} | {'yes' if d < e else 'no'} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--parts", nargs="+", default=["synthetic", "real"])
    parser.add_argument("--bootstrap", type=int, default=100)
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--n-train", type=int, default=300)
    parser.add_argument("--n-test", type=int, default=20000)
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--one-split", nargs="*", default=["churn"])
    parser.add_argument("--skip-crossfit-above", type=int, default=0,
                        help="skip the cross-fitted default on training parts with more rows (0: never)")
    parser.add_argument("--resume", action="store_true",
                        help="reuse the parts stored in the partial file, else in the last results file")
    parser.add_argument("--tag", default="", help="suffix of the result files (a partial run beside the main one)")
    parser.add_argument("--cache", default="",
                        help="directory caching the baselines' probabilities per split (outside the repository); "
                             "a rerun then recomputes only the Venn-Abers defaults")
    parser.add_argument("--truths", nargs="+", default=list(TRUTHS), choices=list(TRUTHS))
    parser.add_argument("--skip-ebb", action="store_true",
                        help="leave out EBB, its eps variants, CEBB1 and EBB+VA (see --ebb-from)")
    parser.add_argument("--ebb-from", default="",
                        help="with --combine: a results .json whose synthetic EBB columns fill the truths run with "
                             "--skip-ebb (same seeds and EBB code; the report says so)")
    parser.add_argument("--ebb-label", default="", help="how the report names the --ebb-from file")
    parser.add_argument("--combine", nargs="*", default=[],
                        help="write the main results from the files of these --tag runs (no new computation)")
    parser.add_argument("--redo", nargs="*", default=[], help="parts to recompute even when resuming")
    args = parser.parse_args(argv)
    if args.quick:
        args.bootstrap, args.splits, args.reps, args.n_test = 10, 1, 1, 2000
        args.datasets = ["wisconsin", "heart"]
    partial = RESULTS / f"probabilities_partial{_suffix(args)}.json"
    final = RESULTS / f"probabilities{_suffix(args)}.json"
    result = {}
    if args.combine:  # results of partial runs (--tag) into one file, data sets in the order of DATASETS
        parts = [json.loads(next(p for p in (RESULTS / f"probabilities_{tag}.json",
                                              RESULTS / f"probabilities_partial_{tag}.json") if p.exists()).read_text())
                 for tag in args.combine]
        real = {k: v for part in parts for k, v in part.get("real", {}).items()}
        result = {"real": {name: real[name] for name in DATASETS if name in real}}
        synth = {k: v for part in parts for k, v in part.get("synthetic", {}).items()}
        if synth:
            result["synthetic"] = {truth: synth[truth] for truth in TRUTHS if truth in synth}
        if args.ebb_from:
            old = json.loads(Path(args.ebb_from).read_text())
            result["ebb_from"] = carry_ebb(result, old)
            result["ebb_check"] = {m: max(
                abs(r["scores"][m][key] - old[part][name]["scores"][m][key])
                for part in ("synthetic", "real") for name, r in result.get(part, {}).items()
                if name not in result["ebb_from"] and name in old.get(part, {})
                for key in ("brier", "mse_true") if key in r["scores"][m]) for m in EBB_METHODS}
        result["combined_from"] = {tag: part.get("args", "partial run") for tag, part in zip(args.combine, parts)}
        args.parts = []
    if args.resume:
        source = partial if partial.exists() else final
        result = {k: v for k, v in json.loads(source.read_text()).items() if k != "args" and k not in args.redo}
    if "synthetic" in args.parts and "synthetic" not in result:
        result["synthetic"] = synthetic(args)
    if "real" in args.parts and set(args.datasets) - set(result.get("real", {})):
        result["real"] = real_data(args, result.get("real"))
    report = markdown(result, args)
    print(report)
    stem = "probabilities" + _suffix(args)
    (RESULTS / f"{stem}.md").write_text(report)
    (RESULTS / f"{stem}.json").write_text(json.dumps(result | {"args": vars(args)}, indent=1))
    partial.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
