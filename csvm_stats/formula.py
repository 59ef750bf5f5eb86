"""Formula + data frame -> response, design matrix and the spec that rebuilds it.

The formula is materialised by formulaic, which expands ``y ~ .`` and
``y ~ . - id`` against the data frame's columns (patsy cannot). Factors are
coded as treatment contrasts against the first level, exactly as a model with
an intercept would code them; the intercept column itself is then removed,
because the CSVM has its own intercept b.

New data go through the stored :class:`FormulaDesign`, which keeps the
levels seen at fit time: a level not seen then is an error, never a silent
all-zero (reference) row, and a missing value is an error, never a dropped row.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from formulaic import model_matrix
from formulaic.errors import DataMismatchWarning, FactorEvaluationError, FormulaicError
from formulaic.model_spec import ModelSpec

from csvm_stats.exceptions import DataError

_INTERCEPT = "Intercept"
_NAME = re.compile(r"^\s*(?:`(?P<quoted>[^`]+)`|(?P<plain>[A-Za-z_.][A-Za-z0-9_.]*))\s*$")


@dataclass(frozen=True)
class FormulaDesign:
    """What is needed to turn new data into the fitted model's design matrix."""

    formula: str
    response: str
    spec: ModelSpec
    columns: tuple[str, ...]

    def transform(self, data: pd.DataFrame) -> pd.DataFrame:
        """Design matrix of ``data`` (the response column is not needed), keeping its index."""
        return _materialise(self.spec, data)


def response_name(formula: str) -> str:
    """The response column of ``formula``: a single column name left of ``~``."""
    if not isinstance(formula, str) or formula.count("~") != 1:
        raise DataError(f"The formula must have the form 'response ~ terms', got {formula!r}.")
    lhs = formula.split("~", 1)[0]
    match = _NAME.match(lhs)
    if match is None:
        raise DataError(
            f"The left-hand side of {formula!r} must be one column name (use backticks for unusual names); "
            "recode the response in the data frame instead of in the formula."
        )
    return match.group("quoted") or match.group("plain")


_DECORATION = re.compile(r"\x1b\[[0-9;]*m|[\u29da\u29db]")  # formulaic's colour codes and markers


def plain_message(error: Exception) -> str:
    """The text of a formulaic error without terminal colour codes and markers."""
    return _DECORATION.sub("", str(error)).strip()


def _translate(error: Exception, data: pd.DataFrame) -> DataError:
    if isinstance(error, FactorEvaluationError):
        missing = re.search(r"`([^`]+)` is not present", str(error))
        if missing:
            return DataError(
                f"The formula names the column {missing.group(1)!r}, which is not in the data "
                f"(columns: {list(map(str, data.columns))[:12]})."
            )
    message = plain_message(error)
    if "null values" in message:
        column = re.search(r"`([^`]+)`", message)
        what = f"the column {column.group(1)!r}" if column else "a column"
        return DataError(
            f"{what} has missing values; CSVM does not drop rows silently. Remove or impute them first."
        )
    return DataError(f"The formula could not be applied to the data: {message}")


def _materialise(spec: ModelSpec, data: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"newdata must be a pandas DataFrame for a model fitted from a formula, got {type(data).__name__}.")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataMismatchWarning)
        try:
            matrix = spec.get_model_matrix(data, na_action="raise")
        except DataMismatchWarning as unseen:
            levels = re.search(r"\{[^}]*\}", str(unseen))
            raise DataError(
                f"The new data contain factor level(s) {levels.group(0) if levels else ''} not seen when the model "
                "was fitted; the model has no coefficient for them. Remove those rows or refit with them."
            ) from None
        except (FormulaicError, ValueError) as error:
            raise _translate(error, data) from None
    return _without_intercept(pd.DataFrame(matrix), data.index)


def _without_intercept(matrix: pd.DataFrame, index: pd.Index) -> pd.DataFrame:
    frame = matrix.drop(columns=[_INTERCEPT], errors="ignore").astype(float)
    frame.index = index
    return frame


def build_design(formula: str, data: pd.DataFrame) -> tuple[pd.Series, pd.DataFrame, FormulaDesign]:
    """Response, design matrix (no intercept column, data's index) and the spec for new data."""
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"data must be a pandas DataFrame, got {type(data).__name__}.")
    name = response_name(formula)
    if name not in data.columns:
        raise DataError(
            f"The formula's response {name!r} is not a column of the data (columns: {list(map(str, data.columns))[:12]})."
        )
    try:
        matrices = model_matrix(formula, data, na_action="raise")
    except (FormulaicError, ValueError) as error:
        raise _translate(error, data) from None
    rhs = matrices.rhs
    spec = rhs.model_spec
    X = _without_intercept(pd.DataFrame(rhs), data.index)
    if X.shape[1] == 0:
        raise DataError(f"The formula {formula!r} leaves no predictor columns.")
    if not np.isfinite(X.to_numpy()).all():
        raise DataError("The design matrix has infinite values; check the predictor columns.")
    return data[name], X, FormulaDesign(formula, name, spec, tuple(X.columns))
