"""Stability selection with the L1-norm CSVM as base procedure (csvm_stats.sparse.stability)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from csvm_stats.exceptions import DataError
from csvm_stats.models.model import CSVM
from csvm_stats.sparse.stability import stability_selection

GRID = [0.02, 0.05, 0.1, 0.3, 3.0]
EXPECTED_FALSE = 20.0  # q = sqrt(20 * 0.2 * 40) = 12.6: between the grid's smallest non-empty fits and the largest


def _data(seed: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Two informative columns among 40."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(160, 40))
    y = np.where(X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=160) > 0, 1, -1)
    return X, y


def _select(X, y, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CSVM(y, X, tpr_min=0.8, bound="binomial", penalty="l1")
        options = {"expected_false": EXPECTED_FALSE, **kwargs}
        return stability_selection(model, GRID, n_bootstrap=8, random_state=3, time_limit=60, **options)


def _spy_solves(monkeypatch, read) -> list:
    """Record ``read(solver, options)`` for every solve of the sparse routes."""
    import csvm_stats.sparse.model as sparse_model

    seen, real_solve = [], sparse_model.solve

    def spy(problem, solver, options):
        seen.append(read(solver, options))
        return real_solve(problem, solver, options)

    monkeypatch.setattr(sparse_model, "solve", spy)
    return seen


@pytest.fixture(scope="module")
def chosen():
    return _select(*_data())


def test_c_is_the_largest_grid_value_within_q_and_the_stable_set_is_the_threshold(chosen):
    assert chosen.q == pytest.approx(math.sqrt(EXPECTED_FALSE * (2 * 0.6 - 1) * 40))
    kept = chosen.path.table["n_selected"]
    assert chosen.C == max(c for c, k in kept.items() if 1 <= k <= chosen.q)
    assert kept.max() > chosen.q  # the rule excluded a grid value
    assert {"frequency", "count", "refits", "in_fit", "stable"} <= set(chosen.table.columns)
    assert chosen.table["refits"].iloc[0] == 8
    assert chosen.selected == chosen.table.index[chosen.table["frequency"] >= 0.6].tolist()
    assert {"x1", "x2"} <= set(chosen.selected)  # the two informative columns are chosen in every refit
    assert chosen.table.loc[["x1", "x2"], "frequency"].tolist() == [1.0, 1.0]


def test_the_held_out_sample_is_never_read(chosen):
    """Scrambling the held-out rows' predictors changes nothing (the split depends on y only)."""
    X, y = _data()
    holdout = CSVM(y, X, tpr_min=0.8, bound="binomial", penalty="l1")._split(3).holdout
    X[holdout] = np.random.default_rng(0).normal(size=(holdout.size, X.shape[1])) * 100
    again = _select(X, y)
    assert again.C == chosen.C and again.selected == chosen.selected
    np.testing.assert_array_equal(again.table["count"].to_numpy(), chosen.table["count"].to_numpy())


def test_bad_arguments_are_refused_with_the_fix():
    X, y = _data()
    with pytest.raises(DataError, match="penalty='l1'"):
        stability_selection(CSVM(y, X, tpr_min=0.8, max_features=2), GRID)
    with pytest.raises(DataError, match=r"threshold must be in \(0.5, 1\]"):
        stability_selection(CSVM(y, X, tpr_min=0.8, penalty="l1"), GRID, threshold=0.5)
    with pytest.raises(DataError, match="expected_false must be positive"):
        stability_selection(CSVM(y, X, tpr_min=0.8, penalty="l1"), GRID, expected_false=0)
    with pytest.raises(DataError, match="no C of the grid keeps between 1 and q"):  # q = 0.9: no fit keeps 1
        _select(X, y, expected_false=0.1)


def test_a_grid_where_every_fit_fails_names_the_fits_error(monkeypatch):
    import csvm_stats.sparse.model as sparse_model
    from csvm_stats.exceptions import InfeasibleConstraintsError

    def infeasible(problem, solver, options):
        raise InfeasibleConstraintsError("no classifier meets TPR >= 0.8 on the anchor sample")

    monkeypatch.setattr(sparse_model, "solve", infeasible)
    with pytest.raises(DataError, match=r"no fit of the C grid succeeded \(first error: InfeasibleConstraintsError: "
                                        "no classifier meets"):
        _select(*_data())


def test_bootstrap_refits_use_the_given_solver_options(monkeypatch):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = CSVM(y, X, tpr_min=0.8, bound="binomial", max_features=2).fit(random_state=1, time_limit=60)
    seen = _spy_solves(monkeypatch, lambda solver, o: (solver, o.time_limit, o.mip_gap, o.clock))
    table = res.selection_stability(n_bootstrap=2, n_jobs=1, solver="scip", time_limit=17.0, mip_gap=0.01, clock="cpu")
    assert table["refits"].iloc[0] == 2
    cardinality = [entry for entry in seen if entry[0] == "scip"]
    assert cardinality and set(cardinality) == {("scip", 17.0, 0.01, "cpu")}


def test_bootstrap_refits_default_to_the_fits_options(monkeypatch):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = CSVM(y, X, tpr_min=0.8, bound="binomial", penalty="l1").fit(
            random_state=1, time_limit=23.0, mip_gap=0.002, threads=1, clock="cpu")
    seen = _spy_solves(monkeypatch, lambda solver, o: (o.time_limit, o.mip_gap, o.threads, o.seed, o.clock))
    res.selection_stability(n_bootstrap=2, n_jobs=1)
    assert seen and set(seen) == {(23.0, 0.002, 1, 1, "cpu")}


def test_the_clock_reaches_the_grid_fits_and_the_refits(monkeypatch):
    clocks = _spy_solves(monkeypatch, lambda solver, options: options.clock)
    chosen = _select(*_data(), clock="cpu")
    assert chosen.table["refits"].iloc[0] == 8
    assert len(clocks) > 8 and set(clocks) == {"cpu"}
    with pytest.raises(DataError, match="clock must be one of"):
        _select(*_data(), clock="sundial")
