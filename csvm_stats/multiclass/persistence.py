r"""Saved multiclass CSVM models: the ``csvm-stats-model`` format with ``"kind": "multiclass"``.

The archive is that of :mod:`csvm_stats.interfaces.persistence` (same members, same
checks on reading, never pickle), with these differences in ``model.json``:

* ``kind`` = ``"multiclass"`` (absent in a two-class file);
* ``labels``: ``{"levels": [a, b, c, ...], "name": str|null, "dtype": ...}``
  (at least two distinct levels, no ``positive``);
* ``intercept``: the list of the K offsets :math:`b_k` (after guarantee mode
  if that was used);
* ``report``: as for two classes (``params`` maps each class to its
  coefficients) plus ``confusion`` (``{true: {predicted: count}}`` on the
  held-out sample);

and ``arrays/coef.npy`` is the (K, r) matrix of the :math:`w_k`. The scores
are :math:`f_k(x) = \phi(s(x))^\top w_k + b_k` and the prediction is the class
of the largest score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats._version import __version__
from csvm_stats.exceptions import DataError
from csvm_stats.multiclass.certification import argmax_rule
from csvm_stats.multiclass.design import ClassCoding
from csvm_stats.multiclass.results import MulticlassResults
from csvm_stats.multiclass.probability import MulticlassCalibration, SoftmaxRecalibration, probability_frame
from csvm_stats.interfaces.model_checks import _LABEL_CHECKS, _calibration, _checked_formula, _kernel, _report, _scaler
from csvm_stats.interfaces.model_format import (
    CALIBRATION_ARRAYS,
    _LABEL_DTYPES,
    FORMAT_NAME,
    FORMAT_VERSION,
    _is_number,
    _require,
    write_archive,
)
from csvm_stats.interfaces.persistence import (
    FileForm,
    SavedModel,
    _formula_fields,
    _label_kind,
    _plain,
    _saved_calibration,
    kernel_fields,
    model_arrays,
    register_file_form,
    report_fields,
)


KIND = "multiclass"


def multiclass_report(results: MulticlassResults) -> dict[str, Any]:
    """The two-class report's fields plus the held-out confusion matrix."""
    report = report_fields(results)
    confusion = results.confusion
    report["confusion"] = {str(t): {str(p): int(confusion.loc[t, p]) for p in confusion.columns} for t in confusion.index}
    return report


def save_multiclass(results: MulticlassResults, path: str | Path) -> Path:
    """Write a multiclass fit in the format of the module docstring; return the path."""
    fit = results.engine_fit
    coding = results.model.coding
    calibration = _saved_calibration(results)  # before the report, so that its summary shows the calibration
    metadata = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "kind": KIND,
        "library_version": __version__,
        "labels": {"levels": [_plain(v) for v in coding.levels], "name": coding.name, "dtype": _label_kind(coding)},
        "columns": list(results.model.exog_names),
        "formula": None if results.model.formula is None else _formula_fields(results.model.formula),
        "kernel": kernel_fields(fit.feature_map),
        "intercept": [float(v) for v in results.intercept],
        "calibration": None,
        "report": multiclass_report(results),
    }
    arrays = model_arrays(fit.coef, results.scaler, fit.feature_map)
    if calibration is not None:
        metadata["calibration"] = {
            "method": calibration.method, "n": calibration.n, "folds": calibration.folds,
            "n_positive": [va.n_positive for va in calibration.predictors],
            "offsets": [float(v) for v in fit.intercept],
        }
        if calibration.softmax is not None:
            metadata["calibration"]["softmax"] = {"weights": calibration.softmax.weights.tolist(),
                                                  "offsets": calibration.softmax.offsets.tolist()}
        for k, va in enumerate(calibration.predictors):
            arrays |= {f"va_scores_{k}": va.scores, f"va_p0_{k}": va.p0, f"va_p1_{k}": va.p1}
    return write_archive(path, metadata, arrays)


def _class_calibration(fields: Any, arrays: dict[str, np.ndarray], K: int) -> tuple[MulticlassCalibration | None, Any]:
    """The stored calibration and the offsets it calibrates, or (None, None); each class checked as two-class."""
    if fields is None:
        _require(not any(name.startswith("va_") for name in arrays), "calibration arrays without calibration metadata")
        return None, None
    _require(isinstance(fields, dict), "calibration must be an object or null")
    positives, offsets = fields.get("n_positive"), fields.get("offsets")
    _require(isinstance(positives, list) and len(positives) == K, f"calibration.n_positive must list {K} counts")
    _require(isinstance(offsets, list) and len(offsets) == K and all(_is_number(v) for v in offsets),
             f"calibration.offsets must list {K} numbers")
    wanted = {f"{name}_{k}" for name in CALIBRATION_ARRAYS for k in range(K)}
    extra = sorted(name for name in arrays if name.startswith("va_") and name not in wanted)
    _require(not extra, f"calibration arrays {extra} do not belong to one of the {K} classes")
    predictors = []
    for k in range(K):
        one = {name: arrays[f"{name}_{k}"] for name in CALIBRATION_ARRAYS if f"{name}_{k}" in arrays}
        predictor, method = _calibration({**fields, "n_positive": positives[k]}, one)
        predictors.append(predictor)
    _require(len({va.n for va in predictors}) == 1, "every class must be calibrated on the same points")
    softmax = fields.get("softmax")  # absent in files written before it
    if softmax is not None:
        _require(isinstance(softmax, dict), "calibration.softmax must be an object")
        weights, biases = softmax.get("weights"), softmax.get("offsets")
        _require(isinstance(weights, list) and len(weights) == K and all(
            isinstance(row, list) and len(row) == K and all(_is_number(v) for v in row) for row in weights),
            f"calibration.softmax.weights must be {K} lists of {K} numbers")
        _require(isinstance(biases, list) and len(biases) == K and all(_is_number(v) for v in biases),
                 f"calibration.softmax.offsets must list {K} numbers")
        softmax = SoftmaxRecalibration(np.asarray(weights, dtype=float), np.asarray(biases, dtype=float))
    calibration = MulticlassCalibration(method, tuple(predictors), int(fields["folds"]), softmax)
    return calibration, np.asarray(offsets, dtype=float)


def _class_labels(fields: Any) -> ClassCoding:
    _require(isinstance(fields, dict), "labels must be an object")
    levels, kind, name = fields.get("levels"), fields.get("dtype"), fields.get("name")
    _require(kind in _LABEL_DTYPES, f"labels.dtype must be one of {_LABEL_DTYPES}")
    _require(isinstance(levels, list) and len(levels) >= 2, "labels.levels must list at least two labels")
    _require(all(_LABEL_CHECKS[kind](v) for v in levels), f"labels.levels must be of labels.dtype {kind!r}")
    _require(len({repr(v) for v in levels}) == len(levels), "labels.levels must be different labels")
    _require(name is None or isinstance(name, str), "labels.name must be a string or null")
    dtype: Any = {
        "int": np.dtype(np.int64), "float": np.dtype(np.float64), "bool": np.dtype(bool), "str": None,
        "category": pd.CategoricalDtype(levels),
    }[kind]
    return ClassCoding(tuple(levels), name, dtype)


@dataclass(frozen=True)
class SavedMulticlassModel(SavedModel):
    """A multiclass CSVM loaded from a model file.

    As :class:`~csvm_stats.interfaces.persistence.SavedModel`, with ``coding`` a
    :class:`~csvm_stats.multiclass.design.ClassCoding`, ``coef`` the (K, r)
    matrix, ``intercept`` the K offsets, ``calibration`` a
    :class:`~csvm_stats.multiclass.probability.MulticlassCalibration` (or None)
    and ``calibrated_offsets`` the offsets whose scores it calibrates.
    """

    calibrated_offsets: np.ndarray | None = None
    is_multiclass = True  # a class attribute, not a field: how r_api and the CLI tell the kinds apart

    @property
    def classes(self) -> list[Any]:
        return list(self.coding.levels)

    @property
    def params(self) -> pd.DataFrame | None:
        """The fit's coefficients, one column per class (as ``MulticlassResults.params``: the report's text keys
        mapped back to the class labels, columns named ``class``); ``None`` in files without them."""
        table = super().params
        if table is None:
            return None
        by_text = {str(c): c for c in self.classes}
        table = table.rename(columns=lambda c: by_text.get(str(c), c))
        table.columns.name = "class"
        return table

    def decision_function(self, newdata: Any) -> pd.DataFrame:
        """Scores f_k(x), one column per class, indexed like the data."""
        design = self.design_matrix(newdata)
        phi = self.feature_map.transform(self.scaler.transform(design.to_numpy()))
        scores = phi @ self.coef.T + self.intercept
        return pd.DataFrame(scores, index=design.index, columns=pd.Index(self.classes, name="class"))

    def predict_proba(self, newdata: Any, *, interval: bool = False) -> pd.DataFrame:
        """Probabilities as the fit gave them (:meth:`MulticlassResults.predict_proba`, same columns)."""
        if self.calibration is None:
            raise DataError(
                "this model file holds no probability calibration (written before multiclass calibrations were "
                "saved, or fitted on too few points for one); refit and save the model again to get probabilities."
            )
        scores = self.decision_function(newdata)
        return probability_frame(self.calibration, scores.to_numpy() - self.intercept + self.calibrated_offsets,
                                 scores.index, self.classes, interval)

    def predict(self, newdata: Any) -> pd.Series:
        """Predicted labels (the class of the largest score) in the original coding."""
        scores = self.decision_function(newdata)
        return self.coding.decode(argmax_rule(scores.to_numpy()), index=scores.index)

    @property
    def confusion(self) -> pd.DataFrame:
        """The held-out confusion matrix of the fit (rows true, columns predicted)."""
        return pd.DataFrame.from_dict(self.report["confusion"], orient="index")


def multiclass_from_archive(metadata: dict[str, Any], arrays: dict[str, np.ndarray]) -> SavedMulticlassModel:
    """Check a multiclass archive's fields (the members were read and checked by the caller)."""
    columns = metadata.get("columns")
    _require(isinstance(columns, list) and columns and all(isinstance(c, str) for c in columns), "columns")
    _require(len(set(columns)) == len(columns), "columns must not repeat")
    p = len(columns)
    coding = _class_labels(metadata.get("labels"))
    K = coding.n_classes
    coef = arrays.get("coef")
    _require(coef is not None and coef.ndim == 2 and coef.shape[0] == K, f"arrays/coef.npy must have {K} rows")
    fmap = _kernel(metadata.get("kernel"), {**arrays, "coef": coef[0]}, p)  # one row has the binary shape
    scaler = _scaler(arrays, p)
    intercept = metadata.get("intercept")
    _require(isinstance(intercept, list) and len(intercept) == K and all(_is_number(v) for v in intercept),
             f"intercept must list {K} numbers")
    report = _report(metadata.get("report"), columns)
    calibration, offsets = _class_calibration(metadata.get("calibration"), arrays, K)
    confusion = report.get("confusion")
    _require(isinstance(confusion, dict) and all(isinstance(v, dict) for v in confusion.values()), "report.confusion")
    return SavedMulticlassModel(
        columns=tuple(columns),
        coding=coding,
        scaler=scaler,
        feature_map=fmap,
        coef=coef,
        intercept=np.asarray(intercept, dtype=float),
        formula=_checked_formula(metadata.get("formula"), columns),
        report=report,
        library_version=str(metadata.get("library_version")),
        calibration=calibration,
        calibration_method=None if calibration is None else calibration.method,
        calibrated_offsets=offsets,
    )


#: One Venn-Abers predictor per class: arrays/va_scores_0.npy, va_p0_0.npy, ...
CLASS_CALIBRATION_MEMBER = re.compile(r"arrays/va_(scores|p0|p1)_(0|[1-9][0-9]{0,3})\.npy")

register_file_form(FileForm(
    kind=KIND, results_type=MulticlassResults, report=multiclass_report, save=save_multiclass,
    from_archive=multiclass_from_archive, extra_members=CLASS_CALIBRATION_MEMBER,
))
