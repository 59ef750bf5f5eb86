"""Column types a formula can use, made uniform before formulaic sees them; the others refused by name.

Accepted, and coded as formulaic codes them:

* numbers: numpy ints and floats, pandas' nullable ``Int64``/``Float64``
  (and the other sizes) and Arrow numbers; booleans, numpy or nullable
  ``boolean``, are numbers 0/1;
* text: ``object`` columns of strings, pandas' string dtypes (``str``,
  ``string[python]``, ``string[pyarrow]``) and Arrow strings, and
  Categoricals, are factors. String dtypes are handed to formulaic as plain
  ``object`` columns (formulaic cannot convert them itself), with ``pd.NA``
  as a missing value, which is an error as everywhere else.

Refused with a message naming the column and the conversion to make
(:class:`~csvm_stats.exceptions.DataError`): ``object`` columns that mix
numbers and text (``[1, "a", 2.5]`` would silently be a factor with the
levels "1", "2.5" and "a") or hold only numbers (convert with
``pd.to_numeric`` or make them a Categorical), other Python objects
(bytes, lists, dates), complex numbers (whose imaginary part numpy would
drop), datetimes and timedeltas (formulaic multiplies them by 0/1 and
fails), periods and intervals; and, in the data a model is fitted on, a
text column of numbers mixed with missing-value codes such as "?" (a numeric
column that pandas reads as text and a formula would code as a factor with one
level per number; :func:`check_numbers_as_text`), numbers written with thousands
separators ("2,257"), and a text column with a different value in every row (an
identifier).
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError, warn_at_caller
from csvm_stats.preprocessing.formula_grammar import formula_name
from csvm_stats.preprocessing.text_order import r_level_order
from csvm_stats.preprocessing.wording import current_front_end

_DATETIME_FIX = (
    "convert it to numbers first, e.g. (df[c] - pd.Timestamp('1970-01-01')).dt.days for days since 1970, "
    "or df[c].dt.year; or to a factor with df[c].astype(str)"
)
_TIMEDELTA_FIX = "convert it to numbers first, e.g. df[c].dt.total_seconds() / 86400 for days"


def _is_text_dtype(dtype: object) -> bool:
    if isinstance(dtype, pd.StringDtype):
        return True
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa

        return bool(pa.types.is_string(dtype.pyarrow_dtype) or pa.types.is_large_string(dtype.pyarrow_dtype))
    return False


def _value_kinds(column: pd.Series) -> dict[str, object]:
    """The kinds of the non-missing values of an object column, with one example each."""
    kinds: dict[str, object] = {}
    for value in column.dropna():
        if isinstance(value, (bool, np.bool_)):
            kind = "bool"
        elif isinstance(value, str):
            kind = "text"
        elif isinstance(value, numbers.Real):
            kind = "number"
        else:
            kind = type(value).__name__
        kinds.setdefault(kind, value)
        if len(kinds) > 2:
            break
    return kinds


#: A text column of at least this many distinct numbers, its other values missing-value codes, is refused when
#: fitting (:func:`check_numbers_as_text`): a numeric column with a code such as "?".
MIN_NUMBER_LEVELS = 5
#: Values that mark a missing cell in text files (:func:`check_numbers_as_text` refuses numbers mixed with them only).
MISSING_CODES = frozenset({"?", "", ".", "-", "--", "NA", "N/A", "n/a", "na", "NaN", "nan", "NULL", "null", "None",
                           "#N/A", "missing"})
#: Distinct values from which a text column of numbers only is coded as a factor with a warning.
MANY_NUMBER_LEVELS = 20


def check_numbers_as_text(column: pd.Series, name: str) -> None:
    """Refuse a text column that is a numeric column with missing-value codes (UCI's "?"); warn about many numbers.

    pandas reads such a CSV column as text, which a formula codes as a factor
    with one level per distinct number. A column is refused when at least
    :data:`MIN_NUMBER_LEVELS` of its distinct values read as numbers and every
    other value is a missing-value code (:data:`MISSING_CODES`). A column of
    numbers only is a factor as asked (site or ZIP codes, a file read as text),
    with a warning when it has :data:`MANY_NUMBER_LEVELS` levels or more, and so
    is a column of that many numbers and a few other words (at most one per four
    numbers: ``"unknown"``, ``"not done"`` may be missing-value words); a factor
    such as "0", "1-3", "4+" or "1", "2", "3a", "unknown" stays a factor without
    a warning, and a Categorical is never checked.

    Numbers written with thousands separators ("2,257") are numbers too
    (:func:`_check_thousands`), and a column with nearly one value per row is an
    identifier, not a factor (:func:`_check_identifier`).
    """
    values = column.dropna().astype(str)
    levels = pd.unique(values)
    as_numbers = pd.to_numeric(pd.Series(levels, dtype=object), errors="coerce").notna().to_numpy()
    n_numbers = int(as_numbers.sum())
    others = [str(v) for v in levels[~as_numbers]]
    python = current_front_end() == "python"
    _check_thousands(levels, as_numbers, name, python)
    if not (n_numbers < MIN_NUMBER_LEVELS or not others or any(o.strip() not in MISSING_CODES for o in others)):
        _refuse_numbers_with_codes(name, n_numbers, as_numbers.size, others, python)
    _check_identifier(levels, len(values), name, python, numbers=not others, warn=False)
    if not others:  # numbers held as text (a file read with dtype=str, or codes)
        if n_numbers >= MANY_NUMBER_LEVELS:
            fix = (f"convert it with pd.to_numeric(df[{name!r}]) if it is a number; make it a Categorical "
                   f"(df[{name!r}].astype('category')) to keep it a factor without this warning" if python else
                   "if it is a number, check how the file writes it; if it is a factor, give its levels a form that "
                   "is not a number (e.g. a prefix) to keep it a factor without this warning")
            warn_at_caller(f"the data column {name!r} holds text whose {n_numbers} distinct values are all numbers: it "
                          f"is coded as a factor with {n_numbers} levels. {fix[0].upper()}{fix[1:]}.", UserWarning)
        return
    if n_numbers >= MANY_NUMBER_LEVELS and len(others) * 4 <= n_numbers and any(
            o.strip() not in MISSING_CODES for o in others):  # numbers and a few words: maybe a missing-value word
        fix = (f"if {others[0]!r} marks a missing value, convert with pd.to_numeric(df[{name!r}], errors='coerce') "
               f"and remove or impute those rows; make it a Categorical (df[{name!r}].astype('category')) to keep it "
               "a factor without this warning" if python else
               f"if {others[0]!r} marks a missing value, leave those cells empty and remove or impute those rows; "
               "give the levels a form that is not a number (e.g. a prefix) to keep it a factor without this warning")
        warn_at_caller(f"the data column {name!r} holds text whose distinct values are {n_numbers} numbers and "
                       f"{others[:5]}{' ...' if len(others) > 5 else ''}: it is coded as a factor with "
                       f"{as_numbers.size} levels, one per number. {fix[0].upper()}{fix[1:]}.", UserWarning)
        return
    _check_identifier(levels, len(values), name, python, numbers=False, warn=True)


def _refuse_numbers_with_codes(name: str, n_numbers: int, n_levels: int, others: list[str], python: bool) -> None:
    """The refusal of :func:`check_numbers_as_text`: numbers mixed with missing-value codes only."""
    what = (f"{n_numbers} of its {n_levels} distinct values are numbers, the others "
            f"{others[:5]}{' ...' if len(others) > 5 else ''}")
    if python:
        fix = (f"if {others[0]!r} marks a missing value, convert with pd.to_numeric(df[{name!r}], "
               f"errors='coerce') and remove or impute those rows; if the column is a factor, make it one with "
               f"df[{name!r}].astype('category')")
    else:
        fix = (f"if {others[0]!r} marks a missing value, leave those cells empty (missing) and remove or impute "
               "those rows; if the column is a factor, give its levels a form that is not a number (e.g. a prefix)")
    raise DataError(
        f"the data column {name!r} holds text, but {what}; as text it would be a factor with one level per number. "
        f"{fix[0].upper()}{fix[1:]}."
    )


#: A text column with at least this many distinct values, more than :data:`ID_SHARE` of its rows, is an identifier
#: rather than a factor (:func:`_check_identifier`).
MIN_ID_LEVELS = 20
ID_SHARE = 0.5
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")


def _check_thousands(levels: np.ndarray, as_numbers: np.ndarray, name: str, python: bool) -> None:
    """Refuse text that is numbers written with thousands separators ("2,257", "1,234.5"), review r11 F4.

    Refused, not warned about, from :data:`MIN_NUMBER_LEVELS` distinct numbers: a thousands separator
    marks a quantity (codes, identifiers and ZIP codes are not written with one), so a factor with one
    level per such number has no use; a few levels ("1,000", "5,000" as dose groups) stay a factor. The
    other values may be plain numbers and missing-value codes (:data:`MISSING_CODES`) only.
    """
    grouped = np.array([bool(_THOUSANDS.fullmatch(str(v).strip())) for v in levels], dtype=bool)
    if not grouped.any():
        return
    words = [str(v) for v, g, n in zip(levels, grouped, as_numbers) if not g and not n]
    if any(w.strip() not in MISSING_CODES for w in words) or int((grouped | as_numbers).sum()) < MIN_NUMBER_LEVELS:
        return
    example = str(levels[grouped][0]).strip()
    codes = f" and the missing-value code(s) {words[:5]}" if words else ""
    if python:
        fix = (f"convert it with pd.to_numeric(df[{name!r}].str.replace(',', '')"
               f"{', errors=' + repr('coerce') if words else ''})"
               f"{' and remove or impute the rows with ' + repr(words[0]) if words else ''} (if ',' is the decimal "
               f"mark, replace it with '.' instead), or read the file with pd.read_csv(..., thousands=','); if the "
               f"column is a factor, make it one with df[{name!r}].astype('category')")
    else:
        fix = ("write the numbers without thousands separators in the file (2257, not 2,257)"
               f"{' and leave missing cells empty' if words else ''}; if the column is a factor, give its levels a "
               "form that is not a number (e.g. a prefix)")
    raise DataError(
        f"the data column {name!r} holds text, but its values are numbers written with thousands separators (e.g. "
        f"{example!r}: {int((grouped | as_numbers).sum())} distinct numbers{codes}); as text it would be a factor "
        f"with one level per number. {fix[0].upper()}{fix[1:]}."
    )


def _check_identifier(levels: np.ndarray, n_rows: int, name: str, python: bool, *, numbers: bool, warn: bool) -> None:
    """Refuse a text column with a different value in every row; warn when values are nearly all distinct.

    Such a column is an identifier (patient, sample or record ID), review r11 F4. Every value distinct,
    from :data:`MIN_ID_LEVELS` rows: refused, because a factor with one level per row has no use (each
    row gets its own coefficient, and no new row can be predicted: its value is an unseen level). More
    than :data:`ID_SHARE` of the rows (and at least :data:`MIN_ID_LEVELS` levels): a warning, because a
    factor of many small groups (clinics, families) can be meant; ``warn=False`` checks the refusal only
    (a column of numbers gets the warning of :func:`check_numbers_as_text` instead).
    """
    n_levels = len(levels)
    if n_levels < MIN_ID_LEVELS or n_levels <= ID_SHARE * n_rows or (n_levels < n_rows and not warn):
        return
    examples = [str(v) for v in levels[:3]]
    written = formula_name(name)
    drop = f"drop it from the formula with '- {written}'" + (f" (e.g. 'y ~ . - {name}')" if written == name else "")
    number = ""
    if numbers:
        number = (f"; if it is a measurement, convert it with pd.to_numeric(df[{name!r}])" if python else
                  "; if it is a measurement, check how the file writes its numbers")
    if n_levels == n_rows:
        raise DataError(
            f"the data column {name!r} holds text with a different value in each of its {n_rows} rows (e.g. "
            f"{examples}): an identifier? As a factor it would have one level per row, so each row would get its "
            f"own coefficient and no new row could be predicted (its value would be an unseen level). "
            f"{drop[0].upper()}{drop[1:]}{number}."
        )
    warn_at_caller(
        f"the data column {name!r} holds text with {n_levels} distinct values in {n_rows} rows (e.g. {examples}): it "
        f"is coded as a factor with a level for nearly every row, which fits those rows by their own coefficients "
        f"and cannot predict new values. If it is an identifier, {drop}{number}; otherwise group its values into "
        "fewer levels.", UserWarning)


def warn_if_baseline_differs_from_r(column: pd.Series, name: str) -> None:
    """Warn when a text column's baseline level (the first in code-point order) is not the one R would take.

    R codes the same column with its locale's order (:mod:`~csvm_stats.preprocessing.text_order`), so
    its treatment dummies, and with the penalty the fitted classifier, differ from ours.
    """
    levels = sorted(str(v) for v in pd.unique(column.dropna().to_numpy(dtype=object)))
    theirs = r_level_order(levels)[0] if len(levels) >= 2 else None
    if theirs is None or theirs == levels[0]:
        return
    if current_front_end() == "python":
        fix = (f"make it a Categorical with the baseline first, e.g. df[{name!r}] = pd.Categorical(df[{name!r}], "
               f"categories=[{theirs!r}, ...]), to fit the same model in both")
    else:
        fix = "write its levels in one letter case (and without accents) to fit the same model in both"
    warn_at_caller(
        f"the text column {name!r} is coded with the baseline level {levels[0]!r}, the first of its levels in "
        f"code-point order (capitals and accented letters sort apart); R orders text by the locale (ignoring case "
        f"and accents first) and would take {theirs!r}, and the penalised fit depends on the baseline. To choose "
        f"it, {fix}."
    )


def usable_column(column: pd.Series, name: str, what: str = "the data", *, fitting: bool = True) -> pd.Series:
    """``column`` in a dtype formulaic codes correctly, or a :class:`DataError` naming it and the fix.

    ``fitting``: the data a model is fitted on, where a numeric column read as
    text is refused (:func:`check_numbers_as_text`); new data are coded as the
    fitted model says.
    """
    dtype = column.dtype
    where = f"{what} column {name!r}"
    if _is_text_dtype(dtype):
        if fitting:
            check_numbers_as_text(column, name)
            warn_if_baseline_differs_from_r(column, name)
        values = column.astype(object)
        return values.where(values.notna(), None)
    if isinstance(dtype, pd.ArrowDtype):
        kind = dtype.pyarrow_dtype
        import pyarrow as pa

        if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
            raise DataError(f"{where} holds dates or times ({dtype}); {_DATETIME_FIX.replace('c]', repr(name) + ']')}.")
        if pa.types.is_duration(kind):
            raise DataError(f"{where} holds time spans ({dtype}); {_TIMEDELTA_FIX.replace('c]', repr(name) + ']')}.")
        if pa.types.is_boolean(kind) or pa.types.is_integer(kind) or pa.types.is_floating(kind):
            return column.astype("boolean" if pa.types.is_boolean(kind) else "Float64")
        if pa.types.is_dictionary(kind):
            return column.astype(object).where(column.notna(), None)
        raise DataError(f"{where} has the Arrow type {kind}, which is neither numbers nor text; convert it first.")
    if pd.api.types.is_datetime64_any_dtype(dtype):
        raise DataError(f"{where} holds dates or times ({dtype}); {_DATETIME_FIX.replace('c]', repr(name) + ']')}.")
    if pd.api.types.is_timedelta64_dtype(dtype):
        raise DataError(f"{where} holds time spans ({dtype}); {_TIMEDELTA_FIX.replace('c]', repr(name) + ']')}.")
    if pd.api.types.is_complex_dtype(dtype):
        raise DataError(
            f"{where} holds complex numbers, whose imaginary part would be dropped; use separate real columns "
            f"(df[{name!r}].real, df[{name!r}].imag or abs(df[{name!r}]))."
        )
    if isinstance(dtype, (pd.PeriodDtype, pd.IntervalDtype, pd.SparseDtype)):
        raise DataError(f"{where} has the dtype {dtype}, which a formula cannot code; convert it to numbers or text.")
    if dtype == object:
        kinds = _value_kinds(column)
        if len(kinds) > 1 or (kinds and set(kinds) - {"text", "bool"}):
            examples = ", ".join(f"{value!r} ({kind})" for kind, value in kinds.items())
            if set(kinds) == {"number"}:
                fix = f"convert it with pd.to_numeric(df[{name!r}]) for numbers, or .astype('category') for a factor"
            else:
                fix = (
                    f"use one type: pd.to_numeric(df[{name!r}]) for numbers, or df[{name!r}].astype(str) "
                    "for a factor"
                )
            raise DataError(f"{where} is an object column holding {examples}; {fix}.")
        if fitting and kinds:
            check_numbers_as_text(column, name)
            warn_if_baseline_differs_from_r(column, name)
    return column


def usable_frame(data: pd.DataFrame, columns: Iterable[str], what: str = "the data", *, fitting: bool = True) -> pd.DataFrame:
    """``data`` with each of ``columns`` made usable (:func:`usable_column`); a copy only if something changed."""
    changed = {}
    for name in columns:
        if name in data.columns:
            column = data[name]
            converted = usable_column(column, name, what, fitting=fitting)
            if converted is not column:
                changed[name] = converted
    return data.assign(**changed) if changed else data
