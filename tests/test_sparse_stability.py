"""Stability selection inside the CSVM (csvm_stats.sparse.stability, csvm_stats.sparse.resampling)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from csvm_stats.exceptions import DataError, NoSolutionError
from csvm_stats.models.model import CSVM
from csvm_stats.sparse.resampling import complementary_halves, half_counts
from csvm_stats.sparse.stability import stability_selection, top_columns

GRID = [0.02, 0.05, 0.1, 0.3, 3.0]
EXPECTED_FALSE = 20.0  # q = floor(sqrt(20 * 0.2 * 40)) = 12: between the grid's smallest non-empty fits and the largest


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
        return stability_selection(model, GRID, n_pairs=4, random_state=3, time_limit=60, **options)


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
    assert chosen.q == math.floor(math.sqrt(EXPECTED_FALSE * (2 * 0.6 - 1) * 40)) == 12
    assert chosen.base == "l1" and chosen.fit.engine_fit.C == chosen.C
    kept = chosen.path.table["n_selected"]
    assert chosen.C == max(c for c, k in kept.items() if 1 <= k <= chosen.q)
    assert kept.max() > chosen.q  # the rule excluded a grid value
    assert {"frequency", "count", "refits", "failed", "stable"} <= set(chosen.table.columns)
    assert chosen.table["refits"].iloc[0] == 8  # 4 complementary pairs
    assert chosen.selected == chosen.table.index[chosen.table["frequency"] >= 0.6].tolist()
    assert {"x1", "x2"} <= set(chosen.selected)  # the two informative columns are chosen in every half fit
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
    with pytest.raises(DataError, match="linear CSVM as base procedure"):
        stability_selection(CSVM(y, X, tpr_min=0.8, max_features=2), GRID)
    with pytest.raises(DataError, match="linear CSVM as base procedure"):
        stability_selection(CSVM(y, X, tpr_min=0.8, kernel="rbf"))
    three = np.where(X[:, 0] > 0.5, 2.0, np.where(y > 0, 1.0, 0.0))  # three classes: a MulticlassCSVM
    with pytest.raises(DataError, match="takes a two-class CSVM; got MulticlassCSVM"):
        stability_selection(CSVM(three, X, recall_min={2.0: 0.8}))
    with pytest.raises(DataError, match="C_values is the L1 base's grid"):
        stability_selection(CSVM(y, X, tpr_min=0.8), GRID)
    with pytest.raises(DataError, match="the L1 base needs C_values"):
        stability_selection(CSVM(y, X, tpr_min=0.8, penalty="l1"))
    with pytest.raises(DataError, match="q = floor"):  # sqrt(0.01 * 0.2 * 40) < 1
        stability_selection(CSVM(y, X, tpr_min=0.8), expected_false=0.01)
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="n_pairs must be a positive integer"):
            stability_selection(CSVM(y, X, tpr_min=0.8), n_pairs=bad)
    with pytest.raises(DataError, match=r"threshold must be in \(0.5, 1\]"):
        stability_selection(CSVM(y, X, tpr_min=0.8, penalty="l1"), GRID, threshold=0.5)
    with pytest.raises(DataError, match="expected_false must be positive"):
        stability_selection(CSVM(y, X, tpr_min=0.8, penalty="l1"), GRID, expected_false=0)
    with pytest.raises(DataError, match="no C of the grid keeps between 1 and q"):  # q = 1: no fit keeps exactly 1
        _select(X, y, expected_false=0.2)


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
    # each solve gets what is left of the refit's whole-fit limit (csvm_stats.optimization.budget): at most 17 s
    seen = _spy_solves(monkeypatch, lambda solver, o: (solver, 0 < o.time_limit <= 17.0, o.mip_gap, o.clock))
    table = res.selection_stability(n_bootstrap=2, n_jobs=1, solver="scip", time_limit=17.0, mip_gap=0.01, clock="cpu")
    assert table["refits"].iloc[0] == 2
    cardinality = [entry for entry in seen if entry[0] == "scip"]
    assert cardinality and set(cardinality) == {("scip", True, 0.01, "cpu")}


def test_bootstrap_refits_default_to_the_fits_options(monkeypatch):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = CSVM(y, X, tpr_min=0.8, bound="binomial", penalty="l1").fit(
            random_state=1, time_limit=23.0, mip_gap=0.002, threads=1, clock="cpu")
    seen = _spy_solves(monkeypatch, lambda solver, o: (0 < o.time_limit <= 23.0, o.mip_gap, o.threads, o.seed, o.clock))
    res.selection_stability(n_bootstrap=2, n_jobs=1)
    assert seen and set(seen) == {(True, 0.002, 1, 1, "cpu")}  # what is left of the 23 s whole-fit limit


def test_the_clock_reaches_the_grid_fits_and_the_refits(monkeypatch):
    clocks = _spy_solves(monkeypatch, lambda solver, options: options.clock)
    chosen = _select(*_data(), clock="cpu")
    assert chosen.table["refits"].iloc[0] == 8
    assert len(clocks) > 8 and set(clocks) == {"cpu"}  # the grid fits and the 8 half fits
    with pytest.raises(DataError, match="clock must be one of"):
        _select(*_data(), clock="sundial")


def test_complementary_halves_are_disjoint_and_class_stratified():
    y = np.array([1.0] * 13 + [-1.0] * 8)
    first, second = complementary_halves(y, np.random.default_rng(0))
    assert np.intersect1d(first, second).size == 0
    for half in (first, second):
        assert np.all(np.diff(half) > 0)
        assert (y[half] == 1).sum() == 6 and (y[half] == -1).sum() == 4  # floor(13/2), floor(8/2)
    again = complementary_halves(y, np.random.default_rng(0))
    np.testing.assert_array_equal(again[0], first)
    np.testing.assert_array_equal(again[1], second)


def test_half_counts_keep_the_required_share():
    y_anchor = np.array([1.0] * 25 + [-1.0] * 25)
    half = np.r_[np.arange(12), np.arange(25, 37)]
    assert half_counts({"tpr": 24, "tnr": 20, "acc": 40}, y_anchor, half) == {"tpr": 12, "tnr": 10, "acc": 20}
    assert half_counts({"tpr": 20}, y_anchor, np.arange(13)) == {"tpr": 11}  # ceil(20 * 13 / 25) = ceil(10.4)


def test_top_columns_keeps_at_most_q_nonzero_largest_first():
    coef = np.array([0.0, -3.0, 1.0, 2.0, 1e-9, -2.0])
    np.testing.assert_array_equal(top_columns(coef, 3), [1, 3, 5])
    np.testing.assert_array_equal(top_columns(coef, 10), [1, 3, 5, 2])
    assert top_columns(np.zeros(4), 2).size == 0


@pytest.fixture(scope="module")
def l2_chosen():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return stability_selection(CSVM(y, X, tpr_min=0.8, bound="binomial"), n_pairs=6, random_state=3,
                                   time_limit=60, n_jobs=1)


def test_the_l2_base_keeps_q_columns_per_half_fit_and_finds_the_informative_ones(l2_chosen):
    assert l2_chosen.base == "l2" and l2_chosen.path is None and l2_chosen.q == 2  # floor(sqrt(0.2 * 40))
    table = l2_chosen.table
    assert table["refits"].iloc[0] == 12 and table["failed"].iloc[0] == 0
    assert table["count"].sum() <= l2_chosen.q * 12  # no half fit keeps more than q
    assert table.loc[["x1", "x2"], "frequency"].tolist() == [1.0, 1.0]
    assert l2_chosen.selected == table.index[table["frequency"] >= 0.6].tolist()
    assert l2_chosen.error_bound == pytest.approx(2 ** 2 / (0.2 * 40))


def test_l2_frequencies_do_not_depend_on_n_jobs_and_never_read_the_held_out_sample(l2_chosen):
    X, y = _data()
    holdout = CSVM(y, X, tpr_min=0.8, bound="binomial")._split(3).holdout
    X[holdout] = np.random.default_rng(0).normal(size=(holdout.size, X.shape[1])) * 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = stability_selection(CSVM(y, X, tpr_min=0.8, bound="binomial"), n_pairs=6, random_state=3,
                                    time_limit=60, n_jobs=2)
    assert again.selected == l2_chosen.selected
    np.testing.assert_array_equal(again.table["count"].to_numpy(), l2_chosen.table["count"].to_numpy())
    assert again.table.index.tolist() == l2_chosen.table.index.tolist()


def test_the_stability_plot_labels_a_pairs_table_by_its_half_fits(l2_chosen):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from csvm_stats.reporting.plotting import plot_selection_stability

    ax = plot_selection_stability(l2_chosen.table, top=4, threshold=0.6)
    assert ax.get_xlabel() == "share of 12 half-sample fits selecting the feature"
    assert [t.get_text() for t in ax.get_yticklabels()] == list(l2_chosen.table.index[:4])
    plt.close("all")


@pytest.mark.parametrize("fail_every", [1, 3])
def test_half_fits_without_solution_are_said_never_silent(monkeypatch, fail_every):
    """All half fits failing is an error; some failing is a warning (they lower every frequency)."""
    from csvm_stats.sparse import stability

    calls, real_fit = [], stability.fit_csvm

    def sometimes(*args, **kwargs):
        calls.append(1)
        if len(calls) % fail_every == 0:
            raise NoSolutionError("no classifier meets the required counts")
        return real_fit(*args, **kwargs)

    monkeypatch.setattr(stability, "fit_csvm", sometimes)
    X, y = _data()
    model = CSVM(y, X, tpr_min=0.8, bound="binomial")
    if fail_every == 1:
        with pytest.raises(DataError, match="none of the 8 half-sample fits had a solution"):
            stability_selection(model, n_pairs=4, random_state=3, time_limit=60, n_jobs=1)
    else:
        with pytest.warns(UserWarning, match="2 of 8 half-sample fits had no solution"):
            chosen = stability_selection(model, n_pairs=4, random_state=3, time_limit=60, n_jobs=1)
        assert chosen.table["failed"].iloc[0] == 2
