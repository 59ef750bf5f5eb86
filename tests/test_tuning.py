"""Bookkeeping of the grid search and nested cross-validation driver."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification

from csvm_stats.exceptions import DataError
from csvm_stats.optimization.solvers.base import SolverOptions
from csvm_stats.models.tuning import (
    CSVMSpec,
    FoldPreprocessor,
    Grid,
    Rates,
    RateRequirement,
    nested_cv,
)

SMALL_GRID = Grid(C=(0.5, 4.0), gamma=(0.1, 0.5))
OPTIONS = SolverOptions(time_limit=20, threads=1)
TNR_UP = CSVMSpec(RateRequirement("tnr", above_svm=0.025))
TIMES = ["seconds", "fold_cpu_seconds"]  # measurements, not results


@pytest.fixture(scope="module")
def data() -> tuple[pd.DataFrame, np.ndarray]:
    X, y = make_classification(
        n_samples=90, n_features=4, n_informative=3, n_redundant=0, flip_y=0.05,
        weights=[0.4], random_state=3,
    )
    frame = pd.DataFrame(X * [1.0, 10.0, 100.0, 0.1] + [0.0, 5.0, -50.0, 2.0], columns=list("abcd"))
    return frame, np.where(y == 1, 1, -1)


def run(data, **kwargs):
    X, y = data
    settings = dict(grid=SMALL_GRID, outer_folds=3, inner_folds=3, options=OPTIONS, seed=7)
    settings.update(kwargs)
    return nested_cv(X, y, **settings)


# ---------------------------------------------------------------- rates, criteria, grid, requirements


def test_rates_and_criteria():
    y = np.array([1, 1, 1, 1, -1, -1])
    pred = np.array([1, 1, 1, -1, -1, 1])
    rates = Rates.from_predictions(y, pred)
    assert (rates.tpr, rates.tnr, rates.acc) == (0.75, 0.5, 4 / 6)
    assert rates.score("gmean") == pytest.approx(math.sqrt(0.375))
    assert rates.score("youden") == pytest.approx(0.25)
    with pytest.raises(DataError, match="criterion"):
        rates.score("auc")


def test_paper_grid_is_121_pairs_with_C_outer():
    pairs = Grid.paper().pairs()
    assert len(pairs) == 121 and pairs[0] == (2**-5, 2**-5) and pairs[1] == (2**-5, 2**-4)
    assert pairs[-1] == (32.0, 32.0)


def test_requirement_targets_and_labels():
    svm = Rates(tpr=0.99, tnr=0.83, acc=0.9)
    improve = RateRequirement("tpr", above_svm=0.025)
    assert improve.target(svm) == 1.0  # capped, as min(1, TPR0 + 0.025)
    assert RateRequirement("tnr", above_svm=0.025).target(svm) == pytest.approx(0.855)
    assert RateRequirement("tnr", minimum=0.65).target(svm) == 0.65
    assert improve.label == "TPR >= TPR0 + 0.025"
    lower_cap = RateRequirement("tpr", above_svm=0.025, at_most=0.9)
    assert lower_cap.target(svm) == 0.9 and lower_cap.label == "TPR >= min(0.9, TPR0 + 0.025)"
    with pytest.raises(DataError, match="exactly one"):
        RateRequirement("tnr", minimum=0.6, above_svm=0.01)
    with pytest.raises(DataError, match="'tpr' or 'tnr'"):
        RateRequirement("acc", minimum=0.6)


# ---------------------------------------------------------------- preprocessing inside folds


def test_preprocessor_uses_training_statistics_only():
    train = pd.DataFrame({
        "x": [1.0, 2.0, np.nan, 5.0],
        "c": pd.Categorical(["u", "v", "v", None], categories=["u", "v", "w"]),
    })
    test = pd.DataFrame({"x": [100.0, np.nan], "c": pd.Categorical(["w", None], categories=["u", "v", "w"])})
    prep = FoldPreprocessor.fit(train)
    assert prep.feature_names == ["x", "c[v]", "c[w]"]
    assert prep.fill == {"x": 2.0, "c": "v"}
    fitted = prep.transform(train)
    np.testing.assert_allclose(fitted[:, :2].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(fitted[:, :2].std(axis=0), 1.0)
    assert np.all(fitted[:, 2] == 0.0)  # level "w" absent from training: constant, scale 1
    x_mean, x_sd = np.mean([1, 2, 2, 5]), np.std([1, 2, 2, 5])
    out = prep.transform(test)
    assert out[0, 0] == pytest.approx((100.0 - x_mean) / x_sd)
    assert out[1, 0] == pytest.approx((2.0 - x_mean) / x_sd)  # imputed with the training median
    assert out[0, 2] == 1.0  # dummy for "w", unscaled as its training SD is 0


def test_preprocessor_refuses_text_columns():
    with pytest.raises(DataError, match="Categorical"):
        FoldPreprocessor.fit(pd.DataFrame({"s": ["a", "b"]}))


def test_driver_fits_preprocessing_on_training_parts_only(data, monkeypatch):
    seen: list[set[int]] = []
    original = FoldPreprocessor.fit.__func__

    def spy(cls, X):
        seen.append(set(X.index))
        return original(cls, X)

    monkeypatch.setattr(FoldPreprocessor, "fit", classmethod(spy))
    result = run(data, n_jobs=1)
    tests = [set(test) for _, test in result.splits]
    trains = [set(train) for train, _ in result.splits]
    assert len(seen) == 3 * (3 + 1)  # per outer fold: 3 inner fits and 1 outer fit
    for rows in seen:
        assert any(rows <= train and not rows & test for train, test in zip(trains, tests))
    assert all(train in seen for train in trains)


# ---------------------------------------------------------------- folds, seeds, workers, protocols


def test_outer_folds_partition_the_data(data):
    result = run(data)
    tests = [test for _, test in result.splits]
    assert sorted(np.concatenate(tests).tolist()) == list(range(len(data[1])))
    for train, test in result.splits:
        assert not set(train) & set(test)
    assert result.folds["fold"].tolist() == [0, 1, 2]
    assert result.folds["model"].unique().tolist() == ["SVM (accuracy)"]


def test_seed_is_honoured(data):
    first, again, other = run(data), run(data), run(data, seed=8)
    pd.testing.assert_frame_equal(first.folds.drop(columns=TIMES), again.folds.drop(columns=TIMES))
    assert any(not np.array_equal(a[1], b[1]) for a, b in zip(first.splits, other.splits))


def test_one_and_two_workers_agree_fast_protocol(data):
    specs = [TNR_UP, CSVMSpec(RateRequirement("tpr", minimum=0.8), criterion="gmean", bound="binomial")]
    one = run(data, specs=specs, n_jobs=1)
    two = run(data, specs=specs, n_jobs=2, backend="loky")
    columns = ["fold", "model", "C", "gamma", "tpr", "tnr", "acc", "p0", "required", "status"]
    pd.testing.assert_frame_equal(one.folds[columns], two.folds[columns])
    assert set(one.folds["status"]) == {"ok", "optimal"}
    csvm = one.folds[one.folds["model"] == TNR_UP.name]
    assert (csvm["miqp_solves"] == 1).all()
    assert (csvm["p0"] == np.minimum(1.0, csvm["rate0"] + 0.025)).all()
    assert (csvm["anchor_rate"] >= csvm["required"] / csvm["anchor_n"] - 1e-12).all()
    assert set(one.folds["model"]) == {"SVM (accuracy)", "SVM (gmean)", TNR_UP.name, specs[1].name}
    summary = one.summary()
    assert summary.loc[TNR_UP.name, "miqp_solves"] == 3 and summary.loc[TNR_UP.name, "folds_ok"] == 3
    assert one.cpu_seconds > 0 and one.folds.groupby("fold")["fold_cpu_seconds"].nunique().eq(1).all()


def test_paper_protocol_solves_csvm_in_inner_loop(data):
    grid = Grid(C=(1.0,), gamma=(0.1, 0.5))
    result = run(data, specs=[TNR_UP], protocol="paper", grid=grid, n_jobs=2, backend="threading")
    csvm = result.folds[result.folds["model"] == TNR_UP.name]
    assert (csvm["miqp_solves"] == 2 * 3 + 1).all()
    assert result.miqp_solves == 3 * 7 and result.protocol == "paper"


def test_held_out_guarantee_resets_intercept(data):
    spec = CSVMSpec(RateRequirement("tpr", minimum=0.6), guarantee=True)
    result = run(data, specs=[spec])
    rows = result.folds[result.folds["model"] == spec.name]
    assert rows["message"].str.startswith("intercept reset on").all()
    assert rows["tpr"].notna().all()


def test_bad_inputs_are_named(data):
    X, y = data
    with pytest.raises(DataError, match="-1/\\+1"):
        nested_cv(X, (y > 0).astype(int))
    with pytest.raises(DataError, match="fewer folds"):
        nested_cv(X.iloc[:12], y[:12], outer_folds=10, inner_folds=10)
    with pytest.raises(DataError, match="protocol"):
        nested_cv(X, y, protocol="slow")


def test_uncertifiable_guarantee_is_recorded_not_dropped(data):
    spec = CSVMSpec(RateRequirement("tpr", minimum=0.99), guarantee=True)
    rows = run(data, specs=[spec]).folds.query("model == @spec.name")
    assert len(rows) == 3 and (rows["status"] == "failed").all() and rows["tpr"].isna().all()
    assert rows["message"].str.contains("held-out positives").all()


def test_dask_backend_gives_the_same_folds(data):
    distributed = pytest.importorskip("distributed")
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None):
        via_dask = run(data, specs=[TNR_UP], n_jobs=2, backend="dask")
    alone = run(data, specs=[TNR_UP])
    pd.testing.assert_frame_equal(alone.folds.drop(columns=TIMES), via_dask.folds.drop(columns=TIMES))
