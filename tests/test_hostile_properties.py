"""Property-based tests (hypothesis) of the three readers of outside text and bytes (issue 26).

For random and mutated inputs the outcome is a documented error type or a valid result, within a time
bound (hypothesis' deadline, generous for two loaded cores) and a memory bound (tracemalloc's peak):

* the formula grammar: :class:`~csvm_stats.exceptions.FormulaError` (``FormulaLimitError`` for too many
  terms) or a :class:`ParsedFormula` whose names are columns of the data;
* the model-file reader: :class:`ModelFileError` or a model that predicts;
* the R reader: a :class:`~csvm_stats.exceptions.DataError` (``RFormatError``, ``InputLimitError``) or
  pandas objects.
"""

from __future__ import annotations

import io
import sys
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from hostile_cases import HEADER, NIL, Ctx, altrep, dbls, ints, named, rds, strs, vec, xint  # noqa: E402

from csvm_stats.exceptions import DataError, FormulaError  # noqa: E402
from csvm_stats.interfaces.persistence import ModelFileError, load_model  # noqa: E402
from csvm_stats.preprocessing.formula_grammar import ParsedFormula, parse_formula  # noqa: E402
from r_bridge import load_rds  # noqa: E402

#: Memory any one example may allocate (tracemalloc peak), far below the issue's 1 GB per input.
MEMORY_BOUND = 256 * 2**20
PROPERTY = settings(
    max_examples=120, deadline=5000, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


def bounded(run):
    """Run ``run()`` and return (result or exception, peak bytes)."""
    tracemalloc.start()
    try:
        try:
            outcome = run()
        except Exception as error:  # noqa: BLE001 - classified by the caller
            outcome = error
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return outcome, peak


# ---------------------------------------------------------------------- formulas
COLUMNS = ["y", "a", "b", "c", "d", "e", "Petal.Width", "x 1", "0", "C"]
TOKENS = ["y", "~", "a", "b", "c", "d", "e", "Petal.Width", "`x 1`", "`0`", ".", "+", "-", ":", "*", "**", "(", ")",
          "0", "1", "2", "10", "11", "C(", "C(a)", "np.log(a)", "{a}", "'a'", "[", "]", "`", "\\", " ", "__import__",
          "lambda", ",", "\n", "é", "\x00"]


def _check_formula(text: str) -> None:
    outcome, peak = bounded(lambda: parse_formula(text, COLUMNS))
    assert peak < MEMORY_BOUND, peak
    if isinstance(outcome, ParsedFormula):
        assert set(outcome.columns) <= set(COLUMNS) and outcome.response in COLUMNS
        assert outcome.response not in outcome.columns and outcome.terms
    else:
        assert isinstance(outcome, FormulaError), repr(outcome)
        assert str(outcome)


@PROPERTY
@given(st.lists(st.sampled_from(TOKENS), max_size=40))
def test_formulas_from_grammar_tokens_parse_or_raise_a_formula_error(tokens):
    _check_formula("y ~ " + " ".join(tokens))


@PROPERTY
@given(st.text(max_size=200))
def test_arbitrary_text_parses_or_raises_a_formula_error(text):
    _check_formula(text)


@PROPERTY
@given(st.lists(st.sampled_from(["a", "b", "c", "d", "e", "(a+b+c+d+e)", "."]), min_size=1, max_size=12),
       st.sampled_from(["*", ":", "+"]), st.integers(1, 10))
def test_products_and_powers_stay_bounded(factors, operator, power):
    _check_formula(f"y ~ ({operator.join(factors)})**{power}")


# ---------------------------------------------------------------------- model files
@pytest.fixture(scope="module")
def model_bytes(tmp_path_factory) -> tuple[bytes, pd.DataFrame, Path]:
    ctx = Ctx(tmp_path_factory.mktemp("properties"))
    return ctx.model_file.read_bytes(), ctx.frame, ctx.folder


def _check_model(data: bytes, frame: pd.DataFrame, folder: Path) -> None:
    path = folder / "mutated.csvm"
    path.write_bytes(data)

    outcome, peak = bounded(lambda: load_model(path))
    assert peak < MEMORY_BOUND, peak
    if isinstance(outcome, Exception):
        assert isinstance(outcome, ModelFileError), repr(outcome)
        return
    # a file that loads is a consistent model; it may be one our frame does not fit (a data error), never a crash
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            predicted = outcome.predict(frame)
    except DataError as error:
        assert not isinstance(error, ModelFileError) and str(error)
    else:
        assert len(predicted) == len(frame)


@PROPERTY
@given(st.data())
def test_mutated_model_files_load_or_raise_a_model_file_error(model_bytes, data):
    original, frame, folder = model_bytes
    raw = bytearray(original)
    for _ in range(data.draw(st.integers(1, 8))):
        kind = data.draw(st.sampled_from(["flip", "cut", "insert", "zero"]))
        at = data.draw(st.integers(0, len(raw) - 1))
        if kind == "flip":
            raw[at] ^= data.draw(st.integers(1, 255))
        elif kind == "cut":
            del raw[at : at + data.draw(st.integers(1, 64))]
        elif kind == "insert":
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=16))
        else:
            raw[at : at + 8] = bytes(8)
        if not raw:
            break
    _check_model(bytes(raw), frame, folder)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)


@PROPERTY
@given(st.data())
def test_model_json_with_random_fields_loads_or_raises_a_model_file_error(model_bytes, data):
    import json
    import zipfile

    original, frame, folder = model_bytes
    with zipfile.ZipFile(io.BytesIO(original)) as source:
        meta = json.loads(source.read("model.json"))
        members = {info.filename: source.read(info.filename) for info in source.infolist()}
    path = data.draw(st.lists(st.sampled_from(sorted(meta)), min_size=1, max_size=3))
    for key in path:
        meta[key] = data.draw(JSON)
    members["model.json"] = json.dumps(meta).encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        for name, body in members.items():
            target.writestr(name, body)
    _check_model(buffer.getvalue(), frame, folder)


# ---------------------------------------------------------------------- R files
def _objects() -> st.SearchStrategy[bytes]:
    length = st.integers(-3, 2**31 - 1) | st.integers(0, 6)
    leaf = st.one_of(
        st.builds(lambda v: ints(*v), st.lists(st.integers(-(2**31), 2**31 - 1), max_size=6)),
        st.builds(lambda v: dbls(*v), st.lists(st.floats(), max_size=6)),
        st.builds(lambda v: strs(*v), st.lists(st.text(max_size=5), max_size=4)),
        st.builds(lambda n, v: xint(14, n) + dbls(*v)[8:], length, st.lists(st.floats(), max_size=4)),
        st.builds(lambda n: altrep("compact_intseq", dbls(n, 1, 1)), st.floats(-5, 1e12)),
        st.builds(lambda n: altrep("compact_realseq", dbls(n, 0.5, 2)), st.floats(-5, 1e12)),
        st.builds(lambda t: xint(t), st.integers(0, 255)),
        st.just(NIL),
    )
    return st.recursive(
        leaf,
        lambda children: st.builds(lambda items: vec(*items), st.lists(children, max_size=4))
        | st.builds(lambda v: named(14, xint(len(v)) + b"".join(np.array(v, ">f8").tobytes() for _ in [0]), [str(i) for i in range(len(v))]),
                    st.lists(st.floats(), min_size=1, max_size=3)),
        max_leaves=12,
    )


def _check_rds(data: bytes, folder: Path) -> None:
    path = folder / "random.rds"
    path.write_bytes(data)
    outcome, peak = bounded(lambda: load_rds(path))
    assert peak < MEMORY_BOUND, peak
    if isinstance(outcome, Exception):
        assert isinstance(outcome, DataError), repr(outcome)
        assert str(outcome)


@PROPERTY
@given(_objects(), st.sampled_from([None, "gzip", "bz2", "xz"]))
def test_random_r_objects_read_or_raise_a_data_error(tmp_path_factory, body, compress):
    _check_rds(rds(body, compress), tmp_path_factory.mktemp("r"))


@PROPERTY
@given(st.data())
def test_mutated_r_files_read_or_raise_a_data_error(tmp_path_factory, data):
    frame = named(19, xint(3) + ints(1, 2, 3) + strs("a", "b", "c") + dbls(1.5, 2.5, float("nan")), ["i", "s", "d"])
    raw = bytearray(rds(frame, data.draw(st.sampled_from([None, "gzip"]))))
    for _ in range(data.draw(st.integers(1, 6))):
        at = data.draw(st.integers(0, len(raw) - 1))
        if data.draw(st.booleans()):
            raw[at] ^= data.draw(st.integers(1, 255))
        else:
            del raw[at : at + data.draw(st.integers(1, 16))]
        if not raw:
            break
    _check_rds(bytes(raw), tmp_path_factory.mktemp("m"))


def test_the_header_helper_is_r_s_xdr_version_3():
    assert HEADER.startswith(b"X\n") and HEADER.endswith(b"UTF-8")
