"""compare_routes: the routes on one split, the guarantee derived from the same solve, the table and the plot."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression

from csvm_stats import CSVM
from csvm_stats.exceptions import DataError
from csvm_stats.models.routes import compare_route_arrays, compare_routes, with_guarantee


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    frame = X.iloc[:, :5].copy()
    frame.columns = [f"x{k}" for k in range(5)]
    frame["y"] = np.where(y == 1, "benign", "malignant")
    return frame


def test_guarantee_from_the_same_solve_equals_fit_guarantee(data):
    model = CSVM.from_formula("y ~ .", data, tnr_min=0.9, bound="binomial")
    exact = model.fit(random_state=2)
    derived = with_guarantee(exact)
    direct = model.fit(random_state=2, guarantee="tnr")
    assert np.allclose(exact.engine_fit.coef, direct.engine_fit.coef, atol=1e-6)
    assert derived.umbrella.rank == direct.umbrella.rank
    assert derived.intercept == pytest.approx(direct.intercept, abs=1e-6)


def test_compare_routes_table_statements_and_plot(data):
    routes = ("csvm", "csvm-guarantee", "np-logistic")
    comparison = compare_routes("y ~ .", data, {"tnr_min": 0.9}, routes, random_state=0,
                                csvm_options={"bound": "binomial"})
    table = comparison.table
    assert list(table.index) == list(routes)
    assert table.loc["np-logistic", "requirement guaranteed"]
    assert not table.loc["csvm", "requirement guaranteed"]
    assert table.loc["csvm-guarantee", "TNR stated"] == ">= 0.9 (guaranteed)"
    H = comparison.split.holdout
    for res in comparison.results.values():
        assert np.array_equal(res.split.holdout, H)
    text = str(comparison)
    assert "np-logistic" in text and "order-statistic" in text
    display = comparison.plot()
    assert set(display.curves) == set(routes)


def test_custom_estimator_multiclass_and_bad_requirement():
    rng = np.random.default_rng(1)
    y = np.repeat(np.array(["a", "b", "c"]), 200)
    X = rng.normal(size=(600, 2)) + np.c_[(y == "b") * 2.0, (y == "c") * 2.0]
    comparison = compare_route_arrays(y, X, {"recall_min": {"a": 0.9}}, {"np-lr": LogisticRegression()},
                                      random_state=0)
    assert comparison.table.loc["np-lr", "requirement guaranteed"]
    with pytest.raises(DataError, match="the ROC plot is for two classes"):
        comparison.plot()
    with pytest.raises(DataError, match="only the CSVM answers"):
        compare_route_arrays(y, X, {"acc_min": 0.9})
    with pytest.raises(DataError, match="unknown route"):
        compare_route_arrays(y, X, {"recall_min": {"a": 0.9}}, ["np-forest"])
