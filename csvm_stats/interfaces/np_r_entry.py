"""The entry points R's ``np_classifier()`` calls (package ``csvmstats``, via reticulate).

As :mod:`csvm_stats.interfaces.r_api`: R sends the numeric design, its column
names, the labels as strings and plain options; everything returned is plain
(numpy arrays, numbers, strings), copied into R vectors at fit time.

* :func:`fit_np` -> ``{"results": handle, "export": {...}}``: the route
  (:class:`csvm_stats.models.neyman_pearson.NeymanPearson`) around the learner
  named ``learner`` (``"logistic"``, ``"svc"``, ``"hgb"``); ``export`` holds the
  rate table columns, statements, joint statement, summary text, sample roles,
  the threshold and the fitted decision values and classes;
* :func:`predict_np` -> decision values, classes and/or probabilities of new rows.

Logical columns of the rate table are sent as 1/0 with NaN for "not
applicable" (a logical missing value does not survive the crossing).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError
from csvm_stats.interfaces.r_values import _design, _recording_warnings, _string_array, _strings
from csvm_stats.models.learners import LEARNERS
from csvm_stats.models.neyman_pearson import NeymanPearson

#: The options R may send (anything else is an error, never ignored).
NP_OPTIONS = ("tpr_min", "tnr_min", "recall_min", "alpha", "fractions", "random_state")
PREDICT_TYPES = ("class", "decision", "prob")


def _column(values: pd.Series) -> np.ndarray:
    if values.dtype == object and values.map(lambda v: isinstance(v, str) or v is None).all():
        return _string_array(values.fillna(""))
    out = pd.to_numeric(values.map(lambda v: np.nan if v is pd.NA or v is None else
                                   (float(v) if not isinstance(v, str) else np.nan)), errors="coerce")
    return out.to_numpy(dtype=float)


def _rates(results: Any) -> dict[str, Any]:
    table = results.rates.reset_index(names="rate")
    return {str(c): _column(table[c].astype(object)) for c in table.columns}


def fit_np(x: Any, column_names: Sequence[str] | str, labels: Sequence[str] | str, learner: str,
           positive: str | None = None, options: dict[str, Any] | None = None, response: str = "y") -> dict[str, Any]:
    """Fit the route; ``learner`` one of :data:`~csvm_stats.models.learners.LEARNERS`."""
    if learner not in LEARNERS:
        raise DataError(f"learner must be one of {tuple(LEARNERS)}, got {learner!r}.")
    names = _strings(column_names, "column_names")
    design = _design(x, len(names))
    label_values = _strings(labels, "labels")
    if len(label_values) != design.shape[0]:
        raise DataError(f"{len(label_values)} labels for {design.shape[0]} rows of x; they must match.")
    options = dict(options or {})
    unknown = sorted(set(options) - set(NP_OPTIONS))
    if unknown:
        raise DataError(f"np_classifier has no option(s) {unknown}; it takes {list(NP_OPTIONS)}.")
    seed = options.pop("random_state", None)
    if options.get("fractions") is not None:
        options["fractions"] = tuple(float(v) for v in np.asarray(options["fractions"]).reshape(-1))
    else:
        options.pop("fractions", None)
    if options.get("recall_min") is not None:
        options["recall_min"] = {str(k): float(v) for k, v in dict(options["recall_min"]).items()}
    else:
        options.pop("recall_min", None)
        options["positive"] = positive
    exog = pd.DataFrame(design, columns=names)
    endog = pd.Series(label_values, name=str(response), dtype=object)
    model = NeymanPearson(endog, exog, learner, **{k: v for k, v in options.items() if v is not None})
    results, raised = _recording_warnings(lambda: model.fit(random_state=None if seed is None else int(seed)))
    decision = results.decision_function().to_numpy()
    export = {
        "rates": _rates(results),
        "statements": _string_array(results.statements.to_numpy()),
        "statement_names": _string_array(results.statements.index),
        "joint_statement": results.joint_statement,
        "summary_text": str(results.summary(timing=False)),
        "roles": _string_array(results.sample_roles.to_numpy()),
        "decision": decision,
        "class": _string_array(results.predict().to_numpy()),
        "random_state": int(results.random_state),
        "estimator": learner,
        "fit_time": float(results.fit_time),
    }
    return {"results": results, "export": export, **raised}


def predict_np(results: Any, x: Any, column_names: Sequence[str] | str, type: Sequence[str] | str = "class") -> dict[str, Any]:
    """``{"class": ..., "decision": ..., "prob": ...}`` for the rows of ``x`` (the types asked for)."""
    kinds = _strings(type, "type")
    bad = [k for k in kinds if k not in PREDICT_TYPES]
    if bad:
        raise DataError(f"type must be among {PREDICT_TYPES}, got {bad}.")
    names = _strings(column_names, "column_names")
    frame = pd.DataFrame(_design(x, len(names)), columns=names)
    out: dict[str, Any] = {}
    if "class" in kinds:
        out["class"] = _string_array(results.predict(frame).to_numpy())
    if "decision" in kinds:
        out["decision"] = results.decision_function(frame).to_numpy()
    if "prob" in kinds:
        out["prob"] = results.predict_proba(frame).to_numpy()
    return out
