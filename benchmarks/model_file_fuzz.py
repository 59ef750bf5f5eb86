"""Fuzzing the model-file reader: every damaged file is refused or gives the identical model.

A linear model with a factor (formula), an rbf-kernel model and a three-class
model are saved; each
file is mutated ``--n`` times in three ways, in equal shares: one byte
replaced by a random other byte, one bit flipped, and the file truncated at a
random length. Each mutated file is loaded with
:func:`csvm_stats.interfaces.persistence.load_model` and classified:

* ``refused``: :class:`~csvm_stats.interfaces.persistence.ModelFileError` (CLI exit 3);
* ``identical``: it loads, and the model equals the saved one (columns,
  labels, scaling, feature map, coefficients, intercept, formula, report) and
  predicts the same decision values on new data;
* ``other error`` or ``different model``: failures of the reader (must be 0).

Run ``nice -n 10 python benchmarks/model_file_fuzz.py`` (about a minute); it
writes ``benchmarks/results/model_file_fuzz.{json,md}``. The suite runs 200
mutations of the same kinds (tests/test_model_file_fuzz.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.interfaces.persistence import ModelFileError, SavedModel, load_model, save_model

KINDS = ("byte", "bit", "truncate")
RESULTS = Path(__file__).resolve().parent / "results"


def example_frame(n: int, seed: int) -> pd.DataFrame:
    """Two numeric predictors, a three-level factor and a two-class response."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n), "grp": rng.choice(["a", "b", "c"], n)})
    signal = frame["x1"] + 0.5 * frame["x2"] + 0.4 * (frame["grp"] == "b") + 0.7 * rng.normal(size=n)
    frame["y"] = np.where(signal > 0, "pos", "neg")
    return frame


def saved_models(folder: Path) -> dict[str, Path]:
    """A linear formula model, an rbf model and a three-class model saved in ``folder``."""
    from csvm_stats.models.model import CSVM

    data = example_frame(160, 1)
    three = data.assign(y=np.where(data["x2"] > 0.5, "mid", data["y"]))
    fits = {
        "linear": CSVM.from_formula("y ~ .", data, tpr_min=0.8, bound="binomial"),
        "rbf": CSVM.from_formula("y ~ x1 + x2", data, tpr_min=0.8, bound="binomial", kernel="rbf", rank=20),
        "multiclass": CSVM.from_formula("y ~ .", three, recall_min={"pos": 0.7}, bound="none"),
    }
    paths = {}
    for name, model in fits.items():
        paths[name] = save_model(model.fit(random_state=0, time_limit=60), folder / f"{name}.csvm")
    return paths


def mutations(original: bytes, n: int, seed: int) -> Iterator[tuple[str, bytes]]:
    """``n`` mutated copies of ``original``, the kinds of :data:`KINDS` in turn."""
    rng = np.random.default_rng(seed)
    for k in range(n):
        kind = KINDS[k % len(KINDS)]
        data = bytearray(original)
        if kind == "byte":
            position = int(rng.integers(len(data)))
            data[position] = (data[position] + int(rng.integers(1, 256))) % 256
        elif kind == "bit":
            position = int(rng.integers(len(data)))
            data[position] ^= 1 << int(rng.integers(8))
        else:
            data = data[: int(rng.integers(len(data)))]
        yield kind, bytes(data)


def equal(a: Any, b: Any) -> bool:
    """Deep equality of model fields: arrays by value, dataclasses and containers field by field."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, (pd.Series, pd.DataFrame, pd.Index)):
        return a.equals(b)
    if dataclasses.is_dataclass(a):
        return all(equal(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    return bool(a == b)


def same_model(a: SavedModel, b: SavedModel, newdata: pd.DataFrame) -> bool:
    """Whether two loaded models are the same model (every field, and the decision values on ``newdata``).

    The formula is compared by its text and rebuilt structure (formulaic's spec objects have no value equality).
    """
    fields = [f.name for f in dataclasses.fields(a) if f.name != "formula"]
    formulas = (a.formula is None) == (b.formula is None) and (
        a.formula is None
        or equal((a.formula.formula, a.formula.columns, a.formula.inputs, a.formula.parsed),
                 (b.formula.formula, b.formula.columns, b.formula.inputs, b.formula.parsed))
    )
    return (
        equal([getattr(a, f) for f in fields], [getattr(b, f) for f in fields])
        and formulas
        and equal(a.decision_function(newdata), b.decision_function(newdata))
    )


def classify(data: bytes, reference: SavedModel, newdata: pd.DataFrame, folder: Path) -> str:
    """``refused``, ``identical``, ``different model`` or ``other error: <type>`` for one mutated file."""
    path = folder / "mutated.csvm"
    path.write_bytes(data)
    try:
        loaded = load_model(path)
    except ModelFileError:
        return "refused"
    except Exception as error:  # a reader failure: counted, never hidden
        return f"other error: {type(error).__name__}"
    try:
        return "identical" if same_model(reference, loaded, newdata) else "different model"
    except Exception as error:
        return f"other error (using the model): {type(error).__name__}"


def run(n: int, seed: int) -> dict[str, dict[str, dict[str, int]]]:
    """Counts of outcomes by model and mutation kind."""
    newdata = example_frame(50, 2).drop(columns="y")
    counts: dict[str, dict[str, dict[str, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, path in saved_models(folder).items():
            original = path.read_bytes()
            reference = load_model(path)
            by_kind: dict[str, Counter] = {kind: Counter() for kind in KINDS}
            for kind, data in mutations(original, n, seed):
                by_kind[kind][classify(data, reference, newdata, folder)] += 1
            counts[name] = {kind: dict(sorted(c.items())) for kind, c in by_kind.items()}
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="mutations per model file (2000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.process_time()
    counts = run(args.n, args.seed)
    seconds = time.process_time() - started
    failures = sum(v for model in counts.values() for kind in model.values() for k, v in kind.items()
                   if k not in ("refused", "identical"))
    RESULTS.mkdir(exist_ok=True)
    report = {"mutations_per_model": args.n, "seed": args.seed, "cpu_seconds": round(seconds, 1),
              "failures": failures, "counts": counts}
    (RESULTS / "model_file_fuzz.json").write_text(json.dumps(report, indent=1) + "\n")
    lines = [
        "# Model-file fuzzing",
        "",
        f"{args.n} mutations of each saved model (seed {args.seed}), one third each one-byte replacement, "
        f"one-bit flip and truncation; {seconds:.0f} s CPU. `python benchmarks/model_file_fuzz.py`. The ZIP "
        "members carry their write time, so the split between the two good outcomes varies slightly from run to "
        "run; the failures column must be 0 in every run.",
        "",
        "| model | mutation | refused (ModelFileError) | identical model | failures |",
        "|---|---|---|---|---|",
    ]
    for name, by_kind in counts.items():
        for kind, c in by_kind.items():
            bad = {k: v for k, v in c.items() if k not in ("refused", "identical")}
            lines.append(f"| {name} | {kind} | {c.get('refused', 0)} | {c.get('identical', 0)} | {bad or 0} |")
    lines += ["", f"Failures (another exception, or a model that differs): {failures}."]
    (RESULTS / "model_file_fuzz.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
