"""Hostile and degenerate inputs, one row each: what to run, and the error it must raise (issue 26).

Shared by ``tests/test_hostile_inputs.py`` (each row in the test process,
asserting the error type and that the message names the problem) and
``benchmarks/hostile_inputs.py`` (each row in a subprocess under a time and
memory limit, counting hangs, silent results and ugly errors). A row is
``Case(name, area, run, error, match)``: ``run(ctx)`` acts on a
:class:`Ctx` (a temporary folder, a data frame, a fitted model made on
first use); ``error`` is the exception type it must raise and ``match`` a
regular expression its message must contain, or ``error=None`` for an input
that must give a valid result (``run`` then checks the result itself).
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import os
import string
import struct
import sys
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.exceptions import (
    DataError,
    FormulaError,
    FormulaLimitError,
    InputFileError,
    InputLimitError,
    MissingFileError,
)
from csvm_stats.interfaces.cli import EXIT_DATA, EXIT_FILE, EXIT_FORMULA, main
from csvm_stats.interfaces.persistence import ModelFileError, ModelFileLimitError, load_model, save_model
from csvm_stats.models.model import CSVM
from csvm_stats.preprocessing.formula import build_design
from csvm_stats.preprocessing.formula_grammar import parse_formula
from r_bridge import ReadLimits, RFormatError, load_rdata, load_rds


class ExitCode(Exception):
    """The command line returned ``code`` and wrote ``stderr`` (raised so that rows compare like errors)."""

    def __init__(self, code: int, stderr: str) -> None:
        super().__init__(f"exit {code}: {stderr}")
        self.code = code


@dataclass(frozen=True)
class Case:
    name: str
    area: str
    run: Callable[[Ctx], Any]
    error: type[BaseException] | None
    match: str = ""


def make_frame(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"u1": rng.normal(size=n), "u2": rng.normal(size=n), "cat": rng.choice(["r", "s", "t"], n)})
    frame["y"] = np.where(frame["u1"] + 0.5 * rng.normal(size=n) > 0, "p", "n")
    return frame


class Ctx:
    """A temporary folder, the example frame, and a fitted model and its file (made on first use)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.frame = make_frame()

    @cached_property
    def results(self) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return CSVM.from_formula("y ~ u1 + u2 + cat", self.frame, tpr_min=0.7).fit(random_state=0)

    @cached_property
    def model_file(self) -> Path:
        return save_model(self.results, self.folder / "model.csvm")

    @cached_property
    def csv(self) -> Path:
        path = self.folder / "data.csv"
        self.frame.to_csv(path, index=False)
        return path

    def file(self, name: str, data: bytes) -> Path:
        path = self.folder / name
        path.write_bytes(data)
        return path

    def fifo(self, name: str) -> Path:
        path = self.folder / name
        if not path.exists():
            os.mkfifo(path)
        return path

    def link(self, name: str, target: str) -> Path:
        path = self.folder / name
        if not path.is_symlink():
            path.symlink_to(target)
        return path

    def rewritten(self, name: str, metadata: Callable[[dict], Any] | None = None,
                  arrays: dict[str, np.ndarray] | None = None, raw_json: bytes | None = None,
                  extra: dict[str, bytes] | None = None) -> Path:
        """A copy of the model file with its metadata or arrays changed."""
        target = self.folder / name
        with zipfile.ZipFile(self.model_file) as source, zipfile.ZipFile(target, "w") as copy:
            for info in source.infolist():
                body = source.read(info.filename)
                if info.filename == "model.json":
                    if raw_json is not None:
                        body = raw_json
                    elif metadata is not None:
                        meta = json.loads(body)
                        metadata(meta)
                        body = json.dumps(meta).encode()
                stem = info.filename.removeprefix("arrays/").removesuffix(".npy")
                if arrays and stem in arrays:
                    buffer = io.BytesIO()
                    np.save(buffer, arrays[stem])
                    body = buffer.getvalue()
                copy.writestr(info.filename, body)
            for member, body in (extra or {}).items():
                copy.writestr(member, body)
        return target

    def cli(self, *argv: str, stdout: Any = None) -> int:
        """Run the command line in this process; a non-zero exit is raised as :class:`ExitCode`."""
        err = io.StringIO()
        out = stdout if stdout is not None else io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = main([str(a) for a in argv])
        if code != 0:
            raise ExitCode(code, err.getvalue())
        return code


# ---------------------------------------------------------------------- R files
def xint(*values: int) -> bytes:
    return struct.pack(f">{len(values)}i", *values)


def xdbl(*values: float) -> bytes:
    return struct.pack(f">{len(values)}d", *values)


HEADER = b"X\n" + xint(3, 0x040202, 0x030500, 5) + b"UTF-8"
NIL = xint(254)


def char(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return xint(0x00040009, len(raw)) + raw


def sym(name: str) -> bytes:
    return xint(1) + char(name)


def ints(*values: int) -> bytes:
    return xint(13, len(values), *values)


def dbls(*values: float) -> bytes:
    return xint(14, len(values)) + xdbl(*values)


def strs(*values: str) -> bytes:
    return xint(16, len(values)) + b"".join(char(v) for v in values)


def vec(*items: bytes) -> bytes:
    return xint(19, len(items)) + b"".join(items)


def altrep(klass: str, state: bytes) -> bytes:
    info = xint(2) + sym(klass) + xint(2) + sym("base") + xint(2) + ints(13) + NIL
    return xint(238) + info + state + NIL


def named(body_flags: int, body: bytes, names: list[str]) -> bytes:
    """A vector with a ``names`` attribute (flags get the attribute bit)."""
    return xint(body_flags | (1 << 9)) + body + xint(0x402) + sym("names") + strs(*names) + NIL


def rds(body: bytes, compress: str | None = None) -> bytes:
    data = HEADER + body
    if compress == "gzip":
        return gzip.compress(data)
    if compress == "bz2":
        return bz2.compress(data)
    if compress == "xz":
        return lzma.compress(data)
    return data


def rda(objects: dict[str, bytes]) -> bytes:
    body = b"".join(xint(0x402) + sym(name) + value for name, value in objects.items()) + NIL
    return b"RDX3\n" + HEADER + body


def zeros_bomb(kind: str, size: int) -> bytes:
    """A compressed .rds of a double vector of ``size`` bytes of zeros, compressed in a stream."""
    n = size // 8
    head = HEADER + xint(14, -1, n >> 32, n & 0xFFFFFFFF)
    compressor = {"gzip": lambda: zlib_gzip(), "bz2": lambda: bz2.BZ2Compressor(1), "xz": lambda: lzma.LZMACompressor(preset=0)}[kind]()
    out = [compressor.compress(head)]
    chunk = bytes(1 << 22)
    for _ in range(size >> 22):
        out.append(compressor.compress(chunk))
    out.append(compressor.flush())
    return b"".join(out)


def zlib_gzip() -> Any:
    import zlib

    return zlib.compressobj(1, zlib.DEFLATED, 31)


def r_file(name: str, data: bytes, reader: Callable = load_rds, **kwargs: Any) -> Callable[[Ctx], Any]:
    def run(ctx: Ctx) -> Any:
        return reader(ctx.file(name, data), **kwargs)

    return run


def r_valid(name: str, data: bytes, check: Callable[[Any], bool], reader: Callable = load_rds) -> Callable[[Ctx], Any]:
    def run(ctx: Ctx) -> Any:
        value = reader(ctx.file(name, data))
        assert check(value), f"unexpected result {value!r}"
        return value

    return run


TEN = dbls(*range(10))
R_CASES = [
    Case("r: last 24 bytes cut", "R", r_file("cut.rds", rds(TEN)[:-24]), RFormatError, r"needs 80 bytes but only 56.*byte offset"),
    Case("r: declared length 2^31-1, 16 bytes", "R", r_file("l31.rds", rds(xint(14, 2**31 - 1) + xdbl(1, 2))), RFormatError, r"2147483647 elements.*needs"),
    Case("r: long length 2^52, 16 bytes", "R", r_file("l52.rds", rds(xint(14, -1, 2**20, 0) + xdbl(1, 2))), RFormatError, r"needs \d+ bytes"),
    Case("r: long length above 2^52", "R", r_file("l53.rds", rds(xint(14, -1, 2**21, 0) + xdbl(1, 2))), RFormatError, r"more than R allows"),
    Case("r: negative length -5", "R", r_file("neg.rds", rds(xint(14, -5) + xdbl(1, 2))), RFormatError, r"negative length -5.*byte offset 27"),
    Case("r: negative long length", "R", r_file("negl.rds", rds(xint(13, -1, -1, 5) + xint(1, 2))), RFormatError, r"long length.*negative"),
    Case("r: integer vector cut", "R", r_file("icut.rds", rds(ints(*range(10))[:-4])), RFormatError, r"integer vector of 10 elements"),
    Case("r: complex vector cut", "R", r_file("ccut.rds", rds(xint(15, 3) + xdbl(1, 2, 3))), RFormatError, r"complex vector of 3"),
    Case("r: string longer than the file", "R", r_file("slong.rds", rds(xint(16, 1, 0x00040009, 1000) + b"abc")), RFormatError, r"string of 1000 bytes"),
    Case("r: string of negative length", "R", r_file("sneg.rds", rds(xint(16, 1, 0x00040009, -7))), RFormatError, r"negative length -7"),
    Case("r: character vector element not a string", "R", r_file("selem.rds", rds(xint(16, 1) + ints(1))), RFormatError, r"not a string"),
    Case("r: string not UTF-8", "R", r_file("utf.rds", rds(xint(16, 1) + xint(0x00008009, 2) + b"\xff\xfe")), RFormatError, r"not valid UTF-8"),
    Case("r: list of 2^31-1 elements in 8 bytes", "R", r_file("vlong.rds", rds(xint(19, 2**31 - 1) + NIL + NIL)), RFormatError, r"list of 2147483647 elements"),
    Case("r: bytes after the object", "R", r_file("tail.rds", rds(TEN) + b"garbage"), RFormatError, r"7 bytes follow"),
    Case("r: empty file", "R", r_file("empty.rds", b""), RFormatError, r"serialisation header"),
    Case("r: text file", "R", r_file("text.rds", b"hello, world\n" * 10), RFormatError, r"serialisation header"),
    Case("r: ASCII serialisation", "R", r_file("ascii.rds", b"A\n3\n"), RFormatError, r"re-save it with saveRDS"),
    Case("r: format version 4", "R", r_file("v4.rds", b"X\n" + xint(4, 0, 0) + TEN), RFormatError, r"format version 4"),
    Case("r: native encoding of 1000 bytes", "R", r_file("enc.rds", b"X\n" + xint(3, 0, 0, 1000) + b"UTF-8"), RFormatError, r"native-encoding name of 1000"),
    Case("r: reference to a missing object", "R", r_file("ref.rds", rds(xint(255 | (7 << 8)))), RFormatError, r"reference to object 7 of 0"),
    Case("r: closure", "R", r_file("clo.rds", rds(xint(3) + NIL)), RFormatError, r"closure \(function\)"),
    Case("r: promise", "R", r_file("prom.rds", rds(xint(5) + NIL)), RFormatError, r"promise.*CVE-2024-27322"),
    Case("r: environment", "R", r_file("env.rds", rds(xint(4) + xint(0))), RFormatError, r"environment"),
    Case("r: global environment", "R", r_file("genv.rds", rds(xint(253))), RFormatError, r"global environment"),
    Case("r: language object", "R", r_file("lang.rds", rds(xint(6) + sym("system") + NIL)), RFormatError, r"language object"),
    Case("r: S4 object", "R", r_file("s4.rds", rds(xint(25))), RFormatError, r"S4 object"),
    Case("r: byte code", "R", r_file("bc.rds", rds(xint(21))), RFormatError, r"byte code"),
    Case("r: external pointer", "R", r_file("ptr.rds", rds(xint(22))), RFormatError, r"external pointer"),
    Case("r: builtin function", "R", r_file("bi.rds", rds(xint(8))), RFormatError, r"builtin function"),
    Case("r: unknown type 99", "R", r_file("u99.rds", rds(xint(99))), RFormatError, r"unknown type 99"),
    Case("r: raw vector", "R", r_file("raw.rds", rds(xint(24, 3) + b"abc")), RFormatError, r"raw vector"),
    Case("r: compact 1:2000000000", "R", r_file("seq.rds", rds(altrep("compact_intseq", dbls(2e9, 1, 1)), "gzip")), InputLimitError, r"compact sequence of 2000000000.*max_elements"),
    Case("r: compact real sequence of 1e15", "R", r_file("rseq.rds", rds(altrep("compact_realseq", dbls(1e15, 1, 1)))), InputLimitError, r"max_elements"),
    Case("r: compact sequence with NaN length", "R", r_file("nseq.rds", rds(altrep("compact_intseq", dbls(float("nan"), 1, 1)))), RFormatError, r"compact_intseq with the state"),
    Case("r: compact sequence with negative length", "R", r_file("mseq.rds", rds(altrep("compact_intseq", dbls(-3, 1, 1)))), RFormatError, r"compact_intseq with the state"),
    Case("r: compact integer sequence past 2^31", "R", r_file("oseq.rds", rds(altrep("compact_intseq", dbls(10, 2**31 - 5, 1)))), RFormatError, r"compact_intseq"),
    Case("r: compact sequence state of 2 numbers", "R", r_file("sseq.rds", rds(altrep("compact_intseq", dbls(3, 1)))), RFormatError, r"not \(length, start, step\)"),
    Case("r: unknown ALTREP class", "R", r_file("alt.rds", rds(altrep("mmap_real", dbls(1)))), RFormatError, r"ALTREP object of class 'mmap_real'"),
    Case("r: nesting 500 deep", "R", r_file("deep.rds", rds(xint(19, 1) * 500 + NIL)), InputLimitError, r"deeper than 100.*max_depth"),
    Case("r: 300,000 NULLs", "R", r_file("nulls.rds", rds(xint(19, 300_000) + NIL * 300_000, "gzip")), InputLimitError, r"max_nodes"),
    Case("r: strings past max_items", "R", r_file("many.rds", rds(strs(*["a"] * 2000)), limits=ReadLimits(max_items=1000)), InputLimitError, r"more than 1000 strings"),
    Case("r: gzip bomb", "R", r_file("gz.rds", zeros_bomb("gzip", 2**24), limits=ReadLimits(max_bytes=2**20)), InputLimitError, r"decompresses to more than 1048576.*max_bytes"),
    Case("r: bz2 bomb", "R", r_file("bz.rds", zeros_bomb("bz2", 2**24), limits=ReadLimits(max_bytes=2**20)), InputLimitError, r"decompresses to more than"),
    Case("r: xz bomb", "R", r_file("xz.rds", zeros_bomb("xz", 2**24), limits=ReadLimits(max_bytes=2**20)), InputLimitError, r"decompresses to more than"),
    Case("r: uncompressed file past max_bytes", "R", r_file("bigraw.rds", rds(dbls(*range(1000))), limits=ReadLimits(max_bytes=1000)), InputLimitError, r"larger than 1000 bytes"),
    Case("r: truncated gzip", "R", r_file("tgz.rds", rds(TEN, "gzip")[:-12]), RFormatError, r"gzip data end early"),
    Case("r: damaged gzip", "R", r_file("dgz.rds", rds(TEN, "gzip")[:12] + b"\xff" * 40), RFormatError, r"gzip data (are damaged|end early)"),
    Case("r: damaged bz2", "R", r_file("dbz.rds", rds(TEN, "bz2")[:10] + b"\x00" * 40), RFormatError, r"bzip2 data are damaged"),
    Case("r: damaged xz", "R", r_file("dxz.rds", rds(TEN, "xz")[:20] + b"\x00" * 40), RFormatError, r"xz data are damaged"),
    Case("r: load_rds on an .rda", "R", r_file("obj.rda", rda({"a": TEN})), RFormatError, r"load_rdata"),
    Case("r: load_rdata on an .rds", "R", r_file("one.rds", rds(TEN), reader=load_rdata), RFormatError, r"load_rds"),
    Case("r: rda object without a name", "R", r_file("noname.rda", b"RDX3\n" + HEADER + xint(2) + TEN + NIL, reader=load_rdata), RFormatError, r"without a name"),
    Case("r: rda of nothing", "R", r_file("none.rda", b"RDX3\n" + HEADER + NIL, reader=load_rdata), RFormatError, r"not a list of named objects|no named"),
    Case("r: attribute without a name", "R", r_file("attr.rds", rds(xint(14 | (1 << 9), 1) + xdbl(1) + xint(2) + dbls(2) + NIL)), RFormatError, r"attribute without a name"),
    Case("r: pairlist tag not a symbol", "R", r_file("tag.rds", rds(xint(0x402) + dbls(1) + dbls(2) + NIL)), RFormatError, r"tag that is not a symbol"),
    Case("r: a directory", "R", lambda c: load_rds(c.folder), InputFileError, r"is a directory"),
    Case("r: a missing file", "R", lambda c: load_rds(c.folder / "absent.rds"), MissingFileError, r"does not exist"),
    Case("r: /dev/null", "R", lambda c: load_rds("/dev/null"), InputFileError, r"character device"),
    Case("r: a FIFO", "R", lambda c: load_rds(c.fifo("pipe.rds")), InputFileError, r"named pipe \(FIFO\)"),
    Case("r: a symlink to /dev/zero", "R", lambda c: load_rdata(c.link("zero.rda", "/dev/zero")), InputFileError, r"symbolic link to '/dev/zero'.*character device"),
    Case("r: a path that is a number", "R", lambda c: load_rds(42), InputFileError, r"must be a string or a pathlib.Path, got int"),
    Case("r: valid compact 1:10", "R", r_valid("ok.rds", rds(altrep("compact_intseq", dbls(10, 1, 1))), lambda v: v.tolist() == list(range(1, 11))), None),
    Case("r: valid named doubles, gzip", "R", r_valid("okn.rds", rds(named(14, xint(2) + xdbl(1.5, 2.5), ["a", "b"]), "gzip"), lambda v: v["b"] == 2.5), None),
    Case("r: valid, bytes path", "R", lambda c: load_rds(bytes(c.file("okb.rds", rds(TEN)))), None),
    Case("r: valid rda of two objects, xz", "R", r_valid("ok.rda", lzma.compress(rda({"a": TEN, "b": strs("x")})), lambda v: set(v) == {"a", "b"}, load_rdata), None),
]


# ---------------------------------------------------------------------- formulas
COLS = list(string.ascii_lowercase[:20]) + ["y"]


def formula(text: str, columns: list[str] = COLS) -> Callable[[Ctx], Any]:
    return lambda ctx: parse_formula(text, columns)


FORMULA_CASES = [
    Case("formula: a*b*...*t (2^20 terms)", "formula", formula("y ~ " + "*".join(COLS[:20])), FormulaLimitError, r"more than the cap of 10000.*MAX_TERMS"),
    Case("formula: (a+...+t)**10", "formula", formula("y ~ (" + "+".join(COLS[:20]) + ")**10"), FormulaLimitError, r"MAX_TERMS"),
    Case("formula: (.)**10", "formula", formula("y ~ (.)**10"), FormulaLimitError, r"MAX_TERMS"),
    Case("formula: .:.:.:.:.", "formula", formula("y ~ .:.:.:.:."), FormulaLimitError, r"up to \d+ terms"),
    Case("formula: sum of many products", "formula", formula("y ~ (a*b*c*d*e*f*g*h*i*j*k*l*m) + (h*i*j*k*l*m*n*o*p*q*r*s*t)"), FormulaLimitError, r"MAX_TERMS"),
    Case("formula: ** 11", "formula", formula("y ~ (a+b)**11"), FormulaError, r"whole number from 1 to 10"),
    Case("formula: ** 0", "formula", formula("y ~ (a+b)**0"), FormulaError, r"whole number from 1 to 10"),
    Case("formula: ** -1", "formula", formula("y ~ (a+b)**-1"), FormulaError, r"whole number"),
    Case("formula: ** huge number", "formula", formula("y ~ a**" + "9" * 400), FormulaError, r"whole number"),
    Case("formula: 60 nested parentheses", "formula", formula("y ~ " + "(" * 60 + "a" + ")" * 60), FormulaError, r"nested deeper than 50"),
    Case("formula: 20,000 characters", "formula", formula("y ~ " + "+".join(["a"] * 10_000)), FormulaError, r"at most 10000"),
    Case("formula: lambda", "formula", formula("y ~ (lambda: 1)()"), FormulaError, r"'lambda', which is not in the data"),
    Case("formula: __import__", "formula", formula("y ~ __import__('os')"), FormulaError, r"string literals are not part of a formula"),
    Case("formula: __import__ without a string", "formula", formula("y ~ __import__(os)"), FormulaError, r"function calls such as __import__"),
    Case("formula: braces", "formula", formula("y ~ {a}"), FormulaError, r"braces hold Python code"),
    Case("formula: attribute chain", "formula", formula("y ~ a.__class__"), FormulaError, r"not in the data"),
    Case("formula: I()", "formula", formula("y ~ I(a)"), FormulaError, r"function calls"),
    Case("formula: string literal", "formula", formula("y ~ 'a'"), FormulaError, r"string literals"),
    Case("formula: two tildes", "formula", formula("y ~ a ~ b"), FormulaError, r"response ~ terms"),
    Case("formula: no tilde", "formula", formula("a + b"), FormulaError, r"response ~ terms"),
    Case("formula: bytes", "formula", formula(b"y ~ a"), FormulaError, r"must be a string"),
    Case("formula: None", "formula", formula(None), FormulaError, r"must be a string"),
    Case("formula: unknown column", "formula", formula("y ~ zz"), FormulaError, r"'zz', which is not in the data"),
    Case("formula: response as predictor", "formula", formula("y ~ a + y"), FormulaError, r"uses the response 'y'"),
    Case("formula: only the intercept", "formula", formula("y ~ 1"), FormulaError, r"no predictor"),
    Case("formula: - everything", "formula", formula("y ~ a - a"), FormulaError, r"no predictor"),
    Case("formula: unclosed backquote", "formula", formula("y ~ `a"), FormulaError, r"closed on the same line"),
    Case("formula: empty backquotes", "formula", formula("y ~ ` `"), FormulaError, r"empty backquoted name"),
    Case("formula: C of two columns", "formula", formula("y ~ C(a, b)"), FormulaError, r"exactly one column"),
    Case("formula: number 2 as a term", "formula", formula("y ~ a + 2"), FormulaError, r"numbers other than 0 and 1"),
    Case("formula: 0 in a product", "formula", formula("y ~ a * 0"), FormulaError, r"0 cannot be used"),
    Case("formula: NUL character", "formula", formula("y ~ a\x00"), FormulaError, r"position"),
    Case("formula: valid (a+b+c)**3", "formula", lambda c: len(parse_formula("y ~ (a+b+c)**3", COLS).terms) == 7 or 1 / 0, None),
]


# ---------------------------------------------------------------------- data through the API
def design(change: Callable[[pd.DataFrame], pd.DataFrame], text: str = "y ~ .") -> Callable[[Ctx], Any]:
    def run(ctx: Ctx) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return build_design(text, change(ctx.frame.copy()))

    return run


def fit(change: Callable[[pd.DataFrame], pd.DataFrame], text: str = "y ~ .", **kwargs: Any) -> Callable[[Ctx], Any]:
    def run(ctx: Ctx) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            options = kwargs or {"tpr_min": 0.7}
            return CSVM.from_formula(text, change(ctx.frame.copy()), **options).fit(random_state=0)

    return run


def valid_design(change: Callable[[pd.DataFrame], pd.DataFrame], columns: list[str], text: str = "y ~ .") -> Callable[[Ctx], Any]:
    def run(ctx: Ctx) -> Any:
        _, X, _ = build_design(text, change(ctx.frame.copy()))
        assert list(X.columns) == columns, list(X.columns)
        return X

    return run


def _assign(**columns: Any) -> Callable[[pd.DataFrame], pd.DataFrame]:
    return lambda frame: frame.assign(**{k: (v(frame) if callable(v) else v) for k, v in columns.items()})


def _collide(frame: pd.DataFrame) -> pd.DataFrame:
    frame["cat[T.s]"] = 1.0
    return frame


N = 120
API_CASES = [
    Case("api: numeric column 'cat[T.s]' beside factor 'cat'", "api", design(_collide), DataError, r"both be named \['cat\[T.s\]'\].*rename"),
    Case("api: column at +-1e308", "api", design(_assign(u1=lambda f: np.where(f.u1 > 0, 1e308, -1e308))), DataError, r"'u1' has values as large as 1e\+308.*rescale"),
    Case("api: column at 1e306", "api", design(_assign(u1=lambda f: f.u1 * 1e306)), DataError, r"'u1'.*more than 1e\+305"),
    Case("api: column spread 1e-307", "api", design(_assign(u1=lambda f: f.u1 * 1e-307)), DataError, r"'u1' varies by only"),
    Case("api: valid column in units of 1e300", "api", valid_design(_assign(u1=lambda f: f.u1 * 1e300), ["u1", "u2", "cat[T.s]", "cat[T.t]"]), None),
    Case("api: mixed object column", "api", design(_assign(u2=pd.Series([1, "a", 2.5, 3] * 30, dtype=object))), DataError, r"'u2' is an object column holding 1 \(number\), 'a' \(text\)"),
    Case("api: object column of numbers", "api", design(_assign(u2=pd.Series([1, 2, 2.5, 3] * 30, dtype=object))), DataError, r"'u2'.*pd.to_numeric"),
    Case("api: object column of bytes", "api", design(_assign(u2=pd.Series([b"a", b"b"] * 60, dtype=object))), DataError, r"'u2'.*bytes"),
    Case("api: object column of lists", "api", design(_assign(u2=pd.Series([[1], [2]] * 60, dtype=object))), DataError, r"'u2'.*list"),
    Case("api: complex column", "api", design(_assign(u2=lambda f: f.u2 + 1j)), DataError, r"'u2' holds complex numbers.*\.imag"),
    Case("api: datetime column", "api", design(_assign(u2=pd.date_range("2020-01-01", periods=N))), DataError, r"'u2' holds dates or times.*\.dt\.days"),
    Case("api: datetime with time zone", "api", design(_assign(u2=pd.date_range("2020-01-01", periods=N, tz="UTC"))), DataError, r"'u2' holds dates"),
    Case("api: timedelta column", "api", design(_assign(u2=pd.to_timedelta(np.arange(N), unit="D"))), DataError, r"'u2' holds time spans.*total_seconds"),
    Case("api: period column", "api", design(_assign(u2=pd.period_range("2020-01", periods=N, freq="M"))), DataError, r"'u2' has the dtype period"),
    Case("api: interval column", "api", design(_assign(u2=pd.arrays.IntervalArray.from_breaks(np.arange(N + 1)))), DataError, r"'u2' has the dtype interval"),
    Case("api: arrow timestamp column", "api", design(_assign(u2=lambda f: pd.Series(pd.date_range("2020", periods=N)).astype("timestamp[us][pyarrow]"))), DataError, r"'u2' holds dates"),
    Case("api: inf in a predictor", "api", design(_assign(u2=lambda f: f.u2.where(f.index != 3, np.inf))), DataError, r"infinite or undefined values in the design column\(s\) \['u2'\] \(rows \[3\]\)"),
    Case("api: NaN in a predictor", "api", design(_assign(u2=lambda f: f.u2.where(f.index != 3, np.nan))), DataError, r"'u2' has missing values"),
    Case("api: pd.NA in a string factor", "api", design(_assign(cat=lambda f: pd.array([None] + list(f.cat[1:]), dtype="string[pyarrow]"))), DataError, r"'cat' has missing values"),
    Case("api: recall_min={}", "api", fit(lambda f: f, recall_min={}), DataError, r"recall_min=\{\} states no recall"),
    Case("api: response with one class", "api", fit(_assign(y="p")), DataError, r"single class|one class|both classes"),
    Case("api: 0 rows", "api", design(lambda f: f.iloc[:0]), DataError, r"0 rows"),
    Case("api: duplicated column names", "api", design(lambda f: f.rename(columns={"u2": "u1"})), DataError, r"duplicated column name"),
    Case("api: valid string[pyarrow] factor", "api", valid_design(_assign(cat=lambda f: f.cat.astype("string[pyarrow]")), ["u1", "u2", "cat[T.s]", "cat[T.t]"]), None),
    Case("api: valid string[python] factor", "api", valid_design(_assign(cat=lambda f: f.cat.astype("string[python]")), ["u1", "u2", "cat[T.s]", "cat[T.t]"]), None),
    Case("api: valid Arrow string factor", "api", valid_design(_assign(cat=lambda f: f.cat.astype("large_string[pyarrow]")), ["u1", "u2", "cat[T.s]", "cat[T.t]"]), None),
    Case("api: valid Int64 and boolean predictors", "api", valid_design(_assign(u2=lambda f: (f.u2 > 0).astype("boolean"), cat=lambda f: f.u1.round().astype("Int64")), ["u1", "u2", "cat"]), None),
    Case("api: valid Float64 predictor", "api", valid_design(_assign(u2=lambda f: f.u2.astype("Float64")), ["u1", "u2", "cat[T.s]", "cat[T.t]"]), None),
    # review r11 F3: a factor with one level was dropped from the design without a word
    Case("api: one-level text factor named in the formula", "api", design(_assign(s="one"), "y ~ u1 + s"), DataError, r"the factor 's' has the single level 'one' in the data, so it cannot enter the model \(a factor needs at least 2 levels.*Remove it from the formula \(with '\.', write '\. - s'\)"),
    Case("api: one-level Categorical through '.'", "api", design(_assign(s=pd.Categorical(["one"] * N))), DataError, r"the factor 's' has the single level 'one'.*contrasts can be applied only to factors with 2 or more levels"),
    Case("api: one-level factor in an interaction", "api", design(_assign(s="one"), "y ~ u2 + u1:s"), DataError, r"the factor 's' has the single level 'one'"),
    Case("api: one-level factor in a code formula (safe=False)", "api", lambda c: build_design("y ~ u1 + s", c.frame.assign(s="one"), safe=False), DataError, r"the factor 's' has the single level 'one'"),
    Case("api: Categorical with one observed of three categories", "api", design(_assign(s=pd.Categorical(["one"] * N, categories=["one", "two", "three"])), "y ~ u1 + s"), DataError, r"the factor 's' has the single level 'one' in the data.*'\. - s'"),
    Case("api: one-level C() in a code formula names the term", "api", lambda c: build_design("y ~ u1 + C(s)", c.frame.assign(s="one"), safe=False), DataError, r"the factor 'C\(s\)' has the single level 'one'.*Remove the term C\(s\) from the formula, or"),
    Case("api: two one-level factors", "api", design(_assign(s="one", t=pd.Categorical(["a"] * N)), "y ~ u1 + s + t"), DataError, r"the factors 's' has the single level 'one', 't' has the single level 'a'.*'\. - s - t'"),
    # review r11 F4: numbers with thousands separators, and identifiers, became one dummy per row
    Case("api: numbers with thousands separators", "api", design(_assign(s=lambda f: [f"{v:,.0f}" for v in f.u1.abs() * 10000 + 1000])), DataError, r"the data column 's' holds text, but its values are numbers written with thousands separators \(e\.g\. '\d,\d\d\d'.*pd\.to_numeric\(df\['s'\]\.str\.replace\(',', ''\)\)"),
    Case("api: thousands separators and '?'", "api", design(_assign(s=lambda f: [f"{v:,.0f}" if i else "?" for i, v in enumerate(f.u1.abs() * 10000 + 1000)])), DataError, r"thousands separators.*missing-value code\(s\) \['\?'\].*errors='coerce'.*rows with '\?'"),
    Case("api: valid few thousands-separated levels stay a factor", "api", valid_design(_assign(cat=lambda f: f.cat.map({"r": "1,000", "s": "2,000", "t": "5,000"})), ["u1", "u2", "cat[T.2,000]", "cat[T.5,000]"]), None),
    Case("api: an identifier column", "api", design(_assign(pid=[f"P{i:05d}" for i in range(N)])), DataError, r"the data column 'pid' holds text with a different value in each of its 120 rows \(e\.g\. \['P00000', 'P00001', 'P00002'\]\): an identifier\?.*Drop it from the formula with '- pid' \(e\.g\. 'y ~ \. - pid'\)"),
    Case("api: valid identifier left out with '- pid'", "api", valid_design(_assign(pid=[f"P{i:05d}" for i in range(N)]), ["u1", "u2", "cat[T.s]", "cat[T.t]"], "y ~ . - pid"), None),
    # review r11 F8: a stray third response value with tpr_min
    Case("api: stray '' in a two-class response", "api", fit(_assign(y=lambda f: f.y.where(f.index != 3, ""))), DataError, r"the response 'y' has 3 classes: '' \(1 row\), 'n' \(\d+ rows\), 'p' \(\d+ rows\); tpr_min needs exactly two classes.*If '' is a stray value, remove or recode those rows.*recall_min=\{'[np]': 0\.9, \.\.\.\}"),
    Case("api: stray 0.5 in a 0/1 response", "api", fit(_assign(y=lambda f: (f.y == "p").astype(float).where(f.index != 3, 0.5)), tnr_min=0.7), DataError, r"the response 'y' has 3 classes: 0\.0 \(\d+ rows\), 0\.5 \(1 row\), 1\.0 \(\d+ rows\); tnr_min needs exactly two classes"),
    Case("api: valid string[pyarrow] response", "api", lambda c: fit(_assign(y=lambda f: f.y.astype("string[pyarrow]")))(c).predict(c.frame).iloc[0] in ("p", "n") or 1 / 0, None),
    Case("api: valid boolean response", "api", lambda c: fit(_assign(y=lambda f: (f.y == "p").astype("boolean")))(c).predict(c.frame).dtype == "boolean" or 1 / 0, None),
]


# ---------------------------------------------------------------------- predictions
def predict(change: Callable[[pd.DataFrame], pd.DataFrame], saved: bool = False) -> Callable[[Ctx], Any]:
    def run(ctx: Ctx) -> Any:
        model = load_model(ctx.model_file) if saved else ctx.results
        return model.predict(change(ctx.frame.copy()))

    return run


PREDICT_CASES = []
for _saved in (False, True):
    _who = "saved model" if _saved else "fit result"
    PREDICT_CASES += [
        Case(f"predict ({_who}): inf", "predict", predict(_assign(u2=np.inf), _saved), DataError, r"infinite or undefined values in the design column\(s\) \['u2'\]"),
        Case(f"predict ({_who}): -inf in one row", "predict", predict(_assign(u1=lambda f: f.u1.where(f.index != 7, -np.inf)), _saved), DataError, r"\['u1'\] \(rows \[7\]\)"),
        Case(f"predict ({_who}): NaN", "predict", predict(_assign(u2=np.nan), _saved), DataError, r"'u2' has missing values"),
        Case(f"predict ({_who}): 1e308 far outside the fit", "predict", predict(_assign(u2=lambda f: np.where(f.u2 > 0, 1.7e308, -1.7e308)), _saved), DataError, r"beyond 1e\+305 in magnitude in the design column\(s\) \['u2'\]"),
        Case(f"predict ({_who}): text in a numeric column", "predict", predict(_assign(u2="x"), _saved), DataError, r"'u2' holds non-numeric"),
        Case(f"predict ({_who}): mixed object column", "predict", predict(_assign(u2=pd.Series([1, "a"] * 60, dtype=object)), _saved), DataError, r"'u2' is an object column"),
        Case(f"predict ({_who}): complex column", "predict", predict(_assign(u2=lambda f: f.u2 + 2j), _saved), DataError, r"'u2' holds complex"),
        Case(f"predict ({_who}): datetime column", "predict", predict(_assign(u2=pd.date_range("2020", periods=N)), _saved), DataError, r"'u2' holds dates"),
        Case(f"predict ({_who}): unseen level", "predict", predict(_assign(cat="zz"), _saved), DataError, r"not seen when the model was fitted"),
        Case(f"predict ({_who}): missing column", "predict", predict(lambda f: f.drop(columns="u2"), _saved), DataError, r"lacks the column\(s\) \['u2'\]"),
        Case(f"predict ({_who}): not a DataFrame", "predict", lambda c, s=_saved: (load_model(c.model_file) if s else c.results).predict("u1,u2"), DataError, r"DataFrame"),
        Case(f"predict ({_who}): valid string[pyarrow] factor", "predict", lambda c, s=_saved: predict(_assign(cat=lambda f: f.cat.astype("string[pyarrow]")), s)(c).size == N or 1 / 0, None),
    ]


# ---------------------------------------------------------------------- the scikit-learn estimator
def _xy(n: int = N) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    return X, np.where(X[:, 0] > 0, 1, 0)


def estimator_fit(X_change: Callable[[np.ndarray], Any] = lambda X: X, y_change: Callable[[np.ndarray], Any] = lambda y: y) -> Callable[[Ctx], Any]:
    def run(ctx: Ctx) -> Any:
        from csvm_stats.interfaces.sklearn import CSVMClassifier

        X, y = _xy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return CSVMClassifier(tpr_min=0.7).fit(X_change(X), y_change(y))

    return run


def estimator_predict(X_new: Callable[[], Any]) -> Callable[[Ctx], Any]:
    def run(ctx: Ctx) -> Any:
        return estimator_fit()(ctx).predict(X_new())

    return run


ESTIMATOR_CASES = [
    Case("estimator: inf in X", "estimator", estimator_fit(lambda X: np.where(X > 1, np.inf, X)), ValueError, r"X contains infinity"),
    Case("estimator: NaN in X", "estimator", estimator_fit(lambda X: np.where(X > 1, np.nan, X)), ValueError, r"X contains NaN"),
    Case("estimator: X at 1e306", "estimator", estimator_fit(lambda X: X * 1e306), DataError, r"position 0 has values as large as"),
    Case("estimator: complex X", "estimator", estimator_fit(lambda X: X + 1j), DataError, r"X holds complex numbers"),
    Case("estimator: complex DataFrame", "estimator", estimator_fit(lambda X: pd.DataFrame({"a": X[:, 0] + 1j, "b": X[:, 1]})), DataError, r"X holds complex numbers"),
    Case("estimator: datetime column", "estimator", estimator_fit(lambda X: pd.DataFrame({"a": X[:, 0], "d": pd.date_range("2020", periods=N)})), DataError, r"non-numeric column\(s\) \['d'\]"),
    Case("estimator: text in an object array", "estimator", estimator_fit(lambda X: np.array([[1, "a"]] * N, dtype=object)), DataError, r"non-numeric values in column\(s\) \[1\]"),
    Case("estimator: y with pd.NA", "estimator", estimator_fit(y_change=lambda y: pd.array([None, *y[1:]], dtype="Int64")), DataError, r"1 missing label"),
    Case("estimator: y of one class", "estimator", estimator_fit(y_change=lambda y: np.ones_like(y)), ValueError, r"class"),
    Case("estimator: predict inf", "estimator", estimator_predict(lambda: np.full((3, 2), np.inf)), ValueError, r"X contains infinity"),
    Case("estimator: predict 1e307", "estimator", estimator_predict(lambda: np.full((3, 2), 1e307)), DataError, r"beyond 1e\+305"),
    Case("estimator: predict 3 columns", "estimator", estimator_predict(lambda: np.zeros((3, 3))), ValueError, r"3 features"),
    Case("estimator: valid Int64 labels", "estimator", lambda c: estimator_fit(y_change=lambda y: pd.array(y, dtype="Int64"))(c).predict(np.zeros((2, 2))).size == 2 or 1 / 0, None),
    Case("estimator: valid string[pyarrow] labels", "estimator", lambda c: estimator_fit(y_change=lambda y: pd.array(np.where(y == 1, "p", "n"), dtype="string[pyarrow]"))(c).predict(np.zeros((2, 2)))[0] in ("p", "n") or 1 / 0, None),
]


# ---------------------------------------------------------------------- model files
def load(name: str, **changes: Any) -> Callable[[Ctx], Any]:
    return lambda ctx: load_model(ctx.rewritten(name, **changes))




def _set_categories(meta: dict) -> None:
    key = next(iter(meta["formula"]["categories"]))
    levels = meta["formula"]["categories"][key]
    meta["formula"]["categories"][key] = [levels[0], *levels]


def _many_keys(n: int) -> bytes:
    return ("{" + ",".join(f'"k{i}":0' for i in range(n)) + "}").encode()


MODEL_CASES = [
    Case("model: scale_sd 1e-320", "model", lambda c: load_model(c.rewritten("sd.csvm", arrays={"scale_sd": np.full(4, 1e-320)})), ModelFileError, r"scale_sd must be positive normal numbers"),
    Case("model: scale_sd 0", "model", lambda c: load_model(c.rewritten("sd0.csvm", arrays={"scale_sd": np.zeros(4)})), ModelFileError, r"scale_sd"),
    Case("model: scale_sd negative", "model", lambda c: load_model(c.rewritten("sdn.csvm", arrays={"scale_sd": -np.ones(4)})), ModelFileError, r"scale_sd"),
    Case("model: scale_sd of 3 entries", "model", lambda c: load_model(c.rewritten("sd3.csvm", arrays={"scale_sd": np.ones(3)})), ModelFileError, r"scale_sd must have 4 entries"),
    Case("model: scale_mean inf", "model", lambda c: load_model(c.rewritten("mi.csvm", arrays={"scale_mean": np.full(4, np.inf)})), ModelFileError, r"non-finite"),
    Case("model: coef of object dtype", "model", lambda c: load_model(c.rewritten("co.csvm", arrays={"coef": np.array([1, "a"], dtype=object)})), ModelFileError, r"float64|not a valid"),
    Case("model: term naming an unknown column", "model", load("term.csvm", metadata=lambda m: m["formula"]["terms"].append(["ghost"])), ModelFileError, r"builds the design columns .*ghost"),
    Case("model: term with Python code", "model", load("code.csvm", metadata=lambda m: m["formula"]["terms"].append(["__import__('os').system('true')"])), ModelFileError, r"builds the design columns"),
    Case("model: term dropped", "model", load("drop.csvm", metadata=lambda m: m["formula"]["terms"].pop()), ModelFileError, r"'cat', which no term uses"),
    Case("model: numeric term dropped", "model", load("drop1.csvm", metadata=lambda m: m["formula"]["terms"].pop(0)), ModelFileError, r"builds the design columns"),
    Case("model: repeated category", "model", load("cat.csvm", metadata=_set_categories), ModelFileError, r"repeats a level"),
    Case("model: categories of an unused term", "model", load("catu.csvm", metadata=lambda m: m["formula"]["categories"].update(ghost=["a"])), ModelFileError, r"names 'ghost', which no term uses"),
    Case("model: backquote in a term", "model", load("tick.csvm", metadata=lambda m: m["formula"]["terms"].append(["u1` + np.log(`u2"])), ModelFileError, r"bad column name"),
    Case("model: columns repeated", "model", load("colr.csvm", metadata=lambda m: m.update(columns=["u1", "u1", "u2", "cat[T.s]"])), ModelFileError, r"columns must not repeat"),
    Case("model: columns renamed", "model", load("colx.csvm", metadata=lambda m: m.update(columns=["a", "b", "c", "d"])), ModelFileError, r"builds the design columns"),
    Case("model: intercept true", "model", load("ib.csvm", metadata=lambda m: m.update(intercept=True)), ModelFileError, r"intercept must be a number"),
    Case("model: intercept as text", "model", load("it.csvm", metadata=lambda m: m.update(intercept="0")), ModelFileError, r"intercept must be a number"),
    Case("model: labels.positive not a level", "model", load("lp.csvm", metadata=lambda m: m["labels"].update(positive="zz")), ModelFileError, r"labels.positive"),
    Case("model: labels repeated", "model", load("lr.csvm", metadata=lambda m: m["labels"].update(levels=["p", "p"])), ModelFileError, r"two different labels"),
    Case("model: format version 99", "model", load("fv.csvm", metadata=lambda m: m.update(format_version=99)), ModelFileError, r"format version 99"),
    Case("model: kernel callable", "model", load("kc.csvm", metadata=lambda m: m["kernel"].update(name="callable")), ModelFileError, r"kernel.name"),
    Case("model: 200,000 JSON keys", "model", load("keys.csvm", raw_json=_many_keys(200_000)), ModelFileLimitError, r"200000 object keys, more than 100000.*MAX_JSON_KEYS"),
    Case("model: repeated JSON key", "model", load("dup.csvm", raw_json=b'{"format": 1, "format": 2}'), ModelFileError, r"repeats the key\(s\) \['format'\]"),
    Case("model: JSON NaN", "model", load("nan.csvm", raw_json=b'{"format": NaN}'), ModelFileError, r"NaN"),
    Case("model: JSON nested 10,000 deep", "model", load("deepj.csvm", raw_json=b"[" * 10_000 + b"]" * 10_000), ModelFileLimitError, r"nests 10000 deep"),
    Case("model: JSON integer of 5000 digits", "model", load("digits.csvm", raw_json=b'{"n": ' + b"9" * 5000 + b"}"), ModelFileError, r"integer of 5000 digits"),
    Case("model: JSON not UTF-8", "model", load("latin.csvm", raw_json=b'{"a": "\xff"}'), ModelFileError, r"not JSON"),
    Case("model: JSON array at top", "model", load("arr.csvm", raw_json=b"[1, 2]"), ModelFileError, r"JSON object"),
    Case("model: an extra pickle member", "model", load("pkl.csvm", extra={"arrays/evil.pkl": b"cos\nsystem\n(S'true'\ntR."}), ModelFileError, r"unexpected member"),
    Case("model: 12,000 members", "model", load("members.csvm", extra={f"m{i}": b"" for i in range(12_000)}), ModelFileLimitError, r"12\d\d\d members \(at most 10000\)"),
    Case("model: not a ZIP", "model", lambda c: load_model(c.file("plain.csvm", b"model")), ModelFileError, r"not a ZIP archive"),
    Case("model: truncated ZIP", "model", lambda c: load_model(c.file("cut.csvm", c.model_file.read_bytes()[:-100])), ModelFileError, r"not a|damaged"),
    Case("model: a directory", "model", lambda c: load_model(c.folder), ModelFileError, r"is a directory"),
    Case("model: missing", "model", lambda c: load_model(c.folder / "absent.csvm"), ModelFileError, r"does not exist"),
    Case("model: /dev/null", "model", lambda c: load_model("/dev/null"), ModelFileError, r"character device"),
    Case("model: a FIFO", "model", lambda c: load_model(c.fifo("pipe.csvm")), ModelFileError, r"named pipe"),
    Case("model: a symlink to /dev/zero", "model", lambda c: load_model(c.link("zero.csvm", "/dev/zero")), ModelFileError, r"symbolic link to '/dev/zero'"),
    Case("model: a broken symlink", "model", lambda c: load_model(c.link("broken.csvm", "/nonexistent/x")), ModelFileError, r"symbolic link.*does not exist"),
    Case("model: path of a list", "model", lambda c: load_model(["a"]), ModelFileError, r"must be a string or a pathlib.Path, got list"),
    Case("model: valid, bytes path", "model", lambda c: load_model(bytes(c.model_file)).predict(c.frame).size == N or 1 / 0, None),
]


# ---------------------------------------------------------------------- command line
def _lines(ctx: Ctx, name: str, text: str) -> Path:
    path = ctx.folder / name
    path.write_text(text)
    return path


def _with_env(name: str, value: str, run: Callable[[], Any]) -> Any:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        return run()
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


def _frame_csv(ctx: Ctx, name: str, change: Callable[[pd.DataFrame], pd.DataFrame], **to_csv: Any) -> Path:
    path = ctx.folder / name
    change(ctx.frame.copy()).to_csv(path, **({"index": False} | to_csv))
    return path


def _full_stdout(ctx: Ctx) -> Any:
    with open("/dev/full", "w") as full:
        return ctx.cli("predict", ctx.model_file, ctx.csv, stdout=full)


def _closed_pipe(ctx: Ctx) -> Any:
    read, write = os.pipe()
    os.close(read)
    with open(write, "w") as pipe:
        return ctx.cli("predict", ctx.model_file, ctx.csv, stdout=pipe)


CLI_CASES = [
    Case("cli: data /dev/null", "cli", lambda c: c.cli("fit", "/dev/null", "-f", "y ~ .", "--tpr-min", "0.7"), ExitCode, rf"exit {EXIT_FILE}: .*'/dev/null' is a character device"),
    Case("cli: data FIFO", "cli", lambda c: c.cli("fit", c.fifo("pipe.csv"), "-f", "y ~ .", "--tpr-min", "0.7"), ExitCode, r"named pipe \(FIFO\)"),
    Case("cli: data symlink to /dev/zero", "cli", lambda c: c.cli("predict", c.model_file, c.link("zero.csv", "/dev/zero")), ExitCode, r"symbolic link to '/dev/zero'"),
    Case("cli: model /dev/null", "cli", lambda c: c.cli("predict", "/dev/null", c.csv), ExitCode, rf"exit {EXIT_FILE}: .*character device"),
    # review r11 F6, F7: a header without rows; another separator; a header cell without a name
    Case("cli: predict on a header without rows", "cli", lambda c: c.cli("predict", c.model_file, _lines(c, "header_only.csv", "u1,u2,cat,y\n")), ExitCode, rf"exit {EXIT_DATA}: .*header_only.csv' has a header but no rows; there is nothing to predict"),
    Case("cli: ';'-separated .csv", "cli", lambda c: c.cli("fit", _frame_csv(c, "semi.csv", lambda f: f, sep=";"), "-f", "y ~ .", "--tpr-min", "0.7"), ExitCode, rf"exit {EXIT_FILE}: .*semi.csv' has a single column named 'u1;u2;cat;y': it looks separated by ';', but a .csv file is read with ',' as separator\. To read it, save it with ',' separators and '\.' as the decimal mark"),
    Case("cli: tab-separated .csv", "cli", lambda c: c.cli("fit", _frame_csv(c, "tabs.csv", lambda f: f, sep="\t"), "-f", "y ~ .", "--tpr-min", "0.7"), ExitCode, rf"exit {EXIT_FILE}: .*it looks separated by tabs.*name it \.tsv"),
    Case("cli: empty header cell", "cli", lambda c: c.cli("fit", _frame_csv(c, "unnamed.csv", lambda f: f.rename(columns={"u2": ""})), "-f", "y ~ .", "--tpr-min", "0.7"), ExitCode, rf"exit {EXIT_DATA}: .*column 2 \(after 'u1'\) of the header has no name; every column needs one"),
    Case("cli: pandas' index column read as row labels", "cli", lambda c: c.cli("fit", _frame_csv(c, "indexed.csv", lambda f: f, index=True), "-f", "y ~ .", "--tpr-min", "0.7"), None),
    Case("cli: trailing separators", "cli", lambda c: c.cli("fit", _lines(c, "trailing.csv", "".join(f"{a},{b},{y},\n" for a, b, y in [("u1", "u2", "y")] + [(i, i % 7, "pn"[i % 2]) for i in range(40)])), "-f", "y ~ .", "--tpr-min", "0.7"), ExitCode, rf"exit {EXIT_DATA}: .*every line ends with a separator"),
    # review r11 F3, F4, F8 worded for the command line
    Case("cli: one-level factor", "cli", lambda c: c.cli("fit", _frame_csv(c, "onelevel.csv", _assign(s="one")), "-f", "y ~ .", "--tpr-min", "0.7"), ExitCode, rf"exit {EXIT_DATA}: .*the factor 's' has the single level 'one'.*'\. - s'"),
    Case("cli: thousands separators", "cli", lambda c: c.cli("fit", _frame_csv(c, "thousands.csv", _assign(s=lambda f: [f"{v:,.0f}" for v in f.u1.abs() * 10000 + 1000])), "-f", "y ~ .", "--tpr-min", "0.7"), ExitCode, rf"exit {EXIT_DATA}: .*thousands separators.*Write the numbers without thousands separators in the file \(2257, not 2,257\)"),
    Case("cli: stray third class with --tpr-min", "cli", lambda c: c.cli("fit", _frame_csv(c, "stray.csv", _assign(y=lambda f: f.y.where(f.index != 3, "?"))), "-f", "y ~ .", "--tpr-min", "0.7"), ExitCode, rf"exit {EXIT_DATA}: .*the response 'y' has 3 classes: '\?' \(1 row\).*--tpr-min needs exactly two classes.*--recall-min [np]=0\.9 \.\.\."),
    Case("cli: predict to /dev/full", "cli", _full_stdout, ExitCode, rf"exit {EXIT_FILE}: .*standard output: No space left on device"),
    Case("cli: predict into a closed pipe", "cli", _closed_pipe, ExitCode, rf"exit {EXIT_FILE}: .*broken pipe"),
    Case("cli: a 2 MB cell", "cli", lambda c: c.cli("fit", _lines(c, "cell.csv", "a,y\n" + "x" * 2_000_000 + ",1\n"), "-f", "y ~ ."), ExitCode, r"cell near line 2 is longer than 1048576 characters \(CSVM_STATS_CSV_MAX_CELL\)"),
    Case("cli: a quoted cell spanning 600,000 lines", "cli", lambda c: c.cli("fit", _lines(c, "span.csv", 'a,y\n"' + "x\n" * 600_000 + '",1\n'), "-f", "y ~ ."), ExitCode, r"CSVM_STATS_CSV_MAX_CELL"),
    Case("cli: a 9 MB line", "cli", lambda c: c.cli("fit", _lines(c, "line.csv", "a,y\n" + "1," * 4_500_000 + "\n"), "-f", "y ~ ."), ExitCode, r"line 2 is longer than 8388608 characters"),
    Case("cli: 200,000 columns", "cli", lambda c: c.cli("fit", _lines(c, "wide.csv", ",".join(f"c{i}" for i in range(200_000)) + "\n"), "-f", "y ~ ."), ExitCode, r"row 1 has 200000 columns"),
    Case("cli: line cap lowered by the environment", "cli", lambda c: _with_env("CSVM_STATS_CSV_MAX_LINE", "10", lambda: c.cli("fit", c.csv, "-f", "y ~ .")), ExitCode, r"longer than 10 characters"),
    Case("cli: a bad cap in the environment", "cli", lambda c: _with_env("CSVM_STATS_CSV_MAX_CELL", "lots", lambda: c.cli("fit", c.csv, "-f", "y ~ .")), ExitCode, r"CSVM_STATS_CSV_MAX_CELL must be a positive whole number"),
    Case("cli: not UTF-8", "cli", lambda c: c.cli("fit", c.file("latin.csv", b"a,y\n\xff,1\n"), "-f", "y ~ ."), ExitCode, r"not UTF-8"),
    Case("cli: NUL bytes in a CSV", "cli", lambda c: c.cli("fit", c.file("nul.csv", b"a,y\n1\x00,1\n"), "-f", "y ~ ."), ExitCode, rf"exit {EXIT_FILE}: .*line 2 contains a NUL byte"),
    Case("cli: formula of 2^20 terms", "cli", lambda c: c.cli("fit", _csv(c, "wide20.csv", _wide(c)), "-f", "y ~ " + "*".join(COLS[:20]), "--tpr-min", "0.7"), ExitCode, rf"exit {EXIT_FORMULA}: .*MAX_TERMS"),
    Case("cli: formula calling a function", "cli", lambda c: c.cli("fit", c.csv, "-f", "y ~ np.log(u1)", "--tpr-min", "0.7"), ExitCode, rf"exit {EXIT_FORMULA}: .*function calls"),
    Case("cli: datetime column from Parquet", "cli", lambda c: c.cli("fit", _parquet(c, "dt.parquet", c.frame.assign(u2=pd.date_range("2020", periods=N))), "-f", "y ~ .", "--tpr-min", "0.7"), ExitCode, rf"exit {EXIT_DATA}: .*'u2' holds dates"),
    Case("cli: colliding names in a CSV", "cli", lambda c: c.cli("fit", _csv(c, "coll.csv", _collide(c.frame.copy())), "-f", "y ~ .", "--tpr-min", "0.7"), ExitCode, rf"exit {EXIT_DATA}: .*both be named"),
    Case("cli: inf in predict data", "cli", lambda c: c.cli("predict", c.model_file, _csv(c, "inf.csv", c.frame.assign(u2=np.inf))), ExitCode, rf"exit {EXIT_DATA}: .*infinite"),
    Case("cli: damaged model (scale_sd 1e-320)", "cli", lambda c: c.cli("predict", c.rewritten("sdc.csvm", arrays={"scale_sd": np.full(4, 1e-320)}), c.csv), ExitCode, rf"exit {EXIT_FILE}: .*scale_sd"),
    Case("cli: valid predict", "cli", lambda c: c.cli("predict", c.model_file, c.csv), None),
]


def _wide(ctx: Ctx) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(40, 20)), columns=COLS[:20])
    frame["y"] = np.where(frame["a"] > 0, "p", "n")
    return frame


def _parquet(ctx: Ctx, name: str, frame: pd.DataFrame) -> Path:
    path = ctx.folder / name
    frame.to_parquet(path)
    return path


def _csv(ctx: Ctx, name: str, frame: pd.DataFrame) -> Path:
    path = ctx.folder / name
    frame.to_csv(path, index=False)
    return path


CASES: list[Case] = R_CASES + FORMULA_CASES + API_CASES + PREDICT_CASES + ESTIMATOR_CASES + MODEL_CASES + CLI_CASES


def run_case(case: Case, ctx: Ctx) -> tuple[str, str]:
    """("clear" | "ok" | "silent" | "ugly", detail) for one case: the benchmark's classification."""
    try:
        case.run(ctx)
    except BaseException as error:  # noqa: BLE001 - every outcome is classified
        import re

        text = str(error)
        if case.error is not None and isinstance(error, case.error) and re.search(case.match, text, re.S):
            return "clear", text.splitlines()[0][:160] if text else ""
        return "ugly", f"{type(error).__name__}: {text.splitlines()[0][:160] if text else ''}"
    return ("silent", "no error") if case.error is not None else ("ok", "valid result")


if __name__ == "__main__":  # python tests/hostile_cases.py: the number of rows
    print(len(CASES), file=sys.stderr)
