r"""Plots of fitted CSVMs and bootstrap probabilities, in scikit-learn's Display manner.

Each Display holds the numbers of one plot, is built by ``from_results`` /
``from_estimator`` / ``from_predictions`` and drawn by ``plot(ax=None)``,
which keeps ``ax_`` and ``figure_`` (as ``sklearn.metrics.RocCurveDisplay``).
Each has a one-call function that returns the Axes:

* :func:`plot_roc` - ROC curve of the decision values on the anchor and the
  held-out sample, the region the rate constraints allow (TPR >= p0: above a
  horizontal line; TNR >= p0: left of FPR = 1 - p0), and the classifier's
  operating points (threshold 0) on both samples, the held-out one with its
  Clopper-Pearson lower bound.
* :func:`plot_tradeoff` - the other rate as the required rate rises, one CSVM
  per target on the same samples: what the guarantee costs.
* :func:`plot_bootstrap_scores` - the histogram of one instance's B bootstrap
  scores (EBB paper, Figures 2, 3 and 6): the share at or above the threshold
  is :math:`P(y=+1 \mid x, \theta)`; for CEBB1 the moved threshold is drawn too.
* :func:`plot_reliability` - reliability diagram: observed share of
  positives against the mean predicted probability per bin, with the Brier
  score of each method.

matplotlib is imported inside the functions, so ``import csvm_stats`` does not
need it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from csvm_stats.inference.bounds import clopper_pearson_lower
from csvm_stats.inference.certification import level_percent, round_down
from csvm_stats.exceptions import DataError

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from csvm_stats.probability.ebb import EBB
    from csvm_stats.models.results import CSVMResults

RATE_AXIS = {"tpr": "true positive rate", "tnr": "true negative rate", "acc": "accuracy"}


def _axes(ax: Axes | None) -> Axes:
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.5))
    return ax


def _pm_labels(y: Any) -> np.ndarray:
    v = np.asarray(y, dtype=float)
    if not np.isin(v, (-1.0, 1.0)).all():
        raise DataError("labels must be coded -1/+1 here; pass the model's coded labels (results.model.y).")
    return v


# ---------------------------------------------------------------------- ROC
@dataclass(frozen=True)
class OperatingPoint:
    """A classifier's (FPR, TPR) on one sample, with a lower confidence bound on the TPR and TNR."""

    sample: str
    fpr: float
    tpr: float
    tpr_lower: float
    tnr_lower: float


def roc_points(y: np.ndarray, decision: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ROC curve (FPR, TPR) of decision values for -1/+1 labels, thresholds from high to low."""
    from sklearn.metrics import roc_curve

    fpr, tpr, _ = roc_curve(y, decision, pos_label=1)
    return fpr, tpr


def _operating_point(sample: str, y: np.ndarray, decision: np.ndarray, alpha: float) -> OperatingPoint:
    pos, neg = y > 0, y < 0
    tp, tn = int(np.sum(decision[pos] >= 0)), int(np.sum(decision[neg] < 0))
    n_pos, n_neg = int(pos.sum()), int(neg.sum())
    return OperatingPoint(
        sample,
        1 - tn / n_neg if n_neg else np.nan,
        tp / n_pos if n_pos else np.nan,
        clopper_pearson_lower(tp, n_pos, alpha) if n_pos else np.nan,
        clopper_pearson_lower(tn, n_neg, alpha) if n_neg else np.nan,
    )


@dataclass
class ConstrainedROCDisplay:
    """ROC curves per sample, the constrained region and the operating points (threshold 0).

    ``curves`` maps a sample name to its (FPR, TPR) arrays; ``targets`` the
    required rates (``"tpr"``, ``"tnr"``); ``points`` the operating points.
    """

    curves: dict[str, tuple[np.ndarray, np.ndarray]]
    targets: dict[str, float]
    points: list[OperatingPoint]
    alpha: float = 0.05
    name: str = "CSVM"
    ax_: Any = field(default=None, init=False, repr=False)
    figure_: Any = field(default=None, init=False, repr=False)

    @classmethod
    def from_predictions(
        cls,
        samples: Mapping[str, tuple[Any, Any]],
        *,
        targets: Mapping[str, float] | None = None,
        alpha: float = 0.05,
        name: str = "CSVM",
    ) -> ConstrainedROCDisplay:
        """From ``{sample: (y in {-1, +1}, decision values)}``."""
        curves, points = {}, []
        for sample, (y, decision) in samples.items():
            y, d = _pm_labels(y), np.asarray(decision, dtype=float)
            if not ((y > 0).any() and (y < 0).any()):
                raise DataError(f"the {sample} sample needs points of both classes for an ROC curve.")
            curves[sample] = roc_points(y, d)
            points.append(_operating_point(sample, y, d, alpha))
        return cls(curves, {k: v for k, v in (targets or {}).items() if k in ("tpr", "tnr")}, points, alpha, name)

    @classmethod
    def from_results(cls, results: CSVMResults, *, samples: Sequence[str] = ("anchor", "holdout")) -> ConstrainedROCDisplay:
        """From a fitted CSVM: its decision values on the anchor and held-out samples."""
        y, decision = results.model.y, results.decision_function().to_numpy()
        chosen = {s: (y[getattr(results.split, s)], decision[getattr(results.split, s)])
                  for s in samples if getattr(results.split, s).size}
        if not chosen:
            raise DataError(f"the fit has no points in the samples {list(samples)}.")
        return cls.from_predictions(chosen, targets=results.model.targets, alpha=results.model.alpha)

    def plot(self, ax: Axes | None = None) -> ConstrainedROCDisplay:
        ax = _axes(ax)
        styles = {"anchor": ("tab:orange", "--", "o"), "holdout": ("tab:blue", "-", "s"), "train": ("tab:gray", ":", "^")}
        if "tpr" in self.targets:
            p0 = self.targets["tpr"]
            ax.axhspan(p0, 1.02, color="tab:green", alpha=0.10, lw=0)
            ax.axhline(p0, color="tab:green", lw=1)
            ax.text(0.98, p0, f"required TPR >= {p0:g}", ha="right", va="top", color="tab:green", fontsize=8,
                    transform=ax.get_yaxis_transform())
        if "tnr" in self.targets:
            p0 = self.targets["tnr"]
            ax.axvspan(-0.02, 1 - p0, color="tab:purple", alpha=0.10, lw=0)
            ax.axvline(1 - p0, color="tab:purple", lw=1)
            ax.text(1 - p0, 0.02, f"required TNR >= {p0:g} ", rotation=90, ha="left", va="bottom", color="tab:purple",
                    fontsize=8, transform=ax.get_xaxis_transform())
        for sample, (fpr, tpr) in self.curves.items():
            color, line, _ = styles.get(sample, ("black", "-", "o"))
            ax.step(fpr, tpr, where="post", color=color, ls=line, lw=1.3, label=f"ROC, {sample}")
        for point in self.points:
            color, _, marker = styles.get(point.sample, ("black", "-", "o"))
            ax.plot(point.fpr, point.tpr, marker=marker, ms=8, color=color, mec="black", ls="none",
                    label=f"threshold 0, {point.sample}: FPR {point.fpr:.3f}, TPR {point.tpr:.3f}")
            if point.sample == "holdout":
                ax.errorbar(point.fpr, point.tpr, yerr=[[point.tpr - point.tpr_lower], [0]], color=color, capsize=4,
                            lw=1.2, label=f"held-out TPR >= {round_down(point.tpr_lower, 3)} "
                            f"({level_percent(self.alpha)} lower bound)")
        ax.plot([0, 1], [0, 1], color="0.7", lw=0.8, ls=":")
        ax.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), xlabel="false positive rate (1 - TNR)",
               ylabel="true positive rate", title=f"{self.name}: ROC and constrained region")
        ax.legend(loc="lower right", fontsize=7)
        self.ax_, self.figure_ = ax, ax.figure
        return self


def plot_roc(results: CSVMResults, *, ax: Axes | None = None, samples: Sequence[str] = ("anchor", "holdout")) -> Axes:
    """ROC with constrained region and operating points of a fitted CSVM; returns the Axes.

    Parameters
    ----------
    results : CSVMResults
        A fitted two-class CSVM.
    ax : matplotlib.axes.Axes or None
        Axes to draw on; a new figure when ``None``.
    samples : sequence of str, default ("anchor", "holdout")
        The samples whose ROC curves and operating points are drawn.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Raises
    ------
    ImportError
        matplotlib is not installed (``pip install -e '.[plot]'``).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.data.datasets import load_dataset
    >>> X, y = load_dataset("wisconsin")
    >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
    >>> from csvm_stats.reporting.plotting import plot_roc
    >>> ax = plot_roc(res)
    """
    return ConstrainedROCDisplay.from_results(results, samples=samples).plot(ax).ax_


# ---------------------------------------------------------------------- trade-off
def _sample_rate(results: CSVMResults, sample: str, rate: str) -> float:
    row = results.confusion.loc[sample]
    if rate == "tpr":
        n, k = row["tp"] + row["fn"], row["tp"]
    elif rate == "tnr":
        n, k = row["tn"] + row["fp"], row["tn"]
    else:
        n, k = row["n"], row["tp"] + row["tn"]
    return k / n if n else np.nan


@dataclass
class TradeoffDisplay:
    """The other rate (held-out and anchor) against the required rate, one CSVM per target.

    ``table`` has one row per target with columns ``target``,
    ``required_heldout``, ``required_anchor``, ``other_heldout``,
    ``other_anchor`` and ``required_lower`` (held-out Clopper-Pearson bound).
    """

    table: pd.DataFrame
    rate: str
    other: str
    alpha: float = 0.05
    ax_: Any = field(default=None, init=False, repr=False)
    figure_: Any = field(default=None, init=False, repr=False)

    @classmethod
    def from_results(cls, fits: Sequence[CSVMResults], *, rate: str = "tpr") -> TradeoffDisplay:
        """From CSVMs fitted with different targets for ``rate`` ("tpr" or "tnr")."""
        if rate not in ("tpr", "tnr"):
            raise DataError(f"rate must be 'tpr' or 'tnr', got {rate!r}.")
        other = "tnr" if rate == "tpr" else "tpr"
        rows = []
        for res in fits:
            if rate not in res.model.targets:
                raise DataError(f"every fit must have a required {rate}; one has targets {res.model.targets}.")
            rows.append(
                {
                    "target": res.model.targets[rate],
                    "required_heldout": _sample_rate(res, "holdout", rate),
                    "required_anchor": _sample_rate(res, "anchor", rate),
                    "other_heldout": _sample_rate(res, "holdout", other),
                    "other_anchor": _sample_rate(res, "anchor", other),
                    "required_lower": res.rates.loc[rate, "lower"],
                }
            )
        if not rows:
            raise DataError("no fits given.")
        alphas = {res.model.alpha for res in fits}
        return cls(pd.DataFrame(rows).sort_values("target", ignore_index=True), rate, other, alphas.pop())

    @classmethod
    def from_formula(
        cls,
        formula: str,
        data: pd.DataFrame,
        *,
        targets: Sequence[float],
        rate: str = "tpr",
        random_state: int = 0,
        fit_options: Mapping[str, Any] | None = None,
        **model_options: Any,
    ) -> TradeoffDisplay:
        """Fit ``CSVM.from_formula(formula, data, <rate>_min=t, **model_options)`` for each t (same split)."""
        from csvm_stats.models.model import CSVM

        fits = [
            CSVM.from_formula(formula, data, **{f"{rate}_min": float(t)}, **model_options).fit(
                random_state=random_state, **dict(fit_options or {})
            )
            for t in targets
        ]
        return cls.from_results(fits, rate=rate)

    def plot(self, ax: Axes | None = None) -> TradeoffDisplay:
        ax = _axes(ax)
        t = self.table
        req, oth = self.rate.upper(), self.other.upper()
        ax.plot(t["target"], t["other_heldout"], "o-", color="tab:blue", label=f"{oth}, held-out")
        ax.plot(t["target"], t["other_anchor"], "o--", color="tab:blue", alpha=0.5, mfc="white", label=f"{oth}, anchor")
        ax.plot(t["target"], t["required_heldout"], "s-", color="tab:green", label=f"{req}, held-out")
        ax.plot(t["target"], t["required_lower"], "v:", color="tab:green",
                label=f"{req}, held-out lower {level_percent(self.alpha)} bound")
        lo = float(np.nanmin(t[["target", "other_heldout", "required_lower"]].to_numpy()))
        ax.plot([lo, 1], [lo, 1], color="0.6", lw=0.8, ls=":", label=f"{req} = required")
        ax.set(xlabel=f"required {RATE_AXIS[self.rate]}", ylabel="rate",
               title=f"The cost of a required {req}", ylim=(max(0.0, lo - 0.05), 1.01))
        ax.legend(loc="lower left", fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self


def plot_tradeoff(fits: Sequence[CSVMResults], *, rate: str = "tpr", ax: Axes | None = None) -> Axes:
    """Trade-off of CSVMs fitted with rising targets for ``rate``; returns the Axes.

    Parameters
    ----------
    fits : sequence of CSVMResults
        CSVMs fitted with rising targets.
    rate : {"tpr", "tnr"}, default "tpr"
        The constrained rate.
    ax : matplotlib.axes.Axes or None
        Axes to draw on; a new figure when ``None``.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Raises
    ------
    ImportError
        matplotlib is not installed (``pip install -e '.[plot]'``).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.data.datasets import load_dataset
    >>> X, y = load_dataset("wisconsin")
    >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
    >>> from csvm_stats.reporting.plotting import plot_tradeoff
    >>> fits = [CSVM(y, X, tpr_min=p, bound="binomial").fit(random_state=0) for p in (0.8, 0.95)]
    >>> ax = plot_tradeoff(fits)
    """
    return TradeoffDisplay.from_results(fits, rate=rate).plot(ax).ax_


# ---------------------------------------------------------------------- bootstrap scores
@dataclass
class BootstrapScoreDisplay:
    """Histogram of one instance's scores under many fits (bootstrap or cross-validation) for one theta.

    ``from_estimator`` takes the scores of an EBB's bootstrap fits; the
    constructor takes any scores, e.g. those of the k fits of a k-fold
    cross-validation (the EBB paper's Figure 2).
    """

    scores: np.ndarray
    threshold: float
    theta_label: str
    label: str = ""
    bins: int = 30
    ax_: Any = field(default=None, init=False, repr=False)
    figure_: Any = field(default=None, init=False, repr=False)

    @classmethod
    def from_estimator(cls, estimator: EBB, X: Any, index: int, *, theta: int | None = None,
                       label: str = "", bins: int = 30) -> BootstrapScoreDisplay:
        """Scores of row ``index`` of ``X`` under grid point ``theta`` (default: the largest weight rho)."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(estimator)
        chosen = int(np.argmax(estimator.rho_)) if theta is None else int(theta)
        if not 0 <= chosen < len(estimator.ensembles_):
            raise DataError(f"theta must index the grid (0..{len(estimator.ensembles_) - 1}), got {theta!r}.")
        rows = np.asarray(X)[[index]] if not isinstance(X, pd.DataFrame) else X.iloc[[index]]
        scores = estimator.bootstrap_scores(rows, chosen)[0]
        grid = estimator.theta_grid_.iloc[chosen]
        theta_label = f"C = {grid['C']:g}" + ("" if np.isnan(grid["gamma"]) else f", gamma = {grid['gamma']:g}")
        return cls(scores, float(estimator.threshold_), theta_label, label or f"instance {index}", bins)

    def plot(self, ax: Axes | None = None) -> BootstrapScoreDisplay:
        ax = _axes(ax)
        s, t = self.scores, self.threshold
        lo, hi = min(s.min(), 0.0, t), max(s.max(), 0.0, t)
        width = (hi - lo) / self.bins if hi > lo else 1.0
        edges = t + width * np.arange(np.floor((lo - t) / width), np.ceil((hi - t) / width) + 1)  # t is an edge
        share = np.mean(s >= t)
        ax.hist(s[s < t], bins=edges, color="tab:red", alpha=0.6, label=f"score < {t:.3g}: counted negative")
        ax.hist(s[s >= t], bins=edges, color="tab:blue", alpha=0.6, label=f"score >= {t:.3g}: counted positive")
        if t == 0.0:
            ax.axvline(0.0, color="black", lw=1.2, label=f"threshold 0: P(y=+1 | x, theta) = {share:.2f}")
        else:
            ax.axvline(0.0, color="black", lw=1.0, ls=":", label=f"threshold 0 (EBB): P = {np.mean(s >= 0):.2f}")
            ax.axvline(t, color="tab:green", lw=1.5, ls="--", label=f"moved threshold {t:.3f} (CEBB1): P = {share:.2f}")
        ax.set(xlabel="score f_b(x) of each fit", ylabel="number of fits",
               title=f"{self.label}: {s.size} scores ({self.theta_label})")
        ax.legend(fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self


def plot_bootstrap_scores(estimator: EBB, X: Any, index: int, *, theta: int | None = None,
                          ax: Axes | None = None, bins: int = 30) -> Axes:
    """Histogram of the bootstrap scores of row ``index`` of ``X``; returns the Axes.

    Parameters
    ----------
    estimator : EBB
        A fitted ensemble.
    X : array-like
        Rows.
    index : int
        The row of ``X`` whose scores are drawn.
    theta : int or None
        Grid point (row of ``theta_grid_``); default the one of largest weight.
    ax : matplotlib.axes.Axes or None
        Axes to draw on; a new figure when ``None``.
    bins : int, default 30
        Histogram bins.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Raises
    ------
    ImportError
        matplotlib is not installed (``pip install -e '.[plot]'``).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from csvm_stats import EBB
    >>> from csvm_stats.data.datasets import load_dataset
    >>> from csvm_stats.reporting.plotting import plot_bootstrap_scores
    >>> X, y = load_dataset("wisconsin")
    >>> X = (X - X.mean()) / X.std()
    >>> ebb = EBB(n_bootstrap=10, C_grid=[1.0], random_state=0, progress=False).fit(X, y)
    >>> ax = plot_bootstrap_scores(ebb, X, 0)
    """
    return BootstrapScoreDisplay.from_estimator(estimator, X, index, theta=theta, bins=bins).plot(ax).ax_


# ---------------------------------------------------------------------- reliability
def reliability_curve(positive: np.ndarray, p: np.ndarray, n_bins: int, strategy: str) -> tuple[np.ndarray, ...]:
    """Mean predicted probability, observed positive share and count per non-empty bin.

    Bins are equal-width on [0, 1] (``"uniform"``) or hold equal numbers of
    points (``"quantile"``); the binning is that of
    ``sklearn.calibration.calibration_curve``, which does not report counts.

    Parameters
    ----------
    positive : numpy.ndarray of bool
        Whether each point is positive.
    p : numpy.ndarray
        Predicted probabilities.
    n_bins : int
        Number of bins.
    strategy : {"uniform", "quantile"}
        Equal-width or equal-count bins.

    Returns
    -------
    tuple of numpy.ndarray
        Mean prediction, observed share of positives and count per non-empty bin.

    Raises
    ------
    csvm_stats.exceptions.DataError
        An unknown strategy or bad probabilities.

    Examples
    --------
    >>> import numpy as np
    >>> from csvm_stats.reporting.plotting import reliability_curve
    >>> mean, share, count = reliability_curve(np.array([0, 1, 1, 0], bool), np.array([0.1, 0.8, 0.6, 0.3]), 2, "uniform")
    >>> count.tolist()
    [2, 2]
    """
    if strategy == "uniform":
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    elif strategy == "quantile":
        edges = np.quantile(p, np.linspace(0.0, 1.0, n_bins + 1))
    else:
        raise DataError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}.")
    ids = np.searchsorted(edges[1:-1], p)
    counts = np.bincount(ids, minlength=n_bins)
    keep = counts > 0
    predicted = np.bincount(ids, weights=p, minlength=n_bins)[keep] / counts[keep]
    observed = np.bincount(ids, weights=positive, minlength=n_bins)[keep] / counts[keep]
    return predicted, observed, counts[keep]


@dataclass
class ReliabilityDisplay:
    """Reliability curves (observed positive share vs mean predicted probability) of several methods.

    ``curves`` maps a method to (mean predicted, observed share, count) per
    non-empty bin; the marker area is proportional to the count.
    """

    curves: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]
    brier: dict[str, float]
    ax_: Any = field(default=None, init=False, repr=False)
    figure_: Any = field(default=None, init=False, repr=False)

    @classmethod
    def from_predictions(cls, y_true: Any, probabilities: Mapping[str, Any] | Any, *, n_bins: int = 10,
                         strategy: str = "uniform") -> ReliabilityDisplay:
        """``y_true`` in {-1, +1} (or 0/1); ``probabilities`` P(y=+1|x), one array or ``{method: array}``."""
        y = np.asarray(y_true, dtype=float)
        values = set(np.unique(y).tolist())
        if not (values <= {-1.0, 1.0} or values <= {0.0, 1.0}):
            raise DataError(f"y_true must be coded -1/+1 or 0/1 (positive = 1), got values {sorted(values)[:5]}.")
        positive = (y > 0).astype(float)
        methods = probabilities if isinstance(probabilities, Mapping) else {"model": probabilities}
        curves, brier = {}, {}
        for name, p in methods.items():
            p = np.asarray(p, dtype=float)
            if p.shape != positive.shape or not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
                raise DataError(f"probabilities of {name!r} must be {positive.size} numbers in [0, 1].")
            curves[name] = reliability_curve(positive, p, n_bins, strategy)
            brier[name] = float(np.mean((p - positive) ** 2))
        return cls(curves, brier)

    def plot(self, ax: Axes | None = None) -> ReliabilityDisplay:
        ax = _axes(ax)
        ax.plot([0, 1], [0, 1], color="0.6", ls=":", lw=1, label="perfectly calibrated")
        total = max(int(sum(c.sum() for _, _, c in self.curves.values()) / max(len(self.curves), 1)), 1)
        for name, (predicted, observed, counts) in self.curves.items():
            line, = ax.plot(predicted, observed, "-", lw=1.3, label=f"{name} (Brier {self.brier[name]:.4f})")
            ax.scatter(predicted, observed, s=15 + 400 * counts / total, color=line.get_color(), alpha=0.7,
                       edgecolor="black", lw=0.5, zorder=3)
        ax.set(xlim=(-0.03, 1.03), ylim=(-0.03, 1.03), xlabel="mean predicted P(y = +1 | x) in the bin",
               ylabel="observed share of positives in the bin",
               title="Reliability diagram (marker area = points in the bin)")
        ax.legend(loc="upper left", fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self


def plot_reliability(y_true: Any, probabilities: Mapping[str, Any] | Any, *, ax: Axes | None = None,
                     n_bins: int = 10, strategy: str = "uniform") -> Axes:
    """Reliability diagram of one or several probability estimates; returns the Axes.

    Parameters
    ----------
    y_true : array-like
        0/1 (or -1/+1, bool) outcomes.
    probabilities : array-like or mapping of str to array-like
        One probability vector, or several by name.
    ax : matplotlib.axes.Axes or None
        Axes to draw on; a new figure when ``None``.
    n_bins : int, default 10
        Bins of the predicted probability.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width bins or equal-count bins.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Raises
    ------
    ImportError
        matplotlib is not installed (``pip install -e '.[plot]'``).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.data.datasets import load_dataset
    >>> X, y = load_dataset("wisconsin")
    >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
    >>> from csvm_stats.reporting.plotting import plot_reliability
    >>> ax = plot_reliability(y == 1, {"Venn-Abers": res.predict_proba(X)}, n_bins=5)
    """
    return ReliabilityDisplay.from_predictions(y_true, probabilities, n_bins=n_bins, strategy=strategy).plot(ax).ax_


# ---------------------------------------------------------------------- sparse CSVM
@dataclass
class SelectionStabilityDisplay:
    """Bar chart of selection frequencies (:mod:`csvm_stats.sparse.stability`).

    Bars show the share of refits (bootstrap refits of a fit, or the
    half-sample fits of ``stability_selection(...).table``) that chose each
    of the ``top`` most often chosen features; for a fit's table, features
    of the original fit are filled, the others hatched; ``threshold`` (e.g.
    0.6, stability selection's cut-off) is drawn as a line when given.
    """

    table: pd.DataFrame
    top: int = 20
    threshold: float | None = None
    ax_: Any = field(default=None, init=False, repr=False)
    figure_: Any = field(default=None, init=False, repr=False)

    @classmethod
    def from_results(cls, results: Any, *, n_bootstrap: int = 100, random_state: int = 0, n_jobs: int | None = None,
                     top: int = 20, threshold: float | None = None) -> SelectionStabilityDisplay:
        """Refit a :class:`~csvm_stats.sparse.results.SparseCSVMResults` ``n_bootstrap`` times."""
        table = results.selection_stability(n_bootstrap=n_bootstrap, random_state=random_state, n_jobs=n_jobs)
        return cls(table, top, threshold)

    def plot(self, ax: Axes | None = None) -> SelectionStabilityDisplay:
        missing = {"frequency", "refits"} - set(self.table.columns)
        if missing:
            raise DataError(f"the stability table lacks column(s) {sorted(missing)}; pass results.selection_stability().")
        ax = _axes(ax)
        shown = self.table.head(self.top)
        in_fit = shown["in_fit"].to_numpy(dtype=bool) if "in_fit" in shown else np.ones(len(shown), dtype=bool)
        positions = np.arange(len(shown))
        ax.barh(positions[in_fit], shown["frequency"].to_numpy()[in_fit], color="tab:blue",
                label="selected in the fit" if "in_fit" in shown else "selection frequency")
        ax.barh(positions[~in_fit], shown["frequency"].to_numpy()[~in_fit], color="white", edgecolor="tab:blue",
                hatch="//", label="not selected in the fit")
        if self.threshold is not None:
            ax.axvline(self.threshold, color="black", ls="--", lw=1.0, label=f"frequency {self.threshold:g}")
        ax.set_yticks(positions, [str(name) for name in shown.index])
        ax.invert_yaxis()
        refits = "half-sample fits" if "failed" in shown else "bootstrap refits"  # stability_selection's table
        ax.set(xlim=(0, 1), xlabel=f"share of {int(shown['refits'].iloc[0])} {refits} selecting the feature",
               title="Selection stability")
        ax.legend(fontsize=8, loc="lower right")
        self.ax_, self.figure_ = ax, ax.figure
        return self


def plot_selection_stability(table: pd.DataFrame, *, top: int = 20, threshold: float | None = None,
                             ax: Axes | None = None) -> Axes:
    """Selection frequencies of the ``top`` most often chosen features; returns the Axes.

    Parameters
    ----------
    table : pandas.DataFrame
        A selection-frequency table (``frequency`` column), as
        ``res.selection_stability()`` or ``StabilitySelection.table`` give it.
    top : int, default 20
        How many features to show.
    threshold : float or None
        Draw the stability threshold.
    ax : matplotlib.axes.Axes or None
        Axes to draw on; a new figure when ``None``.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Raises
    ------
    ImportError
        matplotlib is not installed (``pip install -e '.[plot]'``).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np, pandas as pd
    >>> from csvm_stats import CSVM
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
    >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
    >>> from csvm_stats.sparse.stability import stability_selection
    >>> from csvm_stats.reporting.plotting import plot_selection_stability
    >>> stable = stability_selection(CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case"), n_pairs=2)
    >>> ax = plot_selection_stability(stable.table, threshold=stable.threshold)
    """
    return SelectionStabilityDisplay(table, top, threshold).plot(ax).ax_


def plot_sparsity_path(path: Any, *, rate: str = "tpr", ax: Axes | None = None) -> Axes:
    """Features used against the achieved held-out ``rate`` (with its lower bound) along a path.

    ``path`` is a :class:`~csvm_stats.sparse.path.SparsityPath`; each point is
    labelled with its C or s. Points without a solution are left out.

    Parameters
    ----------
    path : SparsityPath
        The output of :func:`~csvm_stats.sparse.path.sparsity_path`.
    rate : {"tpr", "tnr", "acc"}, default "tpr"
        The held-out rate on the y axis.
    ax : matplotlib.axes.Axes or None
        Axes to draw on; a new figure when ``None``.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Raises
    ------
    ImportError
        matplotlib is not installed (``pip install -e '.[plot]'``).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np, pandas as pd
    >>> from csvm_stats import CSVM
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
    >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
    >>> from csvm_stats.sparse.path import sparsity_path
    >>> from csvm_stats.reporting.plotting import plot_sparsity_path
    >>> model = CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case", max_features=2)
    >>> ax = plot_sparsity_path(sparsity_path(model, [2, 3]))
    """
    table = path.table
    if f"{rate}_heldout" not in table:
        raise DataError(f"the path reports no {RATE_AXIS.get(rate, rate)}; constrain it or pass one of the reported rates.")
    ok = table[table["error"] == ""].dropna(subset=[f"{rate}_heldout"])
    ax = _axes(ax)
    x = ok["n_selected"].to_numpy(dtype=float)
    ax.plot(x, ok[f"{rate}_heldout"], "o-", color="tab:blue", label=f"held-out {RATE_AXIS.get(rate, rate)}")
    ax.plot(x, ok[f"{rate}_lower"], "v--", color="tab:orange", label="its lower confidence bound")
    if f"{rate}_anchor" in ok:
        ax.plot(x, ok[f"{rate}_anchor"], "s:", color="gray", label=f"anchor {RATE_AXIS.get(rate, rate)} (in-sample)")
    name = "s" if path.parameter == "max_features" else "C"
    for value, xv, yv in zip(ok.index, x, ok[f"{rate}_heldout"]):
        ax.annotate(f"{name}={value:g}", (xv, yv), textcoords="offset points", xytext=(3, 4), fontsize=7)
    ax.set(xlabel="features used", ylabel=RATE_AXIS.get(rate, rate), ylim=(0, 1.02),
           title=f"Regularisation path over {name}")
    ax.legend(fontsize=8, loc="lower right")
    return ax
