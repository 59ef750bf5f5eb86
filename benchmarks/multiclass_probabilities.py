"""Calibration of the multiclass probabilities: the default against one-vs-rest Platt, isotonic and multinomial LR.

For each data set (iris, wine, SRBCT, car from ``multiclass_solve_time.problems``
with the same recall requirements, and three Gaussian classes with a known
posterior) and each seed, the rows are split 70/30 (stratified) into a
fitting part and a test part the fit never sees. The multiclass CSVM is fitted
on the fitting part (its own split into I, J, H); its calibration pairs
(:func:`csvm_stats.multiclass.probability.calibration_pairs`: the held-out
scores, or cross-fitted ones when H is small) are calibrated several ways:

* ``default``: the library's ``predict_proba`` (the softmax recalibration
  of the class scores, :mod:`csvm_stats.multiclass.probability`, built from
  the same pairs as ``results.calibration``);
* ``OvR VA merged``: the previous default, the merged one-vs-rest Venn-Abers
  probabilities of the same pairs divided by their sum;
* ``multinomial LR``: scikit-learn's ``LogisticRegression`` (multinomial,
  C = 1) on all rows of the fitting part's design, standardised - not a
  calibration of the CSVM, the reference the issue's target names;
* ``platt``: a one-vs-rest logistic regression of [y = k] on the margin of k;
* ``isotonic``: a one-vs-rest isotonic regression (clipped outside the range;
  a row whose K values are all 0 gets 1/K each).

On the test part: multiclass Brier score (mean over rows of
sum_k (p_k - [y = k])^2), log loss (probabilities clipped below at 1e-6, so
that an isotonic 0 costs log(1e6) rather than infinity), accuracy of the
class of largest probability, its agreement with the CSVM rule (argmax of
the scores), and on the Gaussian data the mean absolute and the mean squared
error (over rows and classes) to the Bayes posterior. Means over seeds are reported.
Run ``nice -n 10 python benchmarks/multiclass_probabilities.py``; results go
to ``benchmarks/results/multiclass_probabilities.{csv,md}``.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import softmax
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from sklearn.model_selection import train_test_split

from csvm_stats.exceptions import InfeasibleConstraintsError
from csvm_stats.inference.bounds import CappedTargetWarning
from csvm_stats.models.model import CSVM
from csvm_stats.multiclass.certification import rival_margins
from csvm_stats.multiclass.probability import calibration_of, calibration_pairs, normalised
from csvm_stats.multiclass.simulation import GaussianMulticlass

sys.path.insert(0, str(Path(__file__).resolve().parent))
from multiclass_solve_time import problems  # noqa: E402  (the same data sets and requirements)

MEANS = np.array([[0.0, 0.0], [3.0, 0.0], [1.5, 2.6]])
MEANS4 = np.array([[0.0, 0.0], [2.5, 0.0], [0.0, 2.5], [2.5, 2.5]])
LOG_FLOOR = 1e-6
METHODS = ("default", "OvR VA merged", "platt", "isotonic", "multinomial LR")


def gaussian_problem(n_per: int = 200, means: np.ndarray = MEANS) -> tuple[pd.DataFrame, str, dict]:
    X, y = GaussianMulticlass(means).sample(n_per, np.random.default_rng(0))
    names = np.array(["a", "b", "c", "d"])[: len(means)]
    frame = pd.DataFrame(X, columns=["x1", "x2"]).assign(cls=pd.Categorical(names[y]))
    return frame, "cls ~ .", {"b": 0.9}


def bayes_posterior(X: np.ndarray, means: np.ndarray = MEANS) -> np.ndarray:
    """Equal priors, identity covariance: softmax of x'mu_k - |mu_k|^2 / 2."""
    return softmax(X @ means.T - 0.5 * np.sum(means**2, axis=1), axis=1)


def one_vs_rest(margins: np.ndarray, labels: np.ndarray, new: np.ndarray, method: str) -> np.ndarray:
    """Platt or isotonic fits per class on the calibration margins, applied to ``new`` margins, normalised."""
    out = np.empty_like(new)
    for k in range(margins.shape[1]):
        target = (labels == k).astype(float)
        if method == "platt":
            model = LogisticRegression(C=1e6).fit(margins[:, [k]], target)
            out[:, k] = model.predict_proba(new[:, [k]])[:, 1]
        else:
            out[:, k] = IsotonicRegression(out_of_bounds="clip").fit(margins[:, k], target).predict(new[:, k])
    zero = out.sum(axis=1) == 0
    out[zero] = 1.0 / out.shape[1]
    return normalised(out)


def scores_of(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    onehot = np.eye(p.shape[1])[y]
    return {
        "brier": float(np.mean(np.sum((p - onehot) ** 2, axis=1))),
        "log_loss": float(-np.mean(np.log(np.maximum(p[np.arange(y.size), y], LOG_FLOOR)))),
        "accuracy": float(np.mean(p.argmax(axis=1) == y)),
    }


def one_run(name: str, frame: pd.DataFrame, formula: str, targets: dict, seed: int) -> list[dict]:
    response = formula.split("~")[0].strip()
    fit_rows, test_rows = train_test_split(np.arange(len(frame)), test_size=0.3, stratify=frame[response],
                                           random_state=seed)
    fitting, test = frame.iloc[fit_rows], frame.iloc[test_rows]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CappedTargetWarning)
        try:
            res = CSVM.from_formula(formula, fitting, recall_min=targets, bound="none").fit(
                random_state=seed, time_limit=120, threads=1)
        except InfeasibleConstraintsError:  # no rule meets the anchor counts on this split: no probabilities
            return []
        started = time.process_time()
        pairs = calibration_pairs(res)  # what res.calibration is built from (refits when cross-fitted)
        calibration = calibration_of(res, pairs)  # what res.calibration is
        va_cpu = time.process_time() - started
    method, cal_scores, cal_labels, _ = pairs
    p_va = calibration.predict(res.csvm_scores(test))
    p_merged = dataclasses.replace(calibration, softmax=None).predict(res.csvm_scores(test))
    scaler = StandardScaler().fit(res.model.exog.to_numpy())
    mlr = LogisticRegression(max_iter=5000).fit(scaler.transform(res.model.exog.to_numpy()), res.model.y)
    p_mlr = mlr.predict_proba(scaler.transform(res.model.design_matrix(test).to_numpy()))
    y = np.array([res.classes.index(v) for v in test[response]])
    rule = res.decision_function(test).to_numpy().argmax(axis=1)
    new_margins = rival_margins(res.csvm_scores(test))
    cal_margins = rival_margins(cal_scores)
    means = MEANS4 if name.startswith("Gaussian (4") else MEANS
    truth = bayes_posterior(test[["x1", "x2"]].to_numpy(), means) if name.startswith("Gaussian") else None
    rows = []
    for m in METHODS:
        fixed = {"default": p_va, "OvR VA merged": p_merged, "multinomial LR": p_mlr}
        p = fixed[m] if m in fixed else one_vs_rest(cal_margins, cal_labels, new_margins, m)
        row = {"data": name, "seed": seed, "method": m, "route": method, "calibration_n": int(cal_labels.size),
               "test_n": int(y.size), **scores_of(p, y), "agreement_with_rule": float(np.mean(p.argmax(axis=1) == rule)),
               "rule_accuracy": float(np.mean(rule == y)),
               "posterior_mae": float(np.mean(np.abs(p - truth))) if truth is not None else np.nan,
               "posterior_mse": float(np.mean((p - truth) ** 2)) if truth is not None else np.nan,
               "venn_abers_cpu_s": va_cpu if m == "default" else np.nan}
        rows.append(row)
    return rows


def to_markdown(table: pd.DataFrame) -> str:
    means = table.groupby(["data", "method"], sort=False).agg(
        runs=("seed", "size"), route=("route", "first"), calibration_n=("calibration_n", "mean"),
        brier=("brier", "mean"), log_loss=("log_loss", "mean"), accuracy=("accuracy", "mean"),
        rule_accuracy=("rule_accuracy", "mean"), agreement=("agreement_with_rule", "mean"),
        posterior_mae=("posterior_mae", "mean"), posterior_mse=("posterior_mse", "mean"),
        cpu=("venn_abers_cpu_s", "mean")).reset_index()
    lines = ["| data | method | runs | route | calibration points | Brier | log loss | accuracy of argmax p | "
             "accuracy of the rule | argmax p = rule | MAE to Bayes posterior | MSE to Bayes posterior | "
             "CPU s (calibration) |",
             "|" + "---|" * 13]
    for r in means.itertuples(index=False):
        mae = "" if np.isnan(r.posterior_mae) else f"{r.posterior_mae:.3f}"
        mse = "" if np.isnan(r.posterior_mse) else f"{r.posterior_mse:.4f}"
        cpu = "" if np.isnan(r.cpu) else f"{r.cpu:.2f}"
        lines.append(f"| {r.data} | {r.method} | {r.runs} | {r.route} | {r.calibration_n:.0f} | {r.brier:.4f} | "
                     f"{r.log_loss:.4f} | {r.accuracy:.3f} | {r.rule_accuracy:.3f} | {r.agreement:.3f} | {mae} | {mse} | {cpu} |")
    return "\n".join(lines) + "\n"


def write(table: pd.DataFrame, out: Path, tag: str = "") -> None:
    out.mkdir(exist_ok=True)
    stem = "multiclass_probabilities" + (f"_{tag}" if tag else "")
    table.to_csv(out / f"{stem}.csv", index=False)
    (out / f"{stem}.md").write_text(
        "# Multiclass probabilities: the default (softmax recalibration) vs one-vs-rest Venn-Abers, Platt, "
        "isotonic and multinomial logistic regression (benchmarks/multiclass_probabilities.py)\n\n"
        "Each run: a stratified 70/30 split; the multiclass CSVM (recall requirements as in "
        "multiclass_solve_time, imposed on the anchor sample without a margin, bound='none'; a split on which no "
        "rule meets them is skipped, see the runs column) is fitted on the 70%, its calibration pairs (held-out, or "
        "cross-fitted when H is small: route column) are calibrated four ways on the same pairs (default: softmax "
        "of the scores; the others on the class margins, normalised to sum to 1), multinomial LR is fitted on all "
        "rows of the 70%, and all are scored on the 30% test rows. Means over runs. Log loss with probabilities "
        "floored at 1e-6. 'argmax p = rule': share of test rows whose class of largest probability is the CSVM's "
        "prediction (they need not agree). CPU: building the Venn-Abers calibration (what the first predict_proba "
        "does; cross-fitted routes refit the CSVM 5 times), shared loaded machine.\n\n" + to_markdown(table)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--srbct-seeds", type=int, default=3, help="seeds for SRBCT (cross-fitted: 5 MIQP refits each)")
    parser.add_argument("--only", nargs="*", default=[], help="data sets whose name starts with one of these")
    parser.add_argument("--tag", default="", help="suffix of the result files (a partial run)")
    args = parser.parse_args()
    data = {"Gaussian (3 x 200, 2-d)": gaussian_problem(),
            "Gaussian (4 x 150, 2-d)": gaussian_problem(150, MEANS4), **problems()}
    if args.only:
        data = {k: v for k, v in data.items() if any(k.startswith(prefix) for prefix in args.only)}
    rows: list[dict] = []
    out = Path(__file__).resolve().parent / "results"
    for name, (frame, formula, targets) in data.items():
        seeds = args.srbct_seeds if name.startswith("SRBCT") else args.seeds
        started = time.perf_counter()
        for seed in range(seeds):
            rows += one_run(name, frame, formula, targets, seed)
        print(f"{name}: {seeds} runs in {time.perf_counter() - started:.0f} s wall", flush=True)
        write(pd.DataFrame(rows), out, args.tag)
    print(to_markdown(pd.DataFrame(rows)))


if __name__ == "__main__":
    main()
