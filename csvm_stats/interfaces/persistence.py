r"""Saved CSVM models: a documented, versioned file format that is not pickle.

``save_model(results, path)`` writes a fitted :class:`~csvm_stats.models.results.CSVMResults`;
``load_model(path)`` returns a :class:`SavedModel` that predicts on new data
exactly as the fit did and carries its report (summary text, rate table,
confidence statements). Loading never runs code from the file: the file is a
ZIP archive read with :mod:`zipfile`, :mod:`json` and ``numpy.load(...,
allow_pickle=False)``, and every field is checked against the schema below
before it is used. A formula is kept only as column look-ups and their
interactions, rebuilt as formulaic terms whose every factor is verified to be
a plain column look-up, so predicting with a loaded model cannot evaluate
Python expressions either.

Format ``csvm-stats-model``, version 1
--------------------------------------
A ZIP archive with exactly these members:

``model.json`` (UTF-8 JSON object)
    ``format`` = ``"csvm-stats-model"``, ``format_version`` = 1,
    ``library_version`` (the csvm-stats that wrote it);
    ``labels``: ``{"levels": [a, b], "positive": a|b, "name": str|null,
    "dtype": "int"|"float"|"bool"|"str"|"category"}`` (levels are JSON
    numbers, booleans or strings);
    ``columns``: the design column names, in order;
    ``formula``: null, or ``{"formula": str, "response": str, "terms":
    [[column | {"C": column} | {"C": column, "contrasts": "poly"}, ...], ...],
    "categories": {factor: [level, ...]}, "intercept": bool}`` (terms without
    the intercept; each term lists the columns whose product or interaction it
    is, ``{"C": column}`` standing for ``C(column)`` and ``"contrasts":
    "poly"`` for its coding by R's polynomial contrasts, ``from_formula(...,
    ordered_contrasts="poly")``; categorical factors, keyed by their name in the design
    (``column`` or ``C(column)``), list their levels, the first being the
    reference; ``intercept`` false for a formula with ``- 1`` or ``0 +``,
    true when absent);
    ``kernel``: ``{"name": "linear"|"rbf"|"poly", "gamma": float|null,
    "degree": int, "coef0": float, "rank": int, "numerical_rank": int,
    "exact": bool}``;
    ``intercept``: b (float, after guarantee mode if that was used);
    ``report``: ``summary_text`` (str), ``statements`` ({rate: str}),
    ``joint_statement`` (str), ``rates`` ({rate: {column: value}}),
    ``params`` ({name: float}), ``solver`` ({field: value}), ``warnings`` ([str]),
    ``samples`` ({"train"|"anchor"|"holdout": int}), ``random_state`` (int,
    the seed of the fit, drawn when none was given; absent in older files);
    for a sparse CSVM also ``selection``: ``{"route": "l1"|"cardinality",
    "max_features": int|null, "exact": bool, "features": {name: coef}}``
    (the selected features and their coefficients in original units; absent
    for a full-feature CSVM and in older files; a multiclass gene list gives
    each feature's ``coef_std_norm``); ``sample_roles`` (absent in older
    files): ``{"rows": [str], "roles": [str]}``, each data row's label and
    its role ``"training"``, ``"anchor"``, ``"held-out"`` or ``"unused"``.

    ``calibration`` (optional; absent in files written before it existed):
    null, or ``{"method": "held-out"|"cross-fitted", "n": int,
    "n_positive": int, "folds": int}`` describing the Venn-Abers calibration
    of the decision function (:mod:`csvm_stats.probability.fit_calibration`);
    on the held-out route also ``"model": {"intercept": float, "slope":
    float, "offset": float, "penalty": float, "n": int}``, the probability
    model beside the rule (:mod:`csvm_stats.probability.score_model`), whose
    score the Venn-Abers arrays then calibrate (absent in older files: they
    calibrate the decision function).

``arrays/<name>.npy`` (NumPy ``.npy``, float64, never object arrays)
    ``coef`` (r,), ``scale_mean`` (p,), ``scale_sd`` (p,); for a kernel also
    ``reference`` (m, p) and ``projection`` (m, r); with a calibration
    ``va_scores`` (k,) (the distinct calibration decision values, increasing)
    and ``va_p0``, ``va_p1`` (2k + 1,) (the Venn-Abers probabilities of every
    slot, :class:`csvm_stats.probability.venn_abers.VennAbers`); with a
    probability model ``prob_coef`` (r,), its coefficients on the feature map.

The decision function is :math:`f(x) = \phi(s(x))^\top w + b` with
:math:`s(x) = (x - \text{scale\_mean}) / \text{scale\_sd}` and
:math:`\phi(x) = K(x, \text{reference})\,\text{projection}` (the identity for
the linear kernel); the positive class is predicted where :math:`f(x) \ge 0`.
Reading is defensive: any failure while reading (a damaged archive, bad
compressed data, a wrong CRC, a truncated file) is a :class:`ModelFileError`;
duplicate member names, a total uncompressed size above
:data:`MAX_TOTAL_BYTES`, a member above :data:`MAX_MEMBER_BYTES` and an
``.npy`` header whose shape x itemsize disagrees with the member's size or
exceeds the cap are refused before any data are read; ``model.json`` may nest
at most :data:`MAX_JSON_DEPTH` deep, its integers have at most
:data:`MAX_INT_DIGITS` digits, its object keys must be unique and at most
:data:`MAX_JSON_KEYS` in all (checked while parsing, in linear time), an
archive has at most :data:`MAX_MEMBERS` members, NaN and infinities are
refused, and a boolean is never accepted where a number is. The caps are
module constants; raise one (assign it) only to read a file you trust.
The model is then checked as a whole at load, so that a damaged file is a
:class:`ModelFileError` at load and never a data error at predict: the
scales are normal positive floats whose inverses are finite, the formula's
terms name only the file's input columns, factor levels do not repeat, and
the design the formula builds has exactly the file's columns.

A model fitted with a callable kernel or a formula with Python expressions
(``np.log(x)``, possible only with ``from_formula(..., safe=False)``) cannot
be saved in this format; compute such columns in the data frame before fitting.
"""

from __future__ import annotations

import io
import json
from collections import Counter
import math
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from csvm_stats._version import __version__
from csvm_stats.preprocessing.design import LabelCoding, Standardizer
from csvm_stats.exceptions import DataError, InputFileError, InputLimitError
from csvm_stats.preprocessing.paths import as_path, check_input_file
from csvm_stats.optimization.kernels import FeatureMap, Kernel
from csvm_stats.probability.score_model import ProbabilityModel
from csvm_stats.probability.venn_abers import VennAbers, merge
from csvm_stats.preprocessing.validation import check_feature_table, check_unique_columns

if TYPE_CHECKING:
    from csvm_stats.preprocessing.formula import FormulaDesign
    from csvm_stats.preprocessing.formula_grammar import Factor as GrammarFactor
    from csvm_stats.models.results import CSVMResults

FORMAT_NAME = "csvm-stats-model"
FORMAT_VERSION = 1
METADATA_MEMBER = "model.json"
ARRAY_PREFIX = "arrays/"
#: Arrays every model has, and those a kernel model adds.
LINEAR_ARRAYS = ("coef", "scale_mean", "scale_sd")
KERNEL_ARRAYS = ("reference", "projection")
CALIBRATION_ARRAYS = ("va_scores", "va_p0", "va_p1")
PROBABILITY_ARRAYS = ("prob_coef",)
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


# ---------------------------------------------------------------------- plain values
def _plain(value: Any) -> Any:
    """A JSON-ready copy of a scalar, mapping NaN, infinities and pandas' NA to None.

    JSON has no infinity: a solve record without a finite bound (best_bound -inf, gap inf) is saved as null.
    """
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return str(value)


def _plain_params(params: pd.Series | pd.DataFrame) -> dict[str, Any]:
    """``{name: coef}``, or ``{class: {name: coef}}`` for the multiclass table (one column per class)."""
    if isinstance(params, pd.DataFrame):
        return {str(c): _plain_params(params[c]) for c in params.columns}
    return {str(k): float(v) for k, v in params.items()}


@dataclass(frozen=True)
class FileForm:
    """A model form besides the two-class CSVM that the format holds (``"kind"`` in model.json).

    The form's package registers it (:func:`register_file_form`; the
    multiclass CSVM in :mod:`csvm_stats.multiclass.persistence`), so this
    module imports none of them and the import graph stays a tree.
    ``extra_members`` matches the archive members the form adds.
    """

    kind: str
    results_type: type
    report: Callable[[Any], dict[str, Any]]
    save: Callable[[Any, str | Path], Path]
    from_archive: Callable[[dict[str, Any], dict[str, np.ndarray]], SavedModel]
    extra_members: re.Pattern[str] | None = None


_FILE_FORMS: dict[str, FileForm] = {}


def register_file_form(form: FileForm) -> None:
    """Let :func:`save_model`, :func:`results_report` and :func:`load_model` handle ``form``."""
    _FILE_FORMS[form.kind] = form


def _form_of(results: Any) -> FileForm | None:
    return next((form for form in _FILE_FORMS.values() if isinstance(results, form.results_type)), None)


def results_report(results: CSVMResults) -> dict[str, Any]:
    """The report of a fit as plain values: summary text, statements, rates, coefficients, solver.

    Used for the saved format and for ``csvm-stats fit --format json``; a
    registered form (:class:`FileForm`) gives its own report (the multiclass
    fit adds its confusion matrix).
    """
    form = _form_of(results)
    return report_fields(results) if form is None else form.report(results)


def report_fields(results: CSVMResults) -> dict[str, Any]:
    """The fields every report has (two classes or several)."""
    record = results.solver
    rates = results.rates
    return {
        "summary_text": str(results.summary()),
        "statements": {str(k): str(v) for k, v in results.statements.items()},
        "joint_statement": str(results.joint_statement),
        "rates": {str(rate): {str(c): _plain(v) for c, v in row.items()} for rate, row in rates.iterrows()},
        "params": _plain_params(results.params),
        "solver": {
            "status": record.status.value,
            "objective": _plain(record.objective),
            "best_bound": _plain(record.best_bound),
            "gap": _plain(record.gap),
            "wall_time": _plain(record.wall_time),
            "nodes": _plain(record.nodes),
            "backend": str(record.backend),
            "backend_version": str(record.backend_version),
            "formulation": str(record.formulation),
        },
        "warnings": [str(w) for w in results.warnings],
        "samples": {k: int(v) for k, v in results.split.sizes().items()},
        "random_state": int(results.random_state),
        "sample_roles": {"rows": [str(i) for i in results.sample_roles.index],
                         "roles": [str(r) for r in results.sample_roles]},
        **_selection_report(results),
    }


def _selection_report(results: CSVMResults) -> dict[str, Any]:
    """``{"selection": ...}`` for a sparse CSVM (module docstring), else nothing."""
    selected = getattr(results, "selected_features", None)
    if selected is None:
        return {}
    return {
        "selection": {
            "route": results.route,
            "max_features": results.engine_fit.max_features,
            "exact": bool(results.exact),
            "features": {str(k): float(v) for k, v in
                         selected["coef" if "coef" in selected.columns else "coef_std_norm"].items()},
        }
    }


def _label_kind(coding: LabelCoding) -> str:
    if isinstance(coding.dtype, pd.CategoricalDtype):
        return "category"
    values = coding.levels
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        return "bool"
    if all(isinstance(v, (int, np.integer)) for v in values):
        return "int"
    if all(isinstance(v, (float, np.floating)) for v in values):
        return "float"
    if all(isinstance(v, str) for v in values):
        return "str"
    raise DataError(
        f"the class labels {list(values)!r} cannot be saved; recode them as strings, numbers or booleans."
    )


def _factor_entry(factor: GrammarFactor) -> str | dict[str, str]:
    """A term entry of the file: the column, ``{"C": column}``, or that with ``"contrasts": "poly"``."""
    if not factor.categorical:
        return factor.column
    return {"C": factor.column} if factor.contrasts == "treatment" else {"C": factor.column, "contrasts": factor.contrasts}


def _formula_fields(design: FormulaDesign) -> dict[str, Any]:
    from formulaic.parser.types import Factor

    terms: list[list[Any]] = []
    if design.parsed is not None:  # our grammar's structure: columns, and {"C": column} for C(column)
        terms = [[_factor_entry(f) for f in term] for term in design.parsed.terms]
        intercept = design.parsed.intercept
    else:
        intercept = False
        for term in design.spec.formula:
            factors = list(term.factors)
            if all(f.eval_method is Factor.EvalMethod.LITERAL for f in factors):
                intercept = intercept or any(str(f.expr) == "1" for f in factors)
                continue
            if not all(f.eval_method is Factor.EvalMethod.LOOKUP for f in factors):
                raise DataError(
                    f"the formula {design.formula!r} uses Python expressions ({term}); the saved format keeps only "
                    "column names, C(column) and their interactions. Compute transformed columns in the data frame "
                    "before fitting."
                )
            terms.append([str(f.expr) for f in factors])
    categories: dict[str, list[Any]] = {}
    for name, (kind, state) in design.spec.encoder_state.items():
        if kind.value == "categorical":
            categories[str(name)] = [_plain(level) for level in state["categories"]]
    return {
        "formula": design.formula,
        "response": design.response,
        "terms": terms,
        "categories": categories,
        "intercept": intercept,
    }


def save_model(results: CSVMResults, path: str | Path) -> Path:
    """Write ``results`` to ``path`` in the format of the module docstring; return the path.

    A fit of a registered form (:class:`FileForm`; the multiclass CSVM) is
    written by that form's own ``save``.

    Parameters
    ----------
    results : CSVMResults
        A fitted model (two classes, several classes or sparse).
    path : str or pathlib.Path
        The file to write (conventionally ``.csvm``).

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    csvm_stats.exceptions.DataError
        The results cannot be represented in the format (a callable kernel
        would have to be stored as code).

    Examples
    --------
    >>> import os, tempfile
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.data.datasets import load_dataset
    >>> from csvm_stats.interfaces.persistence import load_model, save_model
    >>> X, y = load_dataset("wisconsin")
    >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
    >>> path = save_model(res, os.path.join(tempfile.mkdtemp(), "model.csvm"))
    >>> path.name
    'model.csvm'
    """
    form = _form_of(results)
    if form is not None:
        return form.save(results, path)
    fit = results.engine_fit
    coding = results.model.coding
    kernel = kernel_fields(fit.feature_map)
    calibration = _saved_calibration(results)  # before the report, so that its summary shows the calibration
    metadata = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "labels": {
            "levels": [_plain(v) for v in coding.levels],
            "positive": _plain(coding.positive),
            "name": coding.name,
            "dtype": _label_kind(coding),
        },
        "columns": list(results.model.exog_names),
        "formula": None if results.model.formula is None else _formula_fields(results.model.formula),
        "kernel": kernel,
        "intercept": float(results.intercept),
        "calibration": None,
        "report": results_report(results),
    }
    arrays = model_arrays(fit.coef, results.scaler, fit.feature_map)
    if calibration is not None:
        va = calibration.predictor
        metadata["calibration"] = {"method": calibration.method, "n": va.n, "n_positive": va.n_positive,
                                   "folds": calibration.folds}
        arrays |= {"va_scores": va.scores, "va_p0": va.p0, "va_p1": va.p1}
        if calibration.model is not None:
            m = calibration.model
            metadata["calibration"]["model"] = {"intercept": m.intercept, "slope": m.slope, "offset": m.offset,
                                                "penalty": m.penalty, "n": m.n}
            arrays["prob_coef"] = m.coef
    return write_archive(path, metadata, arrays)


def kernel_fields(fmap: FeatureMap) -> dict[str, Any]:
    """The ``kernel`` object of the format (a callable kernel cannot be saved)."""
    kernel = fmap.kernel
    if kernel.name not in ("linear", "rbf", "poly"):
        raise DataError(
            "a model with a callable kernel cannot be saved (the file would have to hold code); "
            "use kernel='linear', 'rbf' or 'poly'."
        )
    return {
        "name": kernel.name,
        "gamma": kernel.gamma,
        "degree": int(kernel.degree),
        "coef0": float(kernel.coef0),
        "rank": int(fmap.rank),
        "numerical_rank": int(fmap.numerical_rank),
        "exact": bool(fmap.exact),
    }


def model_arrays(coef: np.ndarray, scaler: Standardizer, fmap: FeatureMap) -> dict[str, np.ndarray]:
    """The ``arrays/`` members: coefficients, scaling and, for a kernel, the feature map."""
    arrays = {"coef": coef, "scale_mean": scaler.mean, "scale_sd": scaler.scale}
    if fmap.reference is not None:
        arrays |= {"reference": fmap.reference, "projection": fmap.projection}
    return arrays


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


def _saved_calibration(results: CSVMResults):
    """The fit's Venn-Abers calibration (computed now if needed), or None when the data are too few for one."""
    try:
        return results.calibration
    except DataError:
        return None


# ---------------------------------------------------------------------- loading
def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ModelFileError(f"not a valid csvm-stats model file: {message}")


def _within(condition: bool, message: str, cap: str) -> None:
    """Like :func:`_require`, for a size cap: a :class:`ModelFileLimitError` naming the cap to raise."""
    if not condition:
        raise ModelFileLimitError(
            f"not a valid csvm-stats model file: {message}; the cap is csvm_stats.interfaces.persistence.{cap}, "
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


def _read_archive(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
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
            _require(isinstance(kind, str) and kind in _FILE_FORMS,
                     f"kind {kind!r} is not one this csvm-stats reads ({sorted(_FILE_FORMS)})")
            pattern = _FILE_FORMS[kind].extra_members
            unknown = [name for name in unknown if pattern is None or not pattern.fullmatch(name)]
        _require(not unknown, f"unexpected member(s) {unknown}")
        arrays = {
            name[len(ARRAY_PREFIX) : -len(".npy")]: _read_array(archive, members[name])
            for name in sorted(set(members) - {METADATA_MEMBER})
        }
    return metadata, arrays


_LABEL_CHECKS = {
    "int": _is_integer,
    "float": _is_number,
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "category": lambda v: isinstance(v, str) or isinstance(v, bool) or _is_number(v),
}


def _labels(fields: Any) -> LabelCoding:
    _require(isinstance(fields, dict), "labels must be an object")
    levels, positive, kind = fields.get("levels"), fields.get("positive"), fields.get("dtype")
    _require(kind in _LABEL_DTYPES, f"labels.dtype must be one of {_LABEL_DTYPES}")
    _require(isinstance(levels, list) and len(levels) == 2, "labels.levels must list two labels")
    _require(all(_LABEL_CHECKS[kind](v) for v in levels), f"labels.levels must be of labels.dtype {kind!r}")
    _require(levels[0] != levels[1], "labels.levels must be two different labels")
    _require(positive in levels, "labels.positive must be one of labels.levels")
    name = fields.get("name")
    _require(name is None or isinstance(name, str), "labels.name must be a string or null")
    dtype: Any = {
        "int": np.dtype(np.int64),
        "float": np.dtype(np.float64),
        "bool": np.dtype(bool),
        "str": None,
        "category": pd.CategoricalDtype(levels),
    }[kind]
    return LabelCoding((levels[0], levels[1]), positive, name, dtype)


def _kernel(fields: Any, arrays: dict[str, np.ndarray], p: int) -> FeatureMap:
    _require(isinstance(fields, dict), "kernel must be an object")
    name = fields.get("name")
    _require(name in ("linear", "rbf", "poly"), "kernel.name must be 'linear', 'rbf' or 'poly'")
    coef = arrays.get("coef")
    _require(coef is not None and coef.ndim == 1, "arrays/coef.npy must be a vector")
    gamma, degree, coef0 = fields.get("gamma"), fields.get("degree"), fields.get("coef0")
    _require(_is_integer(degree) and 1 <= degree <= 100, "kernel.degree must be a positive integer")
    _require(_is_number(coef0), "kernel.coef0 must be a number")
    rank, numerical_rank, exact = fields.get("rank"), fields.get("numerical_rank"), fields.get("exact")
    _require(_is_integer(rank) and _is_integer(numerical_rank) and isinstance(exact, bool), "kernel rank fields")
    if name == "linear":
        _require(gamma is None, "kernel.gamma must be null for a linear model")
        _require(coef.size == p, f"a linear model needs {p} coefficients, the file has {coef.size}")
        _require(not set(KERNEL_ARRAYS) & set(arrays), "a linear model has no reference or projection arrays")
        return FeatureMap(Kernel("linear"), rank=p, numerical_rank=p, exact=True)
    _require(_is_number(gamma) and gamma > 0, "kernel.gamma must be a positive number")
    reference, projection = arrays.get("reference"), arrays.get("projection")
    _require(reference is not None and projection is not None, "a kernel model needs reference and projection arrays")
    _require(reference.ndim == 2 and reference.shape[1] == p, f"reference must have {p} columns")
    _require(
        projection.ndim == 2 and projection.shape == (reference.shape[0], coef.size),
        "projection must be (reference rows) x (number of coefficients)",
    )
    kernel = Kernel(name, gamma=float(gamma), degree=int(degree), coef0=float(coef0))
    return FeatureMap(kernel, reference, projection, rank=rank, numerical_rank=numerical_rank, exact=exact)


_BACKTICK_SAFE = re.compile(r"^[^`\\\n\r]+$")


def _factor(entry: Any) -> GrammarFactor:
    """A saved term entry: a column name, ``{"C": column}`` for ``C(column)``, with ``"contrasts": "poly"``."""
    from csvm_stats.preprocessing.formula_grammar import CONTRASTS, Factor as GrammarFactor

    categorical = isinstance(entry, dict)
    contrasts = "treatment"
    if categorical:
        _require(list(entry) in (["C"], ["C", "contrasts"]), f"bad formula factor {entry!r} in a term")
        contrasts = entry.get("contrasts", contrasts)
        _require(contrasts in CONTRASTS, f"bad contrasts {contrasts!r} in a term")
        entry = entry["C"]
    _require(isinstance(entry, str) and bool(_BACKTICK_SAFE.match(entry)), f"bad column name {entry!r} in a term")
    return GrammarFactor(entry, categorical, contrasts)


def _formula(fields: Any, columns: list[str]) -> FormulaDesign | None:
    """Rebuild the formula spec from its structure only (column look-ups and our own ``C(column)``).

    The formula text in the file is never parsed or evaluated; the spec is
    rebuilt by :meth:`~csvm_stats.preprocessing.formula_grammar.ParsedFormula.rhs` from the
    checked term entries and verified factor by factor.
    """
    if fields is None:
        return None
    from formulaic import ModelSpec
    from formulaic.parser.types import Factor

    from csvm_stats.preprocessing.formula import FormulaDesign, check_structure
    from csvm_stats.preprocessing.formula_grammar import ParsedFormula

    _require(isinstance(fields, dict), "formula must be an object or null")
    terms, categories = fields.get("terms"), fields.get("categories")
    formula, response = fields.get("formula"), fields.get("response")
    intercept = fields.get("intercept", True)  # files written before the field kept the intercept
    _require(isinstance(formula, str) and isinstance(response, str), "formula.formula and formula.response must be strings")
    _require(isinstance(terms, list) and terms, "formula.terms must be a non-empty list")
    _require(isinstance(categories, dict), "formula.categories must be an object")
    _require(isinstance(intercept, bool), "formula.intercept must be true or false")
    for term in terms:
        _require(isinstance(term, list) and term, "each formula term must be a non-empty list of column names")
    parsed = ParsedFormula(formula, response, tuple(tuple(_factor(e) for e in term) for term in terms), intercept)
    exprs = {factor.expr: factor for term in parsed.terms for factor in term}
    for name, levels in categories.items():
        _require(name in exprs, f"formula.categories names {name!r}, which no term uses")
        _require(isinstance(levels, list) and levels, f"formula.categories[{name!r}] must list levels")
        _require(all(_LABEL_CHECKS["category"](v) for v in levels), f"levels of {name!r}")
        _require(
            len({(type(v).__name__, v) for v in levels}) == len(levels),
            f"formula.categories[{name!r}] repeats a level",
        )
    encoder_state = {
        expr: (Factor.Kind.CATEGORICAL, {"categories": list(categories[expr])})
        if expr in categories
        else (Factor.Kind.NUMERICAL, {})
        for expr in exprs
    }
    spec = ModelSpec(formula=parsed.rhs(), materializer="pandas", ensure_full_rank=True, encoder_state=encoder_state)
    try:
        check_structure(spec, parsed)
    except DataError as error:
        raise ModelFileError(f"not a valid csvm-stats model file: {error}") from None
    return FormulaDesign(formula, response, spec, tuple(columns), inputs=parsed.columns, parsed=parsed)


def _scaler(arrays: dict[str, np.ndarray], p: int) -> Standardizer:
    """The stored standardisation: ``p`` finite means and ``p`` positive normal scales with finite inverses."""
    for name in ("scale_mean", "scale_sd"):
        _require(name in arrays and arrays[name].shape == (p,), f"{name} must have {p} entries")
    tiny = np.finfo(np.float64).tiny
    sd = arrays["scale_sd"]
    _require(
        bool(np.all(sd >= tiny)) and bool(np.all(np.isfinite(1.0 / sd))),
        f"scale_sd must be positive normal numbers (>= {tiny:.3g}); it has {float(sd.min()):.3g}",
    )
    return Standardizer(arrays["scale_mean"], sd)


def _checked_formula(fields: Any, columns: list[str]) -> FormulaDesign | None:
    """The stored formula (:func:`_formula`), checked to build exactly the file's design columns."""
    formula = _formula(fields, columns)
    if formula is not None:
        _check_formula_columns(formula, columns)
    return formula


def _check_formula_columns(design: FormulaDesign, columns: list[str]) -> None:
    """The formula must build exactly the file's design columns (probed on levels and zeros, never on user data)."""
    from csvm_stats.preprocessing.formula import probe_frame

    try:
        built = list(map(str, design.transform(probe_frame(design)).columns))
    except DataError as error:
        raise ModelFileError(f"not a valid csvm-stats model file: its formula cannot build a design ({error})") from None
    _require(
        built == list(columns),
        f"its formula builds the design columns {built[:8]}, but the file lists {list(columns)[:8]}",
    )


def _calibration(fields: Any, arrays: dict[str, np.ndarray]) -> tuple[VennAbers | None, str | None]:
    """The stored Venn-Abers predictor and its method, or (None, None) for a file without one."""
    present = [n for n in CALIBRATION_ARRAYS if n in arrays]
    if fields is None:
        _require(not present, "calibration arrays without calibration metadata")
        return None, None
    _require(isinstance(fields, dict), "calibration must be an object or null")
    _require(len(present) == len(CALIBRATION_ARRAYS), f"a calibration needs the arrays {list(CALIBRATION_ARRAYS)}")
    method, n, n_pos, folds = (fields.get(k) for k in ("method", "n", "n_positive", "folds"))
    _require(method in ("held-out", "cross-fitted"), "calibration.method must be 'held-out' or 'cross-fitted'")
    counts = (n, n_pos, folds)
    _require(all(isinstance(v, int) and not isinstance(v, bool) for v in counts), "calibration counts must be integers")
    _require(0 <= n_pos <= n and n >= 1 and folds >= 0, "calibration counts are inconsistent")
    scores, p0, p1 = (arrays[k] for k in CALIBRATION_ARRAYS)
    k = scores.size
    _require(scores.ndim == 1 and k >= 1 and bool(np.all(np.diff(scores) > 0)), "va_scores must increase strictly")
    _require(p0.shape == (2 * k + 1,) and p1.shape == (2 * k + 1,), f"va_p0 and va_p1 must have {2 * k + 1} entries")
    _require(bool(np.all((0 <= p0) & (p0 <= p1) & (p1 <= 1))), "va_p0 <= va_p1 must lie in [0, 1]")
    return VennAbers(scores, p0, p1, n, n_pos), method


def _probability_model(fields: Any, arrays: dict[str, np.ndarray], r: int) -> ProbabilityModel | None:
    """The stored probability model of a held-out calibration, or None (cross-fitted, or an older file)."""
    model = fields.get("model") if isinstance(fields, dict) else None
    if model is None:
        _require("prob_coef" not in arrays, "prob_coef without calibration.model")
        return None
    _require(isinstance(model, dict) and fields.get("method") == "held-out",
             "calibration.model must be an object, on the held-out route")
    numbers = [model.get(k) for k in ("intercept", "slope", "offset", "penalty")]
    _require(all(_is_number(v) for v in numbers), "calibration.model needs numbers intercept, slope, offset, penalty")
    _require(_is_integer(model.get("n")) and model["n"] >= 1, "calibration.model.n must be a positive integer")
    _require("prob_coef" in arrays and arrays["prob_coef"].shape == (r,), f"prob_coef must have {r} entries")
    _require(bool(np.all(np.isfinite(arrays["prob_coef"]))), "prob_coef must be finite")
    return ProbabilityModel(arrays["prob_coef"], *(float(v) for v in numbers), n=int(model["n"]))


@dataclass(frozen=True)
class SavedModel:
    """A CSVM loaded from a model file: it predicts, and it carries the fit's report.

    ``decision_function`` and ``predict`` take a DataFrame (through the
    formula when the model had one; else by the design column names) or, for
    a model fitted on arrays, an (n, p) array.

    Parameters
    ----------
    columns : tuple of str
        The design column names.
    coding : LabelCoding
        The labels and the positive class.
    scaler : Standardizer
        The column centring and scaling of the fit.
    feature_map : FeatureMap
        The kernel's feature map (identity for the linear kernel).
    coef : numpy.ndarray
        Coefficients on the feature map.
    intercept : float
        The intercept (after guarantee mode if that was used).
    formula : FormulaDesign or None
        The checked formula, rebuilt from column look-ups.
    report : dict
        The fit's report (summary text, rates, statements, seed, ...).
    library_version : str
        The csvm-stats that wrote the file.
    calibration : VennAbers or None
        The Venn-Abers predictor of the fit.
    calibration_method : str or None
        ``"held-out"`` or ``"cross-fitted"``.
    probability_model : ProbabilityModel or None
        The held-out route's logistic score and sigmoid
        (:class:`csvm_stats.probability.score_model.ProbabilityModel`) that give
        the point probabilities; ``None`` in files written before it existed and
        on the cross-fitted route (the Venn-Abers merge is used then).

    Examples
    --------
    >>> import os, tempfile
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.data.datasets import load_dataset
    >>> from csvm_stats.interfaces.persistence import load_model, save_model
    >>> X, y = load_dataset("wisconsin")
    >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
    >>> path = save_model(res, os.path.join(tempfile.mkdtemp(), "model.csvm"))
    >>> saved = load_model(path)
    >>> saved.random_state
    0
    """

    columns: tuple[str, ...]
    coding: LabelCoding
    scaler: Standardizer
    feature_map: FeatureMap
    coef: np.ndarray
    intercept: float
    formula: FormulaDesign | None
    report: dict[str, Any]
    library_version: str
    calibration: VennAbers | None = None
    calibration_method: str | None = None
    probability_model: ProbabilityModel | None = None

    def design_matrix(self, newdata: Any) -> pd.DataFrame:
        """New data as the model's design columns, index kept; missing columns are an error.

        Parameters
        ----------
        newdata : DataFrame or array-like
            Rows with the model's predictor columns (through the formula when the
            model had one); an (n, p) array for a model fitted on arrays.

        Returns
        -------
        pandas.DataFrame
            The design columns, index kept.

        Raises
        ------
        csvm_stats.exceptions.DataError
            ``newdata`` lacks a column or has text in a numeric one.

        Examples
        --------
        >>> import os, tempfile
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.interfaces.persistence import load_model, save_model
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> path = save_model(res, os.path.join(tempfile.mkdtemp(), "model.csvm"))
        >>> saved = load_model(path)
        >>> saved.design_matrix(X.head(2)).shape
        (2, 30)
        """
        if self.formula is not None:
            design = self.formula.transform(newdata)
            if tuple(map(str, design.columns)) != self.columns:
                raise DataError(
                    f"the new data give design columns {list(map(str, design.columns))}, but the model was fitted "
                    f"on {list(self.columns)}; check the factor columns' levels."
                )
            return design
        if isinstance(newdata, pd.DataFrame):
            check_unique_columns(newdata, "the new data")
            missing = [c for c in self.columns if c not in newdata.columns]
            if missing:
                raise DataError(f"the new data lack the column(s) {missing} the model was fitted on.")
            frame = newdata[list(self.columns)]
        else:
            check_feature_table(newdata, "the new data")
            values = np.asarray(newdata, dtype=float)
            if values.ndim != 2 or values.shape[1] != len(self.columns):
                raise DataError(f"the new data must have {len(self.columns)} columns, got shape {values.shape}.")
            frame = pd.DataFrame(values, columns=list(self.columns))
        non_numeric = [str(c) for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
        if non_numeric:
            raise DataError(f"the column(s) {non_numeric} must be numeric.")
        frame = frame.astype(float)
        if not np.isfinite(frame.to_numpy()).all():
            raise DataError("the new data have missing or infinite values; remove or impute them first.")
        return frame

    def decision_function(self, newdata: Any) -> pd.Series:
        """f(x) (positive class when >= 0), indexed like the data.

        Parameters
        ----------
        newdata : DataFrame or array-like
            Rows with the model's predictor columns (through the formula when the
            model had one); an (n, p) array for a model fitted on arrays.

        Returns
        -------
        pandas.Series
            f(x) per row.

        Raises
        ------
        csvm_stats.exceptions.DataError
            ``newdata`` lacks a column or has text in a numeric one.

        Examples
        --------
        >>> import os, tempfile
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.interfaces.persistence import load_model, save_model
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> path = save_model(res, os.path.join(tempfile.mkdtemp(), "model.csvm"))
        >>> saved = load_model(path)
        >>> bool((saved.decision_function(X) == res.decision_function(X)).all())
        True
        """
        design = self.design_matrix(newdata)
        phi = self.feature_map.transform(self.scaler.transform(design.to_numpy()))
        return pd.Series(phi @ self.coef + self.intercept, index=design.index, name="decision")

    def predict(self, newdata: Any) -> pd.Series:
        """Predicted labels in the original coding, indexed like the data.

        Parameters
        ----------
        newdata : DataFrame or array-like
            Rows with the model's predictor columns (through the formula when the
            model had one); an (n, p) array for a model fitted on arrays.

        Returns
        -------
        pandas.Series
            Predicted labels, indexed like the data.

        Raises
        ------
        csvm_stats.exceptions.DataError
            ``newdata`` lacks a column or has text in a numeric one.

        Examples
        --------
        >>> import os, tempfile
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.interfaces.persistence import load_model, save_model
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> path = save_model(res, os.path.join(tempfile.mkdtemp(), "model.csvm"))
        >>> saved = load_model(path)
        >>> saved.predict(X.head(2)).shape
        (2,)
        """
        decision = self.decision_function(newdata)
        return self.coding.decode(decision.to_numpy(), index=decision.index)

    def predict_proba(self, newdata: Any, *, interval: bool = False) -> pd.Series | pd.DataFrame:
        """Venn-Abers P(positive | x) as the fit gave it (``interval=True``: columns p0, p1, p).

        Parameters
        ----------
        newdata : DataFrame or array-like
            Rows with the model's predictor columns (through the formula when the
            model had one); an (n, p) array for a model fitted on arrays.
        interval : bool, default False
            Return the columns ``p0``, ``p1`` and ``p``.

        Returns
        -------
        pandas.Series or pandas.DataFrame
            P(positive | x) per row, or the interval and merged probability.

        Raises
        ------
        csvm_stats.exceptions.DataError
            Bad ``newdata``, or a file saved without a calibration.

        Examples
        --------
        >>> import os, tempfile
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.interfaces.persistence import load_model, save_model
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> path = save_model(res, os.path.join(tempfile.mkdtemp(), "model.csvm"))
        >>> saved = load_model(path)
        >>> list(saved.predict_proba(X.head(2), interval=True).columns)
        ['p0', 'p1', 'p']
        """
        if self.calibration is None:
            raise DataError(
                "this model file holds no probability calibration (written before calibrations were saved, or "
                "fitted on too few points for one); refit and save the model again to get probabilities."
            )
        design = self.design_matrix(newdata)
        phi = self.feature_map.transform(self.scaler.transform(design.to_numpy()))
        if self.probability_model is None:  # cross-fitted, or a file from before the probability model
            p0, p1 = self.calibration.interval(phi @ self.coef + self.intercept)
            p = merge(p0, p1)
        else:
            score = self.probability_model.score(phi)
            p0, p1 = self.calibration.interval(score)
            p = self.probability_model.probability(score)
        if interval:
            return pd.DataFrame({"p0": p0, "p1": p1, "p": p}, index=design.index)
        return pd.Series(p, index=design.index, name=f"P({self.coding.positive!r})")

    @property
    def summary_text(self) -> str:
        """The summary of the fit, as printed when it was saved."""
        return self.report["summary_text"]

    @property
    def rates(self) -> pd.DataFrame:
        """The rate table of the fit (as ``CSVMResults.rates``)."""
        return pd.DataFrame.from_dict(self.report["rates"], orient="index")

    @property
    def statements(self) -> pd.Series:
        """The confidence statements of the fit."""
        return pd.Series(self.report["statements"], name="statement")

    @property
    def selected_features(self) -> pd.Series | None:
        """A sparse CSVM's selected features and coefficients (original units); ``None`` otherwise."""
        selection = self.report.get("selection")
        if selection is None:
            return None
        return pd.Series(selection["features"], name="coef", dtype=float)

    @property
    def random_state(self) -> int | None:
        """The seed of the fit (pass it to ``fit`` to repeat it); ``None`` for files written before it was kept."""
        return self.report.get("random_state")

    @property
    def sample_roles(self) -> pd.Series | None:
        """Each fitted row's role (``CSVMResults.sample_roles``, row labels as text); ``None`` in older files."""
        roles = self.report.get("sample_roles")
        return None if roles is None else pd.Series(roles["roles"], index=roles["rows"], name="sample", dtype=object)


def _check_selection(selection: Any, columns: list[str]) -> None:
    if selection is None:
        return
    _require(isinstance(selection, dict), "report.selection must be an object")
    _require(selection.get("route") in ("l1", "cardinality"), "report.selection.route must be 'l1' or 'cardinality'")
    s = selection.get("max_features")
    _require(s is None or (_is_integer(s) and s >= 1), "report.selection.max_features must be a positive integer")
    _require(isinstance(selection.get("exact"), bool), "report.selection.exact must be a boolean")
    features = selection.get("features")
    _require(isinstance(features, dict) and set(features) <= set(columns), "report.selection.features must name columns")
    _require(all(_is_number(v) for v in features.values()), "report.selection.features must map columns to numbers")


def _report(report: Any, columns: list[str]) -> dict[str, Any]:
    _require(isinstance(report, dict) and isinstance(report.get("summary_text"), str), "report.summary_text")
    statements, rates = report.get("statements", {}), report.get("rates", {})
    _require(
        isinstance(statements, dict) and all(isinstance(v, str) for v in statements.values()),
        "report.statements must map rates to text",
    )
    _require(isinstance(rates, dict) and all(isinstance(v, dict) for v in rates.values()), "report.rates")
    seed = report.get("random_state")
    _require(seed is None or _is_integer(seed), "report.random_state must be an integer")
    _check_selection(report.get("selection"), columns)
    roles = report.get("sample_roles")
    _require(roles is None or (isinstance(roles, dict) and isinstance(roles.get("rows"), list)
                               and isinstance(roles.get("roles"), list) and len(roles["rows"]) == len(roles["roles"])
                               and all(isinstance(v, str) for v in roles["rows"])
                               and set(roles["roles"]) <= {"training", "anchor", "held-out", "unused"}),
             "report.sample_roles must list the rows and their roles")
    return report


def load_model(path: str | Path) -> SavedModel:
    """Read a model file written by :func:`save_model`; raise :class:`ModelFileError` if it is not one.

    Every failure while reading, whatever its cause (damaged ZIP data, a wrong
    CRC, a truncated or tampered file), is a :class:`ModelFileError`; a file
    is either refused or gives exactly the model that was saved.

    Parameters
    ----------
    path : str or pathlib.Path
        A file written by :func:`save_model`.

    Returns
    -------
    SavedModel
        The model: predictions and the fit's report.

    Raises
    ------
    ModelFileError
        The file is not a model file, is damaged, or exceeds the size caps.

    Examples
    --------
    >>> import os, tempfile
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.data.datasets import load_dataset
    >>> from csvm_stats.interfaces.persistence import load_model, save_model
    >>> X, y = load_dataset("wisconsin")
    >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
    >>> path = save_model(res, os.path.join(tempfile.mkdtemp(), "model.csvm"))
    >>> saved = load_model(path)
    >>> bool((saved.predict(X) == res.predict(X)).all())
    True
    """
    try:
        path = as_path(path, "model file")
    except InputFileError as error:
        raise ModelFileError(str(error)) from None
    try:
        return _load(path)
    except ModelFileError:
        raise
    except Exception as error:  # zipfile, zlib, numpy and json raise many types for damaged input
        detail = str(error).splitlines()[0][:200] if str(error) else ""
        raise ModelFileError(
            f"{str(path)!r} is not a valid csvm-stats model file (damaged, truncated or not written by "
            f"csvm-stats): {type(error).__name__}: {detail}"
        ) from None


def _load(path: Path) -> SavedModel:
    metadata, arrays = _read_archive(path)
    if metadata.get("kind") is not None:  # _read_archive checked that it is registered
        return _FILE_FORMS[metadata["kind"]].from_archive(metadata, arrays)
    columns = metadata.get("columns")
    _require(isinstance(columns, list) and columns and all(isinstance(c, str) for c in columns), "columns")
    _require(len(set(columns)) == len(columns), "columns must not repeat")
    p = len(columns)
    fmap = _kernel(metadata.get("kernel"), arrays, p)
    scaler = _scaler(arrays, p)
    intercept = metadata.get("intercept")
    _require(_is_number(intercept), "intercept must be a number")
    report = _report(metadata.get("report"), columns)
    calibration, method = _calibration(metadata.get("calibration"), arrays)
    formula = _checked_formula(metadata.get("formula"), columns)
    return SavedModel(
        columns=tuple(columns),
        coding=_labels(metadata.get("labels")),
        scaler=scaler,
        feature_map=fmap,
        coef=arrays["coef"],
        intercept=float(intercept),
        formula=formula,
        report=report,
        library_version=str(metadata.get("library_version")),
        calibration=calibration,
        calibration_method=method,
        probability_model=_probability_model(metadata.get("calibration"), arrays, arrays["coef"].size),
    )
