"""Ordered factors coded as R codes them by default (``ordered_contrasts="poly"``, R's contr.poly)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from csvm_stats import CSVM
from csvm_stats.exceptions import DataError
from csvm_stats.interfaces.persistence import ModelFileError
from csvm_stats.interfaces.persistence import load_model, save_model
from csvm_stats.preprocessing.formula import build_design


def r_contr_poly(n_levels: int) -> np.ndarray:
    """R's contr.poly(n) as R's make.poly computes it: QR of the centred powers, Q times diag(R), unit columns."""
    scores = np.arange(1, n_levels + 1, dtype=float)
    powers = np.vander(scores - scores.mean(), n_levels, increasing=True)
    q, r = np.linalg.qr(powers)
    raw = q * np.diag(r)
    return (raw / np.linalg.norm(raw, axis=0))[:, 1:]


def ordered_data(n_levels: int, n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    levels = [f"g{k}" for k in range(1, n_levels + 1)]
    grade = pd.Categorical(rng.choice(levels, n), categories=levels, ordered=True)
    x = rng.normal(size=n)
    y = np.where(x + 0.3 * grade.codes + rng.normal(size=n) > 1, "yes", "no")
    return pd.DataFrame({"grade": grade, "x": x, "y": y})


@pytest.mark.parametrize("n_levels", [2, 3, 4, 5, 7, 10])
def test_poly_coding_is_r_contr_poly(n_levels):
    data = ordered_data(n_levels, n=40 * n_levels)
    _, X, _ = build_design("y ~ grade", data, ordered_contrasts="poly")
    names = [".L", ".Q", ".C", *(f"^{k}" for k in range(4, n_levels))][: n_levels - 1]
    assert list(X.columns) == [f"grade[{name}]" for name in names]
    coding = X.groupby(data["grade"].cat.codes.to_numpy()).first().to_numpy()
    np.testing.assert_allclose(coding, r_contr_poly(n_levels), atol=1e-12)


def test_closed_forms_of_three_levels():
    _, X, _ = build_design("y ~ grade", ordered_data(3), ordered_contrasts="poly")
    coding = X.groupby(ordered_data(3)["grade"].cat.codes.to_numpy()).first().to_numpy()
    expected = np.column_stack([[-1, 0, 1] / np.sqrt(2), [1, -2, 1] / np.sqrt(6)])
    np.testing.assert_allclose(coding, expected, atol=1e-14)


def test_treatment_stays_the_default_and_unordered_factors_keep_it():
    data = ordered_data(4).assign(site=lambda d: pd.Categorical(np.resize(["a", "b", "c"], len(d))))
    _, default, _ = build_design("y ~ grade + site", data)
    assert [c for c in default.columns if c.startswith("grade")] == ["grade[T.g2]", "grade[T.g3]", "grade[T.g4]"]
    _, poly, _ = build_design("y ~ grade + site + grade:x", data, ordered_contrasts="poly")
    assert [c for c in poly.columns if c.startswith("site")] == ["site[T.b]", "site[T.c]"]
    assert "grade[.L]" in poly.columns and not any("contr.poly" in c for c in poly.columns)


def test_bad_values_are_refused():
    data = ordered_data(3)
    with pytest.raises(DataError, match="ordered_contrasts must be one of"):
        build_design("y ~ grade", data, ordered_contrasts="helmert")
    with pytest.raises(DataError, match="safe=False"):
        build_design("y ~ grade", data, safe=False, ordered_contrasts="poly")


def test_fit_predict_and_model_file_keep_the_coding(tmp_path):
    data = ordered_data(4, n=240)
    results = CSVM.from_formula("y ~ grade + x", data, tpr_min=0.7, bound="binomial", ordered_contrasts="poly").fit(
        random_state=1, time_limit=60
    )
    assert list(results.params.index[:3]) == ["grade[.L]", "grade[.Q]", "grade[.C]"]
    saved = load_model(save_model(results, tmp_path / "model.csvm"))
    np.testing.assert_allclose(saved.decision_function(data.iloc[:25]), results.decision_function(data.iloc[:25]))
    # new data with a subset of the levels are coded with the fitted levels' polynomials
    subset = data[data["grade"].isin(["g1", "g4"])].iloc[:10]
    np.testing.assert_allclose(saved.decision_function(subset), results.decision_function(subset))


def test_model_file_refuses_an_unknown_coding(tmp_path):
    from csvm_stats.interfaces.model_checks import _factor

    assert _factor({"C": "grade", "contrasts": "poly"}).contrasts == "poly"
    with pytest.raises(ModelFileError, match="contrasts"):
        _factor({"C": "grade", "contrasts": "helmert"})


@pytest.mark.parametrize("name", ["o", "t", "poly", "ly"])
def test_poly_coding_of_columns_named_inside_contr_poly(name, tmp_path):
    """formulaic replaces a back-quoted name wherever its text occurs, so ``o`` broke ``contr.poly``: such columns
    are written unquoted and coded (and saved and loaded) like any other ordered factor."""
    rng = np.random.default_rng(1)
    n = 200
    data = pd.DataFrame({"x": rng.normal(size=n),
                         name: pd.Categorical(rng.choice(list("abc"), n), categories=list("abc"), ordered=True)})
    data["y"] = np.where(data["x"] + (data[name].cat.codes == 2) + rng.normal(size=n) > 0.5, "p", "n")
    fit = CSVM.from_formula(f"y ~ x + {name}", data, tpr_min=0.8, bound="binomial",
                            ordered_contrasts="poly").fit(random_state=0, time_limit=30)
    assert fit.model.exog_names == ["x", f"{name}[.L]", f"{name}[.Q]"]
    save_model(fit, tmp_path / "m.csvm")
    loaded = load_model(tmp_path / "m.csvm")
    np.testing.assert_allclose(loaded.decision_function(data), fit.decision_function(data).to_numpy())


@pytest.mark.parametrize("name", ["C", "contr"])
def test_a_factor_named_like_the_coding_is_refused(name):
    from csvm_stats.exceptions import FormulaError

    data = pd.DataFrame({"x": np.arange(12.0), name: pd.Categorical(list("abc") * 4, ordered=True),
                         "y": ["p", "n"] * 6})
    with pytest.raises(FormulaError, match=f"the column '{name}' cannot be coded as a factor here.*rename"):
        CSVM.from_formula(f"y ~ x + `{name}`", data, tpr_min=0.8, bound="binomial", ordered_contrasts="poly")
    if name == "contr":  # only polynomial coding reads it as the contrasts (review r9 F9)
        CSVM.from_formula("y ~ x + C(contr)", data.assign(contr=data["contr"].astype(str)), tpr_min=0.8,
                          bound="binomial")


def test_an_unused_column_named_contr_does_not_hide_contr_poly(tmp_path):
    """formulaic looks names up in the data first: a column named contr, not even in the formula, made
    C(o, contr.poly) fail with "'Series' object has no attribute 'poly'", at fit and at predict time."""
    rng = np.random.default_rng(0)
    levels = ["lo", "mid", "hi"]
    d = pd.DataFrame({"x": rng.normal(size=90), "o": pd.Categorical(rng.choice(levels, 90), categories=levels,
                                                                      ordered=True), "contr": rng.normal(size=90)})
    d["y"] = np.where(d["x"] > 0, "p", "n")
    _, X, _ = build_design("y ~ x + o", d, ordered_contrasts="poly")
    assert list(X.columns) == ["x", "o[.L]", "o[.Q]"]
    res = CSVM.from_formula("y ~ x + o", d, tpr_min=0.6, bound="none", ordered_contrasts="poly").fit(
        random_state=0, time_limit=30)
    plain = CSVM.from_formula("y ~ x + o", d.drop(columns="contr"), tpr_min=0.6, bound="none",
                              ordered_contrasts="poly").fit(random_state=0, time_limit=30)
    np.testing.assert_allclose(res.decision_function(d), plain.decision_function(d.drop(columns="contr")))
    saved = load_model(save_model(res, tmp_path / "m.csvm"))
    np.testing.assert_allclose(saved.decision_function(d), res.decision_function(d))
