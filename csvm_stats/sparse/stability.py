r"""Selection stability and stability selection inside the CSVM.

**Selection-stability table of a fit** (:func:`selection_frequencies`, behind
``SparseCSVMResults.selection_stability``): for b = 1..B the training sample
I and the anchor sample J are resampled with replacement within each class
(:func:`csvm_stats.sparse.resampling.stratified_bootstrap`) and the sparse
CSVM is refitted with the same route, C, required counts and solver; the
selection frequency of feature f is

.. math:: \hat\pi_f = \frac1B \sum_b 1[w^{(b)}_f \ne 0].

A training row drawn k times enters with weight k; an anchor row drawn k
times appears k times, each with its own indicator. The table describes how
stable one fit's selection is; no error bound is attached to it.

**Stability selection** (:func:`stability_selection`, the route recommended
for *finding* the informative features) with complementary pairs (Shah and
Samworth 2013): B pairs :math:`(A_j, \bar A_j)` of disjoint class-stratified
half-samples of I and of J (:func:`csvm_stats.sparse.resampling.complementary_halves`).
The base procedure :math:`\hat S` on a half-sample standardises the columns
on that half, fits the CSVM (training rows weigh :math:`|I| / |A \cap I|`,
so C keeps the scale of a fit on I; each required anchor count becomes the
same share of the half's anchor points) and keeps the at most

.. math:: q = \lfloor \sqrt{v\,(2\pi - 1)\,p} \rfloor

non-zero coefficients largest in :math:`|w_f|`. Two base fits:

* the L2 CSVM (``CSVM(...)``, linear kernel) at the model's C: every
  coefficient is typically non-zero, so :math:`\hat S` is the top q columns.
  An L2 penalty spreads weight over redundant informative columns, where the
  L1 norm keeps the fewest that separate the sample (the default route);
* the L1-norm CSVM (``CSVM(..., penalty="l1")``) at the largest C of a grid
  whose fit on I and J keeps 1 to q features.

The frequency of f is :math:`\hat\Pi_f = \frac{1}{2B}\sum_j (1[f \in \hat S(A_j)] + 1[f \in \hat S(\bar A_j)])`
(a half fit without solution selects nothing) and the stable set is
:math:`\{f : \hat\Pi_f \ge \pi\}`, default :math:`\pi = 0.6`.

*Error control.* Let :math:`p_f` be the probability that the base procedure
on a half-sample selects f and :math:`L = \{f : p_f \le q/p\}` the features
selected no more often than a random choice of q of the p columns would.
Shah and Samworth (2013, Theorem 1) prove, for any base procedure selecting
at most q features, when the two halves of a pair are independent and
identically distributed samples,

.. math:: E\,|\hat S_\pi \cap L| \le \frac{q^2}{(2\pi - 1)\, p} \le v,

and, under Meinshausen and Buhlmann's assumptions (the noise features'
selection indicators exchangeable, the base procedure no worse than random
guessing), every noise feature is in L, so the expected number V of stable
noise features is at most v (:attr:`StabilitySelection.error_bound`). Given
the labels the halves meet the i.i.d. condition for the L2 base, whose C is
fixed in advance; the L1 base's C is chosen from I and J, so for it the
bound is a guide, not a theorem. Only I and J are used: a CSVM refitted on
the stable set with the same ``random_state`` keeps valid held-out
statements. Fits run through joblib; the halves are drawn from
``random_state`` before dispatch, so the table does not depend on ``n_jobs``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from csvm_stats.exceptions import CSVMError, DataError, warn_at_caller
from csvm_stats.optimization.engine import fit_csvm
from csvm_stats.optimization.solvers import SolverOptions
from csvm_stats.preprocessing.design import Standardizer
from csvm_stats.reporting.document import Summary
from csvm_stats.sparse.model import ZERO_TOL, fit_sparse_csvm
from csvm_stats.sparse.path import SparsityPath, sparsity_path
from csvm_stats.sparse.resampling import complementary_halves, half_counts, stratified_bootstrap


def _check_count(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")


def _refit(X_i, y_i, X_j, y_j, draw_i, draw_j, fit_kwargs: Mapping[str, Any]) -> np.ndarray | None:
    """One bootstrap refit: the selected column indices (``None`` when the refit has no solution)."""
    rows, counts = np.unique(draw_i, return_counts=True)
    try:
        fit = fit_sparse_csvm(
            X_i[rows], y_i[rows], X_j[draw_j], y_j[draw_j], sample_weight=counts.astype(float), **fit_kwargs
        )
    except CSVMError:
        return None
    return fit.selected


def selection_frequencies(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_anchor: np.ndarray,
    y_anchor: np.ndarray,
    names: list[str],
    fit_kwargs: Mapping[str, Any],
    *,
    n_bootstrap: int = 100,
    random_state: int = 0,
    n_jobs: int | None = None,
) -> pd.DataFrame:
    """The bootstrap selection-frequency table (module docstring), most often chosen first.

    Columns: ``frequency`` (share of the successful refits that chose the
    feature), ``count``, ``refits`` (successful refits; a refit fails when
    its resample admits no classifier meeting the constraints).

    Parameters
    ----------
    X_train, y_train : numpy.ndarray
        The training sample (standardised columns) and its -1/+1 labels.
    X_anchor, y_anchor : numpy.ndarray
        The anchor sample and its labels.
    names : list of str
        The column names.
    fit_kwargs : mapping
        Keyword arguments of every sparse refit (the route, s or C, targets).
    n_bootstrap : int, default 100
        Bootstrap refits.
    random_state : int, default 0
        Seed of the resamples.
    n_jobs : int or None
        joblib workers.

    Returns
    -------
    pandas.DataFrame
        One row per feature: ``frequency``, ``count``, ``refits``.

    Raises
    ------
    csvm_stats.exceptions.DataError
        Every refit failed.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from csvm_stats import CSVM
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
    >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
    >>> res = CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case", max_features=2).fit(random_state=0)
    >>> table = res.selection_stability(n_bootstrap=3, random_state=0)
    >>> "frequency" in table.columns
    True
    """
    _check_count(n_bootstrap, "n_bootstrap")
    rng = np.random.default_rng(random_state)
    draws = [(stratified_bootstrap(y_train, rng), stratified_bootstrap(y_anchor, rng)) for _ in range(n_bootstrap)]
    selections = Parallel(n_jobs=n_jobs)(
        delayed(_refit)(X_train, y_train, X_anchor, y_anchor, d_i, d_j, fit_kwargs) for d_i, d_j in draws
    )
    done = [s for s in selections if s is not None]
    counts = np.zeros(len(names), dtype=int)
    for selected in done:
        counts[selected] += 1
    table = pd.DataFrame(
        {"frequency": counts / max(len(done), 1), "count": counts, "refits": len(done)},
        index=pd.Index(names, name="feature"),
    )
    return table.sort_values(["count"], ascending=False, kind="stable")


def top_columns(coef: np.ndarray, q: int) -> np.ndarray:
    """The at most ``q`` columns with a non-zero coefficient largest in ``|coef|`` (ties: lower index first)."""
    size = np.abs(np.asarray(coef, dtype=float))
    nonzero = np.flatnonzero(size > ZERO_TOL)
    return nonzero[np.argsort(-size[nonzero], kind="stable")[:q]]


def _half_fit(X_i, y_i, X_j, y_j, rows_i, rows_j, base: Callable[..., Any], min_counts, q: int,
              standardize: bool) -> np.ndarray | None:
    """The base procedure on one half-sample (module docstring); ``None`` when its fit has no solution."""
    scaler = (Standardizer.fit(np.vstack([X_i[rows_i], X_j[rows_j]])) if standardize
              else Standardizer.identity(X_i.shape[1]))
    weight = np.full(rows_i.size, y_i.size / rows_i.size)
    try:
        fit = base(scaler.transform(X_i[rows_i]), y_i[rows_i], scaler.transform(X_j[rows_j]), y_j[rows_j],
                   sample_weight=weight, min_counts=half_counts(min_counts, y_j, rows_j))
    except CSVMError:
        return None
    return top_columns(fit.coef, q)


def pair_frequencies(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_anchor: np.ndarray,
    y_anchor: np.ndarray,
    names: list[str],
    base: Callable[..., Any],
    min_counts: Mapping[str, int],
    *,
    q: int,
    n_pairs: int = 50,
    standardize: bool = True,
    random_state: int = 0,
    n_jobs: int | None = None,
) -> pd.DataFrame:
    r"""The complementary-pairs frequencies :math:`\hat\Pi_f` (module docstring), most often chosen first.

    ``base(X_i, y_i, X_j, y_j, sample_weight=, min_counts=)`` fits the CSVM
    on one half-sample (columns in original units; standardised per half
    when ``standardize``) and returns an object with ``coef``. Columns:
    ``frequency``, ``count``, ``refits`` (the 2B half-sample fits) and
    ``failed`` (half fits without a solution, counted as selecting nothing).
    """
    _check_count(n_pairs, "n_pairs")
    rng = np.random.default_rng(random_state)
    halves = []
    for _ in range(n_pairs):
        (i_a, i_b), (j_a, j_b) = complementary_halves(y_train, rng), complementary_halves(y_anchor, rng)
        halves += [(i_a, j_a), (i_b, j_b)]
    selections = Parallel(n_jobs=n_jobs)(
        delayed(_half_fit)(X_train, y_train, X_anchor, y_anchor, r_i, r_j, base, min_counts, q, standardize)
        for r_i, r_j in halves
    )
    counts = np.zeros(len(names), dtype=int)
    for selected in selections:
        if selected is not None:
            counts[selected] += 1
    table = pd.DataFrame(
        {"frequency": counts / len(halves), "count": counts, "refits": len(halves),
         "failed": sum(s is None for s in selections)},
        index=pd.Index(names, name="feature"),
    )
    return table.sort_values(["count"], ascending=False, kind="stable")


#: What the error bound assumes, printed beside it wherever it is printed.
ERROR_BOUND_ASSUMPTIONS = (
    "It bounds the expected number of stable features among those the base fit selects no more often than a "
    "random choice of q of the p columns would (Shah and Samworth 2013); reading it as the expected number of "
    "false selections assumes, with Meinshausen and Buhlmann (2010), that the noise features are exchangeable "
    "and that the base fit is no worse than random guessing. Correlated columns break this: on a Toeplitz(0.6) "
    "design with 8 informative of 1500 columns, 2.25 false selections were measured against a bound of 0.96 "
    "(issue 24). With the L1 base, whose C is chosen from the data, it is a guide, not a theorem."
)


@dataclass(frozen=True)
class StabilitySelection:
    r"""The outcome of :func:`~csvm_stats.sparse.stability.stability_selection`: the stable features, their frequencies, a report and a refit.

    ``base`` is ``"l2"`` or ``"l1"``, ``C`` the base fits' C, ``q`` the most
    features a half fit keeps, ``threshold`` the frequency :math:`\pi`,
    ``table`` the frequencies with a column ``stable``, ``fit`` the fit on I
    and J whose split and anchor counts the half-samples come from (for the
    L1 base, the grid fit at ``C``), ``path`` the L1 base's grid fits
    (``path.table["n_selected"]`` chose ``C``; ``None`` for the L2 base).
    :meth:`summary` reports them with the error bound and its assumptions;
    :meth:`refit` fits the CSVM on the stable features on the same split.
    Read-only attributes: ``selected`` (the stable features, most often
    chosen first; also ``selected_names``), ``n_selected``, ``frequencies``
    (``table``), ``error_bound`` (Shah and Samworth's bound,
    :math:`q^2 / ((2\pi - 1) p)`) and ``assumptions`` (what it needs to
    bound the expected false selections, in words).

    Parameters
    ----------
    base : {"l2", "l1"}
        The base procedure.
    C : float
        The base fits' C.
    q : int
        The most features a half fit keeps.
    threshold : float
        The frequency :math:`\\pi`.
    n_pairs : int
        Complementary pairs.
    table : pandas.DataFrame
        Frequencies with a column ``stable``.
    fit : CSVMResults
        The fit on I and J whose split and anchor counts the halves come from.
    path : SparsityPath or None
        The L1 base's grid fits (``None`` for the L2 base).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from csvm_stats import CSVM
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
    >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
    >>> from csvm_stats.sparse.stability import stability_selection
    >>> stable = stability_selection(CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case"), n_pairs=3, random_state=0)
    >>> "frequency" in stable.table.columns
    True
    """

    base: str
    C: float
    q: int
    threshold: float
    n_pairs: int
    table: pd.DataFrame
    fit: Any
    path: SparsityPath | None

    @property
    def selected(self) -> list[str]:
        """The stable features, most often chosen first."""
        return self.table.index[self.table["stable"]].tolist()

    @property
    def selected_names(self) -> list[str]:
        """The stable features' names (:attr:`selected`)."""
        return self.selected

    @property
    def n_selected(self) -> int:
        return int(self.table["stable"].sum())

    @property
    def frequencies(self) -> pd.DataFrame:
        """The frequency table (:attr:`table`): ``frequency``, ``count``, ``refits``, ``failed``, ``stable``."""
        return self.table

    @property
    def error_bound(self) -> float:
        r""":math:`q^2 / ((2\pi - 1) p)`: the bound on the expected number of stable low-selection-probability
        features; what it assumes is :data:`ERROR_BOUND_ASSUMPTIONS` (module docstring)."""
        return self.q ** 2 / ((2.0 * self.threshold - 1.0) * len(self.table))

    @property
    def assumptions(self) -> str:
        """What :attr:`error_bound` assumes, in words (:data:`ERROR_BOUND_ASSUMPTIONS`)."""
        return ERROR_BOUND_ASSUMPTIONS

    def summary(self, *, top: int = 20) -> Summary:
        """The stable features and frequencies, the settings, and the error bound beside its assumptions.

        Parameters
        ----------
        top : int, default 20
            How many of the other features (the most frequent first) to list.

        Returns
        -------
        Summary
            Text (``str``), HTML and LaTeX.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.sparse.stability import stability_selection
        >>> rng = np.random.default_rng(0)
        >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
        >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
        >>> stable = stability_selection(CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case"), n_pairs=3, random_state=0)
        >>> "Stability selection" in str(stable.summary(top=5))
        True
        """
        from csvm_stats.reporting.plain import key_values

        p, fits = len(self.table), int(self.table["refits"].iloc[0])
        summary = Summary("Stability selection with the CSVM (complementary pairs)")
        summary.add_df(key_values({
            "Base fit": "L2 CSVM, top q by |w|" if self.base == "l2" else "L1-norm CSVM, top q by |w|",
            "C": f"{self.C:g}" + ("" if self.base == "l2" else " (largest C of the grid keeping 1 to q features)"),
            "Columns p": p,
            "Kept per half fit q": self.q,
            "Threshold (pi)": f"{self.threshold:g}",
            "Half-sample fits": f"{fits} ({self.n_pairs} complementary pairs of the training and requirement "
                                f"samples; {int(self.table['failed'].iloc[0])} without a solution)",
            "Random state (seed)": self.fit.random_state,
            "Stable features": f"{self.n_selected} of {p}",
        }), header=False, align="l", caption="Settings")
        stable = self.table[self.table["stable"]][["frequency", "count"]]
        if len(stable):
            summary.add_df(stable.assign(frequency=stable["frequency"].map("{:.3f}".format)),
                           caption=f"Stable features (frequency >= {self.threshold:g})")
        others = self.table[~self.table["stable"]].head(top)[["frequency", "count"]]
        if len(others):
            summary.add_df(others.assign(frequency=others["frequency"].map("{:.3f}".format)),
                           caption=f"The {len(others)} most frequent other features (all in .table)")
        summary.add_paragraphs("Error bound", {
            f"E[stable noise features] <= q^2 / ((2 pi - 1) p) = {self.error_bound:.3g}": ERROR_BOUND_ASSUMPTIONS})
        if not len(stable):
            summary.add_text(f"No feature reached the threshold {self.threshold:g}: nothing is selected; lower "
                             "the threshold or raise expected_false (both loosen the bound).")
        summary.add_text("Only the training and requirement samples were used; refit() fits the CSVM on the "
                         "stable features on the same split, so its held-out statements stay valid.")
        return summary

    def refit(self, *, penalty: str = "l2", **fit_options: Any) -> Any:
        """The CSVM on the stable features, on the same training, requirement and held-out rows.

        The model's requirements, alpha, bound, C, big-M and standardisation
        are kept and the split is passed explicitly (``samples=``), so the
        held-out sample is the one the selection never saw and its statements
        hold. ``fit_options`` go to ``CSVM.fit``; ``random_state`` defaults to
        the selection's. The refit takes the design columns: predict with
        ``results.predict(model.design_matrix(newdata)[selected])``.

        Parameters
        ----------
        penalty : {"l2", "l1"}, default "l2"
            The CSVM refitted on the stable features.
        **fit_options
            Keyword arguments of ``CSVM.fit`` (``solver``, ``time_limit``, ``clock``, ...).

        Returns
        -------
        CSVMResults
            The fit on the stable features, its statements on the held-out
            sample the selection never saw.

        Raises
        ------
        csvm_stats.exceptions.DataError
            No feature reached the selection threshold.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.sparse.stability import stability_selection
        >>> rng = np.random.default_rng(0)
        >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
        >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
        >>> stable = stability_selection(CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case"), n_pairs=3, random_state=0)
        >>> stable.selected
        ['g0']
        >>> stable.refit().params.index.tolist()
        ['g0', 'Intercept']
        """
        stable = self.selected
        if not stable:
            raise DataError(
                f"no feature reached the threshold {self.threshold:g}, so there is nothing to refit on; lower the "
                "threshold or raise expected_false (summary() lists the frequencies)."
            )
        model, split = self.fit.model, self.fit.split
        targets = {f"{rate}_min": p0 for rate, p0 in model.targets.items()}
        refitted = type(model)(  # CSVM: the class of the selection's model (no import of models.model here)
            model.endog, model.exog[stable], **targets, alpha=model.alpha, bound=model.bound, C=model.C,
            big_m=model.big_m, positive=model.coding.positive, standardize=model.standardize, penalty=penalty,
            samples={"train": split.train, "anchor": split.anchor, "holdout": split.holdout},
        )
        return refitted.fit(**{"random_state": self.fit.random_state, **fit_options})

    def __repr__(self) -> str:
        return (f"<StabilitySelection: {self.n_selected} stable of {len(self.table)} ({', '.join(self.selected[:8])}"
                f"{', ...' if self.n_selected > 8 else ''}); error_bound {self.error_bound:.3g}, which assumes "
                "exchangeable noise features and a better-than-random base fit (see .assumptions)>")


def _l1_fit(model: Any, C_values: Sequence[float], q: int, fit_options: Mapping[str, Any]) -> tuple[Any, SparsityPath]:
    """The grid fit at the largest C keeping 1 to q features, and the grid's path."""
    path = sparsity_path(model, C_values, **fit_options)
    if "n_selected" not in path.table:  # no grid value gave a fit: say why, not "no C keeps 1 to q"
        raise DataError(
            f"no fit of the C grid succeeded (first error: {path.table['error'].iloc[0]}); fix that fit first "
            "(path.table of sparsity_path lists every grid value's error)."
        )
    kept = path.table["n_selected"]
    eligible = kept.index[(kept >= 1) & (kept <= q)]
    if eligible.empty:
        raise DataError(
            f"no C of the grid keeps between 1 and q = {q} features (a fit keeping none selects nothing); "
            "add C values between those keeping none and those keeping more."
        )
    C = float(eligible.max())
    return path.results[[r.engine_fit.C for r in path.results].index(C)], path


def stability_selection(
    model: Any,
    C_values: Sequence[float] | None = None,
    *,
    threshold: float = 0.6,
    expected_false: float = 1.0,
    n_pairs: int = 50,
    random_state: int = 0,
    n_jobs: int | None = None,
    solver: str = "auto",
    time_limit: float = 300.0,
    clock: str = "wall",
) -> StabilitySelection:
    """Complementary-pairs stability selection with the CSVM as base procedure (module docstring).

    ``model`` is ``CSVM(...)`` with the linear kernel (L2 base at the
    model's C; no ``C_values``) or ``CSVM(..., penalty="l1")`` (L1 base at
    the largest C of ``C_values`` whose fit on I and J keeps 1 to q
    features). ``n_pairs`` complementary pairs give 2 ``n_pairs`` half-sample
    fits. The split is the one ``model.fit(random_state=random_state)``
    draws; only I and J are read, so a CSVM refitted on the stable features
    with the same ``random_state`` keeps valid held-out statements.
    ``solver``, ``time_limit`` and ``clock`` (as in ``CSVM.fit``) hold for
    every fit.

    Parameters
    ----------
    model : CSVM
        The base model, linear kernel: ``penalty="l2"`` (default) or ``"l1"``.
    C_values : sequence of float or None
        The C grid of the L1 base (``None`` for the L2 base).
    threshold : float, default 0.6
        The selection frequency :math:`\\pi` a stable feature needs (> 1/2).
    expected_false : float, default 1.0
        The bound v on the expected number of low-probability selections that
        fixes q = floor(sqrt(v (2 pi - 1) p)).
    n_pairs : int, default 50
        Complementary pairs of half-samples (2 ``n_pairs`` fits).
    random_state : int, default 0
        The split (as ``model.fit(random_state=...)``) and the halves.
    n_jobs : int or None
        joblib workers (any joblib backend, for example dask).
    solver : str, default "auto"
        Backend of every fit.
    time_limit : float, default 300.0
        Per-fit limit.
    clock : ('wall', 'cpu'), default "wall"
        What ``time_limit`` counts.

    Returns
    -------
    StabilitySelection
        The frequency table, the stable set and the error bound.

    Raises
    ------
    csvm_stats.exceptions.DataError
        A non-linear kernel, ``C_values`` with the L2 base, a threshold not
        above 1/2, or too few rows for half-samples.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from csvm_stats import CSVM
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
    >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
    >>> from csvm_stats.sparse.stability import stability_selection
    >>> stable = stability_selection(CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case"), n_pairs=3, random_state=0)
    >>> stable.q >= 1 and 0 < stable.threshold < 1
    True
    """
    if getattr(model, "penalty", None) is None:  # e.g. a MulticlassCSVM (several classes)
        raise DataError(
            f"stability_selection takes a two-class CSVM; got {type(model).__name__}. For several classes, "
            "select for one class against the rest: recode the response to two classes (e.g. EWS vs other)."
        )
    if getattr(model, "max_features", None) is not None or getattr(model, "kernel", None) != "linear":
        raise DataError(
            "stability_selection takes a linear CSVM as base procedure: CSVM(...) (the L2 base, recommended) or "
            "CSVM(..., penalty='l1'); not max_features (a cardinality MIQP per half-sample) or another kernel."
        )
    if not 0.5 < threshold <= 1.0:
        raise DataError(f"threshold must be in (0.5, 1], got {threshold!r} (Meinshausen and Buhlmann use 0.6 to 0.9).")
    if not expected_false > 0:
        raise DataError(f"expected_false must be positive, got {expected_false!r}.")
    p = len(model.exog_names)
    q = math.floor(math.sqrt(expected_false * (2.0 * threshold - 1.0) * p) + 1e-9)
    if q < 1:
        raise DataError(
            f"q = floor(sqrt(v (2 pi - 1) p)) = 0 for v = {expected_false}, pi = {threshold}, p = {p}: no feature "
            "may be selected; raise expected_false or threshold."
        )
    _check_count(n_pairs, "n_pairs")
    options = {"random_state": random_state, "solver": solver, "time_limit": time_limit, "clock": clock}
    settings = SolverOptions(time_limit=time_limit, clock=clock)
    if model.penalty == "l1":
        if C_values is None:
            raise DataError(
                "the L1 base needs C_values, the grid its C is chosen from (e.g. np.geomspace(0.01, 1, 11))."
            )
        fit, path = _l1_fit(model, C_values, q, options)
        base = partial(fit_sparse_csvm, penalty="l1", C=fit.engine_fit.C, big_m=model.big_m, solver=solver,
                       options=settings)
    else:
        if C_values is not None:
            raise DataError("C_values is the L1 base's grid; the L2 base uses the model's C (CSVM(..., C=)).")
        fit, path = model.fit(**options), None
        base = partial(fit_csvm, C=model.C, big_m=model.big_m, solver=solver, options=settings)
    X, y, split = model.exog.to_numpy(dtype=float), model.y, fit.split
    table = pair_frequencies(
        X[split.train], y[split.train], X[split.anchor], y[split.anchor], list(model.exog_names), base,
        fit.engine_fit.min_counts, q=q, n_pairs=n_pairs, standardize=model.standardize,
        random_state=random_state, n_jobs=n_jobs,
    )
    failed, fits = int(table["failed"].iloc[0]), int(table["refits"].iloc[0])
    if failed == fits:
        raise DataError(
            f"none of the {fits} half-sample fits had a solution (their required anchor counts, the same share "
            "of half the anchor points, admit no classifier): lower the rate target or use more anchor points."
        )
    if failed:
        warn_at_caller(
            f"{failed} of {fits} half-sample fits had no solution; each counts as selecting nothing, which "
            "lowers every frequency (table['failed']).",
            UserWarning,
        )
    table["stable"] = table["frequency"] >= threshold
    return StabilitySelection(model.penalty, fit.engine_fit.C, q, float(threshold), n_pairs, table, fit, path)
