"""Neyman-Pearson route probabilities: Platt's sigmoid of the decision value against the Venn-Abers merge.

Path: ``NeymanPearsonClassifier(learner, tnr_min=0.9, random_state=rep).fit(X, y)``
with its default split (the held-out route: H has 25% of the rows), for the
learners ``logistic``, ``svc`` and ``hgb``. Both point probabilities are read
off the same fit and the same calibration pairs (f(x), y) of H:

* ``sigmoid`` - the route's P: Platt's sigmoid sigma(a f + b) fitted on the pairs
  (``results.predict_proba``);
* ``merge`` - the previous P: the Venn-Abers interval [p0, p1] of the pairs merged
  as p1 / (1 - p0 + p1).

Truths (true P(y = 1 | x) known) are those of ``benchmarks/probabilities.py``
the issue names: probit with an interaction, logistic with 10% and with 15%
positives, t(3) features; ``--reps`` repetitions (training seed ``rep``), a
test set of ``--n-test`` points per repetition (seed 10_000 + rep).

Scores per truth and learner (means over repetitions): MSE to the true
probability, Brier, and bias = mean P - mean true P of the test points (the
base-rate target is |bias| <= 0.01).

    nice -n 10 python benchmarks/np_probabilities.py            # -> results/np_probabilities.{md,json}
    python benchmarks/np_probabilities.py --reps 3 --n-test 2000 --tag quick
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from csvm_stats import NeymanPearsonClassifier
from csvm_stats.probability.venn_abers import merge

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probabilities import TRUTHS

RESULTS = Path(__file__).resolve().parent / "results"
NP_TRUTHS = ("probit interaction", "10% positives", "15% positives", "t(3) features")
LEARNERS = ("logistic", "svc", "hgb")
TNR_MIN = 0.9


def one_run(truth: str, learner: str, rep: int, n_test: int) -> dict[str, float]:
    """Both point probabilities of one fit on one test set: MSE, Brier and bias of each."""
    gen, prob, _, n = TRUTHS[truth]
    rng = np.random.default_rng(rep)
    X = gen(rng, n)
    y = (rng.random(n) < prob(X)).astype(int)
    test_rng = np.random.default_rng(10_000 + rep)
    X_te = gen(test_rng, n_test)
    p_true = prob(X_te)
    y_te = (test_rng.random(n_test) < p_true).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = NeymanPearsonClassifier(learner, tnr_min=TNR_MIN, random_state=rep).fit(X, y)
    res = clf.results_
    f = res.decision_function(X_te).to_numpy()
    points = {"sigmoid": res.predict_proba(X_te).to_numpy(), "merge": merge(*res.calibration.predictor.interval(f))}
    row: dict[str, float] = {"route": res.calibration.method}
    for name, p in points.items():
        row[f"{name}_mse"] = float(np.mean((p - p_true) ** 2))
        row[f"{name}_brier"] = float(np.mean((p - y_te) ** 2))
        row[f"{name}_bias"] = float(np.mean(p) - np.mean(p_true))
    return row


def table(rows: pd.DataFrame) -> pd.DataFrame:
    """Means over repetitions per truth and learner, with the count of repetitions the sigmoid won."""
    groups = rows.groupby(["truth", "learner"], sort=False)
    out = groups[[c for c in rows.columns if c.endswith(("_mse", "_brier", "_bias"))]].mean()
    out["sigmoid lower MSE (reps)"] = groups.apply(lambda g: int(np.sum(g["sigmoid_mse"] < g["merge_mse"])))
    out["reps"] = groups.size()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--n-test", type=int, default=20_000)
    parser.add_argument("--tag", default="")
    args = parser.parse_args()
    records = []
    for truth in NP_TRUTHS:
        for learner in LEARNERS:
            for rep in range(args.reps):
                records.append({"truth": truth, "learner": learner, "rep": rep} | one_run(truth, learner, rep,
                                                                                             args.n_test))
            print(f"{truth} / {learner}: done", flush=True)
    rows = pd.DataFrame(records)
    summary = table(rows)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=False, capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    stem = "np_probabilities" + (f"_{args.tag}" if args.tag else "")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(json.dumps({"commit": commit, "reps": args.reps, "n_test": args.n_test,
                                                      "rows": records}, indent=1))
    mse_wins = int(np.sum(summary["sigmoid_mse"] < summary["merge_mse"]))
    brier_wins = int(np.sum(summary["sigmoid_brier"] < summary["merge_brier"]))
    base = summary.loc[[t for t in summary.index if t[0] in ("10% positives", "15% positives")]]
    text = "\n".join([
        "# Neyman-Pearson route: sigmoid P against the Venn-Abers merge",
        "",
        (f"Commit {commit}; `python benchmarks/np_probabilities.py --reps {args.reps} --n-test {args.n_test}`; "
         f"path `NeymanPearsonClassifier(learner, tnr_min={TNR_MIN}, random_state=rep).fit(X, y)`, default split "
         "(held-out route); both P from the same fit and the same held-out pairs."),
        "",
        summary.to_markdown(floatfmt=".4f"),
        "",
        (f"Sigmoid lower mean MSE in {mse_wins} of {len(summary)} truth-learner pairs, lower mean Brier in "
         f"{brier_wins} of {len(summary)}."),
        (f"Base rate (10% and 15% positives): merge bias {base['merge_bias'].min():+.4f} to "
         f"{base['merge_bias'].max():+.4f}; sigmoid |bias| at most {base['sigmoid_bias'].abs().max():.4f} "
         "(target 0.01)."),
        "",
    ])
    (RESULTS / f"{stem}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
