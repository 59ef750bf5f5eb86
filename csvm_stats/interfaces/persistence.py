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
    (:mod:`csvm_stats.probability.fit_calibration`), and ``"model":
    {"intercept": float, "slope": float, "offset": float, "penalty": float,
    "n": int, "interval_intercept": float, "curvature": float}``, the
    probability model beside the rule (:mod:`csvm_stats.probability.score_model`;
    ``curvature`` k of the beta-calibration extension, written when not 0,
    absent in older files: 0); the Venn-Abers arrays
    calibrate its interval score (``prob_interval_coef``,
    ``interval_intercept``: the held-out route's score fitted without H; absent
    on the cross-fitted route and in older files, where the single score
    ``prob_coef`` serves both). Older files lack the model (held-out files
    before the probability model, cross-fitted files before the cross-fitted
    route used it): their arrays calibrate the decision function and P is the
    merge p1 / (1 - p0 + p1).

``arrays/<name>.npy`` (NumPy ``.npy``, float64, never object arrays)
    ``coef`` (r,), ``scale_mean`` (p,), ``scale_sd`` (p,); for a kernel also
    ``reference`` (m, p) and ``projection`` (m, r); with a calibration
    ``va_scores`` (k,) (the distinct calibration scores, increasing)
    and ``va_p0``, ``va_p1`` (2k + 1,) (the Venn-Abers probabilities of every
    slot, :class:`csvm_stats.probability.venn_abers.VennAbers`); with a
    probability model ``prob_coef`` (r,), its coefficients on the feature map, and
    ``prob_interval_coef`` (r,), those of its interval score.

The decision function is :math:`f(x) = \phi(s(x))^\top w + b` with
:math:`s(x) = (x - \text{scale\_mean}) / \text{scale\_sd}` and
:math:`\phi(x) = K(x, \text{reference})\,\text{projection}` (the identity for
the linear kernel); the positive class is predicted where :math:`f(x) \ge 0`.
Reading is defensive: any failure while reading (a damaged archive, bad
compressed data, a wrong CRC, a truncated file) is a :class:`ModelFileError`;
duplicate member names, a total uncompressed size above
:data:`~csvm_stats.interfaces.model_format.MAX_TOTAL_BYTES`, a member above :data:`~csvm_stats.interfaces.model_format.MAX_MEMBER_BYTES` and an
``.npy`` header whose shape x itemsize disagrees with the member's size or
exceeds the cap are refused before any data are read; ``model.json`` may nest
at most :data:`~csvm_stats.interfaces.model_format.MAX_JSON_DEPTH` deep, its integers have at most
:data:`~csvm_stats.interfaces.model_format.MAX_INT_DIGITS` digits, its object keys must be unique and at most
:data:`~csvm_stats.interfaces.model_format.MAX_JSON_KEYS` in all (checked while parsing, in linear time), an
archive has at most :data:`~csvm_stats.interfaces.model_format.MAX_MEMBERS` members, NaN and infinities are
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

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from csvm_stats._version import __version__
from csvm_stats.exceptions import DataError, InputFileError
from csvm_stats.interfaces.model_checks import (
    _calibration,
    _checked_formula,
    _kernel,
    _labels,
    _probability_model,
    _report,
    _scaler,
)
from csvm_stats.interfaces.model_format import (
    ARRAY_PREFIX,
    CALIBRATION_ARRAYS,
    FORMAT_NAME,
    FORMAT_VERSION,
    KERNEL_ARRAYS,
    LINEAR_ARRAYS,
    ModelFileError,
    ModelFileLimitError,
    METADATA_MEMBER,
    PROBABILITY_ARRAYS,
    _is_number,
    _read_archive,
    _require,
    write_archive,
)
from csvm_stats.interfaces.saved_model import SavedModel
from csvm_stats.optimization.kernels import FeatureMap
from csvm_stats.preprocessing.design import LabelCoding, Standardizer
from csvm_stats.preprocessing.paths import as_path

if TYPE_CHECKING:
    from csvm_stats.preprocessing.formula import FormulaDesign
    from csvm_stats.preprocessing.formula_grammar import Factor as GrammarFactor
    from csvm_stats.models.results import CSVMResults

__all__ = [
    "ARRAY_PREFIX",
    "CALIBRATION_ARRAYS",
    "KERNEL_ARRAYS",
    "LINEAR_ARRAYS",
    "METADATA_MEMBER",
    "PROBABILITY_ARRAYS",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "FileForm",
    "ModelFileError",
    "ModelFileLimitError",
    "SavedModel",
    "kernel_fields",
    "load_model",
    "model_arrays",
    "register_file_form",
    "report_fields",
    "results_report",
    "save_model",
    "write_archive",
]


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
    registered form (``FileForm``) gives its own report (the multiclass
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

    A fit of a registered form (``FileForm``; the multiclass CSVM) is
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
            if m.curvature:
                metadata["calibration"]["model"]["curvature"] = m.curvature
            arrays["prob_coef"] = m.coef
            if m.interval_coef is not None:
                metadata["calibration"]["model"]["interval_intercept"] = m.interval_intercept
                arrays["prob_interval_coef"] = m.interval_coef
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


def _saved_calibration(results: CSVMResults):
    """The fit's Venn-Abers calibration (computed now if needed), or None when the data are too few for one."""
    try:
        return results.calibration
    except DataError:
        return None


# ---------------------------------------------------------------------- loading
def load_model(path: str | Path) -> SavedModel:
    """Read a model file written by :func:`~csvm_stats.interfaces.persistence.save_model`; raise :class:`~csvm_stats.interfaces.persistence.ModelFileError` if it is not one.

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
    metadata, arrays = _read_archive(path, _FILE_FORMS)
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

