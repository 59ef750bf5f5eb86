"""One results API for every model form (csvm_stats.models.results_base): binary, multiclass, sparse,
the stability-selection results, and the refusals that say why a combination is not offered."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from csvm_stats.exceptions import DataError
from csvm_stats.models.model import CSVM
from csvm_stats.models.results_base import RATE_COLUMNS, FitResults
from csvm_stats.sparse.stability import ERROR_BOUND_ASSUMPTIONS, stability_selection

EXACT = {"solver": "scip", "time_limit": 60, "mip_gap": 1e-6, "threads": 1}


def _quiet(action):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return action()


def _data(n: int = 160, p: int = 6, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).round(3)
    frame = pd.DataFrame(X, columns=[f"g{k + 1}" for k in range(p)], index=[f"r{i}" for i in range(n)])
    frame["y"] = np.where(X[:, 0] + X[:, 1] + 0.5 * rng.normal(size=n) > 0, 1, 0)
    frame["kind"] = np.where(X[:, 0] > 0.5, "a", np.where(X[:, 1] > 0, "b", "c"))
    return frame


@pytest.fixture(scope="module")
def fits() -> dict[str, FitResults]:
    d = _data()
    return {
        "binary": _quiet(lambda: CSVM.from_formula("y ~ g1 + g2 + g3", d, tpr_min=0.8, bound="none").fit(
            random_state=1, **EXACT)),
        "multiclass": _quiet(lambda: CSVM.from_formula("kind ~ g1 + g2 + g3", d, recall_min={"a": 0.7},
                                                       bound="none").fit(random_state=1, **EXACT)),
        "sparse": _quiet(lambda: CSVM.from_formula("y ~ g1 + g2 + g3 + g4 + g5 + g6", d, tpr_min=0.8, bound="none",
                                                   max_features=2).fit(random_state=1, **EXACT)),
        "gene_list": _quiet(lambda: CSVM.from_formula("kind ~ g1 + g2 + g3 + g4 + g5 + g6", d, recall_min={"a": 0.7},
                                                      bound="none", max_features=2).fit(random_state=1, **EXACT)),
        "binary_recall": _quiet(lambda: CSVM.from_formula("y ~ g1 + g2", d, recall_min={1: 0.8}, bound="none").fit(
            random_state=1, **EXACT)),
    }


@pytest.mark.parametrize("form", ["binary", "multiclass", "sparse", "gene_list", "binary_recall"])
def test_every_form_shares_the_names(fits, form):
    res = fits[form]
    assert isinstance(res, FitResults)
    assert list(res.rates.columns) == list(RATE_COLUMNS)
    for sample in ("train", "anchor", "holdout", "training", "held-out"):
        matrix = res.confusion_matrix(sample)
        assert list(matrix.index) == list(matrix.columns) == list(res.classes)
        assert (matrix.index.name, matrix.columns.name) == ("true", "predicted")
    with pytest.raises(ValueError, match="sample must be one of"):
        res.confusion_matrix("test")
    roles = res.sample_roles
    assert roles.index.equals(res.model.exog.index)
    assert roles.value_counts().to_dict() == {"training": res.split.train.size, "anchor": res.split.anchor.size,
                                              "held-out": res.split.holdout.size}
    assert (roles.iloc[res.split.holdout] == "held-out").all()
    # the held-out confusion matrix agrees with the rate table
    held = res.confusion_matrix("holdout").to_numpy()
    rates = res.rates
    correct = rates.loc["acc", "heldout_correct"] if "acc" in rates.index else rates["heldout_correct"].sum()
    assert held.sum() == res.split.holdout.size and np.trace(held) == correct


def test_requirements_are_keyed_by_class_label(fits):
    assert list(fits["binary"].requirements.index) == [1]  # the positive label, not 'tpr'
    assert fits["binary"].min_counts == {1: fits["binary"].engine_fit.min_counts["tpr"]}
    assert list(fits["multiclass"].requirements.index) == ["a"]  # the label, not its position
    assert fits["multiclass"].min_counts == {"a": fits["multiclass"].engine_fit.min_counts[0]}
    assert list(fits["binary_recall"].requirements.index) == [1]


def test_labels_keep_their_dtype(fits):
    res = fits["binary_recall"]  # a 0/1 response with recall_min={1: 0.8}
    assert list(res.rates.index) == [0, 1] and list(res.statements.index) == [0, 1]
    assert res.rates.loc[1, "target"] == 0.8
    assert list(res.confusion_matrix().index) == [0, 1]
    assert res.predict().isin([0, 1]).all()


def test_selection_attributes_wherever_selection_happened(fits):
    for form in ("binary", "multiclass"):
        res = fits[form]
        assert res.selected_features is None and res.n_selected is None and res.route is None and res.exact is None
    for form in ("sparse", "gene_list"):
        res = fits[form]
        assert res.route == "cardinality" and res.exact is True and res.n_selected == len(res.selected_features) <= 2
        text = res.summary(timing=False).as_text()
        assert f"Selected features: {res.n_selected} of 6" in text
        assert "Every column was considered in the selection (no screening)" in " ".join(text.split())
        for name in res.model.exog_names:
            shown = any(line.startswith(f"{name} ") for line in text.splitlines())
            assert shown == (name in res.selected_features.index), name  # no all-zero coefficient row


def test_multiclass_summary_has_no_all_zero_rows():
    """A gene list's summary shows the selected features only; a plain fit never shows all-zero rows."""
    d = _data(p=40)
    res = _quiet(lambda: CSVM.from_formula("kind ~ " + " + ".join(f"g{k}" for k in range(1, 41)), d,
                                           recall_min={"a": 0.7}, bound="none", max_features=3).fit(
        random_state=1, **EXACT))
    text = res.summary(timing=False).as_text()
    rows = [line.split()[0] for line in text.splitlines() if line.startswith("g")]
    assert sorted(rows) == sorted(res.selected_features.index)
    assert res.selected_features.columns.tolist() == ["a", "b", "c", "coef_std_norm"]


def test_sample_roles_in_the_model_file(fits, tmp_path):
    from csvm_stats.interfaces.persistence import load_model, save_model

    res = fits["binary"]
    loaded = load_model(save_model(res, tmp_path / "m.csvm"))
    assert loaded.sample_roles.tolist() == res.sample_roles.tolist()
    assert loaded.sample_roles.index.tolist() == [str(i) for i in res.sample_roles.index]


def test_refusals_say_why():
    d = _data()
    with pytest.raises(DataError, match="penalty='l1' is not offered with several classes or recall_min: the L1-norm"):
        CSVM.from_formula("kind ~ g1 + g2", d, recall_min={"a": 0.8}, penalty="l1")
    with pytest.raises(DataError, match="cannot be combined with per-class recalls"):
        CSVM.from_formula("kind ~ g1 + g2", d, recall_min={"a": 0.8}, tpr_min=0.8)
    with pytest.raises(DataError, match="not offered with penalty='l1', whose C already sets"):
        CSVM.from_formula("y ~ g1 + g2", d, tpr_min=0.8, penalty="l1", max_features=1)


# ---------------------------------------------------------------------- stability selection
@pytest.fixture(scope="module")
def stable():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(160, 40))
    y = np.where(X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=160) > 0, 1, -1)
    return _quiet(lambda: stability_selection(CSVM(y, X, tpr_min=0.8, bound="binomial"), n_pairs=6,
                                              random_state=3, time_limit=60, n_jobs=1))


def test_stability_selection_results_object(stable):
    assert stable.selected_names == stable.selected == ["x1", "x2"] and stable.n_selected == 2
    assert stable.frequencies is stable.table
    text = " ".join(stable.summary().as_text().split())
    assert "Stable features (frequency >= 0.6)" in text and "x1" in text
    assert f"= {stable.error_bound:.3g}" in text and "exchangeable" in text and "Toeplitz" in text
    assert stable.assumptions == ERROR_BOUND_ASSUMPTIONS
    assert "exchangeable" in repr(stable) and "error_bound" in repr(stable)


def test_stability_refit_keeps_the_split(stable):
    refit = _quiet(lambda: stable.refit(solver="scip", threads=1))
    assert refit.model.exog_names == ["x1", "x2"]
    for name in ("train", "anchor", "holdout"):
        np.testing.assert_array_equal(getattr(refit.split, name), getattr(stable.fit.split, name))
    assert refit.model.targets == stable.fit.model.targets and refit.random_state == stable.fit.random_state
    assert refit.rates.loc["tpr", "method"] == "clopper-pearson"


def test_a_gene_list_fit_saves_its_selection(fits, tmp_path):
    from csvm_stats.interfaces.persistence import load_model, save_model

    res = fits["gene_list"]
    loaded = load_model(save_model(res, tmp_path / "genes.csvm"))
    assert loaded.report["selection"]["route"] == "cardinality"
    assert set(loaded.report["selection"]["features"]) == set(res.selected_features.index)
    assert loaded.report["sample_roles"]["roles"] == res.sample_roles.tolist()


@pytest.mark.parametrize("form", ["binary", "multiclass"])
def test_a_loaded_model_answers_the_fits_names(fits, form, tmp_path):
    """Review r7 F7: code written against the fit (predict_interval, summary(), params) works on a loaded model."""
    from csvm_stats.interfaces.persistence import load_model, save_model

    res, d = fits[form], _data()
    saved = load_model(save_model(res, tmp_path / "model.csvm"))
    new = d.head(5)
    pd.testing.assert_frame_equal(saved.predict_interval(new), res.predict_interval(new), check_names=False)
    assert saved.summary() == str(res.summary())
    params = saved.params
    expected = res.params
    if isinstance(expected, pd.DataFrame):
        expected = expected.set_axis([str(c) for c in expected.columns], axis=1)
        pd.testing.assert_frame_equal(params, expected, check_names=False)
    else:
        pd.testing.assert_series_equal(params, expected, check_names=False)
