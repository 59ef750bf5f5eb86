"""Plain values for R: coercion of what R sends, and the fields every exported fit shares.

Used by :mod:`csvm_stats.interfaces.r_api` (the entry point R calls) and
:mod:`csvm_stats.multiclass.r_entry` (its multiclass calls), so that neither
imports the other's module for them.
"""

from __future__ import annotations

import difflib
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError
from csvm_stats.inference.bounds import AdjustedTarget, binomial_min_n, hoeffding_min_n
from csvm_stats.interfaces.persistence import save_model
from csvm_stats.optimization.solvers.base import SolveRecord

#: Bumped whenever a call's arguments or the exported fields change incompatibly.
API_VERSION = 3

#: The values of :func:`sample_roles`, one per row of the data (Python's ``results.sample_roles``).
SAMPLE_ROLES = ("training", "anchor", "held-out")

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
#: Options of :meth:`~csvm_stats.CSVM.fit` that R may pass.
FIT_OPTIONS: dict[str, str] = {
    "solver": "str",
    "time_limit": "float",
    "mip_gap": "float",
    "threads": "int",
    "verbose": "bool",
    "random_state": "int",
    "guarantee": "guarantee",
    "warm_start": "bool",
    "clock": "str",
}
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


def fit_fields(results: Any) -> dict[str, Any]:
    """The fields of :func:`csvm_stats.interfaces.r_api.export` that a two-class and a multiclass fit share.

    ``coef`` and ``coef_standardized`` are vectors for two classes and
    (features x classes) matrices for several, ``intercept`` a number or one
    per class; the model file is written first (saving computes the
    calibration that the summary reports). Rate-table columns a fit does not
    have (the multiclass recall table has no ``upper``) are NA.
    """
    model_file = model_file_bytes(results)
    params = results.params
    standardized = results.params_standardized
    rates = results.rates
    return {
        "api_version": API_VERSION,
        "coef_names": _string_array(params.index[:-1]),
        "coef": params.to_numpy(dtype=np.float64)[:-1],
        "intercept": params.to_numpy(dtype=np.float64)[-1],
        "coef_standardized": (np.empty((0,) * params.ndim) if standardized is None
                              else standardized.to_numpy(dtype=np.float64)[:-1]),
        "kernel": results.engine_fit.feature_map.kernel.describe(),
        "is_linear": bool(results.is_linear),
        "alpha": float(results.model.alpha),
        "bound": str(results.model.bound),
        "C": float(results.model.C),
        "n": len(results.model.y),
        "random_state": int(results.random_state),
        "samples": {name: int(getattr(results.split, name).size) for name in ("train", "anchor", "holdout")},
        "sample_roles": sample_roles(results),
        "rate_names": _string_array(rates.index),
        "rates": {column: _rate_column(rates.get(column, pd.Series(np.nan, index=rates.index)), column)
                  for column in RATE_COLUMNS},
        "statements": _string_array(results.statements.to_numpy()),
        "joint_statement": str(results.joint_statement),
        "summary_text": str(results.summary(timing=True)),
        "solver": solver_fields(results.solver),
        "warnings": _string_array(results.warnings),
        "model_file": model_file,
    }


def sample_roles(results: Any) -> np.ndarray:
    """The sample of each row of the data, in the data's row order: "training", "anchor" or "held-out".

    From ``results.sample_roles`` (a Series indexed like the input data)
    when the results have it, else from the split's row positions
    (``results.split``: 0-based positions of I, J and H). A row in no
    sample (none with the splits csvm-stats makes) is "".
    """
    n = len(results.model.y)
    if hasattr(results, "sample_roles"):
        roles = np.asarray(results.sample_roles, dtype=object).reshape(-1)
        if roles.size != n:
            raise DataError(f"results.sample_roles has {roles.size} values for {n} rows.")
        return _string_array("" if pd.isna(role) else role for role in roles)
    roles = np.full(n, "", dtype=object)
    for role, rows in zip(SAMPLE_ROLES, (results.split.train, results.split.anchor, results.split.holdout)):
        roles[np.asarray(rows, dtype=np.intp)] = role
    return _string_array(roles)


def anchor_requirements(adjusted: Mapping[str, AdjustedTarget]) -> dict[str, np.ndarray]:
    """Per constrained rate (or class): anchor points, whether the target was capped, the sizes each margin needs."""
    targets = list(adjusted.values())
    return {
        "rate": _string_array(adjusted),
        "target": np.asarray([t.target for t in targets], dtype=np.float64),
        "n": np.asarray([t.n for t in targets], dtype=np.float64),
        "capped": np.asarray([t.capped for t in targets], dtype=bool),
        "hoeffding": np.asarray([hoeffding_min_n(t.target, t.alpha) for t in targets], dtype=np.float64),
        "binomial": np.asarray([binomial_min_n(t.target, t.alpha) for t in targets], dtype=np.float64),
    }


def solver_fields(record: SolveRecord) -> dict[str, Any]:
    """The solve record as plain values."""
    return {
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
        "outcome": str(record.outcome),  # what happened, in words (issue 27)
        "clock": str(record.clock),
        "time_limit": float(record.time_limit),
        "fit_wall_time": float(record.fit_wall_time),
        "fit_cpu_time": float(record.fit_cpu_time),
        "limit_phase": str(record.limit_phase),
    }


def model_file_bytes(results: Any) -> np.ndarray:
    """The model file of ``results`` (:func:`~csvm_stats.interfaces.persistence.save_model`) as uint8 values."""
    with tempfile.TemporaryDirectory() as folder:
        path = save_model(results, Path(folder) / "model.csvm")
        return np.frombuffer(path.read_bytes(), dtype=np.uint8).copy()


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
        raise DataError(unknown_arguments_message(unknown))
    for name, value in options.items():
        if name in MODEL_OPTIONS:
            model_kwargs[name] = _coerce(name, value, MODEL_OPTIONS[name])
        else:
            fit_kwargs[name] = _coerce(name, value, FIT_OPTIONS[name])
    return model_kwargs, {key: value for key, value in fit_kwargs.items() if value is not None}


def unknown_arguments_message(unknown: Sequence[str]) -> str:
    """R's wording for arguments csvm() does not know, with the closest known name of each."""
    known = sorted({*MODEL_OPTIONS, *FIT_OPTIONS})
    quoted = ", ".join(f'"{name}"' for name in unknown)
    guesses = [difflib.get_close_matches(name, known, n=1, cutoff=0.6) for name in unknown]
    hints = [f'"{guess[0]}"' for guess in guesses if guess]
    head = f"unknown argument{'s' if len(unknown) > 1 else ''} {quoted}"
    if len(hints) == len(unknown):
        return f"{head}; did you mean {', '.join(hints)}?"
    return f"{head}; csvm() takes {', '.join(known)}"


def _rate_column(column: pd.Series, name: str) -> np.ndarray:
    if name in _TEXT_RATE_COLUMNS:
        return _string_array(column)
    if name in _LOGICAL_RATE_COLUMNS:
        return np.asarray([np.nan if pd.isna(v) else float(bool(v)) for v in column], dtype=np.float64)
    return np.asarray([np.nan if pd.isna(v) else float(v) for v in column], dtype=np.float64)
