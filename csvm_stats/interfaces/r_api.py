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
* :func:`environment` -> the versions R checks before the first call.

Logical columns of the exported rate table (``met``, ``certified``) are sent
as numbers 1/0 with ``NaN`` for "not applicable", because a logical missing
value does not survive the crossing; R turns them back into logicals.
"""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats import __version__
from csvm_stats.inference.bounds import AdjustedTarget, binomial_min_n, hoeffding_min_n
from csvm_stats.exceptions import DataError
from csvm_stats.models.model import CSVM
from csvm_stats.interfaces.persistence import SavedModel, load_model, save_model
from csvm_stats.models.results import CSVMResults

#: Bumped whenever a call's arguments or the exported fields change incompatibly.
API_VERSION = 2

#: Options of :class:`~csvm_stats.models.model.CSVM` that R may pass, with the type each is coerced to.
MODEL_OPTIONS: dict[str, str] = {
    "tpr_min": "probability",
    "tnr_min": "probability",
    "acc_min": "probability",
    "alpha": "float",
    "bound": "str",
    "kernel": "str",
    "C": "float",
    "gamma": "gamma",
    "degree": "int",
    "coef0": "float",
    "rank": "int",
    "big_m": "float",
    "standardize": "bool",
    "fractions": "floats",
    "penalty": "str",
    "max_features": "int",
    "screen": "int",
}
#: Options of :meth:`~csvm_stats.models.model.CSVM.fit` that R may pass.
FIT_OPTIONS: dict[str, str] = {
    "solver": "str",
    "time_limit": "float",
    "mip_gap": "float",
    "threads": "int",
    "verbose": "bool",
    "random_state": "int",
    "guarantee": "guarantee",
    "warm_start": "bool",
}
PREDICT_TYPES = ("class", "decision", "prob")
RATE_COLUMNS = (
    "target",
    "adjusted",
    "bound",
    "required",
    "anchor_n",
    "anchor_correct",
    "anchor_rate",
    "met",
    "heldout_n",
    "heldout_correct",
    "heldout_rate",
    "lower",
    "upper",
    "joint_lower",
    "method",
    "certified",
)
_LOGICAL_RATE_COLUMNS = ("met", "certified")
_TEXT_RATE_COLUMNS = ("bound", "method")


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


def _recording_warnings(action: Callable[[], Any]) -> tuple[Any, dict[str, np.ndarray]]:
    """Run ``action`` and return its value with the distinct warnings it raised (messages, categories)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = action()
    seen = dict.fromkeys((str(w.message), w.category.__name__) for w in caught)
    return value, {
        "warnings": _string_array(message for message, _ in seen),
        "warning_kinds": _string_array(kind for _, kind in seen),
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
    names = _strings(column_names, "column_names")
    design = _design(x, len(names))
    label_values = _strings(labels, "labels")
    if len(label_values) != design.shape[0]:
        raise DataError(f"{len(label_values)} labels for {design.shape[0]} rows of x; they must match.")
    if len(set(label_values)) > 2:  # several classes: positive has no meaning there
        from csvm_stats.multiclass.r_entry import fit_multiclass

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
    names = _strings(column_names, "column_names")
    design = _design(x, len(names))
    label_values = _strings(labels, "labels")
    model, fit_kwargs = _binary_model(design, names, label_values, positive, options, response)
    if fit_kwargs.get("random_state") is None:
        raise DataError("anchor_check needs the fit's random_state (the split depends on it).")
    adjusted, raised = _recording_warnings(lambda: model.anchor_targets(fit_kwargs["random_state"]))
    return {"anchor": _anchor_table(adjusted), "bound": str(model.bound), "alpha": float(model.alpha), **raised}


def _binary_model(
    design: np.ndarray,
    names: list[str],
    label_values: list[str],
    positive: str,
    options: dict[str, Any] | None,
    response: str,
) -> tuple[CSVM, dict[str, Any]]:
    """The two-class CSVM of R's arguments, and the keyword arguments of its ``fit``."""
    if len(label_values) != design.shape[0]:
        raise DataError(f"{len(label_values)} labels for {design.shape[0]} rows of x; they must match.")
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
    ``anchor`` (per constrained rate: the anchor count ``n``, whether the
    target was ``capped`` and the anchor sizes from which the ``hoeffding``
    and ``binomial`` margins stay below 1); ``model_file`` (the bytes of
    :func:`~csvm_stats.interfaces.persistence.save_model`'s file as uint8 values, which
    R keeps as a raw vector).
    """
    if hasattr(results, "confusion_matrix"):
        from csvm_stats.multiclass.r_entry import export_multiclass

        return export_multiclass(results)
    model_file = model_file_bytes(results)  # first: saving computes the calibration the summary reports
    params = results.params
    standardized = results.params_standardized
    coding = results.model.coding
    record = results.solver
    rates = results.rates
    return {
        "api_version": API_VERSION,
        "coef_names": _string_array(params.index[:-1]),
        "coef": params.to_numpy(dtype=np.float64)[:-1],
        "intercept": float(params.iloc[-1]),
        "coef_standardized": (np.empty(0) if standardized is None else standardized.to_numpy(dtype=np.float64)[:-1]),
        "levels": _string_array(coding.levels),
        "positive": str(coding.positive),
        "negative": str(coding.negative),
        "kernel": results.engine_fit.feature_map.kernel.describe(),
        "is_linear": bool(results.is_linear),
        "alpha": float(results.model.alpha),
        "bound": str(results.model.bound),
        "C": float(results.model.C),
        "n": len(results.model.y),
        "random_state": int(results.random_state),
        "samples": {name: int(getattr(results.split, name).size) for name in ("train", "anchor", "holdout")},
        "rate_names": _string_array(rates.index),
        "rates": {column: _rate_column(rates[column], column) for column in RATE_COLUMNS},
        "statements": _string_array(results.statements.to_numpy()),
        "joint_statement": str(results.joint_statement),
        "summary_text": str(results.summary(timing=True)),
        "solver": {
            "status": record.status.value,
            "objective": float(record.objective),
            "best_bound": float(record.best_bound),
            "gap": float(record.gap),
            "wall_time": float(record.wall_time),
            "cpu_time": float(record.cpu_time),
            "nodes": int(record.nodes),
            "backend": str(record.backend),
            "backend_version": str(record.backend_version),
            "formulation": str(record.formulation),
            "message": str(record.message),
        },
        "warnings": _string_array(results.warnings),
        **_selection(results),
        "anchor": _anchor_table(results.adjusted),
        "model_file": model_file,
    }


def _selection(results: CSVMResults) -> dict[str, np.ndarray]:
    selected = getattr(results, "selected_features", None)
    if selected is None:
        return {"selected_names": _string_array([]), "selected_coef": np.empty(0)}
    return {"selected_names": _string_array(selected.index), "selected_coef": selected["coef"].to_numpy(dtype=np.float64)}


def _anchor_table(adjusted: dict[str, AdjustedTarget]) -> dict[str, np.ndarray]:
    """Per constrained rate: anchor points, whether the target was capped, the sizes each margin needs."""
    targets = [adjusted[rate] for rate in adjusted]
    return {
        "rate": _string_array(adjusted),
        "target": np.asarray([t.target for t in targets], dtype=np.float64),
        "n": np.asarray([t.n for t in targets], dtype=np.float64),
        "capped": np.asarray([t.capped for t in targets], dtype=bool),
        "hoeffding": np.asarray([hoeffding_min_n(t.target, t.alpha) for t in targets], dtype=np.float64),
        "binomial": np.asarray([binomial_min_n(t.target, t.alpha) for t in targets], dtype=np.float64),
    }


def model_file_bytes(results: CSVMResults) -> np.ndarray:
    """The model file of ``results`` (:func:`~csvm_stats.interfaces.persistence.save_model`) as uint8 values."""
    with tempfile.TemporaryDirectory() as folder:
        path = save_model(results, Path(folder) / "model.csvm")
        return np.frombuffer(path.read_bytes(), dtype=np.uint8).copy()


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
    if hasattr(results, "confusion_matrix"):
        from csvm_stats.multiclass.r_entry import predict_multiclass

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


# ---------------------------------------------------------------------- coercion of R's values
def _strings(values: Sequence[str] | str, what: str) -> list[str]:
    """A character vector from R (a length-one vector arrives as a bare string)."""
    if isinstance(values, str):
        return [values]
    out = [str(v) for v in np.asarray(values, dtype=object).reshape(-1)]
    if not out:
        raise DataError(f"{what} is empty.")
    return out


def _string_array(values: Any) -> np.ndarray:
    """Strings as a numpy unicode array (an R character vector, also when empty)."""
    return np.asarray([str(v) for v in values], dtype=str)


def _design(x: Any, n_columns: int) -> np.ndarray:
    design = np.asarray(x, dtype=np.float64)
    if design.ndim == 1:
        design = design.reshape(-1, n_columns) if n_columns else design.reshape(0, 0)
    if design.ndim != 2 or design.shape[1] != n_columns:
        raise DataError(f"x must be a matrix with {n_columns} columns (one per name), got shape {design.shape}.")
    return design


def _coerce(name: str, value: Any, kind: str) -> Any:
    if value is None:
        return None
    scalar = value
    if kind != "floats":
        array = np.asarray(value, dtype=object).reshape(-1)
        if array.size != 1:
            raise DataError(f"option {name} must be a single value, got {array.size} values.")
        scalar = array[0]
    if kind == "str":
        return str(scalar)
    if kind in ("float", "probability"):
        return float(scalar)
    if kind == "int":
        number = float(scalar)
        if not number.is_integer():
            raise DataError(f"option {name} must be a whole number, got {scalar!r}.")
        return int(number)
    if kind == "bool":
        if not isinstance(scalar, (bool, np.bool_)):
            raise DataError(f"option {name} must be TRUE or FALSE, got {scalar!r}.")
        return bool(scalar)
    if kind == "gamma":
        return scalar if isinstance(scalar, str) else float(scalar)
    if kind == "guarantee":
        return scalar if isinstance(scalar, str) else bool(scalar)
    if kind == "floats":
        return [float(v) for v in np.asarray(value, dtype=np.float64).reshape(-1)]
    raise ValueError(f"unknown option kind {kind!r}")


def _split_options(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    model_kwargs: dict[str, Any] = {}
    fit_kwargs: dict[str, Any] = {}
    unknown = sorted(set(options) - set(MODEL_OPTIONS) - set(FIT_OPTIONS))
    if unknown:
        raise DataError(
            f"unknown option(s) {unknown}; csvm() accepts {sorted(MODEL_OPTIONS)} for the model "
            f"and {sorted(FIT_OPTIONS)} for the solver."
        )
    for name, value in options.items():
        if name in MODEL_OPTIONS:
            model_kwargs[name] = _coerce(name, value, MODEL_OPTIONS[name])
        else:
            fit_kwargs[name] = _coerce(name, value, FIT_OPTIONS[name])
    return model_kwargs, {key: value for key, value in fit_kwargs.items() if value is not None}


def _rate_column(column: pd.Series, name: str) -> np.ndarray:
    if name in _TEXT_RATE_COLUMNS:
        return _string_array(column)
    if name in _LOGICAL_RATE_COLUMNS:
        return np.asarray([np.nan if pd.isna(v) else float(bool(v)) for v in column], dtype=np.float64)
    return np.asarray([np.nan if pd.isna(v) else float(v) for v in column], dtype=np.float64)
