r"""The routes' ROC curves on the same held-out sample, with the requirement marked.

:class:`RoutesROCDisplay` (scikit-learn's Display manner, as
:class:`csvm_stats.reporting.plotting.ConstrainedROCDisplay`) holds, for each
route of a :class:`~csvm_stats.models.routes.RouteComparison`, the ROC curve
of its decision values on the held-out sample H and its operating point
(decision >= 0), and draws them over the region the requirement allows
(TPR >= p0: above a horizontal line; TNR >= p0: left of FPR = 1 - p0). H is
the same for every route; it set the threshold of the guarantee routes, so
their operating points on H are descriptive, their guarantees are in the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from csvm_stats.exceptions import DataError
from csvm_stats.reporting.plotting import _axes, _pm_labels, roc_points

if TYPE_CHECKING:
    from matplotlib.axes import Axes


@dataclass
class RoutesROCDisplay:
    """``curves[route] = (fpr, tpr)`` on H, ``points[route] = (fpr, tpr)`` at decision 0, ``targets`` the requirement.

    Made by :meth:`RouteComparison.plot <csvm_stats.models.routes.RouteComparison.plot>`
    or :meth:`from_predictions`, in the manner of scikit-learn's displays.

    Parameters
    ----------
    curves : dict
        ``{route: (fpr, tpr)}``, the ROC curve of each route on H.
    points : dict
        ``{route: (fpr, tpr)}``, each route's operating point (decision 0).
    targets : dict
        ``{"tpr": p0}`` or ``{"tnr": p0}``: the region the requirement allows.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from csvm_stats.reporting.routes_plot import RoutesROCDisplay
    >>> y = np.array([1, 1, 1, -1, -1, -1])
    >>> display = RoutesROCDisplay.from_predictions(y, {"a": [2.0, 1.0, -0.5, -1.0, 0.5, -2.0]}, targets={"tpr": 0.6})
    >>> display.points["a"]
    (0.3333333333333333, 0.6666666666666666)
    """

    curves: dict[str, tuple[np.ndarray, np.ndarray]]
    points: dict[str, tuple[float, float]]
    targets: dict[str, float]
    ax_: Any = field(default=None, init=False, repr=False)
    figure_: Any = field(default=None, init=False, repr=False)

    @classmethod
    def from_predictions(cls, y: Any, decisions: Mapping[str, Any], *, targets: Mapping[str, float]) -> RoutesROCDisplay:
        """From held-out labels (-1/+1) and ``{route: decision values on the same points}``.

        Parameters
        ----------
        y : array-like
            Held-out labels, -1/+1 (or 0/1).
        decisions : mapping
            ``{route: decision values on the same points}``.
        targets : mapping
            ``{"tpr": p0}`` and/or ``{"tnr": p0}``.

        Returns
        -------
        RoutesROCDisplay
            The display, not yet drawn (call :meth:`plot`).

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import numpy as np
        >>> from csvm_stats.reporting.routes_plot import RoutesROCDisplay
        >>> y = np.array([1, 1, 1, -1, -1, -1])
        >>> display = RoutesROCDisplay.from_predictions(y, {"a": [2.0, 1.0, -0.5, -1.0, 0.5, -2.0]}, targets={"tpr": 0.6})
        >>> sorted(display.curves)
        ['a']
        """
        y = _pm_labels(y)
        if not ((y > 0).any() and (y < 0).any()):
            raise DataError("the held-out sample needs points of both classes for an ROC curve.")
        curves, points = {}, {}
        for route, decision in decisions.items():
            d = np.asarray(decision, dtype=float)
            curves[route] = roc_points(y, d)
            points[route] = (float(np.mean(d[y < 0] >= 0)), float(np.mean(d[y > 0] >= 0)))
        return cls(curves, points, {k: float(v) for k, v in targets.items() if k in ("tpr", "tnr")})

    @classmethod
    def from_comparison(cls, comparison: Any) -> RoutesROCDisplay:
        """From a :class:`~csvm_stats.models.routes.RouteComparison` of two-class routes.

        Parameters
        ----------
        comparison : RouteComparison
            Routes on one split (:func:`csvm_stats.compare_routes`).

        Returns
        -------
        RoutesROCDisplay
            The display, not yet drawn.

        Examples
        --------
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.models.routes import compare_route_arrays
        >>> from csvm_stats.reporting.routes_plot import RoutesROCDisplay
        >>> X, labels = load_dataset("wisconsin")
        >>> comparison = compare_route_arrays((labels < 0).astype(int), X, {"tpr_min": 0.9},
        ...                                   routes=("np-logistic",), random_state=0)
        >>> RoutesROCDisplay.from_comparison(comparison).targets
        {'tpr': 0.9}
        """
        if comparison.multiclass:
            raise DataError("the ROC plot is for two classes; with several classes read comparison.table.")
        return cls.from_predictions(comparison.heldout_labels, comparison.heldout_decisions(), targets=comparison.targets)

    def plot(self, ax: Axes | None = None) -> RoutesROCDisplay:
        """Draw the curves, the operating points and the requirement's region.

        Parameters
        ----------
        ax : matplotlib.axes.Axes or None
            Where to draw (a new figure when ``None``).

        Returns
        -------
        RoutesROCDisplay
            ``self``, with ``ax_`` and ``figure_`` set.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import numpy as np
        >>> from csvm_stats.reporting.routes_plot import RoutesROCDisplay
        >>> y = np.array([1, 1, 1, -1, -1, -1])
        >>> display = RoutesROCDisplay.from_predictions(y, {"a": [2.0, 1.0, -0.5, -1.0, 0.5, -2.0]}, targets={"tpr": 0.6})
        >>> display.plot().ax_.get_xlabel()
        'false positive rate (1 - TNR)'
        """
        import matplotlib.pyplot as plt

        ax = _axes(ax)
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
        colors = plt.get_cmap("tab10").colors
        for k, (route, (fpr, tpr)) in enumerate(self.curves.items()):
            color = colors[k % len(colors)]
            ax.step(fpr, tpr, where="post", color=color, lw=1.2, label=f"{route}")
            px, py = self.points[route]
            ax.plot(px, py, marker="os^Dv"[k % 5], ms=7, color=color, mec="black", ls="none",
                    label=f"{route} threshold: FPR {px:.3f}, TPR {py:.3f}")
        ax.plot([0, 1], [0, 1], color="0.7", lw=0.8, ls=":")
        ax.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), xlabel="false positive rate (1 - TNR)",
               ylabel="true positive rate", title="Routes on the same held-out sample")
        ax.legend(loc="lower right", fontsize=7)
        self.ax_, self.figure_ = ax, ax.figure
        return self
