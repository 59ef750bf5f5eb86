"""Semantic checks of a model file at load: each field rebuilt into the object it stands for, or refused.

A damaged or hand-edited file is a :class:`~csvm_stats.interfaces.model_format.ModelFileError`
at load, never a data error at predict (:mod:`csvm_stats.interfaces.persistence`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError
from csvm_stats.interfaces.model_format import (
    CALIBRATION_ARRAYS,
    KERNEL_ARRAYS,
    ModelFileError,
    _LABEL_DTYPES,
    _is_integer,
    _is_number,
    _require,
)
from csvm_stats.optimization.kernels import FeatureMap, Kernel
from csvm_stats.preprocessing.design import LabelCoding, Standardizer
from csvm_stats.probability.score_model import ProbabilityModel
from csvm_stats.probability.venn_abers import VennAbers

if TYPE_CHECKING:
    from csvm_stats.preprocessing.formula import FormulaDesign
    from csvm_stats.preprocessing.formula_grammar import Factor as GrammarFactor

_LABEL_CHECKS = {
    "int": _is_integer,
    "float": _is_number,
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "category": lambda v: isinstance(v, str) or isinstance(v, bool) or _is_number(v),
}


def _labels(fields: Any) -> LabelCoding:
    _require(isinstance(fields, dict), "labels must be an object")
    levels, positive, kind = fields.get("levels"), fields.get("positive"), fields.get("dtype")
    _require(kind in _LABEL_DTYPES, f"labels.dtype must be one of {_LABEL_DTYPES}")
    _require(isinstance(levels, list) and len(levels) == 2, "labels.levels must list two labels")
    _require(all(_LABEL_CHECKS[kind](v) for v in levels), f"labels.levels must be of labels.dtype {kind!r}")
    _require(levels[0] != levels[1], "labels.levels must be two different labels")
    _require(positive in levels, "labels.positive must be one of labels.levels")
    name = fields.get("name")
    _require(name is None or isinstance(name, str), "labels.name must be a string or null")
    dtype: Any = {
        "int": np.dtype(np.int64),
        "float": np.dtype(np.float64),
        "bool": np.dtype(bool),
        "str": None,
        "category": pd.CategoricalDtype(levels),
    }[kind]
    return LabelCoding((levels[0], levels[1]), positive, name, dtype)


def _kernel(fields: Any, arrays: dict[str, np.ndarray], p: int) -> FeatureMap:
    _require(isinstance(fields, dict), "kernel must be an object")
    name = fields.get("name")
    _require(name in ("linear", "rbf", "poly"), "kernel.name must be 'linear', 'rbf' or 'poly'")
    coef = arrays.get("coef")
    _require(coef is not None and coef.ndim == 1, "arrays/coef.npy must be a vector")
    gamma, degree, coef0 = fields.get("gamma"), fields.get("degree"), fields.get("coef0")
    _require(_is_integer(degree) and 1 <= degree <= 100, "kernel.degree must be a positive integer")
    _require(_is_number(coef0), "kernel.coef0 must be a number")
    rank, numerical_rank, exact = fields.get("rank"), fields.get("numerical_rank"), fields.get("exact")
    _require(_is_integer(rank) and _is_integer(numerical_rank) and isinstance(exact, bool), "kernel rank fields")
    if name == "linear":
        _require(gamma is None, "kernel.gamma must be null for a linear model")
        _require(coef.size == p, f"a linear model needs {p} coefficients, the file has {coef.size}")
        _require(not set(KERNEL_ARRAYS) & set(arrays), "a linear model has no reference or projection arrays")
        return FeatureMap(Kernel("linear"), rank=p, numerical_rank=p, exact=True)
    _require(_is_number(gamma) and gamma > 0, "kernel.gamma must be a positive number")
    reference, projection = arrays.get("reference"), arrays.get("projection")
    _require(reference is not None and projection is not None, "a kernel model needs reference and projection arrays")
    _require(reference.ndim == 2 and reference.shape[1] == p, f"reference must have {p} columns")
    _require(
        projection.ndim == 2 and projection.shape == (reference.shape[0], coef.size),
        "projection must be (reference rows) x (number of coefficients)",
    )
    kernel = Kernel(name, gamma=float(gamma), degree=int(degree), coef0=float(coef0))
    return FeatureMap(kernel, reference, projection, rank=rank, numerical_rank=numerical_rank, exact=exact)


_BACKTICK_SAFE = re.compile(r"^[^`\\\n\r]+$")


def _factor(entry: Any) -> GrammarFactor:
    """A saved term entry: a column name, ``{"C": column}`` for ``C(column)``, with ``"contrasts": "poly"``."""
    from csvm_stats.preprocessing.formula_grammar import CONTRASTS, Factor as GrammarFactor

    categorical = isinstance(entry, dict)
    contrasts = "treatment"
    if categorical:
        _require(list(entry) in (["C"], ["C", "contrasts"]), f"bad formula factor {entry!r} in a term")
        contrasts = entry.get("contrasts", contrasts)
        _require(contrasts in CONTRASTS, f"bad contrasts {contrasts!r} in a term")
        entry = entry["C"]
    _require(isinstance(entry, str) and bool(_BACKTICK_SAFE.match(entry)), f"bad column name {entry!r} in a term")
    return GrammarFactor(entry, categorical, contrasts)


def _formula(fields: Any, columns: list[str]) -> FormulaDesign | None:
    """Rebuild the formula spec from its structure only (column look-ups and our own ``C(column)``).

    The formula text in the file is never parsed or evaluated; the spec is
    rebuilt by :meth:`~csvm_stats.preprocessing.formula_grammar.ParsedFormula.rhs` from the
    checked term entries and verified factor by factor.
    """
    if fields is None:
        return None
    from formulaic import ModelSpec
    from formulaic.parser.types import Factor

    from csvm_stats.preprocessing.formula import FormulaDesign, check_structure
    from csvm_stats.preprocessing.formula_grammar import ParsedFormula

    _require(isinstance(fields, dict), "formula must be an object or null")
    terms, categories = fields.get("terms"), fields.get("categories")
    formula, response = fields.get("formula"), fields.get("response")
    intercept = fields.get("intercept", True)  # files written before the field kept the intercept
    _require(isinstance(formula, str) and isinstance(response, str), "formula.formula and formula.response must be strings")
    _require(isinstance(terms, list) and terms, "formula.terms must be a non-empty list")
    _require(isinstance(categories, dict), "formula.categories must be an object")
    _require(isinstance(intercept, bool), "formula.intercept must be true or false")
    for term in terms:
        _require(isinstance(term, list) and term, "each formula term must be a non-empty list of column names")
    parsed = ParsedFormula(formula, response, tuple(tuple(_factor(e) for e in term) for term in terms), intercept)
    exprs = {factor.expr: factor for term in parsed.terms for factor in term}
    for name, levels in categories.items():
        _require(name in exprs, f"formula.categories names {name!r}, which no term uses")
        _require(isinstance(levels, list) and levels, f"formula.categories[{name!r}] must list levels")
        _require(all(_LABEL_CHECKS["category"](v) for v in levels), f"levels of {name!r}")
        _require(
            len({(type(v).__name__, v) for v in levels}) == len(levels),
            f"formula.categories[{name!r}] repeats a level",
        )
    encoder_state = {
        expr: (Factor.Kind.CATEGORICAL, {"categories": list(categories[expr])})
        if expr in categories
        else (Factor.Kind.NUMERICAL, {})
        for expr in exprs
    }
    spec = ModelSpec(formula=parsed.rhs_terms(), materializer="pandas", ensure_full_rank=True, encoder_state=encoder_state)
    try:
        check_structure(spec, parsed)
    except DataError as error:
        raise ModelFileError(f"not a valid csvm-stats model file: {error}") from None
    return FormulaDesign(formula, response, spec, tuple(columns), inputs=parsed.columns, parsed=parsed)


def _scaler(arrays: dict[str, np.ndarray], p: int) -> Standardizer:
    """The stored standardisation: ``p`` finite means and ``p`` positive normal scales with finite inverses."""
    for name in ("scale_mean", "scale_sd"):
        _require(name in arrays and arrays[name].shape == (p,), f"{name} must have {p} entries")
    tiny = np.finfo(np.float64).tiny
    sd = arrays["scale_sd"]
    _require(
        bool(np.all(sd >= tiny)) and bool(np.all(np.isfinite(1.0 / sd))),
        f"scale_sd must be positive normal numbers (>= {tiny:.3g}); it has {float(sd.min()):.3g}",
    )
    return Standardizer(arrays["scale_mean"], sd)


def _checked_formula(fields: Any, columns: list[str]) -> FormulaDesign | None:
    """The stored formula (:func:`_formula`), checked to build exactly the file's design columns."""
    formula = _formula(fields, columns)
    if formula is not None:
        _check_formula_columns(formula, columns)
    return formula


def _check_formula_columns(design: FormulaDesign, columns: list[str]) -> None:
    """The formula must build exactly the file's design columns (probed on levels and zeros, never on user data)."""
    from csvm_stats.preprocessing.formula import probe_frame

    try:
        built = list(map(str, design.transform(probe_frame(design)).columns))
    except DataError as error:
        raise ModelFileError(f"not a valid csvm-stats model file: its formula cannot build a design ({error})") from None
    _require(
        built == list(columns),
        f"its formula builds the design columns {built[:8]}, but the file lists {list(columns)[:8]}",
    )


def _calibration(fields: Any, arrays: dict[str, np.ndarray]) -> tuple[VennAbers | None, str | None]:
    """The stored Venn-Abers predictor and its method, or (None, None) for a file without one."""
    present = [n for n in CALIBRATION_ARRAYS if n in arrays]
    if fields is None:
        _require(not present, "calibration arrays without calibration metadata")
        return None, None
    _require(isinstance(fields, dict), "calibration must be an object or null")
    _require(len(present) == len(CALIBRATION_ARRAYS), f"a calibration needs the arrays {list(CALIBRATION_ARRAYS)}")
    method, n, n_pos, folds = (fields.get(k) for k in ("method", "n", "n_positive", "folds"))
    _require(method in ("held-out", "cross-fitted"), "calibration.method must be 'held-out' or 'cross-fitted'")
    counts = (n, n_pos, folds)
    _require(all(isinstance(v, int) and not isinstance(v, bool) for v in counts), "calibration counts must be integers")
    _require(0 <= n_pos <= n and n >= 1 and folds >= 0, "calibration counts are inconsistent")
    scores, p0, p1 = (arrays[k] for k in CALIBRATION_ARRAYS)
    k = scores.size
    _require(scores.ndim == 1 and k >= 1 and bool(np.all(np.diff(scores) > 0)), "va_scores must increase strictly")
    _require(p0.shape == (2 * k + 1,) and p1.shape == (2 * k + 1,), f"va_p0 and va_p1 must have {2 * k + 1} entries")
    _require(bool(np.all((0 <= p0) & (p0 <= p1) & (p1 <= 1))), "va_p0 <= va_p1 must lie in [0, 1]")
    return VennAbers(scores, p0, p1, n, n_pos), method


def _probability_model(fields: Any, arrays: dict[str, np.ndarray], r: int) -> ProbabilityModel | None:
    """The stored probability model of a calibration, or None (an older file: its arrays calibrate f(x))."""
    model = fields.get("model") if isinstance(fields, dict) else None
    if model is None:
        _require("prob_coef" not in arrays, "prob_coef without calibration.model")
        return None
    _require(isinstance(model, dict), "calibration.model must be an object")
    numbers = [model.get(k) for k in ("intercept", "slope", "offset", "penalty")]
    _require(all(_is_number(v) for v in numbers), "calibration.model needs numbers intercept, slope, offset, penalty")
    _require(_is_integer(model.get("n")) and model["n"] >= 1, "calibration.model.n must be a positive integer")
    _require("prob_coef" in arrays and arrays["prob_coef"].shape == (r,), f"prob_coef must have {r} entries")
    _require(bool(np.all(np.isfinite(arrays["prob_coef"]))), "prob_coef must be finite")
    curvature = model.get("curvature", 0.0)
    _require(_is_number(curvature) and (curvature == 0 or abs(float(curvature)) <= float(model["slope"])),
             "calibration.model.curvature must be a number k, 0 or with |k| <= slope (an increasing recalibration)")
    interval = "interval_intercept" in model
    _require(interval == ("prob_interval_coef" in arrays),
             "calibration.model.interval_intercept and prob_interval_coef come together")
    if not interval:  # an older file: one score for P and the interval
        return ProbabilityModel(arrays["prob_coef"], *(float(v) for v in numbers), n=int(model["n"]),
                                curvature=float(curvature))
    _require(_is_number(model["interval_intercept"]), "calibration.model.interval_intercept must be a number")
    coef = arrays["prob_interval_coef"]
    _require(coef.shape == (r,) and bool(np.all(np.isfinite(coef))), f"prob_interval_coef must have {r} finite entries")
    return ProbabilityModel(arrays["prob_coef"], *(float(v) for v in numbers), n=int(model["n"]),
                            interval_coef=coef, interval_intercept=float(model["interval_intercept"]),
                            curvature=float(curvature))



def _check_selection(selection: Any, columns: list[str]) -> None:
    if selection is None:
        return
    _require(isinstance(selection, dict), "report.selection must be an object")
    _require(selection.get("route") in ("l1", "cardinality"), "report.selection.route must be 'l1' or 'cardinality'")
    s = selection.get("max_features")
    _require(s is None or (_is_integer(s) and s >= 1), "report.selection.max_features must be a positive integer")
    _require(isinstance(selection.get("exact"), bool), "report.selection.exact must be a boolean")
    features = selection.get("features")
    _require(isinstance(features, dict) and set(features) <= set(columns), "report.selection.features must name columns")
    _require(all(_is_number(v) for v in features.values()), "report.selection.features must map columns to numbers")


def _report(report: Any, columns: list[str]) -> dict[str, Any]:
    _require(isinstance(report, dict) and isinstance(report.get("summary_text"), str), "report.summary_text")
    statements, rates = report.get("statements", {}), report.get("rates", {})
    _require(
        isinstance(statements, dict) and all(isinstance(v, str) for v in statements.values()),
        "report.statements must map rates to text",
    )
    _require(isinstance(rates, dict) and all(isinstance(v, dict) for v in rates.values()), "report.rates")
    seed = report.get("random_state")
    _require(seed is None or _is_integer(seed), "report.random_state must be an integer")
    _check_selection(report.get("selection"), columns)
    roles = report.get("sample_roles")
    _require(roles is None or (isinstance(roles, dict) and isinstance(roles.get("rows"), list)
                               and isinstance(roles.get("roles"), list) and len(roles["rows"]) == len(roles["roles"])
                               and all(isinstance(v, str) for v in roles["rows"])
                               and set(roles["roles"]) <= {"training", "anchor", "held-out", "unused"}),
             "report.sample_roles must list the rows and their roles")
    return report
