"""Probabilities for several classes: one-vs-rest Venn-Abers on the class margins, everywhere the model goes."""

from __future__ import annotations

import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
from scipy.special import softmax

from csvm_stats.exceptions import DataError
from csvm_stats.inference.bounds import CappedTargetWarning
from csvm_stats.interfaces import r_api
from csvm_stats.interfaces.cli import EXIT_OK, main
from csvm_stats.interfaces.persistence import ModelFileError, load_model, save_model
from csvm_stats.models.model import CSVM
from csvm_stats.multiclass.certification import rival_margins
from csvm_stats.multiclass.r_entry import fit_multiclass
from csvm_stats.multiclass.simulation import GaussianMulticlass
from csvm_stats.probability.venn_abers import VennAbers

MEANS = np.array([[0.0, 0.0], [3.0, 0.0], [1.5, 2.6]])


def _gaussian(n_per: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    return GaussianMulticlass(MEANS).sample(n_per, np.random.default_rng(seed))


@pytest.fixture(scope="module")
def wine() -> pd.DataFrame:
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True, as_frame=True)
    return X.assign(cultivar=pd.Categorical(np.array(["barolo", "grignolino", "barbera"])[y],
                                            categories=["barolo", "grignolino", "barbera"]))


def _posterior(X: np.ndarray) -> np.ndarray:
    """Bayes posterior of the equal-prior, unit-covariance Gaussian classes."""
    return softmax(X @ MEANS.T - 0.5 * np.sum(MEANS**2, axis=1), axis=1)


@pytest.fixture(scope="module")
def large_fit():
    """H = 25% of 600 rows: 50 of each class, so the held-out (inductive) route is taken."""
    X, y = _gaussian(200, 0)
    return X, y, CSVM(y, X, recall_min={1: 0.9}, bound="binomial").fit(random_state=0, solver="scip")


def test_rival_margins_are_each_score_minus_its_best_rival():
    scores = np.array([[1.0, 3.0, 2.0], [0.0, 0.0, -1.0]])
    np.testing.assert_allclose(rival_margins(scores), [[-2.0, 1.0, -1.0], [0.0, 0.0, -1.0]])


def test_held_out_route_is_venn_abers_on_the_held_out_margins(large_fit):
    X, y, res = large_fit
    cal = res.calibration
    assert cal.method == "held-out" and cal.folds == 0 and cal.n == res.split.holdout.size
    h = res.split.holdout
    m = rival_margins(res.decision_function().to_numpy()[h])
    for k, va in enumerate(cal.predictors):
        expected = VennAbers.fit(m[:, k], y[h] == k)
        np.testing.assert_array_equal(va.scores, expected.scores)
        np.testing.assert_allclose(va.p0, expected.p0) and np.testing.assert_allclose(va.p1, expected.p1)
    new, _ = _gaussian(300, 5)
    p = res.predict_proba(new)
    assert list(p.columns) == [0, 1, 2]
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    table = res.predict_proba(new, interval=True)
    assert np.all(table["p0"].to_numpy() <= table["p1"].to_numpy())
    pd.testing.assert_frame_equal(table["p"], p)
    # calibrated: close to the Bayes posterior (the CSVM's scores are linear, as the posterior's log-odds)
    assert np.mean(np.abs(p.to_numpy() - _posterior(new))) < 0.1


def test_guarantee_shift_does_not_enter_the_calibration(large_fit):
    """The calibrated scores are the CSVM's own (H-free); the guaranteed rule is another use of the same fit."""
    X, y, res = large_fit
    guaranteed = CSVM(y, X, recall_min={1: 0.9}, bound="binomial").fit(random_state=0, solver="scip", guarantee=True)
    assert guaranteed.shift is not None
    new, _ = _gaussian(50, 6)
    pd.testing.assert_frame_equal(guaranteed.predict_proba(new), res.predict_proba(new), atol=1e-9)
    agree = guaranteed.probability_agreement
    expected = np.mean(guaranteed.predict_proba().to_numpy().argmax(1) == guaranteed.decision_function().to_numpy().argmax(1))
    assert agree == pytest.approx(expected)
    assert "agree on" in str(guaranteed.summary(timing=False))


def test_small_held_out_sample_cross_fits(wine):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CappedTargetWarning)
        res = CSVM.from_formula("cultivar ~ .", wine, recall_min={"grignolino": 0.9}).fit(random_state=0, solver="scip")
    assert "first predict_proba" in str(res.summary(timing=False))
    p = res.predict_proba()
    assert res.calibration.method == "cross-fitted" and res.calibration.folds == 5
    assert res.calibration.n == len(wine)  # every row is scored by a model that never saw it
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert (p.to_numpy().argmax(1) == wine["cultivar"].cat.codes.to_numpy()).mean() > 0.9


def test_too_few_points_of_a_class_is_an_error():
    X, y = _gaussian(30, 1)
    keep = np.r_[np.flatnonzero(y != 2), np.flatnonzero(y == 2)[:1]]
    res = CSVM(y[keep], X[keep]).fit(random_state=0, solver="scip")
    with pytest.raises(DataError, match="at least 2 training and anchor points of every class"):
        res.predict_proba()


def test_saved_model_gives_the_same_probabilities(tmp_path, large_fit):
    X, y, res = large_fit
    path = save_model(res, tmp_path / "m.csvm")
    loaded = load_model(path)
    new, _ = _gaussian(20, 7)
    pd.testing.assert_frame_equal(loaded.predict_proba(new, interval=True), res.predict_proba(new, interval=True),
                                  check_exact=False, atol=1e-12)
    assert "one-vs-rest Venn-Abers intervals" in loaded.summary_text
    # an extra class's calibration array is refused, not ignored
    tampered = tmp_path / "t.csvm"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tampered, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        dst.writestr("arrays/va_p0_7.npy", src.read("arrays/va_p0_0.npy"))
    with pytest.raises(ModelFileError, match="va_p0_7"):
        load_model(tampered)


def test_cli_predict_proba_for_several_classes(tmp_path, large_fit):
    X, y, res = large_fit
    path = save_model(res, tmp_path / "m.csvm")
    new, _ = _gaussian(4, 8)
    data = tmp_path / "new.csv"
    pd.DataFrame(new, columns=res.model.exog_names).to_csv(data, index=False)
    out = tmp_path / "p.csv"
    assert main(["predict", str(path), str(data), "--proba", "-o", str(out)]) == EXIT_OK
    table = pd.read_csv(out)
    assert [c for c in table.columns if c.startswith("p_")] == ["p_0", "p_1", "p_2"]
    np.testing.assert_allclose(table[["p_0", "p_1", "p_2"]].sum(axis=1), 1.0)
    np.testing.assert_allclose(table[["p_0", "p_1", "p_2"]].to_numpy(), res.predict_proba(new).to_numpy(), atol=1e-9)
    assert {"p0_1", "p1_1"} <= set(table.columns)


def test_r_entry_warning_kinds_probabilities_and_saved_model_predict(large_fit):
    X, y, _ = large_fit
    labels = np.array(["a", "b", "c"])[y]
    fitted = fit_multiclass(X, ["x1", "x2"], labels, ["b"], [0.99], {"random_state": 0, "solver": "scip"})
    assert list(fitted["warning_kinds"]) == ["CappedTargetWarning"] and len(fitted["warnings"]) == 1
    exported = r_api.export(fitted["results"])
    assert exported["model_file"].dtype == np.uint8 and list(exported["anchor"]["rate"]) == ["b"]
    live = r_api.predict(fitted["results"], X[:6], ["class", "decision", "prob"])
    saved = r_api.predict(r_api.load(exported["model_file"]), X[:6], ["class", "decision", "prob"])
    assert live["prob"].shape == (6, 3) and list(saved["class"]) == list(live["class"])
    np.testing.assert_allclose(saved["decision"], live["decision"], atol=1e-10)
    np.testing.assert_allclose(saved["prob"], live["prob"], atol=1e-10)
    assert list(saved["warning_kinds"]) == []


def test_point_probabilities_are_the_softmax_recalibration_fitted_on_every_row(large_fit):
    """Held-out route, few columns: the softmax of the scores is fitted on all rows; the posterior error is small
    (the previous normalised one-vs-rest merge was 11x-14x multinomial logistic regression on such data)."""
    from csvm_stats.multiclass.probability import SoftmaxRecalibration, softmax_rows

    X, y, res = large_fit
    cal = res.calibration
    rows = softmax_rows(res)
    assert rows.size == y.size  # rank 2 <= 10% of |I| = 300
    expected = SoftmaxRecalibration.fit(res.csvm_scores()[rows], y[rows], 3)
    np.testing.assert_allclose(cal.softmax.weights, expected.weights)
    new, _ = _gaussian(2000, 7)
    p = res.predict_proba(new).to_numpy()
    np.testing.assert_allclose(p, expected.predict(res.csvm_scores(new)), rtol=1e-10)
    assert np.mean((p - _posterior(new)) ** 2) < 0.003


def test_softmax_recalibration_of_constant_scores_is_the_smoothed_base_rate():
    from csvm_stats.multiclass.probability import SoftmaxRecalibration

    labels = np.r_[np.zeros(6, int), np.ones(3, int), np.full(1, 2)]
    soft = SoftmaxRecalibration.fit(np.ones((10, 3)), labels, 3)
    np.testing.assert_allclose(soft.predict(np.zeros((2, 3))), [[7 / 13, 4 / 13, 2 / 13]] * 2)
