"""Issue 23's bad inputs for the probabilities of several classes: a clear error or a documented value, never silent.

(The two-class cases, on both routes, are in tests/test_probabilities.py and tests/test_score_model.py.)
"""

from __future__ import annotations

import numpy as np
import pytest

from csvm_stats.exceptions import DataError
from csvm_stats.models.model import CSVM
from csvm_stats.multiclass.probability import planned_route
from csvm_stats.multiclass.simulation import GaussianMulticlass

MEANS = np.array([[0.0, 0.0], [3.0, 0.0], [1.5, 2.6]])


def _gaussian(n_per: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    return GaussianMulticlass(MEANS).sample(n_per, np.random.default_rng(seed))


@pytest.fixture(scope="module")
def small_fit():
    """90 rows, default split: H has 22 points (< 50), so the cross-fitted route."""
    X, y = _gaussian(30, 2)
    return X, y, CSVM(y, X).fit(random_state=0, solver="scip", time_limit=30)


def test_missing_values_in_new_data_are_refused(small_fit):
    X, _, res = small_fit
    new = X[:3].copy()
    new[1, 0] = np.nan
    with pytest.raises(DataError, match="missing"):
        res.predict_proba(new)
    with pytest.raises(DataError, match="missing"):
        res.predict_proba(new, interval=True)


@pytest.mark.parametrize("case", ["a class absent", "under 10 points"])
def test_held_out_sample_without_a_class_or_too_small_is_cross_fitted(case):
    X, y = _gaussian(40, 3)
    rows = np.arange(y.size)
    per_class = 30 if case == "a class absent" else 2
    holdout = np.r_[rows[y == 0][:per_class], rows[y == 1][:per_class]]
    if case == "under 10 points":
        holdout = np.r_[holdout, rows[y == 2][:2]]
    rest = np.setdiff1d(rows, holdout)
    res = CSVM(y, X, samples={"train": rest[::2], "anchor": rest[1::2], "holdout": holdout}).fit(
        random_state=0, solver="scip", time_limit=30)
    assert planned_route(res) == "cross-fitted"
    p = res.predict_proba()
    assert res.calibration.method == "cross-fitted" and res.calibration.n == y.size
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert np.isfinite(p.to_numpy()).all() and p.to_numpy().std(axis=0).min() > 0.05  # informative, not a flat 1/K


def test_tied_rows_get_the_same_probabilities_and_intervals(small_fit):
    X, _, res = small_fit
    table = res.predict_proba(X[[4, 4, 7, 7]], interval=True).to_numpy()
    np.testing.assert_array_equal(table[0], table[1])
    np.testing.assert_array_equal(table[2], table[3])


def test_constant_predictors_give_the_class_shares_not_a_silent_uniform():
    """A predictor-free fit (every score constant): P is each class's smoothed share, the documented value."""
    X, y = _gaussian(30, 4)
    constant = np.ones_like(X)
    keep = np.r_[np.flatnonzero(y != 2), np.flatnonzero(y == 2)[:10]]  # shares 30, 30, 10
    res = CSVM(y[keep], constant[keep]).fit(random_state=0, solver="scip", time_limit=30)
    p = res.predict_proba().to_numpy()
    assert np.ptp(p, axis=0).max() < 1e-9  # the same for every row
    np.testing.assert_allclose(p[0], np.bincount(y[keep]) / keep.size, atol=0.05)
