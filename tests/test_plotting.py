"""Each plot draws on the Agg backend, returns its Axes, and shows the numbers it claims."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from csvm_stats.reporting import plotting  # noqa: E402
from csvm_stats.probability.ebb import EBB  # noqa: E402
from csvm_stats.exceptions import DataError  # noqa: E402
from csvm_stats.models.model import CSVM  # noqa: E402


@pytest.fixture(scope="module")
def data(wisconsin) -> pd.DataFrame:
    X, y = wisconsin
    rows = np.random.default_rng(3).choice(X.shape[0], 260, replace=False)
    frame = pd.DataFrame(X[rows, :6], columns=[f"x{k}" for k in range(6)])
    frame["y"] = np.where(y[rows] > 0, "benign", "malignant")
    return frame


@pytest.fixture(scope="module")
def fits(data):
    return [
        CSVM.from_formula("y ~ .", data, tpr_min=t, bound="binomial", positive="malignant").fit(random_state=0, time_limit=20)
        for t in (0.8, 0.9)
    ]


@pytest.fixture(scope="module")
def ensemble(wisconsin):
    X, y = wisconsin
    return EBB(n_bootstrap=20, C_grid=[0.5, 2.0], random_state=0, progress=False).fit(X[:200, :6], y[:200])


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_roc_draws_region_points_and_curves(fits):
    _, ax = plt.subplots()
    returned = plotting.plot_roc(fits[1], ax=ax)
    assert returned is ax
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "ROC, holdout" in labels and "ROC, anchor" in labels
    assert any(s.startswith("threshold 0, holdout") for s in labels)
    assert any("95% lower bound" in s for s in labels)
    assert any(t.get_text() == "required TPR >= 0.9" for t in ax.texts)


def test_roc_from_predictions_marks_tnr_region_and_makes_its_own_axes():
    rng = np.random.default_rng(0)
    y = np.r_[np.ones(30), -np.ones(30)]
    display = plotting.ConstrainedROCDisplay.from_predictions({"holdout": (y, y + rng.normal(size=60))}, targets={"tnr": 0.9})
    display.plot()
    assert display.ax_ is not None and display.figure_ is display.ax_.figure
    assert any("required TNR" in t.get_text() for t in display.ax_.texts)
    point = display.points[0]
    assert 0 <= point.tpr_lower <= point.tpr <= 1


def test_tradeoff_plots_one_point_per_fit(fits):
    ax = plotting.plot_tradeoff(fits, rate="tpr")
    assert isinstance(ax, matplotlib.axes.Axes)
    held_out = next(line for line in ax.get_lines() if line.get_label() == "TNR, held-out")
    np.testing.assert_allclose(held_out.get_xdata(), [0.8, 0.9])
    with pytest.raises(DataError, match="required tnr"):
        plotting.plot_tradeoff(fits, rate="tnr")


def test_bootstrap_histogram_counts_every_score(ensemble, wisconsin):
    X, _ = wisconsin
    _, ax = plt.subplots()
    assert plotting.plot_bootstrap_scores(ensemble, X[200:260, :6], 5, ax=ax) is ax
    heights = sum(p.get_height() for p in ax.patches)
    assert heights == ensemble.n_bootstrap
    share = np.mean(ensemble.bootstrap_scores(X[205:206, :6], int(np.argmax(ensemble.rho_)))[0] >= 0)
    assert any(f"{share:.2f}" in t.get_text() for t in ax.get_legend().get_texts())


def test_reliability_diagram_reports_brier_scores(ensemble, wisconsin):
    X, y = wisconsin
    p = ensemble.predict_proba(X[200:, :6])[:, 1]
    ax = plotting.plot_reliability(y[200:], {"EBB": p, "constant": np.full(p.size, 0.5)}, n_bins=5)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    brier = np.mean((p - (y[200:] > 0)) ** 2)
    assert f"EBB (Brier {brier:.4f})" in labels
    predicted, observed, counts = plotting.reliability_curve((y[200:] > 0).astype(float), p, 5, "quantile")
    assert counts.sum() == p.size and np.all((observed >= 0) & (observed <= 1))
    with pytest.raises(DataError, match="numbers in"):
        plotting.plot_reliability(y[200:], p[:10])
