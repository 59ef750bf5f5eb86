r"""Every route to a classifier under a requirement, fitted on the same split: :func:`~csvm_stats.compare_routes`.

``compare_routes("y ~ .", data, {"tpr_min": 0.9})`` fits, with one seed and
so one split into training sample I, anchor sample J and held-out sample H
(:func:`csvm_stats.preprocessing.design.split_samples`):

* ``"csvm"`` - the exact CSVM (:class:`csvm_stats.models.model.CSVM`, default
  solver): the requirement imposed on J with the model's margin, certified on
  H by an exact Clopper-Pearson bound (which can fall below the requirement);
* ``"csvm-guarantee"`` - the same CSVM solve with its intercept (several
  classes: its offsets) set on H by the order statistic, exactly what
  ``fit(guarantee=...)`` does after the same solve (:func:`with_guarantee`);
* ``"np-svc"``, ``"np-logistic"``, ``"np-hgb"`` - the Neyman-Pearson route
  (:class:`csvm_stats.models.neyman_pearson.NeymanPearson`) around the
  learner of that name, fitted on I u J, its threshold set on H.

A Neyman-Pearson route whose fit fails with a
:class:`~csvm_stats.exceptions.DataError` (a learner that finds a constant
score on these data, a class too rare in H), and the CSVM routes when no
CSVM meets the requirement on J or none was found in the time limit
(:class:`~csvm_stats.exceptions.InfeasibleConstraintsError`,
:class:`~csvm_stats.exceptions.NoSolutionError`), are left out of the table
and their messages kept in ``failures`` (and the summary's notes). The result, :class:`RouteComparison`, has ``table`` (a DataFrame: held-out
rates with the interval or guarantee each route states, whether the
requirement is guaranteed, the CPU seconds of the fit), ``results`` (each
route's own results), ``summary()`` and ``plot()`` (the routes' ROC curves on
H, :class:`csvm_stats.reporting.routes_plot.RoutesROCDisplay`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError, InfeasibleConstraintsError, NoSolutionError
from csvm_stats.inference.certification import (
    NOT_INDEPENDENT,
    ONE_SIDED,
    ORDER_STATISTIC,
    RATE_LABELS,
    level_percent,
    linear_scores,
    round_down,
    round_up,
    umbrella_intercept,
)
from csvm_stats.models.learners import LEARNERS
from csvm_stats.models.model import CSVM
from csvm_stats.models.neyman_pearson import NeymanPearson, check_requirement
from csvm_stats.multiclass.certification import guarantee_shift
from csvm_stats.optimization.solvers.base import Status
from csvm_stats.preprocessing.design import DEFAULT_FRACTIONS
from csvm_stats.preprocessing.formula import build_design
from csvm_stats.reporting.summary import Summary

#: The routes :func:`~csvm_stats.compare_routes` fits by default.
DEFAULT_ROUTES: tuple[str, ...] = ("csvm", "csvm-guarantee", "np-svc", "np-logistic", "np-hgb")
CSVM_ROUTES: tuple[str, ...] = ("csvm", "csvm-guarantee")


def route_names() -> tuple[str, ...]:
    """Every route name :func:`~csvm_stats.compare_routes` knows."""
    return (*CSVM_ROUTES, *(f"np-{name}" for name in LEARNERS))


def with_guarantee(results: Any) -> Any:
    """The guarantee-mode results of the same solve as ``results`` (an exact CSVM fit).

    Two classes: the intercept set on H by
    :func:`~csvm_stats.inference.certification.umbrella_intercept` on the
    scores ``w'phi(s(x))`` (what ``CSVM.fit(guarantee=rate)`` computes after
    its solve); several classes: the common shift of
    :func:`~csvm_stats.multiclass.certification.guarantee_shift`. No second solve.
    """
    model, split = results.model, results.split
    X = model.exog.to_numpy()
    Xs_holdout = results.scaler.transform(X[split.holdout])
    if hasattr(results, "shift"):  # several classes
        held = results.engine_fit.decision_function(Xs_holdout)
        names = [model.class_name(k) for k in range(model.coding.n_classes)]
        shift = guarantee_shift(held, model.y[split.holdout], model.recall_min, model.alpha, names)
        return type(results)(model, split, results.scaler, results.engine_fit, results.adjusted, shift,
                             results.random_state, results.fit_options)
    rate = next(r for r in ("tpr", "tnr") if r in model.targets)
    scores, tolerance = linear_scores(results.engine_fit.feature_map.transform(Xs_holdout), results.engine_fit.coef)
    umbrella = umbrella_intercept(scores, model.y[split.holdout], rate, model.targets[rate], model.alpha,
                                  tolerance=tolerance)
    return type(results)(dataclasses.replace(results.state, umbrella=umbrella))


def _check_routes(routes: Sequence[str] | Mapping[str, Any]) -> dict[str, Any]:
    """``{route name: None (a named route) or an estimator}``."""
    items = routes.items() if isinstance(routes, Mapping) else ((r, None) for r in routes)
    out: dict[str, Any] = {}
    for name, estimator in items:
        if estimator is None and name not in route_names():
            raise DataError(f"unknown route {name!r}; choose from {route_names()} or pass {{name: estimator}}.")
        out[str(name)] = estimator
    if not out:
        raise DataError(f"routes is empty; give at least one of {route_names()}.")
    return out


def _bound_cell(row: pd.Series) -> str:
    """What a route states about one rate, as a cell: the guarantee, a lower bound or an interval."""
    method = row["method"]
    if method == ORDER_STATISTIC:
        return f">= {float(row['lower'])!r} (guaranteed)"
    if method == ONE_SIDED or (np.isnan(row.get("upper", np.nan)) and not np.isnan(row["lower"])):
        return f">= {round_down(row['lower'], 3)}"
    if method == NOT_INDEPENDENT or np.isnan(row["lower"]):
        return ""
    return f"[{round_down(row['lower'], 3)}, {round_up(row['upper'], 3)}]"


class RouteComparison:
    """The routes fitted on one split (module docstring); ``table``, ``results``, ``summary()``, ``plot()``.

    Made by :func:`~csvm_stats.compare_routes`; ``str(comparison)`` is the summary.

    Parameters
    ----------
    results : dict
        ``{route name: results}`` of the routes that gave a classifier.
    fit_times : dict
        ``{route name: CPU seconds of its fit}``.
    requirement : dict
        ``{"tpr_min": p}``, ``{"tnr_min": p}`` or ``{"recall_min": {label: p}}``.
    alpha : float
        Level of every statement.
    failures : dict or None
        ``{route name: why it gave no classifier}``.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from csvm_stats import compare_routes
    >>> from csvm_stats.data.datasets import load_dataset
    >>> X, labels = load_dataset("wisconsin")
    >>> data = X.assign(diagnosis=np.where(labels > 0, "benign", "malignant"))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     comparison = compare_routes("diagnosis ~ .", data, {"tpr_min": 0.9}, routes=("csvm-guarantee", "np-logistic"),
    ...                                 random_state=0, csvm_options={"bound": "binomial", "positive": "malignant"})
    >>> list(comparison.results)
    ['csvm-guarantee', 'np-logistic']
    >>> comparison.table["requirement guaranteed"].tolist()
    [True, True]
    """

    def __init__(self, results: dict[str, Any], fit_times: dict[str, float], requirement: dict[str, Any],
                 alpha: float, failures: dict[str, str] | None = None) -> None:
        if not results:
            raise DataError("every route failed: " + "; ".join(f"{k}: {v}" for k, v in (failures or {}).items()))
        self.results = results
        self.fit_times = fit_times
        self.failures = dict(failures or {})
        self.requirement = requirement
        self.alpha = alpha
        first = next(iter(results.values()))
        self.split = first.split
        self.multiclass = "recall_min" in requirement
        self.model = first.model

    @property
    def targets(self) -> dict[str, float]:
        return {k.removesuffix("_min"): v for k, v in self.requirement.items() if k in ("tpr_min", "tnr_min")}

    @property
    def heldout_labels(self) -> np.ndarray:
        return self.model.y[self.split.holdout]

    def heldout_decisions(self) -> dict[str, np.ndarray]:
        """Each route's decision values on H (two classes).

        Returns
        -------
        dict
            ``{route name: numpy.ndarray}``, in the order of the held-out rows.

        Examples
        --------
        >>> import warnings
        >>> import numpy as np
        >>> from csvm_stats import compare_routes
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> data = X.assign(diagnosis=np.where(labels > 0, "benign", "malignant"))
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     comparison = compare_routes("diagnosis ~ .", data, {"tpr_min": 0.9}, routes=("csvm-guarantee", "np-logistic"),
        ...                                 random_state=0, csvm_options={"bound": "binomial", "positive": "malignant"})
        >>> {name: d.size for name, d in comparison.heldout_decisions().items()}
        {'csvm-guarantee': 142, 'np-logistic': 142}
        """
        H = self.split.holdout
        return {name: res.decision_function().to_numpy()[H] for name, res in self.results.items()}

    def _guaranteed(self, res: Any) -> bool:
        return bool((res.rates["method"] == ORDER_STATISTIC).any())

    @property
    def table(self) -> pd.DataFrame:
        """One row per route: held-out rates, what is stated about each, the guarantee, fit CPU seconds."""
        rows = {}
        for name, res in self.results.items():
            rates = res.rates
            row: dict[str, Any] = {}
            shown = list(rates.index) if self.multiclass else ["tpr", "tnr"]
            for rate in shown:
                r = rates.loc[rate]
                label = f"recall {rate}" if self.multiclass else rate.upper()
                row[label] = r["heldout_rate"]
                row[f"{label} n"] = f"{r['heldout_correct']}/{r['heldout_n']}"
                row[f"{label} stated"] = _bound_cell(r)
            H = self.split.holdout
            predicted = res.predict().to_numpy()[H]
            truth = self.model.coding.decode(self.model.y[H]) if not self.multiclass else \
                self.model.coding.decode(self.model.y[H])
            row["accuracy"] = float(np.mean(predicted == truth.to_numpy()))
            row["requirement guaranteed"] = self._guaranteed(res)
            row["fit time (CPU s)"] = self.fit_times[name]
            rows[name] = row
        return pd.DataFrame.from_dict(rows, orient="index")

    def statements(self) -> pd.Series:
        """Each route's statement about the requirement (the joint one for several classes).

        Returns
        -------
        pandas.Series
            One sentence per route.

        Examples
        --------
        >>> import warnings
        >>> import numpy as np
        >>> from csvm_stats import compare_routes
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> data = X.assign(diagnosis=np.where(labels > 0, "benign", "malignant"))
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     comparison = compare_routes("diagnosis ~ .", data, {"tpr_min": 0.9}, routes=("csvm-guarantee", "np-logistic"),
        ...                                 random_state=0, csvm_options={"bound": "binomial", "positive": "malignant"})
        >>> comparison.statements().index.tolist()
        ['csvm-guarantee', 'np-logistic']
        """
        out = {}
        for name, res in self.results.items():
            if self.multiclass:
                out[name] = res.joint_statement
            else:
                out[name] = res.statements[next(iter(self.targets))]
        return pd.Series(out, name="statement")

    def summary(self) -> Summary:
        """The table and the statements as a :class:`~csvm_stats.reporting.summary.Summary`.

        Returns
        -------
        Summary
            Text (``str``), HTML and LaTeX.

        Examples
        --------
        >>> import warnings
        >>> import numpy as np
        >>> from csvm_stats import compare_routes
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> data = X.assign(diagnosis=np.where(labels > 0, "benign", "malignant"))
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     comparison = compare_routes("diagnosis ~ .", data, {"tpr_min": 0.9}, routes=("csvm-guarantee", "np-logistic"),
        ...                                 random_state=0, csvm_options={"bound": "binomial", "positive": "malignant"})
        >>> "held-out sample H: 142 points" in str(comparison.summary())
        True
        """
        table = self.table
        summary = Summary("Routes to a classifier under a requirement, on the same split")
        shown = table.drop(columns=[c for c in table.columns if c.endswith(" n")])
        formatted = shown.copy().astype(object)
        for column in shown.columns:
            if shown[column].dtype.kind == "f":
                formatted[column] = [f"{v:.3f}" if column != "fit time (CPU s)" else f"{v:.2f}" for v in shown[column]]
        formatted["requirement guaranteed"] = ["yes" if v else "no" for v in shown["requirement guaranteed"]]
        what = ", ".join(f"{RATE_LABELS[k]} >= {v:g}" for k, v in self.targets.items()) or \
            ", ".join(f"recall of {k!r} >= {v:g}" for k, v in self.requirement["recall_min"].items())
        summary.add_df(formatted, caption=f"Requirement: {what}; held-out sample H: {self.split.holdout.size} points")
        summary.add_paragraphs("What each route states about the requirement", self.statements().to_dict())
        for name, message in self.failures.items():
            summary.add_text(f"Route {name} gave no classifier: {message}")
        for name, res in self.results.items():
            if name in CSVM_ROUTES and res.solver.status is not Status.OPTIMAL:  # say so: not the exact CSVM
                summary.add_text(f"Route {name}: the solver did not prove optimality ({res.solver.outcome}), so its "
                                 "classifier is the best one found, not necessarily the exact CSVM.")
        summary.add_text(
            f"All routes used the same split (seed {self.model_seed}): the CSVM routes solved on I with the "
            "requirement on J; the Neyman-Pearson routes trained on I u J. The stated bounds hold at "
            f"{level_percent(self.alpha)} each; 'guaranteed' means P(true rate >= requirement) >= "
            f"{level_percent(self.alpha)} by the order statistic on H. The exact CSVM's bound comes from H too, "
            "but it may fall below the requirement."
        )
        return summary

    @property
    def model_seed(self) -> int:
        return int(next(iter(self.results.values())).random_state)

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        return f"<RouteComparison: {list(self.results)}, requirement {self.requirement}>"

    def plot(self, ax: Any = None) -> Any:
        """The routes' ROC curves on H with the requirement marked; returns the display.

        Parameters
        ----------
        ax : matplotlib.axes.Axes or None
            Where to draw (a new figure when ``None``).

        Returns
        -------
        RoutesROCDisplay
            The display, with ``ax_`` and ``figure_``.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import warnings
        >>> import numpy as np
        >>> from csvm_stats import compare_routes
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, labels = load_dataset("wisconsin")
        >>> data = X.assign(diagnosis=np.where(labels > 0, "benign", "malignant"))
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     comparison = compare_routes("diagnosis ~ .", data, {"tpr_min": 0.9}, routes=("csvm-guarantee", "np-logistic"),
        ...                                 random_state=0, csvm_options={"bound": "binomial", "positive": "malignant"})
        >>> display = comparison.plot()
        >>> sorted(display.curves)
        ['csvm-guarantee', 'np-logistic']
        """
        from csvm_stats.reporting.routes_plot import RoutesROCDisplay

        return RoutesROCDisplay.from_comparison(self).plot(ax)


def compare_route_arrays(
    endog: Any,
    exog: Any,
    requirement: Mapping[str, Any],
    routes: Sequence[str] | Mapping[str, Any] = DEFAULT_ROUTES,
    *,
    alpha: float = 0.05,
    random_state: int | None = None,
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
    time_limit: float = 60.0,
    csvm_options: Mapping[str, Any] | None = None,
    formula: Any = None,
    fit_options: Mapping[str, Any] | None = None,
) -> RouteComparison:
    """:func:`~csvm_stats.compare_routes` on arrays (``endog`` labels, ``exog`` predictors).

    Parameters
    ----------
    endog : array-like
        Labels, one per row.
    exog : array-like or DataFrame
        Numeric predictors.
    requirement : mapping
        ``{"tpr_min": p}``, ``{"tnr_min": p}`` or ``{"recall_min": {label: p}}``.
    routes : sequence of str or mapping, default DEFAULT_ROUTES
        As in :func:`~csvm_stats.compare_routes`.
    alpha : float, default 0.05
        Level of every statement.
    random_state : int or None
        Seed of the one split (drawn and reported when ``None``).
    fractions : sequence of float, default DEFAULT_FRACTIONS
        The CSVM's (training, anchor, held-out) shares.
    time_limit : float, default 60.0
        The exact CSVM's whole-fit time limit, in seconds.
    csvm_options : mapping or None
        Further keyword arguments of :class:`~csvm_stats.models.model.CSVM`.
    formula : FormulaDesign or None
        The design the rows came from (set by :func:`~csvm_stats.compare_routes`), so the
        results predict new data through it.
    fit_options : mapping or None
        Go to the exact CSVM's ``fit`` besides ``time_limit`` (``clock``,
        ``threads``, ``solver``: the benchmark counts CPU seconds on one thread).

    Returns
    -------
    RouteComparison
        The routes on the same split.

    Examples
    --------
    >>> from csvm_stats.data.datasets import load_dataset
    >>> from csvm_stats.models.routes import compare_route_arrays
    >>> X, labels = load_dataset("wisconsin")
    >>> comparison = compare_route_arrays((labels < 0).astype(int), X, {"tnr_min": 0.9},
    ...                                   routes=("np-logistic", "np-svc"), random_state=1)
    >>> bool(comparison.table["requirement guaranteed"].all())
    True
    """
    chosen = _check_routes(routes)
    requirement = dict(requirement)
    unknown = set(requirement) - {"tpr_min", "tnr_min", "recall_min"}
    if unknown:
        raise DataError(
            f"requirement takes tpr_min, tnr_min or recall_min, got {sorted(unknown)}; an accuracy requirement has "
            "no Neyman-Pearson route (only the CSVM answers it: CSVM(..., acc_min=...))."
        )
    check_requirement(requirement.get("tpr_min"), requirement.get("tnr_min"), requirement.get("recall_min"))
    from csvm_stats.models.fitstate import resolve_seed

    seed = resolve_seed(random_state)
    results: dict[str, Any] = {}
    times: dict[str, float] = {}
    failures: dict[str, str] = {}
    exact = None
    for name, estimator in chosen.items():
        start = time.process_time()
        if name in CSVM_ROUTES and estimator is None:
            if exact is None:
                model = CSVM(endog, exog, alpha=alpha, fractions=fractions, **requirement, **dict(csvm_options or {}))
                model.formula = formula
                try:
                    exact = model.fit(random_state=seed, time_limit=time_limit, **dict(fit_options or {}))
                except (InfeasibleConstraintsError, NoSolutionError) as error:  # an answer: no CSVM meets it
                    exact = error
                exact_time = time.process_time() - start
            if isinstance(exact, Exception):
                failures[name] = str(exact)
                continue
            try:
                res = exact if name == "csvm" else with_guarantee(exact)
            except DataError as error:  # the held-out sample cannot certify the requirement along this direction
                failures[name] = str(error)
                continue
            times[name] = exact_time + (time.process_time() - start if name != "csvm" else 0.0)
        else:
            learner = estimator if estimator is not None else name.removeprefix("np-")
            model = NeymanPearson(endog, exog, learner, alpha=alpha, fractions=fractions, **requirement)
            model.formula = formula
            try:
                res = model.fit(random_state=seed)
            except DataError as error:  # e.g. a learner that finds a constant rule on these data
                failures[name] = str(error)
                continue
            times[name] = time.process_time() - start
        results[name] = res
    holdouts = {name: tuple(res.split.holdout) for name, res in results.items()}
    if len(set(holdouts.values())) > 1:
        raise DataError("the routes drew different held-out samples; this is a bug, please report it.")
    return RouteComparison(results, times, requirement, alpha, failures)


def compare_routes(
    formula: str,
    data: pd.DataFrame,
    requirement: Mapping[str, Any],
    routes: Sequence[str] | Mapping[str, Any] = DEFAULT_ROUTES,
    *,
    alpha: float = 0.05,
    random_state: int | None = None,
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
    time_limit: float = 60.0,
    csvm_options: Mapping[str, Any] | None = None,
) -> RouteComparison:
    """Fit the routes on the same split and compare what each guarantees (module docstring).

    The routes: ``"csvm"`` (the exact CSVM, its held-out Clopper-Pearson
    bound), ``"csvm-guarantee"`` (the same solve with the intercept set on H
    by the order statistic; no second solve) and ``"np-<learner>"``
    (the Neyman-Pearson route: the learner fitted on I and J together, its
    threshold set on H by the same order statistic). Routes that give no
    classifier are kept in ``failures`` with the reason.

    Parameters
    ----------
    formula : str
        ``"response ~ terms"``, the safe grammar of
        :meth:`csvm_stats.CSVM.from_formula`.
    data : pandas.DataFrame
        The data.
    requirement : mapping
        ``{"tpr_min": p}``, ``{"tnr_min": p}`` or ``{"recall_min": {label: p}}``.
    routes : sequence of str or mapping, default DEFAULT_ROUTES
        Route names (``"csvm"``, ``"csvm-guarantee"``, ``"np-<learner>"`` for
        any learner of :data:`csvm_stats.models.learners.LEARNERS`), or
        ``{name: estimator}`` for Neyman-Pearson routes around your own classifiers.
    alpha : float, default 0.05
        Level of every statement.
    random_state : int or None
        Seed of the one split (drawn and reported when ``None``).
    fractions : sequence of float, default DEFAULT_FRACTIONS
        The CSVM's (training, anchor, held-out) shares.
    time_limit : float, default 60.0
        The exact CSVM's whole-fit time limit (seconds, the default wall clock).
    csvm_options : mapping or None
        Further keyword arguments of :class:`~csvm_stats.models.model.CSVM`
        (kernel, C, bound, positive, ...).

    Returns
    -------
    RouteComparison
        ``table``, ``statements()``, ``summary()``, ``plot()``, ``results``, ``failures``.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from csvm_stats import compare_routes
    >>> from csvm_stats.data.datasets import load_dataset
    >>> X, labels = load_dataset("wisconsin")
    >>> data = X.assign(diagnosis=np.where(labels > 0, "benign", "malignant"))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     comparison = compare_routes("diagnosis ~ .", data, {"tpr_min": 0.9}, routes=("csvm-guarantee", "np-logistic"),
    ...                                 random_state=0, csvm_options={"bound": "binomial", "positive": "malignant"})
    >>> comparison.table.loc["np-logistic", "TPR stated"]
    '>= 0.9 (guaranteed)'
    """
    endog, exog, design = build_design(formula, data)
    return compare_route_arrays(endog, exog, requirement, routes, alpha=alpha, random_state=random_state,
                                fractions=fractions, time_limit=time_limit, csvm_options=csvm_options, formula=design)
