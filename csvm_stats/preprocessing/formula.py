"""Formula + data frame -> response, design matrix and the spec that rebuilds it.

By default (``safe=True``) the formula text is parsed by our own grammar
(:mod:`csvm_stats.preprocessing.formula_grammar`), which expands ``y ~ .`` and ``y ~ . - id``
against the data frame's columns and checks every name; formulaic then
materialises a formula rebuilt from that structure alone (quoted column
look-ups, ``C(column)``), so no text from outside is ever evaluated. With
``safe=False`` the text goes to formulaic as it is and is **code**: formulaic,
like patsy in statsmodels, evaluates Python in terms (``np.log(x)``,
``{x ** 2}``, any function call), so only pass formulas you wrote. Factors are
coded as treatment contrasts against the first level, exactly as a model with
an intercept would code them; the intercept column itself is then removed,
because the CSVM has its own intercept b. ``ordered_contrasts="poly"`` codes
ordered pandas Categoricals as R does by default (``options("contrasts")`` is
``c("contr.treatment", "contr.poly")``): with orthogonal polynomial contrasts
(:class:`~csvm_stats.preprocessing.formula_grammar.Factor`), so that a formula
fitted here and in R's ``csvm()`` gives the same design and the same classifier.
Treatment stays the default: it is the coding of formulaic, patsy and
statsmodels, which Python users and earlier fits and model files expect, and an
ordered Categorical often only records an order, while polynomial scores
assume equally spaced levels.

New data go through the stored :class:`FormulaDesign`, which keeps the
levels seen at fit time: a level not seen then is an error, never a silent
all-zero (reference) row, and a missing value is an error, never a dropped row.
"""

from __future__ import annotations

import copy
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from formulaic import Formula, model_matrix
from formulaic.errors import DataMismatchWarning, FactorEvaluationError, FormulaicError
from formulaic.model_spec import ModelSpec
from formulaic.parser.types import Factor

from csvm_stats.exceptions import DataError, FormulaError
from csvm_stats.preprocessing.design import MAX_MAGNITUDE, check_magnitudes
from csvm_stats.preprocessing.dtypes import usable_frame
from csvm_stats.preprocessing.formula_grammar import (
    CONTRASTS,
    ParsedFormula,
    formula_name,
    parse_formula,
    response_of,
)
from csvm_stats.preprocessing.validation import check_unique_columns

_INTERCEPT = "Intercept"


@dataclass(frozen=True)
class FormulaDesign:
    """What is needed to turn new data into the fitted model's design matrix.

    ``inputs`` are the data columns the design reads (known for formulas
    parsed by our grammar and for loaded model files); new data lacking one
    is an error before formulaic sees them. ``parsed`` is the grammar's
    structure (``None`` for a formula handed to formulaic as code).
    """

    formula: str
    response: str
    spec: ModelSpec
    columns: tuple[str, ...]
    inputs: tuple[str, ...] | None = None
    parsed: ParsedFormula | None = None

    def transform(self, data: pd.DataFrame) -> pd.DataFrame:
        """Design matrix of ``data`` (the response column is not needed), keeping its index."""
        if not isinstance(data, pd.DataFrame):
            raise DataError(
                f"newdata must be a pandas DataFrame for a model fitted from a formula, got {type(data).__name__}."
            )
        if self.inputs is not None:
            check_columns(data, "newdata")
            data = _string_names(data)
            present = set(map(str, data.columns))  # built once: a set per input column was O(p^2) (review r11 F2)
            missing = [c for c in self.inputs if c not in present]
            if missing:
                raise DataError(
                    f"newdata lacks the column(s) {missing} the formula {self.formula!r} uses "
                    f"(newdata has {list(map(str, data.columns))[:12]})."
                )
        if self.inputs is not None:
            data = usable_frame(data, self.inputs, "newdata", fitting=False)
        self._check_numeric(data)
        data = self._as_fitted_factors(data)
        design = _materialise(self.spec, data, self.parsed)
        check_finite_design(design, "newdata")
        large = (design.abs() > MAX_MAGNITUDE).any(axis=0)
        if large.any():
            raise DataError(
                f"newdata have values beyond {MAX_MAGNITUDE:g} in magnitude in the design column(s) "
                f"{[str(c) for c in design.columns[large.to_numpy()]][:10]}, where the decision value overflows; "
                "rescale them as the data the model was fitted on."
            )
        return design

    def _check_numeric(self, data: pd.DataFrame) -> None:
        """A column that was numeric at fit time must be numeric now (else formulaic would make it a factor)."""
        for name, (kind, _) in self.spec.encoder_state.items():
            if kind is Factor.Kind.NUMERICAL and name in data.columns:
                column = data[name]
                if not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)):
                    examples = [v for v in column.dropna().unique()[:3]]
                    raise DataError(
                        f"newdata column {name!r} holds non-numeric values (e.g. {examples}), but it was numeric "
                        "when the model was fitted; convert it to numbers."
                    )

    def factor_levels(self) -> dict[str, list[Any]]:
        """The input columns that are factors of the design, with their fitted levels (empty without a parsed formula)."""
        if self.parsed is None:
            return {}
        state = self.spec.encoder_state
        return {
            f.column: list(state[f.expr][1]["categories"])
            for term in self.parsed.terms for f in term
            if f.expr in state and state[f.expr][0] is Factor.Kind.CATEGORICAL
        }

    def _as_fitted_factors(self, data: pd.DataFrame) -> pd.DataFrame:
        """The columns that were factors at fit time, as Categoricals with the fitted levels.

        New data often bring a factor's levels in another dtype (numbers read from a CSV for a
        factor that was a Categorical when fitted); formulaic would then treat the column as numbers
        and write its value into every dummy column. A value equal to a fitted level is that level;
        any other value is refused as an unseen level.
        """
        converted = {}
        for name, levels in self.factor_levels().items():  # C(column) or a Categorical column
            if name not in data.columns:
                continue
            column = data[name]
            if isinstance(column.dtype, pd.CategoricalDtype) and list(column.cat.categories) == levels:
                continue
            values = column.astype(object)
            unseen = values[values.notna() & ~values.isin(levels)].unique()
            if len(unseen):
                raise DataError(
                    f"newdata column {name!r} holds the level(s) {list(unseen)[:5]} not seen when the model "
                    f"was fitted, when it was a factor with the levels {levels[:10]} (newdata dtype {column.dtype}); "
                    "the model has no coefficient for them. Remove those rows or give the column the fitted levels."
                )
            converted[name] = pd.Categorical(values, categories=levels)
        return data.assign(**converted) if converted else data


def probe_frame(design: FormulaDesign) -> pd.DataFrame:
    """A small data frame of the design's input columns: each factor cycles through its stored levels, numbers are 0.

    Used to check a loaded model file: the design it builds must have exactly
    the file's columns.
    """
    from csvm_stats.preprocessing.formula_grammar import Factor as GrammarFactor

    if design.parsed is None:
        raise FormulaError("only a formula parsed by the grammar can be probed.")
    factors: dict[str, GrammarFactor] = {f.column: f for term in design.parsed.terms for f in term}
    levels = design.factor_levels()
    rows = max([len(v) for v in levels.values()] + [1])
    frame = {}
    for column in factors:
        if column in levels:
            cycle = [levels[column][i % len(levels[column])] for i in range(rows)]
            frame[column] = pd.Categorical(cycle, categories=levels[column])
        else:
            frame[column] = np.zeros(rows)
    return pd.DataFrame(frame)


def check_distinct_names(names: Sequence[str], data: pd.DataFrame) -> None:
    """Refuse a design in which two columns get one name (formulaic would keep one of them silently).

    This happens when a data column is named like a factor's coded column:
    a numeric column ``cat[T.s]`` beside a text column ``cat``.
    """
    counts = Counter(map(str, names))
    repeated = sorted(name for name, count in counts.items() if count > 1)
    if repeated:
        raise DataError(
            f"two design columns would both be named {repeated[:5]}: a data column has the name of a factor's "
            "coded column (for example a column 'cat[T.s]' beside a factor 'cat'); rename that data column "
            f"(data columns: {list(map(str, data.columns))[:12]})."
        )


def check_finite_design(design: pd.DataFrame, what: str = "data") -> None:
    """Refuse infinite (or NaN) design values, naming the design columns and the first rows."""
    values = design.to_numpy()
    bad = ~np.isfinite(values)
    if bad.any():
        columns = [str(c) for c, flag in zip(design.columns, bad.any(axis=0)) if flag]
        rows = design.index[bad.any(axis=1)][:5].tolist()
        raise DataError(
            f"{what} give infinite or undefined values in the design column(s) {columns[:10]} (rows {rows}); "
            "a classifier has no prediction for them. Remove those rows or replace the values first."
        )


def response_name(formula: str) -> str:
    """The response column of ``formula``: a single column name left of ``~``."""
    return response_of(formula)


def check_columns(data: pd.DataFrame, what: str = "data") -> None:
    """Refuse a data frame whose column names repeat (formulaic and the design would pick one silently)."""
    check_unique_columns(data, what)


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


def _formula_columns(data: pd.DataFrame, parsed: ParsedFormula | None) -> pd.DataFrame:
    """The columns of ``data`` the parsed formula reads (all of them without a parsed formula)."""
    if parsed is None:
        return data
    used = set(parsed.columns)
    return data[[c for c in data.columns if c in used]]


def _materialise(spec: ModelSpec, data: pd.DataFrame, parsed: ParsedFormula | None) -> pd.DataFrame:
    """The design of new ``data`` from the fitted ``spec``, which is never changed: formulaic updates a spec's
    encoder state in place when a column's kind differs (a factor given as numbers), so a copy is used, and a
    kind that differs from the fitted one is refused."""
    fitted = {name: kind for name, (kind, _) in spec.encoder_state.items()}
    spec = copy.deepcopy(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataMismatchWarning)
        try:
            matrix = spec.get_model_matrix(_formula_columns(data, parsed), na_action="raise")
        except DataMismatchWarning as unseen:
            levels = re.search(r"\{[^}]*\}", str(unseen))
            raise DataError(
                f"The new data contain factor level(s) {levels.group(0) if levels else ''} not seen when the model "
                "was fitted; the model has no coefficient for them. Remove those rows or refit with them."
            ) from None
        except (FormulaicError, ValueError) as error:
            raise _translate(error, data) from None
    changed = {name: (kind.value, spec.encoder_state[name][0].value) for name, kind in fitted.items()
               if name in spec.encoder_state and spec.encoder_state[name][0] is not kind}
    if changed:
        raise DataError(
            "newdata give the term(s) " + ", ".join(f"{name!r} ({was} when fitted, {now} now)"
                                                   for name, (was, now) in sorted(changed.items()))
            + "; give those columns the types they had when the model was fitted."
        )
    return _without_intercept(pd.DataFrame(matrix), data.index, parsed)


def _without_intercept(matrix: pd.DataFrame, index: pd.Index, parsed: ParsedFormula | None) -> pd.DataFrame:
    frame = matrix.drop(columns=[_INTERCEPT], errors="ignore").astype(float)
    frame.index = index
    if parsed is not None:
        frame.columns = parsed.design_names([str(name) for name in frame.columns])
    return frame


def check_structure(spec: ModelSpec, parsed: ParsedFormula) -> None:
    """Every factor formulaic built is one of ours (a column look-up, the intercept or our ``C(column)``), and
    every factor of ours was built: formulaic merges a column named ``1`` (or ``0``) with its intercept literal,
    which would drop that column without a word."""
    columns, generated = set(parsed.columns), parsed.generated_expressions()
    built = {(factor.expr, factor.eval_method) for term in spec.formula for factor in term.factors}
    # formulaic gives a look-up of a column named 1 no column of its own (its term is the intercept's), whether
    # the formula is one text or a list of terms
    lost = sorted({f.column for term in parsed.terms for f in term
                   if (f.expr, Factor.EvalMethod.PYTHON if f.categorical else Factor.EvalMethod.LOOKUP) not in built
                   or (not f.categorical and f.column == "1")})
    if lost:
        literal = [c for c in lost if c in ("0", "1")]
        hint = (f" formulaic reads a column named {literal[0]!r} as its intercept literal (a data frame built from an "
                "array has columns 0, 1, ...); rename it, e.g. "
                "data.rename(columns=lambda c: f'x{c}' if str(c) in ('0', '1') else c)" if literal else "")
        if not hint and any(not c.strip() for c in lost):
            hint = (" a column without a name (an empty header cell, or the index column of a file written by "
                    "to_csv without index=False) cannot be a predictor; name it or drop it from the data frame")
        raise FormulaError(f"the formula {parsed.text!r} could not use the column(s) {lost};{hint}.")
    for term in spec.formula:
        for factor in term.factors:
            ours = (
                (factor.eval_method is Factor.EvalMethod.LOOKUP and factor.expr in columns)
                or (factor.eval_method is Factor.EvalMethod.LITERAL and factor.expr in ("0", "1"))
                or (factor.eval_method is Factor.EvalMethod.PYTHON and factor.expr in generated)
            )
            if not ours:
                raise FormulaError(f"the formula {parsed.text!r} produced the factor {factor.expr!r}, which is not ours.")


def check_terms_built(spec: ModelSpec, parsed: ParsedFormula | None) -> None:
    """Refuse a factor with fewer than two levels, and any term that gives no design column (review r11 F3).

    Treatment coding of a factor with one level has no column, so formulaic drops the term (``s``,
    ``x0:s`` beside ``x0``) without a word, or codes ``x0:s`` alone as a copy of ``x0``; R's
    model.matrix refuses such a factor wherever it is used ("contrasts can be applied only to factors
    with 2 or more levels"), and so do we.
    """
    if parsed is None:  # a formula handed to formulaic as code: name its factors as formulaic does
        columns = {name: name for name in spec.encoder_state}
        text = str(spec.formula)
    else:
        columns = {f.expr: f.column for term in parsed.terms for f in term}
        text = parsed.text
    single: dict[str, list[Any]] = {}
    for expr, name in columns.items():
        kind, state = spec.encoder_state.get(expr, (None, {}))
        if kind is Factor.Kind.CATEGORICAL and len(state.get("categories", ())) < 2:
            single[name] = list(state.get("categories", ()))
    empty = [":".join(columns.get(f.expr, f.expr) for f in term.factors)
             for term, where in spec.term_slices.items()
             if where.stop == where.start and any(f.expr in columns for f in term.factors)]
    if not single:
        if empty:
            raise DataError(f"the term(s) {empty} of the formula {text!r} give no design column; remove "
                            "them from the formula.")
        return
    raise _single_level_error(single, parsed)


def _single_level_error(single: dict[str, list[Any]], parsed: ParsedFormula | None) -> DataError:
    """The refusal of factors with fewer than two levels in the data (``single``: name -> its levels)."""
    one = len(single) == 1
    described = ", ".join(f"{name!r} has the single level {levels[0]!r}" if levels else f"{name!r} has no level"
                          for name, levels in single.items())
    if parsed is None:  # formulaic's own terms (C(k), ...): name them, a '.' formula is not ours to write
        remove = f"Remove the term{'' if one else 's'} {', '.join(single)} from the formula"
    else:
        minus = " ".join(f"- {formula_name(name)}" for name in single)
        remove = f"Remove {'it' if one else 'them'} from the formula (with '.', write '. {minus}')"
    return DataError(
        f"the factor{'' if one else 's'} {described} in the data, so {'it' if one else 'they'} cannot enter the "
        "model (a factor needs at least 2 levels; R says 'contrasts can be applied only to factors with 2 or more "
        f"levels'). {remove}, or check why the column{' holds' if one else 's hold'} a single value."
    )


def check_observed_levels(data: pd.DataFrame, parsed: ParsedFormula) -> None:
    """Refuse a factor column of the formula (text or Categorical) whose data hold fewer than two levels.

    A Categorical's unused categories would be all-zero design columns, so the factor would leave the model
    without a word; R's model frame drops unused levels (``drop.unused.levels``) and then refuses the factor.
    """
    single = {}
    for column in parsed.columns:
        values = data[column]
        factor = isinstance(values.dtype, pd.CategoricalDtype) or values.dtype == object  # text is a factor too
        if factor and values.nunique(dropna=True) < 2:
            single[column] = [str(v) for v in pd.unique(values.dropna())]
    if single:
        raise _single_level_error(single, parsed)


def _string_names(data: pd.DataFrame) -> pd.DataFrame:
    """``data`` with its column names as strings (the grammar names columns by text; ``0`` is ``"0"``)."""
    if all(isinstance(c, str) for c in data.columns):
        return data
    return data.rename(columns=str)


def _ordered_columns(data: pd.DataFrame, parsed: ParsedFormula) -> list[str]:
    """The columns of ``parsed`` that hold ordered pandas Categoricals."""
    return [
        column for column in parsed.columns
        if isinstance(data[column].dtype, pd.CategoricalDtype) and data[column].dtype.ordered
    ]


def _safe_matrix(
    formula: str, data: pd.DataFrame, ordered_contrasts: str
) -> tuple[str, pd.DataFrame, ModelSpec, ParsedFormula]:
    parsed = parse_formula(formula, list(data.columns))
    data = usable_frame(data, parsed.columns)
    check_observed_levels(data, parsed)
    if ordered_contrasts == "poly":
        parsed = parsed.with_polynomial(_ordered_columns(data, parsed))
    terms = parsed.rhs_terms()  # a FormulaError of a column formulaic cannot code is raised here, not translated
    try:
        text = Formula(terms)  # parsed term by term, without the data as context: linear in the number of terms
        # only the formula's columns: another column named contr (or C) would hide formulaic's contr.poly (or C())
        rhs = model_matrix(text, _formula_columns(data, parsed), na_action="raise", context={})
    except (FormulaicError, ValueError) as error:
        raise _translate(error, data) from None
    check_structure(rhs.model_spec, parsed)
    check_terms_built(rhs.model_spec, parsed)
    check_distinct_names(rhs.model_spec.column_names, data)
    return parsed.response, pd.DataFrame(rhs), rhs.model_spec, parsed


def _code_matrix(formula: str, data: pd.DataFrame) -> tuple[str, pd.DataFrame, ModelSpec, None]:
    name = response_name(formula)
    if name not in data.columns:
        raise DataError(
            f"The formula's response {name!r} is not a column of the data (columns: {list(map(str, data.columns))[:12]})."
        )
    try:
        rhs = model_matrix(formula, data, na_action="raise").rhs
    except (FormulaicError, ValueError) as error:
        raise _translate(error, data) from None
    check_terms_built(rhs.model_spec, None)
    check_distinct_names(rhs.model_spec.column_names, data)
    return name, pd.DataFrame(rhs), rhs.model_spec, None


def build_design(
    formula: str, data: pd.DataFrame, *, safe: bool = True, ordered_contrasts: str = "treatment"
) -> tuple[pd.Series, pd.DataFrame, FormulaDesign]:
    """Response, design matrix (no intercept column, data's index) and the spec for new data.

    ``safe=True`` parses ``formula`` with :func:`~csvm_stats.preprocessing.formula_grammar.parse_formula`
    (data, never code); ``safe=False`` hands the text to formulaic, which
    evaluates Python in it. ``ordered_contrasts`` codes ordered Categorical
    columns with treatment contrasts (the default) or, with ``"poly"``, with
    R's polynomial contrasts (safe formulas only).
    """
    if ordered_contrasts not in CONTRASTS:
        raise DataError(f"ordered_contrasts must be one of {CONTRASTS}, got {ordered_contrasts!r}.")
    if ordered_contrasts == "poly" and not safe:
        raise DataError(
            "ordered_contrasts='poly' codes the factors of a safe formula; with safe=False write "
            "C(column, contr.poly) in the formula yourself."
        )
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"data must be a pandas DataFrame, got {type(data).__name__}.")
    check_columns(data)
    if data.shape[0] == 0:
        raise DataError(f"the data have 0 rows (columns: {list(map(str, data.columns))[:12]}); nothing to fit.")
    if safe:
        data = _string_names(data)
    name, matrix, spec, parsed = (
        _safe_matrix(formula, data, ordered_contrasts) if safe else _code_matrix(formula, data)
    )
    X = _without_intercept(matrix, data.index, parsed)
    if X.shape[1] == 0:
        raise FormulaError(f"The formula {formula!r} leaves no predictor columns.")
    check_finite_design(X, "the data")
    check_magnitudes(X.to_numpy(), list(map(str, X.columns)))
    inputs = None if parsed is None else parsed.columns
    return data[name], X, FormulaDesign(formula, name, spec, tuple(X.columns), inputs, parsed)
