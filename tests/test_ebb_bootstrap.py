"""The shared bootstrap kernel: weighted libsvm fits, bootstrap draws, out-of-bag scores."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from csvm_stats.probability.bootstrap import (
    bootstrap_multiplicities,
    fit_svm_batch,
    fit_weighted_svc,
    reliability_score,
    svc_c,
)
from csvm_stats.optimization.kernels import Kernel


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(3)
    rows = rng.choice(y.size, 150, replace=False)
    X = StandardScaler().fit_transform(X[rows])
    return X, np.where(y[rows] == 1, 1, -1)


@pytest.mark.parametrize("kernel", [Kernel("linear"), Kernel("rbf", gamma=0.05)])
@pytest.mark.parametrize("C", [0.1, 2.0, 16.0])
def test_weighted_fit_equals_svc_on_duplicated_sample(cancer, kernel, C):
    X, y = cancer
    draw = np.random.default_rng(7).integers(0, y.size, y.size)
    counts = np.bincount(draw, minlength=y.size)
    inbag = np.flatnonzero(counts)
    K = kernel(X[inbag], X[inbag])
    beta, b, converged = fit_weighted_svc(K, y[inbag], counts[inbag].astype(float), C, tol=1e-10, max_iter=-1)
    assert converged
    ours = kernel(X, X[inbag]) @ beta + b
    svc = SVC(kernel=kernel.name, gamma=kernel.gamma or "scale", C=svc_c(C), tol=1e-10).fit(X[draw], y[draw])
    reference = svc.decision_function(X)
    np.testing.assert_allclose(ours, reference, atol=1e-6 * max(1.0, np.abs(reference).max()))


def test_svc_c_halves_the_csvm_c():
    assert svc_c(4.0) == 2.0


def test_multiplicities_are_stratified_and_stable_in_b(cancer):
    _, y = cancer
    seed = np.random.SeedSequence(11)
    S = bootstrap_multiplicities(y, 20, seed)
    assert S.shape == (20, y.size)
    np.testing.assert_array_equal(S[:, y > 0].sum(axis=1), np.full(20, (y > 0).sum()))
    np.testing.assert_array_equal(S[:, y < 0].sum(axis=1), np.full(20, (y < 0).sum()))
    longer = bootstrap_multiplicities(y, 30, np.random.SeedSequence(11))
    np.testing.assert_array_equal(longer[:20], S)
    assert not np.array_equal(S[0], S[1])


def test_reliability_scores_on_a_small_example():
    y = np.array([1, 1, 1, -1, -1])
    scores = np.array([2.0, 0.0, -1.0, -3.0, 0.5])
    assert reliability_score(y, scores, "accuracy") == pytest.approx(3 / 5)
    assert reliability_score(y, scores, "gmean") == pytest.approx(np.sqrt(2 / 3 * 1 / 2))
    assert reliability_score(y, scores, "auc") == pytest.approx(4 / 6)
    assert np.isnan(reliability_score(y[:3], scores[:3], "auc"))
    assert np.isnan(reliability_score(y[:0], scores[:0], "accuracy"))


def test_batch_models_and_out_of_bag_scores_match_single_fits(cancer):
    X, y = cancer
    S = bootstrap_multiplicities(y, 3, np.random.SeedSequence(5))
    kernel = Kernel("linear")
    fits = fit_svm_batch(X, y, S, kernel, np.array([0.5, 4.0]), "accuracy")
    for c, C in enumerate([0.5, 4.0]):
        for b, weight in enumerate(S):
            inbag, oob = np.flatnonzero(weight), np.flatnonzero(weight == 0)
            beta, b0, _ = fit_weighted_svc(kernel(X[inbag], X[inbag]), y[inbag], weight[inbag].astype(float), C)
            expected = X @ (beta @ X[inbag]) + b0
            np.testing.assert_allclose(X @ fits.params[c][b] + fits.intercepts[c][b], expected, atol=1e-9)
            assert fits.reliability[c, b] == pytest.approx(np.mean(np.where(expected[oob] >= 0, 1, -1) == y[oob]))


@pytest.mark.parametrize("kernel", [Kernel("linear"), Kernel("rbf", gamma=0.1)])
def test_constrained_batch_models_reproduce_the_engine_fit(cancer, kernel):
    from csvm_stats.probability.bootstrap import fit_csvm_batch
    from csvm_stats.optimization.engine import fit_csvm
    from csvm_stats.optimization.solvers import SolverOptions

    X, y = cancer
    X, y = X[:60, :6], y[:60]
    S = bootstrap_multiplicities(y, 1, np.random.SeedSequence(8))
    inbag = np.flatnonzero(S[0])
    required = {"tpr": int((y[inbag] > 0).sum())}
    fits, records, fitted = fit_csvm_batch(
        X, y, S, 0, kernel, np.array([1.0]), "accuracy", [required], "auto", 20.0, 100.0
    )
    assert fitted.all() and records[0].fitted
    direct = fit_csvm(
        X[inbag], y[inbag], X[inbag], y[inbag], C=1.0, kernel=kernel, min_counts=required,
        sample_weight=S[0, inbag].astype(float), options=SolverOptions(time_limit=20.0, threads=1),
    )
    if kernel.is_linear:
        ours = X @ fits.params[0][0] + fits.intercepts[0][0]
    else:
        ours = kernel(X, X) @ fits.params[0].toarray()[0] + fits.intercepts[0][0]
    np.testing.assert_allclose(ours, direct.decision_function(X), atol=1e-6)
    assert records[0].met["tpr"] >= required["tpr"]


def test_iteration_cap_is_reported(cancer):
    X, y = cancer
    K = X @ X.T
    *_, converged = fit_weighted_svc(K, y, np.ones(y.size), 64.0, max_iter=5)
    assert not converged
    fits = fit_svm_batch(X, y, bootstrap_multiplicities(y, 2, np.random.SeedSequence(0)), Kernel("linear"), np.array([1.0]), "accuracy")
    assert fits.unconverged == 0
