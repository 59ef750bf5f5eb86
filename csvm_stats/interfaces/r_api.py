"""The narrow, versioned entry point that R (package ``csvmstats``, via reticulate) calls.

Everything that crosses is plain: R sends a numeric design matrix, its
column names, the class labels as strings and a list of options; Python
sends back dicts of numpy arrays, numbers and strings, which reticulate turns
into named R lists of vectors. Formulas, factors and missing values are
handled in R before anything crosses (reticulate 1.28 turns a logical ``NA``
into ``TRUE``), so this module only sees complete numeric data.

The calls, stable within :data:`API_VERSION`:

* :func:`fit` -> ``{"results": CSVMResults, "warnings": [...], "warning_kinds":
  [...]}``: the results are kept by R as an opaque handle (used only for
  prediction), the Python warnings raised while fitting are handed over as
  strings with their category names so that R can re-issue them as R
  warnings in R's wording;
* :func:`anchor_check` -> before :func:`fit`, the anchor sizes its targets
  need and the warnings of those that the anchor sample cannot carry, so
  that R says so before the solve;
* :func:`export` -> the fitted model as plain values (coefficients,
  intercept, rate table columns, confidence statements, summary text,
  solver record, anchor-size requirements, and the bytes of the model file
  of :mod:`csvm_stats.interfaces.persistence`), copied into R vectors at fit time;
* :func:`load` -> a :class:`~csvm_stats.interfaces.persistence.SavedModel` from those
  bytes (R re-creates its Python object on demand after ``readRDS``);
* :func:`predict` -> decision values, classes and/or probabilities, from
  live results or from a loaded model, with the warnings raised;
* :func:`environment` -> the versions R checks before the first call;
* :func:`call` -> any of the calls above by name, with every Python warning
  it raised (also those its parts raise outside the calls' own recording,
  such as the probability calibration's refits while exporting) handed
  over as strings, so that R re-issues each as an R warning and
  ``suppressWarnings()`` silences it; R calls everything through it.

Logical columns of the exported rate table (``met``, ``certified``) are sent
as numbers 1/0 with ``NaN`` for "not applicable", because a logical missing
value does not survive the crossing; R turns them back into logicals.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats._version import __version__
from csvm_stats.exceptions import DataError
from csvm_stats.interfaces.persistence import SavedModel, load_model
from csvm_stats.interfaces.r_values import (  # noqa: F401  (API_VERSION and the option tables are part of this API)
    API_VERSION,
    FIT_OPTIONS,
    MODEL_OPTIONS,
    RATE_COLUMNS,
    _design,
    _recording_warnings,
    _split_options,
    _string_array,
    _strings,
    anchor_requirements,
    fit_fields,
)
from csvm_stats.models.model import CSVM
from csvm_stats.models.results import CSVMResults
from csvm_stats.interfaces.np_r_entry import fit_np, predict_np
from csvm_stats.multiclass.r_entry import (
    anchor_check_multiclass,
    export_multiclass,
    fit_multiclass,
    predict_multiclass,
)

PREDICT_TYPES = ("class", "decision", "prob")


def api_version() -> int:
    """The version of this entry point; R checks it before the first call."""
    return API_VERSION


def environment() -> dict[str, str]:
    """Versions R checks before the first call: this entry point, csvm-stats, numpy, pandas."""
    return {
        "api_version": str(API_VERSION),
        "csvm_stats": __version__,
        "numpy": np.__version__,
        "pandas": pd.__version__,
    }


def fit(
    x: Any,
    column_names: Sequence[str] | str,
    labels: Sequence[str] | str,
    positive: str,
    options: dict[str, Any] | None = None,
    response: str = "y",
) -> dict[str, Any]:
    """Fit a CSVM on a numeric design and string labels.

    ``x`` is the (n, p) design without an intercept column; ``labels`` the n
    class labels (two distinct strings); ``positive`` the label of the
    positive class. ``options`` holds keyword arguments of ``CSVM`` and of
    ``CSVM.fit`` (names in :data:`MODEL_OPTIONS` and :data:`FIT_OPTIONS`);
    an unknown name is an error, never ignored. ``response`` names the
    response in the summary. Returns the results under
    ``"results"``, the messages of the warnings raised under ``"warnings"``
    and their category names under ``"warning_kinds"``.
    With more than two labels the multiclass CSVM is fitted
    (:func:`csvm_stats.multiclass.r_entry.fit_multiclass`, which also takes
    the per-class ``recall_min``), and ``positive`` is not used.
    """
    design, names, label_values = _inputs(x, column_names, labels)
    if len(set(label_values)) > 2:  # several classes: positive has no meaning there
        return fit_multiclass(x, column_names, labels, options=options, response=response)
    model, fit_kwargs = _binary_model(design, names, label_values, positive, options, response)
    results, raised = _recording_warnings(lambda: model.fit(**fit_kwargs))
    return {"results": results, **raised}


def anchor_check(
    x: Any,
    column_names: Sequence[str] | str,
    labels: Sequence[str] | str,
    positive: str,
    options: dict[str, Any] | None = None,
    response: str = "y",
) -> dict[str, Any]:
    """What :func:`fit` with the same arguments will require of its anchor sample, before any solve.

    Two classes; ``options`` must hold ``random_state`` (the split is that
    of the fit). Returns ``anchor`` (as in :func:`export`), the model's
    ``bound`` and ``alpha``, and the warnings raised (a capped target's
    :class:`~csvm_stats.inference.bounds.CappedTargetWarning`), so that R
    can say how many anchor points a target needs before the solve starts.
    """
    model, fit_kwargs = _binary_model(*_inputs(x, column_names, labels), positive, options, response)
    if fit_kwargs.get("random_state") is None:
        raise DataError("anchor_check needs the fit's random_state (the split depends on it).")
    adjusted, raised = _recording_warnings(lambda: model.anchor_targets(fit_kwargs["random_state"]))
    return {"anchor": anchor_requirements(adjusted), "bound": str(model.bound), "alpha": float(model.alpha), **raised}


def _inputs(x: Any, column_names: Sequence[str] | str, labels: Sequence[str] | str) -> tuple[np.ndarray, list[str], list[str]]:
    """R's design, column names and labels, checked: one label per row, one name per column."""
    names = _strings(column_names, "column_names")
    design = _design(x, len(names))
    label_values = _strings(labels, "labels")
    if len(label_values) != design.shape[0]:
        raise DataError(f"{len(label_values)} labels for {design.shape[0]} rows of x; they must match.")
    return design, names, label_values


def _binary_model(
    design: np.ndarray,
    names: list[str],
    label_values: list[str],
    positive: str,
    options: dict[str, Any] | None,
    response: str,
) -> tuple[CSVM, dict[str, Any]]:
    """The two-class CSVM of R's arguments, and the keyword arguments of its ``fit``."""
    model_kwargs, fit_kwargs = _split_options(options or {})
    exog = pd.DataFrame(design, columns=names)
    endog = pd.Series(label_values, name=str(response), dtype=object)
    return CSVM(endog, exog, positive=str(positive), **model_kwargs), fit_kwargs


def export(results: CSVMResults) -> dict[str, Any]:
    """The fitted model as plain values, everything an R object needs to print without Python.

    Keys: ``api_version``; ``coef_names``, ``coef`` (linear kernel: original
    units; kernel: feature-map components), ``intercept``,
    ``coef_standardized`` (linear kernel, else empty); ``levels``,
    ``positive``, ``negative``; ``kernel``, ``is_linear``, ``alpha``,
    ``bound``, ``C``; ``n`` and ``samples`` (sizes of I, J, H);
    ``random_state`` (the seed of the fit, drawn when none was given, so
    that R's ``update()`` can repeat it); ``rate_names``
    and ``rates`` (a dict of columns, see :data:`RATE_COLUMNS`);
    ``statements``, ``joint_statement``; ``summary_text``; ``solver`` (the
    solve record); ``warnings``; ``selected_names`` and ``selected_coef``
    (a sparse CSVM's selected features with their coefficients in original
    units, largest standardised coefficient first; empty otherwise);
    ``sample_roles`` (per row of the data: "training", "anchor" or
    "held-out", :func:`~csvm_stats.interfaces.r_values.sample_roles`);
    ``probability_threshold`` (NaN: P comes from a model fitted beside the
    rule on both routes, so the rule is not a threshold on P; kept for R
    code that reads it),
    ``probability_rule`` (how the rule and P relate, in words) and
    ``calibration`` (how the probabilities were calibrated, one line);
    ``anchor`` (per constrained rate: the anchor count ``n``, whether the
    target was ``capped`` and the anchor sizes from which the ``hoeffding``
    and ``binomial`` margins stay below 1); ``model_file`` (the bytes of
    :func:`~csvm_stats.interfaces.persistence.save_model`'s file as uint8 values, which
    R keeps as a raw vector).
    """
    if getattr(results, "is_multiclass", False):
        return export_multiclass(results)
    coding = results.model.coding
    return {
        **fit_fields(results),
        "levels": _string_array(coding.levels),
        "positive": str(coding.positive),
        "negative": str(coding.negative),
        **_selection(results),
        **_probability_rule(results),
        "anchor": anchor_requirements(results.adjusted),
    }


def _probability_rule(results: CSVMResults) -> dict[str, Any]:
    """Where the class rule f(x) >= 0 falls on the probability scale (``probability_threshold``, NaN without
    a calibration), the rule in words and the calibration's one-line description ("" without one)."""
    try:
        calibration = results.calibration  # computed already: fit_fields wrote the model file first
    except DataError as error:
        return {"probability_threshold": float("nan"), "probability_rule": "",
                "calibration": f"no probability calibration: {error}"}
    return {
        "probability_threshold": float(calibration.threshold),
        "probability_rule": calibration.rule_statement(str(results.model.coding.positive)),
        "calibration": calibration.describe(),
    }


def _selection(results: CSVMResults) -> dict[str, np.ndarray]:
    selected = getattr(results, "selected_features", None)
    if selected is None:
        return {"selected_names": _string_array([]), "selected_coef": np.empty(0)}
    return {"selected_names": _string_array(selected.index), "selected_coef": selected["coef"].to_numpy(dtype=np.float64)}


def load(model_file: Any) -> SavedModel:
    """The model saved in ``model_file`` (the bytes :func:`export` sent, as R's raw vector or uint8 values)."""
    if isinstance(model_file, (bytes, bytearray)):
        content = bytes(model_file)
    else:
        content = np.asarray(model_file, dtype=np.uint8).reshape(-1).tobytes()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.csvm"
        path.write_bytes(content)
        return load_model(path)


def predict(results: CSVMResults | SavedModel, x: Any, type: Sequence[str] | str = "class") -> dict[str, Any]:
    """Predictions for the rows of the numeric design ``x`` (same columns as at fit time).

    ``results`` is a fit (:func:`fit`) or a model loaded by :func:`load`.
    ``type`` names one or more of ``"class"`` (labels as strings),
    ``"decision"`` (f(x); positive class when >= 0) and ``"prob"``
    (P(positive | x) from the model's ``predict_proba``). Returns a dict
    with one array per requested type, and the warnings raised (as
    :func:`fit` does).
    """
    kinds = _strings(type, "type")
    unknown = [kind for kind in kinds if kind not in PREDICT_TYPES]
    if unknown:
        raise DataError(f"type must be among {list(PREDICT_TYPES)}, got {unknown}.")
    if getattr(results, "is_multiclass", False):  # a multiclass fit or a loaded multiclass model file
        return predict_multiclass(results, x, kinds)
    saved = isinstance(results, SavedModel)
    coding = results.coding if saved else results.model.coding
    design = _design(x, len(results.columns if saved else results.model.exog_names))
    if "prob" in kinds and not hasattr(results, "predict_proba"):
        raise DataError(
            "this saved model carries no probability model (the model file of this csvm-stats version "
            "stores the classifier only); refit to get probabilities."
        )

    def compute() -> dict[str, Any]:
        out: dict[str, Any] = {}
        if "decision" in kinds or "class" in kinds:
            decision = results.decision_function(design).to_numpy(dtype=np.float64)
            if "decision" in kinds:
                out["decision"] = decision
            if "class" in kinds:
                out["class"] = _string_array(coding.decode(decision).to_numpy())
        if "prob" in kinds:
            out["prob"] = results.predict_proba(design).to_numpy(dtype=np.float64)
        return out

    out, raised = _recording_warnings(compute)
    return {**out, **raised}




#: The calls :func:`call` dispatches to, by the name R gives.
ENTRY_POINTS: dict[str, Callable[..., Any]] = {
    "fit": fit,
    "anchor_check": anchor_check,
    "export": export,
    "load": load,
    "predict": predict,
    "fit_multiclass": fit_multiclass,
    "anchor_check_multiclass": anchor_check_multiclass,
    "fit_np": fit_np,
    "predict_np": predict_np,
}


def call(entry: str, *args: Any) -> dict[str, Any]:
    """Run the entry point named ``entry`` on ``args``; its value with every warning raised while it ran.

    Returns ``{"value": ..., "warnings": [...], "warning_kinds": [...]}``:
    the warnings the call recorded itself (``fit``, ``predict``, the anchor
    checks; taken out of its value) first, then those raised outside that
    recording (e.g. by the probability calibration that ``export``
    computes), distinct ones once. ``entry`` is looked up in
    :data:`ENTRY_POINTS`, never evaluated.
    """
    function = ENTRY_POINTS.get(str(entry))
    if function is None:
        raise DataError(f"unknown entry point {entry!r}; the entry points are {sorted(ENTRY_POINTS)}.")
    value, raised = _recording_warnings(lambda: function(*args))
    messages, kinds = [], []
    if isinstance(value, dict) and "warnings" in value and "warning_kinds" in value:
        messages += list(value.pop("warnings"))
        kinds += list(value.pop("warning_kinds"))
    pairs = dict.fromkeys(zip([*messages, *raised["warnings"]], [*kinds, *raised["warning_kinds"]]))
    return {
        "value": value,
        "warnings": _string_array(message for message, _ in pairs),
        "warning_kinds": _string_array(kind for _, kind in pairs),
    }
