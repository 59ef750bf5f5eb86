"""Damaged and hostile model files: refused with ModelFileError (CLI exit 3) or read as the identical model.

200 mutations of a saved model (one-byte replacements, bit flips,
truncations; benchmarks/model_file_fuzz.py runs 2,000 per model), and
hand-made hostile archives: duplicate members, a huge declared ``.npy`` shape,
a ZIP bomb, deeply nested JSON, huge integers, booleans as numbers.
"""

from __future__ import annotations

import importlib.util
import io
import json
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from csvm_stats.interfaces.cli import EXIT_FILE, main
from csvm_stats.interfaces.model_format import MAX_JSON_DEPTH
from csvm_stats.interfaces.persistence import ModelFileError, load_model

_SPEC = importlib.util.spec_from_file_location(
    "model_file_fuzz", Path(__file__).resolve().parents[1] / "benchmarks" / "model_file_fuzz.py"
)
fuzz = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fuzz)


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    from csvm_stats.models.model import CSVM
    from csvm_stats.interfaces.persistence import save_model

    folder = tmp_path_factory.mktemp("fuzz")
    model = CSVM.from_formula("y ~ .", fuzz.example_frame(160, 1), tpr_min=0.8, bound="binomial")
    return save_model(model.fit(random_state=0, time_limit=60), folder / "model.csvm")


@pytest.fixture(scope="module")
def newdata():
    return fuzz.example_frame(50, 2).drop(columns="y")


def test_200_mutations_are_refused_or_identical(saved, newdata, tmp_path):
    reference = load_model(saved)
    outcomes = {}
    for kind, data in fuzz.mutations(saved.read_bytes(), 200, seed=1):
        outcome = fuzz.classify(data, reference, newdata, tmp_path)
        outcomes.setdefault(outcome, []).append(kind)
    assert set(outcomes) <= {"refused", "identical"}, {k: len(v) for k, v in outcomes.items()}
    assert len(outcomes["refused"]) >= 150  # almost every byte is covered by a CRC or a check


def test_a_damaged_file_is_exit_code_3_without_a_traceback(saved, newdata, tmp_path, capsys):
    data = bytearray(saved.read_bytes())
    data[len(data) // 3] ^= 0xFF
    damaged = tmp_path / "damaged.csvm"
    damaged.write_bytes(bytes(data))
    csv = tmp_path / "new.csv"
    newdata.to_csv(csv, index=False)
    code = main(["predict", str(damaged), str(csv)])
    err = capsys.readouterr().err
    assert code == EXIT_FILE and "model file" in err and "Traceback" not in err


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _write(path: Path, members: list[tuple[str, bytes]], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about duplicate names
        with zipfile.ZipFile(path, "w", compression=compression) as archive:
            for name, data in members:
                archive.writestr(name, data)
    return path


def _with_metadata(saved: Path, tmp_path: Path, text: str) -> Path:
    members = _members(saved)
    members["model.json"] = text.encode()
    return _write(tmp_path / "edited.csvm", list(members.items()))


def test_a_duplicate_member_is_refused(saved, tmp_path):
    members = _members(saved)
    evil = json.loads(members["model.json"])
    evil["intercept"] = 1e6
    path = _write(tmp_path / "dup.csvm", [*members.items(), ("model.json", json.dumps(evil).encode())])
    with pytest.raises(ModelFileError, match=r"\['model.json'\] appear more than once"):
        load_model(path)


def test_a_huge_declared_npy_shape_is_refused_before_reading(saved, tmp_path):
    members = _members(saved)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (2**40,)})
    members["arrays/coef.npy"] = header.getvalue() + b"\0" * 64
    with pytest.raises(ModelFileError, match=r"declares shape \(1099511627776,\)"):
        load_model(_write(tmp_path / "shape.csvm", list(members.items())))


def test_an_npy_shape_that_disagrees_with_the_member_size_is_refused(saved, tmp_path):
    members = _members(saved)
    coef = np.load(io.BytesIO(members["arrays/coef.npy"]))
    buffer = io.BytesIO()
    np.save(buffer, np.concatenate([coef, coef]))
    members["arrays/coef.npy"] = buffer.getvalue()[: -8]
    with pytest.raises(ModelFileError, match="does not match its size"):
        load_model(_write(tmp_path / "short.csvm", list(members.items())))


def test_a_zip_bomb_is_refused_from_its_directory_quickly(saved, tmp_path, monkeypatch):
    import csvm_stats.interfaces.model_format as model_format

    monkeypatch.setattr(model_format, "MAX_TOTAL_BYTES", 2**24)  # a 16 MiB cap keeps the test small
    members = _members(saved)
    path = _write(tmp_path / "bomb.csvm", [*members.items()])
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("arrays/reference.npy", b"\0" * 2**25)  # 32 MiB of zeros, ~32 KiB compressed
    assert path.stat().st_size < 2**20
    started = time.process_time()
    with pytest.raises(ModelFileError, match="add up to"):
        load_model(path)
    assert time.process_time() - started < 5  # refused from the directory, nothing inflated (generous bound)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.update(intercept=True), "intercept must be a number"),
        (lambda m: m["kernel"].update(degree=True), "kernel"),
        (lambda m: m["labels"].update(levels=[True, 1], dtype="int"), "labels.levels must be of labels.dtype 'int'"),
        (lambda m: m["labels"].update(levels=["a", "a"], positive="a", dtype="str"), "two different labels"),
        (lambda m: m.update(format_version=True), "format version True"),
        (lambda m: m.update(columns=["x1", "x1", "x2"]), "columns"),
        (lambda m: m["report"].update(statements={"tpr": 1}), "report.statements"),
    ],
)
def test_bools_and_wrong_types_are_never_accepted(saved, tmp_path, edit, message):
    meta = json.loads(_members(saved)["model.json"])
    edit(meta)
    with pytest.raises(ModelFileError, match=message):
        load_model(_with_metadata(saved, tmp_path, json.dumps(meta)))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": ' * (MAX_JSON_DEPTH + 1) + "1" + "}" * (MAX_JSON_DEPTH + 1), "nests"),
        ("[" * 100_000 + "]" * 100_000, "nests"),
        ('{"format": "csvm-stats-model", "format_version": 1' + ', "x": ' + "9" * 5000 + "}", "integer of 5000 digits"),
        ('{"format": "csvm-stats-model", "intercept": 1e999}', "non-finite"),
        ('{"format": "csvm-stats-model", "intercept": NaN}', "NaN"),
        ('{"format": "csvm-stats-model", "format": "csvm-stats-model"}', "repeats the key"),
        ('{"format": "csvm-stats-model", "x": "\\ud800"', "not JSON"),
        ("\xff\xfe", "not JSON"),
    ],
)
def test_hostile_json_is_refused(saved, tmp_path, text, message):
    with pytest.raises(ModelFileError, match=message):
        load_model(_with_metadata(saved, tmp_path, text))


def test_a_directory_and_a_missing_file(tmp_path):
    with pytest.raises(ModelFileError, match="is a directory"):
        load_model(tmp_path)
    with pytest.raises(ModelFileError, match="does not exist"):
        load_model(tmp_path / "absent.csvm")
