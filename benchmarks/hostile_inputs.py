"""The hostile-input matrix (issue 26): every case in its own process, under a time and memory limit.

Cases: every row of ``tests/hostile_cases.py`` (R files, formulas, the API, predictions, the
scikit-learn estimator, model files, the command line) plus full-size attacks made here: the
reported inputs at their real size (``saveRDS(1:2000000000)`` written by R, 2 GiB gzip/bz2/xz
bombs at the default byte cap, 3 million NULLs, a ``model.json`` of a million keys, a CSV with a
100 MB cell, ``a*b*...*z`` over 26 columns through ``CSVM.from_formula``), code-execution probes
(a marker file that code in a formula, a model file or an R promise would create) and R files
written by R itself.

Each case runs in a forked child of a process that has imported the package and fitted the example
model once (so the limits measure the case, not the imports): ``resource.setrlimit`` caps the
address space at 4 GiB and the CPU time at 60 s as a backstop, and the parent kills a child after
60 s of wall time. An outcome is

* ``clear``: the documented error type, and the message names the problem (the row's pattern);
* ``ok``: a valid result where one is expected (the row checks it);
* ``silent``: a result where an error was expected;
* ``ugly``: another error type, or a message without the row's pattern;
* ``hang``: more than 10 s of wall time, or killed;
* ``memory``: a peak resident set of the child above 1 GB (RSS includes the ~0.3 GB of imports);
* ``code``: the marker file exists afterwards (code from the input ran).

Run: ``python benchmarks/hostile_inputs.py`` (writes ``benchmarks/results/hostile_inputs.md``).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import hostile_cases as hc  # noqa: E402
from hostile_cases import CASES, Case, Ctx, ExitCode  # noqa: E402

from csvm_stats.exceptions import DataError, FormulaLimitError, InputLimitError  # noqa: E402
from csvm_stats.interfaces.persistence import ModelFileError, load_model  # noqa: E402
from csvm_stats.models.model import CSVM  # noqa: E402
from r_bridge import RFormatError, load_rdata, load_rds  # noqa: E402

TIME_LIMIT = 10.0
MEMORY_LIMIT = 2**30
KILL_AFTER = 60.0
MARKER = "csvm-stats-hostile-marker"
RESULTS = ROOT / "benchmarks" / "results" / "hostile_inputs.md"


# ---------------------------------------------------------------------- full-size attacks
def _letters_frame(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(rng.normal(size=(n, 26)), columns=list("abcdefghijklmnopqrstuvwxyz"))
    frame["resp"] = np.where(frame["a"] > 0, "p", "n")
    return frame


def _from_formula(text: str) -> Any:
    return lambda ctx: CSVM.from_formula(text, _letters_frame(), tpr_min=0.7)


def _marker_absent(run: Any) -> Any:
    def probe(ctx: Ctx) -> Any:
        try:
            return run(ctx)
        finally:
            if (ctx.folder / MARKER).exists() or Path(MARKER).exists():
                raise SystemExit("CODE RAN")

    return probe


def _touch_code(ctx: Ctx) -> str:
    return f"__import__('pathlib').Path({str(ctx.folder / MARKER)!r}).touch()"


def _many_keys_model(ctx: Ctx) -> Any:
    body = ("{" + ",".join(f'"k{i}":0' for i in range(1_000_000)) + "}").encode()
    return load_model(ctx.rewritten("million.csvm", raw_json=body))


def _big_cell(ctx: Ctx) -> Any:
    path = ctx.folder / "cell100.csv"
    with open(path, "w") as out:
        out.write("a,y\n")
        for _ in range(100):
            out.write("x" * 1_000_000)
        out.write(",1\n")
    return ctx.cli("fit", path, "-f", "y ~ .", "--tpr-min", "0.7")


def _prebuilt(name: str) -> Path:
    return PREBUILT / name


def _r_script(code: str, name: str) -> None:
    if shutil.which("Rscript") is None:
        return
    subprocess.run(["Rscript", "-e", code], cwd=PREBUILT, capture_output=True, timeout=120, check=False)


def build_prebuilt() -> None:
    """Files too large or slow to make per case: bombs, R-written files."""
    for kind, suffix in (("gzip", "gz"), ("bz2", "bz2"), ("xz", "xz")):
        (PREBUILT / f"bomb.{suffix}.rds").write_bytes(hc.zeros_bomb(kind, 2**31))
    nulls = hc.rds(hc.xint(19, 3_000_000) + hc.NIL * 3_000_000, "gzip")
    (PREBUILT / "nulls.rds").write_bytes(nulls)
    _r_script(
        'saveRDS(1:2000000000, "seq.rds"); '
        'saveRDS(data.frame(a = 1:3, b = c("x", NA, "z"), f = factor(c("u", "v", "u")), d = as.Date("2020-01-01") + 0:2), "df.rds"); '
        'saveRDS(list(1, NULL, "a", list(TRUE)), "list.rds"); '
        'saveRDS(as.character(1:5), "defer.rds"); '
        'saveRDS(new.env(), "env.rds"); '
        'saveRDS(function(x) x + 1, "fun.rds"); '
        'saveRDS(quote(system("touch ' + MARKER + '")), "lang.rds"); '
        'x <- 1; save(x, file = "x.rda"); '
        'saveRDS(c(a = 1.5, b = NA), "named.rds", compress = "xz"); '
        'saveRDS(matrix(1:6, 2), "matrix.rds", compress = "bzip2")',
        "r",
    )


def _r_valid(name: str, check: Any) -> Any:
    def run(ctx: Ctx) -> Any:
        path = _prebuilt(name)
        if not path.exists():
            raise SystemExit(f"SKIP: {name} not written (no Rscript)")
        value = (load_rdata if name.endswith(".rda") else load_rds)(path)
        assert check(value), value
        return value

    return run


def _r_refused(name: str) -> Any:
    def run(ctx: Ctx) -> Any:
        path = _prebuilt(name)
        if not path.exists():
            raise SystemExit(f"SKIP: {name} not written (no Rscript)")
        return load_rds(path)

    return run


PROMISE = ROOT / "tests" / "test_r_bridge_data" / "promise.RData"
EXTRA_CASES = [
    Case("full: saveRDS(1:2000000000) written by R", "R", _r_refused("seq.rds"), InputLimitError, r"compact sequence of 2000000000"),
    Case("full: 2 GiB gzip bomb", "R", lambda c: load_rds(_prebuilt("bomb.gz.rds")), InputLimitError, r"decompresses to more than 134217728"),
    Case("full: 2 GiB bz2 bomb", "R", lambda c: load_rds(_prebuilt("bomb.bz2.rds")), InputLimitError, r"decompresses to more than 134217728"),
    Case("full: 2 GiB xz bomb", "R", lambda c: load_rds(_prebuilt("bomb.xz.rds")), InputLimitError, r"decompresses to more than 134217728"),
    Case("full: 3 million NULLs", "R", lambda c: load_rds(_prebuilt("nulls.rds")), InputLimitError, r"max_nodes"),
    Case("full: model.json of a million keys", "model", _many_keys_model, ModelFileError, r"1000000 object keys, more than 100000"),
    Case("full: CSV with a 100 MB cell", "cli", _big_cell, ExitCode, r"longer than 8388608 characters \(CSVM_STATS_CSV_MAX_LINE\)"),
    Case("full: a*b*...*z over 26 columns", "formula", _from_formula("resp ~ " + "*".join("abcdefghijklmnopqrstuvwxyz")), FormulaLimitError, r"MAX_TERMS"),
    Case("full: (a+...+z)**10", "formula", _from_formula("resp ~ (" + "+".join("abcdefghijklmnopqrstuvwxyz") + ")**10"), FormulaLimitError, r"MAX_TERMS"),
    Case("full: (.)**10 over 26 columns", "formula", _from_formula("resp ~ (.)**10"), FormulaLimitError, r"MAX_TERMS"),
    Case("code: formula term with Python code (API)", "formula", _marker_absent(lambda c: CSVM.from_formula("y ~ u1 + " + _touch_code(c), c.frame, tpr_min=0.7)), DataError, r"string literals|function calls"),
    Case("code: formula term with Python code (CLI)", "cli", _marker_absent(lambda c: c.cli("fit", c.csv, "-f", "y ~ " + _touch_code(c), "--tpr-min", "0.7")), ExitCode, r"exit 4"),
    Case("code: model-file term with Python code", "model", _marker_absent(lambda c: load_model(c.rewritten("code2.csvm", metadata=lambda m: m["formula"]["terms"].append([_touch_code(c)])))), ModelFileError, r"builds the design columns"),
    Case("code: R promise (CVE-2024-27322)", "R", _marker_absent(lambda c: load_rdata(PROMISE)), RFormatError, r"promise"),
    Case("code: R language object from R", "R", _marker_absent(_r_refused("lang.rds")), RFormatError, r"language object"),
    Case("r from R: environment", "R", _r_refused("env.rds"), RFormatError, r"environment"),
    Case("r from R: function", "R", _r_refused("fun.rds"), RFormatError, r"closure"),
    Case("r from R: data frame with a Date", "R", _r_valid("df.rds", lambda v: list(v.columns) == ["a", "b", "f", "d"] and v["b"].isna().sum() == 1), None),
    Case("r from R: list with NULL", "R", _r_valid("list.rds", lambda v: len(v) == 4 and v[1] is None), None),
    Case("r from R: as.character(1:5) (deferred string)", "R", _r_valid("defer.rds", lambda v: v.tolist() == ["1", "2", "3", "4", "5"]), None),
    Case("r from R: .rda", "R", _r_valid("x.rda", lambda v: float(v["x"].iloc[0]) == 1.0), None),
    Case("r from R: named doubles, xz", "R", _r_valid("named.rds", lambda v: v["a"] == 1.5 and np.isnan(v["b"])), None),
    Case("r from R: integer matrix, bzip2", "R", _r_valid("matrix.rds", lambda v: v.shape == (2, 3)), None),
]


# ---------------------------------------------------------------------- running
def _child(case: Case, ctx: Ctx, folder: Path, write: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))
    resource.setrlimit(resource.RLIMIT_CPU, (60, 60))
    ctx.folder = folder
    os.chdir(folder)
    start = time.perf_counter()
    try:
        outcome, detail = hc.run_case(case, ctx)
    except BaseException as error:  # noqa: BLE001 - a SystemExit from a probe
        outcome, detail = ("skip" if str(error).startswith("SKIP") else "ugly"), str(error)
    elapsed = time.perf_counter() - start
    if (folder / MARKER).exists():
        outcome, detail = "code", "the marker file was created"
    if detail == "CODE RAN":
        outcome = "code"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    os.write(write, json.dumps({"outcome": outcome, "detail": detail, "seconds": elapsed, "rss": rss}).encode())
    os._exit(0)


def run_one(case: Case, ctx: Ctx, folder: Path) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        _child(case, ctx, folder, write)
    os.close(write)
    start = time.monotonic()
    status = None
    while time.monotonic() - start < KILL_AFTER:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.02)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(read)
        return {"outcome": "hang", "detail": f"killed after {KILL_AFTER:.0f} s", "seconds": KILL_AFTER, "rss": 0}
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    if not chunks:
        return {"outcome": "crash", "detail": f"child ended with status {status}", "seconds": 0, "rss": 0}
    result = json.loads(b"".join(chunks))
    if result["outcome"] in ("clear", "ok", "silent", "ugly") and result["seconds"] > TIME_LIMIT:
        result["detail"] = f"{result['outcome']} after {result['seconds']:.1f} s"
        result["outcome"] = "hang"
    if result["outcome"] in ("clear", "ok", "silent", "ugly") and result["rss"] > MEMORY_LIMIT:
        result["detail"] = f"{result['outcome']} at {result['rss'] / 2**20:.0f} MiB"
        result["outcome"] = "memory"
    return result


def main() -> None:
    global PREBUILT
    work = Path(tempfile.mkdtemp(prefix="hostile-"))
    PREBUILT = work / "prebuilt"
    PREBUILT.mkdir()
    started = time.perf_counter()
    build_prebuilt()
    ctx = Ctx(work / "shared")
    ctx.folder.mkdir()
    ctx.model_file, ctx.csv  # fit and save once, before forking: the children inherit them
    cases = CASES + EXTRA_CASES
    rows = []
    for number, case in enumerate(cases):
        result = run_one(case, ctx, work / f"case{number}")
        rows.append((case, result))
        print(f"{result['outcome']:7s} {result['seconds']:6.2f}s {result['rss'] / 2**20:7.0f}MiB  {case.name}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    write_results(rows, time.perf_counter() - started)


def write_results(rows: list[tuple[Case, dict[str, Any]]], seconds: float) -> None:
    counts = Counter(result["outcome"] for _, result in rows)
    counted = [r for r in rows if r[1]["outcome"] != "skip"]
    n = len(counted)
    by_area: dict[str, Counter] = {}
    for case, result in counted:
        by_area.setdefault(case.area, Counter())[result["outcome"]] += 1
    kinds = ["clear", "ok", "silent", "ugly", "hang", "memory", "code", "crash"]
    lines = [
        "# Hostile-input matrix (issue 26)",
        "",
        f"`python benchmarks/hostile_inputs.py`: {n} cases ({len(rows) - n} skipped), each in a forked child "
        f"under RLIMIT_AS 4 GiB and RLIMIT_CPU 60 s; a case is a hang above {TIME_LIMIT:.0f} s of wall time and a "
        f"memory failure above {MEMORY_LIMIT / 2**30:.0f} GiB peak RSS (the child's whole RSS, imports "
        f"included). Whole run {seconds:.0f} s wall on the shared 2-core machine.",
        "",
        "| outcome | cases | share |",
        "|---|---:|---:|",
    ]
    for kind in kinds:
        lines.append(f"| {kind} | {counts.get(kind, 0)} | {100 * counts.get(kind, 0) / max(n, 1):.1f}% |")
    lines += ["", "By area:", "", "| area | " + " | ".join(kinds) + " |", "|---|" + "---:|" * len(kinds)]
    for area, area_counts in sorted(by_area.items()):
        lines.append(f"| {area} | " + " | ".join(str(area_counts.get(k, 0)) for k in kinds) + " |")
    slowest = sorted(counted, key=lambda r: -r[1]["seconds"])[:8]
    largest = sorted(counted, key=lambda r: -r[1]["rss"])[:8]
    lines += ["", "Slowest cases (wall seconds of the case itself):", ""]
    lines += [f"- {r['seconds']:.2f} s: {c.name} ({r['outcome']})" for c, r in slowest]
    lines += ["", "Largest peak RSS (whole child process):", ""]
    lines += [f"- {r['rss'] / 2**20:.0f} MiB: {c.name} ({r['outcome']})" for c, r in largest]
    bad = [(c, r) for c, r in rows if r["outcome"] not in ("clear", "ok")]
    lines += ["", "Every case not `clear` or `ok`:", ""]
    lines += [f"- {r['outcome']}: {c.name}: {r['detail']}" for c, r in bad] or ["- none"]
    lines += ["", "All cases:", "", "| case | area | outcome | s | MiB |", "|---|---|---|---:|---:|"]
    lines += [
        f"| {c.name.replace('|', '/')} | {c.area} | {r['outcome']} | {r['seconds']:.2f} | {r['rss'] / 2**20:.0f} |"
        for c, r in rows
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[: 12 + len(kinds)]))


PREBUILT = Path(".")

if __name__ == "__main__":
    main()
