"""Label coding, sample splits and scaling (csvm_stats.preprocessing.design)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from csvm_stats.preprocessing.design import Standardizer, encode_labels, explicit_split, split_samples
from csvm_stats.exceptions import DataError


@pytest.mark.parametrize(
    "labels, positive, negative",
    [
        ([0, 1, 1, 0], 1, 0),
        ([False, True, True], True, False),
        (["no", "yes", "no"], "yes", "no"),
        (pd.Categorical(["b", "a", "b"], categories=["b", "a"]), "a", "b"),
    ],
)
def test_default_positive_is_the_second_level(labels, positive, negative):
    coding, y = encode_labels(labels)
    assert coding.positive == positive and coding.negative == negative
    assert set(np.unique(y)) == {-1.0, 1.0}


def test_named_positive_and_round_trip_keep_type():
    cat = pd.Series(pd.Categorical(["ill", "well", "ill"], categories=["well", "ill"]), name="status")
    coding, y = encode_labels(cat, positive="well")
    np.testing.assert_array_equal(y, [-1, 1, -1])
    back = coding.decode(np.array([-0.5, 2.0, 0.0]), index=pd.Index([10, 11, 12]))
    assert isinstance(back.dtype, pd.CategoricalDtype)
    assert list(back.cat.categories) == ["well", "ill"]
    assert back.tolist() == ["ill", "well", "well"]  # a decision value of exactly 0 is positive
    assert back.index.tolist() == [10, 11, 12] and back.name == "status"

    coding01, y01 = encode_labels(np.array([0, 1, 1]))
    assert coding01.decode(y01).dtype.kind == "i"


@pytest.mark.parametrize(
    "labels, message",
    [
        ([1, 1, 1], "single class"),
        (["a", "b", "c"], "3 distinct labels"),
        (pd.Categorical(["a", "b", "c", "a"], categories=["a", "b", "c", "d"]), "3 used categories"),
        ([0.0, 1.0, np.nan], "missing"),
    ],
)
def test_bad_labels_are_rejected(labels, message):
    with pytest.raises(DataError, match=message):
        encode_labels(labels)


def test_unknown_positive_is_rejected():
    with pytest.raises(DataError, match="not one of"):
        encode_labels(["a", "b"], positive="c")


def test_split_is_stratified_disjoint_complete_and_seeded():
    y = np.r_[np.ones(40), -np.ones(60)]
    split = split_samples(y, (0.5, 0.25, 0.25), random_state=3)
    rows = np.concatenate([split.train, split.anchor, split.holdout])
    assert np.array_equal(np.sort(rows), np.arange(100))
    assert (y[split.train] > 0).sum() == 20 and (y[split.anchor] > 0).sum() == 10 and (y[split.holdout] > 0).sum() == 10
    again = split_samples(y, (0.5, 0.25, 0.25), random_state=3)
    assert np.array_equal(split.anchor, again.anchor)
    assert split_samples(y, (0.6, 0.4, 0.0), random_state=0).holdout.size == 0


def test_explicit_split_checks():
    split = explicit_split({"train": [0, 1, 2], "anchor": [3, 4]}, 7)
    assert split.holdout.tolist() == [5, 6]
    with pytest.raises(DataError, match="disjoint"):
        explicit_split({"train": [0, 1], "anchor": [1, 2]}, 4)
    with pytest.raises(DataError, match="cover"):
        explicit_split({"train": [0], "anchor": [1], "holdout": [2]}, 4)
    with pytest.raises(DataError, match="0..3"):
        explicit_split({"train": [0, 9], "anchor": [1]}, 4)


def test_standardizer_back_to_original_units():
    rng = np.random.default_rng(0)
    X = rng.normal(5, 3, size=(50, 3))
    X[:, 2] = 7.0  # a constant column is divided by its magnitude (its rounding residuals stay ~1e-16)
    s = Standardizer.fit(X)
    w, b = np.array([1.0, -2.0, 0.5]), 0.3
    w0, b0 = s.to_original(w, b)
    np.testing.assert_allclose(s.transform(X) @ w + b, X @ w0 + b0)
    assert s.scale[2] == 7.0


def _numbers_with_a_code(n: int = 120, seed: int = 0) -> pd.DataFrame:
    """A numeric column with UCI's "?" for a missing value, as pandas reads it from a CSV: text."""
    rng = np.random.default_rng(seed)
    chol = rng.integers(150, 350, n).astype(str).astype(object)
    chol[3] = "?"
    x = rng.normal(size=n)
    return pd.DataFrame({"x": x, "chol": pd.array(chol, dtype="str"), "y": np.where(x > 0, "a", "b")})


@pytest.mark.parametrize("dtype", ["str", object])
def test_a_numeric_column_read_as_text_is_refused_not_made_a_factor(dtype):
    """Review r7 F9: one "?" made a 100-level factor of a numeric column, silently."""
    from csvm_stats.models.model import CSVM
    from csvm_stats.preprocessing.wording import front_end

    data = _numbers_with_a_code()
    data["chol"] = data["chol"].astype(dtype)
    with pytest.raises(DataError, match=r"column 'chol' holds text, but \d+ of its \d+ distinct values are numbers, the "
                                        r"others \['\?'\].*pd.to_numeric\(df\['chol'\], errors='coerce'\)"):
        CSVM.from_formula("y ~ x + chol", data, tpr_min=0.6)
    with front_end("cli"), pytest.raises(DataError, match="leave those cells empty"):
        CSVM.from_formula("y ~ x + chol", data, tpr_min=0.6)
    # numbers only held as text (a file read with dtype=str): a factor as asked, with a warning when the levels are
    # many (review r7 F9's variant; refusing them refused site and ZIP codes, review r9 F1)
    with pytest.warns(UserWarning, match=r"column 'chol' holds text whose \d+ distinct values are all numbers.*"
                                         r"pd.to_numeric\(df\['chol'\]\)"):
        CSVM.from_formula("y ~ x + chol", data.assign(chol=data["chol"].replace("?", "200")), tpr_min=0.6)
    # a Categorical says it is a factor; factors with number-like levels and other levels stay factors, silently
    CSVM.from_formula("y ~ x + chol", data.assign(chol=data["chol"].astype("category")), tpr_min=0.6)
    levels = np.array(["0", "1-3", "4+", "1", "2", "3", "unknown", "4", "5", "6", "3a"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for few in (levels[:3], levels[3:7], levels[3:], ["02139", "10001", "60601", "94103", "73301", "30301"]):
            CSVM.from_formula("y ~ x + C(g)", data.assign(g=np.resize(np.asarray(few), len(data)).astype(str)),
                              tpr_min=0.6)



def test_new_data_with_number_like_text_are_predicted_as_the_fitted_factor():
    from csvm_stats.models.model import CSVM

    data = _numbers_with_a_code()
    fitted = data.assign(chol=data["chol"].astype("category"))
    res = CSVM.from_formula("y ~ x + chol", fitted, tpr_min=0.6, bound="none").fit(random_state=0, time_limit=30)
    new = data.drop(columns="y").iloc[:20]  # text, not Categorical
    np.testing.assert_allclose(res.decision_function(new), res.decision_function(fitted.iloc[:20]))


def test_a_categorical_response_with_an_unused_category_is_coded_by_its_two_used_ones():
    """Review r7 F8: iris without setosa (pandas keeps the category) was refused by the two-class model only."""
    from csvm_stats.models.model import CSVM

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=90)})
    frame["y"] = pd.Categorical(np.where(frame["x"] > 0, "virginica", "versicolor"),
                                categories=["setosa", "versicolor", "virginica"])
    coding, y = encode_labels(frame["y"])
    assert coding.levels == ("versicolor", "virginica") and coding.positive == "virginica"
    np.testing.assert_array_equal(y, np.where(frame["x"] > 0, 1.0, -1.0))
    res = CSVM.from_formula("y ~ x", frame, tpr_min=0.6, bound="none").fit(random_state=0, time_limit=30)
    assert res.model.coding.levels == ("versicolor", "virginica")
    assert set(res.predict(frame)) <= {"versicolor", "virginica"}


@pytest.mark.parametrize("front, advice", [("python", "positive='no' or positive='Yes'"),
                                           ("cli", "--positive no or --positive Yes")])
def test_a_default_positive_class_that_depends_on_letter_case_is_named_in_a_warning(front, advice):
    """Review r7 F10 / r8 F15: "Yes" < "no" by code point, R's collation puts "no" first and takes "Yes"."""
    import warnings

    from csvm_stats.preprocessing.wording import front_end

    with front_end(front), pytest.warns(UserWarning, match="positive class is 'no'.*R's csvm\\(\\) .* would take 'Yes'") as seen:
        coding, _ = encode_labels(pd.Series(["Yes", "no", "no"]))
    assert coding.positive == "no" and advice in str(seen[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        encode_labels(pd.Series(["yes", "no"]))  # the same order either way
        encode_labels(pd.Series(["Yes", "no"]), positive="Yes")  # chosen


def test_r_collation_order_puts_case_and_accents_after_the_letters():
    """R (ICU, even under C.UTF-8) sorts a < A < b < B and É with E; Python by code point."""
    from csvm_stats.preprocessing.text_order import r_level_order

    assert r_level_order(["b", "B", "A", "a", "hiver", "ÉTÉ", "eb", "éa"]) == ["a", "A", "b", "B", "éa", "eb", "ÉTÉ", "hiver"]
    assert r_level_order(["Yes", "no"]) == ["no", "Yes"]


@pytest.mark.parametrize("labels, positive", [(["a", "A"], "a"), (["ÉTÉ", "hiver"], "ÉTÉ")])
def test_case_and_accent_warnings_name_the_class_r_would_take_and_point_at_the_callers_line(labels, positive):
    """Review r9 F7: same-letter and accented labels warn too, and the warning is attributed to this file."""
    with pytest.warns(UserWarning, match=f"positive class is '{positive}'") as seen:
        coding, _ = encode_labels(pd.Series(labels * 3))
    assert coding.positive == positive
    assert seen[0].filename == __file__


def test_a_text_predictor_whose_baseline_r_would_not_take_warns_and_a_categorical_does_not():
    """Review r8 F15: a mixed-case text predictor gets baseline 'B' here and 'a' in R: a different penalised fit."""
    from csvm_stats import CSVM

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=80), "g": rng.choice(["a", "B", "c"], 80)})
    frame["y"] = np.where(frame["x"] + rng.normal(size=80) > 0, "pos", "neg")
    with pytest.warns(UserWarning, match="text column 'g' is coded with the baseline level 'B'.*would take 'a'") as seen:
        CSVM.from_formula("y ~ x + g", frame, tpr_min=0.6, bound="none")
    assert seen[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CSVM.from_formula("y ~ x + g", frame.assign(g=pd.Categorical(frame["g"], ["a", "B", "c"])), tpr_min=0.6,
                          bound="none")
        CSVM.from_formula("y ~ x + g", frame.assign(g=frame["g"].str.lower()), tpr_min=0.6, bound="none")


def test_many_numbers_and_a_few_words_in_a_text_column_warn_that_a_word_may_mark_missing_values():
    """Review r10 F-safety-text: 197 numbers and 'unknown' became a 198-level factor without a word."""
    from csvm_stats.preprocessing.dtypes import check_numbers_as_text

    numbers = [f"{v:.1f}" for v in np.linspace(1, 50, 197)]
    with pytest.warns(UserWarning, match=r"197 numbers and \['unknown'\].*factor with 198 levels.*pd.to_numeric"):
        check_numbers_as_text(pd.Series(numbers + ["unknown"] * 3), "dose")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_numbers_as_text(pd.Series(["1", "2", "3a", "unknown", "4+"]), "stage")  # a factor
        # words > 1 in 4 (each value twice: a value per row is an identifier, refused since review r11 F4)
        check_numbers_as_text(pd.Series((numbers[:30] + [f"w{i}" for i in range(10)]) * 2), "mixed")
    with pytest.raises(DataError, match="one level per number"):
        check_numbers_as_text(pd.Series(numbers + ["?"]), "dose")  # a missing-value code: refused as before


def test_thousands_separators_and_identifiers_are_not_silently_factors_with_a_level_per_row():
    """Review r11 F4: "2,257" numbers (395 levels on 400 rows) and a patient ID became 399/404 coefficients, silently."""
    from csvm_stats.preprocessing.dtypes import check_numbers_as_text
    from csvm_stats.preprocessing.wording import front_end

    grouped = pd.Series([f"{v:,}" for v in range(1000, 61000, 1000)])
    with pytest.raises(DataError, match=r"'s' holds text, but its values are numbers written with thousands separators "
                                        r"\(e\.g\. '1,000': 60 distinct numbers\).*pd\.to_numeric\(df\['s'\]\.str\.replace"
                                        r"\(',', ''\)\).*thousands=','"):
        check_numbers_as_text(grouped, "s")
    with front_end("cli"), pytest.raises(DataError, match=r"Write the numbers without thousands separators in the file"):
        check_numbers_as_text(grouped, "s")
    with pytest.raises(DataError, match="thousands separators"):  # plain numbers below 1000 beside them
        check_numbers_as_text(pd.Series(["257", "999", "1,257", "12,000", "3,500", "5"] * 3), "s")
    with pytest.raises(DataError, match=r"'pid' holds text with a different value in each of its 30 rows.*'- pid'"):
        check_numbers_as_text(pd.Series([f"P{i:03d}" for i in range(30)]), "pid")
    with pytest.raises(DataError, match=r"different value in each of its 30 rows.*pd\.to_numeric\(df\['code'\]\)"):
        check_numbers_as_text(pd.Series([str(10000 + i) for i in range(30)]), "code")  # numbers, one per row
    with pytest.warns(UserWarning, match=r"'site' holds text with 25 distinct values in 30 rows.*'- site'.*group its "
                                         r"values into fewer levels") as seen:
        check_numbers_as_text(pd.Series([f"S{i}" for i in range(25)] + ["S0"] * 5), "site")
    assert seen[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_numbers_as_text(pd.Series(["1,000", "2,000", "5,000"] * 10), "dose")  # few levels: a factor
        check_numbers_as_text(pd.Series([f"S{i}" for i in range(19)] * 2), "site")  # fewer than 20 levels
        check_numbers_as_text(pd.Series([f"F{i}" for i in range(30)] * 2), "family")  # two rows per level
