"""Cost of the default (Venn-Abers) probabilities next to a default CSVM fit, and of the Venn-Abers build.

Part 1 (Wisconsin, 569 rows, default ``CSVM(y, X).fit()``: fractions
(0.5, 0.25, 0.25), so the held-out route calibrates on H = 142 points), in
CPU seconds (``time.process_time``), the steps alternating within each
repeat, median over repeats:

* ``fit``: ``CSVM(y, X).fit()`` and its decision values;
* ``calibration``: :func:`csvm_stats.probability.fit_calibration.calibrate` -
  what the default probabilities add to a fit before anything is predicted
  (sorting H's scores, the PAVA stacks; slots are computed when first needed);
* ``calibration + full table``: the same and every slot's (p0, p1), as a
  saved model file stores it (the previous version built this at every fit);
* ``predict_proba(X)``: the first ``predict_proba`` of all 569 rows on a new
  fit (calibration, slots of 569 points, merging) next to ``predict(X)``.

Part 2: ``VennAbers.fit`` alone on synthetic scores (logistic labels) of n
calibration points: the build, and the build with the full table.

    nice -n 10 python benchmarks/venn_abers_speed.py      # -> results/venn_abers_speed.{md,json}
    python benchmarks/venn_abers_speed.py --quick         # check the script
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

from csvm_stats import CSVM
from csvm_stats.data.datasets import load_dataset
from csvm_stats.probability.fit_calibration import calibrate
from csvm_stats.probability.venn_abers import VennAbers

RESULTS = Path(__file__).resolve().parent / "results"


def cpu(step) -> float:
    """CPU seconds of one call of ``step``."""
    start = time.process_time()
    step()
    return time.process_time() - start


def wisconsin(repeats: int) -> dict:
    X, y = load_dataset("wisconsin")
    steps: dict[str, list[float]] = {k: [] for k in
                                     ("fit", "calibration", "calibration + full table", "predict(X)", "predict_proba(X)")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(repeats):
            fits = []
            steps["fit"].append(cpu(lambda: fits.append(CSVM(y, X).fit(random_state=r).decision_function())))
            res = CSVM(y, X).fit(random_state=r)
            res.decision_function()
            steps["calibration"].append(cpu(lambda: calibrate(res)))
            steps["calibration + full table"].append(cpu(lambda: calibrate(res).predictor.p0))
            steps["predict(X)"].append(cpu(lambda: res.predict(X)))
            steps["predict_proba(X)"].append(cpu(lambda: res.predict_proba(X)))
    med = {k: float(np.median(v)) for k, v in steps.items()}
    return {"median_cpu_seconds": med, "repeats": repeats, "holdout_points": int(res.split.holdout.size),
            "ratio_to_fit": {k: v / med["fit"] for k, v in med.items() if k != "fit"}}


def synthetic(sizes: list[int], repeats: int) -> dict:
    out = {}
    rng = np.random.default_rng(0)
    for n in sizes:
        s = rng.standard_normal(n)
        y = (rng.random(n) < 1 / (1 + np.exp(-3 * s))).astype(int)
        build, full = [], []
        for _ in range(repeats):
            build.append(cpu(lambda: VennAbers.fit(s, y)))
            full.append(cpu(lambda: VennAbers.fit(s, y).p0))
        out[str(n)] = {"build": float(np.median(build)), "build + full table": float(np.median(full))}
    return out


def markdown(result: dict) -> str:
    w = result["wisconsin"]
    m, ratio = w["median_cpu_seconds"], w["ratio_to_fit"]
    lines = ["# Venn-Abers cost", "",
             f"CPU seconds (`time.process_time`), median of {w['repeats']} repeats, steps alternating within each "
             "repeat, on a shared machine (`nice -n 10`). Definitions: docstring of benchmarks/venn_abers_speed.py.", "",
             f"## Wisconsin: default `CSVM(y, X).fit()`, held-out calibration on {w['holdout_points']} points", "",
             "| step | CPU ms | share of a fit |", "|---|---|---|"]
    lines += [f"| {k} | {v * 1e3:.3f} | {'' if k == 'fit' else f'{ratio[k]:.1%}'} |" for k, v in m.items()]
    lines += ["", f"The default probabilities add {ratio['calibration']:.1%} to a default fit (target < 5%). The "
              f"full table of every slot (what a model file stores, and what the previous version built at every "
              f"fit) costs {ratio['calibration + full table']:.1%}; predicting probabilities for all 569 rows "
              f"costs {m['predict_proba(X)'] * 1e3:.2f} ms against {m['predict(X)'] * 1e3:.2f} ms for the classes.", "",
             "## `VennAbers.fit` on n synthetic calibration points (median of repeats)", "",
             "| n | build ms | build + full table ms |", "|---|---|---|"]
    lines += [f"| {n} | {v['build'] * 1e3:.3f} | {v['build + full table'] * 1e3:.3f} |" for n, v in result["synthetic"].items()]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    repeats, sizes = (2, [100]) if args.quick else (args.repeats, [142, 1000, 10000])
    result = {"wisconsin": wisconsin(repeats), "synthetic": synthetic(sizes, max(3, repeats // 3))}
    report = markdown(result)
    print(report)
    stem = "venn_abers_speed" + ("_quick" if args.quick else "")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stem}.md").write_text(report)
    (RESULTS / f"{stem}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
