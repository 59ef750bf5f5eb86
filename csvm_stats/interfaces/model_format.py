"""The ``csvm-stats-model`` archive: its members, its size caps, and its defensive reading and writing.

The format and every check made while reading are described in
:mod:`csvm_stats.interfaces.persistence`, the public ``save_model``/``load_model``
API; this module holds the ZIP, JSON and ``.npy`` layer under it. The caps
are assigned on :mod:`csvm_stats.interfaces.persistence`, which forwards them here.
"""

from __future__ import annotations

import io
import json
import math
import re
import zipfile
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from csvm_stats._version import __version__
from csvm_stats.exceptions import DataError, InputFileError, InputLimitError
from csvm_stats.preprocessing.paths import check_input_file

FORMAT_NAME = "csvm-stats-model"
FORMAT_VERSION = 1
METADATA_MEMBER = "model.json"
ARRAY_PREFIX = "arrays/"
#: Arrays every model has, and those a kernel model adds.
LINEAR_ARRAYS = ("coef", "scale_mean", "scale_sd")
KERNEL_ARRAYS = ("reference", "projection")
CALIBRATION_ARRAYS = ("va_scores", "va_p0", "va_p1")
PROBABILITY_ARRAYS = ("prob_coef", "prob_interval_coef")
#: A multiclass file's per-class calibration arrays (:mod:`csvm_stats.multiclass.persistence`).
#: Caps checked from the ZIP directory and the ``.npy`` headers before anything is
#: decompressed or allocated (they guard against ZIP bombs and huge declared shapes).
MAX_MEMBER_BYTES = 2**30
MAX_TOTAL_BYTES = 2**31
MAX_JSON_BYTES = 2**26
MAX_ARRAY_DIMS = 2
#: Most ZIP members (a model file has a dozen; a multiclass file a few per class).
MAX_MEMBERS = 10_000
#: Deepest JSON nesting and longest JSON integer accepted in ``model.json``.
MAX_JSON_DEPTH = 32
MAX_INT_DIGITS = 20
#: Most object keys in ``model.json`` (all objects together); checked while parsing, in linear time.
MAX_JSON_KEYS = 100_000
_LABEL_DTYPES = ("int", "float", "bool", "str", "category")


class ModelFileError(DataError):
    """A saved-model file is missing, not in the csvm-stats format, or fails its schema.

    Examples
    --------
    >>> import os, tempfile
    >>> from csvm_stats.interfaces.persistence import ModelFileError, load_model
    >>> path = os.path.join(tempfile.mkdtemp(), "not-a-model.csvm")
    >>> _ = open(path, "w").write("hello")
    >>> try:
    ...     load_model(path)
    ... except ModelFileError:
    ...     print("refused")
    refused
    """


class ModelFileLimitError(ModelFileError, InputLimitError):
    """A model file past one of the size caps (:data:`MAX_JSON_KEYS`, :data:`MAX_JSON_DEPTH`, ...).

    The caps are module constants of :mod:`csvm_stats.interfaces.persistence`
    (``MAX_MEMBERS``, ``MAX_MEMBER_BYTES``, ``MAX_TOTAL_BYTES``,
    ``MAX_JSON_BYTES``, ``MAX_JSON_DEPTH``, ``MAX_INT_DIGITS``,
    ``MAX_JSON_KEYS``), checked before the file is decompressed or parsed;
    the message names the one exceeded. Assign a larger value only to read a
    file you trust.

    Examples
    --------
    >>> from csvm_stats.exceptions import InputLimitError
    >>> from csvm_stats.interfaces.persistence import ModelFileError, ModelFileLimitError
    >>> issubclass(ModelFileLimitError, ModelFileError) and issubclass(ModelFileLimitError, InputLimitError)
    True
    """


def write_archive(path: str | Path, metadata: dict[str, Any], arrays: dict[str, np.ndarray]) -> Path:
    """Write ``model.json`` and the float64 ``.npy`` members; return the path."""
    path = Path(path)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(METADATA_MEMBER, json.dumps(metadata, indent=1, allow_nan=False))
        for name, array in arrays.items():
            buffer = io.BytesIO()
            np.save(buffer, np.ascontiguousarray(array, dtype=np.float64), allow_pickle=False)
            archive.writestr(f"{ARRAY_PREFIX}{name}.npy", buffer.getvalue())
    return path


# ---------------------------------------------------------------------- reading
def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ModelFileError(f"not a valid csvm-stats model file: {message}")


def _within(condition: bool, message: str, cap: str) -> None:
    """Like :func:`_require`, for a size cap: a :class:`ModelFileLimitError` naming the cap to raise."""
    if not condition:
        raise ModelFileLimitError(
            f"not a valid csvm-stats model file: {message}; the cap is csvm_stats.interfaces.model_format.{cap}, "
            "which you may raise (assign it) only to read a file you trust"
        )


def _is_number(value: Any) -> bool:
    """A finite JSON number; ``True``/``False`` are not numbers here."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _json_int(text: str) -> int:
    _within(len(text.lstrip("-")) <= MAX_INT_DIGITS, f"{METADATA_MEMBER} has an integer of {len(text)} digits",
            "MAX_INT_DIGITS")
    return int(text)


def _json_float(text: str) -> float:
    value = float(text)
    _require(math.isfinite(value), f"{METADATA_MEMBER} has the non-finite number {text[:30]}")
    return value


def _json_constant(text: str) -> Any:
    raise ModelFileError(f"not a valid csvm-stats model file: {METADATA_MEMBER} has {text}, which JSON does not allow")


class _KeyCounter:
    """``object_pairs_hook`` for :func:`json.loads`: repeated keys refused, total keys capped, in linear time."""

    def __init__(self) -> None:
        self.keys = 0

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        self.keys += len(pairs)
        _within(self.keys <= MAX_JSON_KEYS, f"{METADATA_MEMBER} has more than {MAX_JSON_KEYS} object keys",
                "MAX_JSON_KEYS")
        result = dict(pairs)
        if len(result) != len(pairs):
            seen: set[str] = set()
            repeated = sorted({key for key, _ in pairs if key in seen or seen.add(key)})
            _require(False, f"{METADATA_MEMBER} repeats the key(s) {repeated[:5]}")
        return result


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def _json_depth(structure: str) -> int:
    """The deepest nesting of arrays and objects in JSON text whose strings were removed."""
    depth = deepest = 0
    for match in _JSON_BRACKET.finditer(structure):
        depth += 1 if match.group() in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _parse_metadata(raw: bytes) -> dict[str, Any]:
    text = raw.decode("utf-8")
    structure = _JSON_STRING.sub("", text)  # every key is followed by a ':' outside strings
    depth = _json_depth(structure)
    _within(depth <= MAX_JSON_DEPTH, f"{METADATA_MEMBER} nests {depth} deep (at most {MAX_JSON_DEPTH})", "MAX_JSON_DEPTH")
    keys = structure.count(":")
    _within(
        keys <= MAX_JSON_KEYS,
        f"{METADATA_MEMBER} has {keys} object keys, more than {MAX_JSON_KEYS} (MAX_JSON_KEYS; a model file needs a few "
        "hundred plus one per feature)",
        "MAX_JSON_KEYS",
    )
    metadata = json.loads(
        text, parse_int=_json_int, parse_float=_json_float, parse_constant=_json_constant,
        object_pairs_hook=_KeyCounter(),
    )
    _require(isinstance(metadata, dict), f"{METADATA_MEMBER} must hold a JSON object")
    return metadata


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The member's bytes, never more than its declared size (a lying header is refused, not followed)."""
    with archive.open(info) as stream:
        data = stream.read(info.file_size + 1)
    _require(len(data) == info.file_size, f"member {info.filename!r} does not have its declared size")
    return data


def _read_array(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    """A float64 ``.npy`` member, its header checked against the member's size before the data are read."""
    from numpy.lib import format as npy

    name = info.filename
    with archive.open(info) as stream:
        version = npy.read_magic(stream)
        _require(version in ((1, 0), (2, 0)), f"{name} has .npy version {version}")
        read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, fortran, dtype = read_header(stream, max_header_size=10_000)
        _require(dtype == np.float64, f"{name} must be float64, got {dtype}")
        _require(len(shape) <= MAX_ARRAY_DIMS, f"{name} has {len(shape)} dimensions")
        count = math.prod(shape)
        nbytes = count * dtype.itemsize
        _within(nbytes <= MAX_MEMBER_BYTES, f"{name} declares shape {shape}, {nbytes} bytes (at most {MAX_MEMBER_BYTES})",
                "MAX_MEMBER_BYTES")
        _require(
            nbytes == info.file_size - stream.tell(),
            f"{name} declares shape {shape}, which does not match its size of {info.file_size} bytes",
        )
        data = stream.read(nbytes + 1)
    _require(len(data) == nbytes, f"{name} is shorter than its header says")
    array = np.frombuffer(data, dtype=np.float64, count=count).reshape(shape, order="F" if fortran else "C").copy()
    _require(bool(np.all(np.isfinite(array))), f"{name} has non-finite values")
    return array


def _read_archive(path: Path, forms: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """``model.json`` and the arrays of ``path``, checked; ``forms`` are the registered file forms by ``kind``."""
    try:
        path = check_input_file(path, "model file")
    except InputFileError as error:
        raise ModelFileError(str(error)) from None
    if not zipfile.is_zipfile(path):
        raise ModelFileError(
            f"{str(path)!r} is not a csvm-stats model file (not a ZIP archive); "
            "models are written by save_model or `csvm-stats fit --save`."
        )
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        names = [info.filename for info in infos]
        _within(len(names) <= MAX_MEMBERS, f"it has {len(names)} members (at most {MAX_MEMBERS})", "MAX_MEMBERS")
        repeated = sorted(name for name, count in Counter(names).items() if count > 1)
        _require(not repeated, f"member(s) {repeated[:5]} appear more than once")
        members = {info.filename: info for info in infos}
        _require(METADATA_MEMBER in members, f"it has no {METADATA_MEMBER}")
        for info in infos:
            _within(info.file_size <= MAX_MEMBER_BYTES, f"member {info.filename!r} is too large", "MAX_MEMBER_BYTES")
        total = sum(info.file_size for info in infos)
        _within(total <= MAX_TOTAL_BYTES, f"its members add up to {total} bytes (at most {MAX_TOTAL_BYTES})",
                "MAX_TOTAL_BYTES")
        _within(members[METADATA_MEMBER].file_size <= MAX_JSON_BYTES, f"{METADATA_MEMBER} is too large", "MAX_JSON_BYTES")
        try:
            metadata = _parse_metadata(_read_member(archive, members[METADATA_MEMBER]))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ModelFileError(f"not a valid csvm-stats model file: {METADATA_MEMBER} is not JSON ({error})") from None
        _require(metadata.get("format") == FORMAT_NAME, f"format is {metadata.get('format')!r}, not {FORMAT_NAME!r}")
        version = metadata.get("format_version")
        if not _is_integer(version) or version != FORMAT_VERSION:
            raise ModelFileError(
                f"the model file has format version {version!r}; this csvm-stats ({__version__}) reads version "
                f"{FORMAT_VERSION}. Refit the model or use a matching csvm-stats."
            )
        expected = {f"{ARRAY_PREFIX}{n}.npy"
                    for n in LINEAR_ARRAYS + KERNEL_ARRAYS + CALIBRATION_ARRAYS + PROBABILITY_ARRAYS}
        expected |= {METADATA_MEMBER}
        unknown = sorted(set(members) - expected)
        kind = metadata.get("kind")
        if kind is not None:
            _require(isinstance(kind, str) and kind in forms,
                     f"kind {kind!r} is not one this csvm-stats reads ({sorted(forms)})")
            pattern = forms[kind].extra_members
            unknown = [name for name in unknown if pattern is None or not pattern.fullmatch(name)]
        _require(not unknown, f"unexpected member(s) {unknown}")
        arrays = {
            name[len(ARRAY_PREFIX) : -len(".npy")]: _read_array(archive, members[name])
            for name in sorted(set(members) - {METADATA_MEMBER})
        }
    return metadata, arrays
