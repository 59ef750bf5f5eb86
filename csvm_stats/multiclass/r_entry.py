"""The R entry points for several classes (used by :mod:`csvm_stats.interfaces.r_api`).

:func:`csvm_stats.interfaces.r_api.fit` hands a response with more than two labels to
:func:`fit_multiclass`; :func:`csvm_stats.interfaces.r_api.export` and
:func:`csvm_stats.interfaces.r_api.predict` hand a multiclass fit to
:func:`export_multiclass` and :func:`predict_multiclass`. Everything returned
is a plain value an R object can hold without Python: the coefficient matrix
has one column per class, the confusion matrix rows are the true classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError
from csvm_stats.multiclass.certification import argmax_rule
from csvm_stats.multiclass.model import MulticlassCSVM
from csvm_stats.multiclass.persistence import SavedMulticlassModel
from csvm_stats.multiclass.results import MulticlassResults
from csvm_stats.interfaces.r_values import (
    _design,
    _recording_warnings,
    _split_options,
    _string_array,
    _strings,
    anchor_requirements,
    fit_fields,
)


def fit_multiclass(
    x: Any,
    column_names: Sequence[str] | str,
    labels: Sequence[str] | str,
    recall_names: Sequence[str] | str | None = None,
    recall_values: Sequence[float] | float | None = None,
    options: dict[str, Any] | None = None,
    response: str = "y",
) -> dict[str, Any]:
    """Fit the multiclass CSVM on a numeric design and string labels.

    ``recall_names`` and ``recall_values`` (same length; R's named vector
    ``c(BL = 0.9, EWS = 0.8)`` split in two) give ``recall_min``; ``options``
    as for :func:`csvm_stats.interfaces.r_api.fit` (the two-class rates are refused).
    Returns ``{"results": ..., "warnings": ..., "warning_kinds": ...}`` as
    :func:`csvm_stats.interfaces.r_api.fit` does.
    """
    model, fit_kwargs = _multiclass_model(x, column_names, labels, recall_names, recall_values, options, response)
    results, raised = _recording_warnings(lambda: model.fit(**fit_kwargs))
    return {"results": results, **raised}


def anchor_check_multiclass(
    x: Any,
    column_names: Sequence[str] | str,
    labels: Sequence[str] | str,
    recall_names: Sequence[str] | str | None = None,
    recall_values: Sequence[float] | float | None = None,
    options: dict[str, Any] | None = None,
    response: str = "y",
) -> dict[str, Any]:
    """What :func:`fit_multiclass` with the same arguments will require of its anchor sample, before any solve.

    As :func:`csvm_stats.interfaces.r_api.anchor_check` for several classes
    (``options`` must hold ``random_state``): ``anchor`` per constrained
    class, ``bound``, ``alpha`` and the warnings of the capped targets.
    """
    model, fit_kwargs = _multiclass_model(x, column_names, labels, recall_names, recall_values, options, response)
    if fit_kwargs.get("random_state") is None:
        raise DataError("anchor_check_multiclass needs the fit's random_state (the split depends on it).")
    adjusted, raised = _recording_warnings(lambda: model.anchor_targets(fit_kwargs["random_state"]))
    named = {model.class_name(k): target for k, target in adjusted.items()}
    return {"anchor": anchor_requirements(named), "bound": str(model.bound), "alpha": float(model.alpha), **raised}


def _multiclass_model(
    x: Any,
    column_names: Sequence[str] | str,
    labels: Sequence[str] | str,
    recall_names: Sequence[str] | str | None,
    recall_values: Sequence[float] | float | None,
    options: dict[str, Any] | None,
    response: str,
) -> tuple[MulticlassCSVM, dict[str, Any]]:
    """The multiclass CSVM of R's arguments, and the keyword arguments of its ``fit``."""
    names = _strings(column_names, "column_names")
    design = _design(x, len(names))
    label_values = _strings(labels, "labels")
    if len(label_values) != design.shape[0]:
        raise DataError(f"{len(label_values)} labels for {design.shape[0]} rows of x; they must match.")
    targets: dict[str, float] = {}
    if recall_names is not None:
        classes = _strings(recall_names, "recall_min names")
        values = np.asarray(recall_values, dtype=np.float64).reshape(-1)
        if len(classes) != values.size:
            raise DataError(f"recall_min has {len(classes)} names for {values.size} values; name every value.")
        targets = dict(zip(classes, values.tolist()))
    model_kwargs, fit_kwargs = _split_options(options or {})
    exog = pd.DataFrame(design, columns=names)
    endog = pd.Series(label_values, name=str(response), dtype=object)
    return MulticlassCSVM(endog, exog, recall_min=targets or None, **model_kwargs), fit_kwargs


def export_multiclass(results: MulticlassResults) -> dict[str, Any]:
    """A multiclass fit as plain values.

    Keys as :func:`csvm_stats.interfaces.r_api.export` where they apply, with ``coef`` a
    (features x classes) matrix, ``intercept`` one offset per class,
    ``levels`` the classes (no ``positive``/``negative``), ``rate_names`` the
    classes, ``confusion`` the held-out (true x predicted) count matrix,
    ``anchor`` per constrained class, and ``model_file`` (the bytes of the
    model file, with the probability calibration, which R keeps to predict
    after ``readRDS``).
    """
    return {
        **fit_fields(results),
        "multiclass": True,
        "levels": _string_array(results.classes),
        "confusion": results.confusion.to_numpy(dtype=np.float64),
        "anchor": anchor_requirements({results.classes[k]: adj for k, adj in results.adjusted.items()}),
    }


def predict_multiclass(results: MulticlassResults | SavedMulticlassModel, x: Any, kinds: list[str]) -> dict[str, Any]:
    """``"class"`` (labels as strings), ``"decision"`` (n x classes scores) and ``"prob"`` (n x classes
    probabilities summing to 1, :meth:`MulticlassResults.predict_proba`), from a fit or a loaded model file;
    with the warnings raised, as :func:`csvm_stats.interfaces.r_api.predict`."""
    saved = isinstance(results, SavedMulticlassModel)
    design = _design(x, len(results.columns if saved else results.model.exog_names))

    def compute() -> dict[str, Any]:
        out: dict[str, Any] = {}
        scores = results.decision_function(design).to_numpy(dtype=np.float64)
        if "decision" in kinds:
            out["decision"] = scores
        if "class" in kinds:
            out["class"] = _string_array(np.asarray(results.classes, dtype=object)[argmax_rule(scores)])
        if "prob" in kinds:
            out["prob"] = results.predict_proba(design).to_numpy(dtype=np.float64)
        return out

    out, raised = _recording_warnings(compute)
    return {**out, **raised}
