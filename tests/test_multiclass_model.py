"""The multiclass model: API, results, statements, guarantee mode (validity by simulation), summary."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sklearn.datasets import load_wine

from csvm_stats.inference.bounds import CappedTargetWarning, clopper_pearson_lower
from csvm_stats.exceptions import DataError
from csvm_stats.models.model import CSVM
from csvm_stats.multiclass.certification import argmax_rule, guarantee_shift, recall_bounds, sidak
from csvm_stats.multiclass.model import MulticlassCSVM
from csvm_stats.multiclass.results import MulticlassResults


@pytest.fixture(scope="module")
def wine() -> pd.DataFrame:
    X, y = load_wine(return_X_y=True, as_frame=True)
    return X.assign(cultivar=pd.Categorical(np.array(["barolo", "grignolino", "barbera"])[y],
                                            categories=["barolo", "grignolino", "barbera"]))


@pytest.fixture(scope="module")
def wine_fit(wine) -> MulticlassResults:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CappedTargetWarning)
        return CSVM.from_formula("cultivar ~ .", wine, recall_min={"grignolino": 0.9, "barbera": 0.8},
                                 bound="binomial").fit(random_state=0, solver="scip")


def test_csvm_builds_the_multiclass_model(wine):
    model = CSVM.from_formula("cultivar ~ .", wine, recall_min={"barbera": 0.8})
    assert isinstance(model, MulticlassCSVM)
    assert model.classes == ["barolo", "grignolino", "barbera"]  # the Categorical's order
    assert model.recall_min == {2: 0.8}
    plain = CSVM.from_formula("cultivar ~ .", wine)  # three classes, no requirement: still multiclass
    assert isinstance(plain, MulticlassCSVM) and plain.recall_min == {}
    binary = CSVM.from_formula("cultivar ~ .", wine[wine.cultivar != "barbera"].assign(
        cultivar=lambda d: d.cultivar.cat.remove_unused_categories()), tpr_min=0.9)
    assert type(binary) is CSVM


def test_bad_requests_are_named(wine):
    with pytest.raises(DataError, match="not one of the response's classes"):
        CSVM.from_formula("cultivar ~ .", wine, recall_min={"chianti": 0.9})
    with pytest.raises(DataError, match="recall_min"):
        CSVM.from_formula("cultivar ~ .", wine, tpr_min=0.9)
    with pytest.raises(DataError, match="strictly between 0 and 1"):
        CSVM.from_formula("cultivar ~ .", wine, recall_min={"barbera": 1.2})
    with pytest.raises(DataError, match="guarantee=True needs recall_min"):
        CSVM.from_formula("cultivar ~ .", wine).fit(guarantee=True)
    # review r9 F8: a rate name is a two-class rate; any other value is not a guarantee mode
    with pytest.raises(DataError, match="guarantee='tpr' names a two-class rate"):
        CSVM.from_formula("cultivar ~ .", wine).fit(guarantee="tpr")
    with pytest.raises(DataError, match="guarantee='yes' is not a guarantee mode.*guarantee=True"):
        CSVM.from_formula("cultivar ~ .", wine).fit(guarantee="yes")


def test_results_shapes_and_labels(wine, wine_fit):
    res = wine_fit
    assert res.solver.status.value == "optimal"
    scores = res.decision_function()
    assert list(scores.columns) == ["barolo", "grignolino", "barbera"]
    pred = res.predict()
    assert isinstance(pred.dtype, pd.CategoricalDtype) and pred.index.equals(wine.index)
    assert (pred.to_numpy() == np.asarray(res.classes, dtype=object)[scores.to_numpy().argmax(1)]).all()
    new = res.predict(wine.drop(columns="cultivar").iloc[:5])
    assert new.equals(pred.iloc[:5])
    assert res.params.shape == (wine.shape[1], 3)  # 13 features + intercept, one column per class
    # original-units coefficients reproduce the scores
    X = wine.drop(columns="cultivar").to_numpy()
    np.testing.assert_allclose(X @ res.params.iloc[:-1].to_numpy() + res.params.iloc[-1].to_numpy(), scores.to_numpy(), atol=1e-8)
    assert res.confusion.to_numpy().sum() == res.split.holdout.size


def test_rates_are_the_held_out_counts_with_exact_bounds(wine, wine_fit):
    res = wine_fit
    rates = res.rates
    y = res.model.y[res.split.holdout]
    pred = argmax_rule(res.decision_function().to_numpy()[res.split.holdout])
    for k, name in enumerate(res.classes):
        row = rates.loc[name]
        assert row["heldout_n"] == np.sum(y == k)
        assert row["heldout_correct"] == np.sum((y == k) & (pred == k))
        assert row["lower"] == pytest.approx(clopper_pearson_lower(row["heldout_correct"], row["heldout_n"], 0.05))
    # joint over the two constrained classes (Sidak); none for the unconstrained one
    assert rates.loc["grignolino", "joint_lower"] == pytest.approx(clopper_pearson_lower(
        rates.loc["grignolino", "heldout_correct"], rates.loc["grignolino", "heldout_n"], sidak(0.05, 2)))
    assert np.isnan(rates.loc["barolo", "joint_lower"])
    # the anchor counts are met by the argmax rule
    assert rates.loc[["grignolino", "barbera"], "met"].all()
    assert "jointly" in res.joint_statement and "'grignolino'" in res.joint_statement


def test_summary_renders_everywhere(wine_fit):
    summary = wine_fit.summary(timing=False)
    text = str(summary)
    for needle in ("Recall per class", "Held-out confusion matrix", "true barbera", "Joint:", "in-sample"):
        assert needle in text
    assert "Wall time" not in text
    assert "<table" in summary.as_html() and "\\begin{tabular}" in summary.as_latex()


def test_guarantee_mode_meets_the_order_statistic_counts(wine):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CappedTargetWarning)
        res = CSVM.from_formula("cultivar ~ .", wine, recall_min={"grignolino": 0.8},
                                fractions=(0.4, 0.2, 0.4)).fit(random_state=1, guarantee=True, solver="scip")
    assert res.shift is not None and res.rates.loc["grignolino", "method"] == "order statistic"
    k = res.model.coding.position("grignolino")
    n, rank = res.shift.n[k], res.shift.ranks[k]
    assert res.rates.loc["grignolino", "heldout_correct"] >= n - rank + 1
    # the other classes keep their Clopper-Pearson statements
    assert res.rates.loc["barolo", "method"] == "clopper-pearson"
    assert res.guarantee_cost.loc["grignolino", "correct_guarantee_offsets"] >= n - rank + 1


def test_guarantee_needs_enough_held_out_points(wine):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CappedTargetWarning)
        model = CSVM.from_formula("cultivar ~ .", wine, recall_min={"barbera": 0.99})
        with pytest.raises(DataError, match="needs at least"):
            model.fit(random_state=0, guarantee=True, solver="scip")


def test_two_classes_with_recall_min(wine):
    two = wine[wine.cultivar != "barbera"].assign(cultivar=lambda d: d.cultivar.cat.remove_unused_categories())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CappedTargetWarning)
        res = CSVM.from_formula("cultivar ~ .", two, recall_min={"grignolino": 0.9}).fit(random_state=0, solver="scip")
    assert list(res.decision_function().columns) == ["barolo", "grignolino"]
    assert bool(res.rates.loc["grignolino", "met"])


def test_recall_bounds_joint_is_sidak():
    bounds = recall_bounds([20, 30], [18, 29], 0.1, 2)
    assert bounds[0].lower == pytest.approx(clopper_pearson_lower(18, 20, 0.1))
    each = 1 - np.sqrt(0.9)  # two independent statements at this level hold together at 90%
    assert sidak(0.1, 2) == pytest.approx(each) and each > 0.05  # more room than Bonferroni
    assert bounds[1].joint_lower == pytest.approx(clopper_pearson_lower(29, 30, each))


def test_guarantee_shift_is_valid_jointly_by_simulation():
    """Three Gaussian classes on a line, fixed scores; the shifted rule fails its targets in at most alpha of runs."""
    means = np.array([-3.0, 0.0, 3.0])
    W, b = means, -means**2 / 2  # scores w_k x + b_k: the LDA rule for unit variance (recalls 0.93, 0.87, 0.93)
    targets, alpha, n_per = {0: 0.95, 2: 0.8}, 0.1, 100
    grid = np.linspace(-8, 8, 16001)

    def true_recall(k, offsets):
        scores = grid[:, None] * W + offsets
        won = argmax_rule(scores) == k
        density = norm.pdf(grid, means[k])
        return float(np.sum(density[won]) * (grid[1] - grid[0]))

    rng = np.random.default_rng(11)
    failures = refusals = 0
    reps = 400
    for _ in range(reps):
        y = np.repeat(np.arange(3), n_per)
        x = rng.normal(means[y], 1.0)
        try:
            shift = guarantee_shift(x[:, None] * W + b, y, targets, alpha, ["a", "b", "c"])
        except DataError:  # no claim is made (a point of class 0 or 2 on the wrong side of the other)
            refusals += 1
            continue
        offsets = shift.offsets(b)
        failures += any(true_recall(k, offsets) < p for k, p in targets.items())
    assert refusals < reps / 10
    # at most alpha in expectation; 400 runs: allow three binomial standard deviations
    assert failures / reps <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / reps)


def test_gaussian_recalls_match_monte_carlo():
    from csvm_stats.multiclass.simulation import GaussianMulticlass

    truth = GaussianMulticlass(np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 1.8]]))
    W, b = np.array([[-1.0, -0.5], [1.2, -0.4], [0.1, 1.1]]), np.array([0.3, -0.6, 0.0])
    X, y = truth.sample(100_000, np.random.default_rng(0))
    empirical = np.bincount(y[argmax_rule(X @ W.T + b) == y], minlength=3) / 100_000
    np.testing.assert_allclose(truth.true_recalls(W, b), empirical, atol=0.006)  # > 3 Monte Carlo SDs


def test_a_numeric_response_with_many_values_is_refused_not_fitted_as_that_many_classes():
    """Review r7 F11: cholesterol ~ age + ... was fitted as a 144-class CSVM (and overran its time limit)."""
    from csvm_stats.preprocessing.wording import front_end

    rng = np.random.default_rng(0)
    d = pd.DataFrame({"x": rng.normal(size=120), "chol": rng.integers(150, 350, 120).astype(float)})
    with pytest.raises(DataError, match=r"the response 'chol' holds \d+ distinct numbers .* classes \(pd.cut\); if "
                                        r"the numbers are class codes, make them text"):
        CSVM.from_formula("chol ~ x", d)
    with front_end("cli"), pytest.raises(DataError, match=r"group the values into classes; if the numbers"):
        CSVM.from_formula("chol ~ x", d)
    # 20 numeric classes, consecutive integer codes (LabelEncoder's, review r9 F3), or many text classes are classes
    assert isinstance(CSVM.from_formula("k ~ x", d.assign(k=np.arange(120) % 20)), MulticlassCSVM)
    assert isinstance(CSVM.from_formula("k ~ x", d.assign(k=np.arange(120) % 30 + 1)), MulticlassCSVM)
    assert isinstance(CSVM.from_formula("k ~ x", d.assign(k=d["chol"].astype(int).astype(str))), MulticlassCSVM)
