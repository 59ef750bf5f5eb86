"""Validity study: do the confidence statements about a fitted CSVM hold?

Two Gaussian classes (:class:`csvm_stats.data.simulation.GaussianClasses`, means
2 apart along the first axis, d = 2 or d = 30 dimensions of which 29 are
noise) give the true TPR of any hyperplane in closed form. In every
repetition we draw n points (half positive), fit
``CSVM(tpr_min=p0, alpha, bound)`` with the default split
(train/anchor/held-out = 0.5/0.25/0.25) and check each statement against the
truth:

* ``paper``: the paper's statement "TPR > p0", justified by the margin on the
  anchor sample that the optimisation used;
* ``anchor CP``: an exact Clopper-Pearson lower bound computed on the anchor
  sample (the same mistake with an exact bound);
* ``held-out CP``: the library's statement, Clopper-Pearson on the held-out
  sample;
* ``guarantee``: the order-statistic intercept set on the held-out positives
  (guarantee mode), claim "TPR >= p0".

A valid statement fails in at most a share alpha of the repetitions, up to
binomial noise; the table marks a failure share above the one-sided 99%
binomial acceptance limit as a violation. Run ``python benchmarks/validity.py``
(``--reps`` to change the number of repetitions); results go to
``benchmarks/results/validity.{csv,md}``.

``--binary`` runs the binary-predictor settings instead
(:class:`csvm_stats.data.simulation.BinaryClasses`, 5 binary predictors, so only
32 distinct points and many held-out scores tied at a guarantee threshold).
The true rates are exact sums over the 32 points of the deployed rule's own
decision values. There the guarantee is checked for the TPR and for the TNR,
each with the library's rule (scores w'phi(x) computed directly, ties
counted as correct) and, side by side on the same fits, with the rule used
before (the threshold rebuilt as (w'x + b0) - b0, no tie tolerance).
Results go to ``benchmarks/results/validity_binary.csv``; ``validity.md``
shows both tables.

``--neyman-pearson`` checks :class:`csvm_stats.NeymanPearsonClassifier`'s
guarantee (the Neyman-Pearson route, :mod:`csvm_stats.models.neyman_pearson`):
in each repetition the route is fitted with ``tpr_min=p0`` and, separately,
``tnr_min=p0`` (default split) around logistic regression and an RBF SVC
(Gaussian classes) and also HistGradientBoosting (binary predictors, whose
scores tie at the threshold), and the claim "rate >= p0" is checked against
the truth: closed form for logistic regression on Gaussian classes (its
decision is linear), exact sums over the 32 points for the binary
predictors, and 40,000 fresh points (20,000 per class, standard error about
0.002 at a rate of 0.9) for the SVC on Gaussian classes. Results go to
``benchmarks/results/validity_np.csv`` and ``validity_np.md`` (a section of
``validity.md`` when that is next written); ``--reps`` tops up settings run
with fewer repetitions, with the next seeds.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.stats import binom
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from csvm_stats.inference.bounds import CappedTargetWarning, clopper_pearson_lower
from csvm_stats.inference.certification import linear_scores, umbrella_intercept
from csvm_stats.models.model import CSVM
from csvm_stats.models.neyman_pearson import NeymanPearson
from csvm_stats.data.simulation import BinaryClasses, GaussianClasses

#: (n, dim, p0, alpha, bound); Hoeffding needs 38 anchor positives for p0 = 0.8, hence n = 400 there;
#: p0 = 0.9 needs 29 anchor positives (binomial margin) and 29 held-out positives (guarantee): n = 400.
SETTINGS: list[tuple[int, int, float, float, str]] = [
    (200, 2, 0.8, 0.05, "none"),
    (200, 2, 0.8, 0.05, "binomial"),
    (200, 2, 0.8, 0.10, "binomial"),
    (400, 2, 0.8, 0.05, "hoeffding"),
    (200, 30, 0.8, 0.05, "none"),
    (200, 30, 0.8, 0.05, "binomial"),
    (200, 30, 0.8, 0.10, "binomial"),
    (400, 30, 0.8, 0.05, "hoeffding"),
    (400, 2, 0.9, 0.05, "binomial"),
    (400, 30, 0.9, 0.05, "binomial"),
]
STATEMENTS = ("paper", "anchor CP", "held-out CP", "guarantee")
#: (n, dim, p0, alpha, bound) for the binary predictors (dim is the population's, 5).
BINARY_SETTINGS: list[tuple[int, int, float, float, str]] = [
    (240, 5, 0.7, 0.05, "none"),
    (240, 5, 0.8, 0.05, "none"),
]
BINARY_STATEMENTS = ("held-out CP", "guarantee TPR", "guarantee TNR", "guarantee TPR, old rule", "guarantee TNR, old rule")


def one_repetition(
    n: int, dim: int, p0: float, alpha: float, bound: str, seed: int, solver: str = "auto"
) -> dict[str, float]:
    """Fit once and return, for each statement, whether it failed (true TPR below the claim)."""
    population = GaussianClasses(dim=dim, distance=2.0)
    X, y = population.sample(n, np.random.default_rng(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CappedTargetWarning)
        res = CSVM(y, X, tpr_min=p0, alpha=alpha, bound=bound).fit(
            random_state=seed, solver=solver, time_limit=60, threads=1
        )
    row = res.rates.loc["tpr"]
    w, b = res.params.to_numpy()[:-1], float(res.params.iloc[-1])
    true_tpr = population.true_rates(w, b)["tpr"]

    holdout = res.split.holdout
    phi = res.engine_fit.feature_map.transform(res.scaler.transform(X[holdout]))
    scores, tolerance = linear_scores(phi, res.engine_fit.coef)
    umbrella = umbrella_intercept(scores, y[holdout], "tpr", p0, alpha, tolerance=tolerance)
    w_g, b_g = res.scaler.to_original(res.engine_fit.coef, umbrella.intercept)
    guaranteed = population.true_rates(w_g, b_g)
    anchor_lower = clopper_pearson_lower(int(row["anchor_correct"]), int(row["anchor_n"]), alpha)
    return {
        "true_tpr": true_tpr,
        "true_tnr": population.true_rates(w, b)["tnr"],
        "anchor_met": bool(row["met"]),
        "fail_paper": true_tpr < p0,
        "fail_anchor CP": true_tpr < anchor_lower,
        "fail_held-out CP": true_tpr < row["lower"],
        "fail_guarantee": guaranteed["tpr"] < p0,
        "true_tpr_guarantee": guaranteed["tpr"],
        "true_tnr_guarantee": guaranteed["tnr"],
        "optimal": res.solver.status.value == "optimal",
    }


def one_binary_repetition(
    n: int, dim: int, p0: float, alpha: float, bound: str, seed: int, solver: str = "auto", time_limit: float = 60.0
) -> dict[str, float]:
    """Binary predictors: fit once; did each statement fail (true rate of the deployed rule below the claim)?"""
    population = BinaryClasses()
    X, y = population.sample(n, np.random.default_rng(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = CSVM(y, X, tpr_min=p0, alpha=alpha, bound=bound).fit(
            random_state=seed, solver=solver, time_limit=time_limit, threads=1
        )
    fit, holdout = res.engine_fit, res.split.holdout
    configs, _, _ = population.configurations()
    config_scores, _ = linear_scores(fit.feature_map.transform(res.scaler.transform(configs)), fit.coef)
    truth = population.true_rates_of(config_scores + res.intercept)
    phi = fit.feature_map.transform(res.scaler.transform(X[holdout]))
    scores, tolerance = linear_scores(phi, fit.coef)
    rebuilt = fit.decision_function(res.scaler.transform(X[holdout])) - fit.intercept  # the old rule's scores
    row: dict[str, float] = {
        "true_tpr": truth["tpr"], "true_tnr": truth["tnr"], "anchor_met": bool(res.rates.loc["tpr", "met"]),
        "fail_held-out CP": truth["tpr"] < res.rates.loc["tpr", "lower"],
        "optimal": res.solver.status.value == "optimal",
    }
    for rate in ("tpr", "tnr"):
        for label, s, tol in (("", scores, tolerance), (", old rule", rebuilt, 0.0)):
            g = umbrella_intercept(s, y[holdout], rate, p0, alpha, tolerance=tol)
            rates = population.true_rates_of(config_scores + g.intercept)
            row[f"fail_guarantee {rate.upper()}{label}"] = rates[rate] < p0
            row[f"true_{rate}_guarantee{label}"] = rates[rate]
    return row


#: (population, n, dim, p0, alpha) of the Neyman-Pearson validity study.
NP_SETTINGS: list[tuple[str, int, int, float, float]] = [
    ("gaussian", 200, 2, 0.8, 0.05),
    ("gaussian", 200, 30, 0.8, 0.05),
    ("gaussian", 200, 2, 0.8, 0.10),
    ("gaussian", 400, 2, 0.9, 0.05),
    ("gaussian", 400, 30, 0.9, 0.05),
    ("binary", 240, 5, 0.7, 0.05),
    ("binary", 240, 5, 0.8, 0.05),
]
NP_LEARNERS = {"gaussian": ("logistic", "svc"), "binary": ("logistic", "svc", "hgb")}
NP_FRESH_PER_CLASS = 20_000


def _np_truth(population, res, rng: np.random.Generator) -> dict[str, float]:
    """True TPR and TNR of a fitted Neyman-Pearson rule (closed form, exact sum or fresh points)."""
    if isinstance(population, BinaryClasses):
        configs, _, _ = population.configurations()
        return population.true_rates_of(res.decision_function(configs).to_numpy())
    if res.model.method == "decision_function" and isinstance(res.model.estimator, Pipeline) \
            and isinstance(res.model.estimator[-1], LogisticRegression):
        basis = np.vstack([np.zeros(population.dim), np.eye(population.dim)])
        values = res.decision_function(basis).to_numpy()  # f(x) = a'x + c exactly (a linear pipeline)
        return population.true_rates(values[1:] - values[0], float(values[0]))
    pos = rng.standard_normal((NP_FRESH_PER_CLASS, population.dim)) + population.mean(1)
    neg = rng.standard_normal((NP_FRESH_PER_CLASS, population.dim)) + population.mean(-1)
    return {"tpr": float(np.mean(res.decision_function(pos).to_numpy() >= 0)),
            "tnr": float(np.mean(res.decision_function(neg).to_numpy() < 0))}


def one_np_repetition(kind: str, n: int, dim: int, p0: float, alpha: float, seed: int) -> dict[str, float]:
    """Fit the route around every learner for TPR >= p0 and for TNR >= p0; did each guarantee fail?"""
    cpu = time.process_time()
    population = BinaryClasses() if kind == "binary" else GaussianClasses(dim=dim, distance=2.0)
    X, y = population.sample(n, np.random.default_rng(seed))
    row: dict[str, float] = {}
    for learner in NP_LEARNERS[kind]:
        for rate in ("tpr", "tnr"):
            res = NeymanPearson(y, X, learner, alpha=alpha, **{f"{rate}_min": p0}).fit(random_state=seed)
            truth = _np_truth(population, res, np.random.default_rng(seed + 7))
            row[f"fail_NP {learner} {rate.upper()}"] = truth[rate] < p0
            row[f"true_{rate}_NP {learner} {rate.upper()}"] = truth[rate]
            other = "tnr" if rate == "tpr" else "tpr"
            row[f"true_{other}_NP {learner} {rate.upper()}"] = truth[other]
    row["cpu_s"] = time.process_time() - cpu  # this repetition's CPU seconds, in whichever worker ran it
    return row


def _np_rows(kind: str, n: int, dim: int, p0: float, alpha: float, frame: pd.DataFrame,
             before: dict[str, dict] | None) -> list[dict]:
    """One row per (learner, rate): failures and mean true rates of ``frame``, added to ``before`` (same statement)."""
    rows = []
    for learner in NP_LEARNERS[kind]:
        for rate in ("TPR", "TNR"):
            name = f"NP {learner} {rate}"
            old = (before or {}).get(name, {"reps": 0, "failures": 0, "mean_true_tpr": 0.0, "mean_true_tnr": 0.0})
            reps = int(old["reps"]) + len(frame)
            fails = int(old["failures"]) + int(frame[f"fail_{name}"].sum())
            limit = int(binom.ppf(0.99, reps, alpha))
            mean = {r: (old[f"mean_true_{r}"] * old["reps"] + frame[f"true_{r}_{name}"].sum()) / reps
                    for r in ("tpr", "tnr")}
            rows.append({
                "population": kind, "n": n, "dim": dim, "p0": p0, "alpha": alpha, "statement": name,
                "reps": reps, "failures": fails, "failure_rate": fails / reps, "limit_99": limit,
                "valid": fails <= limit, "mean_true_tpr": mean["tpr"], "mean_true_tnr": mean["tnr"],
            })
    return rows


def run_np(reps: int, n_jobs: int, out: Path, seed0: int = 20261202, batch: int = 100) -> pd.DataFrame:
    """The Neyman-Pearson settings; one row per (setting, learner, rate), written to ``validity_np.csv``.

    A setting already in that file with ``r < reps`` repetitions is topped up
    with the seeds ``seed0 + r, ..., seed0 + reps - 1`` (repetition k always
    uses seed ``seed0 + k``, so the result is the one a fresh run of ``reps``
    would give), ``batch`` repetitions at a time, the file written after
    each batch; the cheapest settings (fewest points times dimensions) go
    first. Settings with at least ``reps`` are kept. Only ``validity_np.csv``,
    ``validity_np.md`` and ``validity_np_runs.jsonl`` are written
    (``validity.md`` shows the table when :func:`write` next runs).
    """
    previous = out / "validity_np.csv"
    rows: list[dict] = pd.read_csv(previous).to_dict("records") if previous.is_file() else []
    order = [tuple(s) for s in NP_SETTINGS]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=out).stdout.strip()  # the code this run started from
    for key in sorted(order, key=lambda s: s[1] * s[2]):
        kind, n, dim, p0, alpha = key
        while True:
            mine = [r for r in rows if (r["population"], r["n"], r["dim"], r["p0"], r["alpha"]) == key]
            have = min((int(r["reps"]) for r in mine), default=0)
            if have >= reps:
                break
            upto = min(reps, have + batch)
            start, load = time.perf_counter(), os.getloadavg()
            frame = pd.DataFrame(Parallel(n_jobs=n_jobs)(
                delayed(one_np_repetition)(kind, n, dim, p0, alpha, seed0 + k) for k in range(have, upto)))
            new = _np_rows(kind, n, dim, p0, alpha, frame, {r["statement"]: r for r in mine})
            rows = sorted([r for r in rows if r not in mine] + new, key=lambda r: order.index(
                (r["population"], r["n"], r["dim"], r["p0"], r["alpha"])))
            with open(out / "validity_np_runs.jsonl", "a") as log:
                log.write(json.dumps({"setting": list(key), "seeds": [seed0 + have, seed0 + upto - 1],
                                      "jobs": n_jobs, "cpu_s": round(float(frame["cpu_s"].sum()), 1),
                                      "wall_s": round(time.perf_counter() - start, 1), "load_average_at_start": load,
                                      "commit": commit, "host": platform.node(),
                                      "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}) + "\n")
            print(f"NP {kind} n={n} dim={dim} p0={p0} alpha={alpha}: repetitions {have}..{upto - 1} in "
                  f"{time.perf_counter() - start:.0f} s", flush=True)
            out.mkdir(exist_ok=True)
            pd.DataFrame(rows).to_csv(out / "validity_np.csv", index=False)
            (out / "validity_np.md").write_text(np_section(pd.DataFrame(rows)))
    return pd.DataFrame(rows)


def np_section(table: pd.DataFrame) -> str:
    """``validity_np.md``: the Neyman-Pearson table with the seeds (:func:`write` puts the table in ``validity.md``)."""
    return (
        "# Neyman-Pearson route (`--neyman-pearson`: NeymanPearsonClassifier's guarantee)\n\n"
        "'NP <learner> TPR' fits the route with tpr_min = p0 (TNR: tnr_min = p0) around that learner and "
        "fails when the true rate is below p0. Truth: closed form (logistic, Gaussian), exact sums over the "
        "32 points (binary predictors, many scores tied at the threshold), 40,000 fresh points (SVC, "
        "Gaussian; standard error about 0.002). Repetition k uses seed 20261202 + k.\n\n" + np_markdown(table)
    )


def np_markdown(table: pd.DataFrame) -> str:
    """The Neyman-Pearson table as Markdown."""
    lines = ["| population | n | dim | p0 | alpha | statement | failures / reps | failure rate | 99% limit | valid | "
             "mean true TPR | mean true TNR |", "|" + "---|" * 12]
    for r in table.itertuples(index=False):
        lines.append(
            f"| {r.population} | {r.n} | {r.dim} | {r.p0:g} | {r.alpha:g} | {r.statement} | {r.failures} / {r.reps} | "
            f"{r.failure_rate:.3f} | {r.limit_99 / r.reps:.3f} | {'yes' if r.valid else '**no**'} | "
            f"{r.mean_true_tpr:.3f} | {r.mean_true_tnr:.3f} |"
        )
    return "\n".join(lines) + "\n"


def _statement_row(frame: pd.DataFrame, setting: tuple, name: str, reps: int, truth: tuple[str, str]) -> dict:
    n, dim, p0, alpha, bound = setting
    fails = int(frame[f"fail_{name}"].sum())
    limit = int(binom.ppf(0.99, reps, alpha))
    return {
        "n": n, "dim": dim, "p0": p0, "alpha": alpha, "bound": bound, "statement": name, "reps": reps,
        "failures": fails, "failure_rate": fails / reps, "limit_99": limit, "valid": fails <= limit,
        "mean_true_tpr": frame[truth[0]].mean(), "mean_true_tnr": frame[truth[1]].mean(),
        "anchor_met_share": frame["anchor_met"].mean(), "optimal_share": frame["optimal"].mean(),
    }


def run_binary(
    reps: int, n_jobs: int, out: Path, seed0: int = 20261201, *, time_limit: float = 60.0, budget: float = math.inf,
    batch: int = 20,
) -> pd.DataFrame:
    """The binary-predictor settings; one row per (setting, statement), written to ``validity_binary.csv``.

    Repetitions run in batches and the file is rewritten after each one, with
    the number of repetitions actually done; a setting stops early when the
    wall-clock ``budget`` (seconds, for the whole run) is used up.
    """
    rows: list[dict] = []
    start_all = time.perf_counter()
    for setting in BINARY_SETTINGS:
        start = time.perf_counter()
        done: list[dict] = []
        while len(done) < reps and time.perf_counter() - start_all < budget:
            seeds = range(seed0 + len(done), seed0 + min(reps, len(done) + batch))
            done += Parallel(n_jobs=n_jobs)(
                delayed(one_binary_repetition)(*setting, seed, time_limit=time_limit) for seed in seeds
            )
            frame = pd.DataFrame(done)
            current = []
            for name in BINARY_STATEMENTS:
                rate = "tnr" if "TNR" in name else "tpr"
                suffix = ", old rule" if "old rule" in name else ""
                column = f"true_{rate}_guarantee{suffix}" if name.startswith("guarantee") else f"true_{rate}"
                truth = (column, "true_tnr") if rate == "tpr" else ("true_tpr", column)
                current.append(_statement_row(frame, setting, name, len(done), truth))
            out.mkdir(exist_ok=True)
            pd.DataFrame(rows + current).to_csv(out / "validity_binary.csv", index=False)
            write(pd.read_csv(out / "validity.csv"), out)
            print(f"binary {setting}: {len(done)} fits in {time.perf_counter() - start:.0f} s", flush=True)
        rows += current if done else []
    return pd.DataFrame(rows)


def run(reps: int, n_jobs: int, out: Path, seed0: int = 20261130, resume: bool = False) -> pd.DataFrame:
    """All settings; one row per (setting, statement), written to ``out`` after each setting.

    ``resume`` keeps the rows of ``out/validity.csv`` run with the same ``reps``
    and runs only the settings missing there.
    """
    rows: list[dict] = []
    done: set[tuple] = set()
    previous = out / "validity.csv"
    if resume and previous.is_file():
        kept = pd.read_csv(previous)
        kept = kept[kept["reps"] == reps]
        rows = kept.to_dict("records")
        done = {(r["n"], r["dim"], r["p0"], r["alpha"], r["bound"]) for r in rows}
    for n, dim, p0, alpha, bound in SETTINGS:
        if (n, dim, p0, alpha, bound) in done:
            continue
        start = time.perf_counter()
        frame = pd.DataFrame(
            Parallel(n_jobs=n_jobs)(delayed(one_repetition)(n, dim, p0, alpha, bound, seed0 + k) for k in range(reps))
        )
        limit = int(binom.ppf(0.99, reps, alpha))
        for name in STATEMENTS:
            fails = int(frame[f"fail_{name}"].sum())
            rows.append(
                {
                    "n": n, "dim": dim, "p0": p0, "alpha": alpha, "bound": bound, "statement": name, "reps": reps,
                    "failures": fails, "failure_rate": fails / reps, "limit_99": limit,
                    "valid": fails <= limit,
                    "mean_true_tpr": frame["true_tpr_guarantee" if name == "guarantee" else "true_tpr"].mean(),
                    "mean_true_tnr": frame["true_tnr_guarantee" if name == "guarantee" else "true_tnr"].mean(),
                    "anchor_met_share": frame["anchor_met"].mean(),
                    "optimal_share": frame["optimal"].mean(),
                }
            )
        print(f"n={n} dim={dim} p0={p0} alpha={alpha} bound={bound}: {reps} fits in {time.perf_counter() - start:.0f} s", flush=True)
        write(pd.DataFrame(rows), out)
    return pd.DataFrame(rows)


def to_markdown(table: pd.DataFrame) -> str:
    """The table as Markdown, failure rates next to the alpha they must not exceed."""
    header = "| n | dim | p0 | alpha | bound | statement | failures / reps | failure rate | 99% limit | valid | mean true TPR | mean true TNR |"
    lines = [header, "|" + "---|" * 12]
    for r in table.itertuples(index=False):
        lines.append(
            f"| {r.n} | {r.dim} | {r.p0:g} | {r.alpha:g} | {r.bound} | {r.statement} | {r.failures} / {r.reps} | "
            f"{r.failure_rate:.3f} | {r.limit_99 / r.reps:.3f} | {'yes' if r.valid else '**no**'} | "
            f"{r.mean_true_tpr:.3f} | {r.mean_true_tnr:.3f} |"
        )
    return "\n".join(lines) + "\n"


def write(table: pd.DataFrame, out: Path) -> None:
    """``validity.csv`` and ``validity.md`` in ``out`` (with the binary table when it has been run)."""
    out.mkdir(exist_ok=True)
    table.to_csv(out / "validity.csv", index=False)
    text = (
        "# Validity of the confidence statements (benchmarks/validity.py)\n\n"
        "A statement fails when the true TPR (closed form) is below the claimed value. "
        "Valid statements fail in at most a share alpha of the repetitions (99% binomial limit shown).\n\n"
        + _runs_section(out)
        + "## Gaussian classes (continuous scores)\n\n" + to_markdown(table)
    )
    binary = out / "validity_binary.csv"
    if binary.is_file():
        text += (
            "\n## Binary predictors (`--binary`: 32 distinct points, ties at the guarantee threshold)\n\n"
            "The true rates are exact sums over the 32 points of the deployed rule's decision values. "
            "'guarantee TPR/TNR' is the library's rule (scores w'phi(x) computed directly, ties at the threshold "
            "counted as correct); 'old rule' is the rule used before, on the same fits (threshold rebuilt as "
            "(w'x + b0) - b0, no tie tolerance). The dim column is the number of binary predictors.\n\n"
            + to_markdown(pd.read_csv(binary))
        )
    neyman_pearson = out / "validity_np.csv"
    if neyman_pearson.is_file():
        text += (
            "\n## Neyman-Pearson route (`--neyman-pearson`: NeymanPearsonClassifier's guarantee)\n\n"
            "'NP <learner> TPR' fits the route with tpr_min = p0 (TNR: tnr_min = p0) around that learner and "
            "fails when the true rate is below p0. Truth: closed form (logistic, Gaussian), exact sums over the "
            "32 points (binary predictors, many scores tied at the threshold), 40,000 fresh points (SVC, "
            "Gaussian; standard error about 0.002).\n\n" + np_markdown(pd.read_csv(neyman_pearson))
        )
    (out / "validity.md").write_text(text)


RUNS_FILE = "validity_runs.md"


def _runs_section(out: Path) -> str:
    """The provenance lines of the runs behind the tables (``validity_runs.md``), as a section."""
    runs = out / RUNS_FILE
    return "## Runs\n\n" + runs.read_text() + "\n" if runs.is_file() else ""


def _commit() -> str:
    """The checked-out commit (read when the run starts: the code it imported)."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent, check=False).stdout.strip() or "unknown"


def _record_run(out: Path, part: str, commit: str, reps: int, seed0: int, cpu: float, wall: float, load: float
                ) -> None:
    """Append one provenance line (commit, repetitions, seeds, CPU and wall seconds, load) to ``validity_runs.md``."""
    line = (f"- {part}: commit {commit}, {reps} repetitions per setting (seeds {seed0}..{seed0 + reps - 1}), "
            f"{cpu:.0f} CPU-s of this process ({wall:.0f} s wall), load average {load:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    out.mkdir(exist_ok=True)
    with open(out / RUNS_FILE, "a") as handle:
        handle.write(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--resume", action="store_true", help="run only the settings missing from the results file")
    parser.add_argument("--binary", action="store_true", help="run the binary-predictor settings (ties)")
    parser.add_argument("--neyman-pearson", action="store_true", help="check the Neyman-Pearson route's guarantee")
    parser.add_argument("--time-limit", type=float, default=60.0, help="solver time limit per fit (binary settings)")
    parser.add_argument("--budget", type=float, default=math.inf, help="wall seconds for the binary run")
    args = parser.parse_args()
    out = Path(__file__).resolve().parent / "results"
    load, cpu, wall, commit = os.getloadavg()[0], time.process_time(), time.perf_counter(), _commit()
    if args.neyman_pearson:
        text, part, seed0 = np_markdown(run_np(args.reps, args.jobs, out)), "Neyman-Pearson (validity_np.csv)", 20261202
    elif args.binary:
        table = run_binary(args.reps, args.jobs, out, time_limit=args.time_limit, budget=args.budget)
        text, part, seed0 = to_markdown(table), "binary predictors (validity_binary.csv)", 20261201
    else:
        table = run(args.reps, args.jobs, out, resume=args.resume)
        text, part, seed0 = to_markdown(table), "Gaussian classes (validity.csv)", 20261130
    cpu_note = time.process_time() - cpu if args.jobs == 1 else float("nan")  # workers' CPU is not ours
    _record_run(out, part, commit, args.reps, seed0, cpu_note, time.perf_counter() - wall, load)
    write(pd.read_csv(out / "validity.csv"), out)
    print(text)


if __name__ == "__main__":
    main()
