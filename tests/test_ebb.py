"""EBB, CEBB1 and CEBB2: the estimator's behaviour (small B, small data)."""

import warnings

import joblib
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from csvm_stats.probability.bootstrap import bootstrap_multiplicities
from csvm_stats.probability.ebb import EBB
from csvm_stats.exceptions import DataError

C_GRID = [0.25, 1.0, 4.0]


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    rows = np.random.default_rng(0).choice(y.size, 160, replace=False)
    X = StandardScaler().fit_transform(X[rows][:, :10])
    return X, np.where(y[rows] == 1, 1, -1)


@pytest.fixture(scope="module")
def fitted(cancer):
    X, y = cancer
    return EBB(C_grid=C_GRID, n_bootstrap=30, eps=0.02, random_state=1).fit(X, y)


def test_probabilities_are_probabilities(fitted, cancer):
    X, _ = cancer
    proba = fitted.predict_proba(X)
    assert proba.shape == (X.shape[0], 2)
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(np.unique(fitted.predict(X))) <= {-1, 1}


def test_rho_sums_to_one_and_follows_reliability(fitted):
    assert fitted.rho_.sum() == pytest.approx(1.0)
    kept = fitted.rho_ > 0
    assert kept.any()
    best = np.nanmax(fitted.reliability_)
    np.testing.assert_array_equal(kept, fitted.reliability_ >= best - 0.02)
    np.testing.assert_allclose(fitted.rho_[kept], fitted.reliability_[kept] / fitted.reliability_[kept].sum())
    assert fitted.reliability_matrix_.shape == (len(C_GRID), 30)


def test_single_theta_probability_is_monotone_in_the_score(fitted, cancer):
    X, _ = cancer
    theta = int(np.argmax(fitted.rho_))
    W = fitted.ensembles_[theta].weights
    direction = W.mean(axis=0)
    assert np.all(W @ direction > 0)  # every bootstrap score increases along the direction
    ray = X[0] + np.linspace(-3, 3, 41)[:, None] * direction / np.linalg.norm(direction)
    p = fitted.proba_by_theta(ray)[:, theta]
    assert np.all((p >= 0) & (p <= 1))
    assert np.all(np.diff(p) >= 0)
    assert p[0] == 0.0 and p[-1] == 1.0


def test_eps_zero_uses_the_best_theta_only(cancer):
    X, y = cancer
    model = EBB(C_grid=C_GRID, n_bootstrap=30, eps=0.0, random_state=1).fit(X, y)
    best = np.flatnonzero(model.rho_ > 0)
    assert best.size == 1 and model.rho_[best[0]] == 1.0
    np.testing.assert_allclose(model.predict_proba(X)[:, 1], model.proba_by_theta(X)[:, best[0]])


def test_score_matrices_are_kept_per_theta(fitted, cancer):
    X, _ = cancer
    scores = fitted.bootstrap_scores(X[:5], 1)
    assert scores.shape == (5, 30)
    np.testing.assert_allclose(fitted.proba_by_theta(X[:5])[:, 1], np.mean(scores >= 0, axis=1))


def test_same_seed_same_result_for_one_and_two_workers(cancer):
    X, y = cancer
    one = EBB(C_grid=C_GRID, n_bootstrap=40, random_state=5, n_jobs=1).fit(X, y)
    two = EBB(C_grid=C_GRID, n_bootstrap=40, random_state=5, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(one.predict_proba(X), two.predict_proba(X))
    np.testing.assert_array_equal(one.reliability_matrix_, two.reliability_matrix_)
    other = EBB(C_grid=C_GRID, n_bootstrap=40, random_state=6, n_jobs=1).fit(X, y)
    assert not np.array_equal(one.reliability_matrix_, other.reliability_matrix_)


def test_dask_backend_gives_the_same_numbers(cancer):
    distributed = pytest.importorskip("dask.distributed")
    X, y = cancer
    default = EBB(C_grid=C_GRID, n_bootstrap=30, random_state=2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
            with distributed.Client(cluster), joblib.parallel_config(backend="dask"):
                on_dask = EBB(C_grid=C_GRID, n_bootstrap=30, random_state=2).fit(X, y)
    np.testing.assert_array_equal(default.predict_proba(X), on_dask.predict_proba(X))
    np.testing.assert_array_equal(default.rho_, on_dask.rho_)


def test_rbf_grid_is_every_c_gamma_pair(cancer):
    X, y = cancer
    model = EBB(kernel="rbf", C_grid=[1.0, 4.0], gamma_grid=[0.05, 0.2], n_bootstrap=10, eps=1.0, random_state=0).fit(X, y)
    assert model.theta_grid_[["C", "gamma"]].values.tolist() == [[1.0, 0.05], [4.0, 0.05], [1.0, 0.2], [4.0, 0.2]]
    assert np.all(model.rho_ > 0)
    proba = model.predict_proba(X)[:, 1]
    assert np.all((proba >= 0) & (proba <= 1))


@pytest.mark.parametrize("kind", ["tpr", "tnr"])
def test_cebb1_reaches_its_required_share_on_the_training_data(cancer, kind):
    X, y = cancer
    model = EBB(C_grid=C_GRID, n_bootstrap=30, variant="cebb1", bound="none", random_state=3, **{f"{kind}_min": 0.99})
    model.fit(X, y)
    p = model.predict_proba(X)[:, 1]
    share = np.mean(p[y > 0] >= 0.5) if kind == "tpr" else np.mean(p[y < 0] < 0.5)
    assert share >= 0.99
    assert model.training_share_ == pytest.approx(share)
    plain = EBB(C_grid=C_GRID, n_bootstrap=30, random_state=3).fit(X, y).predict_proba(X)[:, 1]
    if kind == "tpr":
        assert model.threshold_ <= 0 and np.all(p >= plain)
    else:
        assert model.threshold_ >= 0 and np.all(p <= plain)


def test_cebb1_margin_raises_the_requirement(cancer):
    X, y = cancer
    plain = EBB(C_grid=C_GRID, n_bootstrap=20, variant="cebb1", tpr_min=0.9, bound="none", random_state=3).fit(X, y)
    margin = EBB(C_grid=C_GRID, n_bootstrap=20, variant="cebb1", tpr_min=0.9, bound="binomial", random_state=3).fit(X, y)
    assert margin.threshold_ <= plain.threshold_


def test_cebb2_fits_meet_their_constraints_on_their_anchors(cancer):
    X, y = cancer
    X, y = X[:90], y[:90]
    model = EBB(
        C_grid=[1.0], n_bootstrap=3, variant="cebb2", tpr_min=0.97, bound="none", random_state=4, time_limit=10.0
    ).fit(X, y)
    assert model.n_fits_ == 3 and model.n_failed_ == 0
    assert 0 <= model.n_optimal_ <= 3
    S = bootstrap_multiplicities(y, 3, np.random.SeedSequence(4))
    scores = model.ensembles_[0].scores(X)
    for b, weight in enumerate(S):
        inbag = np.flatnonzero(weight)
        positives = inbag[y[inbag] > 0]
        required = int(np.ceil(0.97 * positives.size - 1e-9))
        assert model.fit_records_["required"][b] == {"tpr": required}
        assert np.sum(scores[positives, b] >= 1 - 1e-5) >= required
    proba = model.predict_proba(X)[:, 1]
    assert np.all((proba >= 0) & (proba <= 1))


def test_string_labels_name_the_positive_class(cancer):
    X, y = cancer
    labels = np.where(y > 0, "benign", "malignant")
    model = EBB(C_grid=[1.0], n_bootstrap=10, random_state=0).fit(X, labels)
    assert list(model.classes_) == ["benign", "malignant"]
    numeric = EBB(C_grid=[1.0], n_bootstrap=10, random_state=0).fit(X, -y)
    np.testing.assert_array_equal(model.predict_proba(X), numeric.predict_proba(X))


@pytest.mark.parametrize(
    "params, message",
    [
        ({"variant": "bagging"}, "variant"),
        ({"variant": "cebb1"}, "exactly one of tpr_min or tnr_min"),
        ({"variant": "cebb1", "tpr_min": 0.9, "tnr_min": 0.9}, "exactly one"),
        ({"variant": "cebb2"}, "at least one"),
        ({"tpr_min": 0.9}, "variant='ebb'"),
        ({"reliability": "f1"}, "reliability"),
        ({"n_bootstrap": 0}, "n_bootstrap"),
        ({"C_grid": [1.0, -1.0]}, "C_grid"),
        ({"gamma_grid": [0.1]}, "gamma_grid applies"),
        ({"eps": -0.1}, "eps"),
    ],
)
def test_bad_settings_are_named(cancer, params, message):
    X, y = cancer
    with pytest.raises(DataError, match=message):
        EBB(n_bootstrap=params.pop("n_bootstrap", 5), **params).fit(X, y)


def test_three_classes_are_refused(cancer):
    X, y = cancer
    y3 = y.copy()
    y3[:10] = 0
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        EBB(n_bootstrap=5).fit(X, y3)


@parametrize_with_checks([EBB(n_bootstrap=5, C_grid=[1.0], random_state=0)])
def test_scikit_learn_estimator_contract(estimator, check):
    check(estimator)


def test_cebb2_reports_capped_requirements(cancer):
    from csvm_stats.inference.bounds import CappedTargetWarning

    X, y = cancer
    with pytest.warns(CappedTargetWarning, match="capped"):
        model = EBB(C_grid=[1.0], n_bootstrap=2, variant="cebb2", tpr_min=0.95, bound="hoeffding", random_state=0)
        model.fit(X[:60], y[:60])
    assert model.n_capped_ == 2
    assert all(r == {"tpr": int((y[:60][np.flatnonzero(s)] > 0).sum())}
               for r, s in zip(model.fit_records_["required"], bootstrap_multiplicities(y[:60], 2, np.random.SeedSequence(0))))


def test_default_keeps_every_theta_as_the_papers_headline_ebb(cancer):
    X, y = cancer
    model = EBB(C_grid=C_GRID, n_bootstrap=10, random_state=1).fit(X, y)
    assert model.eps == float("inf")
    assert np.all(model.rho_ > 0)
    np.testing.assert_allclose(model.rho_, model.reliability_ / model.reliability_.sum())


def _radial(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    p = 1 / (1 + np.exp(-2.5 * ((X**2).sum(axis=1) - 1.39)))
    return X, np.where(rng.random(n) < p, 1, -1), p


def test_auc_with_eps_zero_warns_and_the_default_does_not_collapse():
    # AUC ignores the intercept: the best-AUC theta here is a nearly linear rule on a radial
    # truth, whose vote shares are almost all 0 or 1; keeping every theta (the default) avoids that.
    X, y, _ = _radial(150, 1000)
    X_test, _, _ = _radial(1000, 2000)
    grid = dict(kernel="rbf", C_grid=[2**-5, 1, 8, 32], gamma_grid=[2**-5, 2**-4, 0.5], n_bootstrap=10,
                reliability="auc", random_state=0)
    with pytest.warns(UserWarning, match="reliability='auc' with eps=0"):
        best_only = EBB(eps=0.0, **grid).fit(X, y)
    default = EBB(**grid).fit(X, y)

    def extreme(model: EBB) -> float:
        p = model.predict_proba(X_test)[:, 1]
        return float(np.mean((p < 0.02) | (p > 0.98)))

    assert extreme(best_only) > 0.7
    assert extreme(default) < 0.4


def test_ebb_va_calibrates_the_papers_probabilities_on_out_of_bag_votes(cancer):
    X, y = cancer
    paper = EBB(C_grid=C_GRID, n_bootstrap=20, random_state=2).fit(X, y)
    model = EBB(C_grid=C_GRID, n_bootstrap=20, random_state=2, calibration="venn-abers").fit(X, y)
    np.testing.assert_array_equal(model.rho_, paper.rho_)  # the same fits and weights
    seen = ~np.isnan(model.oob_proba_)
    assert seen.mean() > 0.99 and model.venn_abers_.n == seen.sum()
    raw = paper.predict_proba(X)[:, 1]
    np.testing.assert_allclose(model.predict_proba(X)[:, 1], model.venn_abers_.predict(raw))
    interval = model.predict_interval(X)
    assert np.all(interval[:, 0] <= interval[:, 1])
    with pytest.raises(DataError, match="needs calibration='venn-abers'"):
        paper.predict_interval(X)
    with pytest.raises(DataError, match="variant='ebb'"):
        EBB(variant="cebb1", tpr_min=0.9, calibration="venn-abers").fit(X, y)
