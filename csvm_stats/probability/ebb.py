r"""Ensembled bootstrap-based (EBB) posterior probabilities for SVMs, and CEBB1 / CEBB2.

For every parameter :math:`\theta` of a grid :math:`\Theta` (C, or (C, gamma)
pairs) and bootstrap samples :math:`T^*_b` (b = 1..B) of the training sample,
an SVM :math:`f_{\theta b}` is fitted on :math:`T^*_b`. Then

.. math::

    P(y=+1 \mid x, \theta) = \frac1B \sum_b 1[f_{\theta b}(x) \ge t], \qquad
    \overline{acc}_\theta = \frac1B \sum_b acc(\theta, b)

with :math:`acc(\theta, b)` measured on the out-of-bag points
:math:`T \setminus T^*_b` (or AUC / G-mean), the kept set
:math:`S = \{\theta : \overline{acc}_\theta \ge \max_l \overline{acc}_{\theta_l} - \varepsilon\}`,
weights :math:`\rho_\theta = \overline{acc}_\theta / \sum_{l \in S} \overline{acc}_{\theta_l}`
on S (0 elsewhere) and

.. math:: P(y=+1 \mid x) = \sum_\theta \rho_\theta \, P(y=+1 \mid x, \theta).

**EBB-VA** (``EBB(calibration="venn-abers")``, not in the paper) keeps
EBB's fits and weights and calibrates its probability by a Venn-Abers
predictor (:mod:`csvm_stats.probability.venn_abers`) fitted on each training point's
*out-of-bag* EBB probability, :math:`\sum_\theta \rho_\theta` times the
share of positive scores among the fits whose bootstrap sample left the point
out; ``predict_interval`` gives the interval [p0, p1]. The out-of-bag
probability averages fewer fits than a new point's, so this has no
finite-sample guarantee; ``benchmarks/results/probabilities.md`` measures it.

EBB uses the threshold t = 0. **CEBB1** moves it: t = -a (a >= 0) so that the
required share of the positive training points gets :math:`P(y=+1 \mid x) \ge 1/2`
(``tpr_min``), or t = +a so that the required share of negative training points
gets :math:`P(y=+1 \mid x) < 1/2` (``tnr_min``). **CEBB2** keeps t = 0 and
replaces each SVM by the CSVM with the rate constraints on the bootstrap
sample's distinct points (:func:`csvm_stats.probability.bootstrap.fit_csvm_batch`).

**Defaults and deviations from the paper.** The defaults are the paper's
headline EBB (its Table 6, "all the values of theta"): ``eps = inf`` keeps
every theta, weighted by its out-of-bag accuracy; ``eps = 0`` (best theta
only, the paper's degenerate case) was the worst setting in every scenario of
``benchmarks/results/probabilities.md``. Where this implementation departs from
the paper's text:

* bootstrap samples are **stratified** (each class resampled to its own size),
  so that every sample holds both classes and can be fitted;
* **no standardisation inside the bootstrap**: the columns are standardised
  once, outside (by the caller, e.g. :class:`~csvm_stats.models.results.CSVMResults`
  or the benchmarks' fold preprocessing), not refitted on every bootstrap sample;
* every libsvm fit stops at ``LIBSVM_MAX_ITER`` iterations
  (:data:`csvm_stats.probability.bootstrap.LIBSVM_MAX_ITER`); capped fits are used as
  they are, counted in ``n_unconverged_`` and warned about;
* CEBB2's CSVM uses big-M = 100 (:data:`csvm_stats.optimization.engine.DEFAULT_BIG_M`;
  the paper 1000) or indicator constraints where the backend has them, and a
  per-fit ``time_limit`` of 10 s (the paper 300 s), keeping the incumbent;
* ``bound`` defaults to Hoeffding's margin on the required rates (the paper's
  CSVM margin); ``bound="none"`` is the EBB paper's plain share;
* ``reliability="auc"`` with ``eps = 0`` warns: AUC ignores
  the intercept, so the best-AUC theta is often a tiny C whose scores put
  nearly every point on one side of 0, and its vote shares collapse to 0 or 1.

The required share becomes a required count by
:func:`csvm_stats.inference.bounds.adjust_target` with ``alpha`` and ``bound`` (as the
CSVM model does); ``bound="none"`` is the paper's plain share.

**C convention**: the CSVM's, objective :math:`w^\top w + C\sum \xi`, which is
scikit-learn's ``SVC(C=C/2)``; the default grid is :math:`C \in 2^{-5..5}` in
this convention. Bootstrap samples are stratified (each class resampled to its
own size), so every sample can be fitted. Fits run in batches through joblib
(any backend, e.g. dask); the samples are fixed before dispatch from
``random_state``, so results do not depend on ``n_jobs`` or the backend.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import asdict

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from csvm_stats.probability.bootstrap import (
    LIBSVM_MAX_ITER,
    RELIABILITIES,
    BatchFits,
    ConstrainedFitRecord,
    Ensemble,
    assemble_ensemble,
    bootstrap_multiplicities,
    fit_csvm_batch,
    fit_svm_batch,
)
from csvm_stats.inference.bounds import BOUNDS, AdjustedTarget, CappedTargetWarning, adjust_target
from csvm_stats.exceptions import DataError, warn_at_caller
from csvm_stats.optimization.kernels import KERNELS, Kernel, resolve_kernel
from csvm_stats.probability.venn_abers import VennAbers

VARIANTS: tuple[str, ...] = ("ebb", "cebb1", "cebb2")
DEFAULT_C_GRID = 2.0 ** np.arange(-5, 6)
"""The paper's grid, in the CSVM convention (objective w'w + C sum xi)."""
DEFAULT_GAMMA_GRID = 2.0 ** np.arange(-5, 6)
BATCH_SIZE = 25
"""Bootstrap samples per joblib task for EBB/CEBB1 (a task fits all C values of one kernel)."""
CSVM_BATCH_SIZE = 1
"""Bootstrap samples per joblib task for CEBB2, whose fits are slow enough to dispatch one by one."""
SHARE_MARGIN = 1e-9
"""CEBB1 puts each training point this far on the required side of 1/2."""


def _positive_grid(values, name: str) -> np.ndarray:
    grid = np.atleast_1d(np.asarray(values, dtype=float))
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise DataError(f"{name} must be a non-empty list of positive numbers, got {values!r}.")
    return grid


class EBB(ClassifierMixin, BaseEstimator):
    """Bootstrap ensemble posterior probabilities P(y = positive | x) (module docstring).

    Parameters
    ----------
    kernel : {"linear", "rbf", "poly"} or callable, default "linear"
        The kernel, or a callable returning the Gram matrix.
    C_grid : sequence of float or None
        C values (CSVM convention, ``SVC(C=C/2)``); default ``2**(-5..5)``.
    gamma_grid : sequence of float or None
        Gamma values for "rbf"/"poly"; default ``2**(-5..5)``. The grid
        Theta is every (C, gamma) pair.
    n_bootstrap : int, default 500
        B, bootstrap samples per theta (paper: 500).
    eps : float, default inf
        Keep every theta whose reliability is within ``eps`` of the best;
        ``inf`` (the paper's headline EBB) keeps all, 0 keeps the best only
        (all tied best ones).
    reliability : {"accuracy", "auc", "gmean"}, default "accuracy"
        Reliability of a theta, measured out of bag.
    variant : {"ebb", "cebb1", "cebb2"}, default "ebb"
        Plain EBB, CEBB1 (moved threshold) or CEBB2 (CSVM fits).
    tpr_min, tnr_min, acc_min : float or None
        Required rates (CEBB1: exactly one of tpr_min, tnr_min; CEBB2: any,
        passed to the CSVM).
    alpha : float, default 0.05
        Level of the margin turning a rate into a count
        (:mod:`csvm_stats.inference.bounds`).
    bound : {"hoeffding", "binomial", "none"}, default "hoeffding"
        That margin.
    n_jobs : int or None
        joblib workers (None: the active joblib backend's default).
    random_state : int, SeedSequence, Generator or None
        Seeds the bootstrap samples.
    progress : bool or None
        Show a tqdm bar; None shows it when stderr is a terminal.
    solver : str, default "auto"
        CSVM backend (CEBB2).
    time_limit : float, default 10.0
        Per-fit time limit in seconds (CEBB2).
    calibration : {None, "venn-abers"}
        None (the paper's probabilities) or "venn-abers" (EBB-VA, module
        docstring; variant "ebb" only).

    Attributes
    ----------
    classes_ : the two labels; ``classes_[1]`` is the positive class.
    theta_grid_ : DataFrame of the grid (columns C and gamma).
    reliability_matrix_ : (n_theta, B) out-of-bag scores of every fit.
    reliability_ : (n_theta,) their mean over b (NaN-aware).
    rho_ : (n_theta,) the weights; sum to 1.
    ensembles_ : per theta, the fitted models (``.scores(X)`` -> (n, B)).
    threshold_ : t, the score at or above which a fit counts as positive.
    training_share_ : CEBB1 only, the share of the constrained class of the
        training sample classified correctly at threshold t.
    fit_records_ : CEBB2 only, one row per CSVM fit.
    n_fits_, n_optimal_, n_failed_ : CEBB2 only, fits attempted, proven
        optimal (including those settled by the unconstrained SVM) and left out.
    n_unconverged_ : SVM fits stopped at libsvm's iteration cap (warned).
    n_capped_ : CEBB2 only, bootstrap samples whose required count was capped
        at all anchor points of a class (warned).
    oob_proba_ : EBB-VA only, (n,) out-of-bag EBB probability of each
        training point (NaN for a point no fit left out).
    venn_abers_ : EBB-VA only, the Venn-Abers predictor fitted on them.

    Notes
    -----
    Cost: EBB and CEBB1 fit ``n_bootstrap x n_theta`` SVMs (5,500 for the
    paper's setting, seconds on Wisconsin). CEBB2 solves up to as many mixed
    integer programs, each up to ``time_limit`` seconds, skipping those the
    plain SVM already settles; use a small ``n_bootstrap`` and grid for it.

    Examples
    --------
    >>> from csvm_stats import EBB
    >>> from csvm_stats.data.datasets import load_dataset
    >>> X, y = load_dataset("wisconsin")
    >>> X = (X - X.mean()) / X.std()  # EBB fits SVMs on the columns as given
    >>> ebb = EBB(n_bootstrap=10, C_grid=[0.5, 2.0], random_state=0, progress=False).fit(X, y)
    >>> ebb.predict_proba(X.head(3)).shape
    (3, 2)
    """

    def __init__(
        self,
        *,
        kernel="linear",
        C_grid=None,
        gamma_grid=None,
        n_bootstrap=500,
        eps=float("inf"),
        reliability="accuracy",
        variant="ebb",
        tpr_min=None,
        tnr_min=None,
        acc_min=None,
        alpha=0.05,
        bound="hoeffding",
        n_jobs=None,
        random_state=None,
        progress=None,
        solver="auto",
        time_limit=10.0,
        calibration=None,
    ):
        self.kernel = kernel
        self.C_grid = C_grid
        self.gamma_grid = gamma_grid
        self.n_bootstrap = n_bootstrap
        self.eps = eps
        self.reliability = reliability
        self.variant = variant
        self.tpr_min = tpr_min
        self.tnr_min = tnr_min
        self.acc_min = acc_min
        self.alpha = alpha
        self.bound = bound
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress
        self.solver = solver
        self.time_limit = time_limit
        self.calibration = calibration

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    # ------------------------------------------------------------------ checks
    def _required_rates(self) -> dict[str, float]:
        rates = {k: v for k, v in (("tpr", self.tpr_min), ("tnr", self.tnr_min), ("acc", self.acc_min)) if v is not None}
        if self.variant == "ebb" and rates:
            raise DataError(
                f"variant='ebb' ignores rate requirements but got {sorted(rates)}; "
                "use variant='cebb1' or 'cebb2', or drop tpr_min/tnr_min/acc_min."
            )
        if self.variant == "cebb1" and (len(rates) != 1 or "acc" in rates):
            raise DataError(
                "variant='cebb1' moves one threshold and needs exactly one of tpr_min or tnr_min "
                f"(got {sorted(rates) or 'none'})."
            )
        if self.variant == "cebb2" and not rates:
            raise DataError("variant='cebb2' needs at least one of tpr_min, tnr_min, acc_min.")
        return rates

    def _check_params(self) -> None:
        if self.variant not in VARIANTS:
            raise DataError(f"variant must be one of {VARIANTS}, got {self.variant!r}.")
        if self.reliability not in RELIABILITIES:
            raise DataError(f"reliability must be one of {RELIABILITIES}, got {self.reliability!r}.")
        if self.bound not in BOUNDS:
            raise DataError(f"bound must be one of {BOUNDS}, got {self.bound!r}.")
        if isinstance(self.n_bootstrap, bool) or not isinstance(self.n_bootstrap, (int, np.integer)) or self.n_bootstrap < 1:
            raise DataError(f"n_bootstrap must be a positive integer, got {self.n_bootstrap!r}.")
        if isinstance(self.eps, bool) or not isinstance(self.eps, (int, float, np.number)) or not self.eps >= 0:
            raise DataError(f"eps must be a number >= 0 (inf keeps every theta), got {self.eps!r}.")
        if self.eps == 0 and self.reliability == "auc":
            warn_at_caller(
                "reliability='auc' with eps=0 keeps only the theta with the best out-of-bag AUC, "
                "which ignores the intercept: it is often a tiny C whose scores put nearly "
                "every point on one side of 0, so the probabilities collapse to 0 or 1. Use eps > 0 (the default "
                "keeps every theta) or reliability='accuracy'.",
                UserWarning,
            )
        if not (isinstance(self.kernel, Kernel) or callable(self.kernel) or self.kernel in KERNELS):
            raise DataError(f"kernel must be one of {KERNELS} or a callable, got {self.kernel!r}.")
        if self.calibration not in (None, "venn-abers"):
            raise DataError(f"calibration must be None or 'venn-abers', got {self.calibration!r}.")
        if self.calibration is not None and self.variant != "ebb":
            raise DataError(
                f"calibration='venn-abers' calibrates EBB's probabilities (variant='ebb'); variant={self.variant!r} "
                "moves its threshold or its fits on purpose. Use variant='ebb' or calibration=None."
            )
        if not (np.isscalar(self.time_limit) and self.time_limit > 0):
            raise DataError(f"time_limit must be a positive number of seconds, got {self.time_limit!r}.")

    def _kernels(self, X: np.ndarray) -> tuple[list[Kernel], np.ndarray]:
        """Kernels of the grid (one per gamma) and the gamma column of theta_grid_."""
        uses_gamma = self.kernel in ("rbf", "poly")
        if not uses_gamma:
            if self.gamma_grid is not None:
                raise DataError(f"gamma_grid applies to the rbf and poly kernels only, not to {self.kernel!r}.")
            return [resolve_kernel(self.kernel, X)], np.array([np.nan])
        gammas = _positive_grid(DEFAULT_GAMMA_GRID if self.gamma_grid is None else self.gamma_grid, "gamma_grid")
        return [resolve_kernel(self.kernel, X, gamma=float(g)) for g in gammas], gammas

    # --------------------------------------------------------------------- fit
    def fit(self, X, y) -> "EBB":
        """Fit B models per theta on bootstrap samples of (X, y) and the weights rho.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows (numeric).
        y : array-like of shape (n_samples,)
            Two labels; ``classes_[1]`` (the larger) is positive.

        Returns
        -------
        EBB
            ``self``, fitted.

        Raises
        ------
        csvm_stats.exceptions.DataError
            Invalid data or parameters (for example not exactly two classes).

        Examples
        --------
        >>> from csvm_stats import EBB
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> X = (X - X.mean()) / X.std()  # EBB fits SVMs on the columns as given
        >>> ebb = EBB(n_bootstrap=10, C_grid=[0.5, 2.0], random_state=0, progress=False).fit(X, y)
        >>> float(ebb.rho_.sum())
        1.0
        """
        self._check_params()
        rates = self._required_rates()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        n_classes = np.unique(y).size
        if n_classes == 1:
            raise DataError("y has one class only; EBB needs points of two classes.")
        if n_classes > 2:
            raise DataError(
                f"Only binary classification is supported: EBB is a two-class method and y has {n_classes} "
                "classes. Recode the response into two classes."
            )
        self.classes_ = np.unique(y)
        y_pm = np.where(y == self.classes_[1], 1, -1)
        C_grid = _positive_grid(DEFAULT_C_GRID if self.C_grid is None else self.C_grid, "C_grid")
        kernels, gammas = self._kernels(X)
        self.theta_grid_ = pd.DataFrame(
            {"C": np.tile(C_grid, len(kernels)), "gamma": np.repeat(gammas, len(C_grid))}
        )
        seed = np.random.SeedSequence(_entropy(self.random_state))
        S = bootstrap_multiplicities(y_pm, int(self.n_bootstrap), seed)

        if self.variant == "cebb2":
            batches = self._run_cebb2(X, y_pm, S, kernels, C_grid, rates)
        else:
            grams = [kern(X, X) for kern in kernels]  # one Gram matrix per kernel, shared by all batches
            batches = self._run(
                [delayed(fit_svm_batch)(X, y_pm, S[rows], kern, C_grid, self.reliability, gram=gram)
                 for kern, gram in zip(kernels, grams) for rows in _batches(S.shape[0])],
                "EBB",
            )
        self._collect(X, batches, kernels, len(C_grid))
        self._weights()
        self.threshold_ = 0.0
        if self.variant == "cebb1":
            kind, target = next(iter(rates.items()))
            self._fit_threshold(X, y_pm, kind, target)
        if self.calibration is not None:
            self._fit_venn_abers(X, y_pm, S)
        return self

    def _fit_venn_abers(self, X: np.ndarray, y_pm: np.ndarray, S: np.ndarray) -> None:
        """EBB-VA: Venn-Abers on each training point's out-of-bag EBB probability (module docstring)."""
        self.oob_proba_ = out_of_bag_proba(self.ensembles_, self.rho_, X, S)
        seen = ~np.isnan(self.oob_proba_)
        if not seen.any():
            raise DataError("no training point was left out of any bootstrap sample; raise n_bootstrap for EBB-VA.")
        self.venn_abers_ = VennAbers.fit(self.oob_proba_[seen], y_pm[seen])

    def _run(self, tasks: list, label: str) -> list:
        show = self.progress if self.progress is not None else sys.stderr.isatty()
        parallel = Parallel(n_jobs=self.n_jobs, return_as="generator")
        out = []
        with tqdm(total=len(tasks), desc=label, unit="batch", disable=not show) as bar:
            for result in parallel(tasks):
                out.append(result)
                bar.update(1)
        return out

    def _run_cebb2(self, X, y_pm, S, kernels, C_grid, rates) -> list[BatchFits]:
        from csvm_stats.optimization.engine import DEFAULT_BIG_M

        targets = [self._anchor_targets(y_pm[row > 0], rates) for row in S]
        counts = [{k: t.count for k, t in row.items()} for row in targets]
        self.n_capped_ = sum(any(t.capped for t in row.values()) for row in targets)
        if self.n_capped_:
            warn_at_caller(
                f"in {self.n_capped_} of {len(S)} bootstrap samples the {self.bound} margin at alpha={self.alpha:g} "
                "asked for more than all anchor points of a class; the requirement was capped at all of them "
                "(bound='none' uses the plain share).",
                CappedTargetWarning,
            )
        results = self._run(
            [delayed(fit_csvm_batch)(X, y_pm, S[rows], rows.start, kern, C_grid, self.reliability,
                                     counts[rows], self.solver, float(self.time_limit), DEFAULT_BIG_M)
             for kern in kernels for rows in _batches(S.shape[0], CSVM_BATCH_SIZE)],
            "CEBB2",
        )
        records: list[ConstrainedFitRecord] = []
        per_kernel = len(results) // len(kernels)
        for k, (_, recs, _) in enumerate(results):
            shift = (k // per_kernel) * len(C_grid)
            records.extend(ConstrainedFitRecord(**{**asdict(r), "c_index": r.c_index + shift}) for r in recs)
        self.fit_records_ = pd.DataFrame(
            {
                "bootstrap": [r.bootstrap for r in records],
                "theta": [r.c_index for r in records],
                "status": [r.status for r in records],
                "fitted": [r.fitted for r in records],
                "optimal": [r.optimal for r in records],
                "required": [r.required for r in records],
                "met": [r.met for r in records],
                "wall_time": [r.wall_time for r in records],
            }
        )
        self.n_fits_ = len(records)
        self.n_optimal_ = int(self.fit_records_["optimal"].sum())
        self.n_failed_ = int((~self.fit_records_["fitted"]).sum())
        if self.n_failed_:
            warn_at_caller(
                f"{self.n_failed_} of {self.n_fits_} CSVM fits produced no model (see fit_records_['status']) "
                "and are left out of the ensemble; raise time_limit or relax the rate requirements.",
                RuntimeWarning,
            )
        return [fits for fits, _, _ in results]

    def _anchor_targets(self, y_anchor: np.ndarray, rates: dict[str, float]) -> dict[str, AdjustedTarget]:
        """Required anchor counts for one bootstrap sample's distinct points (capping reported by the caller)."""
        sizes = {"tpr": int(np.sum(y_anchor > 0)), "tnr": int(np.sum(y_anchor < 0)), "acc": int(y_anchor.size)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CappedTargetWarning)
            return {k: adjust_target(p0, sizes[k], self.alpha, self.bound, what=k) for k, p0 in rates.items()}

    def _collect(self, X: np.ndarray, batches: list[BatchFits], kernels: list[Kernel], n_C: int) -> None:
        per_kernel = len(batches) // len(kernels)
        self.ensembles_: list[Ensemble] = []
        rows = []
        for k, kern in enumerate(kernels):
            mine = batches[k * per_kernel : (k + 1) * per_kernel]
            for c in range(n_C):
                self.ensembles_.append(
                    assemble_ensemble(kern, X, [f.params[c] for f in mine], [f.intercepts[c] for f in mine])
                )
            rows.append(np.hstack([f.reliability for f in mine]))
        self.reliability_matrix_ = np.vstack(rows)
        self.n_unconverged_ = sum(f.unconverged for f in batches)
        if self.n_unconverged_:
            warn_at_caller(
                f"{self.n_unconverged_} SVM fits stopped at libsvm's iteration cap ({LIBSVM_MAX_ITER}) before "
                "converging (typical of a large C on nearly separable data) and are used as they are; "
                "drop the largest C values from C_grid to avoid them.",
                ConvergenceWarning,
            )

    def _weights(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows are reported below
            rel = np.nanmean(self.reliability_matrix_, axis=1)
        if np.all(np.isnan(rel)):
            raise DataError(
                f"no out-of-bag {self.reliability} could be computed (the training sample is too small "
                "or has too few points of a class); use more data or reliability='accuracy'."
            )
        self.reliability_ = rel
        best = np.nanmax(rel)
        selected = np.nan_to_num(rel, nan=-np.inf) >= best - self.eps
        kept = np.where(selected, np.nan_to_num(rel), 0.0)
        if kept.sum() <= 0:
            raise DataError(
                f"the best out-of-bag {self.reliability} is 0, so the weights rho are undefined; "
                "check the labels or choose another reliability."
            )
        self.rho_ = kept / kept.sum()

    def _fit_threshold(self, X: np.ndarray, y_pm: np.ndarray, kind: str, target: float) -> None:
        """CEBB1: the smallest move of t that classifies the required count correctly."""
        label = 1 if kind == "tpr" else -1
        members = X[y_pm == label]
        required = adjust_target(target, members.shape[0], self.alpha, self.bound, what=kind).count
        scores, weights = self._weighted_scores(members)
        order = np.argsort(-scores, axis=1, kind="stable")
        desc = np.take_along_axis(scores, order, axis=1)
        cumulative = np.cumsum(weights[order], axis=1)
        if label == 1:
            # P_t(+|x) >= 1/2 once t <= the score where the top weight first exceeds 1/2
            first = np.argmax(cumulative >= 0.5 + SHARE_MARGIN, axis=1)
            moves = -desc[np.arange(desc.shape[0]), first]
        else:
            # P_t(+|x) < 1/2 once t exceeds the score where the top weight first reaches 1/2
            first = np.argmax(cumulative >= 0.5 - SHARE_MARGIN, axis=1)
            moves = np.nextafter(desc[np.arange(desc.shape[0]), first], np.inf)
        a = max(0.0, float(np.sort(moves)[required - 1]))
        self.threshold_ = float(-a if label == 1 and a > 0 else a)
        proba = np.clip((scores >= self.threshold_) @ weights, 0.0, 1.0)  # the scores above, not recomputed
        correct = proba >= 0.5 if label == 1 else proba < 0.5
        self.training_share_ = float(np.mean(correct))

    def _weighted_scores(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Scores of all kept models, (n, M), and each model's weight rho_theta / B_theta."""
        blocks, weights = [], []
        for rho, ens in zip(self.rho_, self.ensembles_):
            if rho > 0 and ens.n_models:
                blocks.append(ens.scores(X))
                weights.append(np.full(ens.n_models, rho / ens.n_models))
        return np.hstack(blocks), np.concatenate(weights)

    # ----------------------------------------------------------------- predict
    def bootstrap_scores(self, X, theta: int) -> np.ndarray:
        """The (n, B) score matrix of grid point ``theta`` (row of ``theta_grid_``) on X.

        A histogram of a row is the paper's per-instance score histogram.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with the columns the ensemble was fitted on.
        theta : int
            Row of ``theta_grid_``.

        Returns
        -------
        numpy.ndarray of shape (n_samples, n_bootstrap)
            The decision value of every bootstrap fit at every row.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            The ensemble is not fitted.

        Examples
        --------
        >>> from csvm_stats import EBB
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> X = (X - X.mean()) / X.std()  # EBB fits SVMs on the columns as given
        >>> ebb = EBB(n_bootstrap=10, C_grid=[0.5, 2.0], random_state=0, progress=False).fit(X, y)
        >>> ebb.bootstrap_scores(X.head(3), 0).shape
        (3, 10)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.ensembles_[theta].scores(X)

    def proba_by_theta(self, X) -> np.ndarray:
        """The (n, n_theta) matrix of P(y = positive | x, theta) (the paper's PX).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with the columns the ensemble was fitted on.

        Returns
        -------
        numpy.ndarray of shape (n_samples, n_theta)
            P(y = positive | x, theta) for each grid point.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            The ensemble is not fitted.

        Examples
        --------
        >>> from csvm_stats import EBB
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> X = (X - X.mean()) / X.std()  # EBB fits SVMs on the columns as given
        >>> ebb = EBB(n_bootstrap=10, C_grid=[0.5, 2.0], random_state=0, progress=False).fit(X, y)
        >>> ebb.proba_by_theta(X.head(3)).shape
        (3, 2)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return np.column_stack(
            [np.mean(ens.scores(X) >= self.threshold_, axis=1) if ens.n_models else np.full(X.shape[0], np.nan)
             for ens in self.ensembles_]
        )

    def _proba_positive(self, X: np.ndarray, threshold: float) -> np.ndarray:
        scores, weights = self._weighted_scores(X)
        return np.clip((scores >= threshold) @ weights, 0.0, 1.0)

    def predict_proba(self, X) -> np.ndarray:
        """(n, 2) probabilities, columns in ``classes_`` order (positive class last).

        The paper's P(y = +1 | x); with ``calibration="venn-abers"`` its merged
        Venn-Abers calibration (EBB-VA).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with the columns the ensemble was fitted on.

        Returns
        -------
        numpy.ndarray of shape (n_samples, 2)
            Probabilities, columns in ``classes_`` order.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            The ensemble is not fitted.

        Examples
        --------
        >>> from csvm_stats import EBB
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> X = (X - X.mean()) / X.std()  # EBB fits SVMs on the columns as given
        >>> ebb = EBB(n_bootstrap=10, C_grid=[0.5, 2.0], random_state=0, progress=False).fit(X, y)
        >>> bool((ebb.predict_proba(X.head(3)).sum(axis=1) == 1).all())
        True
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        p = self._proba_positive(X, self.threshold_)
        if self.calibration is not None:
            p = self.venn_abers_.predict(p)
        return np.column_stack([1.0 - p, p])

    def predict_interval(self, X) -> np.ndarray:
        """EBB-VA only: (n, 2) Venn-Abers interval ``[p0, p1]`` of P(y = positive | x).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with the columns the ensemble was fitted on.

        Returns
        -------
        numpy.ndarray of shape (n_samples, 2)
            The interval ``[p0, p1]``.

        Raises
        ------
        csvm_stats.exceptions.DataError
            The ensemble was not fitted with ``calibration="venn-abers"``.

        Examples
        --------
        >>> from csvm_stats import EBB
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> X = (X - X.mean()) / X.std()  # EBB fits SVMs on the columns as given
        >>> ebb_va = EBB(n_bootstrap=10, C_grid=[1.0], calibration="venn-abers", random_state=0, progress=False).fit(X, y)
        >>> ebb_va.predict_interval(X.head(3)).shape
        (3, 2)
        """
        check_is_fitted(self)
        if self.calibration is None:
            raise DataError("predict_interval needs calibration='venn-abers' (EBB-VA); the paper's EBB has no interval.")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        p0, p1 = self.venn_abers_.interval(self._proba_positive(X, self.threshold_))
        return np.column_stack([p0, p1])

    def predict(self, X) -> np.ndarray:
        """The positive class where P(y = positive | x) >= 1/2, else the negative one.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with the columns the ensemble was fitted on.

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
            The predicted labels.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            The ensemble is not fitted.

        Examples
        --------
        >>> from csvm_stats import EBB
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> X = (X - X.mean()) / X.std()  # EBB fits SVMs on the columns as given
        >>> ebb = EBB(n_bootstrap=10, C_grid=[0.5, 2.0], random_state=0, progress=False).fit(X, y)
        >>> ebb.predict(X.head(3)).shape
        (3,)
        """
        p = self.predict_proba(X)[:, 1]
        return np.where(p >= 0.5, self.classes_[1], self.classes_[0])


def out_of_bag_proba(ensembles: list[Ensemble], rho: np.ndarray, X: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Each training row's EBB probability from the fits whose bootstrap sample (row of ``S``) left it out.

    ``ensembles`` hold one model per bootstrap sample, in the order of ``S``
    (the SVM fits of EBB and CEBB1); NaN for a row no sample left out.
    """
    out_of_bag = S.T == 0
    n_out = out_of_bag.sum(axis=1)
    share = np.zeros(X.shape[0])
    for weight, ens in zip(rho, ensembles):
        if weight > 0:
            share += weight * np.sum((ens.scores(X) >= 0) & out_of_bag, axis=1) / np.maximum(n_out, 1)
    return np.where(n_out > 0, np.clip(share, 0.0, 1.0), np.nan)


def _batches(n_bootstrap: int, size: int = BATCH_SIZE) -> list[slice]:
    return [slice(start, min(start + size, n_bootstrap)) for start in range(0, n_bootstrap, size)]


def _entropy(random_state) -> int | np.random.SeedSequence | None:
    """Entropy for the SeedSequence of the bootstrap samples."""
    if random_state is None or isinstance(random_state, (int, np.integer)):
        return None if random_state is None else int(random_state)
    if isinstance(random_state, np.random.SeedSequence):
        return random_state.entropy
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63))
    raise DataError(f"random_state must be None, an int, a SeedSequence or a Generator, got {random_state!r}.")
