"""Routes benchmark: which route gives the best classifier under a guaranteed requirement?

For every data set, requirement and split (seeds 0..splits-1) the routes of
:func:`csvm_stats.models.routes.compare_route_arrays` are fitted on the SAME
split (train/anchor/held-out 0.5/0.25/0.25, stratified): the exact CSVM
(linear kernel, C = 1, exact big-M: the DEFAULT model, with the default
Hoeffding margin on J, which needs 150 anchor points of the class for p0 = 0.9
and is capped at "every anchor point of the class" below that; the default
solver; ``--time-limit`` CPU seconds on one thread, ``clock="cpu"``, default
60 because the machine has 2 shared cores - the model default is 300 wall
seconds - and ``solver_status`` / ``solver_gap`` record every fit that stopped
at the limit), the same solve in guarantee mode,
and the Neyman-Pearson route around SVC (RBF), logistic regression and
HistGradientBoosting (:mod:`csvm_stats.models.learners`), all fitted on
I u J and thresholded on H.

Measured per route: the *other* rate at the requirement (TNR under TPR >= p0,
TPR under TNR >= p0; several classes: the mean recall of the unconstrained
classes and the accuracy), on the held-out sample H for real data (the
other class's held-out points did not set any threshold, so this estimate is
unbiased) and on 20,000 fresh points for the synthetic variants (the truth);
whether the route states the requirement at level 1 - alpha (guarantee
routes always; the exact CSVM when its held-out Clopper-Pearson bound is at
least p0); and, on the synthetic variants, whether each statement holds
(the true required rate at least the guaranteed p0 or the stated bound; the
true other rate inside the stated interval). "Best" counts, per split, the
certified routes with the largest other rate (ties all count).

Real data: the 11 data sets of ``benchmarks/probabilities.py`` (two-class
rule of :mod:`csvm_stats.data.datasets`), imputed, dummy-coded and
standardised with statistics of I u J only (``FoldPreprocessor``). Where H
holds fewer points of the class than the order statistic needs for p0 = 0.9
(29 at alpha = 0.05: srbct, leukemia) the held-out share is raised to 0.5
and p0 lowered to the largest of 0.9, 0.8, 0.75, 0.7 that H can certify; the
table says which. Several classes (``--part multiclass``): car (recall of
"acc" >= 0.9) and five Gaussian classes (recall of classes 0 and 2 >= 0.9,
Sidak level 1 - 0.95^(1/2) = 0.0253 each; ``--five-per-class`` points per
class); srbct's four classes have 7-8 held-out points each, too few for any
guarantee. The five Gaussian classes need H of about 200 points per class
for the guarantee routes to certify in every split: the order statistic
needs at least 35 held-out points of each constrained class at the Sidak
level and allows at most 4 misclassified of 100 (11 of 200), while a common
shift of the two constrained classes cannot undo the points one of them
loses to the other.

    python benchmarks/routes.py [--part binary|multiclass] [--splits 10] [--jobs 1] [--time-limit 60]
                                [--five-per-class 400] [--bound hoeffding]
    python benchmarks/routes.py --report   # tables from the stored CSVs only

Results: ``benchmarks/results/routes.csv`` (two classes) and
``routes_multiclass.csv`` (several classes), one row per data set,
requirement, split and route, and ``routes.md`` from both.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # HistGradientBoosting: one thread per job on 2 shared cores

import argparse
import json
import platform
import resource
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from csvm_stats.data.datasets import load_classes, load_dataset
from csvm_stats.data.simulation import GaussianClasses
from csvm_stats.exceptions import DataError
from csvm_stats.inference.bounds import binomial_min_n
from csvm_stats.inference.certification import ORDER_STATISTIC
from csvm_stats.models.routes import DEFAULT_ROUTES, compare_route_arrays
from csvm_stats.models.tuning import FoldPreprocessor
from csvm_stats.multiclass.design import encode_classes, split_by_class
from csvm_stats.multiclass.simulation import GaussianMulticlass
from csvm_stats.preprocessing.design import DEFAULT_FRACTIONS, split_samples

RESULTS = Path(__file__).resolve().parent / "results"
DATASETS = ["wisconsin", "australian", "german", "heart", "banknote", "votes", "srbct", "leukemia", "churn", "car",
            "cervical"]
#: The synthetic two-class variants (n, population); the truth comes from FRESH fresh points.
SYNTHETIC: dict[str, tuple[int, GaussianClasses]] = {
    "gauss n=1000 d=5": (1000, GaussianClasses(dim=5, distance=2.0)),
    "gauss n=2000 d=5": (2000, GaussianClasses(dim=5, distance=2.0)),
    "gauss n=2000 d=5 20% pos": (2000, GaussianClasses(dim=5, distance=2.0, positive_share=0.2)),
    "gauss n=1000 d=5 close": (1000, GaussianClasses(dim=5, distance=1.0)),
    "gauss n=1000 d=20 5 informative": (1000, GaussianClasses(dim=20, distance=2.5, informative=5)),
}
FIVE_CLASSES = GaussianMulticlass(np.array([[np.cos(a), np.sin(a)] for a in np.linspace(0, 2 * np.pi, 6)[:-1]]) * 2.0)
#: Binding per-class requirements: logistic regression's own recalls are about 0.76 on the five classes
#: (means on a circle of radius 2) and 0.6-0.8 for car's "acc".
MULTICLASS = {"car (4 classes)": {"acc": 0.9}, "five Gaussian classes": {0: 0.9, 2: 0.9}}
REQUIREMENTS = ("tpr_min", "tnr_min")
P0_LADDER = (0.9, 0.8, 0.75, 0.7)
WIDE_HOLDOUT = (0.25, 0.25, 0.5)
FRESH = 20_000
ALPHA = 0.05
#: The result file of each part.
PARTS = {"binary": "routes.csv", "multiclass": "routes_multiclass.csv"}


def _binary_setting(y: np.ndarray, requirement: str) -> tuple[float, tuple[float, float, float]]:
    """The p0 and shares: 0.9 and the default if H can certify it, else the wide held-out share and the ladder."""
    label = 1 if requirement == "tpr_min" else -1
    for fractions in (DEFAULT_FRACTIONS, WIDE_HOLDOUT):
        n_holdout = int(np.sum(y[split_samples(y, fractions, 0).holdout] == label))  # the same in every split
        for p0 in P0_LADDER if fractions == WIDE_HOLDOUT else P0_LADDER[:1]:
            if n_holdout >= binomial_min_n(p0, ALPHA):
                return p0, fractions
    raise RuntimeError("no p0 of the ladder can be certified")


def _preprocessed(X: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    return FoldPreprocessor.fit(X.iloc[rows]).transform(X)


def _route_rows(comparison, truth=None) -> list[dict]:
    """One row per route: the requirement's statement, the other rate, validity against the truth if known."""
    out = []
    for name, res in comparison.results.items():
        rates = res.rates.copy()
        rates.index = rates.index.astype(str)  # class labels: the CSVM keeps the data's type, the NP routes use str
        row: dict = {"route": name, "fit_cpu_s": comparison.fit_times[name],
                     "guaranteed": bool((rates["method"] == ORDER_STATISTIC).any())}
        if hasattr(res, "solver"):
            row["solver_status"] = res.solver.status.value
            row["solver_gap"] = float(res.solver.gap)
        if comparison.multiclass:
            constrained = [str(c) for c in comparison.requirement["recall_min"]]
            others = [c for c in rates.index if c not in constrained]
            row["stated_lower_min"] = float(rates.loc[constrained, "lower"].min())
            row["certified"] = bool(row["guaranteed"] or (rates.loc[constrained, "lower"]
                                    >= rates.loc[constrained, "target"]).all())
            row["required_heldout"] = float(rates.loc[constrained, "heldout_rate"].min())
            row["other_heldout"] = float(rates.loc[others, "heldout_rate"].mean())
            H = res.split.holdout
            row["accuracy_heldout"] = float(np.mean(res.predict().to_numpy()[H] ==
                                                    res.model.coding.decode(res.model.y[H]).to_numpy()))
            if truth is not None:
                X_new, y_new = truth
                pred = res.model.coding.encode(res.predict(X_new))
                recalls = np.array([np.mean(pred[y_new == k] == k) for k in range(len(rates))])
                targets = rates["target"].to_numpy()
                lowers = rates["lower"].to_numpy()
                cons = np.array([c in constrained for c in rates.index])
                row["true_required_min"] = float(recalls[cons].min())
                row["true_other"] = float(recalls[~cons].mean())
                row["true_accuracy"] = float(np.mean(pred == y_new))
                # the joint guarantee (Sidak) for guarantee routes; the exact CSVM's bounds at alpha each
                row["statement_holds"] = bool(np.all(recalls[cons] >= np.where(row["guaranteed"], targets[cons],
                                                                                 lowers[cons])))
        else:
            req = next(iter(comparison.targets))
            other = "tnr" if req == "tpr" else "tpr"
            r, o = rates.loc[req], rates.loc[other]
            row.update({
                "stated_lower": float(r["lower"]), "certified": bool(row["guaranteed"] or r["lower"] >= r["target"]),
                "required_heldout": float(r["heldout_rate"]), "other_heldout": float(o["heldout_rate"]),
                "other_lower": float(o["lower"]), "other_upper": float(o["upper"]),
            })
            if truth is not None:
                X_new, y_new = truth
                positive = res.decision_function(X_new).to_numpy() >= 0
                true = {"tpr": float(np.mean(positive[y_new > 0])), "tnr": float(np.mean(~positive[y_new < 0]))}
                row["true_required"], row["true_other"] = true[req], true[other]
                row["statement_holds"] = bool(true[req] >= r["lower"])
                if not np.isnan(o["upper"]):
                    row["other_interval_holds"] = bool(o["lower"] <= true[other] <= o["upper"])
        out.append(row)
    return out


def one_task(kind: str, name: str, requirement, split: int, time_limit: float, bound: str,
             five_per_class: int) -> list[dict]:
    """Fit every route on one split of one data set; rows of :func:`_route_rows` with the setting."""
    truth = None
    if kind == "real":
        X_raw, y_series = load_dataset(name)
        y = y_series.to_numpy()
        p0, fractions = _binary_setting(y, requirement)
        s = split_samples(y.astype(float), fractions, split)
        X = _preprocessed(X_raw, np.concatenate([s.train, s.anchor]))
        req = {requirement: p0}
    elif kind == "synthetic":
        n, population = SYNTHETIC[name]
        X, y = population.sample(n, np.random.default_rng(1000 + split))
        truth = population.sample(FRESH, np.random.default_rng(10**6 + split))
        p0, fractions = 0.9, DEFAULT_FRACTIONS
        req = {requirement: p0}
    elif name.startswith("car"):
        X_raw, labels = load_classes("car")
        y = labels.astype(str).to_numpy()
        _, positions = encode_classes(y)
        s = split_by_class(positions, DEFAULT_FRACTIONS, split)
        X = _preprocessed(X_raw, np.concatenate([s.train, s.anchor]))
        p0, fractions, req = 0.9, DEFAULT_FRACTIONS, {"recall_min": requirement}
    else:
        X, y = FIVE_CLASSES.sample(five_per_class, np.random.default_rng(1000 + split))
        truth = FIVE_CLASSES.sample(FRESH // 5, np.random.default_rng(10**6 + split))
        p0, fractions, req = 0.9, DEFAULT_FRACTIONS, {"recall_min": requirement}
    label = requirement if kind != "multiclass" else "recall " + ", ".join(f"{k}>={v:g}" for k, v in requirement.items())
    if kind == "multiclass" and not name.startswith("car"):
        name = f"{name} ({five_per_class} per class)"
    setting = {"kind": kind, "dataset": name, "requirement": label, "p0": p0, "holdout_share": fractions[2],
               "split": split, "n": len(y), "csvm_bound": bound, "csvm_time_limit_cpu_s": time_limit}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # capped margins, solver fallbacks: the rows record what happened
        try:
            comparison = compare_route_arrays(y, X, req, DEFAULT_ROUTES, alpha=ALPHA, random_state=split,
                                              fractions=fractions, time_limit=time_limit, csvm_options={"bound": bound},
                                              fit_options={"clock": "cpu", "threads": 1})
        except DataError as error:  # every route failed
            return [setting | {"route": route, "failed": str(error)} for route in DEFAULT_ROUTES]
    failed = [{"route": route, "failed": message} for route, message in comparison.failures.items()]
    return [setting | row for row in _route_rows(comparison, truth) + failed]


def tasks(splits: int, part: str) -> list[tuple]:
    if part == "multiclass":
        return [("multiclass", name, req, k) for name, req in MULTICLASS.items() for k in range(splits)]
    out = [("real", name, req, k) for name in DATASETS for req in REQUIREMENTS for k in range(splits)]
    return out + [("synthetic", name, req, k) for name in SYNTHETIC for req in REQUIREMENTS for k in range(splits)]


def _se(values: pd.Series) -> float:
    return float(values.std(ddof=1) / np.sqrt(values.size)) if values.size > 1 else float("nan")


def report(frame: pd.DataFrame) -> str:
    """Markdown: per setting and route the other rate (mean, SE), certified share, best count, validity."""
    lines = ["# Routes under a guaranteed requirement (benchmarks/routes.py)", "",
             "Same split for every route (seed = split number; shares 0.5/0.25/0.25 unless the table says held-out "
             "0.5). 'other' = the rate not required (TNR under a TPR requirement, TPR under TNR; several classes: "
             "mean recall of the unconstrained classes) - held-out for real data, on 20,000 fresh points for the "
             "synthetic ones. 'certified' = share of splits in which the route states the requirement at 95% "
             "(guarantee routes: always, by the order statistic; exact CSVM: held-out Clopper-Pearson bound >= p0). "
             "'best' = splits in which the route is certified and has the largest other rate (ties all count). "
             "'holds' = share of splits in which the statement about the required rate is true (synthetic only; "
             "guarantee routes: true rate >= p0, expected >= 95%; exact CSVM: true rate >= its stated bound). "
             "The exact CSVM is the default model (linear, C = 1, default solver) with the margin on J and the CPU "
             "time limit of the 'CSVM runs' line below; the 'time-limited' column counts its fits stopped by the "
             "limit and 'max gap' their largest relative gap. 'failed' routes gave no classifier (the message says "
             "why; for the CSVM that is the answer 'no linear rule meets the requirement with the margin on J').", ""]
    if "csvm_bound" in frame:
        runs = frame.groupby(["csvm_bound", "csvm_time_limit_cpu_s"]).size()
        lines += ["CSVM runs: " + "; ".join(f"bound={b!r}, time limit {limit:g} CPU-s ({count} rows)"
                                            for (b, limit), count in runs.items()), ""]
    runs_file = RESULTS / "routes_runs.jsonl"
    if runs_file.is_file():
        lines += ["Runs (commit, part, splits, CPU-s, wall-s, load average at start):", ""]
        for record in map(json.loads, runs_file.read_text().splitlines()):
            lines.append(f"- {record['date_utc']} commit {record['commit']}, {record['part']}, {record['splits']} "
                         f"splits, five-per-class {record['five_per_class']}, only {record['only']}: "
                         f"{record['cpu_s']} CPU-s, {record['wall_s']} wall-s, load {record['load_average_at_start']}")
        lines.append("")
    sizes_file = RESULTS / "routes_five_sizes.csv"
    if sizes_file.is_file():
        sizes = pd.read_csv(sizes_file)
        lines += ["## Five Gaussian classes: how large must H be? (`--five-sizes`)", "",
                  "Neyman-Pearson routes only, recall of classes 0 and 2 >= 0.9 at Sidak level 0.0253 each; "
                  "'allowed' = misclassified held-out points of a constrained class the order statistic tolerates "
                  "(none: H below the 35 points the level needs). A common shift of the two constrained classes "
                  "cannot undo the points one of them loses to the other, so certification fails when those "
                  "exceed the allowance.", "",
                  "| points per class | held-out per class | learner | allowed | certified splits | CPU s |",
                  "|---|---|---|---|---|---|"]
        for r in sizes.itertuples():
            allowed = "none" if pd.isna(r.allowed_misclassified) else int(r.allowed_misclassified)
            lines.append(f"| {r.per_class} | {r.heldout_per_class} | {r.learner} | {allowed} | "
                         f"{r.certified_splits} / {r.splits} | {r.cpu_s} |")
        lines.append("")
    frame = frame.copy()
    frame["certified"] = frame["certified"].map(lambda v: bool(v) if isinstance(v, (bool, np.bool_)) else
                                                str(v) == "True")  # a failed route certifies nothing
    if "failed" not in frame:
        frame["failed"] = np.nan
    lines += ["## Overview: the best guaranteed route per setting", "",
              "Among the routes certified in every split: the one with the largest mean other rate, the runner-up, "
              "and their paired difference over the splits (mean ± se). A difference within about 2 se is not "
              "a clear win.", "",
              "| setting | requirement | best | other rate | runner-up | other rate | difference ± se |",
              "|---|---|---|---|---|---|---|"]
    for (kind, dataset, requirement), block in frame.groupby(["kind", "dataset", "requirement"], sort=False):
        use = "true_other" if "true_other" in block and block["true_other"].notna().any() else "other_heldout"
        ok = block[block["failed"].isna()]
        always = [route for route, r in block.groupby("route", sort=False)
                  if r["certified"].all() and len(r) == block["split"].nunique()]
        if not always:
            lines.append(f"| {dataset} | {requirement} | no route certified in every split | | | | |")
            continue
        wide = ok[ok["route"].isin(always)].pivot(index="split", columns="route", values=use)
        ranked = wide.mean().sort_values(ascending=False)
        best = ranked.index[0]
        if len(ranked) > 1:
            second = ranked.index[1]
            diff = (wide[best] - wide[second]).dropna()
            lines.append(f"| {dataset} | {requirement} | {best} | {ranked.iloc[0]:.3f} | {second} | "
                         f"{ranked.iloc[1]:.3f} | {diff.mean():+.3f} ± {_se(diff):.3f} |")
        else:
            lines.append(f"| {dataset} | {requirement} | {best} | {ranked.iloc[0]:.3f} | | | |")
    lines.append("")
    for (kind, dataset, requirement), block in frame.groupby(["kind", "dataset", "requirement"], sort=False):
        use = "true_other" if "true_other" in block and block["true_other"].notna().any() else "other_heldout"
        p0, share = block["p0"].iloc[0], block["holdout_share"].iloc[0]
        splits = block["split"].nunique()
        lines += [f"## {dataset}, {requirement} (p0 = {p0:g}, held-out share {share:g}, {splits} splits)", "",
                  "| route | other rate (mean ± se) | accuracy | certified | best | holds | other interval covers | "
                  "fit CPU s | time-limited | max gap |", "|" + "---|" * 10]
        best = {}
        for split, per in block.groupby("split"):
            cert = per[per["certified"]]
            if cert.empty:
                continue
            top = cert[use].max()
            for route in cert.loc[np.isclose(cert[use], top), "route"]:
                best[route] = best.get(route, 0) + 1
        for route, r in block.groupby("route", sort=False):
            certified_share = r["certified"].mean()  # over all splits: a failed route is not certified
            if r["failed"].notna().any():
                lines.append(f"| {route} | failed in {int(r['failed'].notna().sum())} of {splits} splits: "
                             f"{r['failed'].dropna().iloc[0][:160]}... | | | | | | | | |")
                r = r[r["failed"].isna()]
                if r.empty:
                    continue
            acc = r["true_accuracy"] if "true_accuracy" in r and r["true_accuracy"].notna().any() else r.get("accuracy_heldout")
            acc_text = f"{acc.mean():.3f}" if acc is not None and acc.notna().any() else ""
            holds = f"{r['statement_holds'].mean():.2f}" if "statement_holds" in r and r["statement_holds"].notna().any() else ""
            covers = (f"{r['other_interval_holds'].mean():.2f}" if "other_interval_holds" in r
                      and r["other_interval_holds"].notna().any() else "")
            status = r["solver_status"].astype(str) if "solver_status" in r else pd.Series(dtype=str)
            limited = int(status.str.startswith("time limit").sum())
            gap = f"{r['solver_gap'].max():.2g}" if route.startswith("csvm") and "solver_gap" in r else ""
            lines.append(f"| {route} | {r[use].mean():.3f} ± {_se(r[use]):.3f} | {acc_text} | "
                         f"{certified_share:.2f} | {best.get(route, 0)} | {holds} | {covers} | "
                         f"{r['fit_cpu_s'].mean():.2f} | {limited if route.startswith('csvm') else ''} | {gap} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def five_class_sizes(sizes: tuple[int, ...], splits: int) -> pd.DataFrame:
    """In how many splits each guarantee route certifies the five Gaussian classes' requirement, per size.

    Neyman-Pearson routes around logistic regression and gradient boosting only
    (the exact CSVM is in the main run); one row per (points per class, learner)
    with the held-out points per class, the order statistic's allowed
    misclassifications at the Sidak level and the first refusal message.
    """
    from csvm_stats.inference.bounds import order_statistic_rank
    from csvm_stats.models.neyman_pearson import NeymanPearson
    from csvm_stats.multiclass.certification import sidak

    requirement = MULTICLASS["five Gaussian classes"]
    level = sidak(ALPHA, len(requirement))
    rows = []
    for per_class in sizes:
        for learner in ("logistic", "hgb"):
            start, refusals = time.process_time(), []
            for split in range(splits):
                X, y = FIVE_CLASSES.sample(per_class, np.random.default_rng(1000 + split))
                try:
                    NeymanPearson(y, X, learner, recall_min=requirement, alpha=ALPHA).fit(random_state=split)
                except DataError as error:
                    refusals.append(str(error))
            n_h = int(round(per_class * DEFAULT_FRACTIONS[2]))
            rank = order_statistic_rank(n_h, 0.9, level)
            rows.append({"per_class": per_class, "heldout_per_class": n_h, "learner": f"np-{learner}",
                         "allowed_misclassified": None if rank is None else rank - 1,
                         "certified_splits": splits - len(refusals), "splits": splits,
                         "first_refusal": refusals[0] if refusals else "",
                         "cpu_s": round(time.process_time() - start, 1)})
    return pd.DataFrame(rows)


def _setting_key(task: tuple, five_per_class: int) -> tuple:
    """(data set, split, requirement) as a task writes them in the CSV (to skip tasks already done)."""
    kind, name, requirement, split = task
    if kind != "multiclass":
        return name, split, requirement
    label = "recall " + ", ".join(f"{k}>={v:g}" for k, v in requirement.items())
    return (name if name.startswith("car") else f"{name} ({five_per_class} per class)"), split, label


def _commit() -> str:
    """The checked-out commit, with "+changes" when the working tree differs from it."""
    here = Path(__file__).resolve().parent
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=here).stdout
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                           cwd=here).stdout.strip()
    return commit.strip() + ("+changes" if dirty else "")


def _run_record(args: argparse.Namespace, commit: str, cpu_s: float, wall_s: float, load: tuple[float, ...]) -> dict:
    """What the results files say about a run: commit at its start, command line, CPU and wall seconds, load."""
    return {"commit": commit, "part": args.part, "tag": args.tag, "splits": args.splits, "jobs": args.jobs,
            "time_limit_cpu_s": args.time_limit, "bound": args.bound, "five_per_class": args.five_per_class,
            "only": args.only, "cpu_s": round(cpu_s, 1), "wall_s": round(wall_s, 1),
            "load_average_at_start": load, "host": platform.node(), "cpus": os.cpu_count(),
            "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}


def _stored() -> pd.DataFrame:
    names = sorted({path.name for part in PARTS.values() for path in RESULTS.glob(part.replace(".csv", "*.csv"))}
                   - {"routes_five_sizes.csv"})
    frames = [pd.read_csv(RESULTS / name) for name in names]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=sorted(PARTS), default="binary")
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=60.0, help="the exact CSVM's limit, CPU seconds")
    parser.add_argument("--bound", default="hoeffding", help="the exact CSVM's margin on J (default: the model's)")
    parser.add_argument("--five-per-class", type=int, default=400, help="points per class of the five Gaussians")
    parser.add_argument("--only", nargs="*", help="data set names to run (default: all)")
    parser.add_argument("--tag", help="write routes_<part>_<tag>.csv (two runs side by side); --report reads them all")
    parser.add_argument("--report", action="store_true", help="write routes.md from the stored CSVs only")
    parser.add_argument("--five-sizes", type=int, nargs="*",
                        help="only: certification of the five Gaussian classes per points-per-class (routes_five_sizes.csv)")
    args = parser.parse_args()
    if args.five_sizes:
        sizes = five_class_sizes(tuple(args.five_sizes), args.splits)
        sizes.to_csv(RESULTS / "routes_five_sizes.csv", index=False)
        print(sizes.drop(columns="first_refusal").to_string(index=False))
        return
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / (PARTS[args.part] if not args.tag else PARTS[args.part].replace(".csv", f"_{args.tag}.csv"))
    if not args.report:
        todo = [t for t in tasks(args.splits, args.part) if not args.only or t[1] in args.only]
        done = pd.read_csv(path) if path.is_file() else pd.DataFrame()
        if not done.empty:
            have = set(zip(done["dataset"], done["split"], done["requirement"]))
            todo = [t for t in todo if _setting_key(t, args.five_per_class) not in have]
        start, cpu_start, load, commit = time.perf_counter(), time.process_time(), os.getloadavg(), _commit()
        children_start = resource.getrusage(resource.RUSAGE_CHILDREN)
        by_setting: dict[tuple, list[tuple]] = {}
        for t in todo:
            by_setting.setdefault((t[0], t[1], str(t[2])), []).append(t)
        for key, group in by_setting.items():
            for first in range(0, len(group), args.jobs):  # the file is written after every `jobs` splits
                chunk = group[first:first + args.jobs]
                rows = Parallel(n_jobs=args.jobs)(delayed(one_task)(*t, args.time_limit, args.bound,
                                                                    args.five_per_class) for t in chunk)
                frame = pd.DataFrame([r for rs in rows for r in rs])
                done = pd.concat([done, frame], ignore_index=True) if not done.empty else frame
                done.to_csv(path, index=False)
            print(f"{key}: {len(group)} splits, {time.perf_counter() - start:.0f} s so far", flush=True)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (time.process_time() - cpu_start + children.ru_utime + children.ru_stime
               - children_start.ru_utime - children_start.ru_stime)
        record = _run_record(args, commit, cpu, time.perf_counter() - start, load)
        with open(RESULTS / "routes_runs.jsonl", "a") as log:
            log.write(json.dumps(record) + "\n")
    frame = _stored()
    (RESULTS / "routes.md").write_text(report(frame))
    print(report(frame))


if __name__ == "__main__":
    main()
